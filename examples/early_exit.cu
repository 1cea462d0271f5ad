// early_exit.cu -- early returns: whole blocks, then tail lanes, leave before the main copy.
//
// Demonstrates: `return` as a mask (lanes that returned stay inactive for the rest of the
// kernel), a store executed before the returns by one lane per block, and a 2-D grid whose
// y dimension indexes rows.
//
// Hand derivation (grid 8 x 64, block 128 = 4 warps; n = 1000, rows_active = 40):
//   visited[...] = 1 by threadIdx.x == 0: every one of the 512 blocks, warp 0, one lane:
//     512 requests, 512 sectors, 2,048 logical bytes.
//   blocks with blockIdx.y >= 40 return: 40 rows x 8 blocks remain.
//   in a row, i = 128*bx + tx covers 0..1023; lanes with i >= 1000 return: warps 0..30 full,
//     warp 31 (i = 992..1023) keeps 8 lanes. Row base 4000*row bytes (125 sectors): aligned.
//   in[row*n + i] and out[row*n + i]: per row 32 requests, 31 x 4 + 1 = 125 sectors each.
//   loads 40 x 32 = 1,280 / 40 x 125 = 5,000; stores 512 + 1,280 = 1,792 requests,
//   512 + 5,000 = 5,512 sectors; logical 2,048 + 40 x 1000 x 8 = 322,048 bytes.

__global__ void rows_early_exit(const float *in, float *out, int *visited, int n, int rows_active)
{
    int row = blockIdx.y;
    if (threadIdx.x == 0) {
        visited[blockIdx.y * gridDim.x + blockIdx.x] = 1;
    }
    if (row >= rows_active) {
        return;
    }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    out[row * n + i] = in[row * n + i] + 1.0f;
}
