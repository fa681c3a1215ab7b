#!/usr/bin/env python3
"""Tables from the block-format microbenchmarks' output (perf-suite/micro/phase_alias.cu
and header_lookup.cu; several runs of each may be in one file).

Usage: micro-summary.py OUTPUT STEM
Writes STEM.md and STEM.json: per pattern and format, the milliseconds per launch of each
run, the ratio to the same layout unchecked, the nanoseconds a check adds per access, and
that cost against the power-of-two check's (today's format); for phase_alias also the
time per mapping and whether a store through one phase's mapping was read through
another's. (Its unchecked rows, packed against phased, give what reading through the
aliased mappings costs.)
"""
import json
import re
import sys


def fields(line):
    return dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line))


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: micro-summary.py OUTPUT STEM")
    runs = {}  # (program, pattern, layout, check) -> [ms, ...]
    accesses, gpu, maps, alias_ok = {}, None, [], []
    for line in open(sys.argv[1]):
        prog = line.split(" ", 1)[0]
        if prog not in ("phase_alias", "header_lookup"):
            continue
        f = fields(line)
        if "gpu" in f:
            gpu = f["gpu"].strip('"')
            accesses[prog] = float(f["accesses"])
            if "alias_store_seen" in f:
                alias_ok.append(f["alias_store_seen"])
        elif "map_us_each" in f:
            maps.append((float(f["map_us_each"]), float(f["unmap_us_each"])))
        elif "pattern" in f:
            if prog == "phase_alias":
                key = (prog, f["pattern"], f["layout"], f["check"])
            else:  # header_lookup: format=none comes with a layout
                layout = f.get("layout", "pow2" if f["format"] == "pow2" else "packed")
                key = (prog, f["pattern"], layout, f["format"])
            runs.setdefault(key, []).append(float(f["ms"]))
    if not runs:
        sys.exit(f"micro-summary.py: no phase_alias or header_lookup lines in {sys.argv[1]}")
    rows = []
    for (prog, pattern, layout, check), ms in runs.items():
        row = {"program": prog, "pattern": pattern, "layout": layout, "check": check, "ms": ms}
        base = runs.get((prog, pattern, layout, "none"))
        pow2 = runs.get((prog, pattern, "pow2", "pow2"))
        pow2_base = runs.get((prog, pattern, "pow2", "none"))
        if check != "none" and base:
            added = (min(ms) - min(base)) * 1e6 / accesses[prog]
            row["ratio"] = round(min(ms) / min(base), 3)
            row["added_ns"] = round(added, 5)
            if pow2 and pow2_base:
                pow2_added = (min(pow2) - min(pow2_base)) * 1e6 / accesses[prog]
                row["vs_pow2"] = round(added / pow2_added, 2)
        rows.append(row)
    out = {"gpu": gpu, "accesses": accesses, "alias_store_seen": alias_ok, "rows": rows}
    if maps:
        out["map_us_each"] = [m for m, _ in maps]
        out["unmap_us_each"] = [u for _, u in maps]
    stem = sys.argv[2]
    with open(stem + ".json", "w") as fh:
        json.dump(out, fh, indent=1)
    md = [
        "| program | pattern | layout | check | ms per launch (each run) | over the same layout unchecked | added ns per checked access | added cost / pow2's |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        md.append(
            "| {program} | {pattern} | {layout} | {check} | {ms} | {ratio} | {added} | {vs} |".format(
                program=r["program"], pattern=r["pattern"], layout=r["layout"], check=r["check"],
                ms=", ".join(f"{m:.4f}" for m in r["ms"]),
                ratio=f'{r["ratio"]:.3f}x' if "ratio" in r else "",
                added=f'{r["added_ns"]:.5f}' if "added_ns" in r else "",
                vs=f'{r["vs_pow2"]:.2f}x' if "vs_pow2" in r else ""))
    if maps:
        md.append("")
        md.append("cuMemMap + cuMemSetAccess of one 2 MiB chunk at 256 addresses: "
                  + ", ".join(f"{m:.1f}" for m, _ in maps) + " us each; cuMemUnmap: "
                  + ", ".join(f"{u:.1f}" for _, u in maps) + " us each (one figure per run).")
    md.append("")
    md.append(f"GPU: {gpu}. A store through one phase's mapping read through another's: "
              + (", ".join(alias_ok) or "not run") + ".")
    with open(stem + ".md", "w") as fh:
        fh.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
