# On the device machine, from the repository root with $OUT set: builds compiled.cu and counts
# its launches under Nsight Compute (validate/probes/one-file.sh says how).
exec bash validate/probes/one-file.sh compiled
