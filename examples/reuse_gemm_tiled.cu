// reuse_gemm_tiled.cu -- C = A * B for n x n floats with TILE x TILE shared-memory tiles
// (TILE 16 by default; the manifest also builds it with -D TILE=32). Block TILE x TILE.
//
// Demonstrates: the reuse class of a tiled product. Inside a block every global sector is
// loaded once (the reuse is in shared memory); across blocks, the n/TILE blocks of a block row
// load the same A tiles and those of a block column the same B tiles: that reuse is served by
// L2, and by L1 only where such blocks share an SM.
//
// Hand derivation (n^2/32 warps, n/TILE tiles each):
//   TILE 16: a warp is rows ty, ty+1 of 16 columns: A two 64-byte row pieces (4 sectors),
//   B the same (4 sectors). TILE 32: one row of 32 floats each: 4 sectors.
//   load requests n^2/32 x n/TILE x 2, sectors x 4; C: n^2/32 requests, 4 sectors each.
//   shared: per warp and tile 2 stores and 2 x TILE loads.

#ifndef TILE
#define TILE 16
#endif

__global__ void gemm_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float sum = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        // Not unrolled: unrolled, nvcc merges As[ty][k..k+3] into one 16-byte shared load.
#pragma unroll 1
        for (int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * n + col] = sum;
}
