#!/usr/bin/env bash
# Builds the security suite (security-suite/programs/*.cu) and the perf suite
# (perf-suite/workloads/*.cu) through cusafe-nvcc with nvcc-style command lines, the way
# a Makefile written for nvcc would (NVCC=cusafe-nvcc), so that CI catches a mapping
# that no longer builds real programs:
#   suite:  cusafe-nvcc -arch=sm_90 -O2 -g -lineinfo -std=c++17 --expt-relaxed-constexpr
#           -Xcompiler -fno-omit-frame-pointer,-Wno-unused-variable SRC -o OUT/suite/NAME
#   perf:   cusafe-nvcc -gencode arch=compute_90,code=[sm_90,compute_90] -O3 -lineinfo
#           -std=c++17 --extended-lambda -MMD -MF OUT/perf/NAME.d -c SRC -o NAME.o, then
#           cusafe-nvcc OUT/perf/NAME.o -o OUT/perf/NAME -lm (a two-step build)
# Instrumented builds only (the plain and ablation builds stay with build-examples.sh
# and build-perf.sh). Prints one line per program and the count built; exits 1 on the
# first failure (after its compiler output), 2 on a usage or set-up error.
#
# Usage: build-nvcc.sh [OUT_DIR]   (default build/nvcc)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/nvcc}
nvcc="$CUSAFE_BIN/cusafe-nvcc"
if [ ! -x "$nvcc" ]; then
  echo "build-nvcc.sh: $nvcc is missing; run scripts/build.sh first" >&2
  exit 2
fi
mkdir -p "$out/suite" "$out/perf"
out=$(cd "$out" && pwd) # the builds below run from the repository root
cd "$CUSAFE_ROOT"
start=$SECONDS

# run LABEL COMMAND...: runs one build, keeping its output; on failure prints it and
# the command, and exits 1.
run() {
  local label=$1
  shift
  if ! "$@" > "$out/log" 2>&1; then
    cat "$out/log" >&2
    echo "build-nvcc.sh: $label failed: $*" >&2
    exit 1
  fi
}

suite=0
for src in security-suite/programs/*.cu; do
  name=$(basename "$src" .cu)
  run "security suite program $name" "$nvcc" -arch=sm_90 -O2 -g -lineinfo -std=c++17 \
    --expt-relaxed-constexpr -Xcompiler -fno-omit-frame-pointer,-Wno-unused-variable \
    "$src" -o "$out/suite/$name"
  suite=$((suite + 1))
  echo "built suite/$name"
done

perf=0
for src in perf-suite/workloads/*.cu; do
  name=$(basename "$src" .cu)
  run "perf workload $name (compile)" "$nvcc" \
    -gencode 'arch=compute_90,code=[sm_90,compute_90]' -O3 -lineinfo -std=c++17 \
    --extended-lambda -MMD -MF "$out/perf/$name.d" -c "$src" -o "$out/perf/$name.o"
  run "perf workload $name (link)" "$nvcc" "$out/perf/$name.o" -o "$out/perf/$name" -lm
  perf=$((perf + 1))
  echo "built perf/$name"
done
rm -f "$out/log"
echo "build-nvcc.sh: built $((suite + perf)) programs with cusafe-nvcc" \
  "($suite security suite, $perf perf suite) in $((SECONDS - start)) s into $out"
