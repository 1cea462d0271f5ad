//! The C++ the CUDA front end understands beyond C: pointers whose address space follows their
//! origin, references, parameters advanced in place, function templates (explicit and deduced
//! arguments), file- and namespace-scope constants and enums, `switch`, structures (by value
//! in registers, and in memory at their C layout). A child of `lower`, so that lower.rs keeps
//! the C core and this file the additions: `cpp/layout.rs` indexes the structures and class
//! templates the unit declares, `cpp/objects.rs` lowers structures in a kernel, `cpp/inline.rs`
//! inlines functions, constructors and member functions, `cpp/local_ptr.rs` the address of a
//! thread's own object passed to a helper (`f(&x)`), `cpp/local_types.rs` structures defined
//! inside a function body.

use super::*;
use std::collections::HashSet;

mod inline;
mod layout;
mod local_ptr;
mod local_types;
mod objects;
mod value_types;

use layout::*;

/// The most bytes a kernel's parameters may take (CUDA 12.1 and later, Volta and later): nvcc
/// stops past it with "Formal parameter space overflowed".
pub(in crate::front::cuda::lower) const MAX_PARAM_BYTES: u64 = 32764;
pub(super) use layout::{
    array_typedef, complete_forward_types, declare_struct_template, declare_types, global_values, incomplete_refusal,
    injected_class, instantiate, is_forward_declaration, library_complex, nested_enums, other_type, shared_align,
    too_large_refusal, toolkit_structs, unknown_type, virtual_refusal, wmma_refusal,
};

/// A structure's or class's C layout.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    pub name: String,
    /// Size and alignment in bytes; nvcc's limit on a size is 2^64 - 1.
    pub size: u64,
    pub align: u64,
    pub fields: Vec<Field>,
    /// A class template's arguments (`Vec2<float>`: T = float), bound while its methods inline.
    pub targs: Vec<(String, TemplateArg)>,
    /// `static constexpr` integer members (`x128::size`).
    pub consts: Vec<(String, i128)>,
}

#[derive(Clone, Debug)]
pub(super) struct Field {
    pub name: String,
    pub offset: u64,
    pub ty: Ty,
    /// Array dimensions of an array member (`float v[4]`), outermost first.
    pub dims: Vec<u64>,
}

impl Layout {
    /// Structures travel through the IR as opaque blobs of their size, named `struct NAME`.
    pub(super) fn ty(&self) -> Ty {
        Ty::Vector { name: format!("struct {}", self.name), bytes: self.size }
    }
    pub(in crate::front::cuda::lower) fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
    /// A structure the compiler moves as one vector access (`struct alignas(16) { float4 v; }`):
    /// its size is its alignment, 4, 8 or 16 bytes.
    pub(super) fn is_vector_like(&self) -> bool {
        self.size == self.align && matches!(self.size, 4 | 8 | 16)
    }
}

/// Pieces of a whole-structure copy modelled as separate accesses (a 64-byte structure of
/// chars, aligned 1).
pub(super) const MAX_STRUCT_PIECES: u64 = 64;

/// A structure held in registers: each member is a symbol of its own.
#[derive(Clone, Debug)]
pub(super) struct StructVal {
    pub name: String,
    pub fields: Vec<(String, Sym)>,
}

/// A class's conversion operator (`operator T *()`), as kept among its methods.
const CONVERSION: &str = "operator$cast";

/// Marks a member place that is an array: its value is its address.
pub(super) const DECAY: &str = "$decay";

/// The structure named by a type, if it is one.
pub(in crate::front::cuda::lower) fn struct_name(ty: &Ty) -> Option<&str> {
    match ty {
        Ty::Vector { name, .. } => name.strip_prefix("struct "),
        _ => None,
    }
}

/// The number of elements an initializer gives an array declared without its outermost size
/// (`float w[] = {1, 2, 3}` has 3, `char s[] = "ab"` 3); `None` where it is not plain.
pub(super) fn initializer_length(unit: &Unit, i: Node) -> Option<u64> {
    match i.kind() {
        "initializer_list" => {
            let mut c = i.walk();
            let items: Vec<Node> = i.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
            // `{[4] = x}` (C's array designators) sizes the array by its largest index.
            if items.iter().any(|x| x.kind() == "initializer_pair") {
                return None;
            }
            Some(items.len() as u64).filter(|n| *n > 0)
        }
        "string_literal" => {
            let t = unit.text(i);
            let body = t.strip_prefix('"')?.strip_suffix('"')?;
            (!body.contains('\\')).then_some(body.len() as u64 + 1)
        }
        _ => None,
    }
}

/// Strips parentheses around an expression.
pub(super) fn unparen(mut n: Node) -> Node {
    while n.kind() == "parenthesized_expression" {
        let mut c = n.walk();
        let Some(i) = n.named_children(&mut c).next() else { break };
        n = i;
    }
    n
}

/// Name of the function a call names, without a scope (`ns::f`, `::f`).
pub(super) fn last_segment(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name).trim()
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// `enum E { A, B = 4, C }`: A = 0, B = 4, C = 5, also as `E::A`.
    fn enumerators(&mut self, spec: Node) {
        let Some(body) = spec.child_by_field_name("body") else { return };
        let ename = spec.child_by_field_name("name").map(|x| self.text(x).to_string());
        let mut next: i128 = 0;
        let mut c = body.walk();
        let items: Vec<Node> = body.named_children(&mut c).filter(|x| x.kind() == "enumerator").collect();
        for e in items {
            let Some(name) = e.child_by_field_name("name").map(|x| self.text(x).to_string()) else { continue };
            if let Some(v) = e.child_by_field_name("value") {
                if let Some(x) = self.expr(v).ok().and_then(|(x, _)| fold_constant(&x)) {
                    next = x;
                }
            }
            let sym = Sym::Const(next, IntTy::I32);
            if let Some(en) = &ename {
                self.scopes[0].insert(format!("{en}::{name}"), sym.clone());
            }
            self.scopes[0].insert(name, sym);
            next += 1;
        }
    }

    /// `switch`: cases in order, each entered when matched or fallen into; `break` leaves a
    /// one-pass loop around them.
    pub(super) fn switch_stmt(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        let c = n.child_by_field_name("condition").ok_or_else(|| self.unsupported(n, "this switch"))?;
        let v = if c.kind() == "condition_clause" {
            c.child_by_field_name("value").ok_or_else(|| self.unsupported(c, "this switch"))?
        } else {
            c
        };
        let (e, et) = self.expr(unparen(v))?;
        let Ty::Int(it) = et else { return Err(self.unsupported(v, "a switch on a value that is not an integer")) };
        let span = self.span(n);
        let t = self.builder.temporary(et.clone());
        self.flush(out);
        out.push(Stmt::Assign { local: t, value: e, span });
        let matched = self.builder.temporary(Ty::Int(IntTy::I32));
        out.push(Stmt::Assign { local: matched, value: Expr::Int(0, IntTy::I32), span });
        let body = n.child_by_field_name("body").ok_or_else(|| self.unsupported(n, "this switch"))?;
        if has_loose_continue(body) {
            return Err(self.unsupported(n, "`continue` inside a switch"));
        }
        let mut cw = body.walk();
        let cases: Vec<Node> = body.named_children(&mut cw).filter(|x| x.kind() == "case_statement").collect();
        let mut values = Vec::new();
        for cs in &cases {
            if let Some(val) = cs.child_by_field_name("value") {
                let (ce, _) = self.const_expr_ro(val)?;
                let cv = fold_constant(&ce).ok_or_else(|| {
                    Diagnostic::at(ErrorKind::Unsupported, self.span(val), "a case label must be an integer constant")
                })?;
                values.push(cv);
            }
        }
        let eq = |v: i128, op: BinOp| Expr::Binary {
            op,
            ty: promote(it),
            lhs: Box::new(Expr::ToInt { ty: promote(it), arg: Box::new(Expr::Local(t)) }),
            rhs: Box::new(Expr::Int(promote(it).wrap(v), promote(it))),
            span,
        };
        let mut lbody = Vec::new();
        self.scopes.push(HashMap::new());
        let mut k = 0;
        for cs in &cases {
            let hit = match cs.child_by_field_name("value") {
                Some(_) => {
                    k += 1;
                    eq(values[k - 1], BinOp::Eq)
                }
                None => values.iter().fold(Expr::Int(1, IntTy::I32), |acc, v| Expr::Logical {
                    and: true,
                    lhs: Box::new(acc),
                    rhs: Box::new(eq(*v, BinOp::Ne)),
                }),
            };
            let cond = Expr::Logical { and: false, lhs: Box::new(Expr::Local(matched)), rhs: Box::new(hit) };
            let mut then = vec![Stmt::Assign { local: matched, value: Expr::Int(1, IntTy::I32), span }];
            let value = cs.child_by_field_name("value");
            let mut cc = cs.walk();
            let stmts: Vec<Node> =
                cs.named_children(&mut cc).filter(|x| Some(*x) != value && x.kind() != "comment").collect();
            for s in stmts {
                self.stmt(s, &mut then)?;
            }
            lbody.push(Stmt::If { cond, then, els: Vec::new(), span });
        }
        self.scopes.pop();
        lbody.push(Stmt::Break);
        out.push(Stmt::Loop { cond: None, body: lbody, step: Vec::new(), test_first: true, span, synthetic: true });
        if let Some(inl) = self.inline.last() {
            out.push(Stmt::If { cond: Expr::Local(inl.ret_flag), then: vec![Stmt::Break], els: Vec::new(), span });
        }
        Ok(())
    }
}

impl<'u, 'a> Lowerer<'u, 'a> {
    /// Where a method of structure `sname` is kept: an explicit specialization's own
    /// (`S<double>::m`), else a class template instance's under the template's name
    /// (`Vec2<float>` -> `Vec2::m`); the overload of `arity` parameters where there is one.
    fn method_key(&self, sname: &str, method: &str, arity: usize) -> String {
        let own = format!("{sname}::{method}");
        let key = if sname.contains('<') && self.unit.device_fns.contains_key(own.as_str()) {
            own
        } else {
            format!("{}::{method}", sname.split('<').next().unwrap_or(sname))
        };
        match self.unit.device_fns.contains_key(format!("{key}#{arity}").as_str()) {
            true => format!("{key}#{arity}"),
            false => key,
        }
    }

    /// `SharedMemory<T>()`: a temporary of a class used through its conversion operator
    /// (`operator T *()`), which is inlined; what it returns keeps its origin's address space
    /// (an `extern __shared__` array's address is a shared pointer).
    pub(super) fn class_conversion(&mut self, n: Node, f: Node, arg_nodes: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let layout = match f.kind() {
            "template_function" => instantiate(self.unit, f, &self.tmpl),
            "identifier" | "type_identifier" => self.unit.layout(self.text(f)),
            _ => None,
        };
        let Some(layout) = layout else { return Ok(None) };
        let key = self.method_key(&layout.name, CONVERSION, 0);
        let Some(def) = self.unit.device_fns.get(key.as_str()).copied() else { return Ok(None) };
        if !arg_nodes.is_empty() || !layout.fields.is_empty() {
            return Err(self.unsupported(
                n,
                "a temporary of a class with members or constructor arguments used through its conversion operator",
            ));
        }
        let this = StructVal { name: layout.name.clone(), fields: Vec::new() };
        let saved = self.tmpl.clone();
        for (k, v) in layout.targs.clone() {
            self.tmpl.insert(k, v);
        }
        let r = self.inline_device(n, &key, def, &[], None, Some(this));
        self.tmpl = saved;
        r.map(Some)
    }

    /// `Class<A, B>::run(args)`: a static member function, inlined with the class's template
    /// arguments bound and no object.
    pub(super) fn static_method_call(&mut self, n: Node, f: Node, arg_nodes: &[Node]) -> Result<Option<(Expr, Ty)>> {
        // The innermost scope naming a class: `ns::C<4>::run` has `C<4>` inside `ns::`.
        let mut q = f;
        while let Some(inner) = q.child_by_field_name("name").filter(|x| x.kind() == "qualified_identifier") {
            q = inner;
        }
        let (Some(scope), Some(member)) = (q.child_by_field_name("scope"), q.child_by_field_name("name")) else {
            return Ok(None);
        };
        // No object: the class's template arguments are all it needs (not its layout).
        let (class, targs) = match scope.kind() {
            "template_type" => match class_template_args(self.unit, scope, &self.tmpl) {
                Some((key, targs, _)) => (key, targs),
                None => return Ok(None),
            },
            "namespace_identifier" | "type_identifier" => {
                let name = self.text(scope);
                // A typedef or a type parameter naming a class template's instance (`f128::zeros()`
                // with `typedef Packed128<float> f128;`): the instance and its arguments.
                let aliased = match self.tmpl.get(name) {
                    Some(TemplateArg::Type(t)) => Some(t.clone()),
                    _ => self.unit.typedefs.get(name).cloned(),
                };
                match aliased.as_ref().and_then(struct_name) {
                    Some(sname) => {
                        let targs = self.unit.layout(sname).map(|l| l.targs).unwrap_or_default();
                        (sname.to_string(), targs)
                    }
                    None => (name.to_string(), Vec::new()),
                }
            }
            _ => return Ok(None),
        };
        let key = self.method_key(&class, self.text(member), arg_nodes.len());
        let Some(def) = self.unit.device_fns.get(key.as_str()).copied() else { return Ok(None) };
        // The class's integer parameters are names in its functions' scope.
        let consts = targs
            .iter()
            .filter_map(|(k, v)| match v {
                TemplateArg::Int(i) => Some((k.clone(), Sym::Const(*i, IntTy::I32))),
                _ => None,
            })
            .collect();
        let saved = self.tmpl.clone();
        for (k, v) in targs {
            self.tmpl.insert(k, v);
        }
        let scope = StructVal { name: class, fields: consts };
        let r = self.inline_device(n, &key, def, arg_nodes, None, Some(scope));
        self.tmpl = saved;
        r.map(Some)
    }

    /// Whether `obj[i]` calls the class's `operator[]`: `obj` is a structure (not an array of
    /// them, nor an array member such as `box.nei` of `nei_str nei[26]`) whose class defines one.
    fn subscript_calls_operator(&self, obj: Node) -> bool {
        if self.is_array_name(obj) {
            return false;
        }
        let class = match self.member_sym(obj) {
            Some(Sym::Struct(v)) => v.name,
            _ => match struct_name(&self.peek_type(obj)) {
                Some(c) => c.to_string(),
                None => return false,
            },
        };
        let key = self.method_key(&class, "operator[]", 1);
        self.unit.device_fns.contains_key(key.as_str())
    }

    /// `obj[i]` where `obj` is a structure with `operator[]`.
    pub(super) fn subscript_operator(&mut self, n: Node) -> Result<Option<(Expr, Ty)>> {
        let Some(obj) = n.child_by_field_name("argument") else { return Ok(None) };
        if !self.subscript_calls_operator(obj) {
            return Ok(None);
        }
        let Some(idx) = n.child_by_field_name("indices") else { return Ok(None) };
        let mut c = idx.walk();
        let items: Vec<Node> = idx.named_children(&mut c).collect();
        self.call_member(n, obj, ".", "operator[]", &items, None)
    }

    /// `obj[i] = v` through `operator[]`: a reference it returns names memory or the thread's
    /// own object; a value it returns is an element of an object in registers (a register
    /// too) and cannot be assigned on an object in memory.
    pub(super) fn subscript_operator_place(&mut self, n: Node) -> Result<Option<Place>> {
        let Some(obj) = n.child_by_field_name("argument") else { return Ok(None) };
        if !self.subscript_calls_operator(obj) {
            return Ok(None);
        }
        let in_regs = matches!(self.member_sym(obj), Some(Sym::Struct(_)));
        if !in_regs && struct_name(&self.peek_type(obj)).is_none() {
            return Ok(None);
        }
        match self.reference_place(n, |l| l.subscript_operator(n))? {
            None => Err(self.unsupported(n, "this subscript")),
            Some(Ok(p)) => Ok(Some(p)),
            Some(Err((e, t))) if in_regs => {
                self.pending_eval(e);
                Ok(Some(Place::ThreadArray(t)))
            }
            Some(Err(_)) => Err(self.unsupported(
                n,
                "assigning through an `operator[]` that returns a value, of an object in memory (assign to its member array instead)",
            )),
        }
    }

    /// `obj.size` or `Type::size` for a `static constexpr` member.
    pub(super) fn static_member(&self, scope_ty: &Ty, name: &str) -> Option<(Expr, Ty)> {
        let l = self.unit.layout(struct_name(scope_ty)?)?;
        let v = l.consts.iter().find(|(c, _)| c == name)?.1;
        Some((Expr::Int(v, IntTy::U64), Ty::Int(IntTy::U64)))
    }

    /// `memcpy` between registers (a packed class's payload and an `int4`): no memory moves.
    /// Anything else is refused.
    pub(super) fn register_memcpy(&mut self, n: Node, args: &[Node]) -> Result<(Expr, Ty)> {
        // The copy moves no memory, but the value copied is used (a load that filled the
        // source is not dead): the result reads the source's locals.
        let mut read = Vec::new();
        for (i, a) in args.iter().take(2).enumerate() {
            let a = unparen(*a);
            let target = if a.kind() == "pointer_expression"
                && a.child_by_field_name("operator").map(|o| self.text(o)) == Some("&")
            {
                a.child_by_field_name("argument").map(unparen)
            } else if a.kind() == "identifier" && matches!(self.lookup(self.text(a)), Some(Sym::LocalArray(..))) {
                // A thread's own array by name: it decays to its address.
                Some(a)
            } else {
                None
            };
            let local = target.is_some_and(|t| {
                t.kind() == "identifier"
                    && matches!(self.lookup(self.text(t)), Some(Sym::Local(..) | Sym::LocalArray(..) | Sym::Struct(_)))
            });
            if !local {
                return Err(self.unsupported(n, "`memcpy` to or from memory (copy element by element)"));
            }
            if let (1, Some(Sym::Local(id, _))) = (i, target.and_then(|t| self.lookup(self.text(t)).cloned())) {
                read.push(Expr::Local(id));
            }
        }
        if read.is_empty() {
            return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
        }
        Ok((Expr::Opaque { args: read, what: LOCAL_ARRAY.into() }, Ty::Void))
    }

    /// An array of structures by name (`arr[i]` indexes it, no `operator[]`).
    fn is_array_name(&self, obj: Node) -> bool {
        let obj = unparen(obj);
        obj.kind() == "identifier"
            && matches!(self.lookup(self.text(obj)), Some(Sym::Opaque(..) | Sym::LocalArray(..) | Sym::Shared(_)))
    }

    /// A type named by a lone identifier (`sizeof(uint)`, `(clock_t)x` read as a call).
    pub(super) fn type_named(&self, n: Node) -> Option<Ty> {
        let n = unparen(n);
        if !matches!(n.kind(), "identifier" | "type_identifier" | "primitive_type") {
            return None;
        }
        let name = self.text(n);
        if self.lookup(name).is_some() {
            return None;
        }
        match self.tmpl.get(name) {
            Some(TemplateArg::Type(t)) => Some(t.clone()),
            _ => self
                .unit
                .typedefs
                .get(name)
                .cloned()
                .or_else(|| self.unit.layout(name).map(|l| l.ty()))
                .or_else(|| named_type(name)),
        }
    }

    /// How the compiler moves a whole structure in memory that is not one vector access: in
    /// pieces of its alignment (at most 16 bytes), padding included, as nvcc 13.0 did on the
    /// H200 for 12 bytes of floats (3 x 4), 16 bytes aligned 8 (2 x 8), 5 chars (5 x 1) and 24
    /// bytes of doubles (3 x 8) (`validate/probes/compiled`). (piece bytes, pieces); `None` for
    /// anything moved in one access.
    pub(super) fn struct_pieces(&self, ty: &Ty) -> Option<(u64, u64)> {
        let l = self.unit.layout(struct_name(ty)?)?;
        if l.is_vector_like() || l.size == 0 {
            return None;
        }
        let piece = l.align.clamp(1, 16);
        Some((piece, l.size.div_ceil(piece)))
    }

    /// A whole-structure copy of more pieces than this is a loop in the compiler's code, not
    /// modelled.
    pub(super) fn check_struct_pieces(&self, ty: &Ty, at: Node) -> Result<()> {
        match self.struct_pieces(ty) {
            Some((piece, n)) if n > MAX_STRUCT_PIECES => Err(self.unsupported(
                at,
                &format!("copying a whole structure of {n} pieces of {piece} bytes (the compiler copies it in a loop; copy its members)"),
            )),
            _ => Ok(()),
        }
    }
}

/// A `continue` that would leave the switch (not inside a loop within it).
fn has_loose_continue(n: Node) -> bool {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        match x.kind() {
            "continue_statement" => return true,
            "for_statement" | "while_statement" | "do_statement" | "for_range_loop" => continue,
            _ => {}
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    false
}
