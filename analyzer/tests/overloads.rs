//! C++ overloads (helper_math.h style) and the integer intrinsics that feed indices. Every
//! number is worked out by hand in the comments.

use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn run(src: &str, grid: &str, block: &str) -> Sheet {
    let o = AnalyzeOptions { grid: grid.into(), block: block.into(), ..Default::default() };
    analyze_source("m.cu", src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

/// (requests, sectors) of the rows of this op whose access text starts with `name`.
fn rows(s: &Sheet, op: &str, name: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.op == op && r.space == "global" && r.text.starts_with(name))
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.sectors))
}

#[test]
fn overloads_are_chosen_by_arity_and_argument_types() {
    let src = r#"
    inline __device__ float3 make_float3(float s) { return make_float3(s, s, s); }
    inline __device__ float3 make_float3(float4 a) { return make_float3(a.x, a.y, a.z); }
    inline __device__ float2 fminf(float2 a, float2 b) { return make_float2(fminf(a.x, b.x), fminf(a.y, b.y)); }
    __device__ int pick(int x) { return 1; }
    __device__ int pick(float x) { return 2; }
    __device__ int pick(int x, int y) { return 3; }
    __global__ void k(const float4 *in, float *out, float2 *o2) {
        int t = threadIdx.x;
        float4 p = in[t];
        float3 q = make_float3(p);
        float3 r = make_float3(1.0f);
        out[t * pick(t)] = q.x + r.y;
        out[t * pick(2.0f) + 64] = 0.0f;
        out[t * pick(t, t) + 1024] = 0.0f;
        o2[t] = fminf(make_float2(p.x, p.y), make_float2(p.z, p.w));
        out[t + 2048] = fminf(p.x, p.y);
    }"#;
    let s = run(src, "1", "32");
    // in[t]: 32 lanes x 16 B = 512 B: 16 sectors in one request.
    assert_eq!(rows(&s, "load", "in["), (1, 16));
    // pick(int) = 1: 128 B, 4 sectors; pick(float) = 2: 8-byte stride from byte 256, lanes end at
    // byte 508: 8 sectors; pick(int, int) = 3: 12-byte stride from byte 4096: 384 B, 12 sectors;
    // the toolkit's fminf(float, float): 4 sectors.
    assert_eq!(rows(&s, "store", "out["), (4, 4 + 8 + 12 + 4));
    // The file's fminf(float2, float2): one 8-byte store per lane, 256 B: 8 sectors.
    assert_eq!(rows(&s, "store", "o2["), (1, 8));
}

#[test]
fn integer_multiply_intrinsics_are_computed_as_the_hardware_does() {
    let src = r#"
    __global__ void k(float *a, float *b, float *c, float *d) {
        a[__umul24(blockIdx.x, blockDim.x) + threadIdx.x] = 1.0f;
        b[__mul24(-2, 3) + 6 + threadIdx.x] = 1.0f;
        c[__umulhi(0x80000000u, 2u) + threadIdx.x] = 1.0f;
        d[__mulhi(-0x40000000, 8) + 2 + threadIdx.x] = 1.0f;
    }"#;
    let s = run(src, "4", "64");
    // 4 blocks x 2 warps, each storing 128 contiguous aligned bytes: 8 requests, 32 sectors.
    assert_eq!(rows(&s, "store", "a["), (8, 32));
    // __mul24(-2, 3) = -6 (sign-extended 24-bit operands): b[t], aligned, 4 sectors a warp.
    assert_eq!(rows(&s, "store", "b["), (8, 32));
    // __umulhi(2^31, 2) = 1: c[1 + t] spans bytes 4..131 of each warp's 128: 5 sectors a warp.
    assert_eq!(rows(&s, "store", "c["), (8, 40));
    // __mulhi(-2^30, 8) = high half of -2^33 = -2: d[t], aligned (unsigned it would be 7).
    assert_eq!(rows(&s, "store", "d["), (8, 32));
}

#[test]
fn math_results_through_pointers_to_locals_and_limits_constants_move_no_memory() {
    let src = r#"
    #include <climits>
    __global__ void k(const float *in, float *out, unsigned *m) {
        int t = threadIdx.x;
        float x = in[t];
        float s, c;
        int e;
        sincosf(x, &s, &c);
        float f = frexpf(x, &e);
        out[t] = s + c + f + abs(x) + (isnan(x) ? 1.0f : 0.0f);
        m[t + (UINT_MAX - 4294967295u)] = UINT_MAX;
    }"#;
    let s = run(src, "1", "32");
    // One warp: in[t], out[t] and m[t] are each 128 aligned bytes, 4 sectors in one request.
    assert_eq!(rows(&s, "load", "in["), (1, 4));
    assert_eq!(rows(&s, "store", "out["), (1, 4));
    assert_eq!(rows(&s, "store", "m["), (1, 4));
}

#[test]
fn anonymous_union_and_structure_members_take_their_place_in_the_layout() {
    // The union holds an int2 (8-byte aligned): it sits at offset 8, the structure is 16 bytes,
    // and `b` is at offset 12. Lanes read bytes 16t+12..16t+15: 512 bytes, 16 sectors.
    let src = r#"
    struct S { char c; union { int2 d; struct { int a, b; }; }; };
    __global__ void k(const S *s, int *out) {
        out[threadIdx.x] = s[threadIdx.x].b;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(rows(&s, "load", "s["), (1, 16));
    assert_eq!(rows(&s, "store", "out["), (1, 4));
}
