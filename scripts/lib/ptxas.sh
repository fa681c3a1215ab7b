# Sourced by scripts that report per-kernel resources from `ptxas -v` (ptxas-usage.sh,
# build-perf.sh). Defines functions only; needs env.sh's variables for ptxas_usage.

# ptxas_parse: reads `ptxas -v` output on stdin (other lines, e.g. the pass's stats or
# compiler warnings, are skipped) and prints one line per entry function (kernel):
#   KERNEL REGISTERS STACK_BYTES SPILL_BYTES
# SPILL_BYTES is spill stores + spill loads. The stack and spill figures are those of the
# "Function properties for KERNEL" block, not of the device functions ptxas lists beside it.
ptxas_parse() {
  awk '
    /Compiling entry function/ { k = $7; gsub(/\047/, "", k); want = 1; props = 0; stack = 0; spill = 0; next }
    /Function properties for/ { props = ($NF == k); next }
    want && props && /bytes stack frame/ { stack = $1; spill = $5 + $9 }
    want && /Used [0-9]+ registers/ { print k, $5, stack, spill; want = 0; props = 0 }'
}

# ptxas_usage WORKDIR SRC [CLANG_ARGS...]: compiles SRC's device code to PTX with
# cusafe-clang++ CLANG_ARGS (from the repository root, so SRC is relative to it or
# absolute), assembles it with `ptxas -v` for sm_90 (cusafe-clang++'s default arch) and
# prints ptxas_parse's lines. Scratch files go to WORKDIR. Variables set on the call
# (`CUSAFE_PASS_OPT=0 ptxas_usage ...`) reach the compiler.
ptxas_usage() {
  local dir=$1 src=$2
  shift 2
  (cd "$CUSAFE_ROOT" && "$CUSAFE_BIN/cusafe-clang++" "$@" --cuda-device-only -S "$src" -o "$dir/ptxas_usage.ptx")
  "$CUSAFE_CUDA/bin/ptxas" -arch=sm_90 -v "$dir/ptxas_usage.ptx" -o "$dir/ptxas_usage.cubin" 2>&1 | ptxas_parse
}
