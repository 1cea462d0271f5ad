//! The CUDA front end: preprocess -> parse (tree-sitter-cuda) -> lower every `__global__`
//! function to the IR.

pub mod host;
pub mod launch_site;
mod lower;
mod misread;
pub mod preprocess;
mod prune;
pub(crate) mod types;
pub use types::component_layout;

use crate::diag::{Result, Severity};
use crate::ir::Module;
use crate::source::{FileId, FileLoader, SourceFiles};
use std::path::PathBuf;

pub use lower::lower_translation_unit;

/// What the CUDA front end is given: the preprocessor's `-D` and `-I`, and the launch's
/// `NAME=VALUE` args (template parameters take their values from them).
#[derive(Clone, Copy, Debug)]
pub struct CudaOptions<'a> {
    /// `-D NAME[=VALUE]` as (name, value).
    pub defines: &'a [(String, String)],
    pub include_dirs: &'a [PathBuf],
    pub args: &'a [(String, String)],
}

/// Preprocessed size above which unreachable functions are blanked before parsing.
const PRUNE_ABOVE: usize = 256 << 10;

pub fn lower_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &CudaOptions,
    loader: &dyn FileLoader,
) -> Result<Module> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.to_vec(), include_dirs: opts.include_dirs.to_vec() };
    let mut pre = preprocess::preprocess_tolerant(files, root, &pp_opts, loader)?;
    // Large units: what no kernel reaches is not parsed (the parse tree dominates memory).
    if pre.text.len() > PRUNE_ABOVE {
        prune::blank_unreachable(&mut pre.text);
    }
    // A project header that is not there (a `config.h` the build generates) may hold what a
    // kernel needs: then the kernel's error is the header's. A kernel that lowers without it
    // needed nothing from it, and the header is a warning.
    let header = pre.missing_includes.first().cloned();
    let without = |name: Option<&str>, d: &crate::diag::Diagnostic, h: &crate::diag::Diagnostic| {
        let whose = name.map_or("the file".to_string(), |n| format!("kernel `{n}`"));
        let mut e = h.clone();
        e.message = format!("{}, and without it {whose} cannot be lowered: {}", h.message, d.message);
        e.note(
            "give its directory with -I DIR (or generate it, as the project's build does); a header only host code needs is left out with a warning",
        )
    };
    let mut module = match (lower_translation_unit(&pre, opts.args), &header) {
        (Ok(m), _) => m,
        (Err(d), Some(h)) => return Err(without(None, &d, h)),
        (Err(d), None) => return Err(d),
    };
    module.warnings = pre.warnings.iter().map(|w| w.clone().severity(Severity::Warning)).collect();
    if let Some(h) = &header {
        for (name, d) in module.failed.iter_mut() {
            *d = without(Some(name.as_str()), d, h);
        }
        // Said once a kernel lowered without it; a kernel that did not says it in its error.
        for m in pre.missing_includes.iter().filter(|_| !module.kernels.is_empty()) {
            module.warnings.push(
                m.clone()
                    .severity(Severity::Warning)
                    .note("left out: a kernel that lowers without it needs nothing from it (a macro it would define reads as undefined in #if); -I DIR gives it"),
            );
        }
    }
    Ok(module)
}

/// The `<<<...>>>` launches in a CUDA file's own host code; `opts.args` fill host variables
/// of the same names.
pub fn launch_sites_of_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &CudaOptions,
    loader: &dyn FileLoader,
) -> Result<Vec<launch_site::LaunchSite>> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.to_vec(), include_dirs: opts.include_dirs.to_vec() };
    let pre = preprocess::preprocess_tolerant(files, root, &pp_opts, loader)?;
    launch_site::launch_sites_with(&pre, opts.args)
}
