# On the H200, from the repository root with $OUT set: builds round8.cu as the SASS path
# compiles (nvcc -O3 -arch=sm_90 -lineinfo), keeps its SASS, and counts every launch's global,
# atomic, shared and local traffic under Nsight Compute.
set -x
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/round8
nvcc --version | tail -2 > $OUT/nvcc.txt
nvcc -O3 -arch=sm_90 -lineinfo -o round8 round8.cu 2>&1 | tail -5
cuobjdump -sass round8 > $OUT/round8.sass 2>&1
. ../lsu-metrics.sh
ncu --clock-control none --metrics $M --csv ./round8 > $OUT/round8.csv 2>&1
tail -3 $OUT/round8.csv
