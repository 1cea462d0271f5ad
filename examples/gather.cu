// gather.cu -- the seed lesson's gather, out[i] = data[index[i]], and its mirror, a scatter.
//
// Demonstrates: data-dependent addresses made exact by a manifest fill of the index array.
//
// Hand derivation (n = 1,048,576, grid 4096 x block 256: 32,768 full warps, all aligned):
//   index[i] and out[i] are contiguous 4-byte accesses: 4 sectors per warp each.
//   gather_identity: index[k] = k, so data[index[i]] = data[i]: 4 sectors per warp.
//     loads 2 x 32,768 = 65,536 requests, 8 x 32,768 = 262,144 sectors; stores 32,768 / 131,072.
//   gather_constant: index[k] = 7 for every k: all 32 lanes read data[7] (bytes 28..31), one
//     sector. loads 65,536 requests, (4 + 1) x 32,768 = 163,840 sectors.
//   gather_permutation: a random permutation of 0..n-1. The data sectors depend on the draw, so
//     only the numbers that do not are given: requests, the store (4 per warp) and the logical
//     bytes. (Index loads alone are 131,072 sectors; the data load is between 4 and 32 per warp.)
//   Logical bytes in every gather case: 3 accesses x 4 bytes x n = 12,582,912.
//   scatter_constant: out[index[i]] = src[i] with index[k] = 3: every lane stores to out[3]:
//     1 sector per warp. loads 65,536 requests / 262,144 sectors, stores 32,768 / 32,768.
//   scatter_identity: index[k] = k: out[i], 4 sectors per warp, stores 32,768 / 131,072.

__global__ void gather(const float *data, const int *index, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = data[index[i]];
    }
}

__global__ void scatter(const float *src, const int *__restrict__ index, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[index[i]] = src[i];
    }
}
