#!/usr/bin/env python3
"""Summarises a `cusafe gen build` batch (its build.json and manifest.json) as a
markdown table and a JSON object: builds and failures per level, the programs that
fail alone with their causes, kernels and checks per level, compiler time.
Usage: gen-build-summary.py BATCH_DIR OUT_STEM   (writes OUT_STEM.md and OUT_STEM.json)
"""
import json
import sys
from collections import Counter, defaultdict

batch, stem = sys.argv[1], sys.argv[2]
build = json.load(open(f"{batch}/build.json"))
manifest = json.load(open(f"{batch}/manifest.json"))
per_file = {f["name"]: len(f["seeds"]) for f in manifest["files"]}
programs = sum(per_file.values())
levels = defaultdict(lambda: {"builds": 0, "failed_builds": 0, "programs_built": 0, "seconds": 0.0})
for j in build["jobs"]:
    lv = levels[f"O{j['opt']}"]
    lv["builds"] += 1
    lv["seconds"] += j["seconds"]
    if j["ok"]:
        lv["programs_built"] += per_file[j["file"]]
    else:
        lv["failed_builds"] += 1
failed = build.get("failed_programs", [])
alone = defaultdict(set)
for f in failed:
    alone[f"O{f['opt']}"].add(f["seed"])
causes = Counter(f["cause"] for f in failed)
summary = {
    "programs": programs,
    "files": len(per_file),
    "flavors": sorted({j["flavor"] for j in build["jobs"]}),
    "levels": {},
    "failed_programs": failed,
    "failing_seeds": sorted({f["seed"] for f in failed}),
    "causes": dict(causes),
    "compiler_seconds": round(sum(j["seconds"] for j in build["jobs"])),
}
for name in sorted(levels):
    lv = levels[name]
    st = build["stats"].get(name, {})
    summary["levels"][name] = {
        **lv,
        "seconds": round(lv["seconds"]),
        "programs_failing_alone": len(alone[name]),
        "kernels": st.get("kernels", 0),
        "checks": st.get("checks", 0),
    }
json.dump(summary, open(f"{stem}.json", "w"), indent=2)
rows = ["| level | builds | failed builds | programs failing alone | programs in builds that passed | kernels | checks | compiler s |",
        "|---|---|---|---|---|---|---|---|"]
for name, lv in summary["levels"].items():
    rows.append(f"| -{name} | {lv['builds']} | {lv['failed_builds']} | {lv['programs_failing_alone']} | "
                f"{lv['programs_built']} | {lv['kernels']} | {lv['checks']} | {lv['seconds']} |")
text = [f"# cusafe gen build: {programs} programs in {len(per_file)} files", "", *rows, ""]
if failed:
    text.append("Programs that fail alone (each program of a failing file built by itself):")
    text.append("")
    text.append("| seed | build | cause |")
    text.append("|---|---|---|")
    for f in sorted(failed, key=lambda f: (f["seed"], f["opt"])):
        text.append(f"| {f['seed']} | {f['flavor']} -O{f['opt']} | {f['cause']} |")
    text.append("")
text.append(f"Compiler time: {summary['compiler_seconds']} s in all.")
open(f"{stem}.md", "w").write("\n".join(text) + "\n")
print("\n".join(text))
