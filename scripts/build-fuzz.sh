#!/usr/bin/env bash
# Builds the fuzz targets (fuzz-targets/*/NAME.cu) into a self-contained bundle for a GPU
# machine: the `cusafe` engine, libcusafe_rt.so and libcudart.so.12 beside the targets
# ($ORIGIN rpath), each target in five builds, its seeds, dictionary and bug inputs:
#   NAME.fuzz    --cusafe-fuzz (checks, device edges, host coverage + ASan)
#   NAME.nodev   --cusafe-fuzz --cusafe-fuzz-no-device-edges (device coverage's cost)
#   NAME.warp    --cusafe-fuzz-warp (a warp's first lane stores the edge)
#   NAME.cov     --cusafe-no-instrument --cusafe-fuzz (coverage only: the baseline)
#   NAME.fixed   --cusafe-fuzz -DCUSAFE_FIXED (the bug-free variant)
# Usage: build-fuzz.sh [OUT_DIR]   (default build/fuzz); run it there with
# scripts/gpu/run-fuzz.sh. CUSAFE_FUZZ_TAR=0 skips the .tar.xz (CI only compiles).
# CUSAFE_FUZZ_TARGETS="NAME..." builds only those targets, CUSAFE_FUZZ_BUILDS="fuzz
# fixed ..." only those of the five builds (scripts/build-multigpu.sh uses both).
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/fuzz}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$CUSAFE_ROOT"
cxx="$CUSAFE_BIN/cusafe-clang++"
for f in cusafe libcusafe_rt.so; do cp "$CUSAFE_BIN/$f" "$out/"; done
cp -L "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp scripts/gpu/run-fuzz.sh "$out/"
git rev-parse HEAD > "$out/COMMIT"
only_targets=${CUSAFE_FUZZ_TARGETS:-}
only_builds=${CUSAFE_FUZZ_BUILDS:-}
for t in $only_targets; do
  [ -f "fuzz-targets/$t/$t.cu" ] ||
    { echo "build-fuzz.sh: CUSAFE_FUZZ_TARGETS names $t, but fuzz-targets/$t/$t.cu does not exist" >&2; exit 2; }
done
for b in $only_builds; do
  case $b in fuzz|nodev|warp|cov|fixed) ;; *)
    echo "build-fuzz.sh: CUSAFE_FUZZ_BUILDS names $b; the builds are fuzz nodev warp cov fixed" >&2; exit 2 ;;
  esac
done
for src in fuzz-targets/*/*.cu; do
  name=$(basename "$src" .cu)
  dir=$(dirname "$src")
  if [ -n "$only_targets" ] && [[ " $(echo $only_targets) " != *" $name "* ]]; then continue; fi
  for v in "fuzz:--cusafe-fuzz" "nodev:--cusafe-fuzz --cusafe-fuzz-no-device-edges" \
           "warp:--cusafe-fuzz-warp" "cov:--cusafe-no-instrument --cusafe-fuzz" \
           "fixed:--cusafe-fuzz -DCUSAFE_FIXED"; do
    if [ -n "$only_builds" ] && [[ " $(echo $only_builds) " != *" ${v%%:*} "* ]]; then continue; fi
    # shellcheck disable=SC2086 # the flags are words
    "$cxx" ${v#*:} -O2 -g "$src" -o "$out/$name.${v%%:*}"
  done
  mkdir -p "$out/$name"
  cp -r "$dir/seeds" "$dir/bugs" "$out/$name/"
  [ -f "$dir/dict.txt" ] && cp "$dir/dict.txt" "$out/$name/"
  echo "build-fuzz.sh: $name"
done
echo "build-fuzz.sh: bundle in $out ($(du -sh "$out" | cut -f1))"
# One compressed file to carry to the GPU machine.
[ "${CUSAFE_FUZZ_TAR:-1}" = 0 ] && exit 0
tar -C "$(dirname "$out")" -cf - "$(basename "$out")" | xz -T2 -6 > "$out.tar.xz"
echo "build-fuzz.sh: $out.tar.xz ($(du -sh "$out.tar.xz" | cut -f1))"
