//! The C++ the CUDA front end accepts (docs/src/cpp.md): each test's numbers are worked out by hand
//! in its comment.

use crate::support::{failure, options as opts, sheet_with, total};
use sector_analyzer::{analyze_source, Sheet};

fn run(src: &str, kernel: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    let mut o = opts(grid, block, args);
    o.kernel = Some(kernel.into());
    sheet_with(src, &o)
}

fn fail(src: &str, kernel: &str, args: &[(&str, &str)]) -> String {
    let mut o = opts("1", "32", args);
    o.kernel = Some(kernel.into());
    failure(src, &o)
}

#[test]
fn a_local_pointer_into_shared_memory_is_shared() {
    // One warp: s[t] is one shared store, s[31 - t] one shared load; only in/out are global.
    let src = r#"
    __global__ void k(const float *in, float *out) {
        extern __shared__ float smem[];
        float *s = smem;
        float *t;
        t = smem + 32;
        s[threadIdx.x] = in[threadIdx.x];
        t[threadIdx.x] = 1.0f;
        __syncthreads();
        out[threadIdx.x] = s[31 - threadIdx.x] + (float)(s == t);
    }"#;
    let mut o = opts("1", "32", &[]);
    o.shared_bytes = 256;
    let s = analyze_source("m.cu", src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(total(&s, "shared", "store").0, 2);
    assert_eq!(total(&s, "shared", "load").0, 1);
}

#[test]
fn a_pointer_holding_shared_and_global_addresses_is_refused_at_its_line() {
    let src = "__global__ void k(float *g, int c) {\n    __shared__ float sh[32];\n    float *p = sh;\n    if (c) p = g;\n    p[threadIdx.x] = 1.0f;\n}\n";
    let e = fail(src, "k", &[("c", "1")]);
    assert!(e.contains("m.cu:4:"), "{e}");
    assert!(e.contains("shared") && e.contains("global"), "{e}");
}

#[test]
fn parameters_advanced_in_place_and_in_loops() {
    // 1 block of 32 threads; p starts at a + 32 floats and advances 32 floats per iteration:
    // 4 iterations x 1 request of 4 sectors (every row sector aligned).
    let src = r#"
    __global__ void k(const float *a, float *b, int rows) {
        a += 32;
        for (int r = 0; r < rows; r++) {
            b[r * 32 + threadIdx.x] = a[threadIdx.x];
            a += 32;
        }
    }"#;
    let s = run(src, "k", "1", "32", &[("rows", "4")]);
    assert_eq!(total(&s, "global", "load"), (4, 16));
    assert_eq!(total(&s, "global", "store"), (4, 16));
}

#[test]
fn template_parameters_by_name_including_enums_and_defaults() {
    // BLOCK = 64 threads stride over n = 256 floats: 4 steps of 2 warps = 8 requests each way.
    let src = r#"
    enum class Layout { Row, Col };
    template <typename T, unsigned BLOCK, Layout L = Layout::Row, bool CHECK = false>
    __global__ void copy(const T *in, T *out, int n) {
        for (int i = threadIdx.x; i < n; i += BLOCK) {
            if (L == Layout::Row || CHECK) out[i] = in[i];
        }
    }"#;
    let s = run(src, "copy", "1", "64", &[("T", "float"), ("BLOCK", "64"), ("n", "256")]);
    assert_eq!(total(&s, "global", "load"), (8, 32));
    // T = double: 8-byte elements, 8 sectors per request.
    let s = run(src, "copy", "1", "64", &[("T", "double"), ("BLOCK", "64"), ("n", "256"), ("L", "Row")]);
    assert_eq!(total(&s, "global", "store"), (8, 64));
    // L = Col, CHECK false: nothing is copied.
    let s = run(src, "copy", "1", "64", &[("T", "float"), ("BLOCK", "64"), ("n", "256"), ("L", "Col")]);
    assert_eq!(total(&s, "global", "store"), (0, 0));
}

#[test]
fn device_function_templates_explicit_deduced_and_as_template_arguments() {
    // One warp: load<4> reads in[4t] (4 floats 16 bytes apart per lane = 512 bytes: 16 sectors);
    // apply<twice> passes it through; the store is 4 sectors.
    let src = r#"
    template <int S, typename T> __device__ T load(const T *p) { return p[threadIdx.x * S]; }
    __device__ float twice(float v) { return v + v; }
    template <float (*F)(float)> __device__ float apply(float v) { return F(v); }
    __global__ void k(const float *in, float *out) {
        out[threadIdx.x] = apply<twice>(load<4>(in));
    }"#;
    let s = run(src, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn structures_by_value_and_in_memory() {
    // SoA by value: p.x and p.y are parameters of their own; p.n bounds the lanes (20 of 32):
    // 20 floats = 80 bytes = 3 sectors per access.
    let src = r#"
    struct P { float *x; float *y; int n; };
    __global__ void soa(P p) {
        int i = threadIdx.x;
        if (i < p.n) p.y[i] = p.x[i];
    }
    struct alignas(16) Item { int key; double w; };
    __global__ void aos(const Item *items, double *out) {
        // Item: key @0, w @8, 16 bytes: 32 lanes x 16 bytes = 512 bytes = 16 sectors.
        out[threadIdx.x] = items[threadIdx.x].w;
    }"#;
    let s = run(src, "soa", "1", "32", &[("p.n", "20")]);
    assert_eq!(total(&s, "global", "load"), (1, 3));
    assert_eq!(total(&s, "global", "store"), (1, 3));
    let s = run(src, "aos", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(s.instructions.iter().find(|r| r.op == "load").unwrap().width, 8);
}

#[test]
fn declarations_switch_constants_and_constant_memory() {
    // mode = 2 falls through case 2 into case 3: two stores of 4 sectors; kTab is constant
    // memory (not counted); the scalar __shared__ flag: 1 store, 1 load.
    let src = r#"
    #include "cuda_fp16.h"
    #include <cooperative_groups.h>
    namespace cfg { static constexpr int kW = 32; }
    __constant__ int kTab[4];
    __device__ int helper(int v) {
        __shared__ int flag;
        if (threadIdx.x == 0) flag = v;
        __syncthreads();
        return flag;
    }
    __global__ void k(float *out, int mode) {
        int base = helper(kTab[1]);
        switch (mode) {
        case 1: out[threadIdx.x] = 1.0f; break;
        case 2: out[threadIdx.x + cfg::kW] = 2.0f;
        case 3: out[threadIdx.x + 2 * cfg::kW] = 3.0f; break;
        default: out[threadIdx.x + base] = 0.0f;
        }
    }"#;
    let s = run(src, "k", "1", "32", &[("mode", "2")]);
    assert_eq!(total(&s, "global", "store"), (2, 8));
    assert_eq!(total(&s, "global", "load"), (0, 0));
    assert_eq!(total(&s, "shared", "store").0, 1);
    assert_eq!(total(&s, "shared", "load").0, 1);
}

#[test]
fn references_name_places() {
    // acc(out[t], in[t]) reads and writes out[t] once each through the reference.
    let src = r#"
    __device__ void acc(float &dst, const float &v) { dst += v; }
    __global__ void k(const float *in, float *out) {
        acc(out[threadIdx.x], in[threadIdx.x]);
    }"#;
    let s = run(src, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_texture_object_is_a_handle_that_moves_no_memory() {
    // A texture object taken and never fetched moves nothing (issue 28: a branch on a constant
    // flag may leave every fetch dead); fetches are counted in tests/texture.rs.
    let src = "__global__ void k(cudaTextureObject_t t, float *out) { out[threadIdx.x] = 0.0f; }\n";
    let s = run(src, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert!(s.totals.texture.is_empty());
}

#[test]
fn lambdas_class_templates_and_methods() {
    // One warp. load(i) reads a[t] and a[t + 32] (4 sectors each) through a lambda; Pair<float>
    // is 8 bytes (x @0, y @4): p[t].y spans 256 bytes = 8 sectors through a method.
    let src = r#"
    template <typename T> struct Pair {
        T x, y;
        __device__ T second() const { return y; }
    };
    __global__ void k(const float *a, const Pair<float> *p, float *out) {
        int i = threadIdx.x;
        auto load = [&](int j) { return a[j]; };
        out[i] = load(i) + load(i + 32) + p[i].second();
    }"#;
    let s = run(src, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (3, 16));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn constructors_if_constexpr_and_char_shared_buffers() {
    // One warp: FAST picks s[i] = a[i] (1 global load, 1 shared store); the constructors copy
    // s[i] (1 shared load) into registers; one store of b[i]. a[i + 1] is never executed.
    let src = r#"
    struct V2 { float x, y; __device__ V2(float a, float b) : x(a), y(b) {} __device__ V2() : x(0), y(0) {} };
    struct Acc { float s; __device__ Acc() { s = 0.0f; } __device__ void add(float v) { s += v; } };
    template <bool FAST, typename T>
    __global__ void k(const T *a, T *b) {
        extern __shared__ __align__(16) char smem[];
        T *s = reinterpret_cast<T *>(smem);
        int i = threadIdx.x;
        if constexpr (FAST) { s[i] = a[i]; } else { s[i] = a[i + 1]; }
        __syncthreads();
        V2 p(s[i], 1.0f);
        V2 q = V2(p.x, 2.0f);
        Acc acc;
        acc.add(q.x);
        b[i] = acc.s + p.y;
    }"#;
    let mut o = opts("1", "32", &[("FAST", "1"), ("T", "float")]);
    o.shared_bytes = 128;
    let s = analyze_source("m.cu", src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(total(&s, "shared", "store").0, 1);
    assert_eq!(total(&s, "shared", "load").0, 1);
}

#[test]
fn a_packed_vector_class_template_moves_16_bytes_at_once() {
    // 64 blocks x 256 threads = 512 warps; each thread loads 16 bytes from a and from b and
    // stores 16 bytes: per warp 512 bytes = 16 sectors per request.
    let src = r#"
    template <class T> struct alignas(16) Pack16 {
        Pack16() = default;
        __device__ explicit Pack16(int4 raw) { memcpy(&lanes, &raw, sizeof(raw)); }
        __device__ T &operator[](int k) { return lanes[k]; }
        __device__ int4 raw() const { int4 r; memcpy(&r, &lanes, sizeof(r)); return r; }
        static constexpr const size_t count = sizeof(int4) / sizeof(T);
        T lanes[count];
    };
    template <class T> __device__ Pack16<T> load16(const T *p) {
        return Pack16<T>{__ldcs(reinterpret_cast<const int4 *>(p))};
    }
    template <class T> __device__ void store16(T *p, Pack16<T> v) { *reinterpret_cast<int4 *>(p) = v.raw(); }
    typedef float real;
    typedef Pack16<real> r128;
    __global__ void add(real *out, const real *a, const real *b) {
        int i = (blockIdx.x * blockDim.x + threadIdx.x) * r128::count;
        r128 o;
        r128 x = load16(a + i);
        r128 y = load16(b + i);
        for (int k = 0; k < x.count; k++) {
            o[k] = (real)((float)x[k] + (float)y[k]);
        }
        store16(out + i, o);
    }"#;
    let s = run(src, "add", "64", "256", &[]);
    assert_eq!(total(&s, "global", "load"), (1024, 16384));
    assert_eq!(total(&s, "global", "store"), (512, 8192));
    assert!(s.instructions.iter().all(|r| r.width == 16));
}

#[test]
fn function_objects_tags_and_known_function_pointers() {
    // One warp. combine(.., Sum{}) calls Sum::operator(); pick<true> reads b[t] (1 request of
    // 4 sectors), pick<false> reads nothing; f = dbl is inlined: a[t] once; one store.
    let src = r#"
    #include <type_traits>
    struct Sum { __device__ float operator()(float a, float b) const { return a + b; } };
    template <typename Op> __device__ float combine(float a, float b, Op op) { return op(a, b); }
    template <bool Flag> __device__ float pick(const float *p, std::bool_constant<Flag>) {
        float v = 0.0f;
        if (Flag) v = p[threadIdx.x];
        return v;
    }
    using fn_t = float (*)(float);
    __device__ float dbl(float x) { return 2 * x; }
    __global__ void k(const float *a, const float *b, float *out) {
        fn_t f = dbl;
        float v = combine(f(a[threadIdx.x]), 1.0f, Sum{});
        float w = pick(b, std::true_type{}) + pick(b, std::bool_constant<false>{});
        out[threadIdx.x] = v + w;
    }"#;
    let s = run(src, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}
