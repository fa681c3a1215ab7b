#!/usr/bin/env bash
# What the pass adds to compile time: every perf-suite workload and security-suite
# program compiled to an object file (host and device code) at -O2, plain
# (cusafe-clang++ --cusafe-no-instrument) and instrumented (cusafe-clang++), REPS times
# each, the two interleaved. The figure is CPU time (user + system of clang and its
# children: cc1 twice, ptxas, fatbinary), which a busy machine disturbs less than wall
# time. Run it on an otherwise idle machine.
# Usage: compile-time.sh OUT_STEM [REPS]   (REPS default 3)
# Writes OUT_STEM.tsv (file mode rep cpu_s wall_s), OUT_STEM.md and OUT_STEM.json
# (per file the medians and the ratio; the totals and their ratio).
set -euo pipefail
source "$(dirname "$0")/env.sh"
stem=${1:?usage: compile-time.sh OUT_STEM [REPS]}
reps=${2:-3}
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built compile-time.sh
cxx="$CUSAFE_BIN/cusafe-clang++"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$CUSAFE_ROOT"
tsv="$stem.tsv"
printf 'file\tmode\trep\tcpu_s\twall_s\n' > "$tsv"
for src in perf-suite/workloads/*.cu security-suite/programs/*.cu; do
  for rep in $(seq 1 "$reps"); do
    for mode in plain cusafe; do
      flags=(-O2 -c "$src" -o "$tmp/o.o")
      [ "$mode" = plain ] && flags=(--cusafe-no-instrument "${flags[@]}")
      if ! /usr/bin/time -f '%U %S %e' -o "$tmp/t" "$cxx" "${flags[@]}" 2> "$tmp/err"; then
        cat "$tmp/err" >&2
        echo "compile-time.sh: $src does not compile ($mode)" >&2
        exit 1
      fi
      read -r u s e < "$tmp/t"
      printf '%s\t%s\t%s\t%s\t%s\n' "$src" "$mode" "$rep" "$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')" "$e" >> "$tsv"
    done
  done
done
python3 "$CUSAFE_ROOT/scripts/compile-time-summary.py" "$tsv" "$stem"
