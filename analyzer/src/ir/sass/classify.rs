//! Which SASS instructions move memory, and how: the space, the kind of access, the bytes per
//! lane and the cache operator, read from the mnemonic.

use super::Instr;
use crate::ir::{AccessKind, CacheOp, Space};

/// A memory instruction's class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemClass {
    /// `None` for generic `LD`/`ST`/`ATOM`/`RED`: the space is resolved per execution from the
    /// address window.
    pub space: Option<Space>,
    pub kind: AccessKind,
    pub width: u32,
    pub cache: CacheOp,
    /// `LDSM`: lanes give row addresses of 8x8 matrices of 16-bit elements.
    pub matrix: Option<u32>,
}

/// The width a mnemonic names (`.U8` 1, `.S16` 2, `.64` 8, `.128` 16; 4 otherwise).
fn width_of(i: &Instr) -> u32 {
    for m in &i.mods {
        match m.as_str() {
            "U8" | "S8" => return 1,
            "U16" | "S16" => return 2,
            "64" | "F64" | "S64" | "U64" => return 8,
            "128" => return 16,
            _ => {}
        }
    }
    4
}

fn cache_of(i: &Instr) -> CacheOp {
    if i.has("CONSTANT") {
        CacheOp::Nc
    } else if i.has("BYPASS") {
        CacheOp::Cg
    } else if i.has("EF") {
        CacheOp::Cs
    } else {
        CacheOp::Default
    }
}

/// The class of a memory instruction, or `None` for one that moves no memory the counters
/// count (local memory, barriers, arithmetic).
pub fn classify(i: &Instr) -> Option<MemClass> {
    let w = width_of(i);
    let c = cache_of(i);
    let mk = |space, kind, width| Some(MemClass { space, kind, width, cache: c, matrix: None });
    match i.opcode.as_str() {
        "LDG" => mk(Some(Space::Global), AccessKind::Load, w),
        "STG" => mk(Some(Space::Global), AccessKind::Store, w),
        "LDS" => mk(Some(Space::Shared), AccessKind::Load, w),
        "STS" => mk(Some(Space::Shared), AccessKind::Store, w),
        "LD" => mk(None, AccessKind::Load, w),
        "ST" => mk(None, AccessKind::Store, w),
        "REDG" => mk(Some(Space::Global), AccessKind::Red, atomic_width(i)),
        "ATOMG" => mk(Some(Space::Global), AccessKind::Atom, atomic_width(i)),
        "RED" => mk(None, AccessKind::Red, atomic_width(i)),
        "ATOM" => mk(None, AccessKind::Atom, atomic_width(i)),
        "ATOMS" => mk(Some(Space::Shared), AccessKind::Atom, atomic_width(i)),
        "LDGSTS" => mk(Some(Space::Global), AccessKind::AsyncCopy, w),
        // The texture pipeline: counted by executions; the width is the components written
        // (4 bytes each) or the surface access's own.
        "TEX" | "TLD" | "TLD4" | "TXD" => mk(Some(Space::Texture), AccessKind::Load, 4 * texture_components(i)),
        "SULD" => mk(Some(Space::Surface), AccessKind::Load, w),
        "SUST" => mk(Some(Space::Surface), AccessKind::Store, w),
        "LDSM" => {
            let n = if i.has("4") {
                4
            } else if i.has("2") {
                2
            } else {
                1
            };
            Some(MemClass { space: Some(Space::Shared), kind: AccessKind::Load, width: 16, cache: c, matrix: Some(n) })
        }
        _ => None,
    }
}

/// Components a texture instruction writes: its write mask (`TLD.LZ RZ, R7, R5, UR4, 0x0, 1D,
/// 0x1` writes one), all four where none follows the shape (`TEX.LL R10, R8, R4, R9, UR4, 0x0,
/// 3D`) and for a gather (`TLD4`).
fn texture_components(i: &Instr) -> u32 {
    if i.opcode == "TLD4" {
        return 4;
    }
    match i.operands.as_slice() {
        [.., super::Operand::Other(_), super::Operand::Int(mask)] => (*mask as u32 & 0xf).count_ones().max(1),
        _ => 4,
    }
}

fn atomic_width(i: &Instr) -> u32 {
    if i.mods.iter().any(|m| matches!(m.as_str(), "64" | "F64" | "U64" | "S64")) {
        8
    } else if i.has("128") {
        16
    } else {
        4
    }
}

/// Bulk and tensor copies (TMA): they go between global memory and shared memory through L2
/// without an L1 request, so the L1 counters never see them.
pub fn bulk_copy(i: &Instr) -> bool {
    let o = i.opcode.as_str();
    o.starts_with("UTMA") || o.starts_with("UBLK")
}

/// Instructions that touch memory this model does not count or run: they stop the analysis by
/// name rather than be skipped.
pub fn unsupported_memory(i: &Instr) -> bool {
    let o = i.opcode.as_str();
    (is_texture(i) && classify(i).is_none()) || o == "LDGMC" || o == "STSM" || o == "ATOMGMC"
}

/// A texture or surface instruction (`TEX`, `TLD`, `TLD4`, `TXD`, `SULD`, `SUST`, `SURED`,
/// `SUATOM`, `TXQ`, `TMML`): the texture pipeline. Fetches, surface reads and writes are
/// counted by executions ([`classify`]); surface atomics and texture queries are refused.
pub fn is_texture(i: &Instr) -> bool {
    let o = i.opcode.as_str();
    o.starts_with("SU") || o.starts_with("TEX") || o.starts_with("TLD") || o.starts_with("TX") || o == "TMML"
}
