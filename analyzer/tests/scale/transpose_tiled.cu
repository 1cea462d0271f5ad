// out = transpose(in) for an n x n matrix through a padded 32 x 33 shared tile; 32 x 8 blocks.
#define TILE 32
#define ROWS 8
__global__ void transpose_tiled(const float *in, float *out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS) {
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
    }
}
