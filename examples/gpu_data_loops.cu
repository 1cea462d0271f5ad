// gpu_data_loops.cu -- loops and shared addresses that depend on values the source does not
// give: a spin on clock64() (moves no memory), a trip count read from memory, a shared table
// indexed by data.
//
// Demonstrates: a loop that moves no memory is summarised whatever its trip count (the counts
// do not depend on it); a trip count or a shared index read from an array follows the
// manifest's fill, exactly as a data-dependent global address does.
//
// Hand derivation (pointers 256-byte aligned, whole warps):
//   spin_then_store (grid 64 x 256): 512 warps spin until clock64() passes start + ticks, then
//     a[i] = 1.0f (32 x 4 bytes: 4 sectors per warp) and out[i] = now (32 x 8 bytes: 8 sectors
//     per warp): stores 1,024 requests, 512 x 12 = 6,144 sectors; no load.
//   len_loop (grid 32 x 256, n = 8,192, len = constant:4): 256 warps. len[i]: 4 sectors per
//     warp; the loop runs 4 times, in[k * 8192 + i] 4 sectors each; out[i] 4 sectors.
//     Loads 256 + 1,024 = 1,280 requests, 5,120 sectors; stores 256 / 1,024.
//   lookup_shared (grid 32 x 256): 256 warps, 32 blocks. Each thread writes t[threadIdx.x +
//     256 k], k = 0..3: 4 shared stores per warp (1,024), each 32 consecutive floats, 1
//     wavefront. idx[i]: 4 sectors per warp (1,024). t[(idx[i] * 32) & 1023]: one shared load
//     per warp (256). identity: lane l reads word 32 l mod 1024, every lane in bank 0 at a
//     different address: 32 wavefronts per warp (8,192). constant:3: every lane reads word 96,
//     a broadcast: 1 wavefront per warp (256). out[i]: 256 / 1,024.

__global__ void spin_then_store(long long *out, float *a, long long ticks)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long start = clock64();
    long long now;
    do {
        now = clock64();
    } while (now - start < ticks);
    a[i] = 1.0f;
    out[i] = now;
}

__global__ void len_loop(const int *len, const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < len[i]; k++) {
        s += in[k * n + i];
    }
    out[i] = s;
}

__global__ void lookup_shared(const int *idx, float *out)
{
    __shared__ float t[1024];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < 4; k++) {
        t[threadIdx.x + 256 * k] = (float)k;
    }
    __syncthreads();
    out[i] = t[(idx[i] * 32) & 1023];
}
