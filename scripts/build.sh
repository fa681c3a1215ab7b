#!/usr/bin/env bash
# Builds cusafe (release) after making sure the toolchain is installed, and installs
# our fatbinary into the CUDA tree clang uses.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CUSAFE_ROOT/scripts/setup.sh"
cd "$CUSAFE_ROOT"
cargo build --release --workspace --bins --lib
"$CUSAFE_ROOT/scripts/link-fatbinary.sh"
