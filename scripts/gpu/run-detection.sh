#!/usr/bin/env bash
# The GPU run of the detection work (wild and null pointers, absurd allocations, API
# errors, the device heap, host ASan beside cusafe), in one device call:
#   1. the security-suite bundle SUITE (run-examples.sh: plain, cusafe, preload and
#      compute-sanitizer memcheck for every program in it);
#   2. a perf A/B bundle PERF (run-perf.sh, timed builds interleaved): `cusafe` is the
#      build before the change, `noopt` holds the build after it (see the results README);
#   3. the -fsanitize=address bundle ASAN when present (its own run-asan.sh).
# Also records the GPU's addressing mode (nvidia-smi: HMM, ATS or none), which decides
# whether a pageable host pointer passed to a kernel is reachable or wild.
# Usage: run-detection.sh SUITE PERF ASAN OUT   (ASAN may be "-")
set -uo pipefail
suite=$(cd "${1:?suite bundle}" && pwd)
perf=$(cd "${2:?perf bundle}" && pwd)
asan=${3:?asan bundle or -}
out=${4:?out dir}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nvidia-smi --query-gpu=name,driver_version,memory.total,addressing_mode --format=csv > "$out/gpu.csv" 2>&1
nvidia-smi -q | grep -i -E "addressing|hmm|ats" > "$out/addressing.txt" 2>&1
"$suite/run-examples.sh" "$suite" "$out/suite" > "$out/suite.log" 2>&1
echo "suite: rc=$?"
if [ "$asan" != - ] && [ -x "$asan/run-asan.sh" ]; then
  "$asan/run-asan.sh" "$asan" "$out/asan" > "$out/asan.log" 2>&1
  echo "asan: rc=$?"
fi
PERF_REPS=${PERF_REPS:-2} PERF_MODES='plain cusafe noopt' "$perf/run-perf.sh" "$perf" "$out/perf" > "$out/perf.log" 2>&1
echo "perf: rc=$?"
