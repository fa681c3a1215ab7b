#!/usr/bin/env bash
# Installs cusafe's own fatbinary (target/release/cusafe-fatbinary, over libnvfatbin) as
# .toolchain/cuda/bin/fatbinary, the program clang runs, and gives the compiler driver its
# name: cargo cannot put '+' in a binary's name, so it is built as cusafe-clangxx and
# target/release/cusafe-clang++ is a symlink to it, and so is cusafe-plain-clang++ (the
# same driver building plain, for build systems that take only a compiler path). Run after
# `cargo build --release -p cusafe-cli` (and scripts/setup.sh); idempotent.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
case $target in /*) ;; *) target="$PWD/$target" ;; esac
bin="$target/release"
die() { printf 'cusafe link-fatbinary: error: %s\n' "$*" >&2; exit 1; }

[ -x "$bin/cusafe-fatbinary" ] || die "$bin/cusafe-fatbinary missing: run cargo build --release -p cusafe-cli first."
[ -d "$root/.toolchain/cuda/bin" ] || die "$root/.toolchain/cuda missing: run scripts/setup.sh first."
ln -sfn "$bin/cusafe-fatbinary" "$root/.toolchain/cuda/bin/fatbinary"
# The tree's nvcc is cusafe-nvcc: CMake's clang CUDA support finds the toolkit by its
# nvcc (-DCUDAToolkit_ROOT=<tree>, or the tree's bin/ on PATH) and asks it the version.
if [ -x "$bin/cusafe-nvcc" ]; then ln -sfn "$bin/cusafe-nvcc" "$root/.toolchain/cuda/bin/nvcc"; fi
if [ -x "$bin/cusafe-clangxx" ]; then
  ln -sfn cusafe-clangxx "$bin/cusafe-clang++"
  ln -sfn cusafe-clangxx "$bin/cusafe-plain-clang++"
fi
printf 'cusafe link-fatbinary: %s -> %s\n' "$root/.toolchain/cuda/bin/fatbinary" "$bin/cusafe-fatbinary" >&2
