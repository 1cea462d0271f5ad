// gpu_warp.cu -- warp shuffles, votes, reductions and bit counts: no memory of their own, but
// their values feed addresses and branches, lane by lane.
//
// Hand derivation (grid 32 x 256 = 256 whole warps, n = 8,192, pointers 256-byte aligned):
//   warp_sum: in[i] 4 sectors per warp; the shuffle tree leaves the sum in lane 0, which alone
//     stores out[i / 32]: consecutive warps' lanes 0 write consecutive floats, 1 sector each.
//     load 256 / 1,024, store 256 / 256.
//   shfl_index: k = __shfl_down_sync(FULL, i, 16): lanes 0..15 get the index of lane l + 16,
//     lanes 16..31 keep their own (past the end). in[k * 8] is 32 bytes per index step: lanes
//     0..15 and 16..31 read the same 16 sectors: 16 per warp (4,096); out[i] 4 per warp.
//   ballot_compact: every 4th lane is kept; b = ballot of them (0x11111111), the rank
//     __popc(b & below) numbers the kept lanes 0..7: out[warp * 8 + rank] is 8 consecutive
//     floats, one aligned sector per warp (256 / 256); in[i] by 8 lanes at 16-byte steps spans
//     128 bytes: 4 sectors (256 / 1,024).
//   reduce_max: m = __reduce_max_sync(FULL, lane) = 31 in every lane: out[warp * 32 + m], one
//     sector per warp (256 / 256). activemask in the odd lanes is 0xAAAAAAAA: popc 16, the 16
//     odd lanes write flags[warp * 16 + popc - 16 + lane / 2] = 16 consecutive ints, 2 sectors.

#define FULL 0xffffffffu

__global__ void warp_sum(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int off = 16; off > 0; off /= 2) {
        v += __shfl_down_sync(FULL, v, off);
    }
    if ((threadIdx.x & 31) == 0) {
        out[i / 32] = v;
    }
}

__global__ void shfl_index(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int k = __shfl_down_sync(FULL, i, 16);
    out[i] = in[k * 8];
}

__global__ void ballot_compact(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    bool keep = (lane & 3) == 0;
    unsigned b = __ballot_sync(FULL, keep);
    if (keep) {
        int rank = __popc(b & ((1u << lane) - 1));
        out[(i / 32) * 8 + rank] = in[i];
    }
}

__global__ void reduce_max(float *out, int *flags)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int m = __reduce_max_sync(FULL, lane);
    out[(i / 32) * 32 + m] = 1.0f;
    if (lane & 1) {
        int c = __popc(__activemask());
        flags[(i / 32) * 16 + c - 16 + lane / 2] = c;
    }
}
