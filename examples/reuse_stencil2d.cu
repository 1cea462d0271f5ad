// reuse_stencil2d.cu -- 5-point stencil on an n x n grid of floats, interior points only.
//
// Demonstrates: the reuse class of a 2-D stencil: each input sector is read by its own row's
// warps (left, centre, right: one warp's shifted reads share sectors with its neighbours') and
// by the rows above and below, so most of the demand is served by L1 when those rows' blocks
// share an SM, else by L2; DRAM reads the input once.
//
// Hand derivation (interior rows 1..n-2, n - 2 of them; x0 the first column of a warp piece):
//   block 32 x 8: a warp is one row of 32 columns (n/32 per row). centre, up, down: 4 sectors;
//   left (x0-1..x0+30): 5, 4 at the first warp of a row (lane 0 idle); right (x0+1..x0+32): 5,
//   4 at the last (lane 31 idle). Per row: 5 requests per warp; sectors
//   3 x 4 x n/32 + 2 x (5 x (n/32 - 2) + 9); out 4 sectors per warp.
//   block 16 x 16: a warp is rows y, y+1 of 16 columns, every warp has an interior row; per
//   row piece centre, up, down 2 sectors, left and right 3 (2 at the edge piece).
//   Per row 3 x 2 x n/16 + 2 x (3 x (n/16 - 2) + 5).

__global__ void stencil5(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < n - 1 && y >= 1 && y < n - 1) {
        int i = y * n + x;
        out[i] = in[i] + in[i - 1] + in[i + 1] + in[i - n] + in[i + n];
    }
}
