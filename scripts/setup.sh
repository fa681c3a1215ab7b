#!/usr/bin/env bash
# Installs everything cusafe needs on a fresh Debian bookworm machine (idempotent, quick
# when already done): clang-19/llvm-19 from apt, the CUDA 12.5 pieces from PyPI into
# .toolchain/, lit for the IR tests, our own `fatbinary` (over libnvfatbin), and the
# --cuda-path tree clang needs. Prints what to do when a step cannot run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tc="$root/.toolchain"
say() { printf 'cusafe setup: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# 1. LLVM/clang 19 from apt.
# cmake: Debian's (3.25), for the CMake test of cusafe-clang++ (scripts/build-cmake.sh).
llvm_pkgs=(llvm-19-dev clang-19 libclang-19-dev llvm-19-tools llvm-19 cmake)
missing=()
for p in "${llvm_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null || die "apt-get not found; install ${missing[*]} (LLVM 19) by hand and re-run."
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  say "installing ${missing[*]} from apt"
  $sudo apt-get update -qq || die "apt-get update failed: check network access to the Debian archive."
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null \
    || die "apt-get install ${missing[*]} failed; see the apt output above."
fi
[ -x /usr/lib/llvm-19/bin/clang++ ] || die "/usr/lib/llvm-19/bin/clang++ missing after install."

# 2. CUDA 12.5 pieces and lit from PyPI into .toolchain/py.
py="$tc/py"
stamp="$py/.cusafe-stamp-1"
if [ ! -f "$stamp" ]; then
  say "installing CUDA 12.5 headers, ptxas, libcudart, libnvfatbin and lit from PyPI into $py"
  rm -rf "$py"; mkdir -p "$py"
  python3 -m pip install -q --no-deps --target "$py" \
    nvidia-cuda-runtime-cu12==12.5.82 nvidia-cuda-nvcc-cu12==12.5.82 \
    nvidia-cuda-cccl-cu12==12.5.39.post1 nvidia-nvfatbin-cu12==12.9.82 lit==18.1.8 \
    || die "pip install failed: check access to PyPI (or set PIP_INDEX_URL)."
  touch "$stamp"
fi

# 3. The --cuda-path tree clang wants.
nv="$py/nvidia"
cuda="$tc/cuda"
mkdir -p "$cuda/include" "$cuda/bin" "$cuda/nvvm/libdevice" "$cuda/lib64"
for d in "$nv/cuda_runtime/include" "$nv/cuda_nvcc/include" "$nv/cuda_cccl/include"; do
  for e in "$d"/*; do ln -sfn "$e" "$cuda/include/$(basename "$e")"; done
done
[ -e "$cuda/include/curand_mtgp32_kernel.h" ] || : > "$cuda/include/curand_mtgp32_kernel.h"
ln -sfn "$nv/cuda_nvcc/bin/ptxas" "$cuda/bin/ptxas"
ln -sfn "$nv/cuda_nvcc/nvvm/libdevice/libdevice.10.bc" "$cuda/nvvm/libdevice/libdevice.10.bc"
ln -sfn "$nv/cuda_runtime/lib/libcudart.so.12" "$cuda/lib64/libcudart.so.12"
ln -sfn libcudart.so.12 "$cuda/lib64/libcudart.so"
ln -sfn "$nv/nvfatbin/lib/libnvfatbin.so.12" "$cuda/lib64/libnvfatbin.so.12"
# Our fatbinary (built by cargo as cusafe-fatbinary) is linked in by scripts/build.sh.

# 4. A current CMake from PyPI (besides Debian's), for scripts/build-cmake.sh.
cmake_py="$tc/cmake"
if [ ! -f "$cmake_py/.cusafe-stamp-4.2.0" ]; then
  say "installing CMake 4.2.0 from PyPI into $cmake_py"
  rm -rf "$cmake_py"; mkdir -p "$cmake_py"
  # Only the CMake test needs it: a failure warns (build-cmake.sh then says what is missing).
  if python3 -m pip install -q --no-deps --target "$cmake_py" cmake==4.2.0; then
    touch "$cmake_py/.cusafe-stamp-4.2.0"
  else
    say "warning: pip install cmake==4.2.0 failed (access to PyPI, or PIP_INDEX_URL?): scripts/build-cmake.sh will stop until it is installed"
  fi
fi
say "toolchain ready in $tc"
