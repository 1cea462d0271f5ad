//! Shared loads nvcc merges (`validate/probes/unroll/chains.cu`): across the copies of a loop it
//! unrolls, and across neighbouring statements. Every count below is worked by hand from the
//! rules in docs/src/counting-rules.md and was measured on an H100 (Hopper, as the H200):
//! `smsp__sass_inst_executed_op_shared_ld.sum`, `validate/results/unroll/chains.csv`.

use sector_analyzer::analyze::{AnalyzeOptions, Via};
use sector_analyzer::ir::Space;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, Input, Sheet};
use std::path::Path;

fn sheet(kernel: &str, grid: &str, block: &str, args: &[(&str, &str)], via: Via) -> Sheet {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../validate/probes/unroll/chains.cu");
    let opts = AnalyzeOptions {
        via,
        kernel: Some(kernel.into()),
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    match analyze(Input::File(&path), &opts, &DiskLoader) {
        Ok(a) => a.sheet,
        Err(f) => panic!("{}", f.one_line()),
    }
}

fn shared_loads(s: &Sheet) -> u64 {
    assert!(s.instructions.iter().filter(|r| r.space == Space::Shared).all(|r| r.exact), "every shared row is exact");
    s.totals.shared_load.requests
}

/// A case: kernel, grid, block, arguments, shared load instructions.
type Case = (&'static str, &'static str, &'static str, &'static [(&'static str, &'static str)], u64);

const CASES: &[Case] = &[
    // 4 x 4 blocks of 8 warps, n = 64: 4 tiles. Per warp and tile, `As[ty][k]` for k = 0..15
    // is 4 LDS.128 (one per aligned window of 4 floats), `Bs[k][tx]` 16 LDS: 16 * 8 * 4 * 20.
    ("mm16", "4,4", "16,16", &[("n", "64")], 10_240),
    // s[0..7): one LDS.128 for 0..3, one for 4..6 (12 bytes of the second window).
    ("const7", "1", "32", &[], 2),
    // m = 13 at run time: three passes of four copies (an LDS.128 each), one copy left.
    ("runtime_trip", "1", "32", &[("m", "13")], 3 + 1),
    // `#pragma unroll 1`: 32 trips, one LDS each.
    ("rolled", "1", "32", &[], 32),
    // s[i], s[i + 1] with i even: one LDS.64.
    ("pair", "1", "32", &[], 1),
    // s[i..i + 4) with i a multiple of 4: one LDS.128.
    ("quad", "1", "32", &[], 1),
    // i = 4 t + 1: s[i..i + 3) is 12 bytes of the window at 4 t (one LDS.128 from s[4 t]),
    // s[i + 3] opens the next window: one LDS.
    ("quad_unaligned", "1", "32", &[], 2),
    // i odd: s[i], s[i + 1] straddle two 8-byte pairs: two LDS.
    ("odd_pair", "1", "32", &[], 2),
    ("three", "1", "32", &[], 1),
    // s[i], s[i + 2]: 8 bytes of a window, not a pair: two LDS.
    ("gap", "1", "32", &[], 2),
    ("gap3", "1", "32", &[], 1),
    // d[i], d[i + 1] of doubles, i even: one 16-byte window, one LDS.128.
    ("dbl", "1", "32", &[], 1),
    // `#pragma unroll 8`, m = 37: 4 passes of two LDS.128, 5 copies left.
    ("unroll8", "1", "32", &[("m", "37")], 4 * 2 + 5),
    // sqrtf branches: each copy's load in its own block.
    ("with_sqrt", "1", "32", &[], 16),
    // The inner loop is unrolled completely: the body stays one block, 16 copies of s[k].
    ("inner_loop", "1", "32", &[], 4),
];

#[test]
fn the_source_path_counts_the_loads_nvcc_merges() {
    for &(kernel, grid, block, args, expected) in CASES {
        let s = sheet(kernel, grid, block, args, Via::Source);
        assert_eq!(shared_loads(&s), expected, "{kernel}");
    }
}

#[test]
fn a_merged_row_says_so() {
    let s = sheet("const7", "1", "32", &[], Via::Source);
    let says = |r: &sector_analyzer::sheet::Row| r.assumptions.iter().any(|a| a.contains("merges this load across"));
    assert!(s.instructions.iter().any(says));
    let s = sheet("quad_unaligned", "1", "32", &[], Via::Source);
    assert!(s.assumptions.iter().any(|a| a.contains("one 16-byte vector load") && a.contains("from its first byte")));
}

#[test]
fn a_runtime_trip_count_leaves_its_remainder_one_by_one() {
    // m = 30: seven passes of four (7 LDS.128), two copies left (2 LDS); m = 3: no pass.
    let s = sheet("runtime_trip", "1", "32", &[("m", "30")], Via::Source);
    assert_eq!(shared_loads(&s), 7 + 2);
    let s = sheet("runtime_trip", "1", "32", &[("m", "3")], Via::Source);
    assert_eq!(shared_loads(&s), 3);
}

#[test]
fn the_sass_path_agrees() {
    if !sector_analyzer::analyze::toolkit_found() {
        return;
    }
    for &(kernel, grid, block, args, expected) in CASES {
        let s = sheet(kernel, grid, block, args, Via::Sass);
        assert_eq!(s.totals.shared_load.requests, expected, "{kernel} through SASS");
    }
}

/// HeCBench's sobol: a trip count from a lane-local bit operation of launch values is known at
/// run time, and the loop's copies merge as any other's.
#[test]
fn a_trip_count_from_ffs_merges_at_run_time() {
    let src = r#"
    __global__ void k(unsigned* out) {
        __shared__ unsigned v[32];
        if (threadIdx.x < 32) v[threadIdx.x] = threadIdx.x;
        __syncthreads();
        unsigned X = 0, g = threadIdx.x;
        int stride = gridDim.x * blockDim.x;
        for (unsigned int k = 0; k < __ffs(stride) - 1; k++) {
            unsigned mask = -(g & 1);
            X ^= mask & v[k];
            g = g >> 1;
        }
        out[threadIdx.x] = X;
    }"#;
    let opts = sector_analyzer::AnalyzeOptions { grid: "128".into(), block: "64".into(), ..Default::default() };
    let s =
        sector_analyzer::analyze_source("sobol.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    // 128 x 64 threads: stride 8192 = 2^13, __ffs 14, 13 trips: three passes of four (LDS.128)
    // and one copy left, in each of 256 warps.
    assert_eq!(shared_loads(&s), 256 * (3 + 1));
}

fn row_exact(src: &str, kernel_args: &[(&str, &str)]) -> (u64, bool) {
    let opts = sector_analyzer::AnalyzeOptions {
        grid: "1".into(),
        block: "32".into(),
        args: kernel_args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    let s = sector_analyzer::analyze_source("u.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    let rows: Vec<_> = s.instructions.iter().filter(|r| r.space == Space::Shared && r.op == "load").collect();
    (s.totals.shared_load.requests, rows.iter().all(|r| r.exact))
}

/// Where nvcc's unroller decides in a way the model does not place, the row says not exact
/// (each checked against nvcc 13.0's SASS: the counts there are 8, 7 and 8 loads).
#[test]
fn unrolling_the_model_cannot_place_is_not_exact() {
    let fill = "__shared__ float s[256]; s[threadIdx.x] = threadIdx.x; __syncthreads(); float a = 0;";
    // `#pragma unroll 2`: pairs, one LDS.64 a pass.
    let src = format!("__global__ void k(float* o) {{ {fill}\n#pragma unroll 2\nfor (int k = 0; k < 16; k++) a += s[k]; o[threadIdx.x] = a; }}");
    assert_eq!(row_exact(&src, &[]), (16, false));
    // 14 copies by 4: two peeled first, then passes at an 8-byte offset.
    let src = format!("__global__ void k(float* o) {{ {fill}\n#pragma unroll 4\nfor (int k = 0; k < 14; k++) a += s[k]; o[threadIdx.x] = a; }}");
    assert_eq!(row_exact(&src, &[]), (14, false));
    // 48 multiply-adds a copy: nvcc unrolls by 2 (LDS.64).
    let body: String = (0..48).map(|i| format!("a = a * x + {i}.5f; ")).collect();
    let src = format!("__global__ void k(float* o) {{ {fill} for (int k = 0; k < 16; k++) {{ float x = s[k]; {body} }} o[threadIdx.x] = a; }}");
    assert_eq!(row_exact(&src, &[]), (16, false));
}

/// A loop nvcc unrolls with passes that keep every window whole counts exactly however the
/// passes fall: `#pragma unroll 4` over 16 copies is 4 LDS.128, as complete unrolling.
#[test]
fn passes_of_whole_windows_count_as_complete_unrolling() {
    let fill = "__shared__ float s[256]; s[threadIdx.x] = threadIdx.x; __syncthreads(); float a = 0;";
    let src = format!("__global__ void k(float* o) {{ {fill}\n#pragma unroll 4\nfor (int k = 0; k < 16; k++) a += s[k]; o[threadIdx.x] = a; }}");
    assert_eq!(row_exact(&src, &[]), (4, true));
    // 1000 copies: past complete unrolling; every pass whole (250 LDS.128 in nvcc's SASS).
    let src = "__global__ void k(float* o) { __shared__ float s[1024]; s[threadIdx.x] = 1; __syncthreads(); float a = 0; for (int k = 0; k < 1000; k++) a += s[k]; o[threadIdx.x] = a; }";
    assert_eq!(row_exact(src, &[]), (250, true));
}

/// Every kernel of the probe the H100 ran (`validate/results/unroll/chains.csv`, as Nsight
/// Compute printed it): shared load instructions and wavefronts equal the measurement.
#[test]
fn the_probe_equals_the_measurement() {
    let csv =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../validate/results/unroll/chains.csv"))
            .expect("the measurement");
    let mut measured: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for line in csv.lines().filter(|l| l.starts_with("\"")) {
        let f: Vec<&str> = line.trim_matches('"').split("\",\"").collect();
        if f.len() < 15 || f[0] == "ID" {
            continue;
        }
        let kernel = f[4].split('(').next().unwrap_or_default().to_string();
        let value: u64 = f[14].replace(',', "").parse().expect("a count");
        let e = measured.entry(kernel).or_default();
        match f[12] {
            "smsp__sass_inst_executed_op_shared_ld.sum" => e.0 = value,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" => e.1 = value,
            _ => {}
        }
    }
    assert_eq!(measured.len(), 12, "{measured:?}");
    for (kernel, (instructions, wavefronts)) in measured {
        let (grid, block, args): (&str, &str, &[(&str, &str)]) = match kernel.as_str() {
            "mm16" => ("4,4", "16,16", &[("n", "64")]),
            "runtime_trip" => ("1", "32", &[("m", "13")]),
            _ => ("1", "32", &[]),
        };
        let s = sheet(&kernel, grid, block, args, Via::Source);
        let t = &s.totals.shared_load;
        assert_eq!((t.requests, t.wavefronts), (instructions, wavefronts), "{kernel}");
    }
}

/// Stores across the copies of a loop with a constant trip count: a window every copy of which
/// writes is one `STS.128`, an aligned pair one `STS.64`, the rest one by one (nvcc 13.0's
/// SASS); with a trip count known only at run time the rows say not exact.
#[test]
fn stores_merge_across_copies_in_whole_windows() {
    let store_rows = |body: &str, args: &[(&str, &str)]| {
        let src = format!(
            "__global__ void k(float* out, const float* in, int m) {{ __shared__ float s[4096]; int t = threadIdx.x; {body} __syncthreads(); out[t] = s[t]; }}"
        );
        let opts = sector_analyzer::AnalyzeOptions {
            grid: "1".into(),
            block: "256".into(),
            args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        };
        let s =
            sector_analyzer::analyze_source("st.cu", &src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
        let exact = s.instructions.iter().filter(|r| r.space == Space::Shared && r.op == "store").all(|r| r.exact);
        (s.totals.shared_store.requests, exact)
    };
    // 8 warps. k < 4: one STS.128 a warp. k < 7: STS.128, STS.64, STS. 1 <= k < 7: STS, two
    // STS.64, STS.
    assert_eq!(store_rows("for (int k = 0; k < 4; k++) s[4 * t + k] = in[t + 256 * k];", &[("m", "1")]), (8, true));
    assert_eq!(store_rows("for (int k = 0; k < 7; k++) s[8 * t + k] = in[t + 256 * k];", &[("m", "1")]), (24, true));
    assert_eq!(store_rows("for (int k = 1; k < 7; k++) s[8 * t + k] = in[t + 256 * k];", &[("m", "1")]), (32, true));
    let (_, exact) = store_rows("for (int k = 0; k < m; k++) s[16 * t + k] = in[t + 256 * k];", &[("m", "13")]);
    assert!(!exact);
}
