#!/usr/bin/env bash
# An A/B bundle for a change of the runtime (libcusafe_rt.so) alone: the same workload
# binaries run with two runtimes, interleaved by run-perf.sh. Made from a perf bundle
# (scripts/build-perf.sh): NAME.plain and NAME.cusafe are copied with runtime A (the
# bundle's libcusafe_rt.so, or OLD_LIB) beside them; new/ holds NAME.cusafe again with
# runtime B (NEW_LIB) beside it, and NAME.noopt is a two-line script that runs
# new/NAME.cusafe. On the GPU, `PERF_MODES="plain cusafe noopt" run-perf.sh OUT RESULTS`
# then times plain, cusafe with runtime A and cusafe with runtime B (the table's noopt
# column), interleaved per repetition. The binaries find their runtime through their
# $ORIGIN run path, so each directory's copy is the one loaded.
#
# Usage: scripts/ab-runtime-bundle.sh PERF_BUNDLE OLD_LIB NEW_LIB OUT [WORKLOAD...]
#   OLD_LIB, NEW_LIB  runtime A and B (`-` for A: the bundle's own libcusafe_rt.so)
#   WORKLOAD...       default: every workload of the bundle's WORKLOADS file
set -euo pipefail
usage="usage: scripts/ab-runtime-bundle.sh PERF_BUNDLE OLD_LIB NEW_LIB OUT [WORKLOAD...]"
[ $# -ge 4 ] || { echo "$usage" >&2; exit 2; }
bundle=$1 old=$2 new=$3 out=$4
shift 4
[ "$old" = - ] && old=$bundle/libcusafe_rt.so
for f in "$bundle/libcudart.so.12" "$bundle/run-perf.sh" "$old" "$new"; do
  if [ ! -f "$f" ]; then
    echo "ab-runtime-bundle.sh: $f is missing; build the perf bundle with scripts/build-perf.sh and the runtime with scripts/build.sh" >&2
    exit 2
  fi
done
if [ $# -gt 0 ]; then
  names=("$@")
else
  read -r -d '' -a names < "$bundle/WORKLOADS" || true
fi
rm -rf "$out"
mkdir -p "$out/new"
for n in "${names[@]}"; do
  for b in plain cusafe; do
    if [ ! -x "$bundle/$n.$b" ]; then
      echo "ab-runtime-bundle.sh: $bundle/$n.$b is missing; is $n one of the bundle's workloads?" >&2
      exit 2
    fi
  done
  cp "$bundle/$n.plain" "$bundle/$n.cusafe" "$out/"
  cp "$bundle/$n.cusafe" "$out/new/"
  printf '#!/bin/sh\nexec "$(dirname "$0")/new/%s.cusafe" "$@"\n' "$n" > "$out/$n.noopt"
  chmod +x "$out/$n.noopt"
done
cp "$old" "$out/libcusafe_rt.so"
cp "$new" "$out/new/libcusafe_rt.so"
cp "$bundle/libcudart.so.12" "$out/"
cp "$bundle/libcudart.so.12" "$out/new/"
cp "$bundle/run-perf.sh" "$out/"
printf '%s\n' "${names[@]}" > "$out/WORKLOADS"
{
  echo "A/B of the runtime: cusafe = $(sha256sum "$old" | cut -c1-12), noopt = cusafe with $(sha256sum "$new" | cut -c1-12)"
  echo "binaries: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
} > "$out/NOOPT_ENV"
cp "$bundle/COMMIT" "$out/" 2>/dev/null || true
echo "ab-runtime-bundle.sh: $out (${#names[@]} workloads)"
