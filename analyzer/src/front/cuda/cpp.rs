//! The C++ the CUDA front end understands beyond C: pointers whose address space follows their
//! origin, references, parameters advanced in place, function templates (explicit and deduced
//! arguments), file- and namespace-scope constants and enums, `switch`, structures (by value
//! in registers, and in memory at their C layout). A child of `lower`, so that lower.rs keeps
//! the C core and this file the additions.

use super::*;
use std::collections::HashSet;

/// A structure's or class's C layout.
#[derive(Clone, Debug)]
pub struct Layout {
    pub name: String,
    pub size: u32,
    pub align: u32,
    pub fields: Vec<Field>,
    /// A class template's arguments (`Vec2<float>`: T = float), bound while its methods inline.
    pub targs: Vec<(String, TemplateArg)>,
    /// `static constexpr` integer members (`x128::size`).
    pub consts: Vec<(String, i128)>,
}

#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub offset: u32,
    pub ty: Ty,
    /// Array dimensions of an array member (`float v[4]`), outermost first.
    pub dims: Vec<u64>,
}

impl Layout {
    /// Structures travel through the IR as opaque blobs of their size, named `struct NAME`.
    pub fn ty(&self) -> Ty {
        Ty::Vector { name: format!("struct {}", self.name), bytes: self.size }
    }
    fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
    /// A structure the compiler moves as one vector access (`struct alignas(16) { float4 v; }`):
    /// its size is its alignment, 4, 8 or 16 bytes.
    pub fn is_vector_like(&self) -> bool {
        self.size == self.align && matches!(self.size, 4 | 8 | 16)
    }
}

/// A structure held in registers: each member is a symbol of its own.
#[derive(Clone, Debug)]
pub struct StructVal {
    pub name: String,
    pub fields: Vec<(String, Sym)>,
}

/// A class's conversion operator (`operator T *()`), as kept among its methods.
const CONVERSION: &str = "operator$cast";

/// Marks a member place that is an array: its value is its address.
pub(super) const DECAY: &str = "$decay";

/// The structure named by a type, if it is one.
fn struct_name(ty: &Ty) -> Option<&str> {
    match ty {
        Ty::Vector { name, .. } => name.strip_prefix("struct "),
        _ => None,
    }
}

/// Alignment of a type inside a structure, as nvcc lays it out.
fn align_of(unit: &Unit, ty: &Ty) -> u32 {
    match ty {
        Ty::Int(_) | Ty::Float(_) | Ty::Ptr(_) => ty.size().max(1),
        Ty::Vector { name, bytes } => {
            if let Some(s) = struct_name(ty) {
                return unit.layout(s).map(|l| l.align).unwrap_or(1);
            }
            let n = name.chars().last().and_then(|c| c.to_digit(10)).unwrap_or(1);
            if n == 2 || n == 4 {
                (*bytes).min(16)
            } else {
                bytes / n.max(1)
            }
        }
        Ty::Void => 1,
    }
}

/// Numbers in `alignas(16)`, `__align__(16)`, `__attribute__((aligned(16)))`.
fn explicit_align(text: &str) -> Option<u32> {
    for key in ["alignas(", "__align__(", "aligned("] {
        if let Some(i) = text.find(key) {
            let rest = &text[i + key.len()..];
            let digits: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(v) = digits.parse::<u32>() {
                if v.is_power_of_two() {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// Records the type names a top-level item declares (enums, structures, classes) so that later
/// items can use them. Called in source order.
pub(super) fn declare_types<'a>(unit: &mut Unit<'a>, n: Node<'a>) {
    let spec = match n.kind() {
        "enum_specifier" | "struct_specifier" | "class_specifier" | "union_specifier" => Some(n),
        _ => n.child_by_field_name("type").filter(|t| {
            matches!(t.kind(), "enum_specifier" | "struct_specifier" | "class_specifier" | "union_specifier")
        }),
    };
    let Some(spec) = spec else { return };
    match spec.kind() {
        "enum_specifier" => {
            let ty = match spec.child_by_field_name("base") {
                Some(b) => type_of_specifier(unit, b, &HashMap::new()).unwrap_or(Ty::Int(IntTy::I32)),
                None => Ty::Int(IntTy::I32),
            };
            if let Some(name) = spec.child_by_field_name("name") {
                unit.typedefs.insert(unit.text(name).to_string(), ty.clone());
            }
            // `typedef enum { .. } Mode;`
            if n.kind() == "type_definition" {
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    unit.typedefs.insert(unit.text(d).to_string(), ty.clone());
                }
            }
        }
        _ => {
            let Some(body) = spec.child_by_field_name("body") else { return };
            let name = spec.child_by_field_name("name").map(|x| unit.text(x).to_string());
            let mut names: Vec<String> = name.into_iter().collect();
            if n.kind() == "type_definition" {
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    if d.kind() == "type_identifier" {
                        names.push(unit.text(d).to_string());
                    }
                }
            }
            let Some(first) = names.first().cloned() else { return };
            if polymorphic(unit, spec, body) {
                unit.polymorphic.extend(names);
                return;
            }
            let Some(layout) = layout_of(unit, spec, body, &first, &HashMap::new()) else { return };
            for nm in names {
                unit.structs.insert(nm.clone(), Layout { name: first.clone(), ..layout.clone() });
            }
            if !unit.structs.contains_key(&first) {
                return;
            }
            register_methods(unit, &first, body);
        }
    }
}

/// Methods are kept, as `Class::method`, so that calls on objects inline them.
fn register_methods<'a>(unit: &mut Unit<'a>, class: &str, body: Node<'a>) {
    let mut c = body.walk();
    for m in body.named_children(&mut c) {
        let m = if m.kind() == "template_declaration" {
            let mut cc = m.walk();
            let f = m.named_children(&mut cc).find(|x| x.kind() == "function_definition");
            match f {
                Some(f) => f,
                None => continue,
            }
        } else {
            m
        };
        if m.kind() == "function_definition" {
            // `operator T *()`: the conversion a temporary of the class is used through (the
            // first one declared; `SharedMemory<T>` declares a `const` twin after it).
            if m.child_by_field_name("declarator").is_some_and(|d| d.kind() == "operator_cast") {
                unit.device_fns.entry(format!("{class}::{CONVERSION}")).or_insert(m);
                continue;
            }
            if let Some(fname) = function_name(unit, m) {
                let fname: String = fname.chars().filter(|c| !c.is_whitespace()).collect();
                // Overloads (constructors above all) are told apart by their parameter count.
                let arity = function_declarator(m)
                    .and_then(|d| d.child_by_field_name("parameters"))
                    .map(|p| {
                        let mut c = p.walk();
                        let n = p
                            .named_children(&mut c)
                            .filter(|x| matches!(x.kind(), "parameter_declaration" | "optional_parameter_declaration"))
                            .count();
                        n
                    })
                    .unwrap_or(0);
                unit.device_fns.insert(format!("{class}::{fname}#{arity}"), m);
                unit.device_fns.entry(format!("{class}::{fname}")).or_insert(m);
            }
        }
    }
}

/// `template <typename T, int N> struct Vec { .. };`: kept until a use names its arguments.
pub(super) fn declare_struct_template<'a>(unit: &mut Unit<'a>, tdecl: Node<'a>) {
    let mut c = tdecl.walk();
    let spec = tdecl.named_children(&mut c).find_map(|x| match x.kind() {
        "struct_specifier" | "class_specifier" => Some(x),
        "declaration" => {
            x.child_by_field_name("type").filter(|t| matches!(t.kind(), "struct_specifier" | "class_specifier"))
        }
        _ => None,
    });
    let Some(spec) = spec else { return };
    let (Some(name), Some(body)) = (spec.child_by_field_name("name"), spec.child_by_field_name("body")) else { return };
    // An explicit specialization (`template <> struct S<double>`) is kept under its full name,
    // written as an instance's name is (`S<double>`), and found before the primary template.
    let name: String = unit.text(name).chars().filter(|c| !c.is_whitespace()).collect();
    if polymorphic(unit, spec, body) {
        unit.polymorphic.insert(name);
        return;
    }
    register_methods(unit, &name, body);
    unit.struct_templates.insert(name, (tdecl, spec));
}

/// A class with a virtual function, or derived from such a class (its objects hold a vtable
/// pointer, and calls through them dispatch on the dynamic type).
fn polymorphic(unit: &Unit, spec: Node, body: Node) -> bool {
    let mut c = spec.walk();
    let derived = spec.named_children(&mut c).filter(|x| x.kind() == "base_class_clause").any(|b| {
        let mut cc = b.walk();
        let any = b.named_children(&mut cc).any(|t| {
            let name = t.child_by_field_name("name").unwrap_or(t);
            unit.polymorphic.contains(unit.text(name).trim())
        });
        any
    });
    let mut c = body.walk();
    let virt = body.named_children(&mut c).any(|m| {
        let mut cc = m.walk();
        let v = m.children(&mut cc).any(|x| x.kind() == "virtual" || unit.text(x) == "virtual");
        v
    });
    derived || virt
}

/// The refusal of a class with virtual functions.
pub(super) fn virtual_refusal(span: Span, text: &str) -> Diagnostic {
    Diagnostic::at(
        ErrorKind::Unsupported,
        span,
        format!("type `{text}`: a class with virtual functions: calls through it dispatch on the object's dynamic type (read from its vtable in memory), which is deliberately not modelled"),
    )
    .note("analyse a copy of the kernel that calls the derived class's functions directly, on a non-virtual class")
}

impl<'a> Unit<'a> {
    /// A structure's layout by name: declared, or an instance of a class template.
    pub(super) fn layout(&self, name: &str) -> Option<Layout> {
        if let Some(l) = self.structs.get(name) {
            return Some(l.clone());
        }
        self.instances.borrow().get(name).cloned()
    }
}

/// Class template instances nested inside one another while one layout is worked out (nvcc
/// allows deeper nesting; kernels that move memory do not come near it).
const MAX_INSTANTIATION_DEPTH: usize = 64;

/// `Vec<float, 4>`: the class template's layout with its parameters bound (cached by name).
fn instantiate(unit: &Unit, t: Node, tmpl: &HashMap<String, TemplateArg>) -> Option<Layout> {
    let (key, targs, bound) = class_template_args(unit, t, tmpl)?;
    if let Some(l) = unit.layout(&key) {
        return Some(l);
    }
    let name = unit.text(t.child_by_field_name("name")?).to_string();
    let (_, spec) = *unit.struct_templates.get(&name)?;
    let spec = match unit.struct_templates.get(&key) {
        Some(&(_, special)) => special,
        None => spec,
    };
    let body = spec.child_by_field_name("body")?;
    // A class that holds itself as a member (`Pack<T>` inside `Pack<T>`) is incomplete there, as
    // C++ says, and so is a chain of instances each holding the next: no layout, never endless.
    if unit.instantiating.borrow().contains(&key) || unit.instantiating.borrow().len() >= MAX_INSTANTIATION_DEPTH {
        return None;
    }
    unit.instantiating.borrow_mut().push(key.clone());
    let layout = layout_of(unit, spec, body, &key, &bound);
    unit.instantiating.borrow_mut().pop();
    let mut layout = layout?;
    layout.targs = targs;
    unit.instances.borrow_mut().insert(key, layout.clone());
    Some(layout)
}

/// A class template's instance as written (`Vec<float, 4>`): its name (`Vec<float,4>`), its
/// parameters bound (defaults included), and those bindings over `tmpl`.
#[allow(clippy::type_complexity)]
fn class_template_args(
    unit: &Unit,
    t: Node,
    tmpl: &HashMap<String, TemplateArg>,
) -> Option<(String, Vec<(String, TemplateArg)>, HashMap<String, TemplateArg>)> {
    let name = unit.text(t.child_by_field_name("name")?).to_string();
    let (tdecl, _) = *unit.struct_templates.get(&name)?;
    let params = tdecl.child_by_field_name("parameters")?;
    let mut given = Vec::new();
    if let Some(args) = t.child_by_field_name("arguments") {
        let mut c = args.walk();
        given = args.named_children(&mut c).collect();
    }
    let mut bound: HashMap<String, TemplateArg> = tmpl.clone();
    let mut targs = Vec::new();
    let mut c = params.walk();
    for (i, p) in params.named_children(&mut c).enumerate() {
        let is_type = matches!(p.kind(), "type_parameter_declaration" | "optional_type_parameter_declaration");
        let pname = if is_type {
            let mut k = p.walk();
            let x = p.named_children(&mut k).find(|x| x.kind() == "type_identifier").map(|x| unit.text(x).to_string());
            x
        } else {
            p.child_by_field_name("declarator").map(|d| unit.text(d).to_string())
        }?;
        let arg = match given.get(i) {
            Some(g) => template_value(unit, *g, is_type, &bound)?,
            None => {
                let d = p.child_by_field_name(if is_type { "default_type" } else { "default_value" })?;
                template_value(unit, d, is_type, &bound)?
            }
        };
        bound.insert(pname.clone(), arg.clone());
        targs.push((pname, arg));
    }
    let key = format!(
        "{name}<{}>",
        targs
            .iter()
            .map(|(_, a)| match a {
                TemplateArg::Int(v) => v.to_string(),
                TemplateArg::Type(t) => t.display(),
                TemplateArg::Func(f) => f.clone(),
            })
            .collect::<Vec<_>>()
            .join(",")
    );
    let key: String = key.chars().filter(|c| !c.is_whitespace()).collect();
    Some((key, targs, bound))
}

/// One template argument written in a type (`float`, `4`, `N`, `T`).
fn template_value(unit: &Unit, g: Node, is_type: bool, tmpl: &HashMap<String, TemplateArg>) -> Option<TemplateArg> {
    if is_type {
        let t = if g.kind() == "type_descriptor" { g.child_by_field_name("type")? } else { g };
        let base = type_of_specifier(unit, t, tmpl).ok()?;
        let ptr = g.child_by_field_name("declarator").is_some_and(|d| d.kind() == "abstract_pointer_declarator");
        return Some(TemplateArg::Type(if ptr {
            Ty::Ptr(Box::new(PtrTy {
                pointee: base,
                space: Space::Global,
                is_const: false,
                restrict: false,
                volatile: false,
            }))
        } else {
            base
        }));
    }
    let text = unit.text(g).trim();
    if let Some(a @ TemplateArg::Int(_)) = tmpl.get(text) {
        return Some(a.clone());
    }
    if let Some(Sym::Const(v, _)) = unit.globals.get(text) {
        return Some(TemplateArg::Int(*v));
    }
    match parse_number(text) {
        Some(ParamValue::Int(v)) => Some(TemplateArg::Int(v)),
        _ => None,
    }
}

/// The C layout of a structure's members, with template parameters bound by `tmpl`.
fn layout_of<'a>(
    unit: &Unit<'a>,
    spec: Node<'a>,
    body: Node<'a>,
    first: &str,
    tmpl: &HashMap<String, TemplateArg>,
) -> Option<Layout> {
    let union = spec.kind() == "union_specifier";
    let mut consts: Vec<(String, i128)> = Vec::new();
    let mut fields = Vec::new();
    let (mut off, mut align) = (0u32, 1u32);
    let mut c = body.walk();
    let items: Vec<Node> = body.named_children(&mut c).collect();
    let mut ok = true;
    for f in items {
        if f.kind() != "field_declaration" {
            continue;
        }
        let quals = {
            let mut cc = f.walk();
            let q: Vec<&str> =
                f.children(&mut cc).filter(|x| x.kind() == "storage_class_specifier").map(|x| unit.text(x)).collect();
            q
        };
        if quals.contains(&"static") {
            // `static constexpr size_t size = sizeof(int4) / sizeof(T);`
            if let (Some(d), Some(v)) = (f.child_by_field_name("declarator"), f.child_by_field_name("default_value")) {
                if let Some(x) = static_value(unit, v, tmpl, &consts) {
                    consts.push((unit.text(d).to_string(), x));
                }
            }
            continue;
        }
        let Some(t) = f.child_by_field_name("type") else { continue };
        let Ok(base) = type_of_specifier(unit, t, tmpl) else {
            ok = false;
            break;
        };
        let mut cc = f.walk();
        let decls: Vec<Node> = f.children_by_field_name("declarator", &mut cc).collect();
        for d in decls {
            let Some((fname, ty, dims)) = field_declarator(unit, d, base.clone(), tmpl, &consts) else {
                ok = false;
                break;
            };
            let a = align_of(unit, &ty);
            let a = explicit_align(unit.text(f)).unwrap_or(a).max(a);
            let count: u64 = dims.iter().product();
            let size = ty.size() as u64 * count.max(1);
            let at = if union { 0 } else { off.div_ceil(a) * a };
            fields.push(Field { name: fname, offset: at, ty, dims });
            off = if union { off.max(size as u32) } else { at + size as u32 };
            align = align.max(a);
        }
    }
    if !ok {
        return None;
    }
    if let Some(a) = explicit_align(unit.text(spec)) {
        align = align.max(a);
    }
    let size = off.div_ceil(align).max(1) * align;
    Some(Layout { name: first.to_string(), size, align, fields, targs: Vec::new(), consts })
}

/// An integer constant inside a structure (array sizes, `static constexpr` members), with the
/// class's template arguments and earlier static members in scope.
fn static_value(unit: &Unit, v: Node, tmpl: &HashMap<String, TemplateArg>, consts: &[(String, i128)]) -> Option<i128> {
    let mut l = Lowerer {
        unit,
        k: Kernel::new(String::new(), Span::default()),
        scopes: vec![unit.globals.clone()],
        pending: Vec::new(),
        no_hoist: 1,
        inline: Vec::new(),
        tmpl: tmpl.clone(),
        depth: 0,
        lambdas: Vec::new(),
        unset_ptrs: Default::default(),
    };
    for (k, x) in tmpl {
        if let TemplateArg::Int(x) = x {
            l.scopes[0].insert(k.clone(), Sym::Const(*x, IntTy::I64));
        }
    }
    for (k, x) in consts {
        l.scopes[0].insert(k.clone(), Sym::Const(*x, IntTy::U64));
    }
    let (e, _) = l.expr(v).ok()?;
    const_eval(&e)
}

/// A member's name, type and array dimensions.
fn field_declarator(
    unit: &Unit,
    d: Node,
    base: Ty,
    tmpl: &HashMap<String, TemplateArg>,
    consts: &[(String, i128)],
) -> Option<(String, Ty, Vec<u64>)> {
    match d.kind() {
        "field_identifier" | "identifier" => Some((unit.text(d).to_string(), base, Vec::new())),
        "pointer_declarator" => {
            let t = Ty::Ptr(Box::new(PtrTy {
                pointee: base,
                space: Space::Global,
                is_const: false,
                restrict: false,
                volatile: false,
            }));
            field_declarator(unit, d.child_by_field_name("declarator")?, t, tmpl, consts)
        }
        "array_declarator" => {
            let size = d.child_by_field_name("size")?;
            let v: u64 = match static_value(unit, size, tmpl, consts) {
                Some(v) if v > 0 => v as u64,
                _ => return None,
            };
            let (name, ty, mut dims) =
                field_declarator(unit, d.child_by_field_name("declarator")?, base, tmpl, consts)?;
            dims.insert(0, v);
            Some((name, ty, dims))
        }
        _ => None,
    }
}

/// Types written with a scope or a keyword: `std::size_t`, `ns::Vec`, `struct P`, `enum E`.
pub(super) fn other_type(unit: &Unit, t: Node, tmpl: &HashMap<String, TemplateArg>) -> Result<Ty> {
    let text = unit.text(t);
    if t.kind() == "template_type" {
        if let Some(l) = instantiate(unit, t, tmpl) {
            return Ok(l.ty());
        }
    }
    let last = match t.kind() {
        "qualified_identifier" => text.rsplit("::").next().unwrap_or(text).trim(),
        "struct_specifier" | "class_specifier" | "enum_specifier" => {
            t.child_by_field_name("name").map(|x| unit.text(x)).unwrap_or("")
        }
        _ => "",
    };
    if let Some(TemplateArg::Type(ty)) = tmpl.get(last) {
        return Ok(ty.clone());
    }
    if let Some(ty) = unit.typedefs.get(last) {
        return Ok(ty.clone());
    }
    if let Some(l) = unit.layout(last) {
        return Ok(l.ty());
    }
    if let Some(ty) = named_type(last) {
        return Ok(ty);
    }
    let bare = t.child_by_field_name("name").map(|x| unit.text(x)).unwrap_or(last);
    if unit.polymorphic.contains(bare.rsplit("::").next().unwrap_or(bare).trim()) {
        return Err(virtual_refusal(unit.span(t), text));
    }
    // Tag types (`std::true_type`, `std::bool_constant<B>`): empty, passed by value.
    let tname = t.child_by_field_name("name").map(|x| unit.text(x)).unwrap_or(last);
    let tname = tname.rsplit("::").next().unwrap_or(tname);
    if matches!(tname, "true_type" | "false_type" | "bool_constant" | "integral_constant")
        || text.contains("bool_constant<")
        || text.contains("integral_constant<")
    {
        return Ok(Ty::Int(IntTy::BOOL));
    }
    Err(unknown_type(unit.span(t), text))
}

/// The error for a type the front end does not know, naming what is deliberately not modelled.
pub(super) fn unknown_type(span: Span, text: &str) -> Diagnostic {
    let lower = text.to_ascii_lowercase();
    if lower.contains("texture") || lower.contains("surface") || lower.contains("cutexobject") {
        return Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!(
                "type `{text}`: textures and surfaces are not modelled (their reads go through the texture pipeline)"
            ),
        )
        .note("read the array through a plain pointer (`const T *__restrict__`) to analyse the kernel");
    }
    if matches!(text.trim(), "cudaStream_t" | "cudaEvent_t") {
        return Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!("type `{text}` in device code: streams serve device-side launches (dynamic parallelism), which are not modelled"),
        )
        .note("analyse the child kernel on its own, with the launch the parent makes");
    }
    if lower.contains("wmma::") || lower.starts_with("fragment<") {
        return wmma_refusal(span, &format!("type `{text}`"));
    }
    if lower.contains("curand") {
        return Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!("type `{text}`: cuRAND generator state is not modelled (curand_init reads cuRAND's precomputed skip-ahead tables in global memory, which entries depending on the sequence number; a state copied from memory moves the fields its generator uses, in widths the compiler picks)"),
        )
        .note("analyse a copy of the kernel that takes its random numbers from an array");
    }
    Diagnostic::at(ErrorKind::Unsupported, span, format!("type `{text}` is not supported"))
        .note("the front end knows scalar and vector types, typedefs, enums, structures and classes declared in the file, and template parameters given with --arg")
}

/// Warp matrix (tensor core) operations: which lane holds which element of a fragment is not
/// specified by CUDA, so the addresses of `load_matrix_sync`/`store_matrix_sync` are unknown.
pub(super) fn wmma_refusal(span: Span, what: &str) -> Diagnostic {
    Diagnostic::at(
        ErrorKind::Unsupported,
        span,
        format!(
            "{what}: warp matrix (wmma, tensor core) fragments are deliberately not modelled: CUDA leaves unspecified which lane holds which element of a fragment (it is architecture-specific), so the sectors of load_matrix_sync/store_matrix_sync cannot be derived from the source"
        ),
    )
    .note("analyse a copy of the kernel that loads and stores its tiles with plain per-lane accesses (the layout you would write for ldmatrix-free code), or measure the wmma kernel with Nsight Compute")
}

/// Values of file- and namespace-scope declarations, in source order: integer constants and
/// enumerators fold; `__constant__` and floating-point constants are opaque values.
pub(super) fn global_values<'a>(unit: &Unit<'a>, decls: &[Node<'a>]) -> HashMap<String, Sym> {
    let mut l = Lowerer {
        unit,
        k: Kernel::new(String::new(), Span::default()),
        scopes: vec![HashMap::new()],
        pending: Vec::new(),
        no_hoist: 1,
        inline: Vec::new(),
        tmpl: HashMap::new(),
        depth: 0,
        lambdas: Vec::new(),
        unset_ptrs: Default::default(),
    };
    for &n in decls {
        let spec = if n.kind() == "enum_specifier" {
            Some(n)
        } else {
            n.child_by_field_name("type").filter(|t| t.kind() == "enum_specifier")
        };
        if let Some(spec) = spec {
            l.enumerators(spec);
        }
        if n.kind() != "declaration" {
            continue;
        }
        let Some(t) = n.child_by_field_name("type") else { continue };
        let texture = {
            let tt = unit.text(t).trim_start_matches("::");
            ["texture<", "surface<", "texture ", "surface "].iter().any(|p| tt.starts_with(p))
        };
        if texture {
            let mut c = n.walk();
            let ds: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
            for d in ds {
                if let Some(name) = l.declared_name(d) {
                    l.scopes[0].insert(name, Sym::Texture(unit.text(t).to_string()));
                }
            }
            continue;
        }
        let quals = l.quals(n);
        let constant = quals.contains(&"__constant__");
        let is_const = quals.contains(&"const") || quals.contains(&"constexpr");
        let device = {
            let mut c = n.walk();
            let d = n.children(&mut c).any(|x| unit.text(x) == "__device__");
            d
        } && !quals.contains(&"__shared__");
        if !constant && !is_const && !device {
            continue;
        }
        let Some(t) = n.child_by_field_name("type") else { continue };
        let Ok(base) = type_of_specifier(unit, t, &HashMap::new()) else { continue };
        let mut c = n.walk();
        let ds: Vec<Node> = n.children_by_field_name("declarator", &mut c).collect();
        for d in ds {
            let (target, init) = match d.kind() {
                "init_declarator" => (d.child_by_field_name("declarator"), d.child_by_field_name("value")),
                _ => (Some(d), None),
            };
            let Some(target) = target else { continue };
            let Ok((name, ty, dims)) = l.declarator(target, base.clone(), &quals) else { continue };
            if constant {
                l.scopes[0].insert(name, Sym::Opaque(ty, "`__constant__` memory"));
                continue;
            }
            if let (true, Ty::Int(it), None, Some(i)) = (is_const, &ty, &dims, init) {
                if let Ok((e, _)) = l.expr(i) {
                    if let Some(v) = const_eval(&e) {
                        l.scopes[0].insert(name, Sym::Const(it.wrap(v), *it));
                        continue;
                    }
                }
            }
            if device && !is_const {
                // Sized arrays only: `__device__ int a[];` has no storage of its own here.
                let dims = dims.unwrap_or_default();
                if dims.iter().all(|d| d.is_some()) {
                    let dims = dims.into_iter().flatten().collect();
                    let volatile = quals.contains(&"volatile");
                    l.scopes[0]
                        .insert(name.clone(), Sym::DeviceVar { name, elem: ty, dims, volatile, span: unit.span(d) });
                }
                continue;
            }
            l.scopes[0].insert(name, Sym::Opaque(ty, "a constant"));
        }
    }
    l.scopes.pop().unwrap_or_default()
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
                if let Some(x) = self.expr(v).ok().and_then(|(x, _)| const_eval(&x)) {
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

    /// Kernel parameters the body assigns become locals copied from the parameter on entry, so
    /// that every use (before and after the update, in any loop iteration) reads the local.
    pub(super) fn params_to_locals(&mut self, body: Node) -> Vec<Stmt> {
        let mut assigned = HashSet::new();
        let mut stack = vec![body];
        while let Some(n) = stack.pop() {
            let target = match n.kind() {
                "assignment_expression" => n.child_by_field_name("left"),
                "update_expression" => n.child_by_field_name("argument"),
                _ => None,
            };
            if let Some(t) = target.map(unparen) {
                if t.kind() == "identifier" {
                    assigned.insert(self.text(t).to_string());
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        let mut out = Vec::new();
        for i in 0..self.k.params.len() {
            let p = self.k.params[i].clone();
            if !assigned.contains(&p.name) || !matches!(self.scopes[0].get(&p.name), Some(Sym::Param(_))) {
                continue;
            }
            let id = self.new_local(&p.name, p.ty.clone());
            out.push(Stmt::Assign { local: id, value: Expr::Param(ParamId(i as u32)), span: p.span });
            self.scopes[0].insert(p.name.clone(), Sym::Local(id, p.ty.clone()));
        }
        out
    }

    /// A kernel parameter of structure type passed by value: each scalar or pointer member
    /// becomes a parameter of its own, named `s.member` (give its value as `--arg s.n=...`).
    pub(super) fn struct_param(&mut self, p: Node) -> Result<bool> {
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

    fn struct_params(&mut self, prefix: &str, sname: &str, p: Node, depth: u32) -> Result<StructVal> {
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
                let id = ParamId(self.k.params.len() as u32);
                self.k.params.push(Param { name: pname, ty: f.ty.clone(), span: self.span(p), device_variable: false });
                Sym::Param(id)
            };
            fields.push((f.name.clone(), sym));
        }
        Ok(StructVal { name: layout.name, fields })
    }

    /// A fresh structure in registers: one local per member.
    fn struct_locals(&mut self, prefix: &str, sname: &str, at: Node, depth: u32) -> Result<StructVal> {
        let layout = self.unit.layout(sname).ok_or_else(|| self.unsupported(at, "this structure"))?;
        if depth > 8 {
            return Err(self.unsupported(at, "structures nested this deep"));
        }
        let mut fields = Vec::new();
        for f in &layout.fields {
            let sym = if !f.dims.is_empty() {
                Sym::LocalArray(f.ty.clone())
            } else if let Some(inner) = struct_name(&f.ty) {
                Sym::Struct(self.struct_locals(&format!("{prefix}.{}", f.name), inner, at, depth + 1)?)
            } else {
                let id = self.new_local(&format!("{prefix}.{}", f.name), f.ty.clone());
                Sym::Local(id, f.ty.clone())
            };
            fields.push((f.name.clone(), sym));
        }
        Ok(StructVal { name: layout.name, fields })
    }

    /// The symbol an identifier or a member chain over register structures names.
    pub(super) fn member_sym(&self, n: Node) -> Option<Sym> {
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
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The value of a symbol read by name.
    pub(super) fn sym_value(&mut self, sym: Sym, n: Node) -> Result<(Expr, Ty)> {
        match sym {
            Sym::Local(id, ty) => Ok((Expr::Local(id), ty)),
            Sym::Param(p) => Ok((Expr::Param(p), self.k.param(p).ty.clone())),
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
            Sym::Struct(v) => Ok((
                Expr::Opaque { args: Vec::new(), what: format!("structure `{}`", v.name) },
                self.unit.layout(&v.name).map(|l| l.ty()).unwrap_or(Ty::Void),
            )),
            _ => Err(self.unsupported(n, "this name")),
        }
    }

    /// The parameter standing for a `__device__` variable: made on its first use in this
    /// kernel (a kernel that does not use the variable has no row for it).
    pub(super) fn device_var_param(&mut self, sym: &Sym) -> ParamId {
        let Sym::DeviceVar { name, elem, volatile, span, .. } = sym else { unreachable!("a __device__ variable") };
        if let Some(i) = self.k.params.iter().position(|p| p.device_variable && &p.name == name) {
            return ParamId(i as u32);
        }
        let ty = Ty::Ptr(Box::new(PtrTy {
            pointee: elem.clone(),
            space: Space::Global,
            is_const: false,
            restrict: false,
            volatile: *volatile,
        }));
        self.k.params.push(Param { name: name.clone(), ty, span: *span, device_variable: true });
        self.k.notes.push(format!(
            "`{name}` is a `__device__` variable: global memory of its own, assumed to start 256-byte aligned like a pointer parameter's buffer (nvcc aligns it to its type; --offset {name}=BYTES moves it)"
        ));
        ParamId(self.k.params.len() as u32 - 1)
    }

    fn note_opaque(&mut self, what: &str) {
        if what.contains("__constant__") {
            let note = "reads of `__constant__` memory go through the constant cache: not counted as global traffic"
                .to_string();
            if !self.k.notes.contains(&note) {
                self.k.notes.push(note);
            }
        }
    }

    /// A symbol as an lvalue.
    pub(super) fn sym_place(&mut self, sym: Sym, n: Node) -> Result<Place> {
        match sym {
            Sym::Local(id, ty) => Ok(Place::Local(id, ty)),
            Sym::SharedScalar(id) => {
                let arr = &self.k.shared[id.0 as usize];
                Ok(Place::Mem {
                    addr: Expr::SharedBase(id),
                    ty: arr.elem.clone(),
                    space: Space::Shared,
                    volatile: false,
                    text: self.text(n).to_string(),
                    span: self.span(n),
                })
            }
            Sym::Ref { ptr, ty, space, volatile, text } => {
                Ok(Place::Mem { addr: Expr::Local(ptr), ty, space, volatile, text, span: self.span(n) })
            }
            Sym::DeviceVar { ref dims, .. } if !dims.is_empty() => {
                Err(self.unsupported(n, "assigning to a `__device__` array as a whole"))
            }
            Sym::Texture(ty) => Err(Diagnostic::at(
                ErrorKind::Unsupported,
                self.span(n),
                format!(
                    "`{}` is a texture reference (`{ty}`): textures and surfaces are not modelled (their reads go through the texture pipeline)",
                    self.text(n)
                ),
            )
            .note("read the array through a plain pointer (`const T *__restrict__`) to analyse the kernel")),
            Sym::DeviceVar { ref elem, volatile, .. } => {
                let ty = elem.clone();
                let p = self.device_var_param(&sym);
                Ok(Place::Mem {
                    addr: Expr::Param(p),
                    ty,
                    space: Space::Global,
                    volatile,
                    text: self.text(n).to_string(),
                    span: self.span(n),
                })
            }
            Sym::Opaque(ty, what) => {
                self.note_opaque(what);
                Ok(Place::LocalArray(ty))
            }
            Sym::LocalArray(ty) => Ok(Place::LocalArray(ty)),
            Sym::Param(_) => Err(self.unsupported(n, "assigning to a kernel parameter")),
            _ => Err(self.unsupported(n, "assigning to this name")),
        }
    }

    /// `s.f` / `p->f` / `a[i].f` in memory: the member at its C layout offset. `None` when the
    /// object is not a structure in memory.
    pub(super) fn member_place(&mut self, n: Node) -> Result<Option<Place>> {
        let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
        let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        if op == "." {
            if let Some(sym) = self.member_sym(n) {
                return self.sym_place(sym, n).map(Some);
            }
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
                Place::Mem { addr, ty, space, volatile, .. } => (addr, ty, space, volatile),
                Place::LocalArray(t) => return Ok(Some(Place::LocalArray(t))),
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
            return Ok(Some(Place::Mem { addr, ty: pty, space, volatile, text: DECAY.into(), span: self.span(n) }));
        }
        Ok(Some(Place::Mem {
            addr,
            ty: f.ty.clone(),
            space,
            volatile,
            text: self.text(n).to_string(),
            span: self.span(n),
        }))
    }

    /// The static type of an expression without lowering it (for deciding how to lower it):
    /// names, members, subscripts and dereferences only; anything else is `void`.
    pub(super) fn peek_type(&self, n: Node) -> Ty {
        let n = unparen(n);
        match n.kind() {
            "identifier" => match self.lookup(self.text(n)) {
                Some(Sym::Local(_, t)) => t.clone(),
                Some(Sym::Param(p)) => self.k.param(*p).ty.clone(),
                Some(Sym::Ref { ty, .. }) => ty.clone(),
                Some(Sym::SharedScalar(id)) => self.k.shared[id.0 as usize].elem.clone(),
                Some(Sym::Shared(id)) => self.k.shared[id.0 as usize].elem.clone(),
                Some(Sym::LocalArray(t)) | Some(Sym::Opaque(t, _)) => t.clone(),
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
                        return self.k.shared[id.0 as usize].elem.clone();
                    }
                    if let Some(Sym::LocalArray(t)) = self.lookup(self.text(a)) {
                        return t.clone();
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
                let Some(a) = n.child_by_field_name("argument") else { return Ty::Void };
                let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
                let at = self.peek_type(a);
                let st = if op == "->" {
                    match at {
                        Ty::Ptr(p) => p.pointee.clone(),
                        _ => return Ty::Void,
                    }
                } else {
                    at
                };
                struct_name(&st)
                    .and_then(|s| self.unit.layout(s))
                    .and_then(|l| l.field(field).map(|f| f.ty.clone()))
                    .unwrap_or(Ty::Void)
            }
            _ => Ty::Void,
        }
    }

    /// Keeps a pointer's address space as its origin's: `(float *)smem`, `float *p = smem;`.
    pub(super) fn with_origin(&self, declared: Ty, value: &Ty) -> Ty {
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
    pub(super) fn pointer_origin(&mut self, id: LocalId, ty: Ty, vt: &Ty, at: Node) -> Result<Ty> {
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

    pub(super) fn set_local_ty(&mut self, id: LocalId, ty: Ty) {
        self.k.locals[id.0 as usize].ty = ty.clone();
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
    pub(super) fn bind_reference(&mut self, name: &str, declared: Option<Ty>, init: Node) -> Result<Sym> {
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
                match self.place(init)? {
                    Place::Local(id, ty) => return Ok(Sym::Local(id, ty)),
                    Place::LocalArray(ty) => return Ok(Sym::LocalArray(ty)),
                    Place::Mem { addr, ty, space, volatile, text, .. } => {
                        let pty = Ty::Ptr(Box::new(PtrTy {
                            pointee: ty.clone(),
                            space,
                            is_const: false,
                            restrict: false,
                            volatile,
                        }));
                        let t = self.new_local(&format!("&{name}"), pty);
                        self.pending.push(Stmt::Assign { local: t, value: addr, span: self.span(init) });
                        return Ok(Sym::Ref { ptr: t, ty, space, volatile, text });
                    }
                }
            }
        }
        let (e, et) = self.expr(init)?;
        let ty = declared.filter(|d| !is_void(d)).unwrap_or(et.clone());
        let e = self.convert(e, &et, &ty, init)?;
        let ty = self.with_origin(ty, &et);
        let id = self.new_local(name, ty.clone());
        self.pending.push(Stmt::Assign { local: id, value: e, span: self.span(init) });
        Ok(Sym::Local(id, ty))
    }

    /// A local of structure type: bound to memory (`P v = p[i];` reads only the members used,
    /// as the compiler does), copied from a register structure, or built member by member.
    pub(super) fn struct_local(&mut self, name: &str, ty: &Ty, init: Option<Node>, at: Node) -> Result<Sym> {
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
                let vector_like = self.unit.layout(&sname).is_some_and(|l| l.is_vector_like());
                if !vector_like {
                    return self.bind_reference(name, None, i);
                }
                // One vector load of the whole object; its members are then registers.
                let p = self.place(i)?;
                let (e, ety) = self.read_place(&p, CacheOp::Default);
                let whole = self.new_local(name, ety);
                self.pending.push(Stmt::Assign { local: whole, value: e, span: self.span(i) });
                let v = self.struct_locals(name, &sname, at, 0)?;
                for (_, sym) in &v.fields {
                    if let Sym::Local(id, _) = sym {
                        self.pending.push(Stmt::Assign {
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
                let mut c = i.walk();
                let items: Vec<Node> = i.named_children(&mut c).filter(|x| x.kind() != "comment").collect();
                for (item, (_, sym)) in items.iter().zip(v.fields.clone()) {
                    if let Sym::Local(id, fty) = sym {
                        let (e, et) = self.expr(*item)?;
                        let e = self.convert(e, &et, &fty, *item)?;
                        self.pending.push(Stmt::Assign { local: id, value: e, span: self.span(*item) });
                    } else {
                        let (e, _) = self.expr(*item)?;
                        self.pending_eval(e);
                    }
                }
            } else {
                let (e, _) = self.expr(i)?;
                self.pending_eval(e);
            }
        }
        Ok(Sym::Struct(v))
    }

    fn copy_struct(&mut self, to: &StructVal, from: &Sym, at: Node) -> Result<()> {
        let Sym::Struct(from) = from else { return Ok(()) };
        for ((_, t), (_, f)) in to.fields.iter().zip(&from.fields) {
            match (t, f) {
                (Sym::Local(id, _), Sym::Local(src, _)) => {
                    self.pending.push(Stmt::Assign { local: *id, value: Expr::Local(*src), span: self.span(at) })
                }
                (Sym::Local(id, _), Sym::Param(p)) => {
                    self.pending.push(Stmt::Assign { local: *id, value: Expr::Param(*p), span: self.span(at) })
                }
                (Sym::Struct(a), b @ Sym::Struct(_)) => self.copy_struct(a, b, at)?,
                _ => {}
            }
        }
        Ok(())
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
        let t = self.temp(et.clone());
        self.flush(out);
        out.push(Stmt::Assign { local: t, value: e, span });
        let matched = self.temp(Ty::Int(IntTy::I32));
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
                let cv = const_eval(&ce).ok_or_else(|| {
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

    /// The function a call names: a template parameter bound to a function, a scoped name, a
    /// method of the object's structure.
    pub(super) fn resolve_function(&self, name: &str) -> Option<(String, Node<'a>)> {
        if let Some(TemplateArg::Func(f)) = self.tmpl.get(name) {
            return self.unit.device_fns.get(f.as_str()).map(|d| (f.clone(), *d));
        }
        if let Some(d) = self.unit.device_fns.get(name) {
            return Some((name.to_string(), *d));
        }
        let last = last_segment(name);
        self.unit.device_fns.get(last).map(|d| (last.to_string(), *d))
    }

    /// Inlines a call of a `__device__` function (or function template): parameters become
    /// locals (references name the argument's place), template arguments are given or deduced
    /// from the arguments, missing arguments take their defaults, `return` leaves a wrapper loop.
    pub(super) fn inline_device(
        &mut self,
        n: Node,
        fname: &str,
        def: Node<'a>,
        arg_nodes: &[Node],
        explicit: Option<Node>,
        this: Option<StructVal>,
    ) -> Result<(Expr, Ty)> {
        if self.no_hoist > 0 {
            return Err(self.unsupported(n, "a call to a __device__ function inside a condition or `?:`"));
        }
        if !def.kind().starts_with("lambda") && self.inline.iter().any(|i| i.def == def.id()) {
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
        // The template around this definition (an overload of the same name may have none).
        if let Some(t) = self.unit.fn_templates.get(fname).copied().filter(|t| def.parent() == Some(*t)) {
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
                        tmpl.remove(&name);
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
        let mut bound: Vec<(Option<String>, Sym)> = Vec::new();
        let mut vals: Vec<Option<(Expr, Ty)>> = Vec::new();
        let mut refs: Vec<Option<Sym>> = Vec::new();
        for (i, p) in pnodes.iter().enumerate() {
            let is_ref = p.child_by_field_name("declarator").is_some_and(|d| d.kind() == "reference_declarator");
            let Some(a) = arg_nodes.get(i) else {
                vals.push(None);
                refs.push(None);
                continue;
            };
            // A cooperative group is bound by name, not passed as a value.
            if let Some((_, g)) = self.group_param(*p, Some(*a))? {
                refs.push(Some(Sym::Group(g)));
                vals.push(None);
                continue;
            }
            if is_ref && !self.is_const_param(*p) {
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
                _ => continue,
            };
            let mut d = p.child_by_field_name("declarator");
            while let Some(x) = d {
                if x.kind() == "pointer_declarator" {
                    if let Ty::Ptr(pt) = ty {
                        ty = pt.pointee.clone();
                    }
                }
                d = x.child_by_field_name("declarator").or_else(|| {
                    if x.kind() == "reference_declarator" {
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
        let r = self.inline_body(n, fname, def, &pnodes, vals, refs, &tparams, this, &mut bound);
        self.tmpl = saved_tmpl;
        r
    }

    /// A lambda call: inlined like a function, seeing its enclosing scopes.
    pub(super) fn inline_lambda(&mut self, n: Node, l: Node<'a>, arg_nodes: &[Node]) -> Result<(Expr, Ty)> {
        self.inline_device(n, "lambda", l, arg_nodes, None, None)
    }

    fn is_const_param(&self, p: Node) -> bool {
        self.quals(p).contains(&"const")
    }

    /// A template argument as written: a type, a constant, or a function's name.
    fn template_arg(&mut self, g: Node, is_type: bool) -> Result<TemplateArg> {
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
        const_eval(&e).map(TemplateArg::Int).ok_or_else(|| {
            Diagnostic::at(ErrorKind::Unsupported, self.span(g), "a template argument that is not a constant")
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn inline_body(
        &mut self,
        n: Node,
        fname: &str,
        def: Node<'a>,
        pnodes: &[Node<'a>],
        vals: Vec<Option<(Expr, Ty)>>,
        refs: Vec<Option<Sym>>,
        tparams: &[(String, bool, Option<Node>)],
        this: Option<StructVal>,
        _bound: &mut Vec<(Option<String>, Sym)>,
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
                    if let Some(v) = const_eval(&e) {
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
            let local = self.new_local(pn.as_deref().unwrap_or("$arg"), pty.clone());
            let a = self.convert(a, &at, &pty, n)?;
            body.push(Stmt::Assign { local, value: a, span: self.span(n) });
            if let Some(pn) = pn {
                scope.insert(pn, Sym::Local(local, pty));
            }
        }
        let ret_flag = self.temp(Ty::Int(IntTy::I32));
        let ret_val =
            if is_void(&ret_ty) && !auto_ret { None } else { Some((self.temp(ret_ty.clone()), ret_ty.clone())) };
        if let Some((id, Ty::Ptr(_))) = &ret_val {
            // A returned pointer's address space is its `return`'s value's.
            self.unset_ptrs.insert(*id);
        }
        self.pending.push(Stmt::Assign { local: ret_flag, value: Expr::Int(0, IntTy::I32), span: self.span(n) });
        let mut globals = self.scopes[0].clone();
        // Parameters of the kernel are not visible inside the function.
        globals.retain(|_, s| !matches!(s, Sym::Param(_) | Sym::Local(..) | Sym::Struct(_)));
        for (k, v) in &self.unit.globals {
            globals.entry(k.clone()).or_insert_with(|| v.clone());
        }
        // A lambda sees the scopes it was written in (its captures); a function only globals.
        let saved_scopes = if lambda {
            self.scopes.push(scope);
            None
        } else {
            Some(std::mem::replace(&mut self.scopes, vec![globals, scope]))
        };
        let saved_pending = std::mem::take(&mut self.pending);
        self.inline.push(Inline { def: def.id(), ret_flag, ret_val: ret_val.clone(), auto_ret });
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
        self.inline.pop();
        match saved_scopes {
            Some(sc) => self.scopes = sc,
            None => {
                self.scopes.pop();
            }
        }
        self.pending = saved_pending;
        r?;
        body.push(Stmt::Break);
        let span = self.span(n);
        self.pending.push(Stmt::Loop { cond: None, body, step: Vec::new(), test_first: true, span, synthetic: true });
        let note = if lambda {
            "lambda inlined".to_string()
        } else {
            format!("__device__ function `{}` inlined", fname.split('#').next().unwrap_or(fname))
        };
        if !self.k.notes.contains(&note) {
            self.k.notes.push(note);
        }
        Ok(match ret_val {
            Some((id, _)) if !is_void(&self.k.locals[id.0 as usize].ty) => {
                (Expr::Local(id), self.k.locals[id.0 as usize].ty.clone())
            }
            _ => (Expr::Int(0, IntTy::I32), Ty::Void),
        })
    }

    /// `x(a)` or `x{a}` in a constructor's initializer list.
    fn field_initializer(&mut self, fi: Node, out: &mut Vec<Stmt>) -> Result<()> {
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

    pub(super) fn declared_name(&self, d: Node) -> Option<String> {
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
    pub(super) fn method_call(&mut self, n: Node, f: Node, arg_nodes: &[Node]) -> Result<Option<(Expr, Ty)>> {
        let Some(obj) = f.child_by_field_name("argument") else { return Ok(None) };
        let Some(method) = f.child_by_field_name("field").map(|m| self.text(m).to_string()) else { return Ok(None) };
        let op = f.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or(".");
        self.call_member(n, obj, op, &method, arg_nodes)
    }

    pub(super) fn call_member(
        &mut self,
        n: Node,
        obj: Node,
        op: &str,
        method: &str,
        arg_nodes: &[Node],
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
                        Place::Mem { addr, space, volatile, .. } => (addr, space, volatile),
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
                let b = self.new_local("this", bty);
                self.pending.push(Stmt::Assign { local: b, value: base, span: self.span(n) });
                let mut fields = Vec::new();
                for fd in &layout.fields {
                    let fty = Ty::Ptr(Box::new(PtrTy {
                        pointee: fd.ty.clone(),
                        space,
                        is_const: false,
                        restrict: false,
                        volatile,
                    }));
                    let t = self.new_local(&format!("this.{}", fd.name), fty);
                    self.pending.push(Stmt::Assign {
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
        let saved = self.tmpl.clone();
        for (k, v) in targs {
            self.tmpl.insert(k, v);
        }
        let r = self.inline_device(n, &key, def, arg_nodes, None, Some(this));
        self.tmpl = saved;
        r.map(Some)
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
            "namespace_identifier" | "type_identifier" => (self.text(scope).to_string(), Vec::new()),
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

    /// `obj[i]` where `obj` is a structure with `operator[]`.
    pub(super) fn subscript_operator(&mut self, n: Node) -> Result<Option<(Expr, Ty)>> {
        let Some(obj) = n.child_by_field_name("argument") else { return Ok(None) };
        if self.is_array_name(obj) {
            return Ok(None);
        }
        if struct_name(&self.peek_type(obj)).is_none() && !matches!(self.member_sym(obj), Some(Sym::Struct(_))) {
            return Ok(None);
        }
        let Some(idx) = n.child_by_field_name("indices") else { return Ok(None) };
        let mut c = idx.walk();
        let items: Vec<Node> = idx.named_children(&mut c).collect();
        self.call_member(n, obj, ".", "operator[]", &items)
    }

    /// `obj[i] = v` through `operator[]`: on an object in registers the element is a register
    /// too; on an object in memory the returned reference is not followed (refused).
    pub(super) fn subscript_operator_place(&mut self, n: Node) -> Result<Option<Place>> {
        let Some(obj) = n.child_by_field_name("argument") else { return Ok(None) };
        if self.is_array_name(obj) {
            return Ok(None);
        }
        let in_regs = matches!(self.member_sym(obj), Some(Sym::Struct(_)));
        if !in_regs {
            if struct_name(&self.peek_type(obj)).is_some() {
                return Err(self.unsupported(
                    n,
                    "assigning through `operator[]` of an object in memory (assign to its member array instead)",
                ));
            }
            return Ok(None);
        }
        let (e, t) = self.subscript_operator(n)?.ok_or_else(|| self.unsupported(n, "this subscript"))?;
        self.pending_eval(e);
        Ok(Some(Place::LocalArray(t)))
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
            } else if a.kind() == "identifier" && matches!(self.lookup(self.text(a)), Some(Sym::LocalArray(_))) {
                // A thread's own array by name: it decays to its address.
                Some(a)
            } else {
                None
            };
            let local = target.is_some_and(|t| {
                t.kind() == "identifier"
                    && matches!(self.lookup(self.text(t)), Some(Sym::Local(..) | Sym::LocalArray(_) | Sym::Struct(_)))
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
            && matches!(self.lookup(self.text(obj)), Some(Sym::Opaque(..) | Sym::LocalArray(_) | Sym::Shared(_)))
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

    /// Whole-structure stores move the bytes of a vector-like structure at once; others would
    /// be split by the compiler member by member, which is not modelled.
    pub(super) fn check_struct_store(&self, ty: &Ty, at: Node) -> Result<()> {
        if let Some(s) = struct_name(ty) {
            if !self.unit.layout(s).is_some_and(|l| l.is_vector_like()) {
                return Err(self.unsupported(at, "storing a whole structure that is not 4, 8 or 16 bytes at its own alignment (store its members one by one)"));
            }
        }
        Ok(())
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
