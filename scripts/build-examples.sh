#!/usr/bin/env bash
# Compiles every SRC_DIR/*.cu twice with cusafe-clang++ — sanitized (NAME.cusafe) and
# plain (NAME.plain, --cusafe-no-instrument) — into a self-contained folder with
# libcusafe_rt.so and libcudart.so.12 beside them ($ORIGIN rpath), so the folder can
# be copied to any GPU machine and run there with run-examples.sh.
# COMMIT (git rev-parse HEAD) names the build.
#
# Usage: build-examples.sh [OUT_DIR [SRC_DIR]]
#   OUT_DIR  default build/examples
#   SRC_DIR  default examples; a directory inside the repository (relative to its root
#            or absolute). It is also the prefix reports print ("SRC_DIR/x.cu:12:5")
#            and the --prefix to give `cusafe-suite score`.
#   CUSAFE_ONLY="NAME..."  (env) build only these programs (file stems, space-separated);
#            a name with no SRC_DIR/NAME.cu stops the build
# Examples:
#   scripts/build-examples.sh                                      # build/examples
#   scripts/build-examples.sh build/suite security-suite/programs  # the security suite
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:-$CUSAFE_ROOT/build/examples}
src=${2:-examples}
# The compiler must see the sources by a path relative to the repository root, so
# that reports and the cusafe-expect markers name the same file.
case "$src" in
  /*)
    abs=$(cd "$src" && pwd)
    rel=${abs#"$CUSAFE_ROOT"/}
    if [ "$rel" = "$abs" ]; then
      echo "build-examples.sh: $src is outside the repository ($CUSAFE_ROOT); pass a directory inside it" >&2
      exit 2
    fi
    src=$rel
    ;;
esac
src=${src%/}
if ! compgen -G "$CUSAFE_ROOT/$src/*.cu" > /dev/null; then
  echo "build-examples.sh: no .cu files in $CUSAFE_ROOT/$src; pass a source directory such as examples or security-suite/programs" >&2
  exit 2
fi
only=${CUSAFE_ONLY:-}
for name in $only; do
  if [ ! -f "$CUSAFE_ROOT/$src/$name.cu" ]; then
    echo "build-examples.sh: CUSAFE_ONLY names $name, but $src/$name.cu does not exist" >&2
    exit 2
  fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd) # the builds below run from the repository root
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-examples.sh
cxx="$CUSAFE_BIN/cusafe-clang++"
for path in "$CUSAFE_ROOT/$src"/*.cu; do
  name=$(basename "$path" .cu)
  if [ -n "$only" ] && [[ " $(echo $only) " != *" $name "* ]]; then continue; fi
  # Relative source paths make reports read "examples/x.cu:12:5".
  (cd "$CUSAFE_ROOT" && CUSAFE_PASS_STATS=1 "$cxx" -O2 -g "$src/$name.cu" -o "$out/$name.cusafe" 2>"$out/$name.stats") ||
    { cat "$out/$name.stats" >&2; echo "build-examples.sh: instrumented build of $src/$name.cu failed" >&2; exit 1; }
  (cd "$CUSAFE_ROOT" && "$cxx" --cusafe-no-instrument -O2 -g "$src/$name.cu" -o "$out/$name.plain") ||
    { echo "build-examples.sh: plain build of $src/$name.cu failed" >&2; exit 1; }
  echo "built $name: $(grep -c 'checks' "$out/$name.stats" || true) instrumented functions"
done
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp "$CUSAFE_ROOT/scripts/gpu/run-examples.sh" "$out/"
git -C "$CUSAFE_ROOT" rev-parse HEAD > "$out/COMMIT"
