// Kernels of census round 8 whose source the front end used to refuse: compare-and-swap retry
// loops (each lane its own word; all lanes one word, with and without a pre-test), a
// `__device__` call on the right of `&&` and in an arm of `?:`, a pointer into a thread's own
// array of vectors, and a loop bounded by a float read from memory. main() launches each once;
// run.sh counts them under Nsight Compute.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void cas_max_own(float *out, const float *v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int *a = (int *)&out[i];
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(fmaxf(v[i], __int_as_float(assumed))));
  } while (assumed != old);
}

__global__ void cas_min_shared_word(unsigned long long *a, unsigned long long val) {
  unsigned long long ret = *a;
  while (val < ret) {
    unsigned long long old = ret;
    if ((ret = atomicCAS(a, old, val)) == old) break;
  }
}

__global__ void cas_add_shared_word(unsigned long long *address, unsigned long long val) {
  unsigned long long old, ret = *address;
  do {
    old = ret;
  } while ((ret = atomicCAS(address, old, old + val)) != old);
}

__device__ int load2(const int *a, int i) { return a[i] + a[i + 32]; }
__global__ void lazy_calls(const int *a, const int *b, int *out, int n) {
  int i = threadIdx.x;
  out[i] = (i < n && load2(a, i) > 0) ? 1 : (i >= 16 ? load2(b, i) : 0);
}

__global__ void own_array_pointer(const float4 *in, float4 *out) {
  float4 ss[2];
  for (int j = 0; j < 2; j++) ss[j] = in[threadIdx.x * 2 + j];
  for (int j = 0; j < 2; j++) {
    float4 *s = ss + j;
    s->x += 1.0f;
    out[threadIdx.x * 2 + j] = *s;
  }
}

__global__ void float_bound(const float *w, float *out) {
  for (int j = 0; j < (int)w[0]; j++) out[j * 32 + threadIdx.x] = 0;
}

int main() {
  const int N = 1 << 16;
  float *f, *g;
  int *ia, *ib, *io;
  unsigned long long *word;
  cudaMalloc(&f, N * sizeof(float));
  cudaMalloc(&g, N * sizeof(float));
  cudaMalloc(&ia, N * sizeof(int));
  cudaMalloc(&ib, N * sizeof(int));
  cudaMalloc(&io, N * sizeof(int));
  cudaMalloc(&word, 256);
  static float hf[N];
  static int hi[N];
  for (int k = 0; k < N; k++) {
    hf[k] = 3.0f;  // float_bound's w[0] = 3 (and every value cas_max_own reads)
    hi[k] = 1;     // lazy_calls' a[] = 1
  }
  cudaMemcpy(f, hf, sizeof hf, cudaMemcpyHostToDevice);
  cudaMemset(g, 0, N * sizeof(float));
  cudaMemcpy(ia, hi, sizeof hi, cudaMemcpyHostToDevice);
  cudaMemset(ib, 0, N * sizeof(int));
  unsigned long long hundred = 100;
  cas_max_own<<<4, 128>>>(g, f);
  cudaMemcpy(word, &hundred, 8, cudaMemcpyHostToDevice);
  cas_min_shared_word<<<1, 32>>>(word, 5);
  cas_add_shared_word<<<1, 32>>>(word, 1);
  lazy_calls<<<1, 32>>>(ia, ib, io, 8);
  own_array_pointer<<<1, 32>>>((const float4 *)f, (float4 *)g);
  float_bound<<<1, 32>>>(f, g);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
