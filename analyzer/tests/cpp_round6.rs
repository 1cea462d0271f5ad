//! Issue 27, round 6 of the census: references returned for their place, array parameters of
//! vector types, the runtime's plain structures, and an abstract class template beside its
//! explicit specializations. Each test's numbers are worked out by hand in its comment (a warp
//! is 32 lanes; a sector 32 bytes; pointer parameters start 256-byte aligned; a shared
//! wavefront serves 32 banks of 4 bytes).

use crate::support::{failure, options, sheet, sheet_with, total};
use sector_analyzer::Sheet;

fn run(src: &str, grid: &str, block: &str) -> Sheet {
    sheet(src, grid, block, &[])
}

/// With `extern __shared__` memory of `bytes`.
fn run_shared(src: &str, grid: &str, block: &str, bytes: u64) -> Sheet {
    sheet_with(src, &sector_analyzer::AnalyzeOptions { shared_bytes: bytes, ..options(grid, block, &[]) })
}

/// (requests, wavefronts) of the shared rows with this op.
fn shared(s: &Sheet, op: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.space == "shared" && r.op == op)
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.wavefronts.unwrap_or(0)))
}

#[test]
fn an_operator_returning_a_reference_to_shared_memory_is_stored_through() {
    // cuda-samples' `SharedMemory<T>` (extern shared array behind `T &operator[](int)`): one
    // warp. `sdata[t] = in` stores 32 consecutive floats: 1 request, 1 wavefront.
    // `if (t < 16) sdata[t] += sdata[t + 16]` loads twice and stores once in 16 lanes: 2 load
    // requests, 1 store request, 1 wavefront each. `out[t] = sdata[0]`: 1 load (one word, one
    // wavefront) and a store of 128 bytes, 4 sectors.
    let src = r#"
    template <typename T> struct SharedMemory {
        __device__ T &operator[](int i) { extern __shared__ T s_arr[]; return s_arr[i]; }
    };
    __global__ void k(float *out, float in) {
        SharedMemory<float> sdata;
        unsigned t = threadIdx.x;
        sdata[t] = in;
        __syncthreads();
        if (t < 16) sdata[t] += sdata[t + 16];
        __syncthreads();
        out[t] = sdata[0];
    }"#;
    let s = run_shared(src, "1", "32", 128);
    assert_eq!(shared(&s, "store"), (2, 2));
    assert_eq!(shared(&s, "load"), (3, 3));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_method_or_function_returning_a_reference_to_global_memory_is_an_lvalue() {
    // `v.at(t) = 1` stores a[t]: 128 bytes from a 256-byte boundary, 4 sectors.
    // `get(a, t + 32) += 2` loads and stores a[t + 32]: bytes 128..256, 4 sectors each.
    let src = r#"
    struct V { float *p; __device__ float &at(int i) { return p[i]; } };
    __device__ float &get(float *p, int i) { return p[i]; }
    __global__ void k(float *a) {
        V v; v.p = a;
        v.at(threadIdx.x) = 1.0f;
        get(a, threadIdx.x + 32) += 2.0f;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "store"), (2, 8));
    assert_eq!(total(&s, "global", "load"), (1, 4));
}

#[test]
fn an_operator_returning_a_reference_to_a_member_array_stays_in_registers() {
    // `R r; r[i] = a[4t + i]`: the member array is the thread's own (registers). Only the 4
    // loads (lane t reads bytes 16t + 4i: 512 bytes over 16 sectors each) and the final store
    // (4 sectors) move memory.
    let src = r#"
    struct R { float d[4]; __device__ float &operator[](int i) { return d[i]; } };
    __global__ void k(float *a) {
        R r;
        for (int i = 0; i < 4; i++) r[i] = a[threadIdx.x * 4 + i];
        float s = 0;
        for (int i = 0; i < 4; i++) s += r[i];
        a[threadIdx.x] = s;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (4, 64));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(shared(&s, "store"), (0, 0));
}

#[test]
fn assigning_to_a_call_that_returns_a_value_is_refused() {
    let src = r#"
    __device__ float get(float *p, int i) { return p[i]; }
    __global__ void k(float *a) { get(a, threadIdx.x) = 2.0f; }"#;
    let e = failure(src, &options("1", "32", &[]));
    assert!(e.contains("the value a call returns"), "{e}");
}

#[test]
fn an_array_parameter_of_a_vector_type_takes_a_shared_array() {
    // cuda-samples' dxtc: `loadColorBlock(..., float3 colors[16], ...)` given a `__shared__
    // float3 colors[16]`. 16 lanes store the `.x` of consecutive float3s: words 0, 3, .., 45,
    // banks 0, 3, .., 30, 1, 4, .., 13, all different: 1 request, 1 wavefront.
    let src = r#"
    __device__ void f(float3 colors[16]) { if (threadIdx.x < 16) colors[threadIdx.x].x = 1.0f; }
    __global__ void k() { __shared__ float3 colors[16]; f(colors); }"#;
    let s = run(src, "1", "32");
    assert_eq!(shared(&s, "store"), (1, 1));
}

#[test]
fn a_cuda_extent_parameter_is_read_by_member() {
    // cuda-samples' volumeFiltering: `cudaExtent extent`, `if (x >= extent.width) return;`
    // then a store: width 100 over 4 warps: lanes 0..99 store, warps 0..2 whole (4 sectors
    // each), warp 3 lanes 96..99 (bytes 384..400, 1 sector).
    let src = r#"
    __global__ void k(float *o, cudaExtent extent) {
        unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
        if (x >= extent.width) return;
        o[x] = extent.height;
    }"#;
    let s = sheet(src, "1", "128", &[("extent.width", "100"), ("extent.height", "3")]);
    assert_eq!(total(&s, "global", "store"), (4, 13));
}

#[test]
fn an_abstract_class_template_leaves_its_explicit_specializations_usable() {
    // The primary `SharedMemory<T>` has pure virtual functions (to stop its use); the
    // specialization for float has none. Two warps store 64 consecutive floats through it:
    // 2 requests, 2 wavefronts; then 2 global stores of 4 sectors each.
    let src = r#"
    template <typename T> struct SharedMemory {
        virtual __device__ T &operator[](int i) = 0;
    };
    template <> struct SharedMemory<float> {
        __device__ float &operator[](int i) { extern __shared__ float s_float[]; return s_float[i]; }
    };
    __global__ void k(float *o) {
        SharedMemory<float> s;
        s[threadIdx.x] = 1.0f;
        __syncthreads();
        o[threadIdx.x] = s[63 - threadIdx.x];
    }"#;
    let s = run_shared(src, "1", "64", 256);
    assert_eq!(shared(&s, "store"), (2, 2));
    assert_eq!(shared(&s, "load"), (2, 2));
    assert_eq!(total(&s, "global", "store"), (2, 8));
    // The primary itself stays refused as polymorphic.
    let primary = src.replace("SharedMemory<float> s;", "SharedMemory<int> s;");
    let e = failure(&primary, &sector_analyzer::AnalyzeOptions { shared_bytes: 256, ..options("1", "64", &[]) });
    assert!(e.contains("virtual"), "{e}");
}

const CONSTANTS: &str = r#"
struct P { int n; int m; float *buf; };
__constant__ P d_common;
__constant__ int c_n;
__constant__ float c_w[4];
__device__ int below(int i) { return i < c_n; }
__global__ void loop(float *a) { for (int i = threadIdx.x; i < c_n; i += blockDim.x) a[i] = c_w[1]; }
__global__ void member(float *a) { for (int i = threadIdx.x; i < d_common.n; i += blockDim.x) d_common.buf[i] = a[i]; }
__global__ void inlined(float *a) { if (below(threadIdx.x)) a[threadIdx.x] = 0; }
__global__ void hidden(float *a, int c_n) { if (threadIdx.x < c_n) a[threadIdx.x] = 0; }
"#;

fn constants(kernel: &str, args: &[(&str, &str)]) -> sector_analyzer::AnalyzeOptions {
    sector_analyzer::AnalyzeOptions { kernel: Some(kernel.into()), ..options("1", "32", args) }
}

#[test]
fn a_constant_scalar_bounding_a_loop_is_a_launch_value() {
    // Rodinia's heartwall, and any code that sets sizes with cudaMemcpyToSymbol: `c_n` is
    // asked for like a parameter. c_n = 100: lanes store a[0..100), 400 bytes from a 256-byte
    // boundary: 4 requests over 13 sectors (12.5 rounded up).
    let e = failure(CONSTANTS, &constants("loop", &[]));
    assert!(e.contains("`__constant__` variable `c_n`"), "{e}");
    let s = sheet_with(CONSTANTS, &constants("loop", &[("c_n", "100")]));
    assert_eq!(total(&s, "global", "store"), (4, 13));
    // Read inside an inlined function: c_n = 10 lanes store 40 bytes, 2 sectors.
    let s = sheet_with(CONSTANTS, &constants("inlined", &[("c_n", "10")]));
    assert_eq!(total(&s, "global", "store"), (1, 2));
    // A parameter of the same name hides the variable.
    let e = failure(CONSTANTS, &constants("hidden", &[]));
    assert!(e.contains("parameter `c_n`"), "{e}");
}

#[test]
fn members_of_a_constant_structure_are_launch_values_and_its_pointers_buffers() {
    // d_common.n = 64: two iterations of a warp, each loading a[i] and storing through the
    // pointer member (a buffer of its own, 256-byte aligned): 2 requests of 4 sectors each way.
    let s = sheet_with(CONSTANTS, &constants("member", &[("d_common.n", "64")]));
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}

#[test]
fn a_class_template_instance_is_a_template_argument_as_the_launch_writes_it() {
    // HeCBench's pool: `KernelPool2DGrad<AvgPoolGrad<float>, float, ...>`, the functor's method
    // given the address of the thread's own `gradient`. `x` is passed but never used: its load
    // is dead (0 requests). `dy[t]` and `out[t]`: 128 bytes each from a 256-byte boundary, 4
    // sectors each.
    let src = r#"
    template <class T> class Avg {
      public:
        __device__ void compute(const T &x, const T &dy, T scale, T *dx) { *dx += scale * dy; }
    };
    template <typename P, typename T> __global__ void k(const T *x, const T *dy, T *out) {
        P p;
        T g = 0;
        p.compute(x[threadIdx.x], dy[threadIdx.x], (T)0.5, &g);
        out[threadIdx.x] = g;
    }
    void host(float *x, float *dy, float *o) { k<Avg<float>, float><<<1, 32>>>(x, dy, o); }"#;
    let s = sheet(src, "1", "32", &[("P", "Avg< float >"), ("T", "float")]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_pointer_parameter_is_never_null() {
    // vLLM's `alibi_slopes == nullptr ? 0.f : alibi_slopes[head]`: the pointer points to its
    // buffer, so the load runs: one lane-uniform word per warp, 1 sector. `if (p == NULL)
    // return;` and `if (!p) return;` return in no lane: the store of 128 bytes, 4 sectors.
    let src = r#"
    __global__ void k(const float *p, float *out) {
        const float s = p == nullptr ? 0.f : p[blockIdx.x];
        if (p == NULL) return;
        if (!p) return;
        out[threadIdx.x] = s;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (1, 1));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_local_constant_is_a_template_argument_of_a_type() {
    // vLLM's `constexpr int VEC_SIZE = MAX(16 / (G * sizeof(scalar_t)), 1); using Q_vec =
    // typename Vec<scalar_t, VEC_SIZE>::Type;`. G = 2: VEC_SIZE = 2, float2, 8 bytes a lane:
    // 256 bytes, 8 sectors. G = 1: float4, 512 bytes, 16 sectors.
    let src = r#"
    template <typename T, int N> struct Vec {};
    template <> struct Vec<float, 2> { using Type = float2; };
    template <> struct Vec<float, 4> { using Type = float4; };
    #define MAX(a, b) ((a) > (b) ? (a) : (b))
    template <typename scalar_t, int G>
    __global__ void k(const scalar_t *q, float *o) {
        constexpr int VEC_SIZE = MAX(16 / (G * sizeof(scalar_t)), 1);
        using Q_vec = typename Vec<scalar_t, VEC_SIZE>::Type;
        const Q_vec *p = reinterpret_cast<const Q_vec *>(q);
        Q_vec v = p[threadIdx.x];
        o[threadIdx.x] = v.x;
    }"#;
    let s = sheet(src, "1", "32", &[("scalar_t", "float"), ("G", "2")]);
    assert_eq!(total(&s, "global", "load"), (1, 8));
    let s = sheet(src, "1", "32", &[("scalar_t", "float"), ("G", "1")]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
}

#[test]
fn a_row_of_a_shared_array_binds_a_reference_to_an_array() {
    // vLLM's `Qk_dot<..>::dot(q_vecs[thread_group_offset], k_vecs)` with `const Vec (&q)[N]`:
    // the row of `__shared__ float2 q[2][4]` (N = 4 deduced from it). The store of 8 bytes a
    // lane is served in two half-warp wavefronts. `dot` loads q[r][i].x for r = t & 1, i =
    // 0..3: 2 distinct words a load, 1 wavefront each, 4 loads. Then out[t]: 4 sectors.
    let src = r#"
    template <typename V, int N>
    __device__ float dot(const V (&q)[N]) {
        float s = 0;
        for (int i = 0; i < N; i++) s += q[i].x;
        return s;
    }
    __global__ void k(float *out) {
        __shared__ float2 q[2][4];
        unsigned t = threadIdx.x;
        q[t & 1][(t >> 1) & 3] = make_float2(1.0f, 2.0f);
        __syncthreads();
        out[t] = dot(q[t & 1]);
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(shared(&s, "store"), (1, 2));
    assert_eq!(shared(&s, "load"), (4, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_member_of_a_structure_a_call_returns_is_a_value() {
    // RSBench's `sigT += (c_mul(a, b)).r;`: the call runs on registers. The loads: `C a = p[t]`
    // binds p[t], whose members c_mul reads: a.r and a.i, 4 bytes each at a stride of 8
    // bytes, 8 sectors each (its second operand reads the same words: removed). out[t]: 4.
    let src = r#"
    struct C { float r, i; };
    __device__ C c_mul(C a, C b) { C c; c.r = a.r * b.r - a.i * b.i; c.i = a.r * b.i + a.i * b.r; return c; }
    __global__ void k(const C *p, float *out) {
        float s = 0;
        C a = p[threadIdx.x];
        s += (c_mul(a, a)).r;
        s += c_mul(a, a).i;
        out[threadIdx.x] = s;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (2, 16));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn views_of_the_threads_own_objects_move_no_memory() {
    // HeCBench's gemv (`(__half2 *)&vec_val.x` of a float4), fsm (`memset(state, 0, n)`),
    // md5 (`md5((unsigned *)key, n)`), intrinsics-cast (`__double2int_rd`, `__int2float_ru`):
    // only v4[t] (16 bytes a lane: 16 sectors), fsm[t] (1 byte a lane: 1 sector) and out[t]
    // (4 sectors) move memory.
    let src = r#"
    #include <cuda_fp16.h>
    __device__ unsigned hashw(const unsigned *w, int n) { unsigned h = 0; for (int i = 0; i < n; i++) h ^= w[i]; return h; }
    __global__ void k(const float4 *v4, const unsigned char *fsm, float *out) {
        float4 vec_val = v4[threadIdx.x];
        const __half2 *h1 = (__half2 *)&vec_val.x;
        float s = __low2float(*h1) + (float)reinterpret_cast<const signed char *>(&vec_val.y)[0];
        unsigned char key[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        unsigned char state[16];
        memset(state, 0, 16);
        state[threadIdx.x & 15] = fsm[threadIdx.x];
        key[threadIdx.x & 7] = state[3];
        s += hashw((unsigned *)key, 2) + __double2int_rd(s) + __int2float_ru(3);
        out[threadIdx.x] = s;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (2, 17));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_load_used_only_under_a_branch_runs_in_that_branch() {
    // nvcc sinks a load into the one branch that uses it when nothing between writes memory
    // (measured on the H200: validate/probes/round6). 4 blocks of 128 threads.
    // `v = a[i]; if (t == 0) out[b] = v;`: only warp 0 of each block loads: 4 requests of one
    // lane, 1 sector each.
    let sunk = r#"
    __global__ void k(const float *a, float *out) {
        float v = a[blockIdx.x * blockDim.x + threadIdx.x];
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }"#;
    let s = run(sunk, "4", "128");
    assert_eq!(total(&s, "global", "load"), (4, 4));
    // A barrier between the load and the branch keeps it where it is: all 16 warps load the
    // shared word (1 wavefront each).
    let kept = r#"
    __global__ void k(const float *a, float *out) {
        __shared__ float s[128];
        s[threadIdx.x] = a[threadIdx.x];
        __syncthreads();
        float v = s[127 - threadIdx.x];
        __syncthreads();
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }"#;
    let s = run(kept, "4", "128");
    assert_eq!(shared(&s, "load"), (16, 16));
    // Used on both sides of the branch: every warp loads.
    let both = r#"
    __global__ void k(const float *a, float *out) {
        float v = a[blockIdx.x * blockDim.x + threadIdx.x];
        if (threadIdx.x < 32) out[blockIdx.x] = v; else out[512 + threadIdx.x] = 2 * v;
    }"#;
    let s = run(both, "4", "128");
    assert_eq!(total(&s, "global", "load"), (16, 64));
}

#[test]
fn a_vector_member_of_a_constant_or_parameter_structure_is_data() {
    // cuda-samples' particles (`cudaParams.worldOrigin.x` of a `__constant__ SimParams`) and
    // dxtc (`__constant__ float3 kColorMetric` deciding a branch): vectors take no `--arg`, their
    // values are data, so the branch is assumed taken: one store of 128 bytes, 4 sectors, and
    // the load of p[t] (4 sectors).
    let src = r#"
    struct SimParams { float3 worldOrigin; int n; };
    __constant__ SimParams cudaParams;
    __constant__ float3 kColorMetric;
    __global__ void k(const float *p, float *out) {
        float x = p[threadIdx.x] - cudaParams.worldOrigin.x;
        if (x * kColorMetric.y < 1.0f) out[threadIdx.x] = x;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}
