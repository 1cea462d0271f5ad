// Where ptxas places shared variables, and what it merges because of it (nvcc 13.0, sm_90).
// Launched with one block of 256 threads; `analyzer/tests/shared_layout.rs` works every count.
#include <cstdio>

// `arr` sits at byte 4, after `s_a`: none of its four loads merge (32 LDS, not 8 LDS.128).
__global__ void after_float(float* out, const float* in) {
  __shared__ float s_a;
  __shared__ float arr[256];
  int t = threadIdx.x;
  arr[t] = in[t];
  if (t == 0) s_a = in[1000];
  __syncthreads();
  int j = (t & 63) * 4;
  out[t] = arr[j] + arr[j + 1] + arr[j + 2] + arr[j + 3] + s_a;
}

// `arr` at byte 8, after `pad[2]`: the aligned pair merges (one LDS.64 a warp).
__global__ void after_pair(float* out, const float* in) {
  __shared__ float pad[2];
  __shared__ float arr[256];
  int t = threadIdx.x;
  pad[t & 1] = in[9];
  arr[t] = in[t];
  __syncthreads();
  int j = (t & 63) * 2;
  out[t] = arr[j] + arr[j + 1] + pad[1];
}

// `arr` at byte 16, after a float4: one LDS.128 a warp.
__global__ void after_quad(float* out, const float* in) {
  __shared__ float4 v;
  __shared__ float arr[256];
  int t = threadIdx.x;
  if (t == 0) v = reinterpret_cast<const float4*>(in)[9];
  arr[t] = in[t];
  __syncthreads();
  int j = (t & 63) * 4;
  out[t] = arr[j] + arr[j + 1] + arr[j + 2] + arr[j + 3] + v.y;
}

// Two floats declared together: read together in the loop, one LDS.64 (hoisted: once a warp).
__global__ void mean_var(float* out, const float* in, int n) {
  __shared__ float s_mean;
  __shared__ float s_var;
  if (threadIdx.x == 0) s_mean = in[0];
  __syncthreads();
  if (threadIdx.x == 1) s_var = in[1];
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = (in[i] - s_mean) * s_var;
}

// Four floats written by one thread (one STS.128) and read by all (one LDS.128 a warp).
__global__ void four_scalars(float* out, const float* in) {
  __shared__ float a, b, c, d;
  int t = threadIdx.x;
  if (t == 0) {
    a = in[0];
    b = in[1];
    c = in[2];
    d = in[3];
  }
  __syncthreads();
  out[t] = a * t + b * c - d;
}

// s[2t], s[2t + 1]: one STS.64 a warp.
__global__ void store_pair(float* out, const float* in) {
  __shared__ float s[512];
  int t = threadIdx.x;
  s[2 * t] = in[t];
  s[2 * t + 1] = in[t + 256];
  __syncthreads();
  out[t] = s[t];
}

// s[4t .. 4t + 3]: one STS.128 a warp.
__global__ void store_quad(float* out, const float* in) {
  __shared__ float s[1024];
  int t = threadIdx.x;
  s[4 * t] = in[t];
  s[4 * t + 1] = in[t + 256];
  s[4 * t + 2] = in[t + 512];
  s[4 * t + 3] = in[t + 768];
  __syncthreads();
  out[t] = s[t];
}

// s[4t .. 4t + 2]: a window only partly written is one STS.64 and one STS.
__global__ void store_three(float* out, const float* in) {
  __shared__ float s[1024];
  int t = threadIdx.x;
  s[4 * t] = in[t];
  s[4 * t + 1] = in[t + 256];
  s[4 * t + 2] = in[t + 512];
  __syncthreads();
  out[t] = s[t];
}

int main() {
  float *in, *out;
  cudaMalloc(&in, 4096 * sizeof(float));
  cudaMalloc(&out, 4096 * sizeof(float));
  cudaMemset(in, 0, 4096 * sizeof(float));
  after_float<<<1, 256>>>(out, in);
  after_pair<<<1, 256>>>(out, in);
  after_quad<<<1, 256>>>(out, in);
  mean_var<<<1, 256>>>(out, in, 1024);
  four_scalars<<<1, 256>>>(out, in);
  store_pair<<<1, 256>>>(out, in);
  store_quad<<<1, 256>>>(out, in);
  store_three<<<1, 256>>>(out, in);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
