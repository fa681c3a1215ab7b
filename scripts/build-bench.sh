#!/usr/bin/env bash
# Adds the allocation benches, latency (alloc_bench) and device memory per allocation
# (alloc_footprint) (plain builds; the runtime is preloaded at run time), their GPU
# script (alloc-bench.sh) and its summary (footprint-summary.py) to a bundle folder
# (default build/examples); and header_lookup, the check's header lookup in four block
# formats, phase_alias, the phased block format (aliased mappings, its lookup),
# packed_index, the packed block index's division checked on the device for every
# offset and field, and launch_rate, the host's cost per kernel launch (perf-suite/micro;
# header_lookup and phase_alias can also be built with nvcc on the GPU machine).
set -euo pipefail
source "$(dirname "$0")/env.sh"
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-bench.sh
out=${1:-$CUSAFE_ROOT/build/examples}
mkdir -p "$out"
for bench in alloc_bench alloc_footprint; do
  "$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O2 "$CUSAFE_ROOT/runtime-preload/tests/gpu/$bench.cu" -o "$out/$bench"
done
for micro in header_lookup phase_alias packed_index; do
  "$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O3 "$CUSAFE_ROOT/perf-suite/micro/$micro.cu" -o "$out/$micro"
done
# The host's cost per launch: run launch_rate.plain, launch_rate.plain with the runtime
# preloaded (the hooks), launch_rate.icall (plain, with a never-taken indirect call in
# the kernel like an instrumented kernel's cold path), launch_rate.nowindows (instrumented, no launch-time windows:
# the hooks and the instrumented module) and launch_rate.cusafe (instrumented, with the
# windows' extra parameters), interleaved.
"$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O3 "$CUSAFE_ROOT/perf-suite/micro/launch_rate.cu" -o "$out/launch_rate.plain"
"$CUSAFE_BIN/cusafe-clang++" --cusafe-no-instrument -O3 -DLAUNCH_RATE_ICALL "$CUSAFE_ROOT/perf-suite/micro/launch_rate.cu" -o "$out/launch_rate.icall"
CUSAFE_PASS_LAUNCH_BOUNDS=0 "$CUSAFE_BIN/cusafe-clang++" -O3 "$CUSAFE_ROOT/perf-suite/micro/launch_rate.cu" -o "$out/launch_rate.nowindows"
"$CUSAFE_BIN/cusafe-clang++" -O3 "$CUSAFE_ROOT/perf-suite/micro/launch_rate.cu" -o "$out/launch_rate.cusafe"
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp "$CUSAFE_ROOT/scripts/gpu/alloc-bench.sh" "$CUSAFE_ROOT/scripts/gpu/footprint-summary.py" "$out/"
