# On the H200, from the repository root with $OUT set: builds round6.cu as the SASS path
# compiles (nvcc -O3 -arch=sm_90 -lineinfo), keeps its SASS, and counts every launch's global,
# atomic, shared and local traffic under Nsight Compute.
set -x
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/round6
nvcc --version | tail -2 > $OUT/nvcc.txt
nvcc -O3 -arch=sm_90 -lineinfo -o round6 round6.cu 2>&1 | tail -5
cuobjdump -sass round6 > $OUT/round6.sass 2>&1
M=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum
M=$M,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum
M=$M,smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_global_st.sum
M=$M,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_shared_st.sum,smsp__sass_inst_executed_op_shared_atom.sum
M=$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
M=$M,smsp__sass_inst_executed_op_local_ld.sum,smsp__sass_inst_executed_op_local_st.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum
ncu --clock-control none --metrics $M --csv ./round6 > $OUT/round6.csv 2>&1
tail -3 $OUT/round6.csv
