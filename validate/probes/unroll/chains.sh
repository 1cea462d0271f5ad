# On the H200, with $OUT set: the shared loads of chains.cu as nvcc builds and the GPU runs them.
set -x
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/unroll
nvcc -O3 -arch=sm_90 -lineinfo -o chains chains.cu 2>&1 | tail -5
cuobjdump -sass chains > $OUT/chains.sass 2>&1
ncu --clock-control none --metrics smsp__sass_inst_executed_op_shared_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum --csv ./chains > $OUT/chains.csv 2>&1
tail -3 $OUT/chains.csv
