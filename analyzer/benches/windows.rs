//! Issue 26, part 2: the boundary estimate's cost independent of trip counts. Today's model
//! (a unit over the budget runs fewer of its resident blocks, each block's loops whole) against
//! the iteration windows (long loops of the sampled blocks in windows, jumps over the rest), in
//! one run, on the launches whose trip counts made the estimate run out: the register-tiled
//! 4096^3 SGEMM, the naive 4096^3 product, the triangular nest (8 blocks of 256 threads,
//! n = 2048; the windows alone) and the shared-memory tiled products (4096^3, and 768^3, the
//! slowest example launch's estimate). Each is the whole analysis as the library runs it, without a
//! time limit (so that today's model is timed to its end, not to the CLI's 1 s).
//!
//! `cargo bench -p sector-analyzer --features bench --bench windows`; `-- sgemm_4096` for the first alone.

use criterion::{criterion_group, criterion_main, Criterion};
use sector_analyzer::cache::sample::EstimateBudget;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, AnalyzeOptions, Input};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

fn file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel)
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

fn launches() -> Vec<(&'static str, PathBuf, AnalyzeOptions)> {
    vec![
        (
            "sgemm_4096",
            file("tests/estimate/sgemm_2d_tiled.cu"),
            opts(
                "sgemm_2d",
                "32,32",
                "256",
                &[("M", "4096"), ("N", "4096"), ("K", "4096"), ("alpha", "1"), ("beta", "0")],
            ),
        ),
        (
            "naive_4096",
            file("../examples/reuse_gemm_naive.cu"),
            opts("gemm_naive", "256,256", "16,16", &[("n", "4096")]),
        ),
        ("tri_nest_2048", file("tests/estimate/tri_nest.cu"), opts("tri_nest", "8", "256", &[("n", "2048")])),
        // The shared-memory tiled products: 4096^3 in 16 x 16 tiles, and the slowest example
        // launch's estimate (reuse_gemm_tiled_768_t16).
        (
            "tiled_4096_t16",
            file("../examples/reuse_gemm_tiled.cu"),
            opts("gemm_tiled", "256,256", "16,16", &[("n", "4096")]),
        ),
        (
            "tiled_768_t16",
            file("../examples/reuse_gemm_tiled.cu"),
            opts("gemm_tiled", "48,48", "16,16", &[("n", "768")]),
        ),
    ]
}

fn windows(c: &mut Criterion) {
    for (name, src, o) in launches() {
        let mut g = c.benchmark_group(name);
        g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(5));
        // Today's model on the triangular nest is two whole blocks of 2 million loads per warp
        // (over a minute a run): timed on the products only.
        let models: &[(&str, bool)] = if name == "tri_nest_2048" {
            &[("iteration windows", true)]
        } else {
            &[("today's model (no windows)", false), ("iteration windows", true)]
        };
        for &(label, windows) in models {
            let o = AnalyzeOptions {
                estimate: EstimateBudget { iteration_windows: windows, ..Default::default() },
                ..o.clone()
            };
            g.bench_function(label, |b| {
                b.iter(|| {
                    let a = analyze(Input::File(&src), &o, &DiskLoader).unwrap_or_else(|f| panic!("{}", f.one_line()));
                    black_box(a.sheet.boundaries.l2_read_sectors)
                })
            });
        }
        g.finish();
    }
}

criterion_group!(benches, windows);
criterion_main!(benches);
