#!/usr/bin/env bash
# Runs a stress bundle made by scripts/build-stress.sh on a GPU machine (needs bash,
# coreutils, nvidia-smi and, for the memcheck run, compute-sanitizer). Runs, one after
# the other, each under `timeout`:
#   plain     ./alloc_stress.plain THREADS OPS
#   cusafe    ./alloc_stress.cusafe THREADS OPS
#   preload   LD_PRELOAD=libcusafe_rt.so ./alloc_stress.plain THREADS OPS
#   memcheck  compute-sanitizer --tool memcheck ./alloc_stress.plain (reduced size)
# The cusafe and preload runs get
#   CUSAFE_OPTIONS=detect_leaks=1:exitcode=23:json_path=OUT/cusafe.MODE.json
# (exit 23: cusafe reported something; the JSON lines are its reports, leaks included).
# A run passes when it exits 0 with its `stress:` line saying corruptions=0 and
# leaked=0, with no cusafe report, warning or note (cusafe, preload) and memcheck's
# "ERROR SUMMARY: 0 errors" (memcheck).
#
# Usage: run-stress.sh BUNDLE_DIR OUT_DIR
# Environment:
#   STRESS_THREADS, STRESS_OPS   program arguments (default 16 and 10000)
#   STRESS_MEMCHECK_ARGS         the memcheck run's arguments (default "4 500")
#   STRESS_TIMEOUT               seconds per run (default 300)
#   STRESS_MEMCHECK_TIMEOUT      seconds for the memcheck run (default 300)
#   STRESS_MODES                 which runs (default "plain cusafe preload memcheck")
#   STRESS_WATCHDOG_S            passed on: the program's no-progress limit (default 60)
# Writes OUT_DIR/env.txt, OUT_DIR/logs/MODE.txt, OUT_DIR/cusafe.MODE.json and the
# summary OUT_DIR/stress.json + OUT_DIR/stress.md. Exit 0 when every run passed, else 1.
set -uo pipefail
usage="usage: run-stress.sh BUNDLE_DIR OUT_DIR"
bundle=$(cd "${1:?$usage}" && pwd) || exit 2
out=${2:?$usage}
threads=${STRESS_THREADS:-16}
ops=${STRESS_OPS:-10000}
read -r -a mc_args <<< "${STRESS_MEMCHECK_ARGS:-4 500}"
limit=${STRESS_TIMEOUT:-300}
mc_limit=${STRESS_MEMCHECK_TIMEOUT:-300}
read -r -a modes <<< "${STRESS_MODES:-plain cusafe preload memcheck}"
for v in "$threads" "$ops" "$limit" "$mc_limit" "${mc_args[@]}"; do
  case $v in '' | *[!0-9]* | 0)
    echo "run-stress.sh: STRESS_THREADS, STRESS_OPS, STRESS_TIMEOUT, STRESS_MEMCHECK_TIMEOUT and STRESS_MEMCHECK_ARGS must be positive integers" >&2
    exit 2 ;;
  esac
done
for m in "${modes[@]}"; do
  case $m in
    plain | cusafe | preload | memcheck) ;;
    *) echo "run-stress.sh: unknown mode '$m' in STRESS_MODES; use plain, cusafe, preload, memcheck" >&2; exit 2 ;;
  esac
done
for f in alloc_stress.plain alloc_stress.cusafe libcusafe_rt.so; do
  [ -e "$bundle/$f" ] || { echo "run-stress.sh: $bundle/$f is missing; build the bundle with scripts/build-stress.sh" >&2; exit 2; }
done
mkdir -p "$out/logs" || exit 2
out=$(cd "$out" && pwd)
unset CUSAFE_OPTIONS LD_PRELOAD

cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  echo "compute-sanitizer: $("$cs" --version 2>/dev/null | tail -1)"
  echo "bundle: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
  echo "modes: ${modes[*]}; args: $threads $ops (memcheck: ${mc_args[*]}); timeout ${limit}s, memcheck ${mc_limit}s"
} > "$out/env.txt"
cat "$out/env.txt"

# jstr TEXT: TEXT as a JSON string.
jstr() {
  printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\010\013-\037' | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' | tr '\t\n' '  ')"
}
# stress_json LINE: the key=value fields of a `stress:` line as a JSON object.
stress_json() {
  local sep='' kv
  printf '{'
  for kv in ${1#stress: }; do
    case $kv in
      *=*) printf '%s"%s": %s' "$sep" "${kv%%=*}" "${kv#*=}"; sep=', ' ;;
    esac
  done
  printf '}'
}
# field LINE KEY: the value of KEY=VALUE in LINE (empty when absent).
field() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -1; }

# note TEXT: adds TEXT to $why unless it is there already.
note() { case "$why" in *"$1"*) ;; *) why="${why:+$why; }$1" ;; esac; }

rows=()
md_rows=()
failed=0
for mode in "${modes[@]}"; do
  log="$out/logs/$mode.txt"
  json="$out/cusafe.$mode.json"
  rm -f "$json"
  opts="detect_leaks=1:exitcode=23:json_path=$json"
  args=("$threads" "$ops")
  t=$limit
  case $mode in
    plain) cmd=(./alloc_stress.plain) ;;
    cusafe) cmd=(env CUSAFE_OPTIONS="$opts" ./alloc_stress.cusafe) ;;
    preload) cmd=(env CUSAFE_OPTIONS="$opts" LD_PRELOAD="$bundle/libcusafe_rt.so" ./alloc_stress.plain) ;;
    memcheck)
      cmd=("$cs" --tool memcheck --print-limit 10 ./alloc_stress.plain)
      args=("${mc_args[@]}")
      t=$mc_limit ;;
  esac
  t0=$(date +%s%N)
  (cd "$bundle" && timeout -k 10 "$t" "${cmd[@]}" "${args[@]}") > "$log" 2>&1
  rc=$?
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  wall=$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))
  line=$(grep -m1 '^stress: ' "$log" || true)
  reports=0
  kinds=''
  if [ -s "$json" ]; then
    reports=$(grep -c . "$json")
    kinds=$(grep -o '"kind":"[^"]*"' "$json" | cut -d'"' -f4 | sort | uniq -c | awk '{ printf "%s%s=%s", (NR > 1 ? "," : ""), $2, $1 }')
  fi
  messages=$(grep -c -E '^cusafe: (warning|error|note)|ERROR: cusafe|SUMMARY: cusafe' "$log" || true)
  mc_errors=''
  if [ "$mode" = memcheck ]; then
    mc_errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9][0-9]*\) error.*/\1/p' "$log" | tail -1)
  fi
  why=''
  case $rc in
    0) ;;
    124 | 137) note "timed out after ${t}s" ;;
    23) note "exit 23: cusafe reported" ;;
    *) note "exit $rc" ;;
  esac
  if grep -q '^deadlock: ' "$log"; then note "$(grep -m1 '^deadlock: ' "$log")"; fi
  if [ -z "$line" ]; then
    note "no stress line"
    bad=$(grep -m1 -E 'failed|error|ERROR' "$log" || tail -1 "$log")
    [ -z "$bad" ] || note "$(printf '%s' "$bad" | cut -c1-200)"
  else
    [ "$(field "$line" corruptions)" = 0 ] || note "corruptions=$(field "$line" corruptions)"
    [ "$(field "$line" leaked)" = 0 ] || note "leaked=$(field "$line" leaked)"
  fi
  [ "$reports" = 0 ] || note "$reports cusafe report(s): $kinds"
  [ "$messages" = 0 ] || note "$messages cusafe message line(s): $(grep -m1 -E '^cusafe: (warning|error|note)|ERROR: cusafe|SUMMARY: cusafe' "$log" | cut -c1-200)"
  if [ "$mode" = memcheck ] && [ "$mc_errors" != 0 ]; then note "memcheck errors: ${mc_errors:-no ERROR SUMMARY}"; fi
  result=pass
  [ -z "$why" ] || { result=FAIL; failed=1; }
  printf '%-9s %-5s rc=%-4s %8ss %s\n' "$mode" "$result" "$rc" "$wall" "${line:-(no stress line)}"
  [ -z "$why" ] || echo "          $why"
  stress_obj=null
  [ -z "$line" ] || stress_obj=$(stress_json "$line")
  rows+=("$(printf '{"mode": %s, "args": %s, "rc": %s, "timed_out": %s, "wall_s": %s, "result": %s, "stress": %s, "cusafe_reports": %s, "report_kinds": %s, "cusafe_messages": %s, "memcheck_errors": %s, "why": %s}' \
    "$(jstr "$mode")" "$(jstr "${args[*]}")" "$rc" "$([ "$rc" = 124 ] || [ "$rc" = 137 ] && echo true || echo false)" "$wall" \
    "$(jstr "$result")" "$stress_obj" "$reports" "$(jstr "$kinds")" "$messages" "${mc_errors:-null}" "$(jstr "$why")")")
  md_rows+=("| $mode | ${args[*]} | $rc | $wall | $(field "$line" ops_per_s) | $(field "$line" corruptions) | $(field "$line" graph_launches) | $(field "$line" async_allocs) | $(field "$line" leaked) | $reports | ${mc_errors:--} | $result${why:+: $why} |")
done

{
  printf '{"env": {'
  sep=''
  while IFS= read -r l; do
    printf '%s%s: %s' "$sep" "$(jstr "${l%%: *}")" "$(jstr "${l#*: }")"
    sep=', '
  done < "$out/env.txt"
  printf '},\n "runs": [\n  '
  sep=''
  for r in "${rows[@]}"; do
    printf '%s%s' "$sep" "$r"
    sep=$',\n  '
  done
  printf '\n ],\n "passed": %s}\n' "$([ "$failed" = 0 ] && echo true || echo false)"
} > "$out/stress.json"
{
  echo "# Runtime stress ($(cat "$bundle/COMMIT" 2>/dev/null || echo unknown))"
  echo
  sed 's/^/    /' "$out/env.txt"
  echo
  echo "| run | args | rc | wall s | ops/s | corruptions | graph launches | async allocs | leaked | cusafe reports | memcheck errors | result |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${md_rows[@]}"
} > "$out/stress.md"
echo "summary: $out/stress.json, $out/stress.md"
exit "$failed"
