#!/usr/bin/env bash
# nvcc's device code for every perf workload, for comparing with clang's plain build
# (scripts/nvcc-compare.sh, on the development machine, disassembles both). Builds each
# workload's source from a perf bundle's src/ with the GPU machine's nvcc, with the
# flags of run-perf.sh's nvcc mode, into NAME.cubin (sm_90), NAME.ptx and NAME.ptxas.txt
# (ptxas -v: registers, spills), one build per core.
# Usage: nvcc-cubins.sh BUNDLE_DIR OUT_DIR   (NVCC: the nvcc, default nvcc on PATH)
set -uo pipefail
usage="usage: nvcc-cubins.sh BUNDLE_DIR OUT_DIR"
bundle=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$nvcc" ] || { echo "nvcc-cubins.sh: $nvcc is missing; set NVCC" >&2; exit 2; }
src="$bundle/src/perf-suite/workloads"
[ -d "$src" ] || { echo "nvcc-cubins.sh: $src is missing; rebuild the bundle with scripts/build-perf.sh" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
"$nvcc" --version | tail -2 | head -1 > "$out/NVCC_VERSION"
flags="-O3 -arch=sm_90 -std=c++17"
echo "$flags" > "$out/NVCC_FLAGS"
ls "$src" | sed -n 's/\.cu$//p' | xargs -P "$(nproc)" -I{} sh -c '
  cd "$1" && "$2" $3 -cubin -Xptxas -v {}.cu -o "$4/{}.cubin" > "$4/{}.ptxas.txt" 2>&1 \
    && "$2" $3 -ptx {}.cu -o "$4/{}.ptx" >> "$4/{}.ptxas.txt" 2>&1 \
    || echo "nvcc-cubins.sh: nvcc failed on {} (see {}.ptxas.txt)"' sh "$src" "$nvcc" "$flags" "$out"
echo "nvcc-cubins.sh: $(ls "$out"/*.cubin 2> /dev/null | wc -l) cubins in $out"
