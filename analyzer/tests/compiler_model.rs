//! What the compiler keeps (DESIGN.md): loads of an address the thread already holds are
//! removed unless a possibly aliasing store came in between.

use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    let opts = AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    analyze_source("m.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

fn row<'s>(s: &'s Sheet, op: &str, text: &str) -> &'s sector_analyzer::sheet::Row {
    s.instructions.iter().find(|r| r.op == op && r.text == text).unwrap_or_else(|| panic!("no {op} {text}"))
}

const MATVEC: &str = r#"
__global__ void mv(const float* A, const float* x, float* C, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int k = 0; k < n; k++) {
        C[i] += A[i * n + k] * x[k];
    }
}"#;

#[test]
fn accumulating_into_global_loads_once_and_stores_every_iteration() {
    // 2 blocks of 64 threads = 4 warps, n = 16 iterations.
    let s = run(MATVEC, "2", "64", &[("n", "16")]);
    let load_c = row(&s, "load", "C[i]");
    assert_eq!(load_c.requests, 4, "one load of C[i] per warp, before the loop");
    assert_eq!(load_c.elided_loads, 128 * 15);
    assert_eq!(row(&s, "store", "C[i]").requests, 4 * 16);
    assert_eq!(row(&s, "load", "A[i * n + k]").requests, 4 * 16);
    assert_eq!(row(&s, "load", "x[k]").requests, 4 * 16);
    assert!(s.assumptions.iter().any(|a| a.contains("already loaded or stored")));
}

#[test]
fn a_store_through_another_pointer_may_alias_without_restrict() {
    let src = r#"
    __global__ void k(const float* a, float* b) {
        int i = threadIdx.x;
        float v = a[i];
        b[i] = v;
        float w = a[i];
        b[i + 32] = w;
    }"#;
    let s = run(src, "1", "32", &[]);
    let loads: u64 = s.instructions.iter().filter(|r| r.op == "load").map(|r| r.requests).sum();
    assert_eq!(loads, 2, "the store to b may change a[i]: both loads stay");
    let restrict = src.replace("const float* a", "const float* __restrict__ a");
    let s = run(&restrict, "1", "32", &[]);
    let loads: u64 = s.instructions.iter().filter(|r| r.op == "load").map(|r| r.requests).sum();
    assert_eq!(loads, 1, "a is __restrict__: the second load reuses the first");
}

#[test]
fn a_barrier_ends_reuse() {
    let src = r#"
    __global__ void k(const float* a, float* b) {
        int i = threadIdx.x;
        float v = a[i];
        __syncthreads();
        b[i] = v + a[i];
    }"#;
    let s = run(src, "1", "32", &[]);
    let loads: u64 = s.instructions.iter().filter(|r| r.op == "load").map(|r| r.requests).sum();
    assert_eq!(loads, 2);
}

#[test]
fn volatile_loads_are_always_issued() {
    let src = r#"
    __global__ void k(volatile float* a, float* b) {
        int i = threadIdx.x;
        float v = a[i];
        float w = a[i];
        b[i] = v + w;
    }"#;
    let s = run(src, "1", "32", &[]);
    let loads: u64 = s.instructions.iter().filter(|r| r.op == "load").map(|r| r.requests).sum();
    assert_eq!(loads, 2);
}

#[test]
fn lanes_with_different_trip_counts_are_flagged() {
    let src = r#"
    __global__ void k(const float* a, float* b) {
        float s = 0;
        for (int j = 0; j < threadIdx.x; j++) { s += a[j]; }
        b[threadIdx.x] = s;
    }"#;
    let s = run(src, "1", "32", &[]);
    let r = row(&s, "load", "a[j]");
    assert_eq!(r.requests, 31, "iterations 0..30 each have at least one lane");
    assert!(!r.exact);
    assert!(s.assumptions.iter().any(|a| a.contains("different trip counts")));
}

#[test]
fn partial_warps_and_2d_blocks_linearise_x_fastest() {
    // Block 24 x 4 = 96 threads = 3 warps; warp 0 holds rows 0 (24 lanes) and 1 (8 lanes).
    let src = r#"
    __global__ void k(const float* a, float* b, int w) {
        b[threadIdx.y * w + threadIdx.x] = a[threadIdx.y * w + threadIdx.x];
    }"#;
    let s = run(src, "1", "24,4", &[("w", "1024")]);
    let r = row(&s, "load", "a[threadIdx.y * w + threadIdx.x]");
    assert_eq!(r.requests, 3);
    // Row y covers bytes 4096y .. 4096y+96: 3 sectors for a full row of 24.
    // warp 0: row 0 (24 lanes, 3 sectors) + row 1 lanes 0..7 (1 sector) = 4
    // warp 1: row 1 lanes 8..23 (bytes 32..96: 2 sectors) + row 2 lanes 0..15 (2 sectors) = 4
    // warp 2: row 2 lanes 16..23 (1 sector) + row 3 (3 sectors) = 4
    assert_eq!(r.sectors, 12);
}

#[test]
fn block_size_not_a_multiple_of_32_has_a_partial_last_warp() {
    let src = "__global__ void k(const double* a, double* b) { b[threadIdx.x] = a[threadIdx.x]; }";
    let s = run(src, "1", "100", &[]);
    let r = row(&s, "load", "a[threadIdx.x]");
    // 100 doubles = 800 bytes: warps of 256 bytes (8 sectors) x3 and 4 lanes (32 bytes, 1 sector).
    assert_eq!((r.requests, r.sectors), (4, 25));
}

// ---- address identity by structure, and the assignment target evaluated once (issue 13) ----

#[test]
fn commuted_index_is_one_address_and_one_load() {
    // One warp, i = 0..31: a[i + 1] reads bytes 4..131, five 32-byte sectors; nvcc emits one
    // LDG for both operands (the second is the same value).
    let src = r#"
    __global__ void k(const float* a, float* o) {
        int i = threadIdx.x;
        o[i] = a[i + 1] * a[1 + i];
    }"#;
    let s = run(src, "1", "32", &[]);
    let first = row(&s, "load", "a[i + 1]");
    let second = row(&s, "load", "a[1 + i]");
    assert_eq!((first.requests, first.sectors), (1, 5));
    assert_eq!((second.requests, second.elided_loads), (0, 32));
}

#[test]
fn a_local_assigned_once_stands_for_its_value() {
    // `j` is `i + 1` in SSA form: a[j] and a[1 + i] are one address; both tiles from a 64-thread
    // block, 2 warps: one request each for the first load only.
    let src = r#"
    __global__ void k(const float* a, float* o) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        int j = i + 1;
        o[i] = a[j] + a[1 + i];
    }"#;
    let s = run(src, "1", "64", &[]);
    assert_eq!(row(&s, "load", "a[j]").requests, 2);
    assert_eq!(row(&s, "load", "a[1 + i]").requests, 0);
    // Different addresses stay two loads.
    let s = run(&src.replace("a[1 + i]", "a[2 + i]"), "1", "64", &[]);
    assert_eq!(row(&s, "load", "a[2 + i]").requests, 2);
}

#[test]
fn read_modify_write_target_loads_its_index_once() {
    // `out[idx[i]] += 1`: idx[i] is read once (one LDG in the SASS, volatile or not); out's
    // element is loaded once and stored once. One warp.
    for q in ["volatile int*", "const int*"] {
        let src = format!(
            "__global__ void k({q} idx, float* out) {{\n    int i = threadIdx.x;\n    out[idx[i]] += 1.0f;\n}}"
        );
        let s = run(&src, "1", "32", &[]);
        let idx: Vec<_> = s.instructions.iter().filter(|r| r.text == "idx[i]").collect();
        assert_eq!(idx.len(), 1, "{q}: one memory instruction for idx[i]");
        assert_eq!((idx[0].executions, idx[0].requests, idx[0].elided_loads), (1, 1, 0), "{q}");
        assert_eq!(row(&s, "load", "out[idx[i]]").requests, 1, "{q}");
        assert_eq!(row(&s, "store", "out[idx[i]]").requests, 1, "{q}");
        assert!(s.instructions.iter().all(|r| r.elided_loads == 0), "{q}: no removed load that never existed");
    }
}

#[test]
fn increment_through_an_index_loads_it_once() {
    let src = r#"
    __global__ void k(volatile int* idx, int* out) {
        int i = threadIdx.x;
        out[idx[i]]++;
    }"#;
    let s = run(src, "1", "64", &[]);
    assert_eq!(row(&s, "load", "idx[i]").executions, 2, "two warps, once each");
}

// ---- dead loads (issue 18) ----

#[test]
fn unused_loads_are_removed_as_nvcc_does() {
    let src = r#"
    __global__ void k(const float* in, float* out) {
        int t = threadIdx.x;
        float unused = in[t];
        in[t + 32];
        out[t] = 1.0f;
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(row(&s, "load", "in[t]").requests, 0);
    assert_eq!(row(&s, "load", "in[t + 32]").requests, 0);
    assert_eq!(s.totals.global_load.requests, 0);
    assert_eq!(s.totals.global_store.requests, 1);
    assert_eq!(s.assumptions.iter().filter(|a| a.contains("never used")).count(), 2);
    // Volatile loads are always issued.
    let s = run(&src.replace("const float* in", "volatile float* in"), "1", "32", &[]);
    assert_eq!(s.totals.global_load.requests, 2);
    assert!(!s.assumptions.iter().any(|a| a.contains("never used")));
}

#[test]
fn loads_used_through_locals_arrays_and_branches_stay() {
    let src = r#"
    __global__ void k(const float* in, float* out, int* flag) {
        int t = threadIdx.x;
        float a = in[t];
        float b = a * 2.0f;
        float buf[2];
        buf[0] = in[t + 32];
        int f = flag[t];
        if (f > 0) { out[t] = b + buf[0]; }
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(row(&s, "load", "in[t]").requests, 1);
    assert_eq!(row(&s, "load", "in[t + 32]").requests, 1);
    assert_eq!(row(&s, "load", "flag[t]").requests, 1);
    assert!(!s.assumptions.iter().any(|a| a.contains("never used")));
}

#[test]
fn a_local_pointer_into_shared_memory_is_shared() {
    // `p` points into the dynamic shared array: its accesses are shared (STS/LDS), one request
    // each for one warp; only `o` is global.
    let src = r#"
    __global__ void k(float* o) {
        extern __shared__ float sm[];
        float* p = sm + threadIdx.x;
        p[0] = 1.0f;
        __syncthreads();
        o[threadIdx.x] = p[1];
    }"#;
    let opts = AnalyzeOptions { grid: "1".into(), block: "32".into(), shared_bytes: 1024, ..Default::default() };
    let s = analyze_source("m.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(row(&s, "store", "p[0]").space, "shared");
    assert_eq!(row(&s, "load", "p[1]").space, "shared");
    assert_eq!(s.totals.global_load.requests, 0);
    assert_eq!(
        (s.totals.global_store.requests, s.totals.shared_store.requests, s.totals.shared_load.requests),
        (1, 1, 1)
    );
}

/// Loops whose trip count differs between a warp's lanes (validate/probes/unroll/, measured on
/// the H200). A step known only at run time is not unrolled by nvcc: the source loop's counts
/// are what the hardware counts, and stay exact. A constant step is unrolled: not exact.
#[test]
fn varying_trip_counts_exact_only_where_nvcc_does_not_unroll() {
    const SRC: &str = r#"
__global__ void k_bd(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = in[i] * 2.f;
}
__global__ void k_grid(const float *in, float *out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) out[i] = in[i] * 3.f;
}
__global__ void k_32(const float *in, float *out, int n) {
    for (int i = threadIdx.x; i < n; i += 32) out[i] = in[i] + 1.f;
}
"#;
    let with = |kernel: &str, grid: &str, block: &str, n: &str| {
        let opts = AnalyzeOptions {
            kernel: Some(kernel.into()),
            grid: grid.into(),
            block: block.into(),
            args: vec![("n".into(), n.into())],
            ..Default::default()
        };
        analyze_source("m.cu", SRC, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
    };
    // n = 1000 over 256 threads: 7 warps run 4 times (4 sectors each), the last warp 3 times
    // fully and once with 8 lanes (1 sector): 32 requests, 3 x 32 + 28 + 1 = 125 sectors. The
    // H200 counted 32 and 125 for both loads and stores.
    for (k, grid, block) in [("k_bd", "1", "256"), ("k_grid", "2", "128")] {
        let s = with(k, grid, block, "1000");
        for op in ["load", "store"] {
            let r = s.instructions.iter().find(|r| r.op == op).unwrap();
            assert_eq!((r.requests, r.sectors, r.exact), (32, 125, true), "{k} {op}");
        }
        assert!(s.assumptions.iter().any(|a| a.contains("nvcc does not unroll it")), "{k}");
    }
    // n = 100 over one warp, step 32: lanes run 4 or 3 times. The H200 counted 7 requests
    // (unrolled by 4 with a remainder loop) against the source loop's 4: not exact.
    let s = with("k_32", "1", "32", "100");
    let r = s.instructions.iter().find(|r| r.op == "load").unwrap();
    assert_eq!((r.requests, r.sectors, r.exact), (4, 13, false));
}

/// A load is removed only where the compiler sees the same address expression: after the loop
/// counter changes, `x[min(C - 1, t + u * 32)]` is a new address even where the clamp makes it
/// the same at run time (llm.c's softmax_forward_kernel7 on the H200: nvcc issues every load).
#[test]
fn a_changed_variable_makes_a_new_address_even_when_equal_at_run_time() {
    let src = r#"
__global__ void k(const float *x, float *out, int C) {
    float m = -1e30f;
    for (int u = 0; u < 4; u++) m = fmaxf(m, x[min(C - 1, (int)threadIdx.x + u * 32)]);
    out[threadIdx.x] = m;
}"#;
    // C = 40, one warp: u = 0 reads floats 0..31 (4 sectors); u = 1 reads 32..39 (1 sector);
    // u = 2 and 3 read float 39 in every lane (1 sector each). Four requests, 7 sectors.
    let s = run(src, "1", "32", &[("C", "40")]);
    let r = s.instructions.iter().find(|r| r.op == "load").unwrap();
    assert_eq!((r.requests, r.sectors, r.elided_loads), (4, 7, 0));
}

/// Loops with a small constant trip count are unrolled completely by nvcc: each copy sees its
/// counter as a constant, and GVN merges the copies' loads of one address (the H200 counted 2
/// `bias` loads a thread in llm.c's matmul_forward_kernel4, whose source loop makes 16; one
/// load of `x[4 * i + k]` for two `k` loops in softmax_forward_kernel5_lowp). A loop whose trip
/// count is known only at run time stays a loop: its iterations reload.
#[test]
fn completely_unrolled_copies_share_loads() {
    let src = r#"
__global__ void bias_init(const float *bias, float *out) {
    int oc = 8 * threadIdx.x;
    float vals[8][8];
    for (int i = 0; i < 8; i++) {
        for (int j = 0; j < 8; j += 4) {
            float4 b = *reinterpret_cast<const float4 *>(bias + oc + j);
            vals[i][j + 0] = b.x; vals[i][j + 1] = b.y; vals[i][j + 2] = b.z; vals[i][j + 3] = b.w;
        }
    }
    float s = 0.f;
    for (int i = 0; i < 8; i++) for (int j = 0; j < 8; j++) s += vals[i][j];
    out[threadIdx.x] = s;
}
__global__ void two_passes(const float *x, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float m = -1e30f;
    for (int k = 0; k < 4; k++) m = fmaxf(m, x[4 * i + k]);
    float s = 0.f;
    for (int k = 0; k < 4; k++) s += expf(x[4 * i + k] - m);
    out[i] = s;
}
__global__ void rolled(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    for (int k = 0; k < n; k++) s += x[4 * i + (k & 3)];
    out[i] = s;
}
"#;
    let with = |kernel: &str, args: Vec<(String, String)>| {
        let opts = AnalyzeOptions {
            kernel: Some(kernel.into()),
            grid: "1".into(),
            block: "32".into(),
            args,
            ..Default::default()
        };
        analyze_source("m.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
    };
    // One warp: bias + oc + j for j = 0 and 4, each 32 lanes x 16 bytes 32 bytes apart (32
    // sectors); the other 14 copies are the same two addresses.
    let s = with("bias_init", vec![]);
    let r = s.instructions.iter().find(|r| r.op == "load").unwrap();
    assert_eq!((r.requests, r.sectors), (2, 64));
    // x[4i + k]: 4 loads of 32 floats 16 bytes apart (16 sectors each), the second loop none.
    let s = with("two_passes", vec![]);
    let loads: Vec<(u64, u64)> =
        s.instructions.iter().filter(|r| r.op == "load").map(|r| (r.requests, r.sectors)).collect();
    assert_eq!(loads, vec![(4, 64), (0, 0)]);
    // n = 8 at run time: 8 loads of 16 sectors.
    let s = with("rolled", vec![("n".into(), "8".into())]);
    let r = s.instructions.iter().find(|r| r.op == "load").unwrap();
    assert_eq!((r.requests, r.sectors), (8, 128));
}

/// C++ reads a `volatile` target again for the value of an assignment to it (HeCBench's bscan:
/// `int t = s_data[idx] = val;`), and not for a discarded one or a postfix `++` (nvcc 13.0's
/// SASS: 5 loads and 4 stores here).
#[test]
fn a_volatile_assignment_used_as_a_value_is_read_again() {
    let src = r#"
    __global__ void k(int* out, int v) {
        __shared__ int s[64];
        volatile int* p = s;
        int t = p[threadIdx.x] = v;              // store, load again
        p[threadIdx.x + 32] = t += p[threadIdx.x]; // load, store (its value discarded)
        int u = (p[threadIdx.x] += 3);           // load, store, load again
        int w = p[threadIdx.x]++;                // load (the value), store
        out[threadIdx.x] = t + u + w;
    }"#;
    let s = run(src, "1", "32", &[("v", "3")]);
    assert_eq!(s.totals.shared_load.requests, 1 + 1 + 2 + 1);
    assert_eq!(s.totals.shared_store.requests, 4);
}

/// A load whose value only a following loop uses runs under the loop's entry test, as nvcc
/// sinks it (HeCBench's lda and cmp, held out, on an H100): with `n0 == n1` the loop never runs
/// and `c[i]` is never read. A loop between that writes a thread's own array keeps the load in
/// place (nvcc 13.0's SASS).
#[test]
fn a_load_only_a_loop_uses_runs_when_the_loop_does() {
    let src = "__global__ void a(float* out, const float* c, const float* h, int n0, int n1) {
        int i = threadIdx.x; float cc = c[i]; float t = 2.0f * i;
        for (int k = n0; k < n1; k++) t += cc * h[k];
        out[i] = t; }";
    // One warp; no trip: no load. Two trips: `c[i]` once and `h[k]` (one address) twice.
    assert_eq!(run(src, "1", "32", &[("n0", "4"), ("n1", "4")]).totals.global_load.requests, 0);
    assert_eq!(run(src, "1", "32", &[("n0", "4"), ("n1", "6")]).totals.global_load.requests, 3);
    let src = "__global__ void b(float* out, const float* c, const float* h, int n0, int n1, int w) {
        int i = threadIdx.x; float acc[8]; float cc = c[i]; float t = 2.0f * i;
        for (int j = 0; j < w; j++) acc[j] = 0.0f;
        for (int k = n0; k < n1; k++) { t += cc * h[k]; acc[k & 7] += t; }
        out[i] = t + acc[3]; }";
    assert_eq!(run(src, "1", "32", &[("n0", "4"), ("n1", "4"), ("w", "3")]).totals.global_load.requests, 1);
}

/// An inlined reduction with two `return s[0];` (one for a single warp): its result used only
/// in a strided loop loads in the warps that enter it, and used only under `if (t == 0)`, in
/// warp 0; `s[0] + s[1]` through the helper's pointer is one `LDS.64` (nvcc 13.0's SASS).
#[test]
fn an_inlined_result_sinks_past_its_other_returns() {
    let helper = "__device__ float reduce(const float* v, float* s) {
        float val = v[threadIdx.x]; if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = val; __syncthreads();
        if (blockDim.x <= 32) return s[0];
        if (threadIdx.x == 0) s[0] = s[0] + s[1]; __syncthreads(); return s[0]; }";
    let src = format!(
        "{helper}\n__global__ void d1(float* out, const float* in, int n) {{ __shared__ float s[32];
        float sum = reduce(in, s); for (int j = threadIdx.x; j < n; j += blockDim.x) out[j] = in[j] * sum; }}"
    );
    // 8 warps, n = 64: one LDS.64 in warp 0, `s[0]` in the 2 warps that run the loop.
    assert_eq!(run(&src, "1", "256", &[("n", "64")]).totals.shared_load.requests, 1 + 2);
    let src = format!(
        "{helper}\n__global__ void d2(float* out, const float* in) {{ __shared__ float s[32];
        float a = reduce(in, s); float b = reduce(in + 256, s); if (threadIdx.x == 0) {{ out[0] = a; out[1] = b; }} }}"
    );
    // `a` crosses the second reduction's barriers: every warp loads it; `b` only warp 0.
    assert_eq!(run(&src, "1", "256", &[]).totals.shared_load.requests, (1 + 8) + (1 + 1));
}

/// Two `#pragma unroll` loops of 8 and 17 copies: nvcc unrolls all 136 and loads `kern[8 - j]`
/// once for every copy of the outer loop (nvcc 13.0's SASS: 146 global loads a warp where the
/// model, keeping the inner loop a loop in each outer copy, counts 272). The model says so.
#[test]
fn a_large_unrolled_nest_marks_loads_it_repeats() {
    let src = "__global__ void cr(float* out, const float* __restrict__ kern, const float* __restrict__ in) {
        #pragma unroll
        for (int i = 1; i < 1 + 8; i++) { float sum = 0;
            #pragma unroll
            for (int j = -8; j <= 8; j++) sum += kern[8 - j] * in[threadIdx.x + i * 16 + j];
            out[threadIdx.x + i * 16] = sum; } }";
    let s = run(src, "1", "32", &[]);
    let row = s.instructions.iter().find(|r| r.text.starts_with("kern")).expect("the kern row");
    assert!(!row.exact);
}
