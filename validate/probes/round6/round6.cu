// Kernels of census round 6 whose source the front end used to misread or refuse: a reduction
// through cuda-samples' `SharedMemory<T>` (a reference returned by `operator[]`), a null check
// of a pointer parameter, a loop bounded by a `__constant__` scalar set with
// cudaMemcpyToSymbol, stores through functions returning references, and a member of a
// structure a call returns. main() launches each once; run.sh counts them under Nsight Compute.
#include <cstdio>
#include <cuda_runtime.h>

template <typename T> struct SharedMemory {
    __device__ T &operator[](int i) {
        extern __shared__ T s_arr[];
        return s_arr[i];
    }
};

template <typename Real> __device__ Real reduce_sum(Real in) {
    SharedMemory<Real> sdata;
    unsigned ltid = threadIdx.x;
    sdata[ltid] = in;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (ltid < s) sdata[ltid] += sdata[ltid + s];
        __syncthreads();
    }
    return sdata[0];
}

__global__ void shared_memory_reduce(const float *paths, float *values) {
    float sum = reduce_sum<float>(paths[blockIdx.x * blockDim.x + threadIdx.x]);
    if (threadIdx.x == 0) values[blockIdx.x] = sum;
}

__global__ void null_check(const float *p, float *out) {
    const float s = p == nullptr ? 0.f : p[blockIdx.x];
    if (!p) return;
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__constant__ int c_n;
__constant__ float c_w[4];
__global__ void constant_bound(float *a) {
    for (int i = threadIdx.x; i < c_n; i += blockDim.x) a[i] = c_w[1];
}

struct V {
    float *p;
    __device__ float &at(int i) { return p[i]; }
};
__device__ float &get(float *p, int i) { return p[i]; }
__global__ void reference_places(float *a) {
    V v;
    v.p = a;
    v.at(threadIdx.x) = 1.0f;
    get(a, threadIdx.x + 32) += 2.0f;
}

struct C {
    float r, i;
};
__device__ C c_mul(C a, C b) {
    C c;
    c.r = a.r * b.r - a.i * b.i;
    c.i = a.r * b.i + a.i * b.r;
    return c;
}
__global__ void call_member(const C *p, float *out) {
    float s = 0;
    C a = p[threadIdx.x];
    s += (c_mul(a, a)).r;
    s += c_mul(a, a).i;
    out[threadIdx.x] = s;
}

int main() {
    float *a, *b;
    cudaMalloc(&a, 1 << 20);
    cudaMalloc(&b, 1 << 20);
    cudaMemset(a, 0, 1 << 20);
    cudaMemset(b, 0, 1 << 20);
    int n = 100;
    cudaMemcpyToSymbol(c_n, &n, sizeof(int));
    shared_memory_reduce<<<4, 128, 128 * sizeof(float)>>>(a, b);
    null_check<<<4, 32>>>(a, b);
    constant_bound<<<1, 32>>>(b);
    reference_places<<<1, 32>>>(b);
    call_member<<<1, 32>>>((const C *)a, b);
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(e));
    return e != cudaSuccess;
}
