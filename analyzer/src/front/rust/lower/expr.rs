//! Expressions: literals and paths, operators under Rust's typing rules, `if` and block
//! values, method calls (slice and pointer access, float math) and calls (thread indices,
//! `min`/`max`, `ptr::read`/`ptr::write`).

use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn expr(&mut self, e: &syn::Expr) -> Result<(Expr, RTy)> {
        self.enter(e.span())?;
        let r = self.expr_inner(e);
        self.builder.leave();
        r
    }

    pub(super) fn expr_inner(&mut self, e: &syn::Expr) -> Result<(Expr, RTy)> {
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
                    Place::Memory(MemoryPlace { address: addr, ty: elem, .. }) => {
                        Ok((addr, RTy::Ptr { elem: Box::new(elem), mutable: r.mutability.is_some() }))
                    }
                    Place::Local(..) | Place::ThreadArray(_) => {
                        Err(self.unsupported(e.span(), "a reference to a local variable"))
                    }
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

    pub(super) fn literal(&mut self, l: &syn::Lit) -> Result<(Expr, RTy)> {
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

    pub(super) fn path(&mut self, e: &syn::Expr, p: &syn::Path) -> Result<(Expr, RTy)> {
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
    pub(super) fn binary(
        &mut self,
        op: BinOp,
        a: Expr,
        at: RTy,
        b: Expr,
        bt: RTy,
        s: proc_macro2::Span,
    ) -> Result<(Expr, RTy)> {
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
            // Rust without overflow checks shifts by the amount modulo the width (the IR's
            // shift clamps, as the GPU's does); a constant amount stays as written.
            let b = match b {
                b @ Expr::Int(..) => b,
                b => {
                    let mask = Expr::Int(t.bits as i128 - 1, t);
                    Expr::Binary { op: BinOp::And, ty: t, lhs: Box::new(b), rhs: Box::new(mask), span }
                }
            };
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

    pub(super) fn if_value(&mut self, i: &syn::ExprIf) -> Result<(Expr, RTy)> {
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
    pub(super) fn branch_type(&mut self, then: &syn::Block, _els: &syn::Expr) -> Result<RTy> {
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
    pub(super) fn shape(&mut self, e: &syn::Expr) -> Option<RTy> {
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
    pub(super) fn block_value(&mut self, b: &syn::Block) -> Result<(Expr, RTy)> {
        let (stmts, tail) = split_tail(b);
        self.scopes.push(HashMap::new());
        let r = (|| {
            if !stmts.is_empty() {
                let mut out = std::mem::take(&mut self.builder.pending);
                for s in stmts {
                    self.stmt(s, &mut out)?;
                }
                let before = std::mem::take(&mut self.builder.pending);
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

    pub(super) fn method_call(&mut self, m: &syn::ExprMethodCall) -> Result<(Expr, RTy)> {
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
                let place = self.memory_place(recv, (**elem).clone(), name == "read_volatile", s);
                Ok(self.read_place(&Place::Memory(place)))
            }
            (RTy::Ptr { elem, .. }, "write" | "write_volatile" | "write_unaligned", 1) => {
                let ((v, vt), vspan) = args.pop().expect("one argument");
                let v = self.coerce(v, &vt, elem, vspan)?;
                let place = self.memory_place(recv, (**elem).clone(), name == "write_volatile", s);
                self.store_through(place, v, s)
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

    pub(super) fn len_param(&mut self, slice: &str, s: proc_macro2::Span) -> Result<ParamId> {
        if let Some(p) = self.lens.get(slice) {
            return Ok(*p);
        }
        let name = format!("{slice}_len");
        if self.builder.kernel.param_by_name(&name).is_some() {
            return Err(Diagnostic::at(
                ErrorKind::Unsupported,
                self.span(s),
                format!("`{slice}.len()` is the launch value `{name}`, but a parameter has that name"),
            ));
        }
        let id = ParamId(self.builder.kernel.params.len() as u32);
        let span = self.builder.kernel.params.iter().find(|p| p.name == slice).map_or(self.span(s), |p| p.span);
        self.builder.kernel.params.push(Param {
            name,
            ty: Ty::Int(IntTy::U64),
            span,
            device_variable: false,
            constant_variable: false,
        });
        self.lens.insert(slice.to_string(), id);
        Ok(id)
    }

    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Result<(Expr, RTy)> {
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
                        let place = self.memory_place(p, *elem, name == "read_volatile", s);
                        return Ok(self.read_place(&Place::Memory(place)));
                    }
                }
                ("write" | "write_volatile", 2) => {
                    let ((v, vt), vspan) = args.pop().expect("two arguments");
                    let ((p, pt), _) = args.pop().expect("two arguments");
                    if let RTy::Ptr { elem, .. } = pt {
                        let v = self.coerce(v, &vt, &elem, vspan)?;
                        let place = self.memory_place(p, *elem, name == "write_volatile", s);
                        return self.store_through(place, v, s);
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
