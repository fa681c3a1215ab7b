#!/usr/bin/env bash
# How stable one workload's timing is: the plain and cusafe builds of a perf bundle run
# interleaved REPS times at each pass count (--iters N), with the GPU's SM clock and
# temperature read before every run. For telling a workload's own swings (clocks,
# launch queue, L2 state) from what cusafe adds, before trusting its ratio.
# Usage: run-variance.sh BUNDLE_DIR OUT_DIR NAME REPS ITERS...
# Writes OUT_DIR/variance-NAME.tsv: iters mode rep per_iter_ms sm_mhz temp_c rc.
set -uo pipefail
usage="usage: run-variance.sh BUNDLE_DIR OUT_DIR NAME REPS ITERS..."
bundle=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
name=${3:?$usage}
reps=${4:?$usage}
shift 4
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
for b in plain cusafe; do
  [ -x "$bundle/$name.$b" ] || { echo "run-variance.sh: $bundle/$name.$b is missing; build the bundle with scripts/build-perf.sh" >&2; exit 2; }
done
mkdir -p "$out"
tsv="$out/variance-$name.tsv"
printf 'iters\tmode\trep\tper_iter_ms\tsm_mhz\ttemp_c\trc\n' > "$tsv"
for iters in "$@"; do
  for rep in $(seq 1 "$reps"); do
    for mode in plain cusafe; do
      state=$(nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader,nounits | head -1 | tr -d ' ')
      (cd "$bundle" && timeout 600 "./$name.$mode" --iters "$iters") > "$out/variance.log" 2>&1
      rc=$?
      line=$(grep -a '^PERF ' "$out/variance.log" | tail -1)
      ms=$(sed -n 's/.*per_iter_ms=\([0-9.]*\).*/\1/p' <<< "$line")
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$iters" "$mode" "$rep" "${ms:-}" "${state%,*}" "${state#*,}" "$rc" >> "$tsv"
    done
  done
done
rm -f "$out/variance.log"
# Per pass count and build: min, median, max of per_iter_ms.
for iters in "$@"; do
  for mode in plain cusafe; do
    awk -F'\t' -v i="$iters" -v m="$mode" '$1 == i && $2 == m && $4 != "" { print $4 }' "$tsv" | sort -g |
      awk -v i="$iters" -v m="$mode" '{ a[NR] = $1 } END { if (NR) printf "iters %s %-6s min %s median %s max %s (n %d)\n", i, m, a[1], a[int((NR + 1) / 2)], a[NR], NR }'
  done
done
