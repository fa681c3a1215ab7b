#!/usr/bin/env bash
# Runs the fuzz bundle of scripts/build-fuzz.sh on a GPU machine. Phases:
#   smoke      every target's seeds and bug inputs once (cusafe build; the coverage-only
#              build under compute-sanitizer memcheck for the bug inputs)
#   rate S     per target, S-second campaigns one after another: (a) baseline: process per
#              input, coverage-only build, memcheck on new-coverage inputs; (b) cusafe,
#              process per input; (c) cusafe persistent; (c0) persistent without device
#              edges; (cw) persistent, warp-aggregated edge stores   -> rate.tsv
#   cost N     device coverage's cost on fixed inputs: every seed of every target run N
#              times in one process (CUSAFE_FUZZ_REPEAT) by the fuzz build, the build without
#              device edges and the warp build, three interleaved repetitions -> cost.tsv
#   find S [R] R rounds (default 1), one after another, of S-second campaigns of all
#              targets at once: cusafe persistent, the baseline, and cusafe persistent
#              on the fixed variant                                -> repK/find.tsv
# Writes logs and per-campaign stats under OUT; env.txt says where and when.
# Usage: run-fuzz.sh BUNDLE OUT PHASE [SECONDS] [REPS]
set -uo pipefail
bundle=$(cd "${1:?bundle}" && pwd)
out=${2:?out}
phase=${3:?phase: smoke, rate or find}
secs=${4:-20}
reps=${5:-1}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
fz="$bundle/cusafe"
targets=$(cd "$bundle" && for f in *.fuzz; do basename "$f" .fuzz; done)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | sed 's/^/gpu: /'
  echo "cpus: $(nproc)"
  echo "compute-sanitizer: $("$cs" --version 2>/dev/null | tail -1)"
  echo "bundle: $(cat "$bundle/COMMIT")"
} > "$out/env.$phase.txt"
cat "$out/env.$phase.txt"
dict() { [ -f "$bundle/$1/dict.txt" ] && echo "-x $bundle/$1/dict.txt"; }
stat_of() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["execs_per_s"], d["execs"], d["host_edges"], d["device_edges"], d["unique_crashes"], sep="\t")' "$1" 2>/dev/null || printf 'NA\tNA\tNA\tNA\tNA\n'; }
case "$phase" in
smoke)
  for t in $targets; do
    for f in "$bundle/$t"/seeds/* "$bundle/$t"/bugs/*; do
      kind=$(basename "$(dirname "$f")")
      log="$out/smoke/$t.$kind.$(basename "$f").txt"
      mkdir -p "$out/smoke"
      (cd "$bundle" && CUSAFE_OPTIONS=halt_on_error=1 ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 timeout 60 "./$t.fuzz" "$f") > "$log" 2>&1
      rc=$?
      head=$(grep -m1 -oE 'ERROR: (cusafe|AddressSanitizer): [a-z-]+' "$log" | tr '\n' ' ')
      printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$kind" "$(basename "$f")" "$rc" "${head:-clean}" | tee -a "$out/smoke.tsv"
      if [ "$kind" = bugs ]; then
        (cd "$bundle" && ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 CUSAFE_OPTIONS=tagging=0 timeout 120 "$cs" --tool memcheck --print-limit 1 "./$t.cov" "$f") > "$log.memcheck" 2>&1
        printf '%s\tmemcheck\t%s\t%s\t%s\n' "$t" "$(basename "$f")" "$?" "$(grep -m1 -E 'Invalid|ERROR SUMMARY' "$log.memcheck")" | tee -a "$out/smoke.tsv"
      fi
    done
  done
  ;;
rate)
  mkdir -p "$out/rate"
  printf 'target\tconfig\texecs_per_s\texecs\thost_edges\tdevice_edges\tunique\n' > "$out/rate.tsv"
  for t in $targets; do
    for c in "a:--no-persistent --memcheck $cs:cov:@@" "b:--no-persistent:fuzz:@@" "c::fuzz:" "c0::nodev:" "cw::warp:"; do
      IFS=: read -r name flags build at <<< "$c"
      d="$out/rate/$t.$name"
      rm -rf "$d"
      # shellcheck disable=SC2046,SC2086
      (cd "$bundle" && timeout $((secs + 60)) "$fz" fuzz -q $flags $(dict "$t") -i "$t/seeds" -o "$d" -V "$secs" -- "./$t.$build" $at) > "$d.log" 2>&1
      printf '%s\t%s\t%s\n' "$t" "$name" "$(stat_of "$d/stats.json")" | tee -a "$out/rate.tsv"
    done
  done
  ;;
cost)
  printf 'target\tseed\trep\tbuild\truns_per_s\n' > "$out/cost.tsv"
  for t in $targets; do
    for f in "$bundle/$t"/seeds/*; do
      for rep in 1 2 3; do
        for b in fuzz nodev warp; do
          r=$(cd "$bundle" && CUSAFE_FUZZ_REPEAT="$secs" timeout 120 "./$t.$b" "$f" 2>&1 >/dev/null | sed -n 's/.*(\([0-9.]*\) runs\/s).*/\1/p')
          printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$(basename "$f")" "$rep" "$b" "${r:-NA}" | tee -a "$out/cost.tsv"
        done
      done
    done
  done
  ;;
find)
  # REPS rounds, one after another, each a run of its own in OUT/repK: every target's
  # cusafe, baseline and fixed-variant campaigns at once (18 processes; 42 at once
  # starved the GPU and most campaigns never got past their seeds).
  for k in $(seq 1 "$reps"); do
    mkdir -p "$out/rep$k/find"
    for t in $targets; do
      for c in "cusafe::fuzz:" "baseline:--no-persistent --memcheck $cs:cov:@@" "fixed::fixed:"; do
        IFS=: read -r name flags build at <<< "$c"
        d="$out/rep$k/find/$t.$name"
        rm -rf "$d"
        # A baseline's memcheck run can outlast the campaign by minutes: SIGINT ends the
        # campaign (final stats written), SIGKILL 15 s later if it still runs.
        # shellcheck disable=SC2046,SC2086
        (cd "$bundle" && timeout -s INT -k 15 $((secs + 10)) "$fz" fuzz -q --stats-every 5 $flags $(dict "$t") -i "$t/seeds" -o "$d" -V "$secs" -- "./$t.$build" $at > "$d.log" 2>&1) &
      done
    done
    wait
  done
  for k in $(seq 1 "$reps"); do
    printf 'target\tmode\texecs_per_s\texecs\thost_edges\tdevice_edges\tunique\n' > "$out/rep$k/find.tsv"
    for t in $targets; do
      for name in cusafe baseline fixed; do
        d="$out/rep$k/find/$t.$name"
        [ -d "$d" ] && printf '%s\t%s\t%s\n' "$t" "$name" "$(stat_of "$d/stats.json")" >> "$out/rep$k/find.tsv"
      done
    done
    cp "$out/env.$phase.txt" "$out/rep$k/env.find.txt"
    cat "$out/rep$k/find.tsv"
  done
  ;;
*) echo "run-fuzz.sh: unknown phase $phase (smoke, rate, find)" >&2; exit 2 ;;
esac
# What comes back: tables, stats, crash keys and reports (not inputs' work files).
(cd "$out" && tar czf "$out/$phase.tgz" --exclude='*.tgz' --exclude='*/work' --exclude='*/queue' . 2>/dev/null)
