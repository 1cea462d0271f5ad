#!/usr/bin/env python3
"""Held-out launches: turn a census's sheets into manifests `sector-validate` runs on a GPU.

    python3 scripts/census.py --jsonl census.jsonl ROOTS...      # from the collection's folder
    python3 scripts/heldout.py census.jsonl                      # writes NAME.toml beside NAME.cu
    sector-validate profile --examples DIR --output OUT          # per folder, on the GPU machine

For every kernel the census counted from its source, one case with the launch the sheet
resolved (grid, block, scalar and template arguments, dynamic shared memory), the census's
`--fill`s and the translation unit's `-D`s: the validator compiles the same file, sizes and fills
its buffers as the analysis assumed, and sets every Nsight Compute counter beside the prediction.
This measures the tool on code nobody tuned it to. The manifests are written into the collection's
own folders (never commit fetched code); a folder that already has `NAME.toml` is left alone, as
is a unit that needs `-I` folders beyond its own (the validator passes only the file's folder).
Prints the folders written, one per line.
"""
import argparse
import json
import os
import re
import shlex
import sys
from collections import defaultdict


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, dict):  # an ArgValue written as {"Int": 5} or similar
        (inner,) = v.values()
        return toml_value(inner)
    s = str(v)
    if re.fullmatch(r"-?\d+", s):
        return s
    return json.dumps(s)


def toml_key(k):
    return k if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k) else json.dumps(k)


def case_of(row, n):
    launch = row.get("launch") or {}
    argv = shlex.split(row.get("command", ""))
    defines, incs = {}, []
    for i, a in enumerate(argv):
        if a == "-D" and i + 1 < len(argv):
            name, _, val = argv[i + 1].partition("=")
            defines[name] = val or "1"
        elif a == "-I" and i + 1 < len(argv):
            incs.append(os.path.normpath(argv[i + 1]))
    folder = os.path.normpath(os.path.dirname(row["file"]) or ".")
    if any(d != folder for d in incs):
        return None, "needs -I " + " ".join(d for d in incs if d != folder)
    prog = row["file"].split(os.sep)[1] if os.sep in row["file"] else "x"
    kname = re.sub(r"\W+", "_", row["kernel"]).strip("_")
    lines = ["[[case]]", f'name = "{re.sub(r"[^A-Za-z0-9_]", "_", prog)}__{kname}_{n}"',
             f"kernel = {json.dumps(row['kernel'])}",
             'grid = "{}"'.format(",".join(str(x) for x in launch["grid"])),
             'block = "{}"'.format(",".join(str(x) for x in launch["block"]))]
    args = dict(launch.get("args") or {})
    args.update(launch.get("template_args") or {})
    if args:
        lines.append("args = { " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in args.items()) + " }")
    if row.get("fills"):
        lines.append("fills = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in row["fills"].items()) + " }")
    if defines:
        lines.append("defines = { " + ", ".join(f"{k} = {toml_value(v)}" for k, v in defines.items()) + " }")
    if launch.get("shared_bytes"):
        lines.append(f"shared_bytes = {launch['shared_bytes']}")
    lines.append(f"why = {json.dumps('held-out: the census launch (' + ('the file own launch' if row.get('launch_site') else 'guessed sizes') + ')')}")
    return "\n".join(lines) + "\n", None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("jsonl")
    ap.add_argument("--max-threads", type=int, default=1 << 26, help="skip launches with more threads (profiling time)")
    a = ap.parse_args()
    by_file = defaultdict(list)
    skipped = []
    with open(a.jsonl) as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("result") != "sheet" or r.get("via") != "source" or not r.get("launch"):
                continue
            g, b = r["launch"]["grid"], r["launch"]["block"]
            if g[0] * g[1] * g[2] * b[0] * b[1] * b[2] > a.max_threads:
                skipped.append((r["file"], r["kernel"], "launch too large"))
                continue
            by_file[r["file"]].append(r)
    for f, rows in sorted(by_file.items()):
        stem = os.path.splitext(f)[0]
        if os.path.exists(stem + ".toml"):
            skipped.append((f, "*", "has a manifest already"))
            continue
        cases = []
        for n, r in enumerate(rows):
            c, why = case_of(r, n)
            if c is None:
                skipped.append((f, r["kernel"], why))
            else:
                cases.append(c)
        if cases:
            with open(stem + ".toml", "w") as out:
                out.write("\n".join(cases))
            print(os.path.dirname(f) or ".")
    for f, k, why in skipped:
        print(f"skipped {f} {k}: {why}", file=sys.stderr)


if __name__ == "__main__":
    main()
