#!/usr/bin/env bash
# Runs topo.cu under Nsight Compute with a second launch list (issue 26, part 3): which SMs of
# different TPCs merge their L1 misses to one sector before L2. Hypothesis written before the
# run (PREDICTIONS.md, "GPC probe"): SM ids 0-15, 16-31, 32-47, 48-63 are GPCs 0-3 (one half
# of the chip), 64-77, 78-91, 92-105, 106-119 GPCs 4-7 (the other half); misses of SMs in
# different GPCs of one half merge while in step, those of two TPCs of one GPC do not.
# Writes gpc-launches.txt and gpc.csv under $OUT.
set -u
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/cuda/bin"
nvcc -O3 -arch=sm_90 -o /tmp/topo topo.cu || exit 1
{
# Where the TPCs 120..131 belong: each paired with SM 0 of every GPC.
for t in 120 122 124 126 128 130; do
  for r in 0 16 32 48 64 78 92 106; do echo "map_${t}_$r -1 0 0 $t,$r"; done
done
# Different GPCs of one half (merge predicted), and across halves (no merge predicted).
for p in 0,18 0,34 0,50 2,16 16,34 18,48 64,80 66,78 64,94 78,108 0,66 18,64 0,96 48,106 14,30 62,46; do
  echo "pair_$p -1 0 0 $p"
done
# Sets: predicted units = the most TPCs any one GPC of a half has in the set, summed over halves.
for s in 0,2,16,18 0,16,32,48,2,18,34,50 0-63 64-119 0-119 0-131 0,16,32,48,64,78,92,106; do
  echo "set_$s -1 0 0 $s"
done
# Under load: the other SMs read lines of their own meanwhile.
for s in 0,16 0,16,32,48 0-63 0-131; do echo "bg_$s -1 0 1 $s"; done
# How far apart in time two SMs of different GPCs still merge (SM 16 starts late).
for d in 100 300 1000 3000; do echo "late016_$d 16 $d 0 0,16"; done
} > "$OUT/gpc-launches.txt"
m="l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,dram__sectors_read.sum,gpu__time_duration.sum"
ncu --clock-control none --csv --page raw --metrics "$m" /tmp/topo < "$OUT/gpc-launches.txt" > "$OUT/gpc.csv" 2> "$OUT/gpc.err"
echo "rc $?"; wc -l "$OUT"/gpc*
