//! Structures and class templates as the translation unit declares them: their C layouts,
//! instances of class templates, types written with a scope or a keyword, file-scope values.

use super::*;

/// Alignment of a type inside a structure, as nvcc lays it out.
pub(super) fn align_of(unit: &Unit, ty: &Ty) -> u64 {
    match ty {
        Ty::Int(_) | Ty::Float(_) | Ty::Ptr(_) => ty.size().max(1),
        Ty::Vector { name, bytes } => {
            if let Some(s) = struct_name(ty) {
                return unit.layout(s).map(|l| l.align).unwrap_or(1);
            }
            let n = name.chars().last().and_then(|c| c.to_digit(10)).unwrap_or(1) as u64;
            if n == 2 || n == 4 {
                (*bytes).min(16)
            } else {
                bytes / n.max(1)
            }
        }
        Ty::Void => 1,
    }
}

/// A `__shared__` variable's alignment: its declaration's `__align__(N)`, or its element type's.
pub(in crate::front::cuda::lower) fn shared_align(unit: &Unit, elem: &Ty, declaration: &str) -> u64 {
    explicit_align(declaration).unwrap_or_else(|| align_of(unit, elem)).max(1)
}

/// Numbers in `alignas(16)`, `__align__(16)`, `__attribute__((aligned(16)))`.
pub(super) fn explicit_align(text: &str) -> Option<u64> {
    for key in ["alignas(", "__align__(", "aligned("] {
        if let Some(i) = text.find(key) {
            let rest = &text[i + key.len()..];
            let digits: String = rest.trim_start().chars().take_while(|c| c.is_ascii_digit()).collect();
            if let Ok(v) = digits.parse::<u64>() {
                if v.is_power_of_two() {
                    return Some(v);
                }
            }
        }
    }
    None
}

/// The alignment an `alignas(EXPR)` qualifier of the structure itself asks for, its expression
/// evaluated with the template arguments bound (`struct alignas(sizeof(scalar_t) * VEC_ELEMS)
/// U`); a power of two, as C++ requires.
fn alignas_of(unit: &Unit, spec: Node, tmpl: &HashMap<String, TemplateArg>, consts: &[(String, i128)]) -> Option<u64> {
    let mut c = spec.walk();
    let q = spec.named_children(&mut c).find(|x| x.kind() == "alignas_qualifier")?;
    let e = q.named_child(0)?;
    let v = static_value(unit, e, tmpl, consts)?;
    (v > 0 && (v as u128).is_power_of_two()).then_some(v as u64)
}

/// Records the type names a top-level item declares (enums, structures, classes) so that later
/// items can use them. Called in source order.
pub(in crate::front::cuda::lower) fn declare_types<'a>(unit: &mut Unit<'a>, n: Node<'a>) {
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
            let Some(body) = spec.child_by_field_name("body") else {
                declare_forward(unit, n, spec);
                return;
            };
            declare_nested_enums(unit, spec);
            // `struct T { struct E { .. } e[4]; }`: the member's type is declared first, as
            // C declares it (in C++ it is `T::E`; the plain name serves both).
            let mut c = body.walk();
            let members: Vec<Node> = body.named_children(&mut c).collect();
            for f in members {
                let inner = f.child_by_field_name("type").filter(|t| {
                    matches!(t.kind(), "struct_specifier" | "union_specifier" | "class_specifier")
                        && t.child_by_field_name("name").is_some()
                        && t.child_by_field_name("body").is_some()
                });
                if let (true, Some(t)) = (f.kind() == "field_declaration", inner) {
                    declare_types(unit, t);
                }
                member_alias(unit, f);
            }
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
            // Its members may point to the structure itself (`State *out;`, `struct Node
            // *next;`): while they are laid out it is declared but incomplete, as in C.
            for nm in &names {
                if !unit.structs.contains_key(nm) {
                    unit.structs.insert(nm.clone(), incomplete(&first));
                    unit.forward.insert(nm.clone());
                }
            }
            let layout = layout_of(unit, spec, body, &first, &HashMap::new());
            for nm in &names {
                if unit.forward.remove(nm) {
                    unit.structs.remove(nm);
                }
            }
            let Some(layout) = layout else { return };
            for nm in &names {
                unit.structs.insert(nm.clone(), Layout { name: first.clone(), ..layout.clone() });
            }
            // A pointer member to the structure itself was laid out while it had no size.
            let layout = complete_layout(unit, &layout);
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

/// A type alias among a structure's members (`using index_t = int64_t;`, `typedef float real;`):
/// its members and the code after it use the plain name, as a typedef (a name the file already
/// gives a type keeps it).
fn member_alias(unit: &mut Unit, f: Node) {
    let (names, ty): (Vec<String>, Option<Node>) = match f.kind() {
        "alias_declaration" => {
            let td = f.child_by_field_name("type");
            let plain = td.is_some_and(|t| t.child_by_field_name("declarator").is_none());
            let names = f.child_by_field_name("name").map(|n| unit.text(n).to_string()).into_iter().collect();
            (names, td.and_then(|t| t.child_by_field_name("type")).filter(|_| plain))
        }
        "type_definition" => {
            let mut c = f.walk();
            let ds: Vec<Node> = f.children_by_field_name("declarator", &mut c).collect();
            let names =
                ds.iter().filter(|d| d.kind() == "type_identifier").map(|d| unit.text(*d).to_string()).collect();
            (names, f.child_by_field_name("type"))
        }
        _ => return,
    };
    let Some(ty) = ty else { return };
    let Ok(t) = type_of_specifier(unit, ty, &HashMap::new()) else { return };
    for n in names {
        if !unit.typedefs.contains_key(&n) && unit.layout(&n).is_none() {
            unit.typedefs.insert(n, t.clone());
        }
    }
}

/// `typedef int tab3_t[NBASE][NBASE][NBASE];`: the name and the dimensions (outermost first),
/// each a positive constant.
pub(in crate::front::cuda::lower) fn array_typedef(unit: &Unit, d: Node) -> Option<(String, Vec<u64>)> {
    let mut dims = Vec::new();
    let mut d = d;
    while d.kind() == "array_declarator" {
        let v = static_value(unit, d.child_by_field_name("size")?, &HashMap::new(), &[])?;
        dims.insert(0, u64::try_from(v).ok().filter(|v| *v > 0)?);
        d = d.child_by_field_name("declarator")?;
    }
    (d.kind() == "type_identifier").then(|| (unit.text(d).to_string(), dims))
}

/// The layout of a structure declared but not yet defined: no members, no size.
fn incomplete(name: &str) -> Layout {
    Layout { name: name.to_string(), size: 0, align: 1, fields: Vec::new(), targs: Vec::new(), consts: Vec::new() }
}

/// `struct State;`, `typedef struct State State;`, `typedef union Ptrlist Ptrlist;` before the
/// definition: the tag is an incomplete structure (pointers to it may be declared, in other
/// structures and in the tag's own members), and each typedef name follows the tag.
fn declare_forward(unit: &mut Unit, n: Node, spec: Node) {
    let Some(tag) = spec.child_by_field_name("name") else { return };
    if tag.kind() != "type_identifier" {
        return;
    }
    let tag = unit.text(tag).to_string();
    if unit.layout(&tag).is_none() && !unit.polymorphic.contains(&tag) {
        unit.structs.insert(tag.clone(), incomplete(&tag));
        unit.forward.insert(tag.clone());
    }
    if n.kind() == "type_definition" {
        let mut c = n.walk();
        for d in n.children_by_field_name("declarator", &mut c) {
            let name = unit.text(d).to_string();
            if d.kind() == "type_identifier" && name != tag && !unit.typedefs.contains_key(&name) {
                unit.aliases.insert(name, tag.clone());
            }
        }
    }
}

/// Whether a type specifier names a structure only declared so far (`struct State` in
/// `typedef struct State State;` before its definition).
pub(in crate::front::cuda::lower) fn is_forward_declaration(unit: &Unit, t: Node) -> bool {
    matches!(t.kind(), "struct_specifier" | "class_specifier" | "union_specifier")
        && t.child_by_field_name("body").is_none()
        && t.child_by_field_name("name").is_some_and(|x| unit.forward.contains(unit.text(x)))
}

/// A type with every structure it points to given its final size (a pointer member declared
/// while the structure it points to was incomplete).
fn complete_type(unit: &Unit, ty: &Ty) -> Ty {
    match ty {
        Ty::Ptr(p) => Ty::Ptr(Box::new(PtrTy { pointee: complete_type(unit, &p.pointee), ..(**p).clone() })),
        Ty::Vector { name, bytes } => match struct_name(ty).and_then(|s| unit.layout(s)) {
            Some(l) if l.size != *bytes && !unit.forward.contains(&l.name) => l.ty(),
            _ => Ty::Vector { name: name.clone(), bytes: *bytes },
        },
        other => other.clone(),
    }
}

pub(super) fn complete_layout(unit: &Unit, l: &Layout) -> Layout {
    let fields = l.fields.iter().map(|f| Field { ty: complete_type(unit, &f.ty), ..f.clone() }).collect();
    Layout { fields, ..l.clone() }
}

/// After the file's declarations: structures declared and never defined are unknown again (a
/// use of one is refused by name), and pointers to structures defined after the pointer was
/// declared (in another structure, in a typedef) point to the structure's final size.
pub(in crate::front::cuda::lower) fn complete_forward_types(unit: &mut Unit) {
    for name in std::mem::take(&mut unit.forward) {
        unit.structs.remove(&name);
        unit.incomplete.insert(name);
    }
    let aliases: Vec<String> =
        unit.aliases.iter().filter(|(_, tag)| unit.incomplete.contains(*tag)).map(|(a, _)| a.clone()).collect();
    unit.incomplete.extend(aliases);
    let structs: Vec<(String, Layout)> =
        unit.structs.iter().map(|(k, l)| (k.clone(), complete_layout(unit, l))).collect();
    unit.structs.extend(structs);
    let typedefs: Vec<(String, Ty)> = unit.typedefs.iter().map(|(k, t)| (k.clone(), complete_type(unit, t))).collect();
    unit.typedefs.extend(typedefs);
    let instances: Vec<(String, Layout)> =
        unit.instances.borrow().iter().map(|(k, l)| (k.clone(), complete_layout(unit, l))).collect();
    unit.instances.borrow_mut().extend(instances);
}

/// Enumerations declared inside a structure or class, or a class template (`template <typename
/// Real> struct AsianOption { enum CallPut { Call, Put }; CallPut type; }`), with the class's
/// name: its members and methods name the type, and code outside it `AsianOption<Real>::Put`.
pub(in crate::front::cuda::lower) fn nested_enums<'a>(unit: &Unit<'a>, n: Node<'a>) -> Vec<(String, Node<'a>)> {
    let is_class = |k: &str| matches!(k, "struct_specifier" | "class_specifier" | "union_specifier");
    let spec = match n.kind() {
        k if is_class(k) => Some(n),
        "template_declaration" => {
            let mut c = n.walk();
            let found = n.named_children(&mut c).find_map(|x| match x.kind() {
                k if is_class(k) => Some(x),
                "declaration" => x.child_by_field_name("type").filter(|t| is_class(t.kind())),
                _ => None,
            });
            found
        }
        _ => n.child_by_field_name("type").filter(|t| is_class(t.kind())),
    };
    let Some(spec) = spec else { return Vec::new() };
    let (Some(name), Some(body)) = (spec.child_by_field_name("name"), spec.child_by_field_name("body")) else {
        return Vec::new();
    };
    let class = unit.text(name).to_string();
    let mut c = body.walk();
    let items: Vec<Node> = body.named_children(&mut c).collect();
    items
        .into_iter()
        .filter_map(|f| match f.kind() {
            "enum_specifier" => Some(f),
            "field_declaration" => f.child_by_field_name("type").filter(|t| t.kind() == "enum_specifier"),
            _ => None,
        })
        .map(|e| (class.clone(), e))
        .collect()
}

/// The names of the enumerations a class declares inside it, as `Name` and `Class::Name` (an
/// enumeration is its underlying integer type).
fn declare_nested_enums<'a>(unit: &mut Unit<'a>, n: Node<'a>) {
    for (class, e) in nested_enums(unit, n) {
        let ty = match e.child_by_field_name("base") {
            Some(b) => type_of_specifier(unit, b, &HashMap::new()).unwrap_or(Ty::Int(IntTy::I32)),
            None => Ty::Int(IntTy::I32),
        };
        if let Some(name) = e.child_by_field_name("name") {
            let name = unit.text(name).to_string();
            unit.typedefs.entry(name.clone()).or_insert(ty.clone());
            unit.typedefs.insert(format!("{class}::{name}"), ty);
        }
    }
}

/// Methods are kept, as `Class::method`, so that calls on objects inline them.
pub(super) fn register_methods<'a>(unit: &mut Unit<'a>, class: &str, body: Node<'a>) {
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
pub(in crate::front::cuda::lower) fn declare_struct_template<'a>(unit: &mut Unit<'a>, tdecl: Node<'a>) {
    let mut c = tdecl.walk();
    let spec = tdecl.named_children(&mut c).find_map(|x| match x.kind() {
        "struct_specifier" | "class_specifier" => Some(x),
        "declaration" => {
            x.child_by_field_name("type").filter(|t| matches!(t.kind(), "struct_specifier" | "class_specifier"))
        }
        _ => None,
    });
    let Some(spec) = spec else { return };
    declare_nested_enums(unit, tdecl);
    let (Some(name), Some(body)) = (spec.child_by_field_name("name"), spec.child_by_field_name("body")) else { return };
    // An explicit specialization (`template <> struct S<double>`) is kept under its full name,
    // written as an instance's name is (`S<double>`), and found before the primary template.
    let name: String = unit.text(name).chars().filter(|c| !c.is_whitespace()).collect();
    if polymorphic(unit, spec, body) {
        // The primary template stays known for its parameters: an explicit specialization
        // without virtual functions (`SharedMemory<float>` beside an abstract
        // `SharedMemory<T>`) is an ordinary class.
        if !name.contains('<') {
            unit.struct_templates.insert(name.clone(), (tdecl, spec));
        }
        unit.polymorphic.insert(name);
        return;
    }
    register_methods(unit, &name, body);
    unit.struct_templates.insert(name, (tdecl, spec));
}

/// A class with a virtual function, or derived from such a class (its objects hold a vtable
/// pointer, and calls through them dispatch on the dynamic type).
pub(super) fn polymorphic(unit: &Unit, spec: Node, body: Node) -> bool {
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
pub(in crate::front::cuda::lower) fn virtual_refusal(span: Span, text: &str) -> Diagnostic {
    Diagnostic::at(
        ErrorKind::Unsupported,
        span,
        format!("type `{text}`: a class with virtual functions: calls through it dispatch on the object's dynamic type (read from its vtable in memory), which is deliberately not modelled"),
    )
    .note("analyse a copy of the kernel that calls the derived class's functions directly, on a non-virtual class")
}

/// The runtime's plain structures that kernels take by value (`cudaExtent` for a volume's
/// size, `cudaPos`, `cudaPitchedPtr`), laid out as `driver_types.h` declares them; a file's own
/// declaration of the name replaces them.
pub(in crate::front::cuda::lower) fn toolkit_structs() -> HashMap<String, Layout> {
    let size_t = Ty::Int(IntTy::U64);
    let void_ptr = Ty::Ptr(Box::new(PtrTy {
        pointee: Ty::Void,
        space: Space::Global,
        is_const: false,
        restrict: false,
        volatile: false,
    }));
    let decl = |name: &str, fields: &[(&str, &Ty)]| {
        let fields: Vec<Field> = fields
            .iter()
            .enumerate()
            .map(|(i, (f, ty))| Field {
                name: f.to_string(),
                offset: 8 * i as u64,
                ty: (*ty).clone(),
                dims: Vec::new(),
            })
            .collect();
        let layout = Layout {
            name: name.to_string(),
            size: 8 * fields.len() as u64,
            align: 8,
            fields,
            targs: Vec::new(),
            consts: Vec::new(),
        };
        (name.to_string(), layout)
    };
    HashMap::from([
        decl("cudaExtent", &[("width", &size_t), ("height", &size_t), ("depth", &size_t)]),
        decl("cudaPos", &[("x", &size_t), ("y", &size_t), ("z", &size_t)]),
        decl("cudaPitchedPtr", &[("ptr", &void_ptr), ("pitch", &size_t), ("xsize", &size_t), ("ysize", &size_t)]),
    ])
}

impl<'a> Unit<'a> {
    /// A structure's layout by name: declared, or an instance of a class template, or the
    /// structure a forward typedef names.
    pub(in crate::front::cuda::lower) fn layout(&self, name: &str) -> Option<Layout> {
        if let Some(l) = self.structs.get(name) {
            return Some(l.clone());
        }
        if let Some(l) = self.instances.borrow().get(name) {
            return Some(l.clone());
        }
        self.aliases.get(name).and_then(|tag| self.structs.get(tag)).cloned()
    }
}

/// Class template instances nested inside one another while one layout is worked out (nvcc
/// allows deeper nesting; kernels that move memory do not come near it).
pub(super) const MAX_INSTANTIATION_DEPTH: usize = 64;

/// `Vec<float, 4>`: the class template's layout with its parameters bound (cached by name).
pub(in crate::front::cuda::lower) fn instantiate(
    unit: &Unit,
    t: Node,
    tmpl: &HashMap<String, TemplateArg>,
) -> Option<Layout> {
    let (key, targs, bound) = class_template_args(unit, t, tmpl)?;
    if let Some(l) = unit.layout(&key) {
        return Some(l);
    }
    let name = unit.text(t.child_by_field_name("name")?).to_string();
    let (_, spec) = *unit.struct_templates.get(&name)?;
    let spec = match unit.struct_templates.get(&key) {
        Some(&(_, special)) => special,
        // A polymorphic primary template has no layout here (its uses are refused).
        None if unit.polymorphic.contains(&name) => return None,
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
pub(super) fn class_template_args(
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
    Some((instance_key(&name, &targs), targs, bound))
}

/// An instance's name: `Vec<float,4>`.
fn instance_key(name: &str, targs: &[(String, TemplateArg)]) -> String {
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
    key.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A class template's own name used inside it (`Packed128` in `static Packed128 zeros()`): the
/// instance whose methods are being inlined, its parameters bound in `tmpl`.
pub(in crate::front::cuda::lower) fn injected_class(
    unit: &Unit,
    name: &str,
    tmpl: &HashMap<String, TemplateArg>,
) -> Option<Layout> {
    let (tdecl, _) = *unit.struct_templates.get(name)?;
    let params = tdecl.child_by_field_name("parameters")?;
    let mut c = params.walk();
    let mut targs = Vec::new();
    for p in params.named_children(&mut c) {
        let pname = match p.kind() {
            "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                let mut k = p.walk();
                let x = p.named_children(&mut k).find(|x| x.kind() == "type_identifier").map(|x| unit.text(x));
                x
            }
            _ => p.child_by_field_name("declarator").map(|d| unit.text(d)),
        }?;
        targs.push((pname.to_string(), tmpl.get(pname)?.clone()));
    }
    unit.layout(&instance_key(name, &targs))
}

/// One template argument written in a type (`float`, `4`, `N`, `T`).
pub(super) fn template_value(
    unit: &Unit,
    g: Node,
    is_type: bool,
    tmpl: &HashMap<String, TemplateArg>,
) -> Option<TemplateArg> {
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
pub(super) fn layout_of<'a>(
    unit: &Unit<'a>,
    spec: Node<'a>,
    body: Node<'a>,
    first: &str,
    tmpl: &HashMap<String, TemplateArg>,
) -> Option<Layout> {
    let union = spec.kind() == "union_specifier";
    let mut consts: Vec<(String, i128)> = Vec::new();
    let mut fields = Vec::new();
    let (mut off, mut align) = (0u64, 1u64);
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
        // An anonymous structure or union member (`union { int2 data; struct { int a, b; }; }`):
        // its members are the enclosing one's, at its offset.
        if matches!(t.kind(), "struct_specifier" | "union_specifier")
            && t.child_by_field_name("name").is_none()
            && f.child_by_field_name("declarator").is_none()
        {
            let Some(inner) = t.child_by_field_name("body").and_then(|b| layout_of(unit, t, b, "", tmpl)) else {
                ok = false;
                break;
            };
            let a = explicit_align(unit.text(t)).unwrap_or(inner.align).max(inner.align);
            let Some(at) = (if union { Some(0) } else { round_up(off, a) }) else {
                return too_large(unit, first);
            };
            fields.extend(inner.fields.into_iter().map(|m| Field { offset: at + m.offset, ..m }));
            off = if union {
                off.max(inner.size)
            } else {
                let Some(end) = at.checked_add(inner.size) else { return too_large(unit, first) };
                end
            };
            align = align.max(a);
            continue;
        }
        let array_typedef = (t.kind() == "type_identifier").then(|| unit.array_typedefs.get(unit.text(t))).flatten();
        let (base, array_dims) = match array_typedef {
            Some((elem, dims)) => (elem.clone(), dims.clone()),
            None => match type_of_specifier(unit, t, tmpl) {
                Ok(base) => (base, Vec::new()),
                Err(_) => {
                    ok = false;
                    break;
                }
            },
        };
        let mut cc = f.walk();
        let decls: Vec<Node> = f.children_by_field_name("declarator", &mut cc).collect();
        for d in decls {
            // `int size() const;`, `T const &lower() const;`: a method declared here and defined
            // elsewhere takes no room in the object.
            if declares_function(d) {
                continue;
            }
            let Some((fname, ty, mut dims)) = field_declarator(unit, d, base.clone(), tmpl, &consts) else {
                ok = false;
                break;
            };
            // `tab3_t d;` with `typedef int tab3_t[4][4][4]`: the typedef's dimensions follow.
            dims.extend(array_dims.iter().copied());
            // A member of an incomplete structure's type (not a pointer to it) has no size: C
            // refuses it, and so does the layout.
            if struct_name(&ty).is_some_and(|s| unit.forward.contains(s)) {
                ok = false;
                break;
            }
            let a = align_of(unit, &ty);
            let a = explicit_align(unit.text(f)).unwrap_or(a).max(a);
            // Sizes and offsets in 64 bits, checked, as nvcc lays them out: an array or a
            // structure of 2^64 bytes or more is an error there ("array is too large", "class
            // is too large") and a refusal here, never a wrapped size.
            let size = dims.iter().try_fold(ty.size(), |z, &n| z.checked_mul(n));
            let Some(size) = size else { return too_large(unit, first) };
            let at = if union { Some(0) } else { round_up(off, a) };
            let end = at.and_then(|at| if union { Some(size.max(off)) } else { at.checked_add(size) });
            let (Some(at), Some(end)) = (at, end) else { return too_large(unit, first) };
            fields.push(Field { name: fname, offset: at, ty, dims });
            off = end;
            align = align.max(a);
        }
    }
    if !ok {
        return None;
    }
    if let Some(a) = alignas_of(unit, spec, tmpl, &consts).or_else(|| explicit_align(unit.text(spec))) {
        align = align.max(a);
    }
    let Some(size) = round_up(off, align).map(|z| z.max(align)) else { return too_large(unit, first) };
    Some(Layout { name: first.to_string(), size, align, fields, targs: Vec::new(), consts })
}

/// `off` rounded up to a multiple of `align` (a power of two), `None` past 2^64 - 1.
fn round_up(off: u64, align: u64) -> Option<u64> {
    let a = align.max(1);
    off.checked_add(a - 1).map(|x| x / a * a)
}

/// A structure of 2^64 bytes or more: left unknown (`Unit::too_large`), so its use is refused.
fn too_large(unit: &Unit, name: &str) -> Option<Layout> {
    unit.too_large.borrow_mut().insert(name.to_string());
    None
}

/// An integer constant inside a structure (array sizes, `static constexpr` members), with the
/// class's template arguments and earlier static members in scope.
pub(super) fn static_value(
    unit: &Unit,
    v: Node,
    tmpl: &HashMap<String, TemplateArg>,
    consts: &[(String, i128)],
) -> Option<i128> {
    let mut l = Lowerer::new(
        unit,
        KernelBuilder::new(Kernel::new(String::new(), Span::default())),
        vec![unit.globals.clone()],
        1,
        tmpl.clone(),
        Vec::new(),
    );
    for (k, x) in tmpl {
        if let TemplateArg::Int(x) = x {
            l.scopes[0].insert(k.clone(), Sym::Const(*x, IntTy::I64));
        }
    }
    for (k, x) in consts {
        l.scopes[0].insert(k.clone(), Sym::Const(*x, IntTy::U64));
    }
    let (e, _) = l.expr(v).ok()?;
    fold_constant(&e)
}

/// A member's name, type and array dimensions.
/// Whether a member's declarator declares a function (`f()`, `*f()`, `&f() const`), not data: a
/// function declarator under any pointer and reference declarators (a pointer to a function
/// member, `int (*f)(int)`, has the function declarator outside the pointer and is data).
fn declares_function(mut d: Node) -> bool {
    loop {
        match d.kind() {
            // `(*fp)(int)` names a pointer to a function: data.
            "function_declarator" => {
                return d.child_by_field_name("declarator").is_some_and(|n| n.kind() != "parenthesized_declarator")
            }
            "pointer_declarator" | "reference_declarator" => {
                let inner = d.child_by_field_name("declarator").or_else(|| {
                    let mut c = d.walk();
                    let x = d.named_children(&mut c).find(|x| x.kind().ends_with("declarator"));
                    x
                });
                match inner {
                    Some(i) => d = i,
                    None => return false,
                }
            }
            _ => return false,
        }
    }
}

pub(super) fn field_declarator(
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
            // `m[2][3]` is `(m[2])[3]`: the inner declarator holds the outer dimensions.
            let (name, ty, mut dims) =
                field_declarator(unit, d.child_by_field_name("declarator")?, base, tmpl, consts)?;
            dims.push(v);
            Some((name, ty, dims))
        }
        _ => None,
    }
}

/// Types written with a scope or a keyword: `std::size_t`, `ns::Vec`, `struct P`, `enum E`.
/// `thrust::complex<float>`, `cuda::std::complex<double>`: two values aligned to their pair's
/// size (both libraries declare them so), moved whole as `float2` and `double2` are. Their
/// arithmetic is values in registers.
pub(in crate::front::cuda::lower) fn library_complex(text: &str, tmpl: &HashMap<String, TemplateArg>) -> Option<Ty> {
    let text: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    let text = text.trim_start_matches("::");
    let inner =
        ["thrust::complex<", "cuda::std::complex<"].iter().find_map(|p| text.strip_prefix(p))?.strip_suffix('>')?;
    let elem = match tmpl.get(inner) {
        Some(TemplateArg::Type(t)) => t.clone(),
        _ => named_type(inner)?,
    };
    match elem {
        Ty::Float(4) => named_type("float2"),
        Ty::Float(8) => named_type("double2"),
        _ => None,
    }
}

pub(in crate::front::cuda::lower) fn other_type(
    unit: &Unit,
    t: Node,
    tmpl: &HashMap<String, TemplateArg>,
) -> Result<Ty> {
    let text = unit.text(t);
    if let Some(ty) = std_trait(unit, text, tmpl) {
        return Ok(ty);
    }
    if t.kind() == "template_type" {
        if let Some(l) = instantiate(unit, t, tmpl) {
            return Ok(l.ty());
        }
    }
    if let Some(ty) = member_type_of_instance(unit, t, tmpl) {
        return Ok(ty);
    }
    if let Some(ty) = library_complex(text, tmpl) {
        return Ok(ty);
    }
    if let Some(l) = pair_layout(unit, t, tmpl) {
        return Ok(l.ty());
    }
    let last = match t.kind() {
        "qualified_identifier" => text.rsplit("::").next().unwrap_or(text).trim(),
        "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier" => {
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
    if let Some(d) = too_large_refusal(unit, unit.span(t), bare) {
        return Err(d);
    }
    if unit.incomplete.contains(last) {
        return Err(incomplete_refusal(unit.span(t), text));
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

/// <type_traits>' transformations of a named type: `std::make_unsigned<T>::type`,
/// `make_signed_t<T>`, and those that change nothing the analysis sees (`remove_const`,
/// `remove_cv`, `remove_volatile`, `remove_reference`, `decay`, `type_identity`).
fn std_trait(unit: &Unit, text: &str, tmpl: &HashMap<String, TemplateArg>) -> Option<Ty> {
    let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let t = t.strip_prefix("typename ").unwrap_or(&t).trim();
    let t = t.strip_prefix("::").unwrap_or(t);
    let t = t.strip_prefix("std::").or_else(|| t.strip_prefix("cuda::std::"))?;
    let (name, rest) = t.split_once('<')?;
    let (arg, tail) = rest.rsplit_once('>')?;
    let name = name.trim();
    let (trait_name, alias) = match name.strip_suffix("_t") {
        Some(n) => (n, true),
        None => (name, false),
    };
    if alias != tail.trim().is_empty() || (!alias && tail.trim() != "::type") {
        return None;
    }
    let arg = arg.trim();
    let base = match tmpl.get(arg) {
        Some(TemplateArg::Type(ty)) => ty.clone(),
        _ => unit.typedefs.get(arg).cloned().or_else(|| named_type(arg)).or_else(|| {
            let words = arg.split_whitespace().collect::<Vec<_>>();
            words
                .iter()
                .all(|w| matches!(*w, "unsigned" | "signed" | "short" | "long" | "int" | "char"))
                .then(|| crate::front::cuda::types::sized_type(arg))
        })?,
    };
    match (trait_name, base) {
        ("make_unsigned", Ty::Int(i)) => Some(Ty::Int(IntTy { bits: i.bits, signed: false })),
        ("make_signed", Ty::Int(i)) => Some(Ty::Int(IntTy { bits: i.bits, signed: true })),
        ("remove_const" | "remove_cv" | "remove_volatile" | "remove_reference" | "decay" | "type_identity", ty) => {
            Some(ty)
        }
        _ => None,
    }
}

/// `vec4<T>::Type`: a type member (`typedef float4 Type;`, `using Type = float4;`) of a class
/// template's instance, from its explicit specialization where one matches (`template <> struct
/// vec4<float>`), else from the primary template with its parameters bound.
fn member_type_of_instance(unit: &Unit, t: Node, tmpl: &HashMap<String, TemplateArg>) -> Option<Ty> {
    if t.kind() != "qualified_identifier" {
        return None;
    }
    let scope = t.child_by_field_name("scope").filter(|s| s.kind() == "template_type")?;
    let name = t.child_by_field_name("name")?;
    if name.kind() != "type_identifier" {
        return None;
    }
    let member = unit.text(name);
    let (key, _, bound) = class_template_args(unit, scope, tmpl)?;
    let cname = unit.text(scope.child_by_field_name("name")?).to_string();
    let (_, spec) = match unit.struct_templates.get(&key) {
        Some(s) => *s,
        None if unit.polymorphic.contains(&cname) => return None,
        None => *unit.struct_templates.get(&cname)?,
    };
    let body = spec.child_by_field_name("body")?;
    let mut c = body.walk();
    let items: Vec<Node> = body.named_children(&mut c).collect();
    for item in items {
        match item.kind() {
            "type_definition" => {
                let mut cc = item.walk();
                let names: Vec<Node> = item.children_by_field_name("declarator", &mut cc).collect();
                if names.iter().any(|d| d.kind() == "type_identifier" && unit.text(*d) == member) {
                    return type_of_specifier(unit, item.child_by_field_name("type")?, &bound).ok();
                }
            }
            "alias_declaration" if item.child_by_field_name("name").is_some_and(|n| unit.text(n) == member) => {
                let td = item.child_by_field_name("type")?;
                return type_of_specifier(unit, td.child_by_field_name("type")?, &bound).ok();
            }
            _ => {}
        }
    }
    None
}

/// The error for a type the front end does not know, naming what is deliberately not modelled.
pub(in crate::front::cuda::lower) fn unknown_type(span: Span, text: &str) -> Diagnostic {
    let lower = text.to_ascii_lowercase();
    if lower.contains("texture") || lower.contains("surface") {
        return Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!(
                "type `{text}`: texture and surface objects (`cudaTextureObject_t`, `cudaSurfaceObject_t`) and file-scope references (`texture<float, 2> t;`) are read through the texture functions; this type is not one of them"
            ),
        )
        .note("pass the texture object itself, or name the file-scope reference in the fetch (`tex2D(t, x, y)`)");
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
    if lower.starts_with("cub::") || lower.starts_with("hipcub::") || lower.contains("::cub::") {
        return Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!("type `{text}`: cub's block and warp collectives (BlockReduce, BlockScan, BlockLoad, WarpReduce, ...) are not modelled: their shared-memory traffic and global accesses follow cub's algorithms, which depend on the template arguments and the architecture"),
        )
        .note("analyse a copy of the kernel with the collective written out (a shared-memory tree reduction, a warp shuffle loop), or count it from the machine code with --via sass");
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

/// A structure the file declares (`struct T;`, `typedef struct T T;`) and never defines.
pub(in crate::front::cuda::lower) fn incomplete_refusal(span: Span, text: &str) -> Diagnostic {
    Diagnostic::at(
        ErrorKind::Unsupported,
        span,
        format!("type `{text}` is declared but never defined in the file: its members and size are not known"),
    )
    .note("include the header that defines it (-I DIR), or define the structure in the file")
}

/// Warp matrix (tensor core) operations: which lane holds which element of a fragment is not
/// specified by CUDA, so the addresses of `load_matrix_sync`/`store_matrix_sync` are unknown.
pub(in crate::front::cuda::lower) fn wmma_refusal(span: Span, what: &str) -> Diagnostic {
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
#[allow(clippy::type_complexity)]
pub(in crate::front::cuda::lower) fn global_values<'a>(
    unit: &Unit<'a>,
    decls: &[Node<'a>],
) -> (HashMap<String, Sym>, Vec<(String, Ty, Node<'a>)>) {
    let mut constants = Vec::new();
    let mut l = Lowerer::new(
        unit,
        KernelBuilder::new(Kernel::new(String::new(), Span::default())),
        vec![unit.globals.clone()],
        1,
        HashMap::new(),
        Vec::new(),
    );
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
                    l.scopes[0]
                        .insert(name, Sym::Texture(super::super::texture::TextureRef::declared(unit, unit.text(t))));
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
            // `__managed__` memory is global memory the host sees too: the same accesses.
            d || quals.contains(&"__managed__")
        } && !quals.contains(&"__shared__");
        let file_shared = quals.contains(&"__shared__");
        if !constant && !is_const && !device && !file_shared {
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
                // Not an array: its value is the launch's (the kernel's own copy of the name
                // replaces this one).
                if dims.is_none() && matches!(ty, Ty::Int(_) | Ty::Float(_) | Ty::Ptr(_) | Ty::Vector { .. }) {
                    constants.push((name.clone(), ty.clone(), d));
                }
                l.scopes[0].insert(name, Sym::Opaque(ty, "`__constant__` memory"));
                continue;
            }
            if file_shared {
                // `__shared__ float tile[32][33];` at file scope: sized (or `extern` unsized).
                let is_extern = quals.contains(&"extern");
                let dims = dims.unwrap_or_default();
                if dims.iter().skip(1).all(|d| d.is_some()) && (is_extern || dims.iter().all(|d| d.is_some())) {
                    let is_extern = is_extern || dims.first().is_some_and(|d| d.is_none());
                    let dims = dims.into_iter().map(|d| d.unwrap_or(0)).collect();
                    let align = shared_align(unit, &ty, unit.text(n));
                    let arr = SharedArray {
                        name: name.clone(),
                        elem: ty,
                        dims,
                        is_extern,
                        span: unit.span(d),
                        align,
                        in_kernel: false,
                    };
                    l.scopes[0].insert(name, Sym::FileShared(arr));
                }
                continue;
            }
            if let (true, Ty::Int(it), None, Some(i)) = (is_const, &ty, &dims, init) {
                if let Ok((e, _)) = l.expr(i) {
                    if let Some(v) = fold_constant(&e) {
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
    (l.scopes.pop().unwrap_or_default(), constants)
}

/// A structure of 2^64 bytes or more (see `Unit::too_large`): refused by name, as nvcc refuses it.
pub(in crate::front::cuda::lower) fn too_large_refusal(unit: &Unit, span: Span, name: &str) -> Option<Diagnostic> {
    let name = name.rsplit("::").next().unwrap_or(name).trim();
    unit.too_large.borrow().contains(name).then(|| {
        Diagnostic::at(
            ErrorKind::Unsupported,
            span,
            format!("structure `{name}` is 2^64 bytes or more: nvcc refuses it (\"class is too large\" or \"array is too large\"); sizes are at most 2^64 - 1 bytes"),
        )
    })
}

/// `std::pair<A, B>` of plain types (a kernel parameter, PyTorch's RNG seeds): a structure of
/// `first` and `second`, laid out as C lays out two members ([`align_of`]).
fn pair_layout(unit: &Unit, t: Node, tmpl: &HashMap<String, TemplateArg>) -> Option<Layout> {
    let full: String = unit.text(t).chars().filter(|c| !c.is_whitespace()).collect();
    let full = full.trim_start_matches("::");
    if !["std::pair<", "pair<", "cuda::std::pair<", "thrust::pair<"].iter().any(|p| full.starts_with(p)) {
        return None;
    }
    // `std::pair<A, B>` parses as a scope around the template type.
    let mut tt = t;
    while tt.kind() == "qualified_identifier" {
        tt = tt.child_by_field_name("name")?;
    }
    if tt.kind() != "template_type" {
        return None;
    }
    let args = tt.child_by_field_name("arguments")?;
    let mut c = args.walk();
    let tys: Vec<Ty> = args
        .named_children(&mut c)
        .map(|a| {
            // A plain type (no pointer or array declarator), resolved as any other.
            if a.kind() != "type_descriptor" || a.child_by_field_name("declarator").is_some() {
                return None;
            }
            super::super::type_of_specifier(unit, a.child_by_field_name("type")?, tmpl).ok()
        })
        .collect::<Option<_>>()?;
    let [a, b] = tys.as_slice() else { return None };
    let (aa, ab) = (align_of(unit, a), align_of(unit, b));
    let second = a.size().div_ceil(ab) * ab;
    let al = aa.max(ab);
    let key: String = unit.text(t).chars().filter(|c| !c.is_whitespace()).collect();
    let layout = Layout {
        name: key.clone(),
        size: (second + b.size()).div_ceil(al) * al,
        align: al,
        fields: vec![
            Field { name: "first".into(), offset: 0, ty: a.clone(), dims: Vec::new() },
            Field { name: "second".into(), offset: second, ty: b.clone(), dims: Vec::new() },
        ],
        targs: Vec::new(),
        consts: Vec::new(),
    };
    unit.instances.borrow_mut().insert(key, layout.clone());
    Some(layout)
}
