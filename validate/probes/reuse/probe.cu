// probe.cu -- measurements behind the cache model's placement and in-flight merging rules.
//
// Mode "place": per block, the SM it ran on (%smid) and its start and end on the global timer;
// every block spins a fixed time so that the order blocks are dealt to SMs, how many run on an
// SM at once and when the next wave starts can be read off.
// Mode "share": every warp reads one 128-byte line per step; `boff` decides whether blocks read
// the same line at the same step (0) or different lines; `warps` how many warps of a block read
// it together. Run under Nsight Compute: L1 misses against L2 reads show what merges in flight.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned long long gtime() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__global__ void place(unsigned long long *out, unsigned long long spin_ns)
{
    unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned long long t0 = gtime();
    __syncthreads();
    while (gtime() - t0 < spin_ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        out[4 * b] = smid();
        out[4 * b + 1] = t0;
        out[4 * b + 2] = gtime();
        out[4 * b + 3] = b;
    }
}

// Line of step i for block b: (b * boff + i) mod nlines. Each warp reads the 32 floats of it.
__global__ void share(const float *a, float *out, int boff, int iters, int nlines)
{
    int lane = threadIdx.x & 31;
    float s = 0.0f;
    for (int i = 0; i < iters; ++i) {
        long long line = ((long long)blockIdx.x * boff + i) % nlines;
        s += a[line * 32 + lane];
    }
    if (s == 12345.0f) out[0] = s;
}

__global__ void share_cg(const float *a, float *out, int boff, int iters, int nlines)
{
    int lane = threadIdx.x & 31;
    float s = 0.0f;
    for (int i = 0; i < iters; ++i) {
        long long line = ((long long)blockIdx.x * boff + i) % nlines;
        s += __ldcg(&a[line * 32 + lane]);
    }
    if (s == 12345.0f) out[0] = s;
}

// Same lines, but block b starts after b * delay_ns: how close in time must two SMs' misses be
// to merge.
__global__ void share_late(const float *a, float *out, int iters, int nlines, unsigned long long delay_ns)
{
    int lane = threadIdx.x & 31;
    unsigned long long t0 = gtime();
    while (gtime() - t0 < delay_ns * blockIdx.x) {
    }
    float s = 0.0f;
    for (int i = 0; i < iters; ++i) {
        s += a[(i % nlines) * 32 + lane];
    }
    if (s == 12345.0f) out[0] = s;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (!strcmp(argv[1], "place")) {
        // place GX GY BX BY SPIN_NS
        int gx = atoi(argv[2]), gy = atoi(argv[3]), bx = atoi(argv[4]), by = atoi(argv[5]);
        unsigned long long spin = atoll(argv[6]);
        size_t n = (size_t)gx * gy;
        unsigned long long *d;
        cudaMalloc(&d, n * 32);
        place<<<dim3(gx, gy), dim3(bx, by)>>>(d, spin); // warm-up
        cudaDeviceSynchronize();
        place<<<dim3(gx, gy), dim3(bx, by)>>>(d, spin);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
        unsigned long long *h = (unsigned long long *)malloc(n * 32);
        cudaMemcpy(h, d, n * 32, cudaMemcpyDeviceToHost);
        unsigned long long tmin = ~0ull;
        for (size_t b = 0; b < n; ++b) tmin = h[4 * b + 1] < tmin ? h[4 * b + 1] : tmin;
        for (size_t b = 0; b < n; ++b)
            printf("%d,%d,%d,%d,%llu,%llu,%llu,%llu\n", gx, gy, bx, by, h[4 * b + 3], h[4 * b], h[4 * b + 1] - tmin,
                   h[4 * b + 2] - tmin);
        return 0;
    }
    // share: a list of launches, one per line on stdin: KIND GRID WARPS BOFF ITERS NLINES DELAY
    float *a, *o;
    cudaMalloc(&a, 64 << 20);
    cudaMemset(a, 0, 64 << 20);
    cudaMalloc(&o, 4096);
    char kind[16];
    int grid, warps, boff, iters, nlines;
    unsigned long long delay;
    while (scanf("%15s %d %d %d %d %d %llu", kind, &grid, &warps, &boff, &iters, &nlines, &delay) == 7) {
        if (!strcmp(kind, "share")) share<<<grid, warps * 32>>>(a, o, boff, iters, nlines);
        else if (!strcmp(kind, "cg")) share_cg<<<grid, warps * 32>>>(a, o, boff, iters, nlines);
        else share_late<<<grid, warps * 32>>>(a, o, iters, nlines, delay);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) { fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; }
    }
    return 0;
}
