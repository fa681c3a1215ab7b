#!/usr/bin/env bash
# Runs a bundle made by scripts/build-badinput.sh on a GPU machine: bad input and odd
# program behaviour under cusafe (issue 19, part 5). Every case runs NAME.cusafe under
# `timeout`; a crash (signal), a hang (timeout), a panic or a missing report is a FAIL.
# Cases with plain=1 also run NAME.plain (no cusafe) and need the same CUDA codes (the
# programs' "CODE name=value" lines); the plain exit status is in the summary.
#   options-*        malformed CUSAFE_OPTIONS (bytes that are not UTF-8, a huge number, an
#                    unknown name, no '='): exit 1 and one line naming the option
#   free-null        cudaFree(NULL), cudaFreeAsync(NULL, s), cuMemFree(0),
#                    cuMemFreeAsync(0, s): success, no report (report_api_errors=1)
#   first-*          each kind of call as the process's first CUDA call, and
#                    cudaSetDevice to a missing ordinal; then the program works, tagged
#   reset-*          cudaDeviceReset mid-run: allocations and launches work again,
#                    tagged; a device report after the reset is delivered; a pre-reset
#                    pointer is reported; the leak check lists only post-reset blocks
#   fork-*           fork after CUDA initialisation: a quiet child prints nothing of
#                    cusafe's; a child using CUDA gets CUDA's own codes; the parent goes on
#   exit-*           exit() from another thread while a kernel runs and the main thread
#                    waits inside cudaFree: no deadlock; a report already written is
#                    printed and in the JSON file
# Writes env.txt, logs/CASE.{cusafe,plain}.txt, badinput.md and badinput.json (case,
# expected, exit_code, plain_exit_code, verdict, detail) to OUT_DIR. Exit status 0 when
# every case passes, else 1.
# Usage: run-badinput.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=$(cd "${1:?usage: run-badinput.sh BUNDLE_DIR OUT_DIR}" && pwd)
out=${2:?usage: run-badinput.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
unset CUSAFE_OPTIONS LD_PRELOAD CUDA_LAUNCH_BLOCKING
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/gpu: /'
  echo "bundle: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
} > "$out/env.txt"
cat "$out/env.txt"

# oob PROGRAM: the source file:line of PROGRAM's out-of-bounds access (oob.tsv).
oob() { awk -F'\t' -v p="$1" '$1 == p { print $2 ":" $3 }' "$bundle/oob.tsv"; }

md="$out/badinput.md"
json="$out/badinput.json"
printf '| case | expected | exit code | plain exit code | verdict | detail |\n|---|---|---|---|---|---|\n' > "$md"
printf '[\n' > "$json"
first_json=1
failed=0
rc=0
log=

# jstr TEXT: TEXT as a JSON string.
jstr() {
  printf '"%s"' "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/\t/ /g' | tr -d '\000-\037')"
}

# run LOG TIMEOUT OPTIONS PROGRAM ARGS...: runs in the bundle with CUSAFE_OPTIONS set to
# OPTIONS (unset when OPTIONS is "-"); sets rc and log.
run() {
  log=$1
  local limit=$2 opts=$3
  shift 3
  if [ "$opts" = - ]; then
    (cd "$bundle" && timeout -k 10 "$limit" "$@") > "$log" 2>&1
  else
    (cd "$bundle" && CUSAFE_OPTIONS="$opts" timeout -k 10 "$limit" "$@") > "$log" 2>&1
  fi
  rc=$?
}

# has TEXT / count TEXT: in the last log (fixed strings).
has() { grep -q -F -- "$1" "$log"; }
count() { grep -c -F -- "$1" "$log"; }

why=
# note TEXT: adds TEXT to $why.
note() { why="${why:+$why; }$1"; }
# need TEXT: the last log must hold TEXT.
need() { has "$1" || note "missing '$1'"; }
# never TEXT: the last log must not hold TEXT.
never() { ! has "$1" || note "unexpected '$1'"; }

# begin CASE EXPECT_RC EXPECTED-TEXT PROGRAM ARGS...: runs the case (and checks exit
# status, crash, hang, panic, FAIL lines, codes). The caller sets $opts (CUSAFE_OPTIONS),
# $limit (seconds, default 120) and $plain (1: also run the plain build and compare CODE
# lines) before, and runs its own need/never checks between begin and end.
begin() {
  name=$1 want_rc=$2 expected=$3
  shift 3
  why=
  plain_rc=-
  if [ "${plain:-0}" = 1 ]; then
    run "$out/logs/$name.plain.txt" "${limit:-120}" - "./$1.plain" "${@:2}"
    plain_rc=$rc
    plain_codes=$(grep '^CODE ' "$log" | sort)
  fi
  run "$out/logs/$name.cusafe.txt" "${limit:-120}" "$opts" "./$1.cusafe" "${@:2}"
  case $rc in
    124|137) note "hung: killed after ${limit:-120} s" ;;
    13[0-9]|14[0-9]|15[0-9]) note "killed by signal $((rc - 128))" ;;
  esac
  [ "$rc" = "$want_rc" ] || note "exit status $rc, expected $want_rc"
  never "panicked"
  never "Segmentation fault"
  never "RESULT FAIL"
  if [ "${plain:-0}" = 1 ]; then
    local codes
    codes=$(grep '^CODE ' "$log" | sort)
    [ "$codes" = "$plain_codes" ] || note "CUDA codes differ from the plain build's: $(echo $codes) vs $(echo $plain_codes)"
  fi
}
end() {
  local verdict=PASS
  if [ -n "$why" ]; then verdict=FAIL; failed=1; fi
  printf '%-24s %-4s rc=%s %s\n' "$name" "$verdict" "$rc" "$why"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$name" "$expected" "$rc" "$plain_rc" "$verdict" "${why:-}" >> "$md"
  [ "$first_json" = 1 ] || printf ',\n' >> "$json"
  first_json=0
  printf '  {"case": %s, "expected": %s, "exit_code": %s, "plain_exit_code": %s, "verdict": %s, "detail": %s}' \
    "$(jstr "$name")" "$(jstr "$expected")" "$rc" "$( [ "$plain_rc" = - ] && echo null || echo "$plain_rc")" \
    "$(jstr "$verdict")" "$(jstr "$why")" >> "$json"
  opts= limit= plain=
}

# ---- 1. CUSAFE_OPTIONS ----
# one_line PREFIX: the log is exactly one line, starting with PREFIX.
one_line() {
  [ "$(wc -l < "$log")" = 1 ] || note "$(wc -l < "$log") lines, expected 1"
  head -1 "$log" | grep -q -F -- "$1" || note "first line is not '$1...'"
}
opts=$(printf 'exitcode=7:log_path=/tmp/\xff\xfe')
begin options-not-utf8 1 "exit 1, one line: not valid UTF-8" free_null
one_line "cusafe: error: CUSAFE_OPTIONS: the value is not valid UTF-8"
end
opts=exitcode=99999999999999999999999
begin options-huge-number 1 "exit 1, one line naming exitcode" free_null
one_line "cusafe: error: CUSAFE_OPTIONS: bad value '99999999999999999999999' for option 'exitcode' (accepted: an integer 0..=255)"
end
opts=halt_on_eror=0
begin options-unknown-name 1 "exit 1, one line: unknown option, known ones listed" free_null
one_line "cusafe: error: CUSAFE_OPTIONS: unknown option 'halt_on_eror' (known options: halt_on_error,"
end
opts=halt_on_error
begin options-no-equals 1 "exit 1, one line: not name=value" free_null
one_line "cusafe: error: CUSAFE_OPTIONS: 'halt_on_error' is not of the form name=value"
end
opts=exitcode=
begin options-empty-value 1 "exit 1, one line naming exitcode" free_null
one_line "cusafe: error: CUSAFE_OPTIONS: bad value '' for option 'exitcode'"
end

# ---- 4. freeing null ----
opts=report_api_errors=1:detect_leaks=1 plain=1
begin free-null 0 "all succeed, no cusafe output, codes as plain" free_null
need "RESULT PASS"
never "cusafe:"
end

# ---- 5. first calls ----
for mode in malloc memcpy launch sync last set_device_bad; do
  opts=detect_leaks=1 plain=1
  begin "first-${mode//_/-}" 0 "works, then tagged; codes as plain" first_call "$mode"
  need "RESULT PASS"
  need "PASS allocations are tagged (cusafe is on)"
  never "cusafe:"
  end
done

# ---- 6. cudaDeviceReset ----
for mode in clean twice; do
  opts=detect_leaks=1 plain=1
  begin "reset-$mode" 0 "works and tagged again after the reset, no report, no leak" reset "$mode"
  need "RESULT PASS"
  need "PASS tagged again after the reset"
  never "cusafe:"
  end
done
opts="json_path=$out/logs/reset-report.json"
rm -f "$out/logs/reset-report.json"
begin reset-report 1 "heap-buffer-overflow after the reset, text and JSON" reset report
need "ERROR: cusafe: heap-buffer-overflow in kernel past_end"
need "$(oob reset)"
need "PASS tagged again after the reset"
never "FAIL the overflow after the reset was reported"
[ "$(grep -c '"kind":"heap-buffer-overflow"' "$out/logs/reset-report.json" 2>/dev/null)" = 1 ] || note "no JSON line"
end
opts=
begin reset-stale-free 1 "cudaFree of a pre-reset pointer reported (double-free)" reset stale
need "ERROR: cusafe: double-free in cudaFree"
end
opts=detect_leaks=1
begin reset-leak 1 "one leak, the post-reset buffer only" reset leak
[ "$(count "ERROR: cusafe: leak")" = 1 ] || note "$(count "ERROR: cusafe: leak") leak reports, expected 1"
never "buffer #1:"
end

# ---- 7. fork ----
opts=detect_leaks=1 plain=1
begin fork-quiet 0 "the child prints nothing of cusafe's; the parent goes on" fork quiet
need "RESULT PASS"
need "child exits"
never "cusafe:"
end
opts=detect_leaks=1:report_api_errors=0 plain=1
begin fork-cuda 0 "the child gets CUDA's own codes (as plain); the parent goes on" fork cuda
need "RESULT PASS"
need "PASS child: cudaMalloc is refused"
never "cusafe:"
end

# ---- 8. exit from another thread ----
opts=detect_leaks=1 limit=60 plain=1
begin exit-idle 0 "ends (no deadlock), leak check skipped with a note" exit_thread idle
need "exiting"
need "cusafe: leak check skipped: another thread was inside a CUDA call"
never "ERROR: cusafe:"
end
rm -f "$out/logs/exit-report.json"
opts="halt_on_error=0:json_path=$out/logs/exit-report.json" limit=60
begin exit-report 1 "ends; the kernel's report printed and in the JSON file" exit_thread report
need "exiting"
need "ERROR: cusafe:"
need "$(oob exit_thread)"
[ "$(grep -c '"where":"device"' "$out/logs/exit-report.json" 2>/dev/null)" = 1 ] || note "no complete JSON line"
end

printf '\n]\n' >> "$json"
echo
cat "$md"
echo "run-badinput.sh: logs in $out/logs, summary in $md and $json"
exit $failed
