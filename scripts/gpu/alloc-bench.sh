#!/usr/bin/env bash
# cudaMalloc+cudaFree latency, plain vs LD_PRELOAD=libcusafe_rt.so without and with
# allocation sites (alloc_backtrace=0/1), interleaved in one session so all see the same
# GPU state. Prints one alloc_bench line per run and the ratios of the medians of the
# per-run medians; then, when the bundle has alloc_footprint,
# the device memory per allocation plain and preloaded.
# Usage: alloc-bench.sh BUNDLE_DIR [ROUNDS]   (env DEPTH: calls deep, default 24)
set -euo pipefail
cd "${1:?bundle dir}"
rounds=${2:-5}
for r in $(seq "$rounds"); do
  echo "plain   $(./alloc_bench "${DEPTH:-24}")"
  echo "cusafe  $(LD_PRELOAD="$PWD/libcusafe_rt.so" CUSAFE_OPTIONS=detect_leaks=0:alloc_backtrace=0 ./alloc_bench "${DEPTH:-24}")"
  echo "sites   $(LD_PRELOAD="$PWD/libcusafe_rt.so" CUSAFE_OPTIONS=detect_leaks=0:alloc_backtrace=1 ./alloc_bench "${DEPTH:-24}")"
done | tee /tmp/alloc-bench.txt
med() { grep "^$1 " /tmp/alloc-bench.txt | sed -E "s/.* $2=([0-9.]+).*/\1/" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for k in median_us small_median_us; do
  p=$(med plain "$k"); c=$(med cusafe "$k"); s=$(med sites "$k")
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a/b}'; }
  echo "summary $k plain=$p cusafe=$c sites=$s ratio=$(ratio "$c" "$p") sites_ratio=$(ratio "$s" "$p") sites_vs_cusafe=$(ratio "$s" "$c")"
done
# Device memory per allocation (alloc_footprint), plain vs preloaded, when the bundle has it.
# One process per size and build: freed memory kept for reuse would hide the next size's.
if [ -x ./alloc_footprint ]; then
  for size in $(./alloc_footprint --sizes); do
    ./alloc_footprint "$size" | sed 's/^/plain   /'
    LD_PRELOAD="$PWD/libcusafe_rt.so" CUSAFE_OPTIONS=detect_leaks=0 ./alloc_footprint "$size" | sed 's/^/cusafe  /'
  done
fi
