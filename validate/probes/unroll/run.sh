set -x
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/unroll
nvcc -O3 -arch=sm_90 -lineinfo -o unroll unroll.cu 2>&1 | tail -5
cuobjdump -sass unroll > $OUT/unroll.sass 2>&1
ncu --clock-control none --metrics l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__sass_inst_executed_op_global_ld.sum --csv ./unroll > $OUT/unroll.csv 2>&1
tail -3 $OUT/unroll.csv
