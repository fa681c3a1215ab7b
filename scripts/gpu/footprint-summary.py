#!/usr/bin/env python3
"""Device memory per allocation, plain vs cusafe, from alloc-bench.sh's output (the
"plain   alloc_footprint ..." and "cusafe  alloc_footprint ..." lines), against the target
extra <= max(256 B, size / 64) per allocation: the marginal cost of N more allocations
once N are live (alloc_footprint's bytes_per_alloc), with the average over all 2N beside
it; and the runtime's fixed memory per process (the "alloc_footprint fixed" lines).
Usage: footprint-summary.py ALLOC_BENCH_OUTPUT OUT_STEM (writes OUT_STEM.md, .json)."""
import json
import re
import sys

src, stem = sys.argv[1], sys.argv[2]
per = {}
fixed = {}
for line in open(src):
    m = re.match(r"(plain|cusafe)\s+alloc_footprint fixed used_after_init=(\d+)", line)
    if m:
        fixed.setdefault(m[1], []).append(int(m[2]))
    m = re.match(r"(plain|cusafe)\s+alloc_footprint size=(\d+) count=(\d+) bytes_per_alloc=([\d.]+)"
                 r".* average_bytes_per_alloc=([\d.]+)", line)
    if m:
        per.setdefault(int(m[2]), {})[m[1]] = (float(m[4]), int(m[3]), float(m[5]))
rows = []
for size in sorted(per):
    if set(per[size]) != {"plain", "cusafe"}:
        continue
    plain, count, plain_avg = per[size]["plain"]
    cusafe, _, cusafe_avg = per[size]["cusafe"]
    extra = cusafe - plain
    target = max(256.0, size / 64)
    rows.append({"size": size, "count": count, "plain_bytes": plain, "cusafe_bytes": cusafe,
                 "extra_bytes": extra, "target_extra_bytes": target, "met": extra <= target,
                 "plain_average_bytes": plain_avg, "cusafe_average_bytes": cusafe_avg})


def human(n):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            q, r = divmod(n, k)
            if r > k // 2:
                return f"{q + 1} {unit} - {k - r}"
            return f"{q} {unit}" + (f" + {r}" if r else "")
    return f"{n} B"


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else None


# The runtime's fixed memory: device memory in use after initialisation, preloaded minus
# plain (medians over the processes, one per size).
fixed_extra = None
if fixed.get("plain") and fixed.get("cusafe"):
    fixed_extra = median(fixed["cusafe"]) - median(fixed["plain"])
with open(stem + ".json", "w") as f:
    json.dump({"fixed_extra_bytes": fixed_extra, "sizes": rows}, f, indent=1)
with open(stem + ".md", "w") as f:
    f.write("Marginal bytes per allocation: (drop in free memory with 2N live - with N live) / N. "
            "Average: drop with 2N live / 2N.\n\n")
    f.write("| size | N | plain bytes/alloc | cusafe bytes/alloc | extra | target extra | met "
            "| plain average | cusafe average |\n")
    f.write("|---|---|---|---|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {human(r['size'])} | {r['count']} | {r['plain_bytes']:.0f} | {r['cusafe_bytes']:.0f} | "
                f"{r['extra_bytes']:+.0f} | {r['target_extra_bytes']:.0f} | {'yes' if r['met'] else 'no'} | "
                f"{r['plain_average_bytes']:.0f} | {r['cusafe_average_bytes']:.0f} |\n")
    if fixed_extra is not None:
        f.write(f"\nOnce per process, before any allocation, the runtime holds {fixed_extra / (1 << 20):.1f} MiB more "
                "than the plain build (median over the processes above).\n")
met = sum(r["met"] for r in rows)
print(f"footprint: target met at {met} of {len(rows)} sizes")
