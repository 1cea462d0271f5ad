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
