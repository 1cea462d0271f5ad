//! The `sector-estimate` command line: parses flags, runs the library, renders, and maps
//! outcomes to exit codes (0 sheet produced, 1 source or launch not analysable, 2 bad usage).

use clap::{Parser, Subcommand, ValueEnum};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{
    self,
    termcolor::{ColorChoice, StandardStream},
};
use sector_analyzer::analyze::{EngineKind, Failure, DEFAULT_MAX_WORK};
use sector_analyzer::finding::line_col_offset;
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
        /// Required unless --launch-site finds it in the file.
        #[arg(long, allow_hyphen_values = true, default_value = "")]
        grid: String,
        #[arg(long, allow_hyphen_values = true, default_value = "")]
        block: String,
        /// A kernel parameter's value (or a template parameter's): NAME=VALUE.
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// Take grid, block, dynamic shared memory, template arguments and constant scalar
        /// arguments from the file's own `kernel<...><<<grid, block, smem>>>(...)` call (the one
        /// on LINE, or the kernel's first). Flags given explicitly win.
        #[arg(long = "launch-site", value_name = "LINE", num_args = 0..=1)]
        launch_site: Option<Option<u32>>,
        /// Contents of an index array: NAME=zero|identity|constant:V|permutation:LEN:SEED|uniform:LO:HI:SEED.
        #[arg(long = "fill", value_name = "NAME=SPEC")]
        fills: Vec<String>,
        /// A pointer parameter's byte offset past a 256-byte boundary: NAME=BYTES.
        #[arg(long = "offset", value_name = "NAME=BYTES")]
        offsets: Vec<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// GPU profile for the boundary model: h200, h100, a100, rtx3060ti, rtx2080ti, tesla-p4.
        #[arg(long, default_value = "h200")]
        gpu: String,
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
            launch_site,
        } => {
            let mut opts = AnalyzeOptions {
                kernel,
                grid,
                block,
                defines: defines(&src),
                include_dirs: src.include.clone(),
                gpu,
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
            if let Err(m) = sector_analyzer::cache::profile::lookup(&opts.gpu) {
                return usage(&m);
            }
            let mut site_line = None;
            if let Some(line) = launch_site {
                match sector_analyzer::analyze::apply_launch_site(Input::File(&src.file), &opts, line, &DiskLoader) {
                    Ok((o, l)) => {
                        opts = o;
                        site_line = Some(l);
                    }
                    Err(f) => return report(&f),
                }
            } else if opts.grid.is_empty() || opts.block.is_empty() {
                return usage("--grid and --block are required (or --launch-site to take them from the file)");
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
                    Err(diagnostic) => report(&Failure { diagnostic, files }),
                };
            }
            match sector_analyzer::analyze(Input::File(&src.file), &opts, &DiskLoader) {
                Ok(mut a) => out(&match format {
                    _ => {
                        if let Some(l) = site_line {
                            let given: Vec<String> = opts.args.iter().map(|(k, v)| format!("{k}={v}")).collect();
                            a.sheet.assumptions.insert(
                                0,
                                format!(
                                    "launch from the file's own call on line {l}: grid ({}), block ({}){}{}",
                                    opts.grid,
                                    opts.block,
                                    if opts.shared_bytes > 0 {
                                        format!(", {} bytes of dynamic shared memory", opts.shared_bytes)
                                    } else {
                                        String::new()
                                    },
                                    if given.is_empty() { String::new() } else { format!(", {}", given.join(" ")) }
                                ),
                            );
                        }
                        match format {
                            Format::Text => sector_analyzer::sheet::text::render(&a.sheet),
                            Format::Markdown => sector_analyzer::sheet::markdown::render(&a.sheet),
                            Format::Json => sector_analyzer::sheet::json::render(&a.sheet),
                        }
                    }
                }),
                Err(f) => report(&f),
            }
        }
    }
}

/// Renders a failure with its source snippet; returns the exit code.
fn report(f: &Failure) -> i32 {
    let d = &f.diagnostic;
    let mut files = SimpleFiles::new();
    let ids: Vec<usize> =
        f.files.files.iter().map(|sf| files.add(sf.path.display().to_string(), sf.text.clone())).collect();
    let mut cs = CsDiagnostic::error();
    match d.span {
        Some(span) => {
            cs = cs.with_message(format!("{}: {}", f.files.describe(span), d.message));
            if let Some(&fid) = ids.get(span.file.0 as usize) {
                let text = f.files.text(span.file);
                if let Some(start) = line_col_offset(text, span.line, span.column) {
                    let end = (start + span.len as usize).min(text.len()).max(start);
                    cs = cs.with_labels(vec![Label::primary(fid, start..end)]);
                }
            }
        }
        None => cs = cs.with_message(d.message.clone()),
    }
    cs = cs.with_notes(d.notes.clone());
    // Colour only for a person at a terminal (termcolor's Auto looks at TERM, not at the stream).
    use std::io::IsTerminal;
    let color = if std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none() {
        ColorChoice::Auto
    } else {
        ColorChoice::Never
    };
    let writer = StandardStream::stderr(color);
    let config = term::Config::default();
    if term::emit(&mut writer.lock(), &config, &files, &cs).is_err() {
        let _ = writeln!(std::io::stderr(), "error: {}", f.one_line());
    }
    match d.kind {
        ErrorKind::Usage => 2,
        _ => 1,
    }
}
