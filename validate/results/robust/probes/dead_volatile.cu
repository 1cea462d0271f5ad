__global__ void k(volatile float* in, float* out) {
    int t = threadIdx.x;
    float unused = in[t];
    in[t + 32];
    out[t] = 1.0f;
}
