#!/usr/bin/env python3
"""Summarises scripts/compile-time.sh's TSV: per file the median CPU seconds plain and
instrumented and their ratio; the sums of the medians and their ratio; the files with
the largest ratios. Usage: compile-time-summary.py RUN.tsv OUT_STEM (writes .md, .json)."""
import json
import statistics
import sys
from collections import defaultdict

tsv, stem = sys.argv[1], sys.argv[2]
times = defaultdict(list)
with open(tsv) as f:
    next(f)
    for line in f:
        path, mode, _rep, cpu, _wall = line.rstrip("\n").split("\t")
        times[(path, mode)].append(float(cpu))
files = sorted({p for p, _ in times})
rows = []
for p in files:
    plain = statistics.median(times[(p, "plain")])
    cusafe = statistics.median(times[(p, "cusafe")])
    rows.append({"file": p, "plain_cpu_s": plain, "cusafe_cpu_s": cusafe,
                 "ratio": cusafe / plain})
total_plain = sum(r["plain_cpu_s"] for r in rows)
total_cusafe = sum(r["cusafe_cpu_s"] for r in rows)
summary = {
    "files": len(rows),
    "reps": max(len(v) for v in times.values()),
    "plain_cpu_s": round(total_plain, 2),
    "cusafe_cpu_s": round(total_cusafe, 2),
    "ratio": round(total_cusafe / total_plain, 3),
    "max": max(rows, key=lambda r: r["ratio"]),
}
with open(stem + ".json", "w") as f:
    json.dump({"summary": summary, "rows": rows}, f, indent=1)
top = sorted(rows, key=lambda r: -r["ratio"])[:10]
with open(stem + ".md", "w") as f:
    f.write(f"{summary['files']} files, -O2 -c (host and device code), median CPU time of "
            f"{summary['reps']} compiles each:\n\n")
    f.write("| | plain | instrumented | ratio |\n|---|---|---|---|\n")
    f.write(f"| all files (sum of medians) | {total_plain:.1f} s | {total_cusafe:.1f} s | "
            f"**{summary['ratio']:.3f}x** |\n")
    for r in top:
        f.write(f"| {r['file']} | {r['plain_cpu_s']:.2f} s | {r['cusafe_cpu_s']:.2f} s | "
                f"{r['ratio']:.3f}x |\n")
    f.write("\n(The ten files with the largest ratios; every file is in the JSON.)\n")
print(f"compile time: {summary['files']} files, plain {total_plain:.1f} s, "
      f"instrumented {total_cusafe:.1f} s CPU, ratio {summary['ratio']:.3f}x")
