#!/usr/bin/env python3
"""Per case of one or more sector-validate reports (report.json): the global load and store
requests and sectors, predicted beside measured, and whether all four are exact.

    python3 scripts/global-summary.py OUT/report.json [...] > summary.md

Written for validation runs over public code (whose sources are never committed): the table
holds only names and numbers, as `sector-validate` printed them.
"""
import json
import sys

KEYS = ["global_load_requests", "global_load_sectors", "global_store_requests", "global_store_sectors"]


def main(paths):
    rows, exact = [], 0
    for path in paths:
        with open(path) as fh:
            report = json.load(fh)
        for case in report["cases"]:
            got = {c["key"]: c for c in case.get("counters", []) if c.get("key") in KEYS}
            if len(got) < len(KEYS):
                rows.append(f"| {case['name']} | `{case['kernel']}` | not compared ({case.get('status')}) | | | | |")
                continue
            ok = all(got[k]["verdict"] == "exact" for k in KEYS)
            exact += ok
            cells = []
            for k in KEYS:
                c = got[k]
                p, m = int(c["predicted"]), int(float(c["measured"]))
                cells.append(f"{p:,}" if p == m else f"{p:,} / {m:,} ({c['verdict'].replace('_', ' ')})")
            rows.append(f"| {case['name']} | `{case['kernel']}` | " + " | ".join(cells) + f" | {'yes' if ok else 'no'} |")
    print(f"{exact} of {len(rows)} launches exact on all four global counters.\n")
    print("| case | kernel | load requests | load sectors | store requests | store sectors | all exact |")
    print("| --- | --- | ---: | ---: | ---: | ---: | :---: |")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
