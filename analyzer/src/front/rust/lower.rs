//! One Rust kernel function (syn) -> [`Kernel`].
//!
//! Rust's integer rules are applied here: no implicit conversions (operands of an operator have
//! one type; `as` converts with wraparound), `usize`/`isize` are 64-bit, arithmetic wraps as the
//! GPU does. The type of an unsuffixed integer literal is inferred from how it is used (`let mut
//! k = 0; ... a[k]` makes `k` a `usize`), as rustc does: the function is lowered twice, the first
//! pass only to solve those types. Slice indexing is a load or store of the element (the bounds
//! check is not a memory access); `a.len()` is a hidden integer parameter `a_len` whose value the
//! launch gives.

use super::Ctx;
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use crate::source::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// Deepest expression or statement nesting lowered before giving up.
const MAX_DEPTH: u32 = 400;

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
            let (x, y) = (const_eval(&b.left, consts)?, const_eval(&b.right, consts)?);
            match b.op {
                syn::BinOp::Add(_) => x + y,
                syn::BinOp::Sub(_) => x - y,
                syn::BinOp::Mul(_) => x.checked_mul(y)?,
                syn::BinOp::Div(_) if y != 0 => x / y,
                syn::BinOp::Rem(_) if y != 0 => x % y,
                syn::BinOp::Shl(_) if (0..64).contains(&y) => x << y,
                syn::BinOp::Shr(_) if (0..64).contains(&y) => x >> y,
                syn::BinOp::BitAnd(_) => x & y,
                syn::BinOp::BitOr(_) => x | y,
                syn::BinOp::BitXor(_) => x ^ y,
                _ => return None,
            }
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

/// An lvalue.
enum Place {
    Local(LocalId, RTy),
    Mem { addr: Expr, elem: RTy, volatile: bool, text: String, span: Span, key: String },
}

struct Lowerer<'c, 'a> {
    cx: &'c Ctx<'a>,
    k: Kernel,
    scopes: Vec<HashMap<String, Sym>>,
    /// Statements an expression needs before it (a block's statements, a `.write()`).
    pending: Vec<Stmt>,
    /// > 0 where side effects cannot be hoisted (right of `&&`, a `?:`-like `if`).
    no_hoist: u32,
    infer: Infer,
    /// Hidden length parameters by slice name.
    lens: HashMap<String, ParamId>,
    slice_indexed: bool,
    depth: u32,
}

/// Lowers one kernel: a first pass solves the integer literal types, the second builds the IR.
pub(crate) fn lower_kernel(cx: &Ctx, f: &syn::ItemFn) -> Result<Kernel> {
    let first = Lowerer::new(cx, f, Infer::Solve { parent: Vec::new(), ty: Vec::new() }).run(f)?;
    let second = Lowerer::new(cx, f, first.infer.solved()).run(f)?;
    Ok(second.k)
}

impl<'c, 'a> Lowerer<'c, 'a> {
    fn new(cx: &'c Ctx<'a>, f: &syn::ItemFn, infer: Infer) -> Self {
        Lowerer {
            cx,
            k: Kernel::new(f.sig.ident.to_string(), cx.span(f.sig.ident.span())),
            scopes: vec![HashMap::new()],
            pending: Vec::new(),
            no_hoist: 0,
            infer,
            lens: HashMap::new(),
            slice_indexed: false,
            depth: 0,
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
            let id = ParamId(self.k.params.len() as u32);
            let span = self.cx.span(pt.span());
            let ty = self.ir_ty(&rty);
            self.k.params.push(Param { name: name.clone(), ty, span });
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
        self.k.body = body;
        let has_slices = self.k.params.iter().any(|p| matches!(&p.ty, Ty::Ptr(t) if t.restrict));
        if self.slice_indexed {
            self.k.notes.push(
                "Rust slice indexing: the bounds checks are assumed to pass (they compare and branch; they are not memory accesses)"
                    .into(),
            );
        }
        if has_slices {
            self.k.notes.push(
                "slice parameters (`&[T]`, `&mut [T]`) alias nothing else, as rustc tells LLVM: treated like `__restrict__`"
                    .into(),
            );
        }
        let mut lens: Vec<(&String, &ParamId)> = self.lens.iter().collect();
        lens.sort_by_key(|(_, p)| **p);
        for (slice, p) in lens {
            let name = &self.k.param(*p).name;
            self.k.notes.push(format!("`{slice}.len()` is the launch value `{name}`"));
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
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::at(
                ErrorKind::Limit,
                self.span(s),
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
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
        self.ir_ty(t).size()
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
        let id = LocalId(self.k.locals.len() as u32);
        let ty = self.ir_ty(t);
        self.k.locals.push(Local { name: name.to_string(), ty });
        id
    }

    fn temp(&mut self, t: &RTy) -> LocalId {
        let n = format!("$t{}", self.k.locals.len());
        self.new_local(&n, t)
    }

    fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.pending);
    }

    fn hoist(&mut self, s: proc_macro2::Span, stmts: Vec<Stmt>) -> Result<()> {
        if stmts.is_empty() {
            return Ok(());
        }
        if self.no_hoist > 0 {
            return Err(self.unsupported(s, "a statement or a store on the right of `&&`/`||`"));
        }
        self.pending.extend(stmts);
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

    fn mem_op(&mut self, kind: AccessKind, width: u32, volatile: bool, text: &str, span: Span, key: &str) -> MemOpId {
        let id = MemOpId(self.k.mem_ops.len() as u32);
        self.k.mem_ops.push(MemOp {
            kind,
            space: Space::Global,
            width,
            cache: CacheOp::Default,
            volatile,
            text: text.to_string(),
            span,
            addr_key: format!("{width}:{key}"),
            warp_aggregated: false,
        });
        id
    }

    fn compact(&self, s: proc_macro2::Span) -> String {
        self.cx.text(s).chars().filter(|c| !c.is_whitespace()).collect()
    }

    // ---- statements -------------------------------------------------------------------

    fn block(&mut self, b: &syn::Block, out: &mut Vec<Stmt>) -> Result<()> {
        self.scopes.push(HashMap::new());
        let r = b.stmts.iter().try_for_each(|s| self.stmt(s, out));
        self.scopes.pop();
        r
    }

    fn stmt(&mut self, s: &syn::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        self.enter(s.span())?;
        let r = match s {
            syn::Stmt::Local(l) => self.let_stmt(l, out),
            syn::Stmt::Item(syn::Item::Const(c)) => {
                let v = int_type(&c.ty).and_then(|t| {
                    let consts = self.const_env();
                    const_eval(&c.expr, &consts).map(|v| (t.wrap(v), t))
                });
                match v {
                    Some((v, t)) => {
                        self.scopes.last_mut().expect("scope").insert(c.ident.to_string(), Sym::Const(v, t));
                        Ok(())
                    }
                    None => Err(self.unsupported(c.span(), "a `const` that is not an integer constant")),
                }
            }
            syn::Stmt::Item(i) => Err(self.unsupported(i.span(), "an item inside a kernel")),
            syn::Stmt::Expr(e, _) => self.effect(e, out),
            syn::Stmt::Macro(m) => Err(self.unsupported(m.span(), "a macro call")),
        };
        self.depth -= 1;
        r
    }

    /// Constants visible here (file constants and block-level `const`s).
    fn const_env(&self) -> HashMap<String, (i128, IntTy)> {
        let mut env = self.cx.consts.clone();
        for scope in &self.scopes {
            for (n, s) in scope {
                if let Sym::Const(v, t) = s {
                    env.insert(n.clone(), (*v, *t));
                }
            }
        }
        env
    }

    fn let_stmt(&mut self, l: &syn::Local, out: &mut Vec<Stmt>) -> Result<()> {
        let (pat, decl) = match &l.pat {
            syn::Pat::Type(pt) => (&*pt.pat, Some(self.value_type(&pt.ty)?)),
            p => (p, None),
        };
        let name = match pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.to_string()),
            syn::Pat::Wild(_) => None,
            _ => return Err(self.unsupported(pat.span(), "this `let` pattern")),
        };
        let Some(init) = &l.init else {
            // `let x: T;` assigned later.
            let (Some(name), Some(t)) = (name, decl) else {
                return Err(self.unsupported(l.span(), "a `let` without a type or a value"));
            };
            let id = self.new_local(&name, &t);
            self.scopes.last_mut().expect("scope").insert(name, Sym::Local(id, t));
            return Ok(());
        };
        if init.diverge.is_some() {
            return Err(self.unsupported(l.span(), "`let ... else`"));
        }
        let (e, et) = self.expr(&init.expr)?;
        let (e, t) = match decl {
            Some(d) => (self.coerce(e, &et, &d, init.expr.span())?, d),
            None => (e, et),
        };
        self.flush(out);
        match name {
            Some(name) => {
                let id = self.new_local(&name, &t);
                out.push(Stmt::Assign { local: id, value: e, span: self.span(l.span()) });
                self.scopes.last_mut().expect("scope").insert(name, Sym::Local(id, t));
            }
            None => out.push(Stmt::Eval(e)),
        }
        Ok(())
    }

    /// An expression in statement position.
    fn effect(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> Result<()> {
        match e {
            syn::Expr::Assign(a) => {
                let (v, vt) = self.expr(&a.right)?;
                let place = self.place(&a.left)?;
                let s = self.write(place, v, &vt, a.right.span())?;
                self.flush(out);
                out.push(s);
            }
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => {
                let op = compound_op(&b.op).expect("compound");
                let (v, vt) = self.expr(&b.right)?;
                let place = self.place(&b.left)?;
                // `a[i] += v` reads, then writes the same place: one load and one store, and
                // its address evaluated once (bound first when computing it loads memory).
                let place = match place {
                    Place::Mem { addr, elem, volatile, text, span, key } if crate::ir::contains_load(&addr) => {
                        let t = self.temp(&RTy::Ptr { elem: Box::new(elem.clone()), mutable: true });
                        self.pending.push(Stmt::Assign { local: t, value: addr, span });
                        Place::Mem { addr: Expr::Local(t), elem, volatile, text, span, key }
                    }
                    p => p,
                };
                let (cur, ct) = self.read_place(&place);
                let (nv, nt) = self.binary(op, cur, ct, v, vt, e.span())?;
                let s = self.write(place, nv, &nt, e.span())?;
                self.flush(out);
                out.push(s);
            }
            syn::Expr::If(i) => self.if_stmt(i, out, None)?,
            syn::Expr::While(w) => {
                if w.label.is_some() {
                    return Err(self.unsupported(w.span(), "a labelled loop"));
                }
                if matches!(&*w.cond, syn::Expr::Let(_)) {
                    return Err(self.unsupported(w.cond.span(), "`while let`"));
                }
                let saved = std::mem::take(&mut self.pending);
                let c = self.cond(&w.cond);
                let pre = std::mem::replace(&mut self.pending, saved);
                let c = c?;
                let mut body = Vec::new();
                self.block(&w.body, &mut body)?;
                let span = self.span(w.span());
                if pre.is_empty() {
                    out.push(Stmt::Loop {
                        cond: Some(c),
                        body,
                        step: Vec::new(),
                        test_first: true,
                        span,
                        synthetic: false,
                    });
                } else {
                    let mut b = pre;
                    b.push(Stmt::exit_unless(c, span));
                    b.extend(body);
                    out.push(Stmt::Loop {
                        cond: None,
                        body: b,
                        step: Vec::new(),
                        test_first: true,
                        span,
                        synthetic: false,
                    });
                }
            }
            syn::Expr::Loop(l) => {
                if l.label.is_some() {
                    return Err(self.unsupported(l.span(), "a labelled loop"));
                }
                let mut body = Vec::new();
                self.block(&l.body, &mut body)?;
                let span = self.span(l.span());
                out.push(Stmt::Loop { cond: None, body, step: Vec::new(), test_first: true, span, synthetic: false });
            }
            syn::Expr::ForLoop(f) => {
                self.scopes.push(HashMap::new());
                let r = self.for_loop(f, out);
                self.scopes.pop();
                r?;
            }
            syn::Expr::Block(b) => {
                if b.label.is_some() {
                    return Err(self.unsupported(b.span(), "a labelled block"));
                }
                self.block(&b.block, out)?;
            }
            syn::Expr::Unsafe(u) => self.block(&u.block, out)?,
            syn::Expr::Return(r) => {
                if let Some(v) = &r.expr {
                    return Err(self.unsupported(v.span(), "returning a value from a kernel"));
                }
                out.push(Stmt::Return);
            }
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    return Err(self.unsupported(b.span(), "`break` with a label or a value"));
                }
                out.push(Stmt::Break);
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return Err(self.unsupported(c.span(), "`continue` with a label"));
                }
                out.push(Stmt::Continue);
            }
            syn::Expr::Paren(p) => self.effect(&p.expr, out)?,
            syn::Expr::Call(c) if is_barrier(c) => out.push(Stmt::Barrier),
            _ => {
                let (x, _) = self.expr(e)?;
                self.flush(out);
                if !matches!(x, Expr::Int(..) | Expr::Local(_) | Expr::Param(_) | Expr::Builtin(_)) {
                    out.push(Stmt::Eval(x));
                }
            }
        }
        Ok(())
    }

    /// An `if` statement; with `result`, each branch's tail value is assigned to it.
    fn if_stmt(&mut self, i: &syn::ExprIf, out: &mut Vec<Stmt>, result: Option<(LocalId, RTy)>) -> Result<()> {
        let c = self.cond(&i.cond)?;
        self.flush(out);
        let mut then = Vec::new();
        self.branch(&i.then_branch, &mut then, result.clone())?;
        let mut els = Vec::new();
        match &i.else_branch {
            Some((_, e)) => match &**e {
                syn::Expr::If(inner) => self.if_stmt(inner, &mut els, result)?,
                syn::Expr::Block(b) => self.branch(&b.block, &mut els, result)?,
                other => self.effect(other, &mut els)?,
            },
            None => {
                if result.is_some() {
                    return Err(self.unsupported(i.span(), "an `if` without `else` used as a value"));
                }
            }
        }
        out.push(Stmt::If { cond: c, then, els, span: self.span(i.cond.span()) });
        Ok(())
    }

    fn branch(&mut self, b: &syn::Block, out: &mut Vec<Stmt>, result: Option<(LocalId, RTy)>) -> Result<()> {
        let Some((local, rt)) = result else {
            return self.block(b, out);
        };
        self.scopes.push(HashMap::new());
        let r = (|| {
            let (stmts, tail) = split_tail(b);
            for s in stmts {
                self.stmt(s, out)?;
            }
            let tail = tail.ok_or_else(|| self.unsupported(b.span(), "an `if` branch without a value"))?;
            let (v, vt) = self.expr(tail)?;
            let v = self.coerce(v, &vt, &rt, tail.span())?;
            self.flush(out);
            out.push(Stmt::Assign { local, value: v, span: self.span(tail.span()) });
            Ok(())
        })();
        self.scopes.pop();
        r
    }

    fn cond(&mut self, c: &syn::Expr) -> Result<Expr> {
        if matches!(c, syn::Expr::Let(_)) {
            return Err(self.unsupported(c.span(), "`if let`"));
        }
        let (e, t) = self.expr(c)?;
        Ok(match t {
            RTy::Float(_) => Expr::FloatBinary { op: BinOp::Ne, lhs: Box::new(e), rhs: Box::new(Expr::Float(0.0)) },
            _ => e,
        })
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) -> Result<()> {
        if f.label.is_some() {
            return Err(self.unsupported(f.span(), "a labelled loop"));
        }
        let (name, mutable) = match &*f.pat {
            syn::Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                (Some(p.ident.to_string()), p.mutability.is_some())
            }
            syn::Pat::Wild(_) => (None, false),
            other => return Err(self.unsupported(other.span(), "this loop pattern")),
        };
        // The iterator: `a..b`, `a..=b`, `(a..b).step_by(s)`, `(a..b).rev()`.
        let mut it = &*f.expr;
        let mut step = None;
        let mut rev = false;
        loop {
            match it {
                syn::Expr::Paren(p) => it = &p.expr,
                syn::Expr::Group(g) => it = &g.expr,
                syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 && step.is_none() && !rev => {
                    step = Some(&m.args[0]);
                    it = &m.receiver;
                }
                syn::Expr::MethodCall(m) if m.method == "rev" && m.args.is_empty() && step.is_none() && !rev => {
                    rev = true;
                    it = &m.receiver;
                }
                _ => break,
            }
        }
        let syn::Expr::Range(range) = it else {
            return Err(self.unsupported(f.expr.span(), "a `for` loop over anything but an integer range"));
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return Err(self.unsupported(range.span(), "an open range"));
        };
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        let span = self.span(f.span());
        let (s, st) = self.expr(start)?;
        let (e, et) = self.expr(end)?;
        self.infer.unify(&st, &et);
        let ty = self.infer.resolve(&st);
        let s = self.convert(s, &st, &ty, start.span())?;
        let e = self.convert(e, &et, &ty, end.span())?;
        let it_ty = self.int_of(&ty);
        // The range is evaluated once, before the first iteration.
        let (step_e, step_span) = match step {
            Some(x) => {
                let (v, vt) = self.expr(x)?;
                let v = self.coerce(v, &vt, &RTy::Int(IntTy::U64), x.span())?;
                let v = self.convert(v, &RTy::Int(IntTy::U64), &ty, x.span())?;
                (Some(v), Some(x.span()))
            }
            None => (None, None),
        };
        self.flush(out);
        let counter = match (&name, mutable) {
            (Some(n), false) => self.new_local(n, &ty),
            _ => self.temp(&ty),
        };
        let fixed = |l: &mut Self, v: Expr, out: &mut Vec<Stmt>| -> Expr {
            if matches!(v, Expr::Int(..) | Expr::Param(_)) {
                return v;
            }
            let t = l.temp(&ty);
            out.push(Stmt::Assign { local: t, value: v, span });
            Expr::Local(t)
        };
        let step_v = match step_e {
            Some(v) => fixed(self, v, out),
            None => Expr::Int(1, it_ty),
        };
        let _ = step_span;
        let bin = |op, a: Expr, b: Expr| Expr::Binary { op, ty: it_ty, lhs: Box::new(a), rhs: Box::new(b), span };
        let mut body = Vec::new();
        let (cond, step_stmts) = if rev {
            // Counts down from the end; the decrement opens each iteration.
            let lo = fixed(self, s, out);
            let hi = if inclusive { bin(BinOp::Add, e, Expr::Int(1, it_ty)) } else { e };
            out.push(Stmt::Assign { local: counter, value: hi, span });
            body.push(Stmt::Assign { local: counter, value: bin(BinOp::Sub, Expr::Local(counter), step_v), span });
            (bin(BinOp::Gt, Expr::Local(counter), lo), Vec::new())
        } else {
            let hi = fixed(self, e, out);
            out.push(Stmt::Assign { local: counter, value: s, span });
            let op = if inclusive { BinOp::Le } else { BinOp::Lt };
            (
                bin(op, Expr::Local(counter), hi),
                vec![Stmt::Assign { local: counter, value: bin(BinOp::Add, Expr::Local(counter), step_v), span }],
            )
        };
        if let Some(n) = name {
            let var = if mutable {
                let v = self.new_local(&n, &ty);
                body.push(Stmt::Assign { local: v, value: Expr::Local(counter), span });
                v
            } else {
                counter
            };
            self.scopes.last_mut().expect("scope").insert(n, Sym::Local(var, ty.clone()));
        }
        self.block(&f.body, &mut body)?;
        out.push(Stmt::Loop { cond: Some(cond), body, step: step_stmts, test_first: true, span, synthetic: false });
        Ok(())
    }

    fn write(&mut self, place: Place, v: Expr, vt: &RTy, s: proc_macro2::Span) -> Result<Stmt> {
        Ok(match place {
            Place::Local(id, t) => {
                let v = self.coerce(v, vt, &t, s)?;
                Stmt::Assign { local: id, value: v, span: self.span(s) }
            }
            Place::Mem { addr, elem, volatile, text, span, key } => {
                let v = self.coerce(v, vt, &elem, s)?;
                let width = self.size_of(&elem);
                let op = self.mem_op(AccessKind::Store, width, volatile, &text, span, &key);
                Stmt::Store { op, addr, value: v }
            }
        })
    }

    fn read_place(&mut self, p: &Place) -> (Expr, RTy) {
        match p {
            Place::Local(id, t) => (Expr::Local(*id), t.clone()),
            Place::Mem { addr, elem, volatile, text, span, key } => {
                let width = self.size_of(elem);
                let op = self.mem_op(AccessKind::Load, width, *volatile, text, *span, key);
                (Expr::Load { op, addr: Box::new(addr.clone()) }, elem.clone())
            }
        }
    }

    /// An lvalue: a local, a slice element, or the target of a pointer.
    fn place(&mut self, e: &syn::Expr) -> Result<Place> {
        match e {
            syn::Expr::Paren(p) => self.place(&p.expr),
            syn::Expr::Group(g) => self.place(&g.expr),
            syn::Expr::Path(p) => {
                let name = p.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
                match self.lookup(&name) {
                    Some(Sym::Local(id, t)) => Ok(Place::Local(id, t)),
                    Some(_) => Err(self.unsupported(e.span(), "assigning to a parameter or a constant")),
                    None => Err(self.undeclared(e)),
                }
            }
            syn::Expr::Index(ix) => {
                let (base, bt) = self.expr(&ix.expr)?;
                let RTy::Slice { elem, .. } = bt else {
                    return Err(self.unsupported(ix.expr.span(), "indexing something that is not a slice"));
                };
                if matches!(&*ix.index, syn::Expr::Range(_)) {
                    return Err(self.unsupported(ix.index.span(), "a sub-slice"));
                }
                let (i, it) = self.expr(&ix.index)?;
                let i = self.coerce(i, &it, &RTy::Int(IntTy::U64), ix.index.span())?;
                let size = self.size_of(&elem);
                self.slice_indexed = true;
                let key = format!("{}[{}]", self.compact(ix.expr.span()), self.compact(ix.index.span()));
                Ok(Place::Mem {
                    addr: offset(base, i, IntTy::U64, size as i128, false),
                    elem: *elem,
                    volatile: false,
                    text: self.cx.text(e.span()),
                    span: self.span(e.span()),
                    key,
                })
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                let (p, pt) = self.expr(&u.expr)?;
                let RTy::Ptr { elem, .. } = pt else {
                    return Err(self.unsupported(u.expr.span(), "dereferencing something that is not a pointer"));
                };
                let key = format!("*{}", self.compact(u.expr.span()));
                Ok(Place::Mem {
                    addr: p,
                    elem: *elem,
                    volatile: false,
                    text: self.cx.text(e.span()),
                    span: self.span(e.span()),
                    key,
                })
            }
            _ => Err(self.unsupported(e.span(), "assigning to this expression")),
        }
    }

    fn undeclared(&self, e: &syn::Expr) -> Diagnostic {
        Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(e.span()),
            format!(
                "`{}` is not a local, a parameter or an integer constant of this file (statics and other items are not supported)",
                self.cx.text(e.span())
            ),
        )
    }

    // ---- expressions ------------------------------------------------------------------

    fn expr(&mut self, e: &syn::Expr) -> Result<(Expr, RTy)> {
        self.enter(e.span())?;
        let r = self.expr_inner(e);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, e: &syn::Expr) -> Result<(Expr, RTy)> {
        match e {
            syn::Expr::Lit(l) => self.literal(&l.lit),
            syn::Expr::Paren(p) => self.expr(&p.expr),
            syn::Expr::Group(g) => self.expr(&g.expr),
            syn::Expr::Path(p) => self.path(e, &p.path),
            syn::Expr::Binary(b) => {
                if compound_op(&b.op).is_some() {
                    return Err(self.unsupported(e.span(), "a compound assignment used as a value"));
                }
                if let syn::BinOp::And(_) | syn::BinOp::Or(_) = b.op {
                    let a = self.cond(&b.left)?;
                    self.no_hoist += 1;
                    let r = self.cond(&b.right);
                    self.no_hoist -= 1;
                    let and = matches!(b.op, syn::BinOp::And(_));
                    return Ok((Expr::Logical { and, lhs: Box::new(a), rhs: Box::new(r?) }, RTy::Bool));
                }
                let op = plain_op(&b.op).ok_or_else(|| self.unsupported(e.span(), "this operator"))?;
                let (x, xt) = self.expr(&b.left)?;
                let (y, yt) = self.expr(&b.right)?;
                self.binary(op, x, xt, y, yt, e.span())
            }
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Deref(_) => {
                    let p = self.place(e)?;
                    Ok(self.read_place(&p))
                }
                syn::UnOp::Neg(_) => {
                    let (a, at) = self.expr(&u.expr)?;
                    if at.is_float() {
                        return Ok((Expr::Unary { op: UnOp::Neg, ty: IntTy::I32, arg: Box::new(a) }, at));
                    }
                    let t = self.int_of(&at);
                    Ok((Expr::Unary { op: UnOp::Neg, ty: t, arg: Box::new(a) }, at))
                }
                syn::UnOp::Not(_) => {
                    let (a, at) = self.expr(&u.expr)?;
                    match self.infer.resolve(&at) {
                        RTy::Bool => {
                            Ok((Expr::Unary { op: UnOp::LogicalNot, ty: IntTy::I32, arg: Box::new(a) }, RTy::Bool))
                        }
                        t if t.is_intlike() => {
                            let it = self.int_of(&t);
                            Ok((Expr::Unary { op: UnOp::Not, ty: it, arg: Box::new(a) }, at))
                        }
                        _ => Err(self.unsupported(e.span(), "`!` on this operand")),
                    }
                }
                _ => Err(self.unsupported(e.span(), "this operator")),
            },
            syn::Expr::Cast(c) => {
                let to = self.value_type(&c.ty)?;
                let (v, vt) = self.expr(&c.expr)?;
                let v = self.convert(v, &vt, &to, e.span())?;
                Ok((v, to))
            }
            syn::Expr::Index(_) => {
                let p = self.place(e)?;
                Ok(self.read_place(&p))
            }
            syn::Expr::Reference(r) => {
                // `&a[i]`: the element's address, no access.
                match self.place(&r.expr)? {
                    Place::Mem { addr, elem, .. } => {
                        Ok((addr, RTy::Ptr { elem: Box::new(elem), mutable: r.mutability.is_some() }))
                    }
                    Place::Local(..) => Err(self.unsupported(e.span(), "a reference to a local variable")),
                }
            }
            syn::Expr::MethodCall(m) => self.method_call(m),
            syn::Expr::Call(c) => self.call(c),
            syn::Expr::If(i) => self.if_value(i),
            syn::Expr::Block(b) if b.label.is_none() => self.block_value(&b.block),
            syn::Expr::Unsafe(u) => self.block_value(&u.block),
            syn::Expr::Closure(_) => Err(self.unsupported(e.span(), "a closure")),
            syn::Expr::Match(_) => Err(self.unsupported(e.span(), "`match`")),
            syn::Expr::Struct(_) => Err(self.unsupported(e.span(), "a struct")),
            syn::Expr::Field(_) => Err(self.unsupported(e.span(), "a field access (structs and tuples)")),
            syn::Expr::Tuple(t) if t.elems.is_empty() => Ok((Expr::Int(0, IntTy::I32), RTy::Unit)),
            syn::Expr::Tuple(_) => Err(self.unsupported(e.span(), "a tuple")),
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => Err(self.unsupported(e.span(), "an array")),
            syn::Expr::Macro(_) => Err(self.unsupported(e.span(), "a macro call")),
            syn::Expr::Range(_) => Err(self.unsupported(e.span(), "a range outside a `for` loop")),
            syn::Expr::Assign(_) => Err(self.unsupported(e.span(), "an assignment used as a value")),
            syn::Expr::Try(_) => Err(self.unsupported(e.span(), "the `?` operator")),
            syn::Expr::Loop(_) | syn::Expr::While(_) | syn::Expr::ForLoop(_) => {
                Err(self.unsupported(e.span(), "a loop used as a value"))
            }
            syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => {
                Err(self.unsupported(e.span(), "`return`, `break` or `continue` inside an expression"))
            }
            _ => Err(self.unsupported(e.span(), "this expression")),
        }
    }

    fn literal(&mut self, l: &syn::Lit) -> Result<(Expr, RTy)> {
        match l {
            syn::Lit::Int(i) => {
                let v = i
                    .base10_parse::<u128>()
                    .ok()
                    .filter(|v| *v <= u64::MAX as u128)
                    .ok_or_else(|| self.unsupported(i.span(), "this integer literal"))? as i128;
                let t = match i.suffix() {
                    "" => self.infer.fresh(),
                    s => RTy::Int(int_named(s).ok_or_else(|| self.unsupported(i.span(), "this literal suffix"))?),
                };
                let it = self.int_of(&t);
                Ok((Expr::Int(it.wrap(v), it), t))
            }
            syn::Lit::Float(f) => {
                let v: f64 = f.base10_parse().map_err(|_| self.unsupported(f.span(), "this float literal"))?;
                let t = if f.suffix() == "f32" { RTy::Float(4) } else { RTy::Float(8) };
                Ok((Expr::Float(v), t))
            }
            syn::Lit::Bool(b) => Ok((Expr::Int(b.value as i128, IntTy::BOOL), RTy::Bool)),
            other => Err(self.unsupported(other.span(), "this literal")),
        }
    }

    fn path(&mut self, e: &syn::Expr, p: &syn::Path) -> Result<(Expr, RTy)> {
        if let Some(id) = p.get_ident() {
            return match self.lookup(&id.to_string()) {
                Some(Sym::Local(l, t)) => Ok((Expr::Local(l), t)),
                Some(Sym::Param(pid, t)) => Ok((Expr::Param(pid), t)),
                Some(Sym::Const(v, t)) => Ok((Expr::Int(v, t), RTy::Int(t))),
                None => Err(self.undeclared(e)),
            };
        }
        // `u32::MAX`, `usize::MIN`, `i32::BITS`.
        let segs: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if let [ty, what] = segs.as_slice() {
            if let Some(t) = int_named(ty) {
                let v = match what.as_str() {
                    "MAX" => (1i128 << (t.bits - t.signed as u8)) - 1,
                    "MIN" => {
                        if t.signed {
                            -(1i128 << (t.bits - 1))
                        } else {
                            0
                        }
                    }
                    "BITS" => return Ok((Expr::Int(t.bits as i128, IntTy::U32), RTy::Int(IntTy::U32))),
                    _ => return Err(self.undeclared(e)),
                };
                return Ok((Expr::Int(v, t), RTy::Int(t)));
            }
        }
        Err(self.undeclared(e))
    }

    /// Arithmetic and comparisons with Rust's typing (operands of one type; shifts apart).
    fn binary(&mut self, op: BinOp, a: Expr, at: RTy, b: Expr, bt: RTy, s: proc_macro2::Span) -> Result<(Expr, RTy)> {
        let span = self.span(s);
        let is_cmp = matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne);
        let at = self.infer.resolve(&at);
        let bt = self.infer.resolve(&bt);
        if at.is_float() || bt.is_float() {
            let rt = if is_cmp {
                RTy::Bool
            } else if at.is_float() {
                at.clone()
            } else {
                bt.clone()
            };
            return Ok((Expr::FloatBinary { op, lhs: Box::new(a), rhs: Box::new(b) }, rt));
        }
        if !at.is_intlike() || !bt.is_intlike() {
            if is_cmp && matches!(at, RTy::Ptr { .. }) && matches!(bt, RTy::Ptr { .. }) {
                return Ok((Expr::Binary { op, ty: IntTy::I64, lhs: Box::new(a), rhs: Box::new(b), span }, RTy::Bool));
            }
            return Err(self.unsupported(s, "this operator on pointers (use `.add()`)"));
        }
        if matches!(op, BinOp::Shl | BinOp::Shr) {
            let t = self.int_of(&at);
            let b = self.convert(b, &bt, &RTy::Int(t), s)?;
            return Ok((Expr::Binary { op, ty: t, lhs: Box::new(a), rhs: Box::new(b), span }, at));
        }
        self.infer.unify(&at, &bt);
        let (at, bt) = (self.infer.resolve(&at), self.infer.resolve(&bt));
        // Rust has one operand type; where two differ (not valid Rust), the wider one wins.
        let t = match (&at, &bt) {
            (RTy::Int(x), RTy::Int(y)) if x != y => {
                if y.bits > x.bits {
                    bt.clone()
                } else {
                    at.clone()
                }
            }
            (RTy::Var(_), _) => bt.clone(),
            _ => at.clone(),
        };
        let it = self.int_of(&t);
        let a = self.convert(a, &at, &t, s)?;
        let b = self.convert(b, &bt, &t, s)?;
        let rt = if is_cmp { RTy::Bool } else { t };
        Ok((Expr::Binary { op, ty: it, lhs: Box::new(a), rhs: Box::new(b), span }, rt))
    }

    fn if_value(&mut self, i: &syn::ExprIf) -> Result<(Expr, RTy)> {
        if self.no_hoist == 0 {
            // Lowered as a statement that assigns each branch's value to a temporary.
            let Some((_, els)) = &i.else_branch else {
                return Err(self.unsupported(i.span(), "an `if` without `else` used as a value"));
            };
            let t = self.branch_type(&i.then_branch, els)?;
            let tmp = self.temp(&t);
            let mut out = Vec::new();
            self.if_stmt(i, &mut out, Some((tmp, t.clone())))?;
            self.hoist(i.span(), out)?;
            return Ok((Expr::Local(tmp), t));
        }
        // Inside a condition: only `if c { x } else { y }` with plain values.
        let c = self.cond(&i.cond)?;
        let (Some(then), Some((_, els))) = (pure_tail(&i.then_branch), &i.else_branch) else {
            return Err(self.unsupported(i.span(), "an `if` with statements inside a condition"));
        };
        let (a, at) = self.expr(then)?;
        let (b, bt) = self.expr(els)?;
        self.infer.unify(&at, &bt);
        Ok((Expr::Select { cond: Box::new(c), then: Box::new(a), els: Box::new(b) }, at))
    }

    /// The type of an `if`'s value, from its first branch with a typed tail (literal types
    /// are unified when the branches are lowered).
    fn branch_type(&mut self, then: &syn::Block, _els: &syn::Expr) -> Result<RTy> {
        // Evaluate nothing here: a fresh variable stands for an integer result; the branches'
        // coercions solve it. Float and pointer results take the type from a first look at the
        // tail's shape.
        let tail = split_tail(then).1.ok_or_else(|| self.unsupported(then.span(), "an `if` branch without a value"))?;
        Ok(match self.shape(tail) {
            Some(t) => t,
            None => self.infer.fresh(),
        })
    }

    /// A cheap guess of an expression's type without lowering it (for `if` values): floats and
    /// pointers by their literal or variable; everything else is an integer.
    fn shape(&mut self, e: &syn::Expr) -> Option<RTy> {
        match e {
            syn::Expr::Lit(l) => match &l.lit {
                syn::Lit::Float(f) => Some(if f.suffix() == "f32" { RTy::Float(4) } else { RTy::Float(8) }),
                syn::Lit::Bool(_) => Some(RTy::Bool),
                _ => None,
            },
            syn::Expr::Path(p) => match self.lookup(&p.path.get_ident()?.to_string())? {
                Sym::Local(_, t) | Sym::Param(_, t) => Some(t),
                Sym::Const(_, t) => Some(RTy::Int(t)),
            },
            syn::Expr::Cast(c) => self.value_type(&c.ty).ok(),
            syn::Expr::Paren(p) => self.shape(&p.expr),
            syn::Expr::Index(ix) => match self.shape(&ix.expr)? {
                RTy::Slice { elem, .. } => Some(*elem),
                _ => None,
            },
            syn::Expr::Binary(b) => {
                if matches!(
                    b.op,
                    syn::BinOp::Lt(_)
                        | syn::BinOp::Le(_)
                        | syn::BinOp::Gt(_)
                        | syn::BinOp::Ge(_)
                        | syn::BinOp::Eq(_)
                        | syn::BinOp::Ne(_)
                        | syn::BinOp::And(_)
                        | syn::BinOp::Or(_)
                ) {
                    Some(RTy::Bool)
                } else {
                    self.shape(&b.left).or_else(|| self.shape(&b.right))
                }
            }
            syn::Expr::Unary(u) => match u.op {
                syn::UnOp::Deref(_) => match self.shape(&u.expr)? {
                    RTy::Ptr { elem, .. } => Some(*elem),
                    _ => None,
                },
                _ => self.shape(&u.expr),
            },
            syn::Expr::MethodCall(m) if matches!(m.method.to_string().as_str(), "add" | "sub" | "offset") => {
                self.shape(&m.receiver)
            }
            syn::Expr::MethodCall(m) if m.method == "read" => match self.shape(&m.receiver)? {
                RTy::Ptr { elem, .. } => Some(*elem),
                _ => None,
            },
            syn::Expr::Block(b) => split_tail(&b.block).1.and_then(|t| self.shape(t)),
            syn::Expr::Unsafe(u) => split_tail(&u.block).1.and_then(|t| self.shape(t)),
            _ => None,
        }
    }

    /// `{ stmts; tail }` as a value: the statements run before the enclosing statement.
    fn block_value(&mut self, b: &syn::Block) -> Result<(Expr, RTy)> {
        let (stmts, tail) = split_tail(b);
        self.scopes.push(HashMap::new());
        let r = (|| {
            if !stmts.is_empty() {
                let mut out = std::mem::take(&mut self.pending);
                for s in stmts {
                    self.stmt(s, &mut out)?;
                }
                let before = std::mem::take(&mut self.pending);
                out.extend(before);
                self.hoist(b.span(), out)?;
            }
            match tail {
                Some(t) => self.expr(t),
                None => Ok((Expr::Int(0, IntTy::I32), RTy::Unit)),
            }
        })();
        self.scopes.pop();
        r
    }

    fn method_call(&mut self, m: &syn::ExprMethodCall) -> Result<(Expr, RTy)> {
        let name = m.method.to_string();
        let s = m.span();
        // `a.len()` on a slice parameter: a hidden integer parameter.
        if name == "len" && m.args.is_empty() {
            if let syn::Expr::Path(p) = &*m.receiver {
                if let Some(id) = p.path.get_ident() {
                    if let Some(Sym::Param(_, RTy::Slice { .. })) = self.lookup(&id.to_string()) {
                        return Ok((
                            Expr::Param(self.len_param(&id.to_string(), m.receiver.span())?),
                            RTy::Int(IntTy::U64),
                        ));
                    }
                }
            }
            return Err(self.unsupported(s, "`.len()` of anything but a slice parameter"));
        }
        let (recv, rt) = self.expr(&m.receiver)?;
        let rt = self.infer.resolve(&rt);
        let mut args = Vec::new();
        for a in &m.args {
            args.push((self.expr(a)?, a.span()));
        }
        let argc = args.len();
        match (&rt, name.as_str(), argc) {
            (RTy::Ptr { elem, .. }, "add" | "sub" | "offset" | "wrapping_add" | "wrapping_sub" | "wrapping_offset" | "byte_add" | "byte_sub" | "byte_offset", 1) => {
                let ((i, it), ispan) = args.pop().expect("one argument");
                let signed = name.ends_with("offset");
                let want = RTy::Int(if signed { IntTy::I64 } else { IntTy::U64 });
                let i = self.coerce(i, &it, &want, ispan)?;
                let size = if name.starts_with("byte_") { 1 } else { self.size_of(elem) as i128 };
                let neg = name.ends_with("sub");
                let ity = if signed { IntTy::I64 } else { IntTy::U64 };
                Ok((offset(recv, i, ity, size, neg), rt.clone()))
            }
            (RTy::Ptr { elem, .. }, "read" | "read_volatile" | "read_unaligned", 0) => {
                let width = self.size_of(elem);
                let key = format!("*{}", self.compact(m.receiver.span()));
                let text = self.cx.text(s);
                let op = self.mem_op(AccessKind::Load, width, name == "read_volatile", &text, self.span(s), &key);
                Ok((Expr::Load { op, addr: Box::new(recv) }, (**elem).clone()))
            }
            (RTy::Ptr { elem, .. }, "write" | "write_volatile" | "write_unaligned", 1) => {
                let ((v, vt), vspan) = args.pop().expect("one argument");
                let v = self.coerce(v, &vt, elem, vspan)?;
                let width = self.size_of(elem);
                let key = format!("*{}", self.compact(m.receiver.span()));
                let text = self.cx.text(s);
                let op = self.mem_op(AccessKind::Store, width, name == "write_volatile", &text, self.span(s), &key);
                self.hoist(s, vec![Stmt::Store { op, addr: recv, value: v }])?;
                Ok((Expr::Int(0, IntTy::I32), RTy::Unit))
            }
            (RTy::Slice { elem, mutable }, "as_ptr" | "as_mut_ptr", 0) => {
                Ok((recv, RTy::Ptr { elem: elem.clone(), mutable: *mutable && name == "as_mut_ptr" }))
            }
            (RTy::Slice { elem, .. }, "get_unchecked" | "get_unchecked_mut", 1) => {
                let ((i, it), ispan) = args.pop().expect("one argument");
                let i = self.coerce(i, &it, &RTy::Int(IntTy::U64), ispan)?;
                let size = self.size_of(elem) as i128;
                Ok((offset(recv, i, IntTy::U64, size, false), RTy::Ptr { elem: elem.clone(), mutable: name.ends_with("mut") }))
            }
            (t, "min" | "max", 1) if t.is_intlike() => {
                let ((b, bt), _) = args.pop().expect("one argument");
                let op = if name == "min" { BinOp::Min } else { BinOp::Max };
                self.binary(op, recv, rt.clone(), b, bt, s)
            }
            (t, "wrapping_add" | "wrapping_sub" | "wrapping_mul", 1) if t.is_intlike() => {
                let ((b, bt), _) = args.pop().expect("one argument");
                let op = match name.as_str() {
                    "wrapping_add" => BinOp::Add,
                    "wrapping_sub" => BinOp::Sub,
                    _ => BinOp::Mul,
                };
                self.binary(op, recv, rt.clone(), b, bt, s)
            }
            (RTy::Float(_), "min" | "max", 1) => {
                let ((b, _), _) = args.pop().expect("one argument");
                let op = if name == "min" { BinOp::Min } else { BinOp::Max };
                Ok((Expr::FloatBinary { op, lhs: Box::new(recv), rhs: Box::new(b) }, rt.clone()))
            }
            (RTy::Float(_), f, _) if FLOAT_METHODS.contains(&f) => {
                let mut all = vec![recv];
                all.extend(args.into_iter().map(|((e, _), _)| e));
                Ok((Expr::Opaque { args: all, what: format!("{name}()") }, rt.clone()))
            }
            _ => Err(self.unsupported(
                s,
                &format!("the method `.{name}()` here (the subset: `.add()`, `.offset()`, `.read()`, `.write()`, `.len()`, `.as_ptr()`, `.get_unchecked()`, `.min()`, `.max()`, `.wrapping_*()`, float math)"),
            )),
        }
    }

    fn len_param(&mut self, slice: &str, s: proc_macro2::Span) -> Result<ParamId> {
        if let Some(p) = self.lens.get(slice) {
            return Ok(*p);
        }
        let name = format!("{slice}_len");
        if self.k.param_by_name(&name).is_some() {
            return Err(Diagnostic::at(
                ErrorKind::Unsupported,
                self.span(s),
                format!("`{slice}.len()` is the launch value `{name}`, but a parameter has that name"),
            ));
        }
        let id = ParamId(self.k.params.len() as u32);
        let span = self.k.params.iter().find(|p| p.name == slice).map_or(self.span(s), |p| p.span);
        self.k.params.push(Param { name, ty: Ty::Int(IntTy::U64), span });
        self.lens.insert(slice.to_string(), id);
        Ok(id)
    }

    fn call(&mut self, c: &syn::ExprCall) -> Result<(Expr, RTy)> {
        let s = c.span();
        let syn::Expr::Path(p) = &*c.func else {
            return Err(self.unsupported(s, "this call"));
        };
        let segs: Vec<String> = p.path.segments.iter().map(|x| x.ident.to_string()).collect();
        let name = segs.last().cloned().unwrap_or_default();
        let prefix_ok = |allowed: &[&str]| segs[..segs.len() - 1].iter().all(|x| allowed.contains(&x.as_str()));
        if c.args.is_empty() && prefix_ok(&["cuda_std", "thread"]) {
            let dim = |n: &str| match n.chars().last() {
                Some('x') => Some(0u8),
                Some('y') => Some(1),
                Some('z') => Some(2),
                _ => None,
            };
            let u32t = RTy::Int(IntTy::U32);
            let builtin = |b| Expr::Builtin(b);
            let found = match name.as_str() {
                "index_1d" => {
                    let mul = Expr::Binary {
                        op: BinOp::Mul,
                        ty: IntTy::U32,
                        lhs: Box::new(builtin(Builtin::BlockIdx(0))),
                        rhs: Box::new(builtin(Builtin::BlockDim(0))),
                        span: self.span(s),
                    };
                    Some(Expr::Binary {
                        op: BinOp::Add,
                        ty: IntTy::U32,
                        lhs: Box::new(mul),
                        rhs: Box::new(builtin(Builtin::ThreadIdx(0))),
                        span: self.span(s),
                    })
                }
                n if n.starts_with("thread_idx_") => dim(n).map(|d| builtin(Builtin::ThreadIdx(d))),
                n if n.starts_with("block_idx_") => dim(n).map(|d| builtin(Builtin::BlockIdx(d))),
                n if n.starts_with("block_dim_") => dim(n).map(|d| builtin(Builtin::BlockDim(d))),
                n if n.starts_with("grid_dim_") => dim(n).map(|d| builtin(Builtin::GridDim(d))),
                _ => None,
            };
            if let Some(x) = found {
                return Ok((x, u32t));
            }
        }
        if is_barrier(c) {
            return Err(self.unsupported(s, "a barrier inside an expression"));
        }
        let mut args = Vec::new();
        for a in &c.args {
            args.push((self.expr(a)?, a.span()));
        }
        if matches!(name.as_str(), "min" | "max") && args.len() == 2 && prefix_ok(&["core", "std", "cmp"]) {
            let ((b, bt), _) = args.pop().expect("two arguments");
            let ((a, at), _) = args.pop().expect("two arguments");
            let op = if name == "min" { BinOp::Min } else { BinOp::Max };
            return self.binary(op, a, at, b, bt, s);
        }
        if prefix_ok(&["core", "std", "ptr"]) && segs.len() > 1 {
            match (name.as_str(), args.len()) {
                ("read" | "read_volatile", 1) => {
                    let ((p, pt), _) = args.pop().expect("one argument");
                    if let RTy::Ptr { elem, .. } = pt {
                        let width = self.size_of(&elem);
                        let key = format!("*{}", self.compact(c.args[0].span()));
                        let text = self.cx.text(s);
                        let op =
                            self.mem_op(AccessKind::Load, width, name == "read_volatile", &text, self.span(s), &key);
                        return Ok((Expr::Load { op, addr: Box::new(p) }, *elem));
                    }
                }
                ("write" | "write_volatile", 2) => {
                    let ((v, vt), vspan) = args.pop().expect("two arguments");
                    let ((p, pt), _) = args.pop().expect("two arguments");
                    if let RTy::Ptr { elem, .. } = pt {
                        let v = self.coerce(v, &vt, &elem, vspan)?;
                        let width = self.size_of(&elem);
                        let key = format!("*{}", self.compact(c.args[0].span()));
                        let text = self.cx.text(s);
                        let op =
                            self.mem_op(AccessKind::Store, width, name == "write_volatile", &text, self.span(s), &key);
                        self.hoist(s, vec![Stmt::Store { op, addr: p, value: v }])?;
                        return Ok((Expr::Int(0, IntTy::I32), RTy::Unit));
                    }
                }
                _ => {}
            }
        }
        Err(Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(s),
            format!(
                "call to `{}` is not supported: kernels may call cuda_std's `thread::` index functions, `thread::sync_threads()`, `min`/`max` and `ptr::read`/`ptr::write`",
                segs.join("::")
            ),
        ))
    }
}

const FLOAT_METHODS: &[&str] = &[
    "sqrt",
    "abs",
    "exp",
    "exp2",
    "ln",
    "log",
    "log2",
    "log10",
    "powi",
    "powf",
    "sin",
    "cos",
    "tan",
    "tanh",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "recip",
    "mul_add",
    "hypot",
    "cbrt",
    "signum",
    "copysign",
    "clamp",
    "to_degrees",
    "to_radians",
    "rsqrt",
];

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

fn pure_tail(b: &syn::Block) -> Option<&syn::Expr> {
    match split_tail(b) {
        ([], Some(t)) => Some(t),
        _ => None,
    }
}

fn plain_op(op: &syn::BinOp) -> Option<BinOp> {
    Some(match op {
        syn::BinOp::Add(_) => BinOp::Add,
        syn::BinOp::Sub(_) => BinOp::Sub,
        syn::BinOp::Mul(_) => BinOp::Mul,
        syn::BinOp::Div(_) => BinOp::Div,
        syn::BinOp::Rem(_) => BinOp::Rem,
        syn::BinOp::BitXor(_) => BinOp::Xor,
        syn::BinOp::BitAnd(_) => BinOp::And,
        syn::BinOp::BitOr(_) => BinOp::Or,
        syn::BinOp::Shl(_) => BinOp::Shl,
        syn::BinOp::Shr(_) => BinOp::Shr,
        syn::BinOp::Eq(_) => BinOp::Eq,
        syn::BinOp::Lt(_) => BinOp::Lt,
        syn::BinOp::Le(_) => BinOp::Le,
        syn::BinOp::Ne(_) => BinOp::Ne,
        syn::BinOp::Ge(_) => BinOp::Ge,
        syn::BinOp::Gt(_) => BinOp::Gt,
        _ => return None,
    })
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
