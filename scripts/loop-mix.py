#!/usr/bin/env python3
"""The instruction mix of a kernel's hottest loop in SASS, to compare two builds of one
file, and an experiment on ptxas's pipe balancing, no GPU needed.

ptxas chooses between IADD3 (ALU pipe) and IMAD.IADD (FMA pipe) for a 32-bit add by
balancing the two pipes over the whole function, hot or cold: ALU work anywhere in a
kernel (a preheader's loop-range checks, cold report blocks, even code that is never
run) turns the hot loop's address adds into IMAD.IADDs, which then share the FMA pipe
with the loop's IMAD.WIDEs and FFMAs. `--inject-alu K` adds K dependent 64-bit ALU
instructions in a block no thread reaches to the kernel's PTX and shows the loop again.

Usage (after `source scripts/env.sh`; scripts/sass.sh installs nvdisasm on first use):
  scripts/loop-mix.py FILE.ptx [KERNEL] [--inject-alu K] [--emit-ptx | --sass LISTING]
                      [--ptxas PTXAS]
Prints the loop's instruction count and its opcodes, and which pipe its integer adds use;
with no KERNEL, one line for each kernel of the file that has a loop.
--emit-ptx prints the PTX it would assemble (with the injected block) and stops;
--sass reads an nvdisasm listing of FILE.ptx instead of assembling it; --ptxas assembles
with another ptxas than the toolchain's (another CUDA version's).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile


def tools(ptxas):
    """ptxas (`ptxas`, else the toolchain's) and nvdisasm, as scripts/env.sh names them."""
    cuda, nvdisasm = os.environ.get("CUSAFE_CUDA"), os.environ.get("CUSAFE_NVDISASM")
    if not cuda or not nvdisasm:
        sys.exit("loop-mix.py: CUSAFE_CUDA/CUSAFE_NVDISASM are unset; run `source scripts/env.sh` first")
    ptxas = ptxas or os.path.join(cuda, "bin", "ptxas")
    for t, fix in ((ptxas, "run scripts/setup.sh (or name another with --ptxas)"),
                   (nvdisasm, "run scripts/sass.sh once (it installs nvdisasm)")):
        if not os.access(t, os.X_OK):
            sys.exit(f"loop-mix.py: {t} is missing; {fix}")
    return ptxas, nvdisasm


def inject(ptx, kernel, k):
    """`ptx` with K dependent ALU instructions in a block of `kernel` that no thread
    reaches (behind a branch on %tid.x == 0xffffffff, which never holds)."""
    m = re.search(r"\.entry\s+" + re.escape(kernel) + r"\s*\(", ptx)
    if not m:
        sys.exit(f"loop-mix.py: no .entry {kernel} in the PTX")
    body = ptx.index("{", m.end())
    end = ptx.index("\n}\n", body)
    regs = "\n\t.reg .b64 \t%mixd<{}>;\n\t.reg .pred \t%mixp<2>;\n\t.reg .b32 \t%mixt<2>;\n".format(k + 2)
    head = "\tmov.u32 \t%mixt0, %tid.x;\n\tsetp.eq.u32 \t%mixp0, %mixt0, -1;\n\t@%mixp0 bra \t$MIX_COLD;\n$MIX_BACK:\n"
    ops = ["$MIX_COLD:", "\tcvt.u64.u32 \t%mixd0, %mixt0;"]
    for i in range(k):
        op = ("xor.b64", "max.u64", "add.s64")[i % 3]
        ops.append(f"\t{op} \t%mixd{i + 1}, %mixd{i}, {7 * i + 3};" if op != "max.u64"
                   else f"\t{op} \t%mixd{i + 1}, %mixd{i}, %mixd0;")
    ops += [f"\tsetp.eq.u64 \t%mixp1, %mixd{k}, 77;", "\t@%mixp1 trap;", "\tbra.uni \t$MIX_BACK;"]
    # The cold block goes last, after the kernel's final instruction.
    return ptx[:body + 1] + regs + head + ptx[body + 1:end] + "\n" + "\n".join(ops) + ptx[end:]


def hottest_loop(sass, kernel):
    """The instructions of `kernel`'s largest loop (from a back edge's target to the
    back edge) in nvdisasm output, in the kernel's own code: the bodies of the functions
    it calls, which ptxas places after it (from an instruction that follows an
    unconditional EXIT, BRA or RET with no label between; scripts/lib/sass-counts.awk),
    are left out."""
    m = re.search(r"\.text\." + re.escape(kernel) + r":\n(.*?)(?=\n\s*//-----|\Z)", sass, re.S)
    if not m:
        sys.exit(f"loop-mix.py: no {kernel} in the SASS")
    labels, insts, ended = {}, [], False
    for line in m.group(1).splitlines():
        lab = re.match(r"^\s*(\.L_x_\d+):", line)
        if lab:
            labels[lab.group(1)] = len(insts)
            ended = False
            continue
        ins = re.search(r"/\*[0-9a-f]+\*/\s+(.*?)\s*;", line)
        if not ins:
            continue
        if ended:
            break
        insts.append(ins.group(1))
        op = ins.group(1).split()[0]
        ended = op in ("BRA", "EXIT", "RET") or op.startswith("RET.")
    best = []
    for pos, ins in enumerate(insts):
        tgt = re.search(r"BRA\s+`\((\.L_x_\d+)\)", ins)
        if tgt and labels.get(tgt.group(1), pos + 1) <= pos:
            loop = insts[labels[tgt.group(1)]:pos + 1]
            best = max(best, loop, key=len)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ptx")
    ap.add_argument("kernel", nargs="?",
                    help="the kernel's mangled name, as in the PTX's .entry (default: all)")
    ap.add_argument("--inject-alu", type=int, default=0, metavar="K",
                    help="add K ALU instructions in a block no thread reaches first")
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--emit-ptx", action="store_true", help="print the PTX to assemble and stop")
    out.add_argument("--sass", metavar="LISTING", help="an nvdisasm listing to read instead")
    ap.add_argument("--ptxas", metavar="PTXAS", help="the ptxas to assemble with")
    a = ap.parse_args()
    if a.inject_alu < 0:
        sys.exit("loop-mix.py: --inject-alu takes a count of 0 or more")
    if a.inject_alu and not a.kernel:
        sys.exit("loop-mix.py: --inject-alu needs the KERNEL to add to")
    if a.inject_alu and a.sass:
        sys.exit("loop-mix.py: --inject-alu changes the PTX, but --sass reads a listing as it is; drop one")
    ptx = open(a.ptx).read()
    if a.inject_alu:
        ptx = inject(ptx, a.kernel, a.inject_alu)
    if a.emit_ptx:
        sys.stdout.write(ptx)
        return
    if a.sass:
        sass = open(a.sass).read()
    else:
        ptxas, nvdisasm = tools(a.ptxas)
        with tempfile.TemporaryDirectory() as d:
            src, cubin = os.path.join(d, "k.ptx"), os.path.join(d, "k.cubin")
            open(src, "w").write(ptx)
            for cmd in ([ptxas, "-arch=sm_90", src, "-o", cubin], [nvdisasm, cubin]):
                run = subprocess.run(cmd, capture_output=True, text=True)
                if run.returncode:
                    sys.exit(f"loop-mix.py: {os.path.basename(cmd[0])} failed on {a.ptx}:\n{run.stderr}")
            sass = run.stdout
    kernels = [a.kernel] if a.kernel else re.findall(r"\.entry\s+([\w$]+)\s*\(", ptx)
    for kernel in kernels:
        loop = hottest_loop(sass, kernel)
        if not loop and a.kernel:
            sys.exit(f"loop-mix.py: {kernel} has no loop")
        if not loop:
            continue
        ops = collections.Counter(re.sub(r"^@!?U?P\w+\s+", "", i).split()[0] for i in loop)
        adds_alu = ops["IADD3"] + ops["LEA"] + ops["VIADD"]
        adds_fma = ops["IMAD.IADD"]
        print(f"{kernel}: hottest loop {len(loop)} instructions; integer adds on the ALU "
              f"pipe (IADD3, LEA, VIADD) {adds_alu}, on the FMA pipe (IMAD.IADD) {adds_fma}")
        if a.kernel:
            print("  " + ", ".join(f"{n} {op}" for op, n in sorted(ops.items())))


if __name__ == "__main__":
    main()
