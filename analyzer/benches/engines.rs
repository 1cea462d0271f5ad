//! The symbolic engine against enumeration, engine against engine (the cache model, which needs
//! a sector stream, is not part of either): every example case that the symbolic engine
//! summarises, the naive 512^3 matrix product, and the three scale cases, which only the
//! symbolic engine can run.
//!
//! `cargo bench -p sector-analyzer --features bench --bench engines`; `-- scale` or `-- matmul_512` for a part.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use sector_analyzer::analyze::prepare;
use sector_analyzer::engine::{self, symbolic};
use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{AnalyzeOptions, Input};
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn options(grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        max_work: u64::MAX,
        ..Default::default()
    }
}

fn examples(c: &mut Criterion) {
    let mut g = c.benchmark_group("examples");
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    for (src, manifest) in examples_in(&root().join("../examples")) {
        let Ok(m) = Manifest::load(&manifest) else { continue };
        for case in &m.cases {
            let Ok(opts) = case.options() else { continue };
            let Ok((kernel, setup)) = prepare(Input::File(&src), &opts, &DiskLoader) else { continue };
            if symbolic::run(&kernel, &setup).is_err() {
                // Handed to enumeration (array contents given): nothing to compare.
                continue;
            }
            g.bench_function(BenchmarkId::new("symbolic", &case.name), |b| {
                b.iter(|| black_box(symbolic::run(&kernel, &setup).is_ok()))
            });
            g.bench_function(BenchmarkId::new("enumerate", &case.name), |b| {
                b.iter(|| black_box(engine::run(&kernel, &setup).is_ok()))
            });
        }
    }
    g.finish();
}

fn matmul_512(c: &mut Criterion) {
    let src = root().join("tests/scale/matmul_naive.cu");
    let (kernel, setup) = prepare(Input::File(&src), &options("32,32", "16,16", &[("n", "512")]), &DiskLoader)
        .unwrap_or_else(|f| panic!("{}", f.one_line()));
    let mut g = c.benchmark_group("matmul_512");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    g.bench_function("symbolic", |b| b.iter(|| black_box(symbolic::run(&kernel, &setup).is_ok())));
    g.bench_function("enumerate", |b| b.iter(|| black_box(engine::run(&kernel, &setup).is_ok())));
    g.finish();
}

fn scale(c: &mut Criterion) {
    let cases = [
        ("copy_2e34", "copy64.cu", "67108864", "256", ("n", "17179869184")),
        ("matmul_4096", "matmul_naive.cu", "256,256", "16,16", ("n", "4096")),
        ("transpose_32768", "transpose_tiled.cu", "1024,1024", "32,8", ("n", "32768")),
    ];
    let mut g = c.benchmark_group("scale");
    g.sample_size(20);
    for (name, file, grid, block, arg) in cases {
        let src = root().join("tests/scale").join(file);
        let (kernel, setup) = prepare(Input::File(&src), &options(grid, block, &[arg]), &DiskLoader)
            .unwrap_or_else(|f| panic!("{}", f.one_line()));
        g.bench_function(BenchmarkId::new("symbolic", name), |b| {
            b.iter(|| black_box(symbolic::run(&kernel, &setup).is_ok()))
        });
    }
    g.finish();
}

criterion_group!(benches, scale, matmul_512, examples);
criterion_main!(benches);
