// ternary.cu -- `?:` choosing between two loads, and `?:` choosing an address for one load.
//
// Demonstrates: each arm of a ternary is evaluated only for its own lanes; an address select
// inside one access splits a warp over two places.
//
// select_load (grid 1024 x block 256 = 8,192 full warps; b is 4 bytes past a sector):
//   (i & 32) is the same for all lanes of a warp (warps are 32-aligned runs of i), so odd warps
//   run only the a[i] load (aligned: 4 sectors) and even warps only the b[i] load (5 sectors).
//   loads 8,192 requests, 4,096 x 4 + 4,096 x 5 = 36,864 sectors; stores 8,192 / 32,768;
//   logical 262,144 x 8 = 2,097,152 bytes.
// select_address (same launch): odd lanes read in[i] (16 floats at 8-byte steps over the
//   warp's aligned 128 bytes: 4 sectors), even lanes in[i + 4096] (4096 floats = 16 KiB
//   further, again 4 sectors): one request, 8 sectors. The `in` buffer needs 266,240 floats.
//   loads 8,192 / 65,536, stores 8,192 / 32,768, logical 2,097,152 bytes.

__global__ void select_load(const float *a, const float *b, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = (i & 32) ? a[i] : b[i];
    out[i] = v;
}

__global__ void select_address(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[(i & 1) ? i : i + 4096];
}
