#!/usr/bin/env python3
"""Summarises the results of scripts/gpu/run-gen.sh (one or more result directories,
each holding BATCH.check.json, BATCH.build.json, BATCH.manifest.json and env.txt) into
gen.json and gen.md: per batch the programs, builds, kernels and checks the pass put in
(summed over levels), output differences, reports, and for planted batches the share
found at the right kind and line by space, fault and access, beside memcheck.
Usage: gen-summary.py OUT_DIR RESULT_DIR..."""
import json, os, sys
from collections import defaultdict

out, dirs = sys.argv[1], sys.argv[2:]
batches = defaultdict(list)
env = []
for d in dirs:
    if os.path.exists(f"{d}/env.txt"):
        env.append(open(f"{d}/env.txt").read().strip())
    for name in sorted(os.listdir(d)):
        if name.endswith(".check.json"):
            b = name[: -len(".check.json")]
            load = lambda kind: json.load(open(f"{d}/{b}.{kind}.json")) if os.path.exists(f"{d}/{b}.{kind}.json") else {}
            batches[b].append((load("check"), load("build"), load("manifest")))

summary = {"env": env, "batches": {}}
md = ["| batch | programs | binaries | kernels (per level) | checks (all levels) | output differences | reports | failing programs |",
      "|---|---|---|---|---|---|---|---|"]
plant_rows = []
for b, parts in sorted(batches.items()):
    s = defaultdict(int)
    kinds = defaultdict(lambda: [0, 0])
    misses, memcheck = [], defaultdict(int)
    levels = set()
    for check, build, manifest in parts:
        s["programs"] += check.get("programs", 0)
        s["binaries"] += check.get("builds", 0) + check.get("runs", 0)
        for lvl, st in build.get("stats", {}).items():
            levels.add(lvl)
            s["kernels"] += st.get("kernels", 0)
            s["checks"] += st.get("checks", 0)
            for k, v in st.items():
                s[f"pass {k}"] += v
        s["differences"] += len(check.get("differences", []))
        s["reports"] += len(check.get("reports", []))
        s["failing"] += len(check.get("failing_seeds", []))
        s["found"] += check.get("found", 0)
        s["runs"] += check.get("runs", 0)
        for k in check.get("by_kind", []):
            kinds[k["kind"]][0] += k["found"]
            kinds[k["kind"]][1] += k["runs"]
        misses += check.get("misses", [])
        mc = check.get("memcheck") or {}
        for k in ("runs", "detected", "at_line"):
            memcheck[k] += mc.get(k, 0)
    nlev = max(len(levels), 1)
    entry = dict(s)
    entry["levels"] = sorted(levels)
    if kinds:
        entry["by_kind"] = {k: {"found": f, "runs": n} for k, (f, n) in sorted(kinds.items())}
        entry["misses"] = misses
        entry["memcheck"] = dict(memcheck)
        plant_rows.append((b, s, kinds, memcheck, misses))
    else:
        md.append(f"| {b} | {s['programs']} | {s['binaries']} | {s['kernels'] // nlev} | {s['checks']} | {s['differences']} | {s['reports']} | {s['failing']} |")
    summary["batches"][b] = entry
for b, s, kinds, mc, misses in plant_rows:
    md += ["", f"### Planted bugs ({b}): {s['found']} of {s['runs']} runs found at the right kind and line ({100.0 * s['found'] / max(s['runs'], 1):.1f}%)", "",
           "| space fault access | found | runs |", "|---|---|---|"]
    md += [f"| {k} | {f} | {n} |" for k, (f, n) in sorted(kinds.items())]
    if mc.get("runs"):
        md += ["", f"compute-sanitizer memcheck on the plain build of {mc['runs']} of them: {mc['detected']} detected an error, {mc['at_line']} at the planted line."]
    if misses:
        md += ["", "Misses:", ""] + [f"- seed {m['seed']} {m['build']} ({m['space']} {m['fault']} {'write' if m['write'] else 'read'}): expected {m['expected']} at line {m['line']}, got {m['first'] or 'no report'} (exit {m['status']})" for m in misses[:40]]
if not any(entry.get("by_kind") is None for entry in summary["batches"].values()):
    md = md[2:]  # only planted batches: no table of clean ones
os.makedirs(out, exist_ok=True)
json.dump(summary, open(f"{out}/gen.json", "w"), indent=1)
open(f"{out}/gen.md", "w").write("\n".join(md) + "\n")
print("\n".join(md))
