// block100.cu -- y[i] = alpha * x[i] + y[i] with 100 threads per block (3 full warps + one of 4).
//
// Demonstrates: a block size that is not a multiple of 32 (partial last warp in every block),
// block starts that drift against the sector grid (400 bytes per block), and a float
// parameter that needs no value.
//
// Hand derivation: block b covers i = 100b .. 100b+99, bytes 400b .. 400b+399; 400b mod 32 is
// 0 for even b and 16 for odd b.
//   even b: warp0 [0,128) 4 sectors, warp1 [128,256) 4, warp2 [256,384) 4, warp3 (4 lanes)
//           [384,400) 1: 13 sectors per access.
//   odd b (relative to the even sector grid, from 16): warp0 [16,144) 5, warp1 [144,272) 5,
//           warp2 [272,400) 5, warp3 [400,416) 1: 16 sectors.
//   saxpy100_full: n = 100,000, grid 1000: 500 x (13 + 16) = 14,500 sectors per access,
//     4,000 requests per access. Accesses: x[i] and y[i] loaded, y[i] stored.
//     loads 8,000 / 29,000, stores 4,000 / 14,500, logical 12 x 100,000 = 1,200,000.
//   saxpy100_tail: n = 99,950, same grid: the last block (b = 999, odd) keeps 50 lanes:
//     warp0 32 lanes [16,144) 5 sectors, warp1 18 lanes [144,216) 3 sectors, warps 2 and 3
//     idle. Per access: 14,500 - 16 + 8 = 14,492 sectors, 4,000 - 2 = 3,998 requests.
//     loads 7,996 / 28,984, stores 3,998 / 14,492, logical 12 x 99,950 = 1,199,400.

__global__ void saxpy(float alpha, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = alpha * x[i] + y[i];
    }
}
