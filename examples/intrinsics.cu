// intrinsics.cu -- cache-operator intrinsics: __ldg, __ldcg, __ldcs and __stcs, __stwt.
//
// Demonstrates: the intrinsics are ordinary warp-level loads and stores for the sector count
// (an __ldcg load misses L1 but is still counted in the l1tex global sector metrics), with the
// address taken from the &p[...] argument.
//
// ldg_ldcg_stcs (grid 1024 x block 256 = 8,192 full warps):
//   __ldg(&a[i]):       aligned 128 bytes: 4 sectors.
//   __ldcg(&b[2*i]):    lanes 8 bytes apart over 256 aligned bytes: 8 sectors.
//   __stcs(&c[i], ...): 4 sectors.
//   loads 16,384 requests, 8,192 x 12 = 98,304 sectors; stores 8,192 / 32,768;
//   logical 262,144 x 12 = 3,145,728 bytes.
// ldcs_float4_stwt (grid 256 x block 256 = 2,048 warps):
//   __ldcs(&v[i]) on float4: 512 aligned bytes: 16 sectors; __stwt(&out[i], q) on float4: 16.
//   loads 2,048 / 32,768, stores 2,048 / 32,768, logical 65,536 x 32 = 2,097,152 bytes.

__global__ void ldg_ldcg_stcs(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = __ldg(&a[i]);
    float y = __ldcg(&b[2 * i]);
    __stcs(&c[i], x + y);
}

__global__ void ldcs_float4_stwt(const float4 *__restrict__ v, float4 *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 q = __ldcs(&v[i]);
    __stwt(&out[i], q);
}
