//! The `sector-estimate` command line: parses flags, runs the library, renders, and maps
//! outcomes to exit codes (0 sheet produced, 1 source or launch not analysable, 2 bad usage).

use clap::{Parser, Subcommand, ValueEnum};
use sector_analyzer::analyze::{
    EngineKind, Failure, DEFAULT_ESTIMATE_TIME_LIMIT_S, DEFAULT_MAX_WORK, DEFAULT_TIME_LIMIT_S,
};
use sector_analyzer::ir::cfg::Cfg;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{AnalyzeOptions, ErrorKind, Input, SourceFiles};
use std::io::Write;
use std::path::PathBuf;

mod check;
mod common;
mod explain;
mod sweep;

/// `0.1.0 (commit 1a2b3c4d5e6f)`, or the bare version outside a git checkout (build.rs).
const VERSION: &str = env!("SECTOR_ESTIMATE_VERSION");

const EXAMPLES: &str = "\
Examples:
  sector-estimate analyze examples/transpose_naive.cu --kernel transpose_naive --grid 64,256 --block 32x8 --arg rows=2048 --arg cols=2048
  sector-estimate explain examples/vec_add.cu --grid 4096 --block 256 --arg n=1048576 --line 29
  sector-estimate sweep examples/vec_add.cu --grid 'ceil(n/block)' --block 32..1024:x2 --arg n=1048576
  sector-estimate check                      # sector-estimate.toml here or in a parent directory
  sector-estimate kernels examples/gather.cu";

#[derive(Parser)]
#[command(
    name = "sector-estimate",
    version = VERSION,
    about = "Predict the 32-byte sectors each warp memory instruction of a CUDA kernel touches, before any run",
    after_help = EXAMPLES
)]
struct Cli {
    /// Colour in messages and snippets: auto (a terminal, unless NO_COLOR is set or TERM=dumb),
    /// always or never.
    #[arg(long, value_enum, default_value = "auto", global = true)]
    color: ColorArg,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum ColorArg {
    Auto,
    Always,
    Never,
}

static COLOR: std::sync::OnceLock<ColorArg> = std::sync::OnceLock::new();

/// Whether to colour what goes to a stream (stdout or stderr) that is or is not a terminal.
pub(crate) fn color_on(stream_is_terminal: bool) -> bool {
    match COLOR.get().copied().unwrap_or(ColorArg::Auto) {
        ColorArg::Always => true,
        ColorArg::Never => false,
        ColorArg::Auto => {
            stream_is_terminal
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                && std::env::var("TERM").map_or(true, |t| t != "dumb")
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// The accounting sheet for a person.
    Text,
    /// The same sheet as Markdown tables.
    Markdown,
    /// The machine form (docs/src/json-schema.md), alone on stdout.
    Json,
    /// One self-contained HTML page: the source coloured by excess sectors, each row's lane map
    /// on click, the boundaries as a chart (redirect it to a file and open it in a browser).
    Html,
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
enum ListFormat {
    /// One kernel a line: its signature and where it starts.
    Text,
    /// An array of {name, line, column, parameters, error}.
    Json,
}

#[derive(Clone, Copy, PartialEq, ValueEnum)]
enum Emit {
    /// The kernel's control-flow graph in Graphviz form.
    Dot,
    /// The kernel's IR as the engines see it (after dead loads are removed), as text.
    Ir,
    /// The kernel's SASS with each memory instruction's executions and sectors beside it
    /// (needs the launch and a CUDA toolkit; implies --via sass).
    Sass,
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
    #[command(after_help = "Examples:
  sector-estimate analyze examples/vec_add.cu --grid 'ceil(n/256)' --block 256 --arg n=1048576
  sector-estimate analyze examples/transpose_naive.cu --grid 64,256 --block 32x8 --arg rows=2048 --arg cols=2048 --format json
  sector-estimate analyze examples/gather.cu --kernel gather --grid 4096 --block 256 --arg n=1048576 --fill idx=permutation:1048576:1
  sector-estimate analyze examples/loops.cu --kernel row_sums --emit dot | dot -Tsvg > cfg.svg")]
    Analyze {
        #[command(flatten)]
        src: SourceArgs,
        /// The kernel; may be left out when the file has exactly one.
        #[arg(long)]
        kernel: Option<String>,
        /// The grid, X[,Y[,Z]] or XxY[xZ]: integers or integer expressions over --arg values
        /// (`ceil(n/256)`) and the block's shape (`ceil(n/block)`). Required unless --launch-site
        /// finds it in the file.
        #[arg(long, allow_hyphen_values = true)]
        grid: Option<String>,
        /// The block, X[,Y[,Z]] or XxY[xZ] (`256`, `32,8`, `32x8`).
        #[arg(long, allow_hyphen_values = true)]
        block: Option<String>,
        /// A kernel parameter's value (or a template parameter's): NAME=VALUE.
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// Take grid, block, dynamic shared memory, template arguments and constant scalar
        /// arguments from the file's own `kernel<...><<<grid, block, smem>>>(...)` call (the one
        /// on LINE, or the kernel's first). Flags given explicitly win.
        #[arg(long = "launch-site", value_name = "LINE", num_args = 0..=1)]
        launch_site: Option<Option<u32>>,
        /// Contents of an index array: NAME=zero|identity|constant:V|permutation:LEN:SEED|uniform:LO:HI:SEED|csr:ROWS:NNZ:SEED
        /// (csr: ROWS+1 sorted row offsets from 0 to NNZ, as a CSR matrix's row pointers).
        #[arg(long = "fill", value_name = "NAME=SPEC")]
        fills: Vec<String>,
        /// A pointer parameter's byte offset past a 256-byte boundary: NAME=BYTES.
        #[arg(long = "offset", value_name = "NAME=BYTES")]
        offsets: Vec<String>,
        /// How to print the sheet.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
        /// The whole text sheet: the engine, logical bytes, the boundaries per instruction and
        /// every assumption (the cache model's, and each row's on its own line). The default
        /// sheet shows only the assumptions that change one of its numbers.
        #[arg(long, short = 'v')]
        verbose: bool,
        #[command(flatten)]
        gpu: common::GpuArg,
        /// Dynamic shared memory per block (`extern __shared__` arrays), in bytes.
        #[arg(long, default_value_t = 0)]
        shared_bytes: u64,
        /// Work budget of every engine together, in warp-level steps of the reference engine
        /// (a symbolic step counts as 400).
        #[arg(long, default_value_t = DEFAULT_MAX_WORK)]
        max_work: u64,
        /// Wall-clock limit in seconds: the analysis is refused once it runs this long (0: none).
        #[arg(long, default_value_t = DEFAULT_TIME_LIMIT_S)]
        time_limit: u64,
        /// Wall-clock limit in seconds of the boundary estimate (the cache model), apart from
        /// --time-limit, which bounds the counting: where it runs out the sheet still comes, its
        /// L2 and DRAM traffic given as bounds (JSON `boundaries.bounds_only`). 0: none.
        #[arg(long, default_value_t = DEFAULT_ESTIMATE_TIME_LIMIT_S, value_name = "SECONDS")]
        estimate_time_limit: f64,
        /// symbolic: count whole boxes of warps in closed form (enumerating only what it cannot
        /// summarise); enumerate: run every lane of every warp (the reference).
        #[arg(long, value_enum, default_value = "symbolic")]
        engine: EngineKind,
        /// Print a derived view instead of the sheet (dot and ir need no launch).
        #[arg(long, value_enum)]
        emit: Option<Emit>,
        /// Count the source as written, or the SASS the toolkit compiles it to (auto: SASS when a
        /// CUDA toolkit is found; fallback: the source, and the SASS where the source path
        /// refuses a construct and a toolkit is found). A .cubin, fatbin or executable is always
        /// counted as SASS.
        #[arg(long, value_enum, default_value = "fallback")]
        via: sector_analyzer::analyze::Via,
        /// The architecture to compile for with --via sass (default: the --gpu profile's, sm_90
        /// for h200).
        #[arg(long, value_name = "sm_XX")]
        arch: Option<String>,
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
    /// List the kernels (`__global__` functions) of a file, in source order, with their
    /// parameters.
    #[command(after_help = "Example:\n  sector-estimate kernels examples/gather.cu --format json")]
    Kernels {
        #[command(flatten)]
        src: SourceArgs,
        /// How to print the list.
        #[arg(long, value_enum, default_value = "text")]
        format: ListFormat,
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

pub(crate) fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return code;
        }
    };
    let _ = COLOR.set(cli.color);
    match cli.cmd {
        Cmd::Explain(a) => explain::run(a),
        Cmd::Sweep(a) => sweep::run(a),
        Cmd::Check(a) => check::run(a),
        Cmd::Kernels { src, format } => {
            let opts =
                AnalyzeOptions { defines: defines(&src), include_dirs: src.include.clone(), ..Default::default() };
            let mut files = SourceFiles::default();
            match sector_analyzer::analyze::list_module(&Input::File(&src.file), &opts, &DiskLoader, &mut files) {
                Ok(m) => {
                    if !m.warnings.is_empty() {
                        let _ =
                            std::io::stderr().write_all(messages(&files, &m.warnings, MessageFormat::Full).as_bytes());
                    }
                    out(&kernel_list(&m, format))
                }
                Err(diagnostic) => report(&Failure { diagnostic, files }),
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
            verbose,
            gpu,
            shared_bytes,
            max_work,
            time_limit,
            estimate_time_limit,
            engine,
            emit,
            via,
            arch,
            message_format,
            launch_site,
        } => {
            let emit_sass = emit == Some(Emit::Sass);
            let emit = emit.filter(|e| *e != Emit::Sass);
            let via = if emit_sass { sector_analyzer::analyze::Via::Sass } else { via };
            // No launch on the command line: the file's own, when it launches the kernel once.
            let by_default =
                grid.is_none() && block.is_none() && args.is_empty() && launch_site.is_none() && emit.is_none();
            // Only the sheet needs a launch; `--emit dot|ir` reads the source alone.
            if emit_sass && (grid.is_none() || block.is_none()) && launch_site.is_none() && !by_default {
                return usage("--emit sass counts a launch: add --grid and --block (or --launch-site)");
            }
            let (grid, block) = match (grid, block, emit) {
                (Some(g), Some(b), _) => (g, b),
                (None, None, None) if by_default => (String::new(), String::new()),
                (g, b, Some(_)) => (g.unwrap_or_else(|| "1".into()), b.unwrap_or_else(|| "32".into())),
                (g, b, None) if launch_site.is_some() => (g.unwrap_or_default(), b.unwrap_or_default()),
                (g, _, None) => {
                    return usage(&format!(
                        "analyze needs the launch: add {}(e.g. --grid 'ceil(n/256)' --block 256)",
                        if g.is_none() { "--grid and --block " } else { "--block " }
                    ))
                }
            };
            // The same checks as `explain` and `sweep` (one place: common::LaunchArgs).
            let launch_args = common::LaunchArgs {
                kernel,
                args,
                fills,
                offsets,
                gpu,
                shared_bytes,
                max_work,
                time_limit,
                estimate_time_limit,
            };
            let mut opts = match launch_args.options(&src, &grid, &block, true) {
                Ok(o) => AnalyzeOptions { engine, via, arch, ..o },
                Err(m) => return usage(&m),
            };
            let mut site_line = None;
            if by_default || (emit.is_none() && launch_site.is_some()) {
                match common::site_launch(&src.file, opts, launch_site, "analyze") {
                    Ok((o, said)) => {
                        opts = o;
                        site_line = said;
                    }
                    Err(common::NoLaunch::Usage(m)) => return usage(&m),
                    Err(common::NoLaunch::Failure(f)) => return report_as(&f, message_format),
                }
            }
            if let Some(what) = emit {
                let mut files = SourceFiles::default();
                return match sector_analyzer::analyze::lower(&Input::File(&src.file), &opts, &DiskLoader, &mut files) {
                    Ok(m) => {
                        let k = match &opts.kernel {
                            Some(n) => m.kernels.iter().find(|k| &k.name == n),
                            None => m.kernels.first(),
                        };
                        match k {
                            Some(k) if what == Emit::Dot => out(&Cfg::build(k).to_dot(&k.name)),
                            Some(k) => out(&sector_analyzer::ir::print::kernel(k)),
                            // A kernel that could not be lowered: its own error, not a usage one.
                            None => match &opts.kernel {
                                Some(n) => m.failed.iter().find(|(f, _)| f == n),
                                None => m.failed.first(),
                            }
                            .map_or_else(
                                || usage("no such kernel"),
                                |(_, d)| report_as(&Failure { diagnostic: d.clone(), files }, message_format),
                            ),
                        }
                    }
                    Err(diagnostic) => report_as(&Failure { diagnostic, files }, message_format),
                };
            }
            let bar = progress_bar(&mut opts);
            // The HTML page also shows each row's warp, lane by lane, from the same lowering.
            let result = if matches!(format, Format::Html) && !emit_sass {
                sector_analyzer::html::analyze_with_lanes(Input::File(&src.file), &opts, &DiskLoader)
            } else {
                sector_analyzer::analyze(Input::File(&src.file), &opts, &DiskLoader).map(|a| (a, Vec::new()))
            };
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            match result {
                Ok((mut a, lanes)) => {
                    if !a.warnings.is_empty() {
                        let _ = std::io::stderr().write_all(messages(&a.files, &a.warnings, message_format).as_bytes());
                    }
                    if let Some(said) = site_line {
                        // Where each value of the launch came from: the call or the command line.
                        a.sheet.assumptions.insert(0, said);
                    }
                    if emit_sass {
                        return out(a.sheet.listing.as_deref().unwrap_or(""));
                    }
                    out(&match format {
                        Format::Text if verbose => sector_analyzer::sheet::text::render_verbose(&a.sheet),
                        Format::Text => sector_analyzer::sheet::text::render(&a.sheet),
                        Format::Markdown => sector_analyzer::sheet::markdown::render(&a.sheet),
                        Format::Json => sector_analyzer::sheet::json::render(&a.sheet),
                        Format::Html => sector_analyzer::html::render(
                            &a.sheet,
                            a.files.files.first().map_or("", |f| f.text.as_str()),
                            &lanes,
                        ),
                    })
                }
                Err(f) => report_as(&f, message_format),
            }
        }
    }
}

/// On a terminal, a progress bar that appears once an analysis has run for a second: the work
/// done against `--max-work`, so a long run says so and shows how far it is from its limit.
fn progress_bar(opts: &mut AnalyzeOptions) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(Some(opts.max_work), indicatif::ProgressDrawTarget::hidden());
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} warp-level steps of work (--max-work) {elapsed}")
    {
        bar.set_style(style);
    }
    let start = std::time::Instant::now();
    let shown = std::sync::atomic::AtomicBool::new(false);
    let b = bar.clone();
    opts.progress = Some(sector_analyzer::launch::Progress(std::sync::Arc::new(move |done, max| {
        if start.elapsed() < std::time::Duration::from_secs(1) {
            return;
        }
        if !shown.swap(true, std::sync::atomic::Ordering::Relaxed) {
            b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        b.set_length(max);
        b.set_position(done.min(max));
    })));
    Some(bar)
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

/// `kernels`: every kernel in source order, with its parameters; kernels that cannot be
/// analysed are listed too, with why.
fn kernel_list(m: &sector_analyzer::ir::Module, format: ListFormat) -> String {
    struct Entry {
        name: String,
        line: u32,
        column: u32,
        params: Vec<(String, String)>,
        /// What `--kernel` takes to pick this one among overloads: `scale(double*, int)`.
        signature: String,
        error: Option<String>,
        /// What to do about the error, when there is something to do (a template kernel's
        /// arguments to pass).
        note: Option<String>,
    }
    let mut all: Vec<Entry> = m
        .kernels
        .iter()
        .map(|k| Entry {
            name: k.name.clone(),
            line: k.span.line,
            column: k.span.column,
            params: k.params.iter().map(|p| (p.name.clone(), p.ty.display())).collect(),
            signature: sector_analyzer::analyze::kernel_selector(m, k),
            error: None,
            note: None,
        })
        .collect();
    all.extend(m.failed.iter().map(|(n, d)| Entry {
        name: n.clone(),
        line: d.span.map_or(0, |s| s.line),
        column: d.span.map_or(0, |s| s.column),
        params: Vec::new(),
        signature: n.clone(),
        error: Some(d.message.clone()),
        note: (d.kind == ErrorKind::MissingArgument).then(|| d.notes.first().cloned()).flatten(),
    }));
    all.sort_by_key(|e| (e.line, e.column));
    let overloaded = |n: &str| all.iter().filter(|e| e.name == n).count() > 1;
    match format {
        ListFormat::Text => all
            .iter()
            .map(|e| match &e.error {
                None => format!(
                    "{}({})  line {}{}\n",
                    e.name,
                    e.params.iter().map(|(n, t)| format!("{t} {n}")).collect::<Vec<_>>().join(", "),
                    e.line,
                    if overloaded(&e.name) {
                        format!("  (overloaded: --kernel '{}')", e.signature)
                    } else {
                        String::new()
                    }
                ),
                Some(err) => match &e.note {
                    Some(note) => format!("{}  line {}: cannot be analysed: {err}: {note}\n", e.name, e.line),
                    None => format!("{}  line {}: cannot be analysed: {err}\n", e.name, e.line),
                },
            })
            .collect(),
        ListFormat::Json => {
            let v: Vec<serde_json::Value> = all
                .iter()
                .map(|e| {
                    serde_json::json!({
                        "name": e.name,
                        "signature": e.signature,
                        "line": e.line,
                        "column": e.column,
                        "parameters": e.params.iter().map(|(n, t)| serde_json::json!({"name": n, "type": t})).collect::<Vec<_>>(),
                        "error": e.error,
                        "note": e.note,
                    })
                })
                .collect();
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }
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
            finding::sarif(&placed(), &rules, None)
        }
    }
}
