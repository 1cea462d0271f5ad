#!/usr/bin/env python3
"""Cache-model accuracy against the H200's counters, without a GPU.

Rebuilds the predictions with the current analyzer (`sector-validate compare` over the raw
Nsight Compute files of the last validation run) and prints, for L2 reads from L1 and DRAM reads
and writes, how many cases are within 10% and the distribution of errors; `--cases` lists every
case beyond 10%. Usage:

    scripts/boundary-accuracy.py [--report report.json] [--cases] [--filter SUBSTR] [--table]

--table prints the README's table: per class of example (by name: cpp_, gpu_, reuse_, the rest
C-style), cases whose counter measured 0 left out, bins of |error|.

Without --report it runs `target/release/sector-validate compare --raw validate/results/raw`
(build it first: cargo build --release -p sector-validate). --extra-raw DIR (repeatable) compares
another run's raw folder too and adds its cases not in the first (the product variants of
issue 26: --extra-raw validate/results/products/raw).
"""
import argparse, json, os, subprocess, sys, tempfile

KEYS = [("l2_reads", "L2 reads"), ("dram_reads", "DRAM reads"), ("dram_writes", "DRAM writes"),
        ("l1_hits", "L1 hits")]
BINS = [0.01, 0.05, 0.10, 0.20, 0.50, 1.0, float("inf")]


def load(path):
    r = json.load(open(path))
    out = {}
    for c in r["cases"]:
        if c.get("status") != "compared":
            continue
        d = {}
        for k in c["counters"]:
            m = k["metric"]
            if m.startswith("lts__t_sectors_srcunit_tex_op_read"):
                d["l2_reads"] = (k["predicted"], k["measured"])
            elif m.startswith("dram__sectors_read"):
                d["dram_reads"] = (k["predicted"], k["measured"])
            elif m.startswith("dram__sectors_write"):
                d["dram_writes"] = (k["predicted"], k["measured"])
            elif m.startswith("l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit"):
                d["l1_hits"] = (k["predicted"], k["measured"])
        out[c["name"]] = d
    return out


def rel(p, m):
    if m == 0:
        return 0.0 if p == 0 else float("inf")
    return (p - m) / m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report")
    ap.add_argument("--cases", action="store_true")
    ap.add_argument("--filter", default="")
    ap.add_argument("--table", action="store_true")
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--extra-raw", action="append", default=[])
    a = ap.parse_args()
    path = a.report
    if not path:
        d = tempfile.mkdtemp()
        root = a.root
        subprocess.run([os.path.join(root, "target/release/sector-validate"), "compare", "--raw",
                        os.path.join(root, "validate/results/raw"), "--examples",
                        os.path.join(root, "examples"), "--output", d],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        path = os.path.join(d, "report.json")
    merged = load(path)
    for raw in a.extra_raw:
        d = tempfile.mkdtemp()
        subprocess.run([os.path.join(a.root, "target/release/sector-validate"), "compare", "--raw", raw,
                        "--examples", os.path.join(a.root, "examples"), "--output", d],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for n, v in load(os.path.join(d, "report.json")).items():
            merged.setdefault(n, v)
    cases = {n: v for n, v in merged.items() if a.filter in n}
    if a.table:
        table(cases)
        return
    for key, label in KEYS:
        errs = [(n, rel(*v[key]), v[key]) for n, v in cases.items() if key in v and v[key][0] is not None]
        nz = [e for e in errs if e[2][1] != 0]
        within = sum(1 for e in errs if abs(e[1]) <= 0.10)
        within_nz = sum(1 for e in nz if abs(e[1]) <= 0.10)
        hist = []
        lo = 0
        for b in BINS:
            hist.append(sum(1 for e in errs if lo < abs(e[1]) <= b or (lo == 0 and e[1] == 0)))
            lo = b
        print(f"{label}: {within}/{len(errs)} within 10% ({100*within/max(1,len(errs)):.0f}%); "
              f"non-zero counter {within_nz}/{len(nz)}; |err| <=1%,5%,10%,20%,50%,100%,more: {hist}")
        if a.cases:
            for n, e, (p, m) in sorted(errs, key=lambda e: -abs(e[1])):
                if abs(e) > 0.10:
                    print(f"    {n:45} pred {p:>12,} meas {int(m):>12,} {100*e:+.1f}%")


def klass(name):
    for p, k in (("cpp_", "C++"), ("gpu_", "GPU features"), ("reuse_", "reuse")):
        if name.startswith(p):
            return k
    return "C-style"


def table(cases):
    edges = [0.01, 0.02, 0.05, 0.10, 0.20, 0.50]
    print("| counter | cases | <1% | 1-2% | 2-5% | 5-10% | 10-20% | 20-50% | >50% | within 10% | median | worst |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key, label, metric in (("l2_reads", "L2 reads", "lts__t_sectors_srcunit_tex_op_read.sum"),
                               ("dram_reads", "DRAM reads", "dram__sectors_read.sum")):
        for k in ("C-style", "C++", "GPU features", "reuse", "all"):
            errs = sorted(((n, rel(*v[key])) for n, v in cases.items()
                           if key in v and v[key][1] and (k == "all" or klass(n) == k)), key=lambda e: e[1])
            if not errs:
                continue
            bins = [0] * 7
            for _, e in errs:
                bins[next((i for i, b in enumerate(edges) if abs(e) < b), 6)] += 1
            within = sum(1 for _, e in errs if abs(e) <= 0.10)
            med = sorted(abs(e) for _, e in errs)[len(errs) // 2]
            worst = max(errs, key=lambda e: abs(e[1]))
            print(f"| {label} (`{metric}`), {k} | {len(errs)} | " + " | ".join(map(str, bins)) +
                  f" | {within} ({100 * within / len(errs):.0f}%) | {100 * med:.1f}% | "
                  f"{100 * worst[1]:+.1f}% (`{worst[0]}`) |")


if __name__ == "__main__":
    main()
