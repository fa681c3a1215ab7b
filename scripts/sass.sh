#!/usr/bin/env bash
# SASS of a CUDA file's device code on this machine, no GPU needed: cusafe-clang++ makes
# the PTX (instrumented, or plain with --plain; pass variables such as CUSAFE_PASS_DEFER=0
# come from the environment), the toolchain's ptxas assembles it for sm_90, and nvdisasm
# disassembles it. nvdisasm is installed on first use from PyPI (nvidia-cuda-nvdisasm,
# whose nvdisasm reads the sm_90 cubins of CUDA 12.5's ptxas) into .toolchain/nvdisasm.
# Prints one line per kernel: SASS instructions and the memory, branch and call counts
# (the figures to compare between two builds of one file).
#
# Usage: scripts/sass.sh [--plain] FILE.cu [OUT_DIR]
#   OUT_DIR  default build/sass; gets NAME[.plain].ptx, .cubin and .sass
# Example: the same workload with and without deferred branches:
#   scripts/sass.sh perf-suite/workloads/nw.cu build/sass/on
#   CUSAFE_PASS_DEFER=0 scripts/sass.sh perf-suite/workloads/nw.cu build/sass/off
set -euo pipefail
source "$(dirname "$0")/env.sh"
usage="usage: scripts/sass.sh [--plain] FILE.cu [OUT_DIR]"
plain=0
if [ "${1:-}" = --plain ]; then
  plain=1
  shift
fi
src=${1:?$usage}
out=${2:-$CUSAFE_ROOT/build/sass}
if [ ! -f "$src" ]; then
  echo "sass.sh: $src: no such file; $usage" >&2
  exit 2
fi
if [ ! -x "$CUSAFE_BIN/cusafe-clang++" ] || [ ! -x "$CUSAFE_CUDA/bin/ptxas" ]; then
  echo "sass.sh: cusafe-clang++ or ptxas is missing; run scripts/build.sh first" >&2
  exit 2
fi
nvdisasm=$CUSAFE_NVDISASM
if [ ! -x "$nvdisasm" ]; then
  echo "sass.sh: installing nvdisasm from PyPI (nvidia-cuda-nvdisasm) into $CUSAFE_TC/nvdisasm" >&2
  python3 -m pip install -q --no-deps --target "$CUSAFE_TC/nvdisasm" nvidia-cuda-nvdisasm \
    || { echo "sass.sh: pip install nvidia-cuda-nvdisasm failed: check access to PyPI (or set PIP_INDEX_URL)" >&2; exit 1; }
  if [ ! -x "$nvdisasm" ]; then
    echo "sass.sh: the nvidia-cuda-nvdisasm wheel has no nvidia/cu13/bin/nvdisasm; look in $CUSAFE_TC/nvdisasm and fix CUSAFE_NVDISASM in scripts/env.sh" >&2
    exit 1
  fi
fi
mkdir -p "$out"
name=$(basename "$src" .cu)
flags=()
if [ "$plain" = 1 ]; then
  name+=.plain
  flags+=(--cusafe-no-instrument)
fi
"$CUSAFE_BIN/cusafe-clang++" "${flags[@]}" -O3 -ffp-contract=on --cuda-device-only \
  --cuda-gpu-arch=sm_90 -S -o "$out/$name.ptx" "$src"
"$CUSAFE_CUDA/bin/ptxas" -arch=sm_90 -O3 "$out/$name.ptx" -o "$out/$name.cubin"
"$nvdisasm" -c "$out/$name.cubin" 2> /dev/null > "$out/$name.sass"
# Per kernel: instructions by opcode family and the hot ones (scripts/lib/sass-counts.awk).
awk -f "$(dirname "$0")/lib/sass-counts.awk" "$out/$name.sass"
echo "sass.sh: $out/$name.sass (and .ptx, .cubin)" >&2
