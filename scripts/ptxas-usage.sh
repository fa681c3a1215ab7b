#!/usr/bin/env bash
# Registers, stack frame and spills per kernel (ptxas -v), plain vs cusafe, for the given
# .cu files; prints a markdown table. Usage: scripts/ptxas-usage.sh FILE.cu...
# (The parsing is scripts/lib/ptxas.sh's, shared with build-perf.sh.)
set -euo pipefail
source "$(dirname "$0")/env.sh"
source "$CUSAFE_ROOT/scripts/lib/ptxas.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| program | kernel | registers plain → cusafe | stack bytes plain → cusafe | spill bytes plain → cusafe |"
echo "|---|---|---|---|---|"
for src in "$@"; do
  ptxas_usage "$tmp" "$src" --cusafe-no-instrument -O2 > "$tmp/plain"
  ptxas_usage "$tmp" "$src" -O2 > "$tmp/cusafe"
  join <(sort "$tmp/plain") <(sort "$tmp/cusafe") | while read -r k r1 s1 p1 r2 s2 p2; do
    echo "| $(basename "$src" .cu) | $k | $r1 → $r2 | $s1 → $s2 | $p1 → $p2 |"
  done
done
