// stencil.cu -- boundary-guarded stencils: a 1-D 3-point and a 2-D 5-point stencil.
//
// Demonstrates: neighbour accesses shifted by one element (+-4 bytes: 5 sectors instead of 4),
// a && guard that deactivates the first and last lane of the array, and whole warps idle on
// the 2-D border rows.
//
// Hand derivation, stencil1d (n = 1,048,576, grid 4096 x 256: W = 32,768 warps, all execute):
//   interior warp w: in[i-1] bytes [128w-4, 128w+124) -> 5 sectors; in[i] 4; in[i+1]
//     [128w+4, 128w+132) -> 5; out[i] 4.
//   warp 0 (lane 0 idle): in[i-1] = elements 0..30 -> 4; in[i] 1..31 -> 4; in[i+1] 2..32 -> 5.
//   warp W-1 (lane 31 idle): in[i-1] = n-33..n-3 -> 5; in[i] n-32..n-2 -> 4; in[i+1] n-31..n-1 -> 4.
//   loads 3W = 98,304 requests, (5W-1) + 4W + (5W-1) = 14W - 2 = 458,750 sectors;
//   stores W = 32,768 requests, 4W = 131,072 sectors (the edge warps still span 4 sectors);
//   logical 16 x (n - 2) = 16,777,184 bytes.
// Hand derivation, stencil2d (n = 512, block 32 x 8, grid 16 x 64: a warp is 32 columns of a row;
//   rows are 2048 bytes = 64 sectors apart; 16 warps per row):
//   rows 0 and 511 do nothing; 510 rows x 16 warps = 8,160 executing warps.
//   centre, up and down rows: 4 sectors per warp (lane 0 of bx 0 and lane 31 of bx 15 idle
//     leave 4): 64 per row each.
//   left in[..x-1]: 5 per warp, except bx 0 (elements 0..30): 4 -> 79 per row.
//   right in[..x+1]: 5 per warp, except bx 15 (elements 481..511): 4 -> 79 per row.
//   loads 5 x 8,160 = 40,800 requests, 510 x (3 x 64 + 2 x 79) = 178,500 sectors;
//   stores 8,160 requests, 510 x 64 = 32,640 sectors; logical 510^2 x 24 = 6,242,400 bytes.

__global__ void stencil1d(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[i] = in[i - 1] + in[i] + in[i + 1];
    }
}

__global__ void stencil2d(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < n - 1 && y >= 1 && y < n - 1) {
        int c = y * n + x;
        out[c] = 0.2f * (in[c] + in[c - 1] + in[c + 1] + in[c - n] + in[c + n]);
    }
}
