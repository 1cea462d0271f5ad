//! Issue 27, round 5 of the census: ordinary C and C++ found in the modern trees and in
//! cuda-samples' `5_Domain_Specific`. Each test's numbers are worked out by hand in its comment
//! (a warp is 32 lanes; a sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{sheet, total};
use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn run_with(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet(src, grid, block, args)
}

fn run(src: &str, grid: &str, block: &str) -> Sheet {
    run_with(src, grid, block, &[])
}

#[test]
fn an_array_size_that_is_a_condition_on_template_arguments() {
    // LeetCUDA's flash attention: `uint32_t R_D[..][(kOStorageAccFloat32) ? 4 : 2]`. `a` has
    // `(K) ? 4 : 2` elements, `b` has `(K > 1 || !K) ? 3 : (K == 1 && K < 8) ? 5 : 1`: K = 0 -> 3,
    // K = 1 -> 5, K = 2 -> 3. The second loop stores out[i*32 + t] once per element of `b`: each
    // store is 128 contiguous bytes from a 128-byte boundary, 4 sectors, one warp.
    let src = r#"
    template<int K>
    __global__ void k(float *out) {
        float a[(K) ? 4 : 2];
        int b[(K > 1 || !K) ? 3 : (K == 1 && K < 8) ? 5 : 1];
        for (int i = 0; i < sizeof(a) / sizeof(a[0]); i++) a[i] = i;
        for (int i = 0; i < sizeof(b) / sizeof(int); i++) out[i * 32 + threadIdx.x] = a[i & 1];
    }"#;
    for (k, stores) in [("0", 3), ("1", 5), ("2", 3)] {
        let s = run_with(src, "1", "32", &[("K", k)]);
        assert_eq!(total(&s, "global", "store"), (stores, 4 * stores), "K = {k}");
    }
}

#[test]
fn sizeof_a_shared_array_is_all_its_elements() {
    // `sizeof(s)` of `__shared__ float s[2][64]` is 512 bytes, 128 floats: lanes t = 0..31 store
    // out[i] for i = t, t+32, t+64, t+96: 4 stores of 128 contiguous bytes, 16 sectors.
    let src = r#"
    __global__ void k(float *out) {
        __shared__ float s[2][64];
        s[0][threadIdx.x] = 1.0f;
        for (unsigned i = threadIdx.x; i < sizeof(s) / sizeof(float); i += 32) out[i] = 0.0f;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "store"), (4, 16));
}

#[test]
fn components_of_a_vector_passed_by_value_move_no_memory() {
    // cuda-samples' Mandelbrot (`const uchar4 colors`, `color.x = m * colors.x`) and
    // marchingCubes (`float3 voxelSize`): the components are values of the parameter space.
    // Only the store dst[t] moves memory: 32 lanes x 4 bytes from a 256-byte boundary, 4
    // sectors, one request.
    let src = r#"
    __global__ void k(uchar4 *dst, const uchar4 colors, float3 voxelSize) {
        uchar4 c;
        c.x = threadIdx.x * colors.x;
        c.y = colors.y; c.z = colors.z;
        c.w = (unsigned char)(voxelSize.x * 2.0f);
        dst[threadIdx.x] = c;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(total(&s, "global", "load"), (0, 0));
}

#[test]
fn an_array_member_of_a_constant_structure_through_a_reference() {
    // volumeRender's `mul(const float3x4 &M, const float4 &v)` with `M.m[0]`, called on a
    // `__constant__ float3x4`: constant memory, no global traffic. The load and store of
    // o[t] (float4): 32 lanes x 16 bytes = 512 contiguous bytes, 16 sectors, one request each.
    let src = r#"
    typedef struct { float4 m[3]; } float3x4;
    __constant__ float3x4 c_inv;
    __device__ float4 mul(const float3x4 &M, const float4 &v) {
        float4 r;
        r.x = v.x * M.m[0].x + M.m[1].y;
        r.y = v.y; r.z = v.z; r.w = 1.0f;
        return r;
    }
    __global__ void k(float4 *o) {
        float4 v = o[threadIdx.x];
        o[threadIdx.x] = mul(c_inv, v);
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(total(&s, "global", "store"), (1, 16));
}

#[test]
fn a_pointer_member_of_a_constant_structure_still_reaches_memory() {
    // The rule above never hides memory: `c.d[t]` goes through a pointer member, a global load
    // of one request per warp (its sectors an assumption: the pointer's value is unknown).
    let src = r#"
    struct P { float *d; int n; float w[2]; };
    __constant__ P c;
    __global__ void k(float *o) {
        o[threadIdx.x] = c.d[threadIdx.x] * c.w[1] + c.n;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load").0, 1);
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn an_enumeration_inside_a_class_template() {
    // cuda-samples' MC_SingleAsianOptionP: `template <typename Real> struct AsianOption { enum
    // CallPut { Call, Put }; ... CallPut type; }` and `option->type == AsianOption<Real>::Put`.
    // With Real = double: six doubles (48 bytes), then `type` (an int) at 48: 56 bytes.
    // option->strike (bytes 8..16) and option->type (48..52): every lane the same address, one
    // sector each, 1 request. paths[t] and values[t]: 32 x 8 = 256 bytes, 8 sectors each.
    let src = r#"
    template <typename Real> struct AsianOption {
        enum CallPut { Call, Put };
        Real spot; Real strike; Real r; Real sigma; Real tenor; Real dt;
        CallPut type;
    };
    template <typename Real>
    __global__ void computeValue(Real *const values, const Real *const paths,
                                 const AsianOption<Real> *const option) {
        unsigned int t = threadIdx.x;
        Real s = option->strike;
        if (option->type == AsianOption<Real>::Put) s = -s;
        values[t] = paths[t] - s;
    }"#;
    let s = run_with(src, "1", "32", &[("Real", "double")]);
    let row = |text: &str| s.instructions.iter().find(|r| r.text == text).map(|r| (r.requests, r.sectors));
    assert_eq!(row("option->strike"), Some((1, 1)));
    assert_eq!(row("option->type"), Some((1, 1)));
    assert_eq!(total(&s, "global", "load"), (3, 10));
    assert_eq!(total(&s, "global", "store"), (1, 8));
}

#[test]
fn an_enumeration_inside_a_structure_names_a_member_type() {
    // The same in a plain structure: `Mode m` is an int at offset 4 after `float w`: 8 bytes.
    // p[t].m for t = 0..31: bytes 8t+4..8t+8, 256 bytes in all, 8 sectors, 1 request.
    let src = r#"
    struct Item { enum Mode { Off, On = 3 }; float w; Mode m; };
    __global__ void k(const Item *p, int *out) {
        int t = threadIdx.x;
        out[t] = p[t].m == Item::On ? 1 : 0;
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

mod launch_site {
    use std::io::Write;
    use std::process::Command;

    /// SGEMM_CUDA's runner: one `BM` per branch, each seen only by the launch in its block.
    const SRC: &str = r#"
    template <const int BM, const int BN>
    __global__ void tile(float *C) {
        C[blockIdx.x * BM * BN + threadIdx.x] = 0.0f;
    }
    void run(float *C, int big) {
        const unsigned TN = 8;
        if (big) {
            const unsigned BM = 128;
            const unsigned BN = 128;
            dim3 gridDim(4);
            dim3 blockDim((BM * BN) / (TN * TN));
            tile<BM, BN><<<gridDim, blockDim>>>(C);
        } else {
            const unsigned BM = 64;
            const unsigned BN = 64;
            dim3 gridDim(2);
            dim3 blockDim((BM * BN) / (TN * TN));
            tile<BM, BN><<<gridDim, blockDim>>>(C);
        }
    }
    "#;

    fn analyze(line: &str) -> serde_json::Value {
        let dir = std::env::temp_dir().join(format!("sector-estimate-round5-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("runner.cu");
        std::fs::File::create(&p).unwrap().write_all(SRC.as_bytes()).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_sector-estimate"))
            .args(["analyze", p.to_str().unwrap(), "--kernel", "tile", "--launch-site", line, "--format", "json"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    }

    #[test]
    fn each_launch_sees_the_declarations_of_its_own_block() {
        // Line 13 (the first launch): BM = BN = 128, block 16384 / 64 = 256 threads, grid 4.
        // Block b stores C[b*16384 + t], t = 0..255: 1 KiB contiguous from a 64 KiB boundary,
        // 8 warps x 4 sectors: 32 requests, 128 sectors over the 4 blocks.
        let v = analyze("13");
        assert_eq!(v["launch"]["grid"], serde_json::json!([4, 1, 1]));
        assert_eq!(v["launch"]["block"], serde_json::json!([256, 1, 1]));
        assert_eq!(v["totals"]["global_store"]["requests"], 32);
        assert_eq!(v["totals"]["global_store"]["sectors"], 128);
        // Line 19 (the second): BM = BN = 64, block 4096 / 64 = 64 threads (2 warps), grid 2:
        // 4 requests, 16 sectors.
        let v = analyze("19");
        assert_eq!(v["launch"]["grid"], serde_json::json!([2, 1, 1]));
        assert_eq!(v["launch"]["block"], serde_json::json!([64, 1, 1]));
        assert_eq!(v["totals"]["global_store"]["requests"], 4);
        assert_eq!(v["totals"]["global_store"]["sectors"], 16);
    }
}

#[test]
fn a_type_member_of_a_class_template_instance() {
    // cuda-samples' nbody: `typename vec4<T>::Type *pos` with `template <> struct vec4<float> {
    // typedef float4 Type; }`. T = float: pos[t] is a float4, 32 x 16 = 512 bytes, 16 sectors,
    // one request; out[t] a float, 4 sectors. T = double: double4 through the other
    // specialization (`using`), 32 bytes a lane, 1,024 bytes, 32 sectors; out[t] 8 sectors.
    let src = r#"
    template <typename T> struct vec4 { typedef float Type; };
    template <> struct vec4<float> { typedef float4 Type; };
    template <> struct vec4<double> { using Type = double4; };
    template <typename T>
    __global__ void k(typename vec4<T>::Type *pos, T *out) {
        typename vec4<T>::Type p = pos[threadIdx.x];
        out[threadIdx.x] = p.x;
    }"#;
    let s = run_with(src, "1", "32", &[("T", "float")]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    let s = run_with(src, "1", "32", &[("T", "double")]);
    assert_eq!(total(&s, "global", "load").1, 32);
    assert_eq!(total(&s, "global", "store"), (1, 8));
}

#[test]
fn methods_declared_in_a_class_take_no_room() {
    // cuda-samples' interval: `T const &lower() const;` declared in the class and defined after
    // it. S is { float a; float b; } with three method declarations: 8 bytes, b at 4. s[t].b for
    // t = 0..31: 4 bytes every 8, 256 bytes, 8 sectors, one request.
    let src = r#"
    template <class T> struct S {
        T a;
        __device__ __host__ T const &lower() const;
        __device__ int size() const;
        T b;
        __device__ T *ptr();
    };
    template <class T> __device__ __host__ T const &S<T>::lower() const { return a; }
    __global__ void k(S<float> *s, float *o) { o[threadIdx.x] = s[threadIdx.x].b; }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_pointer_to_a_function_member_is_data_and_still_refused() {
    // `int (*fp)(int)` is a member holding a pointer (8 bytes), not a method: the structure is
    // not laid out without it, so the kernel is refused with the type named, never counted with
    // a layout that leaves it out.
    let src = r#"
    struct S { float a; int (*fp)(int); float b; };
    __global__ void k(S *s, float *o) { o[threadIdx.x] = s[threadIdx.x].b; }"#;
    let o = AnalyzeOptions { grid: "1".into(), block: "32".into(), ..Default::default() };
    let e = analyze_source("m.cu", src, &o).err().expect("refused").one_line();
    assert!(e.contains("type `S`") && e.contains("m.cu:3:"), "{e}");
}

#[test]
fn a_pointer_into_constant_memory_reads_no_global_memory() {
    // cuda-samples' quasirandomGenerator: `unsigned int *dimBase = &c_Table[threadIdx.y][0];`
    // then `dimBase[bit]`, reads of `__constant__` memory (no global or shared traffic). The
    // only access is the store out[y*32 + x]: two warps (y = 0, 1), each 128 contiguous bytes
    // from a 128-byte boundary: 2 requests, 8 sectors.
    let src = r#"
    #define R 4
    static __constant__ unsigned int c_Table[2][R];
    __global__ void k(float *out, unsigned int seed) {
        unsigned int *dimBase = &c_Table[threadIdx.y][0];
        unsigned int result = 0, data = seed + threadIdx.x;
        for (int bit = 0; bit < R; bit++, data >>= 1)
            if (data & 1) result ^= dimBase[bit];
        out[threadIdx.y * 32 + threadIdx.x] = (float)result;
    }"#;
    let s = run_with(src, "1", "32,2", &[("seed", "5")]);
    assert_eq!(total(&s, "global", "load"), (0, 0));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}

#[test]
fn a_pointer_into_constant_memory_that_changes_is_still_refused() {
    // Reassigned to a global pointer on some lanes: reads through it may be global memory, so
    // the rule above does not apply and the address is refused with its place.
    let src = r#"
    static __constant__ unsigned int c_Table[2][4];
    __global__ void k(float *out, const unsigned *g) {
        const unsigned int *p = &c_Table[0][0];
        if (threadIdx.x > 8) p = g;
        out[threadIdx.x] = p[threadIdx.x & 3];
    }"#;
    let o = AnalyzeOptions { grid: "1".into(), block: "32".into(), ..Default::default() };
    let e = analyze_source("m.cu", src, &o).err().expect("refused").one_line();
    assert!(e.contains("m.cu:4:"), "{e}");
}

#[test]
fn template_arguments_deduced_from_a_class_template_instance_and_methods_defined_outside_it() {
    // cuda-samples' interval: `newton_interval_naive<T, THREADS>(result, ...)` deduces
    // DEPTH_RESULT from `global_stack<I, DEPTH_RESULT, THREADS> &result`, and interval_gpu's
    // methods are defined after the class (`template <class T> ... interval_gpu<T>::lower()`).
    // Here fill(s, v) deduces T = float, N = 4 from `Stack<float, 4>`; push, defined outside the
    // class, stores base[n * N] = out[t + 4] (n = 1): bytes 16 + 4t for t = 0..31, 16..144,
    // sectors 0..4: 5 sectors, one request (with N unbound or 0 it would be 4).
    let src = r#"
    template <class T, int N> struct Stack {
        T *base;
        int n;
        __device__ void push(T v);
        __device__ T const &top() const;
    };
    template <class T, int N> __device__ void Stack<T, N>::push(T v) { base[n * N] = v; }
    template <class T, int N> __device__ void fill(Stack<T, N> &s, T v) { s.push(v); }
    __global__ void k(float *out) {
        Stack<float, 4> s;
        s.base = out + threadIdx.x;
        s.n = 1;
        fill(s, 1.0f);
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "store"), (1, 5));
}

#[test]
fn an_explicit_specialization_of_a_method_keeps_its_own_body() {
    // The primary template's get, defined outside the class, reads p[i] (floats: 128 contiguous
    // bytes, 4 sectors); `template <> double S<double>::get` reads p[2 * i] (doubles 16 bytes
    // apart: 512 bytes, 16 sectors, each sector holding one lane's 8 bytes of 32). One request
    // each; the store o[t] 4 sectors.
    let src = r#"
    template <class T> struct S { T *p; __device__ T get(int i); };
    template <class T> __device__ T S<T>::get(int i) { return p[i]; }
    template <> __device__ double S<double>::get(int i) { return p[2 * i]; }
    __global__ void k(float *a, double *b, float *o) {
        S<float> x; x.p = a;
        S<double> y; y.p = b;
        o[threadIdx.x] = x.get(threadIdx.x) + y.get(threadIdx.x);
    }"#;
    let s = run(src, "1", "32");
    let row = |text: &str| s.instructions.iter().find(|r| r.text == text).map(|r| (r.requests, r.sectors));
    assert_eq!(row("p[i]"), Some((1, 4)));
    assert_eq!(row("p[2 * i]"), Some((1, 16)));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_function_template_calling_its_next_instance_is_a_compile_time_loop() {
    // cuda-samples' convolutionTexture: `row<i>` adds `row<i - 1>`, and the explicit
    // specialization `row<-1>` ends it. row<2>(a, x) reads a[x + 2], a[x + 1], a[x]: 32
    // consecutive floats each, from byte 8, 4 and 0 of a sector: 5, 5 and 4 sectors in 3 loads;
    // the store is 4 sectors. A template that calls itself with the same arguments is still
    // recursion.
    let src = r#"
    __constant__ float c_k[3];
    template <int i> __device__ float row(const float *a, int x) { return a[x + i] * c_k[i] + row<i - 1>(a, x); }
    template <> __device__ float row<-1>(const float *a, int x) { return 0; }
    __global__ void k(const float *a, float *o) {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        o[x] = row<2>(a, x);
    }"#;
    let s = run(src, "1", "32");
    assert_eq!(total(&s, "global", "load"), (3, 14));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    let same = r#"
    template <int i> __device__ float f(const float *a, int x) { return a[x] + f<i>(a, x); }
    __global__ void k(const float *a, float *o) { o[threadIdx.x] = f<1>(a, threadIdx.x); }"#;
    let e =
        analyze_source("same.cu", same, &AnalyzeOptions { grid: "1".into(), block: "32".into(), ..Default::default() })
            .err()
            .expect("recursion is refused");
    assert!(e.diagnostic.message.contains("recursion"), "{}", e.diagnostic.message);
}
