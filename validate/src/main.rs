//! The `sector-validate` command line.
#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit)]

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use sector_validate::compare::{build_report, Class, Report, Tolerance};
use sector_validate::{gpu, plan, profile, rawdir, report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Checks sector-estimate's predictions against Nsight Compute's counters on a real GPU.
///
/// Exit status: 0 every compared counter exact or within its tolerance; 1 some counter off or
/// some case not compared (or, for `launch`, some case failed); 2 bad usage or input;
/// 3 no GPU (the CUDA driver library cannot be loaded).
#[derive(Parser)]
#[command(name = "sector-validate", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Compile every case with NVRTC and launch it once, checking errors (the target that
    /// `profile` runs under Nsight Compute).
    Launch {
        /// Folder of NAME.cu + NAME.toml examples.
        #[arg(long)]
        examples: PathBuf,
        /// Only these cases (repeatable).
        #[arg(long = "case")]
        cases: Vec<String>,
        /// Write the launch log (device, versions, one record per case) here as JSON.
        #[arg(long)]
        log: Option<PathBuf>,
    },
    /// Show how every case would be launched (buffers, fills, arguments), without a GPU.
    Plan {
        /// Folder of NAME.cu + NAME.toml examples.
        #[arg(long)]
        examples: PathBuf,
        /// Only these cases (repeatable).
        #[arg(long = "case")]
        cases: Vec<String>,
    },
    /// Profile every case under one `ncu` process and write report.md, report.json and the
    /// raw Nsight Compute files (OUTPUT/raw).
    Profile {
        /// Folder of NAME.cu + NAME.toml examples.
        #[arg(long)]
        examples: PathBuf,
        /// Folder to write report.md, report.json and raw/ into (created if missing).
        #[arg(long)]
        output: PathBuf,
        /// The `ncu` binary (default: from PATH or CUDA's usual places).
        #[arg(long)]
        ncu: Option<PathBuf>,
        /// Only these cases (repeatable).
        #[arg(long = "case")]
        cases: Vec<String>,
        #[command(flatten)]
        tol: TolArgs,
    },
    /// Rebuild the report from a raw folder written by `profile` (no GPU needed).
    Compare {
        /// The raw folder (OUTPUT/raw of a `profile` run).
        #[arg(long)]
        raw: PathBuf,
        /// Folder of NAME.cu + NAME.toml examples.
        #[arg(long)]
        examples: PathBuf,
        /// Folder to write report.md, report.json and raw/ into (created if missing).
        #[arg(long)]
        output: PathBuf,
        /// Only these cases (repeatable).
        #[arg(long = "case")]
        cases: Vec<String>,
        #[command(flatten)]
        tol: TolArgs,
    },
}

#[derive(Args, Clone, Copy)]
struct TolArgs {
    /// Relative tolerance for engine counters of data-dependent accesses.
    #[arg(long, default_value_t = 0.10)]
    tolerance: f64,
    /// Relative tolerance for cache-model counters (L1, L2, DRAM).
    #[arg(long, default_value_t = 0.10)]
    model_tolerance: f64,
    /// Absolute slack in sectors for cache-model counters.
    #[arg(long, default_value_t = 64)]
    model_slack: u64,
    /// Relative tolerance for shared-memory wavefronts and bank conflicts.
    #[arg(long, default_value_t = 0.01)]
    shared_tolerance: f64,
}

impl TolArgs {
    fn tolerance(self) -> Tolerance {
        Tolerance {
            data_dependent: self.tolerance,
            model: self.model_tolerance,
            model_abs: self.model_slack,
            shared: self.shared_tolerance,
        }
    }
}

const NO_GPU: u8 = 3;

fn no_gpu() -> ExitCode {
    eprintln!(
        "sector-validate: no GPU: the CUDA driver library (libcuda) cannot be loaded, so nothing \
         can be launched or profiled here (`sector-validate compare` works without one)"
    );
    ExitCode::from(NO_GPU)
}

fn write_report(output: &Path, r: &Report) -> Result<()> {
    std::fs::create_dir_all(output).with_context(|| format!("cannot create {}", output.display()))?;
    std::fs::write(output.join("report.md"), report::markdown(r))?;
    std::fs::write(output.join("report.json"), report::json(r) + "\n")?;
    Ok(())
}

fn print_summary(output: &Path, r: &Report) -> bool {
    eprintln!("{} cases; report in {}", r.cases.len(), output.join("report.md").display());
    let mut clean = r.not_compared.is_empty();
    for s in &r.summary {
        if s.compared > 0 || s.class != Class::Model {
            eprintln!("  {}", s.line());
        }
        clean &= s.off == 0;
    }
    for (name, why) in &r.not_compared {
        eprintln!("  not compared: {name}: {}", why.lines().next().unwrap_or(""));
    }
    clean
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Cmd::Launch { examples, cases, log } => {
            let specs = plan::load_cases(&examples, &cases)?;
            if !gpu::gpu_available() {
                return Ok(no_gpu());
            }
            let mut say = |l: &str| eprintln!("sector-validate: {l}");
            let result = gpu::run_launches(&specs, &mut say)?;
            if let Some(path) = log {
                std::fs::write(&path, serde_json::to_string_pretty(&result)? + "\n")
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            let failed = result.launches.iter().filter(|r| r.error.is_some()).count();
            eprintln!(
                "sector-validate: {} of {} cases launched cleanly",
                result.launches.len() - failed,
                result.launches.len()
            );
            Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Cmd::Plan { examples, cases } => {
            for spec in plan::load_cases(&examples, &cases)? {
                print!("{}", plan::describe(&spec));
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Profile { examples, output, ncu, cases, tol } => {
            let specs = plan::load_cases(&examples, &cases)?;
            if !gpu::gpu_available() {
                return Ok(no_gpu());
            }
            let ncu = profile::find_ncu(ncu.as_deref())?;
            let raw = output.join("raw");
            let run = profile::ProfileRun {
                ncu: &ncu,
                examples: &examples,
                raw: &raw,
                cases: &cases,
                expected_launches: specs.iter().filter(|s| s.prediction.is_ok()).count() as u64,
            };
            if let Some(w) = profile::profile(&run)? {
                eprintln!("sector-validate: warning: {w}");
            }
            let m = rawdir::load(&raw)?;
            let r = build_report(&specs, &m, tol.tolerance());
            write_report(&output, &r)?;
            Ok(if print_summary(&output, &r) { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Cmd::Compare { raw, examples, output, cases, tol } => {
            let specs = plan::load_cases(&examples, &cases)?;
            let m = rawdir::load(&raw)?;
            let r = build_report(&specs, &m, tol.tolerance());
            write_report(&output, &r)?;
            Ok(if print_summary(&output, &r) { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("sector-validate: {e:#}");
            ExitCode::from(2)
        }
    }
}
