#!/usr/bin/env python3
"""Census: run sector-estimate over public CUDA code and count sheets and refusals.

Point it at source trees you fetched yourself (never commit them), for instance Rodinia's
`cuda/` folder and the `Samples/0_Introduction`, `2_Concepts_and_Techniques`,
`3_CUDA_Features` and `6_Performance` folders of NVIDIA's cuda-samples (with their `Common/`):

    python3 scripts/census.py --tool target/release/sector-estimate \
        --include cuda-samples/Common rodinia/cuda cuda-samples/Samples

Each kernel is analysed from its translation unit (a `.cu` file, or a C or C++ file that defines
kernels, which its build compiles as CUDA with `nvcc -x cu`): a `.cu` file that another one includes
(Rodinia's kernel files, included by the benchmark's main file for its macros and types) is seen
through the file that includes it, as nvcc compiles it. A quoted include found neither next to its
file nor in the -I folders is taken from the nearest folder of the collection that holds it, as
the projects' own builds (makefiles, setup.py) put their folders on the include path; a
makefile's unconditional `-I` and `-D` flags are passed as its build passes them. The launch is the one the file's own host code makes (`--launch-site`) where the
tool can read it all; otherwise its constant parts (template arguments) with a default shape
(256 threads, 1-D or 16x16 when the kernel reads threadIdx.y, 64 blocks); any integer value the
tool still asks for (`pass --arg NAME=VALUE`) is set to 256 (then 64, 16 and 4 when the launch
is too large, or too long to count, at that size), a type parameter to float (one called as a function to a class of the project with `operator()`, else `thrust::plus<float>`), and
dynamic shared memory to 16384 bytes, a macro the tool asks for (`-D NAME=VALUE`) to 4; a
type parameter used as an index becomes `int`, one whose `.x` is read `float2`. A loop bounded
by data gets 8 in every element of the arrays the tool names. Refusals are grouped by their message with names and
numbers taken out, so the table shows what stops kernels first. Refusals of constructs that are
deliberately not modelled (grid-wide synchronisation, dynamic parallelism, recursion, cuRAND's
generator state, wmma fragments) are counted apart. With a CUDA toolkit on the machine, the tool
counts the SASS of a kernel its source path refuses (the default `--via fallback`): the table
says how many sheets came from the SASS. Each analysis may take `--timeout` seconds (60), the
tool's own time limit 10 s less, an nvcc compile included.

Output: a Markdown table on stdout; `--jsonl FILE` writes one line per kernel.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time
from collections import Counter

DELIBERATE = re.compile(
    r"grid-wide|grid sync|this_grid|recursi|dynamic parallelism|device-side launch|cuRAND generator state|wmma|tensor core|device-heap|virtual function",
    re.I,
)
ASK_ARG = re.compile(r"pass --arg ([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)=")
# A template kernel's note names all its parameters (`--arg T=float --arg N=VALUE`); the error
# names the first one without a value.
ASK_MORE = re.compile(r"^VALUE \(and ([A-Za-z_][A-Za-z0-9_.]*(?:, [A-Za-z_][A-Za-z0-9_.]*)*)\)")
ASK_TEMPLATE = re.compile(r"template parameter `([A-Za-z_][A-Za-z0-9_]*)` has no value")
ASK_SHARED = re.compile(r"give its size with --shared-bytes")
OUT_OF_RANGE = re.compile(r"--arg ([A-Za-z_][A-Za-z0-9_.]*)=\S+: parameter `[^`]*` is [^,]*, which holds (-?\d+)\.\.=(-?\d+)")
# `--launch-site` names every value the file does not fix in one line: `give them and run again:
# ... --grid X,Y,Z --arg M=VALUE`.
GIVE_THEM = re.compile(r"give them and run again: (.*)$", re.M)
GIVE_ARG = re.compile(r"--arg ([A-Za-z_][A-Za-z0-9_.]*)=VALUE")
# A loop bounded by data read from memory: the message names `--fill`; the census fills the
# integer arrays the loop's line reads with a small constant (the snippet's source line).
LOOP_FROM_MEMORY = re.compile(r"this loop's condition depends on a value the analysis does not know")
# `--launch-site` names a value it could not read: `NUM_THREADS` is a template parameter of `f`.
HOST_TEMPLATE = re.compile(r"`([A-Za-z_]\w*)` is a template parameter of `([A-Za-z_]\w*)`")
# A member of a value whose type the census guessed as float (`inn.x` of a `CmplxType`).
VECTOR_MEMBER = re.compile(r"this member is not supported: `[^`]*\.([xyzw])`")
# A macro the build defines, named by the tool: `give it the same way: -D BF=VALUE`.
DEFINE_IT = re.compile(r"give it the same way: -D ([A-Za-z_][A-Za-z0-9_]*)=VALUE")
# ... or a type parameter made unsigned (`std::make_unsigned<INPUT>::type`): an integer type.
NOT_INTEGER = re.compile(r"an index that is not an integer is not supported|must be an integer|type `(?:typename )?(?:std::)?make_(?:un)?signed")
READ_FROM = re.compile(r"the condition is read from ((?:`[^`]+`(?:, )?)+)(?: \(and from [^)]*\))?:")
SNIPPET = re.compile(r"^\s*\d+ │(.*)$", re.M)
# Guessed integers too large for the launch (a tile size of 256 declaring 512 KiB of shared
# memory, an array of 0 elements from a quotient of guesses): the census tries smaller guesses.
TOO_LARGE = re.compile(r"bytes of static shared memory|more than 1024 threads|array size must be a positive|larger than any GPU memory|uses too much shared data")
# A launch too long to count at the guessed sizes (grid-stride loops over 256^3 cells, a window of
# 256^3 taps): smaller guesses, as a user would analyse a smaller problem.
TOO_LONG = re.compile(r"error\[limit\]: the analysis ran longer than|error\[limit\]: the launch needs more than")
# A type parameter guessed as float whose object the kernel calls (`payoff(S)`,
# `payoff.is_in_the_money(S)`): the file's own classes that define that operator or method are
# tried in its place.
CALLED = re.compile(r"call to `([A-Za-z_]\w*)(?:\.(?:template )?([A-Za-z_]\w*))?[^`]*`: not a __device__ function")
CLASS = re.compile(r"\b(?:struct|class)\s+([A-Za-z_]\w*)\s*(?::[^{;]*)?\{")
# A type parameter called as a function and no class of the project defines `operator()`: the
# toolkit's function objects are the common instantiation (`thrust::divides<float>`).
TOOLKIT_FUNCTOR = ["thrust::plus<float>"]
UNKNOWN_TYPE = re.compile(r"template parameter `([A-Za-z_][A-Za-z0-9_]*)`: unknown type `256`")
ERROR_LINE = re.compile(r"^(?:error: )?(?:\S+:\d+:\d+: )?(?:error: )?(.*)$")


def run(cmd, timeout):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t0
    except subprocess.TimeoutExpired:
        return None, "", "", timeout


def first_error(stderr):
    for line in stderr.splitlines():
        if "error" in line:
            m = ERROR_LINE.match(line.strip())
            return m.group(1) if m else line.strip()
    lines = [l for l in stderr.splitlines() if l.strip()]
    return lines[0].strip() if lines else "(no message)"


def bucket(msg):
    """A refusal message with its particulars (names, numbers, quoted source) taken out."""
    b = re.sub(r"`[^`]*`", "`_`", msg)
    b = re.sub(r'"[^"]*"', '"_"', b)
    b = re.sub(r"\b\d+\b", "N", b)
    return b[:110]


INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([^">]+)[">]', re.M)


def quoted_includes(path, include_dirs):
    """The files a source names in `#include "..."` or `<...>`, resolved next to the including
    file first (the benchmarks build with `-I.`), then the -I folders. Unresolved names (the
    toolkit's and the C library's headers) are left out."""
    try:
        with open(path, errors="replace") as fh:
            text = fh.read()
    except OSError:
        return []
    found = []
    for name in INCLUDE.findall(text):
        for d in [os.path.dirname(path), *include_dirs]:
            cand = os.path.normpath(os.path.join(d, name))
            if os.path.isfile(cand):
                found.append(cand)
                break
    return found


def closure(path, include_dirs, seen=None):
    seen = set() if seen is None else seen
    for inc in quoted_includes(path, include_dirs):
        if inc not in seen:
            seen.add(inc)
            closure(inc, include_dirs, seen)
    return seen


# nvcc compiles C and C++ files as CUDA where the build says so (`nvcc -x cu`, Rodinia's
# leukocyte): such a file is a translation unit when it, or a header it includes, defines kernels.
SOURCES = (".cu", ".c", ".cc", ".cpp", ".cxx")


def translation_units(files, include_dirs):
    """The .cu files nvcc compiles on their own: those no other .cu file includes. A kernel file
    that a benchmark's main.cu includes (Rodinia does this to share macros, types and constant
    memory with the host code) is analysed from that main file, as it is compiled, with the
    launches its host code makes."""
    files = [os.path.normpath(f) for f in files]
    included = set()
    for f in files:
        included |= closure(f, include_dirs)
    return [f for f in sorted(files) if f not in included]


def header_index(roots):
    """Every header under the roots, by file name: where a project's build puts its own folders on
    the include path (a makefile's or a setup.py's `-I`), a quoted include is found there."""
    index = {}
    for root in roots:
        for dp, _, fs in os.walk(root):
            for f in fs:
                if f.endswith((".h", ".hpp", ".cuh", ".inc", ".inl")):
                    index.setdefault(f, []).append(os.path.normpath(os.path.join(dp, f)))
    return index


def makefile_flags(path):
    """The `-I` folders and `-D` macros of the makefile next to a translation unit, or of the
    nearest one up to two folders above it (`-I../mis-cuda`, `-DBLOCK=256`), as the default build
    passes them: a conditional on the makefile's own defaults (`GPU = yes` ... `ifeq ($(GPU),yes)`)
    is followed as `make` with no arguments follows it, one it cannot decide is skipped, as are
    flags made of make variables (`$(...)`)."""
    d = os.path.dirname(os.path.abspath(path))
    for _ in range(3):
        for name in ("Makefile", "makefile", "GNUmakefile"):
            mk = os.path.join(d, name)
            if os.path.isfile(mk):
                try:
                    with open(mk, errors="replace") as fh:
                        text = fh.read().replace("\\\n", " ")
                except OSError:
                    return []
                lines = make_default_lines(text)
                text = "\n".join(lines)
                out = []
                for flag, val in re.findall(r"(?<![\w-])-(I|D)\s*([^\s'\"]+)", text):
                    if "$" in val or "(" in val:
                        continue
                    if flag == "I":
                        inc = os.path.normpath(os.path.join(d, val))
                        if os.path.isdir(inc) and ["-I", inc] != out[-2:]:
                            out += ["-I", os.path.relpath(inc)]
                    elif re.fullmatch(r"[A-Za-z_]\w*(=[\w.+-]*)?", val):
                        out += ["-D", val]
                return out
        d = os.path.dirname(d)
    return []


def make_default_lines(text):
    """The lines of a makefile that `make` with no arguments and an empty environment reads: top-level
    `NAME = value` (also `:=`, `?=`, `+=`) decide `ifeq`/`ifneq`/`ifdef`/`ifndef`, a variable it
    never sets reads empty (as `make` reads it); a condition calling a make function is undecided,
    and both its branches are skipped."""
    env = {}

    def expand(v):
        return re.sub(r"\$[({](\w+)[)}]", lambda m: env.get(m.group(1), ""), v).strip()

    def decide(w, rest):
        rest = rest.strip()
        if w in ("ifdef", "ifndef"):
            name = rest.split()[0] if rest.split() else ""
            if not re.fullmatch(r"\w+", name):
                return None
            return (env.get(name, "") != "") == (w == "ifdef")
        m = re.fullmatch(r"\((.*),(.*)\)", rest) or re.fullmatch(r"[\"'](.*)[\"']\s+[\"'](.*)[\"']", rest)
        if not m:
            return None
        a, b = m.group(1), m.group(2)
        if re.search(r"\$[({](?!\w+[)}])", a + b):
            return None  # a function call (`$(shell ...)`)
        return (expand(a) == expand(b)) == (w == "ifeq")

    lines, stack = [], []  # stack: per open conditional, (taking now, some branch taken, decided)
    for l in text.splitlines():
        l = l.split("#", 1)[0]
        w = l.split()[:1]
        w = w[0] if w else ""
        live = all(t for t, _, _ in stack)
        if w in ("ifeq", "ifneq", "ifdef", "ifndef"):
            d = decide(w, l.strip()[len(w):]) if live else False
            stack.append((bool(d), bool(d), d is not None))
        elif w == "else" and stack:
            take, taken, decided = stack.pop()
            rest = l.strip()[4:].strip()
            if not decided:
                stack.append((False, True, False))
            elif rest.split()[:1] and rest.split()[0] in ("ifeq", "ifneq", "ifdef", "ifndef"):
                w2 = rest.split()[0]
                d = None if taken else decide(w2, rest[len(w2):])
                stack.append((bool(d) and not taken, taken or bool(d), taken or d is not None))
            else:
                stack.append((not taken, True, True))
        elif w == "endif":
            if stack:
                stack.pop()
        elif live:
            m = re.match(r"\s*(\w+)\s*(\?=|:=|::=|=|\+=)\s*(.*)$", l)
            if m and not l.startswith("\t"):
                name, op, val = m.groups()
                if op == "+=":
                    env[name] = (env.get(name, "") + " " + expand(val)).strip()
                elif op != "?=" or name not in env:
                    env[name] = expand(val)
            lines.append(l)
    return lines


def project_includes(path, include_dirs, index):
    """`-I` folders for the quoted includes of a translation unit that are neither next to the
    including file nor in the -I folders: the folder of the nearest header of that name in the
    collection (the one sharing the longest path with the translation unit)."""
    found, seen, todo = [], set(), [path]
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        try:
            with open(f, errors="replace") as fh:
                names = re.findall(r'^\s*#\s*include\s*"([^"]+)"', fh.read(), re.M)
        except OSError:
            continue
        for name in names:
            dirs = [os.path.dirname(f), *include_dirs, *found]
            hit = next((os.path.normpath(os.path.join(d, name)) for d in dirs if os.path.isfile(os.path.join(d, name))), None)
            if hit is None:
                cands = [c for c in index.get(os.path.basename(name), []) if c.endswith(os.sep + os.path.normpath(name))]
                if not cands:
                    continue
                hit = max(cands, key=lambda c: (len(os.path.commonpath([c, path])), -len(c)))
                found.append(hit[: -len(os.path.normpath(name))].rstrip(os.sep) or ".")
            todo.append(hit)
    return found


def defines_kernels(path, include_dirs):
    for f in [path, *sorted(closure(path, include_dirs))]:
        try:
            with open(f, errors="replace") as fh:
                if "__global__" in fh.read():
                    return True
        except OSError:
            pass
    return False


def kernels_of(tool, path, incs, timeout):
    rc, out, err, _ = run([tool, "kernels", path, *incs, "--format", "json"], timeout)
    if rc == 2:  # an older tool without --format json
        rc, out, err, _ = run([tool, "kernels", path, *incs], timeout)
        if rc == 0:
            return [l.split("(")[0].split()[-1] for l in out.splitlines() if l.strip()], None
    if rc == 0:
        try:
            data = json.loads(out)
            ks = data.get("kernels", data) if isinstance(data, dict) else data
            names = [k["name"] if isinstance(k, dict) else k for k in ks]
            # Overloads by what `--kernel` takes to pick each (`scale(double*, int)`, `f@34`).
            return [k.get("signature") or n if isinstance(k, dict) and names.count(n) > 1 else n for k, n in zip(ks, names)], None
        except (ValueError, KeyError, TypeError):
            return [l.split("(")[0].split()[-1] for l in out.splitlines() if l.strip()], None
    return None, first_error(err) if rc is not None else "timed out listing kernels"


def int_pointer_params(tool, path, incs, timeout):
    """Each kernel's parameters that point at integers (`int *`, `const unsigned int *`): the
    arrays `--fill` can describe."""
    rc, out, _, _ = run([tool, "kernels", path, *incs, "--format", "json"], timeout)
    found = {}
    if rc != 0:
        return found
    try:
        data = json.loads(out)
    except ValueError:
        return found
    for k in data.get("kernels", data) if isinstance(data, dict) else data:
        if not isinstance(k, dict):
            continue
        ps = set()
        for p in k.get("parameters") or []:
            t = re.sub(r"\b(const|volatile|__restrict__|__restrict|restrict)\b", "", p.get("type", "")).strip()
            if re.fullmatch(r"(unsigned |signed )?(char|short|int|long|long long|long int|size_t|u?int(8|16|32|64)_t|uint|unsigned)\s*\*", t):
                ps.add(p.get("name"))
        found[k.get("name")] = ps
    return found


def has_flag(tool, flag):
    rc, out, _, _ = run([tool, "analyze", "--help"], 10)
    return flag in out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--tool", default="target/release/sector-estimate")
    ap.add_argument("--include", "-I", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds one analysis may take (an nvcc compile for the SASS included)")
    ap.add_argument("--jsonl")
    ap.add_argument("--extra", default="", help="more flags for every analysis, e.g. '--via sass'")
    ap.add_argument("--retry", metavar="JSONL", help="keep the sheets of an earlier run's --jsonl counted from source and analyse only the rest again")
    a = ap.parse_args()
    a.time_limit = has_flag(a.tool, "--time-limit")
    kept = {}
    if a.retry:
        with open(a.retry) as fh:
            for line in fh:
                r = json.loads(line)
                # A sheet counted from the SASS is a source refusal: analysed again.
                if r["result"] == "sheet" and r.get("via") != "sass":
                    kept[(os.path.normpath(r["file"]), r["kernel"])] = r
    incs = [x for d in a.include for x in ("-I", d)]
    launch_site = has_flag(a.tool, "--launch-site")
    files = []
    for root in a.roots:
        for dp, _, fs in os.walk(root):
            files += [os.path.join(dp, f) for f in sorted(fs) if f.endswith(SOURCES)]
    rows = []
    index = header_index(a.roots)
    for path in translation_units(files, a.include):
        if not defines_kernels(path, a.include):
            continue
        with open(path, errors="replace") as fh:
            src = fh.read()
        # The benchmarks' makefiles put the source folder on the include path (`-I.`).
        tu_incs = incs + ["-I", os.path.dirname(path) or "."] + makefile_flags(path)
        tu_incs += [x for d in project_includes(path, a.include, index) for x in ("-I", d)]
        names, err = kernels_of(a.tool, path, tu_incs, a.timeout)
        if names is None:
            n = max(1, len(re.findall(r"__global__", src)))
            rows += [dict(file=path, kernel="?", result="refused", message=err)] * n
            continue
        params = int_pointer_params(a.tool, path, tu_incs, a.timeout)
        for i, k in enumerate(names):
            old = kept.get((os.path.normpath(path), k))
            # The n-th of several kernels listed under one name (template overloads the listing
            # cannot sign): picked by the signature the tool names for it once instantiated.
            nth = names[:i].count(k) if names.count(k) > 1 else None
            rows.append(old or analyse(a, tu_incs, path, k, src, launch_site, params.get(re.split(r"[(@]", k)[0], set()), nth))
    report(rows, a)


OVERLOADED = re.compile(r"names \d+ overloaded kernels: (.*)$", re.M)
NO_SUCH_PARAM = re.compile(r"--arg ([\w.]+)(?:=[^:\n]*)?: (?:kernel `[^`]*` has no parameter named|the value is not)")


def analyse(a, incs, path, k, src, launch_site, int_ptrs=frozenset(), nth=None, seed_args=None):
    two_d = re.search(r"threadIdx\.y", src) is not None
    # The tool's own time limit (10 s by default) within the census's: a SASS count of a large
    # guessed launch may need it.
    limit = ["--time-limit", f"{max(a.timeout - 10, 5):.0f}"] if a.time_limit else []
    base = [a.tool, "analyze", path, "--kernel", k, *incs, "--format", "json", *limit, *a.extra.split()]
    grid, block = ["--grid", "8,8" if two_d else "64"], ["--block", "16,16" if two_d else "256"]
    default = grid + block
    tries = []
    if launch_site:
        # The file's own launch; then its constant parts (template arguments) with a default
        # shape where the host code computes the shape at run time.
        tries += [base + ["--launch-site"], base + ["--launch-site"] + default]
    tries.append(base + default)
    row = None
    for cmd in tries:
        args, fills, guessed, stepped, tried, defines = dict(seed_args or {}), {}, False, set(), set(), set()
        ladder = iter(["64", "16", "4"])
        for _ in range(60):  # flash-attention kernels have 19 template parameters
            full = cmd + [x for n, v in args.items() for x in ("--arg", f"{n}={v}")]
            full += [x for n, v in fills.items() for x in ("--fill", f"{n}={v}")]
            rc, out, err, dt = run(full, a.timeout)
            if rc is None:
                row = dict(file=path, kernel=k, result="timeout", message=f"over {a.timeout:.0f} s", seconds=dt)
                break
            if rc == 0:
                own = launch_site and cmd[: len(tries[0])] == tries[0] and "--grid" not in cmd and not guessed
                try:
                    sheet = json.loads(out)
                except ValueError:
                    sheet = {}
                via = sheet.get("via", "source")
                # The launch as the sheet resolved it, and the flags that made it: enough to run
                # the kernel again under Nsight Compute (scripts/heldout.py).
                return dict(file=path, kernel=k, result="sheet", seconds=round(dt, 3), launch_site=own, fills=fills or None, via=via,
                            launch=sheet.get("launch"), command=shlex.join(full[1:]))
            over = OVERLOADED.search(err) if nth is not None else None
            if over:
                # Signatures (`scale(double*, int)`) or, for overloads of one signature (SFINAE),
                # names at their lines (`block_stride@39`).
                sigs = re.split(r"(?<=[)\d]), ", over.group(1).strip())
                if nth < len(sigs):
                    # The template arguments that instantiated the overloads instantiate the
                    # one picked by its signature too.
                    return analyse(a, incs, path, sigs[nth], src, launch_site, int_ptrs, seed_args=args)
            # A value seeded from a sibling overload that this one does not take (no such
            # parameter, or not of that kind).
            extra = NO_SUCH_PARAM.search(err)
            if extra and extra.group(1) in args and extra.group(1) in (seed_args or {}):
                del args[extra.group(1)]
                continue
            m = ASK_TEMPLATE.search(err) or ASK_ARG.search(err)
            if m and m.group(1) not in args:
                args[m.group(1)] = "256"
                # The SASS path names the rest at once: `pass --arg m_ld=VALUE (and k_ld, n_ld)`.
                more = ASK_MORE.search(err[m.end():m.end() + 400])
                for n in (more.group(1).split(", ") if more else []):
                    args.setdefault(n.strip(), "256")
                continue
            g = GIVE_THEM.search(err)
            if g:
                # A host function template's parameters: the first call of it that the file
                # writes with explicit arguments (`Test<256, 4, BLOCK_SCAN_RAKING>();`), one of
                # the launches the program makes.
                host = {}
                for name, fn in HOST_TEMPLATE.findall(err):
                    host.update({n: v for n, v in host_instance(src, fn).items() if n == name and n not in args})
                if host:
                    args.update(host)
                    continue
                # The launch's values the file does not fix, all at once: guessed as above, the
                # grid and block by the default shape.
                new = [n for n in GIVE_ARG.findall(g.group(1)) if n not in args]
                more = []
                if "--grid X" in g.group(1) and "--grid" not in cmd:
                    more += grid
                if "--block X" in g.group(1) and "--block" not in cmd:
                    more += block
                if new or more:
                    args.update({n: "256" for n in new})
                    cmd = cmd + more
                    guessed = True
                    continue
            if LOOP_FROM_MEMORY.search(err):
                # The integer arrays the loop's source line reads: 8 in every element (a loop
                # `for (j = start[i]; j < start[i] + count[i]; j++)` then runs 8 times; one from
                # `ptr[i]` to `ptr[i+1]` not at all).
                # The tool names the arrays the condition was read from, through locals and
                # helpers; the loop's own line is the fallback.
                named = READ_FROM.search(err)
                named = re.findall(r"`([^`]+)`", named.group(1)) if named else []
                line = " ".join(SNIPPET.findall(err))
                new = [p for p in named if p not in fills]
                new += [p for p in int_ptrs if p not in fills and p not in new and re.search(r"\b" + re.escape(p) + r"\s*\[", line)]
                if new:
                    fills.update({p: "constant:8" for p in new})
                    continue
            # A type built from guessed integers the type does not take (`TxN_t<float, veclen_>`
            # with veclen_ = 256): smaller guesses too.
            ty = re.search(r"type `([^`]*)` is not supported", err)
            in_type = ty is not None and any(v == "256" and re.search(r"\b" + re.escape(n) + r"\b", ty.group(1)) for n, v in args.items())
            too = TOO_LARGE.search(err) or TOO_LONG.search(err)
            if (too or in_type) and any(v == "256" for v in args.values()) or (too and stepped):
                step = next(ladder, None)
                if step is not None:
                    stepped |= {n for n, v in args.items() if v == "256"}
                    args = {n: (step if n in stepped else v) for n, v in args.items()}
                    continue
            r = OUT_OF_RANGE.search(err)
            if r and args.get(r.group(1)) == "256":
                args[r.group(1)] = r.group(3)  # a narrow parameter (`char`): its largest value
                continue
            if ASK_SHARED.search(err) and "--shared-bytes" not in cmd:
                cmd = cmd + ["--shared-bytes", "16384"]  # dynamic shared memory: a common size
                continue
            v = VECTOR_MEMBER.search(err)
            if v:
                # A type parameter guessed as float whose value's `.x` the kernel reads: a
                # vector type (`float2` for x and y, `float4` for z and w), the last guessed first.
                want = "float4" if v.group(1) in "zw" else "float2"
                f = next((n for n in reversed(list(args)) if args[n] == "float" and (n, want) not in tried), None)
                if f:
                    tried.add((f, want))
                    args[f] = want
                    continue
            d = DEFINE_IT.search(err)
            if d and d.group(1) not in defines:
                # A macro the build defines (`-DBF=4`): a small integer, as group and tile sizes are.
                defines.add(d.group(1))
                cmd = cmd + ["-D", f"{d.group(1)}=4"]
                continue
            if NOT_INTEGER.search(err):
                # A type parameter guessed as float used as an index (`index_t`, `StrideType`):
                # an integer type instead, the last guessed first.
                f = next((n for n in reversed(list(args)) if args[n] == "float" and (n, "int") not in tried), None)
                if f:
                    tried.add((f, "int"))
                    args[f] = "int"
                    continue
            t = UNKNOWN_TYPE.search(err)
            if t and args.get(t.group(1)) == "256":
                args[t.group(1)] = "float"  # a type parameter: the common instantiation
                continue
            c = CALLED.search(err)
            cand = next(((n, cl) for n, v in args.items() if v == "float" or (n, v) in tried
                         for cl in classes_with(src + project_text(path, incs), c.group(2) or "operator()") + ([] if c.group(2) else TOOLKIT_FUNCTOR)
                         if (n, cl) not in tried), None) if c else None
            if cand:
                tried.add(cand)
                args[cand[0]] = cand[1]
                continue
            msg = first_error(err)
            row = dict(file=path, kernel=k, result="deliberate" if DELIBERATE.search(msg) else "refused", message=msg, seconds=round(dt, 3),
                       command=" ".join(shlex.quote(x) for x in full))
            break
    return row


def split_top(text):
    """`a, B<c, d>, e` -> ["a", "B<c, d>", "e"]: commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += {"<": 1, "(": 1, "[": 1, ">": -1, ")": -1, "]": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def host_instance(src, fn):
    """The template arguments of the first call `fn<...>(...)` in `src`, by the template's
    parameter names (`template <int BLOCK_THREADS, int ITEMS, BlockScanAlgorithm ALGO> void
    Test()`), or {} where the file has no such call."""
    decl = re.search(r"template\s*<([^{;]*?)>\s*(?:static\s+|inline\s+)*[\w:<>,\s*&]*?\b" + re.escape(fn) + r"\s*\(", src)
    call = re.search(r"(?<![\w:])" + re.escape(fn) + r"\s*<([^;{}]*?)>\s*\(", src)
    if not decl or not call:
        return {}
    last = lambda p: (re.findall(r"[A-Za-z_]\w*", p.split("=")[0]) or [""])[-1]
    names = [last(p) for p in split_top(decl.group(1))]
    values = split_top(call.group(1))
    # A value that is itself some template's parameter (`launcher<T, T, block_size>` inside
    # another template) is no value.
    params = {last(p) for m in re.finditer(r"template\s*<([^{;]*?)>", src) for p in split_top(m.group(1))}
    if not values or len(values) > len(names) or any(v in params for v in values):
        return {}
    return dict(zip(names, values))


def project_text(path, incs):
    """The text of the project's own headers a file includes with quotes (found beside it or in
    its `-I` folders), recursively ([`closure`]): where its classes are declared."""
    dirs = [incs[i + 1] for i in range(len(incs) - 1) if incs[i] == "-I"]
    out = []
    for f in sorted(closure(path, dirs)):
        try:
            with open(f, errors="replace") as fh:
                out.append(fh.read())
        except OSError:
            continue
    return "\n".join(out)


def classes_with(src, method):
    """The structures and classes of `src` (not templates) whose body defines `method`, in file
    order."""
    out = []
    for m in CLASS.finditer(src):
        if src[max(0, m.start() - 40):m.start()].rstrip().endswith(">"):
            continue  # a class template: its arguments would be guesses too
        depth, i = 0, m.end() - 1
        for i in range(m.end() - 1, len(src)):
            depth += {"{": 1, "}": -1}.get(src[i], 0)
            if depth == 0:
                break
        body = src[m.end():i]
        if re.search(re.escape(method) + r"\s*\(", body):
            out.append(m.group(1))
    return out


RANK = {"sheet": 0, "deliberate": 1, "refused": 2, "timeout": 3}


def dedupe(rows):
    """Two translation units of one folder may include the same kernel file: keep the best result
    per kernel name and folder."""
    best = {}
    for r in rows:
        key = (os.path.dirname(r["file"]), r["kernel"]) if r["kernel"] != "?" else (r["file"], id(r))
        if key not in best or RANK[r["result"]] < RANK[best[key]["result"]]:
            best[key] = r
    return list(best.values())


def report(rows, a):
    rows = dedupe(rows)
    if a.jsonl:
        with open(a.jsonl, "w") as fh:
            for r in rows:
                fh.write(json.dumps(r) + "\n")
    total = len(rows)
    by = Counter(r["result"] for r in rows)
    site = sum(1 for r in rows if r["result"] == "sheet" and r.get("launch_site"))
    sass = sum(1 for r in rows if r["result"] == "sheet" and r.get("via") == "sass")
    print("| kernels | sheets | of them with the file's own launch | of them from the SASS | deliberate refusals | other refusals | timeouts |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    pct = lambda n: f"{n} ({100.0 * n / total:.0f}%)" if total else "0"
    print(f"| {total} | {pct(by['sheet'])} | {site} | {sass} | {pct(by['deliberate'])} | {pct(by['refused'])} | {pct(by['timeout'])} |")
    print()
    print("| kernels | first refusal |")
    print("| ---: | --- |")
    for msg, n in Counter(bucket(r["message"]) for r in rows if r["result"] != "sheet").most_common():
        print(f"| {n} | {msg.replace('|', '/')} |")


if __name__ == "__main__":
    sys.exit(main())
