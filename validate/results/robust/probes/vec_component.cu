__global__ void k(const float4* __restrict__ x, float4* __restrict__ y, int h) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 p = x[i];
    float4 q = x[i + h];
    p.x += q.x;
    y[i] = p;
}
