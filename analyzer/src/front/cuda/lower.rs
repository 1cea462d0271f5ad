//! tree-sitter-cuda syntax -> kernel IR.
//!
//! Every `__global__` function is lowered; `__device__` functions it calls are inlined. C's
//! typing is applied here (promotions, usual arithmetic conversions, pointer scaling), so the
//! IR's arithmetic is explicit. Anything not modelled is an error at its span: an access is
//! never dropped silently.

#[path = "cpp.rs"]
mod cpp;

use super::preprocess::Preprocessed;
use super::types::{common_int, named_type, promote, vector_field};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use crate::launch::{parse_number, ParamValue};
use crate::source::Span;
use std::collections::HashMap;
use tree_sitter::{Node, Parser};

mod asm;
mod coop_groups;
mod intrinsics;
mod overload;

/// Deepest expression or statement nesting lowered before giving up (keeps the stack bounded).
const MAX_DEPTH: u32 = 400;
/// Deepest chain of distinct `__device__` calls inlined (recursion is refused on its own).
const MAX_INLINE: usize = 64;

/// Array dimensions, outermost first; `None` for `[]`.
type Dims = Vec<Option<u64>>;

/// A template argument given with `--arg NAME=VALUE`.
#[derive(Clone, Debug)]
enum TemplateArg {
    Int(i128),
    Type(Ty),
    /// A `__device__` function passed as a template argument (`reduce<warpSum>(v)`).
    Func(String),
}

struct Unit<'a> {
    pre: &'a Preprocessed,
    src: &'a [u8],
    typedefs: HashMap<String, Ty>,
    device_fns: HashMap<String, Node<'a>>,
    /// Every definition of each function name, in file order: C++ overloads ([`overload`]).
    overloads: HashMap<String, Vec<Node<'a>>>,
    /// The `template <...>` around a function template, by function name.
    fn_templates: HashMap<String, Node<'a>>,
    /// File- and namespace-scope names: constants, enumerators, `__constant__` arrays.
    globals: HashMap<String, Sym>,
    /// Structures and classes by name: their C layout.
    structs: HashMap<String, cpp::Layout>,
    /// Class templates by name: the `template <...>` and its structure.
    struct_templates: HashMap<String, (Node<'a>, Node<'a>)>,
    /// Instances of class templates made so far (`Vec2<float>`).
    instances: std::cell::RefCell<HashMap<String, cpp::Layout>>,
    /// Instances whose layout is being worked out, outermost first (one that needs itself has none).
    instantiating: std::cell::RefCell<Vec<String>>,
    /// Classes (and class templates) with virtual functions, or derived from one.
    polymorphic: std::collections::HashSet<String>,
    /// The syntax tree's root (lambdas are found again by their byte range).
    root: Option<Node<'a>>,
    args: HashMap<String, String>,
}

impl<'a> Unit<'a> {
    fn text(&self, n: Node) -> &'a str {
        std::str::from_utf8(&self.src[n.byte_range()]).unwrap_or("")
    }
    fn span(&self, n: Node) -> Span {
        let p = n.start_position();
        let len = if n.start_position().row == n.end_position().row {
            n.end_byte() - n.start_byte()
        } else {
            self.text(n).find('\n').unwrap_or(1)
        };
        self.pre.locate(p.row, p.column, len.max(1))
    }
}

/// Parses the preprocessed text and lowers every kernel.
pub fn lower_translation_unit(pre: &Preprocessed, args: &[(String, String)]) -> Result<Module> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .map_err(|e| Diagnostic::new(ErrorKind::Syntax, format!("cannot load the CUDA grammar: {e}")))?;
    let gave_up = || Diagnostic::new(ErrorKind::Syntax, "the CUDA parser gave up on this file");
    let mut tree = parser.parse(&pre.text, None).ok_or_else(gave_up)?;
    // `(min) && (x)` read as a cast of `&&(x)`: parsed again with the parentheses blanked.
    let repaired = super::misread::repair_casts(&pre.text, tree.root_node());
    if let Some(text) = &repaired {
        tree = parser.parse(text, None).ok_or_else(gave_up)?;
    }
    let src = repaired.as_deref().unwrap_or(&pre.text);
    let mut unit = Unit {
        pre,
        src: src.as_bytes(),
        typedefs: HashMap::new(),
        device_fns: HashMap::new(),
        overloads: HashMap::new(),
        fn_templates: HashMap::new(),
        globals: HashMap::new(),
        structs: HashMap::new(),
        struct_templates: HashMap::new(),
        instances: Default::default(),
        instantiating: Default::default(),
        polymorphic: Default::default(),
        root: Some(tree.root_node()),
        args: args.iter().cloned().collect(),
    };
    let mut top_decls = Vec::new();
    let mut kernels = Vec::new();
    let mut stack = vec![(tree.root_node(), None::<Node>)];
    // Iterative walk over top-level containers (namespaces, templates, extern "C" blocks).
    let mut found = Vec::new();
    while let Some((n, template)) = stack.pop() {
        match n.kind() {
            "translation_unit" | "declaration_list" | "namespace_definition" | "linkage_specification" => {
                let mut c = n.walk();
                let children: Vec<Node> = n.children(&mut c).collect();
                for ch in children.into_iter().rev() {
                    stack.push((ch, None));
                }
            }
            "template_declaration" => {
                cpp::declare_struct_template(&mut unit, n);
                let mut c = n.walk();
                for ch in n.named_children(&mut c) {
                    if ch.kind() == "function_definition" {
                        stack.push((ch, Some(n)));
                    }
                }
            }
            "function_definition" => found.push((n, template)),
            "declaration" | "enum_specifier" | "struct_specifier" | "class_specifier" | "union_specifier" => {
                cpp::declare_types(&mut unit, n);
                top_decls.push(n);
            }
            "type_definition" => {
                cpp::declare_types(&mut unit, n);
                if let Some(t) = n.child_by_field_name("type") {
                    if let Ok(ty) = type_of_specifier(&unit, t, &HashMap::new()) {
                        let mut c = n.walk();
                        for d in n.children_by_field_name("declarator", &mut c) {
                            if d.kind() == "type_identifier" {
                                unit.typedefs.insert(unit.text(d).to_string(), ty.clone());
                            }
                        }
                    }
                }
            }
            "alias_declaration" => {
                if let (Some(name), Some(t)) = (n.child_by_field_name("name"), n.child_by_field_name("type")) {
                    if let Some(ts) = t.child_by_field_name("type") {
                        if let Ok(ty) = type_of_specifier(&unit, ts, &HashMap::new()) {
                            unit.typedefs.insert(unit.text(name).to_string(), ty);
                        }
                    }
                }
            }
            _ => {}
        }
    }
    for &(f, template) in &found {
        if has_qualifier(&unit, f, "__device__") && !has_qualifier(&unit, f, "__global__") {
            if let Some(name) = function_name(&unit, f) {
                if let Some(t) = template {
                    unit.fn_templates.insert(name.clone(), t);
                }
                unit.device_fns.insert(name, f);
            }
        }
    }
    // Functions without `__device__` (`constexpr` helpers, `__host__` only): callable too, as a
    // fallback, so that `constexpr` helpers inline.
    for &(f, template) in &found {
        if !has_qualifier(&unit, f, "__global__") {
            if let Some(name) = function_name(&unit, f) {
                if !unit.device_fns.contains_key(&name) && name != "main" {
                    if let Some(t) = template {
                        unit.fn_templates.insert(name.clone(), t);
                    }
                    unit.device_fns.insert(name, f);
                }
            }
        }
    }
    for &(f, _) in &found {
        if !has_qualifier(&unit, f, "__global__") {
            if let Some(name) = function_name(&unit, f) {
                unit.overloads.entry(name).or_default().push(f);
            }
        }
    }
    unit.globals = cpp::global_values(&unit, &top_decls);
    let mut failed = Vec::new();
    for &(f, template) in &found {
        if has_qualifier(&unit, f, "__global__") {
            match lower_kernel(&unit, f, template) {
                Ok(k) => kernels.push(k),
                Err(d) => failed.push((function_name(&unit, f).unwrap_or_default(), d)),
            }
        }
    }
    Ok(Module { kernels, failed, ..Module::default() })
}

fn has_qualifier(unit: &Unit, f: Node, q: &str) -> bool {
    let mut c = f.walk();
    let found = f.children(&mut c).any(|ch| {
        ch.kind() == q
            || (ch.kind() != "compound_statement" && ch.kind() != "function_declarator" && unit.text(ch) == q)
    });
    found
}

fn function_declarator(f: Node) -> Option<Node> {
    let mut d = f.child_by_field_name("declarator")?;
    loop {
        // `operator T *()`: its parameter list is the abstract function declarator inside.
        if d.kind() == "function_declarator" || d.kind() == "abstract_function_declarator" {
            return Some(d);
        }
        // `T &f()`: a reference declarator holds its inner declarator as a plain child.
        d = match d.child_by_field_name("declarator") {
            Some(x) => x,
            None if d.kind() == "reference_declarator" => d.named_child(0)?,
            None => return None,
        };
    }
}

fn function_name(unit: &Unit, f: Node) -> Option<String> {
    let d = function_declarator(f)?;
    Some(unit.text(d.child_by_field_name("declarator")?).to_string())
}

/// First syntax error inside a node, if any.
fn first_error(n: Node) -> Option<Node> {
    if !n.has_error() {
        return None;
    }
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.is_error() || x.is_missing() {
            return Some(x);
        }
        let mut c = x.walk();
        let children: Vec<Node> = x.children(&mut c).filter(|ch| ch.has_error()).collect();
        for ch in children.into_iter().rev() {
            stack.push(ch);
        }
    }
    Some(n)
}

/// A parse error as clang words it: `expected ';'` where a token is missing (at the end of the
/// code before it), else the token that cannot be parsed.
fn syntax_error(unit: &Unit, e: Node, kernel: &str) -> Diagnostic {
    let src = unit.src;
    let start = e.start_byte().min(src.len());
    // The last token before the error: clang's caret for a missing token goes just after it;
    // ours is on its last character (a span past the line's end would run into the next).
    let prev = src[..start].iter().rposition(|b| !b.is_ascii_whitespace());
    let at = |byte: usize| {
        let row = src[..byte].iter().filter(|&&b| b == b'\n').count();
        let col = byte - src[..byte].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        unit.pre.locate(row, col, 1)
    };
    let prev_token = |end: usize| {
        let line_start = src[..end].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let text = String::from_utf8_lossy(&src[line_start..end]).to_string();
        text.rsplit(char::is_whitespace)
            .next()
            .unwrap_or("")
            .chars()
            .rev()
            .take(30)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>()
    };
    if e.is_missing() && e.kind() == "}" {
        // clang: `expected '}'` with a note at the `{` it would match; the brace is what is missing.
        let at_end = src[start..].iter().all(|b| b.is_ascii_whitespace());
        let span = prev.map_or_else(|| unit.span(e), at);
        let where_ = if at_end { " at the end of the file" } else { "" };
        return Diagnostic::at(
            ErrorKind::Syntax,
            span,
            format!("missing `}}`{where_} in kernel `{kernel}`: a `{{` is not closed"),
        );
    }
    if e.is_missing() {
        let what = e.kind();
        return match prev {
            Some(i) => Diagnostic::at(
                ErrorKind::Syntax,
                at(i),
                format!("expected `{what}` after `{}` in kernel `{kernel}`", prev_token(i + 1)),
            ),
            None => Diagnostic::at(ErrorKind::Syntax, unit.span(e), format!("expected `{what}` in kernel `{kernel}`")),
        };
    }
    // A statement that runs on into the next line: the `;` at its end is missing.
    if let Some(i) = prev {
        let next_line = src[i..start].contains(&b'\n');
        if next_line && !b";{}:,(".contains(&src[i]) && !src[..=i].ends_with(b"*/") {
            return Diagnostic::at(
                ErrorKind::Syntax,
                at(i),
                format!("expected `;` after `{}` in kernel `{kernel}`", prev_token(i + 1)),
            );
        }
    }
    let text = unit.text(e);
    let token: String = text.split_whitespace().next().unwrap_or(text).chars().take(40).collect();
    Diagnostic::at(ErrorKind::Syntax, unit.span(e), format!("unexpected `{token}` in kernel `{kernel}`"))
}

/// A type from a `type_specifier` node (no declarator).
fn type_of_specifier(unit: &Unit, t: Node, tmpl: &HashMap<String, TemplateArg>) -> Result<Ty> {
    let text = unit.text(t);
    match t.kind() {
        "primitive_type" | "type_identifier" => {
            if let Some(TemplateArg::Type(ty)) = tmpl.get(text) {
                return Ok(ty.clone());
            }
            if let Some(ty) = unit.typedefs.get(text) {
                return Ok(ty.clone());
            }
            if let Some(l) = unit.layout(text) {
                return Ok(l.ty());
            }
            if unit.polymorphic.contains(text) {
                return Err(cpp::virtual_refusal(unit.span(t), text));
            }
            named_type(text).ok_or_else(|| cpp::unknown_type(unit.span(t), text))
        }
        "sized_type_specifier" => {
            let words: Vec<&str> = text.split_whitespace().collect();
            let unsigned = words.contains(&"unsigned");
            let longs = words.iter().filter(|w| **w == "long").count();
            let short = words.contains(&"short");
            let chr = words.contains(&"char");
            let bits = if chr {
                8
            } else if short {
                16
            } else if longs > 0 {
                64
            } else {
                32
            };
            if words.contains(&"double") {
                return Ok(Ty::Float(8));
            }
            Ok(Ty::Int(IntTy { bits, signed: !unsigned }))
        }
        "qualified_identifier" | "template_type" | "struct_specifier" | "class_specifier" | "enum_specifier" => {
            cpp::other_type(unit, t, tmpl)
        }
        _ => Err(Diagnostic::at(ErrorKind::Unsupported, unit.span(t), format!("type `{text}` is not supported"))),
    }
}

#[derive(Clone, Debug)]
enum Sym {
    Local(LocalId, Ty),
    Param(ParamId),
    Shared(SharedId),
    Const(i128, IntTy),
    /// A per-thread array (registers or local memory): not global or shared traffic.
    LocalArray(Ty),
    /// A scalar `__shared__` variable.
    SharedScalar(SharedId),
    /// A reference bound to memory: the local holds its address.
    Ref {
        ptr: LocalId,
        ty: Ty,
        space: Space,
        volatile: bool,
        text: String,
    },
    /// A value whose contents are not tracked (a `__constant__` array or scalar, a float
    /// constant, a structure held in registers); reading it moves no global or shared memory.
    Opaque(Ty, &'static str),
    /// A structure in registers (a by-value parameter or local): its members by name.
    Struct(cpp::StructVal),
    /// A lambda (index into `Lowerer::lambdas`), inlined where it is called.
    Lambda(usize),
    /// A cooperative group or a synchronisation object ([`coop_groups`]).
    Group(coop_groups::Group),
    /// A pointer to a known `__device__` function (`fn_t f = dbl;`).
    Func(String),
    /// A file-scope `__device__` variable (`__device__ int n;`, `__device__ float a[N];`):
    /// global memory of its own, reached through a kernel parameter made on first use.
    /// A file-scope texture or surface reference (`texture<float, 1> t;`): refused where used.
    Texture(String),
    DeviceVar {
        name: String,
        elem: Ty,
        /// Array dimensions, outermost first; empty for a scalar.
        dims: Vec<u64>,
        volatile: bool,
        span: Span,
    },
}

/// An lvalue.
enum Place {
    Local(LocalId, Ty),
    Mem { addr: Expr, ty: Ty, space: Space, volatile: bool, text: String, span: Span },
    LocalArray(Ty),
}

struct Inline {
    /// The function being inlined (its definition's node), to tell recursion from a deep chain.
    def: usize,
    ret_flag: LocalId,
    ret_val: Option<(LocalId, Ty)>,
    /// `auto` return type (lambdas, `auto f()`): the first `return` sets it.
    auto_ret: bool,
}

struct Lowerer<'u, 'a> {
    unit: &'u Unit<'a>,
    k: Kernel,
    scopes: Vec<HashMap<String, Sym>>,
    pending: Vec<Stmt>,
    /// Above zero inside conditions, short-circuit operands and ternaries: side effects there
    /// cannot be hoisted.
    no_hoist: u32,
    inline: Vec<Inline>,
    tmpl: HashMap<String, TemplateArg>,
    depth: u32,
    /// Lambdas bound to local names (`Sym::Lambda` indexes this): their byte ranges.
    lambdas: Vec<(usize, usize)>,
    /// Pointer locals declared without an address yet: the first one sets their space.
    unset_ptrs: std::collections::HashSet<LocalId>,
}

fn lower_kernel(unit: &Unit, f: Node, template: Option<Node>) -> Result<Kernel> {
    let name = function_name(unit, f).unwrap_or_default();
    let span = unit.span(function_declarator(f).and_then(|d| d.child_by_field_name("declarator")).unwrap_or(f));
    if let Some(e) = first_error(f) {
        return Err(syntax_error(unit, e, &name));
    }
    // A kernel using warp matrix operations is refused as such, whatever else stops it first.
    if let Some(w) = first_wmma(unit, f) {
        let what = w.parent().map_or_else(|| unit.text(w), |p| unit.text(p));
        let what: String = what.chars().take(60).collect();
        return Err(cpp::wmma_refusal(unit.span(w), &format!("`{what}`")));
    }
    let mut l = Lowerer {
        unit,
        k: Kernel::new(name.clone(), span),
        scopes: vec![unit.globals.clone()],
        pending: Vec::new(),
        no_hoist: 0,
        inline: Vec::new(),
        tmpl: HashMap::new(),
        depth: 0,
        lambdas: Vec::new(),
        unset_ptrs: Default::default(),
    };
    if let Some(t) = template {
        l.template_params(t)?;
    }
    let decl =
        function_declarator(f).ok_or_else(|| Diagnostic::at(ErrorKind::Syntax, span, "kernel without parameters"))?;
    if let Some(params) = decl.child_by_field_name("parameters") {
        let mut c = params.walk();
        for p in params.named_children(&mut c) {
            match p.kind() {
                // A default (`int *partial = NULL`) matters only to launches that leave it out.
                "parameter_declaration" | "optional_parameter_declaration" => {
                    if l.struct_param(p)? {
                        continue;
                    }
                    let (pname, ty) = l.declared(p)?;
                    let Some(pname) = pname else { continue };
                    let id = ParamId(l.k.params.len() as u32);
                    l.k.params.push(Param { name: pname.clone(), ty, span: unit.span(p), device_variable: false });
                    l.scopes[0].insert(pname, Sym::Param(id));
                }
                "comment" => {}
                _ => return Err(l.unsupported(p, "this kind of parameter")),
            }
        }
    }
    let body = f
        .child_by_field_name("body")
        .ok_or_else(|| Diagnostic::at(ErrorKind::Syntax, span, "kernel without a body"))?;
    // Parameters the body assigns (`A += row * K`, `p++`) live in locals from the start.
    let mut out = l.params_to_locals(body);
    l.block(body, &mut out)?;
    l.k.body = out;
    intrinsics::settle_atomics(&mut l.k);
    Ok(l.k)
}

/// `new`, `delete`, `malloc`, `cudaMalloc` in device code: allocations in the device heap,
/// whose addresses the allocator picks at run time.
fn device_heap(span: Span, text: &str) -> Diagnostic {
    let t: String = text.lines().next().unwrap_or("").chars().take(60).collect();
    Diagnostic::at(
        ErrorKind::Unsupported,
        span,
        format!("`{t}`: device-heap allocation (new/delete, malloc/free, and the device runtime's cudaMalloc/cudaFree of dynamic parallelism) is deliberately not modelled: the allocator picks the addresses at run time"),
    )
    .note("analyse a copy of the kernel that takes the memory as a pointer parameter")
}

/// The first `wmma::` scope (`nvcuda::wmma::fragment`, `wmma::load_matrix_sync`) in a function.
fn first_wmma<'a>(unit: &Unit<'a>, f: Node<'a>) -> Option<Node<'a>> {
    let mut stack = vec![f];
    while let Some(n) = stack.pop() {
        if n.kind() == "namespace_identifier" && unit.text(n) == "wmma" {
            return Some(n);
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.named_children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
    None
}

fn cpp_struct(ty: &Ty) -> bool {
    matches!(ty, Ty::Vector { name, .. } if name.starts_with("struct "))
}

fn is_void(ty: &Ty) -> bool {
    matches!(ty, Ty::Void)
}

impl<'u, 'a> Lowerer<'u, 'a> {
    fn text(&self, n: Node) -> &'a str {
        self.unit.text(n)
    }
    fn span(&self, n: Node) -> Span {
        self.unit.span(n)
    }
    fn unsupported(&self, n: Node, what: &str) -> Diagnostic {
        // The construct's first line, as written (the snippet below the message shows where).
        let text = self.text(n);
        let first = text.lines().next().unwrap_or("").trim_end();
        let mut t: String = first.chars().take(60).collect();
        if t.len() < text.trim_end().len() {
            t.push_str(" ...");
        }
        Diagnostic::at(ErrorKind::Unsupported, self.span(n), format!("{what} is not supported: `{t}`"))
    }
    fn enter(&mut self, n: Node) -> Result<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::at(
                ErrorKind::Limit,
                self.span(n),
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn template_params(&mut self, t: Node) -> Result<()> {
        let Some(list) = t.child_by_field_name("parameters") else { return Ok(()) };
        let mut c = list.walk();
        for p in list.named_children(&mut c) {
            let (name, is_type, default) = match p.kind() {
                "parameter_declaration" | "optional_parameter_declaration" => (
                    p.child_by_field_name("declarator").map(|d| self.text(d).to_string()),
                    false,
                    p.child_by_field_name("default_value"),
                ),
                "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                    let mut cc = p.walk();
                    let name = p
                        .named_children(&mut cc)
                        .find(|x| x.kind() == "type_identifier")
                        .map(|x| self.text(x).to_string());
                    (name, true, p.child_by_field_name("default_type"))
                }
                _ => return Err(self.unsupported(p, "this template parameter")),
            };
            let Some(name) = name else { continue };
            let given = self.unit.args.get(&name).cloned();
            let arg = match (given, is_type) {
                (Some(v), false) if self.unit.globals.contains_key(v.trim()) => match &self.unit.globals[v.trim()] {
                    Sym::Const(i, _) => TemplateArg::Int(*i),
                    _ => {
                        return Err(Diagnostic::at(
                            ErrorKind::Usage,
                            self.span(p),
                            format!("template parameter `{name}` needs an integer or an enumerator, got `{v}`"),
                        ))
                    }
                },
                (Some(v), false) => match parse_number(&v) {
                    Some(ParamValue::Int(i)) => TemplateArg::Int(i),
                    _ => {
                        return Err(Diagnostic::at(
                            ErrorKind::Usage,
                            self.span(p),
                            format!("template parameter `{name}` needs an integer, got `{v}`"),
                        ))
                    }
                },
                (Some(v), true)
                    if self.unit.typedefs.contains_key(v.trim()) || self.unit.structs.contains_key(v.trim()) =>
                {
                    TemplateArg::Type(match self.unit.typedefs.get(v.trim()) {
                        Some(t) => t.clone(),
                        None => self.unit.structs[v.trim()].ty(),
                    })
                }
                (Some(v), true) => TemplateArg::Type(named_type(v.trim()).ok_or_else(|| {
                    Diagnostic::at(
                        ErrorKind::Usage,
                        self.span(p),
                        format!("template parameter `{name}`: unknown type `{v}`"),
                    )
                })?),
                (None, false) => match default {
                    Some(d) => {
                        let (e, _) = self.expr(d)?;
                        match const_eval(&e) {
                            Some(v) => TemplateArg::Int(v),
                            None => return Err(self.missing_template(p, &name)),
                        }
                    }
                    None => return Err(self.missing_template(p, &name)),
                },
                (None, true) => match default {
                    Some(d) => TemplateArg::Type(self.type_descriptor(d)?),
                    None => return Err(self.missing_template(p, &name)),
                },
            };
            if let TemplateArg::Int(v) = arg {
                // The parameter's own type (`unsigned`, `size_t`, `bool`, an enum).
                let it = match p.child_by_field_name("type").map(|t| type_of_specifier(self.unit, t, &self.tmpl)) {
                    Some(Ok(Ty::Int(it))) => it,
                    _ => IntTy::I32,
                };
                self.scopes[0].insert(name.clone(), Sym::Const(it.wrap(v), it));
            }
            self.k.template_params.push(name.clone());
            self.tmpl.insert(name, arg);
        }
        Ok(())
    }

    fn missing_template(&self, p: Node, name: &str) -> Diagnostic {
        Diagnostic::at(ErrorKind::MissingArgument, self.span(p), format!("template parameter `{name}` has no value"))
            .note(format!("pass --arg {name}=VALUE (an integer, or a type name such as float)"))
    }

    fn type_descriptor(&self, td: Node) -> Result<Ty> {
        let t = td.child_by_field_name("type").ok_or_else(|| self.unsupported(td, "this type"))?;
        let base = type_of_specifier(self.unit, t, &self.tmpl)?;
        let quals = self.quals(td);
        match td.child_by_field_name("declarator") {
            Some(d) => self.apply_abstract(d, base, quals),
            None => Ok(base),
        }
    }

    fn quals(&self, n: Node) -> Vec<&'a str> {
        let mut c = n.walk();
        n.children(&mut c)
            .filter(|ch| ch.kind() == "type_qualifier" || ch.kind() == "storage_class_specifier")
            .map(|ch| self.text(ch))
            .collect()
    }

    fn ptr(&self, pointee: Ty, pointee_quals: &[&str], own: &[&str]) -> Ty {
        Ty::Ptr(Box::new(PtrTy {
            pointee,
            space: Space::Global,
            is_const: pointee_quals.contains(&"const"),
            restrict: own.iter().any(|q| matches!(*q, "__restrict__" | "__restrict" | "restrict")),
            volatile: pointee_quals.contains(&"volatile"),
        }))
    }

    fn apply_abstract(&self, d: Node, base: Ty, quals: Vec<&str>) -> Result<Ty> {
        match d.kind() {
            "abstract_pointer_declarator" => {
                let own = self.quals(d);
                let t = self.ptr(base, &quals, &own);
                match d.child_by_field_name("declarator") {
                    Some(inner) => self.apply_abstract(inner, t, Vec::new()),
                    None => Ok(t),
                }
            }
            _ => Err(self.unsupported(d, "this type")),
        }
    }

    /// Name and type of a parameter or declarator over a declaration's base type.
    fn declared(&self, p: Node) -> Result<(Option<String>, Ty)> {
        let t = p.child_by_field_name("type").ok_or_else(|| self.unsupported(p, "this declaration"))?;
        let base = type_of_specifier(self.unit, t, &self.tmpl)?;
        let quals = self.quals(p);
        match p.child_by_field_name("declarator") {
            None => Ok((None, base)),
            Some(d) => {
                let (name, ty, _) = self.declarator(d, base, &quals)?;
                Ok((Some(name), ty))
            }
        }
    }

    /// Walks a declarator: returns the name, the type, and array dimensions (outermost first)
    /// when it declares an array.
    fn declarator(&self, d: Node, base: Ty, quals: &[&str]) -> Result<(String, Ty, Option<Dims>)> {
        match d.kind() {
            "identifier" | "field_identifier" => Ok((self.text(d).to_string(), base, None)),
            "pointer_declarator" => {
                let own = self.quals(d);
                let t = self.ptr(base, quals, &own);
                let inner =
                    d.child_by_field_name("declarator").ok_or_else(|| self.unsupported(d, "this declarator"))?;
                self.declarator(inner, t, &[])
            }
            // `const int &n` as a parameter: read as a value (references that are written
            // through are bound to places by `bind_reference`).
            "reference_declarator" => {
                let mut c = d.walk();
                let inner = d.named_children(&mut c).next().ok_or_else(|| self.unsupported(d, "this declarator"))?;
                self.declarator(inner, base, quals)
            }
            "array_declarator" => {
                let inner =
                    d.child_by_field_name("declarator").ok_or_else(|| self.unsupported(d, "this declarator"))?;
                let size = match d.child_by_field_name("size") {
                    Some(s) => {
                        let (e, _) = self.const_expr_ro(s)?;
                        Some(const_eval(&e).filter(|v| *v > 0 && *v < 1 << 40).ok_or_else(|| {
                            Diagnostic::at(
                                ErrorKind::Unsupported,
                                self.span(s),
                                "array size must be a positive integer constant",
                            )
                        })? as u64)
                    }
                    None => None,
                };
                let (name, ty, dims) = self.declarator(inner, base, quals)?;
                let mut dims = dims.unwrap_or_default();
                dims.push(size);
                Ok((name, ty, Some(dims)))
            }
            "parenthesized_declarator" => {
                let mut c = d.walk();
                let inner = d.named_children(&mut c).next().ok_or_else(|| self.unsupported(d, "this declarator"))?;
                self.declarator(inner, base, quals)
            }
            _ => Err(self.unsupported(d, "this declarator")),
        }
    }

    /// Constant expressions in declarators (array sizes): no side effects, no loads.
    fn const_expr_ro(&self, n: Node) -> Result<(Expr, Ty)> {
        // Array sizes use only literals, macros already expanded, template and const ints.
        let mut tmp = Lowerer {
            unit: self.unit,
            k: Kernel {
                params: self.k.params.clone(),
                locals: self.k.locals.clone(),
                // Names it may meet (a shared array in a `const` initialiser) index these.
                shared: self.k.shared.clone(),
                ..Kernel::new(String::new(), self.k.span)
            },
            scopes: self.scopes.clone(),
            pending: Vec::new(),
            no_hoist: 1,
            inline: Vec::new(),
            tmpl: self.tmpl.clone(),
            depth: self.depth,
            lambdas: self.lambdas.clone(),
            unset_ptrs: Default::default(),
        };
        tmp.expr(n)
    }

    fn lookup(&self, name: &str) -> Option<&Sym> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    fn new_local(&mut self, name: &str, ty: Ty) -> LocalId {
        let id = LocalId(self.k.locals.len() as u32);
        self.k.locals.push(Local { name: name.to_string(), ty });
        id
    }

    fn temp(&mut self, ty: Ty) -> LocalId {
        let n = format!("$t{}", self.k.locals.len());
        self.new_local(&n, ty)
    }

    // ---- statements -------------------------------------------------------------------

    fn block(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        self.scopes.push(HashMap::new());
        let mut c = n.walk();
        let children: Vec<Node> = n.named_children(&mut c).collect();
        let r = children.into_iter().try_for_each(|ch| self.stmt(ch, out));
        self.scopes.pop();
        r
    }

    fn flush(&mut self, out: &mut Vec<Stmt>) {
        out.append(&mut self.pending);
    }

    fn stmt(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        self.enter(n)?;
        let r = self.stmt_inner(n, out);
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
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
                let mut then = Vec::new();
                if let Some(t) = n.child_by_field_name("consequence") {
                    self.scoped(t, &mut then)?;
                }
                let mut els = Vec::new();
                if let Some(a) = n.child_by_field_name("alternative") {
                    // else_clause wraps the statement.
                    let mut c = a.walk();
                    let inner: Vec<Node> = a.named_children(&mut c).collect();
                    for s in inner {
                        self.scoped(s, &mut els)?;
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
            "static_assert_declaration" => Ok(()),
            "using_declaration" | "namespace_alias_definition" => Ok(()),
            _ => Err(self.unsupported(n, &format!("this statement ({})", n.kind()))),
        }
    }

    /// `typedef int4 copy_t;` / `using V = float4;` in a body: the name stands for the type
    /// from here on (bound like a template type parameter).
    fn local_typedef(&mut self, n: Node) -> Result<()> {
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

    fn scoped(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        self.scopes.push(HashMap::new());
        let r = self.stmt(n, out);
        self.scopes.pop();
        r
    }

    /// Inside an inlined function, `return` breaks out of the wrapper loop; loops inside it
    /// must pass the break on.
    fn push_loop(
        &mut self,
        out: &mut Vec<Stmt>,
        cond: Option<Expr>,
        body: Vec<Stmt>,
        step: Vec<Stmt>,
        test_first: bool,
        span: Span,
    ) {
        out.push(Stmt::Loop { cond, body, step, test_first, span, synthetic: false });
        if let Some(inl) = self.inline.last() {
            out.push(Stmt::If { cond: Expr::Local(inl.ret_flag), then: vec![Stmt::Break], els: Vec::new(), span });
        }
    }

    fn for_loop(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
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
    fn loop_cond(&mut self, c: Node) -> Result<(Vec<Stmt>, Expr)> {
        let saved = std::mem::take(&mut self.pending);
        let r = self.condition(c);
        let pre = std::mem::replace(&mut self.pending, saved);
        Ok((pre, r?))
    }

    /// A condition (condition_clause, parenthesized or plain expression) as a truth value.
    fn condition(&mut self, c: Node) -> Result<Expr> {
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

    fn truth(&self, e: Expr, t: &Ty) -> Expr {
        match t {
            Ty::Float(_) => Expr::FloatBinary { op: BinOp::Ne, lhs: Box::new(e), rhs: Box::new(Expr::Float(0.0)) },
            _ => e,
        }
    }

    fn ret(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        let mut c = n.walk();
        let value = n.named_children(&mut c).next();
        if self.inline.is_empty() {
            if value.is_some() {
                return Err(self.unsupported(n, "returning a value from a kernel"));
            }
            out.push(Stmt::Return);
            return Ok(());
        }
        let (flag, ret_val, auto_ret) = {
            let inl = self.inline.last().expect("inline context");
            (inl.ret_flag, inl.ret_val.clone(), inl.auto_ret)
        };
        if let (Some(v), Some((id, _))) = (value, ret_val) {
            let (e, t) = self.expr(v)?;
            if auto_ret && is_void(&self.k.locals[id.0 as usize].ty) {
                self.set_local_ty(id, t.clone());
            }
            let ty = self.k.locals[id.0 as usize].ty.clone();
            let e = self.convert(e, &t, &ty, v)?;
            self.pointer_origin(id, ty, &t, v)?;
            self.flush(out);
            out.push(Stmt::Assign { local: id, value: e, span: self.span(n) });
        }
        out.push(Stmt::Assign { local: flag, value: Expr::Int(1, IntTy::I32), span: self.span(n) });
        out.push(Stmt::Break);
        Ok(())
    }

    fn declaration(&mut self, n: Node, out: &mut Vec<Stmt>) -> Result<()> {
        if self.group_declaration(n, out)? {
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
        let base = if auto { Ty::Void } else { type_of_specifier(self.unit, t, &self.tmpl)? };
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
                    self.lambdas.push((i.start_byte(), i.end_byte()));
                    let sym = Sym::Lambda(self.lambdas.len() - 1);
                    let name = self.text(target).to_string();
                    self.scopes.last_mut().unwrap().insert(name, sym);
                    continue;
                }
            }
            let (name, ty, dims) = if auto {
                let init = init.ok_or_else(|| self.unsupported(d, "`auto` without an initializer"))?;
                let (e, ty) = self.expr(init)?;
                let name = self.text(target).to_string();
                let id = self.new_local(&name, ty.clone());
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
                if let Some(i) = self.k.shared.iter().position(|a| a.span == here && a.name == name && a.elem == ty) {
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
                    let id = SharedId(self.k.shared.len() as u32);
                    self.k.shared.push(SharedArray {
                        name: name.clone(),
                        elem: ty,
                        dims: vec![1],
                        is_extern: false,
                        span: self.span(d),
                    });
                    self.scopes.last_mut().unwrap().insert(name, Sym::SharedScalar(id));
                    continue;
                }
                let dims = dims.unwrap_or_default();
                let is_dyn = dims.first().is_some_and(|x| x.is_none());
                if dims.iter().skip(1).any(|x| x.is_none()) || (dims.is_empty() && !is_extern) {
                    return Err(self.unsupported(d, "a shared variable that is not an array of static size"));
                }
                let id = SharedId(self.k.shared.len() as u32);
                self.k.shared.push(SharedArray {
                    name: name.clone(),
                    elem: ty,
                    dims: dims.iter().map(|x| x.unwrap_or(0)).collect(),
                    is_extern: is_extern || is_dyn,
                    span: self.span(d),
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
                self.scopes.last_mut().unwrap().insert(name, Sym::LocalArray(ty));
                continue;
            }
            if is_void(&ty) {
                return Err(self.unsupported(d, "a void variable"));
            }
            // `const int N = 64;` with a constant initializer folds to a constant (array sizes).
            if let (true, Ty::Int(it), Some(i)) = (quals.contains(&"const") || quals.contains(&"constexpr"), &ty, init)
            {
                if let Ok((e, _)) = self.const_expr_ro(i) {
                    if let Some(v) = const_eval(&e) {
                        self.scopes.last_mut().unwrap().insert(name, Sym::Const(it.wrap(v), *it));
                        continue;
                    }
                }
            }
            let mut ty = ty;
            let id = self.new_local(&name, ty.clone());
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
                        self.k.locals[id.0 as usize].ty = ty.clone();
                        self.scopes.last_mut().unwrap().insert(name, Sym::Local(id, ty));
                        continue;
                    }
                }
            }
            self.scopes.last_mut().unwrap().insert(name, Sym::Local(id, ty));
        }
        Ok(())
    }

    /// An expression evaluated for its effects (assignments, calls, increments).
    fn effect(&mut self, e: Node, out: &mut Vec<Stmt>) -> Result<()> {
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
                out.push(Stmt::Barrier);
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

    fn is_barrier(&self, call: Node) -> bool {
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

    fn assignment(&mut self, e: Node) -> Result<Stmt> {
        let left = e.child_by_field_name("left").ok_or_else(|| self.unsupported(e, "this assignment"))?;
        let right = e.child_by_field_name("right").ok_or_else(|| self.unsupported(e, "this assignment"))?;
        let op = e.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("=");
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

    fn update(&mut self, e: Node) -> Result<Stmt> {
        let arg = e.child_by_field_name("argument").ok_or_else(|| self.unsupported(e, "this update"))?;
        let op = e.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("++");
        let place = self.place(arg)?;
        let place = self.bind_place(place);
        let (cur, ct) = self.read_place(&place, CacheOp::Default);
        let one = Expr::Int(1, IntTy::I32);
        let (v, vt) = self.binary(if op == "++" { "+" } else { "-" }, cur, ct, one, Ty::Int(IntTy::I32), e)?;
        self.write(place, v, &vt, e)
    }

    /// A read-modify-write evaluates its target's address once, as the compiler does: an
    /// address that loads memory (`out[idx[i]] += 1`) is bound to a temporary first.
    fn bind_place(&mut self, place: Place) -> Place {
        match place {
            Place::Mem { addr, ty, space, volatile, text, span } if contains_load(&addr) => {
                let pointee = ty.clone();
                let t =
                    self.temp(Ty::Ptr(Box::new(PtrTy { pointee, space, is_const: false, restrict: false, volatile })));
                self.pending.push(Stmt::Assign { local: t, value: addr, span });
                Place::Mem { addr: Expr::Local(t), ty, space, volatile, text, span }
            }
            p => p,
        }
    }

    fn write(&mut self, place: Place, v: Expr, vt: &Ty, at: Node) -> Result<Stmt> {
        Ok(match place {
            Place::Local(id, ty) => {
                let v = self.convert(v, vt, &ty, at)?;
                self.pointer_origin(id, ty, vt, at)?;
                Stmt::Assign { local: id, value: v, span: self.span(at) }
            }
            Place::Mem { addr, ty, space, volatile, text, span } => {
                self.check_struct_store(&ty, at)?;
                let v = self.convert(v, vt, &ty, at)?;
                let op = self.mem_op(AccessKind::Store, space, ty.size(), CacheOp::Default, volatile, &text, span);
                Stmt::Store { op, addr, value: v }
            }
            Place::LocalArray(_) => Stmt::Eval(local_array_write(v)),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn mem_op(
        &mut self,
        kind: AccessKind,
        space: Space,
        width: u32,
        cache: CacheOp,
        volatile: bool,
        text: &str,
        span: Span,
    ) -> MemOpId {
        let id = MemOpId(self.k.mem_ops.len() as u32);
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let display: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
        self.k.mem_ops.push(MemOp {
            kind,
            space,
            width,
            cache,
            volatile,
            text: display,
            span,
            addr_key: format!("{}:{}", width, compact),
            warp_aggregated: false,
        });
        id
    }

    fn read_place(&mut self, p: &Place, cache: CacheOp) -> (Expr, Ty) {
        match p {
            Place::Local(id, ty) => (Expr::Local(*id), ty.clone()),
            Place::Mem { addr, ty, space, volatile, text, span } => {
                let op = self.mem_op(AccessKind::Load, *space, ty.size(), cache, *volatile, text, *span);
                (Expr::Load { op, addr: Box::new(addr.clone()) }, ty.clone())
            }
            Place::LocalArray(ty) => (Expr::Opaque { args: Vec::new(), what: LOCAL_ARRAY.into() }, ty.clone()),
        }
    }

    /// An lvalue: a local, or memory at an address.
    fn place(&mut self, n: Node) -> Result<Place> {
        self.enter(n)?;
        let r = self.place_inner(n);
        self.depth -= 1;
        r
    }

    fn place_inner(&mut self, n: Node) -> Result<Place> {
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
                let (p, pt) = self.expr(arg)?;
                let Ty::Ptr(pt) = pt else { return Err(self.unsupported(n, "dereferencing a non-pointer")) };
                if is_void(&pt.pointee) {
                    return Err(self.unsupported(n, "dereferencing a void pointer"));
                }
                Ok(Place::Mem {
                    addr: p,
                    ty: pt.pointee.clone(),
                    space: pt.space,
                    volatile: pt.volatile,
                    text: self.text(n).to_string(),
                    span: self.span(n),
                })
            }
            "field_expression" => {
                if let Some(p) = self.member_place(n)? {
                    if matches!(&p, Place::Mem { text, .. } if text == cpp::DECAY) {
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
                    Place::Mem { addr, ty, space, volatile, .. } => {
                        let (off, fty) = vector_field(&ty, field).ok_or_else(|| self.unsupported(n, "this member"))?;
                        Ok(Place::Mem {
                            addr: ptr_add(addr, off as i128),
                            ty: fty,
                            space,
                            volatile,
                            text: self.text(n).to_string(),
                            span: self.span(n),
                        })
                    }
                    Place::Local(_, ty) => {
                        let (_, fty) = vector_field(&ty, field).ok_or_else(|| self.unsupported(n, "this member"))?;
                        // Vector components of locals are not tracked; writes only evaluate.
                        Ok(Place::LocalArray(fty))
                    }
                    Place::LocalArray(t) => Ok(Place::LocalArray(vector_field(&t, field).map(|x| x.1).unwrap_or(t))),
                }
            }
            _ => Err(self.unsupported(n, "assigning to this expression")),
        }
    }

    fn undeclared(&self, n: Node) -> Diagnostic {
        Diagnostic::at(
            ErrorKind::Unsupported,
            self.span(n),
            format!("`{}` is not declared (or is a global variable, which is not supported)", self.text(n)),
        )
    }

    /// `a[i]`, `tile[r][c]`, `p[i]` as a place.
    fn subscript_place(&mut self, n: Node) -> Result<Place> {
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
        let text = self.text(n).to_string();
        let span = self.span(n);
        // `p.a[i]` on a structure passed by value: its array member is kernel-parameter space
        // (the constant bank) or registers, not global memory.
        if root.kind() == "field_expression" {
            if let Some(Sym::Opaque(ty, _) | Sym::LocalArray(ty)) = self.member_sym(root) {
                for node in &idx_nodes {
                    let (e, _) = self.expr(*node)?;
                    self.pending_eval(e);
                }
                return Ok(Place::LocalArray(ty));
            }
        }
        if root.kind() == "identifier" {
            match self.lookup(self.text(root)).cloned() {
                Some(Sym::Shared(id)) => {
                    let arr = self.k.shared[id.0 as usize].clone();
                    let dims = arr.dims.clone();
                    if idx_nodes.len() > dims.len().max(1) {
                        return Err(self.unsupported(n, "more subscripts than the array has dimensions"));
                    }
                    // Row-major: offset = ((i0 * d1 + i1) * d2 + i2) ... scaled by the element size.
                    let mut lin: Option<Expr> = None;
                    for (k, node) in idx_nodes.iter().enumerate() {
                        let (e, t) = self.expr(*node)?;
                        let e = self.index_i64(e, &t, *node)?;
                        lin = Some(match lin {
                            None => e,
                            Some(prev) => add64(mul64(prev, dims.get(k).copied().unwrap_or(1) as i128), e),
                        });
                    }
                    let used = idx_nodes.len();
                    let inner: u64 = dims.iter().skip(used).product();
                    let elem = arr.elem.size() as i128;
                    let bytes = mul64(lin.unwrap_or(Expr::Int(0, IntTy::I64)), inner as i128 * elem);
                    let addr = Expr::PtrOffset { ptr: Box::new(Expr::SharedBase(id)), bytes: Box::new(bytes) };
                    if used < dims.len() {
                        return Err(self.unsupported(n, "using a row of a shared array as a value"));
                    }
                    return Ok(Place::Mem { addr, ty: arr.elem, space: Space::Shared, volatile: false, text, span });
                }
                Some(sym @ Sym::DeviceVar { .. }) if idx_nodes.len() > 1 => {
                    let Sym::DeviceVar { dims, elem, volatile, .. } = &sym else { unreachable!() };
                    let (dims, elem, volatile) = (dims.clone(), elem.clone(), *volatile);
                    if idx_nodes.len() != dims.len() {
                        return Err(self.unsupported(n, "a row of a multi-dimensional `__device__` array"));
                    }
                    let mut lin: Option<Expr> = None;
                    for (k, node) in idx_nodes.iter().enumerate() {
                        let (e, t) = self.expr(*node)?;
                        let e = self.index_i64(e, &t, *node)?;
                        lin = Some(match lin {
                            None => e,
                            Some(prev) => add64(mul64(prev, dims[k] as i128), e),
                        });
                    }
                    let p = self.device_var_param(&sym);
                    let bytes = mul64(lin.unwrap_or(Expr::Int(0, IntTy::I64)), elem.size() as i128);
                    let addr = Expr::PtrOffset { ptr: Box::new(Expr::Param(p)), bytes: Box::new(bytes) };
                    return Ok(Place::Mem { addr, ty: elem, space: Space::Global, volatile, text, span });
                }
                Some(Sym::LocalArray(ty)) | Some(Sym::Opaque(ty, _)) => {
                    if let Some(Sym::Opaque(_, what)) = self.lookup(self.text(root)).cloned() {
                        self.sym_place(Sym::Opaque(ty.clone(), what), root)?;
                    }
                    for node in &idx_nodes {
                        let (e, _) = self.expr(*node)?;
                        self.pending_eval(e);
                    }
                    return Ok(Place::LocalArray(ty));
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
                return Ok(Place::Mem {
                    addr,
                    ty: ptr_ty.pointee.clone(),
                    space: ptr_ty.space,
                    volatile: ptr_ty.volatile,
                    text,
                    span,
                });
            }
            let op = self.mem_op(AccessKind::Load, ptr_ty.space, 8, CacheOp::Default, ptr_ty.volatile, &text, span);
            p = Expr::Load { op, addr: Box::new(addr) };
            pt = ptr_ty.pointee.clone();
        }
        Err(self.unsupported(n, "this subscript"))
    }

    fn pending_eval(&mut self, e: Expr) {
        if !matches!(e, Expr::Int(..) | Expr::Local(_) | Expr::Param(_) | Expr::Builtin(_)) {
            self.pending.push(Stmt::Eval(local_array_write(e)));
        }
    }

    /// An index converted to a 64-bit byte-offset operand (sign-extended when signed).
    fn index_i64(&self, e: Expr, t: &Ty, n: Node) -> Result<Expr> {
        match t {
            Ty::Int(it) => Ok(if it.signed {
                Expr::ToInt { ty: IntTy::I64, arg: Box::new(e) }
            } else {
                Expr::ToInt { ty: IntTy::I64, arg: Box::new(Expr::ToInt { ty: IntTy::U64, arg: Box::new(e) }) }
            }),
            _ => Err(self.unsupported(n, "an index that is not an integer")),
        }
    }

    // ---- expressions ------------------------------------------------------------------

    fn expr(&mut self, n: Node) -> Result<(Expr, Ty)> {
        self.enter(n)?;
        let r = self.expr_inner(n);
        self.depth -= 1;
        r
    }

    fn expr_inner(&mut self, n: Node) -> Result<(Expr, Ty)> {
        match n.kind() {
            "number_literal" => self.number(n),
            "true" => Ok((Expr::Int(1, IntTy::BOOL), Ty::Int(IntTy::BOOL))),
            "false" => Ok((Expr::Int(0, IntTy::BOOL), Ty::Int(IntTy::BOOL))),
            "char_literal" => {
                let t = self.text(n);
                let inner = t.trim_start_matches(['L', 'u', 'U']).trim_matches('\'');
                let v = match inner {
                    "\\n" => 10,
                    "\\0" => 0,
                    "\\t" => 9,
                    s => s.chars().next().map(|c| c as i128).unwrap_or(0),
                };
                Ok((Expr::Int(v, IntTy::I8), Ty::Int(IntTy::I8)))
            }
            "string_literal" | "concatenated_string" | "raw_string_literal" => {
                Ok((Expr::Opaque { args: Vec::new(), what: "string".into() }, Ty::Void))
            }
            "null" | "nullptr" => Ok((Expr::Int(0, IntTy::I64), Ty::Int(IntTy::I64))),
            "identifier" => self.identifier(n),
            "parenthesized_expression" => {
                let mut c = n.walk();
                let inner = n.named_children(&mut c).next().ok_or_else(|| self.unsupported(n, "this expression"))?;
                if inner.kind() == "comma_expression" {
                    return Err(self.unsupported(inner, "the comma operator"));
                }
                self.expr(inner)
            }
            "field_expression" => self.field(n),
            "subscript_expression" => {
                if let Some(r) = self.subscript_operator(n)? {
                    return Ok(r);
                }
                let p = self.place(n)?;
                Ok(self.read_place(&p, CacheOp::Default))
            }
            "qualified_identifier" => {
                let full: String = self.text(n).chars().filter(|c| !c.is_whitespace()).collect();
                let full = full.trim_start_matches("::").to_string();
                if let Some(sym) = self.lookup(&full).cloned() {
                    return match sym {
                        Sym::Const(v, t) => Ok((Expr::Int(v, t), Ty::Int(t))),
                        other => self.sym_value(other, n),
                    };
                }
                // `Type::size`: a static member of a structure or class (through typedefs too).
                if let Some((scope, member)) = full.rsplit_once("::") {
                    let sty = self
                        .unit
                        .typedefs
                        .get(scope)
                        .cloned()
                        .or_else(|| self.unit.layout(scope).map(|l| l.ty()))
                        .or_else(|| match self.tmpl.get(scope) {
                            Some(TemplateArg::Type(t)) => Some(t.clone()),
                            _ => None,
                        });
                    if let Some(r) = sty.and_then(|t| self.static_member(&t, member)) {
                        return Ok(r);
                    }
                }
                if let Some(v) = coop_groups::toolkit_enumerator(&full) {
                    return Ok((Expr::Int(v, IntTy::I32), Ty::Int(IntTy::I32)));
                }
                // `ns::N`: the name inside its namespace.
                let last = full.rsplit("::").next().unwrap_or(&full).to_string();
                match self.lookup(&last).cloned() {
                    Some(Sym::Const(v, t)) => Ok((Expr::Int(v, t), Ty::Int(t))),
                    Some(s @ (Sym::Opaque(..) | Sym::Struct(_))) => self.sym_value(s, n),
                    _ => Err(self.undeclared(n)),
                }
            }
            "alignof_expression" => {
                let td = n.child_by_field_name("type").ok_or_else(|| self.unsupported(n, "this alignof"))?;
                let ty = self.type_descriptor(td)?;
                let a = match &ty {
                    Ty::Vector { name, bytes } if !name.starts_with("struct ") => {
                        let k = name.chars().last().and_then(|c| c.to_digit(10)).unwrap_or(1);
                        if k == 2 || k == 4 {
                            (*bytes).min(16)
                        } else {
                            bytes / k.max(1)
                        }
                    }
                    Ty::Vector { name, .. } => self.unit.layout(&name["struct ".len()..]).map(|l| l.align).unwrap_or(1),
                    t => t.size(),
                };
                Ok((Expr::Int(a as i128, IntTy::U64), Ty::Int(IntTy::U64)))
            }
            "pointer_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
                if op == "*" {
                    let p = self.place(n)?;
                    return Ok(self.read_place(&p, CacheOp::Default));
                }
                // `&place`: the address, no access.
                match self.place(arg)? {
                    Place::Mem { addr, ty, space, volatile, .. } => Ok((
                        addr,
                        Ty::Ptr(Box::new(PtrTy { pointee: ty, space, is_const: false, restrict: false, volatile })),
                    )),
                    _ => Err(self.unsupported(n, "taking the address of a local variable")),
                }
            }
            "binary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let l = n.child_by_field_name("left").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let r = n.child_by_field_name("right").ok_or_else(|| self.unsupported(n, "this expression"))?;
                if matches!(op, "&&" | "||" | "and" | "or") {
                    let (a, at) = self.expr(l)?;
                    self.no_hoist += 1;
                    let rb = self.expr(r);
                    self.no_hoist -= 1;
                    let (b, bt) = rb?;
                    let a = self.truth(a, &at);
                    let b = self.truth(b, &bt);
                    return Ok((
                        Expr::Logical { and: matches!(op, "&&" | "and"), lhs: Box::new(a), rhs: Box::new(b) },
                        Ty::Int(IntTy::I32),
                    ));
                }
                let (a, at) = self.expr(l)?;
                let (b, bt) = self.expr(r)?;
                self.binary(op, a, at, b, bt, n)
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let (a, at) = self.expr(arg)?;
                match (op, &at) {
                    ("+", _) => Ok((a, at)),
                    ("-", Ty::Int(t)) => {
                        let t = promote(*t);
                        let a = self.convert(a, &at, &Ty::Int(t), arg)?;
                        Ok((Expr::Unary { op: UnOp::Neg, ty: t, arg: Box::new(a) }, Ty::Int(t)))
                    }
                    ("-", Ty::Float(_)) => Ok((Expr::Unary { op: UnOp::Neg, ty: IntTy::I32, arg: Box::new(a) }, at)),
                    ("~", Ty::Int(t)) => {
                        let t = promote(*t);
                        let a = self.convert(a, &at, &Ty::Int(t), arg)?;
                        Ok((Expr::Unary { op: UnOp::Not, ty: t, arg: Box::new(a) }, Ty::Int(t)))
                    }
                    ("!" | "not", _) => {
                        let a = self.truth(a, &at);
                        Ok((
                            Expr::Unary { op: UnOp::LogicalNot, ty: IntTy::I32, arg: Box::new(a) },
                            Ty::Int(IntTy::I32),
                        ))
                    }
                    _ => Ok((Expr::Opaque { args: vec![a], what: format!("unary {op}") }, at)),
                }
            }
            "conditional_expression" => {
                let c = n.child_by_field_name("condition").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let t = n
                    .child_by_field_name("consequence")
                    .ok_or_else(|| self.unsupported(n, "`?:` without a middle operand"))?;
                let f = n.child_by_field_name("alternative").ok_or_else(|| self.unsupported(n, "this expression"))?;
                let (ce, ct) = self.expr(c)?;
                let ce = self.truth(ce, &ct);
                self.no_hoist += 1;
                let a = self.expr(t);
                let b = self.expr(f);
                self.no_hoist -= 1;
                let ((a, at), (b, bt)) = (a?, b?);
                if let (Ty::Ptr(x), Ty::Ptr(y)) = (&at, &bt) {
                    if x.space != y.space {
                        return Err(self.unsupported(n, "`?:` choosing between a shared and a global pointer"));
                    }
                }
                let ty = self.common(&at, &bt);
                let a = self.convert(a, &at, &ty, t)?;
                let b = self.convert(b, &bt, &ty, f)?;
                Ok((Expr::Select { cond: Box::new(ce), then: Box::new(a), els: Box::new(b) }, ty))
            }
            "cast_expression" => {
                let td = n.child_by_field_name("type").ok_or_else(|| self.unsupported(n, "this cast"))?;
                let v = n.child_by_field_name("value").ok_or_else(|| self.unsupported(n, "this cast"))?;
                let ty = self.type_descriptor(td)?;
                let (e, et) = self.expr(v)?;
                let e = self.convert(e, &et, &ty, n)?;
                Ok((e, self.with_origin(ty, &et)))
            }
            "sizeof_expression" => {
                let size = if let Some(td) = n.child_by_field_name("type") {
                    self.type_descriptor(td)?.size()
                } else if let Some(v) = n.child_by_field_name("value") {
                    // `sizeof(float4)` parses as the size of a parenthesised name.
                    let name = self.text(v).trim_start_matches('(').trim_end_matches(')').trim();
                    match self.type_named(v) {
                        Some(t) => t.size(),
                        None => match named_type(name) {
                            Some(t) if self.lookup(name).is_none() => t.size(),
                            _ => self.const_expr_ro(v)?.1.size(),
                        },
                    }
                } else {
                    return Err(self.unsupported(n, "this sizeof"));
                };
                Ok((Expr::Int(size as i128, IntTy::U64), Ty::Int(IntTy::U64)))
            }
            "call_expression" => self.call(n),
            "assignment_expression" | "update_expression" => self.side_effect_value(n),
            "comma_expression" => Err(self.unsupported(n, "the comma operator")),
            "initializer_list" => {
                let mut c = n.walk();
                let items: Vec<Node> = n.named_children(&mut c).collect();
                let mut args = Vec::new();
                for it in items {
                    args.push(self.expr(it)?.0);
                }
                Ok((Expr::Opaque { args, what: "initializer list".into() }, Ty::Void))
            }
            "lambda_expression" => Err(self.unsupported(n, "a lambda")),
            // `Packed128<T>{bits}`: a temporary whose contents are registers.
            "compound_literal_expression" => {
                let ty = match n.child_by_field_name("type") {
                    Some(t) if t.kind() == "type_descriptor" => self.type_descriptor(t)?,
                    Some(t) => type_of_specifier(self.unit, t, &self.tmpl)?,
                    None => Ty::Void,
                };
                let mut args = Vec::new();
                if let Some(v) = n.child_by_field_name("value") {
                    let mut c = v.walk();
                    let items: Vec<Node> = v.named_children(&mut c).collect();
                    for it in items {
                        args.push(self.expr(it)?.0);
                    }
                }
                Ok((Expr::Opaque { args, what: "a temporary object".into() }, ty))
            }
            "new_expression" if n.child_by_field_name("placement").is_some() => {
                Err(self.unsupported(n, "placement new (construct the object's members one by one)"))
            }
            "new_expression" | "delete_expression" => Err(device_heap(self.span(n), self.text(n))),
            "template_function" => {
                let name = n.child_by_field_name("name").map(|x| self.text(x)).unwrap_or("");
                if self.unit.polymorphic.contains(name) {
                    return Err(cpp::virtual_refusal(self.span(n), self.text(n)));
                }
                Err(self.unsupported(n, "this expression (template_function)"))
            }
            "ERROR" => Err(Diagnostic::at(ErrorKind::Syntax, self.span(n), "syntax error")),
            _ => Err(self.unsupported(n, &format!("this expression ({})", n.kind()))),
        }
    }

    /// `x = v` or `i++` used as a value: hoisted before the statement when that is safe.
    fn side_effect_value(&mut self, n: Node) -> Result<(Expr, Ty)> {
        if self.no_hoist > 0 {
            return Err(self.unsupported(n, "an assignment or increment inside a condition or `?:`"));
        }
        let post = n.kind() == "update_expression"
            && n.child(0).map(|c| c.kind() != "++" && c.kind() != "--").unwrap_or(false);
        let target = if n.kind() == "assignment_expression" {
            n.child_by_field_name("left")
        } else {
            n.child_by_field_name("argument")
        }
        .ok_or_else(|| self.unsupported(n, "this expression"))?;
        // Value of a local before or after the update; memory targets are read once more.
        let place = self.place(target)?;
        if let Place::Mem { ty, .. } = &place {
            let ty = ty.clone();
            return self.memory_update_value(n, place, ty, post);
        }
        let Place::Local(id, ty) = place else {
            return Err(self.unsupported(n, "an assignment to this place used as a value"));
        };
        let mut stmts = Vec::new();
        let result = if post {
            let t = self.temp(ty.clone());
            stmts.push(Stmt::Assign { local: t, value: Expr::Local(id), span: self.span(n) });
            t
        } else {
            id
        };
        let s = if n.kind() == "assignment_expression" { self.assignment(n)? } else { self.update(n)? };
        self.pending.append(&mut stmts);
        self.pending.push(s);
        Ok((Expr::Local(result), ty))
    }

    /// `x[i] = y[i] = v`, `out[k] = cnt[j]++`: the store (a load first for `+=`, `++`) is
    /// hoisted before the statement; the value is what was stored (or, for `i++`, what was
    /// read), held in a temporary so that no access is issued twice.
    fn memory_update_value(&mut self, n: Node, place: Place, ty: Ty, post: bool) -> Result<(Expr, Ty)> {
        let span = self.span(n);
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("=");
        if n.kind() == "assignment_expression" && op == "=" {
            let right = n.child_by_field_name("right").ok_or_else(|| self.unsupported(n, "this assignment"))?;
            let (rv, rt) = self.expr(right)?;
            let v = self.convert(rv, &rt, &ty, right)?;
            let t = self.temp(ty.clone());
            self.pending.push(Stmt::Assign { local: t, value: v, span });
            let st = self.write(place, Expr::Local(t), &ty, right)?;
            self.pending.push(st);
            return Ok((Expr::Local(t), ty));
        }
        let place = self.bind_place(place);
        let (cur, ct) = self.read_place(&place, CacheOp::Default);
        let old = self.temp(ct.clone());
        self.pending.push(Stmt::Assign { local: old, value: cur, span });
        let (v, vt) = if n.kind() == "assignment_expression" {
            let bop = op
                .strip_suffix('=')
                .filter(|b| !b.is_empty())
                .ok_or_else(|| self.unsupported(n, "this assignment operator"))?;
            let right = n.child_by_field_name("right").ok_or_else(|| self.unsupported(n, "this assignment"))?;
            let (rv, rt) = self.expr(right)?;
            self.binary(bop, Expr::Local(old), ct.clone(), rv, rt, n)?
        } else {
            let inc = if op == "--" { "-" } else { "+" };
            self.binary(inc, Expr::Local(old), ct.clone(), Expr::Int(1, IntTy::I32), Ty::Int(IntTy::I32), n)?
        };
        let v = self.convert(v, &vt, &ty, n)?;
        let new = self.temp(ty.clone());
        self.pending.push(Stmt::Assign { local: new, value: v, span });
        let st = self.write(place, Expr::Local(new), &ty, n)?;
        self.pending.push(st);
        Ok(if post { (Expr::Local(old), ct) } else { (Expr::Local(new), ty) })
    }

    fn number(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let raw = self.text(n).replace('\'', "");
        // The grammar folds a sign into the literal: `-1` is negation of `1`.
        if let Some(rest) = raw.strip_prefix('-') {
            let (e, t) = self.number_text(rest.trim(), n)?;
            return Ok(match (e, &t) {
                (Expr::Float(f), _) => (Expr::Float(-f), t),
                (e, Ty::Int(it)) => {
                    let it = promote(*it);
                    (Expr::Unary { op: UnOp::Neg, ty: it, arg: Box::new(e) }, Ty::Int(it))
                }
                (e, _) => (e, t),
            });
        }
        self.number_text(raw.trim_start_matches('+'), n)
    }

    fn number_text(&mut self, raw: &str, n: Node) -> Result<(Expr, Ty)> {
        let lower = raw.to_ascii_lowercase();
        let hex = lower.starts_with("0x");
        let is_float = (!hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f')))
            || (hex && lower.contains('p'));
        if is_float {
            let t = lower.trim_end_matches(['f', 'l']);
            let v: f64 = t.parse().map_err(|_| self.unsupported(n, "this floating-point literal"))?;
            let ty = if lower.ends_with('f') { Ty::Float(4) } else { Ty::Float(8) };
            return Ok((Expr::Float(v), ty));
        }
        let digits = lower.trim_end_matches(['u', 'l']);
        let suffix = &lower[digits.len()..];
        let (body, radix) = if let Some(h) = digits.strip_prefix("0x") {
            (h, 16)
        } else if let Some(b) = digits.strip_prefix("0b") {
            (b, 2)
        } else if digits.len() > 1 && digits.starts_with('0') {
            (&digits[1..], 8)
        } else {
            (digits, 10)
        };
        let v = u128::from_str_radix(body, radix).map_err(|_| self.unsupported(n, "this integer literal"))?;
        if v > u64::MAX as u128 {
            return Err(Diagnostic::at(ErrorKind::Arithmetic, self.span(n), "integer literal too large for 64 bits"));
        }
        let unsigned = suffix.contains('u');
        let long = suffix.contains('l');
        let v = v as i128;
        let fits = |t: IntTy| v <= t.wrap(i128::MAX >> (128 - t.bits as u32)).max(0) || t.wrap(v) == v;
        let candidates: &[IntTy] = match (unsigned, long, radix == 10) {
            (false, false, true) => &[IntTy::I32, IntTy::I64],
            (false, false, false) => &[IntTy::I32, IntTy::U32, IntTy::I64, IntTy::U64],
            (true, false, _) => &[IntTy::U32, IntTy::U64],
            (false, true, true) => &[IntTy::I64],
            (false, true, false) => &[IntTy::I64, IntTy::U64],
            (true, true, _) => &[IntTy::U64],
        };
        let ty = candidates.iter().copied().find(|t| t.wrap(v) == v && fits(*t)).unwrap_or(IntTy::U64);
        Ok((Expr::Int(v, ty), Ty::Int(ty)))
    }

    fn identifier(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let name = self.text(n);
        match self.lookup(name).cloned() {
            Some(Sym::Local(id, ty)) => Ok((Expr::Local(id), ty)),
            Some(Sym::Param(p)) => Ok((Expr::Param(p), self.k.param(p).ty.clone())),
            Some(Sym::Const(v, t)) => Ok((Expr::Int(v, t), Ty::Int(t))),
            Some(Sym::Shared(id)) => {
                // The array decays to a pointer to its first element.
                let arr = &self.k.shared[id.0 as usize];
                if arr.dims.len() > 1 {
                    return Err(self.unsupported(n, "a multi-dimensional shared array used as a pointer"));
                }
                let ty = Ty::Ptr(Box::new(PtrTy {
                    pointee: arr.elem.clone(),
                    space: Space::Shared,
                    is_const: false,
                    restrict: false,
                    volatile: false,
                }));
                Ok((Expr::SharedBase(id), ty))
            }
            Some(Sym::LocalArray(_)) => Err(self.unsupported(n, "a thread's own array used as a pointer")),
            // A group passed along (to a __device__ function that binds it by name).
            Some(Sym::Group(_)) => Ok((Expr::Int(0, IntTy::I32), Ty::Void)),
            Some(sym) => self.sym_value(sym, n),
            None => match name {
                "warpSize" => Ok((Expr::Builtin(Builtin::WarpSize), Ty::Int(IntTy::I32))),
                "NULL" => Ok((Expr::Int(0, IntTy::I64), Ty::Int(IntTy::I64))),
                "INT_MAX" => Ok((Expr::Int(i32::MAX as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                // <climits>: the toolkit's headers are not read, their constants are known.
                "INT_MIN" => Ok((Expr::Int(i32::MIN as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                "UINT_MAX" => Ok((Expr::Int(u32::MAX as i128, IntTy::U32), Ty::Int(IntTy::U32))),
                "LLONG_MAX" | "LONG_MAX" => Ok((Expr::Int(i64::MAX as i128, IntTy::I64), Ty::Int(IntTy::I64))),
                "LLONG_MIN" | "LONG_MIN" => Ok((Expr::Int(i64::MIN as i128, IntTy::I64), Ty::Int(IntTy::I64))),
                "ULLONG_MAX" | "ULONG_MAX" => Ok((Expr::Int(u64::MAX as i128, IntTy::U64), Ty::Int(IntTy::U64))),
                "SHRT_MAX" => Ok((Expr::Int(i16::MAX as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                "USHRT_MAX" => Ok((Expr::Int(u16::MAX as i128, IntTy::I32), Ty::Int(IntTy::I32))),
                "CHAR_BIT" => Ok((Expr::Int(8, IntTy::I32), Ty::Int(IntTy::I32))),
                "FLT_MAX" | "INFINITY" => Ok((Expr::Float(f32::MAX as f64), Ty::Float(4))),
                _ => Err(self.undeclared(n)),
            },
        }
    }

    fn field(&mut self, n: Node) -> Result<(Expr, Ty)> {
        if let Some(r) = self.group_member_field(n)? {
            return Ok(r);
        }
        let arg = n.child_by_field_name("argument").ok_or_else(|| self.unsupported(n, "this expression"))?;
        let field = n.child_by_field_name("field").map(|f| self.text(f)).unwrap_or("");
        if arg.kind() == "identifier" && self.lookup(self.text(arg)).is_none() {
            let dim = match field {
                "x" => 0,
                "y" => 1,
                "z" => 2,
                _ => return Err(self.unsupported(n, "this member")),
            };
            let b = match self.text(arg) {
                "threadIdx" => Builtin::ThreadIdx(dim),
                "blockIdx" => Builtin::BlockIdx(dim),
                "blockDim" => Builtin::BlockDim(dim),
                "gridDim" => Builtin::GridDim(dim),
                _ => return Err(self.undeclared(arg)),
            };
            // The builtins are unsigned int.
            return Ok((Expr::Builtin(b), Ty::Int(IntTy::U32)));
        }
        // A component of a local vector is not tracked, but it reads the local (so the load
        // that filled it is used).
        if arg.kind() == "identifier" {
            if let Some(Sym::Local(id, ty)) = self.lookup(self.text(arg)).cloned() {
                if let Some((_, fty)) = vector_field(&ty, field) {
                    return Ok((Expr::Opaque { args: vec![Expr::Local(id)], what: LOCAL_ARRAY.into() }, fty));
                }
            }
        }
        if n.child_by_field_name("operator").map(|o| self.text(o)) == Some(".") {
            if let Some(sym) = self.member_sym(n) {
                return self.sym_value(sym, n);
            }
            if let Some(r) = self.static_member(&self.peek_type(arg), field) {
                return Ok(r);
            }
        }
        if let Some(p) = self.member_place(n)? {
            if let Place::Mem { addr, ty, text, .. } = &p {
                if text == cpp::DECAY {
                    return Ok((addr.clone(), ty.clone()));
                }
            }
            return Ok(self.read_place(&p, CacheOp::Default));
        }
        let p = self.place(n)?;
        Ok(self.read_place(&p, CacheOp::Default))
    }

    fn common(&self, a: &Ty, b: &Ty) -> Ty {
        match (a, b) {
            (Ty::Int(x), Ty::Int(y)) => Ty::Int(common_int(*x, *y)),
            (Ty::Float(x), Ty::Float(y)) => Ty::Float(*x.max(y)),
            (Ty::Float(x), Ty::Int(_)) | (Ty::Int(_), Ty::Float(x)) => Ty::Float(*x),
            (Ty::Ptr(_), _) => a.clone(),
            (_, Ty::Ptr(_)) => b.clone(),
            _ => a.clone(),
        }
    }

    /// C conversion of `e` from `from` to `to`.
    fn convert(&self, e: Expr, from: &Ty, to: &Ty, at: Node) -> Result<Expr> {
        Ok(match (from, to) {
            (Ty::Int(a), Ty::Int(b)) if a == b => e,
            (Ty::Float(_), Ty::Int(b)) if *b == IntTy::BOOL => {
                Expr::FloatBinary { op: BinOp::Ne, lhs: Box::new(e), rhs: Box::new(Expr::Float(0.0)) }
            }
            (Ty::Int(_) | Ty::Float(_) | Ty::Ptr(_), Ty::Int(b)) => Expr::ToInt { ty: *b, arg: Box::new(e) },
            (Ty::Int(_), Ty::Float(_)) => Expr::ToFloat(Box::new(e)),
            (Ty::Float(_), Ty::Float(_)) => e,
            (Ty::Ptr(_), Ty::Ptr(_)) => e,
            (Ty::Int(_), Ty::Ptr(_)) => match e {
                Expr::Int(0, _) => e,
                _ => return Err(self.unsupported(at, "converting an integer to a pointer")),
            },
            (Ty::Vector { .. }, _) | (_, Ty::Vector { .. }) | (Ty::Void, _) => e,
            (_, Ty::Void) => e,
            (Ty::Float(_), Ty::Ptr(_)) => return Err(self.unsupported(at, "converting a float to a pointer")),
            (Ty::Ptr(_), Ty::Float(_)) => return Err(self.unsupported(at, "converting a pointer to a float")),
        })
    }

    /// Arithmetic with C's conversions; pointer arithmetic scales by the element size.
    fn binary(&mut self, op: &str, a: Expr, at: Ty, b: Expr, bt: Ty, n: Node) -> Result<(Expr, Ty)> {
        let span = self.span(n);
        let bop = match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "&" | "bitand" => BinOp::And,
            "|" | "bitor" => BinOp::Or,
            "^" | "xor" => BinOp::Xor,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "==" => BinOp::Eq,
            "!=" | "not_eq" => BinOp::Ne,
            _ => return Err(self.unsupported(n, &format!("the operator `{op}`"))),
        };
        let is_cmp = matches!(bop, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne);
        match (&at, &bt) {
            (Ty::Ptr(p), Ty::Int(it)) | (Ty::Int(it), Ty::Ptr(p)) if matches!(bop, BinOp::Add | BinOp::Sub) => {
                let ptr_first = matches!(at, Ty::Ptr(_));
                if !ptr_first && bop == BinOp::Sub {
                    return Err(self.unsupported(n, "integer minus pointer"));
                }
                let (pe, ie) = if ptr_first { (a, b) } else { (b, a) };
                let ie = self.index_i64(ie, &Ty::Int(*it), n)?;
                let mut bytes = mul64(ie, p.pointee.size() as i128);
                if bop == BinOp::Sub {
                    bytes = Expr::Unary { op: UnOp::Neg, ty: IntTy::I64, arg: Box::new(bytes) };
                }
                let ty = if ptr_first { at.clone() } else { bt.clone() };
                Ok((Expr::PtrOffset { ptr: Box::new(pe), bytes: Box::new(bytes) }, ty))
            }
            (Ty::Ptr(p), Ty::Ptr(_)) if bop == BinOp::Sub => {
                let size = p.pointee.size() as i128;
                let diff = Expr::PtrDiff { lhs: Box::new(a), rhs: Box::new(b) };
                Ok((
                    Expr::Binary {
                        op: BinOp::Div,
                        ty: IntTy::I64,
                        lhs: Box::new(diff),
                        rhs: Box::new(Expr::Int(size, IntTy::I64)),
                        span,
                    },
                    Ty::Int(IntTy::I64),
                ))
            }
            (Ty::Ptr(_), _) | (_, Ty::Ptr(_)) if is_cmp => Ok((
                Expr::Binary { op: bop, ty: IntTy::I64, lhs: Box::new(a), rhs: Box::new(b), span },
                Ty::Int(IntTy::I32),
            )),
            (Ty::Int(x), Ty::Int(y)) => {
                if matches!(bop, BinOp::Shl | BinOp::Shr) {
                    let t = promote(*x);
                    let a = self.convert(a, &at, &Ty::Int(t), n)?;
                    let b = self.convert(b, &bt, &Ty::Int(t), n)?;
                    return Ok((Expr::Binary { op: bop, ty: t, lhs: Box::new(a), rhs: Box::new(b), span }, Ty::Int(t)));
                }
                let t = common_int(*x, *y);
                let a = self.convert(a, &at, &Ty::Int(t), n)?;
                let b = self.convert(b, &bt, &Ty::Int(t), n)?;
                let rt = if is_cmp { Ty::Int(IntTy::I32) } else { Ty::Int(t) };
                Ok((Expr::Binary { op: bop, ty: t, lhs: Box::new(a), rhs: Box::new(b), span }, rt))
            }
            (Ty::Float(_) | Ty::Int(_), Ty::Float(_) | Ty::Int(_)) => {
                let t = self.common(&at, &bt);
                let a = self.convert(a, &at, &t, n)?;
                let b = self.convert(b, &bt, &t, n)?;
                let rt = if is_cmp { Ty::Int(IntTy::I32) } else { t };
                Ok((Expr::FloatBinary { op: bop, lhs: Box::new(a), rhs: Box::new(b) }, rt))
            }
            _ => {
                let rt = if is_cmp { Ty::Int(IntTy::I32) } else { self.common(&at, &bt) };
                Ok((Expr::Opaque { args: vec![a, b], what: format!("operator {op}") }, rt))
            }
        }
    }

    fn call(&mut self, n: Node) -> Result<(Expr, Ty)> {
        let f = n.child_by_field_name("function").ok_or_else(|| self.unsupported(n, "this call"))?;
        let args_node = n.child_by_field_name("arguments").ok_or_else(|| self.unsupported(n, "this call"))?;
        let mut c = args_node.walk();
        let arg_nodes: Vec<Node> = args_node.named_children(&mut c).filter(|a| a.kind() != "comment").collect();
        if let Some(r) = self.group_call(n, f, &arg_nodes)? {
            return Ok(r);
        }
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
            // A function template called with explicit arguments: `load<float, 4>(p)`.
            if let Some((fname, def)) = self.resolve_function(name) {
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
        }
        if f.kind() == "qualified_identifier" {
            if let Some(r) = self.static_method_call(n, f, &arg_nodes)? {
                return Ok(r);
            }
        }
        // A lambda called where it is defined, or through the name it was bound to.
        let range = match f.kind() {
            "lambda_expression" => Some((f.start_byte(), f.end_byte())),
            "identifier" => match self.lookup(self.text(f)) {
                Some(Sym::Lambda(i)) => Some(self.lambdas[*i]),
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
                    if let Some(r) = self.call_member(n, f, ".", "operator()", &arg_nodes)? {
                        return Ok(r);
                    }
                }
                Some(Sym::Func(name)) => {
                    if let Some((fname, def)) = self.resolve_function(&name) {
                        return self.inline_device(n, &fname, def, &arg_nodes, None, None);
                    }
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
            let op = self.mem_op(
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
            let op =
                self.mem_op(AccessKind::Store, pt.space, pt.pointee.size(), cache, false, self.text(n), self.span(n));
            self.pending.push(Stmt::Store { op, addr: p, value: v });
            return Ok((Expr::Int(0, IntTy::I32), Ty::Void));
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
            return Ok(r);
        }
        if name == "memcpy" && arg_nodes.len() == 3 {
            return self.register_memcpy(n, &arg_nodes);
        }
        let mut args = Vec::new();
        let mut tys = Vec::new();
        for a in &arg_nodes {
            let (e, t) = self.expr(*a)?;
            args.push(e);
            tys.push(t);
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
        let name = match name.rsplit_once("::") {
            Some((_, last)) if known_function(name).is_none() => last.trim(),
            _ => name,
        };
        if let Some(ty) = known_function(name) {
            return Ok((Expr::Opaque { args, what: format!("{name}()") }, ty));
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

/// Pure CUDA and C math functions: their values are not tracked, their arguments are evaluated.
/// A value that flows into a thread's own array (untracked, but used later): never dead.
fn local_array_write(e: Expr) -> Expr {
    Expr::Opaque { args: vec![e], what: LOCAL_ARRAY.into() }
}

fn known_function(name: &str) -> Option<Ty> {
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
    None
}

fn mul64(e: Expr, k: i128) -> Expr {
    if k == 1 {
        return e;
    }
    if let Expr::Int(v, _) = e {
        return Expr::Int(IntTy::I64.wrap(v * k), IntTy::I64);
    }
    Expr::Binary {
        op: BinOp::Mul,
        ty: IntTy::I64,
        lhs: Box::new(e),
        rhs: Box::new(Expr::Int(k, IntTy::I64)),
        span: Span::default(),
    }
}

fn add64(a: Expr, b: Expr) -> Expr {
    Expr::Binary { op: BinOp::Add, ty: IntTy::I64, lhs: Box::new(a), rhs: Box::new(b), span: Span::default() }
}

fn ptr_add(p: Expr, bytes: i128) -> Expr {
    if bytes == 0 {
        return p;
    }
    Expr::PtrOffset { ptr: Box::new(p), bytes: Box::new(Expr::Int(bytes, IntTy::I64)) }
}

/// Folds constant integer expressions (array sizes, template defaults).
pub fn const_eval(e: &Expr) -> Option<i128> {
    match e {
        Expr::Int(v, _) => Some(*v),
        Expr::ToInt { ty, arg } => const_eval(arg).map(|v| ty.wrap(v)),
        Expr::Unary { op: UnOp::Neg, ty, arg } => const_eval(arg).map(|v| ty.wrap(-v)),
        Expr::Binary { op, ty, lhs, rhs, .. } => {
            let (a, b) = (const_eval(lhs)?, const_eval(rhs)?);
            let v = match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a.checked_mul(b)?,
                BinOp::Div if b != 0 => a / b,
                BinOp::Rem if b != 0 => a % b,
                BinOp::Shl if (0..64).contains(&b) => a << b,
                BinOp::Shr if (0..64).contains(&b) => a >> b,
                BinOp::And => a & b,
                BinOp::Or => a | b,
                BinOp::Xor => a ^ b,
                BinOp::Min => a.min(b),
                BinOp::Max => a.max(b),
                _ => return None,
            };
            Some(ty.wrap(v))
        }
        _ => None,
    }
}
