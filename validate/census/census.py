#!/usr/bin/env python3
"""Census: run sector-estimate over public CUDA code a user would try, each kernel with the
launch its own host code makes (`--launch-site`), and count sheets and refusals by construct.

    python3 validate/census/census.py --bin target/release/sector-estimate DIR [DIR...]

DIR is a checkout fetched elsewhere (never committed here), e.g. NVIDIA/cuda-samples'
Samples/0_Introduction, 2_Concepts_and_Techniques, 6_Performance (with -I its Common/) and
Rodinia's cuda/ folder. A kernel is counted once, from the first file that launches it (the
file that includes it, for Rodinia's kernel files); kernels never launched from a .cu file are
tried alone with a 1 x 32 launch, so that their language is still checked.

Outcomes: `sheet` (analysed), `needs flags` (the language is understood but a launch value
is not a constant in the file: grid, block or an argument an address depends on), or a
refusal, grouped by the construct the error names.
"""
import argparse, collections, os, re, subprocess, sys

LAUNCH = re.compile(r'\b(\w+)\s*(?:<[^<>;]*>)?\s*<<<')
KERNEL = re.compile(r'__global__\s+(?:static\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+'
                    r'(?:__launch_bounds__\s*\([^)]*\)\s*)?(\w+)\s*\(')


def construct(msg):
    """A short name for what a refusal is about."""
    m = msg.lower()
    for key, name in [("texture", "textures/surfaces"), ("curand", "cuRAND state"), ("atomic", "atomics"),
                      ("cg::", "cooperative groups"), ("cooperative_groups", "cooperative groups"),
                      ("thread_block", "cooperative groups"), ("grid_group", "cooperative groups"),
                      ("asm", "inline PTX"), ("__shfl", "warp intrinsics"), ("__half", "half precision"),
                      ("half2", "half precision"), ("is not declared", "undeclared name (global variable or macro)"),
                      ("type `", "unknown type"), ("cannot find include", "missing header"),
                      ("recursion", "recursion"), ("syntax error", "syntax"), ("not a __device__ function", "unknown function")]:
        if key in m:
            return name
    return re.sub(r'`[^`]*`', '`..`', msg)[:60]


def run(bin_, path, kernel, extra, includes):
    cmd = [bin_, 'analyze', path, '--kernel', kernel, '--format', 'json'] + extra
    for i in includes:
        cmd += ['-I', i]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return 1, 'timeout'
    lines = [l for l in r.stderr.splitlines() if l.startswith('error')]
    msg = re.sub(r'^error: (\S+:\d+:\d+: )?', '', lines[0]) if lines else r.stderr.strip()[:200]
    return r.returncode, msg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--bin', required=True)
    ap.add_argument('-I', dest='includes', action='append', default=[])
    ap.add_argument('dirs', nargs='+')
    a = ap.parse_args()
    files = []
    for d in a.dirs:
        for dp, _, fs in os.walk(d):
            files += [os.path.join(dp, f) for f in sorted(fs) if f.endswith('.cu')]
    defined = {}  # kernel -> defining file
    launched = {}  # kernel -> launching file
    for f in files:
        src = open(f, errors='replace').read()
        for k in KERNEL.findall(src):
            defined.setdefault(k, f)
        for k in LAUNCH.findall(src):
            launched.setdefault(k, f)
    outcome = collections.Counter()
    refusals = collections.Counter()
    rows = []
    for k in sorted(defined):
        if k in launched:
            code, msg = run(a.bin, launched[k], k, ['--launch-site'], a.includes)
        else:
            code, msg = run(a.bin, defined[k], k, ['--grid', '1', '--block', '32'], a.includes)
        if code == 0:
            kind = 'sheet'
        elif 'not a constant' in msg or 'has no value' in msg or 'needs a value' in msg or 'extern __shared__' in msg \
                or 'no `' in msg and 'launch' in msg:
            kind = 'needs flags'
        else:
            kind = 'refused: ' + construct(msg)
            refusals[construct(msg)] += 1
        outcome[kind.split(':')[0]] += 1
        rows.append((k, launched.get(k, defined[k]), kind, msg))
    total = len(defined)
    print(f'| kernels | sheet | needs flags | refused |')
    print(f'| ---: | ---: | ---: | ---: |')
    print(f'| {total} | {outcome["sheet"]} | {outcome["needs flags"]} | {outcome["refused"]} |')
    print()
    print('| refused by construct | kernels |')
    print('| --- | ---: |')
    for c, n in refusals.most_common():
        print(f'| {c} | {n} |')
    if os.environ.get('CENSUS_VERBOSE'):
        for r in rows:
            print(*r, sep='\t', file=sys.stderr)


if __name__ == '__main__':
    main()
