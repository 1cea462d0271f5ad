//! Value types of the toolkit and the standard library held in registers: `dim3` (and `uint3`
//! initialised from a builtin) and `std::pair`. Each becomes a structure in registers member by
//! member ([`Sym::Struct`]), so `d.x`, `pr.first` are the values assigned, exactly.

use super::*;

impl Lowerer<'_, '_> {
    /// `dim3 d = blockDim;`, `dim3 e(4, 2);`, `uint3 t = threadIdx;`,
    /// `std::pair<int, float> p = std::make_pair(a, b);`, `auto p = std::make_pair(a, b);`:
    /// `true` when the declaration was lowered here.
    pub(in crate::front::cuda::lower) fn value_type_declaration(
        &mut self,
        n: Node,
        out: &mut Vec<Stmt>,
    ) -> Result<bool> {
        let Some(t) = n.child_by_field_name("type") else { return Ok(false) };
        let tname: String = self.text(t).chars().filter(|c| !c.is_whitespace()).collect();
        let tname = tname.trim_start_matches("::").to_string();
        let mut c = n.walk();
        let decls: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        let kind = if tname == "dim3" && self.unit.layout("dim3").is_none() {
            Kind::Dim3
        } else if tname == "uint3" {
            // Only from a builtin or a `dim3` (a `uint3` loaded from memory is a vector access).
            let from_builtin = decls.iter().all(|d| {
                d.child_by_field_name("value").map(unparen).is_some_and(|v| {
                    v.kind() == "identifier"
                        && (matches!(self.text(v), "threadIdx" | "blockIdx" | "blockDim" | "gridDim")
                            && self.lookup(self.text(v)).is_none()
                            || matches!(self.lookup(self.text(v)), Some(Sym::Struct(s)) if s.name == "dim3"))
                })
            });
            if decls.is_empty() || !from_builtin {
                return Ok(false);
            }
            Kind::Uint3
        } else if tname.starts_with("std::pair<") || tname.starts_with("pair<") {
            Kind::Pair
        } else if tname == "auto" {
            // `auto p = std::make_pair(a, b);`
            let all = decls.iter().all(|d| {
                d.kind() == "init_declarator"
                    && d.child_by_field_name("value").is_some_and(|v| self.make_pair_args(v).is_some())
            });
            if decls.is_empty() || !all {
                return Ok(false);
            }
            Kind::Pair
        } else {
            return Ok(false);
        };
        if self.quals(n).contains(&"__shared__") {
            return Ok(false);
        }
        // Members' declared types (a pair's from its template arguments).
        let pair_tys = if kind == Kind::Pair && tname != "auto" {
            let args = t
                .child_by_field_name("arguments")
                .or_else(|| t.child_by_field_name("name").and_then(|x| x.child_by_field_name("arguments")));
            let tds: Vec<Node> = match args {
                Some(a) => {
                    let mut cc = a.walk();
                    let v: Vec<Node> = a.named_children(&mut cc).collect();
                    v
                }
                None => Vec::new(),
            };
            if tds.len() != 2 {
                return Err(self.unsupported(t, "this `std::pair` type"));
            }
            Some((self.type_descriptor(tds[0])?, self.type_descriptor(tds[1])?))
        } else {
            None
        };
        for d in decls {
            let (target, init) = match d.kind() {
                "init_declarator" => (d.child_by_field_name("declarator"), d.child_by_field_name("value")),
                _ => (Some(d), None),
            };
            let Some(target) = target.filter(|x| x.kind() == "identifier") else {
                return Err(self.unsupported(d, "this declarator of a value type"));
            };
            let name = self.text(target).to_string();
            let vals: Vec<(Expr, Ty)> = match kind {
                Kind::Dim3 | Kind::Uint3 => self.dim3_values(kind, init, d)?,
                Kind::Pair => {
                    let args = match init {
                        Some(i) => self.make_pair_args(i).or_else(|| list_items(i)),
                        None => None,
                    };
                    let Some(args) = args.filter(|a| a.len() == 2) else {
                        return Err(self.unsupported(d, "a `std::pair` not built from two values"));
                    };
                    let mut v = Vec::new();
                    for a in args {
                        v.push(self.expr(a)?);
                    }
                    v
                }
            };
            let names: &[&str] = if kind == Kind::Pair { &["first", "second"] } else { &["x", "y", "z"] };
            let mut fields = Vec::new();
            for (k, (e, et)) in vals.into_iter().enumerate() {
                let ty = match (&pair_tys, k) {
                    (Some((a, _)), 0) => a.clone(),
                    (Some((_, b)), _) => b.clone(),
                    (None, _) if kind != Kind::Pair => Ty::Int(IntTy::U32),
                    (None, _) => et.clone(),
                };
                let e = self.convert(e, &et, &ty, d)?;
                let ty = self.with_origin(ty, &et);
                let id = self.builder.local(&format!("{name}.{}", names[k]), ty.clone());
                self.builder.pending.push(Stmt::Assign { local: id, value: e, span: self.span(d) });
                fields.push((names[k].to_string(), Sym::Local(id, ty)));
            }
            self.flush(out);
            let sname = if kind == Kind::Pair { "std::pair" } else { "dim3" };
            self.scopes.last_mut().unwrap().insert(name, Sym::Struct(StructVal { name: sname.into(), fields }));
        }
        Ok(true)
    }

    /// x, y, z of a `dim3`/`uint3` initialiser: a builtin (`threadIdx`), another such variable,
    /// `dim3(a, b)`, `{a, b}`, `(a, b)`; a `dim3` without one is (1, 1, 1).
    fn dim3_values(&mut self, kind: Kind, init: Option<Node>, d: Node) -> Result<Vec<(Expr, Ty)>> {
        let u32t = Ty::Int(IntTy::U32);
        let Some(i) = init.map(unparen) else {
            if kind == Kind::Uint3 {
                return Err(self.unsupported(d, "a `uint3` without an initializer"));
            }
            return Ok(vec![(Expr::Int(1, IntTy::U32), u32t.clone()); 3]);
        };
        if i.kind() == "identifier" {
            let b = match self.text(i) {
                "threadIdx" => Some(Builtin::ThreadIdx as fn(u8) -> Builtin),
                "blockIdx" => Some(Builtin::BlockIdx as fn(u8) -> Builtin),
                "blockDim" => Some(Builtin::BlockDim as fn(u8) -> Builtin),
                "gridDim" => Some(Builtin::GridDim as fn(u8) -> Builtin),
                _ => None,
            };
            if let (Some(b), None) = (b, self.lookup(self.text(i))) {
                return Ok((0..3).map(|k| (Expr::Builtin(b(k)), u32t.clone())).collect());
            }
            if let Some(Sym::Struct(v)) = self.lookup(self.text(i)).cloned() {
                if v.name == "dim3" {
                    let mut out = Vec::new();
                    for (_, s) in &v.fields {
                        out.push(self.sym_value(s.clone(), i)?);
                    }
                    return Ok(out);
                }
            }
        }
        let items = match i.kind() {
            "argument_list" | "initializer_list" => list_items(i),
            "call_expression"
                if i.child_by_field_name("function")
                    .is_some_and(|f| self.text(f).trim_start_matches("::") == "dim3") =>
            {
                i.child_by_field_name("arguments").and_then(list_items)
            }
            _ => None,
        };
        let Some(items) = items.filter(|v| !v.is_empty() && v.len() <= 3) else {
            return Err(self.unsupported(i, "this initializer of a `dim3`/`uint3`"));
        };
        if kind == Kind::Uint3 && items.len() != 3 {
            return Err(self.unsupported(i, "this initializer of a `uint3`"));
        }
        let mut vals = Vec::new();
        for it in items {
            vals.push(self.expr(it)?);
        }
        while vals.len() < 3 {
            vals.push((Expr::Int(1, IntTy::U32), u32t.clone()));
        }
        Ok(vals)
    }

    /// The two arguments of `std::make_pair(a, b)` / `std::pair<A, B>(a, b)` / `make_pair(a, b)`.
    fn make_pair_args<'b>(&self, v: Node<'b>) -> Option<Vec<Node<'b>>> {
        let v = unparen(v);
        if v.kind() != "call_expression" {
            return None;
        }
        let f: String = self.text(v.child_by_field_name("function")?).chars().filter(|c| !c.is_whitespace()).collect();
        let f = f.trim_start_matches("::");
        let ok = f == "std::make_pair" || f == "make_pair" || f.starts_with("std::pair<") || f.starts_with("pair<");
        if !ok {
            return None;
        }
        list_items(v.child_by_field_name("arguments")?)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dim3,
    Uint3,
    Pair,
}

fn list_items(n: Node) -> Option<Vec<Node>> {
    if !matches!(n.kind(), "argument_list" | "initializer_list") {
        return None;
    }
    let mut c = n.walk();
    let v: Vec<Node> = n.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
    Some(v)
}
