//! The CUDA front end: preprocess -> parse (tree-sitter-cuda) -> lower every `__global__`
//! function to the IR.

mod lower;
pub mod preprocess;
mod types;

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

pub fn lower_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &CudaOptions,
    loader: &dyn FileLoader,
) -> Result<Module> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.to_vec(), include_dirs: opts.include_dirs.to_vec() };
    let pre = preprocess::preprocess(files, root, &pp_opts, loader)?;
    let mut module = lower_translation_unit(&pre, opts.args)?;
    module.warnings = pre.warnings.iter().map(|w| w.clone().severity(Severity::Warning)).collect();
    Ok(module)
}
