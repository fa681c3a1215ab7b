#!/usr/bin/env bash
# Builds the runtime stress program (stress/alloc_stress.cu) two ways into a
# self-contained bundle that scripts/gpu/run-stress.sh runs on a GPU machine:
#   alloc_stress.plain    cusafe-clang++ --cusafe-no-instrument -O2 -g   (plain CUDA;
#                         also the binary the LD_PRELOAD and memcheck runs use)
#   alloc_stress.cusafe   cusafe-clang++ -O2 -g                          (sanitized)
# plus alloc_stress.stats (the pass's per-kernel check counts), libcusafe_rt.so and
# libcudart.so.12 beside them ($ORIGIN rpath), run-stress.sh and COMMIT.
# Needs no GPU; two compiles of one file, so cheap enough for scripts/test.sh.
#
# Usage: build-stress.sh [OUT_DIR]   (default build/stress); then on the GPU machine:
#   OUT_DIR/run-stress.sh OUT_DIR RESULTS_DIR
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/stress}
src=stress/alloc_stress.cu # relative: reports and debug info name stress/alloc_stress.cu
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-stress.sh
cxx="$CUSAFE_BIN/cusafe-clang++"
mkdir -p "$out"
out=$(cd "$out" && pwd) # the builds below run from the repository root
cd "$CUSAFE_ROOT"
CUSAFE_PASS_STATS=1 "$cxx" -O2 -g -pthread "$src" -o "$out/alloc_stress.cusafe" 2> "$out/alloc_stress.stats" ||
  { cat "$out/alloc_stress.stats" >&2; echo "build-stress.sh: instrumented build of $src failed" >&2; exit 1; }
kernels=$(grep -c '^cusafe: kernel ' "$out/alloc_stress.stats" || true)
[ "$kernels" -gt 0 ] ||
  { echo "build-stress.sh: the pass printed no kernel for $src (device code not instrumented?)" >&2; exit 1; }
"$cxx" --cusafe-no-instrument -O2 -g -pthread "$src" -o "$out/alloc_stress.plain" ||
  { echo "build-stress.sh: plain build of $src failed" >&2; exit 1; }
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp scripts/gpu/run-stress.sh "$out/"
commit=$(git rev-parse HEAD)
[ -z "$(git status --porcelain)" ] || commit="$commit-dirty"
echo "$commit" > "$out/COMMIT"
echo "build-stress.sh: bundle in $out ($kernels instrumented kernels; $(du -sh "$out" | cut -f1)); run it with $out/run-stress.sh $out RESULTS_DIR"
