// loops.cu -- do/while with continue and break, and a while loop with a warp-uniform continue.
//
// Demonstrates: `continue` in a do/while jumps to the condition (++c still runs), a divergent
// continue that masks lanes for one iteration only, a warp-uniform break, and a while loop.
// Every lane of a warp runs the same number of iterations, so unrolling changes nothing.
//
// chunk_sum (grid 256 x block 256 = 2,048 full warps; n = 65,536, chunks = 8, skip = 3, stop = 5):
//   iterations c = 0, 1, 2, 3, 4, 5 (break after the load at c = 5):
//   c = 0: odd lanes continue; the 16 even lanes read in[i] at 8-byte steps over the warp's
//          aligned 128 bytes: 4 sectors, 16 x 4 = 64 logical bytes.
//   c = 3: every lane continues (c == skip): no load.
//   c = 1, 2, 4, 5: full warps, in[c*n + i] aligned (c*n*4 is a multiple of 32): 4 sectors each.
//   per warp: 5 load requests, 20 sectors, 64 + 4 x 128 = 576 logical bytes; 1 store, 4 sectors.
//   loads 10,240 / 40,960, stores 2,048 / 8,192, logical 2,048 x (576 + 128) = 1,441,792 bytes.
// every_other_row (grid 64 x block 256 = 512 warps; rows = 16, n = 16,384):
//   r = 0..15, odd r skipped by a warp-uniform continue: 8 loads of in[r*n + i] per warp, aligned:
//   4 sectors each; out[i] stored once.
//   loads 4,096 / 16,384, stores 512 / 2,048, logical 16,384 x (8 + 1) x 4 = 589,824 bytes.

__global__ void chunk_sum(const float *__restrict__ in, float *__restrict__ out, int n, int chunks, int skip, int stop)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    float acc = 0.0f;
    int c = 0;
    do {
        if (c == skip) {
            continue;
        }
        if ((lane & 1) && c == 0) {
            continue;
        }
        acc += in[c * n + i];
        if (c == stop) {
            break;
        }
    } while (++c < chunks);
    out[i] = acc;
}

__global__ void every_other_row(const float *__restrict__ in, float *__restrict__ out, int n, int rows)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.0f;
    int r = -1;
    while (r < rows - 1) {
        r++;
        if (r % 2 == 1) {
            continue;
        }
        acc += in[r * n + i];
    }
    out[i] = acc;
}
