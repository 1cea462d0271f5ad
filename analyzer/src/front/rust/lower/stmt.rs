//! Statements and places: `let`, assignments and compound assignments, `if`, `for` over a
//! range, the barrier; an lvalue is a local or a memory place.

use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn block(&mut self, b: &syn::Block, out: &mut Vec<Stmt>) -> Result<()> {
        self.scopes.push(HashMap::new());
        let r = b.stmts.iter().try_for_each(|s| self.stmt(s, out));
        self.scopes.pop();
        r
    }

    pub(super) fn stmt(&mut self, s: &syn::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
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
        self.builder.leave();
        r
    }

    /// Constants visible here (file constants and block-level `const`s).
    pub(super) fn const_env(&self) -> HashMap<String, (i128, IntTy)> {
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

    pub(super) fn let_stmt(&mut self, l: &syn::Local, out: &mut Vec<Stmt>) -> Result<()> {
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
    pub(super) fn effect(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> Result<()> {
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
                let pointee = self.ir_ty(place.ty());
                let place = self.builder.bind_address(place, pointee);
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
                let saved = std::mem::take(&mut self.builder.pending);
                let c = self.cond(&w.cond);
                let pre = std::mem::replace(&mut self.builder.pending, saved);
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
            syn::Expr::Call(c) if is_barrier(c) => out.push(Stmt::Barrier { block: true }),
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
    pub(super) fn if_stmt(
        &mut self,
        i: &syn::ExprIf,
        out: &mut Vec<Stmt>,
        result: Option<(LocalId, RTy)>,
    ) -> Result<()> {
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

    pub(super) fn branch(&mut self, b: &syn::Block, out: &mut Vec<Stmt>, result: Option<(LocalId, RTy)>) -> Result<()> {
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

    pub(super) fn cond(&mut self, c: &syn::Expr) -> Result<Expr> {
        if matches!(c, syn::Expr::Let(_)) {
            return Err(self.unsupported(c.span(), "`if let`"));
        }
        let (e, t) = self.expr(c)?;
        Ok(match t {
            RTy::Float(_) => Expr::FloatBinary { op: BinOp::Ne, lhs: Box::new(e), rhs: Box::new(Expr::Float(0.0)) },
            _ => e,
        })
    }

    pub(super) fn for_loop(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) -> Result<()> {
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

    pub(super) fn write(&mut self, place: Place, v: Expr, vt: &RTy, s: proc_macro2::Span) -> Result<Stmt> {
        Ok(match place {
            Place::Local(id, t) => {
                let v = self.coerce(v, vt, &t, s)?;
                Stmt::Assign { local: id, value: v, span: self.span(s) }
            }
            Place::Memory(memory) => {
                let v = self.coerce(v, vt, &memory.ty, s)?;
                let width = self.size_of(&memory.ty);
                self.builder.store(memory, width.into(), v)
            }
            Place::ThreadArray(_) => return Err(self.unsupported(s, "a thread's own array")),
        })
    }

    pub(super) fn read_place(&mut self, p: &Place) -> (Expr, RTy) {
        let ty = p.ty().clone();
        let width = self.size_of(&ty);
        (self.builder.read(p, width.into(), CacheOp::Default), ty)
    }

    /// An lvalue: a local, a slice element, or the target of a pointer.
    pub(super) fn place(&mut self, e: &syn::Expr) -> Result<Place> {
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
                let address = offset(base, i, IntTy::U64, size as i128, false);
                Ok(Place::Memory(self.memory_place(address, *elem, false, e.span())))
            }
            syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => {
                let (p, pt) = self.expr(&u.expr)?;
                let RTy::Ptr { elem, .. } = pt else {
                    return Err(self.unsupported(u.expr.span(), "dereferencing something that is not a pointer"));
                };
                Ok(Place::Memory(self.memory_place(p, *elem, false, e.span())))
            }
            _ => Err(self.unsupported(e.span(), "assigning to this expression")),
        }
    }

    /// The memory at `address`, a value of type `elem`, accessed as the code at `s` is written
    /// (Rust kernels' memory is global).
    pub(super) fn memory_place(
        &self,
        address: Expr,
        elem: RTy,
        volatile: bool,
        s: proc_macro2::Span,
    ) -> MemoryPlace<RTy> {
        MemoryPlace { address, ty: elem, space: Space::Global, volatile, text: self.cx.text(s), span: self.span(s) }
    }

    /// `p.write(v)`, `ptr::write(p, v)`: a store (`value` of the pointee's type) before the
    /// expression, whose own value is `()`.
    pub(super) fn store_through(
        &mut self,
        place: MemoryPlace<RTy>,
        value: Expr,
        s: proc_macro2::Span,
    ) -> Result<(Expr, RTy)> {
        let width = self.size_of(&place.ty);
        let store = self.builder.store(place, width.into(), value);
        self.hoist(s, vec![store])?;
        Ok((Expr::Int(0, IntTy::I32), RTy::Unit))
    }

    pub(super) fn undeclared(&self, e: &syn::Expr) -> Diagnostic {
        Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(e.span()),
            format!(
                "`{}` is not a local, a parameter or an integer constant of this file (statics and other items are not supported)",
                self.cx.text(e.span())
            ),
        )
    }
}
