#!/usr/bin/env bash
# Builds the bundle for the multi-GPU run (scripts/gpu/run-multigpu.sh) from the usual
# bundle scripts, into one folder to carry to a machine with 2 GPUs:
#   suite/       scripts/build-examples.sh of the security suite's multi-GPU programs
#                (*multigpu*: manifest devices = 2) and a few single-device programs as
#                a regression check: NAME.cusafe, NAME.plain, NAME.stats, the runtime,
#                libcudart.so.12, run-examples.sh
#   fuzz/        scripts/build-fuzz.sh of one fuzz target ($FUZZ_TARGET, default
#                attention), builds fuzz and fixed, with the `cusafe` engine beside it
#   frameworks/  scripts/gpu/frameworks/ddp_allreduce.py (DDP / NCCL over 2 GPUs, and one
#                process on 2 GPUs)
#   run-multigpu.sh, COMMIT
# and packs it as OUT_DIR.tar.xz too (CUSAFE_MULTIGPU_TAR=0 skips that).
#
# Usage: build-multigpu.sh [OUT_DIR]   (default build/multigpu)
#   env REGRESSION="NAME..."  the single-device suite programs built beside the
#                             multi-GPU ones (default: seven, one per kind of check)
#   env FUZZ_TARGET=NAME      the fuzz target (a directory of fuzz-targets/)
# On the GPU machine: OUT_DIR/run-multigpu.sh OUT (see that script and docs/running.md);
# back here, scripts/gpu/multigpu-summary.py OUT RESULTS_DIR.
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/multigpu}
regression=${REGRESSION:-heap_stencil2d_read_overflow uaf_pingpong_immediate double_free_cleanup_list api_upload_memcpy_dst_overflow local_topk_inframe_write ok_pointer_table ok_pitched_2d_3d}
fuzz_target=${FUZZ_TARGET:-attention}
cd "$CUSAFE_ROOT"
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-multigpu.sh
multi=$(cd security-suite/programs && ls -- *multigpu*.cu | sed 's/\.cu$//')
[ -n "$multi" ] || { echo "build-multigpu.sh: no security-suite/programs/*multigpu*.cu" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/frameworks"
out=$(cd "$out" && pwd)
# shellcheck disable=SC2086 # lists of names
CUSAFE_ONLY="$(echo $multi $regression)" scripts/build-examples.sh "$out/suite" security-suite/programs
CUSAFE_FUZZ_TAR=0 CUSAFE_FUZZ_TARGETS=$fuzz_target CUSAFE_FUZZ_BUILDS="fuzz fixed" \
  scripts/build-fuzz.sh "$out/fuzz"
cp scripts/gpu/frameworks/ddp_allreduce.py "$out/frameworks/"
cp scripts/gpu/run-multigpu.sh "$out/"
git rev-parse HEAD > "$out/COMMIT"
echo "build-multigpu.sh: bundle in $out ($(du -sh "$out" | cut -f1)): $(echo $multi | wc -w) multi-GPU programs, $(echo $regression | wc -w) single-device, fuzz target $fuzz_target"
[ "${CUSAFE_MULTIGPU_TAR:-1}" = 0 ] && exit 0
tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -T2 -6 > "$out.tar.xz"
echo "build-multigpu.sh: $out.tar.xz ($(du -sh "$out.tar.xz" | cut -f1))"
