//! How the fuzz targets (`fuzz/`) decode their bytes, shared with the regression test that
//! replays kept inputs. Not part of the tool's interface.

use crate::analyze::{analyze_source, lower, AnalyzeOptions, Input};
use crate::ir::Ty;
use crate::source::{NoFiles, SourceFiles};

/// The `analyze` target: 8 bytes choose the launch and argument values, the rest is CUDA
/// source; every kernel (up to four) is analysed under a small work budget.
pub fn analyze_bytes(data: &[u8]) {
    if data.len() < 8 {
        return;
    }
    let (head, src) = data.split_at(8);
    let text = String::from_utf8_lossy(src);
    let mut files = SourceFiles::default();
    let Ok(module) =
        lower(&Input::Source { name: "f.cu", text: &text }, &AnalyzeOptions::default(), &NoFiles, &mut files)
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

/// The `cuda_front` and `rust_front` targets: the front end of the language `name` names.
pub fn front_bytes(name: &str, data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::analyze::list_kernels(Input::Source { name, text: &text }, &AnalyzeOptions::default(), &NoFiles);
}
