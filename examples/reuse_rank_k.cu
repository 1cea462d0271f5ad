// reuse_rank_k.cu -- rank-k update C += A^T B with A, B of k x n floats (k rows of n), C n x n.
//
// Demonstrates: the reuse class of a rank-k update: each of A's k rows is read by every thread
// of the same C row (a broadcast), each of B's rows by every C row; C is read and written once.
// With __restrict__ the accumulator stays in a register (one load of C, one store).
//
// Hand derivation (n^2/32 warps; per p):
//   block 32 x 8: a warp is one C row of 32 columns: A[p*n + row] 1 sector, B[p*n + col] 4.
//   block 16 x 16: rows 2m, 2m+1 of 16 columns: A two adjacent floats, 1 sector; B 2 sectors.
//   C: 4 sectors loaded and 4 stored per warp.
//   load requests n^2/32 x (2k + 1); load sectors n^2/32 x (k x (1 + 4 or 2) + 4).

__global__ void rank_k_update(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C, int n,
                              int k)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = C[row * n + col];
    for (int p = 0; p < k; ++p) {
        acc += A[p * n + row] * B[p * n + col];
    }
    C[row * n + col] = acc;
}
