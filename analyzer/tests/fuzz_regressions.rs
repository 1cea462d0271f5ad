//! Inputs kept from the fuzzing runs (`fuzz/`): each goes through the target it came from and
//! must end in a sheet or an error, never a panic or a hang.

use sector_analyzer::fuzzing::{analyze_bytes, front_bytes};
use sector_analyzer::{analyze_source, AnalyzeOptions};
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

#[test]
fn a_class_template_that_holds_itself_is_refused_not_a_stack_overflow() {
    // Found by the `analyze` target: a member of type `Pack<T>` inside `Pack<T>` made working out
    // the layout instantiate the class again, until the stack ran out. C++ calls such a member's
    // type incomplete; the kernel is refused at the structure's use.
    let src = "template <class T> struct Pack { Pack<T> inner; T v; };\n\
               __global__ void k(float *out) {\n  Pack<float> p;\n  out[threadIdx.x] = p.v;\n}\n";
    let opts = AnalyzeOptions { grid: "1".into(), block: "32".into(), ..AnalyzeOptions::default() };
    let e = analyze_source("f.cu", src, &opts).err().expect("a refusal");
    let d = &e.diagnostic;
    assert_eq!(d.span.map(|s| s.line), Some(3), "{d:?}");
}
