__global__ void k(volatile int* idx, float* out) {
    int i = threadIdx.x;
    out[idx[i]] += 1.0f;
}
