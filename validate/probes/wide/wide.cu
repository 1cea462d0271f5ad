// Probe: wavefronts of one 16-byte (LDS.128) and one 8-byte (LDS.64) shared load per warp, by
// the pattern of addresses across the lanes. Each kernel is launched as one warp.
#include <cstdio>

__device__ int lane_index(int mode, int l) {
    switch (mode) {
    case 0: return 0;              // every lane the same address
    case 1: return l >> 4;         // one address a half-warp
    case 2: return l >> 3;         // one address a quarter-warp
    case 3: return l & 1;          // two addresses, alternating
    case 4: return l & 3;
    case 5: return l & 7;          // eight addresses, repeated in each quarter
    case 6: return (l >> 3) & 1;   // quarters A B A B
    case 7: return l;              // 32 addresses
    case 8: return l >> 2;         // 8 addresses, four lanes each
    case 9: return l & 15;
    case 10: return 8 * (l & 7);   // 8 addresses 128 bytes apart: one bank group
    case 11: return l >> 1;
    case 12: return 8 * l;
    // Second round: which quarters share a wavefront.
    case 13: return (l & 3) == 0 ? 0 : (l & 3) - 1;              // 0 0 1 2 in each four lanes
    case 14: return ((l >> 1) & 3) | (((l >> 3) & 1) << 3);      // quarters in the same banks
    case 15: return 8 * (l & 1);                                 // 2-way conflict in a quarter
    case 16: return (l >> 1) & 1;                                // 0 0 1 1
    case 17: return (l & 1) + 2 * (l >> 3);
    case 18: return (l & 1) + 2 * ((l >> 2) & 1);                // 4 addresses a quarter, 2 a four
    case 19: return (l & 3) == 3 ? 1 : 0;
    case 20: return (l & 1) + 8 * ((l >> 2) & 1) + 16 * ((l >> 3) & 1);
    case 21: return 8 * (l >> 4);
    case 22: return 8 * ((l >> 3) & 1);                          // quarters: other words, same banks
    case 23: return 4 * ((l >> 3) & 1);                          // quarters: other banks
    default: return 8 * l;
    }
}

template <int MODE>
__global__ void v4(float* out) {
    __shared__ float4 s[512];
    for (int i = threadIdx.x; i < 512; i += 32) s[i] = make_float4(i, i, i, i);
    __syncthreads();
    float4 v = s[lane_index(MODE, threadIdx.x)];
    out[threadIdx.x] = v.x + v.y + v.z + v.w;
}

template <int MODE>
__global__ void v2(float* out) {
    __shared__ float2 s[512];
    for (int i = threadIdx.x; i < 512; i += 32) s[i] = make_float2(i, i);
    __syncthreads();
    float2 v = s[lane_index(MODE, threadIdx.x)];
    out[threadIdx.x] = v.x + v.y;
}

template <int M>
void launch(float* o) {
    v4<M><<<1, 32>>>(o);
    v2<M><<<1, 32>>>(o);
    if constexpr (M < 23) launch<M + 1>(o);
}

int main() {
    float* o;
    cudaMalloc(&o, 4096);
    launch<0>(o);
    printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    return 0;
}
