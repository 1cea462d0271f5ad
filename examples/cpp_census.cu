// cpp_census.cu -- two idioms of public CUDA C++ (cuda-samples' reduction and its
// SharedMemory<T> class; file-scope __device__ variables as in EGLStream and cdpSimplePrint).
//
// Demonstrates: a class template whose conversion operator returns the `extern __shared__`
// array (`T *sdata = SharedMemory<T>();`, with an explicit specialization for double) gives a
// pointer into shared memory; `__device__` variables are global memory of their own, read,
// written and updated atomically like a pointer parameter's buffer.
//
// Hand derivation:
// reduce_sm<float> (grid 1024 x block 256 = 8 warps per block, n = 262,144, 1,024 bytes of
//   dynamic shared memory): the kernel of reduce_shared.cu through SharedMemory<float>:
//   global: g_idata[i] 8,192 requests of 4 sectors = 32,768; g_odata[blockIdx.x] by thread 0:
//           1,024 / 1,024. logical 262,144 x 4 + 1,024 x 4 = 1,052,672.
//   shared: per block 8 stores of sdata[tid]; tree s = 128 .. 1: warps with a lane tid < s
//           4, 2, 1, 1, 1, 1, 1, 1 = 12, each two loads and one store; sdata[0] reloaded after
//           the barrier: 1 load. 25 loads, 20 stores per block: 25,600 / 20,480, one
//           wavefront each (consecutive 4-byte words).
// reduce_sm<double> (same launch, 2,048 bytes of dynamic shared memory; SharedMemory<double>,
//   the specialization, gives the `__smem_d` array):
//   global: 8 bytes a lane: 256 bytes per warp = 8 sectors: 8,192 / 65,536; g_odata 1,024 /
//           1,024 (8 bytes, one sector). logical 262,144 x 8 + 1,024 x 8 = 2,105,344.
//   shared: requests as for float (25,600 loads, 20,480 stores). 8-byte accesses are served in
//           phases of 16 lanes (128 bytes, the 32 banks once): a full warp needs 2 wavefronts,
//           16 lanes or fewer 1. Per block per access: tree 4 x 2 + 2 x 2 + 1 x 2 (s = 128, 64,
//           32) + 5 x 1 (s = 16 .. 1) = 19; initial stores 8 x 2 = 16; final load 1.
//           loads 2 x 19 + 1 = 39, stores 16 + 19 = 35 per block: 39,936 / 35,840.
// scale_count (grid 1024 x block 256 = 8,192 warps):
//   in[i], out[i]: 8,192 requests of 4 sectors each: 32,768 each way.
//   g_scale: every lane reads the same 4 bytes: 8,192 requests of 1 sector.
//   g_partial[blockIdx.x] by thread 0: 1,024 requests of 1 sector.
//   atomicAdd(&g_count, 1u) by lane 0 of each warp, result unused: RED 8,192 / 8,192.
//   Every __device__ access is one lane's or one word: its count does not depend on where nvcc
//   places the variable. logical loads 2 x 262,144 x 4, stores 262,144 x 4 + 1,024 x 4:
//   3,149,824.

template <class T> struct SharedMemory
{
    __device__ inline operator T *()
    {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }

    __device__ inline operator const T *() const
    {
        extern __shared__ int __smem[];
        return (T *)__smem;
    }
};

template <> struct SharedMemory<double>
{
    __device__ inline operator double *()
    {
        extern __shared__ double __smem_d[];
        return (double *)__smem_d;
    }

    __device__ inline operator const double *() const
    {
        extern __shared__ double __smem_d[];
        return (double *)__smem_d;
    }
};

template <class T> __global__ void reduce_sm(const T *g_idata, T *g_odata, unsigned int n)
{
    T *sdata = SharedMemory<T>();
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        g_odata[blockIdx.x] = sdata[0];
    }
}

template __global__ void reduce_sm<float>(const float *, float *, unsigned int);
template __global__ void reduce_sm<double>(const double *, double *, unsigned int);

__device__ unsigned int g_count;
__device__ float g_scale;
__device__ float g_partial[1024];

__global__ void scale_count(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i] * g_scale;
    out[i] = v;
    if (threadIdx.x == 0) {
        g_partial[blockIdx.x] = v;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&g_count, 1u);
    }
}
