#!/usr/bin/env bash
# Builds the perf suite (perf-suite/workloads/*.cu) three ways into a self-contained
# bundle that scripts/gpu/run-perf.sh runs on a GPU machine:
#   NAME.plain    cusafe-clang++ --cusafe-no-instrument -O3 -g   (the baseline)
#   NAME.cusafe   cusafe-clang++ -O3 -g                          (sanitized)
#   NAME.noopt    CUSAFE_PASS_OPT=0 cusafe-clang++ -O3 -g        (sanitized, check
#                 elimination off: the ablation)
# (all with -ffp-contract=on, see build() below)
# plus NAME.cusafe.stats and NAME.noopt.stats (the pass's per-function check counts,
# CUSAFE_PASS_STATS=1, with the builds' other stderr), NAME.ptxas.tsv (registers, stack
# and spill bytes per kernel and build, from `ptxas -v` run inside each build, so they
# are the shipped binaries' figures), libcusafe_rt.so, libcudart.so.12 ($ORIGIN rpath),
# run-perf.sh (and run-ncu.sh with ncu-summary.py, for kernel profiles), COMMIT (git
# rev-parse HEAD), WORKLOADS (the workloads built, which run-perf.sh runs) and src/ (the
# workloads' sources with the headers they include, which run-perf.sh's nvcc mode builds
# with the GPU machine's nvcc).
#
# Usage: build-perf.sh [OUT_DIR [WORKLOAD...]]
#   OUT_DIR   default build/perf
#   WORKLOAD  names without .cu (e.g. gemm bfs); default $CUSAFE_PERF_ONLY, else all
# Environment: CUSAFE_PERF_BUILDS, the builds to make (default "plain cusafe noopt";
#   plain and cusafe are always made: "plain cusafe" skips the ablation).
#   CUSAFE_PERF_NOOPT_ENV, the pass variables the noopt build is made with (default
#   CUSAFE_PASS_OPT=0): an A/B of one pass switch, timed interleaved with the others,
#   e.g. CUSAFE_PERF_NOOPT_ENV=CUSAFE_PASS_DEFER=0, or of two pass builds with
#   CUSAFE_PERF_NOOPT_ENV=CUSAFE_PASS_PLUGIN=/path/to/other/libcusafe_pass.so (one built
#   from another commit in a git worktree). Written to the bundle's NOOPT_ENV; the
#   table names the column after it.
# Examples:
#   scripts/build-perf.sh                              # every workload into build/perf
#   CUSAFE_PERF_ONLY="gemm bfs" scripts/build-perf.sh  # two of them
#   scripts/build-perf.sh /tmp/perf gemm               # one, elsewhere
set -euo pipefail
source "$(dirname "$0")/env.sh"
source "$CUSAFE_ROOT/scripts/lib/ptxas.sh"
out=${1:-$CUSAFE_ROOT/build/perf}
shift $(($# > 0 ? 1 : 0))
src=perf-suite/workloads # relative: reports and debug info name perf-suite/workloads/x.cu
read -r -a noopt_env <<< "${CUSAFE_PERF_NOOPT_ENV:-CUSAFE_PASS_OPT=0}"
for v in "${noopt_env[@]}"; do
  if ! [[ $v =~ ^CUSAFE_PASS_[A-Z_]+=[A-Za-z0-9_./+-]*$ ]]; then
    echo "build-perf.sh: CUSAFE_PERF_NOOPT_ENV: '$v' is not a CUSAFE_PASS_NAME=VALUE assignment (docs/pass.md lists them); e.g. CUSAFE_PERF_NOOPT_ENV=CUSAFE_PASS_DEFER=0" >&2
    exit 2
  fi
done
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-perf.sh
cxx="$CUSAFE_BIN/cusafe-clang++"

all=()
for path in "$CUSAFE_ROOT/$src"/*.cu; do
  [ -e "$path" ] && all+=("$(basename "$path" .cu)")
done
if [ ${#all[@]} = 0 ]; then
  echo "build-perf.sh: no workloads in $CUSAFE_ROOT/$src" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  names=("$@")
elif [ -n "${CUSAFE_PERF_ONLY:-}" ]; then
  read -r -a names <<< "$CUSAFE_PERF_ONLY"
else
  names=("${all[@]}")
fi
for name in "${names[@]}"; do
  if [ ! -f "$CUSAFE_ROOT/$src/$name.cu" ]; then
    echo "build-perf.sh: no workload '$name' ($src/$name.cu is missing); workloads: ${all[*]}" >&2
    exit 2
  fi
done

mkdir -p "$out"
out=$(cd "$out" && pwd) # the builds below run from the repository root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# build NAME MODE STATS [VAR=VALUE...]: compiles $src/NAME.cu into $out/NAME.MODE with
# the extra compiler environment VAR=VALUE..., appends its kernels' ptxas figures to
# $out/NAME.ptxas.tsv, and writes the rest of its stderr to STATS (or to our stderr when
# STATS is -). Exits naming the workload when the build fails.
build() {
  local name=$1 mode=$2 stats=$3
  shift 3
  # -ffp-contract=on: fuse a*b+c only within a statement (clang's CUDA default, fast,
  # fuses across statements in the backend, per basic block; the checks split blocks,
  # so plain and sanitized builds would fuse different pairs and their outputs would
  # differ in the last bits). Both builds get it: the checksums must agree.
  local flags=(-O3 -g -ffp-contract=on -Xcuda-ptxas -v)
  [ "$mode" = plain ] && flags=(--cusafe-no-instrument "${flags[@]}")
  if ! (cd "$CUSAFE_ROOT" && env "$@" "$cxx" "${flags[@]}" "$src/$name.cu" -o "$out/$name.$mode") 2> "$tmp/err"; then
    grep -v -e '^ptxas info' -e ' bytes stack frame, ' "$tmp/err" >&2 || true
    echo "build-perf.sh: workload $name: $mode build of $src/$name.cu failed ($*${*:+ }$cxx ${flags[*]})" >&2
    exit 1
  fi
  # A compile that cusafe-clang++ ran again with a register cap (docs/cli.md) printed
  # ptxas's figures twice: the last ones per kernel are the binary's.
  ptxas_parse < "$tmp/err" | awk '!($1 in last) { order[n++] = $1 } { last[$1] = $0 }
    END { for (i = 0; i < n; i++) print last[order[i]] }' > "$tmp/usage"
  if [ ! -s "$tmp/usage" ]; then
    echo "build-perf.sh: workload $name: no kernel in ptxas -v output of the $mode build" >&2
    exit 1
  fi
  awk -v mode="$mode" -v OFS='\t' '{ print mode, $1, $2, $3, $4 }' "$tmp/usage" >> "$out/$name.ptxas.tsv"
  if [ "$stats" = - ]; then
    grep -v -e '^ptxas info' -e ' bytes stack frame, ' "$tmp/err" >&2 || true
  else
    grep -v -e '^ptxas info' -e ' bytes stack frame, ' "$tmp/err" > "$stats" || true
  fi
}

# checks FILE: the sum of "N checks" over the stats lines of FILE.
checks() {
  sed -n 's/^cusafe: .*: \([0-9][0-9]*\) checks .*/\1/p' "$1" | awk '{ s += $1 } END { print s + 0 }'
}

# regs FILE BUILD: the most registers any kernel of BUILD uses in ptxas.tsv FILE.
regs() {
  awk -F'\t' -v m="$2" '$1 == m && $3 > r { r = $3 } END { print r + 0 }' "$1"
}

read -r -a builds <<< "${CUSAFE_PERF_BUILDS:-plain cusafe noopt}"
noopt=0
for b in "${builds[@]}"; do
  case $b in
    plain | cusafe) ;;
    noopt) noopt=1 ;;
    *) echo "build-perf.sh: unknown build '$b' in CUSAFE_PERF_BUILDS; use plain, cusafe, noopt" >&2; exit 2 ;;
  esac
done

for name in "${names[@]}"; do
  tsv="$out/$name.ptxas.tsv"
  printf 'build\tkernel\tregisters\tstack_bytes\tspill_bytes\n' > "$tsv"
  build "$name" plain -
  build "$name" cusafe "$out/$name.cusafe.stats" CUSAFE_PASS_STATS=1
  rm -f "$out/$name.noopt" "$out/$name.noopt.stats"
  [ "$noopt" = 1 ] && build "$name" noopt "$out/$name.noopt.stats" "${noopt_env[@]}" CUSAFE_PASS_STATS=1
  line="built $name: $(grep -c '^plain' "$tsv") kernels; checks cusafe $(checks "$out/$name.cusafe.stats")"
  [ "$noopt" = 1 ] && line+=", noopt $(checks "$out/$name.noopt.stats")"
  line+="; max registers plain $(regs "$tsv" plain), cusafe $(regs "$tsv" cusafe)"
  [ "$noopt" = 1 ] && line+=", noopt $(regs "$tsv" noopt)"
  echo "$line"
done
cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/"
cp "$CUSAFE_ROOT/scripts/gpu/run-perf.sh" "$CUSAFE_ROOT/scripts/gpu/run-variance.sh" \
  "$CUSAFE_ROOT/scripts/gpu/run-ncu.sh" "$CUSAFE_ROOT/scripts/gpu/ncu-summary.py" "$out/"
# The sources, for run-perf.sh's nvcc mode, laid out as in the repository (every
# workload: one may include another; the harness includes examples/common.h).
mkdir -p "$out/src/perf-suite/workloads" "$out/src/examples"
cp "$CUSAFE_ROOT/perf-suite/harness.h" "$out/src/perf-suite/"
cp "$CUSAFE_ROOT/examples/common.h" "$out/src/examples/"
cp "$CUSAFE_ROOT/$src"/*.cu "$out/src/perf-suite/workloads/"
git -C "$CUSAFE_ROOT" rev-parse HEAD > "$out/COMMIT"
if [ "$noopt" = 1 ]; then echo "${noopt_env[*]}" > "$out/NOOPT_ENV"; else rm -f "$out/NOOPT_ENV"; fi
printf '%s\n' "${names[@]}" > "$out/WORKLOADS"
echo "bundle: $out (${#names[@]} workloads; run it with run-perf.sh, see docs/perf-suite.md)"
