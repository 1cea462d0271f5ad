__global__ void k(const float* a, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = i + 1;
    o[i] = a[j] + a[1 + i];
}
