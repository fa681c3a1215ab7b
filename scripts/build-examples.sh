#!/usr/bin/env bash
# Compiles every examples/*.cu twice with cusafe-clang++ — sanitized (NAME.cusafe) and
# plain (NAME.plain, --cusafe-no-instrument) — into a self-contained folder
# (default build/examples) with libcusafe_rt.so and libcudart.so.12 beside them
# ($ORIGIN rpath), so the folder can be copied to any GPU machine and run there.
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/examples}
mkdir -p "$out"
cxx="$CUSAFE_BIN/cusafe-clang++"
for src in "$CUSAFE_ROOT"/examples/*.cu; do
  name=$(basename "$src" .cu)
  # Relative source paths make reports read "examples/x.cu:12:5".
  (cd "$CUSAFE_ROOT" && CUSAFE_PASS_STATS=1 "$cxx" -O2 -g "examples/$name.cu" -o "$out/$name.cusafe" 2>"$out/$name.stats")
  (cd "$CUSAFE_ROOT" && "$cxx" --cusafe-no-instrument -O2 -g "examples/$name.cu" -o "$out/$name.plain")
  echo "built $name: $(grep -c 'checks' "$out/$name.stats" || true) instrumented functions"
done
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp "$CUSAFE_ROOT/scripts/gpu/run-examples.sh" "$out/"
