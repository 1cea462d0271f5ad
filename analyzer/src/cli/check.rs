//! `sector-estimate check`: budgets from a config file; exit 1 when one is exceeded.

use super::common::color_for;
use super::{out, report};
use sector_analyzer::analyze::Failure;
use sector_analyzer::check;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::SourceFiles;
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum CheckFormat {
    /// Findings with source snippets, then a summary.
    Text,
    /// One line per finding in clang's layout (`file:line:col: error: message [rule]`).
    Concise,
    Json,
    /// GitHub Actions annotations (`::error file=..,line=..::message`).
    Github,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// The config file: kernels, launches and budgets.
    #[arg(long, default_value = "sector-estimate.toml")]
    config: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
}

pub fn run(a: CheckArgs) -> i32 {
    let r = match check::check(&a.config, &DiskLoader) {
        Ok(r) => r,
        Err(d) => return report(&Failure { diagnostic: d, files: SourceFiles::default() }).max(2),
    };
    let code = out(&match a.format {
        CheckFormat::Text => check::render_text(&r, color_for(std::io::stdout().is_terminal())),
        CheckFormat::Concise => check::render_concise(&r),
        CheckFormat::Json => check::render_json(&r),
        CheckFormat::Github => check::render_github(&r),
        CheckFormat::Sarif => check::render_sarif(&r),
    });
    if code != 0 {
        return code;
    }
    i32::from(!r.passed)
}
