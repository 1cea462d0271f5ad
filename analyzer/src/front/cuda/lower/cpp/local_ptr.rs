//! The address of a thread's own object handed to a helper: `f(&x)`, `swap(&a, &b)`,
//! `init(&s)`, `f(&v[k])`. The helper is inlined, so its pointer parameter names the object
//! itself ([`Sym::LocalPtr`]): `*p`, `p[0]` and `p->m` read and write the caller's variable in
//! registers, never memory. What cannot be followed exactly (pointer arithmetic on it, storing
//! it, comparing it) is refused at its line.

use super::*;

impl Lowerer<'_, '_> {
    /// `&x`, `&(x)`, `&s.m`, `&arr[k]` of the thread's own object, as the symbol a pointer
    /// parameter bound to it names; `None` for any other argument (memory, a value).
    pub(in crate::front::cuda::lower) fn own_object_address(&mut self, a: Node) -> Result<Option<Sym>> {
        let a = unparen(a);
        if a.kind() != "pointer_expression" || a.child_by_field_name("operator").map(|o| self.text(o)) != Some("&") {
            return Ok(None);
        }
        let Some(obj) = a.child_by_field_name("argument").map(unparen) else { return Ok(None) };
        if obj.kind() == "subscript_expression" {
            // `&arr[k]`, `&arr[i][j]` of a thread's own array: the array (untracked contents).
            let mut root = obj;
            let mut indices = Vec::new();
            while root.kind() == "subscript_expression" {
                indices.extend(root.child_by_field_name("indices").and_then(|i| i.named_child(0)));
                match root.child_by_field_name("argument") {
                    Some(r) => root = unparen(r),
                    None => return Ok(None),
                }
            }
            // `&params.table[idx][0]` of an array member of a structure held in registers or
            // in `__constant__` memory: untracked contents, as the thread's own array's.
            let sym = match root.kind() {
                "identifier" => self.lookup(self.text(root)).cloned(),
                "field_expression" => match self.member_sym(root) {
                    Some(Sym::Opaque(ty, _)) => Some(Sym::LocalArray(ty, Vec::new())),
                    s => s,
                },
                _ => return Ok(None),
            };
            let Some(sym @ Sym::LocalArray(..)) = sym else { return Ok(None) };
            for i in indices {
                let (e, _) = self.expr(i)?;
                self.pending_eval(e);
            }
            return Ok(Some(sym));
        }
        if !matches!(obj.kind(), "identifier" | "field_expression") {
            return Ok(None);
        }
        Ok(match self.member_sym(obj) {
            Some(sym @ (Sym::Local(..) | Sym::Struct(_))) => Some(Sym::LocalPtr(Box::new(sym))),
            Some(sym @ Sym::LocalArray(..)) => Some(sym),
            _ => None,
        })
    }

    /// A pointer variable initialised to point into the thread's own objects (`float *p = v;`
    /// of an array `v`, `auto *p = &a[2]`, `float *pv = (float *)&val;` of a `float4 val`, `q = p`
    /// of such a pointer): the symbol the variable names, or `None` for a pointer to memory.
    /// Indexing it (`p[i]`, in a loop too) reads and writes registers or local memory; a view
    /// through a cast makes the object's tracked value unknown, as `((float *)&val)[i]` does.
    pub(in crate::front::cuda::lower) fn own_pointer_init(&mut self, init: Node) -> Result<Option<Sym>> {
        let i = unparen(init);
        let sym = match i.kind() {
            "identifier" => match self.lookup(self.text(i)) {
                Some(sym @ (Sym::LocalArray(..) | Sym::LocalPtr(_))) => Some(sym.clone()),
                _ => None,
            },
            "pointer_expression" => self.own_object_address(i)?,
            "cast_expression" | "call_expression" => {
                self.local_view(i)?.map(|ty| Sym::LocalPtr(Box::new(Sym::LocalArray(ty, Vec::new()))))
            }
            // `ss + j`, `j + ss`, `p - 1` of a pointer into the thread's own array: still that
            // array (untracked contents); the offset is evaluated for the loads in it.
            "binary_expression"
                if matches!(i.child_by_field_name("operator").map(|o| self.text(o)), Some("+" | "-")) =>
            {
                let (Some(l), Some(r)) = (i.child_by_field_name("left"), i.child_by_field_name("right")) else {
                    return Ok(None);
                };
                let own = |s: &Self, x: Node| match s.lookup(s.text(unparen(x))) {
                    Some(a @ Sym::LocalArray(..)) => Some(a.clone()),
                    Some(Sym::LocalPtr(inner)) if matches!(**inner, Sym::LocalArray(..)) => Some((**inner).clone()),
                    _ => None,
                };
                let minus = self.text(i.child_by_field_name("operator").unwrap_or(i)) == "-";
                let (arr, offset) = match (own(self, l), own(self, r)) {
                    (Some(a), None) => (a, r),
                    (None, Some(a)) if !minus => (a, l),
                    _ => return Ok(None),
                };
                let (e, _) = self.expr(offset)?;
                self.pending_eval(e);
                Some(arr)
            }
            _ => None,
        };
        Ok(sym.map(|s| match s {
            a @ Sym::LocalArray(..) => Sym::LocalPtr(Box::new(a)),
            other => other,
        }))
    }

    /// The object a pointer to a thread's own object names, when `p` (an identifier) is one.
    pub(in crate::front::cuda::lower) fn pointed_own_object(&self, p: Node) -> Option<Sym> {
        let p = unparen(p);
        if p.kind() != "identifier" {
            return None;
        }
        match self.lookup(self.text(p)) {
            Some(Sym::LocalPtr(inner)) => Some((**inner).clone()),
            _ => None,
        }
    }

    /// `p[i]` on a pointer to a thread's own object: `p[0]` is the object; another index of a
    /// scalar is refused (it would be another object of the caller's, or past it).
    pub(in crate::front::cuda::lower) fn own_object_subscript(
        &mut self,
        root: Node,
        idx_nodes: &[Node],
        n: Node,
    ) -> Result<Option<Place>> {
        let Some(inner) = self.pointed_own_object(root) else { return Ok(None) };
        // A pointer into the thread's own array: any element, registers or local memory.
        if let Sym::LocalArray(ty, _) = inner {
            for i in idx_nodes {
                let (e, _) = self.expr(*i)?;
                self.pending_eval(e);
            }
            return Ok(Some(Place::ThreadArray(ty)));
        }
        if idx_nodes.len() == 1 {
            let (e, _) = self.expr(idx_nodes[0])?;
            if fold_constant(&e) == Some(0) {
                return self.sym_place(inner, n).map(Some);
            }
        }
        Err(self.unsupported(n, "indexing a pointer to a thread's own variable other than at [0]"))
    }

    /// The element type of `p->m`, an array member of the thread's own structure `p` points to.
    pub(in crate::front::cuda::lower) fn own_array_member(&self, n: Node) -> Option<Ty> {
        if n.child_by_field_name("operator").map(|o| self.text(o)) != Some("->") {
            return None;
        }
        let Sym::Struct(v) = self.pointed_own_object(n.child_by_field_name("argument")?)? else { return None };
        let field = self.text(n.child_by_field_name("field")?);
        match v.fields.iter().find(|(f, _)| f == field)? {
            (_, Sym::LocalArray(ty, _)) => Some(ty.clone()),
            _ => None,
        }
    }

    /// `p->m` on a pointer to a thread's own structure (or vector): the member.
    pub(in crate::front::cuda::lower) fn own_object_member(&mut self, n: Node) -> Result<Option<Place>> {
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        let Some(arg) = n.child_by_field_name("argument") else { return Ok(None) };
        if op != "->" {
            return Ok(None);
        }
        let Some(inner) = self.pointed_own_object(arg) else { return Ok(None) };
        let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
        match inner {
            Sym::Struct(v) => match v.fields.iter().find(|(f, _)| f == field) {
                Some((_, s)) => self.sym_place(s.clone(), n).map(Some),
                None => Err(Diagnostic::at(
                    ErrorKind::Unsupported,
                    self.span(n),
                    format!("`{}` has no member `{field}`", v.name),
                )),
            },
            // Vector components of locals are not tracked (as `v.x` on the local itself), nor
            // are the elements of a thread's own array (`float4 *s = ss + j; s->x += ...`).
            Sym::Local(_, ty) | Sym::LocalArray(ty, _) => match vector_field(&ty, field) {
                Some((_, fty)) => Ok(Some(Place::ThreadArray(fty))),
                None => Err(self.unsupported(n, "this member")),
            },
            _ => Err(self.unsupported(n, "this member")),
        }
    }
}
