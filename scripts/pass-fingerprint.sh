#!/usr/bin/env bash
# What the pass makes of every perf-suite workload and security-suite program, for
# checking that a refactoring of the pass changed nothing: each file's device code is
# compiled with cusafe-clang++ at each level (CUSAFE_PASS_STATS=1), and the output
# lists, per file and level, the sha256 of the PTX, the pass's stats lines and ptxas's
# registers, stack and spills per kernel (scripts/lib/ptxas.sh). Two runs give the same
# file exactly when the pass emitted the same code.
# Usage: pass-fingerprint.sh OUT.tsv [LEVELS]   (LEVELS default "0 2 3")
# Compare: diff before.tsv after.tsv (no output: identical).
set -euo pipefail
source "$(dirname "$0")/env.sh"
source "$CUSAFE_ROOT/scripts/lib/ptxas.sh"
out=${1:?usage: pass-fingerprint.sh OUT.tsv [LEVELS]}
levels=${2:-0 2 3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$CUSAFE_ROOT"
: > "$out"
n=0
for src in perf-suite/workloads/*.cu security-suite/programs/*.cu; do
  for o in $levels; do
    ptx="$tmp/f.ptx"
    if ! CUSAFE_PASS_STATS=1 "$CUSAFE_BIN/cusafe-clang++" -O"$o" --cuda-device-only -S \
        "$src" -o "$ptx" 2> "$tmp/stderr"; then
      echo "pass-fingerprint.sh: $src -O$o does not compile:" >&2
      cat "$tmp/stderr" >&2
      exit 1
    fi
    tag="$src	O$o"
    echo "$tag	ptx	$(sha256sum < "$ptx" | cut -c1-16)" >> "$out"
    grep '^cusafe: ' "$tmp/stderr" | sed "s|^|$tag	stats	|" >> "$out" || true
    "$CUSAFE_CUDA/bin/ptxas" -arch=sm_90 -v "$ptx" -o "$tmp/f.cubin" 2>&1 | ptxas_parse \
      | sort | sed "s|^|$tag	ptxas	|" >> "$out"
    n=$((n + 1))
  done
done
echo "pass-fingerprint.sh: $n compiles into $out ($(grep -c '	ptxas	' "$out") kernels)"
