//! The CUDA front end: preprocess -> parse (tree-sitter-cuda) -> lower every `__global__`
//! function to the IR.

pub mod launch_site;
mod lower;
pub mod preprocess;
mod types;

use crate::analyze::AnalyzeOptions;
use crate::diag::Result;
use crate::ir::Module;
use crate::source::{FileId, FileLoader, SourceFiles};

pub use lower::lower_translation_unit;

pub fn lower_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> Result<Module> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.clone(), include_dirs: opts.include_dirs.clone() };
    let pre = preprocess::preprocess(files, root, &pp_opts, loader)?;
    lower_translation_unit(&pre, &opts.args)
}

/// The `<<<...>>>` launches in a CUDA file's own host code.
pub fn launch_sites_of_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> Result<Vec<launch_site::LaunchSite>> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.clone(), include_dirs: opts.include_dirs.clone() };
    let pre = preprocess::preprocess(files, root, &pp_opts, loader)?;
    launch_site::launch_sites(&pre)
}
