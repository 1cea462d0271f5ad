//! sector-analyzer: static accounting of the 32-byte sectors a GPU kernel's warp memory
//! instructions touch.
//!
//! Data flow (one module per stage): [`front`] (CUDA source, Rust kernels) -> [`ir`] (kernel IR
//! and its control-flow graph) -> [`engine`] (warps executed lane by lane; the only place where
//! a sector is counted) -> [`sheet`] (the accounting sheet and its renderers). The library does
//! no printing and never exits; the `sector-estimate` binary does. ARCHITECTURE.md (at the
//! repository's root) gives the layers and their invariants.
//!
//! # Entry points
//!
//! Re-exported here: [`analyze()`] and [`analyze_source`] (one kernel under one launch ->
//! [`Analysis`]: the [`Sheet`], its warnings and the files read; or a [`Failure`], a
//! [`std::error::Error`]), [`list_kernels`], [`check()`] (a `sector-estimate.toml` config),
//! [`explain()`] (one warp execution, lane by lane), [`Finding`] and its renderers in
//! [`finding`], the GPU profiles in [`gpu`], and [`attribute::expand`] (what
//! `#[sector_estimate]` runs). The other modules are public for the validator, the
//! benchmarks and the tests, which drive stages one at a time.
//!
//! # Features
//!
//! `cli` (default): the command line and what only it needs (clap, rayon, indicatif, plotters,
//! csv); [`sweep`] and the parallel [`check()`] come with it. Without it the library is what the
//! proc macro needs: `sector-analyzer = { default-features = false }`.

pub mod cache;
pub mod cint;
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
pub mod html;
/// Sweeps run on the rayon pool and write CSV and SVG: part of the `cli` feature.
#[cfg(feature = "cli")]
pub mod sweep;

pub use analyze::{analyze, analyze_source, list_kernels, Analysis, AnalyzeOptions, EngineKind, Failure, Input};
pub use check::{check, CheckReport};
pub use diag::{Diagnostic, ErrorKind, Severity};
pub use explain::{explain, ExplainOptions, Explanation};
pub use fill::Fill;
pub use finding::Finding;
pub use gpu::Profile;
pub use launch::LaunchSpec;
pub use sheet::Sheet;
pub use source::{SourceFiles, Span};
