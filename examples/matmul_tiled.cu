// matmul_tiled.cu -- C = A * B for n x n floats with 16 x 16 shared-memory tiles.
//
// Demonstrates: a matrix product whose global loads are each used once per block (the reuse is
// in shared memory), so L1 serves nothing and every load sector reaches L2; DRAM sees A and B
// once because they fit in L2.
//
// Hand derivation (n = 256, grid 16 x 16, block 16 x 16: 256 blocks of 8 warps; a warp is rows
// ty, ty+1 of 16 columns; 16 tiles t):
//   A[row*n + t*16 + tx]: two 64-byte row pieces, 4 sectors; B[(t*16+ty)*n + col]: 4 sectors.
//   loads 256 x 8 x 16 x 2 = 65,536 requests, 65,536 x 4 = 262,144 sectors; C: 2,048 requests,
//   8,192 sectors. Shared: per warp and tile 2 stores and 32 loads.
//   L1: within a block every sector is loaded once; blocks on one SM (b and b + 132) never
//   share a tile row of A or column of B: L1 hits 0, 262,144 misses. Barrier loop, first wave:
//   a run of 16 blocks (a block row) reaches L2 once per 4 SMs for an A tile: 3 of 4 A misses
//   merge, 163,840 L2 reads in the whole launch (164,102 sampled: the manifest's `why`).
//   DRAM reads: A and B, 2 x 8,192 sectors, + 88 = 16,472; writes 0.

#define TILE 16

__global__ void matmul_tiled(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n)
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
        // Not unrolled: unrolled, nvcc reads As[ty][k..k+3] with one 16-byte shared load, which
        // the source-level count would not show.
#pragma unroll 1
        for (int k = 0; k < TILE; ++k) {
            sum += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }
    C[row * n + col] = sum;
}
