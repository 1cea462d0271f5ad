# On the GPU machine, with $OUT set: shared instructions and wavefronts of layout.cu's kernels.
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/layout
nvcc -O3 -arch=sm_90 -o layout layout.cu 2>&1 | tail -5
cuobjdump -sass layout | grep -E "Function|LDS|STS" > $OUT/layout.sass 2>&1
ncu --clock-control none --metrics smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum --csv ./layout > $OUT/layout.csv 2>&1
