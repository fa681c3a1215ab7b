#!/usr/bin/env python3
"""Turns the OUT folder of scripts/gpu/run-multigpu.sh into results tables.

Usage: multigpu-summary.py OUT RESULTS_DIR [--suite-bin PATH] [--raw DIR]

Reads OUT/facts.txt and unpacks OUT/suite.tgz, OUT/frameworks.tgz and OUT/fuzz.tgz (the
parts that ran) into DIR (default: a new folder under /tmp, printed), then writes
  RESULTS_DIR/suite.md, suite.json        `cusafe-suite score --ran-only` of the suite part
                                          (with the manifest: multi-GPU programs are
                                          skipped on a run with fewer GPUs)
  RESULTS_DIR/multigpu.md, multigpu.json  machine, suite totals, frameworks (plain vs
                                          cusafe run), fuzz exec/s per configuration and
                                          its scaling against 1 client on 1 GPU
Run it from the repository (it finds security-suite/ and target/release/cusafe-suite
from its own path; --suite-bin names another cusafe-suite)."""
import csv
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f, delimiter="\t"))


def table(rs, cols):
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in rs]
    return "\n".join(out) + "\n"


def facts(path):
    """The facts file as {key: value} for its `key: value` lines and {section: text}."""
    kv, sections, cur = {}, {}, None
    if not os.path.exists(path):
        return kv, sections
    with open(path) as f:
        for line in f.read().splitlines():
            if line.startswith("== "):
                cur = line[3:]
                sections[cur] = []
            elif cur is not None:
                sections[cur].append(line)
            elif ": " in line:
                k, v = line.split(": ", 1)
                kv[k] = v
    return kv, {k: "\n".join(v) for k, v in sections.items()}


def unpack(out, raw):
    got = []
    for part in ("suite", "frameworks", "fuzz"):
        tgz = os.path.join(out, f"{part}.tgz")
        if os.path.exists(tgz):
            with tarfile.open(tgz) as t:
                try:
                    t.extractall(raw, filter="data")
                except TypeError:  # Python without extraction filters
                    t.extractall(raw)
            got.append(part)
    return got


def score_suite(raw, res, suite_bin):
    run = os.path.join(raw, "suite")
    md, js = os.path.join(res, "suite.md"), os.path.join(res, "suite.json")
    cmd = [suite_bin, "score", "--ran-only",
           "--src", os.path.join(ROOT, "security-suite", "programs"),
           "--prefix", "security-suite/programs",
           "--manifest", os.path.join(ROOT, "security-suite", "manifest.toml"),
           "--run", run, "--md", md, "--json", js]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"multigpu-summary.py: {' '.join(cmd)} failed:\n{r.stderr}")
    with open(js) as f:
        return json.load(f)


def main(argv):
    if len(argv) < 3 or argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    out, res = argv[1], argv[2]
    suite_bin = os.path.join(ROOT, "target", "release", "cusafe-suite")
    if "--suite-bin" in argv:
        suite_bin = argv[argv.index("--suite-bin") + 1]
    raw = argv[argv.index("--raw") + 1] if "--raw" in argv else tempfile.mkdtemp(prefix="multigpu-raw.")
    os.makedirs(raw, exist_ok=True)
    os.makedirs(res, exist_ok=True)
    parts = unpack(out, raw)
    kv, sec = facts(os.path.join(out, "facts.txt"))
    doc = {"facts": {**kv, "gpus": [l for l in sec.get("nvidia-smi -L", "").splitlines() if l.startswith("GPU ")],
                     "topology": sec.get("nvidia-smi topo -m", ""),
                     "python": sec.get("python", "")},
           "parts": parts}
    md = ["# Multi-GPU run", ""]
    md += [f"- {k}: {kv[k]}" for k in ("date", "bundle", "cpus") if k in kv]
    md += [f"- {g}" for g in doc["facts"]["gpus"]]
    if sec.get("python"):
        md += [f"- {l}" for l in sec["python"].splitlines()]
    if sec.get("nvidia-smi topo -m"):
        md += ["", "Topology (`nvidia-smi topo -m`):", "", "```", sec["nvidia-smi topo -m"].rstrip(), "```"]

    if "suite" in parts:
        s = score_suite(raw, res, suite_bin)
        t = s["totals"]["tools"]
        doc["suite"] = {"totals": t, "rows": [
            {"program": r["expect"]["program"], "devices": (r.get("entry") or {}).get("devices", 1),
             **r["verdicts"]} for r in s["rows"]]}
        md += ["", "## Security suite: multi-GPU programs and single-device regression ([suite.md](suite.md))", ""]
        trs = []
        for tool, x in t.items():
            trs.append({"tool": tool, "bugs found": f'{x["found"]}/{x["bugs"]}',
                        "correct clean": f'{x["clean"]}/{x["correct"]}',
                        "false positives": x["false_positives"], "skipped": x.get("skipped", 0),
                        "not run": x["not_run"]})
        md.append(table(trs, ["tool", "bugs found", "correct clean", "false positives", "skipped", "not run"]))

        def cell(v):
            return v if isinstance(v, str) else f"{next(iter(v))} ({next(iter(v.values()))})"
        prs = [{"program": r["program"], "GPUs": r["devices"],
                **{tool: cell(r[tool]) for tool in t}} for r in doc["suite"]["rows"]]
        md.append(table(prs, ["program", "GPUs", *t.keys()]))

    if "frameworks" in parts:
        fw = rows(os.path.join(raw, "frameworks", "frameworks.tsv"))
        for r in fw:
            try:
                r["wall_ratio"] = f'{float(r["cusafe_s"]) / float(r["plain_s"]):.2f}'
            except (ValueError, ZeroDivisionError):
                r["wall_ratio"] = "NA"
            r["verdict"] = "pass" if (r["plain_exit"] == "0" and r["cusafe_exit"] == "0"
                                      and r["output_equal"] == "yes" and r["report_lines"] == "0") else "FAIL"
        doc["frameworks"] = fw
        md += ["", "## PyTorch on 2 GPUs under `cusafe run` (plain run vs cusafe run, same call)", "",
               "`ddp`: two processes, NCCL (NVLS off), all-reduce / broadcast / all-gather and DDP "
               "training; `single`: one process on cuda:0 and cuda:1 (moves, torch.cuda.comm, a split "
               "model, nn.DataParallel). Pass: both exit 0, stdout equal byte for byte, 0 cusafe report "
               "lines.", ""]
        md.append(table(fw, ["workload", "verdict", "plain_exit", "cusafe_exit", "output_equal", "report_lines",
                             "plain_s", "cusafe_s", "wall_ratio", "allocs_tagged"]))

    if "fuzz" in parts:
        fz = rows(os.path.join(raw, "fuzz", "fuzz.tsv"))
        base = next((r for r in fz if r["clients"] == "1" and r["gpus"] == "1"), None)
        for r in fz:
            try:
                r["scaling"] = f'{float(r["execs_per_s"]) / float(base["execs_per_s"]):.2f}x' if base else "NA"
                r["per_gpu"] = f'{float(r["execs_per_s"]) / int(r["gpus"]):.1f}'
            except (ValueError, ZeroDivisionError, TypeError):
                r["scaling"], r["per_gpu"] = "NA", "NA"
        doc["fuzz"] = fz
        md += ["", "## Fuzzing throughput by GPU count (`cusafe fuzz --clients C --gpus G`)", "",
               "exec/s summed over the clients' whole campaigns (`stats*.json`), against 1 client on 1 GPU.", ""]
        md.append(table(fz, ["target", "build", "clients", "gpus", "seconds", "execs_per_s", "per_gpu", "scaling",
                             "per_client_execs_per_s", "execs", "corpus", "unique_crashes", "exit"]))

    with open(os.path.join(res, "multigpu.md"), "w") as f:
        f.write(re.sub(r"\n{3,}", "\n\n", "\n".join(md)).rstrip() + "\n")
    with open(os.path.join(res, "multigpu.json"), "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {res}/multigpu.md and multigpu.json (parts: {', '.join(parts) or 'none'}; unpacked in {raw})")


if __name__ == "__main__":
    main(sys.argv)
