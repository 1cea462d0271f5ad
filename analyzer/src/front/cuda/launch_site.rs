//! Launches taken from the file's own host code: `kernel<T, 256><<<grid, block, smem>>>(args)`.
//!
//! Grid, block, dynamic shared memory, template arguments and scalar arguments are read from
//! the call where they are constants after preprocessing, following host variables initialised
//! once (`int threads = 256; dim3 grid(n / threads);`). What is not constant is left to
//! `--grid`/`--block`/`--arg` (which always win over the file's values).

use super::preprocess::Preprocessed;
use crate::cint::{self, CType, EvalError, Value};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::launch::parse_dims;
use std::collections::{BTreeMap, HashMap};
use tree_sitter::{Node, Parser};

/// One `<<<...>>>` launch found in the file.
#[derive(Clone, Debug, Default)]
pub struct LaunchSite {
    pub kernel: String,
    /// 1-based line of the launch in the preprocessed translation unit's root file.
    pub line: u32,
    /// Grid and block as comma-separated integer expressions (`--grid` syntax), when constant.
    pub grid: Option<String>,
    pub block: Option<String>,
    pub shared_bytes: Option<u64>,
    /// Template arguments by parameter name, as written (`T` -> `float`, `BS` -> `256`).
    pub template_args: Vec<(String, String)>,
    /// Scalar arguments by parameter name, when constant.
    pub args: Vec<(String, String)>,
}

/// Every launch in the file, in order.
pub fn launch_sites(pre: &Preprocessed) -> Result<Vec<LaunchSite>> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cuda::LANGUAGE.into())
        .map_err(|e| Diagnostic::new(ErrorKind::Syntax, format!("cannot load the CUDA grammar: {e}")))?;
    let tree = parser
        .parse(&pre.text, None)
        .ok_or_else(|| Diagnostic::new(ErrorKind::Syntax, "the CUDA parser gave up on this file"))?;
    let src = pre.text.as_bytes();
    let text = |n: Node| std::str::from_utf8(&src[n.byte_range()]).unwrap_or("").to_string();
    // Kernels' parameter names and template parameter names, by kernel name.
    let mut params: HashMap<String, (Vec<String>, Vec<String>, Vec<String>)> = HashMap::new();
    let mut stack = vec![tree.root_node()];
    let mut calls = Vec::new();
    while let Some(n) = stack.pop() {
        if n.kind() == "function_definition" && text(n).contains("__global__") {
            if let Some((name, ps, types)) = signature(n, &text) {
                let tps = n
                    .parent()
                    .filter(|p| p.kind() == "template_declaration")
                    .map(|t| template_names(t, &text))
                    .unwrap_or_default();
                params.entry(name).or_insert((ps, tps, types));
            }
        }
        if n.kind() == "call_expression" {
            let mut c = n.walk();
            if n.children(&mut c).any(|ch| ch.kind() == "kernel_call_syntax") {
                calls.push(n);
            }
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
    let mut out = Vec::new();
    for call in calls {
        let Some(f) = call.child_by_field_name("function") else { continue };
        let (kname, targs) = match f.kind() {
            "template_function" => {
                let name = f.child_by_field_name("name").map(&text).unwrap_or_default();
                let mut ts = Vec::new();
                if let Some(a) = f.child_by_field_name("arguments") {
                    let mut c = a.walk();
                    ts = a.named_children(&mut c).map(&text).collect();
                }
                (name, ts)
            }
            _ => (text(f), Vec::new()),
        };
        let kname = kname.rsplit("::").next().unwrap_or(&kname).trim().to_string();
        let Some((pnames, tnames, ptypes)) = params.get(&kname) else { continue };
        let host_vars = host_variables(call, &text);
        let resolve = |e: &str| substitute(e, &host_vars, 0);
        // Host values with C's integer types (`const unsigned char b = 256 + 32` is 32).
        let mut typed: BTreeMap<String, Value> = BTreeMap::new();
        let mut site = LaunchSite {
            kernel: kname.clone(),
            line: pre.locate(call.start_position().row, call.start_position().column, 1).line,
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
        for (name, value) in tnames.iter().zip(targs) {
            let value = value.trim().to_string();
            let c = cint::eval_str(&value, &|n: &str| host_value(n, &host_vars, &typed, 0));
            // As written (the front end binds them); an integer one also sizes the grid.
            if let Ok(v) = c {
                typed.insert(name.clone(), v);
            }
            site.template_args.push((name.clone(), value));
        }
        if let Some(args) = call.child_by_field_name("arguments") {
            let mut cc = args.walk();
            let items: Vec<Node> = args.named_children(&mut cc).collect();
            for ((name, a), ty) in pnames.iter().zip(items).zip(ptypes) {
                // An integer parameter receives the argument converted to its type.
                let c = CType::parse(ty).and_then(|t| {
                    cint::eval_str(&text(a), &|n: &str| host_value(n, &host_vars, &typed, 0)).ok().map(|v| v.to(t))
                });
                if let Some(v) = c {
                    site.args.push((name.clone(), v.v.to_string()));
                } else if let Some(v) = constant(&resolve(&text(a))) {
                    site.args.push((name.clone(), v.to_string()));
                }
            }
        }
        // Grid and block may use the kernel's constant arguments and integer template arguments.
        let mut known: BTreeMap<String, i128> = BTreeMap::new();
        for (k, v) in site.args.iter().chain(&site.template_args) {
            if let Ok(v) = v.parse::<i128>() {
                known.insert(k.clone(), v);
            }
        }
        let dims = |n: &Node| -> Option<String> {
            // C's semantics first: each dimension converted to dim3's unsigned int (a grid
            // computed in `unsigned` that wraps to 0 is 0, refused by the launch check).
            match c_dims(&text(*n), &host_vars, &typed) {
                Ok(d) => return Some(d),
                Err(EvalError::Undefined(_)) => return None,
                Err(_) => {}
            }
            let t = strip_dim3(&resolve(&text(*n)));
            parse_dims("--grid", &t, &known).ok().map(|_| t)
        };
        site.grid = config.first().and_then(dims);
        site.block = config.get(1).and_then(dims);
        site.shared_bytes = config.get(2).and_then(|n| {
            // The launch's third argument is a size_t.
            match cint::eval_str(&text(*n), &|x: &str| host_value(x, &host_vars, &typed, 0)) {
                Ok(v) => Some(v.to(CType::ULong).v as u64),
                Err(EvalError::Undefined(_)) => None,
                Err(_) => constant(&resolve(&text(*n))).map(|v| v as u64),
            }
        });
        out.push(site);
    }
    Ok(out)
}

/// A kernel's name, parameter names and parameter types (as written, without the declarator).
fn signature(f: Node, text: &dyn Fn(Node) -> String) -> Option<(String, Vec<String>, Vec<String>)> {
    let mut d = f.child_by_field_name("declarator")?;
    while d.kind() != "function_declarator" {
        d = d.child_by_field_name("declarator")?;
    }
    let name = text(d.child_by_field_name("declarator")?);
    let mut names = Vec::new();
    let mut types = Vec::new();
    if let Some(ps) = d.child_by_field_name("parameters") {
        let mut c = ps.walk();
        for p in ps.named_children(&mut c) {
            // A pointer or reference declarator makes it no integer (the type field is the base).
            let plain = p.child_by_field_name("declarator").is_some_and(|d| d.kind() == "identifier");
            types.push(if plain { p.child_by_field_name("type").map(text).unwrap_or_default() } else { String::new() });
            let mut x = p.child_by_field_name("declarator");
            while let Some(y) = x {
                if y.kind() == "identifier" {
                    break;
                }
                x = y.child_by_field_name("declarator").or_else(|| y.named_child(0));
            }
            names.push(x.map(text).unwrap_or_default());
        }
    }
    Some((name.rsplit("::").next().unwrap_or(&name).to_string(), names, types))
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

/// Variables of the host function around a launch that are initialised once and never
/// assigned again: name -> (declared type, initializer text) (`dim3 g(a, b)` gives `dim3`,
/// `a, b`).
fn host_variables(call: Node, text: &dyn Fn(Node) -> String) -> HashMap<String, (String, String)> {
    let mut f = call;
    while f.kind() != "function_definition" {
        match f.parent() {
            Some(p) => f = p,
            None => return HashMap::new(),
        }
    }
    let mut vars = HashMap::new();
    let mut assigned = std::collections::HashSet::new();
    let mut stack = vec![f];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "init_declarator" => {
                if let (Some(d), Some(v)) = (n.child_by_field_name("declarator"), n.child_by_field_name("value")) {
                    if d.kind() == "identifier" {
                        let init = if v.kind() == "argument_list" || v.kind() == "initializer_list" {
                            let t = text(v);
                            let t = t.trim();
                            t.get(1..t.len().saturating_sub(1)).unwrap_or("").to_string()
                        } else {
                            text(v)
                        };
                        let ty = n
                            .parent()
                            .filter(|p| p.kind() == "declaration")
                            .and_then(|p| p.child_by_field_name("type"))
                            .map(&text)
                            .unwrap_or_default();
                        if vars.insert(text(d), (ty, init)).is_some() {
                            assigned.insert(text(d));
                        }
                    }
                }
            }
            "assignment_expression" => {
                if let Some(l) = n.child_by_field_name("left") {
                    assigned.insert(text(l));
                }
            }
            "update_expression" => {
                if let Some(a) = n.child_by_field_name("argument") {
                    assigned.insert(text(a));
                }
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    vars.retain(|k, _| !assigned.contains(k));
    vars
}

/// Replaces host variables by their initializers (`.x` of a `dim3` by its component).
fn substitute(e: &str, vars: &HashMap<String, (String, String)>, depth: u32) -> String {
    if depth > 8 {
        return e.to_string();
    }
    let mut out = String::new();
    let b = e.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let word = &e[s..i];
            let member = if e[i..].starts_with(".x") || e[i..].starts_with(".y") || e[i..].starts_with(".z") {
                Some((b[i + 1] - b'x') as usize)
            } else {
                None
            };
            match vars.get(word).map(|(_, v)| v) {
                Some(v) => {
                    let v = strip_dim3(&substitute(v, vars, depth + 1));
                    match member {
                        Some(k) => {
                            let parts: Vec<&str> = v.split(',').collect();
                            out.push('(');
                            out.push_str(parts.get(k).copied().unwrap_or("1").trim());
                            out.push(')');
                            i += 2;
                        }
                        None => {
                            out.push('(');
                            out.push_str(&v);
                            out.push(')');
                        }
                    }
                }
                None => out.push_str(word),
            }
        } else {
            out.push(c as char);
            i += 1;
        }
    }
    out
}

/// `dim3(a, b)` -> `a, b`; casts to integer types are dropped.
fn strip_dim3(t: &str) -> String {
    let t = t.trim();
    let t = t.strip_prefix("dim3").map(|r| r.trim()).unwrap_or(t);
    let t = if t.starts_with('(') && t.ends_with(')') && balanced(&t[1..t.len() - 1]) { &t[1..t.len() - 1] } else { t };
    let mut s = t.to_string();
    for cast in
        ["(unsigned int)", "(unsigned)", "(int)", "(size_t)", "(uint)", "static_cast<int>", "static_cast<unsigned>"]
    {
        s = s.replace(cast, "");
    }
    strip_suffixes(&s)
}

/// `256u`, `4096UL` -> `256`, `4096`.
fn strip_suffixes(s: &str) -> String {
    let mut out = String::new();
    let mut prev_digit = false;
    let mut in_word = false;
    for c in s.chars() {
        if prev_digit && !in_word && matches!(c, 'u' | 'U' | 'l' | 'L') {
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' {
            in_word = !prev_digit || in_word;
        } else if !c.is_ascii_digit() {
            in_word = false;
        }
        prev_digit = c.is_ascii_digit() || (prev_digit && matches!(c, 'u' | 'U' | 'l' | 'L'));
        out.push(c);
    }
    out
}

fn balanced(s: &str) -> bool {
    let mut d = 0i32;
    for c in s.chars() {
        match c {
            '(' => d += 1,
            ')' => {
                d -= 1;
                if d < 0 {
                    return false;
                }
            }
            _ => {}
        }
    }
    d == 0
}

/// An integer constant expression's value.
fn constant(t: &str) -> Option<i128> {
    let t = strip_dim3(t);
    if t.contains(',') {
        return None;
    }
    parse_dims("--arg", &t, &BTreeMap::new()).ok().map(|d| d[0] as i128)
}

/// A host variable's value with C's types: `name` or `name.x` (a `dim3`'s component, unsigned
/// int, 1 when left out), its initializer evaluated and converted to its declared type. Names
/// not found in the host function are looked up in `known` (the kernel's template arguments).
fn host_value(
    name: &str,
    vars: &HashMap<String, (String, String)>,
    known: &BTreeMap<String, Value>,
    depth: u32,
) -> std::result::Result<Option<Value>, EvalError> {
    if depth > 16 {
        return Err(EvalError::Unsupported(format!("`{name}` is defined too deeply (or in a cycle)")));
    }
    let (base, member) = match name.rsplit_once('.') {
        Some((b, m @ ("x" | "y" | "z"))) => (b, Some((m.as_bytes()[0] - b'x') as usize)),
        _ => (name, None),
    };
    let Some((ty, init)) = vars.get(base) else {
        return Ok(known.get(name).copied());
    };
    let env = |n: &str| host_value(n, vars, known, depth + 1);
    let ty = ty.trim();
    if ty == "dim3" || ty.ends_with(" dim3") || ty.ends_with("::dim3") {
        let Some(k) = member else { return Ok(None) };
        let inner = strip_outer(init.trim().strip_prefix("dim3").unwrap_or(init).trim());
        let parts = split_commas(inner);
        return match parts.get(k) {
            Some(p) => Ok(Some(cint::eval_str(p, &env)?.to(CType::UInt))),
            None => Ok(Some(Value::new(1, CType::UInt))),
        };
    }
    if member.is_some() {
        return Ok(None);
    }
    let expr = cint::parse(init)?;
    let t = match CType::parse(ty) {
        Some(t) => t,
        None if ty.split_whitespace().any(|w| w == "auto") => cint::type_of(&expr, &env)?,
        None => return Ok(None),
    };
    Ok(Some(cint::eval(&expr, &env)?.to(t)))
}

/// A launch's grid or block (`dim3(a, b)`, `{a, b}`, a `dim3` variable, or one integer
/// expression) as `x,y,z`, each converted to dim3's unsigned int.
fn c_dims(
    t: &str,
    vars: &HashMap<String, (String, String)>,
    known: &BTreeMap<String, Value>,
) -> std::result::Result<String, EvalError> {
    let t = t.trim();
    let env = |n: &str| host_value(n, vars, known, 0);
    let is_dim3_var = vars.get(t).is_some_and(|(ty, _)| ty.trim().ends_with("dim3"));
    let parts: Vec<String> = if is_dim3_var {
        ["x", "y", "z"].iter().map(|m| format!("{t}.{m}")).collect()
    } else if let Some(rest) = t.strip_prefix("dim3") {
        split_commas(strip_outer(rest.trim())).into_iter().map(str::to_string).collect()
    } else if t.starts_with('{') {
        split_commas(strip_outer(t)).into_iter().map(str::to_string).collect()
    } else {
        vec![t.to_string()]
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(EvalError::Unsupported(format!("`{t}` is not one to three dimensions")));
    }
    let mut out = Vec::new();
    for p in &parts {
        out.push(cint::eval_str(p, &env)?.to(CType::UInt).v.to_string());
    }
    Ok(out.join(","))
}

/// `(a, b)` or `{a, b}` -> `a, b`.
fn strip_outer(t: &str) -> &str {
    let t = t.trim();
    let b = t.as_bytes();
    if b.len() >= 2 && matches!((b[0], b[b.len() - 1]), (b'(', b')') | (b'{', b'}')) && balanced(&t[1..t.len() - 1]) {
        &t[1..t.len() - 1]
    } else {
        t
    }
}

/// Top-level comma-separated items.
fn split_commas(t: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in t.char_indices() {
        match c {
            '(' | '{' => depth += 1,
            ')' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(t[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !t[start..].trim().is_empty() || !out.is_empty() {
        out.push(t[start..].trim());
    }
    out
}
