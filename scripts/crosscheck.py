#!/usr/bin/env python3
"""Source against SASS on a census's sheets: where both paths count a kernel under the same
launch and their global totals or shared instructions differ, one of them misses something nvcc does (or the SASS
engine misreads an instruction). No GPU needed; a CUDA toolkit is.

    python3 scripts/census.py --jsonl census.jsonl ROOTS...      # from the collection's folder
    python3 scripts/crosscheck.py census.jsonl --out cross.jsonl  # same folder

Prints one line per kernel the source path counted (SAME, DIFF with both totals, or why the
SASS path gave none) and a summary; `--out` keeps the lines as JSON.
"""
import argparse
import json
import shlex
import subprocess
import sys

GLOBAL = ("global_load", "global_store")
SHARED = ("shared_load", "shared_store")


def totals(tool, argv, via, timeout):
    try:
        r = subprocess.run([tool, *argv, "--via", via], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if r.returncode != 0:
        return "error: " + (r.stderr.strip().splitlines() or ["?"])[0][:200]
    j = json.loads(r.stdout)
    t = j["totals"]
    out = {k: [t[k]["requests"], t[k]["sectors"]] for k in GLOBAL if k in t}
    # Shared memory: instructions (wavefronts depend on the bank model, not on what nvcc does).
    out.update({k: [t[k]["requests"]] for k in SHARED if k in t})
    out["exact"] = all(i.get("exact", True) for i in j["instructions"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("jsonl")
    ap.add_argument("--tool", default="target/release/sector-estimate")
    ap.add_argument("--out")
    ap.add_argument("--timeout", type=float, default=90)
    a = ap.parse_args()
    out = open(a.out, "w") if a.out else None
    n = {"same": 0, "diff": 0, "no sass": 0}
    with open(a.jsonl) as fh:
        for line in fh:
            d = json.loads(line)
            if d.get("result") != "sheet" or d.get("via") != "source" or not d.get("command"):
                continue
            argv = shlex.split(d["command"])
            res = {via: totals(a.tool, argv, via, a.timeout) for via in ("source", "sass")}
            src, sass = res["source"], res["sass"]
            if not isinstance(src, dict) or not isinstance(sass, dict):
                verdict = "no sass"
            elif all(src.get(k) == sass.get(k) for k in GLOBAL + SHARED):
                verdict = "same"
            else:
                verdict = "diff"
            n[verdict] += 1
            rec = dict(file=d["file"], kernel=d["kernel"], verdict=verdict, **res)
            if out:
                out.write(json.dumps(rec) + "\n")
                out.flush()
            detail = "" if verdict == "same" else " " + json.dumps(res)[:300]
            print(f"{verdict.upper():8} {d['file']} {d['kernel']}{detail}", flush=True)
    print(f"\n{n['same']} same, {n['diff']} different, {n['no sass']} without a SASS count", file=sys.stderr)


if __name__ == "__main__":
    main()
