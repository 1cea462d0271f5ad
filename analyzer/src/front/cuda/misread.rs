//! What the parser guessed wrongly, repaired in the text (same bytes, same lines and columns)
//! before it is parsed again:
//!
//! - Casts. `(x) && (y)` is ambiguous in C++ syntax alone: with `x` a type it is a cast of
//!   `&&(y)`, with `x` a variable a logical and. tree-sitter cannot know, and picks the cast:
//!   Rodinia's `#define IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))` comes out as
//!   `(x) >= ((min) &&(x)) <= (max)`. Where the parenthesised name is a variable of the file
//!   and no type, its parentheses are blanked; so are those of an element read as a cast to an
//!   array type (`(pattern[i]) - 'A'`).
//! - Comments inside an expression or a declaration (`a[i /* row */]`): the grammar makes them
//!   children of any node, where the lowering expects operands. Comments are blanked (C
//!   replaces a comment by a space).
//! - `[=] __device__ (float x) { .. }`: the execution-space attribute of an extended lambda is
//!   not in the grammar (an `ERROR` node); it is blanked.
//! - `(r >= 0 && r < n && c >= 0)`: a variable compared with `<` and, later, something with
//!   `>` or `>=`, read as the template `r<n && c>` (here followed by `= 0`, an assignment). A
//!   variable of the file is no template: where spaces or tabs surround its name, they become
//!   parentheses, `(r)< n`, which means the same and cannot start a template.
//! - `half h(x);`, `float v(in[i]);` in a body: direct initialisation read as the declaration of
//!   a function whose parameters' "types" are the file's variables (C++'s most vexing parse
//!   taken the wrong way). Its parentheses become braces, `half h{x};`, which means the same.

use super::types::named_type;
use std::collections::HashSet;
use tree_sitter::Node;

/// The text with every misreading above repaired, or `None` when there is none.
pub(super) fn repair(src: &str, root: Node) -> Option<String> {
    let text = |n: Node| src.get(n.byte_range()).unwrap_or("");
    let mut types = HashSet::new();
    let mut vars = HashSet::new();
    let mut casts = Vec::new();
    let mut comments = Vec::new();
    let mut comment_inside = false;
    let mut lambda_attrs = Vec::new();
    let mut prototypes = Vec::new();
    let mut templates = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "type_definition" => {
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    types.insert(text(d).trim_start_matches('*').trim());
                }
            }
            "alias_declaration" | "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier" => {
                if let Some(name) = n.child_by_field_name("name") {
                    types.insert(text(name));
                }
            }
            "type_parameter_declaration" | "optional_type_parameter_declaration" => {
                let mut c = n.walk();
                for x in n.named_children(&mut c).filter(|x| x.kind() == "type_identifier") {
                    types.insert(text(x));
                }
            }
            // A name declared as a variable, parameter, member or enumerator (every declarator
            // of `int a, *b, c[4];`).
            "init_declarator"
            | "parameter_declaration"
            | "optional_parameter_declaration"
            | "declaration"
            | "field_declaration" => {
                if n.kind() == "declaration" && n.parent().is_some_and(|p| p.kind() == "compound_statement") {
                    prototypes.push(n);
                }
                let mut c = n.walk();
                for d in n.children_by_field_name("declarator", &mut c) {
                    if let Some(name) = declared_name(d) {
                        vars.insert(text(name));
                    }
                }
            }
            "enumerator" => {
                if let Some(name) = n.child_by_field_name("name") {
                    vars.insert(text(name));
                }
            }
            "cast_expression" => casts.push(n),
            "template_function" => templates.push(n),
            "comment" => {
                comments.push(n);
                let statement_level = n.parent().is_none_or(|p| {
                    matches!(
                        p.kind(),
                        "translation_unit"
                            | "compound_statement"
                            | "declaration_list"
                            | "field_declaration_list"
                            | "enumerator_list"
                            | "preproc_if"
                            | "preproc_ifdef"
                            | "preproc_else"
                            | "preproc_elif"
                    )
                });
                comment_inside |= !statement_level;
            }
            "ERROR"
                if n.parent().is_some_and(|p| p.kind() == "lambda_expression")
                    && text(n).split_whitespace().all(|w| matches!(w, "__device__" | "__host__")) =>
            {
                lambda_attrs.push(n);
            }
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    let mut out: Option<Vec<u8>> = None;
    if comment_inside {
        let bytes = out.get_or_insert_with(|| src.as_bytes().to_vec());
        for c in &comments {
            blank(bytes, c.start_byte(), c.end_byte());
        }
    }
    for a in &lambda_attrs {
        blank(out.get_or_insert_with(|| src.as_bytes().to_vec()), a.start_byte(), a.end_byte());
    }
    for d in prototypes {
        if let Some(params) = direct_initialisation(d, &vars, &types, src) {
            let (open, close) = (params.start_byte(), params.end_byte().saturating_sub(1));
            if src.as_bytes().get(open) == Some(&b'(') && src.as_bytes().get(close) == Some(&b')') {
                let bytes = out.get_or_insert_with(|| src.as_bytes().to_vec());
                bytes[open] = b'{';
                bytes[close] = b'}';
            }
        }
    }
    for t in templates {
        let Some(name) = t.child_by_field_name("name").filter(|x| x.kind() == "identifier") else { continue };
        let n = text(name);
        if !vars.contains(n) || types.contains(n) || named_type(n).is_some() {
            continue;
        }
        let (start, end) = (name.start_byte(), name.end_byte());
        let b = src.as_bytes();
        // A space or a tab (never a newline: lines and columns stay where they were).
        let blank = |c: Option<&u8>| matches!(c, Some(b' ' | b'\t'));
        if start == 0 || !blank(b.get(start - 1)) || !blank(b.get(end)) {
            continue;
        }
        let bytes = out.get_or_insert_with(|| src.as_bytes().to_vec());
        bytes[start - 1] = b'(';
        bytes[end] = b')';
    }
    for cast in casts {
        let (Some(td), Some(value)) = (cast.child_by_field_name("type"), cast.child_by_field_name("value")) else {
            continue;
        };
        // A bare name in the parentheses, no `*` or qualifier; or an element, `(pattern[i]) - 'A'`
        // (nothing casts to an array type).
        let declarator = td.child_by_field_name("declarator");
        if td.named_child_count() != 1 + usize::from(declarator.is_some())
            || declarator.is_some_and(|d| d.kind() != "abstract_array_declarator")
        {
            continue;
        }
        let Some(t) = td.child_by_field_name("type").filter(|t| t.kind() == "type_identifier") else { continue };
        let name = text(t);
        if !vars.contains(name) || types.contains(name) || named_type(name).is_some() {
            continue;
        }
        // What follows reads as a binary operator after a variable: `&`, `&&`, `*`, `-`, `+`.
        if !text(value).starts_with(['&', '*', '-', '+']) {
            continue;
        }
        let open = cast.start_byte();
        let close = src[td.end_byte()..cast.end_byte()].find(')').map(|i| td.end_byte() + i);
        let (Some(close), Some(b'(')) = (close, src.as_bytes().get(open)) else { continue };
        let bytes = out.get_or_insert_with(|| src.as_bytes().to_vec());
        bytes[open] = b' ';
        bytes[close] = b' ';
    }
    out.and_then(|b| String::from_utf8(b).ok())
}

/// Spaces for `start..end`, newlines kept (lines and columns stay where they were).
fn blank(bytes: &mut [u8], start: usize, end: usize) {
    for b in bytes.iter_mut().take(end).skip(start) {
        if *b != b'\n' && *b != b'\r' {
            *b = b' ';
        }
    }
}

/// The parameter list of `T v(x, ..);` in a body when it is a direct initialisation: a lone
/// function declarator (no `void`, `extern` or `static` function) one of whose "parameters"
/// is a variable of the file used as a type (`half h(x)`, `float v(in[i])`), or no type at all.
fn direct_initialisation<'t>(d: Node<'t>, vars: &HashSet<&str>, types: &HashSet<&str>, src: &str) -> Option<Node<'t>> {
    let text = |n: Node| src.get(n.byte_range()).unwrap_or("");
    let mut c = d.walk();
    let decls: Vec<Node> = d.children_by_field_name("declarator", &mut c).collect();
    let [f] = decls.as_slice() else { return None };
    if f.kind() != "function_declarator" || f.child_by_field_name("declarator")?.kind() != "identifier" {
        return None;
    }
    let ty = d.child_by_field_name("type")?;
    if text(ty) == "void" || text(d).trim_start().starts_with("extern") || text(d).trim_start().starts_with("static") {
        return None;
    }
    let params = f.child_by_field_name("parameters")?;
    let mut pc = params.walk();
    let ps: Vec<Node> = params.named_children(&mut pc).collect();
    let misread = ps.iter().any(|p| {
        p.kind() == "parameter_declaration"
            && p.child_by_field_name("type").is_some_and(|t| {
                t.kind() == "type_identifier"
                    && vars.contains(text(t))
                    && !types.contains(text(t))
                    && named_type(text(t)).is_none()
            })
    });
    (misread && !ps.is_empty()).then_some(params)
}

/// The name a declarator declares: `x`, `*p`, `&r`, `a[4]`, `x = 1`.
fn declared_name(mut d: Node) -> Option<Node> {
    for _ in 0..16 {
        match d.kind() {
            "identifier" | "field_identifier" => return Some(d),
            "pointer_declarator"
            | "reference_declarator"
            | "array_declarator"
            | "init_declarator"
            | "parenthesized_declarator" => {
                d = match d.child_by_field_name("declarator") {
                    Some(x) => x,
                    None => {
                        let mut c = d.walk();
                        let inner = d.named_children(&mut c).find(|x| x.kind() != "type_qualifier");
                        inner?
                    }
                };
            }
            _ => return None,
        }
    }
    None
}
