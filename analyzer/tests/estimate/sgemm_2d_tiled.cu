// sgemm_2d_tiled.cu -- a register-tiled SGEMM in the style of SGEMM_CUDA's kernel 5 (2-D
// blocktiling): a 128 x 128 tile of C per block of 256 threads, each thread an 8 x 8 piece of it,
// K in steps of 8 through shared memory. Launch: grid (N/128, M/128), block 256.
//
// At 4096^3 the request side is counted in closed form in milliseconds; the cache model would
// need every access of 1,024 blocks x 512 steps: the estimate's budget decides what it shows.

#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8

__global__ void sgemm_2d(int M, int N, int K, float alpha, const float *A, const float *B, float beta, float *C)
{
    const unsigned cRow = blockIdx.y;
    const unsigned cCol = blockIdx.x;
    const unsigned numThreads = (BM * BN) / (TM * TN);
    const int threadCol = threadIdx.x % (BN / TN);
    const int threadRow = threadIdx.x / (BN / TN);
    __shared__ float As[BM * BK];
    __shared__ float Bs[BK * BN];
    A += cRow * BM * K;
    B += cCol * BN;
    C += cRow * BM * N + cCol * BN;
    const unsigned innerRowA = threadIdx.x / BK;
    const unsigned innerColA = threadIdx.x % BK;
    const unsigned strideA = numThreads / BK;
    const unsigned innerRowB = threadIdx.x / BN;
    const unsigned innerColB = threadIdx.x % BN;
    const unsigned strideB = numThreads / BN;
    float threadResults[TM * TN] = {0.0f};
    float regM[TM] = {0.0f};
    float regN[TN] = {0.0f};
    for (unsigned bkIdx = 0; bkIdx < K; bkIdx += BK) {
        for (unsigned loadOffset = 0; loadOffset < BM; loadOffset += strideA) {
            As[(innerRowA + loadOffset) * BK + innerColA] = A[(innerRowA + loadOffset) * K + innerColA];
        }
        for (unsigned loadOffset = 0; loadOffset < BK; loadOffset += strideB) {
            Bs[(innerRowB + loadOffset) * BN + innerColB] = B[(innerRowB + loadOffset) * N + innerColB];
        }
        __syncthreads();
        A += BK;
        B += BK * N;
        for (unsigned dotIdx = 0; dotIdx < BK; ++dotIdx) {
            for (unsigned i = 0; i < TM; ++i) {
                regM[i] = As[(threadRow * TM + i) * BK + dotIdx];
            }
            for (unsigned i = 0; i < TN; ++i) {
                regN[i] = Bs[dotIdx * BN + threadCol * TN + i];
            }
            for (unsigned m = 0; m < TM; ++m) {
                for (unsigned n = 0; n < TN; ++n) {
                    threadResults[m * TN + n] += regM[m] * regN[n];
                }
            }
        }
        __syncthreads();
    }
    for (unsigned m = 0; m < TM; ++m) {
        for (unsigned n = 0; n < TN; ++n) {
            C[(threadRow * TM + m) * N + threadCol * TN + n] =
                alpha * threadResults[m * TN + n] + beta * C[(threadRow * TM + m) * N + threadCol * TN + n];
        }
    }
}
