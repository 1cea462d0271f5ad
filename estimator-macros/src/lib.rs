//! `#[sector_estimate]`: the accounting sheet of a GPU kernel at compile time, as constants and
//! documentation, and memory-efficiency budgets as compile errors.
//!
//! A thin shell: the logic is `sector_analyzer::attribute` (unit-tested there).
//!
//! On a cuda_std-style Rust kernel:
//!
//! ```ignore
//! use estimator_macros::sector_estimate;
//!
//! #[sector_estimate(grid = 4096, block = 256, n = 1048576)]
//! pub unsafe fn vec_add(a: &[f32], b: &[f32], c: *mut f32, n: usize) {
//!     let i = thread::index_1d() as usize;
//!     if i < n {
//!         *c.add(i) = a[i] + b[i];
//!     }
//! }
//! assert_eq!(vec_add_sector_estimate::LOAD_SECTORS, 262_144);
//! ```
//!
//! On a constant holding CUDA source:
//!
//! ```ignore
//! #[sector_estimate(kernel = "vec_add", grid = 4096, block = 256, n = 1048576)]
//! const VEC_ADD_CU: &str = r#"__global__ void vec_add(...) { ... }"#;
//! assert_eq!(vec_add_cu_sector_estimate::STORE_SECTORS, 131_072);
//! ```
//!
//! `grid` and `block` take an integer or a tuple `(32, 8)`; `kernel` picks the kernel inside
//! CUDA source. The command line's other launch options have keys too: `gpu = "a100"`,
//! `fill = "idx=identity"`, `offset = ("a=4", "b=4")`, `define = "TILE=32"`, `include = "dir"`
//! (from the crate's root), `shared_bytes = N`, `engine = "enumerate"`, `max_work = N`. Every
//! other `name = value` is a kernel parameter's value; a name that is neither is an error that
//! lists both. Budgets: `max_sectors_per_request = N`, `min_efficiency = F` (ideal sectors /
//! sectors of each access), `max_sectors = N` (global sectors of the whole launch) and
//! `max_wavefronts_per_request = N` (shared memory). cuda_std's `#[kernel]` may go above or below.
//!
//! The README's "Use it in your crate" shows a crate that depends on this one by path
//! (`tests/fixtures/user-crate`, built by `tests/ui.rs`).

use proc_macro::TokenStream;

/// See the crate documentation.
#[proc_macro_attribute]
pub fn sector_estimate(attr: TokenStream, item: TokenStream) -> TokenStream {
    sector_analyzer::attribute::expand(attr.into(), item.into()).into()
}
