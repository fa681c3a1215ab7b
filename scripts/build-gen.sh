#!/usr/bin/env bash
# Builds the generated-program batches of `cusafe gen` for one GPU run, as a bundle:
#   OUT/clean   CLEAN programs, plain and cusafe at each level of OPT
#   OUT/dead    EMI dead-code variants of the first EMI of them (plain and cusafe, OPT_EMI)
#   OUT/live    EMI live-guard variants of the same seeds
#   OUT/plant   PLANT programs with one planted bug each (plain and cusafe at OPT_PLANT;
#               the plain build is for compute-sanitizer's memcheck)
#   OUT/bin     cusafe, libcusafe_rt.so, libcudart.so.12; each batch's bin/ gets the
#               two libraries ($ORIGIN rpath)
#   OUT/run-gen.sh, OUT/COMMIT
# Seeds start at SEED (default 1). A count of 0 skips that batch.
# Usage: build-gen.sh OUT [CLEAN [PLANT [EMI]]]
#   env: SEED, OPT (default 0,1,2,3), OPT_EMI (default 2), OPT_PLANT (default 2),
#        PER_FILE (default 25), JOBS (default 2)
set -euo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?out dir}
clean=${2:-100}
plant=${3:-40}
emi=${4:-25}
seed=${SEED:-1}
opt=${OPT:-0,1,2,3}
per=${PER_FILE:-25}
jobs=${JOBS:-2}
source "$CUSAFE_ROOT/scripts/lib/built.sh"
require_built build-gen.sh
gen="$CUSAFE_BIN/cusafe"
mkdir -p "$out/bin"
out=$(cd "$out" && pwd)
batch() { # name count extra-args...
  local name=$1 count=$2; shift 2
  [ "$count" -gt 0 ] || return 0
  rm -rf "${out:?}/$name"
  # Exit 1 means some build failed: it is reduced under failures/ and the batch runs
  # without it (the GPU run reports it); only a set-up error (2) stops here.
  local rc=0
  "$gen" gen build -o "$out/$name" --seed "$seed" --count "$count" --per-file "$per" --jobs "$jobs" "$@" || rc=$?
  [ "$rc" -le 1 ] || exit "$rc"
  cp -L "$CUSAFE_BIN/libcusafe_rt.so" "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/$name/bin/"
  rm -rf "$out/$name/obj" "$out/$name/failures/scratch"
}
batch clean "$clean" --opt "$opt"
batch dead "$emi" --emi dead --opt "${OPT_EMI:-2}"
batch live "$emi" --emi live --opt "${OPT_EMI:-2}"
# Planted: plain and cusafe at OPT_PLANT (check runs the cusafe builds; --memcheck runs
# compute-sanitizer on the plain one).
batch plant "$plant" --plant --opt "${OPT_PLANT:-2}"
cp "$gen" "$CUSAFE_BIN/libcusafe_rt.so" "$out/bin/"
cp -L "$CUSAFE_CUDA/lib64/libcudart.so.12" "$out/bin/"
cp "$CUSAFE_ROOT/scripts/gpu/run-gen.sh" "$out/"
git -C "$CUSAFE_ROOT" rev-parse HEAD > "$out/COMMIT"
du -sh "$out"
