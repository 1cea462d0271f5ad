#!/usr/bin/env bash
# Runs the reuse probes on the GPU machine; writes CSVs under $1 (default $OUT).
set -u
D=${1:-$OUT}
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/cuda/bin"
nvcc -O3 -arch=sm_90 -o /tmp/probe probe.cu || exit 1
{
for c in "3168 1 256 1 20000" "32 32 16 16 20000" "64 64 16 16 20000" "8448 1 32 1 20000" "528 1 1024 1 20000" "16 64 32 8 20000"; do
  /tmp/probe place $c
done
} > "$D/place.csv"
# Launch list for the share probes: KIND GRID WARPS BOFF ITERS NLINES DELAY_NS
{
for w in 1 2 4 8 16 32; do echo "share 1 $w 0 4096 4096 0"; done
for g in 1 2 4 8 16 32 66 132 264 1056; do echo "share $g 8 0 2048 2048 0"; done
for g in 2 8 132 1056; do echo "share $g 8 61 2048 2048 0"; done
for g in 132 1056; do echo "share $g 1 0 2048 2048 0"; done
for w in 1 8 32; do echo "cg 1 $w 0 4096 4096 0"; done
echo "cg 132 8 0 2048 2048 0"
for d in 0 300 1000 3000 10000 100000; do echo "late 132 1 0 2048 2048 $d"; done
for d in 0 1000 10000; do echo "late 2 8 0 2048 2048 $d"; done
} > "$D/share-launches.txt"
ncu --query-metrics --chip gh100 > /tmp/q.txt 2>&1
grep -iE "^(lrc|lts__t_(sectors|requests)_srcunit_tex|l1tex__m_)" /tmp/q.txt | head -80 > "$D/metrics-avail.txt"
want="l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum l1tex__m_xbar2l1tex_read_sectors.sum l1tex__m_l1tex2xbar_req.sum lts__t_sectors_srcunit_tex_op_read.sum lts__t_requests_srcunit_tex_op_read.sum lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum lrc__t_requests.sum lrc__t_sectors.sum lrc__t_sectors_hit.sum lrc__t_sectors_miss.sum dram__sectors_read.sum gpu__time_duration.sum"
m=""
for x in $want; do b=${x%.sum}; if grep -q "^$b " /tmp/q.txt; then m="$m,$x"; fi; done
m=${m#,}
echo "metrics: $m"
ncu --clock-control none --csv --page raw --metrics "$m" /tmp/probe share < "$D/share-launches.txt" > "$D/share.csv" 2> "$D/share.err"
echo "share rc $?"; wc -l "$D"/*.csv
