// shared_banks.cu -- shared-memory bank conflicts: strides, 64- and 128-bit accesses, broadcast.
//
// Hopper has 32 banks of 4 bytes. A warp's shared access is served in phases of 128 bytes
// (all 32 lanes for 4-byte accesses, 16 lanes for 8-byte, 8 lanes for 16-byte); in a phase each
// bank delivers one 4-byte word per wavefront, and lanes reading the same word share it.
//
// Hand derivation:
//   shared_stride: lane t touches word t*stride, bank (t*stride) mod 32. The lanes fall on
//     32/gcd(stride,32) distinct banks, gcd(stride,32) distinct words each: gcd(stride,32)
//     wavefronts per request. stride 1 -> 1, 2 -> 2, 8 -> 8, 32 -> 32, 33 -> 1.
//     grid 256 x block 32 = 256 warps; one store and one load per warp (the barrier forbids
//     reusing the stored value): 256 requests each, 256*gcd wavefronts each.
//     The global store out[i]: 4 sectors per warp, 1,024 sectors.
//   shared_vec4: float4 (16 B) per lane, 8 lanes (128 B) per phase, lanes contiguous: 4
//     wavefronts per request, for the store buf[t] and for the reversed load buf[255 - t].
//     grid 64 x block 256 = 512 warps: 512 requests and 2,048 wavefronts each way.
//   shared_double: 8 B per lane, 16 lanes per phase: 2 wavefronts per request; 512 warps:
//     1,024 wavefronts each way.
//   shared_broadcast: every lane reads buf[0]: one word, 1 wavefront per request.

__global__ void shared_stride(float *out, int stride)
{
    __shared__ float buf[32 * 33];
    int t = threadIdx.x;
    buf[t * stride] = (float)t;
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = buf[t * stride];
}

__global__ void shared_vec4(const float4 *__restrict__ in, float4 *__restrict__ out)
{
    __shared__ float4 buf[256];
    int t = threadIdx.x;
    int i = blockIdx.x * 256 + t;
    buf[t] = in[i];
    __syncthreads();
    out[i] = buf[255 - t];
}

__global__ void shared_double(const double *__restrict__ in, double *__restrict__ out)
{
    __shared__ double buf[256];
    int t = threadIdx.x;
    int i = blockIdx.x * 256 + t;
    buf[t] = in[i];
    __syncthreads();
    out[i] = buf[255 - t];
}

__global__ void shared_broadcast(const float *__restrict__ in, float *__restrict__ out)
{
    __shared__ float buf[32];
    int t = threadIdx.x;
    int i = blockIdx.x * 32 + t;
    buf[t] = in[i];
    __syncthreads();
    out[i] = buf[0];
}

// block_sum_dynamic: a tree reduction over `extern __shared__` memory sized by the launch
// (manifest shared_bytes = 1024). Per block of 256 (8 warps): 8 stores of sdata[t]; the loop
// s = 128, 64, 32, 16, 8, 4, 2, 1 runs with 4, 2, 1, 1, 1, 1, 1, 1 warps active = 12 warp
// executions, each 2 loads + 1 store (the barrier each iteration forbids reuse); thread 0's
// final read of sdata[0] is one more load. Per block: 20 stores, 25 loads, each 1 wavefront
// (at most 32 contiguous floats). 64 blocks: 1,280 stores, 1,600 loads.
__global__ void block_sum_dynamic(const float *__restrict__ in, float *__restrict__ out, int n)
{
    extern __shared__ float sdata[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    sdata[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) {
            sdata[t] += sdata[t + s];
        }
        __syncthreads();
    }
    if (t == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
