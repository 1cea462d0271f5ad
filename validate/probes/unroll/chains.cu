// Probe: shared loads nvcc merges across the copies of an unrolled loop, and across
// neighbouring statements (its load-store vectorizer). Each kernel runs as one block; the
// predicted shared load instructions and wavefronts are in README.md, worked by hand.
#include <cstdio>

#define TILE 16

// A tiled matrix product: `As[ty][k]` has the same address in every lane of a row, so the 16
// unrolled copies become 4 LDS.128; `Bs[k][tx]` moves by a row per copy: 16 LDS.
__global__ void mm16(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; t++) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

// Seven copies from a 16-byte aligned start: 0..3 in one LDS.128, 4..6 (12 bytes of the second
// window) in another.
__global__ void const7(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < 7; k++)
        acc += s[k];
    out[threadIdx.x] = acc;
}

// A trip count known only at run time: four copies a pass (one LDS.128), the remainder one LDS each.
__global__ void runtime_trip(float* out, int m) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    float acc = 0.0f;
    for (int k = 0; k < m; k++)
        acc += s[k];
    out[threadIdx.x] = acc;
}

// `#pragma unroll 1` keeps the loop rolled: one LDS a trip.
__global__ void rolled(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    float acc = 0.0f;
#pragma unroll 1
    for (int k = 0; k < 32; k++)
        acc += s[k];
    out[threadIdx.x] = acc;
}

// Neighbouring statements: two floats at an 8-byte aligned offset become one LDS.64, four at a
// 16-byte aligned offset one LDS.128; four from an odd offset stay four LDS.
__global__ void pair(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int i = 2 * (threadIdx.x & 7);
    out[threadIdx.x] = s[i] + s[i + 1];
}

__global__ void quad(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int i = 4 * (threadIdx.x & 7);
    out[threadIdx.x] = s[i] + s[i + 1] + s[i + 2] + s[i + 3];
}

__global__ void quad_unaligned(float* out) {
    __shared__ float s[64];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int i = 4 * (threadIdx.x & 7) + 1;
    out[threadIdx.x] = s[i] + s[i + 1] + s[i + 2] + s[i + 3];
}

// More neighbours, each as nvcc 13.0 compiles it: a pair at an odd element is two LDS; three of a
// window's four floats, adjacent or not, one LDS.128; two with a gap, two LDS; two doubles of one
// window, one LDS.128.
#define FILL __shared__ float s[256]; s[threadIdx.x] = threadIdx.x; __syncthreads();
__global__ void odd_pair(float* out) { FILL int i = 2 * (threadIdx.x & 7) + 1; out[threadIdx.x] = s[i] + s[i + 1]; }
__global__ void three(float* out) { FILL int i = 4 * (threadIdx.x & 7); out[threadIdx.x] = s[i] + s[i + 1] + s[i + 2]; }
__global__ void gap(float* out) { FILL int i = 4 * (threadIdx.x & 7); out[threadIdx.x] = s[i] + s[i + 2]; }
__global__ void gap3(float* out) { FILL int i = 4 * (threadIdx.x & 7); out[threadIdx.x] = s[i] + s[i + 2] + s[i + 3]; }
__global__ void dbl(double* out) {
    __shared__ double d[64];
    d[threadIdx.x] = threadIdx.x;
    __syncthreads();
    int i = 2 * (threadIdx.x & 7);
    out[threadIdx.x] = d[i] + d[i + 1];
}

// What nvcc's unroller decides (its SASS, nvcc 13.0): `#pragma unroll 8` with m = 37 at run time
// is four passes of eight copies (two LDS.128 each) and five left; a call that branches
// (`sqrtf`'s slow path) leaves each copy's load in its own block: 16 LDS; an inner loop unrolled
// completely keeps the body one block: 4 LDS.128.
__global__ void unroll8(float* out, int m) {
    FILL float a = 0;
#pragma unroll 8
    for (int k = 0; k < m; k++) a += s[k];
    out[threadIdx.x] = a;
}
__global__ void with_sqrt(float* out) {
    FILL float a = 0;
    for (int k = 0; k < 16; k++) a += sqrtf(s[k]);
    out[threadIdx.x] = a;
}
__global__ void inner_loop(float* out) {
    FILL float a = 0, b = threadIdx.x * 0.5f;
    for (int k = 0; k < 16; k++) {
        float x = s[k];
        for (int q = 0; q < 8; q++) a = a * x + b;
    }
    out[threadIdx.x] = a;
}

int main() {
    int n = 64;
    float *a, *b, *c;
    cudaMalloc(&a, n * n * sizeof(float));
    cudaMalloc(&b, n * n * sizeof(float));
    cudaMalloc(&c, n * n * sizeof(float));
    cudaMemset(a, 0, n * n * sizeof(float));
    cudaMemset(b, 0, n * n * sizeof(float));
    mm16<<<dim3(n / TILE, n / TILE), dim3(TILE, TILE)>>>(a, b, c, n);
    const7<<<1, 32>>>(c);
    runtime_trip<<<1, 32>>>(c, 13);
    rolled<<<1, 32>>>(c);
    pair<<<1, 32>>>(c);
    quad<<<1, 32>>>(c);
    quad_unaligned<<<1, 32>>>(c);
    odd_pair<<<1, 32>>>(c);
    three<<<1, 32>>>(c);
    gap<<<1, 32>>>(c);
    gap3<<<1, 32>>>(c);
    dbl<<<1, 32>>>((double*)c);
    unroll8<<<1, 32>>>(c, 37);
    with_sqrt<<<1, 32>>>(c);
    inner_loop<<<1, 32>>>(c);
    printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
