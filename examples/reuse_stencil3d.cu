// reuse_stencil3d.cu -- 7-point stencil on an n x n x n grid of floats, interior points only.
//
// Demonstrates: the reuse class of a 3-D stencil: a plane's sectors are read again by the
// planes above and below (n^2 floats away), which come one block-plane later in launch order:
// that reuse spans many blocks and is served by L2 (and L1 only where they share an SM).
//
// Hand derivation (block 32 x 8 x 1, a warp is one row of 32 columns, n/32 per row; interior
// rows (y, z) in 1..n-2: (n-2)^2 rows): per row 7 requests per warp; centre, +-n, +-n^2: 4
// sectors each; left and right 5 except 4 at the row's first (left) and last (right) warp:
// 5 x 4 x n/32 + 2 x (5 x (n/32 - 2) + 9) sectors; out 4 sectors per warp.

__global__ void stencil7(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z;
    if (x >= 1 && x < n - 1 && y >= 1 && y < n - 1 && z >= 1 && z < n - 1) {
        int i = (z * n + y) * n + x;
        out[i] = in[i] + in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + in[i - n * n] + in[i + n * n];
    }
}
