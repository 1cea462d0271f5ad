//! Front ends: source text -> [`crate::ir::Module`]. They know nothing about sectors.

pub(crate) mod builder;
pub mod cuda;
pub mod rust;
pub mod sass;
