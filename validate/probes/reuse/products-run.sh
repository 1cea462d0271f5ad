#!/usr/bin/env bash
# One device call for issue 26 part 3: the GPC probe (gpc.sh) and every product case of the
# examples under sector-validate (device-run.sh). Run from the repository root with $OUT set and
# the release sector-validate at $BIN.
set -u
export PATH="$PATH:/usr/local/cuda/bin"
ROOT=$OUT
mkdir -p "$ROOT/gpc"
OUT="$ROOT/gpc" bash validate/probes/reuse/gpc.sh > "$ROOT/gpc/gpc.log" 2>&1
tail -3 "$ROOT/gpc/gpc.log"
OUT="$ROOT" bash validate/device-run.sh --case reuse_chain_2mm_ab_32x8 --case reuse_chain_2mm_tc_16x16 --case reuse_gemm_rect_768_64x4 --case reuse_gemm_rect_512_32x32 --case reuse_gemm_rect_512_4x64 --case reuse_gemm_rect_1536_32x8 --case reuse_batched_naive_256_b16 --case reuse_batched_naive_128_b64_32x8 --case reuse_trmm_lower_1024_32x8 --case reuse_trmm_lower_768_64x4 --case reuse_gemm_tiled_512_t16 --case reuse_gemm_tiled_512_t32 --case reuse_gemm_tiled_1024_t16 --case reuse_gemm_tiled_1024_t32 --case reuse_gemm_tiled_2048_t16 --case reuse_gemm_tiled_2048_t32 --case reuse_gemm_tiled_512_t8 --case reuse_gemm_tiled_1024_t8 --case reuse_gemm_tiled_768_t16 --case reuse_gemm_tiled_1536_t32 --case reuse_gemm_naive_512_16x16 --case reuse_gemm_naive_512_32x8 --case reuse_gemm_naive_512_8x32 --case reuse_gemm_naive_1024_16x16 --case reuse_gemm_naive_1024_32x8 --case reuse_gemm_naive_2048_16x16 --case reuse_gemm_naive_2048_32x8 --case reuse_gemm_naive_4096_16x16 --case reuse_rank_k_2048_k64_32x8 --case reuse_rank_k_2048_k64_16x16 --case reuse_batched_32_b4096 --case reuse_batched_16_b16384 --case matmul_naive_128 --case matmul_accumulate_128 --case matmul_accumulate_restrict_128 --case matmul_tiled_256 | tail -40
