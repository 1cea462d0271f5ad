//! The seed lesson's worked numbers (shared/seeds/001: "Estimating Kernel Data Movement from
//! Access Patterns"), each from a small kernel written the way the lesson describes it.

use sector_analyzer::{analyze_source, AnalyzeOptions, Fill, Sheet};

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)], offsets: &[(&str, i64)]) -> Sheet {
    let opts = AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        offsets: offsets.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        ..Default::default()
    };
    analyze_source("seed.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

fn load_row(sheet: &Sheet, text: &str) -> (u64, u64) {
    let r = sheet.instructions.iter().find(|r| r.op == "load" && r.text == text).unwrap_or_else(|| {
        panic!("no load `{text}` in {:?}", sheet.instructions.iter().map(|r| &r.text).collect::<Vec<_>>())
    });
    (r.requests, r.sectors)
}

const ONE_WARP: &str = "__global__ void k(const float* a, float* o, int s) { o[threadIdx.x] = a[ACCESS]; }";

fn one_warp(access: &str, offset: i64) -> (u64, u64) {
    let src = ONE_WARP.replace("ACCESS", access);
    let sheet = run(&src, "1", "32", &[("s", "1")], &[("a", offset)]);
    load_row(&sheet, &format!("a[{access}]"))
}

#[test]
fn consecutive_aligned_floats_touch_4_sectors() {
    assert_eq!(one_warp("threadIdx.x", 0), (1, 4));
}

#[test]
fn four_bytes_misaligned_touch_5_sectors() {
    assert_eq!(one_warp("threadIdx.x", 4), (1, 5));
}

#[test]
fn a_permutation_of_the_same_span_still_touches_4() {
    assert_eq!(one_warp("(threadIdx.x * 7) % 32", 0), (1, 4));
    assert_eq!(one_warp("31 - threadIdx.x", 0), (1, 4));
}

#[test]
fn floats_128_bytes_apart_touch_32_sectors() {
    assert_eq!(one_warp("threadIdx.x * 32", 0), (1, 32));
}

const VEC_ADD: &str = r#"
__global__ void vec_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}"#;

const GATHER: &str = r#"
__global__ void gather(const float* data, const int* index, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = data[index[i]];
    }
}"#;

const N: u64 = 1_048_576;

#[test]
fn vector_add_is_12_sectors_per_warp_and_12_mib() {
    let s = run(VEC_ADD, "4096", "256", &[("n", "1048576")], &[]);
    let warps = N / 32;
    assert_eq!(s.global_sectors(), 12 * warps);
    assert_eq!(s.global_logical_bytes(), 12 * 1024 * 1024);
    assert_eq!(s.global_sectors() * 32, 12 * 1024 * 1024);
}

#[test]
fn gather_is_40_sectors_per_warp_and_40_mib_under_the_stated_assumption() {
    let s = run(GATHER, "4096", "256", &[("n", "1048576")], &[]);
    let warps = N / 32;
    assert_eq!(load_row(&s, "index[i]"), (warps, 4 * warps));
    assert_eq!(load_row(&s, "data[index[i]]"), (warps, 32 * warps));
    assert_eq!(s.global_sectors(), 40 * warps);
    assert_eq!(s.global_sectors() * 32, 40 * 1024 * 1024);
    assert_eq!(s.global_logical_bytes(), 12 * 1024 * 1024);
    // Not presented as exact: the row says which assumption made it.
    let row = s.instructions.iter().find(|r| r.text == "data[index[i]]").unwrap();
    assert!(!row.exact);
    assert!(row.assumptions.iter().any(|a| a.contains("own sector")));
    // ... and its bounds: all indices could fall in one sector, or each in its own sector.
    assert_eq!((row.sectors_min, row.sectors_max), (warps, 32 * warps));
}

#[test]
fn gather_with_known_indices_is_exact() {
    let opts = AnalyzeOptions {
        grid: "4096".into(),
        block: "256".into(),
        args: vec![("n".into(), "1048576".into())],
        fills: vec![("index".into(), Fill::Identity)],
        ..Default::default()
    };
    let s = analyze_source("g.cu", GATHER, &opts).unwrap().sheet;
    assert_eq!(s.global_sectors(), 12 * (N / 32));
    assert!(s.instructions.iter().all(|r| r.exact));
}

#[test]
fn transpose_store_is_36_sectors_per_warp_against_8() {
    let transpose = r#"
    __global__ void transpose(const float* a, float* c, int m) {
        int myCol = blockIdx.x * blockDim.x + threadIdx.x;
        int myRow = blockIdx.y * blockDim.y + threadIdx.y;
        c[myCol * m + myRow] = a[myRow * m + myCol];
    }"#;
    let copy = transpose.replace("c[myCol * m + myRow]", "c[myRow * m + myCol]");
    let warps = 1024 * 1024 / 32;
    let t = run(transpose, "32,1024", "32,1", &[("m", "1024")], &[]);
    assert_eq!(t.global_sectors(), 36 * warps);
    assert_eq!(t.totals.global_store.sectors, 32 * warps);
    let c = run(&copy, "32,1024", "32,1", &[("m", "1024")], &[]);
    assert_eq!(c.global_sectors(), 8 * warps);
}
