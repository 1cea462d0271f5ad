//! What each SASS instruction does to registers and predicates, lane by lane, as the PTX ISA
//! and the instruction set reference describe them: the integer instructions that build
//! addresses and trip counts exactly, floating point where an address can depend on it
//! (division's reciprocal), and a stated "unknown" result for the rest. An opcode outside this
//! table stops the analysis, by name.

use super::{stop, Machine, SHARED_WINDOW_HI};
use crate::diag::Result;
use crate::engine::WARP;
use crate::ir::sass::{Instr, MemClass, Operand, PredReg, Reg, Special, PT, RZ};
use crate::ir::{AccessKind, Base, Space};

/// An instruction's modifiers as bits, read once: the engine asks for them per lane.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Mods {
    bits: u64,
    /// The first modifier's bit (a comparison's `LT`, a shuffle's mode).
    pub first: u64,
}

/// Modifier bits (some named only for completeness of the comparison set).
#[allow(dead_code)]
pub(super) mod modbit {
    pub(crate) const B32: u64 = 1 << 0;
    pub(crate) const B64: u64 = 1 << 1;
    pub(crate) const ALL: u64 = 1 << 2;
    pub(crate) const AND: u64 = 1 << 3;
    pub(crate) const CEIL: u64 = 1 << 4;
    pub(crate) const EQ: u64 = 1 << 5;
    pub(crate) const EX: u64 = 1 << 6;
    pub(crate) const F: u64 = 1 << 7;
    pub(crate) const F16: u64 = 1 << 8;
    pub(crate) const F64: u64 = 1 << 9;
    pub(crate) const FLOOR: u64 = 1 << 10;
    pub(crate) const FTZ: u64 = 1 << 11;
    pub(crate) const GE: u64 = 1 << 12;
    pub(crate) const GT: u64 = 1 << 13;
    pub(crate) const HI: u64 = 1 << 14;
    pub(crate) const L: u64 = 1 << 15;
    pub(crate) const LE: u64 = 1 << 16;
    pub(crate) const LT: u64 = 1 << 17;
    pub(crate) const MIN: u64 = 1 << 18;
    pub(crate) const NE: u64 = 1 << 19;
    pub(crate) const OR: u64 = 1 << 20;
    pub(crate) const RCP: u64 = 1 << 21;
    pub(crate) const RM: u64 = 1 << 22;
    pub(crate) const RP: u64 = 1 << 23;
    pub(crate) const RSQ: u64 = 1 << 24;
    pub(crate) const RZ: u64 = 1 << 25;
    pub(crate) const S16: u64 = 1 << 26;
    pub(crate) const S32: u64 = 1 << 27;
    pub(crate) const S64: u64 = 1 << 28;
    pub(crate) const S8: u64 = 1 << 29;
    pub(crate) const SH: u64 = 1 << 30;
    pub(crate) const SQRT: u64 = 1 << 31;
    pub(crate) const SUM: u64 = 1 << 32;
    pub(crate) const SX32: u64 = 1 << 33;
    pub(crate) const T: u64 = 1 << 34;
    pub(crate) const TRUNC: u64 = 1 << 35;
    pub(crate) const U16: u64 = 1 << 36;
    pub(crate) const U32: u64 = 1 << 37;
    pub(crate) const U64: u64 = 1 << 38;
    pub(crate) const U8: u64 = 1 << 39;
    pub(crate) const W: u64 = 1 << 40;
    pub(crate) const WIDE: u64 = 1 << 41;
    pub(crate) const X: u64 = 1 << 42;
    pub(crate) const XOR: u64 = 1 << 43;
}

const MOD_NAMES: &[&str] = &[
    "32", "64", "ALL", "AND", "CEIL", "EQ", "EX", "F", "F16", "F64", "FLOOR", "FTZ", "GE", "GT", "HI", "L", "LE", "LT",
    "MIN", "NE", "OR", "RCP", "RM", "RP", "RSQ", "RZ", "S16", "S32", "S64", "S8", "SH", "SQRT", "SUM", "SX32", "T",
    "TRUNC", "U16", "U32", "U64", "U8", "W", "WIDE", "X", "XOR",
];

impl Mods {
    pub(crate) fn of(i: &Instr) -> Mods {
        let bit = |s: &str| MOD_NAMES.iter().position(|n| *n == s).map_or(0, |k| 1u64 << k);
        Mods { bits: i.mods.iter().fold(0, |b, s| b | bit(s)), first: i.mods.first().map_or(0, |s| bit(s)) }
    }
    #[inline]
    pub(crate) fn has(self, b: u64) -> bool {
        self.bits & b != 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    // Control.
    Bra,
    Exit,
    Call,
    Ret,
    Bssy,
    Bsync,
    Break,
    /// No effect on what is counted (barriers, fences, hints).
    Nop,
    // Values.
    Mov,
    Imad,
    Iadd3,
    /// `VIADD d, a, b`: a + b.
    Viadd,
    /// `VIADDMNMX d, a, b, c, P`: min (P) or max of a + b and c.
    Viaddmnmx,
    /// `ELECT Pd, URd, Pmask`: one lane (the lowest active) is elected.
    Elect,
    Lea,
    Shf,
    Lop3,
    Plop3,
    Isetp,
    Fsetp,
    Sel,
    Imnmx,
    Iabs,
    Popc,
    Flo,
    Brev,
    Bmsk,
    Prmt,
    Sgxt,
    S2r,
    Cs2r,
    Ldc,
    Vote,
    Redux,
    Match,
    Shfl,
    Hfma2,
    Fadd,
    Fmul,
    Ffma,
    Fmnmx,
    Mufu,
    I2f,
    F2i,
    P2r,
    R2p,
    /// A memory instruction (counted by the engine; its result, if any, set after).
    Memory,
    /// A bulk or tensor copy: no L1 request (noted on the sheet).
    Bulk,
    /// A result the model does not compute: `n` registers from the first operand are unknown.
    Opaque(u8),
    /// Predicates the model does not compute (the first operands that are predicates).
    OpaquePred,
}

pub(super) fn is_control(op: Op) -> bool {
    matches!(op, Op::Bra | Op::Exit | Op::Call | Op::Ret | Op::Bssy | Op::Bsync | Op::Break)
}

/// The opcode's meaning; an opcode this model does not know is an error naming it.
pub(super) fn decode(i: &Instr) -> Result<Op> {
    if crate::ir::sass::classify(i).is_some() {
        return Ok(Op::Memory);
    }
    if crate::ir::sass::bulk_copy(i) {
        return Ok(Op::Bulk);
    }
    let o = i.opcode.as_str();
    let u = o.strip_prefix('U').filter(|r| UNIFORM.contains(r)).unwrap_or(o);
    Ok(match u {
        "BRA" | "BRX" | "JMP" | "JMX" => {
            if matches!(u, "BRX" | "JMX") {
                return Err(stop(i, "is an indirect branch this model cannot follow"));
            }
            Op::Bra
        }
        "EXIT" | "KILL" => Op::Exit,
        "BPT" => Op::Exit,
        "CALL" => Op::Call,
        "RET" => Op::Ret,
        "BSSY" => Op::Bssy,
        "BSYNC" => Op::Bsync,
        "BREAK" => Op::Break,
        "NOP" | "BAR" | "MEMBAR" | "FENCE" | "ERRBAR" | "CCTL" | "CCTLL" | "DEPBAR" | "LDGDEPBAR" | "WARPSYNC"
        | "NANOSLEEP" | "YIELD" | "STL" | "ARRIVES" | "PMTRIG" | "CGAERRBAR" | "ACQBULK" | "WARPGROUP"
        | "SETMAXREG" | "ENDCOLLECTIVE" | "UCGABAR_ARV" | "UCGABAR_WAIT" | "CGABAR" | "BMOV" | "RPCMOV" | "SYNCS"
        | "VOTEU_NOP" => {
            if u == "SYNCS" && !i.operands.is_empty() && matches!(i.operands[0], Operand::Pred(_)) {
                Op::OpaquePred
            } else if (u == "SYNCS" || u == "BMOV") && matches!(i.operands.first(), Some(Operand::Reg(_))) {
                Op::Opaque(1)
            } else {
                Op::Nop
            }
        }
        "MOV" | "MOV32I" | "R2UR" | "UMOV" => Op::Mov,
        "IMAD" | "IMUL" => Op::Imad,
        "IADD3" | "IADD" => Op::Iadd3,
        "VIADD" => Op::Viadd,
        "VIADDMNMX" => Op::Viaddmnmx,
        "LEA" => Op::Lea,
        "SHF" => Op::Shf,
        "LOP3" => Op::Lop3,
        "PLOP3" => Op::Plop3,
        "ISETP" => Op::Isetp,
        "FSETP" => Op::Fsetp,
        "SEL" | "FSEL" => Op::Sel,
        "IMNMX" | "VIMNMX" => Op::Imnmx,
        "IABS" => Op::Iabs,
        "POPC" => Op::Popc,
        "FLO" => Op::Flo,
        "BREV" => Op::Brev,
        "BMSK" => Op::Bmsk,
        "PRMT" => Op::Prmt,
        "SGXT" => Op::Sgxt,
        "S2R" | "S2UR" => Op::S2r,
        "CS2R" => Op::Cs2r,
        "LDC" | "LDCU" => Op::Ldc,
        "VOTE" | "VOTEU" => Op::Vote,
        "ELECT" => Op::Elect,
        "REDUX" => Op::Redux,
        "MATCH" => Op::Match,
        "SHFL" => Op::Shfl,
        "HFMA2" => Op::Hfma2,
        "FADD" => Op::Fadd,
        "FMUL" => Op::Fmul,
        "FFMA" => Op::Ffma,
        "FMNMX" => Op::Fmnmx,
        "MUFU" => Op::Mufu,
        "I2F" | "I2FP" => Op::I2f,
        "F2I" => Op::F2i,
        "P2R" => Op::P2r,
        "R2P" => Op::R2p,
        // Values this model does not compute: their registers become unknown.
        "DADD" | "DMUL" | "DFMA" | "DMNMX" => Op::Opaque(2),
        "DSETP" | "HSETP2" | "FCHK" => Op::OpaquePred,
        "F2F" | "I2F64" | "F2I64" | "I2I" | "F2IP" => {
            let dest = i.mods.iter().find(|m| is_type(m)).map(String::as_str);
            Op::Opaque(if matches!(dest, Some("F64" | "S64" | "U64")) { 2 } else { 1 })
        }
        "HADD2" | "HMUL2" | "HMNMX2" | "F2FP" | "FSWZADD" | "FRND" | "FSET" | "HSET2" | "IDP" | "IDP4A" | "BMMA"
        | "CSET" | "CSETP" | "IMUL32I" | "FMUL32I" | "FADD32I" | "FFMA32I" | "HADD2_32I" | "HMUL2_32I"
        | "HFMA2_32I" | "SUATOM" | "QSPC" | "LEPC" | "GETLMEMBASE" | "SETLMEMBASE" | "MEMSET" | "IADD32I"
        | "VABSDIFF" | "VABSDIFF4" | "LDL" | "F2FP_PACK_AB" | "MOVM" => {
            Op::Opaque(if u == "LDL" { ldl_regs(i) } else { 1 })
        }
        "HMMA" | "IMMA" | "DMMA" | "HGMMA" | "IGMMA" | "QGMMA" | "BGMMA" => Op::Opaque(mma_regs(i)),
        _ => return Err(stop(i, "is not in this model's instruction table")),
    })
}

/// The uniform datapath's opcodes without their `U`.
const UNIFORM: &[&str] = &[
    "IADD3", "IMAD", "LEA", "SHF", "LOP3", "PLOP3", "ISETP", "SEL", "MOV", "FLO", "POPC", "BREV", "BMSK", "PRMT",
    "SGXT", "LDC",
];

fn is_type(m: &str) -> bool {
    matches!(m, "F16" | "F32" | "F64" | "S8" | "U8" | "S16" | "U16" | "S32" | "U32" | "S64" | "U64" | "BF16")
}

fn ldl_regs(i: &Instr) -> u8 {
    if i.has("128") {
        4
    } else if i.has("64") {
        2
    } else {
        1
    }
}

/// Accumulator registers an MMA writes: `HMMA.16816.F32` 4, `.F16` 2, `HGMMA.64x128x16.F32` 64.
fn mma_regs(i: &Instr) -> u8 {
    let f32acc = i.mods.iter().any(|m| m == "F32" || m == "S32");
    if i.opcode.ends_with("GMMA") {
        let n = i.mods.iter().find_map(|m| m.split('x').nth(1).and_then(|n| n.parse::<u32>().ok())).unwrap_or(256);
        return (if f32acc { n / 2 } else { n / 4 }).clamp(1, 255) as u8;
    }
    if i.opcode == "DMMA" {
        return 4;
    }
    if f32acc {
        4
    } else {
        2
    }
}

/// An operand's values in the lanes of `run` and the lanes where they are known (what the loop
/// summaries observe of a comparison's operands).
pub(super) fn operand_values(m: &Machine, o: &Operand, run: u32) -> ([u32; WARP], u32) {
    let v = m.ints(o, run);
    (v.v, v.k)
}

/// The lanes of a mask, lowest first.
pub(super) fn mask_lanes(m: u32) -> Lanes {
    Lanes(m)
}

pub(super) struct Lanes(u32);

impl Iterator for Lanes {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let l = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(l)
    }
}

/// Result of a lane's computation.
type V = Option<u32>;

/// An operand's values in the lanes an instruction runs, fetched once for the instruction
/// (per-lane operand decoding was most of the engine's time): the value per lane and the
/// lanes where it is known.
pub(super) struct LaneVals {
    v: [u32; WARP],
    k: u32,
}

impl LaneVals {
    fn unknown() -> LaneVals {
        LaneVals { v: [0; WARP], k: 0 }
    }
    #[inline]
    fn get(&self, l: usize) -> V {
        (self.k >> l & 1 == 1).then(|| self.v[l])
    }
    #[inline]
    fn put(&mut self, l: usize, x: V) {
        match x {
            Some(x) => {
                self.v[l] = x;
                self.k |= 1 << l;
            }
            None => self.k &= !(1 << l),
        }
    }
}

/// A 64-bit operand's values in the lanes an instruction runs.
pub(super) struct LaneVals64 {
    v: [u64; WARP],
    k: u32,
}

impl LaneVals64 {
    #[inline]
    fn get(&self, l: usize) -> Option<u64> {
        (self.k >> l & 1 == 1).then(|| self.v[l])
    }
}

/// A predicate operand's lanes: true (with `!` applied) and known.
#[derive(Clone, Copy)]
pub(super) struct PredVals {
    v: u32,
    k: u32,
}

impl PredVals {
    const FALSE: PredVals = PredVals { v: 0, k: u32::MAX };
    #[inline]
    fn get(self, l: usize) -> Option<bool> {
        (self.k >> l & 1 == 1).then_some(self.v >> l & 1 == 1)
    }
}

impl Machine<'_> {
    fn special(&self, sr: &Special, l: usize) -> V {
        let [bx, by, _] = self.s.block;
        let t = self.w.first_thread + l as u64;
        let (bx, by) = (bx as u64, by as u64);
        Some(match sr {
            Special::Zero => 0,
            Special::Tid(0) => (t % bx) as u32,
            Special::Tid(1) => (t / bx % by) as u32,
            Special::Tid(_) => (t / (bx * by)) as u32,
            Special::Ctaid(d) => self.block[*d as usize % 3],
            Special::Ntid(d) => self.s.block[*d as usize % 3],
            Special::Nctaid(d) => self.s.grid[*d as usize % 3],
            Special::LaneId => l as u32,
            Special::SwinHi => SHARED_WINDOW_HI,
            Special::SwinLo => 0,
            Special::CgaCtaId => 0,
            Special::EqMask => 1 << l,
            Special::LtMask => (1u64 << l) as u32 - 1,
            Special::LeMask => ((1u64 << (l + 1)) - 1) as u32,
            Special::GtMask => !(((1u64 << (l + 1)) - 1) as u32),
            Special::GeMask => !((1u64 << l) as u32 - 1),
            Special::Other(_) => return None,
        })
    }

    /// An operand as a 32-bit integer in lane `l`.
    fn int(&self, o: &Operand, l: usize) -> V {
        match o {
            Operand::Reg(r) => {
                let v = r.select(self.reg(*r, l)?);
                let v = if r.abs { (v as i32).unsigned_abs() } else { v };
                let v = if r.not { !v } else { v };
                Some(if r.neg { v.wrapping_neg() } else { v })
            }
            Operand::Int(v) => Some(*v as u32),
            Operand::Float(f) => Some(f.to_bits()),
            Operand::Const(c) => {
                let at = c.offset + c.reg.map_or(Some(0), |r| self.reg(r, l).map(|x| x as i64))?;
                self.const_bytes(c.bank, at, 4).map(|v| v as u32)
            }
            Operand::Special(s) => self.special(s, l),
            Operand::LabelValue(v) => Some(*v as u32),
            _ => None,
        }
    }

    /// An operand's values in the lanes of `run`: a register's lanes copied, a value the same
    /// in every lane (immediates, uniform registers, constants at a fixed offset) read once.
    fn ints(&self, o: &Operand, run: u32) -> LaneVals {
        let mut out = LaneVals::unknown();
        if run == 0 {
            return out;
        }
        match o {
            Operand::Reg(r) if !r.uniform => {
                let i = r.index as usize;
                if r.index != RZ {
                    out.v.copy_from_slice(&self.w.r[i * WARP..(i + 1) * WARP]);
                }
                out.k = self.w.rk[i] & run;
                if r.abs || r.not || r.neg || r.part != (0, 32) {
                    for x in &mut out.v {
                        let v = r.select(*x);
                        let v = if r.abs { (v as i32).unsigned_abs() } else { v };
                        let v = if r.not { !v } else { v };
                        *x = if r.neg { v.wrapping_neg() } else { v };
                    }
                }
            }
            Operand::Reg(_)
            | Operand::Int(_)
            | Operand::Float(_)
            | Operand::LabelValue(_)
            | Operand::Const(crate::ir::sass::ConstRef { reg: None, .. }) => {
                if let Some(x) = self.int(o, run.trailing_zeros() as usize) {
                    out.v = [x; WARP];
                    out.k = run;
                }
            }
            _ => {
                for l in mask_lanes(run) {
                    out.put(l, self.int(o, l));
                }
            }
        }
        out
    }

    /// A 64-bit operand's values in the lanes of `run`.
    fn ints64(&self, o: &Operand, run: u32) -> LaneVals64 {
        let mut out = LaneVals64 { v: [0; WARP], k: 0 };
        if run == 0 {
            return out;
        }
        match o {
            Operand::Reg(r) if !r.uniform && r.index != RZ => {
                let i = r.index as usize;
                let lo = &self.w.r[i * WARP..(i + 1) * WARP];
                let hi_known = if i + 1 == RZ as usize { u32::MAX } else { self.w.rk[i + 1] };
                for l in mask_lanes(run) {
                    let hi = if i + 1 == RZ as usize { 0 } else { self.w.r[(i + 1) * WARP + l] };
                    let v = lo[l] as u64 | (hi as u64) << 32;
                    out.v[l] = if r.neg { v.wrapping_neg() } else { v };
                }
                out.k = self.w.rk[i] & hi_known & run;
            }
            Operand::Reg(_) | Operand::Int(_) | Operand::Const(crate::ir::sass::ConstRef { reg: None, .. }) => {
                if let Some(x) = self.int64(o, run.trailing_zeros() as usize) {
                    out.v = [x; WARP];
                    out.k = run;
                }
            }
            _ => {
                for l in mask_lanes(run) {
                    if let Some(x) = self.int64(o, l) {
                        out.v[l] = x;
                        out.k |= 1 << l;
                    }
                }
            }
        }
        out
    }

    /// A predicate operand's lanes (`!` applied); `None` for an operand that is not one.
    fn preds(&self, o: Option<&Operand>) -> Option<PredVals> {
        let Some(Operand::Pred(p)) = o else { return None };
        let (v, k) = self.pred_lanes(*p);
        Some(PredVals { v: if p.not { !v } else { v }, k })
    }

    /// Writes `vals` to register `d` in the lanes of `run` (the lowest lane for a uniform one).
    fn set_vals(&mut self, d: Reg, run: u32, vals: &LaneVals) {
        if d.index == RZ || run == 0 {
            return;
        }
        let i = d.index as usize;
        if d.uniform {
            let l = run.trailing_zeros() as usize;
            self.w.urk[i] = vals.k >> l & 1 == 1;
            self.w.ur[i] = vals.v[l];
            return;
        }
        if run == u32::MAX {
            self.w.r[i * WARP..(i + 1) * WARP].copy_from_slice(&vals.v);
        } else {
            for l in mask_lanes(run) {
                self.w.r[i * WARP + l] = vals.v[l];
            }
        }
        self.w.rk[i] = (self.w.rk[i] & !run) | (vals.k & run);
    }

    /// Writes a predicate in the lanes of `run`: `v` where `k`, unknown elsewhere.
    fn set_preds(&mut self, p: PredReg, run: u32, v: u32, k: u32) {
        if p.index == PT || run == 0 {
            return;
        }
        let i = p.index as usize;
        if p.uniform {
            let l = run.trailing_zeros();
            self.w.upk[i] = k >> l & 1 == 1;
            self.w.up[i] = v >> l & 1 == 1;
            return;
        }
        self.w.p[i] = (self.w.p[i] & !run) | (v & run);
        self.w.pk[i] = (self.w.pk[i] & !run) | (k & run);
    }

    /// An operand as a 64-bit integer (a register pair, eight bank bytes).
    fn int64(&self, o: &Operand, l: usize) -> Option<u64> {
        match o {
            Operand::Reg(r) => {
                let v = self.reg64(*r, l)?;
                Some(if r.neg { v.wrapping_neg() } else { v })
            }
            Operand::Int(v) => Some(*v as u64),
            Operand::Const(c) => {
                let at = c.offset + c.reg.map_or(Some(0), |r| self.reg(r, l).map(|x| x as i64))?;
                self.const_bytes(c.bank, at, 8)
            }
            Operand::Special(Special::Zero) => Some(0),
            _ => None,
        }
    }

    fn flt(&self, o: &Operand, l: usize) -> Option<f32> {
        match o {
            Operand::Reg(r) => {
                let mut b = self.reg(*r, l)?;
                if r.abs {
                    b &= 0x7fff_ffff;
                }
                if r.neg {
                    b ^= 0x8000_0000;
                }
                Some(f32::from_bits(b))
            }
            Operand::Float(f) => Some(*f),
            Operand::Int(v) => Some(f32::from_bits(*v as u32)),
            Operand::Const(_) => self.int(o, l).map(f32::from_bits),
            _ => None,
        }
    }

    fn pred(&self, o: &Operand, l: usize) -> Option<bool> {
        let Operand::Pred(p) = o else { return None };
        let (v, k) = self.pred_lanes(*p);
        (k >> l & 1 == 1).then(|| (v >> l & 1 == 1) != p.not)
    }

    pub(super) fn set(&mut self, d: Reg, l: usize, v: V) {
        let i = d.index as usize;
        if d.index == RZ {
            return;
        }
        if d.uniform {
            self.w.urk[i] = v.is_some();
            self.w.ur[i] = v.unwrap_or(0);
            return;
        }
        match v {
            Some(x) => {
                self.w.r[i * WARP + l] = x;
                self.w.rk[i] |= 1 << l;
            }
            None => self.w.rk[i] &= !(1 << l),
        }
    }

    fn set64(&mut self, d: Reg, l: usize, v: Option<u64>) {
        if d.index == RZ {
            return;
        }
        self.set(d, l, v.map(|x| x as u32));
        self.set(Reg { index: d.index + 1, ..d }, l, v.map(|x| (x >> 32) as u32));
    }

    fn setp(&mut self, p: PredReg, l: usize, v: Option<bool>) {
        let i = p.index as usize;
        if p.index == PT {
            return;
        }
        if p.uniform {
            self.w.upk[i] = v.is_some();
            self.w.up[i] = v.unwrap_or(false);
            return;
        }
        match v {
            Some(b) => {
                self.w.pk[i] |= 1 << l;
                if b {
                    self.w.p[i] |= 1 << l;
                } else {
                    self.w.p[i] &= !(1 << l);
                }
            }
            None => self.w.pk[i] &= !(1 << l),
        }
    }
}

/// An f16 immediate's 16 bits.
fn f16_bits(f: f32) -> u32 {
    super::half_bits(f) as u32
}

fn regs(ins: &Instr) -> Vec<Reg> {
    ins.operands.iter().filter_map(|o| if let Operand::Reg(r) = o { Some(*r) } else { None }).collect()
}

/// The carry-out predicates after an instruction's destination register (`IADD3 R0, P0, P1, ...`).
pub(super) fn pred_outs(ops: &[Operand]) -> impl Iterator<Item = PredReg> + '_ {
    ops.iter().skip(1).map_while(|o| if let Operand::Pred(p) = o { Some(*p) } else { None })
}

/// The operands after the leading destinations: `skip` of them.
fn srcs(ins: &Instr, skip: usize) -> &[Operand] {
    ins.operands.get(skip..).unwrap_or(&[])
}

fn lop(lut: u32, a: u32, b: u32, c: u32) -> u32 {
    let mut r = 0u32;
    for bit in 0..32 {
        let idx = (a >> bit & 1) << 2 | (b >> bit & 1) << 1 | (c >> bit & 1);
        r |= (lut >> idx & 1) << bit;
    }
    r
}

fn cmp(md: Mods, a: i64, b: i64) -> bool {
    match md.first {
        modbit::LT => a < b,
        modbit::LE => a <= b,
        modbit::GT => a > b,
        modbit::GE => a >= b,
        modbit::EQ => a == b,
        modbit::NE => a != b,
        modbit::T => true,
        _ => false,
    }
}

/// [`combine`] where either side may be unknown (data read from memory): `unknown.OR true` is
/// true and `unknown.AND false` false, as a guard `data && i < n` is false wherever `i < n` is.
fn combine_known(md: Mods, x: Option<bool>, c: Option<bool>) -> Option<bool> {
    match (x, c) {
        (Some(x), Some(c)) => Some(combine(md, x, c)),
        (Some(k), None) | (None, Some(k)) if !md.has(modbit::XOR) => {
            let or = md.has(modbit::OR);
            (k == or).then_some(k)
        }
        _ => None,
    }
}

fn combine(md: Mods, x: bool, c: bool) -> bool {
    if md.has(modbit::OR) {
        x || c
    } else if md.has(modbit::XOR) {
        x ^ c
    } else {
        x && c
    }
}

/// `{hi:lo}` shifted as `SHF` does.
fn shf(md: Mods, lo: u32, s: u32, hi: u32) -> u32 {
    let wide64 = md.has(modbit::U64) || md.has(modbit::S64);
    let signed = md.has(modbit::S32) || md.has(modbit::S64);
    let s = if md.has(modbit::W) { s & if wide64 { 63 } else { 31 } } else { s.min(if wide64 { 64 } else { 32 }) };
    let v = (hi as u64) << 32 | lo as u64;
    if md.has(modbit::L) {
        let x = if s >= 64 { 0 } else { v << s };
        if md.has(modbit::HI) {
            (x >> 32) as u32
        } else {
            x as u32
        }
    } else {
        let x = if signed {
            let sv = if wide64 { v as i64 } else { ((hi as i32 as i64) << 32) | lo as i64 };
            (sv >> s.min(63)) as u64
        } else if s >= 64 {
            0
        } else {
            v >> s
        };
        if md.has(modbit::HI) {
            (x >> 32) as u32
        } else {
            x as u32
        }
    }
}

fn flo(md: Mods, v: u32) -> u32 {
    let v = if md.has(modbit::U32) || (v as i32) >= 0 { v } else { !v };
    if v == 0 {
        return u32::MAX;
    }
    let pos = 31 - v.leading_zeros();
    if md.has(modbit::SH) {
        31 - pos
    } else {
        pos
    }
}

fn prmt(a: u32, sel: u32, b: u32, ins: &Instr, _md: Mods) -> u32 {
    if ins.mods.iter().any(|m| matches!(m.as_str(), "F4E" | "B4E" | "RC8" | "ECL" | "ECR" | "RC16")) {
        // Modes other than the default selector: computed by the PTX rules only for the default.
        return prmt_mode(a, sel, b, ins);
    }
    let bytes = ((b as u64) << 32 | a as u64).to_le_bytes();
    let mut r = 0u32;
    for k in 0..4 {
        let n = sel >> (4 * k) & 0xf;
        let mut byte = bytes[(n & 7) as usize] as u32;
        if n & 8 != 0 {
            byte = if byte & 0x80 != 0 { 0xff } else { 0 };
        }
        r |= byte << (8 * k);
    }
    r
}

fn prmt_mode(a: u32, sel: u32, b: u32, ins: &Instr) -> u32 {
    let bytes = ((b as u64) << 32 | a as u64).to_le_bytes();
    let s = (sel & 3) as usize;
    let pick = |idx: [usize; 4]| idx.iter().enumerate().fold(0u32, |r, (k, &i)| r | (bytes[i & 7] as u32) << (8 * k));
    let m = ins.mods.iter().find(|m| matches!(m.as_str(), "F4E" | "B4E" | "RC8" | "ECL" | "ECR" | "RC16")).unwrap();
    match m.as_str() {
        "F4E" => pick([s, s + 1, s + 2, s + 3]),
        "B4E" => pick([s + 8, s + 7, s + 6, s + 5].map(|x| x % 8)),
        "RC8" => pick([s; 4]),
        "ECL" => pick([s, s.max(1), s.max(2), s.max(3)].map(|x| x.min(3))),
        "ECR" => pick([0, s.min(1), s.min(2), s.min(3)]),
        _ => pick([s & 2, (s & 2) + 1, s & 2, (s & 2) + 1]),
    }
}

/// `I2F.U32.RP`-style conversion of an integer to f32 with the rounding mode named.
fn i2f(md: Mods, v: u32) -> f32 {
    let signed = md.has(modbit::S32) || !md.has(modbit::U32 | modbit::U16 | modbit::U8);
    let x: i64 = if signed { v as i32 as i64 } else { v as i64 };
    let f = x as f32;
    let back = f as f64;
    let exact = x as f64;
    if md.has(modbit::RP) && back < exact {
        f32::from_bits(if f >= 0.0 { f.to_bits() + 1 } else { f.to_bits() - 1 })
    } else if (md.has(modbit::RM) || md.has(modbit::RZ)) && back > exact {
        f32::from_bits(if f > 0.0 { f.to_bits() - 1 } else { f.to_bits() + 1 })
    } else {
        f
    }
}

fn f2i(md: Mods, f: f32) -> u32 {
    let g = if md.has(modbit::FLOOR) {
        f.floor()
    } else if md.has(modbit::CEIL) {
        f.ceil()
    } else if md.has(modbit::TRUNC) {
        f.trunc()
    } else {
        f.round_ties_even()
    };
    if md.has(modbit::U32) {
        g as u32
    } else {
        g as i32 as u32
    }
}

/// Runs one non-memory, non-control instruction for the lanes `exec`.
pub(super) fn execute(m: &mut Machine, i: usize, op: Op, exec: u32) -> Result<()> {
    let k = m.k;
    let ins = &k.instrs[i];
    let md = m.mods[i];
    let ops = &ins.operands;
    // An instruction of the uniform datapath computes once for the warp.
    let uniform = match ops.first() {
        Some(Operand::Reg(r)) => r.uniform,
        Some(Operand::Pred(p)) => p.uniform && matches!(op, Op::Isetp | Op::Plop3),
        _ => false,
    } && !matches!(op, Op::Vote | Op::Redux);
    // The lanes that compute: the lowest for the uniform datapath.
    let run = if uniform { exec & exec.wrapping_neg() } else { exec };
    let d0 = match ops.first() {
        Some(Operand::Reg(r)) => Some(*r),
        _ => None,
    };
    match op {
        Op::Nop => {}
        Op::Bulk => {
            m.out.bulk.insert(ins.mnemonic());
        }
        Op::Mov | Op::S2r => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let v = match ops.get(1) {
                Some(o) => m.ints(o, run),
                None => LaneVals::unknown(),
            };
            m.set_vals(d, run, &v);
        }
        Op::Imad => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let signed = !md.has(modbit::U32);
            let (a, b) = (m.ints(&ops[1], run), m.ints(&ops[2], run));
            let carry = if md.has(modbit::X) {
                ops.get(4).map_or(Some(PredVals::FALSE), |p| m.preds(Some(p)))
            } else {
                Some(PredVals::FALSE)
            };
            let carry = |l: usize| carry.and_then(|c| c.get(l)).map(u64::from);
            let ext = |x: u32| if signed { x as i32 as i64 as u64 } else { x as u64 };
            if md.has(modbit::WIDE) {
                let c = m.ints64(&ops[3], run);
                let (mut lo, mut hi) = (LaneVals::unknown(), LaneVals::unknown());
                for l in mask_lanes(run) {
                    let v = (|| {
                        let p = ext(a.get(l)?).wrapping_mul(ext(b.get(l)?));
                        Some(p.wrapping_add(c.get(l)?).wrapping_add(carry(l)?))
                    })();
                    lo.put(l, v.map(|x| x as u32));
                    hi.put(l, v.map(|x| (x >> 32) as u32));
                }
                if d.index != RZ {
                    m.set_vals(d, run, &lo);
                    m.set_vals(Reg { index: d.index + 1, ..d }, run, &hi);
                }
            } else if md.has(modbit::HI) {
                let c = m.ints64(&ops[3], run);
                let mut out = LaneVals::unknown();
                for l in mask_lanes(run) {
                    let v = (|| {
                        let (x, y) = (a.get(l)?, b.get(l)?);
                        let p = if signed {
                            (x as i32 as i128 * y as i32 as i128) as u128
                        } else {
                            (x as u128).wrapping_mul(y as u128)
                        };
                        let s = p.wrapping_add(c.get(l)? as u128).wrapping_add(carry(l)? as u128);
                        Some((s >> 32) as u32)
                    })();
                    out.put(l, v);
                }
                m.set_vals(d, run, &out);
            } else {
                let c = m.ints(&ops[3], run);
                let mut out = LaneVals::unknown();
                for l in mask_lanes(run) {
                    let v = (|| {
                        Some(a.get(l)?.wrapping_mul(b.get(l)?).wrapping_add(c.get(l)?).wrapping_add(carry(l)? as u32))
                    })();
                    out.put(l, v);
                }
                m.set_vals(d, run, &out);
            }
        }
        Op::Iadd3 => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            // IADD3 d, [Pc0, [Pc1,]] a, b, c [, Pin0, Pin1]
            let s = srcs(ins, 1 + pred_outs(ops).count());
            // A negated register is added as its two's complement in 33 bits (the carry out
            // of `a + -b` is the "no borrow" of `a - b`).
            let term = |o: Option<&Operand>| -> (LaneVals, bool) {
                match o {
                    None => (LaneVals { v: [0; WARP], k: run }, false),
                    Some(Operand::Reg(r)) if r.neg => (m.ints(&Operand::Reg(Reg { neg: false, ..*r }), run), true),
                    Some(o) => (m.ints(o, run), false),
                }
            };
            let terms = [term(s.first()), term(s.get(1)), term(s.get(2))];
            let carries: Vec<Option<PredVals>> = if md.has(modbit::X) {
                s.get(3..).unwrap_or(&[]).iter().map(|p| m.preds(Some(p))).collect()
            } else {
                Vec::new()
            };
            let mut out = LaneVals::unknown();
            let mut carry_out = [0u32; 2];
            for l in mask_lanes(run) {
                let v = (|| {
                    let mut sum = 0u64;
                    for (t, neg) in &terms {
                        let x = t.get(l)?;
                        sum += if *neg { (!x) as u64 + 1 } else { x as u64 };
                    }
                    for c in &carries {
                        sum += c.and_then(|c| c.get(l))? as u64;
                    }
                    Some(sum)
                })();
                out.put(l, v.map(|x| x as u32));
                if let Some(x) = v {
                    for (k, c) in carry_out.iter_mut().enumerate() {
                        if x >> 32 > k as u64 {
                            *c |= 1 << l;
                        }
                    }
                }
            }
            m.set_vals(d, run, &out);
            for (k, p) in pred_outs(ops).enumerate().take(2) {
                m.set_preds(p, run, carry_out[k], out.k);
            }
        }
        Op::Viadd | Op::Viaddmnmx => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let unsigned = md.has(modbit::U32);
            let (a, b) = (m.ints(&ops[1], run), m.ints(&ops[2], run));
            let (c, min) =
                if op == Op::Viaddmnmx { (Some(m.ints(&ops[3], run)), m.preds(ops.get(4))) } else { (None, None) };
            let mut out = LaneVals::unknown();
            for l in mask_lanes(run) {
                let v = (|| {
                    let s = a.get(l)?.wrapping_add(b.get(l)?);
                    let Some(c) = &c else { return Some(s) };
                    let c = c.get(l)?;
                    let min = min?.get(l)?;
                    let lt = if unsigned { s < c } else { (s as i32) < (c as i32) };
                    Some(if lt == min { s } else { c })
                })();
                out.put(l, v);
            }
            m.set_vals(d, run, &out);
        }
        Op::Elect => {
            let leader = mask_lanes(exec).next().unwrap_or(0);
            for l in mask_lanes(exec) {
                if let Some(Operand::Pred(p)) = ops.first() {
                    m.setp(*p, l, Some(l == leader));
                }
                if let Some(Operand::Reg(r)) = ops.get(1) {
                    m.set(*r, l, Some(leader as u32));
                }
            }
        }
        Op::Lea => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let s = srcs(ins, 1 + pred_outs(ops).count());
            let hi = md.has(modbit::HI);
            let sx = md.has(modbit::SX32);
            let x = md.has(modbit::X);
            let get = |k: usize| s.get(k).map(|o| m.ints(o, run));
            let (a, b) = (m.ints(&s[0], run), m.ints(&s[1], run));
            // LEA d, a, b, shift [, Pin]; LEA.HI d, a, b, c, shift [, Pin]; LEA.HI.SX32 d, a, b, shift
            let (c, sh, rest) = if hi && !sx { (get(2), get(3), 4) } else { (None, get(2), 3) };
            let cin = if x { s.get(rest).map(|p| m.preds(Some(p))) } else { None };
            let mut out = LaneVals::unknown();
            let mut carry_out = [0u32; 2];
            for l in mask_lanes(run) {
                let v = (|| -> Option<u64> {
                    let a = a.get(l)?;
                    let b = b.get(l)? as u64;
                    let sh = sh.as_ref()?.get(l)?;
                    let part = if hi {
                        let c = if sx { (a as i32 >> 31) as u32 } else { c.as_ref()?.get(l)? };
                        let wide = (c as u64) << 32 | a as u64;
                        (if sh >= 64 { 0 } else { (wide << sh) >> 32 }) & 0xffff_ffff
                    } else if sh >= 32 {
                        0
                    } else {
                        ((a as u64) << sh) & 0xffff_ffff
                    };
                    let mut sum = b + part;
                    if let Some(p) = cin {
                        sum += p?.get(l)? as u64;
                    }
                    Some(sum)
                })();
                out.put(l, v.map(|x| x as u32));
                if let Some(x) = v {
                    for (k, c) in carry_out.iter_mut().enumerate() {
                        if x >> 32 > k as u64 {
                            *c |= 1 << l;
                        }
                    }
                }
            }
            m.set_vals(d, run, &out);
            for (k, p) in pred_outs(ops).enumerate().take(2) {
                m.set_preds(p, run, carry_out[k], out.k);
            }
        }
        Op::Shf => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let (a, b, c) = (m.ints(&ops[1], run), m.ints(&ops[2], run), m.ints(&ops[3], run));
            let mut out = LaneVals::unknown();
            for l in mask_lanes(run) {
                out.put(l, (|| Some(shf(md, a.get(l)?, b.get(l)?, c.get(l)?)))());
            }
            m.set_vals(d, run, &out);
        }
        Op::Lop3 => {
            // LOP3.LUT [Pd,] d, a, b, c, lut, Pin
            let pd = match ops.first() {
                Some(Operand::Pred(p)) => Some(*p),
                _ => None,
            };
            let s = srcs(ins, pd.is_some() as usize);
            let Some(Operand::Reg(d)) = s.first() else { return Err(stop(ins, "has no destination register")) };
            let d = *d;
            let fetch = |k: usize| s.get(k).map_or_else(LaneVals::unknown, |o| m.ints(o, run));
            let (a, b, c, lut) = (fetch(1), fetch(2), fetch(3), fetch(4));
            let mut out = LaneVals::unknown();
            for l in mask_lanes(run) {
                out.put(l, (|| Some(lop(lut.get(l)?, a.get(l)?, b.get(l)?, c.get(l)?)))());
            }
            m.set_vals(d, run, &out);
            if let Some(p) = pd {
                let nonzero = mask_lanes(out.k).filter(|&l| out.v[l] != 0).fold(0u32, |acc, l| acc | 1 << l);
                m.set_preds(p, run, nonzero, out.k);
            }
        }
        Op::Plop3 => {
            // PLOP3.LUT Pd, Pq, a, b, c, lut_d, lut_q
            // An unknown input (data read from memory) leaves the output known where every value
            // it could take gives the same bit of the table.
            let lut = |lut: Option<u32>, ins: [Option<bool>; 3]| -> Option<bool> {
                let lut = lut?;
                let mut seen = None;
                for idx in 0..8u32 {
                    let fits = ins.iter().enumerate().all(|(i, v)| v.is_none_or(|v| v == (idx >> (2 - i) & 1 == 1)));
                    if fits {
                        let bit = lut >> idx & 1 == 1;
                        if seen.is_some_and(|s| s != bit) {
                            return None;
                        }
                        seen = Some(bit);
                    }
                }
                seen
            };
            for l in mask_lanes(run) {
                let ins = [m.pred(&ops[2], l), m.pred(&ops[3], l), m.pred(&ops[4], l)];
                if let Some(Operand::Pred(p)) = ops.first() {
                    m.setp(*p, l, lut(m.int(&ops[5], l), ins));
                }
                if let Some(Operand::Pred(q)) = ops.get(1) {
                    m.setp(*q, l, lut(m.int(&ops[6], l), ins));
                }
            }
        }
        Op::Isetp => {
            // ISETP.cmp[.U32].bool[.EX] Pd, Pq, a, b, Pc[, Pex]
            let unsigned = md.has(modbit::U32);
            let ex = md.has(modbit::EX);
            let (a, b) = (m.ints(&ops[2], run), m.ints(&ops[3], run));
            let (pc, low) = (m.preds(ops.get(4)), m.preds(ops.get(5)));
            let (mut v, mut w, mut kv, mut kw) = (0u32, 0u32, 0u32, 0u32);
            for l in mask_lanes(run) {
                let c = pc.as_ref().and_then(|pc| pc.get(l));
                let res = (|| {
                    let (a, b) = (a.get(l)?, b.get(l)?);
                    let (x, y) = if unsigned { (a as i64, b as i64) } else { (a as i32 as i64, b as i32 as i64) };
                    Some(if ex {
                        let low = low?.get(l)?;
                        match md.first {
                            modbit::EQ => x == y && low,
                            modbit::NE => x != y || low,
                            modbit::LT | modbit::LE => x < y || (x == y && low),
                            modbit::GT | modbit::GE => x > y || (x == y && low),
                            _ => return None,
                        }
                    } else {
                        cmp(md, x, y)
                    })
                })();
                if let Some(p) = combine_known(md, res, c) {
                    kv |= 1 << l;
                    v |= (p as u32) << l;
                }
                if let Some(q) = combine_known(md, res.map(|r| !r), c) {
                    kw |= 1 << l;
                    w |= (q as u32) << l;
                }
            }
            if let Some(Operand::Pred(p)) = ops.first() {
                m.set_preds(*p, run, v, kv);
            }
            if let Some(Operand::Pred(q)) = ops.get(1) {
                m.set_preds(*q, run, w, kw);
            }
        }
        Op::Fsetp => {
            for l in mask_lanes(run) {
                let c = m.pred(&ops[4], l);
                let res = (|| {
                    let (a, b) = (m.flt(&ops[2], l)?, m.flt(&ops[3], l)?);
                    let cm = ins.mods.first().map(String::as_str).unwrap_or("");
                    let unordered = a.is_nan() || b.is_nan();
                    let res = match cm {
                        "LT" => a < b,
                        "LE" => a <= b,
                        "GT" => a > b,
                        "GE" => a >= b,
                        "EQ" => a == b,
                        "NE" => a != b && !unordered,
                        "NEU" => a != b,
                        "LTU" => unordered || a < b,
                        "LEU" => unordered || a <= b,
                        "GTU" => unordered || a > b,
                        "GEU" => unordered || a >= b,
                        "EQU" => unordered || a == b,
                        "NAN" => unordered,
                        "NUM" => !unordered,
                        _ => return None,
                    };
                    Some(res)
                })();
                if let Some(Operand::Pred(p)) = ops.first() {
                    m.setp(*p, l, combine_known(md, res, c));
                }
                if let Some(Operand::Pred(q)) = ops.get(1) {
                    m.setp(*q, l, combine_known(md, res.map(|r| !r), c));
                }
            }
        }
        Op::Sel => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let (a, b, p) = (m.ints(&ops[1], run), m.ints(&ops[2], run), m.preds(ops.get(3)));
            let mut out = LaneVals::unknown();
            for l in mask_lanes(run) {
                out.put(l, (|| if p?.get(l)? { a.get(l) } else { b.get(l) })());
            }
            m.set_vals(d, run, &out);
        }
        Op::Imnmx => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let unsigned = md.has(modbit::U32);
            let (a, b, p) = (m.ints(&ops[1], run), m.ints(&ops[2], run), m.preds(ops.get(3)));
            let mut out = LaneVals::unknown();
            for l in mask_lanes(run) {
                let v = (|| {
                    let (a, b) = (a.get(l)?, b.get(l)?);
                    let min = p?.get(l)?;
                    let lt = if unsigned { a < b } else { (a as i32) < (b as i32) };
                    Some(if lt == min { a } else { b })
                })();
                out.put(l, v);
            }
            m.set_vals(d, run, &out);
        }
        Op::Iabs | Op::Popc | Op::Flo | Op::Brev | Op::Sgxt | Op::Bmsk => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            for l in mask_lanes(run) {
                let v = (|| {
                    let a = m.int(&ops[1], l)?;
                    Some(match op {
                        Op::Iabs => (a as i32).unsigned_abs(),
                        Op::Popc => a.count_ones(),
                        Op::Flo => flo(md, a),
                        Op::Brev => a.reverse_bits(),
                        Op::Sgxt => {
                            let bits = m.int(&ops[2], l)?.min(32);
                            if bits == 0 {
                                0
                            } else if bits >= 32 {
                                a
                            } else if md.has(modbit::U32) {
                                a & ((1 << bits) - 1)
                            } else {
                                (((a << (32 - bits)) as i32) >> (32 - bits)) as u32
                            }
                        }
                        _ => {
                            let w = m.int(&ops[2], l)?;
                            let ones = if w >= 32 { u32::MAX } else { (1u32 << w) - 1 };
                            if a >= 32 {
                                0
                            } else {
                                ones << a
                            }
                        }
                    })
                })();
                m.set(d, l, v);
            }
        }
        Op::Prmt => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            for l in mask_lanes(run) {
                let v = (|| Some(prmt(m.int(&ops[1], l)?, m.int(&ops[2], l)?, m.int(ops.get(3)?, l)?, ins, md)))();
                m.set(d, l, v);
            }
        }
        Op::Cs2r => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let narrow = md.has(modbit::B32);
            for l in mask_lanes(run) {
                let v = ops.get(1).and_then(|o| m.int(o, l));
                if narrow {
                    m.set(d, l, v);
                } else {
                    m.set64(d, l, v.map(u64::from));
                }
            }
        }
        Op::Ldc => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let (bytes, wide) = if md.has(modbit::B64) {
                (8, true)
            } else if md.has(modbit::U8) || md.has(modbit::S8) {
                (1, false)
            } else if md.has(modbit::U16) || md.has(modbit::S16) {
                (2, false)
            } else {
                (4, false)
            };
            let signed = md.has(modbit::S8) || md.has(modbit::S16);
            let lane = |l: usize| -> Option<u64> {
                let v = match &ops[1] {
                    Operand::Const(c) => {
                        let at = c.offset + c.reg.map_or(Some(0), |r| m.reg(r, l).map(|x| x as i64))?;
                        m.const_bytes(c.bank, at, bytes)?
                    }
                    o => m.int(o, l)? as u64,
                };
                Some(match (bytes, signed) {
                    (1, true) => v as i8 as i32 as u32 as u64,
                    (2, true) => v as i16 as i32 as u32 as u64,
                    _ => v,
                })
            };
            // A constant at a fixed offset is the same in every lane: read once.
            let fixed = matches!(&ops[1], Operand::Const(c) if c.reg.is_none());
            let (mut lo, mut hi) = (LaneVals::unknown(), LaneVals::unknown());
            if fixed && run != 0 {
                if let Some(v) = lane(run.trailing_zeros() as usize) {
                    lo = LaneVals { v: [v as u32; WARP], k: run };
                    hi = LaneVals { v: [(v >> 32) as u32; WARP], k: run };
                }
            } else {
                for l in mask_lanes(run) {
                    let v = lane(l);
                    lo.put(l, v.map(|x| x as u32));
                    hi.put(l, v.map(|x| (x >> 32) as u32));
                }
            }
            m.set_vals(d, run, &lo);
            if wide && d.index != RZ {
                m.set_vals(Reg { index: d.index + 1, ..d }, run, &hi);
            }
        }
        Op::Vote => {
            // VOTE.ANY d, Pout, P / VOTEU.ANY URd, UPout, P
            let pos = ops.iter().rposition(|o| matches!(o, Operand::Pred(_))).unwrap_or(0);
            let src = &ops[pos];
            let mut ballot = 0u32;
            let mut known = true;
            for l in mask_lanes(exec) {
                match m.pred(src, l) {
                    Some(true) => ballot |= 1 << l,
                    Some(false) => {}
                    None => known = false,
                }
            }
            let result = if md.has(modbit::ALL) {
                known.then_some(ballot == exec)
            } else if md.has(modbit::EQ) {
                known.then_some(ballot == exec || ballot == 0)
            } else {
                known.then_some(ballot != 0)
            };
            let ballot = known.then_some(ballot);
            if let Some(Operand::Reg(d)) = ops.first() {
                let d = *d;
                for l in mask_lanes(exec) {
                    m.set(d, l, ballot);
                    if d.uniform {
                        break;
                    }
                }
            }
            if let Some(Operand::Pred(p)) = ops.get(1).filter(|_| pos > 1) {
                for l in mask_lanes(exec) {
                    m.setp(*p, l, result);
                }
            }
        }
        Op::Redux => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let vals: Vec<Option<u32>> = mask_lanes(exec).map(|l| m.int(&ops[1], l)).collect();
            let v = if vals.iter().all(Option::is_some) {
                let it = vals.iter().map(|v| v.unwrap_or(0));
                let signed = md.has(modbit::S32);
                Some(if md.has(modbit::SUM) {
                    it.fold(0u32, u32::wrapping_add)
                } else if md.has(modbit::AND) {
                    it.fold(u32::MAX, |a, b| a & b)
                } else if md.has(modbit::OR) {
                    it.fold(0, |a, b| a | b)
                } else if md.has(modbit::XOR) {
                    it.fold(0, |a, b| a ^ b)
                } else if md.has(modbit::MIN) {
                    if signed {
                        it.map(|x| x as i32).min().unwrap_or(0) as u32
                    } else {
                        it.min().unwrap_or(0)
                    }
                } else if signed {
                    it.map(|x| x as i32).max().unwrap_or(0) as u32
                } else {
                    it.max().unwrap_or(0)
                })
            } else {
                None
            };
            for l in mask_lanes(exec) {
                m.set(d, l, v);
                if d.uniform {
                    break;
                }
            }
        }
        Op::Match => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let wide = md.has(modbit::U64) || md.has(modbit::B64);
            let vals: Vec<(usize, Option<u64>)> = mask_lanes(exec)
                .map(|l| (l, if wide { m.int64(&ops[1], l) } else { m.int(&ops[1], l).map(u64::from) }))
                .collect();
            for &(l, v) in &vals {
                let r = v.and_then(|v| {
                    let mut mask = 0u32;
                    for &(k, w) in &vals {
                        if w? == v {
                            mask |= 1 << k;
                        }
                    }
                    Some(mask)
                });
                let r = if md.has(modbit::ALL) { r.map(|x| if x == exec { exec } else { 0 }) } else { r };
                m.set(d, l, r);
            }
        }
        Op::Shfl => {
            // SHFL.mode Pout, d, a, b, c
            let Some(Operand::Reg(d)) = ops.get(1) else { return Err(stop(ins, "has no destination register")) };
            let d = *d;
            let mode = ins.mods.first().map(String::as_str).unwrap_or("");
            let mut results = Vec::with_capacity(WARP);
            for l in mask_lanes(exec) {
                let r = (|| {
                    let bval = m.int(&ops[3], l)? & 0x1f;
                    let c = m.int(&ops[4], l)?;
                    let (cval, segmask) = (c & 0x1f, (c >> 8) & 0x1f);
                    let lane = l as u32;
                    let max_lane = (lane & segmask) | (cval & !segmask);
                    let min_lane = lane & segmask;
                    let (j, ok) = match mode {
                        "UP" => (lane.wrapping_sub(bval), (lane as i32 - bval as i32) >= max_lane as i32),
                        "DOWN" => (lane + bval, lane + bval <= max_lane),
                        "BFLY" => (lane ^ bval, (lane ^ bval) <= max_lane),
                        _ => (min_lane | (bval & !segmask), (min_lane | (bval & !segmask)) <= max_lane),
                    };
                    let j = if ok { j } else { lane } as usize;
                    // A source lane outside the active ones: undefined.
                    let v = if exec >> j & 1 == 1 { m.int(&ops[2], j) } else { None };
                    Some((v, ok))
                })();
                results.push((l, r));
            }
            for (l, r) in results {
                m.set(d, l, r.and_then(|x| x.0));
                if let Some(Operand::Pred(p)) = ops.first() {
                    m.setp(*p, l, r.map(|x| x.1));
                }
            }
        }
        Op::Hfma2 => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            // `HFMA2.MMA d, -RZ, RZ, hi, lo`: a constant made of two halves.
            let zero = |o: &Operand| matches!(o, Operand::Reg(r) if r.index == RZ);
            let konst = ops.len() >= 5 && zero(&ops[1]) && zero(&ops[2]);
            for l in mask_lanes(run) {
                let v = if konst {
                    (|| {
                        let half = |o: &Operand| match o {
                            Operand::Float(f) => Some(f16_bits(*f)),
                            Operand::Int(v) => Some(*v as u32 & 0xffff),
                            _ => None,
                        };
                        Some(half(&ops[3])? << 16 | half(&ops[4])?)
                    })()
                } else {
                    None
                };
                m.set(d, l, v);
            }
        }
        Op::Fadd | Op::Fmul | Op::Ffma | Op::Fmnmx | Op::Mufu | Op::I2f | Op::F2i => {
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            let ftz = |f: f32| if md.has(modbit::FTZ) && f.is_subnormal() { 0.0f32.copysign(f) } else { f };
            for l in mask_lanes(run) {
                let v: Option<u32> = (|| {
                    Some(match op {
                        Op::Fadd => ftz(m.flt(&ops[1], l)? + m.flt(&ops[2], l)?).to_bits(),
                        Op::Fmul => ftz(m.flt(&ops[1], l)? * m.flt(&ops[2], l)?).to_bits(),
                        Op::Ffma => ftz(m.flt(&ops[1], l)?.mul_add(m.flt(&ops[2], l)?, m.flt(&ops[3], l)?)).to_bits(),
                        Op::Fmnmx => {
                            let (a, b) = (m.flt(&ops[1], l)?, m.flt(&ops[2], l)?);
                            (if m.pred(&ops[3], l)? { a.min(b) } else { a.max(b) }).to_bits()
                        }
                        Op::Mufu => {
                            let a = m.flt(&ops[1], l)?;
                            if md.has(modbit::RCP) {
                                (1.0 / a).to_bits()
                            } else if md.has(modbit::SQRT) {
                                a.sqrt().to_bits()
                            } else if md.has(modbit::RSQ) {
                                (1.0 / a.sqrt()).to_bits()
                            } else {
                                // Transcendentals: hardware approximations, never exact here.
                                return None;
                            }
                        }
                        Op::I2f => {
                            if md.has(modbit::F64 | modbit::F16 | modbit::S64 | modbit::U64) {
                                return None;
                            }
                            i2f(md, m.int(&ops[1], l)?).to_bits()
                        }
                        _ => {
                            if md.has(modbit::F64 | modbit::S64 | modbit::U64 | modbit::F16) {
                                return None;
                            }
                            f2i(md, m.flt(&ops[1], l)?)
                        }
                    })
                })();
                m.set(d, l, v);
            }
            if matches!(op, Op::I2f | Op::F2i) && md.has(modbit::F64 | modbit::S64 | modbit::U64) {
                for l in mask_lanes(run) {
                    m.set64(d, l, None);
                }
            }
        }
        Op::P2r => {
            // P2R d, PR, a, mask: predicates P0..P6 as bits, under the mask.
            let d = d0.ok_or_else(|| stop(ins, "has no destination register"))?;
            for l in mask_lanes(run) {
                let v = (|| {
                    let keep = m.int(ops.get(2)?, l)?;
                    let mask = m.int(ops.get(3)?, l)?;
                    let mut bits = 0u32;
                    for p in 0..7 {
                        if mask >> p & 1 == 1 {
                            if m.w.pk[p] >> l & 1 == 0 {
                                return None;
                            }
                            bits |= (m.w.p[p] >> l & 1) << p;
                        }
                    }
                    Some((keep & !mask) | bits)
                })();
                m.set(d, l, v);
            }
        }
        Op::R2p => {
            // R2P PR, a, mask
            for l in mask_lanes(run) {
                let a = ops.get(1).and_then(|o| m.int(o, l));
                let mask = ops.get(2).and_then(|o| m.int(o, l)).unwrap_or(0x7f);
                for p in 0..7u8 {
                    if mask >> p & 1 == 1 {
                        m.setp(PredReg { index: p, not: false, uniform: false }, l, a.map(|x| x >> p & 1 == 1));
                    }
                }
            }
        }
        Op::Opaque(n) => {
            m.out.opaque.insert(ins.opcode.clone());
            if let Some(d) = regs(ins).first().copied() {
                for l in mask_lanes(run) {
                    for k in 0..n as u16 {
                        let idx = d.index as u16 + k;
                        if idx < RZ as u16 {
                            m.set(Reg { index: idx as u8, ..d }, l, None);
                        }
                    }
                }
            }
            for o in ops.iter().take_while(|o| matches!(o, Operand::Pred(_))) {
                if let Operand::Pred(p) = o {
                    for l in mask_lanes(run) {
                        m.setp(*p, l, None);
                    }
                }
            }
        }
        Op::OpaquePred => {
            m.out.opaque.insert(ins.opcode.clone());
            for o in ops.iter().take_while(|o| matches!(o, Operand::Pred(_))) {
                if let Operand::Pred(p) = o {
                    for l in mask_lanes(run) {
                        m.setp(*p, l, None);
                    }
                }
            }
            if let Some(Operand::Reg(d)) = ops.iter().find(|o| matches!(o, Operand::Reg(_))) {
                for l in mask_lanes(run) {
                    m.set(*d, l, None);
                }
            }
        }
        Op::Memory | Op::Bra | Op::Exit | Op::Call | Op::Ret | Op::Bssy | Op::Bsync | Op::Break => {}
    }
    Ok(())
}

/// A memory instruction's result registers: a load's value (from the fill, where the launch
/// gives one), an atomic's old value; unknown otherwise.
/// What a texture fetch or a surface read writes: its destination registers, unknown in the
/// lanes of `exec`. A fetch writes its first components to the second register operand (a pair)
/// and the rest to the first (`TLD.LZ R10, R8, R5, ...`: R8, R9, R10, R11; `RZ, R7`: R7 alone,
/// for one component); a surface read writes consecutive registers from its first.
pub(super) fn texture_result(m: &mut Machine, i: usize, class: MemClass, exec: u32) {
    if class.kind != AccessKind::Load {
        return;
    }
    let ins = &m.k.instrs[i];
    let regs: Vec<Reg> =
        ins.operands.iter().filter_map(|o| if let Operand::Reg(r) = o { Some(*r) } else { None }).collect();
    let n = class.width.div_ceil(4);
    let mut written: Vec<u32> = Vec::new();
    if class.space == Some(Space::Texture) {
        if let [hi, lo, ..] = regs.as_slice() {
            written.extend((0..n.min(2)).map(|k| lo.index as u32 + k).filter(|_| lo.index != RZ && !lo.uniform));
            written.extend(
                (0..n.saturating_sub(2)).map(|k| hi.index as u32 + k).filter(|_| hi.index != RZ && !hi.uniform),
            );
        }
    } else if let Some(d) = regs.first().filter(|d| d.index != RZ && !d.uniform) {
        written.extend((0..n).map(|k| d.index as u32 + k));
    }
    for idx in written.into_iter().filter(|&x| x < RZ as u32) {
        m.w.rk[idx as usize] &= !exec;
    }
}

pub(super) fn memory_result(
    m: &mut Machine,
    i: usize,
    class: MemClass,
    exec: u32,
    base: Option<Base>,
    space: Space,
) -> Result<()> {
    let k = m.k;
    let ins = &k.instrs[i];
    let md = m.mods[i];
    let returns = matches!(class.kind, AccessKind::Load | AccessKind::Atom);
    if !returns {
        return Ok(());
    }
    let Some(Operand::Reg(d)) = ins.operands.iter().find(|o| matches!(o, Operand::Reg(_))) else { return Ok(()) };
    let d = *d;
    if ins.operands.first().is_some_and(|o| matches!(o, Operand::Pred(_))) {
        if let Some(Operand::Pred(p)) = ins.operands.first() {
            for l in mask_lanes(exec) {
                m.setp(*p, l, None);
            }
        }
    }
    let nregs = match class.matrix {
        Some(n) => n,
        None => class.width.div_ceil(4),
    };
    let filled = m.s.fills.iter().any(Option::is_some);
    if !filled && !d.uniform {
        // No array has data: every loaded value is unknown.
        for k in 0..nregs {
            let idx = d.index as u32 + k;
            if idx < RZ as u32 {
                m.w.rk[idx as usize] &= !exec;
            }
        }
        return Ok(());
    }
    let addr_op = ins.operands.iter().find_map(|o| if let Operand::Mem(a) = o { Some(a.clone()) } else { None });
    for l in mask_lanes(exec) {
        let mut value = None;
        if class.kind == AccessKind::Load && space == Space::Global && nregs == 1 && class.matrix.is_none() {
            if let Some(a) = &addr_op {
                if let Some(addr) = m.lane_address(a, l) {
                    let b = base.or_else(|| m.base_of(addr, addr));
                    value = m.fill_value(b, addr, class.width);
                    if value.is_some() {
                        // Sub-word loads zero- or sign-extend as the mnemonic says.
                        let v = value.unwrap_or(0);
                        value = Some(match class.width {
                            1 if md.has(modbit::S8) => v as u8 as i8 as i32 as u32,
                            1 => v & 0xff,
                            2 if md.has(modbit::S16) => v as u16 as i16 as i32 as u32,
                            2 => v & 0xffff,
                            _ => v,
                        });
                    }
                }
            }
        }
        for k in 0..nregs {
            let idx = d.index as u32 + k;
            if idx < RZ as u32 {
                m.set(Reg { index: idx as u8, ..d }, l, if k == 0 { value } else { None });
            }
        }
    }
    Ok(())
}
