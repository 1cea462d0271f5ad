//! The Rust front end (cuda_std-style kernels) — lands with the attribute issue.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::Module;
use crate::source::{FileId, SourceFiles, Span};

pub fn lower_file(files: &SourceFiles, root: FileId) -> Result<Module> {
    let _ = files.text(root);
    Err(Diagnostic::at(
        ErrorKind::Unsupported,
        Span { file: root, line: 1, column: 1, len: 1 },
        "Rust kernels are not supported yet",
    ))
}
