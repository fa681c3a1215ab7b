#!/usr/bin/env bash
# Runs the batches of a bundle made by scripts/build-gen.sh on a GPU machine with
# `cusafe gen check`: clean (every build against the plain reference), the EMI
# variants against the clean batch, the planted batch (with compute-sanitizer memcheck
# on MEMCHECK of its programs). Copies each batch's check.json and build.json to OUT.
# Usage: run-gen.sh BUNDLE OUT   (env: JOBS, default 8; MEMCHECK, default 100)
set -uo pipefail
bundle=$(cd "${1:?bundle}" && pwd)
out=${2:?out dir}
mkdir -p "$out"
out=$(cd "$out" && pwd)
jobs=${JOBS:-8}
gen="$bundle/bin/cusafe"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  echo "bundle: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
} > "$out/env.txt"
cat "$out/env.txt"
check() { # batch extra-args...
  local b=$1; shift
  [ -d "$bundle/$b" ] || return 0
  local t0=$(date +%s)
  "$gen" gen check "$bundle/$b" --jobs "$jobs" "$@" > "$out/$b.txt" 2>&1
  echo "$b: rc=$? $(( $(date +%s) - t0 )) s: $(grep -m1 'cusafe gen check' "$out/$b.txt")"
  cp "$bundle/$b/check.json" "$out/$b.check.json" 2>/dev/null
  cp "$bundle/$b/build.json" "$out/$b.build.json" 2>/dev/null
  cp "$bundle/$b/manifest.json" "$out/$b.manifest.json" 2>/dev/null
}
check clean
check dead --against "$bundle/clean"
check live --against "$bundle/clean"
check plant --memcheck "${MEMCHECK:-100}"
# The runs' logs of every batch, for reading failures here.
tar -czf "$out/runs.tgz" -C "$bundle" $(cd "$bundle" && ls -d */runs 2>/dev/null) 2>/dev/null
