// Probe: how nvcc splits a loop whose trip count differs between lanes of a warp.
#include <cstdio>
extern "C" __global__ void k_bd(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = in[i] * 2.f;
}
extern "C" __global__ void k_32(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += 32) out[i] = in[i] + 1.f;
}
extern "C" __global__ void k_256(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += 256) out[i] = in[i] + 1.f;
}
extern "C" __global__ void k_tri(const float *in, float *out) {
    float acc = 0.f;
    for (int j = 0; j <= (int)threadIdx.x; j++) acc += in[j];
    out[threadIdx.x] = acc;
}
extern "C" __global__ void k_tri_st(const float *in, float *out) {
    for (int j = 0; j <= (int)threadIdx.x; j++) out[threadIdx.x * 64 + j] = in[j];
}
extern "C" __global__ void k_start(const float *in, float *out, int n) {
    float acc = 0.f;
    for (int j = threadIdx.x; j < n; j++) acc += in[j];
    out[threadIdx.x] = acc;
}
extern "C" __global__ void k_sync(const float *in, float *out, int n) {
    __shared__ float s[32];
    for (int i = threadIdx.x; i < n; i += 32) { s[threadIdx.x] = in[i]; __syncwarp(); out[i] = s[threadIdx.x ^ 1]; __syncwarp(); }
}
extern "C" __global__ void k_shfl(const float *in, float *out, int n) {
    float acc = 0.f;
    for (int i = threadIdx.x; i < n; i += 32) acc += __shfl_xor_sync(0xffffffffu, in[i], 1);
    out[threadIdx.x] = acc;
}
extern "C" __global__ void k_big(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += 32) {
        float v = in[i];
        float a = in[i + 4096], b = in[i + 8192], c = in[i + 12288], d = in[i + 16384];
        out[i] = v * a + b * c - d * v + sinf(a) * cosf(b) + expf(c) / (1.f + d);
    }
}
extern "C" __global__ void k_grid(const float *in, float *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = in[i] * 3.f;
}
extern "C" __global__ void k_break(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += 32) { if (in[i] < 0.f) break; out[i] = in[i]; }
}
extern "C" __global__ void k_while(const float *in, float *out, int n) {
    int i = threadIdx.x;
    while (i < n) { out[i] = in[i] * 5.f; i += 32; }
}
extern "C" __global__ void k_tri2d(const float *in, float *out, int T) {
    // causal attention style: thread t sums t+1 rows of 64 floats, rows of the same t2 shared
    int t = threadIdx.x;
    float acc = 0.f;
    for (int t2 = 0; t2 <= t; t2++) acc += in[t2 * 64 + (t & 7)];
    out[t] = acc;
}
int main() {
    float *in, *out;
    cudaMalloc(&in, 64 << 20); cudaMalloc(&out, 64 << 20);
    cudaMemset(in, 0, 64 << 20);
    k_bd<<<1, 256>>>(in, out, 1000);
    k_32<<<1, 32>>>(in, out, 100);
    k_32<<<1, 32>>>(in, out, 103);
    k_256<<<1, 256>>>(in, out, 1000);
    k_tri<<<1, 32>>>(in, out);
    k_tri_st<<<1, 32>>>(in, out);
    k_start<<<1, 32>>>(in, out, 37);
    k_sync<<<1, 32>>>(in, out, 100);
    k_shfl<<<1, 32>>>(in, out, 100);
    k_big<<<1, 32>>>(in, out, 100);
    k_grid<<<2, 128>>>(in, out, 1000);
    k_break<<<1, 32>>>(in, out, 100);
    k_while<<<1, 32>>>(in, out, 100);
    k_tri2d<<<1, 64>>>(in, out, 64);
    cudaDeviceSynchronize();
    printf("done %s\n", cudaGetErrorString(cudaGetLastError()));
    return 0;
}
