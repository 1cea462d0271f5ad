// widths.cu -- the same copy, out[i] = in[i], for 1-, 2-, 8- and 16-byte elements.
//
// Demonstrates: sectors scale with the bytes a warp moves, requests do not (one request per
// warp instruction also for 8- and 16-byte accesses, measured on the H200).
//
// Hand derivation (grid 256 x block 256 = 65,536 threads = 2,048 full warps, aligned bases):
//   A warp moves 32 x width contiguous bytes starting at 32 x width x w (a multiple of 32):
//   char 32 B: 1 sector; unsigned short 64 B: 2; double 256 B: 8; float4 / int4 / double2 512 B: 16.
//   loads = stores = 2,048 requests; sectors 2,048 x {1, 2, 8, 16} = {2,048, 4,096, 16,384, 32,768};
//   logical bytes 2 x 65,536 x width = {131,072, 262,144, 1,048,576, 2,097,152}.
//   copy_char with `in` 16 bytes past a sector (copy_char_offset16): 32 bytes from 16 straddle
//   two sectors: loads 4,096 sectors.
//   copy_double with `in` 8 bytes past a sector: 256 bytes from 8 cover 9 sectors: 18,432.

__global__ void copy_char(const char *__restrict__ in, char *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void copy_ushort(const unsigned short *__restrict__ in, unsigned short *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void copy_double(const double *__restrict__ in, double *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void copy_float4(const float4 *__restrict__ in, float4 *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void copy_int4(const int4 *__restrict__ in, int4 *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}

__global__ void copy_double2(const double2 *__restrict__ in, double2 *__restrict__ out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i];
}
