// cpp_pointers.cu -- pointers as values: the address space follows the pointer's origin.
//
// Demonstrates: a local pointer into `extern __shared__` memory (shared, not global), pointer
// parameters advanced in place (`A += ...`), a reference bound to an element (`float &b = B[k]`),
// and `reinterpret_cast` to `float4` (one 16-byte access per thread).
//
// Hand derivation:
// smem_local, grid 64 x block 256 (512 warps), 1024 bytes of dynamic shared memory:
//   in[i], out[i]: one request per warp, 32 consecutive floats = 4 sectors: 512 / 2,048 each.
//   s[threadIdx.x] store and s[blockDim.x - 1 - threadIdx.x] load: 32 distinct consecutive
//   words per warp, one per bank: 1 wavefront each: 512 requests / 512 wavefronts each.
//   logical: 16,384 x 4 x 2 = 131,072 bytes.
// row_scale, grid 64 x block 128, K = 512: each block walks its own row of 512 floats in 4
//   steps of 128 threads (4 warps): 16 warp-steps per block, 1,024 per launch, for A[k] and for
//   B[k]; rows start 2,048 bytes apart (sector aligned): 4 sectors each: 1,024 / 4,096 each.
//   logical: 64 x 512 x 4 x 2 = 262,144 bytes.
// copy4, grid 64 x block 256, n4 = 16,384: one float4 per thread in and out: 512 requests of
//   32 x 16 = 512 bytes = 16 sectors: 512 / 8,192 each; logical 16,384 x 16 x 2 = 524,288.

__global__ void smem_local(const float *in, float *out)
{
    extern __shared__ float smem[];
    float *s = smem;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = in[i];
    __syncthreads();
    out[i] = s[blockDim.x - 1 - threadIdx.x];
}

__global__ void row_scale(const float *A, float *B, int K)
{
    A += blockIdx.x * K;
    B += (size_t)blockIdx.x * K;
    for (int k = threadIdx.x; k < K; k += blockDim.x) {
        float &b = B[k];
        b = 2.0f * A[k];
    }
}

__global__ void copy4(const float *a, float *b, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4 *>(a)[i];
        reinterpret_cast<float4 *>(&b[4 * i])[0] = v;
    }
}
