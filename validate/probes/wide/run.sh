# On the H200, with $OUT set: wavefronts of 16- and 8-byte shared loads by address pattern.
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/wide
nvcc -O3 -arch=sm_90 -std=c++17 -o wide wide.cu 2>&1 | tail -5
cuobjdump -sass wide | grep -E "Function|LDS" > $OUT/wide.sass 2>&1
ncu --clock-control none --metrics smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum --csv ./wide > $OUT/wide.csv 2>&1
