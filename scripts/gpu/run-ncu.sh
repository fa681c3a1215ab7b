#!/usr/bin/env bash
# Profiles a perf bundle (scripts/build-perf.sh) with Nsight Compute on the GPU machine:
# for each workload, the plain build and the cusafe build (with the runtime preloaded:
# loaded only as the program's dependency, a cusafe build dies under ncu; see
# docs/runtime.md, known limits), one pass (--quick), skipping NCU_SKIP launches and
# profiling the next NCU_COUNT. ncu flushes the caches before each profiled launch.
# Make the tables with scripts/gpu/ncu-summary.py OUT_DIR.
#
# Usage: run-ncu.sh BUNDLE_DIR OUT_DIR [WORKLOAD...]
#   WORKLOAD...  default: the bundle's WORKLOADS
# Environment:
#   NCU          the ncu to run (default: ncu on PATH, else /usr/local/cuda/bin/ncu)
#   NCU_SKIP     launches to skip (default 3)
#   NCU_COUNT    launches to profile (default 2)
#   NCU_TIMEOUT  seconds per run (default 120)
# Writes OUT_DIR/NAME.MODE.csv (ncu --csv --page details), OUT_DIR/NAME.MODE.err and
# OUT_DIR/runs.tsv (workload, mode, exit status).
set -uo pipefail
usage="usage: run-ncu.sh BUNDLE_DIR OUT_DIR [WORKLOAD...]"
bundle=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
shift 2
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
if [ ! -x "$ncu" ]; then
  echo "run-ncu.sh: no ncu at $ncu; set NCU to Nsight Compute's ncu" >&2
  exit 2
fi
skip=${NCU_SKIP:-3}
count=${NCU_COUNT:-2}
limit=${NCU_TIMEOUT:-120}
for v in "$skip" "$count" "$limit"; do
  case $v in '' | *[!0-9]*)
    echo "run-ncu.sh: NCU_SKIP, NCU_COUNT and NCU_TIMEOUT must be non-negative integers" >&2
    exit 2 ;;
  esac
done
if [ "$#" -gt 0 ]; then
  names=("$@")
elif [ -f "$bundle/WORKLOADS" ]; then
  read -r -d '' -a names < "$bundle/WORKLOADS"
else
  echo "run-ncu.sh: $bundle has no WORKLOADS file (not a scripts/build-perf.sh bundle?); name the workloads after OUT_DIR" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
out=$(cd "$out" && pwd)
sections=(--section SpeedOfLight --section Occupancy --section LaunchStats
  --section WarpStateStats --section InstructionStats)
printf 'workload\tmode\trc\n' > "$out/runs.tsv"
export LD_LIBRARY_PATH="$bundle${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for name in "${names[@]}"; do
  for mode in plain cusafe; do
    if [ ! -x "$bundle/$name.$mode" ]; then
      echo "$name.$mode: not in the bundle; skipped"
      continue
    fi
    preload=
    [ "$mode" = cusafe ] && preload="$bundle/libcusafe_rt.so"
    (cd "$bundle" && LD_PRELOAD=$preload timeout "$limit" "$ncu" --target-processes all \
      -s "$skip" -c "$count" "${sections[@]}" --csv --page details "./$name.$mode" --quick) \
      > "$out/$name.$mode.csv" 2> "$out/$name.$mode.err"
    rc=$?
    printf '%s\t%s\t%s\n' "$name" "$mode" "$rc" >> "$out/runs.tsv"
    echo "$name $mode rc=$rc"
  done
done
echo "done: $out (tables: scripts/gpu/ncu-summary.py $out)"
