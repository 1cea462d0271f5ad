//! One Rust kernel function (syn) -> [`Kernel`].
//!
//! Rust's integer rules are applied here: no implicit conversions (operands of an operator have
//! one type; `as` converts with wraparound), `usize`/`isize` are 64-bit, arithmetic wraps as the
//! GPU does. The type of an unsuffixed integer literal is inferred from how it is used (`let mut
//! k = 0; ... a[k]` makes `k` a `usize`), as rustc does: the function is lowered twice, the first
//! pass only to solve those types. Slice indexing is a load or store of the element (the bounds
//! check is not a memory access); `a.len()` is a hidden integer parameter `a_len` whose value the
//! launch gives.
//!
//! This file holds the types, their inference and the lowerer's state; statements and places are
//! lowered in [`stmt`], expressions in [`expr`].

use super::Ctx;
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::front::builder::{fold_binary, KernelBuilder, MemoryPlace};
use crate::ir::*;
use crate::source::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;

mod expr;
mod stmt;

/// A Rust value type as far as the kernel subset goes.
#[derive(Clone, Debug, PartialEq)]
enum RTy {
    Int(IntTy),
    /// An integer whose type is not known yet (an unsuffixed literal): an inference variable.
    Var(u32),
    Float(u8),
    Bool,
    /// A raw pointer (also the element reference `get_unchecked` gives).
    Ptr {
        elem: Box<RTy>,
        mutable: bool,
    },
    /// `&[T]` / `&mut [T]`: the value is the data pointer; the length is a hidden parameter.
    Slice {
        elem: Box<RTy>,
        mutable: bool,
    },
    Unit,
}

impl RTy {
    fn is_float(&self) -> bool {
        matches!(self, RTy::Float(_))
    }
    fn is_intlike(&self) -> bool {
        matches!(self, RTy::Int(_) | RTy::Var(_) | RTy::Bool)
    }
}

/// Integer type of a primitive type name.
fn int_named(name: &str) -> Option<IntTy> {
    Some(match name {
        "i8" => IntTy::I8,
        "u8" => IntTy::U8,
        "i16" => IntTy::I16,
        "u16" => IntTy::U16,
        "i32" => IntTy::I32,
        "u32" => IntTy::U32,
        "i64" | "isize" => IntTy::I64,
        "u64" | "usize" => IntTy::U64,
        _ => return None,
    })
}

fn scalar_named(name: &str) -> Option<RTy> {
    if let Some(t) = int_named(name) {
        return Some(RTy::Int(t));
    }
    Some(match name {
        "f32" => RTy::Float(4),
        "f64" => RTy::Float(8),
        "f16" => RTy::Float(2),
        "bool" => RTy::Bool,
        _ => return None,
    })
}

fn type_name(ty: &syn::Type) -> Option<String> {
    match ty {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
        syn::Type::Paren(p) => type_name(&p.elem),
        syn::Type::Group(g) => type_name(&g.elem),
        _ => None,
    }
}

/// The integer type a `const` item declares, if it is one.
pub(crate) fn int_type(ty: &syn::Type) -> Option<IntTy> {
    int_named(&type_name(ty)?)
}

/// Folds a constant integer expression over literals and earlier constants.
pub(crate) fn const_eval(e: &syn::Expr, consts: &HashMap<String, (i128, IntTy)>) -> Option<i128> {
    Some(match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.base10_parse::<u64>().ok()? as i128,
            _ => return None,
        },
        syn::Expr::Path(p) => consts.get(&p.path.get_ident()?.to_string())?.0,
        syn::Expr::Paren(p) => const_eval(&p.expr, consts)?,
        syn::Expr::Group(g) => const_eval(&g.expr, consts)?,
        syn::Expr::Cast(c) => {
            let v = const_eval(&c.expr, consts)?;
            int_type(&c.ty)?.wrap(v)
        }
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => -const_eval(&u.expr, consts)?,
        syn::Expr::Binary(b) => {
            let op = match b.op {
                syn::BinOp::Add(_) => BinOp::Add,
                syn::BinOp::Sub(_) => BinOp::Sub,
                syn::BinOp::Mul(_) => BinOp::Mul,
                syn::BinOp::Div(_) => BinOp::Div,
                syn::BinOp::Rem(_) => BinOp::Rem,
                syn::BinOp::Shl(_) => BinOp::Shl,
                syn::BinOp::Shr(_) => BinOp::Shr,
                syn::BinOp::BitAnd(_) => BinOp::And,
                syn::BinOp::BitOr(_) => BinOp::Or,
                syn::BinOp::BitXor(_) => BinOp::Xor,
                _ => return None,
            };
            fold_binary(op, const_eval(&b.left, consts)?, const_eval(&b.right, consts)?)?
        }
        _ => return None,
    })
}

/// Integer literal types: solved in the first pass, read in the second.
enum Infer {
    Solve { parent: Vec<u32>, ty: Vec<Option<IntTy>> },
    Solved { ty: Vec<IntTy>, next: usize },
}

impl Infer {
    fn fresh(&mut self) -> RTy {
        match self {
            Infer::Solve { parent, ty } => {
                let id = parent.len() as u32;
                parent.push(id);
                ty.push(None);
                RTy::Var(id)
            }
            Infer::Solved { ty, next } => {
                let t = ty.get(*next).copied().unwrap_or(IntTy::I32);
                *next += 1;
                RTy::Int(t)
            }
        }
    }
    fn root(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            let p = parent[x as usize];
            parent[x as usize] = parent[p as usize];
            x = p;
        }
        x
    }
    fn resolve(&mut self, t: &RTy) -> RTy {
        match (self, t) {
            (Infer::Solve { parent, ty }, RTy::Var(v)) => {
                let r = Self::root(parent, *v);
                match ty[r as usize] {
                    Some(it) => RTy::Int(it),
                    None => RTy::Var(r),
                }
            }
            _ => t.clone(),
        }
    }
    /// Records that two integer types are the same type.
    fn unify(&mut self, a: &RTy, b: &RTy) {
        let Infer::Solve { parent, ty } = self else {
            return;
        };
        match (a, b) {
            (RTy::Var(x), RTy::Var(y)) => {
                let (rx, ry) = (Self::root(parent, *x), Self::root(parent, *y));
                if rx != ry {
                    parent[rx as usize] = ry;
                    if ty[ry as usize].is_none() {
                        ty[ry as usize] = ty[rx as usize];
                    }
                }
            }
            (RTy::Var(x), RTy::Int(t)) | (RTy::Int(t), RTy::Var(x)) => {
                let r = Self::root(parent, *x) as usize;
                if ty[r].is_none() {
                    ty[r] = Some(*t);
                }
            }
            _ => {}
        }
    }
    fn solved(mut self) -> Infer {
        let n = match &self {
            Infer::Solve { parent, .. } => parent.len(),
            Infer::Solved { .. } => return self,
        };
        let ty = (0..n as u32)
            .map(|v| match self.resolve(&RTy::Var(v)) {
                RTy::Int(t) => t,
                _ => IntTy::I32,
            })
            .collect();
        Infer::Solved { ty, next: 0 }
    }
}

#[derive(Clone, Debug)]
enum Sym {
    Local(LocalId, RTy),
    Param(ParamId, RTy),
    Const(i128, IntTy),
}

/// An lvalue ([`crate::front::builder::Place`] over Rust's types; never a thread's own array).
type Place = crate::front::builder::Place<RTy>;

struct Lowerer<'c, 'a> {
    cx: &'c Ctx<'a>,
    /// The kernel, and the statements an expression needs before it (a block's statements,
    /// a `.write()`).
    builder: KernelBuilder,
    scopes: Vec<HashMap<String, Sym>>,
    /// > 0 where side effects cannot be hoisted (right of `&&`, a `?:`-like `if`).
    no_hoist: u32,
    infer: Infer,
    /// Hidden length parameters by slice name.
    lens: HashMap<String, ParamId>,
    slice_indexed: bool,
}

/// Lowers one kernel: a first pass solves the integer literal types, the second builds the IR.
pub(crate) fn lower_kernel(cx: &Ctx, f: &syn::ItemFn) -> Result<Kernel> {
    let first = Lowerer::new(cx, f, Infer::Solve { parent: Vec::new(), ty: Vec::new() }).run(f)?;
    let second = Lowerer::new(cx, f, first.infer.solved()).run(f)?;
    Ok(second.builder.kernel)
}

impl<'c, 'a> Lowerer<'c, 'a> {
    fn new(cx: &'c Ctx<'a>, f: &syn::ItemFn, infer: Infer) -> Self {
        Lowerer {
            cx,
            builder: KernelBuilder::new(Kernel::new(f.sig.ident.to_string(), cx.span(f.sig.ident.span()))),
            scopes: vec![HashMap::new()],
            no_hoist: 0,
            infer,
            lens: HashMap::new(),
            slice_indexed: false,
        }
    }

    fn run(mut self, f: &syn::ItemFn) -> Result<Self> {
        let sig = &f.sig;
        if !sig.generics.params.is_empty() {
            return Err(self.unsupported(sig.generics.span(), "a generic kernel"));
        }
        if let Some(v) = &sig.variadic {
            return Err(self.unsupported(v.span(), "a variadic kernel"));
        }
        if let syn::ReturnType::Type(_, ty) = &sig.output {
            if !matches!(&**ty, syn::Type::Tuple(t) if t.elems.is_empty()) {
                return Err(self.unsupported(ty.span(), "a kernel that returns a value"));
            }
        }
        let mut body = Vec::new();
        for input in &sig.inputs {
            let syn::FnArg::Typed(pt) = input else {
                return Err(self.unsupported(input.span(), "a `self` parameter"));
            };
            let (name, mutable) = match &*pt.pat {
                syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                    (p.ident.to_string(), p.mutability.is_some())
                }
                other => return Err(self.unsupported(other.span(), "this parameter pattern")),
            };
            let rty = self.param_type(&pt.ty)?;
            let id = ParamId(self.builder.kernel.params.len() as u32);
            let span = self.cx.span(pt.span());
            let ty = self.ir_ty(&rty);
            self.builder.kernel.params.push(Param {
                name: name.clone(),
                ty,
                span,
                device_variable: false,
                constant_variable: false,
            });
            if mutable {
                // A `mut` parameter is a local initialised from the parameter.
                let local = self.new_local(&name, &rty);
                body.push(Stmt::Assign { local, value: Expr::Param(id), span });
                self.scopes[0].insert(name, Sym::Local(local, rty));
            } else {
                self.scopes[0].insert(name, Sym::Param(id, rty));
            }
        }
        self.block(&f.block, &mut body)?;
        self.builder.kernel.body = body;
        let has_slices = self.builder.kernel.params.iter().any(|p| matches!(&p.ty, Ty::Ptr(t) if t.restrict));
        if self.slice_indexed {
            self.builder.kernel.notes.push(
                "Rust slice indexing: the bounds checks are assumed to pass (they compare and branch; they are not memory accesses)"
                    .into(),
            );
        }
        if has_slices {
            self.builder.kernel.notes.push(
                "slice parameters (`&[T]`, `&mut [T]`) alias nothing else, as rustc tells LLVM: treated like `__restrict__`"
                    .into(),
            );
        }
        let mut lens: Vec<(&String, &ParamId)> = self.lens.iter().collect();
        lens.sort_by_key(|(_, p)| **p);
        for (slice, p) in lens {
            let name = &self.builder.kernel.param(*p).name;
            self.builder.kernel.notes.push(format!("`{slice}.len()` is the launch value `{name}`"));
        }
        Ok(self)
    }

    // ---- helpers ----------------------------------------------------------------------

    fn span(&self, s: proc_macro2::Span) -> Span {
        self.cx.span(s)
    }

    fn unsupported(&self, s: proc_macro2::Span, what: &str) -> Diagnostic {
        // The construct's first line, as written.
        let all = self.cx.text(s);
        let mut text: String = all.lines().next().unwrap_or("").trim_end().chars().take(60).collect();
        if text.len() < all.trim_end().len() {
            text.push_str(" ...");
        }
        Diagnostic::at(ErrorKind::Unsupported, self.span(s), format!("{what} is not supported: `{text}`"))
    }

    fn enter(&mut self, s: proc_macro2::Span) -> Result<()> {
        let cx = self.cx;
        self.builder.enter(|| cx.span(s))
    }

    fn int_of(&mut self, t: &RTy) -> IntTy {
        match self.infer.resolve(t) {
            RTy::Int(it) => it,
            RTy::Bool => IntTy::BOOL,
            _ => IntTy::I32,
        }
    }

    fn ir_ty(&mut self, t: &RTy) -> Ty {
        match t {
            RTy::Int(_) | RTy::Var(_) | RTy::Bool => Ty::Int(self.int_of(t)),
            RTy::Float(b) => Ty::Float(*b),
            RTy::Ptr { elem, mutable } | RTy::Slice { elem, mutable } => Ty::Ptr(Box::new(PtrTy {
                pointee: self.ir_ty(elem),
                space: Space::Global,
                is_const: !mutable,
                restrict: matches!(t, RTy::Slice { .. }),
                volatile: false,
            })),
            RTy::Unit => Ty::Void,
        }
    }

    fn size_of(&mut self, t: &RTy) -> u32 {
        // Rust kernels' elements are scalars (at most 8 bytes).
        self.ir_ty(t).size() as u32
    }

    fn scalar_type(&self, ty: &syn::Type) -> Result<RTy> {
        type_name(ty)
            .and_then(|n| scalar_named(&n))
            .ok_or_else(|| self.unsupported(ty.span(), "this element type (only integers, floats and bool)"))
    }

    fn param_type(&self, ty: &syn::Type) -> Result<RTy> {
        match ty {
            syn::Type::Reference(r) => match &*r.elem {
                syn::Type::Slice(s) => {
                    Ok(RTy::Slice { elem: Box::new(self.scalar_type(&s.elem)?), mutable: r.mutability.is_some() })
                }
                _ => Err(self.unsupported(ty.span(), "a reference parameter that is not a slice")),
            },
            syn::Type::Ptr(p) => Ok(RTy::Ptr {
                elem: Box::new(self.scalar_type(&p.elem)?),
                mutable: matches!(p.mutability, syn::PointerMutability::Mut(_)),
            }),
            syn::Type::Paren(p) => self.param_type(&p.elem),
            syn::Type::Group(g) => self.param_type(&g.elem),
            _ => match type_name(ty).and_then(|n| scalar_named(&n)) {
                Some(t) => Ok(t),
                None => Err(self.unsupported(ty.span(), "this parameter type")),
            },
        }
    }

    /// A type written in a `let` or an `as`.
    fn value_type(&self, ty: &syn::Type) -> Result<RTy> {
        match ty {
            syn::Type::Ptr(p) => Ok(RTy::Ptr {
                elem: Box::new(self.scalar_type(&p.elem)?),
                mutable: matches!(p.mutability, syn::PointerMutability::Mut(_)),
            }),
            syn::Type::Paren(p) => self.value_type(&p.elem),
            syn::Type::Group(g) => self.value_type(&g.elem),
            _ => match type_name(ty).and_then(|n| scalar_named(&n)) {
                Some(t) => Ok(t),
                None => Err(self.unsupported(ty.span(), "this type")),
            },
        }
    }

    fn lookup(&self, name: &str) -> Option<Sym> {
        self.scopes
            .iter()
            .rev()
            .find_map(|s| s.get(name))
            .cloned()
            .or_else(|| self.cx.consts.get(name).map(|&(v, t)| Sym::Const(v, t)))
    }

    fn new_local(&mut self, name: &str, t: &RTy) -> LocalId {
        let ty = self.ir_ty(t);
        self.builder.local(name, ty)
    }

    fn temp(&mut self, t: &RTy) -> LocalId {
        let ty = self.ir_ty(t);
        self.builder.temporary(ty)
    }

    fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.builder.pending);
    }

    fn hoist(&mut self, s: proc_macro2::Span, stmts: Vec<Stmt>) -> Result<()> {
        if stmts.is_empty() {
            return Ok(());
        }
        if self.no_hoist > 0 {
            return Err(self.unsupported(s, "a statement or a store on the right of `&&`/`||`"));
        }
        self.builder.pending.extend(stmts);
        Ok(())
    }

    /// Rust's `as`, and the (same-type) coercions of `let x: T = e` and assignments.
    fn convert(&mut self, e: Expr, from: &RTy, to: &RTy, s: proc_macro2::Span) -> Result<Expr> {
        let from = self.infer.resolve(from);
        let to = self.infer.resolve(to);
        Ok(match (&from, &to) {
            (a, b) if a == b => e,
            (RTy::Var(_), RTy::Var(_)) => e,
            (a, RTy::Int(_) | RTy::Var(_) | RTy::Bool) if a.is_intlike() || a.is_float() => {
                let t = self.int_of(&to);
                if a.is_intlike() && self.int_of(a) == t {
                    e
                } else {
                    Expr::ToInt { ty: t, arg: Box::new(e) }
                }
            }
            (RTy::Ptr { .. } | RTy::Slice { .. }, RTy::Int(t)) => Expr::ToInt { ty: *t, arg: Box::new(e) },
            (a, RTy::Float(_)) if a.is_intlike() => Expr::ToFloat(Box::new(e)),
            (RTy::Float(_), RTy::Float(_)) => e,
            (RTy::Ptr { .. } | RTy::Slice { .. }, RTy::Ptr { .. }) => e,
            (_, RTy::Unit) => e,
            _ => return Err(self.unsupported(s, "this conversion")),
        })
    }

    /// A value used where type `want` is expected: integer literal types follow.
    fn coerce(&mut self, e: Expr, from: &RTy, want: &RTy, s: proc_macro2::Span) -> Result<Expr> {
        self.infer.unify(from, want);
        self.convert(e, from, want, s)
    }
}

fn is_barrier(c: &syn::ExprCall) -> bool {
    let syn::Expr::Path(p) = &*c.func else {
        return false;
    };
    p.path.segments.last().is_some_and(|s| s.ident == "sync_threads" || s.ident == "__syncthreads")
}

fn split_tail(b: &syn::Block) -> (&[syn::Stmt], Option<&syn::Expr>) {
    match b.stmts.last() {
        Some(syn::Stmt::Expr(e, None)) => (&b.stmts[..b.stmts.len() - 1], Some(e)),
        _ => (&b.stmts[..], None),
    }
}

fn compound_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::AddAssign(_) => BinOp::Add,
        syn::BinOp::SubAssign(_) => BinOp::Sub,
        syn::BinOp::MulAssign(_) => BinOp::Mul,
        syn::BinOp::DivAssign(_) => BinOp::Div,
        syn::BinOp::RemAssign(_) => BinOp::Rem,
        syn::BinOp::BitXorAssign(_) => BinOp::Xor,
        syn::BinOp::BitAndAssign(_) => BinOp::And,
        syn::BinOp::BitOrAssign(_) => BinOp::Or,
        syn::BinOp::ShlAssign(_) => BinOp::Shl,
        syn::BinOp::ShrAssign(_) => BinOp::Shr,
        _ => return None,
    })
}

/// `ptr + index * size` (minus, for `.sub()`), the index widened to 64 bits first.
fn offset(ptr: Expr, index: Expr, index_ty: IntTy, size: i128, neg: bool) -> Expr {
    let wide = if index_ty.signed {
        Expr::ToInt { ty: IntTy::I64, arg: Box::new(index) }
    } else {
        Expr::ToInt { ty: IntTy::I64, arg: Box::new(Expr::ToInt { ty: IntTy::U64, arg: Box::new(index) }) }
    };
    let mut bytes = if size == 1 {
        wide
    } else {
        Expr::Binary {
            op: BinOp::Mul,
            ty: IntTy::I64,
            lhs: Box::new(wide),
            rhs: Box::new(Expr::Int(size, IntTy::I64)),
            span: Span::default(),
        }
    };
    if neg {
        bytes = Expr::Unary { op: UnOp::Neg, ty: IntTy::I64, arg: Box::new(bytes) };
    }
    Expr::PtrOffset { ptr: Box::new(ptr), bytes: Box::new(bytes) }
}
