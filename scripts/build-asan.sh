#!/usr/bin/env bash
# Builds the programs for host AddressSanitizer and cusafe's device checks in one binary
# (cli/tests/fixtures/asan_*.cu) with `cusafe-clang++ -fsanitize=address -O1 -g` into a
# self-contained folder for a GPU machine: the programs, libcusafe_rt.so and
# libcudart.so.12 beside them ($ORIGIN rpath), expect.tsv (the source line each report
# must name, from the programs' markers), run-asan.sh and COMMIT.
#   asan_loader            a host input loader and a kernel; with --bad-input the loader
#                          overflows its heap array (ASan), without it the run is clean
#   asan_device_overflow   clean host code; its kernel writes one element past a
#                          cudaMalloc'd buffer (cusafe)
# Usage: build-asan.sh [OUT_DIR]   (default build/asan); then on the GPU machine:
#   OUT_DIR/run-asan.sh OUT_DIR RESULTS_DIR        (scripts/gpu/run-asan.sh)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/asan}
mkdir -p "$out"
out=$(cd "$out" && pwd) # the builds below run from the repository root
cd "$CUSAFE_ROOT"
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-asan.sh
cxx="$CUSAFE_BIN/cusafe-clang++"
src=cli/tests/fixtures
# marker FILE TEXT: the line number of the first line of FILE holding TEXT.
marker() {
  local n
  n=$(grep -n -F "$2" "$1" | head -1 | cut -d: -f1)
  [ -n "$n" ] || { echo "build-asan.sh: no '$2' marker in $1" >&2; exit 1; }
  echo "$n"
}
printf 'program\ttool\tkind\tfile\tline\n' > "$out/expect.tsv"
for spec in "asan_loader:AddressSanitizer:asan-expect" "asan_device_overflow:cusafe:cusafe-expect"; do
  IFS=: read -r name tool mark <<< "$spec"
  # A relative source path: cusafe's reports read "cli/tests/fixtures/NAME.cu:LINE:COL".
  CUSAFE_PASS_STATS=1 "$cxx" -fsanitize=address -O1 -g "$src/$name.cu" -o "$out/$name" 2> "$out/$name.stats" ||
    { cat "$out/$name.stats" >&2; echo "build-asan.sh: build of $src/$name.cu failed" >&2; exit 1; }
  kernels=$(grep -c '^cusafe: kernel ' "$out/$name.stats" || true)
  [ "$kernels" -gt 0 ] ||
    { echo "build-asan.sh: the pass printed no kernel for $src/$name.cu (device code not instrumented?)" >&2; exit 1; }
  printf '%s\t%s\theap-buffer-overflow\t%s\t%s\n' "$name" "$tool" "$src/$name.cu" \
    "$(marker "$src/$name.cu" "// $mark: heap-buffer-overflow")" >> "$out/expect.tsv"
  echo "built $name: $kernels instrumented kernel(s), host code with AddressSanitizer"
done
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp scripts/gpu/run-asan.sh "$out/"
commit=$(git rev-parse HEAD)
[ -z "$(git status --porcelain)" ] || commit="$commit-dirty"
echo "$commit" > "$out/COMMIT"
echo "build-asan.sh: bundle in $out ($(du -sh "$out" | cut -f1)); run it with $out/run-asan.sh $out RESULTS_DIR"
