//! The analyzer's predictions for the probe kernels against what the H200 measured for them
//! (recorded in tests/fixtures/h200-probe/raw): the whole comparison, no GPU needed.

use sector_validate::compare::{build_report, Verdict};
use std::path::Path;

#[test]
fn analyzer_matches_recorded_h200_counters() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-probe");
    let specs = sector_validate::plan::load_cases(&dir.join("examples"), &[]).unwrap();
    assert_eq!(specs.len(), 4);
    for s in &specs {
        assert!(s.prediction.is_ok(), "{}: {:?}", s.case.name, s.prediction.as_ref().err());
    }
    let m = sector_validate::rawdir::load(&dir.join("raw")).unwrap();
    let r = build_report(&specs, &m, Default::default());
    assert!(r.not_compared.is_empty(), "{:?}", r.not_compared);
    for case in &r.cases {
        for c in &case.counters {
            // Counters of atomics, asynchronous copies and matrix loads were added after this
            // recording.
            let recorded = c.measured.is_some()
                || !(c.key.contains("_red_")
                    || c.key.contains("_atom_")
                    || c.key.contains("async_copy")
                    || c.key.contains("_matrix_")
                    || c.key.starts_with("ldgsts"));
            let must_be_exact = recorded && (c.key.starts_with("global_") || c.key.ends_with("_requests"));
            if must_be_exact {
                assert_eq!(c.verdict, Verdict::Exact, "{} {}: {:?} vs {:?}", case.name, c.key, c.predicted, c.measured);
            }
            if recorded && c.key.starts_with("shared_") {
                assert!(matches!(c.verdict, Verdict::Exact | Verdict::WithinTolerance), "{} {}", case.name, c.key);
            }
        }
        assert!(!case.lines.is_empty(), "{}", case.name);
        for l in &case.lines {
            assert_eq!(l.verdict, Verdict::Exact, "{} line {} {} {}: {l:?}", case.name, l.line, l.space, l.op);
        }
    }
}
