#!/usr/bin/env bash
# Records real Nsight Compute output of the probe kernels (tests/fixtures/h200-probe) on a GPU
# machine, for sector-validate's CSV-parsing tests. Run from the repository root with $OUT set.
set -u
P=validate/tests/fixtures/h200-probe
W=/tmp/capture
rm -rf "$W"; mkdir -p "$W"
M=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum
M=$M,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum
M=$M,dram__sectors_read.sum,dram__sectors_write.sum
M=$M,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
M=$M,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
M=$M,gpu__time_duration.sum,launch__grid_size,launch__block_size
{
  date; uname -a; nvidia-smi; which ncu nvcc; ncu --version; nvcc --version
  nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv
} > "$W/env.txt" 2>&1
ncu --help > "$W/ncu-help.txt" 2>&1
nvcc -O3 -lineinfo -arch=sm_90 -o "$W/probe" "$P/probe.cu" > "$W/nvcc.txt" 2>&1
R="$W/probe"
time ncu --clock-control none --metrics "$M" --section SourceCounters --import-source yes \
  --export "$R" -f "$W/probe" > "$W/profile.txt" 2>&1
for v in "--page raw --csv" "--page raw --csv --print-units base" "--page details --csv" \
  "--page source --csv --print-source sass" "--page source --csv --print-source cuda,sass" \
  "--page source --csv --print-source cuda" \
  "--page source --csv --print-source sass --launch-skip 2 --launch-count 1" \
  "--page source --csv --print-source sass --kernel-name regex:transpose" \
  "--page raw --csv --print-kernel-base mangled" "--page session --csv"; do
  f=$(echo "$v" | tr -c 'a-z0-9\n' '_' | sed 's/__*/_/g;s/^_//'); echo "== ncu -i $v" >> "$W/index.txt"
  echo "$f" >> "$W/index.txt"
  ncu -i "$R.ncu-rep" $v > "$W/$f.csv" 2> "$W/$f.err"
done
time ncu --clock-control none --csv --metrics "$M" "$W/probe" > "$W/direct.csv" 2> "$W/direct.err"
export PYTHONUNBUFFERED=1
time ncu --clock-control none --metrics "$M" --section SourceCounters --import-source yes \
  --export "$W/nvrtc" -f python3 "$P/nvrtc_probe.py" > "$W/nvrtc-profile.txt" 2>&1
ncu -i "$W/nvrtc.ncu-rep" --page raw --csv > "$W/nvrtc-raw.csv" 2>&1
ncu -i "$W/nvrtc.ncu-rep" --page source --csv --print-source sass > "$W/nvrtc-source-sass.csv" 2>&1
ncu -i "$W/nvrtc.ncu-rep" --page source --csv --print-source cuda,sass > "$W/nvrtc-source-cuda-sass.csv" 2>&1
rm -f "$W/probe"
tar -C /tmp -czf "$OUT/capture.tar.gz" capture
ls -la "$W"
