//! `check`: budgets for CI. A config file in the user's repository (`sector-estimate.toml`)
//! lists kernels, their launches and budgets (per kernel or per line); every launch is
//! analysed and every access held to its budgets. Findings render as text with source snippets,
//! JSON, GitHub workflow annotations or SARIF 2.1.0.
//!
//! ```toml
//! [budgets]                       # defaults for every kernel
//! max_sectors_per_request = 32
//!
//! [[kernel]]
//! file = "examples/vec_add.cu"    # relative to this file
//! kernel = "vec_add"
//! budgets = { max_sectors_per_request = 4, min_efficiency = 1.0, max_sectors = 400000 }
//! launch = [{ name = "1m", grid = "4096", block = "256", args = { n = 1048576 } }]
//!
//! [[kernel]]
//! file = "examples/transpose_naive.cu"
//! manifest = "examples/transpose_naive.toml"   # every case of an example manifest
//! line = [{ line = 24, column = 9, max_sectors_per_request = 32 }]
//! ```

use crate::analyze::{analyze, AnalyzeOptions, Input};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::finding::{self, Finding, Severity};
use crate::manifest::{Launch, Manifest};
pub use crate::sheet::budget::Budgets;
use crate::sheet::budget::{self, Violation};
use crate::sheet::text::thousands;
use crate::sheet::Row;
use crate::source::{FileId, FileLoader, SourceFiles, Span};
#[cfg(feature = "cli")]
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Budgets for the accesses on one line (or at one line and column).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LineBudget {
    pub line: u32,
    pub column: Option<u32>,
    pub max_sectors_per_request: Option<f64>,
    pub min_efficiency: Option<f64>,
    pub max_sectors: Option<u64>,
    pub max_wavefronts_per_request: Option<f64>,
}

impl LineBudget {
    fn budgets(&self) -> Budgets {
        Budgets {
            max_sectors_per_request: self.max_sectors_per_request,
            min_efficiency: self.min_efficiency,
            max_sectors: self.max_sectors,
            max_wavefronts_per_request: self.max_wavefronts_per_request,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelEntry {
    /// The `.cu` or `.rs` file, relative to the config file.
    pub file: String,
    /// The kernel; may be left out when the file has one, or when `manifest` names them.
    pub kernel: Option<String>,
    /// An example manifest whose cases are launches (those of `kernel`, when given).
    pub manifest: Option<String>,
    #[serde(default)]
    pub launch: Vec<Launch>,
    #[serde(default)]
    pub budgets: Budgets,
    #[serde(default)]
    pub line: Vec<LineBudget>,
    /// Include directories, relative to the config file.
    #[serde(default)]
    pub include: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Defaults for every kernel.
    #[serde(default)]
    pub budgets: Budgets,
    #[serde(default, rename = "kernel")]
    pub kernels: Vec<KernelEntry>,
}

impl Config {
    pub fn parse(text: &str, path: &Path) -> Result<Config> {
        let c: Config = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| {
                    let before = &text[..s.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
                    format!(":{line}:{col}")
                })
                .unwrap_or_default();
            Diagnostic::new(ErrorKind::Usage, format!("{}{at}: {}", path.display(), e.message()))
        })?;
        c.budgets.validate(&format!("{}: [budgets]", path.display()))?;
        if c.kernels.is_empty() {
            return Err(Diagnostic::new(ErrorKind::Usage, format!("{}: no [[kernel]] to check", path.display())));
        }
        for k in &c.kernels {
            let what = format!("{}: kernel entry for {}", path.display(), k.file);
            k.budgets.validate(&what)?;
            for l in &k.line {
                l.budgets().validate(&format!("{what}, line {}", l.line))?;
            }
            if k.launch.is_empty() && k.manifest.is_none() {
                return Err(Diagnostic::new(
                    ErrorKind::Usage,
                    format!("{what}: give its launches with `launch = [...]` or `manifest = \"NAME.toml\"`"),
                ));
            }
            if k.budgets.over(c.budgets) == Budgets::default() && k.line.is_empty() {
                return Err(Diagnostic::new(
                    ErrorKind::Usage,
                    format!(
                        "{what}: no budgets to check: give `budgets = {{ max_sectors_per_request = 4 }}`, `line = [...]` or a [budgets] table for every kernel"
                    ),
                ));
            }
        }
        Ok(c)
    }
    pub fn load(path: &Path) -> Result<Config> {
        let text = crate::source::read_config(path).map_err(|why| Diagnostic::new(ErrorKind::Usage, why))?;
        Config::parse(&text, path)
    }
}

/// One violated budget, or a launch that could not be analysed.
#[derive(Clone, Debug, Serialize)]
pub struct CheckFinding {
    #[serde(flatten)]
    pub finding: Finding,
    /// The file as the config names it (relative to the working directory).
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// One past the last column of the access.
    pub end_column: Option<u32>,
    pub kernel: String,
    pub launch: String,
    /// The measured value and the budget it broke (absent for analysis failures).
    pub value: Option<f64>,
    pub budget: Option<f64>,
    /// Index into [`CheckReport::files`].
    #[serde(skip)]
    pub files: usize,
}

/// What one launch was checked against, for the report.
#[derive(Clone, Debug, Serialize)]
pub struct Checked {
    pub file: String,
    pub kernel: String,
    pub launch: String,
    pub accesses: usize,
    pub ok: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct CheckReport {
    pub config: String,
    pub passed: bool,
    pub kernels: usize,
    pub launches: usize,
    pub accesses: usize,
    pub findings: Vec<CheckFinding>,
    pub checked: Vec<Checked>,
    /// The sources each launch read, for snippets.
    #[serde(skip)]
    pub files: Vec<SourceFiles>,
}

#[derive(Clone)]
struct Job {
    path: PathBuf,
    display: String,
    kernel: Option<String>,
    launch: String,
    opts: AnalyzeOptions,
    budgets: Budgets,
    lines: Vec<LineBudget>,
}

/// `base/rel` written the way a person reads it: `.` and `dir/..` taken out, so that paths in
/// findings are those a reader (or GitHub) expects, relative to the working directory.
fn joined(base: &Path, rel: &str) -> PathBuf {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    let whole = base.join(rel);
    for c in whole.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out.iter().collect()
}

fn jobs(config: &Config, dir: &Path) -> Result<Vec<Job>> {
    let mut out = Vec::new();
    for k in &config.kernels {
        let path = joined(dir, &k.file);
        let display = path.display().to_string();
        let include: Vec<PathBuf> = k.include.iter().map(|i| joined(dir, i)).collect();
        let budgets = k.budgets.over(config.budgets);
        for (i, l) in k.launch.iter().enumerate() {
            out.push(Job {
                path: path.clone(),
                display: display.clone(),
                kernel: k.kernel.clone(),
                launch: l.name.clone().unwrap_or_else(|| format!("launch {}", i + 1)),
                opts: AnalyzeOptions { include_dirs: include.clone(), ..l.options(k.kernel.clone())? },
                budgets,
                lines: k.line.clone(),
            });
        }
        if let Some(m) = &k.manifest {
            let manifest = Manifest::load(&joined(dir, m))?;
            let mut n = 0;
            for c in manifest.cases.iter().filter(|c| k.kernel.as_ref().is_none_or(|n| *n == c.kernel)) {
                let mut opts = c.options()?;
                opts.include_dirs = include.clone();
                out.push(Job {
                    path: path.clone(),
                    display: display.clone(),
                    kernel: Some(c.kernel.clone()),
                    launch: c.name.clone(),
                    opts,
                    budgets,
                    lines: k.line.clone(),
                });
                n += 1;
            }
            if n == 0 {
                return Err(Diagnostic::new(
                    ErrorKind::Usage,
                    format!(
                        "{m}: no case{}",
                        k.kernel.as_ref().map(|n| format!(" of kernel `{n}`")).unwrap_or_default()
                    ),
                ));
            }
        }
    }
    Ok(out)
}

/// Loads the config and checks every launch in it, on the rayon pool. `Err` only when the
/// config itself is unusable; launches that fail are findings.
pub fn check(config_path: &Path, loader: &(dyn FileLoader + Sync)) -> Result<CheckReport> {
    let config = Config::load(config_path)?;
    check_config(&config, config_path, loader)
}

pub fn check_config(config: &Config, config_path: &Path, loader: &(dyn FileLoader + Sync)) -> Result<CheckReport> {
    check_config_within(config, config_path, loader, Limits::default())
}

/// Time limits of a `check` run: per launch (where the launch's options set none) and in all.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    pub per_launch: Option<std::time::Duration>,
    pub total: Option<std::time::Duration>,
}

/// [`check`] under time limits: each launch gets at most what is left of `limits.total`, and
/// launches not started when it has run out are findings that say so.
pub fn check_within(config_path: &Path, loader: &(dyn FileLoader + Sync), limits: Limits) -> Result<CheckReport> {
    let config = Config::load(config_path)?;
    check_config_within(&config, config_path, loader, limits)
}

pub fn check_config_within(
    config: &Config,
    config_path: &Path,
    loader: &(dyn FileLoader + Sync),
    limits: Limits,
) -> Result<CheckReport> {
    let dir = config_path.parent().unwrap_or(Path::new(""));
    let jobs = jobs(config, dir)?;
    let deadline = limits.total.and_then(|t| std::time::Instant::now().checked_add(t));
    let bounded = |j: &Job| -> (Checked, Vec<CheckFinding>, SourceFiles) {
        let mut j = j.clone();
        j.opts.time_limit = j.opts.time_limit.or(limits.per_launch);
        // Budgets are on counts, which never wait on the boundary estimate: give the cache
        // model no steps (the sheet keeps its hard bounds) instead of up to a second a launch.
        j.opts.estimate.max_work = Some(0);
        if let Some(d) = deadline {
            let left = d.saturating_duration_since(std::time::Instant::now());
            j.opts.time_limit = Some(j.opts.time_limit.map_or(left, |l| l.min(left)));
        }
        run_job(&j, loader)
    };
    #[cfg(feature = "cli")]
    let jobs = jobs.par_iter();
    #[cfg(not(feature = "cli"))]
    let jobs = jobs.iter();
    let results: Vec<(Checked, Vec<CheckFinding>, SourceFiles)> = jobs.map(bounded).collect();
    let mut report = CheckReport {
        config: config_path.display().to_string(),
        passed: true,
        kernels: 0,
        launches: results.len(),
        accesses: 0,
        findings: Vec::new(),
        checked: Vec::new(),
        files: Vec::new(),
    };
    let mut kernels = BTreeSet::new();
    for (checked, findings, files) in results {
        let idx = report.files.len();
        report.files.push(files);
        report.accesses += checked.accesses;
        kernels.insert((checked.file.clone(), checked.kernel.clone()));
        report.checked.push(checked);
        report.findings.extend(findings.into_iter().map(|mut f| {
            f.files = idx;
            f
        }));
    }
    report.kernels = kernels.len();
    report.passed = report.findings.iter().all(|f| f.finding.severity != Severity::Error);
    Ok(report)
}

fn run_job(j: &Job, loader: &dyn FileLoader) -> (Checked, Vec<CheckFinding>, SourceFiles) {
    let kernel_name = j.kernel.clone().unwrap_or_default();
    let mut checked = Checked {
        file: j.display.clone(),
        kernel: kernel_name.clone(),
        launch: j.launch.clone(),
        accesses: 0,
        ok: false,
    };
    let base = CheckFinding {
        finding: Finding {
            severity: Severity::Error,
            rule: String::new(),
            message: String::new(),
            span: None,
            label: String::new(),
            notes: Vec::new(),
        },
        file: j.display.clone(),
        line: None,
        column: None,
        end_column: None,
        kernel: kernel_name.clone(),
        launch: j.launch.clone(),
        value: None,
        budget: None,
        files: 0,
    };
    let failed = |d: Diagnostic, files: SourceFiles, kernel: &str| {
        let mut f = base.clone();
        f.kernel = kernel.to_string();
        f.finding.rule = "analysis-failed".into();
        let which = if kernel.is_empty() { String::new() } else { format!(" of kernel `{kernel}`") };
        f.finding.message = format!("[{}] the launch{which} could not be analysed: {}", j.launch, d.message);
        f.finding.span = d.span;
        f.finding.label = "here".into();
        f.finding.notes = d.notes.clone();
        if let Some(s) = d.span {
            if s.file == FileId(0) {
                f.line = Some(s.line);
                f.column = Some(s.column);
                f.end_column = Some(s.column + s.len.max(1));
            } else if let Some(sf) = files.files.get(s.file.0 as usize) {
                f.file = sf.path.display().to_string();
                f.line = Some(s.line);
                f.column = Some(s.column);
                f.end_column = Some(s.column + s.len.max(1));
            }
        }
        f
    };
    // No time left of `check`'s total (see `check_config_within`): not started.
    if j.opts.time_limit == Some(std::time::Duration::ZERO) {
        let d = Diagnostic::new(
            ErrorKind::Limit,
            "not analysed: `check` ran past its total time limit (--total-time-limit SECONDS)",
        );
        return (checked, vec![failed(d, SourceFiles::default(), &kernel_name)], SourceFiles::default());
    }
    // The kernel (its name, and its span for the launch's findings), then the sheet: counted on
    // this kernel from source, or by the analysis of the compiled code.
    let input = Input::File(&j.path);
    let mut files = SourceFiles::default();
    let module = match crate::analyze::lower(&input, &j.opts, loader, &mut files) {
        Ok(m) => m,
        Err(d) => return (checked, vec![failed(d, files.clone(), &kernel_name)], files),
    };
    let kernel = match crate::analyze::pick_kernel(&module, j.opts.kernel.as_deref(), &files) {
        Ok(k) => k,
        Err(d) => return (checked, vec![failed(d, files.clone(), &kernel_name)], files),
    };
    let (name, kspan) = (kernel.name.clone(), kernel.span);
    checked.kernel = name.clone();
    let analysed = if crate::analyze::counts_sass(&input, &j.opts) {
        analyze(Input::File(&j.path), &j.opts, loader).map(|a| (a.sheet, a.warnings))
    } else {
        crate::analyze::sheet_of(kernel, &j.opts, &files)
            .map(|sheet| (sheet, module.warnings.clone()))
            .map_err(|diagnostic| crate::analyze::Failure { diagnostic, files: files.clone() })
    };
    let (sheet, warnings) = match analysed {
        Ok(x) => x,
        Err(f) => return (checked, vec![failed(f.diagnostic, f.files.clone(), &name)], f.files),
    };
    checked.accesses = sheet.instructions.len();
    // Each row's span is its memory operation's; rows counted from SASS stand for a source
    // line, not for one access, and point at their line and column.
    let spans: Vec<Option<Span>> = sheet.instructions.iter().map(|r| r.sass.is_empty().then_some(r.span)).collect();
    let mut findings = Vec::new();
    let tag = format!("[{}] ", j.launch);
    let at = |r: &Row, span: Option<Span>, v: Violation| {
        let mut f = base.clone();
        f.kernel = name.clone();
        f.finding.rule = v.rule.into();
        f.finding.message = format!("{tag}{}", v.message);
        f.finding.label = v.label;
        f.finding.span = span;
        if let Some(s) = span.filter(|s| s.file != FileId(0)) {
            if let Some(sf) = files.files.get(s.file.0 as usize) {
                f.file = sf.path.display().to_string();
            }
        }
        f.line = Some(r.line);
        f.column = Some(r.column);
        f.end_column = Some(r.column + span.map_or(r.text.len() as u32, |s| s.len.max(1)));
        f.value = Some(v.value);
        f.budget = Some(v.budget);
        f
    };
    // Line budgets that name no access are mistakes in the config.
    for lb in &j.lines {
        let hits = sheet.instructions.iter().any(|r| r.line == lb.line && lb.column.is_none_or(|c| c == r.column));
        if !hits {
            let mut f = base.clone();
            f.kernel = name.clone();
            f.finding.rule = "config".into();
            f.finding.message = format!(
                "[{}] the config sets budgets for line {}{}, where kernel `{name}` has no memory access",
                j.launch,
                lb.line,
                lb.column.map(|c| format!(", column {c}")).unwrap_or_default()
            );
            f.line = Some(lb.line);
            f.column = lb.column;
            findings.push(f);
        }
    }
    for (r, span) in sheet.instructions.iter().zip(&spans) {
        let line_budgets = j
            .lines
            .iter()
            .filter(|lb| lb.line == r.line && lb.column.is_none_or(|c| c == r.column))
            .fold(Budgets::default(), |acc, lb| acc.over(lb.budgets()));
        // The kernel's `max_sectors` is the launch's; a line's is its accesses'.
        let b = Budgets { max_sectors: line_budgets.max_sectors, ..line_budgets.over(j.budgets) };
        for v in budget::row_violations(r, &b) {
            findings.push(at(r, *span, v));
        }
    }
    if let Some(v) = j.budgets.max_sectors.and_then(|max| budget::launch_violation(&sheet, max)) {
        let mut f = base.clone();
        f.kernel = name.clone();
        f.finding.rule = v.rule.into();
        f.finding.message = format!("{tag}{}", v.message);
        f.finding.label = v.label;
        f.finding.span = Some(kspan);
        f.line = Some(kspan.line);
        f.column = Some(kspan.column);
        f.end_column = Some(kspan.column + kspan.len.max(1));
        f.value = Some(v.value);
        f.budget = Some(v.budget);
        findings.push(f);
    }
    // Warnings (`#warning`) reach the report; they fail no budget.
    for w in &warnings {
        let mut f = base.clone();
        f.kernel = name.clone();
        f.finding = Finding::from_diagnostic(w);
        f.finding.message = format!("[{}] {}", j.launch, w.message);
        if let Some(s) = w.span.filter(|s| s.file == FileId(0)) {
            f.line = Some(s.line);
            f.column = Some(s.column);
            f.end_column = Some(s.column + s.len.max(1));
        }
        findings.push(f);
    }
    checked.ok = findings.iter().all(|f| f.finding.severity != Severity::Error);
    (checked, findings, files)
}

/// Findings with their source snippets, then a summary.
pub fn render_text(r: &CheckReport, color: bool) -> String {
    let mut s = String::new();
    for f in &r.findings {
        s.push_str(&finding::render(&r.files[f.files], &f.finding, color));
    }
    let errors = r.findings.iter().filter(|f| f.finding.severity == Severity::Error).count();
    let _ = writeln!(
        s,
        "check {}: {} of {}, {} accesses: {}",
        r.config,
        plural(r.launches, "launch", "launches"),
        plural(r.kernels, "kernel", "kernels"),
        thousands(r.accesses as u64),
        if errors == 0 {
            "every budget holds".to_string()
        } else {
            format!("{} failed", plural(errors, "check", "checks"))
        }
    );
    s
}

/// One line per finding in clang's layout, for editors' problem matchers.
pub fn render_concise(r: &CheckReport) -> String {
    finding::concise_placed(&placed(r))
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n as u64), if n == 1 { one } else { many })
}

pub fn render_json(r: &CheckReport) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// Each finding placed in its file, with the launch's properties for SARIF.
fn placed(r: &CheckReport) -> Vec<finding::Placed<'_>> {
    r.findings
        .iter()
        .map(|f| {
            let mut properties = serde_json::Map::new();
            properties.insert("kernel".into(), serde_json::json!(f.kernel));
            properties.insert("launch".into(), serde_json::json!(f.launch));
            properties.insert("value".into(), serde_json::json!(f.value));
            properties.insert("budget".into(), serde_json::json!(f.budget));
            finding::Placed {
                finding: &f.finding,
                file: f.file.clone(),
                line: f.line,
                column: f.column,
                end_column: f.end_column,
                properties,
            }
        })
        .collect()
}

/// GitHub Actions workflow commands: one `::error` annotation per finding.
pub fn render_github(r: &CheckReport) -> String {
    finding::github(&placed(r))
}

pub use crate::finding::SARIF_SCHEMA;

/// SARIF 2.1.0 for code scanning, with the findings' paths as they are.
pub fn render_sarif(r: &CheckReport) -> String {
    render_sarif_at(r, None)
}

pub use crate::finding::uri_path;

/// SARIF 2.1.0 for code scanning. Findings' paths are taken as relative to the repository root
/// (`%SRCROOT%`, GitHub code scanning's convention); `root`, when known, is given as that base's
/// absolute URI in `originalUriBaseIds`.
pub fn render_sarif_at(r: &CheckReport, root: Option<&Path>) -> String {
    let rules = [
        ("max-sectors-per-request", "A global access touches more 32-byte sectors per request than its budget allows"),
        (
            "min-efficiency",
            "A global access moves more sectors than the fewest that could carry its bytes, beyond its budget",
        ),
        ("max-sectors", "A launch (or an access) touches more global sectors than its budget allows"),
        (
            "max-wavefronts-per-request",
            "A shared-memory access needs more wavefronts per request than its budget allows (bank conflicts)",
        ),
        ("analysis-failed", "A launch in the config could not be analysed"),
        ("config", "The config names something that is not there"),
    ];
    finding::sarif(&placed(r), &rules, root)
}
