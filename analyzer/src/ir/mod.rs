//! The kernel IR: what every front end lowers to and every engine executes.
//!
//! A kernel is a tree of structured statements ([`Stmt`]) over side-effect-free expressions
//! ([`Expr`]) whose only reads of memory are [`Expr::Load`]. C's typing rules (integer
//! promotions, usual arithmetic conversions, pointer scaling) are applied by the front end:
//! every arithmetic node carries its result type and its operands are already converted, so an
//! engine never needs to know C. Every memory access is one [`MemOp`] with its source span, so a
//! sheet row is always traceable to the user's text. The control-flow graph ([`cfg`]) is a view
//! derived from the tree.

pub mod branch_merge;
pub mod cfg;
pub mod dce;
pub mod dead_stores;
pub mod licm;
pub mod print;
pub mod provenance;
pub mod sass;
pub mod shared_layout;
pub mod sink;
pub mod unroll;
pub mod vector_loads;
pub mod vn;

use crate::source::Span;
use serde::Serialize;

/// Integer type: width in bits and signedness. `bool` is [`IntTy::BOOL`], one bit wide (its
/// values are 0 and 1, what comparisons yield); in memory it takes a byte ([`Ty::size`]).
/// Example: `unsigned short` is `IntTy { bits: 16, signed: false }` ([`IntTy::U16`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntTy {
    pub bits: u8,
    pub signed: bool,
}

impl IntTy {
    pub const BOOL: IntTy = IntTy { bits: 1, signed: false };
    pub const I8: IntTy = IntTy { bits: 8, signed: true };
    pub const U8: IntTy = IntTy { bits: 8, signed: false };
    pub const I16: IntTy = IntTy { bits: 16, signed: true };
    pub const U16: IntTy = IntTy { bits: 16, signed: false };
    pub const I32: IntTy = IntTy { bits: 32, signed: true };
    pub const U32: IntTy = IntTy { bits: 32, signed: false };
    pub const I64: IntTy = IntTy { bits: 64, signed: true };
    pub const U64: IntTy = IntTy { bits: 64, signed: false };

    /// Wraps an exact value into this type's range, as C conversion to it does.
    pub fn wrap(self, v: i128) -> i128 {
        if self.bits == 1 {
            return (v != 0) as i128;
        }
        let m = (1i128 << self.bits) - 1;
        let u = v & m;
        if self.signed && u >> (self.bits - 1) & 1 == 1 {
            u - (1i128 << self.bits)
        } else {
            u
        }
    }

    pub fn name(self) -> &'static str {
        match (self.bits, self.signed) {
            (1, _) => "bool",
            (8, true) => "char",
            (8, false) => "unsigned char",
            (16, true) => "short",
            (16, false) => "unsigned short",
            (32, true) => "int",
            (32, false) => "unsigned int",
            (64, true) => "long long",
            _ => "unsigned long long",
        }
    }
}

/// A value type the engines distinguish.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    /// An integer or `bool`: `int` is `Ty::Int(IntTy::I32)`.
    Int(IntTy),
    /// Floating point of the given byte width (2, 4, 8): `half`, `__nv_bfloat16` (2), `float`
    /// (4), `double` (8).
    Float(u8),
    /// A CUDA vector type or another value moved whole (`float4`, `__half2`, a structure): its
    /// name as written and its size in bytes. `float4` is `Vector { name: "float4", bytes: 16 }`;
    /// its lanes are the name's last digit ([`crate::front::cuda::component_layout`]).
    Vector { name: String, bytes: u64 },
    /// A pointer: `const float* __restrict__` into global memory.
    Ptr(Box<PtrTy>),
    /// `void` (a pointer's pointee only; one byte in pointer arithmetic, as GNU C has it).
    Void,
}

impl Ty {
    /// A plain pointer (not `const`, `__restrict__` nor `volatile`) to `pointee` in shared memory:
    /// a shared array decayed to its first element.
    pub fn shared_ptr(pointee: Ty) -> Ty {
        Ty::Ptr(Box::new(PtrTy { pointee, space: Space::Shared, is_const: false, restrict: false, volatile: false }))
    }
    /// Size in bytes of a value of this type in memory (a structure may be up to 2^64 - 1
    /// bytes, as nvcc allows).
    pub fn size(&self) -> u64 {
        match self {
            Ty::Int(t) => (t.bits.max(8) / 8) as u64,
            Ty::Float(b) => *b as u64,
            Ty::Vector { bytes, .. } => *bytes,
            Ty::Ptr(_) => 8,
            Ty::Void => 1,
        }
    }
    pub fn is_int(&self) -> bool {
        matches!(self, Ty::Int(_))
    }
    pub fn display(&self) -> String {
        match self {
            Ty::Int(t) => t.name().to_string(),
            Ty::Float(2) => "half".into(),
            Ty::Float(4) => "float".into(),
            Ty::Float(_) => "double".into(),
            Ty::Vector { name, .. } => name.clone(),
            Ty::Ptr(p) => format!("{}*", p.pointee.display()),
            Ty::Void => "void".into(),
        }
    }
}

/// Where a pointer points, or where a memory operation goes. A sheet row and the JSON name it
/// `global`, `shared`, `texture` or `surface`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Space {
    #[default]
    Global,
    Shared,
    /// A texture fetch (`tex1Dfetch`, `tex2D`, ...: TEX, TLD, TLD4 in SASS). Never a pointer's
    /// space: the texture unit computes the address from the texture's handle and the
    /// coordinates, through a binding and a layout the kernel's source does not give. Its
    /// operation has no address ([`Space::has_address`]).
    Texture,
    /// A surface read or write (`surf2Dread`, `surf2Dwrite`, ...: SULD, SUST). Like
    /// [`Space::Texture`], never a pointer's space and without an address.
    Surface,
}

impl Space {
    /// The name a sheet row and the JSON give the space.
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Texture => "texture",
            Space::Surface => "surface",
        }
    }
    /// Whether an operation in this space reads or writes at an address the engines compute
    /// (global and shared memory); texture and surface operations have only their handle and
    /// coordinates ([`Expr::Load`]).
    pub fn has_address(self) -> bool {
        matches!(self, Space::Global | Space::Shared)
    }
}

impl std::fmt::Display for Space {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// A space equals its name (`Space::Global == "global"`), as tools reading the JSON know it.
impl PartialEq<&str> for Space {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

/// What a pointer points to and how: `const float* __restrict__ a` is `PtrTy { pointee:
/// Ty::Float(4), space: Space::Global, is_const: true, restrict: true, volatile: false }`.
#[derive(Clone, Debug, PartialEq)]
pub struct PtrTy {
    pub pointee: Ty,
    /// Global unless the pointer is derived from a `__shared__` array.
    pub space: Space,
    /// The pointee is `const`: loads through it may take the read-only path.
    pub is_const: bool,
    /// `__restrict__`: no other pointer of the kernel aliases it (the compiler may keep its
    /// loaded values across stores through others).
    pub restrict: bool,
    /// `volatile`: every access is issued (never removed by the compiler).
    pub volatile: bool,
}

/// The memory object a pointer value is derived from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    /// A pointer parameter's buffer (or a file-scope `__device__` variable's).
    Param(ParamId),
    /// A `__shared__` array.
    Shared(SharedId),
}

/// A parameter: its index in [`Kernel::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParamId(pub u32);
/// A `__shared__` array: its index in [`Kernel::shared`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedId(pub u32);
/// A local variable (a register): its index in [`Kernel::locals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);
/// A memory operation: its index in [`Kernel::mem_ops`], which is also its sheet row's `op_id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemOpId(pub u32);

/// A kernel parameter as declared (`const float* a` is a [`Ty::Ptr`]; `int n` a [`Ty::Int`]).
#[derive(Clone, Debug)]
pub struct Param {
    pub name: String,
    pub ty: Ty,
    pub span: Span,
    /// A file-scope `__device__` variable, not an argument of the launch: a pointer to its own
    /// buffer in global memory (the variable's accesses go through it).
    pub device_variable: bool,
    /// A file-scope `__constant__` variable (or a member of one), not an argument of the launch:
    /// the value the host sets with `cudaMemcpyToSymbol`, given like a parameter's
    /// (`--arg c_n=100`, `--arg params.width=64`).
    pub constant_variable: bool,
}

/// A `__shared__` array: `__shared__ float tile[32][33]` has `elem: Ty::Float(4)`, `dims:
/// [32, 33]`.
#[derive(Clone, Debug)]
pub struct SharedArray {
    pub name: String,
    pub elem: Ty,
    /// Static dimensions, outermost first; empty for `extern __shared__ T s[]`.
    pub dims: Vec<u64>,
    pub is_extern: bool,
    pub span: Span,
    /// Alignment in bytes: the declaration's (`__align__(16)`) or its element type's.
    pub align: u64,
    /// Declared in the kernel's own body (not in an inlined function, not at file scope): nvcc
    /// emits these first, in declaration order ([`shared_layout`]).
    pub in_kernel: bool,
}

impl SharedArray {
    /// Saturating: a size of 2^64 or more reads as `u64::MAX` (refused by the launch), never
    /// wrapped into a small one.
    pub fn bytes(&self) -> u64 {
        self.dims.iter().fold(self.elem.size(), |z, &d| z.saturating_mul(d))
    }
}

/// A local variable: a register of each thread (`int i`, or a temporary `$t3` a front end
/// made). Never memory traffic.
#[derive(Clone, Debug)]
pub struct Local {
    pub name: String,
    pub ty: Ty,
}

/// What a memory operation does. A sheet row and the JSON name it by [`AccessKind::name`]
/// (`load`, `store`, `red`, `atom`, `async_copy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    #[default]
    Load,
    Store,
    /// A global atomic whose result is unused: the compiler emits a reduction (RED).
    Red,
    /// An atomic whose result is used (ATOM, or ATOMS in shared memory).
    Atom,
    /// A global-to-shared asynchronous copy (LDGSTS): its row counts the global side.
    AsyncCopy,
}

impl AccessKind {
    /// The name a sheet row and the JSON give the operation.
    pub fn name(self) -> &'static str {
        match self {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
            AccessKind::Red => "red",
            AccessKind::Atom => "atom",
            AccessKind::AsyncCopy => "async_copy",
        }
    }
    /// Atomics read and write memory: they are never removed, and they end what a thread holds.
    pub fn is_atomic(self) -> bool {
        matches!(self, AccessKind::Red | AccessKind::Atom)
    }
}

impl std::fmt::Display for AccessKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.name())
    }
}

/// A kind equals its name (`AccessKind::Load == "load"`), as tools reading the JSON know it.
impl PartialEq<&str> for AccessKind {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

/// The cache operator of an access, as written (`__ldcg` -> `Cg`), or the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CacheOp {
    /// No operator written: a plain `a[i]`.
    Default,
    /// `__ldg`: read-only (non-coherent) path.
    Nc,
    /// `__ldca`: cache at all levels.
    Ca,
    /// `__ldcg`, `__stcg`: cache in L2, not L1.
    Cg,
    /// `__ldcs`, `__stcs`: streaming, likely read or written once.
    Cs,
    /// `__ldlu`: last use.
    Lu,
    /// `__ldcv`: volatile, fetched again on every read.
    Cv,
    /// `__stwt`: write through.
    Wt,
}

impl CacheOp {
    pub fn name(self) -> &'static str {
        match self {
            CacheOp::Default => "default",
            CacheOp::Nc => "nc (__ldg)",
            CacheOp::Ca => "ca",
            CacheOp::Cg => "cg",
            CacheOp::Cs => "cs",
            CacheOp::Lu => "lu",
            CacheOp::Cv => "cv",
            CacheOp::Wt => "wt",
        }
    }
}

/// One source-level memory instruction (or one SASS memory instruction, lifted): `c[i] = a[i]
/// + b[i]` has three, two loads and a store, each 4 bytes wide.
#[derive(Clone, Debug)]
pub struct MemOp {
    pub kind: AccessKind,
    pub space: Space,
    /// Bytes moved per active lane.
    pub width: u32,
    pub cache: CacheOp,
    /// Through a `volatile` pointer: never removed nor merged by the compiler model.
    pub volatile: bool,
    /// The access as written (`a[i]`, `__ldg(&a[i])`), on one line. For display only: address
    /// identity for load removal is structural ([`vn::address_numbers`]), never this text.
    pub text: String,
    pub span: Span,
    /// An atomic whose address is the same in every lane as far as the compiler can tell: nvcc
    /// performs it once per warp (one lane), so its lanes cost one pass.
    pub warp_aggregated: bool,
    /// `ldmatrix`/`stmatrix` (`LDSM`/`STSM`): the number of 8x8 matrices (1, 2 or 4), each row
    /// 16 bytes; lanes `8k..8k+7` give matrix `k`'s row addresses and the other lanes' addresses
    /// are ignored ([`crate::engine::count::address_lanes`]). 0 for every other access.
    pub matrix: u8,
    /// `atomicCAS`: a loop whose exit depends on its result retries until the swap sticks
    /// ([`provenance::retrying_loops`]).
    pub compare_and_swap: bool,
}

/// CUDA's built-in variables; the `u8` is the dimension (0 = `x`, 1 = `y`, 2 = `z`):
/// `threadIdx.y` is `Builtin::ThreadIdx(1)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    ThreadIdx(u8),
    BlockIdx(u8),
    BlockDim(u8),
    GridDim(u8),
    /// `warpSize` (32).
    WarpSize,
}

/// Binary operators. On integers ([`Expr::Binary`]) they follow C in the node's type: `Div`
/// and `Rem` truncate toward zero, `Shr` is arithmetic on signed types, the comparisons yield
/// `bool`; `Min` and `Max` are `min(a, b)` and `max(a, b)`. On floats ([`Expr::FloatBinary`])
/// the arithmetic and comparisons only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    Min,
    Max,
}

/// Unary operators on integers: `-x` (`Neg`), `~x` (`Not`), `!x` (`LogicalNot`, yields `bool`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    LogicalNot,
}

/// A value computed across the lanes of a warp (shuffles, votes, reductions) or a lane's own
/// bit operation (`__popc`); the engines compute it lane by lane from the operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WarpOp {
    /// `__shfl_sync`: args `[value, src_lane, width]`.
    Shfl,
    /// `__shfl_up_sync`: args `[value, delta, width]`.
    ShflUp,
    /// `__shfl_down_sync`: args `[value, delta, width]`.
    ShflDown,
    /// `__shfl_xor_sync`: args `[value, lane_mask, width]`.
    ShflXor,
    /// `__ballot_sync`: args `[pred]`; the mask of the active lanes where it holds.
    Ballot,
    /// `coalesced_group::ballot`: args `[pred]`; the ballot packed to the group's ranks, bit `r`
    /// for the active lane of rank `r` (the `r`-th lowest active lane), as the header's
    /// `_packLanes` does (identity when all 32 lanes are active).
    BallotRanks,
    /// `__any_sync`: args `[pred]`; whether it holds in any active lane.
    Any,
    /// `__all_sync`: args `[pred]`; whether it holds in every active lane.
    All,
    /// `__activemask()`: no args.
    ActiveMask,
    /// `__match_any_sync`: args `[value]`; the mask of the active lanes holding the same value.
    MatchAny,
    /// `__reduce_*_sync`, `cg::reduce`: args `[value, width]`; every active lane of each
    /// `width`-lane segment gets the reduction over that segment's active lanes.
    Reduce(ReduceOp),
    /// Lane-local bit operations on a value of `bits` bits, args `[x]`: `__popc` (set bits),
    Popc(u8),
    /// `__ffs` (one plus the lowest set bit's index, 0 for none),
    Ffs(u8),
    /// `__clz` (leading zeros),
    Clz(u8),
    /// `__brev` (bits reversed).
    Brev(u8),
}

/// A `#pragma unroll` above a loop, as nvcc reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnrollPragma {
    /// `#pragma unroll`: unroll completely when the trip count is a constant.
    Full,
    /// `#pragma unroll N`: copies of N iterations (`1`: the loop stays rolled).
    By(u32),
    /// A count the preprocessor cannot read as a number (a constant expression).
    Unknown,
}

/// The operation of a [`WarpOp::Reduce`]: `__reduce_add_sync` is `ReduceOp::Add`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// Expressions. Pure, except that [`Expr::Load`] reads memory (and is counted).
#[derive(Clone, Debug)]
pub enum Expr {
    /// An integer constant of its type: `3u` is `Int(3, IntTy::U32)`.
    Int(i128, IntTy),
    /// A floating constant: `0.5f` is `Float(0.5)`.
    Float(f64),
    /// A local variable's value.
    Local(LocalId),
    /// A parameter's value (a pointer's is its buffer's address).
    Param(ParamId),
    /// `threadIdx.x` and the other [`Builtin`]s.
    Builtin(Builtin),
    /// Integer arithmetic in type `ty` (operands already converted to `ty`; comparisons compare
    /// in `ty` and yield `bool`). Division by zero is an error at `span`.
    Binary { op: BinOp, ty: IntTy, lhs: Box<Expr>, rhs: Box<Expr>, span: Span },
    /// Floating arithmetic: values are tracked so that float parameters cast to int work.
    FloatBinary { op: BinOp, lhs: Box<Expr>, rhs: Box<Expr> },
    /// `-x`, `~x`, `!x` in type `ty`.
    Unary { op: UnOp, ty: IntTy, arg: Box<Expr> },
    /// Conversion to integer type, from integer, float, bool or pointer.
    ToInt { ty: IntTy, arg: Box<Expr> },
    /// Conversion to a floating type: `(float)i`.
    ToFloat(Box<Expr>),
    /// `&&` and `||`: the right side is evaluated only for lanes that need it.
    Logical { and: bool, lhs: Box<Expr>, rhs: Box<Expr> },
    /// `c ? a : b`: each side evaluated only for its lanes.
    Select { cond: Box<Expr>, then: Box<Expr>, els: Box<Expr> },
    /// Pointer plus a byte offset (the front end scales indices by the element size).
    PtrOffset { ptr: Box<Expr>, bytes: Box<Expr> },
    /// Address of a shared array's first byte.
    SharedBase(SharedId),
    /// `p - q` in bytes, for pointers into the same object.
    PtrDiff { lhs: Box<Expr>, rhs: Box<Expr> },
    /// A shared-memory address as inline PTX takes it (`cvta.to.shared`'s 32-bit value,
    /// `(uint32_t)__cvta_generic_to_shared(&s[i])`, and arithmetic on it), as a pointer into the
    /// shared array that holds that byte: a shared pointer converted to an integer and back is
    /// the same address. An integer no shared array holds, or a value the analysis does not
    /// know, is an error at `span`; a pointer into shared memory stays itself.
    SharedAddress { addr: Box<Expr>, span: Span },
    /// A read of memory operation `op` at byte address `addr` (a pointer value): `a[i]` is
    /// `Load { op, addr: PtrOffset { ptr: Param(a), bytes: i * 4 } }`. For a texture fetch or
    /// a surface read (`op` in [`Space::Texture`] or [`Space::Surface`]) `addr` is not an
    /// address but the operands the texture unit takes, an [`Expr::Opaque`] of the handle and
    /// the coordinates ([`TEXTURE_OPERANDS`]): evaluated for the loads inside them, never
    /// turned into sectors. Its value is one the analysis does not know.
    Load { op: MemOpId, addr: Box<Expr> },
    /// A value the analysis cannot compute (result of a math function, a vector constructor):
    /// the arguments are still evaluated, for the loads inside them.
    Opaque { args: Vec<Expr>, what: String },
    /// A warp-level intrinsic ([`WarpOp`]) of result type `ty`.
    Warp { op: WarpOp, ty: IntTy, args: Vec<Expr>, span: Span },
}

impl Expr {
    /// Calls `f` on each direct operand, in evaluation order (a load's address, both sides of
    /// `&&`, every arm of `?:`).
    pub fn for_each_operand<'e>(&'e self, f: &mut impl FnMut(&'e Expr)) {
        match self {
            Expr::Binary { lhs, rhs, .. }
            | Expr::FloatBinary { lhs, rhs, .. }
            | Expr::Logical { lhs, rhs, .. }
            | Expr::PtrDiff { lhs, rhs }
            | Expr::PtrOffset { ptr: lhs, bytes: rhs } => {
                f(lhs);
                f(rhs);
            }
            Expr::Unary { arg, .. }
            | Expr::ToInt { arg, .. }
            | Expr::ToFloat(arg)
            | Expr::Load { addr: arg, .. }
            | Expr::SharedAddress { addr: arg, .. } => f(arg),
            Expr::Select { cond, then, els } => {
                f(cond);
                f(then);
                f(els);
            }
            Expr::Opaque { args, .. } | Expr::Warp { args, .. } => args.iter().for_each(f),
            Expr::Int(..)
            | Expr::Float(_)
            | Expr::Local(_)
            | Expr::Param(_)
            | Expr::Builtin(_)
            | Expr::SharedBase(_) => {}
        }
    }

    /// [`Expr::for_each_operand`], mutably.
    pub fn for_each_operand_mut(&mut self, f: &mut impl FnMut(&mut Expr)) {
        match self {
            Expr::Binary { lhs, rhs, .. }
            | Expr::FloatBinary { lhs, rhs, .. }
            | Expr::Logical { lhs, rhs, .. }
            | Expr::PtrDiff { lhs, rhs }
            | Expr::PtrOffset { ptr: lhs, bytes: rhs } => {
                f(lhs);
                f(rhs);
            }
            Expr::Unary { arg, .. }
            | Expr::ToInt { arg, .. }
            | Expr::ToFloat(arg)
            | Expr::Load { addr: arg, .. }
            | Expr::SharedAddress { addr: arg, .. } => f(arg),
            Expr::Select { cond, then, els } => {
                f(cond);
                f(then);
                f(els);
            }
            Expr::Opaque { args, .. } | Expr::Warp { args, .. } => args.iter_mut().for_each(f),
            Expr::Int(..)
            | Expr::Float(_)
            | Expr::Local(_)
            | Expr::Param(_)
            | Expr::Builtin(_)
            | Expr::SharedBase(_) => {}
        }
    }

    /// The operands every lane that evaluates `self` evaluates: not the arms of `?:` nor the
    /// right of `&&` and `||`, which only some lanes reach.
    pub fn for_each_unconditional_operand<'e>(&'e self, f: &mut impl FnMut(&'e Expr)) {
        match self {
            Expr::Select { cond, .. } => f(cond),
            Expr::Logical { lhs, .. } => f(lhs),
            e => e.for_each_operand(f),
        }
    }
}

/// The `what` of an [`Expr::Opaque`] standing for a thread's own array (registers or local
/// memory, not counted): a value written there is used later, so never dead.
pub const LOCAL_ARRAY: &str = "a thread's own array";

/// The `what` of the [`Expr::Opaque`] that stands for a texture or surface operation's address:
/// its handle (a texture object or reference, a surface) and coordinates, in that order.
/// `tex2D<float>(t, x, y)` is `Load { op, addr: Opaque { args: [t, x, y], what:
/// TEXTURE_OPERANDS } }` with `op` in [`Space::Texture`].
pub const TEXTURE_OPERANDS: &str = "a texture or surface handle and coordinates";

/// Whether evaluating `e` reads memory.
pub fn contains_load(e: &Expr) -> bool {
    let mut found = false;
    licm::walk(e, &mut |x| found |= matches!(x, Expr::Load { .. }));
    found
}

/// Structured statements. Loops are `Loop`, with `break`/`continue` inside.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `local = value;` (also a declaration with an initialiser).
    Assign { local: LocalId, value: Expr, span: Span },
    /// A write of memory operation `op` (a store, an atomic, an asynchronous copy) at byte
    /// address `addr`: `c[i] = v` is `Store { op, addr: PtrOffset { ptr: Param(c), bytes: i * 4
    /// }, value: v }`. A surface write (`surf2Dwrite(v, s, x, y)`) has the surface's handle and
    /// coordinates as `addr`, as [`Expr::Load`] describes.
    Store { op: MemOpId, addr: Expr, value: Expr },
    /// Evaluate for the loads inside it.
    Eval(Expr),
    /// `if (cond) { then } else { els }`: each lane takes its own side.
    If { cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, span: Span },
    /// `while (cond) { body; step }`; `test_first == false` for `do { } while (cond)`.
    /// `continue` jumps to `step`.
    /// `synthetic` marks loops the front end made (an inlined call's body), not the user.
    Loop { cond: Option<Expr>, body: Vec<Stmt>, step: Vec<Stmt>, test_first: bool, span: Span, synthetic: bool },
    /// `break`: the lane leaves the innermost [`Stmt::Loop`].
    Break,
    /// `continue`: the lane goes on to the innermost loop's `step`.
    Continue,
    /// `return`: the lane is done with the kernel.
    Return,
    /// `__syncthreads()` and friends: a barrier the compiler does not move memory accesses across.
    /// `block`: every thread of the block waits there (`__syncthreads()`, a block group's
    /// `sync()`), so shared memory written before it is what any thread reads after it; a
    /// fence, `__syncwarp()` or a `"memory"` clobber orders only the thread's (warp's) own.
    Barrier { block: bool },
}

impl Stmt {
    /// `if (!cond) break;`: a loop test moved into the body or step.
    pub fn exit_unless(cond: Expr, span: Span) -> Stmt {
        Stmt::If {
            cond: Expr::Unary { op: UnOp::LogicalNot, ty: IntTy::I32, arg: Box::new(cond) },
            then: vec![Stmt::Break],
            els: Vec::new(),
            span,
        }
    }
}

/// One `__global__` function, lowered.
#[derive(Clone, Debug)]
pub struct Kernel {
    pub name: String,
    pub span: Span,
    pub params: Vec<Param>,
    pub shared: Vec<SharedArray>,
    pub locals: Vec<Local>,
    pub mem_ops: Vec<MemOp>,
    pub body: Vec<Stmt>,
    /// Notes from lowering that belong on the sheet (inlined helpers, assumptions).
    pub notes: Vec<String>,
    /// Template parameters bound at lowering (`--arg T=float --arg BS=256` names them).
    pub template_params: Vec<String>,
    /// Loops with a `#pragma unroll` above them, by span ([`unroll`]).
    pub unroll_pragmas: Vec<(Span, UnrollPragma)>,
    /// Loads nvcc may merge with neighbours in a way the model cannot place (their arrays'
    /// places in shared memory depend on an emission order it does not know): not exact.
    pub merge_uncertain: Vec<MemOpId>,
}

impl Kernel {
    /// A new local variable (for passes that rewrite the body).
    pub fn add_local(&mut self, name: String, ty: Ty) -> LocalId {
        self.locals.push(Local { name, ty });
        LocalId(self.locals.len() as u32 - 1)
    }

    /// An empty kernel, for front ends to fill.
    pub fn new(name: String, span: Span) -> Kernel {
        Kernel {
            name,
            span,
            params: Vec::new(),
            shared: Vec::new(),
            locals: Vec::new(),
            mem_ops: Vec::new(),
            body: Vec::new(),
            notes: Vec::new(),
            template_params: Vec::new(),
            unroll_pragmas: Vec::new(),
            merge_uncertain: Vec::new(),
        }
    }

    pub fn param_by_name(&self, name: &str) -> Option<ParamId> {
        self.params.iter().position(|p| p.name == name).map(|i| ParamId(i as u32))
    }
    pub fn param(&self, id: ParamId) -> &Param {
        &self.params[id.0 as usize]
    }
    pub fn mem_op(&self, id: MemOpId) -> &MemOp {
        &self.mem_ops[id.0 as usize]
    }
    /// Whether the pointer parameter is `__restrict__`.
    /// Whether the kernel only reads through this parameter and nothing else reaches its memory
    /// (`const T *__restrict__`): what a thread loaded from it stays valid across barriers
    /// (nvcc reads it with `LDG.E.CONSTANT` and keeps the value in a register).
    pub fn is_read_only(&self, base: Base) -> bool {
        match base {
            Base::Param(p) => {
                let param = self.param(p);
                !param.device_variable && matches!(&param.ty, Ty::Ptr(t) if t.restrict && t.is_const)
            }
            Base::Shared(_) => false,
        }
    }

    pub fn is_restrict(&self, base: Base) -> bool {
        match base {
            Base::Param(p) => matches!(&self.param(p).ty, Ty::Ptr(t) if t.restrict),
            Base::Shared(_) => true,
        }
    }
    /// Whether accesses through `a` and `b` may touch the same memory, in the compiler's eyes:
    /// the same object, or two pointers neither of which is `__restrict__` (the IR passes' view
    /// of the rule the engines apply, [`crate::engine::count::may_alias`]).
    pub fn may_share_memory(&self, a: Base, b: Base) -> bool {
        match (a, b) {
            (Base::Shared(x), Base::Shared(y)) => x == y,
            (Base::Shared(_), _) | (_, Base::Shared(_)) => false,
            (x, y) if x == y => true,
            (x, y) => !(self.is_restrict(x) || self.is_restrict(y)),
        }
    }
}

/// A translation unit: every kernel found in one file.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub kernels: Vec<Kernel>,
    /// Kernels that could not be lowered, with why: an error only when one of them is analysed.
    pub failed: Vec<(String, crate::diag::Diagnostic)>,
    /// Warnings about the file (`#warning`): shown beside the result, never instead of it.
    pub warnings: Vec<crate::diag::Diagnostic>,
}
