//! The Rust front end on arbitrary text: never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use sector_analyzer::{AnalyzeOptions, Input};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let opts = AnalyzeOptions::default();
    let _ = sector_analyzer::list_kernels(Input::Source { name: "f.rs", text: &text }, &opts, &sector_analyzer::source::NoFiles);
});
