//! The `sector-estimate` command line: parses flags, runs the library, renders, and maps
//! outcomes to exit codes (0 sheet produced, 1 source or launch not analysable, 2 bad usage).

use clap::{Parser, Subcommand, ValueEnum};
use sector_analyzer::analyze::{EngineKind, Failure, DEFAULT_MAX_WORK};
use sector_analyzer::ir::cfg::Cfg;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{AnalyzeOptions, ErrorKind, Fill, Input, SourceFiles};
use std::io::Write;
use std::path::PathBuf;

mod check;
mod common;
mod explain;
mod sweep;

#[derive(Parser)]
#[command(
    name = "sector-estimate",
    version,
    about = "Predict the 32-byte sectors each warp memory instruction of a CUDA kernel touches, before any run"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Markdown,
    Json,
}

/// How errors and warnings are written to stderr.
#[derive(Clone, Copy, ValueEnum)]
enum MessageFormat {
    /// The message, the source line and a caret under the construct (rustc's layout).
    Full,
    /// One line per message in clang's layout, `file:line:col: error: message [rule]`, for
    /// editors' problem matchers.
    Concise,
    Json,
    /// GitHub Actions workflow commands.
    Github,
    /// SARIF 2.1.0.
    Sarif,
}

#[derive(Clone, Copy, ValueEnum)]
enum Emit {
    /// The kernel's control-flow graph in Graphviz form.
    Dot,
}

#[derive(clap::Args)]
struct SourceArgs {
    /// A .cu file (host code, templates and includes may be in it) or a .rs file of Rust kernels.
    file: PathBuf,
    /// Define a preprocessor macro, as for nvcc.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    define: Vec<String>,
    /// Add an include directory, as for nvcc.
    #[arg(short = 'I', value_name = "DIR")]
    include: Vec<PathBuf>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Print the accounting sheet of one kernel under one launch.
    Analyze {
        #[command(flatten)]
        src: SourceArgs,
        /// The kernel; may be left out when the file has exactly one.
        #[arg(long)]
        kernel: Option<String>,
        /// X[,Y[,Z]]: integers or integer expressions over --arg values (`ceil(n/256)`).
        #[arg(long, allow_hyphen_values = true)]
        grid: String,
        #[arg(long, allow_hyphen_values = true)]
        block: String,
        /// A kernel parameter's value (or a template parameter's): NAME=VALUE.
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// Contents of an index array: NAME=zero|identity|constant:V|permutation:LEN:SEED|uniform:LO:HI:SEED.
        #[arg(long = "fill", value_name = "NAME=SPEC")]
        fills: Vec<String>,
        /// A pointer parameter's byte offset past a 256-byte boundary: NAME=BYTES.
        #[arg(long = "offset", value_name = "NAME=BYTES")]
        offsets: Vec<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        #[command(flatten)]
        gpu: common::GpuArg,
        /// Dynamic shared memory per block (`extern __shared__` arrays), in bytes.
        #[arg(long, default_value_t = 0)]
        shared_bytes: u64,
        /// Work budget of the reference engine, in warp-level steps.
        #[arg(long, default_value_t = DEFAULT_MAX_WORK)]
        max_work: u64,
        /// symbolic: count whole boxes of warps in closed form (enumerating only what it cannot
        /// summarise); enumerate: run every lane of every warp (the reference).
        #[arg(long, value_enum, default_value = "symbolic")]
        engine: EngineKind,
        /// Print a derived view instead of the sheet.
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        /// How errors and warnings are written to stderr.
        #[arg(long, value_enum, default_value = "full")]
        message_format: MessageFormat,
    },
    /// Show one warp-level execution of the access(es) on a line, lane by lane, and why it
    /// touches the sectors it does.
    Explain(explain::ExplainArgs),
    /// Analyse a kernel over ranges of parameters and launch shapes: a table and an SVG heatmap.
    Sweep(sweep::SweepArgs),
    /// Check the kernels and budgets of a config file (sector-estimate.toml); exit 1 when a
    /// budget is exceeded.
    Check(check::CheckArgs),
    /// List the kernels (`__global__` functions) of a file.
    Kernels {
        #[command(flatten)]
        src: SourceArgs,
    },
}

fn split_pair(flag: &str, s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!("{flag} {s}: expected NAME=VALUE")),
    }
}

fn defines(src: &SourceArgs) -> Vec<(String, String)> {
    src.define
        .iter()
        .map(|d| match d.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (d.clone(), "1".to_string()),
        })
        .collect()
}

fn usage(msg: &str) -> i32 {
    let mut err = std::io::stderr();
    let _ = writeln!(err, "error: {msg}");
    2
}

/// Writes to stdout; a closed pipe is not an error.
fn out(text: &str) -> i32 {
    let mut o = std::io::stdout().lock();
    match o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
        Ok(()) => 0,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: writing the output: {e}");
            1
        }
    }
}

pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    match cli.cmd {
        Cmd::Explain(a) => explain::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Check(a) => check::run(a),
        Cmd::Kernels { src } => {
            let opts =
                AnalyzeOptions { defines: defines(&src), include_dirs: src.include.clone(), ..Default::default() };
            match sector_analyzer::list_kernels(Input::File(&src.file), &opts, &DiskLoader) {
                Ok(names) => out(&names.iter().map(|n| format!("{n}\n")).collect::<String>()),
                Err(f) => report(&f),
            }
        }
        Cmd::Analyze {
            src,
            kernel,
            grid,
            block,
            args,
            fills,
            offsets,
            format,
            gpu,
            shared_bytes,
            max_work,
            engine,
            emit,
            message_format,
        } => {
            let mut opts = AnalyzeOptions {
                kernel,
                grid,
                block,
                defines: defines(&src),
                include_dirs: src.include.clone(),
                gpu: gpu.gpu,
                max_work,
                engine,
                shared_bytes,
                ..Default::default()
            };
            for a in &args {
                match split_pair("--arg", a) {
                    Ok(p) => opts.args.push(p),
                    Err(m) => return usage(&m),
                }
            }
            for f in &fills {
                let (k, v) = match split_pair("--fill", f) {
                    Ok(p) => p,
                    Err(m) => return usage(&m),
                };
                match Fill::parse(&v) {
                    Ok(fill) => opts.fills.push((k, fill)),
                    Err(d) => return usage(&d.message),
                }
            }
            for o in &offsets {
                let (k, v) = match split_pair("--offset", o) {
                    Ok(p) => p,
                    Err(m) => return usage(&m),
                };
                match v.parse::<i64>() {
                    Ok(b) if (0..1 << 20).contains(&b) => opts.offsets.push((k, b)),
                    _ => return usage(&format!("--offset {o}: expected a byte count from 0 to 1048575")),
                }
            }
            if let Some(Emit::Dot) = emit {
                let mut files = SourceFiles::default();
                return match sector_analyzer::analyze::lower(&Input::File(&src.file), &opts, &DiskLoader, &mut files) {
                    Ok(m) => {
                        let k = match &opts.kernel {
                            Some(n) => m.kernels.iter().find(|k| &k.name == n),
                            None => m.kernels.first(),
                        };
                        match k {
                            Some(k) => out(&Cfg::build(k).to_dot(&k.name)),
                            None => usage("no such kernel"),
                        }
                    }
                    Err(diagnostic) => report_as(&Failure { diagnostic, files }, message_format),
                };
            }
            match sector_analyzer::analyze(Input::File(&src.file), &opts, &DiskLoader) {
                Ok(a) => {
                    if !a.warnings.is_empty() {
                        let _ = std::io::stderr().write_all(messages(&a.files, &a.warnings, message_format).as_bytes());
                    }
                    out(&match format {
                        Format::Text => sector_analyzer::sheet::text::render(&a.sheet),
                        Format::Markdown => sector_analyzer::sheet::markdown::render(&a.sheet),
                        Format::Json => sector_analyzer::sheet::json::render(&a.sheet),
                    })
                }
                Err(f) => report_as(&f, message_format),
            }
        }
    }
}

/// Renders a failure (full form) on stderr; returns the exit code.
fn report(f: &Failure) -> i32 {
    report_as(f, MessageFormat::Full)
}

/// Renders a failure on stderr in `format`; returns the exit code (2 for usage, else 1).
fn report_as(f: &Failure, format: MessageFormat) -> i32 {
    let _ = std::io::stderr().write_all(messages(&f.files, std::slice::from_ref(&f.diagnostic), format).as_bytes());
    match f.diagnostic.kind {
        ErrorKind::Usage => 2,
        _ => 1,
    }
}

/// Diagnostics (errors, warnings) rendered by the library's one set of renderers.
fn messages(files: &SourceFiles, ds: &[sector_analyzer::Diagnostic], format: MessageFormat) -> String {
    use sector_analyzer::finding::{self, Finding, Placed};
    let findings: Vec<Finding> = ds.iter().map(Finding::from_diagnostic).collect();
    let file = files.files.first().map(|f| f.path.display().to_string()).unwrap_or_default();
    let placed = || findings.iter().map(|f| Placed::of(files, f, &file)).collect::<Vec<_>>();
    match format {
        MessageFormat::Full => {
            // Colour only for a person at a terminal (termcolor's Auto looks at TERM, not at the stream).
            use std::io::IsTerminal;
            let color = common::color_for(std::io::stderr().is_terminal());
            findings.iter().map(|f| finding::render(files, f, color)).collect()
        }
        MessageFormat::Concise => findings.iter().map(|f| finding::concise(files, f)).collect(),
        MessageFormat::Json => finding::json(&placed()),
        MessageFormat::Github => finding::github(&placed()),
        MessageFormat::Sarif => {
            let rules: Vec<(&str, &str)> = [
                ("syntax", "The source could not be read or parsed"),
                ("preprocess", "The preprocessor failed, or #warning"),
                ("unsupported", "A construct inside a kernel that the analyzer does not model"),
                ("missing-argument", "A parameter value the analysis needs was not given"),
                ("launch", "The launch configuration is invalid"),
                ("arithmetic", "Arithmetic the C rules leave undefined"),
                ("limit", "The analysis would exceed its work budget"),
                ("usage", "Bad usage"),
            ]
            .to_vec();
            finding::sarif(&placed(), &rules)
        }
    }
}
