#!/usr/bin/env python3
"""Runs every example launch measured on the H200 through `sector-estimate analyze --via sass`
(or `--via source` with --via source) and compares the engine counters with the measurements
in validate/results/*/report.json. Prints one line per launch that differs and a summary.

usage: scripts/sass-compare.py [--bin target/release/sector-estimate] [--via sass] [--only NAME]
       [--json out.json]
"""
import argparse, concurrent.futures, glob, json, os, subprocess, sys, time, tomllib

TIMES = {}

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Later reports win: the main one is the newest run of the examples.
REPORTS = ["validate/results/cpp/report.json", "validate/results/gpu/recompared/report.json",
           "validate/results/report.json", "validate/results/products/report.json"]
# counter key -> (totals key, field)
COUNTERS = {
    "global_load_requests": ("global_load", "requests"), "global_load_sectors": ("global_load", "sectors"),
    "global_store_requests": ("global_store", "requests"), "global_store_sectors": ("global_store", "sectors"),
    "global_red_requests": ("global_red", "requests"), "global_red_sectors": ("global_red", "sectors"),
    "global_atom_requests": ("global_atom", "requests"), "global_atom_sectors": ("global_atom", "sectors"),
    "global_async_copy_requests": ("global_async_copy", "requests"),
    "global_async_copy_sectors": ("global_async_copy", "sectors"),
    "global_async_copy_bypass_requests": ("global_async_copy_bypass", "requests"),
    "global_async_copy_bypass_sectors": ("global_async_copy_bypass", "sectors"),
    "shared_load_requests": ("shared_load", "requests"), "shared_store_requests": ("shared_store", "requests"),
    "shared_load_wavefronts": ("shared_load", "wavefronts"), "shared_store_wavefronts": ("shared_store", "wavefronts"),
}


def cases():
    manifest = {}
    for f in sorted(glob.glob(os.path.join(ROOT, "examples/*.toml"))):
        for c in tomllib.load(open(f, "rb")).get("case", []):
            c["_source"] = f[:-5] + (".rs" if os.path.exists(f[:-5] + ".rs") else ".cu")
            manifest[c["name"]] = c
    measured = {}
    for r in REPORTS:
        p = os.path.join(ROOT, r)
        if not os.path.exists(p):
            continue
        for c in json.load(open(p))["cases"]:
            if c.get("status") != "compared":
                continue
            # A template's measurement applies to the instance measured.
            inst = (c.get("measured_kernel") or "").split("(")[0]
            m = manifest.get(c["name"])
            if m and "<" in inst and any(isinstance(v, str) and v not in inst.split("<", 1)[1]
                                         for v in m.get("args", {}).values()):
                continue
            # Engine counters are exact on the H200; shared wavefronts ("engine_shared") carry a
            # few percent of hardware replays the model does not count, on either path.
            got = {k["key"]: k["measured"] for k in c.get("counters", [])
                   if k["key"] in COUNTERS and k.get("measured") is not None and k.get("class") == "engine"}
            if got:
                measured[c["name"]] = got
    return [(manifest[n], m) for n, m in sorted(measured.items()) if n in manifest]


def command(binary, via, c):
    cmd = [binary, "analyze", c["_source"], "--kernel", c["kernel"], "--grid", str(c["grid"]), "--block",
           str(c["block"]), "--format", "json", "--via", via, "--time-limit", "120"]
    for k, v in c.get("args", {}).items():
        cmd += ["--arg", f"{k}={v}"]
    for k, v in c.get("fills", {}).items():
        cmd += ["--fill", f"{k}={v}"]
    for k, v in c.get("offsets", {}).items():
        cmd += ["--offset", f"{k}={v}"]
    if c.get("shared_bytes"):
        cmd += ["--shared-bytes", str(c["shared_bytes"])]
    for d in c.get("defines", []) if isinstance(c.get("defines"), list) else [f"{k}={v}" for k, v in c.get("defines", {}).items()]:
        cmd += ["-D", d]
    return cmd


def run(binary, via, c, m):
    t0 = time.monotonic()
    p = subprocess.run(command(binary, via, c), capture_output=True, text=True, cwd=ROOT)
    TIMES[c["name"]] = time.monotonic() - t0
    if p.returncode != 0:
        return c["name"], None, (p.stderr.strip().splitlines() or ["?"])[0]
    sheet = json.loads(p.stdout)
    diffs = []
    for key, want in m.items():
        t, f = COUNTERS[key]
        got = (sheet["totals"].get(t) or {}).get(f, 0)
        if int(got) != int(want):
            diffs.append(f"{key} {got} vs {int(want)}")
    return c["name"], diffs, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target/release/sector-estimate"))
    ap.add_argument("--via", default="sass")
    ap.add_argument("--only")
    ap.add_argument("--json")
    ap.add_argument("--slowest", type=int, default=10, help="print this many slowest launches")
    a = ap.parse_args()
    todo = [(c, m) for c, m in cases() if not a.only or a.only in c["name"]]
    exact = failed = differ = 0
    results = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as ex:
        for name, diffs, err in ex.map(lambda cm: run(a.bin, a.via, *cm), todo):
            if err is not None:
                failed += 1
                print(f"ERROR  {name}: {err}")
                results[name] = {"error": err}
            elif diffs:
                differ += 1
                print(f"DIFF   {name}: {'; '.join(diffs)}")
                results[name] = {"diffs": diffs}
            else:
                exact += 1
                results[name] = {"exact": True}
    slow = sorted(TIMES.items(), key=lambda kv: -kv[1])[:a.slowest]
    if slow:
        print("slowest (whole command, s): " + ", ".join(f"{n} {t:.1f}" for n, t in slow))
    print(f"{a.via}: {exact} of {len(todo)} launches exact on every engine counter, {differ} differ, {failed} not analysed")
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
