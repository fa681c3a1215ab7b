#!/usr/bin/env bash
# Builds the bundle for the GPU run of existing binaries under `cusafe run`
# (scripts/gpu/run-interpose.sh): the runtime, the CLI, the security suite's host-API
# bug programs and correct programs as sources (the GPU machine compiles them with its
# nvcc, static and shared cudart), the driver-API program, instrumented objects of some
# device-bug and correct programs (linked there against static and shared cudart), and
# the framework workloads. Writes build/interpose/ and build/interpose.tar.xz.
#
# Usage: build-interpose.sh   (after scripts/build.sh)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=$CUSAFE_ROOT/build/interpose
rm -rf "$out"
mkdir -p "$out/src/security-suite/programs" "$out/src/examples" "$out/obj" "$out/frameworks"
cd "$CUSAFE_ROOT"
# Host-API bugs (space = host-api in the manifest) and every correct program, less the
# multi-GPU ones (*multigpu*, devices = 2: scripts/gpu/run-multigpu.sh runs those; here
# they would only say "skipped" on a one-GPU machine).
host_api=$(awk '/^name = /{n=$3} /^space = "host-api"/{gsub(/"/,"",n); print n}' security-suite/manifest.toml | grep -v multigpu)
for name in $host_api $(cd security-suite/programs && ls ok_*.cu | grep -v multigpu | sed 's/\.cu$//'); do
  cp "security-suite/programs/$name.cu" "$out/src/security-suite/programs/"
done
cp examples/common.h "$out/src/examples/"
cp runtime-preload/tests/fixtures/driver_app.c "$out/src/"
# Instrumented objects: device bugs of several kinds, a host-API bug and correct code.
for name in heap_stencil2d_read_overflow heap_permute_nonlinear_write uaf_reload_delayed \
    local_frame_reuse_uar shared_halo_write_neighbour dynshared_halo_single \
    api_upload_memcpy_dst_overflow double_free_error_path ok_pointer_table ok_pitched_2d_3d \
    ok_recursion; do
  "$CUSAFE_BIN/cusafe-clang++" -O2 -g -c "security-suite/programs/$name.cu" -o "$out/obj/$name.o"
  { grep -m1 -oE 'cusafe-expect: [a-z-]+' "security-suite/programs/$name.cu" | sed 's/cusafe-expect: //' ||
    echo none; } > "$out/obj/$name.expect"
  echo "compiled $name.o"
done
cp -L "$CUSAFE_BIN/cusafe" "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp scripts/gpu/frameworks/*.py "$out/frameworks/"
cp scripts/gpu/run-interpose.sh security-suite/manifest.toml "$out/"
git rev-parse HEAD > "$out/COMMIT"
tar -C "$CUSAFE_ROOT/build" -cJf "$CUSAFE_ROOT/build/interpose.tar.xz" interpose
echo "bundle: build/interpose.tar.xz ($(du -h "$CUSAFE_ROOT/build/interpose.tar.xz" | cut -f1))"
