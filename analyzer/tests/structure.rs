//! The structure users see: one `--gpu` parser for every subcommand, warnings that reach the
//! user (library, CLI, every message format), the JSON's `schema_version`, and `Failure` as a
//! `std::error::Error`.

use sector_analyzer::diag::Severity;
use sector_analyzer::finding::{self, Finding};
use sector_analyzer::{analyze_source, AnalyzeOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sector-estimate"))
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write_tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sector-estimate-structure-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
    p
}

/// 64 threads copy 64 floats: 2 warps, each 128 contiguous aligned bytes = 4 sectors, so 8 load
/// and 8 store sectors.
const WARNED: &str = "#warning check the launch\n__global__ void copy(const float *in, float *out) {\n    int i = threadIdx.x;\n    out[i] = in[i];\n}\n";

fn opts() -> AnalyzeOptions {
    AnalyzeOptions { grid: "1".into(), block: "64".into(), ..Default::default() }
}

#[test]
fn a_warning_travels_beside_the_sheet() {
    let a = analyze_source("warned.cu", WARNED, &opts()).unwrap();
    assert_eq!(a.sheet.totals.global_load.sectors, 8);
    assert_eq!(a.sheet.totals.global_store.sectors, 8);
    assert_eq!(a.warnings.len(), 1);
    let w = &a.warnings[0];
    assert_eq!(w.severity, Severity::Warning);
    assert!(w.message.contains("check the launch"), "{}", w.message);
    assert_eq!(w.span.map(|s| s.line), Some(1));
    let line = finding::concise(&a.files, &Finding::from_diagnostic(w));
    assert!(line.starts_with("warned.cu:1:"), "{line}");
    assert!(line.contains(": warning: #warning check the launch [preprocess]"), "{line}");
}

#[test]
fn the_cli_shows_warnings_in_every_message_format() {
    let file = write_tmp("warned.cu", WARNED);
    let run = |extra: &[&str]| {
        bin().arg("analyze").arg(&file).args(["--grid", "1", "--block", "64"]).args(extra).output().unwrap()
    };
    let o = run(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning[preprocess]: #warning check the launch"), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("sector-estimate: kernel `copy`"));

    let o = run(&["--message-format", "concise"]);
    let e = stderr(&o);
    assert_eq!(e.lines().count(), 1, "{e}");
    assert!(e.contains("warned.cu:1:") && e.contains(": warning: #warning check the launch"), "{e}");

    let o = run(&["--message-format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stderr).expect("JSON on stderr");
    assert_eq!(v[0]["severity"], "warning");
    assert_eq!(v[0]["line"], 1);

    let o = run(&["--message-format", "github"]);
    assert!(stderr(&o).starts_with("::warning file="), "{}", stderr(&o));

    let o = run(&["--message-format", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stderr).expect("SARIF on stderr");
    assert_eq!(v["runs"][0]["results"][0]["level"], "warning");
}

#[test]
fn errors_in_clangs_layout_with_concise() {
    let file = write_tmp(
        "missing.cu",
        "__global__ void k(float *a, int n) {\n    if (threadIdx.x < n) a[threadIdx.x] = 0;\n}\n",
    );
    let o = bin()
        .arg("analyze")
        .arg(&file)
        .args(["--grid", "1", "--block", "32", "--message-format", "concise"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("missing.cu:2:") && e.contains(": error: "), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn every_subcommand_takes_every_gpu_profile_through_one_parser() {
    let analyze =
        ["analyze", "examples/vec_add.cu", "--kernel", "vec_add", "--grid", "4", "--block", "256", "--arg", "n=1024"];
    let explain = [
        "explain",
        "examples/vec_add.cu",
        "--kernel",
        "vec_add",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "n=1024",
        "--line",
        "29",
    ];
    let sweep = [
        "sweep",
        "examples/vec_add.cu",
        "--kernel",
        "vec_add",
        "--grid",
        "4",
        "--block",
        "256",
        "--arg",
        "n=1024..2048:x2",
    ];
    for cmd in [&analyze[..], &explain[..], &sweep[..]] {
        for gpu in sector_analyzer::gpu::names() {
            let o = bin().current_dir(root()).args(cmd).args(["--gpu", gpu]).output().unwrap();
            assert_eq!(o.status.code(), Some(0), "{} --gpu {gpu}: {}", cmd[0], stderr(&o));
        }
        let o = bin().current_dir(root()).args(cmd).args(["--gpu", "rtx9999"]).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", cmd[0]);
        assert!(stderr(&o).contains("rtx3060ti"), "{}: the message lists the profiles: {}", cmd[0], stderr(&o));
    }
}

#[test]
fn json_carries_its_schema_version_first() {
    let a = analyze_source("warned.cu", WARNED, &opts()).unwrap();
    let text = sector_analyzer::sheet::json::render(&a.sheet);
    assert!(text.starts_with("{\n  \"schema_version\": 1,\n  \"kernel\": \"copy\","), "{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["schema_version"], sector_analyzer::sheet::json::SCHEMA_VERSION);
}

#[test]
fn a_failure_is_a_std_error() {
    let f = analyze_source("bad.cu", "__global__ void k(float *a, int n) { if (threadIdx.x < n) a[0] = 1; }", &opts())
        .err()
        .expect("n has no value");
    let e: Box<dyn std::error::Error> = Box::new(f);
    assert!(e.to_string().starts_with("bad.cu:1:"), "{e}");
    assert!(e.source().is_some());
}

/// 32 lanes read `a[2 * i]`: 256 bytes from a 256-byte boundary, 8 sectors per request, over
/// a budget of 4; `out[i]`: 4 sectors, within it. The `#warning` is reported and fails nothing.
#[test]
fn check_reports_warnings_and_findings_in_clangs_layout() {
    let cu = "#warning check the launch\n__global__ void k(const float *a, float *out) {\n    int i = threadIdx.x;\n    out[i] = a[2 * i];\n}\n";
    let file = write_tmp("k.cu", cu);
    let dir = file.parent().unwrap().to_path_buf();
    let budgeted = write_tmp(
        "budgeted.toml",
        "[[kernel]]\nfile = \"k.cu\"\nlaunch = [{ name = \"one\", grid = 1, block = 32 }]\nbudgets = { max_sectors_per_request = 4 }\n",
    );
    let plain =
        write_tmp(
        "plain.toml",
        "[[kernel]]\nfile = \"k.cu\"\nlaunch = [{ name = \"one\", grid = 1, block = 32 }]\nbudgets = { max_sectors_per_request = 8 }\n",
    );
    let run = |config: &PathBuf| {
        bin().current_dir(&dir).args(["check", "--format", "concise", "--config"]).arg(config).output().unwrap()
    };
    let o = run(&budgeted);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(
        lines.iter().any(|l| l.contains("k.cu:4:14: error: [one] `a[2 * i]` touches 8.00 sectors per request")),
        "{text}"
    );
    assert!(
        lines.iter().any(|l| l.contains("k.cu:1:") && l.contains(": warning: [one] #warning check the launch")),
        "{text}"
    );

    let o = run(&plain);
    assert_eq!(o.status.code(), Some(0), "a warning fails no check: {}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
}
