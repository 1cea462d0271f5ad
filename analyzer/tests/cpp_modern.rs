//! Modern CUDA C++ of the kind llm.c's and similar code bases are written in: overloaded
//! function templates taking a reduction as a template argument, views of a thread's own
//! vector through a pointer cast, static members reached through a typedef, structures
//! assigned from calls, function templates as kernel template arguments. Each test's numbers
//! are worked out by hand in its comment.

use crate::support::{sheet, total};
use sector_analyzer::Sheet;

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet(src, grid, block, args)
}

/// Two function templates named alike, told apart by their number of parameters; the shorter
/// one calls the longer with its template argument (a warp reduction) passed on. Not recursion.
#[test]
fn overloaded_function_templates_with_a_function_argument() {
    let src = r#"
__device__ float warpSum(float v) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
using red_t = float (*)(float);
template <red_t R> __device__ float blockRed(float v, bool sync, float oob) {
    __shared__ float part[32];
    int lane = threadIdx.x % 32, w = threadIdx.x / 32;
    float s = R(v);
    if (lane == 0) part[w] = s;
    __syncthreads();
    s = (lane < blockDim.x / 32) ? part[lane] : oob;
    s = R(s);
    if (sync) __syncthreads();
    return s;
}
template <red_t R> __device__ float blockRed(float v) { return blockRed<R>(v, false, 0.0f); }
__global__ void k(const float *in, float *out) {
    float s = blockRed<warpSum>(in[blockIdx.x * blockDim.x + threadIdx.x]);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
"#;
    // 8 blocks of 8 warps: 64 warp loads of 32 consecutive floats (4 sectors each); one
    // lane per block stores (8 requests of 1 sector); lane 0 of each warp stores its part.
    let s = run(src, "8", "256", &[]);
    assert_eq!(total(&s, "global", "load"), (64, 256));
    assert_eq!(total(&s, "global", "store"), (8, 8));
    assert_eq!(total(&s, "shared", "store").0, 64);
}

/// `M_PI` and the other constants of <cmath> and <cfloat> are values: no memory, no refusal.
#[test]
fn math_constants_are_values() {
    let src = r#"
#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)
__global__ void gelu(float *out, const float *in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        out[i] = 0.5f * x * (1.0f + tanhf(GELU_SCALING_FACTOR * (x + 0.044715f * x * x * x))) + FLT_EPSILON * (float)M_E;
    }
}
"#;
    // 4 blocks of 128 threads, n = 500: 16 warps, the last one with 20 lanes active
    // (480..499): 15 x 4 sectors + 3 (80 bytes from a sector boundary) = 63.
    let s = run(src, "4", "128", &[("n", "500")]);
    assert_eq!(total(&s, "global", "load"), (16, 63));
    assert_eq!(total(&s, "global", "store"), (16, 63));
}

/// `reinterpret_cast<const float *>(&v)[k]` on a thread's own `float4` reads registers; the
/// 16-byte load that filled `v` stays. `*reinterpret_cast<unsigned *>(&f)` reinterprets bits.
#[test]
fn views_of_a_threads_own_objects_move_no_memory() {
    let src = r#"
__device__ float at(const float4 &v, int k) { return reinterpret_cast<const float *>(&v)[k]; }
__device__ float &at(float4 &v, int k) { return reinterpret_cast<float *>(&v)[k]; }
__global__ void k(const float4 *in, float *out, const float *f, unsigned *bits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 v = in[i];
    float m = at(v, 0);
    for (int k = 1; k < 4; k++) m = fmaxf(m, at(v, k));
    out[i] = m;
    float g = f[i];
    bits[i] = *reinterpret_cast<unsigned *>(&g);
}
"#;
    // 2 blocks of 64 threads: 4 warps. in[i]: 32 lanes x 16 bytes = 16 sectors; f[i]: 4.
    let s = run(src, "2", "64", &[]);
    assert_eq!(total(&s, "global", "load"), (8, 4 * 16 + 4 * 4));
    assert_eq!(total(&s, "global", "store"), (8, 4 * 4 + 4 * 4));
    assert!(s.instructions.iter().all(|r| r.space == "global"), "no other space: {:?}", s.instructions);
}

/// A static member function of a class template called through a typedef (`f4::zeros()`),
/// which calls another static member unqualified (`constant(0)`); the object is then stored
/// whole as one 16-byte access.
#[test]
fn static_members_through_a_typedef() {
    let src = r#"
template <class T> struct alignas(16) Pk {
    T v[16 / sizeof(T)];
    static constexpr int size = 16 / sizeof(T);
    __device__ static Pk constant(T x) { Pk r; for (int k = 0; k < size; k++) r.v[k] = x; return r; }
    __device__ static Pk zeros() { return constant(0); }
};
typedef Pk<float> f4;
__global__ void k(float *out) {
    f4 z = f4::zeros();
    *reinterpret_cast<f4 *>(out + 4 * (blockIdx.x * blockDim.x + threadIdx.x)) = z;
}
"#;
    // 4 warps, each storing 32 x 16 consecutive bytes: 16 sectors per request.
    let s = run(src, "2", "64", &[]);
    assert_eq!(total(&s, "global", "store"), (4, 64));
}

/// `s = op(s, {x[i], 1.0f})` in a loop: a structure in registers assigned from a call whose
/// argument is a braced list, and `a_bigger ? a : b` of two structures. The loads feeding the
/// structure are kept (its value reaches the store).
#[test]
fn structures_assigned_from_calls() {
    let src = r#"
struct SumMax { float maxval; float sum; };
__device__ SumMax op(SumMax a, SumMax b) {
    bool a_bigger = a.maxval > b.maxval;
    SumMax big = a_bigger ? a : b;
    SumMax small = a_bigger ? b : a;
    SumMax r;
    r.maxval = big.maxval;
    r.sum = big.sum + small.sum * expf(small.maxval - big.maxval);
    return r;
}
__global__ void k(const float *x, float *out, int n) {
    SumMax s;
    s.maxval = -INFINITY;
    s.sum = 0.0f;
    for (int i = threadIdx.x; i < n; i += 32) s = op(s, {x[i], 1.0f});
    out[blockIdx.x * 32 + threadIdx.x] = s.sum / s.maxval;
}
"#;
    // n = 96, one warp per block, 2 blocks: 3 loads of 4 sectors per warp; one store each.
    let s = run(src, "2", "32", &[("n", "96")]);
    assert_eq!(total(&s, "global", "load"), (6, 24));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}

/// A `__device__` function passed as the kernel's template argument with `--arg F=name`.
#[test]
fn function_as_kernel_template_argument() {
    let src = r#"
typedef void (*row_fn)(float *, const float *, int);
__device__ void copy_row(float *o, const float *a, int n) {
    for (int j = threadIdx.x; j < n; j += 32) o[j] = a[j];
}
template <row_fn F> __global__ void k(float *o, const float *a, int n) {
    F(o + blockIdx.x * n, a + blockIdx.x * n, n);
}
"#;
    // 4 blocks of one warp, n = 64: 2 iterations of 32 floats (4 sectors) per warp.
    let s = run(src, "4", "32", &[("F", "copy_row"), ("n", "64")]);
    assert_eq!(total(&s, "global", "load"), (8, 32));
    assert_eq!(total(&s, "global", "store"), (8, 32));
}

/// Registers reached through a macro that reinterprets an element's address
/// (`#define V128(x) (reinterpret_cast<float4 *>(&(x))[0])`): a thread's own array filled by
/// one 16-byte load and stored by one 16-byte store; half-precision pairs through `&(arr[i])`.
#[test]
fn packed_registers_through_address_macros() {
    let src = r#"
#include <cuda_fp16.h>
#define V128(x) (reinterpret_cast<float4 *>(&(x))[0])
#define H2(x) (reinterpret_cast<half2 *>(&(x))[0])
__global__ void add8(half *a, half *b, half *c, int n) {
    int idx = 8 * (blockIdx.x * blockDim.x + threadIdx.x);
    half pa[8], pb[8], pc[8];
    V128(pa[0]) = V128(a[idx]);
    V128(pb[0]) = V128(b[idx]);
#pragma unroll
    for (int i = 0; i < 8; i += 2) H2(pc[i]) = __hadd2(H2(pa[i]), H2(pb[i]));
    if (idx + 7 < n) V128(c[idx]) = V128(pc[0]);
}
"#;
    // n = 4096 halves over 2 blocks of 256 threads: 16 warps, each lane 16 bytes: 16 sectors a
    // request. Threads 0..511 start at 8 * t; idx + 7 < 4096 holds for t < 512: all store.
    let s = run(src, "2", "256", &[("n", "4096")]);
    assert_eq!(total(&s, "global", "load"), (32, 512));
    assert_eq!(total(&s, "global", "store"), (16, 256));
    assert!(s.instructions.iter().all(|r| r.space == "global" && r.width == 16), "{:?}", s.instructions);
}

/// <cuda_fp8.h> storage types are bytes; `std::numeric_limits<T>` members are values.
#[test]
fn fp8_storage_and_numeric_limits() {
    let src = r#"
#include <cuda_fp8.h>
#include <limits>
__global__ void k(const __nv_fp8_storage_t *a, float *out, int *lim) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    half h = __nv_cvt_fp8_to_halfraw(a[i], __NV_E4M3);
    float v = __half2float(h);
    out[i] = v > 0.f ? v : -std::numeric_limits<float>::infinity();
    if (i == 0) lim[0] = std::numeric_limits<int>::max() - 2147483600;
    if (i < std::numeric_limits<unsigned char>::max() - 223) lim[1 + i] = i;
}
"#;
    // 64 threads, 2 warps: a[i] is 1 byte a lane (32 bytes, 1 sector a warp); out[i] 4
    // sectors a warp; lim[0] by one lane; lim[1 + i] for i < 32: warp 0 alone, 4 bytes past
    // a sector boundary: 5 sectors.
    let s = run(src, "1", "64", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 2));
    assert_eq!(total(&s, "global", "store"), (2 + 1 + 1, 8 + 1 + 5));
}

/// A pointer parameter of a `__device__` function is memory: `&A[i]` through it is a global
/// address even though the parameter is a local copy inside the inlined function. A thread's
/// own array passed to a pointer parameter stays in registers. Namespace-qualified function
/// templates (`tile::load<4>(...)`) inline like any other.
#[test]
fn pointers_in_device_functions_and_arrays_passed_to_them() {
    let src = r#"
namespace tile {
template <int W>
__device__ void load(const float *A, float *reg, int i) {
    float4 t = reinterpret_cast<const float4 *>(&A[W * i])[0];
    reg[0] = t.x; reg[1] = t.y; reg[2] = t.z; reg[3] = t.w;
}
}
__device__ float sum4(const float *r) { return r[0] + r[1] + r[2] + r[3]; }
__global__ void k(const float *A, float *out) {
    float reg[4];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile::load<4>(A, reg, i);
    out[i] = sum4(reg);
}
"#;
    // 2 warps: each lane loads 16 bytes (16 sectors a request) and stores 4 (4 sectors).
    let s = run(src, "1", "64", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 32));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}
