#!/usr/bin/env python3
"""Turns the output of run-fuzz.sh (rate and find phases) into the tables committed under
results/: rate.md/json (exec/s per target and configuration, ratios) and find.md/json
(time to the first report of every planted bug, cusafe against the baseline; objectives
on the fixed variants). The planted bugs are those of fuzz-targets/targets.toml (their
lines carry `cusafe-expect:` / `asan-expect:` markers).

Usage: fuzz-summary.py RUN_DIR SRC_ROOT OUT_DIR
  RUN_DIR  holds rate.tsv and rate/<target>.<config>/stats.json, and/or find/...
       fuzz-summary.py --median OUT_DIR FIND_JSON...
  the median time to first report of every planted bug over several find runs' find.json
  (a bug not found within a campaign counts as later than any find).
"""
import json, math, os, re, sys

def median(dest, files):
    runs = [json.load(open(f)) for f in files]
    rows = []
    for i, b in enumerate(runs[0]["bugs"]):
        row = {k: b[k] for k in ("target", "line", "kind", "side")}
        for tool in ("cusafe", "baseline"):
            v = sorted((r["bugs"][i][tool + "_s"] for r in runs), key=lambda x: math.inf if x is None else x)
            row[tool + "_runs"] = [r["bugs"][i][tool + "_s"] for r in runs]
            row[tool + "_found"] = sum(x is not None for x in v)
            row[tool + "_median_s"] = v[len(v) // 2]
        rows.append(row)
    os.makedirs(dest, exist_ok=True)
    json.dump(rows, open(os.path.join(dest, "find-median.json"), "w"), indent=1)
    fmt = lambda v: "not found" if v is None else f"{v}"
    with open(os.path.join(dest, "find-median.md"), "w") as f:
        f.write(f"| target | line | planted bug | side | cusafe: median s (found in) | baseline: median s (found in) |\n|---|---|---|---|---|---|\n")
        for r in rows:
            f.write(f"| {r['target']} | {r['line']} | {r['kind']} | {r['side']} | {fmt(r['cusafe_median_s'])} ({r['cusafe_found']}/{len(runs)}) | {fmt(r['baseline_median_s'])} ({r['baseline_found']}/{len(runs)}) |\n")

if sys.argv[1] == "--median":
    median(sys.argv[2], sys.argv[3:])
    sys.exit(0)

run, src, dest = sys.argv[1:4]
os.makedirs(dest, exist_ok=True)

def stats(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return None

def planted():
    """The planted bugs of the CUDA targets, from fuzz-targets/targets.toml: a bug is
    found when a finding names its line (`at`) or one of its other lines (`also_at`)."""
    import tomllib
    with open(os.path.join(src, "fuzz-targets", "targets.toml"), "rb") as f:
        doc = tomllib.load(f)
    line = lambda at: int(at.rsplit(":", 1)[1])
    bugs = {}
    for t in doc["target"]:
        if not t.get("cuda"):
            continue
        for b in t.get("bug", []):
            also = b.get("also_at", [])
            also = [also] if isinstance(also, str) else also
            bugs.setdefault(t["name"], []).append({
                "line": line(b["at"]), "lines": [line(b["at"])] + [line(x) for x in also],
                "kind": b["kind"], "side": b["side"]})
    return bugs

def key_line(key):
    m = re.search(r":(\d+)$", key)
    return int(m.group(1)) if m else 0

CONFIGS = {"a": "baseline: process per input, coverage only, memcheck on new coverage",
           "b": "cusafe, process per input",
           "c": "cusafe, persistent",
           "c0": "cusafe, persistent, no device edges",
           "cw": "cusafe, persistent, warp-aggregated edges"}

def rate():
    base = os.path.join(run, "rate")
    if not os.path.isdir(base):
        return
    rows = []
    targets = sorted({d.split(".")[0] for d in os.listdir(base) if os.path.isdir(os.path.join(base, d))})
    for t in targets:
        r = {"target": t}
        for c in CONFIGS:
            s = stats(os.path.join(base, f"{t}.{c}", "stats.json"))
            r[c] = round(s["execs_per_s"], 1) if s else None
            r[c + "_execs"] = s["execs"] if s else None
        r["c_over_a"] = round(r["c"] / r["a"], 1) if r["a"] and r["c"] else None
        r["b_over_a"] = round(r["b"] / r["a"], 1) if r["a"] and r["b"] else None
        r["coverage_cost"] = round(1 - r["c"] / r["c0"], 3) if r["c0"] and r["c"] else None
        r["warp_vs_store"] = round(r["cw"] / r["c"], 2) if r["cw"] and r["c"] else None
        rows.append(r)
    def geo(k):
        v = [r[k] for r in rows if r[k]]
        return round(math.exp(sum(math.log(x) for x in v) / len(v)), 2) if v else None
    summary = {"configs": CONFIGS, "rows": rows,
               "geomean_c_over_a": geo("c_over_a"), "geomean_b_over_a": geo("b_over_a")}
    json.dump(summary, open(os.path.join(dest, "rate.json"), "w"), indent=1)
    with open(os.path.join(dest, "rate.md"), "w") as f:
        f.write("| target | (a) baseline | (b) cusafe/process | (c) cusafe persistent | (c) no device edges | (c) warp edges | c/a | b/a | device-edge cost | warp/store |\n")
        f.write("|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            cost = f"{100 * r['coverage_cost']:.1f}%" if r["coverage_cost"] is not None else "-"
            f.write(f"| {r['target']} | {r['a']} | {r['b']} | {r['c']} | {r['c0']} | {r['cw']} | {r['c_over_a']}x | {r['b_over_a']}x | {cost} | {r['warp_vs_store']} |\n")
        f.write(f"\nexec/s over whole campaigns; geomean c/a {summary['geomean_c_over_a']}x, b/a {summary['geomean_b_over_a']}x\n")

def find():
    base = os.path.join(run, "find")
    if not os.path.isdir(base):
        return
    bugs = planted()
    rows, fixed = [], []
    for t, bl in bugs.items():
        cs = stats(os.path.join(base, f"{t}.cusafe", "stats.json")) or {"finds": []}
        bs = stats(os.path.join(base, f"{t}.baseline", "stats.json")) or {"finds": []}
        fx = stats(os.path.join(base, f"{t}.fixed", "stats.json"))
        for b in bl:
            hit = [(tm, k) for tm, k in cs["finds"] if key_line(k) in b["lines"]]
            base_hit = [(tm, k) for tm, k in bs["finds"] if key_line(k) in b["lines"]]
            rows.append({"target": t, "line": b["line"], "kind": b["kind"], "side": b["side"],
                         "cusafe_s": round(hit[0][0], 1) if hit else None,
                         "baseline_s": round(base_hit[0][0], 1) if base_hit else None})
        other = [k for _, k in cs["finds"] if key_line(k) not in {n for b in bl for n in b["lines"]}]
        fixed.append({"target": t, "fixed_objectives": fx["unique_crashes"] if fx else None,
                      "fixed_keys": [k for _, k in fx["finds"]] if fx else None,
                      "fixed_execs": fx["execs"] if fx else None,
                      "cusafe_other_keys": other,
                      "cusafe_execs": cs.get("execs"), "baseline_execs": bs.get("execs"),
                      "cusafe_execs_per_s": round(cs.get("execs_per_s", 0), 1),
                      "baseline_execs_per_s": round(bs.get("execs_per_s", 0), 1),
                      "fixed_execs_per_s": round(fx["execs_per_s"], 1) if fx else None})
    json.dump({"bugs": rows, "targets": fixed}, open(os.path.join(dest, "find.json"), "w"), indent=1)
    with open(os.path.join(dest, "find.md"), "w") as f:
        f.write("| target | line | planted bug | side | cusafe: first report (s) | baseline: first report (s) |\n|---|---|---|---|---|---|\n")
        for r in rows:
            fmt = lambda v: "not found" if v is None else f"{v}"
            f.write(f"| {r['target']} | {r['line']} | {r['kind']} | {r['side']} | {fmt(r['cusafe_s'])} | {fmt(r['baseline_s'])} |\n")
        found = sum(r["cusafe_s"] is not None for r in rows)
        bfound = sum(r["baseline_s"] is not None for r in rows)
        f.write(f"\ncusafe found {found} of {len(rows)} planted bugs, the baseline {bfound}.\n\n")
        f.write("| target | exec/s cusafe | exec/s baseline | exec/s fixed | fixed variant: executions | objectives | other keys in the buggy campaign |\n|---|---|---|---|---|---|---|\n")
        for r in fixed:
            f.write(f"| {r['target']} | {r['cusafe_execs_per_s']} | {r['baseline_execs_per_s']} | {r['fixed_execs_per_s']} | {r['fixed_execs']} | {r['fixed_objectives']} {r['fixed_keys'] or ''} | {r['cusafe_other_keys']} |\n")

def cost():
    p = os.path.join(run, "cost.tsv")
    if not os.path.isfile(p):
        return
    runs = {}
    for line in open(p).read().splitlines()[1:]:
        t, seed, rep, build, r = line.split("\t")
        if r != "NA":
            runs.setdefault(t, {}).setdefault(build, []).append(float(r))
    rows = []
    for t, b in sorted(runs.items()):
        g = {k: math.exp(sum(map(math.log, v)) / len(v)) for k, v in b.items()}
        rows.append({"target": t, "fuzz": round(g.get("fuzz", 0), 1), "nodev": round(g.get("nodev", 0), 1),
                     "warp": round(g.get("warp", 0), 1),
                     "cost": round(1 - g["fuzz"] / g["nodev"], 3) if "fuzz" in g and "nodev" in g else None,
                     "warp_cost": round(1 - g["warp"] / g["nodev"], 3) if "warp" in g and "nodev" in g else None})
    json.dump(rows, open(os.path.join(dest, "cost.json"), "w"), indent=1)
    with open(os.path.join(dest, "cost.md"), "w") as f:
        f.write("| target | no device edges (runs/s) | byte store per edge | warp leader stores | drop: store | drop: warp |\n|---|---|---|---|---|---|\n")
        for r in rows:
            pc = lambda v: "-" if v is None else f"{100 * v:.1f}%"
            f.write(f"| {r['target']} | {r['nodev']} | {r['fuzz']} | {r['warp']} | {pc(r['cost'])} | {pc(r['warp_cost'])} |\n")
        f.write("\nruns/s: geomean over the seeds and three interleaved repetitions of one process running one input many times (the persistent loop's per-input work: parse, copies, kernels, device sync, coverage hand-off)\n")

rate()
cost()
find()
