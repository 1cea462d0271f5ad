// reduce_shared.cu -- a block sum in shared memory (tree reduction, sequential addressing).
//
// Demonstrates: shared loads and stores under a shrinking active mask, __syncthreads() in a
// loop (a barrier: the compiler must reload shared values other threads wrote), and a single
// lane's global store.
//
// Hand derivation (grid 1024 x block 256 = 8 warps per block; n = 262,144):
//   global: in[i] 8 warps per block, 4 sectors each: 8,192 requests / 32,768 sectors;
//           out[blockIdx.x] by thread 0 only: 1,024 requests / 1,024 sectors.
//           logical 262,144 x 4 + 1,024 x 4 = 1,052,672 bytes.
//   shared: sdata[tid] = in[i]: 8 store requests per block.
//           loop s = 128, 64, 32, 16, 8, 4, 2, 1 (blockDim.x / 2 halving): warps with a lane
//           tid < s: 4, 2, 1, 1, 1, 1, 1, 1 = 12 per block; each runs two loads (sdata[tid],
//           sdata[tid + s]) and one store.
//           final sdata[0] read by thread 0 (after a barrier, so it is reloaded): 1 load.
//           per block: 24 + 1 = 25 loads, 8 + 12 = 20 stores.
//           -> shared loads 25,600, shared stores 20,480 requests. Every shared access is a run
//              of consecutive 4-byte words (at most 32), one per bank: 1 wavefront each.

#define BLOCK 256

__global__ void block_sum(const float *__restrict__ in, float *__restrict__ out, int n)
{
    __shared__ float sdata[BLOCK];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? in[i] : 0.0f;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            sdata[tid] += sdata[tid + s];
        }
        __syncthreads();
    }
    if (tid == 0) {
        out[blockIdx.x] = sdata[0];
    }
}
