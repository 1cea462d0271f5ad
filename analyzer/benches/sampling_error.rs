//! The sampled cache model's error against the whole launch through the same model, on every
//! example case the symbolic engine summarises (what `analyze` samples), printed as a Markdown
//! table with the time of each. Cases whose full simulation would take more than `FULL_LIMIT`
//! steps plus sectors are listed without it.
//!
//! `cargo bench -p sector-analyzer --features bench --bench sampling_error`
//!
//! With `WINDOW=N` in the environment it also runs the windowed model (each warp's first N
//! global accesses through the model, the rest counted and given the ratios: issue 26's cost
//! independent of trip counts) and prints its L1-hit, L2-read and DRAM errors against the whole
//! launch (against the sampled model where the whole is over the limit) and its time.
//!
//! With `FRACTION=F` it measures the iteration windows instead (issue 26: the engine runs long
//! loops in windows and jumps over the rest, `engine/windows.rs`): every case whose whole
//! simulation costs at most `FULL_LIMIT` (env, default 40 million) steps plus sectors goes through
//! the model whole, and again with every block's long loops run at the fraction F of their
//! iterations, and the table gives the windowed model's L1-hit, L2-read and DRAM-read error
//! against the whole one, per case, and how many cases are within 1%, 5% and 10% (`FILTER=S`:
//! only the cases whose name contains S).

#![allow(clippy::print_stdout)] // a bench binary: its table is its output

use sector_analyzer::analyze::prepare;
use sector_analyzer::cache::sample::{self, SAMPLE_WORK};
use sector_analyzer::engine::symbolic;
use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::DiskLoader;
use sector_analyzer::Input;
use std::path::Path;
use std::time::Instant;

const FULL_LIMIT: u64 = 40_000_000;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let window: Option<u32> = std::env::var("WINDOW").ok().and_then(|w| w.parse().ok());
    if let Some(f) = std::env::var("FRACTION").ok().and_then(|w| w.parse::<f64>().ok()) {
        let limit = std::env::var("FULL_LIMIT").ok().and_then(|w| w.parse().ok()).unwrap_or(FULL_LIMIT);
        windows_table(&root, f, limit);
        return;
    }
    if window.is_some() {
        println!("| case | cost | sampled units | L1 hits sampled / full | L2 reads sampled / full | DRAM reads sampled / full | time sampled / full | windowed L1 hits / L2 reads / DRAM reads vs full (or sampled) | time windowed |");
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    } else {
        println!("| case | cost | sampled units | L1 hits sampled / full | L2 reads sampled / full | DRAM reads sampled / full | time sampled / full |");
        println!("| --- | ---: | --- | ---: | ---: | ---: | ---: |");
    }
    let pct = |a: f64, b: f64| {
        if b == 0.0 {
            if a == 0.0 {
                "0.0%".to_string()
            } else {
                "inf".into()
            }
        } else {
            format!("{:+.1}%", (a - b) / b * 100.0)
        }
    };
    for (src, manifest) in examples_in(&root) {
        let Ok(m) = Manifest::load(&manifest) else { continue };
        for case in &m.cases {
            let Ok(opts) = case.options() else { continue };
            let Ok((kernel, setup)) = prepare(Input::File(&src), &opts, &DiskLoader) else { continue };
            let Ok((trace, _)) = symbolic::run(&kernel, &setup) else { continue };
            let sectors: u64 = trace.ops.iter().map(|o| o.sectors).sum();
            let cost = trace.work + sectors;
            let sum = |m: &sector_analyzer::cache::CacheModel| {
                // Per instruction, the sampled ratios carried to the engine's exact sectors.
                let mut h = 0f64;
                let mut r = 0f64;
                let mut d = 0f64;
                for (t, st) in m.ops.iter().zip(&trace.ops) {
                    if t.load_sectors == 0 {
                        continue;
                    }
                    let k = st.sectors as f64 / t.load_sectors as f64;
                    h += t.l1_hits as f64 * k;
                    r += t.l2_reads as f64 * k;
                    d += t.dram_reads as f64 * k;
                }
                (h, r, d)
            };
            let t0 = Instant::now();
            let Ok(s) = sample::stream(&kernel, &setup, &trace, SAMPLE_WORK) else { continue };
            let ts = t0.elapsed().as_secs_f64();
            let units = match &s.sample {
                Some(x) => format!("{} of {}", x.units, x.total_units),
                None => "all".into(),
            };
            let (sh, sr, sd) = sum(&s);
            // The windowed model, against `reference`, as its own columns.
            let windowed = |reference: (f64, f64, f64)| -> String {
                let Some(w) = window else { return String::new() };
                let t2 = Instant::now();
                let budget = sample::EstimateBudget { warp_window: Some(w), ..Default::default() };
                let Ok(x) = sample::stream_within(&kernel, &setup, &trace, SAMPLE_WORK, budget) else {
                    return " - | - |".into();
                };
                let tw = t2.elapsed().as_secs_f64();
                let (wh, wr, wd) = sum(&x);
                format!(
                    " {} / {} / {} ({} warps cut) | {tw:.3} s |",
                    pct(wh, reference.0),
                    pct(wr, reference.1),
                    pct(wd, reference.2),
                    x.windowed_warps
                )
            };
            if cost > FULL_LIMIT {
                println!(
                    "| {} | {} | {units} | {sh:.0} / - | {sr:.0} / - | {sd:.0} / - | {ts:.3} s / - |{}",
                    case.name,
                    cost,
                    windowed((sh, sr, sd))
                );
                continue;
            }
            let t1 = Instant::now();
            let Ok(f) = sample::stream(&kernel, &setup, &trace, u64::MAX) else { continue };
            let tf = t1.elapsed().as_secs_f64();
            let (fh, fr, fd) = sum(&f);
            println!(
                "| {} | {} | {units} | {} | {} | {} | {ts:.3} s / {tf:.3} s |{}",
                case.name,
                cost,
                pct(sh, fh),
                pct(sr, fr),
                pct(sd, fd),
                windowed((fh, fr, fd))
            );
        }
    }
}

/// Per instruction, the model's ratios carried to the engine's exact sectors: L1 hits, L2 reads,
/// DRAM reads.
fn carried(m: &sector_analyzer::cache::CacheModel, trace: &sector_analyzer::engine::Trace) -> [f64; 3] {
    let mut x = [0f64; 3];
    for (t, st) in m.ops.iter().zip(&trace.ops) {
        if t.load_sectors == 0 {
            continue;
        }
        let k = st.sectors as f64 / t.load_sectors as f64;
        x[0] += t.l1_hits as f64 * k;
        x[1] += t.l2_reads as f64 * k;
        x[2] += t.dram_reads as f64 * k;
    }
    x
}

/// The iteration windows at fraction `f` against whole loops, both over every unit of the
/// launch (see the module's doc).
fn windows_table(root: &Path, f: f64, limit: u64) {
    println!("| case | cost | jumps | iterations skipped | L1 hits | L2 reads | DRAM reads | time windowed / whole |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let err = |a: f64, b: f64| {
        if b == 0.0 {
            if a == 0.0 {
                0.0
            } else {
                f64::INFINITY
            }
        } else {
            (a - b) / b
        }
    };
    let (mut n, mut cut) = (0u32, 0u32);
    let mut within = [[0u32; 3]; 3];
    let filter = std::env::var("FILTER").unwrap_or_default();
    for (src, manifest) in examples_in(root) {
        let Ok(m) = Manifest::load(&manifest) else { continue };
        for case in m.cases.iter().filter(|c| c.name.contains(&filter)) {
            let Ok(opts) = case.options() else { continue };
            let Ok((kernel, setup)) = prepare(Input::File(&src), &opts, &DiskLoader) else { continue };
            let Ok((trace, _)) = symbolic::run(&kernel, &setup) else { continue };
            let cost = trace.work + trace.ops.iter().map(|o| o.sectors).sum::<u64>();
            if cost > limit {
                continue;
            }
            let t0 = Instant::now();
            let Ok(whole) = sample::stream(&kernel, &setup, &trace, u64::MAX) else { continue };
            let tf = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            let b = sample::EstimateBudget { loop_fraction: Some(f), ..Default::default() };
            let Ok(w) = sample::stream_within(&kernel, &setup, &trace, u64::MAX, b) else { continue };
            let tw = t1.elapsed().as_secs_f64();
            let (a, x) = (carried(&whole, &trace), carried(&w, &trace));
            let e = [err(x[0], a[0]), err(x[1], a[1]), err(x[2], a[2])];
            n += 1;
            if w.jumps > 0 {
                cut += 1;
            }
            for (i, lim) in [0.01, 0.05, 0.10].iter().enumerate() {
                for k in 0..3 {
                    within[i][k] += (e[k].abs() <= *lim) as u32;
                }
            }
            println!(
                "| {} | {cost} | {} | {} | {:+.1}% | {:+.1}% | {:+.1}% | {tw:.3} s / {tf:.3} s |",
                case.name,
                w.jumps,
                w.skipped_iterations,
                e[0] * 100.0,
                e[1] * 100.0,
                e[2] * 100.0
            );
        }
    }
    println!();
    println!("fraction {f}: {n} cases, {cut} with jumps; within 1% / 5% / 10% of the whole simulation:");
    for (k, what) in ["L1 hits", "L2 reads", "DRAM reads"].iter().enumerate() {
        println!("- {what}: {} / {} / {}", within[0][k], within[1][k], within[2][k]);
    }
}
