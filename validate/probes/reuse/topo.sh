#!/usr/bin/env bash
# Runs topo.cu under Nsight Compute; writes topo-launches.txt and topo.csv under $OUT.
set -u
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/cuda/bin"
nvcc -O3 -arch=sm_90 -o /tmp/topo topo.cu || exit 1
{
for s in 1 2 3 4 5 6 7 8 16 17 32 33 64 124; do echo "pair0_$s -1 0 0 0,$s"; done
for p in 1,2 2,3 3,4 4,6 124,125 124,126 124,127 124,128 126,127 128,129 64,65 64,66 64,67 64,68 64,78 65,66 120,121 120,122 120,124 16,18 16,20; do echo "pair_$p -1 0 0 $p"; done
for p in 0-3 0-7 0-15 0,2,4,6 0,16,32,48 124-131 64-77 0-131; do echo "set_$p -1 0 0 $p"; done
for d in 300 1000 3000 10000 30000; do echo "late01_$d 1 $d 0 0,1"; echo "late02_$d 2 $d 0 0,2"; echo "late01bg_$d 1 $d 1 0,1"; done
echo "bg0123 -1 0 1 0-3"
echo "bg01 -1 0 1 0,1"
echo "bg02 -1 0 1 0,2"
echo "bgnone -1 0 1 200"
} > "$OUT/topo-launches.txt"
m="l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,dram__sectors_read.sum,gpu__time_duration.sum"
ncu --clock-control none --csv --page raw --metrics "$m" /tmp/topo < "$OUT/topo-launches.txt" > "$OUT/topo.csv" 2> "$OUT/topo.err"
echo "rc $?"; wc -l "$OUT"/topo*
