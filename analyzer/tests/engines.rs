//! The symbolic engine against the reference: every example case gives the same counts under
//! both, and the symbolic engine summarises every case that has no array contents to follow.

use sector_analyzer::analyze::EngineKind;
use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, Input, Sheet};
use std::path::Path;

/// Everything the engines count, as JSON, without the engine's own name and notes.
pub fn counted(sheet: &Sheet) -> serde_json::Value {
    serde_json::json!({
        "instructions": sheet.instructions,
        "totals": sheet.totals,
        "boundaries": sheet.boundaries,
        "footprints": sheet.footprints,
        "work": sheet.work,
    })
}

/// Warp-level steps up to which a case is also enumerated (a few seconds at most).
const ENUMERATE_UP_TO: u64 = 50_000_000;

#[test]
fn examples_count_the_same_under_both_engines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut failures = Vec::new();
    let mut summarised = 0;
    let mut too_large = 0;
    for (src, manifest) in examples_in(&dir) {
        let m = Manifest::load(&manifest).unwrap_or_else(|d| panic!("{}", d.message));
        for case in &m.cases {
            let mut opts = case.options().unwrap_or_else(|d| panic!("{}: {}", case.name, d.message));
            opts.engine = EngineKind::Symbolic;
            let symbolic = analyze(Input::File(&src), &opts, &DiskLoader).map(|a| a.sheet);
            // Enumeration is the oracle where it is affordable: the largest launches (the
            // 2048^3 and 4096^3 products take billions of warp-level steps) are checked against
            // hand-worked numbers in tests/examples.rs and tests/scale.rs instead.
            if symbolic.as_ref().is_ok_and(|s| s.work > ENUMERATE_UP_TO) {
                too_large += 1;
                continue;
            }
            opts.engine = EngineKind::Enumerate;
            let reference = analyze(Input::File(&src), &opts, &DiskLoader).map(|a| a.sheet);
            let (Ok(r), Ok(s)) = (reference, symbolic) else {
                failures.push(format!("{}: an engine failed", case.name));
                continue;
            };
            if s.engine == "symbolic" {
                summarised += 1;
            } else if case.fills.is_empty() {
                failures.push(format!("{}: not summarised: {:?}", case.name, s.assumptions.last()));
            }
            if counted(&r) != counted(&s) {
                failures.push(format!(
                    "{}: counts differ\n  enumerate: {}\n  symbolic:  {}",
                    case.name,
                    serde_json::to_string(&counted(&r)["instructions"]).unwrap(),
                    serde_json::to_string(&counted(&s)["instructions"]).unwrap()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{} differences ({summarised} summarised):\n{}", failures.len(), failures.join("\n"));
    assert!(summarised >= 50, "only {summarised} cases summarised");
    // 14: the 1,536^3 and 2mm product variants joined the 2,048^3 and 4,096^3 ones.
    assert!(too_large <= 14, "{too_large} cases too large to enumerate");
}
