// cpp_structs.cu -- arrays of structures at their C layout, and a 16-byte aligned packed class
// moved as one access.
//
// Particle: x @0, y @4, z @8, id @12, mass @16 (double, 8-aligned): 24 bytes, alignment 8.
//
// Hand derivation, grid 64 x block 256 = 512 warps, n = 16,384:
// particle_y: p[i].y and p[i].mass: lanes 24 bytes apart; a warp covers 768 bytes = 24 sectors,
//   warps start 768 bytes apart (sector aligned) and every sector in the span holds a lane's
//   word (24 < 32): 24 sectors per request for each: loads 1,024 requests / 24,576 sectors.
//   out[i]: 512 / 2,048.   logical: 16,384 x (4 + 8 + 4) = 262,144 bytes.
// copy_packed: Vec4 is alignas(16) with 16 bytes: `Vec4 t = in[i]; out[i] = t;` is one 16-byte
//   load and one 16-byte store: 512 requests / 8,192 sectors each; logical 524,288 bytes.
// sum_fields: t[0] + t[1] + t[2] + t[3] through operator[]: every member is used, so the copy
//   stays one 16-byte load (a copy using only some members is narrowed by nvcc); one store of a float: loads 512 / 8,192; stores 512 / 2,048; logical 16,384 x 20 = 327,680.

struct Particle {
    float x, y, z;
    int id;
    double mass;
};

struct alignas(16) Vec4 {
    float v[4];
    __device__ float operator[](int k) const { return v[k]; }
};

__global__ void particle_y(const Particle *p, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = p[i].y + (float)p[i].mass;
    }
}

__global__ void copy_packed(const Vec4 *in, Vec4 *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Vec4 t = in[i];
        out[i] = t;
    }
}

__global__ void sum_fields(const Vec4 *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        Vec4 t = in[i];
        out[i] = t[0] + t[1] + t[2] + t[3];
    }
}
