#!/usr/bin/env bash
# How much of a kernel's register count the cold path costs: compiles each .cu with
# cusafe-clang++ to PTX, then runs ptxas -v three times: as built, with
# __cusafe_report's body emptied, and with __cusafe_slow's and __cusafe_report's
# bodies emptied (the call sites stay). An experiment on the PTX text, not a build
# mode. Usage: scripts/cold-path-registers.sh FILE.cu...  (markdown table on stdout)
set -euo pipefail
source "$(dirname "$0")/env.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
empty() { # in out function...: replaces the named .func definitions' bodies
  python3 - "$@" <<'PY'
import sys
src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
s = open(src).read()
for name in names:
    head = s.rfind(name + "(")  # the definition comes after the declaration
    ret = s.rfind(".func", 0, head)
    returns = "func_retval0" in s[ret:head]
    i = s.index("{", head)
    depth, k = 0, i
    while True:
        depth += {"{": 1, "}": -1}.get(s[k], 0)
        if depth == 0:
            break
        k += 1
    body = ("{\n.reg .b32 %cz;\nmov.u32 %cz, 0;\nst.param.b32 [func_retval0+0], %cz;\nret;\n}"
            if returns else "{\nret;\n}")
    s = s[:i] + body + s[k + 1:]
open(dst, "w").write(s)
PY
}
regs() { "$CUSAFE_CUDA/bin/ptxas" -arch=sm_90 -v "$1" -o "$tmp/k.cubin" 2>&1 |
  awk '/Compiling entry function/ { k = $7; gsub(/[\047]/, "", k) } /Used [0-9]+ registers/ { print k, $5 }'; }
echo "| program | kernel | registers: as built | report emptied | slow and report emptied |"
echo "|---|---|---|---|---|"
for src in "$@"; do
  (cd "$CUSAFE_ROOT" && "$CUSAFE_BIN/cusafe-clang++" -O3 --cuda-device-only -S "$src" -o "$tmp/k.ptx")
  empty "$tmp/k.ptx" "$tmp/r.ptx" __cusafe_report
  empty "$tmp/k.ptx" "$tmp/sr.ptx" __cusafe_slow __cusafe_report
  join <(regs "$tmp/k.ptx" | sort) <(regs "$tmp/r.ptx" | sort) | join - <(regs "$tmp/sr.ptx" | sort) |
    while read -r k a b c; do echo "| $(basename "$src" .cu) | $k | $a | $b | $c |"; done
done
