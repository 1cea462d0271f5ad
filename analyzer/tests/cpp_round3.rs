//! Issue 27, round 3 of the census: the ordinary C and C++ every kernel file uses. Each test's
//! numbers are worked out by hand in its comment (a warp is 32 lanes; a sector 32 bytes;
//! pointer parameters start 256-byte aligned).

use crate::support::{failure, options as opts, sheet, total};
use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet(src, grid, block, args)
}

fn fail(src: &str, args: &[(&str, &str)]) -> String {
    failure(src, &opts("1", "32", args))
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

#[test]
fn lambdas_and_function_objects_passed_to_template_functions() {
    // One warp, n = 2.
    // red(in, t, MaxOp()): in[t] and in[t + 32], 128 contiguous bytes each from a 256-byte
    // boundary: 2 requests, 4 + 4 sectors. red(w, t, thrust::maximum<float>()): the same on w.
    // each(n, lambda): the lambda, inlined in `each` with the kernel's `acc`, `w` and `t`, reads
    // w[64 + 32i + t] for i = 0, 1: 2 requests of 4 sectors.
    // g(t), an extended lambda (`__device__` after the capture list): in[2t + 64], lanes 8 bytes
    // apart from byte 256: 256 bytes, 8 sectors, 1 request.
    // Loads: 2 + 2 + 2 + 1 = 7 requests, 8 + 8 + 8 + 8 = 32 sectors. out[t]: 4 sectors.
    let src = r#"
    #include <thrust/functional.h>
    struct MaxOp { __device__ float operator()(float a, float b) const { return a > b ? a : b; } };
    template <typename Op>
    __device__ float red(const float *p, int i, Op op) { return op(p[i], p[i + 32]); }
    template <typename F>
    __device__ void each(int n, F f) { for (int i = 0; i < n; i++) f(i); }
    __global__ void k(const float *in, const float *w, float *out, int n) {
        int t = threadIdx.x;
        float acc = red(in, t, MaxOp()) + red(w, t, thrust::maximum<float>());
        each(n, [&](int i) { acc += w[64 + 32 * i + t]; });
        auto g = [=] __device__ (int j) { return in[j * 2 + 64]; };
        out[t] = acc + g(t);
    }"#;
    let s = run(src, "1", "32", &[("n", "2")]);
    assert_eq!(total(&s, "global", "load"), (7, 32));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_lambda_sees_the_scope_it_was_written_in_not_the_callee_s() {
    // `apply` has its own `t` (= 5) and `in`; the lambda's `t` and `in` are the kernel's:
    // in[t] reads 128 contiguous bytes, 4 sectors (in[5] through the callee's names would be
    // 1 sector). out[t]: 4 sectors.
    let src = r#"
    template <typename F>
    __device__ float apply(const float *in, F f) { int t = 5; return f() + t * 0.0f; }
    __global__ void k(const float *in, const float *other, float *out) {
        int t = threadIdx.x;
        out[t] = apply(other, [&]() { return in[t]; });
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn small_syntax_the_census_stopped_on() {
    // One warp, n = 128: `a < n >> 3` is a < 16 (not the template `a<n>` then `> 3`): 16
    // lanes. in[a] and out[a] of 16 lanes: 64 bytes, 2 sectors each (the comments inside the
    // subscripts are blanks). `half x(f[a])` is a direct initialisation: f[a], 32 lanes, 4
    // sectors. h[a]: 32 x 2 bytes, 2 sectors. `const auto *p = in + 32`: *(p + a) is in[32 + a],
    // bytes 128..255, 4 sectors; out[a + 32] likewise 4 sectors.
    // Loads 3 requests, 2 + 4 + 4 = 10 sectors; stores 3 requests, 2 + 2 + 4 = 8 sectors.
    let src = r#"
    #include <cuda_fp16.h>
    __global__ void k(const float * __restrict in, float * __restrict out, const float *f, __half *h, int n) {
        int a = threadIdx.x;
        if (a < n >> 3) out[a /* lane */] = in[a // the lane
            ];
        half x(f[a]);
        const auto *p = in + 32;
        h[a] = x;
        out[a + 32] = *(p + a);
    }"#;
    let s = run(src, "1", "32", &[("n", "128")]);
    assert_eq!(total(&s, "global", "load"), (3, 10));
    assert_eq!(total(&s, "global", "store"), (3, 8));
    // `a < n > b` (no shift): (a < n) > b, here (t < 4) > 0: 4 lanes, 16 bytes, 1 sector.
    let src = "__global__ void k(float *out, int n) {\n    int a = threadIdx.x;\n    int b = 0;\n    if (a < n > b) out[a] = 1.0f;\n}\n";
    let s = run(src, "1", "32", &[("n", "4")]);
    assert_eq!(total(&s, "global", "store"), (1, 1));
}

#[test]
fn pointers_into_a_thread_s_own_arrays_kept_in_variables() {
    // One warp. in[t] of float4: 32 x 16 bytes = 512 bytes, 16 sectors, 1 request. Everything
    // through p (the array v), p2 (&v[1]) and pq (a float view of the register q) is registers,
    // in the loops too. out[t]: 4 sectors.
    let src = r#"
    __global__ void k(const float4 *in, float *out) {
        float v[4];
        float *p = v;
        float4 q = in[threadIdx.x];
        const float *pq = reinterpret_cast<const float *>(&q);
        for (int i = 0; i < 4; i++) p[i] = pq[i] * 2.0f;
        float *p2 = &v[1];
        float s = p2[2];
        for (int i = 0; i < 4; i++) s += p[i];
        out[threadIdx.x] = s;
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(s.instructions.len(), 2);
}

#[test]
fn template_arguments_deduced_from_references_to_arrays() {
    // One warp. put(v, out, t): N = 3 from `float v[3]`: out[t + 32i], i = 0..2, 3 stores of 4
    // sectors. clear(bins): N = 4, registers only. sweep(s, o2): R = 2, C = 32 from the shared
    // `s[2][32]`: o2[t + 32r] += s[r][t % 32] for r = 0, 1: 2 loads and 2 stores of 4 sectors,
    // 2 shared loads. s[0][t] = in[t]: 1 shared store; in[t] 4 sectors.
    // Global loads 1 + 2 = 3 requests, 4 + 8 = 12 sectors; stores 3 + 2 = 5 requests, 12 + 8 = 20.
    let src = r#"
    template <typename T, int N>
    __device__ void put(T (&v)[N], float *out, int t) {
        for (int i = 0; i < N; i++) out[t + 32 * i] = v[i];
    }
    template <int N>
    __device__ void clear(unsigned (&bins)[N]) { for (int i = 0; i < N; i++) bins[i] = 0; }
    template <int R, int C>
    __device__ void sweep(float (&s)[R][C], float *out) {
        for (int r = 0; r < R; r++) out[threadIdx.x + 32 * r] += s[r][threadIdx.x % C];
    }
    __global__ void k(const float *in, float *out, float *o2) {
        float v[3] = {1.f, 2.f, 3.f};
        unsigned bins[4];
        clear(bins);
        put(v, out, threadIdx.x);
        __shared__ float s[2][32];
        s[0][threadIdx.x] = in[threadIdx.x];
        __syncthreads();
        sweep(s, o2);
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (3, 12));
    assert_eq!(total(&s, "global", "store"), (5, 20));
    assert_eq!(total(&s, "shared", "load").0, 2);
    assert_eq!(total(&s, "shared", "store").0, 1);
}

#[test]
fn rows_of_a_kernel_in_a_header_name_the_header_and_its_line() {
    // main.cu includes inc/a.cuh, which includes deeper/k.cuh (two levels): the kernel's
    // accesses are on line 3 of inc/deeper/k.cuh, at columns 5 (out) and 24 (in).
    let dir = std::env::temp_dir().join(format!("sector-estimate-round3-hdr-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("inc/deeper")).unwrap();
    std::fs::write(dir.join("main.cu"), "#include \"inc/a.cuh\"\nint main() { return 0; }\n").unwrap();
    std::fs::write(dir.join("inc/a.cuh"), "#pragma once\n#include \"deeper/k.cuh\"\n").unwrap();
    std::fs::write(
        dir.join("inc/deeper/k.cuh"),
        "// a kernel in a header\n__global__ void kh(const float *in, float *out) {\n    out[threadIdx.x] = in[threadIdx.x];\n}\n",
    )
    .unwrap();
    let a = sector_analyzer::analyze(
        sector_analyzer::Input::File(&dir.join("main.cu")),
        &opts("1", "32", &[]),
        &sector_analyzer::source::DiskLoader,
    )
    .unwrap_or_else(|f| panic!("{}", f.one_line()));
    let rows: Vec<(Option<&str>, u32, u32)> =
        a.sheet.instructions.iter().map(|r| (r.file.as_deref(), r.line, r.column)).collect();
    assert_eq!(rows, vec![(Some("inc/deeper/k.cuh"), 3, 5), (Some("inc/deeper/k.cuh"), 3, 24)]);
    let text = sector_analyzer::sheet::text::render(&a.sheet);
    assert!(text.contains("inc/deeper/k.cuh:3:5"), "{text}");
    let json = sector_analyzer::sheet::json::render(&a.sheet);
    assert!(json.contains("\"file\"") && json.contains("\"inc/deeper/k.cuh\""), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn with_fills(grid: &str, block: &str, fills: &[(&str, &str)]) -> AnalyzeOptions {
    let mut o = opts(grid, block, &[]);
    o.fills = fills.iter().map(|(k, v)| (k.to_string(), sector_analyzer::Fill::parse(v).unwrap())).collect();
    o
}

#[test]
fn csr_row_offsets_drive_a_warp_per_row_loop() {
    // csr:1:64:7 is [0, 64] (one row: 0 first, NNZ last). One warp on row 0: rp[0] and rp[1],
    // every lane the same 4 bytes: 1 request and 1 sector each. j = lane, lane + 32: 2
    // iterations of 32 contiguous floats, 4 sectors each. y[0] by lane 0: 1 sector.
    let src = r#"
    __global__ void k(const int *rp, const float *val, float *y) {
        int row = blockIdx.x;
        int lane = threadIdx.x;
        float s = 0.0f;
        for (int j = rp[row] + lane; j < rp[row + 1]; j += 32) s += val[j];
        if (lane == 0) y[row] = s;
    }"#;
    let a = analyze_source("m.cu", src, &with_fills("1", "32", &[("rp", "csr:1:64:7")]))
        .unwrap_or_else(|f| panic!("{}", f.one_line()));
    assert_eq!(total(&a.sheet, "global", "load"), (4, 10));
    assert_eq!(total(&a.sheet, "global", "store"), (1, 1));
    // Two blocks read rp[2], past the fill's two offsets: an error naming the fill, not an
    // unknown trip count.
    let e = match analyze_source("m.cu", src, &with_fills("2", "32", &[("rp", "csr:1:64:7")])) {
        Ok(_) => panic!("expected an error"),
        Err(f) => f.one_line(),
    };
    assert!(e.contains("m.cu:2:") && e.contains("ran out") && e.contains("csr:1:64:7"), "{e}");
}

#[test]
fn csr_row_offsets_drive_a_thread_per_row_loop() {
    // One thread per row, 32 rows in one warp. Counted independently from the fill's offsets:
    // iteration i runs the lanes whose row has more than i nonzeros, lane r reading
    // val[rp[r] + i]; one request per iteration with an active lane, the distinct 32-byte
    // sectors of those addresses. rp[r] is 128 bytes (4 sectors); rp[r + 1], loaded once
    // (nothing is stored in the loop), is bytes 4..131 (5 sectors). y[r]: 4 sectors.
    let src = r#"
    __global__ void k(const int *rp, const float *val, float *y) {
        int r = threadIdx.x;
        float s = 0.0f;
        for (int j = rp[r]; j < rp[r + 1]; j++) s += val[j];
        y[r] = s;
    }"#;
    let fill = "csr:32:300:5";
    let t = sector_analyzer::Fill::parse(fill).unwrap().table().unwrap();
    assert_eq!((t.len(), t[0], t[32]), (33, 0, 300));
    let (mut req, mut sec) = (0u64, 0u64);
    for i in 0.. {
        let secs: std::collections::BTreeSet<u32> =
            (0..32).filter(|&r| t[r + 1] - t[r] > i).map(|r| (t[r] + i) * 4 / 32).collect();
        if secs.is_empty() {
            break;
        }
        req += 1;
        sec += secs.len() as u64;
    }
    let a = analyze_source("m.cu", src, &with_fills("1", "32", &[("rp", fill)]))
        .unwrap_or_else(|f| panic!("{}", f.one_line()));
    let val = a.sheet.instructions.iter().find(|r| r.text == "val[j]").unwrap();
    assert_eq!((val.requests, val.sectors), (req, sec));
    assert_eq!(total(&a.sheet, "global", "load"), (req + 2, sec + 9));
    assert_eq!(total(&a.sheet, "global", "store"), (1, 4));
}

#[test]
fn complex_values_and_managed_variables() {
    // One warp. cuFloatComplex is float2 (8 bytes): in[t] is 32 x 8 = 256 contiguous bytes, 8
    // sectors; out[t] likewise. cuCmulf, make_cuFloatComplex and cuCrealf compute in registers.
    // mv, a `__managed__` array, is global memory placed like a buffer (256-byte aligned):
    // mv[t + 32] is bytes 128..255, 4 sectors. o2[t]: 4 sectors.
    let src = r#"
    #include <cuComplex.h>
    __managed__ float mv[64];
    __global__ void k(const cuFloatComplex *in, cuFloatComplex *out, float *o2) {
        cuFloatComplex a = in[threadIdx.x];
        out[threadIdx.x] = cuCmulf(a, make_cuFloatComplex(2.f, 0.f));
        o2[threadIdx.x] = mv[threadIdx.x + 32] + cuCrealf(a);
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 12));
    assert_eq!(total(&s, "global", "store"), (2, 12));
}

#[test]
fn cub_collectives_are_refused_by_name() {
    let src = "#include <cub/cub.cuh>\n__global__ void k(const float *in, float *out) {\n    typedef cub::BlockReduce<float, 32> BR;\n    __shared__ typename BR::TempStorage tmp;\n    out[0] = BR(tmp).Sum(in[threadIdx.x]);\n}\n";
    let e = fail(src, &[]);
    assert!(e.contains("m.cu:3:") && e.contains("cub's block and warp collectives"), "{e}");
}

#[test]
fn a_parenthesised_range_check_is_no_template() {
    // `(r >= 0 && r < n && c >= 0 && c < m)` parses as the template `r<n && c>` followed by
    // `= 0`, an assignment, unless `r` is known to be a variable. One warp, n = 16, m = 4,
    // c = blockIdx.x = 0: lanes 0..15 load in[r * 4], 16 bytes apart: bytes 0..255, 8 sectors
    // in one request; every lane stores o[r]: 4 sectors.
    let src = r#"
    __global__ void k(float *o, const float *in, int n, int m) {
        int r = threadIdx.x, c = blockIdx.x;
        float v = (r >= 0 && r < n && c >= 0 && c < m) ?
                      in[r * m + c] : 0.f;
        o[r] = v;
    }"#;
    let s = run(src, "1", "32", &[("n", "16"), ("m", "4")]);
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_cooperative_group_passed_to_a_function_template() {
    // `template <typename group_t> f(group_t g)` given a tile of 32: `g.size()` is 32, five
    // shuffles, no memory. Two warps load in[t] (4 sectors each); lane 0 of each stores one
    // float: 1 request and 1 sector per warp.
    let src = r#"
    #include <cooperative_groups.h>
    using namespace cooperative_groups;
    template <typename group_t>
    __device__ float wsum(group_t group, float val) {
        for (int offset = group.size() / 2; offset > 0; offset >>= 1)
            val += group.shfl_down(val, offset);
        return val;
    }
    __global__ void k(float *o, const float *in) {
        thread_block block = this_thread_block();
        thread_block_tile<32> t = tiled_partition<32>(block);
        float v = wsum(t, in[threadIdx.x]);
        if (t.thread_rank() == 0) o[threadIdx.x / 32] = v;
    }"#;
    let s = run(src, "1", "64", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "store"), (2, 2));
}

#[test]
fn cufft_types_are_the_complex_ones() {
    // `cufftComplex` is `float2`: c[i].x of 32 lanes, 8 bytes apart, spans 256 B: 8 sectors.
    let src = r#"
    __global__ void k(cufftComplex *c, const cufftReal *r) {
        int i = threadIdx.x;
        c[i].x = r[i];
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 8));
}

#[test]
fn accesses_both_arms_of_an_if_share_are_issued_once() {
    // One warp, lanes alternate arms. Both arms begin with a[i]: hoisted above the branch, one
    // request of 32 floats, 4 sectors (the H200 counted 313 requests for 313 such warps,
    // validate/probes/compiled). Both arms end with a store to o[i]: sunk below it, one request,
    // 4 sectors.
    let src = r#"
    __global__ void k(const float *a, float *o) {
        int i = threadIdx.x;
        float s;
        if (i & 1) s = a[i] * 2.0f;
        else s = a[i] + 1.0f;
        if (i & 1) o[i] = s;
        else o[i] = 2.0f * s;
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // A load only some lanes of an arm reach (inside `?:`) is not hoisted: the odd lanes below 8
    // load a[1..7] (1 sector), the even lanes a[0..30] (4 sectors), two requests.
    let src = r#"
    __global__ void k(const float *a, float *o) {
        int i = threadIdx.x;
        float s;
        if (i & 1) s = i < 8 ? a[i] : 0.0f;
        else s = a[i];
        o[i] = s;
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 5));
}

#[test]
fn member_loads_of_one_vector_element_are_one_load() {
    // One warp. q[i].y - q[i].x of a float2: one 8-byte load, 32 x 8 B = 256 B, 8 sectors (the
    // H200: 313 requests for 313 warps, validate/probes/compiled). p[i].z + p[i].w of a float4:
    // one 8-byte load at offset 8 of each 16-byte element, the warp spanning 512 B: 16 sectors.
    // p[i].x + p[i].z: not a run, two 4-byte loads of 16 sectors each.
    let pair = r#"
    __global__ void k(const float2 *q, float *o) { int i = threadIdx.x; o[i] = q[i].y - q[i].x; }"#;
    assert_eq!(total(&run(pair, "1", "32", &[]), "global", "load"), (1, 8));
    let high = r#"
    __global__ void k(const float4 *p, float *o) { int i = threadIdx.x; o[i] = p[i].z + p[i].w; }"#;
    assert_eq!(total(&run(high, "1", "32", &[]), "global", "load"), (1, 16));
    let gap = r#"
    __global__ void k(const float4 *p, float *o) { int i = threadIdx.x; o[i] = p[i].x + p[i].z; }"#;
    assert_eq!(total(&run(gap, "1", "32", &[]), "global", "load"), (2, 32));
}
