//! Statements: blocks, loops, `return` from inlined functions, declarations (scalars, arrays,
//! references, structures), expression statements, assignments and increments.

use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn block(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        self.scopes.push(HashMap::new());
        let mut c = n.walk();
        let children: Vec<Node> = n.named_children(&mut c).collect();
        let r = children.into_iter().try_for_each(|ch| self.stmt(ch, out));
        self.scopes.pop();
        r
    }

    pub(super) fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.builder.pending);
    }

    pub(super) fn stmt(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        self.enter(n)?;
        let r = self.stmt_inner(n, out);
        self.builder.leave();
        r
    }

    pub(super) fn stmt_inner(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        match n.kind() {
            "compound_statement" => self.block(n, out),
            "declaration" => self.declaration(n, out),
            "expression_statement" => {
                if self.group_statement(n)? {
                    return Ok(());
                }
                let mut c = n.walk();
                let e = n.named_children(&mut c).next();
                if let Some(e) = e {
                    self.effect(e, out)?;
                }
                Ok(())
            }
            "if_statement" => {
                let cond = n.child_by_field_name("condition").ok_or_else(|| self.unsupported(n, "this if"))?;
                let cond = self.condition(cond)?;
                self.flush(out);
                // A condition the launch fixes (a template argument, a constant, a `#define`)
                // leaves one arm dead. What the dead arm holds (a texture fetch, a call the
                // analysis refuses) cannot stop the analysis, as it never runs: an arm that fails
                // to lower is dropped with its memory operations. One that lowers stays (its rows
                // show no executions, as before).
                let known = const_truth(&cond);
                let mut then = Vec::new();
                if let Some(t) = n.child_by_field_name("consequence") {
                    let ops = self.builder.kernel.mem_ops.len();
                    if let Err(d) = self.scoped(t, &mut then) {
                        if known != Some(false) {
                            return Err(d);
                        }
                        self.builder.kernel.mem_ops.truncate(ops);
                        self.builder.pending.clear();
                        then.clear();
                    }
                }
                let mut els = Vec::new();
                if let Some(a) = n.child_by_field_name("alternative") {
                    // else_clause wraps the statement.
                    let mut c = a.walk();
                    let inner: Vec<Node> = a.named_children(&mut c).collect();
                    let ops = self.builder.kernel.mem_ops.len();
                    let r = inner.into_iter().try_for_each(|s| self.scoped(s, &mut els));
                    if let Err(d) = r {
                        if known != Some(true) {
                            return Err(d);
                        }
                        self.builder.kernel.mem_ops.truncate(ops);
                        self.builder.pending.clear();
                        els.clear();
                    }
                }
                out.push(Stmt::If { cond, then, els, span: self.span(n) });
                Ok(())
            }
            "for_statement" => {
                self.scopes.push(HashMap::new());
                let r = self.for_loop(n, out);
                self.scopes.pop();
                r
            }
            "while_statement" => {
                let c = n.child_by_field_name("condition").ok_or_else(|| self.unsupported(n, "this while"))?;
                let (pre, cond) = self.loop_cond(c)?;
                let mut body = Vec::new();
                if let Some(b) = n.child_by_field_name("body") {
                    self.scoped(b, &mut body)?;
                }
                let span = self.span(n);
                if pre.is_empty() {
                    self.push_loop(out, Some(cond), body, Vec::new(), true, span);
                } else {
                    // `while (++i < n)`: the update runs before each test, at the top of the body.
                    let mut b = pre;
                    b.push(Stmt::exit_unless(cond, span));
                    b.extend(body);
                    self.push_loop(out, None, b, Vec::new(), true, span);
                }
                Ok(())
            }
            "do_statement" => {
                let mut body = Vec::new();
                if let Some(b) = n.child_by_field_name("body") {
                    self.scoped(b, &mut body)?;
                }
                let c = n.child_by_field_name("condition").ok_or_else(|| self.unsupported(n, "this do"))?;
                let (pre, cond) = self.loop_cond(c)?;
                let span = self.span(n);
                if pre.is_empty() {
                    self.push_loop(out, Some(cond), body, Vec::new(), false, span);
                } else {
                    // `continue` goes to the test: the test with its update is the step.
                    let mut step = pre;
                    step.push(Stmt::exit_unless(cond, span));
                    self.push_loop(out, None, body, step, true, span);
                }
                Ok(())
            }
            "break_statement" => {
                out.push(Stmt::Break);
                Ok(())
            }
            "continue_statement" => {
                out.push(Stmt::Continue);
                Ok(())
            }
            "return_statement" => self.ret(n, out),
            "labeled_statement" | "goto_statement" => Err(self.unsupported(n, "goto and labels")),
            "switch_statement" => self.switch_stmt(n, out),
            "for_range_loop" => Err(self.unsupported(n, "a range-based for loop")),
            "gnu_asm_expression" => self.inline_asm(n, out),
            "asm_statement" => Err(self.unsupported(n, "inline assembly in this form")),
            "comment" | "empty_statement" | ";" => Ok(()),
            "type_definition" | "alias_declaration" => self.local_typedef(n),
            // `struct alignas(16) U { float v[4]; };` in a body: the name stands for it below.
            "struct_specifier" | "class_specifier" | "union_specifier" => self.local_struct(n).map(|_| ()),
            "static_assert_declaration" => Ok(()),
            "using_declaration" | "namespace_alias_definition" => Ok(()),
            _ => Err(self.unsupported(n, &format!("this statement ({})", n.kind()))),
        }
    }

    /// `typedef int4 copy_t;` / `using V = float4;` in a body: the name stands for the type
    /// from here on (bound like a template type parameter).
    pub(super) fn local_typedef(&mut self, n: Node) -> Result<()> {
        if n.kind() == "alias_declaration" {
            let (Some(name), Some(td)) = (n.child_by_field_name("name"), n.child_by_field_name("type")) else {
                return Ok(());
            };
            let ty = self.type_descriptor(td)?;
            self.tmpl.insert(self.text(name).to_string(), TemplateArg::Type(ty));
            return Ok(());
        }
        let t = n.child_by_field_name("type").ok_or_else(|| self.unsupported(n, "this typedef"))?;
        let base = type_of_specifier(self.unit, t, &self.tmpl)?;
        let quals = self.quals(n);
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (name, ty) = match d.kind() {
                "type_identifier" => (self.text(d).to_string(), base.clone()),
                "pointer_declarator"
                    if d.child_by_field_name("declarator").is_some_and(|x| x.kind() == "type_identifier") =>
                {
                    let inner = d.child_by_field_name("declarator").expect("checked");
                    (self.text(inner).to_string(), self.ptr(base.clone(), &quals, &self.quals(d)))
                }
                _ => return Err(self.unsupported(d, "this typedef")),
            };
            self.tmpl.insert(name, TemplateArg::Type(ty));
        }
        Ok(())
    }

    pub(super) fn scoped(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        self.scopes.push(HashMap::new());
        let r = self.stmt(n, out);
        self.scopes.pop();
        r
    }

    /// Inside an inlined function, `return` breaks out of the wrapper loop; loops inside it
    /// must pass the break on.
    pub(super) fn push_loop(
        &mut self,
        out: &mut Vec<Stmt>,
        cond: Option<Expr>,
        body: Vec<Stmt>,
        step: Vec<Stmt>,
        test_first: bool,
        span: Span,
    ) {
        if let Some(p) = self.unit.pre.unroll_pragma(span) {
            self.builder.kernel.unroll_pragmas.push((span, p));
        }
        out.push(Stmt::Loop { cond, body, step, test_first, span, synthetic: false });
        if let Some(inl) = self.inline.last() {
            out.push(Stmt::If { cond: Expr::Local(inl.ret_flag), then: vec![Stmt::Break], els: Vec::new(), span });
        }
    }

    pub(super) fn for_loop(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        if let Some(init) = n.child_by_field_name("initializer") {
            match init.kind() {
                "declaration" => self.declaration(init, out)?,
                _ => self.effect(init, out)?,
            }
        }
        let (pre, cond) = match n.child_by_field_name("condition") {
            Some(c) => {
                let (p, c) = self.loop_cond(c)?;
                (p, Some(c))
            }
            None => (Vec::new(), None),
        };
        let mut step = Vec::new();
        if let Some(u) = n.child_by_field_name("update") {
            self.effect(u, &mut step)?;
        }
        let mut body = Vec::new();
        if let Some(b) = n.child_by_field_name("body") {
            self.scoped(b, &mut body)?;
        }
        let span = self.span(n);
        match (pre.is_empty(), cond) {
            (true, cond) => self.push_loop(out, cond, body, step, true, span),
            (false, Some(cond)) => {
                let mut b = pre;
                b.push(Stmt::exit_unless(cond, span));
                b.extend(body);
                self.push_loop(out, None, b, step, true, span);
            }
            (false, None) => unreachable!("side effects come from a condition"),
        }
        Ok(())
    }

    /// A loop condition and the side effects (`++i`) that run before each test.
    pub(super) fn loop_cond(&mut self, c: Node) -> Result<(Vec<Stmt>, Expr)> {
        let saved = std::mem::take(&mut self.builder.pending);
        let r = self.condition(c);
        let pre = std::mem::replace(&mut self.builder.pending, saved);
        Ok((pre, r?))
    }

    /// A condition (condition_clause, parenthesized or plain expression) as a truth value.
    pub(super) fn condition(&mut self, c: Node) -> Result<Expr> {
        let inner = match c.kind() {
            "condition_clause" => {
                if c.child_by_field_name("initializer").is_some() {
                    return Err(self.unsupported(c, "an if with an initializer"));
                }
                c.child_by_field_name("value").ok_or_else(|| self.unsupported(c, "this condition"))?
            }
            _ => c,
        };
        if inner.kind() == "declaration" {
            return Err(self.unsupported(inner, "a declaration in a condition"));
        }
        let (e, t) = self.expr(inner)?;
        Ok(self.truth(e, &t))
    }

    pub(super) fn truth(&self, e: Expr, t: &Ty) -> Expr {
        match t {
            Ty::Float(_) => Expr::FloatBinary { op: BinOp::Ne, lhs: Box::new(e), rhs: Box::new(Expr::Float(0.0)) },
            _ => e,
        }
    }

    pub(super) fn ret(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        let mut c = n.walk();
        let value = n.named_children(&mut c).next();
        if self.inline.is_empty() {
            if value.is_some() {
                return Err(self.unsupported(n, "returning a value from a kernel"));
            }
            out.push(Stmt::Return);
            return Ok(());
        }
        let (flag, ret_val, auto_ret, by_ref) = {
            let inl = self.inline.last().expect("inline context");
            (inl.ret_flag, inl.ret_val.clone(), inl.auto_ret, inl.ret_ref.is_some())
        };
        if let (Some(v), Some((id, _)), true) = (value, &ret_val, by_ref) {
            // A reference returned for its place: the address of memory, or the thread's own
            // object (its indices evaluated).
            let place = self.place(v)?;
            self.flush(out);
            let answer = self.inline.last_mut().and_then(|i| i.ret_ref.as_mut()).expect("reference return");
            match place {
                Place::Memory(m) => {
                    answer.memory = Some((m.ty.clone(), m.space, m.volatile));
                    let ty = Ty::Ptr(Box::new(PtrTy {
                        pointee: m.ty,
                        space: m.space,
                        is_const: false,
                        restrict: false,
                        volatile: m.volatile,
                    }));
                    self.set_local_ty(*id, ty);
                    self.unset_ptrs.remove(id);
                    out.push(Stmt::Assign { local: *id, value: m.address, span: self.span(n) });
                }
                other => answer.register = Some(other.ty().clone()),
            }
        } else if let (Some(v), Some((id, _))) = (value, ret_val) {
            let (e, t) = self.expr(v)?;
            if auto_ret && is_void(&self.builder.kernel.locals[id.0 as usize].ty) {
                self.set_local_ty(id, t.clone());
            }
            let ty = self.builder.kernel.locals[id.0 as usize].ty.clone();
            let e = self.convert(e, &t, &ty, v)?;
            self.pointer_origin(id, ty, &t, v)?;
            self.flush(out);
            out.push(Stmt::Assign { local: id, value: e, span: self.span(n) });
        }
        out.push(Stmt::Assign { local: flag, value: Expr::Int(1, IntTy::I32), span: self.span(n) });
        out.push(Stmt::Break);
        Ok(())
    }

    pub(super) fn declaration(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        // `struct Q { int a, b; } q = {1, 2};`: the structure is defined here, then declared.
        let defined = match n.child_by_field_name("type") {
            Some(t) => self.local_struct(t)?,
            None => None,
        };
        if self.group_declaration(n, out)? || self.value_type_declaration(n, out)? {
            return Ok(());
        }
        let t = n.child_by_field_name("type").ok_or_else(|| self.unsupported(n, "this declaration"))?;
        // `extern __device__ void error(void);`: a function declared in a body declares nothing
        // that moves memory (a call of it is judged where it is made).
        let mut c = n.walk();
        let prototype = n.children_by_field_name("declarator", &mut c).all(|d| d.kind() == "function_declarator");
        let quals = self.quals(n);
        // (`T v(a, b);` may parse as a prototype too: only `extern` or `void` ones are skipped.)
        if prototype && (quals.contains(&"extern") || self.text(t) == "void") {
            return Ok(());
        }
        let shared = quals.contains(&"__shared__");
        let is_extern = quals.contains(&"extern");
        let auto = self.text(t) == "auto";
        // `tab4_t *sp;` of `typedef float tab4_t[4][4][4][4]`: pointers to its arrays.
        let array_typedef = self.unit.array_typedefs.get(self.text(t)).cloned();
        let base = match (defined, &array_typedef) {
            (Some(ty), _) => ty,
            (None, _) if auto => Ty::Void,
            (None, Some((elem, _))) => elem.clone(),
            (None, None) => type_of_specifier(self.unit, t, &self.tmpl)?,
        };
        let typedef_dims = array_typedef.map(|(_, d)| d).unwrap_or_default();
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in decls {
            let (target, init) = match d.kind() {
                "init_declarator" => (
                    d.child_by_field_name("declarator").ok_or_else(|| self.unsupported(d, "this declarator"))?,
                    d.child_by_field_name("value"),
                ),
                _ => (d, None),
            };
            if target.kind() == "reference_declarator" {
                let mut cc = target.walk();
                let inner = target.named_children(&mut cc).next();
                let init = init.ok_or_else(|| self.unsupported(d, "a reference without an initializer"))?;
                let name = inner.map(|x| self.text(x).to_string()).unwrap_or_default();
                let declared = if auto { None } else { Some(base.clone()) };
                let sym = self.bind_reference(&name, declared, init)?;
                self.flush(out);
                self.scopes.last_mut().unwrap().insert(name, sym);
                continue;
            }
            if let (false, Some((name, inner))) = (shared, self.array_pointer(target, &typedef_dims)?) {
                self.rows_pointer(name, inner, &base, &quals, init, d, out)?;
                continue;
            }
            if !typedef_dims.is_empty() {
                return Err(self.unsupported(d, "a variable of an array typedef's type"));
            }
            // `float *p = v;` of the thread's own array, `float *pv = (float *)&val;`: a pointer
            // into registers, indexed where it is used.
            let declares_pointer = target.kind() == "pointer_declarator" || (auto && target.kind() == "identifier");
            if let (true, false, Some(i)) = (declares_pointer, shared, init) {
                if let Some(sym) = self.own_pointer_init(i)? {
                    let name = self.declared_name(target).unwrap_or_default();
                    self.flush(out);
                    self.scopes.last_mut().unwrap().insert(name, sym);
                    continue;
                }
            }
            if !auto && !shared && target.kind() == "identifier" && cpp_struct(&base) {
                let name = self.text(target).to_string();
                let sym = self.struct_local(&name, &base, init, d)?;
                self.flush(out);
                self.scopes.last_mut().unwrap().insert(name, sym);
                continue;
            }
            if auto && target.kind() == "identifier" {
                if let Some(i) = init {
                    let pt = self.peek_type(i);
                    if cpp_struct(&pt) {
                        let name = self.text(target).to_string();
                        let sym = self.struct_local(&name, &pt, init, d)?;
                        self.flush(out);
                        self.scopes.last_mut().unwrap().insert(name, sym);
                        continue;
                    }
                }
            }
            // `fn_t f = dbl;`, `auto f = &dbl;`: the call through `f` inlines `dbl`.
            if let Some(i) = init {
                let fi = match i.kind() {
                    "pointer_expression" => i.child_by_field_name("argument").unwrap_or(i),
                    _ => i,
                };
                let name = self.text(fi);
                if fi.kind() == "identifier" && self.lookup(name).is_none() {
                    if let Some((f, _)) = self.resolve_function(name) {
                        let var = self.declared_name(target).unwrap_or_default();
                        self.scopes.last_mut().unwrap().insert(var, Sym::Func(f));
                        continue;
                    }
                }
            }
            if let (true, Some(i)) = (auto && target.kind() == "identifier", init) {
                if i.kind() == "lambda_expression" {
                    let sym = self.define_lambda(i);
                    let name = self.text(target).to_string();
                    self.scopes.last_mut().unwrap().insert(name, sym);
                    continue;
                }
            }
            let (name, ty, dims) = if auto {
                let init = init.ok_or_else(|| self.unsupported(d, "`auto` without an initializer"))?;
                let (e, ty) = self.expr(init)?;
                // `auto x`, `const auto *p`, `auto *const p`: the declared name.
                let name = self.declared_name(target).unwrap_or_else(|| self.text(target).to_string());
                let id = self.builder.local(&name, ty.clone());
                self.flush(out);
                out.push(Stmt::Assign { local: id, value: e, span: self.span(d) });
                self.scopes.last_mut().unwrap().insert(name, Sym::Local(id, ty));
                continue;
            } else {
                self.declarator(target, base.clone(), &quals)?
            };
            if shared {
                // In an inlined __device__ function the variable is static: every call uses the
                // one allocation its declaration makes.
                let here = self.span(d);
                if let Some(i) =
                    self.builder.kernel.shared.iter().position(|a| a.span == here && a.name == name && a.elem == ty)
                {
                    let sym = if dims.is_none() && !is_extern {
                        Sym::SharedScalar(SharedId(i as u32))
                    } else {
                        Sym::Shared(SharedId(i as u32))
                    };
                    self.scopes.last_mut().unwrap().insert(name, sym);
                    continue;
                }
                if dims.is_none() && !is_extern {
                    // A scalar `__shared__` variable: one element at the variable's address.
                    let id = SharedId(self.builder.kernel.shared.len() as u32);
                    let align = cpp::shared_align(self.unit, &ty, self.text(n));
                    self.builder.kernel.shared.push(SharedArray {
                        name: name.clone(),
                        elem: ty,
                        dims: vec![1],
                        is_extern: false,
                        span: self.span(d),
                        align,
                        in_kernel: self.inline.is_empty(),
                    });
                    self.scopes.last_mut().unwrap().insert(name, Sym::SharedScalar(id));
                    continue;
                }
                let dims = dims.unwrap_or_default();
                let is_dyn = dims.first().is_some_and(|x| x.is_none());
                if dims.iter().skip(1).any(|x| x.is_none()) || (dims.is_empty() && !is_extern) {
                    return Err(self.unsupported(d, "a shared variable that is not an array of static size"));
                }
                let id = SharedId(self.builder.kernel.shared.len() as u32);
                let align = cpp::shared_align(self.unit, &ty, self.text(n));
                self.builder.kernel.shared.push(SharedArray {
                    name: name.clone(),
                    elem: ty,
                    dims: dims.iter().map(|x| x.unwrap_or(0)).collect(),
                    is_extern: is_extern || is_dyn,
                    span: self.span(d),
                    align,
                    in_kernel: self.inline.is_empty(),
                });
                self.scopes.last_mut().unwrap().insert(name, Sym::Shared(id));
                continue;
            }
            if dims.is_some() {
                // A thread's own array lives in registers or local memory: not counted here.
                if let Some(i) = init {
                    let (e, _) = self.expr(i)?;
                    self.flush(out);
                    out.push(Stmt::Eval(local_array_write(e)));
                }
                // `float w[] = {1, 2, 3};`: the outermost dimension is the initializer's length.
                let dims = dims.map(|mut d| {
                    if let (Some(None), Some(i)) = (d.first(), init) {
                        d[0] = cpp::initializer_length(self.unit, i);
                    }
                    d
                });
                // Its dimensions (outermost first), for `T (&a)[N]` parameters to deduce `N` from
                // and for `sizeof`.
                let known: Vec<u64> = dims.iter().flatten().flat_map(|d| d.iter().copied()).collect();
                let known = if dims.as_ref().is_some_and(|d| d.len() == known.len()) { known } else { Vec::new() };
                self.scopes.last_mut().unwrap().insert(name, Sym::LocalArray(ty, known));
                continue;
            }
            if is_void(&ty) {
                return Err(self.unsupported(d, "a void variable"));
            }
            // `const int N = 64;` with a constant initializer folds to a constant (array sizes).
            if let (true, Ty::Int(it), Some(i)) = (quals.contains(&"const") || quals.contains(&"constexpr"), &ty, init)
            {
                if let Ok((e, _)) = self.const_expr_ro(i) {
                    if let Some(v) = fold_constant(&e) {
                        // Types read below may name it as a template argument
                        // (`typename Vec<T, VEC_SIZE>::Type`).
                        self.tmpl.insert(name.clone(), TemplateArg::Int(it.wrap(v)));
                        self.scopes.last_mut().unwrap().insert(name, Sym::Const(it.wrap(v), *it));
                        continue;
                    }
                }
            }
            // `unsigned *p = &c_Table[threadIdx.y][0];`: a pointer into `__constant__` memory that
            // its scope never changes. Reads through it are the constant array's (no global or
            // shared traffic), so it names the untracked array itself.
            if let (Ty::Ptr(pt), Some(i)) = (&ty, init) {
                if let Some(what) = self.address_in_constant(i) {
                    if !assigned_in(self.unit, n.parent(), &name) {
                        let i = cpp::unparen(i);
                        if let Some(arg) = i.child_by_field_name("argument") {
                            // The subscripts are still evaluated (they may read memory).
                            self.place(arg)?;
                        }
                        self.scopes.last_mut().unwrap().insert(name, Sym::Opaque(pt.pointee.clone(), what));
                        continue;
                    }
                }
            }
            let mut ty = ty;
            let id = self.builder.local(&name, ty.clone());
            if matches!(ty, Ty::Ptr(_)) {
                self.unset_ptrs.insert(id);
            }
            if let Some(i) = init {
                let (e, et) = if i.kind() == "initializer_list" || i.kind() == "argument_list" {
                    let mut cc = i.walk();
                    let items: Vec<Node> = i.named_children(&mut cc).collect();
                    let mut args = Vec::new();
                    for it in items {
                        args.push(self.expr(it)?.0);
                    }
                    (Expr::Opaque { args, what: "initializer list".into() }, ty.clone())
                } else {
                    self.expr(i)?
                };
                let e = self.convert(e, &et, &ty, i)?;
                // A pointer's address space is its initializer's (`float *p = smem;`).
                ty = self.pointer_origin(id, ty, &et, i)?;
                self.flush(out);
                out.push(Stmt::Assign { local: id, value: e, span: self.span(d) });
                // A pointer initialised from a shared-memory pointer points into shared memory.
                if let (Ty::Ptr(lp), Ty::Ptr(ip)) = (&ty, &et) {
                    if ip.space == Space::Shared && lp.space != Space::Shared {
                        let mut shared = (**lp).clone();
                        shared.space = Space::Shared;
                        let ty = Ty::Ptr(Box::new(shared));
                        self.builder.kernel.locals[id.0 as usize].ty = ty.clone();
                        self.scopes.last_mut().unwrap().insert(name, Sym::Local(id, ty));
                        continue;
                    }
                }
            }
            self.scopes.last_mut().unwrap().insert(name, Sym::Local(id, ty));
        }
        Ok(())
    }

    /// A local pointer to rows (`float (*p)[4] = (float (*)[4]) in;`): a pointer to their first
    /// element, subscripted row-major through `Sym::Rows`.
    #[allow(clippy::too_many_arguments)]
    fn rows_pointer(
        &mut self,
        name: String,
        inner: Vec<u64>,
        elem: &Ty,
        quals: &[&str],
        init: Option<Node>,
        d: Node,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let mut ty = self.ptr(elem.clone(), quals, &[]);
        let id = self.builder.local(&name, ty.clone());
        self.unset_ptrs.insert(id);
        if let Some(i) = init {
            let (e, et) = self.expr(i)?;
            let e = self.convert(e, &et, &ty, i)?;
            ty = self.pointer_origin(id, ty, &et, i)?;
            self.flush(out);
            out.push(Stmt::Assign { local: id, value: e, span: self.span(d) });
        }
        let sym = Sym::Rows { base: Box::new(Sym::Local(id, ty)), elem: elem.clone(), inner };
        self.scopes.last_mut().unwrap().insert(name, sym);
        Ok(())
    }

    /// An expression evaluated for its effects (assignments, calls, increments).
    pub(super) fn effect(&mut self, e: Node, out: &mut Vec<Stmt>) -> Result<()> {
        match e.kind() {
            "assignment_expression" => {
                let s = self.assignment(e)?;
                self.flush(out);
                out.push(s);
            }
            "update_expression" => {
                let s = self.update(e)?;
                self.flush(out);
                out.push(s);
            }
            "comma_expression" => {
                let l = e.child_by_field_name("left").ok_or_else(|| self.unsupported(e, "this expression"))?;
                let r = e.child_by_field_name("right").ok_or_else(|| self.unsupported(e, "this expression"))?;
                self.effect(l, out)?;
                self.effect(r, out)?;
            }
            "call_expression" if self.is_barrier(e) => {
                let mut c = e.walk();
                if let Some(args) = e.child_by_field_name("arguments") {
                    let items: Vec<Node> = args.named_children(&mut c).collect();
                    for a in items {
                        let (x, _) = self.expr(a)?;
                        self.flush(out);
                        out.push(Stmt::Eval(x));
                    }
                }
                out.push(Stmt::Barrier { block: self.is_block_barrier(e) });
            }
            "parenthesized_expression" => {
                let mut c = e.walk();
                let inner = e.named_children(&mut c).next();
                if let Some(i) = inner {
                    self.effect(i, out)?;
                }
            }
            "gnu_asm_expression" => self.inline_asm(e, out)?,
            _ => {
                let (x, _) = self.expr(e)?;
                self.flush(out);
                out.push(Stmt::Eval(x));
            }
        }
        Ok(())
    }

    pub(super) fn is_barrier(&self, call: Node) -> bool {
        let f = call.child_by_field_name("function").map(|f| self.text(f)).unwrap_or("");
        matches!(
            f,
            "__syncthreads"
                | "__syncwarp"
                | "__threadfence"
                | "__threadfence_block"
                | "__threadfence_system"
                | "__syncthreads_count"
                | "__syncthreads_and"
                | "__syncthreads_or"
                | "__barrier_sync"
        )
    }

    /// A barrier every thread of the block waits at (not a fence nor `__syncwarp`).
    fn is_block_barrier(&self, call: Node) -> bool {
        let f = call.child_by_field_name("function").map(|f| self.text(f)).unwrap_or("");
        f.starts_with("__syncthreads") || f == "__barrier_sync"
    }

    pub(super) fn assignment(&mut self, e: Node) -> Result<Stmt> {
        let left = e.child_by_field_name("left").ok_or_else(|| self.unsupported(e, "this assignment"))?;
        let right = e.child_by_field_name("right").ok_or_else(|| self.unsupported(e, "this assignment"))?;
        let op = e.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("=");
        if op == "=" {
            if let Some(Sym::Struct(to)) = self.member_sym(left) {
                return self.assign_struct(&to, right, e);
            }
        }
        let (rv, rt) = self.expr(right)?;
        let place = self.place(left)?;
        if op == "=" {
            return self.write(place, rv, &rt, right);
        }
        let bop = match op.trim_end_matches('=') {
            "+" => "+",
            "-" => "-",
            "*" => "*",
            "/" => "/",
            "%" => "%",
            "<<" => "<<",
            ">>" => ">>",
            "&" | "and_eq" => "&",
            "|" | "or_eq" => "|",
            "^" | "xor_eq" => "^",
            _ => return Err(self.unsupported(e, "this assignment operator")),
        };
        // `a[i] += v` reads then writes the same place: one load and one store.
        let place = self.bind_place(place);
        let (cur, ct) = self.read_place(&place, CacheOp::Default);
        let (v, vt) = self.binary(bop, cur, ct.clone(), rv, rt, e)?;
        self.write(place, v, &vt, e)
    }

    /// `s = f(s, x);`, `v = w;`, `q = *reinterpret_cast<const P4 *>(p);` on a structure in
    /// registers: the value is made as a declaration would make it, then copied member by
    /// member. A structure that would stay bound to memory (its members read where used) is
    /// refused rather than copied as stale registers.
    fn assign_struct(&mut self, to: &cpp::StructVal, right: Node, e: Node) -> Result<Stmt> {
        let ty = self.unit.layout(&to.name).map(|l| l.ty()).ok_or_else(|| self.unsupported(e, "this structure"))?;
        match self.struct_local("$assigned", &ty, Some(right), e)? {
            from @ Sym::Struct(_) => {
                self.copy_struct(to, &from, e)?;
                Ok(Stmt::Eval(Expr::Int(0, IntTy::I32)))
            }
            _ => Err(self.unsupported(
                e,
                "assigning a structure in memory to a structure in registers as a whole (declare a new variable for it, or assign its members)",
            )),
        }
    }

    pub(super) fn update(&mut self, e: Node) -> Result<Stmt> {
        let arg = e.child_by_field_name("argument").ok_or_else(|| self.unsupported(e, "this update"))?;
        let op = e.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("++");
        let place = self.place(arg)?;
        let place = self.bind_place(place);
        let (cur, ct) = self.read_place(&place, CacheOp::Default);
        let one = Expr::Int(1, IntTy::I32);
        let (v, vt) = self.binary(if op == "++" { "+" } else { "-" }, cur, ct, one, Ty::Int(IntTy::I32), e)?;
        self.write(place, v, &vt, e)
    }
}

impl Lowerer<'_, '_> {
    /// `&c[i][0]`, `&c[i]`, `&c` of a `__constant__` object: what the object is (its `Sym::Opaque`
    /// description), else `None`.
    fn address_in_constant(&self, init: Node) -> Option<&'static str> {
        let i = cpp::unparen(init);
        if i.kind() != "pointer_expression" || i.child_by_field_name("operator").map(|o| self.text(o)) != Some("&") {
            return None;
        }
        let mut x = cpp::unparen(i.child_by_field_name("argument")?);
        // Subscripts of the array itself only: through a member (`&c[b].d_T[i]`) the element may
        // be behind a pointer, in global memory.
        while x.kind() == "subscript_expression" {
            x = cpp::unparen(x.child_by_field_name("argument")?);
        }
        if x.kind() != "identifier" {
            return None;
        }
        match self.lookup(self.text(x)) {
            Some(Sym::Opaque(_, what)) if what.contains("__constant__") => Some(what),
            _ => None,
        }
    }
}

/// Whether `name` is assigned, changed (`++`, `+=`) or has its address taken anywhere in `scope`.
fn assigned_in(unit: &Unit, scope: Option<Node>, name: &str) -> bool {
    let Some(scope) = scope else { return true };
    let mut stack = vec![scope];
    while let Some(n) = stack.pop() {
        let target = match n.kind() {
            "assignment_expression" => n.child_by_field_name("left"),
            "update_expression" => n.child_by_field_name("argument"),
            "pointer_expression" if n.child_by_field_name("operator").is_some_and(|o| unit.text(o) == "&") => {
                n.child_by_field_name("argument")
            }
            _ => None,
        };
        if target.map(cpp::unparen).is_some_and(|t| t.kind() == "identifier" && unit.text(t) == name) {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// The value of a condition made of constants alone (template arguments, `constexpr` values,
/// literals), or `None` when it depends on anything a lane or the launch computes.
fn const_truth(e: &Expr) -> Option<bool> {
    fold_constant(e).map(|v| v != 0)
}
