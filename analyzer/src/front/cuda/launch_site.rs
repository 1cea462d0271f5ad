//! Launches taken from the file's own host code: `kernel<T, 256><<<grid, block, smem>>>(args)`.
//!
//! Grid, block, dynamic shared memory, template arguments and scalar arguments are read from
//! the call where they are constants after preprocessing, following host variables initialised
//! once (`int threads = 256; dim3 grid(n / threads);`). What is not constant is left to
//! `--grid`/`--block`/`--arg` (which always win over the file's values).

use super::preprocess::Preprocessed;
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
    let mut params: HashMap<String, (Vec<String>, Vec<String>)> = HashMap::new();
    let mut stack = vec![tree.root_node()];
    let mut calls = Vec::new();
    while let Some(n) = stack.pop() {
        if n.kind() == "function_definition" && text(n).contains("__global__") {
            if let Some((name, ps)) = signature(n, &text) {
                let tps = n
                    .parent()
                    .filter(|p| p.kind() == "template_declaration")
                    .map(|t| template_names(t, &text))
                    .unwrap_or_default();
                params.entry(name).or_insert((ps, tps));
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
        let Some((pnames, tnames)) = params.get(&kname) else { continue };
        let host_vars = host_variables(call, &text);
        let resolve = |e: &str| substitute(e, &host_vars, 0);
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
            site.template_args.push((name.clone(), value.trim().to_string()));
        }
        if let Some(args) = call.child_by_field_name("arguments") {
            let mut cc = args.walk();
            let items: Vec<Node> = args.named_children(&mut cc).collect();
            for (name, a) in pnames.iter().zip(items) {
                if let Some(v) = constant(&resolve(&text(a))) {
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
            let t = strip_dim3(&resolve(&text(*n)));
            parse_dims("--grid", &t, &known).ok().map(|_| t)
        };
        site.grid = config.first().and_then(dims);
        site.block = config.get(1).and_then(dims);
        site.shared_bytes = config.get(2).and_then(|n| constant(&resolve(&text(*n)))).map(|v| v as u64);
        out.push(site);
    }
    Ok(out)
}

/// A kernel's name and parameter names.
fn signature(f: Node, text: &dyn Fn(Node) -> String) -> Option<(String, Vec<String>)> {
    let mut d = f.child_by_field_name("declarator")?;
    while d.kind() != "function_declarator" {
        d = d.child_by_field_name("declarator")?;
    }
    let name = text(d.child_by_field_name("declarator")?);
    let mut names = Vec::new();
    if let Some(ps) = d.child_by_field_name("parameters") {
        let mut c = ps.walk();
        for p in ps.named_children(&mut c) {
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
    Some((name.rsplit("::").next().unwrap_or(&name).to_string(), names))
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
/// assigned again: name -> initializer text (`dim3 g(a, b)` gives `a, b`).
fn host_variables(call: Node, text: &dyn Fn(Node) -> String) -> HashMap<String, String> {
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
                        if vars.insert(text(d), init).is_some() {
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
fn substitute(e: &str, vars: &HashMap<String, String>, depth: u32) -> String {
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
            match vars.get(word) {
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
