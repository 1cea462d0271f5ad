// reuse_batched.cu -- a batch of small products C[b] = A[b] * B[b], m x m floats each, one block
// of m x m threads per product.
//
// Demonstrates: the reuse class of batched small products: all reuse is inside a block (each A
// row read by the m threads of a C row, each B column by the m rows), so L1 serves it; every
// matrix is read from DRAM once.
//
// Hand derivation (block m x m, batch blocks, m^2/32 warps per block; per k):
//   m = 32: a warp is one row of 32 columns: A 1 sector, B 4 sectors; C 4 sectors once.
//   m = 16: rows 2w, 2w+1 of 16 columns: A two floats 64 bytes apart, 2 sectors; B 2 sectors;
//   C two 64-byte pieces, 4 sectors.
//   load requests warps x m x 2.

__global__ void batched_gemm(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int m)
{
    long long base = (long long)blockIdx.x * m * m;
    int row = threadIdx.y;
    int col = threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < m; ++k) {
        sum += A[base + row * m + k] * B[base + k * m + col];
    }
    C[base + row * m + col] = sum;
}
