#!/usr/bin/env bash
# The multi-GPU run, on a machine with 2 GPUs, from the bundle scripts/build-multigpu.sh
# made (this script sits in it). One invocation, everything under OUT:
#   facts       nvidia-smi -L, driver, topology (topo -m, P2P read/write), nvcc,
#               compute-sanitizer, python/torch/NCCL versions, CPUs -> OUT/facts.txt
#   suite       the bundle's suite programs (the multi-GPU ones and a few single-device
#               ones) plain, cusafe, plain under LD_PRELOAD and plain under
#               compute-sanitizer memcheck, with the bundle's run-examples.sh in
#               $SUITE_SHARDS shards -> OUT/suite.tgz (env.txt, runs.tsv, logs/)
#   frameworks  frameworks/ddp_allreduce.py: `ddp` (2 processes, NCCL, DDP) and `single`
#               (one process on cuda:0 and cuda:1), each plain and under `cusafe run`:
#               exit codes, stdout equal byte for byte, cusafe report lines, wall time,
#               tagged allocations -> OUT/frameworks.tgz (frameworks.tsv, logs/)
#   fuzz        `cusafe fuzz` of one target for $FUZZ_SECS s per configuration
#               CLIENTS:GPUS in $FUZZ_CONFIGS (1 client on 1 GPU, 2 on 2, 4 on 2):
#               exec/s summed over clients -> OUT/fuzz.tgz (fuzz.tsv, stats, logs)
# Each part tars its results as it ends, so a run cut short keeps the parts before.
# OUT ends with at most 6 files: facts.txt, progress.txt and the three .tgz (+ the
# caller's own log). Back here: multigpu-summary.py OUT RESULTS_DIR.
#
# Usage: run-multigpu.sh OUT [--only PART[,PART...]] [--skip PART]...
#   PART: facts, suite, frameworks, fuzz (default: all, in that order)
# Environment (defaults keep the whole run under ~8 minutes on 2 H100s):
#   SUITE_SHARDS=4  FUZZ_SECS=45  FUZZ_CONFIGS="1:1 2:2 4:2"  FUZZ_TARGET (the bundle's)
#   FUZZ_BUILD=fixed (the bug-free variant: steady exec/s; `fuzz` for the buggy one)
#   DDP_STEPS=30  WORK (scratch folder, default a new one under /tmp)
#   BUDGET_S=570: the whole run's time; a step that would not fit in what is left is
#   skipped (said in progress.txt), and timeouts are cut to what is left, so that the
#   run ends inside one 10-minute device call with every finished part packed
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
case $1 in -h|--help|--*) usage ;; esac
out=$1; shift
parts="facts suite frameworks fuzz"
want=$parts
while [ $# -gt 0 ]; do
  case $1 in
    --only) [ $# -ge 2 ] || usage; want=$(echo "$2" | tr ',' ' '); shift 2 ;;
    --skip) [ $# -ge 2 ] || usage; want=$(for p in $want; do [ "$p" = "$2" ] || echo "$p"; done); shift 2 ;;
    -h|--help) usage ;;
    *) echo "run-multigpu.sh: unknown argument $1" >&2; usage ;;
  esac
done
for p in $want; do
  case " $parts " in *" $p "*) ;; *) echo "run-multigpu.sh: unknown part $p (parts: $parts)" >&2; exit 2 ;; esac
done
has() { case " $(echo $want) " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
W=${WORK:-$(mktemp -d /tmp/multigpu.XXXXXX)}
mkdir -p "$W"
t_start=$(date +%s)
progress() { echo "[$(( $(date +%s) - t_start ))s] $*" | tee -a "$out/progress.txt"; }
budget=${BUDGET_S:-570}
left() { echo $(( budget - ($(date +%s) - t_start) )); }
# cap N: N seconds, or what is left of the budget less a margin for packing, if less.
cap() { local l; l=$(( $(left) - 15 )); [ "$l" -lt 1 ] && l=1; [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
progress "bundle $(cat "$B/COMMIT" 2>/dev/null || echo unknown), parts: $(echo $want), work in $W"
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
[ "${ngpus:-0}" -ge 2 ] || progress "warning: $ngpus GPU(s) here; the multi-GPU programs will report themselves skipped (exit 77)"

secs_between() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# Report lines of cusafe in a log (the same count as run-interpose.sh's).
reports() { grep -cE '^(==[0-9]+==)?ERROR: cusafe|^SUMMARY: cusafe|^cusafe: (error|warning|note)' "$1" || true; }

if has facts; then
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    echo "bundle: $(cat "$B/COMMIT" 2>/dev/null || echo unknown)"
    echo "kernel: $(uname -r)"
    echo "cpus: $(nproc)"
    echo "== nvidia-smi -L"; nvidia-smi -L 2>&1
    echo "== GPUs"; nvidia-smi --query-gpu=index,name,driver_version,memory.total,pci.bus_id --format=csv 2>&1
    echo "== nvidia-smi topo -m"; nvidia-smi topo -m 2>&1
    echo "== nvidia-smi topo -p2p r"; nvidia-smi topo -p2p r 2>&1
    echo "== nvidia-smi topo -p2p w"; nvidia-smi topo -p2p w 2>&1
    echo "== nvcc"; nvcc --version 2>&1 | tail -2
    echo "== compute-sanitizer"; "$cs" --version 2>&1 | tail -1
    echo "== python"
    timeout 60 python3 -c 'import sys, torch; print("python", sys.version.split()[0]); print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "-", "gpus", torch.cuda.device_count())' 2>&1
    echo "== environment"; env | grep -E '^(CUDA_|NCCL_|NVIDIA_)' | sort
  } > "$out/facts.txt"
  progress "facts: $(grep -c '^GPU ' "$out/facts.txt") GPUs"
fi

if has suite; then
  sw=$W/suite
  rm -rf "$sw"
  mkdir -p "$sw"
  shards=${SUITE_SHARDS:-4}
  # Each program's run has its own 90 s timeout inside run-examples.sh; the shards get
  # what is left of the budget.
  for k in $(seq 1 "$shards"); do
    timeout -s KILL "$(cap 300)" "$B/suite/run-examples.sh" "$B/suite" "$sw" "$k/$shards" > "$W/suite.shard$k.txt" 2>&1 &
  done
  wait
  # One shard writes runs.tsv itself; several write runs.K.tsv.
  [ "$shards" = 1 ] ||
    (head -1 "$sw/runs.1.tsv"; for k in $(seq 1 "$shards"); do tail -n +2 "$sw/runs.$k.tsv"; done) > "$sw/runs.tsv"
  cat "$W"/suite.shard*.txt > "$sw/console.txt"
  # The shards wrote env.txt at once; write it again, whole (one gpu: line per GPU, which
  # `cusafe-suite score` counts to skip programs that need more GPUs than the run had).
  {
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "host: $(hostname)"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
    echo "compute-sanitizer: $("$cs" --version 2>/dev/null | tail -1)"
    echo "bundle: $(cat "$B/suite/COMMIT" 2>/dev/null || echo unknown)"
  } > "$sw/env.txt"
  tar czf "$out/suite.tgz" -C "$W" suite
  progress "suite: $(( $(wc -l < "$sw/runs.tsv") - 1 )) runs of $(ls "$B"/suite/*.cusafe | wc -l) programs"
fi

if has frameworks; then
  fw=$W/frameworks
  rm -rf "$fw"
  mkdir -p "$fw/logs"
  tsv=$fw/frameworks.tsv
  printf 'workload\tplain_exit\tcusafe_exit\toutput_equal\treport_lines\tplain_s\tcusafe_s\tallocs_tagged\n' > "$tsv"
  export CUSAFE_RT_LIB=$B/suite/libcusafe_rt.so NCCL_NVLS_ENABLE=0
  if ! timeout 120 python3 -c 'import torch' > "$fw/logs/import.txt" 2>&1; then
    progress "frameworks: skipped: python3 cannot import torch (logs/import.txt)"
  else
    port=29517
    for wl in ddp single; do
      script=$B/frameworks/ddp_allreduce.py
      steps=${DDP_STEPS:-30}
      port=$((port + 10))
      if [ "$(cap 150)" -lt 60 ]; then
        progress "frameworks: $wl skipped: $(left) s left of the budget"
        continue
      fi
      t0=$EPOCHREALTIME
      MASTER_PORT=$port timeout "$(cap 150)" python3 "$script" "$wl" "$steps" > "$fw/logs/$wl.plain.out" 2> "$fw/logs/$wl.plain.err"
      prc=$?
      t1=$EPOCHREALTIME
      port=$((port + 1))
      MASTER_PORT=$port CUSAFE_OPTIONS=verbosity=1 timeout "$(cap 150)" "$B/fuzz/cusafe" run -- python3 "$script" "$wl" "$steps" \
        > "$fw/logs/$wl.cusafe.out" 2> "$fw/logs/$wl.cusafe.err"
      crc=$?
      t2=$EPOCHREALTIME
      same=no
      cmp -s "$fw/logs/$wl.plain.out" "$fw/logs/$wl.cusafe.out" && same=yes
      # One "allocs: N" per process that allocated (the DDP ranks each print theirs).
      allocs=$(grep -oE 'allocs: [0-9]+' "$fw/logs/$wl.cusafe.err" | awk '{s += $2} END {print s + 0}')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$prc" "$crc" "$same" "$(reports "$fw/logs/$wl.cusafe.err")" \
        "$(secs_between "$t0" "$t1")" "$(secs_between "$t1" "$t2")" "$allocs" >> "$tsv"
      progress "frameworks: $(tail -1 "$tsv" | tr '\t' ' ')"
    done
  fi
  tar czf "$out/frameworks.tgz" -C "$W" frameworks
fi

if has fuzz; then
  fz=$W/fuzz
  rm -rf "$fz"
  mkdir -p "$fz"
  fb=$B/fuzz
  t=${FUZZ_TARGET:-$(cd "$fb" && ls -- *.fuzz | head -1 | sed 's/\.fuzz$//')}
  build=${FUZZ_BUILD:-fixed}
  secs=${FUZZ_SECS:-45}
  dict=()
  [ -f "$fb/$t/dict.txt" ] && dict=(-x "$fb/$t/dict.txt")
  tsv=$fz/fuzz.tsv
  printf 'target\tbuild\tclients\tgpus\tseconds\texecs_per_s\texecs\tper_client_execs_per_s\tcorpus\tunique_crashes\texit\n' > "$tsv"
  k=0
  for cfg in ${FUZZ_CONFIGS:-1:1 2:2 4:2}; do
    k=$((k + 1))
    c=${cfg%%:*}
    g=${cfg#*:}
    d=$fz/$t.$build.c$c.g$g
    rm -rf "$d"
    if [ "$(left)" -lt $((secs + 45)) ]; then
      progress "fuzz: $c clients on $g GPUs skipped: $(left) s left of the budget"
      continue
    fi
    envs=()
    args=()
    if [ "$c" -gt 1 ]; then
      args=(--clients "$c" --gpus "$g" --broker-port $((1337 + 10 * k)))
    else
      envs=(CUDA_VISIBLE_DEVICES=0) # one client: the runtime's device only
    fi
    # SIGINT ends the campaign with its final stats; SIGKILL 15 s later if it still runs.
    (cd "$fb" && env "${envs[@]}" timeout -s INT -k 15 $((secs + 30)) ./cusafe fuzz -q --stats-every 5 "${args[@]}" "${dict[@]}" \
      -i "$t/seeds" -o "$d" -V "$secs" -- "./$t.$build") > "$d.log" 2>&1
    rc=$?
    row=$(python3 - "$d" <<'EOF'
import glob, json, os, sys
d = sys.argv[1]
files = sorted(glob.glob(os.path.join(d, "stats-*.json"))) or glob.glob(os.path.join(d, "stats.json"))
stats = []
for f in files:
    try:
        with open(f) as fh:
            stats.append(json.load(fh))
    except (OSError, ValueError):
        pass
if not stats:
    print("NA\tNA\tNA\tNA\tNA\tNA")
else:
    eps = [s.get("execs_per_s", 0) for s in stats]
    print("\t".join(str(x) for x in [
        max(s.get("elapsed_s", 0) for s in stats),
        round(sum(eps), 1),
        sum(s.get("execs", 0) for s in stats),
        ",".join(f"{e:.1f}" for e in eps),
        max(s.get("corpus", 0) for s in stats),
        max(s.get("unique_crashes", 0) for s in stats),
    ]))
EOF
)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$build" "$c" "$g" "$row" "$rc" >> "$tsv"
    progress "fuzz: $(tail -1 "$tsv" | tr '\t' ' ')"
  done
  # Stats, logs and crash keys; not corpora or work files.
  tar czf "$out/fuzz.tgz" -C "$W" --exclude='*/queue' --exclude='*/work' fuzz
fi
progress "done"
