//! The SASS a GPU executes, as the SASS front end reads it from `nvdisasm` (one function of a
//! cubin): instructions with their guard predicate, opcode, modifiers and operands, the source
//! line each maps to, and the kernel's parameter layout in constant bank 0.
//!
//! This is the third front end's IR: [`crate::engine::sass`] runs it lane by lane. It carries no
//! semantics of its own; an instruction is what `nvdisasm` printed, split into parts.
//!
//! Example: `@!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64+0x10] ;` is an [`Instr`] with
//! `guard = Some(Guard { pred: Pred::P(0), negated: true })`, `opcode = "LDG"`,
//! `mods = ["E", "128", "CONSTANT"]` and operands `[Reg(4), Mem { .. }]`.

/// A register operand: `R7`, `-R7`, `|R7|`, `~R7`, `R2.64` (a pair), `RZ` (index 255).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reg {
    pub index: u8,
    /// `.64`: the pair `index, index + 1`.
    pub wide: bool,
    pub neg: bool,
    pub not: bool,
    pub abs: bool,
    /// A uniform register (`UR4`; `URZ` is index 255).
    pub uniform: bool,
    /// A part of the register read on its own, zero-extended: `(shift, bits)` of `.B0`..`.B3`
    /// (a byte) or `.H0`/`.H1` (a half); `(0, 32)` for the whole register.
    pub part: (u8, u8),
}

impl Reg {
    /// The part of `v` this operand reads (see [`Reg::part`]).
    pub fn select(&self, v: u32) -> u32 {
        match self.part {
            (0, 32) => v,
            (shift, bits) => (v >> shift) & ((1u32 << bits) - 1),
        }
    }
}

pub const RZ: u8 = 255;
pub const PT: u8 = 7;

/// A predicate operand: `P0`..`P6`, `PT` (index 7), `UP0`.., `UPT`; `!` negates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PredReg {
    pub index: u8,
    pub not: bool,
    pub uniform: bool,
}

/// One term of an address: `[R2.64+UR4+0x10]` has a register, a uniform register and an
/// offset.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Address {
    pub reg: Option<Reg>,
    pub ureg: Option<Reg>,
    pub offset: i64,
    /// `desc[URx]`: a global-memory descriptor (the address is the rest).
    pub desc: bool,
    /// `R0.X4`: the register term is multiplied by this (0 or 1: not scaled).
    pub scale: u8,
}

/// A constant-bank read: `c[0x0][0x210]`, `c[0x0][R2+0x4]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConstRef {
    pub bank: u32,
    pub reg: Option<Reg>,
    pub offset: i64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Reg(Reg),
    Pred(PredReg),
    /// An integer immediate (`0x10`, `-0x1`).
    Int(i64),
    /// A floating-point immediate (`0.5`, `+INF`, `1`) as an `f32`, read once by the front end
    /// (an f16 instruction rounds it again).
    Float(f32),
    Const(ConstRef),
    Mem(Address),
    /// `SR_TID.X`, `SR_CTAID.Y`, `SR_LANEID`, `SRZ`.
    Special(Special),
    /// A branch target: the instruction index it names.
    Target(usize),
    /// `32@lo((fn + .L_x_3))`: a code address (the return address a `CALL` leaves for `RET`),
    /// held as the instruction index of the label (0 for `32@hi`).
    LabelValue(i64),
    /// `B0`..`B15`: a convergence barrier register.
    Barrier(u8),
    /// Anything else, as printed (kept so that an unmodelled use can name it).
    Other(String),
}

/// A special register, decoded once (the engine reads them per lane).
#[derive(Clone, Debug, PartialEq)]
pub enum Special {
    /// `SRZ`: zero.
    Zero,
    /// `SR_TID.X` .. `.Z` (dimension 0..2).
    Tid(u8),
    Ctaid(u8),
    Ntid(u8),
    Nctaid(u8),
    LaneId,
    /// `SR_SWINHI`, `SR_SWINLO`: the shared window's address.
    SwinHi,
    SwinLo,
    /// `SR_CgaCtaId`: the block's rank in its cluster (0: clusters of one block).
    CgaCtaId,
    EqMask,
    LtMask,
    LeMask,
    GtMask,
    GeMask,
    /// Any other, by name (clocks, SM ids): unknown to the model.
    Other(String),
}

impl Special {
    pub fn parse(s: &str) -> Special {
        let dim = |d: &str| match d {
            "X" => Some(0),
            "Y" => Some(1),
            "Z" => Some(2),
            _ => None,
        };
        if let Some((base, d)) = s.rsplit_once('.') {
            if let Some(d) = dim(d) {
                match base {
                    "SR_TID" => return Special::Tid(d),
                    "SR_CTAID" => return Special::Ctaid(d),
                    "SR_NTID" => return Special::Ntid(d),
                    "SR_NCTAID" => return Special::Nctaid(d),
                    _ => {}
                }
            }
        }
        match s {
            "SRZ" => Special::Zero,
            "SR_LANEID" => Special::LaneId,
            "SR_SWINHI" => Special::SwinHi,
            "SR_SWINLO" => Special::SwinLo,
            "SR_CgaCtaId" | "SR_CGACTAID" => Special::CgaCtaId,
            "SR_EQMASK" => Special::EqMask,
            "SR_LTMASK" => Special::LtMask,
            "SR_LEMASK" => Special::LeMask,
            "SR_GTMASK" => Special::GtMask,
            "SR_GEMASK" => Special::GeMask,
            _ => Special::Other(s.to_string()),
        }
    }
}

/// A floating-point immediate as `nvdisasm` prints it (`-0.5`, `+INF`, `QNAN`).
pub fn parse_f32(s: &str) -> Option<f32> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.trim_start_matches('+')),
    };
    let v: f32 = match t {
        "INF" => f32::INFINITY,
        "QNAN" | "NAN" => f32::NAN,
        _ => t.parse().ok()?,
    };
    Some(if neg { -v } else { v })
}

/// `@P0`, `@!UP1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard {
    pub pred: PredReg,
}

/// Where an instruction comes from: the innermost frame of the line table outside the
/// toolkit's own headers (a helper inlined from the user's file keeps its own line).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Loc {
    pub file: String,
    pub line: u32,
}

#[derive(Clone, Debug)]
pub struct Instr {
    /// Byte offset within the function, as `nvdisasm` prints it (`/*0120*/`).
    pub offset: u32,
    pub guard: Option<Guard>,
    /// The mnemonic without modifiers: `LDG`, `IMAD`, `BRA`.
    pub opcode: String,
    /// Modifiers in order: `LDG.E.128` -> `["E", "128"]`.
    pub mods: Vec<String>,
    pub operands: Vec<Operand>,
    pub loc: Option<Loc>,
    /// The instruction as printed, for listings and messages.
    pub text: String,
}

impl Instr {
    pub fn has(&self, m: &str) -> bool {
        self.mods.iter().any(|x| x == m)
    }
    /// The full mnemonic: `LDG.E.128`.
    pub fn mnemonic(&self) -> String {
        let mut s = self.opcode.clone();
        for m in &self.mods {
            s.push('.');
            s.push_str(m);
        }
        s
    }
}

/// One kernel parameter's place in constant bank 0, from the cubin's `.nv.info`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSlot {
    /// Byte offset in bank 0 (`0x210` for the first parameter on sm_90).
    pub offset: u32,
    pub size: u32,
}

/// One `__global__` function of a cubin.
#[derive(Clone, Debug)]
pub struct SassKernel {
    /// The symbol (mangled) name.
    pub symbol: String,
    /// The demangled name without parameters (`vec_add`, `scale<float>`), or the symbol.
    pub name: String,
    /// The demangled signature's parameter types, where the symbol is mangled.
    pub param_types: Vec<String>,
    pub params: Vec<ParamSlot>,
    /// Static shared memory of the kernel in bytes (`.nv.shared.<symbol>`).
    pub shared_bytes: u64,
    pub instrs: Vec<Instr>,
}

/// The cubin's kernels and how they were made.
#[derive(Clone, Debug, Default)]
pub struct SassModule {
    pub kernels: Vec<SassKernel>,
    /// `sm_90`.
    pub arch: String,
    /// What compiled it, where known: `nvcc 13.0.88`.
    pub compiler: Option<String>,
    /// What disassembled it: `nvdisasm 13.5.37`.
    pub disassembler: String,
    /// How it was compiled where that differs from the file as written (stated on the sheet).
    pub notes: Vec<String>,
}

mod classify;
pub use classify::{bulk_copy, classify, is_texture, unsupported_memory, MemClass};
