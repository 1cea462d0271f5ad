// gpu_atomics.cu -- global and shared atomics: RED when the old value is unused, ATOM when used.
//
// Demonstrates: atomics are rows of their own (`op` red / atom), counted like loads (one request
// per warp execution, distinct 32-byte sectors per request) into totals of their own, never in
// the load/store totals. Data-dependent targets follow the manifest's fills.
//
// Hand derivation (every launch: whole warps, pointers 256-byte aligned):
//   atomic_count (grid 64 x 256, n = 16,384): 512 warps, all lanes add 1 to counter[0]:
//     one request and one sector per warp -> RED 512 / 512 (nvcc may aggregate the warp's adds
//     into one lane's: still one request, one sector).
//   atomic_hist (grid 32 x 256, n = 8,192): 256 warps. bin[i] loads: 4 sectors per warp
//     (1,024). hist_identity: bin[k] = k, hist[bin[i]] is 32 consecutive ints: RED 256 / 1,024.
//     hist_constant: bin[k] = 5, every lane hits hist[5]. Lanes on one address are served one
//     after the other, a sector each (measured on the H200): RED 256 / 8,192.
//   atomic_ticket (grid 32 x 256): old = atomicAdd(&slots[lane], 1) is stored to out[i]: the
//     result is used: ATOM 256 requests, 32 ints = 4 sectors each (1,024); out 256 / 1,024.
//   atomic_kinds (grid 32 x 256): per warp: atomicAdd(float) unused -> RED (4 sectors),
//     atomicMax unused -> RED (4), atomicExch unused -> ATOM (no RED form, 4 sectors),
//     atomicCAS used -> ATOM (4), atomicOr_block unused -> RED (4), atomicAdd_system unused on
//     a double -> RED (8 sectors: 256 bytes). RED 4 x 256 = 1,024 requests,
//     256 x (4 + 4 + 4 + 8) = 5,120 sectors; ATOM 512 requests, 2,048 sectors; the CAS result
//     goes to out: 256 / 1,024 store.
//   shared_hist (grid 32 x 256, bin = identity): shared s[256] zeroed (8 STS per block = 256
//     stores), ATOMS on s[bin[i] & 255] (one per warp: 256), read back (256 loads), then
//     hist[threadIdx.x] += via atomicAdd unused: RED 256 requests, 4 sectors each (1,024).
//     bin loads 256 / 1,024.

__global__ void atomic_count(int *counter, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(counter, 1);
    }
}

__global__ void atomic_hist(const int *bin, unsigned int *hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&hist[bin[i]], 1u);
    }
}

__global__ void atomic_ticket(int *slots, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int old = atomicAdd(&slots[threadIdx.x & 31], 1);
    out[i] = old;
}

__global__ void atomic_kinds(float *f, int *m, int *e, int *c, unsigned int *o, double *d, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&f[i], 1.0f);
    atomicMax(&m[i], i);
    atomicExch(&e[i], i);
    int was = atomicCAS(&c[i], 0, i);
    atomicOr_block(&o[i], 1u);
    atomicAdd_system(&d[i], 2.0);
    out[i] = was;
}

__global__ void shared_hist(const int *bin, unsigned int *hist)
{
    __shared__ unsigned int s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&s[bin[i] & 255], 1u);
    __syncthreads();
    atomicAdd(&hist[threadIdx.x], s[threadIdx.x]);
}

// Shared float atomicAdd, each lane its own element (no contention): nvcc emits LDS then an
// ATOMS.CAST.SPIN loop (seen in the H200's SASS), one pass here: one LDS and one ATOMS per warp,
// plus the read-back LDS: shared loads 512, shared atomics 256.
__global__ void shared_float_add(const float *in, float *out)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = 0.0f;
    __syncthreads();
    atomicAdd(&s[threadIdx.x], in[i]);
    __syncthreads();
    out[i] = s[threadIdx.x];
}
