// Round 9 of the census: values the block stores in shared memory and then reads to decide a
// loop, a branch or an address. `main()` launches each kernel once; README.md has the launches,
// the predictions and what Nsight Compute measured.
#include <cstdio>

// One thread computes the trip count, the block reads it after the barrier.
__global__ void staged_bound(float *out) {
  __shared__ int n;
  if (threadIdx.x == 0) n = 3 * blockIdx.x + 1;
  __syncthreads();
  for (int i = threadIdx.x; i < n * 32; i += blockDim.x) out[blockIdx.x * 4096 + i] = 1.0f;
}

// A window of the output each block owns, as a merge-path search leaves it.
__global__ void window_bounds(float *out) {
  __shared__ int lo, hi;
  if (threadIdx.x == 0) {
    lo = blockIdx.x * 100;
    hi = lo + 50;
  }
  __syncthreads();
  for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) out[i] = 2.0f;
}

// A pointer chase through a table the block builds: the address comes from shared memory.
__global__ void shared_index_chase(float *out) {
  __shared__ int next[64];
  next[threadIdx.x] = (threadIdx.x * 5 + 3) & 63;
  __syncthreads();
  int j = threadIdx.x;
  for (int s = 0; s < 3; s++) j = next[j];
  out[blockIdx.x * 64 + j] = 3.0f;
}

// A warp-synchronous count (as a warp's prefix sum in shared memory is): lane l reads l + 1
// ones its warp stored, and stores that many times.
__global__ void warp_prefix(float *out) {
  __shared__ int s[32];
  int lane = threadIdx.x & 31;
  s[lane] = 1;
  __syncwarp();
  int n = 0;
  for (int k = 0; k <= lane; k++) n += s[k];
  for (int i = 0; i < n; i++) out[i * 32 + lane] = 4.0f;
}

// Thread 0 walks a tree the block stored; the thread it names writes.
__global__ void tree_walk(int *out) {
  __shared__ int s[64];
  __shared__ int res;
  s[threadIdx.x] = (threadIdx.x * 7) & 63;
  __syncthreads();
  if (threadIdx.x == 0) {
    int t = 0;
    for (int i = 0; i < 5 && t < 32; i++) t = s[(1 << i) + t];
    res = t;
  }
  __syncthreads();
  if (threadIdx.x == res) out[blockIdx.x] = res;
}

int main() {
  float *f;
  int *o;
  cudaMalloc(&f, 1 << 20);
  cudaMalloc(&o, 1 << 12);
  staged_bound<<<2, 64>>>(f);
  window_bounds<<<2, 64>>>(f);
  shared_index_chase<<<2, 64>>>(f);
  warp_prefix<<<1, 32>>>(f);
  tree_walk<<<2, 64>>>(o);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
