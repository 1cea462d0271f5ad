// cache_ops.cu -- the same 3-point stencil with default loads and with __ldcg (cache at L2 only).
//
// Demonstrates: the L1 serves the neighbours' shared sectors for default loads; __ldcg skips L1,
// so every load sector becomes an L2 read, while DRAM reads stay the same.
//
// Hand derivation (n = 1,048,576, block 256, grid 4096; 32,768 warps, lanes 0 and n-1 idle):
//   in[i-1] and in[i+1] touch 5 sectors per warp (4 in the warps that the edges cut), in[i] 4:
//   458,750 load sectors, out 131,072 store sectors (as stencil1d_1m in stencil.cu).
//   Default: a block reads floats 256b-1 .. 256b+256, 34 sectors (33 for the first and last
//   block); blocks sharing an SM (b mod 132) never overlap. L2 reads 4,094 x 34 + 2 x 33 =
//   139,262, L1 hits 458,750 - 139,262 = 319,488.
//   __ldcg: L1 hits 0, L2 reads 458,750.
//   Both: DRAM reads = the array's 131,072 sectors + 88 = 131,160; writes 0 (8 MB fit in L2).

__global__ void stencil3_default(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[i] = in[i - 1] + in[i] + in[i + 1];
    }
}

__global__ void stencil3_ldcg(const float *__restrict__ in, float *__restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1) {
        out[i] = __ldcg(&in[i - 1]) + __ldcg(&in[i]) + __ldcg(&in[i + 1]);
    }
}
