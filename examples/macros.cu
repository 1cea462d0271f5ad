// macros.cu -- a kernel written through #include "common.cuh", object- and function-like
// #defines, and an #if / #elif / #else chain chosen by -D (the manifest's `defines`).
//
// Demonstrates: the preprocessor runs before analysis, exactly as for nvcc/NVRTC.
//
// Hand derivation (grid 1024 x block 256 = 262,144 threads; n = 262,144: 8,192 full warps, the
// early return never fires):
//   macro_copy_default (no defines: STRIDE 1): in[i] 4 sectors, out[i] 4 sectors per warp.
//     loads 8,192 / 32,768, stores 8,192 / 32,768, logical 262,144 x 8 = 2,097,152 bytes.
//   macro_copy_stride4 (-D STRIDE=4): in[i*4], lanes 16 bytes apart over 512 aligned bytes:
//     16 sectors per warp: loads 131,072 sectors (in needs 4n floats).
//   macro_copy_reverse (-D REVERSE=1): in[n-1-i]: warp w reads elements n-32w-32 .. n-32w-1, an
//     aligned 128-byte run (n is a multiple of 32) in reverse: 4 sectors.
//   macro_rows (IDX2 and LANE_ID; grid 64 x 32, block 32 x 4, ld = 2048, cols = 2048): a warp is
//     one row piece of 32 floats at column 32*bx: 4 sectors; 64 x 32 x 4 = 8,192 warps; rows
//     with row % 2 == 1 return early (ROW_STEP 2 via #define) -> 4,096 warps load and store.
//     loads 4,096 / 16,384, stores 4,096 / 16,384, logical 4,096 x 32 x 8 = 1,048,576 bytes.

#include "common.cuh"

#ifndef STRIDE
#define STRIDE 1
#endif

#define ROW_STEP 2
#define SCALE(v) (2.0f * (v))

__global__ void macro_copy(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int i = THREAD_ID_1D();
    if (i >= n) {
        return;
    }
#if STRIDE > 1
    out[i] = SCALE(in[i * STRIDE]);
#elif defined(REVERSE) && REVERSE
    out[i] = SCALE(in[n - 1 - i]);
#else
    out[i] = SCALE(in[i]);
#endif
}

__global__ void macro_rows(const float *__restrict__ in, float *__restrict__ out, int ld)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * WARP_SIZE + LANE_ID();
    if (row % ROW_STEP != 0) {
        return;
    }
    out[IDX2(row, col, ld)] = SCALE(in[IDX2(row, col, ld)]);
}
