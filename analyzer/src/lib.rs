//! sector-analyzer: static accounting of the 32-byte sectors a GPU kernel's warp memory
//! instructions touch.
//!
//! Data flow (one module per stage): [`front`] (CUDA source, Rust kernels) -> [`ir`] (kernel IR
//! and its control-flow graph) -> [`engine`] (warps executed lane by lane; the only place where
//! a sector is counted) -> [`sheet`] (the accounting sheet and its renderers). The library does
//! no printing and never exits; the `sector-estimate` binary does.

pub mod cache;
pub mod diag;
pub mod engine;
pub mod fill;
pub mod front;
#[doc(hidden)]
pub mod fuzzing;
pub mod gpu;
pub mod ir;
pub mod launch;
pub mod manifest;
pub mod sheet;
pub mod source;

pub mod analyze;
pub mod attribute;
pub mod check;
pub mod explain;
pub mod finding;
/// Sweeps run on the rayon pool and write CSV and SVG: part of the `cli` feature.
#[cfg(feature = "cli")]
pub mod sweep;

pub use analyze::{analyze, analyze_source, list_kernels, Analysis, AnalyzeOptions, Input};
pub use diag::{Diagnostic, ErrorKind};
pub use fill::Fill;
pub use sheet::Sheet;
pub use source::{SourceFiles, Span};
