//! The cache model through the library and the command line: GPU profiles, numbers the H200
//! measured, the bounds, and boundaries without a sector stream.

use sector_analyzer::analyze::prepare;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, AnalyzeOptions, Input, Sheet};
use std::path::PathBuf;
use std::process::Command;

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples").join(name)
}

fn opts(kernel: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        kernel: Some(kernel.into()),
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..AnalyzeOptions::default()
    }
}

fn sheet(file: &str, o: &AnalyzeOptions) -> Sheet {
    analyze(Input::File(&example(file)), o, &DiskLoader).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

fn vec_add() -> AnalyzeOptions {
    opts("vec_add", "4096", "256", &[("n", "1048576")])
}

#[test]
fn numbers_the_h200_measured() {
    // vec_add, 1M floats: every sector read once; DRAM reads = 262,144 + the launch's 88. The
    // H200 measured 262,144 L2 reads and 262,232 DRAM reads.
    let b = sheet("vec_add.cu", &vec_add()).boundaries;
    assert_eq!(
        (b.l1_hit_sectors, b.l2_read_sectors, b.dram_read_sectors, b.dram_write_sectors),
        (0, 262_144, 262_232, 0)
    );
    // gather with a constant index: every warp reads one data sector; only the first block on
    // each of the 132 SMs misses it. The H200 measured 32,636 L1 hits = 32,768 - 132.
    let mut o = opts("gather", "4096", "256", &[("n", "1048576")]);
    o.fills.push(("index".into(), sector_analyzer::Fill::parse("constant:7").unwrap()));
    assert_eq!(sheet("gather.cu", &o).boundaries.l1_hit_sectors, 32_636);
    // A kernel that loads no global memory still reads 88 DRAM sectors (measured 88).
    let o = opts("shared_stride", "256", "32", &[("stride", "1")]);
    let b = sheet("shared_banks.cu", &o).boundaries;
    assert_eq!((b.l2_read_sectors, b.dram_read_sectors), (0, 88));
}

#[test]
fn bounds_hold_and_each_row_adds_up() {
    for (file, o) in [
        ("vec_add.cu", vec_add()),
        ("stencil.cu", opts("stencil2d", "16,64", "32,8", &[("n", "512")])),
        ("matmul_naive.cu", opts("matmul_naive", "8,8", "16,16", &[("n", "128")])),
        ("strided.cu", opts("strided", "256", "256", &[("stride", "32")])),
    ] {
        let s = sheet(file, &o);
        let b = &s.boundaries;
        let r = b.bounds.dram_read_sectors;
        assert!(r.min <= b.dram_read_sectors && b.dram_read_sectors <= r.max, "{file}: {b:?}");
        let l = b.bounds.l2_read_sectors;
        assert!(l.min <= b.l2_read_sectors && b.l2_read_sectors <= l.max, "{file}: {b:?}");
        // Every load sector is an L1 hit, an L2 read, or a miss merged in flight with another
        // SM's. matmul_naive_128: 64 blocks, one per SM; blocks 2k, 2k+1 (the two SMs of a TPC)
        // are in one block row and miss each A sector at the same step: of A's 16,384 misses
        // 8,192 merge. Elsewhere no two SMs of a TPC miss a sector at the same step.
        let merged = if file == "matmul_naive.cu" { 8_192 } else { 0 };
        assert_eq!(b.l1_hit_sectors + b.l2_read_sectors + merged, s.totals.global_load.sectors, "{file}");
        let rows: u64 = s.instructions.iter().filter_map(|r| r.boundary).map(|rb| rb.l2_read_sectors).sum();
        assert_eq!(rows, b.l2_read_sectors, "{file}");
        assert_eq!(b.method, "simulated");
    }
}

#[test]
fn profiles_change_the_l1() {
    // column3 with 32 x 8 blocks: the reuse is inside the block, so every profile that caches
    // global loads in L1 finds it; the Tesla P4 keeps plain loads out of its L1.
    let o = |gpu: &str| {
        let mut o = opts("column3", "32,128", "32,8", &[("n", "1024")]);
        o.gpu = gpu.into();
        o
    };
    for gpu in ["h100", "a100", "rtx3060ti", "rtx2080ti"] {
        let b = sheet("l1_reuse.cu", &o(gpu)).boundaries;
        assert_eq!((b.gpu.as_str(), b.l1_hit_sectors), (gpu, 228_864), "{gpu}");
    }
    // The H200's later waves are shuffled per round, so an SM may run a block after its
    // neighbour in the grid and also hit on the rows they share: at least the in-block reuse.
    let b = sheet("l1_reuse.cu", &o("h200")).boundaries;
    assert!(b.l1_hit_sectors >= 228_864, "{b:?}");
    let b = sheet("l1_reuse.cu", &o("tesla-p4")).boundaries;
    assert_eq!(b.l1_hit_sectors, 0);
    // 32-byte GDDR granules: DRAM reads are the sectors themselves, no launch overhead known.
    assert_eq!(b.dram_read_sectors, 131_072);
    // The 2080 Ti's L1: 96 KiB less the 32 KiB carveout.
    assert_eq!(sheet("l1_reuse.cu", &o("rtx2080ti")).boundaries.l1_bytes_per_sm, 64 * 1024);
}

#[test]
fn unknown_gpu_is_a_usage_error() {
    let mut o = vec_add();
    o.gpu = "b200".into();
    let f = analyze(Input::File(&example("vec_add.cu")), &o, &DiskLoader).err().expect("refused");
    assert!(f.diagnostic.message.contains("h200") && f.diagnostic.message.contains("tesla-p4"), "{}", f.one_line());
    let out = Command::new(env!("CARGO_BIN_EXE_sector-estimate"))
        .args(["analyze", example("vec_add.cu").to_str().unwrap(), "--grid", "4096", "--block", "256"])
        .args(["--arg", "n=1048576", "--gpu", "b200"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown GPU profile") && err.contains("rtx2080ti"), "{err}");
}

#[test]
fn boundaries_without_a_stream() {
    // What a symbolically counted launch gets: bounds and a footprint estimate, labelled.
    let o = vec_add();
    let (kernel, setup) = prepare(Input::File(&example("vec_add.cu")), &o, &DiskLoader).unwrap();
    let s = sheet("vec_add.cu", &o);
    let b = sector_analyzer::sheet::build::boundaries_unsimulated(&kernel, &setup, &s.totals, &s.footprints);
    assert_eq!(b.method, "unsimulated");
    // a and b: 4 MiB each, 262,144 sectors read, + 88; c stored, 12 MiB in all fit in L2.
    assert_eq!(
        (b.l2_read_sectors, b.l2_write_sectors, b.dram_read_sectors, b.dram_write_sectors),
        (262_144, 131_072, 262_232, 0)
    );
    assert!(
        b.bounds.dram_read_sectors.min <= b.dram_read_sectors && b.dram_read_sectors <= b.bounds.dram_read_sectors.max
    );
    assert!(b.assumptions.iter().any(|a| a.starts_with("unsimulated")));
}
