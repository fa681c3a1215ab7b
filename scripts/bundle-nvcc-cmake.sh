#!/usr/bin/env bash
# Bundles what scripts/build-nvcc.sh and scripts/build-cmake.sh built (CI's outputs) for
# one GPU run: OUT/suite (the security suite built through cusafe-nvcc, with the two
# libraries), OUT/cmake/<cmake>-<flavour>/demo (each with the libraries), OUT/COMMIT and
# run-nvcc-cmake.sh. On the GPU machine: run-nvcc-cmake.sh OUT RESULTS, then here
# `cusafe-suite score --run RESULTS/run ...` (docs/security-suite.md).
# Usage: bundle-nvcc-cmake.sh [OUT]   (default build/gpu-nvcc; needs build/nvcc, build/cmake)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/gpu-nvcc}
libs=("$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12")
[ -d "$CUSAFE_ROOT/build/nvcc/suite" ] || { echo "run scripts/build-nvcc.sh first" >&2; exit 2; }
[ -d "$CUSAFE_ROOT/build/cmake" ] || { echo "run scripts/build-cmake.sh first" >&2; exit 2; }
rm -rf "$out"; mkdir -p "$out/suite" "$out/cmake"
cp "$CUSAFE_ROOT"/build/nvcc/suite/* "$out/suite/"
cp -L "${libs[@]}" "$out/suite/"
for d in "$CUSAFE_ROOT"/build/cmake/cmake-*/; do
  n=$(basename "$d"); mkdir -p "$out/cmake/$n"
  cp "$d/demo" "$out/cmake/$n/"; cp -L "${libs[@]}" "$out/cmake/$n/"
done
cp "$CUSAFE_ROOT/scripts/gpu/run-nvcc-cmake.sh" "$out/"
git -C "$CUSAFE_ROOT" rev-parse HEAD > "$out/COMMIT"
du -sh "$out"
