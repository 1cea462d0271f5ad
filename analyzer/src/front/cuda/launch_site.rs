//! Launches taken from the file's own host code: `kernel<T, 256><<<grid, block, smem>>>(args)`.
//!
//! The launch is read as a person reads the file: the host function's variables initialised
//! once (`int threads = 256; dim3 grid(n / threads);`), file-scope and namespace constants
//! (`const`, `constexpr`, `static const` members, enumerators), `dim3` variables, the host's
//! `#define`s (already expanded by the preprocessor), small host helpers whose body is one
//! `return` (`iDivUp(a, b)`), all evaluated with C's integer types through [`crate::cint`]
//! (`const unsigned char b = 256 + 32` is 32; `unsigned` wraps at 32 bits, `size_t` and `long`
//! at 64; integer division truncates; what C leaves undefined, such as signed overflow or a
//! division by zero, is no value). A grid or block dimension is converted to `dim3`'s
//! `unsigned int`: one that wraps to 0 is 0, refused by the launch check, never guessed.
//!
//! A host variable that is overwritten after its initialiser (`std::cin >> n`, `scanf("%d", &n)`,
//! any call taking `&n`, `n = atoi(argv[1])`, `n++`), a parameter of the host function, or one
//! declared without a value is *missing*: never guessed. Every missing piece of the launch is
//! listed in [`LaunchSite::missing`] with the launch's own expression and why each name has no
//! value, so that one message can ask for all of them. Values given on the command line
//! (`--arg n=...`) fill host variables of that name.

use super::preprocess::Preprocessed;
use crate::cint::{self, CType, EvalError, Expr, Value};
use crate::diag::{Diagnostic, ErrorKind, Result};
use std::collections::{HashMap, HashSet};
use tree_sitter::{Node, Parser};

/// One `<<<...>>>` launch found in the file.
#[derive(Clone, Debug, Default)]
pub struct LaunchSite {
    pub kernel: String,
    /// 1-based line of the launch in the preprocessed translation unit's root file.
    pub line: u32,
    /// Grid and block as comma-separated integers (`--grid` syntax), when known.
    pub grid: Option<String>,
    pub block: Option<String>,
    pub shared_bytes: Option<u64>,
    /// Template arguments by parameter name, as written or as their value (`T` -> `float`,
    /// `BS` -> `256`).
    pub template_args: Vec<(String, String)>,
    /// Scalar arguments by parameter name, when known.
    pub args: Vec<(String, String)>,
    /// The kernel's parameter names, in order.
    pub params: Vec<String>,
    /// The kernel's template parameter names, in order.
    pub template_params: Vec<String>,
    /// The pieces of the launch the file does not fix, in launch order.
    pub missing: Vec<Missing>,
}

/// A piece of a launch whose value is not known from the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    Grid,
    Block,
    SharedBytes,
    /// A template argument (by the kernel's template parameter name).
    Template(String),
    /// A scalar integer argument (by the kernel's parameter name).
    Arg(String),
}

#[derive(Clone, Debug)]
pub struct Missing {
    pub piece: Piece,
    /// The launch's own expression (`dimGrid`, `(n + 255) / 256`, `T`).
    pub expr: String,
    /// Where the expression's variables were defined (`dim3 dimGrid(nx / TILE_DIM, ny)` on line
    /// 12), when it names one.
    pub defined: Vec<String>,
    /// The names without a value and why (`nx` -> "read by `std::cin >> nx` on line 30").
    pub unknowns: Vec<(String, String)>,
    /// Whether `--arg NAME=VALUE` for every unknown name fills this piece (else its own flag).
    pub fillable: bool,
}

impl Piece {
    /// The flag that gives this piece directly.
    pub fn flag(&self) -> String {
        match self {
            Piece::Grid => "--grid X,Y,Z".into(),
            Piece::Block => "--block X,Y,Z".into(),
            Piece::SharedBytes => "--shared-bytes N".into(),
            Piece::Template(t) => format!("--arg {t}=VALUE"),
            Piece::Arg(a) => format!("--arg {a}=VALUE"),
        }
    }
    pub fn describe(&self) -> String {
        match self {
            Piece::Grid => "grid".into(),
            Piece::Block => "block".into(),
            Piece::SharedBytes => "dynamic shared memory".into(),
            Piece::Template(t) => format!("template argument `{t}`"),
            Piece::Arg(a) => format!("argument `{a}`"),
        }
    }
}

/// Every launch in the file, in order.
pub fn launch_sites(pre: &Preprocessed) -> Result<Vec<LaunchSite>> {
    launch_sites_with(pre, &[])
}

/// Every launch in the file, in order, with host variables named in `given` (`--arg NAME=VALUE`)
/// taking those values.
pub fn launch_sites_with(pre: &Preprocessed, given: &[(String, String)]) -> Result<Vec<LaunchSite>> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .map_err(|e| Diagnostic::new(ErrorKind::Syntax, format!("cannot load the CUDA grammar: {e}")))?;
    let tree = parser
        .parse(&pre.text, None)
        .ok_or_else(|| Diagnostic::new(ErrorKind::Syntax, "the CUDA parser gave up on this file"))?;
    let src = pre.text.as_bytes();
    let text = |n: Node| std::str::from_utf8(&src[n.byte_range()]).unwrap_or("").to_string();
    // Kernels' parameters and template parameter names, by kernel name.
    let mut params: HashMap<String, (Vec<Param>, Vec<String>)> = HashMap::new();
    let mut globals: HashMap<String, Def> = HashMap::new();
    let mut funcs: HashMap<String, HelperBody> = HashMap::new();
    let mut stack = vec![tree.root_node()];
    let mut calls = Vec::new();
    while let Some(n) = stack.pop() {
        match n.kind() {
            "function_definition" if text(n).contains("__global__") => {
                if let Some((name, ps)) = signature(n, &text) {
                    let tps = n
                        .parent()
                        .filter(|p| p.kind() == "template_declaration")
                        .map(|t| template_names(t, &text))
                        .unwrap_or_default();
                    params.entry(name).or_insert((ps, tps));
                }
            }
            "function_definition" => {
                if let Some(f) = one_return_helper(n, &text) {
                    funcs.entry(f.0).or_insert(f.1);
                }
            }
            "declaration" | "field_declaration" if !in_function(n) => file_constant(n, &text, pre, &mut globals),
            "enumerator_list" => enumerators(n, &text, pre, &mut globals),
            "call_expression" => {
                let mut c = n.walk();
                if n.children(&mut c).any(|ch| ch.kind() == "kernel_call_syntax") {
                    calls.push(n);
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
    // Values that are not numbers: types (`--arg T=float`) for the host's template parameters.
    let given_types: HashMap<String, String> = given
        .iter()
        .filter(|(_, v)| crate::launch::parse_number(v.trim()).is_none() && !matches!(v.trim(), "true" | "false"))
        .cloned()
        .collect();
    let given: HashMap<String, Val> = given
        .iter()
        .filter_map(|(k, v)| {
            let v = match v.trim() {
                "true" => Val::Int(1, CType::Int),
                "false" => Val::Int(0, CType::Int),
                t => match crate::launch::parse_number(t)? {
                    crate::launch::ParamValue::Int(i) => Val::Int(i, CType::Long),
                    crate::launch::ParamValue::Float(f) => Val::Float(f),
                },
            };
            Some((k.clone(), v))
        })
        .collect();
    let mut out = Vec::new();
    for call in calls {
        let Some(f) = call.child_by_field_name("function") else { continue };
        let (kname, targs) = match f.kind() {
            "template_function" => {
                let name = f.child_by_field_name("name").map(&text).unwrap_or_default();
                let mut ts = Vec::new();
                if let Some(a) = f.child_by_field_name("arguments") {
                    let mut c = a.walk();
                    ts = a.named_children(&mut c).collect();
                }
                (name, ts)
            }
            _ => (text(f), Vec::new()),
        };
        let kname = kname.rsplit("::").next().unwrap_or(&kname).trim().to_string();
        let Some((kparams, tnames)) = params.get(&kname) else { continue };
        let (host, opaque) = host_variables(call, &text, pre);
        let mut ev = Eval {
            text: &text,
            host: &host,
            globals: &globals,
            opaque: &opaque,
            funcs: &funcs,
            given: &given,
            unknowns: Vec::new(),
            defined: Vec::new(),
            depth: 0,
        };
        let mut site = LaunchSite {
            kernel: kname.clone(),
            line: pre.locate(call.start_position().row, call.start_position().column, 1).line,
            params: kparams.iter().map(|p| p.name.clone()).collect(),
            template_params: tnames.clone(),
            ..Default::default()
        };
        let mut c = call.walk();
        let config: Vec<Node> = call
            .children(&mut c)
            .find(|ch| ch.kind() == "kernel_call_syntax")
            .map(|k| {
                let mut cc = k.walk();
                let v: Vec<Node> = k.named_children(&mut cc).collect();
                v
            })
            .unwrap_or_default();
        let mut missing = Vec::new();
        let mut note = |ev: &mut Eval, piece: Piece, expr: String| {
            let unknowns = std::mem::take(&mut ev.unknowns);
            let defined = std::mem::take(&mut ev.defined);
            let fillable = !unknowns.is_empty()
                && !matches!(piece, Piece::Template(_))
                && unknowns.iter().all(|(n, _)| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            let mut seen = HashSet::new();
            let unknowns = unknowns.into_iter().filter(|(n, _)| seen.insert(n.clone())).collect();
            let mut seen = HashSet::new();
            let defined = defined.into_iter().filter(|d| seen.insert(d.clone())).collect();
            missing.push(Missing { piece, expr, defined, unknowns, fillable });
        };
        for (name, a) in tnames.iter().zip(&targs) {
            let t = text(*a).trim().to_string();
            ev.unknowns.clear();
            ev.defined.clear();
            if a.kind() == "type_descriptor" {
                // `kernel<THREADS>`: a bare name may be a constant as well as a type.
                let last = t.rsplit("::").next().unwrap_or(&t);
                let constant =
                    ident_like(&t) && (host.contains_key(&t) || globals.contains_key(last) || given.contains_key(&t));
                match opaque.get(&t) {
                    // A type the host's template parameter stands for, given (`--arg T=float`).
                    Some(_) if given_types.contains_key(&t) => {
                        site.template_args.push((name.clone(), given_types[&t].clone()))
                    }
                    Some(why) => {
                        ev.unknowns.push((t.clone(), format!("`{t}` is {why}")));
                        note(&mut ev, Piece::Template(name.clone()), t);
                    }
                    None if constant => match ev.name(&t, &HashMap::new()) {
                        Some(Val::Int(v, _)) => site.template_args.push((name.clone(), v.to_string())),
                        _ => note(&mut ev, Piece::Template(name.clone()), t),
                    },
                    None => site.template_args.push((name.clone(), t)),
                }
                continue;
            }
            match ev.eval(*a, &HashMap::new()) {
                Some(Val::Int(v, _)) => site.template_args.push((name.clone(), v.to_string())),
                // A name the front end resolves itself (an enumerator, a device function).
                _ if a.kind() == "identifier" && !host.contains_key(&t) && !opaque.contains_key(&t) => {
                    site.template_args.push((name.clone(), t))
                }
                _ => note(&mut ev, Piece::Template(name.clone()), t),
            }
        }
        if let Some(args) = call.child_by_field_name("arguments") {
            let mut cc = args.walk();
            let items: Vec<Node> = args.named_children(&mut cc).collect();
            for (p, a) in kparams.iter().zip(items) {
                // Pointers (a literal `0` or `nullptr` too) and floating-point values need no value.
                if p.kind != ParamKind::Int {
                    continue;
                }
                ev.unknowns.clear();
                ev.defined.clear();
                match ev.eval(a, &HashMap::new()) {
                    Some(Val::Int(v, _)) => {
                        site.args.push((p.name.clone(), convert(Val::Int(v, CType::Long), p.ty).to_string()))
                    }
                    Some(Val::Float(_)) => {}
                    None => note(&mut ev, Piece::Arg(p.name.clone()), text(a)),
                }
            }
        }
        for (i, piece) in [Piece::Grid, Piece::Block].into_iter().enumerate() {
            let Some(n) = config.get(i) else { continue };
            ev.unknowns.clear();
            ev.defined.clear();
            match ev.dims(*n) {
                Some(d) => {
                    // `(32, 8)`, `(4096)`: trailing dimensions of 1 left out.
                    let mut d: Vec<String> = d.iter().map(|v| v.to_string()).collect();
                    while d.len() > 1 && d.last().is_some_and(|x| x == "1") {
                        d.pop();
                    }
                    let s = d.join(", ");
                    match piece {
                        Piece::Grid => site.grid = Some(s),
                        _ => site.block = Some(s),
                    }
                }
                None => note(&mut ev, piece, text(*n)),
            }
        }
        if let Some(n) = config.get(2) {
            ev.unknowns.clear();
            ev.defined.clear();
            match ev.eval(*n, &HashMap::new()) {
                // The launch's third argument is a `size_t`.
                Some(v @ Val::Int(..)) => site.shared_bytes = Some(convert(v, DTy::Int(CType::ULong)) as u64),
                _ => note(&mut ev, Piece::SharedBytes, text(*n)),
            }
        }
        // Launch order: grid, block, shared memory, then template and scalar arguments.
        missing.sort_by_key(|m| match m.piece {
            Piece::Grid => 0,
            Piece::Block => 1,
            Piece::SharedBytes => 2,
            Piece::Template(_) => 3,
            Piece::Arg(_) => 4,
        });
        site.missing = missing;
        out.push(site);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Values with C's integer types

// C's integer types are `cint::CType`; a `Val::Int`'s value is always in its type's range.
type CTy = CType;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Val {
    Int(i128, CTy),
    Float(f64),
}

/// A declared type, as far as a launch needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
enum DTy {
    Int(CTy),
    Float,
    Dim3,
    /// `auto` or a type we do not model: the value keeps its own type.
    Other,
}

fn decl_type(t: &str) -> DTy {
    let t: String = t
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "constexpr" | "static" | "inline" | "volatile" | "register" | "extern"))
        .collect::<Vec<_>>()
        .join(" ");
    let t = t.strip_prefix("std::").unwrap_or(&t);
    match t {
        "float" | "double" | "long double" => DTy::Float,
        "dim3" => DTy::Dim3,
        // The integer types as `cint` reads them (`unsigned char`, `size_t`, `long long int`).
        _ => CType::parse(t).map_or(DTy::Other, DTy::Int),
    }
}

fn convert(v: Val, ty: DTy) -> i128 {
    match (v, ty) {
        (Val::Int(i, _), DTy::Int(t)) => t.convert(i),
        (Val::Int(i, _), _) => i,
        (Val::Float(f), DTy::Int(t)) => t.convert(f as i128),
        (Val::Float(f), _) => f as i128,
    }
}

fn to_ty(v: Val, ty: DTy) -> Val {
    match (v, ty) {
        (Val::Int(i, _), DTy::Int(t)) => Val::Int(t.convert(i), t),
        (Val::Float(f), DTy::Int(t)) => Val::Int(t.convert(f as i128), t),
        (Val::Int(i, _), DTy::Float) => Val::Float(i as f64),
        (v, _) => v,
    }
}

/// The usual arithmetic conversions' common integer type.
fn common(a: CTy, b: CTy) -> CTy {
    CType::common(a, b)
}

/// A number as written: an integer literal with C's type (`cint::literal`), or a floating one.
fn literal(t: &str) -> Option<Val> {
    let lower = t.replace('\'', "").to_ascii_lowercase();
    let is_hex = lower.starts_with("0x");
    if !is_hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f')) {
        return lower.trim_end_matches(['f', 'l']).parse::<f64>().ok().map(Val::Float);
    }
    // The parser keeps a sign in the literal (`-1`): the negation of the literal, as in C.
    if let Some(rest) = t.strip_prefix(['-', '+']) {
        let v = cint::literal(rest.trim())?;
        let op = t.as_bytes()[0] as char;
        return cint::eval(&Expr::Unary(op, Box::new(Expr::Lit(v))), &cint::no_names).ok().map(|v| Val::Int(v.v, v.ty));
    }
    cint::literal(t).map(|v| Val::Int(v.v, v.ty))
}

fn sizeof(t: &str) -> Option<i128> {
    let t: String = t.split_whitespace().filter(|w| *w != "const").collect::<Vec<_>>().join(" ");
    let t = t.strip_prefix("std::").unwrap_or(&t);
    if t.ends_with('*') {
        return Some(8);
    }
    Some(match t {
        "char" | "signed char" | "unsigned char" | "int8_t" | "uint8_t" | "bool" | "char1" | "uchar1" => 1,
        "short" | "unsigned short" | "int16_t" | "uint16_t" | "half" | "__half" | "__nv_bfloat16" | "char2"
        | "uchar2" => 2,
        "int" | "unsigned" | "unsigned int" | "float" | "int32_t" | "uint32_t" | "uint" | "__half2" | "half2"
        | "char4" | "uchar4" | "short2" => 4,
        "long" | "unsigned long" | "long long" | "unsigned long long" | "double" | "size_t" | "int64_t"
        | "uint64_t" | "float2" | "int2" | "uint2" | "short4" => 8,
        "float3" | "int3" | "uint3" => 12,
        "float4" | "int4" | "uint4" | "double2" | "longlong2" => 16,
        "double4" => 32,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Definitions the launch may read

#[derive(Clone, Copy)]
struct Def<'t> {
    /// The initializer: an expression, or a `dim3`'s argument list / initializer list.
    value: Option<Node<'t>>,
    ty: DTy,
    /// The declaration, for messages.
    decl: Node<'t>,
    line: u32,
    /// A `dim3`'s members assigned after its declaration, before the launch and in a block that
    /// holds it (`dim3 grid; grid.x = n / 256;`): their values win over the initializer's.
    members: [Option<Node<'t>>; 3],
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ParamKind {
    Int,
    Float,
    Pointer,
}

struct Param {
    name: String,
    kind: ParamKind,
    ty: DTy,
}

fn in_function(n: Node) -> bool {
    let mut p = n.parent();
    while let Some(x) = p {
        if matches!(x.kind(), "compound_statement" | "parameter_list" | "template_parameter_list") {
            return true;
        }
        p = x.parent();
    }
    false
}

fn ident_like(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

fn has_word(t: &str, w: &str) -> bool {
    t.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|x| x == w)
}

/// `const int TILE_DIM = 32;`, `constexpr`, `static const` members (file scope, namespaces,
/// classes).
fn file_constant<'t>(
    n: Node<'t>,
    text: &dyn Fn(Node) -> String,
    pre: &Preprocessed,
    out: &mut HashMap<String, Def<'t>>,
) {
    let Some(ty) = n.child_by_field_name("type") else { return };
    // The specifiers before the type (`static`, `constexpr`) and the type's own `const`.
    let head = pre.text.get(n.start_byte()..ty.end_byte()).unwrap_or("");
    if !(has_word(head, "const") || has_word(head, "constexpr")) {
        return;
    }
    let dty = decl_type(&text(ty));
    let line = pre.locate(n.start_position().row, n.start_position().column, 1).line;
    let mut c = n.walk();
    for d in n.children_by_field_name("declarator", &mut c) {
        let (name, value) = match d.kind() {
            "init_declarator" => (d.child_by_field_name("declarator"), d.child_by_field_name("value")),
            // `static const int X = 4;` in a class: the value is the field's default.
            "field_identifier" | "identifier" => (Some(d), n.child_by_field_name("default_value")),
            _ => continue,
        };
        let Some(name) = name.filter(|x| matches!(x.kind(), "identifier" | "field_identifier")) else { continue };
        out.entry(text(name)).or_insert(Def { value, ty: dty, decl: n, line, members: [None; 3] });
    }
}

fn enumerators<'t>(
    list: Node<'t>,
    text: &dyn Fn(Node) -> String,
    pre: &Preprocessed,
    out: &mut HashMap<String, Def<'t>>,
) {
    // Implicit values count up from the last explicit one: kept as `prev + 1` chains through
    // a synthetic marker (the enumerator node itself, with its predecessor resolved on use).
    let mut c = list.walk();
    for e in list.named_children(&mut c).filter(|e| e.kind() == "enumerator") {
        let Some(name) = e.child_by_field_name("name") else { continue };
        let line = pre.locate(e.start_position().row, e.start_position().column, 1).line;
        out.entry(text(name)).or_insert(Def {
            value: Some(e),
            ty: DTy::Int(CType::Int),
            decl: e,
            line,
            members: [None; 3],
        });
    }
}

/// A host helper's parameters and the expression it returns.
type HelperBody<'t> = (Vec<(String, CTy)>, Node<'t>);

/// A host helper `int iDivUp(int a, int b) { return ...; }`: name, parameters, the returned expression.
fn one_return_helper<'t>(f: Node<'t>, text: &dyn Fn(Node) -> String) -> Option<(String, HelperBody<'t>)> {
    let body = f.child_by_field_name("body")?;
    let mut c = body.walk();
    let stmts: Vec<Node> = body.named_children(&mut c).filter(|s| s.kind() != "comment").collect();
    let [ret] = stmts.as_slice() else { return None };
    if ret.kind() != "return_statement" {
        return None;
    }
    let expr = ret.named_child(0)?;
    let mut d = f.child_by_field_name("declarator")?;
    while d.kind() != "function_declarator" {
        d = d.child_by_field_name("declarator")?;
    }
    let name = text(d.child_by_field_name("declarator")?);
    let mut ps = Vec::new();
    let list = d.child_by_field_name("parameters")?;
    let mut c = list.walk();
    for p in list.named_children(&mut c) {
        let ty = match p.child_by_field_name("type").map(|t| decl_type(&text(t))) {
            Some(DTy::Int(t)) => t,
            _ => return None,
        };
        let pd = p.child_by_field_name("declarator")?;
        if pd.kind() != "identifier" {
            return None;
        }
        ps.push((text(pd), ty));
    }
    Some((name, (ps, expr)))
}

/// Variables of the host function around a launch that are initialised once and never
/// assigned again (name -> definition), and the names that have no value there (name -> why):
/// overwritten after their initialiser, declared without one, parameters of the function.
fn host_variables<'t>(
    call: Node<'t>,
    text: &dyn Fn(Node) -> String,
    pre: &Preprocessed,
) -> (HashMap<String, Def<'t>>, HashMap<String, String>) {
    let mut f = call;
    while f.kind() != "function_definition" {
        match f.parent() {
            Some(p) => f = p,
            None => return Default::default(),
        }
    }
    let line = |n: Node| pre.locate(n.start_position().row, n.start_position().column, 1).line;
    let short = |n: Node| {
        let t = text(n).split_whitespace().collect::<Vec<_>>().join(" ");
        if t.chars().count() > 60 {
            format!("{}...", t.chars().take(57).collect::<String>())
        } else {
            t
        }
    };
    let fdecl = {
        let mut d = f.child_by_field_name("declarator");
        while let Some(x) = d.filter(|x| x.kind() != "function_declarator") {
            d = x.child_by_field_name("declarator");
        }
        d
    };
    let fname = fdecl.and_then(|d| d.child_by_field_name("declarator")).map(text).unwrap_or_default();
    let mut vars: HashMap<String, Def> = HashMap::new();
    let mut opaque: HashMap<String, String> = HashMap::new();
    // The enclosing template's parameters and the function's own parameters.
    if let Some(t) = f.parent().filter(|p| p.kind() == "template_declaration") {
        for n in template_names(t, text) {
            opaque.insert(n, format!("a template parameter of `{fname}`"));
        }
    }
    if let Some(list) = fdecl.and_then(|d| d.child_by_field_name("parameters")) {
        let mut c = list.walk();
        for p in list.named_children(&mut c) {
            let mut x = p.child_by_field_name("declarator");
            while let Some(y) = x.filter(|y| y.kind() != "identifier") {
                x = y.child_by_field_name("declarator").or_else(|| y.named_child(0));
            }
            if let Some(x) = x {
                opaque.entry(text(x)).or_insert(format!("a parameter of the host function `{fname}`"));
            }
        }
    }
    let mut member_writes: Vec<(String, usize, Node<'t>, Node<'t>)> = Vec::new();
    let refs = reference_parameters(f, text);
    let mut stack = f.child_by_field_name("body").into_iter().collect::<Vec<_>>();
    while let Some(n) = stack.pop() {
        match n.kind() {
            // Only the declarations C lets the launch see: in a block that holds the launch, before
            // it (`if (big) { const uint BM = 128; ... <<<>>> } else { const uint BM = 64; ... }`
            // has one `BM` at each launch). A block nested in one of those declares a name of its
            // own, seen nowhere else.
            "declaration" if !visible_at(n, call) => {}
            "declaration" => {
                let dty = n.child_by_field_name("type").map(|t| decl_type(&text(t))).unwrap_or(DTy::Other);
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    let (name, value) = match d.kind() {
                        "init_declarator" => (d.child_by_field_name("declarator"), d.child_by_field_name("value")),
                        "identifier" => (Some(d), None),
                        // `dim3 dimBlock(TILE_DIM, BLOCK_ROWS);` reads like a function declaration.
                        "function_declarator" if dty == DTy::Dim3 => {
                            (d.child_by_field_name("declarator"), d.child_by_field_name("parameters"))
                        }
                        _ => continue,
                    };
                    let Some(name) = name.filter(|x| x.kind() == "identifier") else { continue };
                    let name = text(name);
                    // `dim3 b;` is (1, 1, 1); any other variable without a value has none.
                    if value.is_none() && dty != DTy::Dim3 {
                        opaque.entry(name.clone()).or_insert(format!("declared without a value on line {}", line(n)));
                        continue;
                    }
                    // A visible declaration in a block nested deeper than an earlier one shadows
                    // it: the innermost starts last.
                    if let Some(d) = vars.get(&name) {
                        if d.decl.start_byte() < n.start_byte() && is_within(n, d.decl.parent()) {
                            vars.remove(&name);
                        } else if n.start_byte() < d.decl.start_byte() && is_within(d.decl, n.parent()) {
                            continue;
                        }
                    }
                    if vars
                        .insert(name.clone(), Def { value, ty: dty, decl: n, line: line(n), members: [None; 3] })
                        .is_some()
                    {
                        opaque.insert(name.clone(), format!("declared more than once in `{fname}`"));
                    }
                }
            }
            "assignment_expression" => {
                if let Some(l) = n.child_by_field_name("left") {
                    let root = base_name(l, text);
                    // `grid.x = ...;` as a statement of its own before the launch, in a block
                    // that holds it: a member of a `dim3` the launch may read.
                    let member = (l.kind() == "field_expression"
                        && n.child_by_field_name("operator").is_some_and(|o| text(o) == "=")
                        && l.child_by_field_name("argument").is_some_and(|a| a.kind() == "identifier")
                        && n.parent().is_some_and(|st| st.kind() == "expression_statement" && visible_at(st, call)))
                    .then(|| match l.child_by_field_name("field").map(text).as_deref() {
                        Some("x") => Some(0),
                        Some("y") => Some(1),
                        Some("z") => Some(2),
                        _ => None,
                    })
                    .flatten();
                    match (member, n.child_by_field_name("right")) {
                        (Some(k), Some(r)) => member_writes.push((root, k, r, n)),
                        _ => {
                            opaque.insert(root, format!("assigned on line {} (`{}`)", line(n), short(n)));
                        }
                    }
                }
            }
            "update_expression" => {
                if let Some(a) = n.child_by_field_name("argument") {
                    opaque.insert(base_name(a, text), format!("changed on line {} (`{}`)", line(n), short(n)));
                }
            }
            // `scanf("%d", &n)`, `cudaMalloc(&p, ...)`, `read(&n)`: the call may write it.
            "pointer_expression"
                if text(n).starts_with('&') && n.parent().is_some_and(|p| p.kind() == "argument_list") =>
            {
                if let Some(a) = n.child_by_field_name("argument") {
                    let call = n.parent().and_then(|p| p.parent()).unwrap_or(n);
                    opaque.insert(
                        base_name(a, text),
                        format!("written by a call on line {} (`{}`)", line(call), short(call)),
                    );
                }
            }
            // `setn(n)`, `std::swap(a, b)`: a function of the file that takes the parameter by
            // (non-const) reference, or one of the standard library's that writes through one.
            "call_expression" => {
                let callee = n.child_by_field_name("function").map(text).unwrap_or_default();
                let args: Vec<Node> = n
                    .child_by_field_name("arguments")
                    .map(|a| {
                        let mut c = a.walk();
                        a.named_children(&mut c).collect()
                    })
                    .unwrap_or_default();
                for (i, a) in args.iter().enumerate() {
                    if a.kind() == "identifier" && writes_through_reference(&refs, &callee, i) {
                        opaque.insert(text(*a), format!("passed by reference on line {} (`{}`)", line(n), short(n)));
                    }
                }
            }
            // `std::cin >> n >> m`, `file >> n`.
            "binary_expression" if n.child_by_field_name("operator").is_some_and(|o| text(o) == ">>") => {
                let mut leftmost = n;
                while let Some(l) = leftmost.child_by_field_name("left") {
                    leftmost = l;
                }
                let src = text(leftmost);
                if src.ends_with("cin") || src.contains("stream") || src.ends_with("file") || src == "in" {
                    let mut top = n;
                    while let Some(p) = top.parent().filter(|p| p.kind() == "binary_expression") {
                        top = p;
                    }
                    if let Some(r) = n.child_by_field_name("right") {
                        opaque.insert(base_name(r, text), format!("read on line {} (`{}`)", line(top), short(top)));
                    }
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    // Member writes land on a `dim3` declared before them; one member written twice, or a
    // member of anything else, leaves the variable without a value.
    for (root, k, value, at) in member_writes {
        let why = format!("assigned on line {} (`{}`)", line(at), short(at));
        match vars.get_mut(&root) {
            Some(d) if d.ty == DTy::Dim3 && d.members[k].is_none() && d.decl.end_byte() <= at.start_byte() => {
                d.members[k] = Some(value);
            }
            _ => {
                opaque.entry(root).or_insert(why);
            }
        }
    }
    vars.retain(|k, _| !opaque.contains_key(k));
    (vars, opaque)
}

/// Whether a declaration is in scope at `at`: its block (or `for` statement) holds `at`, and it
/// comes first.
fn visible_at(decl: Node, at: Node) -> bool {
    decl.end_byte() <= at.start_byte() && is_within(at, decl.parent())
}

/// Whether `n` lies inside `outer` (or is it).
fn is_within(n: Node, outer: Option<Node>) -> bool {
    let Some(outer) = outer else { return false };
    let mut x = Some(n);
    while let Some(y) = x {
        if y.id() == outer.id() {
            return true;
        }
        x = y.parent();
    }
    false
}

/// `a`, `a.x`, `a[i]`, `*a` -> `a`.
fn base_name(n: Node, text: &dyn Fn(Node) -> String) -> String {
    let mut x = n;
    loop {
        let next = match x.kind() {
            "field_expression" | "subscript_expression" | "pointer_expression" | "parenthesized_expression" => {
                x.child_by_field_name("argument").or_else(|| x.named_child(0))
            }
            _ => None,
        };
        match next {
            Some(y) => x = y,
            None => return text(x),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The evaluator

struct Eval<'a, 't> {
    text: &'a dyn Fn(Node) -> String,
    host: &'a HashMap<String, Def<'t>>,
    globals: &'a HashMap<String, Def<'t>>,
    opaque: &'a HashMap<String, String>,
    funcs: &'a HashMap<String, HelperBody<'t>>,
    given: &'a HashMap<String, Val>,
    /// Names met without a value, and why.
    unknowns: Vec<(String, String)>,
    /// Definitions read, for messages.
    defined: Vec<String>,
    depth: u32,
}

type Locals = HashMap<String, Val>;

impl<'t> Eval<'_, 't> {
    fn unknown(&mut self, name: String, why: impl Into<String>) -> Option<Val> {
        self.unknowns.push((name, why.into()));
        None
    }

    fn def(&self, name: &str) -> Option<Def<'t>> {
        self.host.get(name).or_else(|| self.globals.get(name)).copied()
    }

    fn note_def(&mut self, d: Def) {
        let t = (self.text)(d.decl).split_whitespace().collect::<Vec<_>>().join(" ");
        let t = t.trim_end_matches(';').to_string();
        let t = if t.chars().count() > 80 { format!("{}...", t.chars().take(77).collect::<String>()) } else { t };
        self.defined.push(format!("`{t}` (line {})", d.line));
    }

    /// A name's value (`TILE_DIM`, `n`, `Config::BS`).
    fn name(&mut self, name: &str, locals: &Locals) -> Option<Val> {
        if let Some(v) = locals.get(name) {
            return Some(*v);
        }
        if let Some(v) = self.given.get(name) {
            return Some(match self.host.get(name).map(|d| d.ty) {
                Some(t) => to_ty(*v, t),
                None => *v,
            });
        }
        let opaque = self.opaque;
        if let Some(why) = opaque.get(name) {
            return self.unknown(name.to_string(), format!("`{name}` is {why}"));
        }
        let last = name.rsplit("::").next().unwrap_or(name);
        let Some(d) =
            self.def(name).or_else(|| if name.contains("::") { self.globals.get(last).copied() } else { None })
        else {
            return match name {
                "true" => Some(Val::Int(1, CType::Bool)),
                "false" | "nullptr" | "NULL" => Some(Val::Int(0, CType::Int)),
                _ => self.unknown(name.to_string(), format!("`{name}` has no value in this file")),
            };
        };
        if d.ty == DTy::Dim3 {
            return self.unknown(name.to_string(), format!("`{name}` is a dim3"));
        }
        self.depth += 1;
        if self.depth > 64 {
            self.depth -= 1;
            return self.unknown(name.to_string(), format!("`{name}` is defined too deeply"));
        }
        if self.host.contains_key(name) {
            self.note_def(d);
        }
        let v = match d.value {
            Some(e) if e.kind() == "enumerator" => self.enumerator(e),
            Some(v) => {
                let before = self.unknowns.len();
                let r = self.eval(v, &Locals::new());
                // Names the user can give stay (`int blocks = n / 256` asks for `n`); anything
                // else (a call, a member) makes this variable the value to give.
                // What C leaves undefined stays said as it is.
                if r.is_none()
                    && self.unknowns[before..]
                        .iter()
                        .any(|(n, w)| (!ident_like(n) || n.contains("::")) && !w.contains("undefined behaviour"))
                {
                    self.unknowns.truncate(before);
                }
                if r.is_none() && self.unknowns.len() == before {
                    let t = (self.text)(v).split_whitespace().collect::<Vec<_>>().join(" ");
                    self.unknowns.push((
                        name.to_string(),
                        format!("`{name}` = `{t}` (line {}) is known only when the program runs", d.line),
                    ));
                }
                r
            }
            None => self.unknown(name.to_string(), format!("`{name}` has no value")),
        };
        self.depth -= 1;
        v.map(|v| to_ty(v, d.ty))
    }

    /// An enumerator's value: its own, or the previous one's plus one.
    fn enumerator(&mut self, e: Node) -> Option<Val> {
        if let Some(v) = e.child_by_field_name("value") {
            return self.eval(v, &Locals::new());
        }
        let mut prev = e.prev_named_sibling();
        while let Some(p) = prev.filter(|p| p.kind() != "enumerator") {
            prev = p.prev_named_sibling();
        }
        match prev {
            None => Some(Val::Int(0, CType::Int)),
            Some(p) => match self.enumerator(p)? {
                Val::Int(i, t) => Some(Val::Int(i + 1, t)),
                f => Some(f),
            },
        }
    }

    /// Grid or block: a `dim3` variable, `dim3(...)`, `{...}`, or one integer.
    fn dims(&mut self, n: Node) -> Option<[i128; 3]> {
        let t = (self.text)(n);
        let t = t.trim();
        if matches!(n.kind(), "identifier" | "qualified_identifier") && !self.given.contains_key(t) {
            if let Some(d) = self.def(t).filter(|d| d.ty == DTy::Dim3) {
                if !self.opaque.contains_key(t) {
                    self.note_def(d);
                    let mut out = match d.value {
                        None => [1, 1, 1],
                        Some(v) => self.dims(v)?,
                    };
                    for (k, m) in d.members.iter().enumerate() {
                        if let Some(m) = m {
                            out[k] = convert(self.eval(*m, &Locals::new())?, DTy::Int(CType::UInt));
                        }
                    }
                    return Some(out);
                }
            }
        }
        let parts: Option<Vec<Node>> = match n.kind() {
            "argument_list" | "initializer_list" | "parameter_list" => {
                let mut c = n.walk();
                Some(n.named_children(&mut c).filter(|x| x.kind() != "comment").collect())
            }
            "call_expression" | "compound_literal_expression"
                if n.child_by_field_name("function")
                    .or_else(|| n.child_by_field_name("type"))
                    .is_some_and(|f| (self.text)(f).trim() == "dim3") =>
            {
                n.child_by_field_name("arguments").or_else(|| n.child_by_field_name("value")).map(|a| {
                    let mut c = a.walk();
                    a.named_children(&mut c).filter(|x| x.kind() != "comment").collect()
                })
            }
            "parenthesized_expression" => return n.named_child(0).and_then(|x| self.dims(x)),
            _ => None,
        };
        let parts = parts.unwrap_or_else(|| vec![n]);
        if parts.is_empty() || parts.len() > 3 {
            return None;
        }
        let mut out = [1i128; 3];
        let mut ok = true;
        for (i, p) in parts.iter().enumerate() {
            match self.eval(*p, &Locals::new()) {
                Some(v) => out[i] = convert(v, DTy::Int(CType::UInt)),
                None => ok = false,
            }
        }
        // A dimension that is 0 in `unsigned int` (`65536u * 65536u`) stays 0: the launch check
        // refuses it, as CUDA does.
        ok.then_some(out)
    }

    /// An integer operation evaluated by `cint`; what C leaves undefined (`INT_MAX + 1`, a
    /// division by zero, a shift past the width) is no value, and says so.
    fn c_int(&mut self, e: &Expr, n: Node) -> Option<Val> {
        match cint::eval(e, &cint::no_names) {
            Ok(v) => Some(Val::Int(v.v, v.ty)),
            Err(e @ EvalError::Undefined(_)) => {
                let t = (self.text)(n).split_whitespace().collect::<Vec<_>>().join(" ");
                self.unknown(t.clone(), format!("`{t}` is {e}"))
            }
            Err(e) => self.unknown((self.text)(n), e.to_string()),
        }
    }

    fn eval(&mut self, n: Node, locals: &Locals) -> Option<Val> {
        let tf = self.text;
        let text = |n: Node| tf(n);
        match n.kind() {
            "number_literal" => literal(text(n).trim()),
            "char_literal" => {
                let t = text(n);
                let b = t.as_bytes();
                (b.len() == 3).then(|| Val::Int(b[1] as i128, CType::Char))
            }
            "true" => Some(Val::Int(1, CType::Bool)),
            "false" | "null" | "nullptr" => Some(Val::Int(0, CType::Int)),
            "identifier" | "qualified_identifier" | "field_identifier" => self.name(text(n).trim(), locals),
            // A name the parser took for a type (`dim3 b(TILE_DIM, ROWS)`, `k<THREADS>`).
            "type_identifier" | "type_descriptor" | "parameter_declaration" if ident_like(text(n).trim()) => {
                self.name(text(n).trim(), locals)
            }
            "parenthesized_expression" | "condition_clause" => self.eval(n.named_child(0)?, locals),
            "field_expression" => {
                let arg = n.child_by_field_name("argument")?;
                let field = n.child_by_field_name("field").map(text).unwrap_or_default();
                let k = match field.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => return self.unknown(text(n), format!("`{}` is a member the launch cannot read", text(n))),
                };
                let d = self.dims(arg)?;
                Some(Val::Int(d[k], CType::UInt))
            }
            "unary_expression" => {
                let op = n.child_by_field_name("operator").map(text).unwrap_or_default();
                let v = self.eval(n.child_by_field_name("argument")?, locals)?;
                match (op.as_str(), v) {
                    // Integers through `cint`: promoted, `-INT_MIN` undefined.
                    ("-" | "+" | "~" | "!", Val::Int(i, t)) => {
                        let e = Expr::Unary(op.as_bytes()[0] as char, Box::new(Expr::Lit(Value::new(i, t))));
                        self.c_int(&e, n)
                    }
                    ("-", Val::Float(f)) => Some(Val::Float(-f)),
                    ("+", v) => Some(v),
                    ("!", Val::Float(f)) => Some(Val::Int((f == 0.0) as i128, CType::Int)),
                    _ => None,
                }
            }
            "binary_expression" => {
                let op = n.child_by_field_name("operator").map(text).unwrap_or_default();
                // Both sides, so that one message can name every missing value.
                let a = self.eval(n.child_by_field_name("left")?, locals);
                let b = self.eval(n.child_by_field_name("right")?, locals);
                let (a, b) = (a?, b?);
                match (a, b) {
                    // Integers through `cint`: the usual arithmetic conversions, unsigned
                    // wraparound, and what C leaves undefined refused.
                    (Val::Int(x, s), Val::Int(y, u)) => {
                        let op = c_binary_op(&op)?;
                        let e = Expr::Binary(
                            op,
                            Box::new(Expr::Lit(Value::new(x, s))),
                            Box::new(Expr::Lit(Value::new(y, u))),
                        );
                        self.c_int(&e, n)
                    }
                    _ => binary(&op, a, b),
                }
            }
            "conditional_expression" => {
                let c = match self.eval(n.child_by_field_name("condition")?, locals)? {
                    Val::Int(i, _) => i != 0,
                    Val::Float(f) => f != 0.0,
                };
                let (pick, other) = if c { ("consequence", "alternative") } else { ("alternative", "consequence") };
                let v = self.eval(n.child_by_field_name(pick)?, locals)?;
                // The result has the arms' common type (`c ? 1u : -1` is unsigned): the arm not
                // taken is read quietly for its type only.
                let (u, d) = (self.unknowns.len(), self.defined.len());
                let w = n.child_by_field_name(other).and_then(|o| self.eval(o, locals));
                self.unknowns.truncate(u);
                self.defined.truncate(d);
                Some(match (v, w) {
                    (Val::Int(i, s), Some(Val::Int(_, t))) => {
                        let t = common(s, t);
                        Val::Int(t.convert(i), t)
                    }
                    (Val::Int(i, _), Some(Val::Float(_))) => Val::Float(i as f64),
                    _ => v,
                })
            }
            "cast_expression" => {
                let ty = decl_type(&text(n.child_by_field_name("type")?));
                let v = self.eval(n.child_by_field_name("value")?, locals)?;
                Some(to_ty(v, ty))
            }
            "sizeof_expression" => match n.child_by_field_name("type") {
                Some(t) => match sizeof(text(t).trim()) {
                    Some(s) => Some(Val::Int(s, CType::ULong)),
                    None => self.unknown(text(n), format!("the size of `{}` is not known here", text(t).trim())),
                },
                // `sizeof(half)`: a type name the grammar reads as a parenthesised variable.
                None => match n
                    .child_by_field_name("value")
                    .and_then(|v| sizeof(text(v).trim().trim_start_matches('(').trim_end_matches(')').trim()))
                {
                    Some(s) => Some(Val::Int(s, CType::ULong)),
                    None => self.unknown(text(n), format!("`{}` is not known here", text(n))),
                },
            },
            "call_expression" => self.call(n, locals),
            _ => {
                self.unknown(text(n), format!("`{}` is not an integer expression the launch can read", text(n).trim()))
            }
        }
    }

    fn call(&mut self, n: Node, locals: &Locals) -> Option<Val> {
        let tf = self.text;
        let text = |n: Node| tf(n);
        let f = n.child_by_field_name("function")?;
        let args: Vec<Node> = n
            .child_by_field_name("arguments")
            .map(|a| {
                let mut c = a.walk();
                a.named_children(&mut c).filter(|x| x.kind() != "comment").collect()
            })
            .unwrap_or_default();
        // `static_cast<int>(x)`, `int(x)`, `unsigned(x)`.
        let fname = match f.kind() {
            "template_function" => {
                let name = f.child_by_field_name("name").map(text).unwrap_or_default();
                if name.ends_with("_cast") {
                    let ty = f
                        .child_by_field_name("arguments")
                        .and_then(|a| a.named_child(0))
                        .map(|t| decl_type(&text(t)))
                        .unwrap_or(DTy::Other);
                    let v = self.eval(*args.first()?, locals)?;
                    return Some(to_ty(v, ty));
                }
                name
            }
            "primitive_type" | "sized_type_specifier" => {
                let v = self.eval(*args.first()?, locals)?;
                return Some(to_ty(v, decl_type(&text(f))));
            }
            _ => text(f),
        };
        let fname = fname.trim();
        let base = fname.strip_prefix("std::").unwrap_or(fname);
        let vals: Vec<Option<Val>> = args.iter().map(|a| self.eval(*a, locals)).collect();
        let vals: Vec<Val> = vals.into_iter().collect::<Option<Vec<_>>>()?;
        let num = |v: Val| match v {
            Val::Int(i, _) => i as f64,
            Val::Float(f) => f,
        };
        match (base, vals.as_slice()) {
            ("min" | "max" | "MIN" | "MAX" | "fmin" | "fmax" | "fminf" | "fmaxf", [a, b]) => {
                let min = base.to_ascii_lowercase().contains("min");
                match (a, b) {
                    (Val::Int(x, s), Val::Int(y, u)) => {
                        let t = common(*s, *u);
                        let (x, y) = (t.convert(*x), t.convert(*y));
                        // `std::min` of one type keeps it; `MIN` macros convert as C does.
                        Some(Val::Int(if min { x.min(y) } else { x.max(y) }, t))
                    }
                    _ => Some(if (num(*a) < num(*b)) == min { *a } else { *b }),
                }
            }
            ("ceil" | "ceilf", [a]) => Some(Val::Float(num(*a).ceil())),
            ("floor" | "floorf", [a]) => Some(Val::Float(num(*a).floor())),
            ("sqrt" | "sqrtf", [a]) => Some(Val::Float(num(*a).sqrt())),
            ("abs", [Val::Int(i, t)]) => Some(Val::Int(i.abs(), *t)),
            _ => match self.funcs.get(fname).or_else(|| self.funcs.get(base)) {
                Some((ps, body)) if ps.len() == vals.len() && self.depth < 32 => {
                    let body = *body;
                    let locals: Locals =
                        ps.iter().zip(&vals).map(|((p, t), v)| (p.clone(), to_ty(*v, DTy::Int(*t)))).collect();
                    self.depth += 1;
                    let r = self.eval(body, &locals);
                    self.depth -= 1;
                    r
                }
                _ => self.unknown(text(n), format!("`{}` is known only when the program runs", text(n).trim())),
            },
        }
    }
}

/// The C operator of `op`, as `cint` spells it.
fn c_binary_op(op: &str) -> Option<&'static str> {
    const OPS: &[&str] =
        &["||", "&&", "|", "^", "&", "==", "!=", "<=", ">=", "<", ">", "<<", ">>", "+", "-", "*", "/", "%"];
    OPS.iter().find(|o| **o == op).copied()
}

/// A binary operation with a floating-point operand (integers go through `cint`).
fn binary(op: &str, a: Val, b: Val) -> Option<Val> {
    let cmp = |r: bool| Some(Val::Int(r as i128, CType::Int));
    if op == "&&" || op == "||" {
        let t = |v: Val| match v {
            Val::Int(i, _) => i != 0,
            Val::Float(f) => f != 0.0,
        };
        return cmp(if op == "&&" { t(a) && t(b) } else { t(a) || t(b) });
    }
    let f = |v: Val| match v {
        Val::Int(i, _) => i as f64,
        Val::Float(f) => f,
    };
    let (x, y) = (f(a), f(b));
    Some(match op {
        "+" => Val::Float(x + y),
        "-" => Val::Float(x - y),
        "*" => Val::Float(x * y),
        "/" => Val::Float(x / y),
        "<" => return cmp(x < y),
        ">" => return cmp(x > y),
        "<=" => return cmp(x <= y),
        ">=" => return cmp(x >= y),
        "==" => return cmp(x == y),
        "!=" => return cmp(x != y),
        _ => return None,
    })
}

/// A kernel's name and parameters.
fn signature(f: Node, text: &dyn Fn(Node) -> String) -> Option<(String, Vec<Param>)> {
    let mut d = f.child_by_field_name("declarator")?;
    while d.kind() != "function_declarator" {
        d = d.child_by_field_name("declarator")?;
    }
    let name = text(d.child_by_field_name("declarator")?);
    let mut out = Vec::new();
    if let Some(ps) = d.child_by_field_name("parameters") {
        let mut c = ps.walk();
        for p in ps.named_children(&mut c) {
            let mut pointer = false;
            let mut x = p.child_by_field_name("declarator");
            while let Some(y) = x {
                if y.kind() == "identifier" {
                    break;
                }
                pointer |= matches!(y.kind(), "pointer_declarator" | "array_declarator" | "reference_declarator");
                x = y.child_by_field_name("declarator").or_else(|| y.named_child(0));
            }
            let ty = p.child_by_field_name("type").map(|t| decl_type(&text(t))).unwrap_or(DTy::Other);
            let kind = match ty {
                _ if pointer => ParamKind::Pointer,
                DTy::Float => ParamKind::Float,
                DTy::Int(_) => ParamKind::Int,
                // Structures, `dim3`, types we do not model: the analysis asks if it needs them.
                DTy::Dim3 | DTy::Other => ParamKind::Float,
            };
            out.push(Param { name: x.map(text).unwrap_or_default(), kind, ty });
        }
    }
    Some((name.rsplit("::").next().unwrap_or(&name).to_string(), out))
}

fn template_names(t: Node, text: &dyn Fn(Node) -> String) -> Vec<String> {
    let Some(list) = t.child_by_field_name("parameters") else { return Vec::new() };
    let mut c = list.walk();
    let ps: Vec<Node> = list.named_children(&mut c).collect();
    ps.into_iter()
        .filter_map(|p| match p.kind() {
            "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                let mut k = p.walk();
                let x = p.named_children(&mut k).find(|x| x.kind() == "type_identifier").map(text);
                x
            }
            _ => p.child_by_field_name("declarator").map(text),
        })
        .collect()
}

/// By function name, for each of its declarations in the file: whether each parameter is a
/// non-`const` lvalue reference, through which a call may write its argument.
fn reference_parameters(from: Node, text: &dyn Fn(Node) -> String) -> HashMap<String, Vec<Vec<bool>>> {
    let mut root = from;
    while let Some(p) = root.parent() {
        root = p;
    }
    let mut out: HashMap<String, Vec<Vec<bool>>> = HashMap::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.kind() == "function_declarator" {
            if let Some(d) = n.child_by_field_name("declarator") {
                let name = text(d).rsplit("::").next().unwrap_or("").to_string();
                let refs: Vec<bool> = n
                    .child_by_field_name("parameters")
                    .map(|l| {
                        let mut c = l.walk();
                        l.named_children(&mut c)
                            .filter(|p| p.kind().ends_with("parameter_declaration"))
                            .map(|p| {
                                let mut c = p.walk();
                                let constant =
                                    p.children(&mut c).any(|x| x.kind() == "type_qualifier" && text(x) == "const");
                                let by_ref = p
                                    .child_by_field_name("declarator")
                                    .is_some_and(|d| d.kind() == "reference_declarator" && !text(d).starts_with("&&"));
                                by_ref && !constant
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                if refs.contains(&true) {
                    out.entry(name).or_default().push(refs);
                }
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    out
}

/// Whether a call of `callee` may write its argument `index` through a reference: a function
/// of the file (any overload) whose parameter there is a non-`const` reference
/// ([`reference_parameters`]), or the standard library's `swap` and `getline`.
fn writes_through_reference(refs: &HashMap<String, Vec<Vec<bool>>>, callee: &str, index: usize) -> bool {
    let name = callee.rsplit("::").next().unwrap_or(callee).split('<').next().unwrap_or("").trim();
    matches!(name, "swap" | "getline")
        || refs.get(name).is_some_and(|ds| ds.iter().any(|d| d.get(index).copied().unwrap_or(false)))
}
