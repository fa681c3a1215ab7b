#!/usr/bin/env bash
# Adds the allocation-latency bench (plain build; the runtime is preloaded at run time)
# and its GPU script to a bundle folder (default build/examples).
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/examples}
mkdir -p "$out"
"$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O2 "$CUSAFE_ROOT/runtime-preload/tests/gpu/alloc_bench.cu" -o "$out/alloc_bench"
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp "$CUSAFE_ROOT/scripts/gpu/alloc-bench.sh" "$out/"
