#!/usr/bin/env bash
# Adds the allocation benches, latency (alloc_bench) and device memory per allocation
# (alloc_footprint) (plain builds; the runtime is preloaded at run time)
# and their GPU script (alloc-bench.sh) to a bundle folder (default build/examples).
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/examples}
mkdir -p "$out"
for bench in alloc_bench alloc_footprint; do
  "$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O2 "$CUSAFE_ROOT/runtime-preload/tests/gpu/$bench.cu" -o "$out/$bench"
done
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp "$CUSAFE_ROOT/scripts/gpu/alloc-bench.sh" "$out/"
