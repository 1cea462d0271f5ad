// l2_boundary.cu -- an elementwise op at the L2 boundary (the seed's in-place versus two-buffer
// scale), and a sum that reads every element twice, half a launch apart.
//
// Demonstrates: what reaches DRAM depends on the L2 size (62,914,560 bytes on the H200), not on
// the sector demand. float4 accesses keep the reference engine fast: one warp moves 512 bytes
// (16 sectors) per access.
//
// Hand derivation (block 256, n4 float4 elements, grid n4 / 256; the cache model's rules: an
// LRU L2 of 40 MiB, 327,680 lines of 128 bytes, two thirds of the H200's 60 MiB as measured by
// shifted_sum; a launch also reads 88 DRAM sectors of its own):
//   scale_two_buffer / scale_in_place: loads = stores = n4 / 2 sectors (16 per warp), no sector
//   read twice: L1 hits 0, L2 reads n4 / 2, DRAM reads n4 / 2 + 88.
//   DRAM writes: 0 while every line fits in L2. Above it, LRU keeps the last 327,680 lines
//   touched: in place, all dirty, so n4 / 2 - 327,680 x 4 sectors are written back during the
//   kernel; two-buffer, the dirty share follows the waves of 1,056 blocks the model runs in
//   step, each touching its input lines, then its output lines (worked in the manifest).
//   shifted_sum: y[i] = x[i] + x[i +- n4/2]. The second half of the launch re-reads what the
//   first half read; in between it touches all of x and half of y (1.5 x 16 x n4 bytes): when
//   that fits in L2 the re-reads hit and DRAM reads are x's n4 / 2 sectors, else they all miss
//   and DRAM reads are n4 sectors.

__global__ void scale_two_buffer(const float4 *__restrict__ in, float4 *__restrict__ out, float a, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = in[i];
        v.x *= a;
        v.y *= a;
        v.z *= a;
        v.w *= a;
        out[i] = v;
    }
}

__global__ void scale_in_place(float4 *__restrict__ x, float a, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = x[i];
        v.x *= a;
        v.y *= a;
        v.z *= a;
        v.w *= a;
        x[i] = v;
    }
}

__global__ void shifted_sum(const float4 *__restrict__ x, float4 *__restrict__ y, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int h = n4 / 2;
    if (i < n4) {
        int j = i < h ? i + h : i - h;
        float4 p = x[i];
        float4 q = x[j];
        p.x += q.x;
        p.y += q.y;
        p.z += q.z;
        p.w += q.w;
        y[i] = p;
    }
}
