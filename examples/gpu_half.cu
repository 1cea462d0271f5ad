// gpu_half.cu -- half precision, bfloat16 and vector types: one access of the type's width.
//
// Hand derivation (grid 32 x 256 = 256 whole warps, pointers 256-byte aligned):
//   half2_scale: __half2 is 4 bytes: 32 lanes read and write 128 bytes, 4 sectors per warp
//     each way: 256 / 1,024 load and store.
//   bf16_double: __nv_bfloat16 is 2 bytes: 64 bytes per warp, 2 sectors each way (512).
//   half2_to_float2: loads __half2 (4 sectors per warp), stores float2 (8 bytes per lane:
//     8 sectors per warp, 2,048).
//   bf162_pack: loads two floats per lane as a float2 (8 sectors per warp), stores a
//     __nv_bfloat162 (4 bytes, 4 sectors per warp).
//   half_cast_view: the __half array read through a reinterpret_cast to __half2: 4 bytes per
//     lane, 4 sectors per warp; the float out 4 sectors per warp.

#include <cuda_fp16.h>
#include <cuda_bf16.h>

__global__ void half2_scale(const __half2 *a, __half2 *c, float s)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 k = __float2half2_rn(s);
    c[i] = __hmul2(a[i], k);
}

__global__ void bf16_double(const __nv_bfloat16 *x, __nv_bfloat16 *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = __float2bfloat16(__bfloat162float(x[i]) * 2.0f);
}

__global__ void half2_to_float2(const __half2 *h, float2 *f)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    f[i] = __half22float2(h[i]);
}

__global__ void bf162_pack(const float2 *in, __nv_bfloat162 *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float2 v = in[i];
    out[i] = __floats2bfloat162_rn(v.x, v.y);
}

__global__ void half_cast_view(const __half *h, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __half2 p = reinterpret_cast<const __half2 *>(h)[i];
    out[i] = __low2float(p) + __high2float(p);
}
