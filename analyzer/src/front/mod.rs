//! Front ends: source text -> [`crate::ir::Module`]. They know nothing about sectors.

pub mod cuda;
pub mod rust;
pub mod sass;
