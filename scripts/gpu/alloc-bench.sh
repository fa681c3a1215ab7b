#!/usr/bin/env bash
# cudaMalloc+cudaFree latency, plain vs LD_PRELOAD=libcusafe_rt.so, interleaved in one
# session so both see the same GPU state. Prints one alloc_bench line per run and the
# ratio of the medians of the per-run medians; then, when the bundle has alloc_footprint,
# the device memory per allocation plain and preloaded.
# Usage: alloc-bench.sh BUNDLE_DIR [ROUNDS]
set -euo pipefail
cd "${1:?bundle dir}"
rounds=${2:-5}
for r in $(seq "$rounds"); do
  echo "plain   $(./alloc_bench)"
  echo "cusafe  $(LD_PRELOAD="$PWD/libcusafe_rt.so" CUSAFE_OPTIONS=detect_leaks=0 ./alloc_bench)"
done | tee /tmp/alloc-bench.txt
med() { grep "^$1 " /tmp/alloc-bench.txt | sed -E "s/.* $2=([0-9.]+).*/\1/" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for k in median_us small_median_us; do
  p=$(med plain "$k"); c=$(med cusafe "$k")
  echo "summary $k plain=$p cusafe=$c ratio=$(awk -v a="$c" -v b="$p" 'BEGIN {printf "%.2f", a/b}')"
done
# Device memory per allocation (alloc_footprint), plain vs preloaded, when the bundle has it.
if [ -x ./alloc_footprint ]; then
  echo "plain   footprint"; ./alloc_footprint | sed 's/^/plain   /'
  echo "cusafe  footprint"; LD_PRELOAD="$PWD/libcusafe_rt.so" CUSAFE_OPTIONS=detect_leaks=0 ./alloc_footprint | sed 's/^/cusafe  /'
fi
