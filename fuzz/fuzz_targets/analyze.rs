//! The whole `analyze` pipeline: a kernel text plus a random launch and argument values,
//! bounded by a small work budget so that every input finishes quickly. Never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sector_analyzer::ir::Ty;
use sector_analyzer::source::{NoFiles, SourceFiles};
use sector_analyzer::{analyze_source, AnalyzeOptions, Input};

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    // The first bytes choose the launch and argument values; the rest is the source.
    let (head, src) = data.split_at(8);
    let text = String::from_utf8_lossy(src);
    let mut files = SourceFiles::default();
    let base = AnalyzeOptions::default();
    let Ok(module) = sector_analyzer::analyze::lower(&Input::Source { name: "f.cu", text: &text }, &base, &NoFiles, &mut files) else {
        return;
    };
    let dims = |b: u8| format!("{}", (b as u32 % 70) + 1);
    for (ki, k) in module.kernels.iter().enumerate().take(4) {
        let args = k
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p.ty, Ty::Int(_)))
            .map(|(i, p)| (p.name.clone(), format!("{}", head[(4 + i + ki) % 8] as i64 - 16)))
            .collect();
        let opts = AnalyzeOptions {
            kernel: Some(k.name.clone()),
            grid: format!("{},{}", dims(head[0]), dims(head[1] % 4)),
            block: format!("{},{}", dims(head[2].wrapping_mul(3)), dims(head[3] % 8)),
            args,
            max_work: 200_000,
            ..AnalyzeOptions::default()
        };
        let _ = analyze_source("f.cu", &text, &opts);
    }
});
