#!/usr/bin/env bash
# Runs a bundle of scripts/bundle-nvcc-cmake.sh on the GPU machine: every security-suite program built
# through cusafe-nvcc (instrumented) and the CMake demos; writes OUT/run (logs, runs.tsv,
# env.txt) and OUT/cmake.txt.
# Usage: run-nvcc-cmake.sh BUNDLE OUT
set -u
b=${1:?bundle}; out=${2:?out}
mkdir -p "$out/run/logs"
{ echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'; echo "bundle: $(cat "$b/COMMIT")"; } > "$out/run/env.txt"
printf 'program\tmode\trc\tseconds\n' > "$out/run/runs.tsv"
for p in "$b"/suite/*; do
  n=$(basename "$p"); case $n in *.so*) continue ;; esac
  (cd "$b/suite" && timeout 90 "./$n") > "$out/run/logs/$n.cusafe.txt" 2>&1
  printf '%s\tcusafe\t%s\t0.000\n' "$n" "$?" >> "$out/run/runs.tsv"
done
for d in "$b"/cmake/*/; do
  echo "$(basename "$d"): $(cd "$d" && timeout 60 ./demo 2>&1 | tr '\n' ' ') rc=$?"
done > "$out/cmake.txt"
cat "$out/cmake.txt"
