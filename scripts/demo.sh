#!/usr/bin/env bash
# The main job (README): set up, build cusafe, compile examples/ with cusafe-clang++,
# and run them sanitized when a GPU is present; otherwise say how to.
set -euo pipefail
source "$(dirname "$0")/env.sh"
"$CUSAFE_ROOT/scripts/build.sh"
out="$CUSAFE_ROOT/build/examples"
"$CUSAFE_ROOT/scripts/build-examples.sh" "$out"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  "$out/run-examples.sh" "$out" "$CUSAFE_ROOT/build/examples-run"
else
  cat <<MSG

No NVIDIA GPU here, so the examples were compiled but not run.
$out is self-contained (binaries, libcusafe_rt.so, libcudart.so.12, \$ORIGIN rpaths).
Copy it to a machine with an NVIDIA GPU (driver >= 555) and run:
    ./run-examples.sh . results
or run one program:  ./overflow_write.cusafe
MSG
fi
