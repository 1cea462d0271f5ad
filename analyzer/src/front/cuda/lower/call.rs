//! Calls: `__device__` functions (inlined), the GPU's intrinsics, math functions whose value is
//! not tracked, and the calls that are refused.

use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn call(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let f = n.child_by_field_name("function").ok_or_else(|| self.unsupported(n, "this call"))?;
        let args_node = n.child_by_field_name("arguments").ok_or_else(|| self.unsupported(n, "this call"))?;
        let mut c = args_node.walk();
        let arg_nodes: Vec<Node> = args_node.named_children(&mut c).filter(|a| a.kind() != "comment").collect();
        if let Some(r) = self.group_call(n, f, &arg_nodes)? {
            return Ok(r);
        }
        // Texture and surface reads and writes (`tex1Dfetch<float>(tex, i)`, `tex2D(texRef, x, y)`,
        // `surf2Dwrite(v, surf, x, y)`): memory operations of the texture pipeline.
        let callee = match f.kind() {
            "template_function" => f.child_by_field_name("name").map_or("", |x| self.text(x)),
            _ => self.text(f),
        };
        if texture::is_texture_call(callee) && !self.unit.device_fns.contains_key(callee) {
            return self.texture_call(n, f, callee, &arg_nodes);
        }
        // `ns::load<BM, BN>(..)`: a function template inside a namespace (not a class's member).
        let f = match f.kind() {
            "qualified_identifier" => {
                let mut q = f;
                while let Some(inner) = q.child_by_field_name("name").filter(|x| x.kind() == "qualified_identifier") {
                    q = inner;
                }
                let scope_is_namespace = q
                    .child_by_field_name("scope")
                    .is_some_and(|s| s.kind() == "namespace_identifier" && self.unit.layout(self.text(s)).is_none());
                // Only a template this file defines: the toolkit's (`cuda::aligned_size_t<16>`)
                // are known by their full names further on.
                let defined = |t: Node| {
                    t.child_by_field_name("name").is_some_and(|x| self.unit.device_fns.contains_key(self.text(x)))
                };
                match q.child_by_field_name("name").filter(|x| x.kind() == "template_function") {
                    Some(t) if scope_is_namespace && defined(t) => t,
                    _ => f,
                }
            }
            _ => f,
        };
        // C++ casts: static_cast<T>(x) and friends.
        if f.kind() == "template_function" {
            let name = f.child_by_field_name("name").map(|x| self.text(x)).unwrap_or("");
            if matches!(name, "static_cast" | "reinterpret_cast" | "const_cast") && arg_nodes.len() == 1 {
                let targs = f.child_by_field_name("arguments").ok_or_else(|| self.unsupported(f, "this cast"))?;
                let mut cc = targs.walk();
                let td = targs.named_children(&mut cc).next().ok_or_else(|| self.unsupported(f, "this cast"))?;
                let ty = self.type_descriptor(td)?;
                let (e, et) = self.expr(arg_nodes[0])?;
                let e = self.convert(e, &et, &ty, n)?;
                return Ok((e, self.with_origin(ty, &et)));
            }
            // An explicit specialization for these arguments (`template <> float
            // convolutionRow<-1>(...)`, which ends a compile-time recursion) wins over the template.
            if let Some((fname, def)) = self.explicit_specialization(name, f.child_by_field_name("arguments")) {
                return self.inline_device(n, &fname, def, &arg_nodes, None, None);
            }
            // A function template called with explicit arguments: `load<float, 4>(p)`; among
            // overloads of one name, the one whose parameters fit the arguments.
            let picked = match self.tmpl.get(name) {
                Some(TemplateArg::Func(_)) => None,
                _ => self.pick_overload(name, &arg_nodes).map(|(f, d, _)| (f, d)),
            };
            if let Some((fname, def)) = picked.or_else(|| self.resolve_function(name)) {
                let explicit = f.child_by_field_name("arguments");
                return self.inline_device(n, &fname, def, &arg_nodes, explicit, None);
            }
            if let Some(r) = self.class_conversion(n, f, &arg_nodes)? {
                return Ok(r);
            }
            return Err(self.unsupported(n, "a call to a template function not defined in this file"));
        }
        // `(clock_t)(x)`, `(uint)(v)`: a cast the grammar reads as a call of `(type)`.
        if f.kind() == "parenthesized_expression" && arg_nodes.len() == 1 {
            if let Some(ty) = self.type_named(f) {
                let (e, et) = self.expr(arg_nodes[0])?;
                let e = self.convert(e, &et, &ty, n)?;
                return Ok((e, self.with_origin(ty, &et)));
            }
        }
        if f.kind() == "field_expression" {
            if let Some(r) = self.method_call(n, f, &arg_nodes)? {
                return Ok(r);
            }
            // `z.real()`, `z.imag()` of a library complex value (a `float2` or `double2` here).
            let field = f.child_by_field_name("field").map(|x| self.text(x));
            if let (Some("real" | "imag"), true, Some(obj)) =
                (field, arg_nodes.is_empty(), f.child_by_field_name("argument"))
            {
                let (e, t) = self.expr(obj)?;
                if let Some(elem) = complex_element(&t) {
                    return Ok((Expr::Opaque { args: vec![e], what: "complex part".into() }, elem));
                }
            }
        }
        if f.kind() == "qualified_identifier" {
            if let Some(r) = self.numeric_limits_call(f, &arg_nodes)? {
                return Ok(r);
            }
            if let Some(r) = self.static_method_call(n, f, &arg_nodes)? {
                return Ok(r);
            }
        }
        // A lambda called where it is defined, or through the name it was bound to.
        let range = match f.kind() {
            "lambda_expression" => Some((f.start_byte(), f.end_byte())),
            "identifier" => match self.lookup(self.text(f)) {
                Some(Sym::Lambda(i)) => self.lambdas.get(*i).map(|l| (l.0, l.1)),
                _ => None,
            },
            _ => None,
        };
        let lambda = range
            .and_then(|(a, b)| self.unit.root.and_then(|r| r.descendant_for_byte_range(a, b)))
            .filter(|l| l.kind() == "lambda_expression");
        if let Some(l) = lambda {
            return self.inline_lambda(n, l, &arg_nodes);
        }
        if f.kind() == "identifier" {
            match self.lookup(self.text(f)).cloned() {
                // A function object: its `operator()`.
                Some(Sym::Struct(_)) => {
                    if let Some(r) = self.call_member(n, f, ".", "operator()", &arg_nodes, None)? {
                        return Ok(r);
                    }
                }
                Some(Sym::Func(name)) => {
                    if let Some((fname, def)) = self.resolve_function(&name) {
                        return self.inline_device(n, &fname, def, &arg_nodes, None, None);
                    }
                }
                // `op(a, b)` of `thrust::plus<float>()`, `cub::Max()`: arithmetic in registers.
                Some(Sym::Opaque(ty, _)) if functor_name(&ty).is_some() => {
                    let mut args = Vec::new();
                    let mut ty = Ty::Void;
                    for a in &arg_nodes {
                        let (e, t) = self.expr(*a)?;
                        args.push(e);
                        ty = if is_void(&ty) { t } else { self.common(&ty, &t) };
                    }
                    let what = functor_name(&ty).unwrap_or_default().to_string();
                    if is_comparison_functor(&what) {
                        ty = Ty::Int(IntTy::BOOL);
                    }
                    return Ok((Expr::Opaque { args, what }, ty));
                }
                _ => {}
            }
        }
        let name = self.text(f);
        let typedef = self.unit.typedefs.get(name).cloned().or_else(|| match self.tmpl.get(name) {
            Some(TemplateArg::Type(t)) => Some(t.clone()),
            _ => None,
        });
        if let (Some(ty), 1) = (typedef, arg_nodes.len()) {
            // Functional cast through a typedef or template type: `floatX(v)`, `T(0)`.
            let (e, et) = self.expr(arg_nodes[0])?;
            let e = self.convert(e, &et, &ty, n)?;
            return Ok((e, self.with_origin(ty, &et)));
        }
        if f.kind() == "primitive_type" || named_type(name).is_some() {
            // Functional cast `float(x)`, `int(x)`.
            if arg_nodes.len() == 1 {
                let ty = named_type(name).ok_or_else(|| self.unsupported(f, "this cast"))?;
                let (e, et) = self.expr(arg_nodes[0])?;
                return Ok((self.convert(e, &et, &ty, n)?, ty));
            }
        }
        let cache = match name {
            "__ldg" => Some(CacheOp::Nc),
            "__ldca" => Some(CacheOp::Ca),
            "__ldcg" => Some(CacheOp::Cg),
            "__ldcs" => Some(CacheOp::Cs),
            "__ldlu" => Some(CacheOp::Lu),
            "__ldcv" => Some(CacheOp::Cv),
            _ => None,
        };
        if let Some(cache) = cache {
            if arg_nodes.len() != 1 {
                return Err(self.unsupported(n, &format!("`{name}` with {} arguments", arg_nodes.len())));
            }
            let (p, pt) = self.expr(arg_nodes[0])?;
            let Ty::Ptr(pt) = pt else { return Err(self.unsupported(n, &format!("`{name}` of a non-pointer"))) };
            let op = self.builder.memory_operation(
                AccessKind::Load,
                pt.space,
                pt.pointee.size(),
                cache,
                cache == CacheOp::Cv,
                self.text(n),
                self.span(n),
            );
            return Ok((Expr::Load { op, addr: Box::new(p) }, pt.pointee.clone()));
        }
        let store_cache = match name {
            "__stcg" => Some(CacheOp::Cg),
            "__stcs" => Some(CacheOp::Cs),
            "__stwt" => Some(CacheOp::Wt),
            "__stwb" => Some(CacheOp::Default),
            _ => None,
        };
        if let Some(cache) = store_cache {
            if arg_nodes.len() != 2 {
                return Err(self.unsupported(n, &format!("`{name}` with {} arguments", arg_nodes.len())));
            }
            if self.no_hoist > 0 {
                return Err(self.unsupported(n, "a store inside a condition"));
            }
            let (p, pt) = self.expr(arg_nodes[0])?;
            let (v, vt) = self.expr(arg_nodes[1])?;
            let Ty::Ptr(pt) = pt else { return Err(self.unsupported(n, &format!("`{name}` to a non-pointer"))) };
            let v = self.convert(v, &vt, &pt.pointee, n)?;
            let op = self.builder.memory_operation(
                AccessKind::Store,
                pt.space,
                pt.pointee.size(),
                cache,
                false,
                self.text(n),
                self.span(n),
            );
            self.builder.pending.push(Stmt::Store { op, addr: p, value: v });
            return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
        }
        if f.kind() == "identifier" {
            if let Some((key, def, object)) = self.sibling_method(name, arg_nodes.len()) {
                return self.inline_device(n, &key, def, &arg_nodes, None, Some(object));
            }
        }
        // A definition of the file that certainly fits shadows the toolkit's function of that
        // name (`fminf(float2, float2)`); an uncertain one only stands in for a missing one.
        let overload = match self.tmpl.get(name) {
            Some(TemplateArg::Func(_)) => self.resolve_function(name).map(|(f, d)| (f, d, true)),
            _ => self.pick_overload(name, &arg_nodes),
        };
        if let Some((fname, def, true)) = overload {
            return self.inline_device(n, &fname, def, &arg_nodes, None, None);
        }
        if let Some(r) = self.gpu_call(n, name, &arg_nodes)? {
            return Ok(r);
        }
        if self.is_barrier(n) {
            return Err(self.unsupported(n, "a barrier inside an expression"));
        }
        if !matches!(name, "min" | "max") || self.unit.device_fns.contains_key(name) {
            if let Some((fname, def, _)) = overload {
                return self.inline_device(n, &fname, def, &arg_nodes, None, None);
            }
            // Not one of the file's free functions (a method named by its class, say).
            if !self.unit.overloads.contains_key(name) && !self.unit.overloads.contains_key(cpp::last_segment(name)) {
                if let Some((fname, def)) = self.resolve_function(name) {
                    return self.inline_device(n, &fname, def, &arg_nodes, None, None);
                }
            }
        }
        if let Some(r) = self.out_param_math(n, name, &arg_nodes)? {
            self.trig_note(n, name, &r.0);
            return Ok(r);
        }
        if name == "memcpy" && arg_nodes.len() == 3 {
            return self.register_memcpy(n, &arg_nodes);
        }
        // `memset(state, 0, sizeof(state))` of the thread's own array or object: registers or
        // local memory, no global or shared traffic; its contents are no longer tracked.
        if name == "memset" && arg_nodes.len() == 3 {
            if let Some(sym) = self.own_pointer_init(arg_nodes[0])? {
                for a in &arg_nodes[1..] {
                    let (e, _) = self.expr(*a)?;
                    self.pending_eval(e);
                }
                if let Sym::LocalPtr(inner) = sym {
                    self.forget_object(&inner, self.span(n));
                }
                return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
            }
        }
        let mut args = Vec::new();
        let mut tys = Vec::new();
        for a in &arg_nodes {
            let (e, t) = self.expr(*a)?;
            args.push(e);
            tys.push(t);
        }
        // `std::abs`, `::fabsf`, `cuda::std::max`: the C library's names, qualified.
        let name = match name.trim_start_matches("::").trim_start_matches("cuda::").strip_prefix("std::") {
            Some(last)
                if matches!(last, "abs" | "min" | "max" | "llabs" | "labs") || known_function(last).is_some() =>
            {
                last
            }
            _ => name,
        };
        // `<stdint.h>`'s constant macros, when the header was not read: the literal of the type.
        let literal_ty = match name {
            "INT8_C" | "INT16_C" | "INT32_C" | "UINT8_C" | "UINT16_C" => Some(IntTy::I32),
            "UINT32_C" => Some(IntTy::U32),
            "INT64_C" | "INTMAX_C" => Some(IntTy::I64),
            "UINT64_C" | "UINTMAX_C" => Some(IntTy::U64),
            _ => None,
        };
        if let (Some(t), 1) = (literal_ty, args.len()) {
            let a = self.convert(args.pop().unwrap(), &tys[0], &Ty::Int(t), n)?;
            return Ok((a, Ty::Int(t)));
        }
        match name {
            "min" | "max" | "umin" | "umax" | "llmin" | "llmax" | "ullmin" | "ullmax" | "std::min" | "std::max"
                if args.len() == 2 =>
            {
                let op = if name.ends_with("min") { BinOp::Min } else { BinOp::Max };
                let ty = self.common(&tys[0], &tys[1]);
                let b = self.convert(args.pop().unwrap(), &tys[1], &ty, n)?;
                let a = self.convert(args.pop().unwrap(), &tys[0], &ty, n)?;
                return Ok(match ty {
                    Ty::Int(t) => {
                        (Expr::Binary { op, ty: t, lhs: Box::new(a), rhs: Box::new(b), span: self.span(n) }, ty)
                    }
                    _ => (Expr::FloatBinary { op, lhs: Box::new(a), rhs: Box::new(b) }, ty),
                });
            }
            "fminf" | "fmaxf" | "fmin" | "fmax" if args.len() == 2 => {
                let op = if name.starts_with("fmin") { BinOp::Min } else { BinOp::Max };
                let ty = if name.ends_with('f') { Ty::Float(4) } else { Ty::Float(8) };
                let b = self.convert(args.pop().unwrap(), &tys[1], &ty, n)?;
                let a = self.convert(args.pop().unwrap(), &tys[0], &ty, n)?;
                return Ok((Expr::FloatBinary { op, lhs: Box::new(a), rhs: Box::new(b) }, ty));
            }
            // `abs(x)` of a floating-point value: std::abs, its magnitude (data).
            "abs" if args.len() == 1 && matches!(tys[0], Ty::Float(_)) => {
                return Ok((Expr::Opaque { args, what: "fabs()".into() }, tys[0].clone()));
            }
            "abs" | "llabs" | "labs" if args.len() == 1 => {
                if let Ty::Int(t) = tys[0] {
                    let t = promote(t);
                    let a = self.convert(args.pop().unwrap(), &tys[0], &Ty::Int(t), n)?;
                    let neg = Expr::Binary {
                        op: BinOp::Lt,
                        ty: t,
                        lhs: Box::new(a.clone()),
                        rhs: Box::new(Expr::Int(0, t)),
                        span: self.span(n),
                    };
                    let minus = Expr::Unary { op: UnOp::Neg, ty: t, arg: Box::new(a.clone()) };
                    return Ok((
                        Expr::Select { cond: Box::new(neg), then: Box::new(minus), els: Box::new(a) },
                        Ty::Int(t),
                    ));
                }
            }
            _ => {}
        }
        // `thrust::complex<float>(c, s)`, `thrust::conj(z)`, `thrust::abs(z)`: values in registers.
        if let Some(ty) = cpp::library_complex(self.text(f), &self.tmpl) {
            return Ok((Expr::Opaque { args, what: "complex value".into() }, ty));
        }
        if let Some(ty) = complex_function(name, &tys) {
            return Ok((Expr::Opaque { args, what: format!("{name}()") }, ty));
        }
        let name = match name.rsplit_once("::") {
            Some((_, last)) if known_function(name).is_none() => last.trim(),
            _ => name,
        };
        if let Some(ty) = known_function(name) {
            let e = Expr::Opaque { args, what: format!("{name}()") };
            self.trig_note(n, name, &e);
            return Ok((e, ty));
        }
        if matches!(name, "malloc" | "free" | "cudaMalloc" | "cudaFree" | "realloc" | "calloc") {
            return Err(device_heap(self.span(n), self.text(n)));
        }
        if self.text(f).contains("wmma::") {
            return Err(cpp::wmma_refusal(self.span(n), &format!("call to `{}`", self.text(f))));
        }
        if self.unit.layout(name).is_some() {
            return Err(self.unsupported(
                n,
                &format!("a temporary `{name}(...)` outside a declaration (declare it: `{name} t(...);`)"),
            ));
        }
        if let Some(d) = intrinsics::device_side_launch(self.text(n), name, self.span(n)) {
            return Err(d);
        }
        Err(Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(n),
            format!("call to `{name}`: not a __device__ function of this file nor a known CUDA function"),
        ))
    }
}

impl Lowerer<'_, '_> {
    /// nvcc's `sinf`, `cosf`, `tanf`, `sincosf` (and the double ones) reduce a large argument
    /// on a slow path that reads a table from global memory and uses local memory; the sheet
    /// counts the fast path and says so, unless the argument is a constant.
    fn trig_note(&mut self, n: Node, name: &str, call: &Expr) {
        const TRIG: &[&str] = &["sinf", "cosf", "tanf", "sincosf", "sin", "cos", "tan", "sincos"];
        if !TRIG.contains(&name) {
            return;
        }
        let constant = match call {
            Expr::Opaque { args, .. } => args.first().is_some_and(|a| fold_constant(a).is_some()),
            _ => false,
        };
        if constant {
            return;
        }
        let at = self.span(n);
        let (line, col) = (at.line, at.column);
        let bound = if name.ends_with('f') { "past ±105,615" } else { "a very large one" };
        let note = format!(
            "`{name}` at {line}:{col}: its argument is assumed small enough for nvcc's fast path, which moves no memory; a larger one ({bound}) takes the slow path, which reads a table from global memory and uses local memory"
        );
        if !self.builder.kernel.notes.contains(&note) {
            self.builder.kernel.notes.push(note);
        }
    }

    /// `std::numeric_limits<float>::infinity()`, `numeric_limits<int>::max()`.
    fn numeric_limits_call(&self, f: Node, arg_nodes: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let mut q = f;
        while let Some(inner) = q.child_by_field_name("name").filter(|x| x.kind() == "qualified_identifier") {
            q = inner;
        }
        let (Some(scope), Some(member)) = (q.child_by_field_name("scope"), q.child_by_field_name("name")) else {
            return Ok(None);
        };
        if !arg_nodes.is_empty()
            || scope.kind() != "template_type"
            || scope.child_by_field_name("name").map(|x| self.text(x)) != Some("numeric_limits")
        {
            return Ok(None);
        }
        let Some(td) = scope.child_by_field_name("arguments").and_then(|a| a.named_child(0)) else { return Ok(None) };
        let ty = self.type_descriptor(td)?;
        Ok(numeric_limit(&ty, self.text(member)))
    }
}

pub(super) fn known_function(name: &str) -> Option<Ty> {
    // The SIMD video intrinsics on packed halves and bytes (`__vabs2`, `__vmaxs4`, `__vadd2`,
    // `__vcmpeq4`, `__vsads2`, ...): unsigned int values, computed in registers.
    if let Some(op) = name.strip_prefix("__v").and_then(|r| r.strip_suffix(['2', '4'])) {
        if !op.is_empty() && op.chars().all(|c| c.is_ascii_lowercase()) {
            return Some(Ty::Int(IntTy::U32));
        }
    }
    // The conversions with a rounding mode (`__double2int_rd`, `__int2float_ru`,
    // `__float2ull_rz`, `__ll2double_rn`): values of the destination type.
    if let Some((from, to)) = name
        .strip_prefix("__")
        .and_then(|r| r.strip_suffix(["_rn", "_rz", "_ru", "_rd"].iter().find(|m| r.ends_with(**m))?))
        .and_then(|r| r.split_once('2'))
    {
        let scalar = ["int", "uint", "ll", "ull", "float", "double"];
        if scalar.contains(&from) {
            match to {
                "int" => return Some(Ty::Int(IntTy::I32)),
                "uint" => return Some(Ty::Int(IntTy::U32)),
                "ll" => return Some(Ty::Int(IntTy::I64)),
                "ull" => return Some(Ty::Int(IntTy::U64)),
                "float" => return Some(Ty::Float(4)),
                "double" => return Some(Ty::Float(8)),
                _ => {}
            }
        }
    }
    const FLOAT: &[&str] = &[
        "sqrtf",
        "rsqrtf",
        "expf",
        "exp2f",
        "exp10f",
        "expm1f",
        "logf",
        "log2f",
        "log10f",
        "log1pf",
        "powf",
        "sinf",
        "cosf",
        "tanf",
        "tanhf",
        "sinhf",
        "coshf",
        "asinf",
        "acosf",
        "atanf",
        "atan2f",
        "erff",
        "erfcf",
        "fabsf",
        "floorf",
        "ceilf",
        "roundf",
        "truncf",
        "rintf",
        "fmaf",
        "fmodf",
        "cbrtf",
        "hypotf",
        "__expf",
        "__logf",
        "__sinf",
        "__cosf",
        "__powf",
        "__fdividef",
        "__frcp_rn",
        "__fsqrt_rn",
        "__fadd_rn",
        "__fmul_rn",
        "__fmaf_rn",
        "__fsub_rn",
        "__saturatef",
        "copysignf",
        "__int2float_rn",
        "__uint2float_rn",
        "__half2float",
        "__bfloat162float",
        "normcdff",
        "sincosf",
        "__tanhf",
        "__exp2f",
        "__log2f",
        "__log10f",
        "__tanf",
        "__exp10f",
        "__frsqrt_rn",
        "__fdiv_rn",
        "__fdiv_rz",
        "__fsqrt_rz",
        "__fadd_rz",
        "__fmul_rz",
        "__fmaf_rz",
        "__int_as_float",
        "__uint_as_float",
        "__ll2float_rn",
        "__double2float_rn",
        "fdividef",
        "asinhf",
        "acoshf",
        "atanhf",
        "erfinvf",
        "erfcinvf",
        "lgammaf",
        "tgammaf",
        "nearbyintf",
        "remainderf",
        "fdimf",
        "sinpif",
        "cospif",
        "rcbrtf",
        "normcdfinvf",
        "logbf",
        "ldexpf",
        "scalbnf",
    ];
    const DOUBLE: &[&str] = &[
        "sqrt",
        "rsqrt",
        "exp",
        "exp2",
        "log",
        "log2",
        "log10",
        "pow",
        "sin",
        "cos",
        "tan",
        "tanh",
        "erf",
        "fabs",
        "floor",
        "ceil",
        "round",
        "trunc",
        "fma",
        "fmod",
        "cbrt",
        "hypot",
        "__dadd_rn",
        "__dmul_rn",
        "__fma_rn",
        "__drcp_rn",
        "__ddiv_rn",
        "__dsqrt_rn",
        "__longlong_as_double",
        "__hiloint2double",
        "__int2double_rn",
        "__uint2double_rn",
        "__ll2double_rn",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "asinh",
        "acosh",
        "atanh",
        "exp10",
        "expm1",
        "log1p",
        "erfc",
        "erfinv",
        "copysign",
        "rint",
        "nearbyint",
        "rcbrt",
        "normcdf",
        "lgamma",
        "tgamma",
        "remainder",
        "fdim",
        "sinpi",
        "cospi",
        "ldexp",
    ];
    const INT: &[&str] = &[
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "__isnan",
        "__isinf",
        "__isnanf",
        "__isinff",
        "__finitef",
        "__popc",
        "__popcll",
        "__clz",
        "__clzll",
        "__ffs",
        "__ffsll",
        "__brev",
        "__brevll",
        "__float2int_rn",
        "__float2int_rz",
        "__float2int_rd",
        "__float2int_ru",
        "__double2int_rn",
        "__double2hiint",
        "__double2loint",
        "__mul24",
        "__umul24",
        "__mulhi",
        "__umulhi",
        "__ballot_sync",
        "__any_sync",
        "__all_sync",
        "__activemask",
        "__match_any_sync",
        "printf",
        "assert",
        "__trap",
        "__nanosleep",
        "__float2uint_rn",
        "__reduce_add_sync",
        "__reduce_min_sync",
        "__reduce_max_sync",
        "__lanemask_lt",
        "__prof_trigger",
        "__float_as_int",
        "__float_as_uint",
        "__double2uint_rn",
        "__double2int_rz",
        "__float2uint_rz",
        "__sad",
        "__usad",
        "__byte_perm",
        "__funnelshift_l",
        "__funnelshift_r",
        "__funnelshift_lc",
        "__funnelshift_rc",
        "__dp4a",
        "__dp2a_lo",
        "__dp2a_hi",
        "__rhadd",
        "__uhadd",
        "__urhadd",
        "isnan",
        "isinf",
        "isfinite",
        "signbit",
        "__isnanf",
        "__isinff",
        "__finitef",
    ];
    const LONG: &[&str] = &[
        "clock64",
        "clock",
        "__globaltimer",
        "__mul64hi",
        "__umul64hi",
        "__double_as_longlong",
        "__float2ll_rn",
        "__float2ull_rn",
        "__double2ll_rn",
    ];
    const ANY: &[&str] = &[
        "__shfl_sync",
        "__shfl_up_sync",
        "__shfl_down_sync",
        "__shfl_xor_sync",
        "__shfl",
        "__shfl_down",
        "__shfl_up",
        "__shfl_xor",
        "__float2half",
        "__float2half_rn",
        "__hadd",
        "__hmul",
        "__hfma",
        "__hmax",
        "__hmin",
        "__float2bfloat16",
        "__ldg_placeholder",
    ];
    if FLOAT.contains(&name) {
        return Some(Ty::Float(4));
    }
    if DOUBLE.contains(&name) {
        return Some(Ty::Float(8));
    }
    if INT.contains(&name) {
        return Some(Ty::Int(IntTy::I32));
    }
    if LONG.contains(&name) {
        return Some(Ty::Int(IntTy::I64));
    }
    if ANY.contains(&name) {
        return Some(Ty::Float(4));
    }
    if let Some(rest) = name.strip_prefix("make_") {
        return named_type(rest).or(Some(Ty::Void));
    }
    // <cuComplex.h>'s arithmetic: values in registers.
    match name {
        "cuCrealf" | "cuCimagf" | "cuCabsf" => return Some(Ty::Float(4)),
        "cuCreal" | "cuCimag" | "cuCabs" => return Some(Ty::Float(8)),
        "cuCaddf" | "cuCsubf" | "cuCmulf" | "cuCdivf" | "cuConjf" | "cuCfmaf" | "cuComplexDoubleToFloat" => {
            return named_type("cuFloatComplex")
        }
        "cuCadd" | "cuCsub" | "cuCmul" | "cuCdiv" | "cuConj" | "cuCfma" | "cuComplexFloatToDouble" => {
            return named_type("cuDoubleComplex")
        }
        _ => {}
    }
    // <cuda_fp8.h>'s conversions: values, no memory.
    match name {
        "__nv_cvt_fp8_to_halfraw" => return Some(Ty::Float(2)),
        "__nv_cvt_fp8x2_to_halfraw2" => return named_type("__half2_raw"),
        "__nv_cvt_float_to_fp8"
        | "__nv_cvt_double_to_fp8"
        | "__nv_cvt_halfraw_to_fp8"
        | "__nv_cvt_bfloat16raw_to_fp8" => return Some(Ty::Int(IntTy { bits: 8, signed: false })),
        "__nv_cvt_float2_to_fp8x2"
        | "__nv_cvt_double2_to_fp8x2"
        | "__nv_cvt_halfraw2_to_fp8x2"
        | "__nv_cvt_bfloat16raw2_to_fp8x2" => return Some(Ty::Int(IntTy { bits: 16, signed: false })),
        _ => {}
    }
    None
}

/// `std::numeric_limits<T>::max()` and its siblings: the value, for an integer `T` exactly.
pub(super) fn numeric_limit(ty: &Ty, member: &str) -> Option<(Expr, Ty)> {
    match ty {
        Ty::Int(t) => {
            let (min, max) = if t.signed {
                (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
            } else {
                (0, (1i128 << t.bits) - 1)
            };
            let v = match member {
                "max" => max,
                "min" | "lowest" => min,
                "epsilon" | "round_error" | "infinity" | "quiet_NaN" | "denorm_min" => 0,
                _ => return None,
            };
            Some((Expr::Int(v, *t), ty.clone()))
        }
        Ty::Float(_) => match member {
            "max" | "min" | "lowest" | "epsilon" | "infinity" | "quiet_NaN" | "signaling_NaN" | "denorm_min"
            | "round_error" => {
                Some((Expr::Opaque { args: Vec::new(), what: format!("numeric_limits::{member}()") }, ty.clone()))
            }
            _ => None,
        },
        _ => None,
    }
}

/// The type-name prefix of a toolkit function object held by a parameter ([`toolkit_functor`]).
const TOOLKIT_FUNCTOR: &str = "functor ";

/// `thrust::divides<float>` as a type (a template argument, `--arg Op=thrust::divides<float>`):
/// the stateless function object's type a parameter holds.
pub(super) fn toolkit_functor_type(text: &str) -> Option<Ty> {
    Some(functor_ty(&toolkit_functor(&format!("{}()", text.trim()))?))
}

/// The type of a toolkit function object by its name (`divides`): one byte, no state.
pub(super) fn functor_ty(name: &str) -> Ty {
    Ty::Vector { name: format!("{TOOLKIT_FUNCTOR}{name}"), bytes: 1 }
}

/// The name (`divides`) of a toolkit function object's type made by [`functor_ty`].
pub(super) fn functor_name(ty: &Ty) -> Option<&str> {
    match ty {
        Ty::Vector { name, .. } => name.strip_prefix(TOOLKIT_FUNCTOR),
        _ => None,
    }
}

/// `thrust::plus<float>()`, `std::multiplies<>{}`, `cub::Max()`, `cuda::maximum<>()`: the
/// toolkit's arithmetic and comparison function objects (no state, no memory), by their name.
pub(super) fn toolkit_functor(text: &str) -> Option<String> {
    let t: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let head = t.strip_suffix("()").or_else(|| t.strip_suffix("{}"))?;
    let name = head.split('<').next().unwrap_or(head);
    let (ns, last) = name.rsplit_once("::")?;
    let ns = ns.trim_start_matches("::");
    if !matches!(ns, "thrust" | "std" | "cub" | "cuda" | "cuda::std") {
        return None;
    }
    matches!(
        last,
        "plus"
            | "minus"
            | "multiplies"
            | "divides"
            | "modulus"
            | "negate"
            | "maximum"
            | "minimum"
            | "bit_and"
            | "bit_or"
            | "bit_xor"
            | "logical_and"
            | "logical_or"
            | "identity"
            | "equal_to"
            | "not_equal_to"
            | "less"
            | "greater"
            | "less_equal"
            | "greater_equal"
            | "Sum"
            | "Max"
            | "Min"
    )
    .then(|| format!("{ns}::{last}"))
}

/// Function objects whose result is a `bool`.
pub(super) fn is_comparison_functor(name: &str) -> bool {
    let last = name.rsplit("::").next().unwrap_or(name);
    matches!(
        last,
        "equal_to"
            | "not_equal_to"
            | "less"
            | "greater"
            | "less_equal"
            | "greater_equal"
            | "logical_and"
            | "logical_or"
    )
}

/// `thrust::conj(z)`, `cuda::std::abs(z)`, ... of a complex value (a `float2` or `double2`, as
/// [`cpp::library_complex`] has them): the result's type. `None` for anything else.
fn complex_function(name: &str, args: &[Ty]) -> Option<Ty> {
    let name = name.trim_start_matches("::");
    let last = name.strip_prefix("thrust::").or_else(|| name.strip_prefix("cuda::std::"))?;
    let Some(Ty::Vector { .. }) = args.first() else {
        // `thrust::polar(r, theta)`: a complex value from two reals.
        return match (last, args.first()) {
            ("polar", Some(Ty::Float(4))) => named_type("float2"),
            ("polar", Some(Ty::Float(8))) => named_type("double2"),
            _ => None,
        };
    };
    let elem = complex_element(args.first()?)?;
    match last {
        "abs" | "norm" | "arg" | "real" | "imag" => Some(elem),
        "conj" | "exp" | "log" | "log10" | "sqrt" | "pow" | "proj" | "sin" | "cos" | "tan" | "sinh" | "cosh"
        | "tanh" | "asin" | "acos" | "atan" | "asinh" | "acosh" | "atanh" => args.first().cloned(),
        _ => None,
    }
}

/// The part type of a complex value as [`cpp::library_complex`] has it (`float2`: `float`).
fn complex_element(t: &Ty) -> Option<Ty> {
    match t {
        Ty::Vector { name, .. } if name == "float2" => Some(Ty::Float(4)),
        Ty::Vector { name, .. } if name == "double2" => Some(Ty::Float(8)),
        _ => None,
    }
}
