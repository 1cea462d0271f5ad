//! The pipeline: source -> IR -> engine -> sheet. One entry point for the CLI, the attribute,
//! the validator and the tests.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::fill::Fill;
use crate::sheet::Sheet;
use crate::source::{FileLoader, SourceFiles};
use std::path::{Path, PathBuf};

/// Default work budget: warp-level evaluation steps before the engine gives up.
pub const DEFAULT_MAX_WORK: u64 = 400_000_000;

/// Launches the symbolic engine summarises are also run through the reference engine, for the
/// sector stream the cache model needs: whole when they take at most this many warp-level
/// steps, else a sample of units ([`crate::cache::sample`]).
pub const STREAM_WORK: u64 = crate::cache::sample::SAMPLE_WORK;

/// Which engine counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
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
        }
    }
}

/// Where the source comes from.
pub enum Input<'a> {
    File(&'a Path),
    /// In-memory source; `name` is used in messages and decides the language (`.rs` or CUDA).
    Source {
        name: &'a str,
        text: &'a str,
    },
}

/// A finished analysis, with the files read (for rendering snippets).
pub struct Analysis {
    pub sheet: Sheet,
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

impl Failure {
    /// `file:line:column: message`, the one-line form.
    pub fn one_line(&self) -> String {
        format!("{self:?}")
    }
}

fn read_input(input: &Input, files: &mut SourceFiles) -> Result<crate::source::FileId> {
    match input {
        Input::File(path) => {
            let bytes = std::fs::read(path)
                .map_err(|e| Diagnostic::new(ErrorKind::Usage, format!("cannot read {}: {e}", path.display())))?;
            Ok(files.add(*path, String::from_utf8_lossy(&bytes).into_owned()))
        }
        Input::Source { name, text } => Ok(files.add(*name, *text)),
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
    if is_rust(files, root) {
        return crate::front::rust::lower_file(files, root);
    }
    crate::front::cuda::lower_file(files, root, opts, loader)
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
        Ok(sheet) => Ok(Analysis { sheet, files }),
        Err(diagnostic) => Err(Failure { diagnostic, files }),
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
        let setup = crate::launch::Setup::new(&kernel, opts)?;
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

fn analyze_inner(
    input: &Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
    files: &mut SourceFiles,
) -> Result<Sheet> {
    let module = lower(input, opts, loader, files)?;
    let kernel = pick_kernel(&module, opts.kernel.as_deref(), files)?;
    let setup = crate::launch::Setup::new(kernel, opts)?;
    let (trace, engine, notes) = count(kernel, &setup, opts.engine)?;
    let mut sheet = crate::sheet::build::build(kernel, &setup, trace, files);
    sheet.engine = engine;
    sheet.assumptions.extend(notes);
    Ok(sheet)
}

/// Runs the chosen engine: the trace, the engine's name for the sheet, and what the sheet must
/// say about how it was counted.
fn count(
    kernel: &crate::ir::Kernel,
    setup: &crate::launch::Setup,
    engine: EngineKind,
) -> Result<(crate::engine::Trace, &'static str, Vec<String>)> {
    use crate::engine::symbolic::{self, Fallback};
    if engine == EngineKind::Enumerate {
        return Ok((crate::engine::run(kernel, setup)?, "enumerate", Vec::new()));
    }
    match symbolic::run(kernel, setup) {
        Ok((mut trace, stats)) => {
            let notes = vec![format!(
                "symbolic engine: {} warp-level steps counted in {} abstract steps: the launch in {} piece(s) ({} of them a single warp, enumerated); {} loop iteration(s) run one at a time, {} covered by {} summaries",
                trace.work, stats.steps, stats.pieces, stats.single_warps, stats.single_iterations, stats.summarised_iterations, stats.summaries
            )];
            // The cache model needs sectors in execution order: the reference engine gives
            // them for all units of the launch, or for a sample of them (its counts equal the
            // summary's).
            trace.boundary = crate::cache::sample::stream(
                kernel,
                setup,
                &trace,
                crate::cache::sample::SAMPLE_WORK.min(setup.max_work),
            )?;
            Ok((trace, "symbolic", notes))
        }
        // The reference engine words every error.
        Err(Fallback::Error) => Ok((crate::engine::run(kernel, setup)?, "enumerate", Vec::new())),
        Err(Fallback::GiveUp(why)) => Ok((
            crate::engine::run(kernel, setup)?,
            "enumerate",
            vec![format!("symbolic engine could not summarise this launch ({why}): every warp was enumerated")],
        )),
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
            if module.kernels.is_empty() {
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
