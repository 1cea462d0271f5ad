#!/bin/bash
# Compiles each probe for sm_90 and counts global loads and stores in the SASS.
cd "$(dirname "$0")/probes"
nvcc --version | tail -1
for f in *.cu; do
  nvcc -arch=sm_90 -O3 -cubin -o /tmp/${f%.cu}.cubin $f || { echo "$f: nvcc failed"; continue; }
  cuobjdump -sass /tmp/${f%.cu}.cubin > $OUT/${f%.cu}.sass
  ldg=$(grep -cE '\bLDG' $OUT/${f%.cu}.sass); stg=$(grep -cE '\bSTG' $OUT/${f%.cu}.sass)
  echo "$f: LDG=$ldg STG=$stg"; grep -E '\b(LDG|STG)' $OUT/${f%.cu}.sass | sed 's/^ */    /'
done | tee $OUT/summary.txt
