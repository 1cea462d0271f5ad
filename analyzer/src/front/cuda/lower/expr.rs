//! Expressions: literals, names, members, conversions and operators under C's typing rules.

use super::*;

impl<'u, 'a> Lowerer<'u, 'a> {
    pub(super) fn expr(&mut self, n: Node) -> Result<(Expr, Ty)> {
        self.enter(n)?;
        let r = self.expr_inner(n);
        self.builder.leave();
        r
    }

    pub(super) fn expr_inner(&mut self, n: Node) -> Result<(Expr, Ty)> {
        if self.substitute.as_ref().is_some_and(|(id, _, _)| *id == n.id()) {
            let (_, e, t) = self.substitute.take().expect("checked");
            return Ok((e, t));
        }
        match n.kind() {
            "number_literal" => self.number(n),
            "true" => Ok((Expr::Int(1, IntTy::BOOL), Ty::Int(IntTy::BOOL))),
            "false" => Ok((Expr::Int(0, IntTy::BOOL), Ty::Int(IntTy::BOOL))),
            "char_literal" => {
                let t = self.text(n);
                let inner = t.trim_start_matches(['L', 'u', 'U']).trim_matches('\'');
                let v = match inner {
                    "\\n" => 10,
                    "\\0" => 0,
                    "\\t" => 9,
                    s => s.chars().next().map(|c| c as i128).unwrap_or(0),
                };
                Ok((Expr::Int(v, IntTy::I8), Ty::Int(IntTy::I8)))
            }
            "string_literal" | "concatenated_string" | "raw_string_literal" => {
                Ok((Expr::Opaque { args: Vec::new(), what: "string".into() }, Ty::Void))
            }
            "null" | "nullptr" => Ok((Expr::Int(0, IntTy::I64), Ty::Int(IntTy::I64))),
            "identifier" => self.identifier(n),
            "parenthesized_expression" => {
                let mut c = n.walk();
                let inner = n.named_children(&mut c).next().ok_or_else(|| self.unsupported(n, "this expression"))?;
                if inner.kind() == "comma_expression" {
                    return Err(self.unsupported(inner, "the comma operator"));
                }
                self.expr(inner)
            }
            "field_expression" => self.field(n),
            "subscript_expression" => {
                if let Some(r) = self.subscript_operator(n)? {
                    return Ok(r);
                }
                // A row of a 2-D shared array decays to its first element's address.
                if let Some((addr, ty, rest)) = self.shared_row(n)? {
                    if rest.len() == 1 {
                        return Ok((addr, ty));
                    }
                }
                let p = self.place(n)?;
                Ok(self.read_place(&p, CacheOp::Default))
            }
            "qualified_identifier" => {
                let full: String = self.text(n).chars().filter(|c| !c.is_whitespace()).collect();
                let full = full.trim_start_matches("::").to_string();
                if let Some(sym) = self.lookup(&full).cloned() {
                    return match sym {
                        Sym::Const(v, t) => Ok((Expr::Int(v, t), Ty::Int(t))),
                        other => self.sym_value(other, n),
                    };
                }
                // `Type::size`: a static member of a structure or class (through typedefs too).
                if let Some((scope, member)) = full.rsplit_once("::") {
                    let sty = self
                        .unit
                        .typedefs
                        .get(scope)
                        .cloned()
                        .or_else(|| self.unit.layout(scope).map(|l| l.ty()))
                        .or_else(|| match self.tmpl.get(scope) {
                            Some(TemplateArg::Type(t)) => Some(t.clone()),
                            _ => None,
                        });
                    if let Some(r) = sty.and_then(|t| self.static_member(&t, member)) {
                        return Ok(r);
                    }
                }
                if let Some(v) = coop_groups::toolkit_enumerator(&full) {
                    return Ok((Expr::Int(v, IntTy::I32), Ty::Int(IntTy::I32)));
                }
                // `ns::N`: the name inside its namespace.
                let last = full.rsplit("::").next().unwrap_or(&full).to_string();
                match self.lookup(&last).cloned() {
                    Some(Sym::Const(v, t)) => Ok((Expr::Int(v, t), Ty::Int(t))),
                    Some(s @ (Sym::Opaque(..) | Sym::Struct(_))) => self.sym_value(s, n),
                    _ => Err(self.undeclared(n)),
                }
            }
            "alignof_expression" => {
                let td = n.child_by_field_name("type").ok_or_else(|| self.unsupported(n, "this alignof"))?;
                let ty = self.type_descriptor(td)?;
                let a = match &ty {
                    Ty::Vector { name, bytes } if !name.starts_with("struct ") => {
                        let k = name.chars().last().and_then(|c| c.to_digit(10)).unwrap_or(1) as u64;
                        if k == 2 || k == 4 {
                            (*bytes).min(16)
                        } else {
                            bytes / k.max(1)
                        }
                    }
                    Ty::Vector { name, .. } => self.unit.layout(&name["struct ".len()..]).map(|l| l.align).unwrap_or(1),
                    t => t.size(),
                };
                Ok((Expr::Int(a as i128, IntTy::U64), Ty::Int(IntTy::U64)))
            }
            "pointer_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
                if op == "*" {
                    let p = self.place(n)?;
                    return Ok(self.read_place(&p, CacheOp::Default));
                }
                // `&p->table` of an array member: the array's address, a pointer to all of it.
                if let Some(dims) = self.member_dims(arg).filter(|d| !d.is_empty()) {
                    if let Some(Place::Memory(first)) = self.member_place(cpp::unparen(arg))? {
                        if let Ty::Ptr(mut pt) = first.ty {
                            pt.pointee = rows_type(&pt.pointee, &dims);
                            return Ok((first.address, Ty::Ptr(pt)));
                        }
                    }
                }
                // `&place`: the address, no access.
                match self.place(arg)? {
                    Place::Memory(MemoryPlace { address: addr, ty, space, volatile, .. }) => Ok((
                        addr,
                        Ty::Ptr(Box::new(PtrTy { pointee: ty, space, is_const: false, restrict: false, volatile })),
                    )),
                    _ => Err(self.unsupported(n, "taking the address of a local variable")),
                }
            }
            "binary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let l = n.child_by_field_name("left").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let r = n.child_by_field_name("right").ok_or_else(|| self.unsupported(n, "this expression"))?;
                if matches!(op, "&&" | "||" | "and" | "or") {
                    let and = matches!(op, "&&" | "and");
                    let (a, at) = self.expr(l)?;
                    let a = self.truth(a, &at);
                    let mark = self.builder.pending.len();
                    self.no_hoist += 1;
                    let rb = self.expr(r);
                    self.no_hoist -= 1;
                    let (b, bt) = rb?;
                    let b = self.truth(b, &bt);
                    // What the right side emits (an inlined call's body) runs only where it is
                    // evaluated: under `if (a)` for `&&`, `if (!a)` for `||`.
                    let rhs = self.builder.pending.split_off(mark);
                    let a = self.guard(a, rhs, Vec::new(), and, n);
                    return Ok((Expr::Logical { and, lhs: Box::new(a), rhs: Box::new(b) }, Ty::Int(IntTy::I32)));
                }
                if let Some(r) = self.less_than_read_as_template(n, l, r)? {
                    return Ok(r);
                }
                // `(real)-2.8e1` with `real` a type: a cast of `-2.8e1`, which the grammar reads
                // as the subtraction `real - 2.8e1`; in `x * (real)-1.0`, as `(x * real) - 1.0`.
                // The type's operand nearest the sign (the rightmost of the left side) becomes
                // the cast.
                if matches!(op, "-" | "+") {
                    let mut leaf = l;
                    while leaf.kind() == "binary_expression" {
                        match leaf.child_by_field_name("right") {
                            Some(x) => leaf = x,
                            None => break,
                        }
                    }
                    if leaf.kind() == "parenthesized_expression" {
                        if let Some(ty) = self.type_named(leaf) {
                            let (b, bt) = self.expr(r)?;
                            let (e, et) = self.unary(op, b, bt, r)?;
                            let cast = self.convert(e, &et, &ty, n)?;
                            if leaf.id() == l.id() {
                                return Ok((cast, ty));
                            }
                            self.substitute = Some((leaf.id(), cast, ty));
                            let r = self.expr(l);
                            self.substitute = None;
                            return r;
                        }
                    }
                }
                let (a, at) = self.expr(l)?;
                let (b, bt) = self.expr(r)?;
                self.binary(op, a, at, b, bt, n)
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let (a, at) = self.expr(arg)?;
                self.unary(op, a, at, arg)
            }
            "conditional_expression" => {
                let c = n.child_by_field_name("condition").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let t = n
                    .child_by_field_name("consequence")
                    .ok_or_else(|| self.unsupported(n, "`?:` without a middle operand"))?;
                let f = n.child_by_field_name("alternative").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let (ce, ct) = self.expr(c)?;
                let ce = self.truth(ce, &ct);
                let mark = self.builder.pending.len();
                self.no_hoist += 1;
                let a = self.expr(t);
                let then = self.builder.pending.split_off(mark);
                let b = self.expr(f);
                let els = self.builder.pending.split_off(mark);
                self.no_hoist -= 1;
                let ((a, at), (b, bt)) = (a?, b?);
                // Each arm's statements (an inlined call's body) run on its own side.
                let ce = self.guard(ce, then, els, true, n);
                if let (Ty::Ptr(x), Ty::Ptr(y)) = (&at, &bt) {
                    if x.space != y.space {
                        return Err(self.unsupported(n, "`?:` choosing between a shared and a global pointer"));
                    }
                }
                let ty = self.common(&at, &bt);
                let a = self.convert(a, &at, &ty, t)?;
                let b = self.convert(b, &bt, &ty, f)?;
                Ok((Expr::Select { cond: Box::new(ce), then: Box::new(a), els: Box::new(b) }, ty))
            }
            "cast_expression" => {
                let td = n.child_by_field_name("type").ok_or_else(|| self.unsupported(n, "this cast"))?;
                let v = n.child_by_field_name("value").ok_or_else(|| self.unsupported(n, "this cast"))?;
                let ty = self.type_descriptor(td)?;
                let (e, et) = self.expr(v)?;
                let e = self.convert(e, &et, &ty, n)?;
                Ok((e, self.with_origin(ty, &et)))
            }
            "sizeof_expression" => {
                let size = if let Some(td) = n.child_by_field_name("type") {
                    self.type_descriptor(td)?.size()
                } else if let Some(v) = n.child_by_field_name("value") {
                    // `sizeof(float4)` parses as the size of a parenthesised name.
                    let name = self.text(v).trim_start_matches('(').trim_end_matches(')').trim();
                    if let Some(bytes) = string_literal_size(cpp::unparen(v), self.unit) {
                        return Ok((Expr::Int(bytes as i128, IntTy::U64), Ty::Int(IntTy::U64)));
                    }
                    match self.type_named(v) {
                        Some(t) => t.size(),
                        None => match (named_type(name), self.array_extent(v)) {
                            (Some(t), _) if self.lookup(name).is_none() => t.size(),
                            // `sizeof(a)` of an array, `sizeof(a[0])` of a row: all its elements
                            // (C never decays an array here).
                            (_, Some((t, dims))) => dims.iter().fold(t.size(), |z, d| z.saturating_mul(*d)),
                            // Evaluated aside: sizeof moves no memory.
                            _ => self.const_expr_ro(v)?.1.size(),
                        },
                    }
                } else {
                    return Err(self.unsupported(n, "this sizeof"));
                };
                Ok((Expr::Int(size as i128, IntTy::U64), Ty::Int(IntTy::U64)))
            }
            "call_expression" => self.call(n),
            "assignment_expression" => match self.greater_equal_read_as_template(n)? {
                Some(r) => Ok(r),
                None => self.side_effect_value(n),
            },
            "update_expression" => self.side_effect_value(n),
            "comma_expression" => Err(self.unsupported(n, "the comma operator")),
            "initializer_list" => {
                let mut c = n.walk();
                let items: Vec<Node> = n.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                let mut args = Vec::new();
                for it in items {
                    // `.ext = 0` (a designated initializer): the value it gives its member.
                    let it = match it.kind() {
                        "initializer_pair" => it.child_by_field_name("value").unwrap_or(it),
                        _ => it,
                    };
                    args.push(self.expr(it)?.0);
                }
                Ok((Expr::Opaque { args, what: "initializer list".into() }, Ty::Void))
            }
            "lambda_expression" => Err(self.unsupported(n, "a lambda")),
            // `Packed128<T>{bits}`: a temporary whose contents are registers.
            "compound_literal_expression" => {
                let ty = match n.child_by_field_name("type") {
                    Some(t) if t.kind() == "type_descriptor" => self.type_descriptor(t)?,
                    Some(t) => type_of_specifier(self.unit, t, &self.tmpl)?,
                    None => Ty::Void,
                };
                let mut args = Vec::new();
                if let Some(v) = n.child_by_field_name("value") {
                    let mut c = v.walk();
                    let items: Vec<Node> = v.named_children(&mut c).collect();
                    for it in items {
                        args.push(self.expr(it)?.0);
                    }
                }
                Ok((Expr::Opaque { args, what: "a temporary object".into() }, ty))
            }
            "new_expression" if n.child_by_field_name("placement").is_some() => {
                Err(self.unsupported(n, "placement new (construct the object's members one by one)"))
            }
            "new_expression" | "delete_expression" => Err(device_heap(self.span(n), self.text(n))),
            "template_function" => {
                let name = n.child_by_field_name("name").map(|x| self.text(x)).unwrap_or("");
                if self.unit.polymorphic.contains(name) {
                    return Err(cpp::virtual_refusal(self.span(n), self.text(n)));
                }
                Err(self.unsupported(n, "this expression (template_function)"))
            }
            "ERROR" => Err(Diagnostic::at(ErrorKind::Syntax, self.span(n), "syntax error")),
            _ => Err(self.unsupported(n, &format!("this expression ({})", n.kind()))),
        }
    }

    /// `op a` of a unary expression (`a` of type `at`, lowered from node `arg`).
    fn unary(&mut self, op: &str, a: Expr, at: Ty, arg: Node) -> Result<(Expr, Ty)> {
        match (op, &at) {
            ("+", _) => Ok((a, at)),
            ("-", Ty::Int(t)) => {
                let t = promote(*t);
                let a = self.convert(a, &at, &Ty::Int(t), arg)?;
                Ok((Expr::Unary { op: UnOp::Neg, ty: t, arg: Box::new(a) }, Ty::Int(t)))
            }
            ("-", Ty::Float(_)) => Ok((Expr::Unary { op: UnOp::Neg, ty: IntTy::I32, arg: Box::new(a) }, at)),
            ("~", Ty::Int(t)) => {
                let t = promote(*t);
                let a = self.convert(a, &at, &Ty::Int(t), arg)?;
                Ok((Expr::Unary { op: UnOp::Not, ty: t, arg: Box::new(a) }, Ty::Int(t)))
            }
            ("!" | "not", _) => {
                let a = self.truth(a, &at);
                Ok((Expr::Unary { op: UnOp::LogicalNot, ty: IntTy::I32, arg: Box::new(a) }, Ty::Int(IntTy::I32)))
            }
            _ => Ok((Expr::Opaque { args: vec![a], what: format!("unary {op}") }, at)),
        }
    }

    /// The condition of a lazy operator whose operands emitted statements: held in a local (read
    /// once, where C reads it), with `then` run where it holds (`when`) and `els` where it does
    /// not. Unchanged when there are none.
    fn guard(&mut self, cond: Expr, then: Vec<Stmt>, els: Vec<Stmt>, when: bool, n: Node) -> Expr {
        if then.is_empty() && els.is_empty() {
            return cond;
        }
        let span = self.span(n);
        let t = self.builder.local("__lazy", Ty::Int(IntTy::I32));
        self.builder.pending.push(Stmt::Assign { local: t, value: cond, span });
        let (then, els) = if when { (then, els) } else { (els, then) };
        self.builder.pending.push(Stmt::If { cond: Expr::Local(t), then, els, span });
        Expr::Local(t)
    }

    /// `x = v` or `i++` used as a value: hoisted before the statement when that is safe.
    pub(super) fn side_effect_value(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let post = n.kind() == "update_expression"
            && n.child(0).map(|c| c.kind() != "++" && c.kind() != "--").unwrap_or(false);
        let target = if n.kind() == "assignment_expression" {
            n.child_by_field_name("left")
        } else {
            n.child_by_field_name("argument")
        }
        .ok_or_else(|| self.unsupported(n, "this expression"))?;
        // Value of a local before or after the update; memory targets are read once more.
        let place = self.place(target)?;
        if let Place::Memory(MemoryPlace { ty, .. }) = &place {
            let ty = ty.clone();
            return self.memory_update_value(n, place, ty, post);
        }
        // `p.x = p.y = v` of a thread's own vector or array: the value written, held once; a
        // compound update's value is not tracked (as the place's is not).
        if let Place::ThreadArray(ty) = &place {
            let ty = ty.clone();
            let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("=");
            let right = n.child_by_field_name("right");
            let span = self.span(n);
            let value = match right {
                Some(r) if n.kind() == "assignment_expression" => {
                    let (rv, rt) = self.expr(r)?;
                    if op == "=" {
                        self.convert(rv, &rt, &ty, r)?
                    } else {
                        Expr::Opaque { args: vec![rv], what: LOCAL_ARRAY.into() }
                    }
                }
                _ => Expr::Opaque { args: Vec::new(), what: LOCAL_ARRAY.into() },
            };
            let t = self.builder.temporary(ty.clone());
            self.builder.pending.push(Stmt::Assign { local: t, value, span });
            self.builder.pending.push(Stmt::Eval(local_array_write(Expr::Local(t))));
            return Ok((Expr::Local(t), ty));
        }
        let Place::Local(id, ty) = place else {
            return Err(self.unsupported(n, "an assignment to this place used as a value"));
        };
        let mut stmts = Vec::new();
        let result = if post {
            let t = self.builder.temporary(ty.clone());
            stmts.push(Stmt::Assign { local: t, value: Expr::Local(id), span: self.span(n) });
            t
        } else {
            id
        };
        let s = if n.kind() == "assignment_expression" { self.assignment(n)? } else { self.update(n)? };
        self.builder.pending.append(&mut stmts);
        self.builder.pending.push(s);
        Ok((Expr::Local(result), ty))
    }

    /// `x[i] = y[i] = v`, `out[k] = cnt[j]++`: the store (a load first for `+=`, `++`) is
    /// hoisted before the statement; the value is what was stored (or, for `i++`, what was
    /// read), held in a temporary so that no access is issued twice.
    ///
    /// In C++ the value of an assignment (or a prefix `++`) is its target: a `volatile` one is
    /// read again (`int t = s[i] = v;` through `volatile int *s`: a store and a load in nvcc's
    /// SASS, HeCBench's bscan).
    pub(super) fn memory_update_value(&mut self, n: Node, place: Place, ty: Ty, post: bool) -> Result<(Expr, Ty)> {
        let span = self.span(n);
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("=");
        let volatile = matches!(&place, Place::Memory(m) if m.volatile) && !post;
        let place = if volatile { self.bind_place(place) } else { place };
        if n.kind() == "assignment_expression" && op == "=" {
            let right = n.child_by_field_name("right").ok_or_else(|| self.unsupported(n, "this assignment"))?;
            let (rv, rt) = self.expr(right)?;
            let v = self.convert(rv, &rt, &ty, right)?;
            let t = self.builder.temporary(ty.clone());
            self.builder.pending.push(Stmt::Assign { local: t, value: v, span });
            let st = self.write(place.clone(), Expr::Local(t), &ty, right)?;
            self.builder.pending.push(st);
            if volatile {
                return Ok(self.read_again(&place, span));
            }
            return Ok((Expr::Local(t), ty));
        }
        let place = self.bind_place(place);
        let (cur, ct) = self.read_place(&place, CacheOp::Default);
        let old = self.builder.temporary(ct.clone());
        self.builder.pending.push(Stmt::Assign { local: old, value: cur, span });
        let (v, vt) = if n.kind() == "assignment_expression" {
            let bop = op
                .strip_suffix('=')
                .filter(|b| !b.is_empty())
                .ok_or_else(|| self.unsupported(n, "this assignment operator"))?;
            let right = n.child_by_field_name("right").ok_or_else(|| self.unsupported(n, "this assignment"))?;
            let (rv, rt) = self.expr(right)?;
            self.binary(bop, Expr::Local(old), ct.clone(), rv, rt, n)?
        } else {
            let inc = if op == "--" { "-" } else { "+" };
            self.binary(inc, Expr::Local(old), ct.clone(), Expr::Int(1, IntTy::I32), Ty::Int(IntTy::I32), n)?
        };
        let v = self.convert(v, &vt, &ty, n)?;
        let new = self.builder.temporary(ty.clone());
        self.builder.pending.push(Stmt::Assign { local: new, value: v, span });
        let st = self.write(place.clone(), Expr::Local(new), &ty, n)?;
        self.builder.pending.push(st);
        if volatile {
            return Ok(self.read_again(&place, span));
        }
        Ok(if post { (Expr::Local(old), ct) } else { (Expr::Local(new), ty) })
    }

    /// A `volatile` target read after its store, held in a temporary.
    fn read_again(&mut self, place: &Place, span: Span) -> (Expr, Ty) {
        let (again, at) = self.read_place(place, CacheOp::Default);
        let t = self.builder.temporary(at.clone());
        self.builder.pending.push(Stmt::Assign { local: t, value: again, span });
        (Expr::Local(t), at)
    }

    pub(super) fn number(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let raw = self.text(n).replace('\'', "");
        // The grammar folds a sign into the literal: `-1` is negation of `1`.
        if let Some(rest) = raw.strip_prefix('-') {
            let (e, t) = self.number_text(rest.trim(), n)?;
            return Ok(match (e, &t) {
                (Expr::Float(f), _) => (Expr::Float(-f), t),
                (e, Ty::Int(it)) => {
                    let it = promote(*it);
                    (Expr::Unary { op: UnOp::Neg, ty: it, arg: Box::new(e) }, Ty::Int(it))
                }
                (e, _) => (e, t),
            });
        }
        self.number_text(raw.trim_start_matches('+'), n)
    }

    pub(super) fn number_text(&mut self, raw: &str, n: Node) -> Result<(Expr, Ty)> {
        let lower = raw.to_ascii_lowercase();
        let hex = lower.starts_with("0x");
        let is_float = (!hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f')))
            || (hex && lower.contains('p'));
        if is_float {
            let t = lower.trim_end_matches(['f', 'l']);
            let v = if hex { hex_float(&t[2..]) } else { t.parse().ok() };
            let v = v.ok_or_else(|| self.unsupported(n, "this floating-point literal"))?;
            let ty = if lower.ends_with('f') { Ty::Float(4) } else { Ty::Float(8) };
            return Ok((Expr::Float(v), ty));
        }
        let digits = lower.trim_end_matches(['u', 'l']);
        let suffix = &lower[digits.len()..];
        let (body, radix) = if let Some(h) = digits.strip_prefix("0x") {
            (h, 16)
        } else if let Some(b) = digits.strip_prefix("0b") {
            (b, 2)
        } else if digits.len() > 1 && digits.starts_with('0') {
            (&digits[1..], 8)
        } else {
            (digits, 10)
        };
        let v = u128::from_str_radix(body, radix).map_err(|_| self.unsupported(n, "this integer literal"))?;
        if v > u64::MAX as u128 {
            return Err(Diagnostic::at(ErrorKind::Arithmetic, self.span(n), "integer literal too large for 64 bits"));
        }
        let unsigned = suffix.contains('u');
        let long = suffix.contains('l');
        let v = v as i128;
        let fits = |t: IntTy| v <= t.wrap(i128::MAX >> (128 - t.bits as u32)).max(0) || t.wrap(v) == v;
        let candidates: &[IntTy] = match (unsigned, long, radix == 10) {
            (false, false, true) => &[IntTy::I32, IntTy::I64],
            (false, false, false) => &[IntTy::I32, IntTy::U32, IntTy::I64, IntTy::U64],
            (true, false, _) => &[IntTy::U32, IntTy::U64],
            (false, true, true) => &[IntTy::I64],
            (false, true, false) => &[IntTy::I64, IntTy::U64],
            (true, true, _) => &[IntTy::U64],
        };
        let ty = candidates.iter().copied().find(|t| t.wrap(v) == v && fits(*t)).unwrap_or(IntTy::U64);
        Ok((Expr::Int(v, ty), Ty::Int(ty)))
    }

    pub(super) fn identifier(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let name = self.text(n);
        match self.lookup(name).cloned() {
            Some(Sym::Local(id, ty)) => Ok((Expr::Local(id), ty)),
            Some(Sym::Param(p)) => Ok((Expr::Param(p), self.builder.kernel.param(p).ty.clone())),
            Some(Sym::Const(v, t)) => Ok((Expr::Int(v, t), Ty::Int(t))),
            Some(Sym::Shared(id)) => {
                // The array decays to a pointer to its first element.
                let arr = &self.builder.kernel.shared[id.0 as usize];
                if arr.dims.len() > 1 {
                    return Err(self.unsupported(n, "a multi-dimensional shared array used as a pointer"));
                }
                let ty = Ty::shared_ptr(arr.elem.clone());
                Ok((Expr::SharedBase(id), ty))
            }
            Some(Sym::LocalArray(..)) => Err(self.unsupported(n, "a thread's own array used as a pointer")),
            // A group passed along (to a __device__ function that binds it by name).
            Some(Sym::Group(_)) => Ok((Expr::Int(0, IntTy::I32), Ty::Void)),
            Some(sym) => self.sym_value(sym, n),
            None => match name {
                "warpSize" => Ok((Expr::Builtin(Builtin::WarpSize), Ty::Int(IntTy::I32))),
                "NULL" => Ok((Expr::Int(0, IntTy::I64), Ty::Int(IntTy::I64))),
                "INT_MAX" => Ok((Expr::Int(i32::MAX as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                // <climits>: the toolkit's headers are not read, their constants are known.
                "INT_MIN" => Ok((Expr::Int(i32::MIN as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                "UINT_MAX" => Ok((Expr::Int(u32::MAX as i128, IntTy::U32), Ty::Int(IntTy::U32))),
                "LLONG_MAX" | "LONG_MAX" => Ok((Expr::Int(i64::MAX as i128, IntTy::I64), Ty::Int(IntTy::I64))),
                "LLONG_MIN" | "LONG_MIN" => Ok((Expr::Int(i64::MIN as i128, IntTy::I64), Ty::Int(IntTy::I64))),
                "ULLONG_MAX" | "ULONG_MAX" => Ok((Expr::Int(u64::MAX as i128, IntTy::U64), Ty::Int(IntTy::U64))),
                "SHRT_MAX" => Ok((Expr::Int(i16::MAX as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                "USHRT_MAX" => Ok((Expr::Int(u16::MAX as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                "CHAR_BIT" => Ok((Expr::Int(8, IntTy::I32), Ty::Int(IntTy::I32))),
                // <cuda_fp8.h>'s interpretation and saturation enumerators.
                "__NV_E4M3" | "__NV_NOSAT" => Ok((Expr::Int(0, IntTy::I32), Ty::Int(IntTy::I32))),
                "__NV_E5M2" | "__NV_SATFINITE" => Ok((Expr::Int(1, IntTy::I32), Ty::Int(IntTy::I32))),
                "FLT_MAX" | "INFINITY" | "HUGE_VALF" => Ok((Expr::Float(f32::MAX as f64), Ty::Float(4))),
                // <cfloat>, <cmath> (POSIX's M_*) and the toolkit's math_constants.h: values only,
                // no memory; their contents never reach an address exactly.
                _ => match (float_constant(name), stdint_limit(name)) {
                    (Some((v, width)), _) => Ok((Expr::Float(v), Ty::Float(width))),
                    (_, Some((v, t))) => Ok((Expr::Int(v, t), Ty::Int(t))),
                    _ => Err(self.undeclared(n)),
                },
            },
        }
    }

    pub(super) fn field(&mut self, n: Node) -> Result<(Expr, Ty)> {
        if let Some(r) = self.group_member_field(n)? {
            return Ok(r);
        }
        let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
        let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
        if arg.kind() == "identifier" && self.lookup(self.text(arg)).is_none() {
            let dim = match field {
                "x" => 0,
                "y" => 1,
                "z" => 2,
                _ => return Err(self.unsupported(n, "this member")),
            };
            let b = match self.text(arg) {
                "threadIdx" => Builtin::ThreadIdx(dim),
                "blockIdx" => Builtin::BlockIdx(dim),
                "blockDim" => Builtin::BlockDim(dim),
                "gridDim" => Builtin::GridDim(dim),
                _ => return Err(self.undeclared(arg)),
            };
            // The builtins are unsigned int.
            return Ok((Expr::Builtin(b), Ty::Int(IntTy::U32)));
        }
        // A component of a local vector is not tracked, but it reads the local (so the load
        // that filled it is used).
        if arg.kind() == "identifier" {
            if let Some(Sym::Local(id, ty)) = self.lookup(self.text(arg)).cloned() {
                if let Some((_, fty)) = vector_field(&ty, field) {
                    return Ok((Expr::Opaque { args: vec![Expr::Local(id)], what: LOCAL_ARRAY.into() }, fty));
                }
            }
        }
        // A component of a vector passed by value (`const uchar4 colors`, `float3 voxelSize`, the
        // member `params.worldOrigin` of a structure parameter or of a `__constant__` one): a
        // value in the parameter space, not tracked like a local vector's, moving no memory.
        let param = match arg.kind() {
            "identifier" => self.lookup(self.text(arg)).cloned(),
            "field_expression" => self.member_sym(arg),
            _ => None,
        };
        if let Some(Sym::Param(p)) = param {
            if let Some((_, fty)) = vector_field(&self.builder.kernel.param(p).ty.clone(), field) {
                return Ok((Expr::Opaque { args: Vec::new(), what: LOCAL_ARRAY.into() }, fty));
            }
        }
        if n.child_by_field_name("operator").map(|o| self.text(o)) == Some(".") {
            if let Some(sym) = self.member_sym(n) {
                return self.sym_value(sym, n);
            }
            if let Some(r) = self.static_member(&self.peek_type(arg), field) {
                return Ok(r);
            }
        }
        if let Some(p) = self.member_place(n)? {
            if let Place::Memory(MemoryPlace { address: addr, ty, text, .. }) = &p {
                if text == cpp::DECAY {
                    return Ok((addr.clone(), ty.clone()));
                }
            }
            return Ok(self.read_place(&p, CacheOp::Default));
        }
        let p = self.place(n)?;
        Ok(self.read_place(&p, CacheOp::Default))
    }

    pub(super) fn common(&self, a: &Ty, b: &Ty) -> Ty {
        match (a, b) {
            (Ty::Int(x), Ty::Int(y)) => Ty::Int(common_int(*x, *y)),
            (Ty::Float(x), Ty::Float(y)) => Ty::Float(*x.max(y)),
            (Ty::Float(x), Ty::Int(_)) | (Ty::Int(_), Ty::Float(x)) => Ty::Float(*x),
            (Ty::Ptr(_), _) => a.clone(),
            (_, Ty::Ptr(_)) => b.clone(),
            _ => a.clone(),
        }
    }

    /// C conversion of `e` from `from` to `to`.
    pub(super) fn convert(&self, e: Expr, from: &Ty, to: &Ty, at: Node) -> Result<Expr> {
        Ok(match (from, to) {
            (Ty::Int(a), Ty::Int(b)) if a == b => e,
            (Ty::Float(_), Ty::Int(b)) if *b == IntTy::BOOL => {
                Expr::FloatBinary { op: BinOp::Ne, lhs: Box::new(e), rhs: Box::new(Expr::Float(0.0)) }
            }
            (Ty::Int(_) | Ty::Float(_) | Ty::Ptr(_), Ty::Int(b)) => Expr::ToInt { ty: *b, arg: Box::new(e) },
            (Ty::Int(_), Ty::Float(_)) => Expr::ToFloat(Box::new(e)),
            (Ty::Float(_), Ty::Float(_)) => e,
            (Ty::Ptr(_), Ty::Ptr(_)) => e,
            (Ty::Int(_), Ty::Ptr(_)) => match e {
                Expr::Int(0, _) => e,
                _ => return Err(self.unsupported(at, "converting an integer to a pointer")),
            },
            (Ty::Vector { .. }, _) | (_, Ty::Vector { .. }) | (Ty::Void, _) => e,
            (_, Ty::Void) => e,
            (Ty::Float(_), Ty::Ptr(_)) => return Err(self.unsupported(at, "converting a float to a pointer")),
            (Ty::Ptr(_), Ty::Float(_)) => return Err(self.unsupported(at, "converting a pointer to a float")),
        })
    }

    /// `a < n >> 3` (and `a < n > b`): a variable compared, read by the grammar as the template
    /// `a<n>` followed by `> 3`. When `a` names a value (no template of that name), it is
    /// `a < (n >> 3)` where the two `>` touch, else `(a < n) > b`. `None` for anything else.
    fn less_than_read_as_template(&mut self, n: Node, l: Node, r: Node) -> Result<Option<(Expr, Ty)>> {
        let Some(op) = n.child_by_field_name("operator") else { return Ok(None) };
        if self.text(op) != ">" {
            return Ok(None);
        }
        let Some((name, targs, args)) = self.value_read_as_template(l) else { return Ok(None) };
        let [g] = args.as_slice() else { return Err(self.unsupported(l, "this comparison")) };
        let shift = targs.end_byte() == op.start_byte();
        if !shift && g.kind() != "type_descriptor" {
            let a = self.identifier(name)?;
            return self.misread_comparison(*g, Some(a), Some((">", r)), n).map(Some);
        }
        // The right operand of `<`, as the grammar read it: a type (a bare name) or an expression.
        let (m, mt) = if g.kind() == "type_descriptor" {
            match g.child_by_field_name("type") {
                Some(t) if t.kind() == "type_identifier" && g.named_child_count() == 1 => self.identifier(t)?,
                _ => return Err(self.unsupported(l, "this comparison (write it with parentheses)")),
            }
        } else {
            self.expr(*g)?
        };
        let (a, at) = self.identifier(name)?;
        let (b, bt) = self.expr(r)?;
        if shift {
            let (s, st) = self.binary(">>", m, mt, b, bt, n)?;
            self.binary("<", a, at, s, st, n).map(Some)
        } else {
            let (lt, ltt) = self.binary("<", a, at, m, mt, n)?;
            self.binary(">", lt, ltt, b, bt, n).map(Some)
        }
    }

    /// `x < a || x >= b`, which the grammar reads as the template `x<a || x>` assigned `b`: when
    /// `x` names a value and `>` touches `=`, the comparisons the text means.
    fn greater_equal_read_as_template(&mut self, n: Node) -> Result<Option<(Expr, Ty)>> {
        let (Some(l), Some(op), Some(r)) =
            (n.child_by_field_name("left"), n.child_by_field_name("operator"), n.child_by_field_name("right"))
        else {
            return Ok(None);
        };
        if self.text(op) != "=" || l.end_byte() != op.start_byte() {
            return Ok(None);
        }
        let Some((name, _, args)) = self.value_read_as_template(l) else { return Ok(None) };
        let [g] = args.as_slice() else { return Ok(None) };
        if g.kind() == "type_descriptor" {
            return Ok(None);
        }
        let a = self.identifier(name)?;
        self.misread_comparison(*g, Some(a), Some((">=", r)), n).map(Some)
    }

    /// `x<G>` where `x` names a value, not a template: the name, the argument list and its
    /// arguments.
    fn value_read_as_template<'t>(&self, l: Node<'t>) -> Option<(Node<'t>, Node<'t>, Vec<Node<'t>>)> {
        if l.kind() != "template_function" {
            return None;
        }
        let (name, targs) = (l.child_by_field_name("name")?, l.child_by_field_name("arguments")?);
        let value = name.kind() == "identifier"
            && matches!(
                self.lookup(self.text(name)),
                Some(Sym::Local(..) | Sym::Param(_) | Sym::Const(..) | Sym::Opaque(..) | Sym::Ref { .. })
            );
        let mut c = targs.walk();
        let args = targs.named_children(&mut c).collect();
        value.then_some((name, targs, args))
    }

    /// `x < G rel R` read by the grammar as `x<G> rel R`: `<` takes G's leftmost operand and
    /// `rel` its rightmost, across the operators of G that bind looser than a comparison
    /// (`x < a || y > b` is `(x < a) || (y > b)`).
    fn misread_comparison(
        &mut self,
        g: Node,
        left: Option<(Expr, Ty)>,
        right: Option<(&str, Node)>,
        n: Node,
    ) -> Result<(Expr, Ty)> {
        if g.kind() == "binary_expression" {
            let op = g.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
            if let (true, Some(gl), Some(gr)) = (
                matches!(
                    op,
                    "||" | "&&" | "or" | "and" | "|" | "^" | "&" | "==" | "!=" | "bitor" | "xor" | "bitand" | "not_eq"
                ),
                g.child_by_field_name("left"),
                g.child_by_field_name("right"),
            ) {
                let (a, at) = self.misread_comparison(gl, left, None, n)?;
                let (b, bt) = self.misread_comparison(gr, None, right, n)?;
                return match op {
                    "||" | "or" | "&&" | "and" => {
                        let (a, b) = (self.truth(a, &at), self.truth(b, &bt));
                        let and = matches!(op, "&&" | "and");
                        Ok((Expr::Logical { and, lhs: Box::new(a), rhs: Box::new(b) }, Ty::Int(IntTy::I32)))
                    }
                    _ => self.binary(op, a, at, b, bt, n),
                };
            }
        }
        let (mut e, mut t) = self.expr(g)?;
        if let Some((a, at)) = left {
            (e, t) = self.binary("<", a, at, e, t, n)?;
        }
        if let Some((rel, r)) = right {
            let (b, bt) = self.expr(r)?;
            (e, t) = self.binary(rel, e, t, b, bt, n)?;
        }
        Ok((e, t))
    }

    /// Arithmetic with C's conversions; pointer arithmetic scales by the element size.
    pub(super) fn binary(&mut self, op: &str, a: Expr, at: Ty, b: Expr, bt: Ty, n: Node) -> Result<(Expr, Ty)> {
        let span = self.span(n);
        let bop = match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "&" | "bitand" => BinOp::And,
            "|" | "bitor" => BinOp::Or,
            "^" | "xor" => BinOp::Xor,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" | "not_eq" => BinOp::Ne,
            _ => return Err(self.unsupported(n, &format!("the operator `{op}`"))),
        };
        let is_cmp = matches!(bop, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne);
        match (&at, &bt) {
            (Ty::Ptr(p), Ty::Int(it)) | (Ty::Int(it), Ty::Ptr(p)) if matches!(bop, BinOp::Add | BinOp::Sub) => {
                let ptr_first = matches!(at, Ty::Ptr(_));
                if !ptr_first && bop == BinOp::Sub {
                    return Err(self.unsupported(n, "integer minus pointer"));
                }
                let (pe, ie) = if ptr_first { (a, b) } else { (b, a) };
                let ie = self.index_i64(ie, &Ty::Int(*it), n)?;
                let mut bytes = mul64(ie, p.pointee.size() as i128);
                if bop == BinOp::Sub {
                    bytes = Expr::Unary { op: UnOp::Neg, ty: IntTy::I64, arg: Box::new(bytes) };
                }
                let ty = if ptr_first { at.clone() } else { bt.clone() };
                Ok((Expr::PtrOffset { ptr: Box::new(pe), bytes: Box::new(bytes) }, ty))
            }
            (Ty::Ptr(p), Ty::Ptr(_)) if bop == BinOp::Sub => {
                let size = p.pointee.size() as i128;
                if size > i64::MAX as i128 {
                    return Err(self.unsupported(n, "subtracting pointers to elements of 2^63 bytes or more"));
                }
                let diff = Expr::PtrDiff { lhs: Box::new(a), rhs: Box::new(b) };
                Ok((
                    Expr::Binary {
                        op: BinOp::Div,
                        ty: IntTy::I64,
                        lhs: Box::new(diff),
                        rhs: Box::new(Expr::Int(size, IntTy::I64)),
                        span,
                    },
                    Ty::Int(IntTy::I64),
                ))
            }
            (Ty::Ptr(_), _) | (_, Ty::Ptr(_)) if is_cmp => Ok((
                Expr::Binary { op: bop, ty: IntTy::I64, lhs: Box::new(a), rhs: Box::new(b), span },
                Ty::Int(IntTy::I32),
            )),
            (Ty::Int(x), Ty::Int(y)) => {
                if matches!(bop, BinOp::Shl | BinOp::Shr) {
                    let t = promote(*x);
                    let a = self.convert(a, &at, &Ty::Int(t), n)?;
                    let b = self.convert(b, &bt, &Ty::Int(t), n)?;
                    return Ok((Expr::Binary { op: bop, ty: t, lhs: Box::new(a), rhs: Box::new(b), span }, Ty::Int(t)));
                }
                let t = common_int(*x, *y);
                let a = self.convert(a, &at, &Ty::Int(t), n)?;
                let b = self.convert(b, &bt, &Ty::Int(t), n)?;
                let rt = if is_cmp { Ty::Int(IntTy::I32) } else { Ty::Int(t) };
                Ok((Expr::Binary { op: bop, ty: t, lhs: Box::new(a), rhs: Box::new(b), span }, rt))
            }
            (Ty::Float(_) | Ty::Int(_), Ty::Float(_) | Ty::Int(_)) => {
                let t = self.common(&at, &bt);
                let a = self.convert(a, &at, &t, n)?;
                let b = self.convert(b, &bt, &t, n)?;
                let rt = if is_cmp { Ty::Int(IntTy::I32) } else { t };
                Ok((Expr::FloatBinary { op: bop, lhs: Box::new(a), rhs: Box::new(b) }, rt))
            }
            _ => {
                let rt = if is_cmp { Ty::Int(IntTy::I32) } else { self.common(&at, &bt) };
                Ok((Expr::Opaque { args: vec![a, b], what: format!("operator {op}") }, rt))
            }
        }
    }
}

/// A floating-point constant of the C library or the toolkit's `math_constants.h`, with its
/// width in bytes, by name.
fn float_constant(name: &str) -> Option<(f64, u8)> {
    use std::f64::consts as c;
    let double = match name {
        "M_PI" => c::PI,
        "M_PI_2" => c::FRAC_PI_2,
        "M_PI_4" => c::FRAC_PI_4,
        "M_1_PI" => c::FRAC_1_PI,
        "M_2_PI" => c::FRAC_2_PI,
        "M_2_SQRTPI" => c::FRAC_2_SQRT_PI,
        "M_SQRT2" => c::SQRT_2,
        "M_SQRT1_2" => c::FRAC_1_SQRT_2,
        "M_E" => c::E,
        "M_LOG2E" => c::LOG2_E,
        "M_LOG10E" => c::LOG10_E,
        "M_LN2" => c::LN_2,
        "M_LN10" => c::LN_10,
        "DBL_MAX" | "HUGE_VAL" | "CUDART_INF" => f64::MAX,
        "DBL_MIN" => f64::MIN_POSITIVE,
        "DBL_EPSILON" => f64::EPSILON,
        "CUDART_PI" => c::PI,
        "CUDART_NAN" => f64::NAN,
        _ => {
            let single = match name {
                "FLT_MIN" => f32::MIN_POSITIVE,
                "FLT_EPSILON" => f32::EPSILON,
                "NAN" | "CUDART_NAN_F" => f32::NAN,
                "CUDART_INF_F" => f32::MAX,
                "CUDART_PI_F" => std::f32::consts::PI,
                "CUDART_PIO2_F" => std::f32::consts::FRAC_PI_2,
                "CUDART_SQRT_2PI_F" => 2.506_628_3,
                "CUDART_L2E_F" => std::f32::consts::LOG2_E,
                "CUDART_LN2_F" => std::f32::consts::LN_2,
                _ => return None,
            };
            return Some((single as f64, 4));
        }
    };
    Some((double, 8))
}

impl Lowerer<'_, '_> {
    /// An array named in `sizeof` (a thread's own, a `__shared__` or a `__device__` one of known
    /// size), or a row of one (`a[0]` of `float a[3][4]`): its element type and dimensions,
    /// outermost first (empty for one element). `None` for anything that is not an array.
    pub(super) fn array_extent(&self, n: Node) -> Option<(Ty, Vec<u64>)> {
        let n = cpp::unparen(n);
        match n.kind() {
            "identifier" => match self.lookup(self.text(n))? {
                Sym::LocalArray(t, dims) if !dims.is_empty() => Some((t.clone(), dims.clone())),
                Sym::Shared(id) => {
                    let a = &self.builder.kernel.shared[id.0 as usize];
                    (!a.is_extern && !a.dims.is_empty()).then(|| (a.elem.clone(), a.dims.clone()))
                }
                Sym::DeviceVar { elem, dims, .. } if !dims.is_empty() => Some((elem.clone(), dims.clone())),
                _ => None,
            },
            "subscript_expression" => {
                let (t, dims) = self.array_extent(n.child_by_field_name("argument")?)?;
                let rest = dims.get(1..)?.to_vec();
                Some((t, rest))
            }
            _ => None,
        }
    }
}

/// <cstdint>'s limits (`UINT64_MAX`, `INT32_MIN`, `SIZE_MAX`), in the types C gives them: the
/// toolkit's headers are not read, their constants are known.
fn stdint_limit(name: &str) -> Option<(i128, IntTy)> {
    let ty = |bits: u16, signed: bool| IntTy { bits: bits.max(32) as _, signed };
    let (bits, signed, max) = match name {
        "SIZE_MAX" | "UINTPTR_MAX" => (64, false, true),
        "INTPTR_MAX" | "PTRDIFF_MAX" | "INTMAX_MAX" => (64, true, true),
        "INTPTR_MIN" | "PTRDIFF_MIN" | "INTMAX_MIN" => (64, true, false),
        "UINTMAX_MAX" => (64, false, true),
        _ => {
            let (signed, rest) = match name.strip_prefix("UINT") {
                Some(r) => (false, r),
                None => (true, name.strip_prefix("INT")?),
            };
            let (bits, end) = rest.split_once('_')?;
            let bits: u16 = bits.parse().ok().filter(|b| matches!(b, 8 | 16 | 32 | 64))?;
            match (end, signed) {
                ("MAX", _) => (bits, signed, true),
                ("MIN", true) => (bits, true, false),
                _ => return None,
            }
        }
    };
    let v: i128 = match (signed, max) {
        (false, _) => (1i128 << bits) - 1,
        (true, true) => (1i128 << (bits - 1)) - 1,
        (true, false) => -(1i128 << (bits - 1)),
    };
    // Narrow types promote to `int`, as their macros are written (`(-128)`, `255`).
    Some((v, if bits < 32 { ty(32, true) } else { ty(bits, signed) }))
}

/// An array of `dims` of `elem` moved as one value (`float[4]`, 16 bytes): what a pointer to
/// rows points to, so that moving it by one moves a row.
pub(super) fn rows_type(elem: &Ty, dims: &[u64]) -> Ty {
    let bytes = dims.iter().fold(elem.size(), |z, x| z.saturating_mul(*x));
    let shape: String = dims.iter().map(|x| format!("[{x}]")).collect();
    Ty::Vector { name: format!("{}{shape}", elem.display()), bytes }
}

/// A hexadecimal floating literal's value after `0x` (`f.8eed2p-4`): hex digits with an optional
/// point, then a binary exponent, which C requires.
fn hex_float(t: &str) -> Option<f64> {
    let (mantissa, exp) = t.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (whole, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if whole.is_empty() && frac.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in whole.chars().chain(frac.chars()) {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    Some(v * 2f64.powi(exp - 4 * frac.len() as i32))
}

/// `sizeof("abc")`: the bytes of a narrow string literal (adjacent literals joined), its
/// terminating zero included; each escape sequence is one byte. `None` for anything else.
fn string_literal_size(n: Node, unit: &Unit) -> Option<u64> {
    let parts: Vec<Node> = match n.kind() {
        "string_literal" => vec![n],
        "concatenated_string" => {
            let mut c = n.walk();
            let x = n.named_children(&mut c).collect();
            x
        }
        _ => return None,
    };
    let mut bytes = 1u64;
    for p in parts {
        if p.kind() != "string_literal" || !unit.text(p).starts_with('"') {
            return None;
        }
        let mut c = p.walk();
        for x in p.named_children(&mut c) {
            bytes += match x.kind() {
                "string_content" => unit.text(x).len() as u64,
                "escape_sequence" => 1,
                _ => return None,
            };
        }
    }
    Some(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn hexadecimal_floating_literals() {
        // 0xf.8 = 15.5; times 2^-4 = 0.96875. 0x1p3 = 8. 0x.8p1 = 0.5 * 2 = 1.
        assert_eq!(super::hex_float("f.8p-4"), Some(0.96875));
        assert_eq!(super::hex_float("1p3"), Some(8.0));
        assert_eq!(super::hex_float(".8p1"), Some(1.0));
        assert_eq!(super::hex_float("1.8"), None);
    }
}
