// reuse_gemm_naive.cu -- C = A * B for n x n floats, one thread per C element, any block shape.
//
// Demonstrates: the reuse class of a naive matrix product. Every thread reads a whole row of A
// and a whole column of B; a warp's B sectors are read again by every warp of the same block
// column and its A sectors by every warp of the same rows, so L1 (warps of one SM) and L2 (all
// SMs) serve most of the sector demand.
//
// Hand derivation (warp = r = 32/bx rows of c = min(bx, 32) columns; n^2/32 warps; per k):
//   A[row*n + k]: one float per row, rows n*4 bytes apart: r sectors.
//   B[k*n + col]: c consecutive floats from a (4c)-byte boundary: c/8 sectors.
//   C[row*n + col]: r row pieces of c floats: r*c/8 = 4 sectors, once.
//   load requests n^2/32 x n x 2 = n^3/16; load sectors n^2/32 x n x (r + c/8);
//   16 x 16: 4 sectors per warp and k; 32 x 8 and 8 x 32: 5.
//   logical bytes n^2 x (8n + 4).

__global__ void gemm_naive(const float *A, const float *B, float *C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < n; ++k) {
            sum += A[row * n + k] * B[k * n + col];
        }
        C[row * n + col] = sum;
    }
}
