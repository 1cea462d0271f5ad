//! Inputs kept from the fuzzing runs (`fuzz/`): each goes through the target it came from and
//! must end in a sheet or an error, never a panic or a hang.

use sector_analyzer::ir::Ty;
use sector_analyzer::source::{NoFiles, SourceFiles};
use sector_analyzer::{analyze_source, list_kernels, AnalyzeOptions, Input};
use std::path::Path;

/// The `analyze` target's decoding: 8 bytes of launch and argument values, then the source.
fn analyze_target(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (head, src) = data.split_at(8);
    let text = String::from_utf8_lossy(src);
    let mut files = SourceFiles::default();
    let base = AnalyzeOptions::default();
    let Ok(module) =
        sector_analyzer::analyze::lower(&Input::Source { name: "f.cu", text: &text }, &base, &NoFiles, &mut files)
    else {
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
}

#[test]
fn kept_fuzz_inputs_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let data = std::fs::read(e.path()).unwrap();
        let text = String::from_utf8_lossy(&data);
        let opts = AnalyzeOptions::default();
        if name.starts_with("analyze") {
            analyze_target(&data);
        } else if name.starts_with("cuda_front") {
            let _ = list_kernels(Input::Source { name: "f.cu", text: &text }, &opts, &NoFiles);
        } else if name.starts_with("rust_front") {
            let _ = list_kernels(Input::Source { name: "f.rs", text: &text }, &opts, &NoFiles);
        }
        seen += 1;
    }
    assert!(seen >= 30, "the kept corpus is in tests/fuzz_corpus ({seen} files)");
}
