#!/usr/bin/env bash
# Builds tests/cmake (a static library and an executable from two .cu files,
# find_package(CUDAToolkit), CUDA::cudart) with cusafe-clang++ as CMAKE_CUDA_COMPILER,
# with Debian's CMake and with the PyPI CMake scripts/setup.sh installs, each
# instrumented (cusafe-clang++) and plain (cusafe-plain-clang++), and checks what was
# built: instrumented device code and libcusafe_rt.so before libcudart in DT_NEEDED, or
# neither. CMake's clang CUDA support finds the toolkit through its nvcc: the configure
# line gives cusafe's tree (-DCUDAToolkit_ROOT), whose bin/nvcc is cusafe-nvcc.
# Usage: build-cmake.sh [OUT]   (default build/cmake; OUT/<cmake>-<flavour>/demo)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/cmake}
fail() { echo "build-cmake.sh: $*" >&2; exit 1; }
# The PyPI wheel's own binary (its bin/cmake is a Python launcher needing PYTHONPATH).
cmakes=(/usr/bin/cmake "$CUSAFE_ROOT/.toolchain/cmake/cmake/data/bin/cmake")
for cm in "${cmakes[@]}"; do
  [ -x "$cm" ] || fail "$cm missing: run scripts/setup.sh"
done
[ -x "$CUSAFE_CUDA/bin/nvcc" ] || fail "$CUSAFE_CUDA/bin/nvcc missing: run scripts/build.sh (it links cusafe-nvcc there)"
mkdir -p "$out"
built=0
for cm in "${cmakes[@]}"; do
  version=$("$cm" --version | head -1 | awk '{print $3}')
  for flavour in cusafe plain; do
    compiler="$CUSAFE_BIN/cusafe-clang++"
    [ "$flavour" = plain ] && compiler="$CUSAFE_BIN/cusafe-plain-clang++"
    dir="$out/cmake-$version-$flavour"
    rm -rf "$dir"
    "$cm" -S "$CUSAFE_ROOT/tests/cmake" -B "$dir" -DCMAKE_CUDA_COMPILER="$compiler" \
      -DCUDAToolkit_ROOT="$CUSAFE_CUDA" -DCMAKE_CUDA_ARCHITECTURES=90 > "$dir.configure.log" 2>&1 \
      || { cat "$dir.configure.log" >&2; fail "CMake $version ($flavour): configure failed"; }
    "$cm" --build "$dir" > "$dir.build.log" 2>&1 \
      || { cat "$dir.build.log" >&2; fail "CMake $version ($flavour): build failed"; }
    grep -q -- "--cuda-gpu-arch=sm_90" "$dir/CMakeFiles/demo.dir/flags.make" \
      || fail "CMake $version ($flavour): CMAKE_CUDA_ARCHITECTURES=90 did not reach the compiler"
    needed=$(readelf -d "$dir/demo" | awk '/NEEDED/ {print $5}' | tr -d '[]' | tr '\n' ' ')
    if [ "$flavour" = cusafe ]; then
      case "$needed" in
        libcusafe_rt.so\ libcudart.so.12*) ;;
        *) fail "CMake $version: demo's DT_NEEDED is '$needed' (want libcusafe_rt.so first, then libcudart.so.12)" ;;
      esac
      grep -q __cusafe_windows_ "$dir/demo" || fail "CMake $version: demo's device code is not instrumented"
    else
      case "$needed" in *libcusafe_rt*) fail "CMake $version: the plain demo links libcusafe_rt.so" ;; esac
      ! grep -q __cusafe_windows_ "$dir/demo" || fail "CMake $version: the plain demo is instrumented"
    fi
    echo "CMake $version, $flavour: configured and built $dir/demo (DT_NEEDED: $needed)"
    built=$((built + 1))
  done
done
echo "build-cmake.sh: $built CMake builds (run a demo on a GPU: it prints 'sum 1498500')"
