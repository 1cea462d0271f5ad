// reuse_gemv.cu -- matrix-vector products y = A x with A n x n floats, one thread per output.
//
// Demonstrates the two reuse classes of a matrix-vector product:
// - gemv_rows (y[i] = sum_j A[i*n+j] x[j]): each lane walks its own row, so a warp touches 32
//   sectors per step, and each lane's sector is used again by the next 7 steps (L1 reuse in
//   time); x[j] is a broadcast read by every warp.
// - gemv_cols (y[j] = sum_i A[i*n+j] x[i]): a warp reads 32 consecutive floats of a row
//   (coalesced, 4 sectors), x[i] a broadcast; A is streamed once.
//
// Hand derivation (n/32 warps, n steps each, 2 requests per step):
//   rows: A 32 sectors + x 1 sector per step; y 4 sectors once.
//   cols: A 4 sectors + x 1 sector per step; y 4 sectors once.

__global__ void gemv_rows(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int j = 0; j < n; ++j) {
            s += A[(long long)i * n + j] * x[j];
        }
        y[i] = s;
    }
}

__global__ void gemv_cols(const float *__restrict__ A, const float *__restrict__ x, float *__restrict__ y, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        float s = 0.0f;
        for (int i = 0; i < n; ++i) {
            s += A[(long long)i * n + j] * x[i];
        }
        y[j] = s;
    }
}
