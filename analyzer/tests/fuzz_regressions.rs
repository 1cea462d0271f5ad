//! Inputs kept from the fuzzing runs (`fuzz/`): each goes through the target it came from and
//! must end in a sheet or an error, never a panic or a hang.

use sector_analyzer::fuzzing::{analyze_bytes, front_bytes};
use std::path::Path;

#[test]
fn kept_fuzz_inputs_never_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let data = std::fs::read(e.path()).unwrap();
        if name.starts_with("analyze") {
            analyze_bytes(&data);
        } else if name.starts_with("cuda_front") {
            front_bytes("f.cu", &data);
        } else if name.starts_with("rust_front") {
            front_bytes("f.rs", &data);
        }
        seen += 1;
    }
    assert!(seen >= 30, "the kept corpus is in tests/fuzz_corpus ({seen} files)");
}
