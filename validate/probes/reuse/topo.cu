// topo.cu -- which SMs' L1 misses to one sector merge before L2 (by %smid), and for how long.
// Each launch: 1056 blocks of one warp (8 per SM). Blocks on SMs of the set read the same
// `nlines` lines, `iters` steps, one line per step; the SM `dsm` starts `delay` ns late; with
// `bg`, blocks on the other SMs read lines of their own meanwhile (unrelated traffic).
// L2 reads / (nlines x 4) = the number of SMs (or merge units) that reached L2.
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

__global__ void pick(const float *a, float *out, const int *inset, int dsm, unsigned long long delay, int iters,
                     int nlines, int bg)
{
    unsigned s = smid();
    int lane = threadIdx.x & 31;
    float acc = 0.0f;
    if (inset[s]) {
        if ((int)s == dsm) {
            unsigned long long t0 = gtime();
            while (gtime() - t0 < delay) {
            }
        }
        for (int i = 0; i < iters; ++i) acc += a[(long long)(i % nlines) * 32 + lane];
    } else if (bg) {
        for (int i = 0; i < iters; ++i) acc += a[(long long)(16384 + (blockIdx.x * 1024 + i) % 1000000) * 32 + lane];
    } else {
        return;
    }
    if (acc == 12345.0f) out[0] = acc;
}

int main()
{
    float *a, *o;
    int *dset;
    size_t bytes = (size_t)(16384 + 1000000 + 64) * 128;
    cudaMalloc(&a, bytes);
    cudaMemset(a, 0, bytes);
    cudaMalloc(&o, 4096);
    cudaMalloc(&dset, 256 * sizeof(int));
    char name[64], list[1024];
    int dsm, bg;
    unsigned long long delay;
    while (scanf("%63s %d %llu %d %1023s", name, &dsm, &delay, &bg, list) == 5) {
        int h[256] = {0};
        for (char *t = strtok(list, ","); t; t = strtok(nullptr, ",")) {
            char *dash = strchr(t, '-');
            int lo = atoi(t), hi = dash ? atoi(dash + 1) : lo;
            for (int k = lo; k <= hi && k < 256; ++k) h[k] = 1;
        }
        cudaMemcpy(dset, h, sizeof h, cudaMemcpyHostToDevice);
        pick<<<1056, 32>>>(a, o, dset, dsm, delay, 1024, 1024, bg);
        cudaError_t e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            fprintf(stderr, "%s\n", cudaGetErrorString(e));
            return 1;
        }
    }
    return 0;
}
