#!/usr/bin/env bash
# Interestingness test for `cusafe gen reduce` on a machine with a GPU and the toolchain:
# exits 0 when FILE still shows a differential failure, that is when its plain and
# cusafe builds at -O$GEN_OPT (default 2) print different lines, or the cusafe build
# reports anything. Exits 1 otherwise (also when a build fails: not the same failure).
# Usage: cusafe gen reduce --seed S --test scripts/gen-difftest.sh -o OUT
set -uo pipefail
file=${1:?candidate .cu file}
source "$(dirname "$0")/env.sh"
opt=${GEN_OPT:-2}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cxx="$CUSAFE_BIN/cusafe-clang++"
"$cxx" --cusafe-no-instrument "-O$opt" -gline-tables-only "$file" -o "$dir/plain" 2>/dev/null || exit 1
"$cxx" "-O$opt" -gline-tables-only "$file" -o "$dir/cusafe" 2>/dev/null || exit 1
timeout 60 "$dir/plain" > "$dir/plain.out" 2>/dev/null || exit 1
CUSAFE_OPTIONS="json_path=$dir/r.json" timeout 60 "$dir/cusafe" > "$dir/cusafe.out" 2>/dev/null
if [ -s "$dir/r.json" ] || ! cmp -s "$dir/plain.out" "$dir/cusafe.out"; then
  exit 0
fi
exit 1
