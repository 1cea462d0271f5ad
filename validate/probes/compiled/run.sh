# On the H200, from the repository root with $OUT set: builds compiled.cu as the SASS path
# compiles (nvcc -O3 -arch=sm_90 -lineinfo), keeps its SASS, and counts every launch's global,
# atomic, shared and local traffic under Nsight Compute.
set -x
export PATH=$PATH:/usr/local/cuda/bin
cd validate/probes/compiled
nvcc --version | tail -2 > $OUT/nvcc.txt
nvcc -O3 -arch=sm_90 -lineinfo -o compiled compiled.cu 2>&1 | tail -5
cuobjdump -sass compiled > $OUT/compiled.sass 2>&1
. ../lsu-metrics.sh
ncu --clock-control none --metrics $M --csv ./compiled > $OUT/compiled.csv 2>&1
tail -3 $OUT/compiled.csv
