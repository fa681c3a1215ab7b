#!/usr/bin/env bash
# Runs every example of a bundle made by scripts/build-examples.sh on a GPU machine:
# plain, sanitized by cusafe, plain under LD_PRELOAD=libcusafe_rt.so, and plain under
# compute-sanitizer memcheck. Writes one log per run plus runs.tsv and env.txt to OUT.
# Usage: run-examples.sh BUNDLE_DIR OUT_DIR [SHARD/SHARDS]
#   SHARD/SHARDS (e.g. 2/4) runs every SHARDS-th program starting at SHARD (1-based), so
#   several shards can share one GPU in parallel; each shard writes runs.SHARD.tsv.
set -uo pipefail
bundle=$(cd "${1:?bundle dir}" && pwd)
out=${2:?out dir}
shard=${3:-1/1}
k=${shard%/*}; n=${shard#*/}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  echo "compute-sanitizer: $("$cs" --version 2>/dev/null | tail -1)"
  echo "bundle: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
} > "$out/env.txt"
cat "$out/env.txt"
tsv="$out/runs.tsv"
[ "$n" = 1 ] || tsv="$out/runs.$k.tsv"
printf 'program\tmode\trc\tseconds\n' > "$tsv"
run() { # name mode cmd...
  local name=$1 mode=$2; shift 2
  local log="$out/logs/$name.$mode.txt" t0 ms rc
  t0=$(date +%s%N)
  (cd "$bundle" && timeout 90 "$@") > "$log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  printf '%s\t%s\t%s\t%d.%03d\n' "$name" "$mode" "$rc" $((ms / 1000)) $((ms % 1000)) >> "$tsv"
  printf '%-22s %-8s rc=%-4s\n' "$name" "$mode" "$rc"
}
i=0
for bin in "$bundle"/*.cusafe; do
  i=$((i + 1))
  [ $(( (i - 1) % n + 1 )) = "$k" ] || continue
  name=$(basename "$bin" .cusafe)
  run "$name" plain "./$name.plain"
  run "$name" cusafe "./$name.cusafe"
  run "$name" preload env LD_PRELOAD="$bundle/libcusafe_rt.so" "./$name.plain"
  run "$name" memcheck "$cs" --tool memcheck --print-limit 5 "./$name.plain"
done
