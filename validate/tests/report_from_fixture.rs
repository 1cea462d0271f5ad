//! The comparison and the report on recorded H200 measurements, with sheets written here (so
//! these tests do not depend on the analyzer), and the command line without a GPU.

use sector_analyzer::ir::{AccessKind, Space};
use sector_analyzer::manifest::Manifest;
use sector_analyzer::sheet::{Boundaries, GlobalTotals, LaunchInfo, Row, Sheet, Totals};
use sector_validate::compare::{build_report, Tolerance, Verdict};
use sector_validate::plan::CaseSpec;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-probe")
}

fn row(line: u32, text: &str, op: &'static str, requests: u64, sectors: u64) -> Row {
    Row {
        line,
        column: 1,
        text: text.into(),
        space: Space::Global,
        op: if op == "load" { AccessKind::Load } else { AccessKind::Store },
        width: 4,
        executions: requests,
        requests,
        sectors,
        ideal_sectors: sectors,
        sectors_min: sectors,
        sectors_max: sectors,
        exact: true,
        ..Row::default()
    }
}

fn sheet(kernel: &str, grid: [u32; 3], block: [u32; 3], rows: Vec<Row>) -> Sheet {
    let mut totals = Totals::default();
    for r in &rows {
        let t: &mut GlobalTotals = if r.op == "load" { &mut totals.global_load } else { &mut totals.global_store };
        t.requests += r.requests;
        t.sectors += r.sectors;
        t.ideal_sectors += r.ideal_sectors;
    }
    let boundaries = Boundaries {
        l2_read_sectors: totals.global_load.sectors,
        l2_write_sectors: totals.global_store.sectors,
        dram_read_sectors: totals.global_load.sectors,
        ..Boundaries::default()
    };
    Sheet {
        kernel: kernel.into(),
        file: "probe.cu".into(),
        engine: "test",
        launch: LaunchInfo {
            grid,
            block,
            args: Default::default(),
            template_args: Default::default(),
            shared_bytes: 0,
        },
        instructions: rows,
        totals,
        boundaries,
        footprints: Vec::new(),
        assumptions: Vec::new(),
        work: 0,
        via: None,
        compiler: None,
        listing: None,
    }
}

fn specs() -> Vec<CaseSpec> {
    let path = dir().join("examples/probe.toml");
    let m = Manifest::load(&path).unwrap();
    let source = dir().join("examples/probe.cu");
    let predictions = [
        sheet(
            "vec_add",
            [4096, 1, 1],
            [256, 1, 1],
            vec![
                row(9, "a[i]", "load", 32768, 131072),
                row(9, "b[i]", "load", 32768, 131072),
                row(9, "c[i]", "store", 32768, 131072),
            ],
        ),
        sheet(
            "vec_add",
            [4, 1, 1],
            [256, 1, 1],
            vec![row(9, "a[i]", "load", 32, 125), row(9, "b[i]", "load", 32, 125), row(9, "c[i]", "store", 32, 125)],
        ),
        // Deliberately wrong: 4 sectors per warp for a[i + off] instead of 5.
        sheet(
            "offset_copy",
            [4096, 1, 1],
            [256, 1, 1],
            vec![row(17, "a[i + off]", "load", 32768, 131072), row(17, "c[i]", "store", 32768, 131072)],
        ),
    ];
    m.cases
        .into_iter()
        .zip(predictions)
        .map(|(case, s)| CaseSpec { example: "probe".into(), source: source.clone(), case, prediction: Ok(s) })
        .collect()
}

#[test]
fn verdicts_on_recorded_measurements() {
    let m = sector_validate::rawdir::load(&dir().join("raw")).unwrap();
    let r = build_report(&specs(), &m, Tolerance::default());
    assert_eq!(r.cases.len(), 3);
    let v = |case: usize, key: &str| r.cases[case].counters.iter().find(|c| c.key == key).unwrap().verdict;
    for key in ["global_load_requests", "global_load_sectors", "global_store_requests", "global_store_sectors"] {
        assert_eq!(v(0, key), Verdict::Exact, "{key}");
        assert_eq!(v(1, key), Verdict::Exact, "{key}");
    }
    assert_eq!(v(2, "global_load_sectors"), Verdict::Off);
    assert_eq!(v(2, "global_store_sectors"), Verdict::Exact);
    let c = r.cases[2].counters.iter().find(|c| c.key == "global_load_sectors").unwrap();
    assert_eq!(c.difference, Some(32768));
    assert_eq!(c.hand, Some(163840));
    // DRAM reads: 262,224 measured against 262,144 predicted: within the model tolerance.
    assert_eq!(v(0, "dram_read_sectors"), Verdict::WithinTolerance);
    // The wrong line is located.
    let lines = &r.cases[2].lines;
    let ld = lines.iter().find(|l| l.line == 17 && l.op == "load").unwrap();
    assert_eq!((ld.predicted_sectors, ld.measured_sectors, ld.verdict), (Some(131072), Some(163840), Verdict::Off));
    let ok = r.cases[0].lines.iter().find(|l| l.line == 9 && l.op == "load").unwrap();
    assert_eq!((ok.predicted_requests, ok.measured_executions), (Some(65536), Some(65536)));
    assert_eq!(ok.verdict, Verdict::Exact);
    assert_eq!(ok.sass.len(), 2);
    // The summary says where.
    let s = r.summary.iter().find(|s| s.key == "global_load_sectors").unwrap();
    assert_eq!(s.line(), "global load sectors: 2/3 cases exact, 1 off (probe_offset_copy)");
    // Markdown and JSON carry it all.
    let md = sector_validate::report::markdown(&r);
    assert!(md.contains("| GPU | NVIDIA H200 |"));
    assert!(md.contains("2025.3.1.0"));
    assert!(md.contains("580.159.04"));
    assert!(md.contains("### probe_offset_copy"));
    assert!(md.contains("**OFF**"));
    assert!(md.contains("163,840"));
    let json: serde_json::Value = serde_json::from_str(&sector_validate::report::json(&r)).unwrap();
    assert_eq!(json["cases"][0]["counters"][0]["verdict"], "exact");
    assert_eq!(json["environment"]["gpu"], "NVIDIA H200");
}

#[test]
fn misaligned_launch_log_is_reported_not_trusted() {
    let mut m = sector_validate::rawdir::load(&dir().join("raw")).unwrap();
    // Drop the first record: result 0 (vec_add) would be taken for offset_copy's.
    m.log.launches.remove(0);
    m.log.launches.remove(0);
    let r = build_report(&specs(), &m, Tolerance::default());
    let c = &r.cases[2];
    assert!(c.status.contains("do not line up"), "{}", c.status);
    assert!(c.counters.iter().all(|x| matches!(x.verdict, Verdict::NotMeasured | Verdict::Info)));
}

#[test]
fn launch_without_gpu_says_so() {
    if sector_validate::gpu::gpu_available() {
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sector-validate"))
        .args(["launch", "--examples"])
        .arg(dir().join("examples"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no GPU"));
}

#[test]
fn compare_command_writes_the_report() {
    let out_dir = std::env::temp_dir().join(format!("sector-validate-test-{}", std::process::id()));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_sector-validate"))
        .args(["compare", "--raw"])
        .arg(dir().join("raw"))
        .arg("--examples")
        .arg(dir().join("examples"))
        .arg("--output")
        .arg(&out_dir)
        .output()
        .unwrap();
    // 0 or 1 depending on the analyzer's verdicts; never a usage error.
    assert!(matches!(out.status.code(), Some(0) | Some(1)), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
    assert!(md.contains("NVIDIA H200"));
    assert!(out_dir.join("report.json").exists());
    let _ = std::fs::remove_dir_all(&out_dir);
}
