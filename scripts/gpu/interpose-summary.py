#!/usr/bin/env python3
"""Turns run-interpose.sh's suite.tsv and frameworks.tsv into md + json tables.

Usage: interpose-summary.py SUITE_TSV FRAMEWORKS_TSV OUT_DIR"""
import csv
import json
import sys


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def table(rs, cols):
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rs]
    return "\n".join(out) + "\n"


suite, fw, out = rows(sys.argv[1]), rows(sys.argv[2]), sys.argv[3]
for r in suite:
    r["verdict"] = ("found" if r["found"] == r["expected"] else "MISSED") if r["expected"] != "none" \
        else ("clean" if r["found"] == "none" and r["report_lines"] == "0" else "FALSE POSITIVE")
    if r["found"] == "build-failed":
        r["verdict"] = "build failed (nvcc 13)"
by_build = {}
for r in suite:
    b = by_build.setdefault(r["build"], {"bugs": 0, "found": 0, "correct": 0, "clean": 0})
    if r["verdict"].startswith("build"):
        continue
    if r["expected"] == "none":
        b["correct"] += 1
        b["clean"] += r["verdict"] == "clean"
    else:
        b["bugs"] += 1
        b["found"] += r["verdict"] == "found"
for r in fw:
    r["wall_ratio"] = f'{float(r["cusafe_s"]) / float(r["plain_s"]):.2f}'
with open(f"{out}/suite.json", "w") as f:
    json.dump({"rows": suite, "by_build": by_build}, f, indent=1)
with open(f"{out}/frameworks.json", "w") as f:
    json.dump(fw, f, indent=1)
totals = [{"build": k, **{x: str(y) for x, y in v.items()}} for k, v in by_build.items()]
with open(f"{out}/suite.md", "w") as f:
    f.write("# Existing binaries under `cusafe run`: totals per build\n\n")
    f.write(table(totals, ["build", "bugs", "found", "correct", "clean"]))
    f.write("\n# Every run\n\n")
    f.write(table(suite, ["program", "build", "expected", "found", "verdict", "exit",
                          "report_lines", "compute_sanitizer", "output_equal"]))
with open(f"{out}/frameworks.md", "w") as f:
    f.write("# Frameworks under `cusafe run` (plain run vs cusafe run, same machine, same call)\n\n")
    f.write(table(fw, ["workload", "plain_exit", "cusafe_exit", "output_equal", "report_lines",
                       "plain_s", "cusafe_s", "wall_ratio", "allocs_tagged"]))
