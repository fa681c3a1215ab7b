#!/usr/bin/env bash
# Registers, stack frame and spills per kernel (ptxas -v), plain vs cusafe, for the given
# .cu files; prints a markdown table. Usage: scripts/ptxas-usage.sh FILE.cu...
set -euo pipefail
source "$(dirname "$0")/env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
usage() { # mode file -> "kernel regs stack spill" lines
  local flag=$1 src=$2
  (cd "$CUSAFE_ROOT" && "$CUSAFE_BIN/cusafe-clang++" $flag -O2 --cuda-device-only -S "$src" -o "$tmp/k.ptx")
  "$CUSAFE_CUDA/bin/ptxas" -arch=sm_90 -v "$tmp/k.ptx" -o "$tmp/k.cubin" 2>&1 | awk '
    /Compiling entry function/ { k = $7; gsub(/[\047]/, "", k); want = 1; next }
    want && /bytes stack frame/ { stack = $1; spill = $5 + $9 }
    want && /Used [0-9]+ registers/ { print k, $5, stack, spill; want = 0 }'
}
echo "| program | kernel | registers plain → cusafe | stack bytes plain → cusafe | spill bytes plain → cusafe |"
echo "|---|---|---|---|---|"
for src in "$@"; do
  usage --cusafe-no-instrument "$src" > "$tmp/plain"
  usage "" "$src" > "$tmp/cusafe"
  join <(sort "$tmp/plain") <(sort "$tmp/cusafe") | while read -r k r1 s1 p1 r2 s2 p2; do
    echo "| $(basename "$src" .cu) | $k | $r1 → $r2 | $s1 → $s2 | $p1 → $p2 |"
  done
done
