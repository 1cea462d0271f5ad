// transpose_tiled.cu -- the classic shared-memory transpose (32 x 32 tile, 32 x 8 threads,
// each thread moves 4 elements), with a padded tile [32][33] and an unpadded [32][32] variant.
//
// Demonstrates: __shared__ static arrays, __syncthreads(), #define constants, loops with a
// uniform trip count, and shared-memory bank conflicts (wavefronts).
//
// Hand derivation (width = height = 2048, grid 64 x 64 = 4096 blocks, block 32 x 8 = 8 warps):
//   Each warp runs each of the two j-loops 4 times (j = 0, 8, 16, 24): per block 32 executions
//   of every access. Whole launch: 4096 x 32 = 131,072 executions per access.
//   global read  in[(y+j)*width + x]:   32 consecutive floats, aligned (x0 = 32*bx): 4 sectors.
//   global write out[(y+j)*width + x]:  likewise 4 sectors (the transpose happens in the tile).
//   -> loads 131,072 / 524,288 sectors, stores 131,072 / 524,288 sectors,
//      logical 8 x 2048^2 = 33,554,432 bytes.
//   shared store tile[ty+j][tx]: one row, 32 consecutive words: 32 different banks, 1 wavefront.
//   shared load  tile[tx][ty+j]: word address tx*33 + c (padded): bank (tx + c) mod 32, all
//     different: 1 wavefront. Unpadded: tx*32 + c, bank c for every lane, 32 different
//     addresses in one bank: 32 wavefronts.
//   -> shared loads 131,072 requests (wavefronts 131,072 padded, 4,194,304 unpadded),
//      shared stores 131,072 requests, 131,072 wavefronts in both variants.
//   Measured on the H200 (ncu 2025.3.1): every global and shared request/sector count above
//   exactly; shared wavefronts only approximately and not the same from run to run (padded
//   ld/st 135,069/135,084 then 135,943/135,404; unpadded 4,215,757/143,445 then
//   4,214,276/141,694), so the manifest pins requests but not wavefronts.

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_tiled(const float *__restrict__ in, float *__restrict__ out, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM + 1];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

__global__ void transpose_tiled_unpadded(const float *__restrict__ in, float *__restrict__ out, int width, int height)
{
    __shared__ float tile[TILE_DIM][TILE_DIM];

    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    }

    __syncthreads();

    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}

#ifndef __CUDACC_RTC__
// Host side, as a real file has it; NVRTC (and the analysis, which only lowers __global__
// functions) ignore it.
#include <cstdio>
#include <cstdlib>

template <typename Kernel>
static float time_transpose(Kernel kernel, const float *in, float *out, int width, int height)
{
    dim3 grid(width / TILE_DIM, height / TILE_DIM);
    dim3 block(TILE_DIM, BLOCK_ROWS);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    kernel<<<grid, block>>>(in, out, width, height);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return ms;
}

int main(int argc, char **argv)
{
    int width = argc > 1 ? std::atoi(argv[1]) : 2048;
    int height = width;
    size_t bytes = (size_t)width * height * sizeof(float);
    float *in = nullptr, *out = nullptr;
    cudaMalloc(&in, bytes);
    cudaMalloc(&out, bytes);
    cudaMemset(in, 0, bytes);
    float padded = time_transpose(transpose_tiled, in, out, width, height);
    float unpadded = time_transpose(transpose_tiled_unpadded, in, out, width, height);
    std::printf("padded %.3f ms, unpadded %.3f ms\n", padded, unpadded);
    cudaFree(in);
    cudaFree(out);
    return 0;
}
#endif
