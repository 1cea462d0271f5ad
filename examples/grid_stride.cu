// grid_stride.cu -- a grid-stride loop: a fixed grid (132 blocks, one per H200 SM) walks an
// array of any length.
//
// Demonstrates: a loop whose trip count differs between warps but never inside a warp (n and
// the stride 132*256 = 33,792 are multiples of 32, so the loop exit always falls on a warp
// boundary), with size_t indices.
//
// Hand derivation: every warp-iteration covers 32 consecutive, 128-byte aligned elements, all
// active or all past n. Warp-iterations with work = n / 32, however they are spread over warps.
//   grid_stride_1m: n = 1,048,576: 32,768 warp-iterations; in[i] load 4 sectors, out[i] store 4.
//     loads 32,768 / 131,072, stores 32,768 / 131,072, logical 8 x n = 8,388,608 bytes.
//   grid_stride_small: n = 4,096 < 33,792: only the first 16 blocks have any lane below n
//     (block b covers i = 256b .. 256b+255 in its first iteration): 128 warp-iterations.
//     loads 128 / 512, stores 128 / 512, logical 32,768.

__global__ void scale_grid_stride(const float *in, float *out, size_t n)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = 3.0f * in[i];
    }
}
