// l1_reuse.cu -- a vertical 3-point stencil: the rows above and below are loaded by other warps
// of the same block, so the block's shape decides what the L1 serves.
//
// Demonstrates: the same kernel and the same sector demand, with a 32 x 8 block (7 of every 10
// rows a warp needs were loaded by its block's other warps) and a 32 x 1 block (no reuse: every
// load sector goes to L2).
//
// Hand derivation (n = 1024, rows y = 1 .. 1022 active, every warp is 32 floats of one row,
// 128-byte aligned: 4 sectors per access, 3 loads):
//   warps: 1,022 rows x 32 = 32,704 active; load sectors 32,704 x 12 = 392,448; store 130,816.
//   32 x 8 blocks (grid 32 x 128): a block needs rows y0-1 .. y0+8, 10 rows x 4 = 40 sectors
//   (9 rows, 36 sectors, in the first and last block row, which have 7 active warps). Blocks
//   on one SM (b mod 132 = (bx + 4k, by + 4k...)) never share rows and columns.
//   L2 reads 4,032 x 40 + 64 x 36 = 163,584; L1 hits 392,448 - 163,584 = 228,864.
//   32 x 1 blocks (grid 32 x 1024): a block is one warp; L1 hits 0, L2 reads 392,448.
//   Both: DRAM reads 131,072 + 88 = 131,160, writes 0.

__global__ void column3(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y >= 1 && y < n - 1) {
        int c = y * n + x;
        out[c] = in[c - n] + in[c] + in[c + n];
    }
}
