// gpu_asm.cu -- inline PTX: ld.global, st.global, red.global and cp.async are counted; asm that
// moves no memory (mov %laneid, add) never blocks.
//
// Hand derivation (grid 32 x 256 = 256 whole warps, pointers 256-byte aligned):
//   asm_copy: ld.global.nc.f32 and st.global.f32 of consecutive floats: 4 sectors per warp
//     each way (256 / 1,024).
//   asm_lane: lane from mov.u32 %laneid; out[warp * 32 + (31 - lane)]: a permutation of 32
//     consecutive floats, 4 sectors per warp; the add.u32 moves nothing.
//   asm_red: red.global.add.u32 on counts[lane]: 4 sectors per warp (RED 256 / 1,024).
//   asm_cp_async: cp.async.ca.shared.global of 4 bytes per lane + commit + wait: 4 sectors per
//     warp (async 256 / 1,024, also in global_load); tile read back and stored: 256 / 1,024.

__global__ void asm_copy(const float *in, float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v;
    asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(in + i));
    asm volatile("st.global.f32 [%0], %1;" : : "l"(out + i), "f"(v));
}

__global__ void asm_lane(float *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned lane;
    unsigned x;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    asm("add.u32 %0, %1, %2;" : "=r"(x) : "r"(lane), "r"(lane));
    out[(i / 32) * 32 + (31 - lane)] = (float)x;
}

__global__ void asm_red(unsigned *counts)
{
    unsigned *p = counts + (threadIdx.x & 31);
    asm volatile("red.global.add.u32 [%0], %1;" : : "l"(p), "r"(1u));
}

__global__ void asm_cp_async(const float *in, float *out)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned dst = (unsigned)__cvta_generic_to_shared(&tile[threadIdx.x]);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" : : "r"(dst), "l"(in + i));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    out[i] = tile[threadIdx.x];
}
