//! Shared memory as ptxas lays it out (`validate/probes/layout/layout.cu`): each variable at the
//! next multiple of its own alignment, in emission order, so what merges into 8- and 16-byte
//! accesses depends on what comes before it; neighbouring variables merge like the elements of
//! one array; stores merge when they fill an aligned pair or window. Every count is worked by
//! hand for one block of 256 threads (8 warps), and equals nvcc 13.0's SASS.

use sector_analyzer::analyze::{AnalyzeOptions, Via};
use sector_analyzer::ir::Space;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, Input, Sheet};
use std::path::Path;

fn sheet(kernel: &str, args: &[(&str, &str)], via: Via) -> Sheet {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../validate/probes/layout/layout.cu");
    let opts = AnalyzeOptions {
        via,
        kernel: Some(kernel.into()),
        grid: "1".into(),
        block: "256".into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    match analyze(Input::File(&path), &opts, &DiskLoader) {
        Ok(a) => a.sheet,
        Err(f) => panic!("{kernel}: {}", f.one_line()),
    }
}

/// Kernel, arguments, then shared load and store instructions and their wavefronts.
type Case = (&'static str, &'static [(&'static str, &'static str)], [u64; 4]);

const CASES: &[Case] = &[
    // `arr` at byte 4: four LDS a warp, each 16 bytes apart (lanes 8 apart share a bank: 4
    // wavefronts), and `s_a` (1): 32 + 8 loads, 128 + 8 wavefronts; `arr[t]` and `s_a` stored.
    ("after_float", &[], [40, 136, 9, 9]),
    // `arr` at byte 8: one LDS.64 a warp (256 bytes, 2 wavefronts) and `pad[1]`.
    ("after_pair", &[], [16, 24, 16, 16]),
    // `arr` at byte 16: one LDS.128 a warp (512 bytes, 4 wavefronts) and `v.y`.
    ("after_quad", &[], [16, 40, 9, 9]),
    // `s_mean`, `s_var` at bytes 0 and 4, read together and hoisted from the loop: one LDS.64 a
    // warp (one address: one wavefront); each stored by one thread under its own `if`.
    ("mean_var", &[("n", "1024")], [8, 8, 2, 2]),
    // `a`..`d` at bytes 0..16: one STS.128 by one thread, one LDS.128 a warp (one address in
    // every lane of a 16-byte load: 2 wavefronts).
    ("four_scalars", &[], [8, 16, 1, 1]),
    // One STS.64 a warp (2 wavefronts), one STS.128 (4), and for three floats of a window one
    // STS.64 and one STS, 16 bytes apart (4 wavefronts each: lanes 8 apart share banks).
    ("store_pair", &[], [8, 8, 8, 16]),
    ("store_quad", &[], [8, 8, 8, 32]),
    ("store_three", &[], [8, 8, 16, 64]),
];

fn counts(s: &Sheet) -> [u64; 4] {
    let t = &s.totals;
    [t.shared_load.requests, t.shared_load.wavefronts, t.shared_store.requests, t.shared_store.wavefronts]
}

#[test]
fn the_source_path_places_shared_variables_as_ptxas() {
    for &(kernel, args, expected) in CASES {
        let s = sheet(kernel, args, Via::Source);
        assert_eq!(counts(&s), expected, "{kernel}");
        assert!(s.instructions.iter().filter(|r| r.space == Space::Shared).all(|r| r.exact), "{kernel}: exact");
    }
}

#[test]
fn the_sass_path_agrees() {
    if !sector_analyzer::analyze::toolkit_found() {
        return;
    }
    for &(kernel, args, expected) in CASES {
        assert_eq!(counts(&sheet(kernel, args, Via::Sass)), expected, "{kernel} through SASS");
    }
}

fn shared_rows(src: &str) -> (u64, u64, bool) {
    let opts = sector_analyzer::AnalyzeOptions { grid: "1".into(), block: "256".into(), ..Default::default() };
    let s = sector_analyzer::analyze_source("u.cu", src, &opts).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    let exact = s.instructions.iter().filter(|r| r.space == Space::Shared).all(|r| r.exact);
    (s.totals.shared_load.requests, s.totals.shared_store.requests, exact)
}

/// Variables of file scope and of the kernel: whichever order nvcc emits them in, two floats
/// read together are one pair (nvcc 13.0: `LDS.64`, `STS.64`): exact. A helper's array of 12
/// bytes before or after the kernel's pair moves the pair off its 8-byte boundary in one order
/// and not in the other: not exact.
#[test]
fn places_that_depend_on_emission_order() {
    let src = "__shared__ float fs_c;\n__global__ void k(float* out, const float* in) { __shared__ float loc; \
        if (threadIdx.x == 0) { fs_c = in[3]; loc = in[4]; } __syncthreads(); out[threadIdx.x] = loc * fs_c; }";
    assert_eq!(shared_rows(src), (8, 1, true));
    let src = "template <int N> __device__ float tsum(float v) { static __shared__ float buf[N]; \
        buf[threadIdx.x % N] = v; __syncthreads(); return buf[0] + buf[1] + buf[2]; }\n\
        __global__ void k(float* out, const float* in) { __shared__ float m; __shared__ float v; \
        float x = tsum<3>(in[threadIdx.x]); if (threadIdx.x == 0) { m = x; v = in[4]; } __syncthreads(); \
        out[threadIdx.x] = m * v; }";
    let (_, _, exact) = shared_rows(src);
    assert!(!exact);
}

/// The probe as an H100 ran it (`validate/results/layout/layout.csv`, as Nsight Compute printed
/// it): shared load and store instructions and wavefronts equal the hand-worked counts above.
#[test]
fn the_probe_equals_the_measurement() {
    let csv =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../validate/results/layout/layout.csv"))
            .expect("the measurement");
    let mut measured: std::collections::BTreeMap<String, [u64; 4]> = Default::default();
    for line in csv.lines().filter(|l| l.starts_with('"')) {
        let f: Vec<&str> = line.trim_matches('"').split("\",\"").collect();
        if f.len() < 15 || f[0] == "ID" {
            continue;
        }
        let kernel = f[4].split('(').next().unwrap_or_default().to_string();
        let value: u64 = f[14].replace(',', "").parse().expect("a count");
        let slot = match f[12] {
            "smsp__sass_inst_executed_op_shared_ld.sum" => 0,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" => 1,
            "smsp__sass_inst_executed_op_shared_st.sum" => 2,
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum" => 3,
            _ => continue,
        };
        measured.entry(kernel).or_default()[slot] = value;
    }
    assert_eq!(measured.len(), CASES.len());
    for &(kernel, _, expected) in CASES {
        assert_eq!(measured[kernel], expected, "{kernel} on the H100");
    }
}
