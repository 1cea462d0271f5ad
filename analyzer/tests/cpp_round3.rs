//! Issue 27, round 3 of the census: the ordinary C and C++ every kernel file uses. Each test's
//! numbers are worked out by hand in its comment (a warp is 32 lanes; a sector 32 bytes;
//! pointer parameters start 256-byte aligned).

use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn opts(grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    analyze_source("m.cu", src, &opts(grid, block, args)).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

fn fail(src: &str, args: &[(&str, &str)]) -> String {
    match analyze_source("m.cu", src, &opts("1", "32", args)) {
        Ok(_) => panic!("expected an error"),
        Err(f) => f.one_line(),
    }
}

/// (requests, sectors) of the rows with this op and space.
fn total(s: &Sheet, space: &str, op: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.space == space && r.op == op)
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.sectors))
}

#[test]
fn the_address_of_a_local_passed_to_a_helper_is_the_local() {
    // One warp. swap2(&a, &b) exchanges the locals in registers: b = in[t], a = 0. bump(&c)
    // adds 1 twice (through *x and x[0]): c = 2. add(&acc, b) sets acc.n = 1.
    // in[t]: 32 lanes x 4 B contiguous from a 256-byte boundary = 128 B = 4 sectors.
    // w[acc.n * 32 + t] = w[32 + t]: bytes 128..255, 4 sectors.
    // out[t * c] = out[2t]: lanes 8 bytes apart span 256 B = 8 sectors, one request.
    // Nothing else touches memory (the helpers' pointers name registers).
    let src = r#"
    __device__ void swap2(float *a, float *b) { float t = *a; *a = *b; *b = t; }
    __device__ void bump(int *x) { *x += 1; x[0] += 1; }
    struct Acc { float s; int n; };
    __device__ void add(Acc *a, float v) { a->s += v; a->n++; }
    __global__ void k(const float *in, float *out, const float *w) {
        float a = in[threadIdx.x];
        float b = 0.0f;
        swap2(&a, &b);
        int c = 0;
        bump(&c);
        Acc acc{0.0f, 0};
        add(&acc, b);
        out[threadIdx.x * c] = acc.s + a + w[acc.n * 32 + threadIdx.x];
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "store"), (1, 8));
    assert_eq!(s.instructions.len(), 3, "{:?}", s.instructions.iter().map(|r| &r.text).collect::<Vec<_>>());
}

#[test]
fn a_pointer_to_a_local_moved_by_arithmetic_is_refused_at_its_line() {
    // `p++` would point past the caller's variable: not followed, refused where it happens.
    let src = "__device__ void adv(float *p) {\n    p++;\n    *p = 1.0f;\n}\n__global__ void k(float *out) {\n    float a = 0.0f;\n    adv(&a);\n    out[threadIdx.x] = a;\n}\n";
    let e = fail(src, &[]);
    assert!(e.contains("m.cu:2:"), "{e}");
    assert!(e.contains("own variable"), "{e}");
}

#[test]
fn array_syntax_parameters_are_pointers() {
    // Two blocks of one warp.
    // a[blockIdx.x][t / 8][t % 8] of `const float a[][4][8]`: element b*32 + (t/8)*8 + t%8 =
    // b*32 + t, so each warp reads 128 contiguous bytes from a 128-byte boundary: 4 sectors,
    // 2 requests, 8 sectors.
    // sum3(r) of the thread's own array: registers, no access.
    // sum3(&w[3 * t]) reads v[0], v[1], v[2] at w + 12t + {0, 4, 8}: lanes 12 bytes apart
    // span bytes 0..383, and every one of the 12 sectors holds a lane: 12 sectors per request,
    // 3 requests per warp, 2 warps: 6 requests, 72 sectors.
    // out[t] of `float out[]`: 4 sectors per warp, 2 requests, 8 sectors.
    let src = r#"
    #define N 4
    __device__ float sum3(const float v[3]) { return v[0] + v[1] + v[2]; }
    __global__ void k(const float a[][N][8], float out[], float w[32]) {
        float r[3] = {1.f, 2.f, 3.f};
        int t = threadIdx.x;
        out[t] = a[blockIdx.x][t / 8][t % 8] + sum3(r) + sum3(&w[3 * t]);
    }"#;
    let s = run(src, "2", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (8, 80));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}

#[test]
fn array_parameters_of_device_functions_keep_their_rows() {
    // tile(a, t) reads m[t / 4][t % 4] of `const float m[][4]`: element 4*(t/4) + t%4 = t.
    // One warp: 128 contiguous bytes, 4 sectors; the store likewise 4 sectors.
    let src = r#"
    __device__ float tile(const float m[][4], int t) { return m[t / 4][t % 4]; }
    __global__ void k(const float *a, float *out) {
        out[threadIdx.x] = tile(a, threadIdx.x);
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn assignments_to_parameters_and_their_members() {
    // n = 32 / 2 = 16 lanes active. p.x advanced 32 floats (128 bytes, still sector aligned):
    // p.x[t] for t < 16 reads bytes 128..191: 2 sectors, 1 request. out[t * p.stride] with
    // p.stride = 1: 64 bytes, 2 sectors. p.n = 3 * 2 changes no address.
    let src = r#"
    struct P { const float *x; int n; int stride; };
    __global__ void k(P p, float *out, int n) {
        n = n / 2;
        p.n = p.n * 2;
        p.x += 32;
        if (threadIdx.x < n) out[threadIdx.x * p.stride] = p.x[threadIdx.x] + p.n;
    }"#;
    let s = run(src, "1", "32", &[("n", "32"), ("p.n", "3"), ("p.stride", "1")]);
    assert_eq!(total(&s, "global", "load"), (1, 2));
    assert_eq!(total(&s, "global", "store"), (1, 2));
}

#[test]
fn dim3_and_std_pair_are_values_in_registers() {
    // One warp of 32. t = threadIdx, b = (blockDim.x, 2, 1): pr = (2t, 2), q = (2t + 1, 3).
    // out[pr.first * pr.second + q.second - 3] = out[4t]: lanes 16 bytes apart span 512 bytes,
    // 16 sectors. in[t.x + b.y * 32 * blockIdx.x] = in[t] (block 0): 4 sectors.
    // e = dim3() is (1, 1, 1): e.z * 0 adds nothing.
    let src = r#"
    #include <utility>
    __global__ void k(const float *in, float *out) {
        dim3 t = threadIdx;
        dim3 b(blockDim.x, 2);
        dim3 e;
        uint3 u = blockIdx;
        std::pair<int, int> pr = std::make_pair((int)(t.x * 2), (int)b.y);
        auto q = std::make_pair(pr.first + 1, 3);
        out[pr.first * pr.second + q.second - 3 + e.z * 0] = in[t.x + b.y * 32 * u.x];
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 16));
}

#[test]
fn a_parenthesised_variable_is_not_a_cast() {
    // c = 2, one warp. `(b) * c` is b times c (not a cast of `*c`): out[2t], lanes 8 bytes
    // apart, 256 bytes, 8 sectors. `(b) + s` with s = 2: in[t + 2] reads bytes 8..135, sectors
    // 0..4: 5 sectors. (b and s are declared without initialisers, `int s, b;`.)
    let src = r#"
    __global__ void k(const float *in, float *out, int c) {
        int s, b;
        b = threadIdx.x;
        s = 2;
        out[(b) * c] = in[(b) + s];
    }"#;
    let s = run(src, "1", "32", &[("c", "2")]);
    assert_eq!(total(&s, "global", "load"), (1, 5));
    assert_eq!(total(&s, "global", "store"), (1, 8));
}

#[test]
fn toolkit_and_c_names() {
    // One warp. The SIMD intrinsics compute in registers. i = |t - 16| + 0 + 1 takes the values
    // 17..1 (t = 0..16) and 2..16 (t = 17..31): indices 1..17, bytes 4..71 of out: sectors 0, 1
    // and 2, one request. in[t]: 4 sectors. h[t] and ho[t]: 32 x 2 bytes = 64 bytes, 2 sectors.
    let src = r#"
    #include <cstdint>
    #include <cuda_fp16.h>
    __global__ void k(const unsigned *in, unsigned *out, const __half *h, __half *ho) {
        unsigned x = in[threadIdx.x];
        unsigned y = __vabs2(x) + __vmaxs4(x, 1u) + __vadd2(x, x) + __vsub4(x, x) + __vminu2(x, x);
        int i = std::abs((int)threadIdx.x - 16) + (int)UINT32_C(0) + (int)INT64_C(1);
        out[i] = y;
        ho[threadIdx.x] = hlog2(h[threadIdx.x]);
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 6));
    assert_eq!(total(&s, "global", "store"), (2, 5));
}

#[test]
fn file_scope_device_constant_and_shared_variables() {
    // One warp. dv is a `__device__` array (global memory, 256-byte aligned like a buffer):
    // dv[t] is 128 contiguous bytes, 4 sectors. cc is `__constant__`: not global traffic.
    // fs is a file-scope `__shared__` array: one shared store and one shared load request.
    // out[t]: 4 sectors.
    let src = r#"
    __device__ float dv[64];
    __constant__ float cc[4];
    __shared__ float fs[32];
    __global__ void k(float *out) {
        fs[threadIdx.x] = dv[threadIdx.x] + cc[0];
        __syncthreads();
        out[threadIdx.x] = fs[31 - threadIdx.x];
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(total(&s, "shared", "store").0, 1);
    assert_eq!(total(&s, "shared", "load").0, 1);
}
