#!/usr/bin/env bash
# Splits a workload's cusafe/plain slowdown into the runtime's part and the
# instrumentation's: the plain build alone, the plain build with the runtime preloaded
# (cusafe's allocations: tagged, VA-randomized VMM blocks; no checks), and the cusafe
# build, interleaved REPS times on one GPU. Prints one line per run with the PERF line's
# per_iter_ms, then each mode's median.
# Usage: alloc-effect.sh BUNDLE_DIR REPS WORKLOAD...   (BUNDLE_DIR from build-perf.sh)
set -uo pipefail
cd "${1:?usage: alloc-effect.sh BUNDLE_DIR REPS WORKLOAD...}" || exit 2
reps=${2:?REPS}
shift 2
per_iter() { grep -a '^PERF ' | tail -1 | tr ' ' '\n' | sed -n 's/^per_iter_ms=//p'; }
for name in "$@"; do
  for rep in $(seq "$reps"); do
    echo "$name plain   $rep $(./"$name".plain | per_iter)"
    echo "$name preload $rep $(LD_PRELOAD="$PWD/libcusafe_rt.so" CUSAFE_OPTIONS=detect_leaks=0 ./"$name".plain | per_iter)"
    echo "$name cusafe  $rep $(./"$name".cusafe | per_iter)"
  done
done | tee /tmp/alloc-effect.txt
for name in "$@"; do
  for mode in plain preload cusafe; do
    grep "^$name $mode " /tmp/alloc-effect.txt | awk '{print $4}' | sort -n |
      awk -v n="$name" -v m="$mode" '{a[NR]=$1} END {print "median", n, m, a[int((NR+1)/2)]}'
  done
done
