#!/usr/bin/env bash
# Where clang's plain device code differs from nvcc's, per perf-suite kernel: nvcc's
# cubins come from the GPU machine (scripts/gpu/nvcc-cubins.sh: NAME.cubin and
# NAME.ptxas.txt); clang's plain build is made here with the perf bundle's flags
# (cusafe-clang++ --cusafe-no-instrument -O3 -g, device code for sm_90, ptxas -v). Both
# are disassembled with nvdisasm (installed by scripts/sass.sh on first use) and counted
# with scripts/lib/sass-counts.awk.
# Usage: scripts/nvcc-compare.sh CUBIN_DIR [OUT_DIR] [NAME...]   (OUT_DIR default
#        build/nvcc-compare; names default: every NAME.cubin in CUBIN_DIR)
# Writes OUT_DIR/NAME.{nvcc,clang}.sass and prints one TSV row per kernel and build:
#   workload kernel build registers instructions hot LDG STG LDS STS BRA
set -euo pipefail
source "$(dirname "$0")/env.sh"
usage="usage: scripts/nvcc-compare.sh CUBIN_DIR [OUT_DIR] [NAME...]"
cubins=${1:?$usage}
out=${2:-$CUSAFE_ROOT/build/nvcc-compare}
shift $(($# < 2 ? $# : 2))
nvdisasm=$CUSAFE_NVDISASM
if [ ! -x "$nvdisasm" ]; then
  echo "nvcc-compare.sh: $nvdisasm is missing; run scripts/sass.sh once (it installs nvdisasm)" >&2
  exit 2
fi
[ -d "$cubins" ] || { echo "nvcc-compare.sh: $cubins is not a directory; $usage" >&2; exit 2; }
names=("$@")
if [ ${#names[@]} = 0 ]; then
  for c in "$cubins"/*.cubin; do [ -e "$c" ] && names+=("$(basename "$c" .cubin)"); done
fi
[ ${#names[@]} -gt 0 ] || { echo "nvcc-compare.sh: no NAME.cubin in $cubins" >&2; exit 2; }
mkdir -p "$out"
# anon NAME: a kernel's symbol with its anonymous namespace spelled as clang spells it
# (nvcc names the namespace after a hash of the file; clang calls it _GLOBAL__N_1).
anon() {
  awk '/^_ZN[0-9]+_GLOBAL__N_/ { match($0, /^_ZN[0-9]+/); n = substr($0, 4, RLENGTH - 3)
         $0 = "_ZN12_GLOBAL__N_1" substr($0, RLENGTH + 1 + n) } { print }' <<< "$1"
}
# rows NAME BUILD SASS PTXAS_LOG: the TSV rows of one build's kernels.
rows() {
  awk -f "$CUSAFE_ROOT/scripts/lib/sass-counts.awk" "$3" |
    sed -E 's/^([^:]+): ([0-9]+) instructions \(([0-9]+) hot[^)]*\), LDG ([0-9]+), STG ([0-9]+), LDS ([0-9]+), STS ([0-9]+), BRA ([0-9]+).*/\1 \2 \3 \4 \5 \6 \7 \8/' |
    while read -r k rest; do
      regs=$(awk -v k="'$k'" '$0 ~ "entry function " k { f = 1; next } f && /Used [0-9]+ registers/ { sub(/.*Used /, ""); print $1; exit }' "$4")
      printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$(anon "$k")" "$2" "${regs:-?}" "${rest// /$'\t'}"
    done
}
printf 'workload\tkernel\tbuild\tregisters\tinstructions\thot\tLDG\tSTG\tLDS\tSTS\tBRA\n'
for name in "${names[@]}"; do
  src="$CUSAFE_ROOT/perf-suite/workloads/$name.cu"
  [ -f "$cubins/$name.cubin" ] && [ -f "$src" ] || { echo "nvcc-compare.sh: skipping $name (no cubin or no source)" >&2; continue; }
  "$nvdisasm" -c "$cubins/$name.cubin" 2> /dev/null > "$out/$name.nvcc.sass"
  rows "$name" nvcc "$out/$name.nvcc.sass" "$cubins/$name.ptxas.txt"
  "$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O3 -g --cuda-device-only \
    --cuda-gpu-arch=sm_90 -S -o "$out/$name.clang.ptx" "$src"
  "$CUSAFE_CUDA/bin/ptxas" -arch=sm_90 -O3 -v "$out/$name.clang.ptx" -o "$out/$name.clang.cubin" 2> "$out/$name.clang.ptxas.txt"
  "$nvdisasm" -c "$out/$name.clang.cubin" 2> /dev/null > "$out/$name.clang.sass"
  rows "$name" clang "$out/$name.clang.sass" "$out/$name.clang.ptxas.txt"
done
