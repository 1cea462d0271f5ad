// transpose_naive.cu -- out[col * rows + row] = in[row * cols + col] on a 2-D launch.
//
// Demonstrates: reading a 2-D access as a 1-D address (the seed's transpose trap), a 2-D grid,
// and a 2-D guard that leaves the last block column with 8 active lanes per warp.
//
// Hand derivation (block 32 x 8: a warp is one threadIdx.y row of 32 consecutive columns):
//   read  in[row*cols + col]: 32 consecutive floats; the row starts at 4*row*cols bytes and the
//         warp at column 32*bx, so with 4*cols a multiple of 32 the 128 bytes are aligned: 4 sectors.
//   write out[col*rows + row]: lanes 4*rows bytes apart (>= 32): one sector per active lane.
//   transpose_naive_2048: rows = cols = 2048, grid 64 x 256: 2048*2048/32 = 131,072 warps.
//     loads 131,072 requests, 524,288 sectors; stores 131,072 requests, 4,194,304 sectors
//     (36 sectors per warp, as in the seed lesson); logical 8 x 2048^2 = 33,554,432 bytes.
//   transpose_naive_1000: rows = cols = 1000, grid 32 x 125 covers 1024 x 1000. Per row: 31 full
//     warps and one warp (columns 992..1023) with 8 active lanes (992..999). Rows start at
//     4000*row bytes (= 125 sectors), so all reads are aligned: 31 x 4 + 1 = 125 sectors per row,
//     writes 31 x 32 + 8 = 1000 per row. 1000 rows: 32,000 requests each,
//     read 125,000 sectors, write 1,000,000 sectors, logical 8 x 10^6 = 8,000,000 bytes.

__global__ void transpose_naive(const float *in, float *out, int rows, int cols)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}
