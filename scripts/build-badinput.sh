#!/usr/bin/env bash
# Builds the bad-input programs (scripts/gpu/badinput/*.cu, issue 19 part 5) into a
# self-contained folder for a GPU machine: each program twice with cusafe-clang++,
# instrumented (NAME.cusafe, with --cusafe-recover so that exit_thread's kernel can go on
# after its report under halt_on_error=0) and plain (NAME.plain, --cusafe-no-instrument:
# the codes CUDA itself returns, for comparison), libcusafe_rt.so and libcudart.so.12
# beside them ($ORIGIN rpath), run-badinput.sh and COMMIT. The programs check
# themselves (PASS/FAIL lines); run-badinput.sh runs each case under a time limit.
# Usage: build-badinput.sh [OUT_DIR]   (default build/badinput); then on the GPU machine:
#   OUT_DIR/run-badinput.sh OUT_DIR RESULTS_DIR        (scripts/gpu/run-badinput.sh)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/badinput}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the builds below run from the repository root
cd "$CUSAFE_ROOT"
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-badinput.sh
cxx="$CUSAFE_BIN/cusafe-clang++"
src=scripts/gpu/badinput
for path in "$src"/*.cu; do
  name=$(basename "$path" .cu)
  # Relative source paths make reports read "scripts/gpu/badinput/x.cu:12:5".
  CUSAFE_PASS_STATS=1 "$cxx" --cusafe-recover -O2 -g -lpthread "$path" -o "$out/$name.cusafe" 2> "$out/$name.stats" ||
    { cat "$out/$name.stats" >&2; echo "build-badinput.sh: instrumented build of $path failed" >&2; exit 1; }
  "$cxx" --cusafe-no-instrument -O2 -g -lpthread "$path" -o "$out/$name.plain" ||
    { echo "build-badinput.sh: plain build of $path failed" >&2; exit 1; }
  echo "built $name: $(grep -c '^cusafe: kernel ' "$out/$name.stats" || true) instrumented kernel(s)"
done
# The source line of each program's out-of-bounds access (the reports must name it).
grep -n 'badinput-oob' "$src"/*.cu | awk -F: '{ n = split($1, p, "/"); sub(/\.cu$/, "", p[n]); printf "%s\t%s\t%s\n", p[n], $1, $2 }' > "$out/oob.tsv"
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp scripts/gpu/run-badinput.sh "$out/"
commit=$(git rev-parse HEAD)
[ -z "$(git status --porcelain)" ] || commit="$commit-dirty"
echo "$commit" > "$out/COMMIT"
echo "build-badinput.sh: bundle in $out ($(du -sh "$out" | cut -f1)); run it with $out/run-badinput.sh $out RESULTS_DIR"
