#!/usr/bin/env python3
"""Splits a clean batch of `cusafe gen build` into GPU bundles that fit one device call.

Usage: gen-split.py BATCH OUT PARTS
  BATCH  a batch directory (manifest.json, build.json, bin/; e.g. build/gen/clean)
  OUT    where the bundles go: OUT/part1 .. OUT/partN, each with clean/ (the files of
         that part: manifest.json and build.json cut to them, their binaries hard-linked,
         the two libraries copied), bin/ (the batch's parent bin/, `cusafe` and the
         libraries), run-gen.sh and COMMIT, ready for `tar | xz` and
         `run-gen.sh partK OUTDIR` on the GPU machine.
Files are dealt out in order, PARTS nearly equal runs of them.
"""
import json
import os
import shutil
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    batch, out, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    bundle = os.path.dirname(os.path.abspath(batch))
    manifest = json.load(open(os.path.join(batch, "manifest.json")))
    build = json.load(open(os.path.join(batch, "build.json")))
    files = manifest["files"]
    per = -(-len(files) // parts)
    for k in range(parts):
        mine = files[k * per:(k + 1) * per]
        names = {f["name"] for f in mine}
        dst = os.path.join(out, f"part{k + 1}")
        clean = os.path.join(dst, "clean")
        os.makedirs(os.path.join(clean, "bin"), exist_ok=True)
        jobs = [j for j in build["jobs"] if j["file"] in names]
        with open(os.path.join(clean, "manifest.json"), "w") as f:
            json.dump(dict(manifest, files=mine), f)
        with open(os.path.join(clean, "build.json"), "w") as f:
            json.dump(dict(build, jobs=jobs), f)
        for j in jobs:
            if j["ok"] and j["output"].startswith("bin/"):
                os.link(os.path.join(batch, j["output"]), os.path.join(clean, j["output"]))
        for lib in ("libcusafe_rt.so", "libcudart.so.12"):
            shutil.copy(os.path.join(batch, "bin", lib), os.path.join(clean, "bin", lib))
        shutil.copytree(os.path.join(bundle, "bin"), os.path.join(dst, "bin"), dirs_exist_ok=True)
        for extra in ("run-gen.sh", "COMMIT"):
            if os.path.exists(os.path.join(bundle, extra)):
                shutil.copy(os.path.join(bundle, extra), dst)
        print(f"{dst}: {len(mine)} files, {len(jobs)} builds")


if __name__ == "__main__":
    main()
