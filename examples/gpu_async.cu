// gpu_async.cu -- asynchronous global-to-shared copies (LDGSTS).
//
// Demonstrates: a copy is a row of its own (`op` async_copy) counted like a load of its width,
// in totals.global_async_copy and inside totals.global_load (the H200's load counters include
// LDGSTS). The pipeline's waits are barriers; the shared side is the H200's (measured).
//
// Hand derivation (grid 32 x 256 = 256 whole warps, pointers 256-byte aligned):
//   pipeline_copy4: 4 bytes per lane: 4 sectors per warp copied (256 / 1,024 async, and the
//     same in global_load); tile read back 256 LDS; out 256 / 1,024 stores.
//   pipeline_copy16: float4, 16 bytes per lane: 16 sectors per warp. A 16-byte copy bypasses
//     L1 (LDGSTS.BYPASS): in global_load (256 / 4,096) and global_async_copy_bypass, not in the
//     `ldgsts_cache_access` counters (0 there, measured on the H200).
//   cuda_pipeline_copy: cuda::memcpy_async of one float per thread through a thread-scope
//     cuda::pipeline: as pipeline_copy4.
//   cg_block_copy: cooperative_groups::memcpy_async(block, tile, in + block * 1024, 4096 bytes)
//     of floats is copied in 4-byte chunks (the float's alignment; nvcc's SASS is a loop of
//     4-byte LDGSTS), chunk r by rank r: 1,024 chunks per block, 4 per thread: 32 warp copies
//     per block, 4 sectors each: 1,024 / 4,096 async; cg::wait(block) then out[i] from the
//     tile, 4 floats per thread (1,024 / 4,096 stores).
//   cuda_block_copy16: cuda::memcpy_async(block, tile, src, cuda::aligned_size_t<16>(4096), bar)
//     on sm_90 is one bulk (TMA) copy (SYNCS and UBLKCP in the SASS): no L1 request, no LDGSTS
//     (measured: global load 0); bar.arrive_and_wait() then 4 stores per thread (1,024 / 4,096).

#include <cuda_pipeline.h>
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
#include <cuda/barrier>
namespace cg = cooperative_groups;

__global__ void pipeline_copy4(const float *in, float *out)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[i] = tile[threadIdx.x] * 2.0f;
}

__global__ void pipeline_copy16(const float4 *in, float4 *out)
{
    __shared__ float4 tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __pipeline_memcpy_async(&tile[threadIdx.x], &in[i], 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[i] = tile[threadIdx.x];
}

__global__ void cuda_pipeline_copy(const float *in, float *out)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    pipe.producer_acquire();
    cuda::memcpy_async(&tile[threadIdx.x], &in[i], sizeof(float), pipe);
    pipe.producer_commit();
    pipe.consumer_wait();
    __syncthreads();
    out[i] = tile[threadIdx.x] + 1.0f;
    pipe.consumer_release();
}

__global__ void cg_block_copy(const float *in, float *out)
{
    __shared__ float tile[1024];
    cg::thread_block block = cg::this_thread_block();
    cg::memcpy_async(block, tile, in + blockIdx.x * 1024, sizeof(float) * 1024);
    cg::wait(block);
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) {
        out[blockIdx.x * 1024 + k] = tile[k];
    }
}

__global__ void cuda_block_copy16(const float *in, float *out)
{
    __shared__ alignas(16) float tile[1024];
    __shared__ cuda::barrier<cuda::thread_scope_block> bar;
    auto block = cg::this_thread_block();
    if (block.thread_rank() == 0) {
        init(&bar, block.size());
    }
    block.sync();
    cuda::memcpy_async(block, tile, in + blockIdx.x * 1024, cuda::aligned_size_t<16>(sizeof(float) * 1024), bar);
    bar.arrive_and_wait();
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) {
        out[blockIdx.x * 1024 + k] = tile[k];
    }
}
