//! tree-sitter-cuda syntax -> kernel IR.
//!
//! Every `__global__` function is lowered; `__device__` functions it calls are inlined. C's
//! typing is applied here (promotions, usual arithmetic conversions, pointer scaling), so the
//! IR's arithmetic is explicit. Anything not modelled is an error at its span: an access is
//! never dropped silently.
//!
//! Parse -> index -> lower: this file indexes the translation unit (its functions, types and
//! file-scope values, in `Unit`) and holds the lowerer's state, types and declarators;
//! `stmt.rs`, `place.rs`, `expr.rs` and `call.rs` lower statements, places, expressions and
//! calls. The C++ additions are in `cpp.rs` (and `cpp/`), the GPU's own features in
//! `intrinsics.rs`, `coop_groups.rs` and `asm.rs`, overload resolution in `overload.rs`.

mod cpp;

use super::preprocess::Preprocessed;
use super::types::{common_int, named_type, promote, vector_field};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::front::builder::{fold_constant, KernelBuilder, MemoryPlace};
use crate::ir::*;
use crate::launch::{parse_number, ParamValue};
use crate::source::Span;
use std::collections::HashMap;
use tree_sitter::{Node, Parser};

use call::*;

mod asm;
mod call;
mod coop_groups;
mod expr;
mod intrinsics;
mod overload;
mod place;
mod stmt;
mod texture;

/// Deepest chain of distinct `__device__` calls inlined (recursion is refused on its own).
const MAX_INLINE: usize = 64;

/// A lambda's byte range and the scopes it was written in.
type LambdaDef = (usize, usize, Vec<HashMap<String, Sym>>);

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
    /// `typedef int tab3_t[4][4][4];`: the element type and the dimensions (outermost first),
    /// for members declared with the name.
    array_typedefs: HashMap<String, (Ty, Vec<u64>)>,
    device_fns: HashMap<String, Node<'a>>,
    /// Every definition of each function name, in file order: C++ overloads ([`overload`]).
    overloads: HashMap<String, Vec<Node<'a>>>,
    /// File- and namespace-scope names: constants, enumerators, `__constant__` arrays.
    globals: HashMap<String, Sym>,
    /// File-scope `__constant__` variables that are not arrays (scalars, pointers, structures),
    /// in file order: each kernel takes their values as launch values ([`Param::constant_variable`]).
    constants: Vec<(String, Ty, Node<'a>)>,
    /// Structures and classes by name: their C layout.
    structs: HashMap<String, cpp::Layout>,
    /// Names a forward `typedef struct Tag Name;` gives a structure before its definition:
    /// `Name` -> `Tag` (the layout is the tag's, once it is defined).
    aliases: HashMap<String, String>,
    /// Structures declared (`typedef struct S S;`, `struct S;`, or while their own members are
    /// laid out) but not yet defined: incomplete, so only pointers to them may be declared.
    forward: std::collections::HashSet<String>,
    /// Structures declared and never defined in the file (and the typedef names of them).
    incomplete: std::collections::HashSet<String>,
    /// Class templates by name: the `template <...>` and its structure.
    struct_templates: HashMap<String, (Node<'a>, Node<'a>)>,
    /// Instances of class templates made so far (`Vec2<float>`).
    instances: std::cell::RefCell<HashMap<String, cpp::Layout>>,
    /// Instances whose layout is being worked out, outermost first (one that needs itself has none).
    instantiating: std::cell::RefCell<Vec<String>>,
    /// Classes (and class templates) with virtual functions, or derived from one.
    polymorphic: std::collections::HashSet<String>,
    /// Structures of 2^32 bytes or more (sizes are 32-bit here): refused by name, never wrapped.
    too_large: std::cell::RefCell<std::collections::HashSet<String>>,
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
    let repaired = super::misread::repair(&pre.text, tree.root_node());
    if let Some(text) = &repaired {
        tree = parser.parse(text, None).ok_or_else(gave_up)?;
    }
    let src = repaired.as_deref().unwrap_or(&pre.text);
    let mut unit = Unit {
        pre,
        src: src.as_bytes(),
        typedefs: HashMap::new(),
        array_typedefs: HashMap::new(),
        device_fns: HashMap::new(),
        overloads: HashMap::new(),
        globals: HashMap::new(),
        constants: Vec::new(),
        structs: cpp::toolkit_structs(),
        aliases: HashMap::new(),
        forward: Default::default(),
        incomplete: Default::default(),
        struct_templates: HashMap::new(),
        instances: Default::default(),
        instantiating: Default::default(),
        polymorphic: Default::default(),
        too_large: Default::default(),
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
                // Enumerators of an enumeration inside a class template: file-scope constants.
                top_decls.extend(cpp::nested_enums(&unit, n).into_iter().map(|(_, e)| e));
                let mut c = n.walk();
                for ch in n.named_children(&mut c) {
                    if ch.kind() == "function_definition" {
                        stack.push((ch, Some(n)));
                    }
                }
            }
            "function_definition" => found.push((n, template)),
            "declaration" | "enum_specifier" | "struct_specifier" | "class_specifier" | "union_specifier" => {
                early_constants(&mut unit, n);
                cpp::declare_types(&mut unit, n);
                top_decls.push(n);
                top_decls.extend(cpp::nested_enums(&unit, n).into_iter().map(|(_, e)| e));
            }
            "type_definition" => {
                early_constants(&mut unit, n);
                cpp::declare_types(&mut unit, n);
                // `typedef enum { A, C, G, U } base_t;`: its enumerators are file-scope names.
                top_decls.push(n);
                // `typedef struct State State;` before `struct State { .. }`: the name follows
                // the tag (`Unit::aliases`), whose size is not known yet.
                let forward = n.child_by_field_name("type").is_some_and(|t| cpp::is_forward_declaration(&unit, t));
                if let (false, Some(t)) = (forward, n.child_by_field_name("type")) {
                    if let Ok(ty) = type_of_specifier(&unit, t, &HashMap::new()) {
                        let mut c = n.walk();
                        for d in n.children_by_field_name("declarator", &mut c) {
                            // `typedef struct P { .. } *P_t;`: a name for the pointer type.
                            let (mut d, mut ty) = (d, ty.clone());
                            while d.kind() == "pointer_declarator" {
                                ty = Ty::Ptr(Box::new(PtrTy {
                                    pointee: ty,
                                    space: Space::Global,
                                    is_const: false,
                                    restrict: false,
                                    volatile: false,
                                }));
                                match d.child_by_field_name("declarator") {
                                    Some(inner) => d = inner,
                                    None => break,
                                }
                            }
                            if d.kind() == "type_identifier" {
                                unit.typedefs.insert(unit.text(d).to_string(), ty);
                            } else if d.kind() == "array_declarator" {
                                if let Some((name, dims)) = cpp::array_typedef(&unit, d) {
                                    unit.array_typedefs.insert(name, (ty, dims));
                                }
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
    cpp::complete_forward_types(&mut unit);
    for &(f, _) in &found {
        if has_qualifier(&unit, f, "__device__") && !has_qualifier(&unit, f, "__global__") {
            if let Some(name) = function_name(&unit, f) {
                unit.device_fns.insert(name, f);
            }
        }
    }
    // Functions without `__device__` (`constexpr` helpers, `__host__` only): callable too, as a
    // fallback, so that `constexpr` helpers inline.
    for &(f, _) in &found {
        if !has_qualifier(&unit, f, "__global__") {
            if let Some(name) = function_name(&unit, f) {
                if !unit.device_fns.contains_key(&name) && name != "main" {
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
    (unit.globals, unit.constants) = cpp::global_values(&unit, &top_decls);
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
    let name = unit.text(d.child_by_field_name("declarator")?);
    // A method of a class template defined outside it (`interval_gpu<T>::lower`) is kept as the
    // methods defined inside it are, under the template's name (`interval_gpu::lower`).
    // An explicit specialization's (`template <> float S<double>::m()`) keeps its own name.
    let primary = f
        .parent()
        .filter(|t| t.kind() == "template_declaration")
        .is_some_and(|t| t.child_by_field_name("parameters").is_some_and(|p| p.named_child_count() > 0));
    Some(match name.rsplit_once("::") {
        Some((scope, method)) if primary && scope.contains('<') && !scope.contains("::") => {
            format!("{}::{}", scope.split('<').next().unwrap_or(scope).trim(), method.trim())
        }
        _ => name.to_string(),
    })
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
            if let Some(d) = cpp::too_large_refusal(unit, unit.span(t), text) {
                return Err(d);
            }
            if let Some(l) = cpp::injected_class(unit, text, tmpl) {
                return Ok(l.ty());
            }
            if unit.incomplete.contains(text) {
                return Err(cpp::incomplete_refusal(unit.span(t), text));
            }
            named_type(text).ok_or_else(|| cpp::unknown_type(unit.span(t), text))
        }
        "sized_type_specifier" => Ok(super::types::sized_type(text)),
        "qualified_identifier"
        | "template_type"
        | "struct_specifier"
        | "class_specifier"
        | "union_specifier"
        | "enum_specifier" => cpp::other_type(unit, t, tmpl),
        // `typename vec4<T>::Type`: the type the name after `typename` names.
        "dependent_type" => match t.named_child(0) {
            Some(inner) => type_of_specifier(unit, inner, tmpl),
            None => Err(cpp::unknown_type(unit.span(t), text)),
        },
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
    /// Its element type and dimensions (outermost first; empty where not known).
    LocalArray(Ty, Vec<u64>),
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
    /// A pointer to a thread's own object (`f(&x)`, `swap(&a, &b)` bound to a helper's `T *p`):
    /// reads and writes through it (`*p`, `p[0]`, `p->m`) are the object itself, registers or
    /// local memory, never global or shared traffic.
    LocalPtr(Box<Sym>),
    /// A file-scope `__shared__` variable: each kernel that names it gets its allocation
    /// (made when the kernel is lowered, [`Lowerer::file_shared`]).
    FileShared(SharedArray),
    /// A parameter written in array syntax with inner dimensions (`T a[][N][M]`): a pointer
    /// (`base`, a parameter or a local) to rows of `inner` elements of `elem`, row-major.
    Rows {
        base: Box<Sym>,
        elem: Ty,
        inner: Vec<u64>,
    },
    /// A file-scope `__device__` variable (`__device__ int n;`, `__device__ float a[N];`):
    /// global memory of its own, reached through a kernel parameter made on first use.
    /// A file-scope texture or surface reference (`texture<float, 1> t;`): read only by the
    /// texture functions ([`texture`]), as their handle.
    Texture(texture::TextureRef),
    DeviceVar {
        name: String,
        elem: Ty,
        /// Array dimensions, outermost first; empty for a scalar.
        dims: Vec<u64>,
        volatile: bool,
        span: Span,
    },
}

/// An lvalue ([`crate::front::builder::Place`] over C's types).
type Place = crate::front::builder::Place<Ty>;

struct Inline {
    /// The function being inlined (its definition's node), to tell recursion from a deep chain.
    def: usize,
    /// Its explicit template arguments, evaluated (`f<3>` and `f<2>` are different functions).
    instance: String,
    ret_flag: LocalId,
    ret_val: Option<(LocalId, Ty)>,
    /// `auto` return type (lambdas, `auto f()`): the first `return` sets it.
    auto_ret: bool,
    /// The object (or, for a static member, the class) whose member function this is.
    object: Option<cpp::StructVal>,
    /// A function returning a reference, called for the place it names (`v[i] = x` through
    /// `T &operator[]`): its `return`s give an address, not a value.
    ret_ref: Option<RefReturn>,
}

/// What the `return`s of a function returning a reference named.
#[derive(Clone, Debug, Default)]
struct RefReturn {
    /// Memory: the element's type, space and volatility (the address is the return value).
    memory: Option<(Ty, Space, bool)>,
    /// The thread's own object (a member of an object in registers): its type.
    register: Option<Ty>,
}

struct Lowerer<'u, 'a> {
    unit: &'u Unit<'a>,
    builder: KernelBuilder,
    scopes: Vec<HashMap<String, Sym>>,
    /// Above zero inside conditions, short-circuit operands and ternaries: side effects there
    /// cannot be hoisted.
    no_hoist: u32,
    inline: Vec<Inline>,
    tmpl: HashMap<String, TemplateArg>,
    /// Lambdas bound to local names or passed to a function (`Sym::Lambda` indexes this): their
    /// byte ranges and the scopes they were written in (their captures), wherever they are called.
    lambdas: Vec<LambdaDef>,
    /// Pointer locals declared without an address yet: the first one sets their space.
    unset_ptrs: std::collections::HashSet<LocalId>,
    /// Set by a caller that wants the place a call returns a reference to; the next inlined
    /// function takes it. The inlined function's answer comes back in `ref_answer`.
    want_ref: bool,
    ref_answer: Option<RefReturn>,
    /// The kernel's `__constant__` variables by name, as the launch values that stand for them:
    /// seen inside inlined functions too, as file-scope names are.
    constant_syms: HashMap<String, Sym>,
    /// A node whose value is already lowered (by id): `(real)` of `x + (real)-1.0`, which the
    /// grammar reads as `(x + real) - 1.0`, stands for the cast `(real)(-1.0)`.
    substitute: Option<(usize, Expr, Ty)>,
}

impl<'u, 'a> Lowerer<'u, 'a> {
    fn new(
        unit: &'u Unit<'a>,
        builder: KernelBuilder,
        scopes: Vec<HashMap<String, Sym>>,
        no_hoist: u32,
        tmpl: HashMap<String, TemplateArg>,
        lambdas: Vec<LambdaDef>,
    ) -> Self {
        Lowerer {
            unit,
            builder,
            scopes,
            no_hoist,
            inline: Vec::new(),
            tmpl,
            lambdas,
            unset_ptrs: Default::default(),
            want_ref: false,
            ref_answer: None,
            constant_syms: HashMap::new(),
            substitute: None,
        }
    }

    /// Launch values for the file's `__constant__` scalars, pointers and structures (members
    /// one by one, as a structure parameter's): the host sets them with `cudaMemcpyToSymbol`,
    /// so a loop bound or an index read from one is a value the launch gives (`--arg
    /// c_n=100`), asked for where it decides a count, like a parameter's. A kernel parameter
    /// of the same name hides the variable.
    fn constant_params(&mut self) {
        for (name, ty, node) in &self.unit.constants {
            if self.builder.kernel.params.iter().any(|p| &p.name == name) {
                continue;
            }
            let first = self.builder.kernel.params.len();
            let sym = if let Some(sname) = cpp::struct_name(ty) {
                match self.struct_params(name, sname, *node, 0) {
                    Ok(v) => Sym::Struct(v),
                    Err(_) => {
                        self.builder.kernel.params.truncate(first);
                        continue;
                    }
                }
            } else {
                self.builder.kernel.params.push(Param {
                    name: name.clone(),
                    ty: ty.clone(),
                    span: self.unit.span(*node),
                    device_variable: false,
                    constant_variable: true,
                });
                Sym::Param(ParamId(first as u32))
            };
            for p in &mut self.builder.kernel.params[first..] {
                p.constant_variable = true;
            }
            self.scopes[0].insert(name.clone(), sym.clone());
            self.constant_syms.insert(name.clone(), sym);
        }
    }
}

/// Enumerators and integer constants as they are declared (`enum { NOCTANT = 8 };`, `const int
/// N = 4;`): a structure declared after them may size an array member with them, and its
/// layout is made before the file's values are (`global_values` at the end of the walk, which
/// gives the same values again).
fn early_constants<'a>(unit: &mut Unit<'a>, n: Node<'a>) {
    let enum_like =
        n.kind() == "enum_specifier" || n.child_by_field_name("type").is_some_and(|t| t.kind() == "enum_specifier");
    let constant = n.kind() == "declaration" && {
        let mut c = n.walk();
        let x =
            n.children(&mut c).any(|x| x.kind() == "type_qualifier" && matches!(unit.text(x), "const" | "constexpr"));
        x
    };
    if !enum_like && !constant {
        return;
    }
    let (values, _) = cpp::global_values(unit, &[n]);
    for (name, v) in values {
        if matches!(v, Sym::Const(..)) {
            unit.globals.insert(name, v);
        }
    }
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
    let mut l = Lowerer::new(
        unit,
        KernelBuilder::new(Kernel::new(name.clone(), span)),
        vec![unit.globals.clone()],
        0,
        HashMap::new(),
        Vec::new(),
    );
    if let Some(t) = template {
        l.template_params(t)?;
    }
    let decl =
        function_declarator(f).ok_or_else(|| Diagnostic::at(ErrorKind::Syntax, span, "kernel without parameters"))?;
    if let Some(params) = decl.child_by_field_name("parameters") {
        let mut c = params.walk();
        // Bytes of parameter space, laid out as the launch passes them, in 64 bits and checked
        // (a 4 GiB structure by value): past CUDA's limit, nvcc stops.
        let mut space = Some(0u64);
        let mut first_over = None;
        for p in params.named_children(&mut c) {
            if let Some((size, align)) = l.param_space(p) {
                let a = align.max(1);
                space = space.and_then(|s| s.checked_add(a - 1)).map(|s| s / a * a).and_then(|s| s.checked_add(size));
                if first_over.is_none() && space.is_none_or(|s| s > cpp::MAX_PARAM_BYTES) {
                    first_over = Some(p);
                }
            }
        }
        if let Some(p) = first_over {
            let need = space.map_or("2^64 or more".to_string(), |s| s.to_string());
            return Err(Diagnostic::at(
                ErrorKind::Unsupported,
                unit.span(p),
                format!(
                    "kernel `{name}`'s parameters take {need} bytes; CUDA allows at most {} (nvcc: \"Formal parameter space overflowed\")",
                    cpp::MAX_PARAM_BYTES
                ),
            )
            .note("pass a large structure through a pointer"));
        }
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
                    let id = ParamId(l.builder.kernel.params.len() as u32);
                    // A toolkit function object (`Op op` with `Op = thrust::divides<float>`):
                    // no state, called as arithmetic in registers.
                    let functor = functor_name(&ty).map(|_| Sym::Opaque(ty.clone(), "a toolkit function object"));
                    l.builder.kernel.params.push(Param {
                        name: pname.clone(),
                        ty,
                        span: unit.span(p),
                        device_variable: false,
                        constant_variable: false,
                    });
                    let sym = match l.param_rows(p)? {
                        Some((elem, inner)) => Sym::Rows { base: Box::new(Sym::Param(id)), elem, inner },
                        None => functor.unwrap_or(Sym::Param(id)),
                    };
                    l.scopes[0].insert(pname, sym);
                }
                "comment" => {}
                _ => return Err(l.unsupported(p, "this kind of parameter")),
            }
        }
    }
    l.constant_params();
    let body = f
        .child_by_field_name("body")
        .ok_or_else(|| Diagnostic::at(ErrorKind::Syntax, span, "kernel without a body"))?;
    l.file_shared(f);
    // Parameters the body assigns (`A += row * K`, `p++`) live in locals from the start.
    let mut out = l.params_to_locals(body);
    l.block(body, &mut out)?;
    l.builder.kernel.body = out;
    if let Some(op) = l.builder.kernel.mem_ops.iter().find(|op| op.width == u32::MAX) {
        return Err(Diagnostic::at(
            ErrorKind::Unsupported,
            op.span,
            format!("`{}` moves 4 GiB or more per thread (a whole structure that large): no memory instruction does; access its members", op.text),
        ));
    }
    intrinsics::settle_atomics(&mut l.builder.kernel);
    Ok(l.builder.kernel)
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
    /// File-scope `__shared__` variables the kernel or the unit's device functions name: one
    /// allocation each in this kernel's shared memory.
    fn file_shared(&mut self, f: Node) {
        let mut names: Vec<(String, SharedArray)> = self.scopes[0]
            .iter()
            .filter_map(|(k, s)| match s {
                Sym::FileShared(a) => Some((k.clone(), a.clone())),
                _ => None,
            })
            .collect();
        if names.is_empty() {
            return;
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let mut texts = vec![self.text(f)];
        texts.extend(self.unit.device_fns.values().map(|d| self.unit.text(*d)));
        let named = |name: &str| {
            texts.iter().any(|t| {
                t.match_indices(name).any(|(i, _)| {
                    let before = t[..i].chars().next_back();
                    let after = t[i + name.len()..].chars().next();
                    let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
                    !word(before) && !word(after)
                })
            })
        };
        for (name, arr) in names {
            if !named(&name) {
                self.scopes[0].remove(&name);
                continue;
            }
            let id = SharedId(self.builder.kernel.shared.len() as u32);
            let scalar = arr.dims.is_empty();
            self.builder
                .kernel
                .shared
                .push(SharedArray { dims: if scalar { vec![1] } else { arr.dims.clone() }, ..arr });
            self.scopes[0].insert(name, if scalar { Sym::SharedScalar(id) } else { Sym::Shared(id) });
        }
    }

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
        let unit = self.unit;
        self.builder.enter(|| unit.span(n))
    }

    /// A class template's instance given by its text (`--arg PoolProcess=AvgPoolGrad<float>`,
    /// taken from the file's own launch): the type the file writes with that text.
    fn written_instance(&self, v: &str) -> Option<Ty> {
        if !v.contains('<') {
            return None;
        }
        let want: String = v.chars().filter(|c| !c.is_whitespace()).collect();
        let mut stack = vec![self.unit.root?];
        while let Some(n) = stack.pop() {
            if n.kind() == "template_type" {
                let text: String = self.text(n).chars().filter(|c| !c.is_whitespace()).collect();
                if text == want {
                    return cpp::instantiate(self.unit, n, &HashMap::new()).map(|l| l.ty());
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        None
    }

    fn template_params(&mut self, t: Node) -> Result<()> {
        let Some(list) = t.child_by_field_name("parameters") else { return Ok(()) };
        let mut c = list.walk();
        // Every parameter without a value, as the flag that gives it one: one message names
        // them all (`--arg T=float --arg BS=VALUE`).
        let unfilled: Vec<String> = {
            let mut c = list.walk();
            list.named_children(&mut c)
                .filter_map(|p| {
                    let (name, example) = match p.kind() {
                        "parameter_declaration" => {
                            let bool_ty = p.child_by_field_name("type").is_some_and(|t| self.text(t) == "bool");
                            (
                                p.child_by_field_name("declarator").map(|d| self.text(d).to_string()),
                                if bool_ty { "false" } else { "VALUE" },
                            )
                        }
                        "type_parameter_declaration" => {
                            let mut cc = p.walk();
                            let name = p
                                .named_children(&mut cc)
                                .find(|x| x.kind() == "type_identifier")
                                .map(|x| self.text(x).to_string());
                            (name, "float")
                        }
                        _ => (None, ""),
                    };
                    let name = name?;
                    (!self.unit.args.contains_key(&name)).then(|| format!("--arg {name}={example}"))
                })
                .collect()
        };
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
                    // A function passed as a template argument (`--arg matmul_tri=matmul_tri_naive`).
                    _ if self.unit.device_fns.contains_key(v.trim()) => TemplateArg::Func(v.trim().to_string()),
                    // A name the file does not declare: an enumerator of a header the front end
                    // does not read (cub's `BLOCK_SCAN_RAKING`). Not a mistake of the user's: the
                    // SASS path, which compiles the file, takes it as written.
                    _ if is_qualified_name(v.trim()) => {
                        return Err(Diagnostic::at(
                            ErrorKind::Unsupported,
                            self.span(p),
                            format!("template parameter `{name}`: `{v}` is not declared in the file (an enumerator of a header the analysis does not read)"),
                        ))
                    }
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
                // A toolkit type, or a class template's instance as the file's own launch writes
                // it (`AvgPoolGrad<float>`).
                (Some(v), true) => {
                    TemplateArg::Type(named_type(v.trim()).or_else(|| self.written_instance(&v)).or_else(|| toolkit_functor_type(&v)).ok_or_else(|| {
                        Diagnostic::at(
                            ErrorKind::Usage,
                            self.span(p),
                            format!("template parameter `{name}`: unknown type `{v}`"),
                        )
                    })?)
                }
                (None, false) => match default {
                    Some(d) => {
                        let (e, _) = self.expr(d)?;
                        match fold_constant(&e) {
                            Some(v) => TemplateArg::Int(v),
                            None => return Err(self.missing_template(p, &name, &unfilled)),
                        }
                    }
                    None => return Err(self.missing_template(p, &name, &unfilled)),
                },
                (None, true) => match default {
                    Some(d) => TemplateArg::Type(self.type_descriptor(d)?),
                    None => return Err(self.missing_template(p, &name, &unfilled)),
                },
            };
            if let TemplateArg::Int(v) = arg {
                // The parameter's own type (`unsigned`, `size_t`, `bool`, an enum).
                let known = match p.child_by_field_name("type").map(|t| type_of_specifier(self.unit, t, &self.tmpl)) {
                    Some(Ok(Ty::Int(it))) => Some(it),
                    _ => None,
                };
                let it = known.unwrap_or(IntTy::I32);
                // A template argument is a converted constant expression: a value the type cannot
                // hold is a narrowing conversion, which nvcc refuses (never wrapped silently).
                if known.is_some() && it.bits > 1 && it.wrap(v) != v {
                    let range = if it.signed {
                        format!("{}..={}", -(1i128 << (it.bits - 1)), (1i128 << (it.bits - 1)) - 1)
                    } else {
                        format!("0..={}", (1i128 << it.bits) - 1)
                    };
                    return Err(Diagnostic::at(
                        ErrorKind::Usage,
                        self.span(p),
                        format!(
                            "template parameter `{name}` is {}, which holds {range}: {v} does not fit (nvcc refuses the narrowing conversion)",
                            it.name()
                        ),
                    ));
                }
                self.scopes[0].insert(name.clone(), Sym::Const(it.wrap(v), it));
            }
            self.builder.kernel.template_params.push(name.clone());
            self.tmpl.insert(name, arg);
        }
        Ok(())
    }

    fn missing_template(&self, p: Node, name: &str, unfilled: &[String]) -> Diagnostic {
        let all = if unfilled.is_empty() { format!("--arg {name}=VALUE") } else { unfilled.join(" ") };
        Diagnostic::at(ErrorKind::MissingArgument, self.span(p), format!("template parameter `{name}` has no value"))
            .note(format!(
                "a template kernel: pass its template arguments, {all} (a type name such as float, or an integer), or --launch-site to take them from the file's own launch"
            ))
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
        // `(float (*)[4]) p`: a pointer to rows of 4 floats. Moving it by one moves a row; the
        // declared variable it initialises keeps the rows (`Sym::Rows`).
        if let Some(dims) = self.abstract_array_pointer(d)? {
            return Ok(self.ptr(expr::rows_type(&base, &dims), &quals, &[]));
        }
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

    /// The dimensions of the rows `(*)[N][M]` points to, in an abstract declarator.
    fn abstract_array_pointer(&self, d: Node) -> Result<Option<Vec<u64>>> {
        let Some((arrays, d)) = array_chain(d, "abstract_array_declarator") else { return Ok(None) };
        let pointer = d.kind() == "abstract_parenthesized_declarator"
            && {
                let mut c = d.walk();
                let inner: Vec<Node> = d.named_children(&mut c).collect();
                matches!(inner.as_slice(), [p] if p.kind() == "abstract_pointer_declarator" && p.child_by_field_name("declarator").is_none())
            };
        if !pointer || arrays.is_empty() {
            return Ok(None);
        }
        arrays.into_iter().map(|a| self.array_size(a)).collect::<Result<Vec<u64>>>().map(Some)
    }

    /// `T (*p)[N][M]`, or `tab_t *p` of `typedef T tab_t[N][M]` (`typedef_dims`): a pointer to
    /// rows, as its name and the rows' dimensions (outermost first).
    pub(super) fn array_pointer(&self, d: Node, typedef_dims: &[u64]) -> Result<Option<(String, Vec<u64>)>> {
        let Some((arrays, mut d)) = array_chain(d, "array_declarator") else { return Ok(None) };
        if !arrays.is_empty() {
            if d.kind() != "parenthesized_declarator" {
                return Ok(None);
            }
            let mut c = d.walk();
            let inner: Vec<Node> = d.named_children(&mut c).collect();
            let [p] = inner.as_slice() else { return Ok(None) };
            d = *p;
        }
        if d.kind() != "pointer_declarator" || (arrays.is_empty() && typedef_dims.is_empty()) {
            return Ok(None);
        }
        let Some(name) = d.child_by_field_name("declarator").filter(|x| x.kind() == "identifier") else {
            return Ok(None);
        };
        let mut dims = arrays.into_iter().map(|a| self.array_size(a)).collect::<Result<Vec<u64>>>()?;
        dims.extend_from_slice(typedef_dims);
        Ok(Some((self.text(name).to_string(), dims)))
    }

    /// An array declarator's size: a positive constant.
    fn array_size(&self, d: Node) -> Result<u64> {
        let s =
            d.child_by_field_name("size").ok_or_else(|| self.unsupported(d, "a pointer to rows of unknown size"))?;
        let (e, _) = self.const_expr_ro(s)?;
        fold_constant(&e).and_then(|v| u64::try_from(v).ok()).filter(|v| *v > 0).ok_or_else(|| {
            Diagnostic::at(ErrorKind::Unsupported, self.span(s), "array size must be a positive integer constant")
        })
    }

    /// Name and type of a parameter or declarator over a declaration's base type.
    fn declared(&self, p: Node) -> Result<(Option<String>, Ty)> {
        let t = p.child_by_field_name("type").ok_or_else(|| self.unsupported(p, "this declaration"))?;
        let base = type_of_specifier(self.unit, t, &self.tmpl)?;
        let quals = self.quals(p);
        match p.child_by_field_name("declarator") {
            None => Ok((None, base)),
            Some(d) => {
                let (name, ty, dims) = self.declarator(d, base, &quals)?;
                // A parameter in array syntax (`float v[3]`, `float out[]`, `T a[][N][M]`) is a
                // pointer to its first element (C's adjustment); `param_rows` keeps the inner
                // dimensions.
                let ty = if dims.is_some() { self.ptr(ty, &quals, &[]) } else { ty };
                Ok((Some(name), ty))
            }
        }
    }

    /// The element type and inner dimensions of a parameter declared `T a[][N][M]` (more
    /// than one dimension); `None` for any other parameter.
    fn param_rows(&self, p: Node) -> Result<Option<(Ty, Vec<u64>)>> {
        let (Some(t), Some(d)) = (p.child_by_field_name("type"), p.child_by_field_name("declarator")) else {
            return Ok(None);
        };
        let base = type_of_specifier(self.unit, t, &self.tmpl)?;
        let quals = self.quals(p);
        let (_, ty, dims) = self.declarator(d, base, &quals)?;
        let Some(dims) = dims.filter(|d| d.len() > 1) else { return Ok(None) };
        let mut inner = Vec::new();
        for x in &dims[1..] {
            match x {
                Some(x) => inner.push(*x),
                None => return Err(self.unsupported(d, "an array parameter whose inner dimension has no size")),
            }
        }
        Ok(Some((ty, inner)))
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
                        let v = fold_constant(&e).filter(|v| *v > 0).ok_or_else(|| {
                            Diagnostic::at(
                                ErrorKind::Unsupported,
                                self.span(s),
                                "array size must be a positive integer constant",
                            )
                        })?;
                        // A thread's, a block's or a device variable's array: the GPU's memories
                        // are far below 2^40 elements (structure members are laid out apart,
                        // up to nvcc's 2^64 - 1 bytes).
                        if v >= 1 << 40 {
                            return Err(Diagnostic::at(
                                ErrorKind::Unsupported,
                                self.span(s),
                                format!("an array of {v} elements (2^40 or more) is larger than any GPU memory holds"),
                            ));
                        }
                        Some(v as u64)
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
        let mut tmp = Lowerer::new(
            self.unit,
            KernelBuilder::nested(
                Kernel {
                    params: self.builder.kernel.params.clone(),
                    locals: self.builder.kernel.locals.clone(),
                    // Names it may meet (a shared array in a `const` initialiser) index these.
                    shared: self.builder.kernel.shared.clone(),
                    ..Kernel::new(String::new(), self.builder.kernel.span)
                },
                self.builder.nesting_depth(),
            ),
            self.scopes.clone(),
            1,
            self.tmpl.clone(),
            self.lambdas.clone(),
        );
        tmp.expr(n)
    }

    fn lookup(&self, name: &str) -> Option<&Sym> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }
}

/// Pure CUDA and C math functions: their values are not tracked, their arguments are evaluated.
/// A value that flows into a thread's own array (untracked, but used later): never dead.
fn local_array_write(e: Expr) -> Expr {
    Expr::Opaque { args: vec![e], what: LOCAL_ARRAY.into() }
}

/// `e * k` in 64-bit address arithmetic (wrapping, as the GPU's): `k` may be an element size
/// up to 2^64 - 1, and a constant `e` any 64-bit value, so the product is taken modulo 2^64.
fn mul64(e: Expr, k: i128) -> Expr {
    if k == 1 {
        return e;
    }
    let k = IntTy::I64.wrap(k);
    if let Expr::Int(v, _) = e {
        return Expr::Int(IntTy::I64.wrap(v.wrapping_mul(k)), IntTy::I64);
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
    // A member's offset may be up to 2^64 - 1: modulo 2^64, as the address arithmetic is.
    Expr::PtrOffset { ptr: Box::new(p), bytes: Box::new(Expr::Int(IntTy::I64.wrap(bytes), IntTy::I64)) }
}

/// `NAME` or `ns::NAME`: an identifier as C++ spells a (qualified) enumerator.
fn is_qualified_name(v: &str) -> bool {
    !v.is_empty()
        && v.split("::").all(|p| {
            let mut c = p.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
                && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
        })
}

/// The array declarators of `kind` around a declarator (`(*p)[N][M]`), outermost first, and the
/// declarator inside them; `None` where one has no inner declarator.
fn array_chain<'t>(d: Node<'t>, kind: &str) -> Option<(Vec<Node<'t>>, Node<'t>)> {
    let mut arrays = Vec::new();
    let mut d = d;
    while d.kind() == kind {
        arrays.insert(0, d);
        d = d.child_by_field_name("declarator")?;
    }
    Some((arrays, d))
}
