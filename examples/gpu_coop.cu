// gpu_coop.cu -- cooperative groups: ranks, sizes, tiles, group reductions and coalesced groups.
//
// Demonstrates: the groups move no memory; their ranks become thread indices, their sync() a
// barrier, their shuffles lane-by-lane values. A group passed to a __device__ function is bound
// to the group the call passes.
//
// Hand derivation (grid 32 x 256 = 256 whole warps, pointers 256-byte aligned):
//   block_copy: i = group_index().x * size() + thread_rank() = the usual global index:
//     in and out 4 sectors per warp: 256 / 1,024 each.
//   tile_reduce: tile32.thread_rank() == 0 stores the tile's cg::reduce of in[i] to
//     out[block * 8 + meta_group_rank()]: consecutive floats, 1 sector per warp (256 / 256);
//     in[i] 256 / 1,024.
//   tile16_ranks: tiles of 16: lanes 0 and 16 of each warp (rank 0) store to
//     out[block * 16 + meta_group_rank()], two adjacent floats: 1 sector per warp (256 / 256).
//   shared_reduce: the cuda-samples reduce_sum over a thread_group bound to the block: for
//     i = 128, 64, ..., 1 every thread stores temp[rank] (8 warps x 8 rounds = 64 STS per block,
//     2,048 in all, one wavefront each) and the lanes with rank < i load temp[rank + i]: 4 warps
//     for 128, 2 for 64, then 1 for each of 32 .. 1: 12 per block, 384 in all. Global: in
//     256 / 1,024; out[block] by rank 0 only: 32 requests, 32 sectors.
//   coalesced_odd: in the even-index branch, a coalesced group of 16 lanes: thread_rank 0..15;
//     out[warp * 16 + rank]: 16 consecutive floats, 2 sectors per warp (256 / 512); in[i] by
//     16 lanes at 8-byte steps: 4 sectors (256 / 1,024).

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

__global__ void block_copy(const float *in, float *out)
{
    cg::thread_block block = cg::this_thread_block();
    int i = block.group_index().x * block.size() + block.thread_rank();
    out[i] = in[i];
}

__global__ void tile_reduce(const float *in, float *out)
{
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = cg::reduce(tile, in[i], cg::plus<float>());
    if (tile.thread_rank() == 0) {
        out[blockIdx.x * 8 + tile.meta_group_rank()] = s;
    }
}

__global__ void tile16_ranks(float *out)
{
    auto block = cg::this_thread_block();
    auto t16 = cg::tiled_partition<16>(block);
    if (t16.thread_rank() == 0) {
        out[blockIdx.x * 16 + t16.meta_group_rank()] = 1.0f;
    }
}

__device__ float reduce_sum(cg::thread_group g, float *temp, float val)
{
    int lane = g.thread_rank();
    for (int i = g.size() / 2; i > 0; i /= 2) {
        temp[lane] = val;
        g.sync();
        if (lane < i) {
            val += temp[lane + i];
        }
        g.sync();
    }
    return val;
}

__global__ void shared_reduce(const float *in, float *out)
{
    __shared__ float temp[256];
    cg::thread_block block = cg::this_thread_block();
    float v = in[block.group_index().x * block.size() + block.thread_rank()];
    float s = reduce_sum(block, temp, v);
    if (block.thread_rank() == 0) {
        out[blockIdx.x] = s;
    }
}

__global__ void coalesced_odd(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i % 2 == 0) {
        cg::coalesced_group g = cg::coalesced_threads();
        out[(i / 32) * 16 + g.thread_rank()] = in[i];
    }
}
