#!/usr/bin/env bash
# Runs a perf bundle made by scripts/build-perf.sh on a GPU machine (needs only bash,
# coreutils, nvidia-smi and compute-sanitizer). For each workload: the plain, cusafe and
# noopt builds REPS times, interleaved (plain, cusafe, noopt, plain, ...) so that clock
# and thermal drift hit all three alike; then the plain build once under
# compute-sanitizer memcheck with --quick (one timed pass). Runs are sequential: nothing
# else shares the GPU while a workload is timed.
# Mode nvcc is the user's usual build: each workload's source (the bundle's src/) built
# here with the machine's nvcc -O3 for its own GPU (NAME.nvcc, beside the others, before
# anything is timed; the build logs go to OUT_DIR/logs/NAME.nvcc.build.txt).
#
# Usage: run-perf.sh BUNDLE_DIR OUT_DIR
# Environment:
#   PERF_REPS               runs per build and workload (default 3)
#   PERF_TIMEOUT            seconds per run (default 180)
#   PERF_MEMCHECK_TIMEOUT   seconds for the memcheck run (default 300)
#   PERF_ONLY               workloads to run (e.g. "gemm bfs"; default: the bundle's WORKLOADS)
#   PERF_MODES              which runs (default "plain cusafe noopt memcheck"; nvcc and
#                           preload, the plain build with LD_PRELOAD=libcusafe_rt.so,
#                           are opt-in): e.g. the timed builds in one device call and
#                           memcheck in another
#   NVCC                    the nvcc for mode nvcc (default: nvcc on PATH, else
#                           /usr/local/cuda/bin/nvcc)
# Writes OUT_DIR/env.txt, OUT_DIR/runs.tsv (one row per run: workload mode rep rc wall_s
# and the PERF line's fields, empty when absent) and OUT_DIR/logs/NAME.MODE.REP.txt.
# Make the table with `cusafe-perf table --run OUT_DIR --build BUNDLE_DIR`.
set -uo pipefail
usage="usage: run-perf.sh BUNDLE_DIR OUT_DIR"
bundle=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
reps=${PERF_REPS:-3}
read -r -a modes <<< "${PERF_MODES:-plain cusafe noopt memcheck}"
timed=()
memcheck=0
for m in "${modes[@]}"; do
  case $m in
    plain | cusafe | noopt | nvcc | preload) timed+=("$m") ;;
    memcheck) memcheck=1 ;;
    *) echo "run-perf.sh: unknown mode '$m' in PERF_MODES; use plain, cusafe, noopt, nvcc, preload, memcheck" >&2; exit 2 ;;
  esac
done
limit=${PERF_TIMEOUT:-180}
# nvcc's defaults otherwise (fused multiply-add across statements included): the build a
# user of nvcc ships. -arch=native: the GPU of this machine.
NVCC_FLAGS="-O3 -arch=native -std=c++17 -Xptxas -v"
memcheck_limit=${PERF_MEMCHECK_TIMEOUT:-300}
for v in "$reps" "$limit" "$memcheck_limit"; do
  case $v in '' | *[!0-9]* | 0)
    echo "run-perf.sh: PERF_REPS, PERF_TIMEOUT and PERF_MEMCHECK_TIMEOUT must be positive integers" >&2
    exit 2 ;;
  esac
done
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)

if [ -n "${PERF_ONLY:-}" ]; then
  read -r -a names <<< "$PERF_ONLY"
elif [ -f "$bundle/WORKLOADS" ]; then
  read -r -d '' -a names < "$bundle/WORKLOADS" # one name a line; blank lines drop out
else
  names=()
  for bin in "$bundle"/*.plain; do
    [ -e "$bin" ] && names+=("$(basename "$bin" .plain)")
  done
fi
if [ ${#names[@]} = 0 ]; then
  echo "run-perf.sh: no workloads in $bundle; build the bundle with scripts/build-perf.sh" >&2
  exit 2
fi

cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
nvcc_mode=0
for m in "${timed[@]}"; do [ "$m" = nvcc ] && nvcc_mode=1; done
if [ "$nvcc_mode" = 1 ]; then
  if [ ! -x "$nvcc" ]; then
    echo "run-perf.sh: mode nvcc needs nvcc ($nvcc is missing); set NVCC or drop nvcc from PERF_MODES" >&2
    exit 2
  fi
  if [ ! -f "$bundle/src/perf-suite/harness.h" ]; then
    echo "run-perf.sh: mode nvcc needs the workloads' sources in $bundle/src; rebuild the bundle with scripts/build-perf.sh" >&2
    exit 2
  fi
fi
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  echo "compute-sanitizer: $("$cs" --version 2>/dev/null | tail -1)"
  echo "bundle: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
  echo "modes: ${modes[*]}; reps: $reps (timed builds interleaved); timeout ${limit}s, memcheck ${memcheck_limit}s"
  [ "$nvcc_mode" = 1 ] && echo "nvcc: $("$nvcc" --version | tail -2 | head -1) ($NVCC_FLAGS)"
} > "$out/env.txt"
cat "$out/env.txt"

# The nvcc builds, in parallel (one per core), before anything is timed. A workload
# whose build fails has no NAME.nvcc: its nvcc runs are skipped (the table: not run).
if [ "$nvcc_mode" = 1 ]; then
  printf '%s\n' "${names[@]}" | xargs -P "$(nproc)" -I{} sh -c \
    'cd "$1/src/perf-suite/workloads" && "$2" $3 {}.cu -o "$1/{}.nvcc" > "$4/logs/{}.nvcc.build.txt" 2>&1 \
       || echo "run-perf.sh: nvcc build of {} failed (see logs/{}.nvcc.build.txt)"' \
    sh "$bundle" "$nvcc" "$NVCC_FLAGS" "$out"
fi

fields=(iters kernel_ms per_iter_ms verified checksum peak_mem_mib metric value)
tsv="$out/runs.tsv"
{
  printf 'workload\tmode\trep\trc\twall_s'
  printf '\t%s' "${fields[@]}"
  printf '\n'
} > "$tsv"

# field LINE KEY: the value of KEY=VALUE in LINE (empty when absent).
field() {
  local f parts
  read -r -a parts <<< "$1"
  for f in "${parts[@]}"; do
    case $f in "$2="*) printf '%s' "${f#*=}"; return ;; esac
  done
}

# run NAME MODE REP TIMEOUT CMD...: runs CMD in the bundle, logs it, adds its row.
run() {
  local name=$1 mode=$2 rep=$3 secs=$4
  shift 4
  local log="$out/logs/$name.$mode.$rep.txt" t0 ms rc line key row
  t0=$(date +%s%N)
  (cd "$bundle" && timeout "$secs" "$@") > "$log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  line=$(grep -a '^PERF ' "$log" | tail -1)
  row=$(printf '%s\t%s\t%s\t%s\t%d.%03d' "$name" "$mode" "$rep" "$rc" $((ms / 1000)) $((ms % 1000)))
  for key in "${fields[@]}"; do
    row+=$'\t'$(field "$line" "$key")
  done
  printf '%s\n' "$row" >> "$tsv"
  printf '%-16s %-8s rep %s/%s rc=%-3s wall %d.%03ds per_iter_ms=%s%s\n' "$name" "$mode" "$rep" \
    "$([ "$mode" = memcheck ] && echo 1 || echo "$reps")" "$rc" $((ms / 1000)) $((ms % 1000)) \
    "$(field "$line" per_iter_ms)" "$([ "$rc" = 124 ] && echo " (timed out after ${secs}s)")"
}

i=0
for name in "${names[@]}"; do
  i=$((i + 1))
  echo "== $name ($i/${#names[@]})"
  for rep in $(seq 1 "$reps"); do
    for mode in "${timed[@]}"; do
      if [ "$mode" = preload ] && [ -x "$bundle/$name.plain" ]; then
        run "$name" preload "$rep" "$limit" env LD_PRELOAD="$bundle/libcusafe_rt.so" "./$name.plain"
      elif [ -x "$bundle/$name.$mode" ]; then
        run "$name" "$mode" "$rep" "$limit" "./$name.$mode"
      else
        echo "$name.$mode: not in the bundle; skipped"
      fi
    done
  done
  if [ "$memcheck" = 1 ] && [ -x "$bundle/$name.plain" ]; then
    run "$name" memcheck 1 "$memcheck_limit" "$cs" --tool memcheck --print-limit 5 "./$name.plain" --quick
  fi
done
echo "done: $tsv"
