//! Running Nsight Compute: one `ncu` process profiles `sector-validate launch` over every case
//! (so the GPU is held only as long as the launches and their replays take), then `ncu -i`
//! exports the pages the comparison reads into the raw folder ([`crate::rawdir`]).

use crate::ncu;
use crate::rawdir;
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

/// Finds `ncu`: the given path, then `PATH`, then CUDA's usual places.
pub fn find_ncu(explicit: Option<&Path>) -> Result<PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let c = dir.join("ncu");
            if c.is_file() {
                return Ok(c);
            }
        }
    }
    let mut candidates = vec![PathBuf::from("/usr/local/cuda/bin/ncu")];
    if let Ok(rd) = std::fs::read_dir("/opt/nvidia/nsight-compute") {
        let mut v: Vec<PathBuf> = rd.flatten().map(|e| e.path().join("ncu")).collect();
        v.sort();
        candidates.extend(v.into_iter().rev());
    }
    candidates
        .into_iter()
        .find(|c| c.is_file())
        .context("Nsight Compute (`ncu`) not found: put it on PATH or pass --ncu PATH")
}

fn bar(len: u64, msg: &str) -> ProgressBar {
    let b = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} ({elapsed})") {
        b.set_style(style.progress_chars("=> "));
    }
    b.set_message(msg.to_string());
    b
}

/// Runs a command, its stdout into `out`; fails with its stderr.
fn run_to_file(cmd: &mut Command, out: &Path) -> Result<()> {
    let o = cmd.output().with_context(|| format!("cannot run {cmd:?}"))?;
    std::fs::write(out, &o.stdout).with_context(|| format!("cannot write {}", out.display()))?;
    if !o.status.success() {
        bail!("{cmd:?} failed ({}): {}", o.status, String::from_utf8_lossy(&o.stderr).trim());
    }
    Ok(())
}

/// What `profile` needs to know.
pub struct ProfileRun<'a> {
    pub ncu: &'a Path,
    pub examples: &'a Path,
    pub raw: &'a Path,
    pub cases: &'a [String],
    /// Cases that will be launched (for the progress bar).
    pub expected_launches: u64,
}

/// Profiles every case under one `ncu` process and exports the raw folder. Returns a warning
/// when `ncu` or the launches reported a failure but a report was still written.
pub fn profile(run: &ProfileRun) -> Result<Option<String>> {
    std::fs::create_dir_all(run.raw).with_context(|| format!("cannot create {}", run.raw.display()))?;
    // Stale files of an earlier run would be mistaken for this run's.
    if let Ok(rd) = std::fs::read_dir(run.raw) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("source-")
                || name.ends_with(".csv")
                || name.ends_with(".ncu-rep")
                || name == rawdir::LAUNCH_LOG
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    let raw = std::fs::canonicalize(run.raw)?;
    let examples =
        std::fs::canonicalize(run.examples).with_context(|| format!("no folder {}", run.examples.display()))?;
    let me = std::env::current_exe().context("cannot locate the sector-validate binary")?;
    let report = raw.join(rawdir::REPORT);
    let mut cmd = Command::new(run.ncu);
    cmd.arg("--clock-control")
        .arg("none")
        .arg("--metrics")
        .arg(ncu::metrics_for(run.ncu, "gh100").join(","))
        .arg("--section")
        .arg("SourceCounters")
        .arg("--import-source")
        .arg("yes")
        .arg("--export")
        .arg(&report)
        .arg("-f")
        .arg(&me)
        .arg("launch")
        .arg("--examples")
        .arg(&examples)
        .arg("--log")
        .arg(raw.join(rawdir::LAUNCH_LOG));
    for c in run.cases {
        cmd.arg("--case").arg(c);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let log_path = raw.join(rawdir::PROFILE_LOG);
    let log = Arc::new(Mutex::new(
        std::fs::File::create(&log_path).with_context(|| format!("cannot write {}", log_path.display()))?,
    ));
    let _ = writeln!(log.lock().expect("log lock"), "$ {cmd:?}");
    let pb = bar(run.expected_launches, "profiling under ncu");
    let mut child = cmd.spawn().with_context(|| format!("cannot run {}", run.ncu.display()))?;
    let mut threads = Vec::new();
    for stream in [
        child.stdout.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        child.stderr.take().map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let log = Arc::clone(&log);
        let pb = pb.clone();
        threads.push(std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if line.starts_with("==PROF== Profiling") {
                    pb.inc(1);
                }
                if let Ok(mut f) = log.lock() {
                    let _ = writeln!(f, "{line}");
                }
            }
        }));
    }
    let status = child.wait()?;
    for t in threads {
        let _ = t.join();
    }
    pb.finish_and_clear();
    let rep = raw.join(format!("{}.ncu-rep", rawdir::REPORT));
    if !rep.exists() {
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        bail!(
            "ncu wrote no report ({status}); the end of {}:\n{}",
            log_path.display(),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    let warning = (!status.success())
        .then(|| format!("ncu exited with {status} (a launch may have failed; see {})", log_path.display()));
    export(run.ncu, &raw, &rep)?;
    Ok(warning)
}

/// Exports the pages of a report into the raw folder.
pub fn export(ncu_path: &Path, raw: &Path, rep: &Path) -> Result<()> {
    run_to_file(
        Command::new(ncu_path).arg("-i").arg(rep).args(["--page", "raw", "--csv", "--print-units", "base"]),
        &raw.join(rawdir::RAW_CSV),
    )?;
    run_to_file(
        Command::new(ncu_path).arg("-i").arg(rep).args(["--page", "session", "--csv"]),
        &raw.join(rawdir::SESSION_CSV),
    )?;
    let text = std::fs::read_to_string(raw.join(rawdir::RAW_CSV))?;
    let results = ncu::parse_raw(&text)?;
    let pb = bar(results.len() as u64, "exporting source views");
    for r in &results {
        let id = r.id.to_string();
        run_to_file(
            Command::new(ncu_path).arg("-i").arg(rep).args([
                "--page",
                "source",
                "--csv",
                "--print-source",
                "cuda,sass",
                "--launch-skip",
                &id,
                "--launch-count",
                "1",
            ]),
            &raw.join(rawdir::source_csv(r.id)),
        )?;
        pb.inc(1);
    }
    pb.finish_and_clear();
    run_to_file(Command::new(ncu_path).arg("--version"), &raw.join(rawdir::NCU_VERSION))?;
    // The driver's own version string; optional.
    let _ = run_to_file(
        Command::new("nvidia-smi").args(["--query-gpu=name,compute_cap,driver_version", "--format=csv"]),
        &raw.join(rawdir::NVIDIA_SMI),
    );
    Ok(())
}
