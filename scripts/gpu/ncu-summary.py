#!/usr/bin/env python3
"""Turns run-ncu.sh's NAME.plain.csv and NAME.cusafe.csv into kernels.md + kernels.json:
per workload, the profiled launches of the two builds side by side (paired in launch
order), with duration, registers, achieved occupancy, IPC, DRAM throughput, warp cycles
per issued instruction and executed instructions, where ncu measured them.

Usage: ncu-summary.py OUT_DIR"""
import csv
import io
import json
import pathlib
import sys

METRICS = [
    "Duration",
    "Registers Per Thread",
    "Achieved Occupancy",
    "Executed Ipc Active",
    "DRAM Throughput",
    "Warp Cycles Per Issued Instruction",
    "Executed Instructions",
]


def launches(path):
    """[(kernel, {metric: value})] in launch order; ncu's other output lines dropped."""
    lines = [l for l in path.read_text(errors="replace").splitlines(True) if l.startswith('"')]
    by_id = {}
    for r in csv.DictReader(io.StringIO("".join(lines))):
        name = r["Kernel Name"].split("(")[0].replace("<unnamed>::", "")
        entry = by_id.setdefault(r["ID"], (name, {}))
        entry[1][r["Metric Name"]] = r["Metric Value"].replace(",", "")
    return [by_id[k] for k in sorted(by_id, key=int)]


def shown(x):
    """A metric for the table: up to two decimals, no trailing zeros ("–" if absent)."""
    return "–" if x is None else f"{x:,.2f}".rstrip("0").rstrip(".")


def number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.splitlines()[-1])
    out = pathlib.Path(sys.argv[1])
    rows = []
    for plain_csv in sorted(out.glob("*.plain.csv")):
        name = plain_csv.name[: -len(".plain.csv")]
        cusafe_csv = out / f"{name}.cusafe.csv"
        if not cusafe_csv.exists():
            continue
        for n, ((kernel, p), (_, c)) in enumerate(zip(launches(plain_csv), launches(cusafe_csv))):
            row = {"workload": name, "kernel": kernel, "launch": n}
            for m in METRICS:
                row[m] = {"plain": number(p.get(m)), "cusafe": number(c.get(m))}
            rows.append(row)
    head = ["workload", "kernel (launch)", "duration ns plain → cusafe", "ratio"] + [
        m.lower() for m in METRICS[1:]
    ]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        d = r["Duration"]
        ratio = f"{d['cusafe'] / d['plain']:.2f}x" if d["plain"] and d["cusafe"] else "–"
        cells = [r["workload"], f"{r['kernel']} ({r['launch']})"]
        cells.append(f"{d['plain']:,.0f} → {d['cusafe']:,.0f}" if d["plain"] and d["cusafe"] else "–")
        cells.append(ratio)
        for m in METRICS[1:]:
            cells.append(f"{shown(r[m]['plain'])} → {shown(r[m]['cusafe'])}")
        md.append("| " + " | ".join(cells) + " |")
    (out / "kernels.md").write_text("\n".join(md) + "\n")
    (out / "kernels.json").write_text(json.dumps({"kernels": rows}, indent=1) + "\n")
    print(f"ncu-summary: {len(rows)} launches -> {out}/kernels.md, kernels.json")


main()
