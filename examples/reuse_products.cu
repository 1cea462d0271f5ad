// reuse_products.cu -- matrix-product variants for the cache model's cross-SM merging (issue 26):
// a naive rectangular product (chains of products are two of its launches), a batched naive
// product of larger matrices (the batch in blockIdx.z), and a triangular nest (a lower
// triangular matrix times a full one: row r runs r + 1 iterations).
//
// Demonstrates: the reuse of products whose blocks read the same A rows (consecutive blocks of
// a block row) and B columns (blocks of a block column) at nearly the same time.
//
// Hand derivation (a warp is r = 32/bx rows of c = min(bx, 32) columns; per k):
//   A[row*p + k]: one float per row, rows p*4 >= 32 bytes apart: r sectors.
//   B[k*n + col]: c consecutive floats from a (4c)-byte boundary: max(1, c/8) sectors.
//   C[row*n + col]: r row pieces of c floats: r * max(1, c/8) sectors, once.
//   gemm_rect and gemm_batched: every lane runs the whole k loop (the guards hold for all):
//   load requests warps x p x 2; logical bytes warps x (p x 256 + 128).
//   trmm_lower: the warp's rows r0..r0+r-1 run k = 0..row; lanes of shorter rows stop early.

__global__ void gemm_rect(const float *A, const float *B, float *C, int m, int n, int p)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m && col < n) {
        float sum = 0.0f;
        for (int k = 0; k < p; ++k) {
            sum += A[row * p + k] * B[k * n + col];
        }
        C[row * n + col] = sum;
    }
}

__global__ void gemm_batched(const float *A, const float *B, float *C, int n)
{
    long long base = (long long)blockIdx.z * n * n;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) {
        sum += A[base + row * n + k] * B[base + k * n + col];
    }
    C[base + row * n + col] = sum;
}

__global__ void trmm_lower(const float *L, const float *B, float *C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k <= row; ++k) {
        sum += L[row * n + k] * B[k * n + col];
    }
    C[row * n + col] = sum;
}
