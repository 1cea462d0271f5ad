// block2d_partial.cu -- a 2-D image kernel on a 24 x 4 block (96 threads = 3 warps), so warp
// boundaries cut image rows: out[y*width + x] = 2 * in[y*width + x] under a 2-D guard.
//
// Demonstrates: x-fastest linearisation (tid = tx + 24*ty) on a 2-D block whose x extent is not
// 32, and a guard that also cuts inside those split warps.
//
// Hand derivation: warp 0 = row ty=0 (tx 0..23) + row 1 (tx 0..7); warp 1 = row 1 (tx 8..23) +
// row 2 (tx 0..15); warp 2 = row 2 (tx 16..23) + row 3 (tx 0..23). A block's rows start at
// x0 = 24*bx floats = 96*bx bytes (a multiple of 32) and rows are width*4 bytes apart.
//   image2d_scale_1536x512 (grid 64 x 128): width*4 = 6144, a multiple of 32, so every row piece
//     is aligned: row 0 [0,96) = 3 sectors + row 1 [0,32) = 1; row 1 [32,96) = 2 + row 2 [0,64)
//     = 2; row 2 [64,96) = 1 + row 3 [0,96) = 3: 4 sectors per warp per access.
//     8,192 blocks x 3 warps = 24,576 requests per access, 98,304 sectors (= the image's
//     1536*512*4/32 sectors, as no sector is shared by two warps). logical 1536*512*8 = 6,291,456.
//   image2d_scale_1000x100 (grid 42 x 25, covers 1008 x 100): rows 4000 bytes = 125 sectors
//     apart; blocks bx < 41 as above (12 sectors per access per block). The last block column
//     (x0 = 984, 3936 bytes = 123 sectors, aligned) keeps tx 0..15 per row: warp 0 = 2 + 1,
//     warp 1 = 1 + 2, warp 2 = 0 + 2 sectors = 8 per block; all 3 warps still have lanes.
//     Per access: 25 x (41 x 12 + 8) = 12,500 sectors (= 1000*100*4/32), 1050 x 3 = 3,150
//     requests. logical 1000*100*8 = 800,000 bytes.

__global__ void image2d_scale(const float *in, float *out, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        out[y * width + x] = 2.0f * in[y * width + x];
    }
}
