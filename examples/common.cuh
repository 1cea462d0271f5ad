// common.cuh -- helpers shared by examples (included by macros.cu through #include "...").
#ifndef SECTOR_EXAMPLES_COMMON_CUH
#define SECTOR_EXAMPLES_COMMON_CUH

#define WARP_SIZE 32
#define THREAD_ID_1D() (blockIdx.x * blockDim.x + threadIdx.x)
#define LANE_ID() (threadIdx.x % WARP_SIZE)
#define IDX2(row, col, ld) ((row) * (ld) + (col))

#endif
