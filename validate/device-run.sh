#!/usr/bin/env bash
# Validates every example on a GPU machine: run from the repository root with $OUT set and the
# binary built elsewhere (`cargo build --release -p sector-validate`) at
# target/release/sector-validate (or $BIN). Everything comes back under $OUT:
#   validate-results/report.md, report.json, run.log   the report and what the run printed
#   validate-raw.tar.gz                                 the raw folder (launch log, ncu CSV pages)
#   profile.ncu-rep.gz                                  the Nsight Compute report itself
# Unpack with: tar -C validate/results -xzf validate-raw.tar.gz   (gives validate/results/raw/)
set -u
BIN=${BIN:-target/release/sector-validate}
: "${OUT:?set OUT to the folder that comes back}"
RES="$OUT/validate-results"
WORK=/tmp/sector-validate-run
rm -rf "$WORK"
mkdir -p "$RES" "$WORK"
export PATH="$PATH:/usr/local/cuda/bin"
{
  echo "# $(date -u +%FT%TZ) on $(hostname)"
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv,noheader 2>&1
  ncu --version 2>&1 | tail -1
} > "$RES/run.log"
chmod +x "$BIN"
"$BIN" profile --examples examples --output "$WORK" "$@" >> "$RES/run.log" 2>&1
status=$?
echo "# sector-validate profile exited with $status" >> "$RES/run.log"
cp "$WORK/report.md" "$WORK/report.json" "$RES/" 2>/dev/null
if [ -f "$WORK/raw/profile.ncu-rep" ]; then
  gzip -c "$WORK/raw/profile.ncu-rep" > "$OUT/profile.ncu-rep.gz"
fi
tar -C "$WORK" --exclude='*.ncu-rep' -czf "$OUT/validate-raw.tar.gz" raw
cat "$RES/run.log"
exit $status
