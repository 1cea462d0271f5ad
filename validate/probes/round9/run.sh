# On the device machine, from the repository root with $OUT set: builds round9.cu and counts
# its launches under Nsight Compute (validate/probes/one-file.sh says how).
exec bash validate/probes/one-file.sh round9
