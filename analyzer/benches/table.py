#!/usr/bin/env python3
"""Prints the README's benchmark table from criterion's estimates (target/criterion) after
`cargo bench -p sector-analyzer --bench engines`: per case, the mean time of each engine and
their ratio, all from the one run."""
import json, pathlib, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")

def mean(path):
    f = path / "new" / "estimates.json"
    return json.loads(f.read_text())["mean"]["point_estimate"] / 1e6 if f.exists() else None

def fmt(ms):
    return "-" if ms is None else (f"{ms:.3f} ms" if ms < 10 else f"{ms:,.0f} ms")

print("| case | enumerate | symbolic | enumerate / symbolic |")
print("|---|---:|---:|---:|")
rows = []
for name in ["matmul_512"]:
    e, s = mean(root / name / "enumerate"), mean(root / name / "symbolic")
    rows.append((f"naive matmul 512^3 (`{name}`)", e, s))
for case in sorted((root / "scale" / "symbolic").glob("*")):
    if case.is_dir() and case.name != "report":
        rows.append((f"scale: `{case.name}`", None, mean(case)))
slower = 0
for case in sorted((root / "examples" / "symbolic").glob("*")):
    if case.is_dir() and case.name != "report":
        e, s = mean(root / "examples" / "enumerate" / case.name), mean(case)
        rows.append((f"`{case.name}`", e, s))
        slower += e is not None and s is not None and s > e
for name, e, s in rows:
    ratio = f"{e / s:,.0f}x" if e and s else "-"
    print(f"| {name} | {fmt(e)} | {fmt(s)} | {ratio} |")
print(f"\n{sum(1 for r in rows if r[0].startswith('`'))} examples, symbolic slower on {slower}.")
