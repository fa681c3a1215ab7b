#!/usr/bin/env bash
# Runs a bundle made by scripts/build-asan.sh on a GPU machine: host AddressSanitizer
# and cusafe's device checks in one binary (cusafe-clang++ -fsanitize=address).
# Checks (pass or FAIL):
#   clean            ./asan_loader: exit 0, its output (sum 16.0), cusafe started (its
#                    ready line, CUSAFE_OPTIONS=verbosity=1), no report or warning from
#                    either tool
#   host-overflow    ./asan_loader --bad-input: exit != 0, ASan's heap-buffer-overflow
#                    naming the marked line (expect.tsv), no cusafe report
#   device-overflow  ./asan_device_overflow: exit != 0, cusafe's heap-buffer-overflow
#                    naming the marked line, no ASan report
# For information (they inform the defaults; no pass/fail):
#   leaks            the clean run with ASAN_OPTIONS=detect_leaks=1: what LeakSanitizer
#                    says about a CUDA program (the default is detect_leaks=0)
#   shadow-gap       the clean run with ASAN_OPTIONS=protect_shadow_gap=1: whether CUDA
#                    starts without the default protect_shadow_gap=0
# Writes env.txt, logs/CHECK.txt and summary.tsv (check, program, args, expect, rc,
# result, detail) to OUT_DIR. Exit status 0 when the three checks pass, else 1.
# Usage: run-asan.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
bundle=$(cd "${1:?usage: run-asan.sh BUNDLE_DIR OUT_DIR}" && pwd)
out=${2:?usage: run-asan.sh BUNDLE_DIR OUT_DIR}
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)

# ASan names file:line through a symbolizer: llvm-symbolizer if there is one, else
# addr2line (allow_addr2line=1 below).
sym=$(command -v llvm-symbolizer || ls /usr/lib/llvm-*/bin/llvm-symbolizer 2>/dev/null | tail -1 || true)
if [ -n "$sym" ]; then export ASAN_SYMBOLIZER_PATH=$sym; fi
a2l=$(command -v addr2line || true)
unset ASAN_OPTIONS CUSAFE_OPTIONS LD_PRELOAD
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/gpu: /'
  echo "bundle: $(cat "$bundle/COMMIT" 2>/dev/null || echo unknown)"
  echo "symbolizer: ${sym:-none} (addr2line: ${a2l:-none})"
} > "$out/env.txt"
cat "$out/env.txt"
if [ -z "$sym" ] && [ -z "$a2l" ]; then
  echo "run-asan.sh: warning: neither llvm-symbolizer nor addr2line here: ASan's reports will not name lines, so host-overflow will FAIL" >&2
fi

# expect PROGRAM COLUMN: a field of expect.tsv (4: file, 5: line).
expect() { awk -F'\t' -v p="$1" -v c="$2" '$1 == p { print $c }' "$bundle/expect.tsv"; }
loader_line=$(expect asan_loader 5)
device_line=$(expect asan_device_overflow 5)

tsv="$out/summary.tsv"
printf 'check\tprogram\targs\texpect\trc\tresult\tdetail\n' > "$tsv"
failed=0
rc=0
log=
# run CHECK ENV... -- PROGRAM ARGS...: runs in the bundle, sets rc and log.
run() {
  local check=$1
  shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  log="$out/logs/$check.txt"
  (cd "$bundle" && env "${envs[@]}" timeout 120 "$@") > "$log" 2>&1
  rc=$?
}
# has TEXT: the last log holds TEXT (fixed string).
has() { grep -q -F -- "$1" "$log"; }
# names FILE LINE: the last log names FILE:LINE (llvm-symbolizer adds ":COL", addr2line
# does not).
names() { grep -q -E -- "${1//./\\.}:$2([^0-9]|\$)" "$log"; }
# first TEXT: the last log's first line holding TEXT, tabs made spaces, cut at 200.
first() { grep -m1 -F -- "$1" "$log" | tr '\t' ' ' | cut -c1-200; }
# said: what the last log said first that looks like a problem, else its last line.
said() {
  { grep -m1 -E 'ERROR|error|failed|warning' "$log" || tail -1 "$log"; } | tr '\t' ' ' | cut -c1-200
}
# note TEXT: adds TEXT to $why unless it is there already.
note() { case "$why" in *"$1"*) ;; *) why="${why:+$why; }$1" ;; esac; }
# record CHECK PROGRAM ARGS EXPECT RESULT DETAIL
record() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$rc" "$5" "$6" >> "$tsv"
  printf '%-16s %-6s rc=%-4s %s\n' "$1" "$5" "$rc" "$6"
  if [ "$5" = FAIL ]; then failed=1; fi
}
base=allow_addr2line=1

# clean
run clean ASAN_OPTIONS=$base CUSAFE_OPTIONS=verbosity=1 -- ./asan_loader
why=
[ "$rc" = 0 ] || note "exit $rc"
has "sum of the scaled values 16.0" || note "no 'sum of the scaled values 16.0'"
has "cusafe: ready" || note "cusafe did not start"
for bad in "ERROR: AddressSanitizer" "ERROR: LeakSanitizer" "ERROR: cusafe" "cusafe: warning" "cusafe: error"; do
  if has "$bad"; then note "$(first "$bad")"; fi
done
[ -z "$why" ] || note "$(said)"
if [ -z "$why" ]; then
  record clean asan_loader "" "exit 0, no reports" pass "$(first 'cusafe: ready')"
else
  record clean asan_loader "" "exit 0, no reports" FAIL "$why"
fi

# host-overflow
run host-overflow ASAN_OPTIONS=$base -- ./asan_loader --bad-input
why=
[ "$rc" != 0 ] || note "exit 0"
has "ERROR: AddressSanitizer: heap-buffer-overflow" || note "no ASan heap-buffer-overflow"
names asan_loader.cu "$loader_line" || note "line $loader_line not named (frame: $(first '#0 '))"
if has "ERROR: cusafe"; then note "$(first 'ERROR: cusafe')"; fi
[ -z "$why" ] || note "$(said)"
if [ -z "$why" ]; then
  record host-overflow asan_loader --bad-input "ASan heap-buffer-overflow at asan_loader.cu:$loader_line" pass "$(first 'SUMMARY: AddressSanitizer')"
else
  record host-overflow asan_loader --bad-input "ASan heap-buffer-overflow at asan_loader.cu:$loader_line" FAIL "$why"
fi

# device-overflow
run device-overflow ASAN_OPTIONS=$base -- ./asan_device_overflow
why=
[ "$rc" != 0 ] || note "exit 0"
has "ERROR: cusafe: heap-buffer-overflow" || note "no cusafe heap-buffer-overflow"
names asan_device_overflow.cu "$device_line" || note "line $device_line not named"
if has "ERROR: AddressSanitizer"; then note "$(first 'ERROR: AddressSanitizer')"; fi
[ -z "$why" ] || note "$(said)"
if [ -z "$why" ]; then
  record device-overflow asan_device_overflow "" "cusafe heap-buffer-overflow at asan_device_overflow.cu:$device_line" pass "$(first 'ERROR: cusafe')"
else
  record device-overflow asan_device_overflow "" "cusafe heap-buffer-overflow at asan_device_overflow.cu:$device_line" FAIL "$why"
fi

# leaks (information)
run leaks ASAN_OPTIONS=$base:detect_leaks=1 -- ./asan_loader
if has "ERROR: LeakSanitizer"; then
  record leaks asan_loader "" "information" info "LeakSanitizer reports: $(first 'SUMMARY: AddressSanitizer')"
else
  record leaks asan_loader "" "information" info "no LeakSanitizer report$(has 'sum of the scaled values 16.0' && echo ', output as clean')"
fi

# shadow-gap (information)
run shadow-gap ASAN_OPTIONS=$base:protect_shadow_gap=1 -- ./asan_loader
if has "sum of the scaled values 16.0"; then
  record shadow-gap asan_loader "" "information" info "CUDA started with the gap protected"
else
  record shadow-gap asan_loader "" "information" info "CUDA did not start: $(said)"
fi

echo "summary: $tsv"
exit "$failed"
