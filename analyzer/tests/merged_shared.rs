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
