//! The CUDA front end (preprocessor, parser, lowering) on arbitrary bytes: never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sector_analyzer::fuzzing::front_bytes("f.cu", data));
