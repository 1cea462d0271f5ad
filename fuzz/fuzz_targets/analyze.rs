//! The whole `analyze` pipeline: a kernel text plus a random launch and argument values,
//! bounded by a small work budget so that every input finishes quickly. Never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sector_analyzer::fuzzing::analyze_bytes(data));
