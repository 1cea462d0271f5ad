//! Inlining: `__device__` functions and function templates, lambdas, constructors and member
//! functions, with their template arguments bound.

use super::*;

impl<'u, 'a> Lowerer<'u, 'a> {
    /// The function a call names: a template parameter bound to a function, a scoped name, a
    /// method of the object's structure.
    pub(in crate::front::cuda::lower) fn resolve_function(&self, name: &str) -> Option<(String, Node<'a>)> {
        if let Some(TemplateArg::Func(f)) = self.tmpl.get(name) {
            return self.unit.device_fns.get(f.as_str()).map(|d| (f.clone(), *d));
        }
        if let Some(d) = self.unit.device_fns.get(name) {
            return Some((name.to_string(), *d));
        }
        let last = last_segment(name);
        self.unit.device_fns.get(last).map(|d| (last.to_string(), *d))
    }

    /// The explicit specialization of function template `name` (`template <> __device__ float
    /// f<-1>(...)`, kept under `f<-1>`) for the integer arguments `args`, where the file has one.
    pub(in crate::front::cuda::lower) fn explicit_specialization(
        &mut self,
        name: &str,
        args: Option<Node>,
    ) -> Option<(String, Node<'a>)> {
        let prefix = format!("{name}<");
        if !self.unit.device_fns.keys().any(|k| k.starts_with(&prefix)) {
            return None;
        }
        let list = args?;
        let mut c = list.walk();
        let given: Vec<Node> = list.named_children(&mut c).collect();
        let mut values = Vec::new();
        for g in given {
            match self.template_arg(g, false) {
                Ok(TemplateArg::Int(v)) => values.push(v.to_string()),
                _ => return None,
            }
        }
        let wanted = format!("{name}<{}>", values.join(","));
        let squeeze = |k: &str| k.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        self.unit.device_fns.iter().find(|(k, _)| squeeze(k) == wanted).map(|(k, d)| (k.clone(), *d))
    }

    /// An unqualified call inside a member function that names another member of its class
    /// (`return constant(0);` in `static Packed128 zeros()`): that member, on the same object.
    pub(in crate::front::cuda::lower) fn sibling_method(
        &self,
        name: &str,
        arity: usize,
    ) -> Option<(String, Node<'a>, StructVal)> {
        let object = self.inline.last()?.object.clone()?;
        let key = self.method_key(&object.name, name, arity);
        let def = self.unit.device_fns.get(key.as_str()).copied()?;
        Some((key, def, object))
    }

    /// Inlines a call of a `__device__` function (or function template): parameters become
    /// locals (references name the argument's place), template arguments are given or deduced
    /// from the arguments, missing arguments take their defaults, `return` leaves a wrapper loop.
    pub(in crate::front::cuda::lower) fn inline_device(
        &mut self,
        n: Node,
        fname: &str,
        def: Node<'a>,
        arg_nodes: &[Node],
        explicit: Option<Node>,
        this: Option<StructVal>,
    ) -> Result<(Expr, Ty)> {
        // Taken before the arguments are lowered: a call among them is not the one asked about.
        let want_ref = std::mem::take(&mut self.want_ref);
        // An instance of a function template is a function of its own: `f<i>` calling `f<i - 1>`
        // is a compile-time loop (ended by a specialization or the nesting limit), not recursion.
        let instance = match explicit {
            Some(list) => {
                let mut c = list.walk();
                let given: Vec<Node> = list.named_children(&mut c).collect();
                let mut parts = Vec::new();
                for g in given {
                    parts.push(match self.template_arg(g, false) {
                        Ok(TemplateArg::Int(v)) => v.to_string(),
                        _ => self.text(g).to_string(),
                    });
                }
                parts.join(",")
            }
            None => String::new(),
        };
        if !def.kind().starts_with("lambda") && self.inline.iter().any(|i| i.def == def.id() && i.instance == instance)
        {
            return Err(Diagnostic::at(
                ErrorKind::Unsupported,
                self.span(n),
                format!("recursion: `{fname}` calls itself (directly or through other calls); recursive __device__ functions are not supported"),
            ));
        }
        if self.inline.len() >= MAX_INLINE {
            return Err(Diagnostic::at(
                ErrorKind::Limit,
                self.span(n),
                format!("__device__ calls nested deeper than {MAX_INLINE}"),
            ));
        }
        let lambda = def.kind() == "lambda_expression";
        let decl = if lambda {
            def.child_by_field_name("declarator")
        } else {
            Some(function_declarator(def).ok_or_else(|| self.unsupported(def, "this function"))?)
        };
        let params = match decl {
            Some(d) => d.child_by_field_name("parameters"),
            None => None,
        };
        let pnodes: Vec<Node> = match params {
            None => Vec::new(),
            Some(params) => {
                let mut c = params.walk();
                let v: Vec<Node> = params
                    .named_children(&mut c)
                    .filter(|p| matches!(p.kind(), "parameter_declaration" | "optional_parameter_declaration"))
                    .collect();
                v
            }
        };
        let is_void_list = pnodes.len() == 1 && self.text(pnodes[0]).trim() == "void";
        let pnodes = if is_void_list { Vec::new() } else { pnodes };
        if arg_nodes.len() > pnodes.len() {
            return Err(self.unsupported(n, "a call with more arguments than the function's parameters"));
        }
        // Template arguments: explicit ones first, then deduced from argument types.
        let mut tmpl = self.tmpl.clone();
        let mut tparams: Vec<(String, bool, Option<Node>)> = Vec::new();
        let out_of_class = this.is_some()
            && !lambda
            && function_declarator(def)
                .and_then(|d| d.child_by_field_name("declarator"))
                .is_some_and(|d| self.text(d).contains("::"));
        // The template around this definition (an overload of the same name may have none).
        if let Some(t) = def.parent().filter(|t| t.kind() == "template_declaration") {
            if let Some(list) = t.child_by_field_name("parameters") {
                let mut cc = list.walk();
                for p in list.named_children(&mut cc) {
                    let (name, is_type, default) = match p.kind() {
                        "parameter_declaration" | "optional_parameter_declaration" => (
                            p.child_by_field_name("declarator").and_then(|d| self.declared_name(d)),
                            false,
                            p.child_by_field_name("default_value"),
                        ),
                        "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                            let mut k = p.walk();
                            let name = p
                                .named_children(&mut k)
                                .find(|x| x.kind() == "type_identifier")
                                .map(|x| self.text(x).to_string());
                            (name, true, p.child_by_field_name("default_type"))
                        }
                        _ => return Err(self.unsupported(p, "this template parameter")),
                    };
                    if let Some(name) = name {
                        // A class template's method defined outside it (`template <class T> T
                        // const &interval_gpu<T>::lower() const`): its template is the class's,
                        // bound by the object's instance.
                        if !(out_of_class && tmpl.contains_key(&name)) {
                            tmpl.remove(&name);
                        }
                        tparams.push((name, is_type, default));
                    }
                }
            }
        }
        if let Some(list) = explicit {
            let mut cc = list.walk();
            let given: Vec<Node> = list.named_children(&mut cc).collect();
            for (g, (name, is_type, _)) in given.iter().zip(&tparams) {
                let arg = self.template_arg(*g, *is_type)?;
                tmpl.insert(name.clone(), arg);
            }
        }
        // Arguments: references name places; others are values.
        let mut vals: Vec<Option<(Expr, Ty)>> = Vec::new();
        let mut refs: Vec<Option<Sym>> = Vec::new();
        // The dimensions of a shared array's row bound to `T (&a)[N]`, by parameter.
        let mut row_dims: Vec<Option<Vec<u64>>> = vec![None; pnodes.len()];
        for (i, p) in pnodes.iter().enumerate() {
            let is_ref = p.child_by_field_name("declarator").is_some_and(|d| d.kind() == "reference_declarator");
            let Some(a) = arg_nodes.get(i) else {
                vals.push(None);
                refs.push(None);
                continue;
            };
            // A cooperative group is bound by name, not passed as a value.
            if let Some((_, g)) = self.group_param(*p, Some(*a))? {
                // `template <typename G> f(G g)`: `G` deduced as the group's (opaque) type.
                if let Some(t) = p.child_by_field_name("type").filter(|t| t.kind() == "type_identifier") {
                    let name = self.text(t).to_string();
                    if tparams.iter().any(|(tp, is_type, _)| *is_type && *tp == name) && !tmpl.contains_key(&name) {
                        tmpl.insert(name, TemplateArg::Type(Ty::Vector { name: "cooperative group".into(), bytes: 0 }));
                    }
                }
                refs.push(Some(Sym::Group(g)));
                vals.push(None);
                continue;
            }
            // `f(s, {x[i], 1.0f})`: a braced list builds the structure parameter member by member.
            let list_ty = (a.kind() == "initializer_list")
                .then(|| p.child_by_field_name("type").and_then(|t| type_of_specifier(self.unit, t, &tmpl).ok()))
                .flatten()
                .filter(|t| struct_name(t).is_some());
            // A thread's own array passed to a pointer parameter: the callee's accesses through
            // it stay in registers (the array is bound by name, as a reference would be).
            let own_array = match cpp::unparen(*a) {
                x if x.kind() == "identifier" => match self.lookup(self.text(x)) {
                    Some(sym @ (Sym::LocalArray(..) | Sym::LocalPtr(_))) => Some(sym.clone()),
                    _ => None,
                },
                // `f(&x)`, `swap(&a, &b)`, `f(&v[k])`: the address of the thread's own object.
                x if !is_ref && x.kind() == "pointer_expression" => self.own_object_address(*a)?,
                // `md5((unsigned *)key, n)`: a view of the thread's own array or object.
                x if !is_ref && matches!(x.kind(), "cast_expression" | "call_expression") => {
                    self.own_pointer_init(x)?
                }
                _ => None,
            };
            // A lambda passed on (`apply(p, [=](float x) { .. })`, or a name bound to one): the
            // parameter names it, and a call through it inlines its body.
            let lambda_arg = match cpp::unparen(*a) {
                x if x.kind() == "lambda_expression" => Some(self.define_lambda(x)),
                x if x.kind() == "identifier" => match self.lookup(self.text(x)) {
                    Some(s @ Sym::Lambda(_)) => Some(s.clone()),
                    _ => None,
                },
                _ => None,
            };
            // A temporary function object (`red(a, b, MaxOp())`, `f(Op{})`): made in registers.
            let temporary = self.temporary_object(*a);
            let functor = toolkit_functor(self.text(*a));
            // `T (&a)[N]` bound to an array by name (shared, `__device__`, the thread's own).
            let array_ref = match cpp::unparen(*a) {
                x if x.kind() == "identifier"
                    && p.child_by_field_name("declarator").and_then(array_reference_sizes).is_some() =>
                {
                    match self.lookup(self.text(x)) {
                        Some(s @ (Sym::Shared(_) | Sym::DeviceVar { .. } | Sym::LocalArray(..))) => Some(s.clone()),
                        _ => None,
                    }
                }
                _ => None,
            };
            // `T (&a)[N]` bound to a row of a shared array (`dot(q_vecs[g], k)`): its address.
            let row = match p.child_by_field_name("declarator").and_then(array_reference_sizes) {
                Some(_) if array_ref.is_none() => self.shared_row(*a)?,
                _ => None,
            };
            if let Some((addr, ty, rest)) = row {
                let local = self.builder.local("$row", ty.clone());
                self.builder.pending.push(Stmt::Assign { local, value: addr, span: self.span(*a) });
                row_dims[i] = Some(rest);
                refs.push(Some(Sym::Local(local, ty)));
                vals.push(None);
            } else if let Some(sym) = array_ref.or(lambda_arg) {
                refs.push(Some(sym));
                vals.push(None);
            } else if let Some(name) = functor {
                let ty = functor_ty(&name);
                refs.push(Some(Sym::Opaque(ty, "a toolkit function object")));
                vals.push(None);
            } else if let Some((ty, init)) = temporary {
                refs.push(Some(self.struct_local("$tmp", &ty, init, *a)?));
                vals.push(None);
            } else if let Some(ty) = list_ty {
                refs.push(Some(self.struct_local("$arg", &ty, Some(*a), *a)?));
                vals.push(None);
            } else if let Some(sym) = own_array {
                refs.push(Some(sym));
                vals.push(None);
            } else if is_ref && !self.is_const_param(*p) {
                refs.push(Some(self.bind_reference("$ref", None, *a)?));
                vals.push(None);
            } else if struct_name(&self.peek_type(*a)).is_some() || matches!(self.member_sym(*a), Some(Sym::Struct(_)))
            {
                // A structure argument is named, not copied: members are read where used.
                refs.push(Some(self.bind_reference("$arg", None, *a)?));
                vals.push(None);
            } else {
                refs.push(None);
                vals.push(Some(self.expr(*a)?));
            }
        }
        // `std::bool_constant<B>` / `std::integral_constant<int, N>` tags: B and N from the
        // argument's type as written (`std::true_type{}`, `std::bool_constant<false>{}`).
        for (i, p) in pnodes.iter().enumerate() {
            let Some(t) = p.child_by_field_name("type") else { continue };
            let tt = self.text(t);
            if !(tt.contains("bool_constant<") || tt.contains("integral_constant<")) {
                continue;
            }
            let inner = tt.rsplit(['<', ',']).next().unwrap_or("").trim_end_matches('>').trim().to_string();
            if !tparams.iter().any(|(nm, _, _)| *nm == inner) || tmpl.contains_key(&inner) {
                continue;
            }
            let Some(a) = arg_nodes.get(i) else { continue };
            let at = self.text(*a);
            let v = if at.contains("true_type") || at.contains("<true>") {
                Some(1)
            } else if at.contains("false_type") || at.contains("<false>") {
                Some(0)
            } else {
                at.rsplit(['<', ','])
                    .next()
                    .and_then(|x| x.split('>').next())
                    .and_then(|x| x.trim().parse::<i128>().ok())
            };
            if let Some(v) = v {
                tmpl.insert(inner, TemplateArg::Int(v));
            }
        }
        // Deduce `N` (and `M`) from `T (&a)[N][M]` bound to an array of known size.
        for (i, p) in pnodes.iter().enumerate() {
            let Some(sizes) = p.child_by_field_name("declarator").and_then(array_reference_sizes) else { continue };
            let ident = arg_nodes.get(i).map(|a| cpp::unparen(*a)).filter(|a| a.kind() == "identifier");
            let dims: Vec<u64> = match (&row_dims[i], ident) {
                (Some(d), _) => d.clone(),
                (None, Some(a)) => match self.lookup(self.text(a)) {
                    Some(Sym::LocalArray(_, d)) => d.clone(),
                    Some(Sym::Shared(id)) => self.builder.kernel.shared[id.0 as usize].dims.clone(),
                    Some(Sym::DeviceVar { dims, .. }) => dims.clone(),
                    _ => continue,
                },
                (None, None) => continue,
            };
            if dims.len() != sizes.len() {
                continue;
            }
            for (s, v) in sizes.iter().zip(dims) {
                let Some(s) = s else { continue };
                let name = self.text(*s);
                if tparams.iter().any(|(nm, is_type, _)| nm == name && !is_type) && !tmpl.contains_key(name) {
                    tmpl.insert(name.to_string(), TemplateArg::Int(v as i128));
                }
            }
        }
        // Deduce `N` and `T` from `Stack<T, N> &s`, `Stack<T, N> *p`, `Stack<T, N> s` bound to an
        // object of an instance of that class template (`Stack<float, 64>`): its arguments.
        for (i, p) in pnodes.iter().enumerate() {
            let Some(t) = p.child_by_field_name("type").filter(|t| t.kind() == "template_type") else { continue };
            let Some(cname) = t.child_by_field_name("name").map(|x| self.text(x).to_string()) else { continue };
            let Some(targs) = t.child_by_field_name("arguments") else { continue };
            let arg_ty = match (&vals[i], &refs[i]) {
                (Some((_, ty)), _) => Some(ty.clone()),
                (None, Some(Sym::Local(_, ty))) | (None, Some(Sym::Ref { ty, .. })) => Some(ty.clone()),
                (None, Some(Sym::Struct(v))) => self.unit.layout(&v.name).map(|l| l.ty()),
                _ => None,
            };
            let arg_ty = match arg_ty {
                Some(Ty::Ptr(pt)) => pt.pointee.clone(),
                Some(t) => t,
                None => continue,
            };
            let Some(sname) = cpp::struct_name(&arg_ty).map(str::to_string) else { continue };
            let Some(layout) = self.unit.layout(&sname) else { continue };
            if layout.targs.is_empty() || !layout.name.starts_with(&format!("{cname}<")) {
                continue;
            }
            let mut c = targs.walk();
            let written: Vec<Node> = targs.named_children(&mut c).collect();
            for (w, (_, value)) in written.iter().zip(layout.targs.iter()) {
                let wname = self.text(*w).trim();
                if tparams.iter().any(|(nm, _, _)| nm == wname) && !tmpl.contains_key(wname) {
                    tmpl.insert(wname.to_string(), value.clone());
                }
            }
        }
        // Deduce `T` from `T x`, `T *p`, `const T &r`.
        for (i, p) in pnodes.iter().enumerate() {
            let Some(t) = p.child_by_field_name("type") else { continue };
            let tname = self.text(t);
            let Some((_, true, _)) = tparams.iter().find(|(nm, _, _)| nm == tname) else { continue };
            if tmpl.contains_key(tname) {
                continue;
            }
            let mut ty = match (&vals[i], &refs[i]) {
                (Some((_, ty)), _) => ty.clone(),
                (None, Some(Sym::Local(_, ty))) | (None, Some(Sym::Ref { ty, .. })) => ty.clone(),
                // A function object, a lambda: the parameter names it; its type is only a tag.
                (None, Some(Sym::Struct(v))) => match self.unit.layout(&v.name) {
                    Some(l) => l.ty(),
                    None => continue,
                },
                (None, Some(Sym::Lambda(_))) => Ty::Vector { name: "lambda".into(), bytes: 1 },
                // `T (&a)[N]` bound to the thread's own array: its elements' type.
                (None, Some(Sym::LocalArray(ty, _))) => ty.clone(),
                (None, Some(Sym::Opaque(ty @ Ty::Vector { .. }, _))) => ty.clone(),
                // `T *p` bound to `&x`: T is x's type.
                (None, Some(Sym::LocalPtr(inner))) => match &**inner {
                    Sym::Local(_, ty) => Ty::Ptr(Box::new(PtrTy {
                        pointee: ty.clone(),
                        space: Space::Global,
                        is_const: false,
                        restrict: false,
                        volatile: false,
                    })),
                    Sym::Struct(v) => match self.unit.layout(&v.name) {
                        Some(l) => Ty::Ptr(Box::new(PtrTy {
                            pointee: l.ty(),
                            space: Space::Global,
                            is_const: false,
                            restrict: false,
                            volatile: false,
                        })),
                        None => continue,
                    },
                    _ => continue,
                },
                _ => continue,
            };
            let mut d = p.child_by_field_name("declarator");
            let own_array = matches!(refs[i], Some(Sym::LocalArray(..)));
            while let Some(x) = d {
                // `T *p`, `T a[]` and `T (&a)[N]` of a pointer or an array in memory: the pointee.
                if x.kind() == "pointer_declarator" || (x.kind() == "array_declarator" && !own_array) {
                    if let Ty::Ptr(pt) = ty {
                        ty = pt.pointee.clone();
                    }
                }
                d = x.child_by_field_name("declarator").or_else(|| {
                    if matches!(x.kind(), "reference_declarator" | "parenthesized_declarator") {
                        let mut k = x.walk();
                        let inner = x.named_children(&mut k).next();
                        inner
                    } else {
                        None
                    }
                });
            }
            tmpl.insert(tname.to_string(), TemplateArg::Type(ty));
        }
        let saved_tmpl = std::mem::replace(&mut self.tmpl, tmpl);
        let r = self.inline_body(n, fname, def, instance, &pnodes, vals, refs, &tparams, this, want_ref);
        self.tmpl = saved_tmpl;
        r
    }

    /// A lambda met where it is written (bound to a name, or passed to a function): the symbol
    /// that names it, remembering the scopes it sees.
    pub(in crate::front::cuda::lower) fn define_lambda(&mut self, l: Node) -> Sym {
        self.lambdas.push((l.start_byte(), l.end_byte(), self.scopes.clone()));
        Sym::Lambda(self.lambdas.len() - 1)
    }

    /// `Op()`, `Op(a)`, `Op{}`, `Vec2<float>{..}` passed as an argument: a structure this file
    /// declares, with the list that initialises it.
    pub(in crate::front::cuda::lower) fn temporary_object<'n>(
        &mut self,
        a: Node<'n>,
    ) -> Option<(Ty, Option<Node<'n>>)> {
        let a = cpp::unparen(a);
        let (ty_node, init) = match a.kind() {
            "call_expression" => (a.child_by_field_name("function")?, a.child_by_field_name("arguments")),
            "compound_literal_expression" => (a.child_by_field_name("type")?, a.child_by_field_name("value")),
            _ => return None,
        };
        let layout = match ty_node.kind() {
            "identifier" | "type_identifier" => {
                let name = self.text(ty_node);
                if self.unit.device_fns.contains_key(name) || self.lookup(name).is_some() {
                    return None;
                }
                self.unit.layout(name)
            }
            "template_function" | "template_type" => instantiate(self.unit, ty_node, &self.tmpl),
            _ => None,
        }?;
        Some((layout.ty(), init))
    }

    /// A lambda call: inlined like a function, seeing its enclosing scopes.
    pub(in crate::front::cuda::lower) fn inline_lambda(
        &mut self,
        n: Node,
        l: Node<'a>,
        arg_nodes: &[Node],
    ) -> Result<(Expr, Ty)> {
        self.inline_device(n, "lambda", l, arg_nodes, None, None)
    }

    pub(super) fn is_const_param(&self, p: Node) -> bool {
        self.quals(p).contains(&"const")
    }

    /// A template argument as written: a type, a constant, or a function's name.
    pub(super) fn template_arg(&mut self, g: Node, is_type: bool) -> Result<TemplateArg> {
        if !is_type {
            // `f<twice>`, `f<N>`: a name the grammar may read as a type.
            let word = self.text(g).trim();
            match self.lookup(word).cloned() {
                Some(Sym::Const(v, _)) => return Ok(TemplateArg::Int(v)),
                None if !word.is_empty() && word.chars().all(|c| c.is_alphanumeric() || c == '_' || c == ':') => {
                    if let Some((f, _)) = self.resolve_function(word) {
                        return Ok(TemplateArg::Func(f));
                    }
                }
                _ => {}
            }
        }
        if is_type || g.kind() == "type_descriptor" {
            if g.kind() == "type_descriptor" {
                return Ok(TemplateArg::Type(self.type_descriptor(g)?));
            }
            return Ok(TemplateArg::Type(type_of_specifier(self.unit, g, &self.tmpl)?));
        }
        if g.kind() == "identifier" && self.lookup(self.text(g)).is_none() {
            if let Some((f, _)) = self.resolve_function(self.text(g)) {
                return Ok(TemplateArg::Func(f));
            }
        }
        let (e, _) = self.const_expr_ro(g)?;
        fold_constant(&e).map(TemplateArg::Int).ok_or_else(|| {
            Diagnostic::at(ErrorKind::Unsupported, self.span(g), "a template argument that is not a constant")
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn inline_body(
        &mut self,
        n: Node,
        fname: &str,
        def: Node<'a>,
        instance: String,
        pnodes: &[Node<'a>],
        vals: Vec<Option<(Expr, Ty)>>,
        refs: Vec<Option<Sym>>,
        tparams: &[(String, bool, Option<Node>)],
        this: Option<StructVal>,
        want_ref: bool,
    ) -> Result<(Expr, Ty)> {
        let mut scope = HashMap::new();
        // Template parameters still unbound take their defaults.
        for (name, is_type, default) in tparams {
            if self.tmpl.contains_key(name) {
                continue;
            }
            match (default, is_type) {
                (Some(d), true) => {
                    let t = self.type_descriptor(*d)?;
                    self.tmpl.insert(name.clone(), TemplateArg::Type(t));
                }
                (Some(d), false) => {
                    let (e, _) = self.const_expr_ro(*d)?;
                    if let Some(v) = fold_constant(&e) {
                        self.tmpl.insert(name.clone(), TemplateArg::Int(v));
                    }
                }
                _ => {
                    return Err(Diagnostic::at(
                        ErrorKind::Unsupported,
                        self.span(n),
                        format!("call of `{fname}`: template parameter `{name}` cannot be deduced"),
                    )
                    .note(format!("write the template arguments: `{fname}<...>(...)`")))
                }
            }
        }
        for (name, _, _) in tparams {
            if let Some(TemplateArg::Int(v)) = self.tmpl.get(name) {
                scope.insert(name.clone(), Sym::Const(*v, IntTy::I32));
            }
        }
        if let Some(this) = &this {
            for (f, s) in &this.fields {
                scope.insert(f.clone(), s.clone());
            }
            for (c, v) in self.unit.layout(&this.name).map(|l| l.consts).unwrap_or_default() {
                scope.insert(c, Sym::Const(v, IntTy::U64));
            }
        }
        let lambda = def.kind() == "lambda_expression";
        let trailing = if lambda {
            def.child_by_field_name("declarator").and_then(|d| {
                let mut c = d.walk();
                let t = d.named_children(&mut c).find(|x| x.kind() == "trailing_return_type");
                t
            })
        } else {
            None
        };
        let mut auto_ret = false;
        let ret_ty = match (def.child_by_field_name("type"), trailing) {
            (_, Some(t)) => {
                let mut c = t.walk();
                let td = t.named_children(&mut c).next();
                match td {
                    Some(td) => self.type_descriptor(td)?,
                    None => Ty::Void,
                }
            }
            (Some(t), None) if matches!(self.text(t), "auto" | "decltype(auto)") => {
                auto_ret = true;
                Ty::Void
            }
            (Some(t), None) => type_of_specifier(self.unit, t, &self.tmpl)?,
            (None, None) if lambda => {
                auto_ret = true;
                Ty::Void
            }
            (None, None) => match def.child_by_field_name("declarator") {
                // `operator T *()`: the type converted to is the return type.
                Some(oc) if oc.kind() == "operator_cast" => {
                    let t = oc.child_by_field_name("type").ok_or_else(|| self.unsupported(oc, "this operator"))?;
                    type_of_specifier(self.unit, t, &self.tmpl)?
                }
                _ => Ty::Void,
            },
        };
        let mut ret_ty = ret_ty;
        let mut d = def.child_by_field_name("declarator");
        while let Some(x) = d {
            if x.kind() == "pointer_declarator" || x.kind() == "abstract_pointer_declarator" {
                ret_ty = self.ptr(ret_ty, &[], &[]);
            }
            if x.kind() == "function_declarator" {
                break;
            }
            d = x.child_by_field_name("declarator");
        }
        let mut body = Vec::new();
        for (i, p) in pnodes.iter().enumerate() {
            let pname = p.child_by_field_name("declarator").and_then(|d| self.declared_name(d));
            if let Some(sym) = &refs[i] {
                if let Some(pn) = pname {
                    scope.insert(pn, sym.clone());
                }
                continue;
            }
            let (pn, pty) = self.declared(*p)?;
            let (a, at) = match &vals[i] {
                Some(v) => v.clone(),
                None => {
                    let d = p.child_by_field_name("default_value").ok_or_else(|| {
                        self.unsupported(n, "a call with fewer arguments than the function's parameters")
                    })?;
                    self.expr(d)?
                }
            };
            let pty = self.with_origin(pty, &at);
            if let (Some(sname), Some(pn)) = (struct_name(&pty).map(str::to_string), pn.as_ref()) {
                // A structure passed by value (a function object, a tag): members in registers.
                self.pending_eval(a);
                let v = self.struct_locals(pn, &sname, n, 0)?;
                scope.insert(pn.clone(), Sym::Struct(v));
                continue;
            }
            let local = self.builder.local(pn.as_deref().unwrap_or("$arg"), pty.clone());
            let a = self.convert(a, &at, &pty, n)?;
            body.push(Stmt::Assign { local, value: a, span: self.span(n) });
            if let Some(pn) = pn {
                let sym = match self.param_rows(*p)? {
                    Some((elem, inner)) => Sym::Rows { base: Box::new(Sym::Local(local, pty)), elem, inner },
                    None => Sym::Local(local, pty),
                };
                scope.insert(pn, sym);
            }
        }
        let ret_flag = self.builder.temporary(Ty::Int(IntTy::I32));
        let ret_ref = (want_ref && !is_void(&ret_ty) && returns_reference(def)).then(RefReturn::default);
        if ret_ref.is_some() {
            // The address of what is returned (its space set by the `return`).
            ret_ty = self.ptr(ret_ty, &[], &[]);
        }
        let ret_val = if is_void(&ret_ty) && !auto_ret {
            None
        } else {
            Some((self.builder.temporary(ret_ty.clone()), ret_ty.clone()))
        };
        if let Some((id, Ty::Ptr(_))) = &ret_val {
            // A returned pointer's address space is its `return`'s value's.
            self.unset_ptrs.insert(*id);
        }
        self.builder.pending.push(Stmt::Assign {
            local: ret_flag,
            value: Expr::Int(0, IntTy::I32),
            span: self.span(n),
        });
        let mut globals = self.scopes[0].clone();
        // Parameters of the kernel are not visible inside the function.
        globals.retain(|_, s| !matches!(s, Sym::Param(_) | Sym::Local(..) | Sym::Struct(_)));
        globals.extend(self.constant_syms.iter().map(|(k, v)| (k.clone(), v.clone())));
        for (k, v) in &self.unit.globals {
            globals.entry(k.clone()).or_insert_with(|| v.clone());
        }
        // A lambda sees the scopes it was written in (its captures), also when it is called
        // inside a function it was passed to; a function only globals.
        let written_in = lambda
            .then(|| self.lambdas.iter().rev().find(|l| (l.0, l.1) == (def.start_byte(), def.end_byte())))
            .flatten()
            .map(|l| l.2.clone());
        let saved_scopes = if let Some(mut env) = written_in {
            env.push(scope);
            Some(std::mem::replace(&mut self.scopes, env))
        } else if lambda {
            self.scopes.push(scope);
            None
        } else {
            Some(std::mem::replace(&mut self.scopes, vec![globals, scope]))
        };
        let saved_pending = std::mem::take(&mut self.builder.pending);
        let object = this.clone();
        self.inline.push(Inline {
            def: def.id(),
            instance,
            ret_flag,
            ret_val: ret_val.clone(),
            auto_ret,
            object,
            ret_ref,
        });
        // A constructor's member initializers (`: x(a), y(b)`) run before its body.
        let mut r = Ok(());
        let mut c = def.walk();
        let inits: Vec<Node> = def
            .named_children(&mut c)
            .filter(|x| x.kind() == "field_initializer_list")
            .flat_map(|l| {
                let mut cc = l.walk();
                let v: Vec<Node> = l.named_children(&mut cc).collect();
                v
            })
            .collect();
        for fi in inits {
            r = self.field_initializer(fi, &mut body);
            if r.is_err() {
                break;
            }
        }
        let r = r.and_then(|_| match def.child_by_field_name("body") {
            Some(b) => self.block(b, &mut body),
            None => Err(self.unsupported(def, "a function without a body")),
        });
        if let Some(done) = self.inline.pop() {
            self.ref_answer = done.ret_ref;
        }
        match saved_scopes {
            Some(sc) => self.scopes = sc,
            None => {
                self.scopes.pop();
            }
        }
        self.builder.pending = saved_pending;
        r?;
        body.push(Stmt::Break);
        let span = self.span(n);
        self.builder.pending.push(Stmt::Loop {
            cond: None,
            body,
            step: Vec::new(),
            test_first: true,
            span,
            synthetic: true,
        });
        let note = if lambda {
            "lambda inlined".to_string()
        } else {
            format!("__device__ function `{}` inlined", fname.split('#').next().unwrap_or(fname))
        };
        if !self.builder.kernel.notes.contains(&note) {
            self.builder.kernel.notes.push(note);
        }
        Ok(match ret_val {
            Some((id, _)) if !is_void(&self.builder.kernel.locals[id.0 as usize].ty) => {
                (Expr::Local(id), self.builder.kernel.locals[id.0 as usize].ty.clone())
            }
            _ => (Expr::Int(0, IntTy::I32), Ty::Void),
        })
    }

    /// A call made for the place it names, when its function returns a reference (`v[i] = x`
    /// through `T &operator[](int)`, `v.at(i) = x`, `get(i) += x`): memory at the address its
    /// `return`s give, or the thread's own object in registers. A call returning a value gives
    /// that value; `None` when `call` made no call.
    pub(in crate::front::cuda::lower) fn reference_place(
        &mut self,
        n: Node,
        call: impl FnOnce(&mut Self) -> Result<Option<(Expr, Ty)>>,
    ) -> Result<Option<std::result::Result<Place, (Expr, Ty)>>> {
        self.want_ref = true;
        self.ref_answer = None;
        let r = call(self);
        self.want_ref = false;
        let answer = self.ref_answer.take();
        let Some((e, t)) = r? else { return Ok(None) };
        Ok(Some(match answer {
            Some(RefReturn { memory: Some((ty, space, volatile)), register: None }) => Ok(Place::Memory(MemoryPlace {
                address: e,
                ty,
                space,
                volatile,
                text: self.text(n).to_string(),
                span: self.span(n),
            })),
            Some(RefReturn { memory: None, register: Some(ty) }) => Ok(Place::ThreadArray(ty)),
            Some(RefReturn { memory: Some(_), register: Some(_) }) => {
                return Err(self.unsupported(
                    n,
                    "a function returning a reference to memory on one path and to the thread's own object on another",
                ))
            }
            _ => Err((e, t)),
        }))
    }

    /// `x(a)` or `x{a}` in a constructor's initializer list.
    pub(super) fn field_initializer(&mut self, fi: Node, out: &mut Vec<Stmt>) -> Result<()> {
        let mut c = fi.walk();
        let kids: Vec<Node> = fi.named_children(&mut c).collect();
        let (Some(f), Some(args)) = (kids.first(), kids.get(1)) else { return Ok(()) };
        let mut cc = args.walk();
        let vals: Vec<Node> = args.named_children(&mut cc).collect();
        let Some(v) = vals.first() else { return Ok(()) };
        let place = match self.lookup(self.text(*f)).cloned() {
            Some(sym) => self.sym_place(sym, *f)?,
            None => return Err(self.undeclared(*f)),
        };
        let (e, t) = self.expr(*v)?;
        let st = self.write(place, e, &t, *v)?;
        self.flush(out);
        out.push(st);
        Ok(())
    }

    pub(in crate::front::cuda::lower) fn declared_name(&self, d: Node) -> Option<String> {
        match d.kind() {
            "identifier" => Some(self.text(d).to_string()),
            _ => {
                let inner = d.child_by_field_name("declarator").or_else(|| {
                    let mut c = d.walk();
                    let x = d.named_children(&mut c).find(|x| x.kind() != "type_qualifier");
                    x
                })?;
                self.declared_name(inner)
            }
        }
    }

    /// `obj.method(args)` on a structure in registers or in memory, and `obj[i]` through
    /// `operator[]`: the method is inlined with the members in scope.
    pub(in crate::front::cuda::lower) fn method_call(
        &mut self,
        n: Node,
        f: Node,
        arg_nodes: &[Node],
    ) -> Result<Option<(Expr, Ty)>> {
        let Some(obj) = f.child_by_field_name("argument") else { return Ok(None) };
        let Some(mut field) = f.child_by_field_name("field") else { return Ok(None) };
        // `template next<T>` parses as a dependent name around the template method.
        if field.kind() == "dependent_name" {
            match field.named_child(0) {
                Some(inner) => field = inner,
                None => return Ok(None),
            }
        }
        // `rng.template next<T>()`: the method's name and its explicit template arguments.
        let (method, explicit) = match field.kind() {
            "template_method" => match field.child_by_field_name("name") {
                Some(name) => (self.text(name).to_string(), field.child_by_field_name("arguments")),
                None => return Ok(None),
            },
            _ => (self.text(field).to_string(), None),
        };
        let op = f.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        self.call_member(n, obj, op, &method, arg_nodes, explicit)
    }

    /// `explicit`: the call's template arguments (`obj.template f<T>()`).
    pub(in crate::front::cuda::lower) fn call_member(
        &mut self,
        n: Node,
        obj: Node,
        op: &str,
        method: &str,
        arg_nodes: &[Node],
        explicit: Option<Node>,
    ) -> Result<Option<(Expr, Ty)>> {
        let oty = self.peek_type(obj);
        let sty = if op == "->" {
            match &oty {
                Ty::Ptr(p) => p.pointee.clone(),
                _ => return Ok(None),
            }
        } else {
            oty
        };
        let Some(sname) = struct_name(&sty).map(str::to_string) else { return Ok(None) };
        let key = self.method_key(&sname, method, arg_nodes.len());
        let targs = self.unit.layout(&sname).map(|l| l.targs).unwrap_or_default();
        let Some(def) = self.unit.device_fns.get(key.as_str()).copied() else {
            return Err(self.unsupported(n, &format!("a call of `{key}`, which is not defined in this file")));
        };
        // The members as symbols: registers as they are, memory through references.
        let this = match (op, self.member_sym(obj)) {
            (".", Some(Sym::Struct(v))) => v,
            _ => {
                let layout = self.unit.layout(&sname).ok_or_else(|| self.unsupported(n, "this structure"))?;
                let (base, space, volatile) = if op == "->" {
                    let (p, pt) = self.expr(obj)?;
                    let Ty::Ptr(pt) = pt else { return Ok(None) };
                    (p, pt.space, pt.volatile)
                } else {
                    match self.place(obj)? {
                        Place::Memory(MemoryPlace { address: addr, space, volatile, .. }) => (addr, space, volatile),
                        // An element of the thread's own array of structures (`b[i].rating()`
                        // of `MerBase b[4]`): registers whose contents are not tracked, so its
                        // members are too; the call moves no memory through them.
                        Place::ThreadArray(_) => {
                            let this = StructVal {
                                name: sname.clone(),
                                fields: layout
                                    .fields
                                    .iter()
                                    .map(|fd| {
                                        let sym = if fd.dims.is_empty() {
                                            Sym::Opaque(fd.ty.clone(), "a member of a thread's own object")
                                        } else {
                                            Sym::LocalArray(fd.ty.clone(), fd.dims.clone())
                                        };
                                        (fd.name.clone(), sym)
                                    })
                                    .collect(),
                            };
                            return self.inline_method(n, &key, def, arg_nodes, explicit, this, targs).map(Some);
                        }
                        _ => return Err(self.unsupported(n, "a method call on this object")),
                    }
                };
                let bty = Ty::Ptr(Box::new(PtrTy {
                    pointee: sty.clone(),
                    space,
                    is_const: false,
                    restrict: false,
                    volatile,
                }));
                let b = self.builder.local("this", bty);
                self.builder.pending.push(Stmt::Assign { local: b, value: base, span: self.span(n) });
                let mut fields = Vec::new();
                for fd in &layout.fields {
                    let fty = Ty::Ptr(Box::new(PtrTy {
                        pointee: fd.ty.clone(),
                        space,
                        is_const: false,
                        restrict: false,
                        volatile,
                    }));
                    let t = self.builder.local(&format!("this.{}", fd.name), fty);
                    self.builder.pending.push(Stmt::Assign {
                        local: t,
                        value: ptr_add(Expr::Local(b), fd.offset as i128),
                        span: self.span(n),
                    });
                    let sym = if fd.dims.is_empty() {
                        Sym::Ref {
                            ptr: t,
                            ty: fd.ty.clone(),
                            space,
                            volatile,
                            text: format!("{}.{}", self.text(obj), fd.name),
                        }
                    } else {
                        Sym::Local(
                            t,
                            Ty::Ptr(Box::new(PtrTy {
                                pointee: fd.ty.clone(),
                                space,
                                is_const: false,
                                restrict: false,
                                volatile,
                            })),
                        )
                    };
                    fields.push((fd.name.clone(), sym));
                }
                StructVal { name: sname.clone(), fields }
            }
        };
        self.inline_method(n, &key, def, arg_nodes, explicit, this, targs).map(Some)
    }

    /// A method inlined on `this`, with its class's template arguments bound.
    #[allow(clippy::too_many_arguments)]
    fn inline_method(
        &mut self,
        n: Node,
        key: &str,
        def: Node<'a>,
        arg_nodes: &[Node],
        explicit: Option<Node>,
        this: StructVal,
        targs: Vec<(String, TemplateArg)>,
    ) -> Result<(Expr, Ty)> {
        let saved = self.tmpl.clone();
        for (k, v) in targs {
            self.tmpl.insert(k, v);
        }
        // A class template's member type aliases (`using acc_t = WelfordData<acc_scalar_t,
        // index_t>;`) name types inside its methods, as its parameters do.
        let class = key.split("::").next().unwrap_or(key);
        let class = class.split('<').next().unwrap_or(class).trim();
        if let Some(body) = self.unit.struct_templates.get(class).and_then(|(_, spec)| spec.child_by_field_name("body"))
        {
            let mut c = body.walk();
            for a in body.named_children(&mut c).filter(|a| a.kind() == "alias_declaration") {
                let (Some(name), Some(ts)) = (
                    a.child_by_field_name("name"),
                    a.child_by_field_name("type").and_then(|t| t.child_by_field_name("type")),
                ) else {
                    continue;
                };
                if let Ok(ty) = type_of_specifier(self.unit, ts, &self.tmpl) {
                    self.tmpl.insert(self.text(name).to_string(), TemplateArg::Type(ty));
                }
            }
        }
        let r = self.inline_device(n, key, def, arg_nodes, explicit, Some(this));
        self.tmpl = saved;
        r
    }
}

/// The sizes of a reference-to-array declarator, `(&a)[N][M]`, outermost first (`None` for an
/// empty or absent size); `None` when the declarator is not a reference to an array.
fn array_reference_sizes(d: Node) -> Option<Vec<Option<Node>>> {
    let mut sizes = Vec::new();
    let mut x = d;
    let mut reference = false;
    for _ in 0..64 {
        match x.kind() {
            "array_declarator" => {
                sizes.push(x.child_by_field_name("size"));
                x = x.child_by_field_name("declarator")?;
            }
            "parenthesized_declarator" => x = x.named_child(0)?,
            "reference_declarator" => {
                reference = true;
                x = x.named_child(0)?;
            }
            _ => break,
        }
    }
    sizes.reverse();
    (reference && !sizes.is_empty()).then_some(sizes)
}

/// Whether a function returns a reference (`T &operator[](int)`, `const T &get() const`).
fn returns_reference(def: Node) -> bool {
    let mut d = def.child_by_field_name("declarator");
    while let Some(x) = d {
        match x.kind() {
            "reference_declarator" => return true,
            "function_declarator" => return false,
            _ => {}
        }
        d = x.child_by_field_name("declarator").or_else(|| {
            let mut c = x.walk();
            let inner = x.named_children(&mut c).find(|k| k.kind().ends_with("declarator"));
            inner
        });
    }
    false
}
