// clamp.cu -- indices clamped with min() and max(): lanes that clamp pile onto one address.
//
// Demonstrates: min/max in address expressions; a warp's sector count changes where the clamp
// starts to bite.
//
// stride2_clamped: out[i] = in[min(2 * i, limit)], grid 1024 x block 256 (8,192 warps),
//   limit = 262,143. For i < 131,072, 2i <= 262,142 < limit: lanes 8 bytes apart over 256
//   aligned bytes, 8 sectors (warps 0..4095, the last of them has 2i up to 262,142, unclamped).
//   For i >= 131,072 every lane reads in[limit]: 1 sector (warps 4096..8191).
//   loads 8,192 / 4,096 x 8 + 4,096 x 1 = 36,864; stores 8,192 / 32,768;
//   logical 262,144 x 8 = 2,097,152 bytes.
// shift_clamped: out[i] = in[max(i - shift, 0)], shift = 100, same launch.
//   warps 0, 1, 2 (i < 96): every lane reads in[0]: 1 sector each.
//   warp 3 (i = 96..127): lanes 96..100 read in[0], lanes 101..127 in[1..27]: elements 0..27,
//     bytes 0..111: 4 sectors.
//   warps w >= 4: elements 32w - 100 .. 32w - 69, starting 400 bytes (12.5 sectors) before the
//     warp's own 128-byte block, so 16 bytes into a sector: 5 sectors. 8,188 such warps.
//   loads 8,192 / 3 + 4 + 8,188 x 5 = 40,947; stores 8,192 / 32,768; logical 2,097,152 bytes.

__global__ void stride2_clamped(const float *__restrict__ in, float *__restrict__ out, int limit)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[min(2 * i, limit)];
}

__global__ void shift_clamped(const float *__restrict__ in, float *__restrict__ out, int shift)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[max(i - shift, 0)];
}
