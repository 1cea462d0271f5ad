//! The CUDA front end: preprocess -> parse (tree-sitter-cuda) -> lower every `__global__`
//! function to the IR.

mod lower;
pub mod preprocess;
mod prune;
mod types;

use crate::analyze::AnalyzeOptions;
use crate::diag::Result;
use crate::ir::Module;
use crate::source::{FileId, FileLoader, SourceFiles};

pub use lower::lower_translation_unit;

/// Preprocessed size above which unreachable functions are blanked before parsing.
const PRUNE_ABOVE: usize = 256 << 10;

pub fn lower_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> Result<Module> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.clone(), include_dirs: opts.include_dirs.clone() };
    let mut pre = preprocess::preprocess(files, root, &pp_opts, loader)?;
    // Large units: what no kernel reaches is not parsed (the parse tree dominates memory).
    if pre.text.len() > PRUNE_ABOVE {
        prune::blank_unreachable(&mut pre.text);
    }
    lower_translation_unit(&pre, &opts.args)
}
