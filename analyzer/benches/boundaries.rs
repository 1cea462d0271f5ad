//! The boundary estimate's cost: the sampled cache model (`sampled-units`, what `analyze`
//! runs) against the whole launch through the model (the simulation before sampling), in one
//! run; and the 4096^3 naive product, which only the sampled model can finish.
//!
//! `cargo bench -p sector-analyzer --features bench --bench boundaries`; `-- matmul_512`, `-- matmul_4096` or
//! `-- examples` for a part.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sector_analyzer::analyze::prepare;
use sector_analyzer::cache::sample::{self, SAMPLE_WORK};
use sector_analyzer::engine::symbolic;
use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, AnalyzeOptions, Input};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn gemm(n: u32) -> (PathBuf, AnalyzeOptions) {
    let opts = AnalyzeOptions {
        grid: format!("{},{}", n / 16, n / 16),
        block: "16,16".into(),
        args: vec![("n".into(), n.to_string())],
        ..Default::default()
    };
    (root().join("../examples/reuse_gemm_naive.cu"), opts)
}

/// Boundaries of one launch with the cache model given `budget` (steps plus sectors).
fn boundaries(src: &Path, opts: &AnalyzeOptions, budget: u64) -> u64 {
    let (kernel, setup) = prepare(Input::File(src), opts, &DiskLoader).unwrap_or_else(|f| panic!("{}", f.one_line()));
    let (trace, _) = symbolic::run(&kernel, &setup).unwrap_or_else(|_| panic!("not summarised"));
    let m = sample::stream(&kernel, &setup, &trace, budget).unwrap_or_else(|d| panic!("{}", d.message));
    m.ops.iter().map(|t| t.l2_reads).sum()
}

fn matmul_512(c: &mut Criterion) {
    let (src, opts) = gemm(512);
    let mut g = c.benchmark_group("matmul_512");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("analyze (sampled units)", |b| {
        b.iter(|| black_box(analyze(Input::File(&src), &opts, &DiskLoader).is_ok()))
    });
    g.bench_function("boundaries sampled", |b| b.iter(|| black_box(boundaries(&src, &opts, SAMPLE_WORK))));
    g.bench_function("boundaries full simulation", |b| b.iter(|| black_box(boundaries(&src, &opts, u64::MAX))));
    g.finish();
}

fn matmul_4096(c: &mut Criterion) {
    let (src, opts) = gemm(4096);
    let mut g = c.benchmark_group("matmul_4096");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("analyze (sampled units)", |b| {
        b.iter(|| black_box(analyze(Input::File(&src), &opts, &DiskLoader).is_ok()))
    });
    g.finish();
}

/// Every example case, analysed as the CLI does.
fn examples(c: &mut Criterion) {
    let mut g = c.benchmark_group("examples");
    g.sample_size(10).warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_secs(1));
    for (src, manifest) in examples_in(&root().join("../examples")) {
        let Ok(m) = Manifest::load(&manifest) else { continue };
        for case in &m.cases {
            let Ok(opts) = case.options() else { continue };
            g.bench_function(BenchmarkId::new("analyze", &case.name), |b| {
                b.iter(|| black_box(analyze(Input::File(&src), &opts, &DiskLoader).is_ok()))
            });
        }
    }
    g.finish();
}

criterion_group!(benches, matmul_512, matmul_4096, examples);
criterion_main!(benches);
