// lane_perm.cu -- lanes of a warp reading the same 128 bytes in another order, or one address.
//
// Demonstrates: lane order does not matter, alignment does (the seed lesson's permutation rule).
//
// Hand derivation (grid 1024 x block 256 = 262,144 threads = 8,192 full warps):
//   base = i - lane is the warp's first element, 32*w, so a[base + p(lane)] for any permutation
//   p of 0..31 reads the same aligned 128 bytes as a[i]: 4 sectors. The store out[i]: 4 sectors.
//   reversed (31 - lane), xor (lane ^ 5), multiplied ((lane * 7) % 32, 7 odd so a permutation):
//     loads 8,192 requests / 32,768 sectors, stores 8,192 / 32,768, logical 262,144 x 8 = 2,097,152.
//   reversed with a 4 bytes past a sector (lane_reversed_offset4): the span 4..131 covers 5 sectors:
//     loads 8,192 x 5 = 40,960.
//   broadcast a[base]: all lanes one word: 1 sector per warp, loads 8,192 sectors.

__global__ void lane_reversed(const float *__restrict__ a, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x % warpSize;
    int base = i - lane;
    out[i] = a[base + 31 - lane];
}

__global__ void lane_xor(const float *__restrict__ a, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane = threadIdx.x & 31u;
    int base = i - (int)lane;
    out[i] = a[base + (int)(lane ^ 5u)];
}

__global__ void lane_mul7(const float *__restrict__ a, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int base = i - lane;
    out[i] = a[base + (lane * 7) % 32];
}

__global__ void lane_broadcast(const float *__restrict__ a, float *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int base = i & ~31;
    out[i] = a[base];
}
