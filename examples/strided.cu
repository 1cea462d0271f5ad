// strided.cu -- out[i] = a[i * stride]: the cost of a constant stride between lanes.
//
// Demonstrates: sectors per request growing with the stride until every lane has its own sector.
//
// Hand derivation (grid 256 x block 256 = 65,536 threads = 2,048 full warps; floats):
//   Lane l of warp w reads byte 4*stride*(32w + l). The warp starts at 128*stride*w, a multiple
//   of 32 for every integer stride, and spans 4*stride*31 + 4 bytes.
//   stride 2:  lanes 8 bytes apart, 256 bytes, every sector hit: 8 sectors.
//   stride 3:  lanes 12 bytes apart (< 32, so no sector is skipped), last byte 375: 12 sectors.
//   stride 8:  lanes 32 bytes apart: one sector each, 32 sectors.
//   stride 32: lanes 128 bytes apart: 32 sectors (same count, 4x the span).
//   The store out[i] is contiguous: 4 sectors per warp.
//   Totals: loads 2,048 requests and 2,048 x {8, 12, 32, 32} = {16,384, 24,576, 65,536, 65,536}
//   sectors; stores 2,048 requests, 8,192 sectors; logical 65,536 x 8 = 524,288 bytes.

__global__ void strided(const float *__restrict__ a, float *__restrict__ out, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[i * stride];
}
