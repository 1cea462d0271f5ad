//! Structures in a kernel: by-value parameters and locals held member by member in registers,
//! objects bound to memory, members as places and values, pointers' origins.

use super::*;

impl Lowerer<'_, '_> {
    /// The size and alignment of a kernel parameter as the launch passes it: a value of its
    /// type, or a pointer (8 bytes) for a pointer, array or reference declarator. `None` where
    /// the type is not one the front end knows (the parameter is refused elsewhere).
    pub(in crate::front::cuda::lower) fn param_space(&self, p: Node) -> Option<(u64, u64)> {
        let t = p.child_by_field_name("type")?;
        let by_value = p.child_by_field_name("declarator").is_none_or(|d| d.kind() == "identifier");
        if !by_value {
            return Some((8, 8));
        }
        let ty = type_of_specifier(self.unit, t, &self.tmpl).ok()?;
        Some((ty.size(), align_of(self.unit, &ty)))
    }

    /// Kernel parameters the body assigns become locals copied from the parameter on entry, so
    /// that every use (before and after the update, in any loop iteration) reads the local.
    pub(in crate::front::cuda::lower) fn params_to_locals(&mut self, body: Node) -> Vec<Stmt> {
        let mut assigned = HashSet::new();
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            let target = match n.kind() {
                "assignment_expression" => n.child_by_field_name("left"),
                "update_expression" => n.child_by_field_name("argument"),
                // `f(&seed)`: a helper may write through the address.
                "pointer_expression" if n.child_by_field_name("operator").is_some_and(|o| self.text(o) == "&") => {
                    n.child_by_field_name("argument")
                }
                _ => None,
            };
            if let Some(t) = target.map(unparen) {
                if t.kind() == "identifier" {
                    assigned.insert(self.text(t).to_string());
                }
                // `p.n = 3`, `p.in += stride` on a structure parameter's member.
                if t.kind() == "field_expression" {
                    assigned.insert(self.text(t).chars().filter(|c| !c.is_whitespace()).collect());
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        let mut out = Vec::new();
        for i in 0..self.builder.kernel.params.len() {
            let p = self.builder.kernel.params[i].clone();
            if !assigned.contains(&p.name) || !matches!(self.scopes[0].get(&p.name), Some(Sym::Param(_))) {
                continue;
            }
            let id = self.builder.local(&p.name, p.ty.clone());
            out.push(Stmt::Assign { local: id, value: Expr::Param(ParamId(i as u32)), span: p.span });
            self.scopes[0].insert(p.name.clone(), Sym::Local(id, p.ty.clone()));
        }
        // Members of structure parameters the body assigns: locals from the start too.
        let structs: Vec<(String, StructVal)> = self.scopes[0]
            .iter()
            .filter_map(|(k, s)| match s {
                Sym::Struct(v) => Some((k.clone(), v.clone())),
                _ => None,
            })
            .collect();
        for (name, v) in structs {
            let v = self.member_params_to_locals(&name, v, &assigned, &mut out);
            self.scopes[0].insert(name, Sym::Struct(v));
        }
        out
    }

    fn member_params_to_locals(
        &mut self,
        path: &str,
        mut v: StructVal,
        assigned: &HashSet<String>,
        out: &mut Vec<Stmt>,
    ) -> StructVal {
        for (f, sym) in v.fields.iter_mut() {
            let full = format!("{path}.{f}");
            match sym {
                Sym::Param(p) if assigned.contains(&full) => {
                    let param = self.builder.kernel.param(*p).clone();
                    let id = self.builder.local(&full, param.ty.clone());
                    out.push(Stmt::Assign { local: id, value: Expr::Param(*p), span: param.span });
                    *sym = Sym::Local(id, param.ty);
                }
                Sym::Struct(inner) => {
                    let inner = std::mem::replace(inner, StructVal { name: String::new(), fields: Vec::new() });
                    *sym = Sym::Struct(self.member_params_to_locals(&full, inner, assigned, out));
                }
                _ => {}
            }
        }
        v
    }

    /// A kernel parameter of structure type passed by value: each scalar or pointer member
    /// becomes a parameter of its own, named `s.member` (give its value as `--arg s.n=...`).
    pub(in crate::front::cuda::lower) fn struct_param(&mut self, p: Node) -> Result<bool> {
        let Some(t) = p.child_by_field_name("type") else { return Ok(false) };
        let Ok(ty) = type_of_specifier(self.unit, t, &self.tmpl) else { return Ok(false) };
        let Some(sname) = struct_name(&ty).map(str::to_string) else { return Ok(false) };
        let Some(d) = p.child_by_field_name("declarator") else { return Ok(true) };
        let d = if d.kind() == "reference_declarator" {
            let mut c = d.walk();
            let inner = d.named_children(&mut c).next();
            inner.unwrap_or(d)
        } else {
            d
        };
        if d.kind() != "identifier" {
            return Ok(false);
        }
        let name = self.text(d).to_string();
        let v = self.struct_params(&name, &sname, p, 0)?;
        self.scopes[0].insert(name, Sym::Struct(v));
        Ok(true)
    }

    pub(in crate::front::cuda::lower) fn struct_params(
        &mut self,
        prefix: &str,
        sname: &str,
        p: Node,
        depth: u32,
    ) -> Result<StructVal> {
        let layout = self.unit.layout(sname).ok_or_else(|| self.unsupported(p, "this structure"))?;
        if depth > 8 {
            return Err(self.unsupported(p, "structures nested this deep"));
        }
        let mut fields = Vec::new();
        for f in &layout.fields {
            let pname = format!("{prefix}.{}", f.name);
            let sym = if !f.dims.is_empty() {
                Sym::Opaque(f.ty.clone(), "an array member of a by-value parameter")
            } else if let Some(inner) = struct_name(&f.ty) {
                Sym::Struct(self.struct_params(&pname, inner, p, depth + 1)?)
            } else {
                let id = ParamId(self.builder.kernel.params.len() as u32);
                self.builder.kernel.params.push(Param {
                    name: pname,
                    ty: f.ty.clone(),
                    span: self.span(p),
                    device_variable: false,
                    constant_variable: false,
                });
                Sym::Param(id)
            };
            fields.push((f.name.clone(), sym));
        }
        Ok(StructVal { name: layout.name, fields })
    }

    /// A fresh structure in registers: one local per member.
    pub(super) fn struct_locals(&mut self, prefix: &str, sname: &str, at: Node, depth: u32) -> Result<StructVal> {
        let layout = self.unit.layout(sname).ok_or_else(|| self.unsupported(at, "this structure"))?;
        if depth > 8 {
            return Err(self.unsupported(at, "structures nested this deep"));
        }
        let mut fields = Vec::new();
        for f in &layout.fields {
            let sym = if !f.dims.is_empty() {
                Sym::LocalArray(f.ty.clone(), Vec::new())
            } else if let Some(inner) = struct_name(&f.ty) {
                Sym::Struct(self.struct_locals(&format!("{prefix}.{}", f.name), inner, at, depth + 1)?)
            } else {
                let id = self.builder.local(&format!("{prefix}.{}", f.name), f.ty.clone());
                Sym::Local(id, f.ty.clone())
            };
            fields.push((f.name.clone(), sym));
        }
        Ok(StructVal { name: layout.name, fields })
    }

    /// The symbol an identifier or a member chain over register structures names.
    pub(in crate::front::cuda::lower) fn member_sym(&self, n: Node) -> Option<Sym> {
        let n = unparen(n);
        match n.kind() {
            "identifier" => self.lookup(self.text(n)).cloned(),
            "field_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
                if op != "." {
                    return None;
                }
                let field = n.child_by_field_name("field").map(|f| self.text(f))?;
                match self.member_sym(n.child_by_field_name("argument")?)? {
                    Sym::Struct(v) => v.fields.iter().find(|(f, _)| f == field).map(|(_, s)| s.clone()),
                    // A member of an object whose contents are not tracked (a `__constant__`
                    // structure, or a reference bound to one: `M.m[0]` of `const float3x4 &M`)
                    // is not tracked either, and reading it moves no global or shared memory.
                    Sym::Opaque(ty, what) => {
                        let f = self.unit.layout(struct_name(&ty)?)?.fields.into_iter().find(|f| f.name == field)?;
                        // A pointer member points at memory: its accesses are counted elsewhere.
                        if matches!(f.ty, Ty::Ptr(_)) {
                            return None;
                        }
                        Some(if f.dims.is_empty() { Sym::Opaque(f.ty, what) } else { Sym::LocalArray(f.ty, f.dims) })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The value of a symbol read by name.
    pub(in crate::front::cuda::lower) fn sym_value(&mut self, sym: Sym, n: Node) -> Result<(Expr, Ty)> {
        match sym {
            Sym::Local(id, ty) => Ok((Expr::Local(id), ty)),
            Sym::Param(p) => Ok((Expr::Param(p), self.builder.kernel.param(p).ty.clone())),
            Sym::Const(v, t) => Ok((Expr::Int(v, t), Ty::Int(t))),
            Sym::SharedScalar(id) => {
                let p = self.sym_place(Sym::SharedScalar(id), n)?;
                Ok(self.read_place(&p, CacheOp::Default))
            }
            Sym::Ref { .. } => {
                let p = self.sym_place(sym, n)?;
                Ok(self.read_place(&p, CacheOp::Default))
            }
            Sym::DeviceVar { ref dims, ref elem, volatile, .. } if !dims.is_empty() => {
                // The array decays to a pointer to its first element.
                let (dims, elem) = (dims.clone(), elem.clone());
                if dims.len() > 1 {
                    return Err(self.unsupported(n, "a multi-dimensional `__device__` array used as a pointer"));
                }
                let p = self.device_var_param(&sym);
                let ty = Ty::Ptr(Box::new(PtrTy {
                    pointee: elem,
                    space: Space::Global,
                    is_const: false,
                    restrict: false,
                    volatile,
                }));
                Ok((Expr::Param(p), ty))
            }
            Sym::DeviceVar { .. } | Sym::Texture(_) => {
                let p = self.sym_place(sym, n)?;
                Ok(self.read_place(&p, CacheOp::Default))
            }
            Sym::Opaque(ty, what) => {
                self.note_opaque(what);
                Ok((Expr::Opaque { args: Vec::new(), what: what.into() }, ty))
            }
            // The whole object as one value: it depends on every member (so the loads that
            // filled them stay live when it is returned or passed on).
            Sym::Struct(v) => Ok((
                Expr::Opaque { args: self.member_values(&v), what: format!("structure `{}`", v.name) },
                self.unit.layout(&v.name).map(|l| l.ty()).unwrap_or(Ty::Void),
            )),
            // The array decays to a pointer to its first element.
            Sym::Rows { base, .. } => self.sym_value(*base, n),
            Sym::LocalPtr(_) => Err(self.unsupported(
                n,
                "a pointer to a thread's own variable used as a value (only `*p`, `p[0]`, `p->m` and passing it on are modelled)",
            )),
            _ => Err(self.unsupported(n, "this name")),
        }
    }

    /// The parameter standing for a `__device__` variable: made on its first use in this
    /// kernel (a kernel that does not use the variable has no row for it).
    pub(in crate::front::cuda::lower) fn device_var_param(&mut self, sym: &Sym) -> ParamId {
        let Sym::DeviceVar { name, elem, volatile, span, .. } = sym else { unreachable!("a __device__ variable") };
        if let Some(i) = self.builder.kernel.params.iter().position(|p| p.device_variable && &p.name == name) {
            return ParamId(i as u32);
        }
        let ty = Ty::Ptr(Box::new(PtrTy {
            pointee: elem.clone(),
            space: Space::Global,
            is_const: false,
            restrict: false,
            volatile: *volatile,
        }));
        self.builder.kernel.params.push(Param {
            name: name.clone(),
            ty,
            span: *span,
            device_variable: true,
            constant_variable: false,
        });
        self.builder.kernel.notes.push(format!(
            "`{name}` is a `__device__` variable: global memory of its own, assumed to start 256-byte aligned like a pointer parameter's buffer (nvcc aligns it to its type; --offset {name}=BYTES moves it)"
        ));
        ParamId(self.builder.kernel.params.len() as u32 - 1)
    }

    pub(super) fn note_opaque(&mut self, what: &str) {
        if what.contains("__constant__") {
            let note = "reads of `__constant__` memory go through the constant cache: not counted as global traffic"
                .to_string();
            if !self.builder.kernel.notes.contains(&note) {
                self.builder.kernel.notes.push(note);
            }
        }
    }

    /// A symbol as an lvalue.
    pub(in crate::front::cuda::lower) fn sym_place(&mut self, sym: Sym, n: Node) -> Result<Place> {
        match sym {
            Sym::Local(id, ty) => Ok(Place::Local(id, ty)),
            // `sp = &p->table;` of a pointer to rows: the pointer itself.
            Sym::Rows { base, .. } => self.sym_place(*base, n),
            Sym::SharedScalar(id) => {
                let arr = &self.builder.kernel.shared[id.0 as usize];
                Ok(Place::Memory(MemoryPlace {
                    address: Expr::SharedBase(id),
                    ty: arr.elem.clone(),
                    space: Space::Shared,
                    volatile: false,
                    text: self.text(n).to_string(),
                    span: self.span(n),
                }))
            }
            Sym::Ref { ptr, ty, space, volatile, text } => {
                Ok(Place::Memory(MemoryPlace { address: Expr::Local(ptr), ty, space, volatile, text, span: self.span(n) }))
            }
            Sym::DeviceVar { ref dims, .. } if !dims.is_empty() => {
                Err(self.unsupported(n, "assigning to a `__device__` array as a whole"))
            }
            Sym::Texture(r) => Err(Diagnostic::at(
                ErrorKind::Unsupported,
                self.span(n),
                format!(
                    "`{}` is a texture or surface reference (`{}`): it is read and written only as the handle of the texture and surface functions (`tex1Dfetch({0}, i)`, `tex2D({0}, x, y)`, `surf2Dwrite(v, {0}, x, y)`)",
                    self.text(n),
                    r.decl
                ),
            )),
            Sym::DeviceVar { ref elem, volatile, .. } => {
                let ty = elem.clone();
                let p = self.device_var_param(&sym);
                Ok(Place::Memory(MemoryPlace {
                    address: Expr::Param(p),
                    ty,
                    space: Space::Global,
                    volatile,
                    text: self.text(n).to_string(),
                    span: self.span(n),
                }))
            }
            Sym::Opaque(ty, what) => {
                self.note_opaque(what);
                Ok(Place::ThreadArray(ty))
            }
            Sym::LocalArray(ty, _) => Ok(Place::ThreadArray(ty)),
            Sym::Param(_) => Err(self.unsupported(n, "assigning to a kernel parameter")),
            Sym::LocalPtr(_) => Err(self.unsupported(
                n,
                "changing a pointer to a thread's own variable (only `*p`, `p[0]`, `p->m` and passing it on are modelled)",
            )),
            _ => Err(self.unsupported(n, "assigning to this name")),
        }
    }

    /// `s.f` / `p->f` / `a[i].f` in memory: the member at its C layout offset. `None` when the
    /// object is not a structure in memory.
    pub(in crate::front::cuda::lower) fn member_place(&mut self, n: Node) -> Result<Option<Place>> {
        let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
        let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        if op == "." {
            if let Some(sym) = self.member_sym(n) {
                return self.sym_place(sym, n).map(Some);
            }
        }
        if let Some(p) = self.own_object_member(n)? {
            return Ok(Some(p));
        }
        let (addr, ty, space, volatile) = if op == "->" {
            let (p, pt) = self.expr(arg)?;
            let Ty::Ptr(pt) = pt else { return Err(self.unsupported(n, "`->` on a value that is not a pointer")) };
            (p, pt.pointee.clone(), pt.space, pt.volatile)
        } else {
            if struct_name(&self.peek_type(arg)).is_none() {
                return Ok(None);
            }
            match self.place(arg)? {
                Place::Memory(MemoryPlace { address: addr, ty, space, volatile, .. }) => (addr, ty, space, volatile),
                // A member of a structure in registers or in the constant bank (`c[i].ptr` of a
                // `__constant__` array of structures): a value of the member's type.
                Place::ThreadArray(t) => {
                    let member =
                        struct_name(&t).and_then(|s| self.unit.layout(s)).and_then(|l| l.field(field).cloned());
                    return Ok(Some(Place::ThreadArray(member.map(|f| f.ty).unwrap_or(t))));
                }
                Place::Local(..) => return Ok(None),
            }
        };
        let Some(sname) = struct_name(&ty) else {
            return if op == "->" {
                Err(self.unsupported(n, "`->` on a pointer to a non-structure"))
            } else {
                Ok(None)
            };
        };
        let layout = self.unit.layout(sname).ok_or_else(|| self.unsupported(n, "this structure"))?;
        let f = layout.field(field).ok_or_else(|| {
            Diagnostic::at(ErrorKind::Unsupported, self.span(n), format!("`{}` has no member `{field}`", layout.name))
        })?;
        let addr = ptr_add(addr, f.offset as i128);
        if !f.dims.is_empty() {
            // An array member decays to a pointer to its first element (marked for `field`).
            let pty =
                Ty::Ptr(Box::new(PtrTy { pointee: f.ty.clone(), space, is_const: false, restrict: false, volatile }));
            return Ok(Some(Place::Memory(MemoryPlace {
                address: addr,
                ty: pty,
                space,
                volatile,
                text: DECAY.into(),
                span: self.span(n),
            })));
        }
        Ok(Some(Place::Memory(MemoryPlace {
            address: addr,
            ty: f.ty.clone(),
            space,
            volatile,
            text: self.text(n).to_string(),
            span: self.span(n),
        })))
    }

    /// The static type of an expression without lowering it (for deciding how to lower it):
    /// names, members, subscripts and dereferences only; anything else is `void`.
    pub(in crate::front::cuda::lower) fn peek_type(&self, n: Node) -> Ty {
        let n = unparen(n);
        match n.kind() {
            "identifier" => match self.lookup(self.text(n)) {
                Some(Sym::Local(_, t)) => t.clone(),
                Some(Sym::Param(p)) => self.builder.kernel.param(*p).ty.clone(),
                Some(Sym::Ref { ty, .. }) => ty.clone(),
                Some(Sym::SharedScalar(id)) => self.builder.kernel.shared[id.0 as usize].elem.clone(),
                Some(Sym::Shared(id)) => self.builder.kernel.shared[id.0 as usize].elem.clone(),
                Some(Sym::LocalArray(t, _)) | Some(Sym::Opaque(t, _)) => t.clone(),
                Some(Sym::Struct(v)) => self.unit.layout(&v.name).map(|l| l.ty()).unwrap_or(Ty::Void),
                Some(Sym::DeviceVar { elem, dims, volatile, .. }) if !dims.is_empty() => Ty::Ptr(Box::new(PtrTy {
                    pointee: elem.clone(),
                    space: Space::Global,
                    is_const: false,
                    restrict: false,
                    volatile: *volatile,
                })),
                Some(Sym::DeviceVar { elem, .. }) => elem.clone(),
                _ => Ty::Void,
            },
            "subscript_expression" => {
                let Some(a) = n.child_by_field_name("argument") else { return Ty::Void };
                let a = unparen(a);
                if a.kind() == "identifier" {
                    if let Some(Sym::Shared(id)) | Some(Sym::SharedScalar(id)) = self.lookup(self.text(a)) {
                        return self.builder.kernel.shared[id.0 as usize].elem.clone();
                    }
                    if let Some(Sym::LocalArray(t, _) | Sym::Opaque(t, _)) = self.lookup(self.text(a)) {
                        return t.clone();
                    }
                }
                // `a->e[j][i]` of a member `e[3][3]`: one element once every dimension is indexed.
                let mut root = a;
                let mut depth = 1;
                while root.kind() == "subscript_expression" {
                    let Some(inner) = root.child_by_field_name("argument") else { break };
                    root = unparen(inner);
                    depth += 1;
                }
                if depth > 1 && root.kind() == "field_expression" {
                    if let Some((f, _)) = self.peek_field(root).filter(|(f, _)| f.dims.len() == depth) {
                        return f.ty;
                    }
                }
                match self.peek_type(a) {
                    Ty::Ptr(p) => p.pointee.clone(),
                    _ => Ty::Void,
                }
            }
            "pointer_expression" => match self.peek_type(n.child_by_field_name("argument").unwrap_or(n)) {
                Ty::Ptr(p) if n.child_by_field_name("operator").map(|o| self.text(o)) == Some("*") => p.pointee.clone(),
                _ => Ty::Void,
            },
            "field_expression" => {
                let Some((f, space)) = self.peek_field(n) else { return Ty::Void };
                if f.dims.is_empty() {
                    return f.ty;
                }
                // An array member decays to a pointer to its first element (`box.nei[k].number`).
                Ty::Ptr(Box::new(PtrTy { pointee: f.ty, space, is_const: false, restrict: false, volatile: false }))
            }
            _ => Ty::Void,
        }
    }

    /// The member a `.` or `->` expression names, with the space of the object it is in.
    fn peek_field(&self, n: Node) -> Option<(Field, Space)> {
        let a = n.child_by_field_name("argument")?;
        let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        let at = self.peek_type(a);
        let st = if op == "->" {
            match at {
                Ty::Ptr(p) => p.pointee.clone(),
                _ => return None,
            }
        } else {
            at
        };
        let space = match &st {
            Ty::Ptr(p) => p.space,
            _ => Space::Global,
        };
        let f = struct_name(&st).and_then(|s| self.unit.layout(s)).and_then(|l| l.field(field).cloned())?;
        Some((f, space))
    }

    /// Keeps a pointer's address space as its origin's: `(float *)smem`, `float *p = smem;`.
    pub(in crate::front::cuda::lower) fn with_origin(&self, declared: Ty, value: &Ty) -> Ty {
        match (declared, value) {
            (Ty::Ptr(mut d), Ty::Ptr(v)) => {
                d.space = v.space;
                Ty::Ptr(d)
            }
            (d, _) => d,
        }
    }

    /// A store of `vt` into pointer local `id` declared `ty`: the local's address space follows
    /// what it holds. A pointer that holds shared addresses on one path and global on another
    /// cannot be counted per instruction: refused.
    pub(in crate::front::cuda::lower) fn pointer_origin(
        &mut self,
        id: LocalId,
        ty: Ty,
        vt: &Ty,
        at: Node,
    ) -> Result<Ty> {
        let (Ty::Ptr(p), Ty::Ptr(v)) = (&ty, vt) else { return Ok(ty) };
        if p.space == v.space {
            self.unset_ptrs.remove(&id);
            return Ok(ty);
        }
        if self.unset_ptrs.remove(&id) {
            let t = self.with_origin(ty.clone(), vt);
            self.set_local_ty(id, t.clone());
            return Ok(t);
        }
        let sp = |s: Space| if s == Space::Shared { "shared" } else { "global" };
        Err(Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(at),
            format!(
                "this pointer holds {} addresses here and {} addresses elsewhere: its accesses cannot be given one memory space",
                sp(v.space),
                sp(p.space)
            ),
        )
        .note("use one pointer variable per memory space"))
    }

    pub(in crate::front::cuda::lower) fn set_local_ty(&mut self, id: LocalId, ty: Ty) {
        self.builder.kernel.locals[id.0 as usize].ty = ty.clone();
        for s in self.scopes.iter_mut() {
            for v in s.values_mut() {
                if let Sym::Local(l, t) = v {
                    if *l == id {
                        *t = ty.clone();
                    }
                }
            }
        }
    }

    /// `T &r = init`: a name for the place `init` (its address is taken once, here). An
    /// initializer that is not an lvalue (`const T &r = a + b`) is held as a value.
    pub(in crate::front::cuda::lower) fn bind_reference(
        &mut self,
        name: &str,
        declared: Option<Ty>,
        init: Node,
    ) -> Result<Sym> {
        let lvalue = matches!(
            unparen(init).kind(),
            "identifier" | "subscript_expression" | "field_expression" | "pointer_expression"
        ) && !(unparen(init).kind() == "pointer_expression"
            && unparen(init).child_by_field_name("operator").map(|o| self.text(o)) == Some("&"));
        if lvalue {
            if let Some(sym) = self.member_sym(init) {
                if !matches!(sym, Sym::Param(_) | Sym::Const(..)) {
                    return Ok(sym);
                }
            }
            let ident_sym = if unparen(init).kind() == "identifier" {
                self.lookup(self.text(unparen(init))).cloned()
            } else {
                None
            };
            if !matches!(ident_sym, Some(Sym::Param(_)) | Some(Sym::Const(..))) {
                let place = self.place(init)?;
                return Ok(self.place_reference(name, place, init));
            }
        }
        // `loc_ht &e = ht_get(t, k);`: a function returning a reference names its place.
        let (e, et) = match unparen(init).kind() {
            "call_expression" => match self.reference_place(init, |l| l.expr(init).map(Some))? {
                Some(Ok(place)) => return Ok(self.place_reference(name, place, init)),
                Some(Err(value)) => value,
                None => self.expr(init)?,
            },
            _ => self.expr(init)?,
        };
        let ty = declared.filter(|d| !is_void(d)).unwrap_or(et.clone());
        let e = self.convert(e, &et, &ty, init)?;
        let ty = self.with_origin(ty, &et);
        let id = self.builder.local(name, ty.clone());
        self.builder.pending.push(Stmt::Assign { local: id, value: e, span: self.span(init) });
        Ok(Sym::Local(id, ty))
    }

    /// The name a reference binds to a place: a local, an untracked element of the thread's own
    /// or a constant array, or memory at an address taken once, here.
    fn place_reference(&mut self, name: &str, place: Place, init: Node) -> Sym {
        match place {
            Place::Local(id, ty) => Sym::Local(id, ty),
            // An element of an untracked array (`const float &c = params.colors[i]`): a value
            // read where it is used, moving no memory; a structure's members are reached as the
            // array's.
            Place::ThreadArray(ty @ (Ty::Int(_) | Ty::Float(_))) => {
                Sym::Opaque(ty, "an element of a thread's own or constant array")
            }
            Place::ThreadArray(ty) => Sym::LocalArray(ty, Vec::new()),
            Place::Memory(MemoryPlace { address: addr, ty, space, volatile, text, .. }) => {
                let pty =
                    Ty::Ptr(Box::new(PtrTy { pointee: ty.clone(), space, is_const: false, restrict: false, volatile }));
                let t = self.builder.local(&format!("&{name}"), pty);
                self.builder.pending.push(Stmt::Assign { local: t, value: addr, span: self.span(init) });
                Sym::Ref { ptr: t, ty, space, volatile, text }
            }
        }
    }

    /// A local of structure type: bound to memory (`P v = p[i];` reads only the members used,
    /// as the compiler does), copied from a register structure, or built member by member.
    pub(in crate::front::cuda::lower) fn struct_local(
        &mut self,
        name: &str,
        ty: &Ty,
        init: Option<Node>,
        at: Node,
    ) -> Result<Sym> {
        let sname = struct_name(ty).unwrap_or("").to_string();
        // A user-written constructor: `P v(a, b)`, `P v{a, b}`, `P v = P(a, b)`, `P v;`.
        let base = sname.split('<').next().unwrap_or(&sname).to_string();
        let ctor_key = format!("{base}::{base}");
        if self.unit.device_fns.contains_key(ctor_key.as_str()) {
            let args: Option<Vec<Node>> = match init {
                None => Some(Vec::new()),
                Some(i) if matches!(i.kind(), "argument_list" | "initializer_list") => {
                    let mut c = i.walk();
                    let v: Vec<Node> = i.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                    Some(v)
                }
                Some(i)
                    if i.kind() == "call_expression"
                        && i.child_by_field_name("function").is_some_and(|f| self.text(f) == base) =>
                {
                    i.child_by_field_name("arguments").map(|a| {
                        let mut c = a.walk();
                        let v: Vec<Node> = a.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                        v
                    })
                }
                _ => None,
            };
            let def = args
                .as_ref()
                .and_then(|a| {
                    self.unit
                        .device_fns
                        .get(format!("{ctor_key}#{}", a.len()).as_str())
                        .or_else(|| self.unit.device_fns.get(ctor_key.as_str()))
                        .copied()
                })
                // `P() = default;` has no body: the members are left as they are.
                .filter(|d| d.child_by_field_name("body").is_some());
            if let (Some(args), Some(def)) = (args, def) {
                let v = self.struct_locals(name, &sname, at, 0)?;
                let targs = self.unit.layout(&sname).map(|l| l.targs).unwrap_or_default();
                let saved = self.tmpl.clone();
                for (k, x) in targs {
                    self.tmpl.insert(k, x);
                }
                let r = self.inline_device(at, &ctor_key, def, &args, None, Some(v.clone()));
                self.tmpl = saved;
                r?;
                return Ok(Sym::Struct(v));
            }
        }
        if let Some(i) = init.map(unparen).filter(|i| i.kind() == "conditional_expression") {
            // `c ? a : b` of two structures in registers: each member selected.
            let arms = (i.child_by_field_name("consequence"), i.child_by_field_name("alternative"));
            if let (Some(Sym::Struct(a)), Some(Sym::Struct(b))) =
                (arms.0.and_then(|x| self.member_sym(x)), arms.1.and_then(|x| self.member_sym(x)))
            {
                let cond = i.child_by_field_name("condition").ok_or_else(|| self.unsupported(i, "this `?:`"))?;
                let (c, ct) = self.expr(cond)?;
                let c = self.truth(c, &ct);
                let fresh = self.struct_locals(name, &sname, at, 0)?;
                self.select_struct(&fresh, &c, &a, &b, i);
                return Ok(Sym::Struct(fresh));
            }
        }
        if let Some(i) = init {
            if let Some(sym @ Sym::Struct(_)) = self.member_sym(i) {
                // Copy: members are values; register copies share nothing observable here.
                let fresh = self.struct_locals(name, &sname, at, 0)?;
                self.copy_struct(&fresh, &sym, at)?;
                return Ok(Sym::Struct(fresh));
            }
            if i.kind() != "initializer_list"
                && i.kind() != "argument_list"
                && struct_name(&self.peek_type(i)).is_some()
            {
                // `MerBase temp = b[i];` of the thread's own array of structures: a copy in
                // registers, its members as untracked as the element's.
                if self.in_own_array(i) {
                    self.place(i)?;
                    let v = self.struct_locals(name, &sname, at, 0)?;
                    self.forget_struct(&v, i);
                    return Ok(Sym::Struct(v));
                }
                let vector_like = self.unit.layout(&sname).is_some_and(|l| l.is_vector_like());
                if !vector_like {
                    return self.bind_reference(name, None, i);
                }
                // One vector load of the whole object; its members are then registers.
                let p = self.place(i)?;
                let (e, ety) = self.read_place(&p, CacheOp::Default);
                let whole = self.builder.local(name, ety);
                self.builder.pending.push(Stmt::Assign { local: whole, value: e, span: self.span(i) });
                let v = self.struct_locals(name, &sname, at, 0)?;
                for (_, sym) in &v.fields {
                    if let Sym::Local(id, _) = sym {
                        self.builder.pending.push(Stmt::Assign {
                            local: *id,
                            value: Expr::Opaque { args: vec![Expr::Local(whole)], what: "member".into() },
                            span: self.span(i),
                        });
                    }
                }
                return Ok(Sym::Struct(v));
            }
        }
        let v = self.struct_locals(name, &sname, at, 0)?;
        if let Some(i) = init {
            if i.kind() == "initializer_list" || i.kind() == "argument_list" {
                self.init_members(&v, i)?;
            } else {
                // A value the members cannot be told from: evaluated, its members unknown.
                let (e, _) = self.expr(i)?;
                self.pending_eval(e);
                self.forget_struct(&v, i);
            }
        }
        Ok(Sym::Struct(v))
    }

    /// A structure in registers from a braced list: `{a, b}` in member order, `{.b = 2, .a = 1}`
    /// by name (C99 and C++20 designated initializers; a member after a designated one is the
    /// next in order), nested lists for nested structures. Members the list does not give are
    /// zero, as C and C++ initialise them.
    fn init_members(&mut self, v: &StructVal, list: Node) -> Result<()> {
        let mut c = list.walk();
        let items: Vec<Node> = list.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
        let mut given = vec![false; v.fields.len()];
        let mut next = 0;
        for item in items {
            let (k, value) = if item.kind() == "initializer_pair" {
                let mut cc = item.walk();
                let designators: Vec<Node> = item.children_by_field_name("designator", &mut cc).collect();
                let [d] = designators.as_slice() else {
                    return Err(self.unsupported(item, "a designator naming a member of a member (`.a.b = x`)"));
                };
                if d.kind() != "field_designator" {
                    return Err(self.unsupported(*d, "an array designator (`[i] = x`) in a structure's initializer"));
                }
                let field = self.text(*d).trim_start_matches('.').trim();
                let k = v.fields.iter().position(|(f, _)| f == field).ok_or_else(|| {
                    Diagnostic::at(
                        ErrorKind::Unsupported,
                        self.span(*d),
                        format!("`{}` has no member `{field}`", v.name),
                    )
                })?;
                let value =
                    item.child_by_field_name("value").ok_or_else(|| self.unsupported(item, "this initializer"))?;
                (k, value)
            } else {
                (next, item)
            };
            next = k + 1;
            let Some((_, sym)) = v.fields.get(k).cloned() else {
                // More values than members: still evaluated (they may read memory).
                let (e, _) = self.expr(value)?;
                self.pending_eval(e);
                continue;
            };
            given[k] = true;
            self.init_member(&sym, value)?;
        }
        for (k, (_, sym)) in v.fields.iter().enumerate() {
            if !given[k] {
                self.zero_member(sym, list)?;
            }
        }
        Ok(())
    }

    /// One member of a structure in registers from its initializer.
    fn init_member(&mut self, sym: &Sym, value: Node) -> Result<()> {
        match sym {
            Sym::Struct(inner) if value.kind() == "initializer_list" => self.init_members(inner, value),
            Sym::Struct(inner) => {
                if let Some(from @ Sym::Struct(_)) = self.member_sym(value) {
                    return self.copy_struct(inner, &from, value);
                }
                let (e, _) = self.expr(value)?;
                self.pending_eval(e);
                self.forget_struct(inner, value);
                Ok(())
            }
            Sym::Local(..) if value.kind() == "initializer_list" => {
                // `{x}` for a scalar is `x`; `{}` is zero.
                let mut c = value.walk();
                let items: Vec<Node> = value.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                match items.as_slice() {
                    [] => self.zero_member(sym, value),
                    [x] if x.kind() != "initializer_pair" => self.init_member(sym, *x),
                    _ => Err(self.unsupported(value, "a braced list of several values for one scalar member")),
                }
            }
            Sym::Local(id, fty) => {
                let (e, et) = self.expr(value)?;
                let e = self.convert(e, &et, fty, value)?;
                self.builder.pending.push(Stmt::Assign { local: *id, value: e, span: self.span(value) });
                Ok(())
            }
            _ => {
                let (e, _) = self.expr(value)?;
                self.pending_eval(e);
                Ok(())
            }
        }
    }

    /// A member an initializer list leaves out: zero (its integers and floats; a pointer or an
    /// array member stays untracked).
    fn zero_member(&mut self, sym: &Sym, at: Node) -> Result<()> {
        match sym {
            Sym::Struct(inner) => {
                for (_, f) in inner.fields.clone() {
                    self.zero_member(&f, at)?;
                }
            }
            Sym::Local(id, fty @ (Ty::Int(_) | Ty::Float(_))) => {
                let zero = self.convert(Expr::Int(0, IntTy::I32), &Ty::Int(IntTy::I32), fty, at)?;
                self.builder.pending.push(Stmt::Assign { local: *id, value: zero, span: self.span(at) });
            }
            _ => {}
        }
        Ok(())
    }

    /// Every member of a structure in registers made a value that is not tracked.
    fn forget_struct(&mut self, v: &StructVal, at: Node) {
        for (_, f) in &v.fields {
            match f {
                Sym::Local(id, _) => {
                    let value = Expr::Opaque { args: Vec::new(), what: "member".into() };
                    self.builder.pending.push(Stmt::Assign { local: *id, value, span: self.span(at) });
                }
                Sym::Struct(inner) => self.forget_struct(inner, at),
                _ => {}
            }
        }
    }

    /// `to = c ? a : b`, member by member.
    fn select_struct(&mut self, to: &StructVal, c: &Expr, a: &StructVal, b: &StructVal, at: Node) {
        for (((_, t), (_, x)), (_, y)) in to.fields.iter().zip(&a.fields).zip(&b.fields) {
            match (t, x, y) {
                (Sym::Struct(t), Sym::Struct(x), Sym::Struct(y)) => self.select_struct(t, c, x, y, at),
                (Sym::Local(id, _), x, y) => {
                    let value = match (self.field_value(x), self.field_value(y)) {
                        (Some(x), Some(y)) => {
                            Expr::Select { cond: Box::new(c.clone()), then: Box::new(x), els: Box::new(y) }
                        }
                        _ => Expr::Opaque { args: Vec::new(), what: "member".into() },
                    };
                    self.builder.pending.push(Stmt::Assign { local: *id, value, span: self.span(at) });
                }
                _ => {}
            }
        }
    }

    /// The values of a structure's members held in registers or parameters, nested ones
    /// included.
    pub(in crate::front::cuda::lower) fn member_values(&self, v: &StructVal) -> Vec<Expr> {
        let mut out = Vec::new();
        for (_, f) in &v.fields {
            match f {
                Sym::Struct(inner) => out.extend(self.member_values(inner)),
                f => out.extend(self.field_value(f)),
            }
        }
        out
    }

    /// A structure member's value, where it is a register or a parameter.
    fn field_value(&self, s: &Sym) -> Option<Expr> {
        match s {
            Sym::Local(id, _) => Some(Expr::Local(*id)),
            Sym::Param(p) => Some(Expr::Param(*p)),
            Sym::Const(v, t) => Some(Expr::Int(*v, *t)),
            _ => None,
        }
    }

    pub(in crate::front::cuda::lower) fn copy_struct(&mut self, to: &StructVal, from: &Sym, at: Node) -> Result<()> {
        let Sym::Struct(from) = from else { return Ok(()) };
        for ((_, t), (_, f)) in to.fields.iter().zip(&from.fields) {
            match (t, f) {
                (Sym::Local(id, _), Sym::Local(src, _)) => self.builder.pending.push(Stmt::Assign {
                    local: *id,
                    value: Expr::Local(*src),
                    span: self.span(at),
                }),
                (Sym::Local(id, _), Sym::Param(p)) => {
                    self.builder.pending.push(Stmt::Assign { local: *id, value: Expr::Param(*p), span: self.span(at) })
                }
                (Sym::Struct(a), b @ Sym::Struct(_)) => self.copy_struct(a, b, at)?,
                _ => {}
            }
        }
        Ok(())
    }
}
