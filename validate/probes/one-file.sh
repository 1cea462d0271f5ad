# On the device machine, from the repository root with $OUT set: `bash
# validate/probes/one-file.sh NAME` builds validate/probes/NAME/NAME.cu as the SASS path compiles
# (nvcc -O3 -arch=sm_90 -lineinfo), keeps its SASS, and counts every launch's global, atomic,
# shared and local traffic under Nsight Compute (the metrics of lsu-metrics.sh).
set -x
name=$1
export PATH=$PATH:/usr/local/cuda/bin
cd "validate/probes/$name"
nvcc --version | tail -2 > $OUT/nvcc.txt
nvcc -O3 -arch=sm_90 -lineinfo -o "$name" "$name.cu" 2>&1 | tail -5
cuobjdump -sass "$name" > "$OUT/$name.sass" 2>&1
. ../lsu-metrics.sh
ncu --clock-control none --metrics $M --csv "./$name" > "$OUT/$name.csv" 2>&1
tail -3 "$OUT/$name.csv"
