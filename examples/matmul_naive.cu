// matmul_naive.cu -- C = A * B for n x n floats, one thread per C element, block 16 x 16.
//
// Demonstrates: a k-loop (trip count n, the same for every lane), broadcast and half-warp
// accesses on a 16-wide block, and the compiler's removal of repeated loads (GVN): in
// matmul_accumulate, C[row*n+col] += ... inside the loop is one load of C before the loop and
// one store per iteration (C is not __restrict__, so its store may alias A and B and must
// happen every iteration, but the value just stored is reused instead of reloaded).
//
// Hand derivation (n = 128, grid 8 x 8, block 16 x 16: 16,384 threads, 512 warps; a warp is
// two rows ty, ty+1 of 16 columns 16*bx .. 16*bx+15):
//   A[row*n + k]: 2 addresses (one per row, 512 bytes apart): 2 sectors per warp per k.
//   B[k*n + col]: 16 consecutive floats from a 64-byte boundary, the same for both rows: 2 sectors.
//   C[row*n + col]: two 64-byte aligned row pieces: 4 sectors.
//   matmul_naive_128 (sum in a register, one store):
//     loads 512 x 128 x 2 = 131,072 requests, 512 x 128 x (2 + 2) = 262,144 sectors;
//     stores 512 / 2,048; logical 16,384 x (128 x 8 + 4) = 16,842,752 bytes.
//   matmul_accumulate_128 (C += in the loop):
//     loads: A and B as above, plus C once: 131,072 + 512 = 131,584 requests,
//            262,144 + 2,048 = 264,192 sectors;
//     stores: one per iteration: 512 x 128 = 65,536 requests, 262,144 sectors;
//     logical 16,384 x (128 x 8 + 4 + 128 x 4) = 25,231,360 bytes.

__global__ void matmul_naive(const float *A, const float *B, float *C, int n)
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

__global__ void matmul_accumulate(const float *A, const float *B, float *C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        for (int k = 0; k < n; ++k) {
            C[row * n + col] += A[row * n + k] * B[k * n + col];
        }
    }
}

// The same with every pointer __restrict__: nothing in the loop may alias C, so LLVM's LICM
// keeps C[row * n + col] in a register: one load before the loop and one store after it.
__global__ void matmul_accumulate_restrict(const float *__restrict__ A, const float *__restrict__ B,
                                           float *__restrict__ C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        for (int k = 0; k < n; ++k) {
            C[row * n + col] += A[row * n + k] * B[k * n + col];
        }
    }
}
