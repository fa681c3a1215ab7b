#!/usr/bin/env bash
# The test command (README; .ci/run calls it): installs the toolchain if needed,
# builds, and runs every check that needs no GPU.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$CUSAFE_ROOT"
step() { printf '\n== %s\n' "$*"; }
step "toolchain and build"
scripts/build.sh
step "format and lints"
cargo fmt --all -- --check
cargo clippy --release --workspace --all-targets -- -D warnings
step "unit, property and CLI tests"
cargo test --release --workspace
step "pass IR tests (lit + FileCheck)"
CUSAFE_PASS_PLUGIN="$CUSAFE_BIN/libcusafe_pass.so" CUSAFE_PTXAS="$CUSAFE_CUDA/bin/ptxas" \
  python3 -c 'from lit.main import main; main()' -sv llvm-pass/tests/ir
step "the pass gives the same PTX in two runs (perf workloads and the suite's __shared__ programs)"
scripts/check-deterministic.sh "$CUSAFE_ROOT/build/deterministic" perf-suite/workloads/*.cu security-suite/programs/shared_*.cu
step "examples compile with cusafe-clang++ (ptxas runs inside every build)"
scripts/build-examples.sh "$CUSAFE_ROOT/build/examples"
step "security suite: manifest agrees with the programs; all compile with cusafe-clang++, instrumented and plain (ptxas runs inside every build)"
"$CUSAFE_BIN/cusafe-suite" check-manifest --manifest security-suite/manifest.toml --src security-suite/programs
scripts/build-examples.sh "$CUSAFE_ROOT/build/suite" security-suite/programs
step "perf suite compiles three ways (plain, cusafe, check elimination off; verifier on)"
scripts/build-perf.sh "$CUSAFE_ROOT/build/perf"
step "security suite and perf suite build through cusafe-nvcc (nvcc command lines: -arch/-gencode, -lineinfo, -Xcompiler, -MMD, -c + link)"
scripts/build-nvcc.sh "$CUSAFE_ROOT/build/nvcc"
step "fuzz targets compile five ways (fuzz, no device edges, warp edges, coverage only, fixed)"
CUSAFE_FUZZ_TAR=0 scripts/build-fuzz.sh "$CUSAFE_ROOT/build/fuzz"
step "host ASan + cusafe programs compile (-fsanitize=address; run on a GPU with scripts/gpu/run-asan.sh)"
scripts/build-asan.sh "$CUSAFE_ROOT/build/asan"
step "allocation benches and the header-lookup microbenchmark compile (run on a GPU with scripts/gpu/alloc-bench.sh)"
scripts/build-bench.sh "$CUSAFE_ROOT/build/bench"
step "runtime stress program compiles plain and with cusafe-clang++ (run on a GPU with scripts/gpu/run-stress.sh)"
scripts/build-stress.sh "$CUSAFE_ROOT/build/stress"
step "bad-input programs compile (run on a GPU with scripts/gpu/run-badinput.sh)"
scripts/build-badinput.sh "$CUSAFE_ROOT/build/badinput"
step "CMake: a CUDA project (library + executable, CUDA::cudart) configures and builds with cusafe-clang++ and cusafe-plain-clang++ under Debian's CMake and PyPI's"
scripts/build-cmake.sh "$CUSAFE_ROOT/build/cmake"
step "generated programs: ${GEN_COUNT:-200} compile through the pass at -O0..-O3 (verifier and ptxas on; failures are reduced into build/gen-ci/failures)"
"$CUSAFE_BIN/cusafe" gen build -o "$CUSAFE_ROOT/build/gen-ci" --seed "${GEN_SEED:-1}" --count "${GEN_COUNT:-200}" --per-file 25 --device-only --opt 0,1,2,3 --jobs "$(nproc)"
echo
echo "all tests passed"
