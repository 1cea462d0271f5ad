// tri_nest.cu -- a triangular loop nest: every thread of a few blocks sums the lower triangle
// of an n x n matrix, column i (its own index) of every row k <= j, for every j. At n = 2048
// with 8 blocks of 256 threads: one wave, 2,098,176 loads per warp, 64 warps.
//
// Per warp: 32 consecutive floats of one row from a 128-byte boundary (i = 32w .. 32w+31):
// 4 sectors a request; n (n + 1) / 2 requests.

__global__ void tri_nest(const float *A, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int j = 0; j < n; ++j) {
        for (int k = 0; k <= j; ++k) {
            s += A[k * n + i];
        }
    }
    out[i] = s;
}
