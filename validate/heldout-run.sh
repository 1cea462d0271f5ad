#!/usr/bin/env bash
# Held-out launches on a GPU machine (see scripts/heldout.py): run from the repository root with
# $OUT set, the release binary at target/release/sector-validate (or $BIN), a copy of the
# collection at DIR and FOLDERS listing its folders with manifests (heldout.py's output):
#   JOBS=4 bash validate/heldout-run.sh DIR FOLDERS [SECONDS_PER_FOLDER]
# Each folder is profiled on its own (one ncu process each, its own time limit; JOBS folders at
# once: their nvcc compiles overlap, Nsight Compute serialises the profiling itself); its report,
# JSON and raw pages come back under $OUT/<folder with / as _>/.
set -u
BIN=${BIN:-target/release/sector-validate}
: "${OUT:?set OUT to the folder that comes back}"
dir=$1 folders=$2 limit=${3:-120}
export PATH="$PATH:/usr/local/cuda/bin" BIN OUT dir limit
chmod +x "$BIN"
nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader > "$OUT/gpu.txt" 2>&1
one() {
  f=$1
  n=$(echo "$f" | tr / _)
  w=/tmp/heldout/$n
  rm -rf "$w" && mkdir -p "$w" "$OUT/$n"
  timeout "$limit" "$BIN" profile --examples "$dir/$f" --output "$w" > "$OUT/$n/run.log" 2>&1
  echo "$f exit $?" >> "$OUT/status.txt"
  cp "$w/report.md" "$w/report.json" "$OUT/$n/" 2>/dev/null
  tar -C "$w" --exclude='*.ncu-rep' -czf "$OUT/$n/raw.tar.gz" raw 2>/dev/null
}
export -f one
grep -v '^\s*$' "$folders" | xargs -P "${JOBS:-1}" -I{} bash -c 'one "$@"' _ {}
