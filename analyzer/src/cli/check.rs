//! `sector-estimate check`: budgets from a config file; exit 1 when one is exceeded.

use super::common::color_for;
use super::{out, report};
use sector_analyzer::analyze::Failure;
use sector_analyzer::check;
use sector_analyzer::diag::Diagnostic;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::SourceFiles;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub(super) const CONFIG_NAME: &str = "sector-estimate.toml";

/// Default bound on a whole `check` (an hour: the repository's 150 launches take minutes on a
/// busy 2-core machine).
const DEFAULT_CHECK_TOTAL_TIME_LIMIT_S: u64 = 3600;

#[derive(Clone, Copy, PartialEq, clap::ValueEnum)]
pub(super) enum CheckFormat {
    /// Findings with source snippets, then a summary.
    Text,
    /// One line per finding in clang's layout (`file:line:col: error: message [rule]`).
    Concise,
    /// The report as data: every launch checked and every finding.
    Json,
    /// GitHub Actions annotations (`::error file=..,line=..::message`), paths from the
    /// repository root.
    Github,
    /// SARIF 2.1.0, for code scanning; paths from the repository root (`%SRCROOT%`).
    Sarif,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sector-estimate check                                  # finds sector-estimate.toml here or above
  sector-estimate check --config ci/budgets.toml --format github
  sector-estimate check --format sarif > sector-estimate.sarif")]
pub(super) struct CheckArgs {
    /// The config file: kernels, launches and budgets. Default: sector-estimate.toml in the
    /// working directory or the nearest directory above it that has one.
    #[arg(long)]
    config: Option<PathBuf>,
    /// How to report findings.
    #[arg(long, value_enum, default_value = "text")]
    format: CheckFormat,
    /// Wall-clock limit in seconds of each launch's analysis (0, the default: none beyond the
    /// total; a CI machine may be slow, and a budget must not fail on it for that).
    #[arg(long, default_value_t = 0)]
    time_limit: u64,
    /// Wall-clock limit in seconds of the whole check (0: none); launches not analysed by then
    /// are findings that say so.
    #[arg(long, default_value_t = DEFAULT_CHECK_TOTAL_TIME_LIMIT_S)]
    total_time_limit: u64,
}

/// `sector-estimate.toml` in `dir` or the nearest directory above it, as cargo and ruff look
/// for theirs; relative to `dir` when below it.
pub(super) fn find_config(dir: &Path) -> Option<PathBuf> {
    let mut up = PathBuf::new();
    for d in dir.ancestors() {
        if d.join(CONFIG_NAME).is_file() {
            return Some(up.join(CONFIG_NAME));
        }
        up.push("..");
    }
    None
}

/// The repository root above `dir` (a directory holding `.git`, a folder or a worktree's file).
fn repository_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

/// `path` (relative to the working directory `cwd`, or absolute) relative to `root`, with `/`.
fn from_root(cwd: &Path, root: &Path, path: &str) -> String {
    let abs = cwd.join(path);
    let abs = abs.canonicalize().unwrap_or(abs);
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    match abs.strip_prefix(&root) {
        Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
        Err(_) => path.to_string(),
    }
}

pub(super) fn run(a: CheckArgs) -> i32 {
    let cwd = std::env::current_dir().unwrap_or_default();
    let root = repository_root(&cwd);
    let config = match a.config.clone().or_else(|| find_config(&cwd)) {
        Some(c) => c,
        None => {
            let d = Diagnostic::new(
                sector_analyzer::ErrorKind::Usage,
                format!(
                    "no {CONFIG_NAME} in {} or any directory above it (give one with --config FILE)",
                    cwd.display()
                ),
            );
            return config_error(&d, CONFIG_NAME, a.format, &cwd, root.as_deref());
        }
    };
    let limits = match (
        super::common::time_limit("--time-limit", a.time_limit),
        super::common::time_limit("--total-time-limit", a.total_time_limit),
    ) {
        (Ok(per_launch), Ok(total)) => check::Limits { per_launch, total },
        (Err(m), _) | (_, Err(m)) => return super::usage(&m),
    };
    let mut r = match check::check_within(&config, &DiskLoader, limits) {
        Ok(r) => r,
        Err(d) => return config_error(&d, &config.display().to_string(), a.format, &cwd, root.as_deref()),
    };
    // Annotations and code scanning attach to paths from the repository root, whatever the
    // working directory.
    if matches!(a.format, CheckFormat::Github | CheckFormat::Sarif) {
        if let Some(root) = &root {
            for f in &mut r.findings {
                f.file = from_root(&cwd, root, &f.file);
            }
        }
    }
    let code = out(&match a.format {
        CheckFormat::Text => check::render_text(&r, color_for(std::io::stdout().is_terminal())),
        CheckFormat::Concise => check::render_concise(&r),
        CheckFormat::Json => check::render_json(&r),
        CheckFormat::Github => check::render_github(&r),
        CheckFormat::Sarif => {
            let root = root.as_ref().map(|r| r.canonicalize().unwrap_or_else(|_| r.clone()));
            check::render_sarif_at(&r, root.as_deref())
        }
    });
    if code != 0 {
        return code;
    }
    i32::from(!r.passed)
}

/// A config that cannot be used, in the format asked for (a CI log parses stdout), and as a
/// message on stderr; exit 2.
fn config_error(d: &Diagnostic, config: &str, format: CheckFormat, cwd: &Path, root: Option<&Path>) -> i32 {
    let code = report(&Failure { diagnostic: d.clone(), files: SourceFiles::default() }).max(2);
    // `path:line:col: message` when the config's text was at fault.
    let (line, col) = d
        .message
        .strip_prefix(config)
        .and_then(|rest| rest.strip_prefix(':'))
        .and_then(|rest| {
            let mut it = rest.splitn(3, ':');
            Some((it.next()?.parse::<u32>().ok()?, it.next()?.parse::<u32>().ok()?))
        })
        .map_or((None, None), |(l, c)| (Some(l), Some(c)));
    let file = match (format, root) {
        (CheckFormat::Github | CheckFormat::Sarif, Some(root)) => from_root(cwd, root, config),
        _ => config.to_string(),
    };
    let finding = check::CheckFinding {
        finding: sector_analyzer::finding::Finding {
            severity: sector_analyzer::finding::Severity::Error,
            rule: "config".into(),
            message: d.message.clone(),
            span: None,
            label: String::new(),
            notes: d.notes.clone(),
        },
        file,
        line,
        column: col,
        end_column: None,
        kernel: String::new(),
        launch: String::new(),
        value: None,
        budget: None,
        files: 0,
    };
    let r = check::CheckReport {
        config: config.to_string(),
        passed: false,
        kernels: 0,
        launches: 0,
        accesses: 0,
        findings: vec![finding],
        checked: Vec::new(),
        files: vec![SourceFiles::default()],
    };
    let _ = match format {
        CheckFormat::Text => 0,
        CheckFormat::Concise => out(&check::render_concise(&r)),
        CheckFormat::Json => out(&check::render_json(&r)),
        CheckFormat::Github => out(&check::render_github(&r)),
        CheckFormat::Sarif => {
            let root = root.map(|r| r.canonicalize().unwrap_or_else(|_| r.to_path_buf()));
            out(&check::render_sarif_at(&r, root.as_deref()))
        }
    };
    code
}
