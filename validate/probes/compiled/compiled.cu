// Kernels whose memory traffic is shaped by the compiler more than by the source: structure
// copies of several sizes and alignments, aggregated atomics, a shared accumulator the compiler
// keeps in a register, loops unrolled with remainders, a thread-local array indexed by data,
// byte loads, a warp-shuffle reduction. main() launches each once with the launch run.sh and
// the README give; every buffer starts zeroed (cudaMemset), idx holds i % 8.
#include <cstdio>
#include <cuda_runtime.h>

struct F3 { float x, y, z; };
struct alignas(16) F4 { float x, y, z, w; };
struct D3 { double a; float b; int c; };
struct P5 { char c[5]; };
struct S24 { double a, b, c; };
struct alignas(8) H6 { short a, b, c; };

template <typename T>
__global__ void copy_struct(const T *in, T *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i];
}

__global__ void count_zero(const int *in, int *counter, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && in[i] == 0) atomicAdd(counter, 1);
}

__global__ void sum_float(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(out, in[i]);
}

__global__ void shared_acc(const float *in, float *out, int iters) {
    __shared__ float acc[256];
    int t = threadIdx.x;
    acc[t] = 0.0f;
    for (int k = 0; k < iters; ++k) acc[t] += in[(blockIdx.x * iters + k) * blockDim.x + t];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = acc[t] + acc[(t + 1) % blockDim.x];
}

__global__ void tri_sum(const float *in, float *out) {
    float s = 0.0f;
    for (int j = 0; j <= (int)(threadIdx.x & 31); ++j) s += in[j * 32 + (threadIdx.x & 31)];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void stride_loop(const float *in, float *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += 512) out[i] = 2.0f * in[i];
}

__global__ void local_pick(const float *in, const int *idx, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float t[8];
    for (int j = 0; j < 8; ++j) t[j] = in[i * 8 + j];
    out[i] = t[idx[i] & 7];
}

__global__ void bytes_xor(const unsigned char *in, unsigned char *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i + 1 < n) out[i] = in[i] ^ in[i + 1];
}

__global__ void warp_sum(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = i < n ? in[i] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);
}

__global__ void reload(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = a[i];
        out[i + n] = a[i] * 2.0f;
    }
}

__global__ void hist_shared(const int *idx, int *hist, int n) {
    __shared__ int bins[8];
    if (threadIdx.x < 8) bins[threadIdx.x] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[idx[i] & 7], 1);
    __syncthreads();
    if (threadIdx.x < 8) atomicAdd(&hist[threadIdx.x], bins[threadIdx.x]);
}

__global__ void invariant_restrict(const float *__restrict__ w, const float *__restrict__ x, float *__restrict__ out, int j, int n) {
    int lane = threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; ++k) s += w[j] * x[k * blockDim.x + lane];
    out[blockIdx.x * blockDim.x + lane] = s;
}

__global__ void invariant_alias(const float *w, float *out, int j, int n) {
    int lane = threadIdx.x;
    for (int k = 0; k < n; ++k) out[k * blockDim.x + lane] = w[j] * (float)k;
}

__global__ void pair_members(const float2 *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].x + p[i].y;
}

struct P2 { float x, y; };
__global__ void pair_struct(const P2 *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = p[i].x + p[i].y;
}

__global__ void both_branches(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s;
    if (i & 1) s = a[i] * 2.0f;
    else s = a[i] + 1.0f;
    out[i] = s;
}

__global__ void adjacent_scalars(const float *a, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[2 * i] + a[2 * i + 1];
}

__global__ void switch_loads(const int *sel, const float *a, const float *b, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v;
    switch (sel[i] & 3) {
    case 0: v = a[i]; break;
    case 1: v = b[i]; break;
    case 2: v = a[i] + b[i]; break;
    default: v = 0.0f;
    }
    out[i] = v;
}

__global__ void reread_after_sync(const float *in, float *out) {
    __shared__ float s[256];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    float a = s[255 - t];
    __syncthreads();
    s[t] = a * 2.0f;
    __syncthreads();
    out[blockIdx.x * 256 + t] = s[t] + s[255 - t];
}

__global__ void unroll_one(const float *in, float *out, int n) {
    float s = 0.0f;
#pragma unroll 1
    for (int j = threadIdx.x & 31; j < n; j += 32) s += in[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void const_loop(const float *in, float *out) {
    float s = 0.0f;
    for (int k = 0; k < 8; ++k) s += in[k * 1024 + blockIdx.x * blockDim.x + threadIdx.x];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

static void *buf(size_t bytes) {
    void *p = nullptr;
    cudaMalloc(&p, bytes);
    cudaMemset(p, 0, bytes);
    return p;
}

__global__ void fill_mod8(int *idx, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) idx[i] = i % 8;
}

int main() {
    const int n = 10000;
    const size_t big = 64 << 20;
    void *a = buf(big), *b = buf(big);
    int *idx = (int *)buf(n * sizeof(int));
    fill_mod8<<<(n + 255) / 256, 256>>>(idx, n);
    copy_struct<F3><<<40, 256>>>((const F3 *)a, (F3 *)b, n);
    copy_struct<F4><<<40, 256>>>((const F4 *)a, (F4 *)b, n);
    copy_struct<D3><<<40, 256>>>((const D3 *)a, (D3 *)b, n);
    copy_struct<P5><<<40, 256>>>((const P5 *)a, (P5 *)b, n);
    copy_struct<S24><<<40, 256>>>((const S24 *)a, (S24 *)b, n);
    copy_struct<H6><<<40, 256>>>((const H6 *)a, (H6 *)b, n);
    count_zero<<<40, 256>>>((const int *)a, (int *)b, n);
    sum_float<<<40, 256>>>((const float *)a, (float *)b, n);
    shared_acc<<<16, 256>>>((const float *)a, (float *)b, 50);
    tri_sum<<<8, 256>>>((const float *)a, (float *)b);
    stride_loop<<<2, 256>>>((const float *)a, (float *)b, n);
    local_pick<<<40, 256>>>((const float *)a, idx, (float *)b, n);
    bytes_xor<<<40, 256>>>((const unsigned char *)a, (unsigned char *)b, n);
    warp_sum<<<40, 256>>>((const float *)a, (float *)b, n);
    reload<<<40, 256>>>((const float *)a, (float *)b, n);
    hist_shared<<<40, 256>>>(idx, (int *)b, n);
    invariant_restrict<<<8, 256>>>((const float *)a, (const float *)b + (8 << 20), (float *)b, 5, 40);
    invariant_alias<<<8, 256>>>((const float *)a, (float *)b, 5, 40);
    pair_members<<<40, 256>>>((const float2 *)a, (float *)b, n);
    pair_struct<<<40, 256>>>((const P2 *)a, (float *)b, n);
    both_branches<<<40, 256>>>((const float *)a, (float *)b, n);
    adjacent_scalars<<<40, 256>>>((const float *)a, (float *)b, n);
    switch_loads<<<40, 256>>>(idx, (const float *)a, (const float *)a + (4 << 20), (float *)b, n);
    reread_after_sync<<<16, 256>>>((const float *)a, (float *)b);
    unroll_one<<<4, 256>>>((const float *)a, (float *)b, 1000);
    const_loop<<<4, 256>>>((const float *)a, (float *)b);
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
