//! Places (lvalues): a local, memory at an address, or a thread's own array; the memory
//! operations that reading and writing them make.

use super::cpp::MAX_STRUCT_PIECES;
use super::*;

impl Lowerer<'_, '_> {
    /// A read-modify-write evaluates its target's address once ([`KernelBuilder::bind_address`]).
    pub(super) fn bind_place(&mut self, place: Place) -> Place {
        let pointee = place.ty().clone();
        self.builder.bind_address(place, pointee)
    }

    pub(super) fn write(&mut self, place: Place, v: Expr, vt: &Ty, at: Node) -> Result<Stmt> {
        Ok(match place {
            Place::Local(id, ty) => {
                let v = self.convert(v, vt, &ty, at)?;
                self.pointer_origin(id, ty, vt, at)?;
                Stmt::Assign { local: id, value: v, span: self.span(at) }
            }
            Place::Memory(memory) if self.struct_pieces(&memory.ty).is_some() => {
                self.check_struct_pieces(&memory.ty, at)?;
                let (piece, n) = self.struct_pieces(&memory.ty).unwrap_or((1, 1));
                let ty = memory.ty.clone();
                let v = self.convert(v, vt, &ty, at)?;
                // The value and the address once, then one store per piece.
                let value = self.builder.temporary(ty);
                self.builder.pending.push(Stmt::Assign { local: value, value: v, span: memory.span });
                let Place::Memory(memory) = self.bind_place(Place::Memory(memory)) else {
                    unreachable!("bind_place keeps a memory place")
                };
                let mut stores: Vec<Stmt> = (0..n)
                    .map(|k| {
                        let part = MemoryPlace {
                            address: ptr_add(memory.address.clone(), (k * piece) as i128),
                            ..memory.clone()
                        };
                        let member = Expr::Opaque { args: vec![Expr::Local(value)], what: "member".into() };
                        self.builder.store(part, piece, member)
                    })
                    .collect();
                let last = stores.pop().expect("a structure has a piece");
                self.builder.pending.extend(stores);
                last
            }
            Place::Memory(memory) => {
                let v = self.convert(v, vt, &memory.ty, at)?;
                let width = memory.ty.size();
                self.builder.store(memory, width, v)
            }
            Place::ThreadArray(_) => Stmt::Eval(local_array_write(v)),
        })
    }

    pub(super) fn read_place(&mut self, p: &Place, cache: CacheOp) -> (Expr, Ty) {
        match p {
            // A whole structure: one load per piece, the address computed once.
            Place::Memory(memory) if self.struct_pieces(&memory.ty).is_some_and(|(_, n)| n <= MAX_STRUCT_PIECES) => {
                let (piece, n) = self.struct_pieces(&memory.ty).unwrap_or((1, 1));
                let Place::Memory(memory) = self.bind_place(Place::Memory(memory.clone())) else {
                    unreachable!("bind_place keeps a memory place")
                };
                let pieces = (0..n)
                    .map(|k| {
                        let part = MemoryPlace {
                            address: ptr_add(memory.address.clone(), (k * piece) as i128),
                            ..memory.clone()
                        };
                        self.builder.read(&Place::Memory(part), piece, cache)
                    })
                    .collect();
                (Expr::Opaque { args: pieces, what: "structure".into() }, memory.ty.clone())
            }
            _ => (self.builder.read(p, p.ty().size(), cache), p.ty().clone()),
        }
    }

    /// An lvalue: a local, or memory at an address.
    pub(super) fn place(&mut self, n: Node) -> Result<Place> {
        self.enter(n)?;
        let r = self.place_inner(n);
        self.builder.leave();
        r
    }

    pub(super) fn place_inner(&mut self, n: Node) -> Result<Place> {
        match n.kind() {
            "identifier" => match self.lookup(self.text(n)).cloned() {
                Some(sym) => self.sym_place(sym, n),
                None => Err(self.undeclared(n)),
            },
            "parenthesized_expression" => {
                let mut c = n.walk();
                let inner = n.named_children(&mut c).next().ok_or_else(|| self.unsupported(n, "this expression"))?;
                self.place(inner)
            }
            "subscript_expression" => match self.subscript_operator_place(n)? {
                Some(p) => Ok(p),
                None => self.subscript_place(n),
            },
            "pointer_expression" if n.child_by_field_name("operator").map(|o| self.text(o)) == Some("*") => {
                let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
                if let Some(obj) = self.pointed_own_object(arg) {
                    return self.sym_place(obj, n);
                }
                // `*(a + k)` is `a[k]`: of the thread's own array (or a pointer into it), an
                // element in registers or local memory, as a subscript is.
                let sum = cpp::unparen(arg);
                if sum.kind() == "binary_expression"
                    && matches!(sum.child_by_field_name("operator").map(|o| self.text(o)), Some("+" | "-"))
                {
                    if let (Some(l), Some(r)) = (sum.child_by_field_name("left"), sum.child_by_field_name("right")) {
                        let l = cpp::unparen(l);
                        let own = match self.pointed_own_object(l) {
                            Some(Sym::LocalArray(ty, _)) => Some(ty),
                            _ if l.kind() == "identifier" => match self.lookup(self.text(l)) {
                                Some(Sym::LocalArray(ty, _)) => Some(ty.clone()),
                                _ => None,
                            },
                            _ => None,
                        };
                        if let Some(ty) = own {
                            let (e, _) = self.expr(r)?;
                            self.pending_eval(e);
                            return Ok(Place::ThreadArray(ty));
                        }
                    }
                }
                if let Some(ty) = self.local_view(arg)? {
                    return Ok(Place::ThreadArray(ty));
                }
                let (p, pt) = self.expr(arg)?;
                let Ty::Ptr(pt) = pt else { return Err(self.unsupported(n, "dereferencing a non-pointer")) };
                if is_void(&pt.pointee) {
                    return Err(self.unsupported(n, "dereferencing a void pointer"));
                }
                Ok(Place::Memory(MemoryPlace {
                    address: p,
                    ty: pt.pointee.clone(),
                    space: pt.space,
                    volatile: pt.volatile,
                    text: self.text(n).to_string(),
                    span: self.span(n),
                }))
            }
            "field_expression" => {
                if let Some(p) = self.member_place(n)? {
                    if matches!(&p, Place::Memory(MemoryPlace { text, .. }) if text == cpp::DECAY) {
                        return Err(self.unsupported(n, "assigning to an array member as a whole"));
                    }
                    return Ok(p);
                }
                let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
                if op != "." {
                    return Err(self.unsupported(n, "`->` on a structure"));
                }
                match self.place(arg)? {
                    Place::Memory(MemoryPlace { address: addr, ty, space, volatile, .. }) => {
                        let (off, fty) = vector_field(&ty, field).ok_or_else(|| self.unsupported(n, "this member"))?;
                        Ok(Place::Memory(MemoryPlace {
                            address: ptr_add(addr, off as i128),
                            ty: fty,
                            space,
                            volatile,
                            text: self.text(n).to_string(),
                            span: self.span(n),
                        }))
                    }
                    Place::Local(_, ty) => {
                        let (_, fty) = vector_field(&ty, field).ok_or_else(|| self.unsupported(n, "this member"))?;
                        // Vector components of locals are not tracked; writes only evaluate.
                        Ok(Place::ThreadArray(fty))
                    }
                    // A member of an untracked element: its own type (a structure's field, as
                    // declared, or a vector's component), still untracked.
                    Place::ThreadArray(t) => {
                        let member = match cpp::struct_name(&t) {
                            Some(sname) => self
                                .unit
                                .layout(sname)
                                .and_then(|l| l.field(field).filter(|f| f.dims.is_empty()).map(|f| f.ty.clone())),
                            None => vector_field(&t, field).map(|x| x.1),
                        };
                        Ok(Place::ThreadArray(member.unwrap_or(t)))
                    }
                }
            }
            // `v.at(i) = x`, `get(i) += x`: a function returning a reference.
            "call_expression" => match self.reference_place(n, |l| l.expr(n).map(Some))? {
                Some(Ok(p)) => Ok(p),
                _ => Err(self.unsupported(n, "assigning to the value a call returns")),
            },
            _ => Err(self.unsupported(n, "assigning to this expression")),
        }
    }

    /// `reinterpret_cast<float *>(&v)[i]`, `*(unsigned *)&h`: a thread's own object (a local,
    /// a vector, a structure in registers) seen through a pointer cast of its address, as a
    /// pointee type. Registers or local memory: no global or shared traffic. The object's value
    /// is forgotten from here on, since a write through the view changes it untracked.
    pub(in crate::front::cuda::lower) fn local_view(&mut self, n: Node) -> Result<Option<Ty>> {
        let n = cpp::unparen(n);
        let (td, inner) = match n.kind() {
            "cast_expression" => (n.child_by_field_name("type"), n.child_by_field_name("value")),
            "call_expression" => {
                let f = n.child_by_field_name("function");
                let cast = f.filter(|f| f.kind() == "template_function").filter(|f| {
                    f.child_by_field_name("name")
                        .is_some_and(|x| matches!(self.text(x), "reinterpret_cast" | "static_cast" | "const_cast"))
                });
                let Some(f) = cast else { return Ok(None) };
                let td = f.child_by_field_name("arguments").and_then(|a| a.named_child(0));
                let arg = n.child_by_field_name("arguments").and_then(|a| a.named_child(0));
                (td, arg)
            }
            _ => return Ok(None),
        };
        let (Some(td), Some(inner)) = (td, inner) else { return Ok(None) };
        let inner = cpp::unparen(inner);
        let is_local = match inner.kind() {
            // `(unsigned *)key` of the thread's own array (its contents are not tracked).
            "identifier" => matches!(self.lookup(self.text(inner)), Some(Sym::LocalArray(..))),
            "pointer_expression" if inner.child_by_field_name("operator").map(|o| self.text(o)) == Some("&") => {
                // `&v`, `&(v)`, `&arr[k]`, `&(r_c[m][n])`: an object of the thread's own.
                let mut root = inner.child_by_field_name("argument").map(cpp::unparen);
                let mut indices = Vec::new();
                // `&v.x` of a thread's own vector or structure: that object too.
                while let Some(r) = root.filter(|r| {
                    r.kind() == "field_expression"
                        && r.child_by_field_name("operator").is_some_and(|o| self.text(o) == ".")
                }) {
                    root = r.child_by_field_name("argument").map(cpp::unparen);
                }
                while let Some(r) = root.filter(|r| r.kind() == "subscript_expression") {
                    indices.extend(r.child_by_field_name("indices").and_then(|i| i.named_child(0)));
                    root = r.child_by_field_name("argument").map(cpp::unparen);
                }
                match root.filter(|a| a.kind() == "identifier") {
                    // A subscript names an element of the thread's array; `&p[i]` of a pointer
                    // held in a local is memory, not a view.
                    Some(a) => match self.lookup(self.text(a)).cloned() {
                        Some(sym @ Sym::LocalArray(..)) | Some(sym @ (Sym::Local(..) | Sym::Struct(_)))
                            if indices.is_empty() || matches!(sym, Sym::LocalArray(..)) =>
                        {
                            for i in indices {
                                let (e, _) = self.expr(i)?;
                                self.pending_eval(e);
                            }
                            self.forget_object(&sym, self.span(inner));
                            true
                        }
                        // `&(p[0])` of a pointer into a thread's own array (`uint32_t *p =
                        // reinterpret_cast<uint32_t *>(&(r[0][0]))`): that array, untracked.
                        Some(Sym::LocalPtr(inner)) if matches!(*inner, Sym::LocalArray(..)) => {
                            for i in indices {
                                let (e, _) = self.expr(i)?;
                                self.pending_eval(e);
                            }
                            true
                        }
                        _ => false,
                    },
                    None => false,
                }
            }
            "cast_expression" | "call_expression" => self.local_view(inner)?.is_some(),
            _ => false,
        };
        if !is_local {
            return Ok(None);
        }
        match self.type_descriptor(td)? {
            Ty::Ptr(pt) if !is_void(&pt.pointee) => Ok(Some(pt.pointee)),
            Ty::Ptr(_) => Ok(Some(Ty::Int(IntTy::U8))),
            _ => Ok(None),
        }
    }

    /// Makes a thread's object unknown: its locals (a structure's, member by member) are
    /// assigned a value that is not tracked.
    pub(super) fn forget_object(&mut self, sym: &Sym, span: Span) {
        match sym {
            Sym::Local(id, _) => {
                // Its value is read through the view: whatever filled it stays live.
                self.builder.pending.push(Stmt::Eval(local_array_write(Expr::Local(*id))));
                let value = Expr::Opaque { args: Vec::new(), what: "an object written through a pointer".into() };
                self.builder.pending.push(Stmt::Assign { local: *id, value, span });
            }
            Sym::Struct(sv) => {
                for (_, f) in &sv.fields {
                    self.forget_object(f, span);
                }
            }
            _ => {}
        }
    }

    /// Whether a chain of `.` members and subscripts starts at a thread's own array whose
    /// contents are not tracked (`ugate[k].data`, `v[i].a.b`).
    pub(in crate::front::cuda::lower) fn in_own_array(&self, mut n: Node) -> bool {
        loop {
            n = cpp::unparen(n);
            match n.kind() {
                "field_expression" if n.child_by_field_name("operator").is_some_and(|o| self.text(o) == ".") => {}
                "subscript_expression" => {}
                "identifier" => return matches!(self.lookup(self.text(n)), Some(Sym::LocalArray(..))),
                _ => return false,
            }
            let Some(inner) = n.child_by_field_name("argument") else { return false };
            n = inner;
        }
    }

    pub(super) fn undeclared(&self, n: Node) -> Diagnostic {
        let name = self.text(n);
        let d = Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(n),
            format!("`{name}` is not declared (or is a global variable, which is not supported)"),
        );
        // A macro the build defines (`nvcc -DBF=4`), as the file's comments often say.
        if n.kind() == "identifier" {
            d.note(format!("if the build defines it (nvcc -D{name}=...), give it the same way: -D {name}=VALUE"))
        } else {
            d
        }
    }

    /// `a[i]`, `tile[r][c]`, `p[i]` as a place.
    /// `s[r]` of a `__shared__` array with more dimensions than subscripts (a row, as C decays
    /// it): its first element's address, typed as a pointer to the element, and the dimensions
    /// left. `None` for any other expression.
    pub(super) fn shared_row(&mut self, n: Node) -> Result<Option<(Expr, Ty, Vec<u64>)>> {
        let Some((id, idx_nodes)) = self.shared_row_syntax(n) else { return Ok(None) };
        let arr = self.builder.kernel.shared[id.0 as usize].clone();
        let lin = self.row_major(&idx_nodes, &arr.dims)?;
        let inner: u64 = arr.dims.iter().skip(idx_nodes.len()).fold(1u64, |z, &d| z.wrapping_mul(d));
        let bytes = mul64(lin, inner.wrapping_mul(arr.elem.size()) as i128);
        let addr = Expr::PtrOffset { ptr: Box::new(Expr::SharedBase(id)), bytes: Box::new(bytes) };
        let ty = Ty::shared_ptr(arr.elem.clone());
        Ok(Some((addr, ty, arr.dims[idx_nodes.len()..].to_vec())))
    }

    /// The shared array and the subscripts of a row of it (see [`Self::shared_row`]), read
    /// from the syntax alone.
    pub(super) fn shared_row_syntax<'n>(&self, n: Node<'n>) -> Option<(SharedId, Vec<Node<'n>>)> {
        let mut idx_nodes = Vec::new();
        let mut root = cpp::unparen(n);
        while root.kind() == "subscript_expression" {
            idx_nodes.push(root.child_by_field_name("indices").and_then(|i| i.named_child(0))?);
            root = cpp::unparen(root.child_by_field_name("argument")?);
        }
        idx_nodes.reverse();
        if idx_nodes.is_empty() || root.kind() != "identifier" {
            return None;
        }
        let Some(Sym::Shared(id)) = self.lookup(self.text(root)) else { return None };
        (idx_nodes.len() < self.builder.kernel.shared[id.0 as usize].dims.len()).then_some((*id, idx_nodes))
    }

    pub(super) fn subscript_place(&mut self, n: Node) -> Result<Place> {
        // Collect the chain of subscripts down to its root.
        let mut idx_nodes = Vec::new();
        let mut root = n;
        while root.kind() == "subscript_expression" {
            let idx = root.child_by_field_name("indices").ok_or_else(|| self.unsupported(root, "this subscript"))?;
            let mut c = idx.walk();
            let items: Vec<Node> = idx.named_children(&mut c).collect();
            if items.len() != 1 {
                return Err(self.unsupported(idx, "a subscript with several indices"));
            }
            idx_nodes.push(items[0]);
            root = root.child_by_field_name("argument").ok_or_else(|| self.unsupported(root, "this subscript"))?;
            if idx_nodes.len() > 64 {
                return Err(self.unsupported(n, "more than 64 subscripts"));
            }
        }
        idx_nodes.reverse();
        if let Some(p) = self.own_object_subscript(root, &idx_nodes, n)? {
            return Ok(p);
        }
        if idx_nodes.len() == 1 {
            if let Some(ty) = self.local_view(root)? {
                let (e, _) = self.expr(idx_nodes[0])?;
                self.pending_eval(e);
                return Ok(Place::ThreadArray(ty));
            }
        }
        let text = self.text(n).to_string();
        let span = self.span(n);
        // `p.a[i]` on a structure passed by value: its array member is kernel-parameter space
        // (the constant bank) or registers, not global memory.
        if root.kind() == "field_expression" {
            if let Some(Sym::Opaque(ty, _) | Sym::LocalArray(ty, _)) = self.member_sym(root) {
                for node in &idx_nodes {
                    let (e, _) = self.expr(*node)?;
                    self.pending_eval(e);
                }
                return Ok(Place::ThreadArray(ty));
            }
            // `c->c[i]` through a pointer to the thread's own structure (`mul(a, &v)`): its
            // array member, registers as the structure is.
            if let Some(ty) = self.own_array_member(root) {
                for node in &idx_nodes {
                    let (e, _) = self.expr(*node)?;
                    self.pending_eval(e);
                }
                return Ok(Place::ThreadArray(ty));
            }
            // `ugate[k].data[i]`: an array member of an element of the thread's own array of
            // structures: registers, as the element is.
            if self.in_own_array(root) {
                let Place::ThreadArray(ty) = self.place(root)? else {
                    return Err(self.unsupported(root, "this member of a thread's own array"));
                };
                for node in &idx_nodes {
                    let (e, _) = self.expr(*node)?;
                    self.pending_eval(e);
                }
                return Ok(Place::ThreadArray(ty));
            }
        }
        // `p->m[i][j]`, `s[k].m[i][j]`: a multi-dimensional array member in memory, one element
        // row-major from the member's first element.
        if let Some(dims) = self.member_dims(root).filter(|d| d.len() > 1 && d.len() == idx_nodes.len()) {
            if let Some(Place::Memory(first)) = self.member_place(root)? {
                let Ty::Ptr(pt) = first.ty else { return Err(self.unsupported(root, "this array member")) };
                let lin = self.row_major(&idx_nodes, &dims)?;
                let addr = Expr::PtrOffset {
                    ptr: Box::new(first.address),
                    bytes: Box::new(mul64(lin, pt.pointee.size() as i128)),
                };
                return Ok(Place::Memory(MemoryPlace {
                    address: addr,
                    ty: pt.pointee,
                    space: first.space,
                    volatile: first.volatile,
                    text,
                    span,
                }));
            }
        }
        // `(*sp)[i][j]` of a pointer to rows: its first row.
        let deref = cpp::unparen(root);
        let deref = (deref.kind() == "pointer_expression"
            && deref.child_by_field_name("operator").is_some_and(|o| self.text(o) == "*"))
        .then(|| deref.child_by_field_name("argument").map(cpp::unparen))
        .flatten()
        .filter(|a| a.kind() == "identifier" && matches!(self.lookup(self.text(*a)), Some(Sym::Rows { .. })));
        let first_row = deref.is_some();
        let root = deref.unwrap_or(root);
        if root.kind() == "identifier" {
            match self.lookup(self.text(root)).cloned() {
                // `a[i][j][k]` of a parameter `T a[][N][M]` or a pointer `T (*a)[N][M]`: one
                // element, row-major.
                Some(Sym::Rows { base, elem, inner }) => {
                    if idx_nodes.len() + usize::from(first_row) != inner.len() + 1 {
                        return Err(self.unsupported(n, "a row of an array parameter used as a pointer"));
                    }
                    let (p, pt) = self.sym_value(*base, root)?;
                    let Ty::Ptr(pt) = pt else { return Err(self.unsupported(root, "this array parameter")) };
                    let mut dims = if first_row { vec![] } else { vec![0] };
                    dims.extend(inner.iter().copied());
                    let lin = self.row_major(&idx_nodes, &dims)?;
                    let addr = Expr::PtrOffset { ptr: Box::new(p), bytes: Box::new(mul64(lin, elem.size() as i128)) };
                    return Ok(Place::Memory(MemoryPlace {
                        address: addr,
                        ty: elem,
                        space: pt.space,
                        volatile: pt.volatile,
                        text,
                        span,
                    }));
                }
                Some(Sym::Shared(id)) => {
                    let arr = self.builder.kernel.shared[id.0 as usize].clone();
                    let dims = arr.dims.clone();
                    if idx_nodes.len() > dims.len().max(1) {
                        return Err(self.unsupported(n, "more subscripts than the array has dimensions"));
                    }
                    let lin = self.row_major(&idx_nodes, &dims)?;
                    let used = idx_nodes.len();
                    // Modulo 2^64 as the address arithmetic is (a size that large is refused
                    // by the launch's shared-memory check, never a panic here).
                    let inner: u64 = dims.iter().skip(used).fold(1u64, |z, &d| z.wrapping_mul(d));
                    let bytes = mul64(lin, inner.wrapping_mul(arr.elem.size()) as i128);
                    let addr = Expr::PtrOffset { ptr: Box::new(Expr::SharedBase(id)), bytes: Box::new(bytes) };
                    if used < dims.len() {
                        return Err(self.unsupported(n, "using a row of a shared array as a value"));
                    }
                    return Ok(Place::Memory(MemoryPlace {
                        address: addr,
                        ty: arr.elem,
                        space: Space::Shared,
                        volatile: false,
                        text,
                        span,
                    }));
                }
                Some(sym @ Sym::DeviceVar { .. }) if idx_nodes.len() > 1 => {
                    let Sym::DeviceVar { dims, elem, volatile, .. } = &sym else { unreachable!() };
                    let (dims, elem, volatile) = (dims.clone(), elem.clone(), *volatile);
                    if idx_nodes.len() != dims.len() {
                        return Err(self.unsupported(n, "a row of a multi-dimensional `__device__` array"));
                    }
                    let lin = self.row_major(&idx_nodes, &dims)?;
                    let p = self.device_var_param(&sym);
                    let bytes = mul64(lin, elem.size() as i128);
                    let addr = Expr::PtrOffset { ptr: Box::new(Expr::Param(p)), bytes: Box::new(bytes) };
                    return Ok(Place::Memory(MemoryPlace {
                        address: addr,
                        ty: elem,
                        space: Space::Global,
                        volatile,
                        text,
                        span,
                    }));
                }
                Some(Sym::LocalArray(ty, _)) | Some(Sym::Opaque(ty, _)) => {
                    if let Some(Sym::Opaque(_, what)) = self.lookup(self.text(root)).cloned() {
                        self.sym_place(Sym::Opaque(ty.clone(), what), root)?;
                    }
                    for node in &idx_nodes {
                        let (e, _) = self.expr(*node)?;
                        self.pending_eval(e);
                    }
                    return Ok(Place::ThreadArray(ty));
                }
                _ => {}
            }
        }
        // Pointer subscripts: each level loads a pointer, the last one is the place.
        let (mut p, mut pt) = self.expr(root)?;
        for (k, node) in idx_nodes.iter().enumerate() {
            let Ty::Ptr(ptr_ty) = pt.clone() else {
                return Err(self.unsupported(*node, "subscripting a value that is not a pointer or array"));
            };
            if is_void(&ptr_ty.pointee) {
                return Err(self.unsupported(*node, "subscripting a void pointer"));
            }
            let (i, it) = self.expr(*node)?;
            let i = self.index_i64(i, &it, *node)?;
            let addr = Expr::PtrOffset { ptr: Box::new(p), bytes: Box::new(mul64(i, ptr_ty.pointee.size() as i128)) };
            if k + 1 == idx_nodes.len() {
                return Ok(Place::Memory(MemoryPlace {
                    address: addr,
                    ty: ptr_ty.pointee.clone(),
                    space: ptr_ty.space,
                    volatile: ptr_ty.volatile,
                    text,
                    span,
                }));
            }
            let op = self.builder.memory_operation(
                AccessKind::Load,
                ptr_ty.space,
                8,
                CacheOp::Default,
                ptr_ty.volatile,
                &text,
                span,
            );
            p = Expr::Load { op, addr: Box::new(addr) };
            pt = ptr_ty.pointee.clone();
        }
        Err(self.unsupported(n, "this subscript"))
    }

    /// The dimensions of the array member a field expression names (`p->m`, `s.m`), from its
    /// structure's layout; `None` for anything else.
    pub(super) fn member_dims(&self, n: Node) -> Option<Vec<u64>> {
        let n = cpp::unparen(n);
        if n.kind() != "field_expression" {
            return None;
        }
        let field = self.text(n.child_by_field_name("field")?);
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        let ty = self.peek_type(n.child_by_field_name("argument")?);
        let ty = match (op, ty) {
            ("->", Ty::Ptr(p)) => p.pointee,
            (".", t) => t,
            _ => return None,
        };
        let f = self.unit.layout(cpp::struct_name(&ty)?)?.fields.into_iter().find(|f| f.name == field)?;
        Some(f.dims)
    }

    /// The element offset of subscripts into a row-major array of `dims`:
    /// ((i0 * d1 + i1) * d2 + i2) ...; 0 with no subscript.
    fn row_major(&mut self, idx_nodes: &[Node], dims: &[u64]) -> Result<Expr> {
        let mut lin: Option<Expr> = None;
        for (k, node) in idx_nodes.iter().enumerate() {
            let (e, t) = self.expr(*node)?;
            let e = self.index_i64(e, &t, *node)?;
            lin = Some(match lin {
                None => e,
                Some(prev) => add64(mul64(prev, dims.get(k).copied().unwrap_or(1) as i128), e),
            });
        }
        Ok(lin.unwrap_or(Expr::Int(0, IntTy::I64)))
    }

    pub(super) fn pending_eval(&mut self, e: Expr) {
        if !matches!(e, Expr::Int(..) | Expr::Local(_) | Expr::Param(_) | Expr::Builtin(_)) {
            self.builder.pending.push(Stmt::Eval(local_array_write(e)));
        }
    }

    /// An index converted to a 64-bit byte-offset operand (sign-extended when signed).
    pub(super) fn index_i64(&self, e: Expr, t: &Ty, n: Node) -> Result<Expr> {
        match t {
            Ty::Int(it) => Ok(if it.signed {
                Expr::ToInt { ty: IntTy::I64, arg: Box::new(e) }
            } else {
                Expr::ToInt { ty: IntTy::I64, arg: Box::new(Expr::ToInt { ty: IntTy::U64, arg: Box::new(e) }) }
            }),
            _ => Err(self.unsupported(n, "an index that is not an integer")),
        }
    }
}
