__global__ void k(const float* a, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    o[i] = a[i + 1] * a[1 + i];
}
