# Sourced by the scripts that build with, or copy from, target/release: require_built
# NAME stops with the fix when scripts/build.sh never ran (the toolchain, the fatbinary
# and the first build come from it), and otherwise brings target/release up to date with
# the tree (cargo does nothing when it is), so that a bundle holds the runtime and the
# pass of the commit its COMMIT file names, never an older build's.
require_built() {
  local tool
  for tool in cusafe-clang++ cusafe; do
    if [ ! -x "$CUSAFE_BIN/$tool" ]; then
      echo "$1: $CUSAFE_BIN/$tool is missing; run scripts/build.sh first" >&2
      exit 2
    fi
  done
  if ! (cd "$CUSAFE_ROOT" && cargo build --release --workspace --bins --lib --quiet); then
    echo "$1: cargo build --release failed, so target/release may not match the tree; fix the build, then run $1 again" >&2
    exit 2
  fi
}
