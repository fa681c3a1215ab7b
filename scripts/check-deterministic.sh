#!/usr/bin/env bash
# The pass gives the same PTX from one run to the next: compiles each CUDA file twice to
# device PTX with cusafe-clang++ (-O3, sm_90) and fails naming the first file whose two
# outputs differ. Output that depends on heap addresses (an order by value handle, a
# hash of pointers) differs between runs of the same build; this is the net for it.
#
# Usage: scripts/check-deterministic.sh OUT_DIR FILE.cu...
set -euo pipefail
source "$(dirname "$0")/env.sh"
usage="usage: scripts/check-deterministic.sh OUT_DIR FILE.cu..."
out=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "check-deterministic.sh: no files; $usage" >&2; exit 2; }
mkdir -p "$out"
ptx() { # FILE RUN
  "$CUSAFE_BIN/cusafe-clang++" -O3 -ffp-contract=on --cuda-device-only --cuda-gpu-arch=sm_90 \
    -S -o "$out/$(basename "$1" .cu).$2.ptx" "$1"
}
export -f ptx
export out CUSAFE_BIN
for run in 1 2; do
  printf '%s\n' "$@" | xargs -P "$(nproc)" -I{} bash -c "ptx {} $run"
done
for f in "$@"; do
  n=$(basename "$f" .cu)
  if ! cmp -s "$out/$n.1.ptx" "$out/$n.2.ptx"; then
    echo "check-deterministic.sh: $f: two runs of the pass gave different PTX ($out/$n.1.ptx, $out/$n.2.ptx); an order or hash over value handles reaches the output" >&2
    diff "$out/$n.1.ptx" "$out/$n.2.ptx" | head -20 >&2
    exit 1
  fi
done
echo "check-deterministic.sh: $# files, the same PTX in two runs"
