//! The pipeline: source -> IR -> engine -> sheet. One entry point for the CLI, the attribute,
//! the validator and the tests.

use crate::cache::CacheModel;
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::fill::Fill;
use crate::sheet::Sheet;
use crate::source::{FileLoader, SourceFiles};
use std::path::{Path, PathBuf};

/// Default work budget: warp-level evaluation steps of the reference engine before the analysis
/// gives up, shared by every engine that runs (a symbolic step counts as
/// [`crate::launch::SYMBOLIC_STEP_COST`]).
pub const DEFAULT_MAX_WORK: u64 = 400_000_000;

/// The command line's default wall-clock limit per analysis, in seconds: nothing runs past
/// it without saying so (and a terminal shows progress after the first second). The library's
/// default is no limit, so that results never depend on the machine's speed.
pub const DEFAULT_TIME_LIMIT_S: u64 = 10;

/// The command line's default wall-clock limit of the boundary estimate (the cache model), in
/// seconds, apart from [`DEFAULT_TIME_LIMIT_S`]: where it ends, the sheet still comes, its
/// boundaries given as bounds. The library's default is no limit.
pub const DEFAULT_ESTIMATE_TIME_LIMIT_S: f64 = 1.0;

/// Launches the symbolic engine summarises are also run through the reference engine, for the
/// sector stream the cache model needs: whole when they take at most this many warp-level
/// steps, else a sample of units ([`crate::cache::sample`]).
pub const STREAM_WORK: u64 = crate::cache::sample::SAMPLE_WORK;

mod sass;
pub use sass::{arch_of, is_binary_input, toolkit_found};

/// What is counted: the source as written, or the SASS the toolkit's compiler makes of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Via {
    /// The source, read by this tool's own front ends (no toolkit needed).
    #[default]
    Source,
    /// The machine code: the file compiled by `nvcc` (or a cubin, fatbin or executable as
    /// given) and disassembled by `nvdisasm`.
    Sass,
    /// SASS where a CUDA toolkit is found, else the source.
    Auto,
    /// The source; where its front end or engine refuses a construct (what the compiler makes
    /// of `wmma` fragments, cuRAND's state, a virtual call), the SASS when a CUDA toolkit is
    /// found. The sheet says which was counted and what the source path refused.
    Fallback,
}

/// Which engine counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum EngineKind {
    /// Whole boxes of warps at once, in closed form; enumerates only what it cannot summarise.
    #[default]
    Symbolic,
    /// Every lane of every warp: the reference.
    Enumerate,
}

#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Kernel name; may be left out when the file has exactly one kernel.
    pub kernel: Option<String>,
    /// `--grid` as written: one to three comma-separated integer expressions over the args.
    pub grid: String,
    pub block: String,
    /// `--arg NAME=VALUE`, as written.
    pub args: Vec<(String, String)>,
    /// `-D NAME[=VALUE]` as (name, value).
    pub defines: Vec<(String, String)>,
    pub include_dirs: Vec<PathBuf>,
    /// Known contents of pointer parameters (index arrays).
    pub fills: Vec<(String, Fill)>,
    /// Byte offset of a pointer parameter past a 256-byte boundary (default 0).
    pub offsets: Vec<(String, i64)>,
    pub gpu: String,
    pub max_work: u64,
    pub engine: EngineKind,
    /// Dynamic shared memory per block (`extern __shared__` arrays), as the launch passes it.
    pub shared_bytes: u64,
    /// Wall-clock limit: the analysis is refused once it has run this long (checked as often as
    /// the work budget). `None`: only `max_work` bounds it.
    pub time_limit: Option<std::time::Duration>,
    /// Told the effort so far now and then while an engine runs (for a progress bar).
    pub progress: Option<crate::launch::Progress>,
    /// Count the source or the SASS ([`Via`]); a compiled input is always counted as SASS.
    pub via: Via,
    /// The architecture SASS is compiled for (`sm_90`); `None`: the GPU profile's.
    pub arch: Option<String>,
    /// The boundary estimate's own budget (the cache model): the counts never wait on it.
    pub estimate: crate::cache::sample::EstimateBudget,
    /// From `--launch-site`: why a kernel argument the launch passes has no value (`n` is `q`,
    /// passed by reference on line 9), by parameter; added to the analysis's request for it.
    pub launch_unknowns: Vec<(String, String)>,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            kernel: None,
            grid: "1".into(),
            block: "32".into(),
            args: Vec::new(),
            defines: Vec::new(),
            include_dirs: Vec::new(),
            fills: Vec::new(),
            offsets: Vec::new(),
            gpu: "h200".into(),
            max_work: DEFAULT_MAX_WORK,
            engine: EngineKind::default(),
            shared_bytes: 0,
            time_limit: None,
            progress: None,
            via: Via::Source,
            arch: None,
            estimate: Default::default(),
            launch_unknowns: Vec::new(),
        }
    }
}

impl AnalyzeOptions {
    /// The launch's part of the options.
    pub fn launch(&self) -> crate::launch::LaunchSpec {
        crate::launch::LaunchSpec {
            grid: self.grid.clone(),
            block: self.block.clone(),
            args: self.args.clone(),
            fills: self.fills.clone(),
            offsets: self.offsets.clone(),
            gpu: self.gpu.clone(),
            max_work: self.max_work,
            shared_bytes: self.shared_bytes,
            time_limit: self.time_limit,
            progress: self.progress.clone(),
        }
    }

    /// The CUDA front end's part of the options.
    pub fn cuda(&self) -> crate::front::cuda::CudaOptions<'_> {
        crate::front::cuda::CudaOptions { defines: &self.defines, include_dirs: &self.include_dirs, args: &self.args }
    }
}

/// Where the source comes from.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    File(&'a Path),
    /// In-memory source; `name` is used in messages and decides the language (`.rs` or CUDA).
    Source {
        name: &'a str,
        text: &'a str,
    },
}

impl Input<'_> {
    /// Whether the input is Rust source (by its extension or name), which only the source path
    /// reads.
    pub fn is_rust(&self) -> bool {
        match self {
            Input::File(p) => p.extension().is_some_and(|e| e == "rs"),
            Input::Source { name, .. } => name.ends_with(".rs"),
        }
    }
}

/// A finished analysis, with the files read (for rendering snippets).
pub struct Analysis {
    pub sheet: Sheet,
    /// What the user should see beside the sheet (`#warning`): severity warning or note.
    pub warnings: Vec<Diagnostic>,
    pub files: SourceFiles,
}

/// A failed analysis: the diagnostic and the files it may point into.
pub struct Failure {
    pub diagnostic: Diagnostic,
    pub files: SourceFiles,
}

impl std::fmt::Debug for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.diagnostic.span {
            Some(s) => write!(f, "{}: {}", self.files.describe(s), self.diagnostic.message),
            None => write!(f, "{}", self.diagnostic.message),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self:?}")
    }
}

impl std::error::Error for Failure {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.diagnostic)
    }
}

impl Failure {
    /// `file:line:column: message`, the one-line form.
    pub fn one_line(&self) -> String {
        format!("{self:?}")
    }
}

fn read_input(input: &Input, files: &mut SourceFiles) -> Result<crate::source::FileId> {
    match input {
        Input::File(path) => {
            let text = crate::source::read_source(path).map_err(|why| Diagnostic::new(ErrorKind::Usage, why))?;
            Ok(files.add(*path, text))
        }
        Input::Source { name, text } => Ok(files.add(*name, crate::source::lone_cr_to_lf(text.to_string()))),
    }
}

fn is_rust(files: &SourceFiles, id: crate::source::FileId) -> bool {
    files.path(id).extension().is_some_and(|e| e == "rs")
}

/// Lowers every kernel of the input.
pub fn lower(
    input: &Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
    files: &mut SourceFiles,
) -> Result<crate::ir::Module> {
    let root = read_input(input, files)?;
    let mut module = if is_rust(files, root) {
        crate::front::rust::lower_file(files, root)?
    } else {
        crate::front::cuda::lower_file(files, root, &opts.cuda(), loader)?
    };
    // What the compiler removes before any memory instruction is issued.
    for k in &mut module.kernels {
        crate::ir::branch_merge::merge_branch_accesses(k);
        crate::ir::vector_loads::merge_vector_member_loads(k);
        crate::ir::sink::sink_loads(k);
        crate::ir::dce::remove_dead_loads(k);
        crate::ir::dead_stores::remove_dead_stores(k);
    }
    Ok(module)
}

/// Takes the launch of `opts.kernel` (or of the file's only launched kernel) from the file's own
/// `kernel<...><<<grid, block, smem>>>(args)` call: the one on `line`, or the first. Values
/// already in `opts` (given on the command line) win. Returns the options and the call's line.
pub fn apply_launch_site(
    input: Input,
    opts: &AnalyzeOptions,
    line: Option<u32>,
    loader: &dyn FileLoader,
) -> std::result::Result<(AnalyzeOptions, u32), Failure> {
    apply_launch_site_described(input, opts, line, loader).map(|(o, l, _)| (o, l))
}

/// [`apply_launch_site`], also returning the sheet's assumption saying where each value of the
/// launch came from (the call or the command line). When values are missing, one error lists
/// all of them, with the launch's own expressions and a command line to fill.
pub fn apply_launch_site_described(
    input: Input,
    opts: &AnalyzeOptions,
    line: Option<u32>,
    loader: &dyn FileLoader,
) -> std::result::Result<(AnalyzeOptions, u32, String), Failure> {
    use crate::front::cuda::launch_site::Piece;
    let mut files = SourceFiles::default();
    let r = (|| -> Result<(AnalyzeOptions, u32, String)> {
        let root = read_input(&input, &mut files)?;
        let sites = crate::front::cuda::launch_sites_of_file(&mut files, root, &opts.cuda(), loader)?;
        let site = sites
            .iter()
            .find(|s| {
                opts.kernel.as_deref().is_none_or(|k| s.kernel == kernel_name_of(k)) && line.is_none_or(|l| s.line == l)
            })
            .ok_or_else(|| {
                let what = match (&opts.kernel, line) {
                    (Some(k), Some(l)) => format!("no launch of `{k}` on line {l}"),
                    (Some(k), None) => format!("no `{k}<<<...>>>(...)` launch in this file"),
                    (None, Some(l)) => format!("no `<<<...>>>` launch on line {l}"),
                    (None, None) => "no `<<<...>>>` launch in this file".to_string(),
                };
                Diagnostic::new(ErrorKind::Usage, format!("--launch-site: {what}"))
            })?;
        let given = |p: &Piece| match p {
            Piece::Grid => !opts.grid.is_empty(),
            Piece::Block => !opts.block.is_empty(),
            Piece::SharedBytes => opts.shared_bytes > 0,
            Piece::Template(n) | Piece::Arg(n) => opts.args.iter().any(|(k, _)| k == n),
        };
        let missing: Vec<_> = site.missing.iter().filter(|m| !given(&m.piece)).collect();
        let launch_unknowns: Vec<(String, String)> = missing
            .iter()
            .filter_map(|m| match &m.piece {
                Piece::Arg(name) => {
                    let whys: Vec<&str> = m.unknowns.iter().map(|(_, w)| w.as_str()).collect();
                    Some((
                        name.clone(),
                        format!("the launch on line {} passes `{}`: {}", site.line, m.expr, whys.join("; ")),
                    ))
                }
                _ => None,
            })
            .collect();
        // Scalar arguments alone do not stop the launch: the analysis asks for those it reads.
        if missing.iter().any(|m| !matches!(m.piece, Piece::Arg(_))) {
            return Err(missing_values(&input, opts, site, &missing));
        }
        let mut o = opts.clone();
        o.launch_unknowns = launch_unknowns;
        // A kernel given by its signature (`scale(double*, int)`) stays so: it names the overload.
        if o.kernel.is_none() {
            o.kernel = Some(site.kernel.clone());
        }
        let mut parts = Vec::new();
        let mut from =
            |what: String, flag: bool| parts.push(if flag { format!("{what} from the command line") } else { what });
        if o.grid.is_empty() {
            o.grid = site.grid.clone().unwrap_or_default();
            from(format!("grid ({})", o.grid), false);
        } else {
            from(format!("grid ({})", o.grid), true);
        }
        if o.block.is_empty() {
            o.block = site.block.clone().unwrap_or_default();
            from(format!("block ({})", o.block), false);
        } else {
            from(format!("block ({})", o.block), true);
        }
        if o.shared_bytes == 0 {
            o.shared_bytes = site.shared_bytes.unwrap_or(0);
            if o.shared_bytes > 0 {
                from(format!("{} bytes of dynamic shared memory", o.shared_bytes), false);
            }
        } else {
            from(format!("{} bytes of dynamic shared memory", o.shared_bytes), true);
        }
        let mut from_file = Vec::new();
        for (k, v) in site.template_args.iter().chain(&site.args) {
            if !o.args.iter().any(|(n, _)| n == k) {
                o.args.push((k.clone(), v.clone()));
                from_file.push(format!("{k}={v}"));
            }
        }
        // Values given for host variables only (`--arg nx=1024` for `dim3 grid(nx / 32)`) were
        // used above; the kernel has no parameter of that name.
        let kernel_names: Vec<&String> = site.params.iter().chain(&site.template_params).collect();
        let host_only: Vec<String> = opts
            .args
            .iter()
            .filter(|(k, _)| {
                !kernel_names.contains(&k) && !o.grid.contains(k.as_str()) && !o.block.contains(k.as_str())
            })
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        o.args
            .retain(|(k, _)| kernel_names.contains(&k) || o.grid.contains(k.as_str()) || o.block.contains(k.as_str()));
        let from_flags: Vec<String> = opts
            .args
            .iter()
            .filter(|(k, _)| o.args.iter().any(|(n, _)| n == k))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let all_file =
            parts.iter().all(|p| !p.ends_with("command line")) && from_flags.is_empty() && host_only.is_empty();
        let mut text = if all_file {
            format!("launch from the file's own call on line {}: {}", site.line, parts.join(", "))
        } else {
            format!("launch of the call on line {}: {}", site.line, parts.join(", "))
        };
        if !from_file.is_empty() {
            text.push_str(&format!(", {}", from_file.join(" ")));
            if !all_file {
                text.push_str(" from the call");
            }
        }
        if !from_flags.is_empty() {
            text.push_str(&format!(", {} from the command line", from_flags.join(" ")));
        }
        if !host_only.is_empty() {
            text.push_str(&format!(", host variables {} from the command line", host_only.join(" ")));
        }
        Ok((o, site.line, text))
    })();
    r.map_err(|diagnostic| Failure { diagnostic, files })
}

/// What the file's own launches say when no launch was given on the command line.
pub enum DefaultLaunch {
    /// The kernel's only launch, applied: the options, its line and the sheet's first
    /// assumption (which says the launch was taken because no flag gave one).
    Taken(Box<AnalyzeOptions>, u32),
    /// The kernel has no launch in the file, or the kernel is not known (several kernels and no
    /// `--kernel`), or the input is not CUDA source.
    None,
    /// The kernel is launched on several lines (given): `--launch-site LINE` picks one.
    Several(String, Vec<u32>),
}

/// `--launch-site` as the default of a command given no `--grid`, `--block` or `--arg`: taken
/// when the file launches the kernel (`opts.kernel`, or the file's only kernel) exactly once.
/// `Err` when that launch lacks values (one message lists them all) or the file cannot be read.
pub fn default_launch_site(
    input: Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> std::result::Result<(DefaultLaunch, Option<String>), Failure> {
    if is_binary_input(&input) {
        return Ok((DefaultLaunch::None, None));
    }
    if input.is_rust() {
        return Ok((DefaultLaunch::None, None));
    }
    let kernel = match &opts.kernel {
        Some(k) => split_signature(k).0.to_string(),
        None => {
            let names = list_kernels(input, opts, loader)?;
            let mut distinct = names.clone();
            distinct.dedup();
            match distinct.as_slice() {
                [one] => one.clone(),
                _ => return Ok((DefaultLaunch::None, None)),
            }
        }
    };
    let mut files = SourceFiles::default();
    let sites = (|| -> Result<Vec<crate::front::cuda::launch_site::LaunchSite>> {
        let root = read_input(&input, &mut files)?;
        crate::front::cuda::launch_sites_of_file(&mut files, root, &opts.cuda(), loader)
    })()
    .map_err(|diagnostic| Failure { diagnostic, files })?;
    let lines: Vec<u32> = sites.iter().filter(|s| s.kernel == kernel).map(|s| s.line).collect();
    match lines.as_slice() {
        [] => Ok((DefaultLaunch::None, None)),
        [line] => {
            let (o, line, said) = apply_launch_site_described(input, opts, Some(*line), loader)?;
            // Say why the file's launch was read: nothing on the command line gave one.
            let said = match said.split_once(": ") {
                Some((head, rest)) => format!(
                    "{head} (the kernel's only launch in the file, read because no --grid, --block or --arg was given): {rest}"
                ),
                None => said,
            };
            Ok((DefaultLaunch::Taken(Box::new(o), line), Some(said)))
        }
        several => Ok((DefaultLaunch::Several(kernel, several.to_vec()), None)),
    }
}

/// One error for every value the launch on `site` lacks: each piece with the launch's own
/// expression, where its variables are defined and why a name has no value, and a command line
/// that fills them all.
fn missing_values(
    input: &Input,
    opts: &AnalyzeOptions,
    site: &crate::front::cuda::launch_site::LaunchSite,
    missing: &[&crate::front::cuda::launch_site::Missing],
) -> Diagnostic {
    use crate::front::cuda::launch_site::Piece;
    let n = missing.len();
    let mut d = Diagnostic::new(
        ErrorKind::MissingArgument,
        format!(
            "--launch-site: the launch of `{}` on line {} needs {} the file does not fix",
            site.kernel,
            site.line,
            if n == 1 { "a value".to_string() } else { format!("{n} values") }
        ),
    );
    let mut fill: Vec<String> = Vec::new();
    for m in missing {
        let expr = m.expr.split_whitespace().collect::<Vec<_>>().join(" ");
        let named = matches!(&m.piece, Piece::Arg(a) | Piece::Template(a) if *a == expr);
        let mut s = if named { m.piece.describe() } else { format!("{} `{expr}`", m.piece.describe()) };
        if !m.defined.is_empty() {
            s.push_str(&format!(", from {}", m.defined.join(", ")));
        }
        let why: Vec<&str> = m.unknowns.iter().map(|(_, w)| w.as_str()).collect();
        if !why.is_empty() {
            s.push_str(&format!(": {}", why.join("; ")));
        }
        d = d.note(s);
        let flags: Vec<String> = if m.fillable {
            m.unknowns.iter().map(|(name, _)| format!("--arg {name}=VALUE")).collect()
        } else {
            vec![m.piece.flag()]
        };
        for f in flags {
            if !fill.contains(&f) {
                fill.push(f);
            }
        }
    }
    let file = match input {
        Input::File(p) => p.display().to_string(),
        Input::Source { name, .. } => name.to_string(),
    };
    let quote = |s: &str| {
        if s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=,:+".contains(&b)) {
            s.to_string()
        } else {
            format!("'{}'", s.replace('\'', "'\\''"))
        }
    };
    let mut cmd = vec!["sector-estimate".to_string(), "analyze".into(), quote(&file), "--kernel".into()];
    // A kernel given by its signature stays so (it names one of overloaded kernels).
    cmd.push(quote(opts.kernel.as_deref().unwrap_or(&site.kernel)));
    cmd.push("--launch-site".into());
    cmd.push(site.line.to_string());
    for (k, v) in &opts.defines {
        cmd.push(format!("-D {}", quote(&format!("{k}={v}"))));
    }
    for i in &opts.include_dirs {
        cmd.push(format!("-I {}", quote(&i.display().to_string())));
    }
    for (k, v) in &opts.args {
        cmd.push(format!("--arg {}", quote(&format!("{k}={v}"))));
    }
    if !opts.grid.is_empty() {
        cmd.push(format!("--grid {}", quote(&opts.grid)));
    }
    if !opts.block.is_empty() {
        cmd.push(format!("--block {}", quote(&opts.block)));
    }
    if opts.shared_bytes > 0 {
        cmd.push(format!("--shared-bytes {}", opts.shared_bytes));
    }
    cmd.extend(fill);
    d.note(format!("give them and run again: {}", cmd.join(" ")))
}

/// Every kernel of the input with its parameters, for `kernels`: lowered from source, or
/// lifted from a compiled input's SASS (which needs the toolkit's `nvdisasm`).
pub fn list_module(
    input: &Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
    files: &mut SourceFiles,
) -> Result<crate::ir::Module> {
    if sass::is_binary_input(input) {
        sass::lower_binary(input, opts, files)
    } else {
        lower(input, opts, loader, files)
    }
}

/// Names of the kernels in a file, in source order.
pub fn list_kernels(
    input: Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> std::result::Result<Vec<String>, Failure> {
    let mut files = SourceFiles::default();
    match lower(&input, opts, loader, &mut files) {
        Ok(m) => Ok(m.kernels.iter().map(|k| k.name.clone()).chain(m.failed.iter().map(|(n, _)| n.clone())).collect()),
        Err(diagnostic) => Err(Failure { diagnostic, files }),
    }
}

/// Analyses one kernel of the input under one launch.
pub fn analyze(input: Input, opts: &AnalyzeOptions, loader: &dyn FileLoader) -> std::result::Result<Analysis, Failure> {
    let mut files = SourceFiles::default();
    match analyze_inner(&input, opts, loader, &mut files) {
        Ok((sheet, warnings)) => Ok(Analysis { sheet, warnings, files }),
        Err(mut diagnostic) => {
            // A value the analysis asks for that the file's launch could not give: say why.
            if diagnostic.kind == ErrorKind::MissingArgument {
                for (name, why) in &opts.launch_unknowns {
                    if diagnostic.message.contains(&format!("parameter `{name}`")) {
                        diagnostic = diagnostic.note(why.clone());
                    }
                }
            }
            Err(Failure { diagnostic, files })
        }
    }
}

/// The lowered kernel and its launch, for benchmarks and tools that drive an engine directly.
pub fn prepare(
    input: Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> std::result::Result<(crate::ir::Kernel, crate::launch::Setup), Failure> {
    fn inner(
        input: &Input,
        opts: &AnalyzeOptions,
        loader: &dyn FileLoader,
        files: &mut SourceFiles,
    ) -> Result<(crate::ir::Kernel, crate::launch::Setup)> {
        let module = lower(input, opts, loader, files)?;
        let kernel = pick_kernel(&module, opts.kernel.as_deref(), files)?.clone();
        let setup = crate::launch::Setup::new(&kernel, &opts.launch())?;
        Ok((kernel, setup))
    }
    let mut files = SourceFiles::default();
    inner(&input, opts, loader, &mut files).map_err(|diagnostic| Failure { diagnostic, files })
}

/// Convenience for tests and the attribute: CUDA (or Rust, by `name`'s extension) from memory,
/// includes not allowed.
pub fn analyze_source(name: &str, text: &str, opts: &AnalyzeOptions) -> std::result::Result<Analysis, Failure> {
    analyze(Input::Source { name, text }, opts, &crate::source::NoFiles)
}

/// Whether this analysis counts SASS: a compiled input always; source when asked (`auto`: when
/// a toolkit is found and the input is CUDA).
pub fn counts_sass(input: &Input, opts: &AnalyzeOptions) -> bool {
    is_binary_input(input)
        || match opts.via {
            Via::Source | Via::Fallback => false,
            Via::Sass => true,
            Via::Auto => !input.is_rust() && toolkit_found(),
        }
}

fn analyze_inner(
    input: &Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
    files: &mut SourceFiles,
) -> Result<(Sheet, Vec<Diagnostic>)> {
    if counts_sass(input, opts) {
        return sass::analyze(input, opts, files);
    }
    let from_source = |files: &mut SourceFiles| -> Result<(Sheet, Vec<Diagnostic>)> {
        let module = lower(input, opts, loader, files)?;
        let kernel = pick_kernel(&module, opts.kernel.as_deref(), files)?;
        let sheet = sheet_of(kernel, opts, files)?;
        Ok((sheet, module.warnings.clone()))
    };
    match from_source(files) {
        Err(refused) if falls_back(input, opts, &refused) => {
            let mut sass_files = SourceFiles::default();
            match sass::analyze(input, opts, &mut sass_files) {
                Ok((mut sheet, warnings)) => {
                    let at = refused.span.map(|s| format!(" at {}", files.describe(s))).unwrap_or_default();
                    sheet.assumptions.insert(
                        0,
                        format!(
                            "counted from the SASS because the source path refuses{at}: {} (--via source shows the refusal)",
                            refused.message
                        ),
                    );
                    *files = sass_files;
                    Ok((sheet, warnings))
                }
                // A value the SASS needs is the user's to give: ask for it, saying why.
                Err(also) if matches!(also.kind, ErrorKind::MissingArgument) => {
                    *files = sass_files;
                    Err(also.note(format!("counting the SASS because the source path refuses: {}", refused.message)))
                }
                Err(also) => {
                    // nvcc's first error line says why (a header not installed, a library).
                    let why = also
                        .notes
                        .iter()
                        .flat_map(|n| n.lines())
                        .find(|l| l.contains("error"))
                        .map(|l| format!(" ({})", l.trim()));
                    Err(refused.note(format!(
                        "the SASS could not be counted either: {}{}",
                        also.message,
                        why.unwrap_or_default()
                    )))
                }
            }
        }
        r => r,
    }
}

/// Whether a refusal of the source path is retried on the SASS ([`Via::Fallback`]): a construct
/// the front end or an engine does not model (or source it cannot read or preprocess), in CUDA
/// source, with a toolkit to compile it.
/// Missing values (a loop bounded by data included), bad launches and limits are the user's to
/// fix and are never retried.
fn falls_back(input: &Input, opts: &AnalyzeOptions, refused: &Diagnostic) -> bool {
    opts.via == Via::Fallback
        && !input.is_rust()
        && matches!(refused.kind, ErrorKind::Unsupported | ErrorKind::Syntax | ErrorKind::Preprocess)
        // The SASS path would take such a loop's branch one way and say so; the source path
        // asks for the data instead, and so does the fallback.
        && !refused.message.starts_with(crate::engine::LOOP_ON_UNKNOWN_DATA)
        && toolkit_found()
}

/// The sheet of a kernel lowered from source (`files` holds its source files): its rows'
/// `op_id`s index this kernel's memory operations, so a driver that lowered the kernel itself
/// (`explain`) finds each operation's row by id.
pub fn sheet_of(kernel: &crate::ir::Kernel, opts: &AnalyzeOptions, files: &SourceFiles) -> Result<Sheet> {
    let setup = crate::launch::Setup::new(kernel, &opts.launch())?;
    let (trace, cache, engine, notes) = count(kernel, &setup, opts.engine, opts.estimate)?;
    check_totals(kernel, &trace)?;
    let mut sheet = crate::sheet::build::build(kernel, &setup, trace, cache, files);
    sheet.engine = engine;
    sheet.assumptions.extend(notes);
    sheet.launch.template_args = template_args(kernel, &opts.args);
    Ok(sheet)
}

/// The values `args` gives the kernel's template parameters.
pub(crate) fn template_args(
    kernel: &crate::ir::Kernel,
    args: &[(String, String)],
) -> std::collections::BTreeMap<String, String> {
    args.iter().filter(|(n, _)| kernel.template_params.contains(n)).cloned().collect()
}

/// Every count the sheet prints, and the byte totals made from them, must fit in 64 bits:
/// a launch whose totals do not is refused rather than shown wrapped.
fn check_totals(kernel: &crate::ir::Kernel, trace: &crate::engine::Trace) -> Result<()> {
    let mut sums = [0u128; 4];
    for (op, st) in kernel.mem_ops.iter().zip(&trace.ops) {
        let logical = st.lanes as u128 * op.width as u128;
        let sector_bytes = st.sectors as u128 * 32;
        for (sum, v) in sums.iter_mut().zip([logical, sector_bytes, st.executions as u128, st.sectors as u128]) {
            *sum += v;
        }
    }
    if sums.iter().any(|&s| s > u64::MAX as u128) {
        return Err(Diagnostic::new(
            ErrorKind::Limit,
            format!(
                "kernel `{}`: the launch moves {} logical bytes in {} sector bytes, more than a 64-bit count holds",
                kernel.name, sums[0], sums[1]
            ),
        )
        .note("analyse a smaller launch; the sheet never shows a wrapped total"));
    }
    Ok(())
}

/// Runs the chosen engine: the trace, the cache model fed with its sector stream, the engine's
/// name for the sheet, and what the sheet must say about how it was counted.
fn count(
    kernel: &crate::ir::Kernel,
    setup: &crate::launch::Setup,
    engine: EngineKind,
    estimate: crate::cache::sample::EstimateBudget,
) -> Result<(crate::engine::Trace, CacheModel, &'static str, Vec<String>)> {
    // The estimate runs within its own budget, after the counts are complete.
    let stream = |trace: &crate::engine::Trace| {
        let budget = crate::cache::sample::SAMPLE_WORK.min(setup.max_work);
        crate::cache::sample::stream_within(kernel, setup, trace, budget, estimate)
    };
    use crate::engine::symbolic::{self, Fallback};
    // The cache model is fed the same way whichever engine counted (its in-step window comes
    // from the launch's counts), so both engines give the same boundaries.
    let reference = || -> Result<(crate::engine::Trace, CacheModel)> {
        let trace = crate::engine::run(kernel, setup)?;
        let cache = stream(&trace)?;
        Ok((trace, cache))
    };
    if engine == EngineKind::Enumerate {
        let (trace, cache) = reference()?;
        return Ok((trace, cache, "enumerate", Vec::new()));
    }
    match symbolic::run(kernel, setup) {
        Ok((trace, stats)) => {
            let notes = vec![format!(
                "symbolic engine: {} warp-level steps counted in {} abstract steps: the launch in {} piece(s) ({} of them a single warp, enumerated); {} loop iteration(s) run one at a time, {} covered by {} summaries",
                trace.work, stats.steps, stats.pieces, stats.single_warps, stats.single_iterations, stats.summarised_iterations, stats.summaries
            )];
            // The cache model needs sectors in execution order: the reference engine gives
            // them for all units of the launch, or for a sample of them (its counts equal the
            // summary's).
            let cache = stream(&trace)?;
            Ok((trace, cache, "symbolic", notes))
        }
        // The reference engine words every error.
        Err(Fallback::Refused(d)) => Err(d),
        Err(Fallback::Error) => {
            let (trace, cache) = reference()?;
            Ok((trace, cache, "enumerate", Vec::new()))
        }
        Err(Fallback::GiveUp(why)) => {
            let (trace, cache) = reference()?;
            Ok((
                trace,
                cache,
                "enumerate",
                vec![format!("symbolic engine could not summarise this launch ({why}): every warp was enumerated")],
            ))
        }
    }
}

pub(crate) fn pick_kernel<'m>(
    module: &'m crate::ir::Module,
    name: Option<&str>,
    files: &SourceFiles,
) -> Result<&'m crate::ir::Kernel> {
    let file = files.files.first().map(|f| f.path.display().to_string()).unwrap_or_default();
    let names = || {
        module
            .kernels
            .iter()
            .map(|k| k.name.as_str())
            .chain(module.failed.iter().map(|(n, _)| n.as_str()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    // `--kernel name@LINE`: the kernel defined on that line (overloads whose parameter types the
    // analysis reads alike, `__half *` and `__nv_bfloat16 *`).
    if let Some((n, line)) =
        name.and_then(|n| n.rsplit_once('@')).and_then(|(n, l)| Some((n.trim(), l.trim().parse::<u32>().ok()?)))
    {
        return module.kernels.iter().find(|k| k.name == n && k.span.line == line).ok_or_else(|| {
            let at: Vec<String> =
                module.kernels.iter().filter(|k| k.name == n).map(|k| k.span.line.to_string()).collect();
            Diagnostic::new(ErrorKind::Usage, format!("{file}: no kernel `{n}` defined on line {line}")).note(
                if at.is_empty() {
                    format!("kernels in this file: {}", names())
                } else {
                    format!("`{n}` is defined on line {}", at.join(", "))
                },
            )
        });
    }
    // `--kernel 'scale(double*, int)'` picks one of overloaded kernels by its parameter types.
    let (name, wanted) = match name.map(split_signature) {
        Some((n, sig)) => (Some(unqualified_match(module, n)), sig),
        None => (None, None),
    };
    if let Some(n) = name {
        let same: Vec<&crate::ir::Kernel> = module.kernels.iter().filter(|k| k.name == n).collect();
        let listed = || same.iter().map(|k| kernel_selector(module, k)).collect::<Vec<_>>().join(", ");
        match wanted {
            Some(sig) => {
                return same
                    .iter()
                    .find(|k| signature_key(&kernel_signature(k)) == signature_key(&format!("{n}({sig})")))
                    .copied()
                    .ok_or_else(|| {
                        Diagnostic::new(ErrorKind::Usage, format!("{file}: no kernel `{n}({sig})`")).note(
                            if same.is_empty() {
                                format!("kernels in this file: {}", names())
                            } else {
                                format!("kernels named `{n}`: {}", listed())
                            },
                        )
                    });
            }
            None if same.len() > 1 => {
                return Err(Diagnostic::new(
                    ErrorKind::Usage,
                    format!("{file}: `{n}` names {} overloaded kernels: {}", same.len(), listed()),
                )
                .note(format!("pick one: --kernel '{}'", kernel_selector(module, same[0]))));
            }
            None => {}
        }
    }
    // A kernel that failed to lower is an error only when it is the one asked for.
    let failed = |n: &str| module.failed.iter().find(|(f, _)| f == n).map(|(_, d)| d.clone());
    if let Some(n) = name {
        if let Some(d) = failed(n) {
            return Err(d);
        }
    } else if module.kernels.is_empty() && module.failed.len() == 1 {
        return Err(module.failed[0].1.clone());
    }
    let total = module.kernels.len() + module.failed.len();
    match name {
        Some(n) => module.kernels.iter().find(|k| k.name == n).ok_or_else(|| {
            let d = Diagnostic::new(ErrorKind::Usage, format!("{file}: no kernel named `{n}`"));
            if total == 0 {
                d.note("the file has no kernels (`__global__` functions)")
            } else {
                d.note(format!("kernels in this file: {}", names()))
            }
        }),
        None => match module.kernels.as_slice() {
            [k] if total == 1 => Ok(k),
            [] if total == 0 => Err(Diagnostic::new(
                ErrorKind::Unsupported,
                format!("{file}: the file has no kernels (`__global__` functions)"),
            )),
            _ => Err(Diagnostic::new(
                ErrorKind::Usage,
                format!("{file}: the file has several kernels; pick one with --kernel"),
            )
            .note(format!("kernels in this file: {}", names()))),
        },
    }
}

/// A kernel defined out of line in a namespace (`void ns::k(..) {..}`) is named `ns::k` in the
/// module; `--kernel k` (the name its declaration and Nsight Compute show) picks it when no
/// other kernel has that last component.
fn unqualified_match<'a>(module: &'a crate::ir::Module, n: &'a str) -> &'a str {
    let all = || module.kernels.iter().map(|k| k.name.as_str()).chain(module.failed.iter().map(|(f, _)| f.as_str()));
    if n.contains("::") || all().any(|k| k == n) {
        return n;
    }
    let mut hits: Vec<&str> = all().filter(|k| k.rsplit_once("::").is_some_and(|(_, last)| last == n)).collect();
    hits.sort_unstable();
    hits.dedup();
    match hits.as_slice() {
        [one] => one,
        _ => n,
    }
}

/// `scale(double*, int)` -> (`scale`, Some(`double*, int`)); a bare name -> (name, None).
/// The kernel's name in what `--kernel` takes: `scale` of `scale(double*, int)` and of
/// `scale@34`.
fn kernel_name_of(k: &str) -> &str {
    let n = split_signature(k).0;
    match n.rsplit_once('@') {
        Some((name, line)) if line.trim().parse::<u32>().is_ok() => name.trim(),
        _ => n,
    }
}

fn split_signature(n: &str) -> (&str, Option<&str>) {
    let n = n.trim();
    match (n.find('('), n.ends_with(')')) {
        (Some(i), true) => (n[..i].trim(), Some(&n[i + 1..n.len() - 1])),
        _ => (n, None),
    }
}

/// What `--kernel` takes to pick `k` among the module's kernels: its signature, or `name@LINE`
/// where another overload reads the same (`__half *` and `__nv_bfloat16 *` are both 2-byte
/// floats to the analysis).
pub fn kernel_selector(module: &crate::ir::Module, k: &crate::ir::Kernel) -> String {
    let sig = kernel_signature(k);
    let twins = module.kernels.iter().filter(|o| o.name == k.name && kernel_signature(o) == sig).count();
    if twins > 1 {
        format!("{}@{}", k.name, k.span.line)
    } else {
        sig
    }
}

/// A kernel's signature as `--kernel` takes it and `kernels` lists it: `scale(double*, int)`.
pub fn kernel_signature(k: &crate::ir::Kernel) -> String {
    format!("{}({})", k.name, k.params.iter().map(|p| p.ty.display()).collect::<Vec<_>>().join(", "))
}

/// A signature compared without spaces, qualifiers (`const`, `__restrict__`) or parameter
/// names' spelling of integer types (`unsigned` is `unsigned int`, `size_t` is `unsigned long`).
fn signature_key(sig: &str) -> String {
    let (name, params) = split_signature(sig);
    let params: Vec<String> = params
        .unwrap_or("")
        .split(',')
        .map(|p| {
            let stars = p.matches('*').count();
            let words: Vec<&str> = p
                .split(|c: char| c.is_whitespace() || c == '*' || c == '&')
                .filter(|w| {
                    !w.is_empty() && !matches!(*w, "const" | "volatile" | "__restrict__" | "__restrict" | "restrict")
                })
                .collect();
            let base = words.join(" ");
            // Integer types as the IR names them (by width and sign: `long` is `long long`).
            let base = crate::cint::CType::parse(&base).map_or(base.replace(' ', ""), |t| {
                let bits = if t.bits() == 1 { 1 } else { t.bits() as u8 };
                crate::ir::IntTy { bits, signed: t.signed() }.name().to_string()
            });
            format!("{base}{}", "*".repeat(stars))
        })
        .filter(|p| !p.is_empty())
        .collect();
    format!("{name}({})", params.join(","))
}
