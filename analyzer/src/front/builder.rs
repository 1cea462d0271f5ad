//! The kernel builder: what every front end does the same way while it makes a [`Kernel`].
//!
//! A front end knows its language (its names, its types, its conversions); the builder knows
//! the IR. It owns the kernel being built and the statements an expression needs before it
//! (`pending`), and it is the one place that
//!
//! - makes a memory operation ([`KernelBuilder::memory_operation`]): its width saturated to
//!   `u32` (an access of 4 GiB or more per lane is refused later, at the access), its text the
//!   access as written on one line;
//! - reads and writes a [`Place`] (a local, memory at an address, or a thread's own array):
//!   [`KernelBuilder::read`] and [`KernelBuilder::store`];
//! - evaluates a read-modify-write's target address once ([`KernelBuilder::bind_address`]):
//!   an address that loads memory (`out[idx[i]] += 1`) is bound to a temporary first, as the
//!   compiler does;
//! - bounds the nesting a front end lowers ([`KernelBuilder::enter`], [`MAX_NESTING_DEPTH`]),
//!   so that a deeply nested input is an error at its span, never a stack overflow;
//! - folds constant integer expressions ([`fold_constant`], [`fold_binary`]).
//!
//! Invariants: every [`MemOp`] the CUDA and Rust front ends make is made by `memory_operation`,
//! and its id is its index in `Kernel::mem_ops`; a place in memory is read or written through
//! `read`/`load` and `store`, so that a load and a store of one place describe the same access.
//! (The SASS lift, `front::sass::lift`, still fills its operations itself: their text is the
//! source line as written, not folded onto one spacing.)

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use crate::source::Span;

/// Deepest expression or statement nesting lowered before giving up (keeps the stack bounded).
pub(crate) const MAX_NESTING_DEPTH: u32 = 400;

/// An lvalue, over a front end's own value type `T`.
#[derive(Clone, Debug)]
pub(crate) enum Place<T> {
    /// A local variable.
    Local(LocalId, T),
    /// Memory at an address: reading it is a load, writing it a store.
    Memory(MemoryPlace<T>),
    /// An element of a thread's own array (registers or local memory): not counted, and not
    /// tracked (a write only evaluates its value).
    ThreadArray(T),
}

impl<T> Place<T> {
    /// The type of the value the place holds.
    pub(crate) fn ty(&self) -> &T {
        match self {
            Place::Local(_, ty) | Place::ThreadArray(ty) => ty,
            Place::Memory(memory) => &memory.ty,
        }
    }
}

/// Memory at an address, and the access as the user wrote it.
#[derive(Clone, Debug)]
pub(crate) struct MemoryPlace<T> {
    pub(crate) address: Expr,
    /// The type of the value in memory.
    pub(crate) ty: T,
    pub(crate) space: Space,
    pub(crate) volatile: bool,
    /// The access as written (`a[i]`, `*p`).
    pub(crate) text: String,
    pub(crate) span: Span,
}

/// The kernel a front end is building, and what it needs on the way.
pub(crate) struct KernelBuilder {
    pub(crate) kernel: Kernel,
    /// Statements an expression needs before it (a temporary, a store in a call): the front
    /// end puts them before the statement it lowers.
    pub(crate) pending: Vec<Stmt>,
    nesting_depth: u32,
}

impl KernelBuilder {
    pub(crate) fn new(kernel: Kernel) -> KernelBuilder {
        KernelBuilder { kernel, pending: Vec::new(), nesting_depth: 0 }
    }

    /// A builder for a side computation (a constant expression) that starts at the nesting
    /// depth of the one it serves, so that the bound holds across both.
    pub(crate) fn nested(kernel: Kernel, nesting_depth: u32) -> KernelBuilder {
        KernelBuilder { kernel, pending: Vec::new(), nesting_depth }
    }

    pub(crate) fn nesting_depth(&self) -> u32 {
        self.nesting_depth
    }

    /// One level deeper; an error at `span` past [`MAX_NESTING_DEPTH`]. Every successful
    /// `enter` is matched by a [`KernelBuilder::leave`]; after an error the lowering stops.
    pub(crate) fn enter(&mut self, span: impl FnOnce() -> Span) -> Result<()> {
        self.nesting_depth += 1;
        if self.nesting_depth > MAX_NESTING_DEPTH {
            return Err(Diagnostic::at(
                ErrorKind::Limit,
                span(),
                format!("nesting deeper than {MAX_NESTING_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.nesting_depth -= 1;
    }

    /// A new local variable.
    pub(crate) fn local(&mut self, name: &str, ty: Ty) -> LocalId {
        let id = LocalId(self.kernel.locals.len() as u32);
        self.kernel.locals.push(Local { name: name.to_string(), ty });
        id
    }

    /// A new local the front end made (named `$t` and its number).
    pub(crate) fn temporary(&mut self, ty: Ty) -> LocalId {
        let name = format!("$t{}", self.kernel.locals.len());
        self.local(&name, ty)
    }

    /// A new memory operation: `width` bytes per active lane, `text` the access as written.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn memory_operation(
        &mut self,
        kind: AccessKind,
        space: Space,
        width: u64,
        cache: CacheOp,
        volatile: bool,
        text: &str,
        span: Span,
    ) -> MemOpId {
        let id = MemOpId(self.kernel.mem_ops.len() as u32);
        // An access of 4 GiB or more per lane (a whole structure that large) is no instruction
        // any GPU has: kept as u32::MAX, which the front end refuses at the access.
        let width = u32::try_from(width).unwrap_or(u32::MAX);
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.kernel.mem_ops.push(MemOp {
            kind,
            space,
            width,
            cache,
            volatile,
            text,
            span,
            warp_aggregated: false,
            matrix: 0,
            compare_and_swap: false,
        });
        id
    }

    /// A load of `width` bytes from the place in memory.
    pub(crate) fn load<T>(&mut self, place: &MemoryPlace<T>, width: u64, cache: CacheOp) -> Expr {
        let op =
            self.memory_operation(AccessKind::Load, place.space, width, cache, place.volatile, &place.text, place.span);
        Expr::Load { op, addr: Box::new(place.address.clone()) }
    }

    /// A store of `value` (already of the place's type), `width` bytes, into the place.
    pub(crate) fn store<T>(&mut self, place: MemoryPlace<T>, width: u64, value: Expr) -> Stmt {
        let op = self.memory_operation(
            AccessKind::Store,
            place.space,
            width,
            CacheOp::Default,
            place.volatile,
            &place.text,
            place.span,
        );
        Stmt::Store { op, addr: place.address, value }
    }

    /// The value of a place: a local's value, a load of `width` bytes, or a thread's own array's
    /// (untracked) element.
    pub(crate) fn read<T>(&mut self, place: &Place<T>, width: u64, cache: CacheOp) -> Expr {
        match place {
            Place::Local(id, _) => Expr::Local(*id),
            Place::Memory(memory) => self.load(memory, width, cache),
            Place::ThreadArray(_) => Expr::Opaque { args: Vec::new(), what: LOCAL_ARRAY.into() },
        }
    }

    /// A read-modify-write evaluates its target's address once, as the compiler does: an
    /// address that loads memory (`out[idx[i]] += 1`) is bound to a temporary (a pointer to
    /// `pointee`, the place's type in the IR) first.
    pub(crate) fn bind_address<T>(&mut self, place: Place<T>, pointee: Ty) -> Place<T> {
        match place {
            Place::Memory(mut memory) if contains_load(&memory.address) => {
                let pointer =
                    PtrTy { pointee, space: memory.space, is_const: false, restrict: false, volatile: memory.volatile };
                let temporary = self.temporary(Ty::Ptr(Box::new(pointer)));
                let address = std::mem::replace(&mut memory.address, Expr::Local(temporary));
                self.pending.push(Stmt::Assign { local: temporary, value: address, span: memory.span });
                Place::Memory(memory)
            }
            place => place,
        }
    }
}

/// The value of a constant integer expression (array sizes, template arguments), with C's
/// wraparound of each operation's type; `None` when it is not constant or an operation is
/// undefined (division by zero, a shift of 64 or more).
///
/// Conditions fold too (`K ? 4 : 2`, `(N < 128) ? 8 : 16`, `!A && B`): a comparison compares its
/// operands, already in its type, and yields 0 or 1; `&&` and `||` are decided by their left side
/// where it decides them, as C evaluates them; `?:` takes the side its condition picks.
pub(crate) fn fold_constant(e: &Expr) -> Option<i128> {
    match e {
        Expr::Int(v, _) => Some(*v),
        Expr::ToInt { ty, arg } => fold_constant(arg).map(|v| ty.wrap(v)),
        Expr::Unary { op: UnOp::Neg, ty, arg } => fold_constant(arg).map(|v| ty.wrap(-v)),
        Expr::Unary { op: UnOp::Not, ty, arg } => fold_constant(arg).map(|v| ty.wrap(!v)),
        Expr::Unary { op: UnOp::LogicalNot, arg, .. } => fold_constant(arg).map(|v| i128::from(v == 0)),
        Expr::Binary { op, lhs, rhs, .. }
            if matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne) =>
        {
            let (a, b) = (fold_constant(lhs)?, fold_constant(rhs)?);
            Some(i128::from(match op {
                BinOp::Lt => a < b,
                BinOp::Le => a <= b,
                BinOp::Gt => a > b,
                BinOp::Ge => a >= b,
                BinOp::Eq => a == b,
                _ => a != b,
            }))
        }
        Expr::Binary { op, ty, lhs, rhs, .. } => {
            let v = fold_binary(*op, fold_constant(lhs)?, fold_constant(rhs)?)?;
            Some(ty.wrap(v))
        }
        Expr::Logical { and, lhs, rhs } => {
            let a = fold_constant(lhs)? != 0;
            if a != *and {
                return Some(i128::from(a));
            }
            Some(i128::from(fold_constant(rhs)? != 0))
        }
        Expr::Select { cond, then, els } => {
            if fold_constant(cond)? != 0 {
                fold_constant(then)
            } else {
                fold_constant(els)
            }
        }
        _ => None,
    }
}

/// One arithmetic operation on exact values, unwrapped: `None` for a comparison, or where it
/// is undefined or overflows (division by zero, a shift of 64 or more, a product past 2^127).
pub(crate) fn fold_binary(op: BinOp, a: i128, b: i128) -> Option<i128> {
    Some(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a.checked_mul(b)?,
        BinOp::Div if b != 0 => a / b,
        BinOp::Rem if b != 0 => a % b,
        BinOp::Shl if (0..64).contains(&b) => a << b,
        BinOp::Shr if (0..64).contains(&b) => a >> b,
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Min => a.min(b),
        BinOp::Max => a.max(b),
        _ => return None,
    })
}
