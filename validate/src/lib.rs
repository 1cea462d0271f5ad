//! sector-validate: runs the examples' kernels on a real GPU under Nsight Compute and sets every
//! counter beside `sector-estimate`'s prediction.
//!
//! The pipeline: [`plan`] (cases, predictions, buffer sizes and contents, arguments: host only)
//! -> [`gpu`] (NVRTC and launches through cudarc, behind a runtime check for `libcuda`) ->
//! [`profile`] (one `ncu` process over all launches, then CSV exports into a raw folder,
//! [`rawdir`]) -> [`ncu`] (CSV parsing) -> [`compare`] (verdicts) -> [`report`] (markdown and
//! JSON). `compare` works from a raw folder alone, so a report can be rebuilt without a GPU.

pub mod compare;
pub use sector_analyzer::front::cuda::host as cuda;
pub mod gpu;
pub mod ncu;
pub mod plan;
pub mod profile;
pub mod ptx;
pub mod rawdir;
pub mod report;
