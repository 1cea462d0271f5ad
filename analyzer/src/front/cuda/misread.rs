//! Casts the parser guessed wrongly. `(x) && (y)` is ambiguous in C++ syntax alone: with `x` a
//! type it is a cast of `&&(y)`, with `x` a variable a logical and. tree-sitter cannot know,
//! and picks the cast: Rodinia's `#define IN_RANGE(x, min, max) ((x)>=(min) && (x)<=(max))`
//! comes out as `(x) >= ((min) &&(x)) <= (max)`. Where the parenthesised name is a variable
//! of the file and no type, its parentheses are blanked (same bytes, same lines and columns)
//! and the text is parsed again.

use super::types::named_type;
use std::collections::HashSet;
use tree_sitter::Node;

/// The text with the misread casts' parentheses blanked, or `None` when there is none.
pub fn repair_casts(src: &str, root: Node) -> Option<String> {
    let text = |n: Node| src.get(n.byte_range()).unwrap_or("");
    let mut types = HashSet::new();
    let mut vars = HashSet::new();
    let mut casts = Vec::new();
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
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    let mut out: Option<Vec<u8>> = None;
    for cast in casts {
        let (Some(td), Some(value)) = (cast.child_by_field_name("type"), cast.child_by_field_name("value")) else {
            continue;
        };
        // A bare name in the parentheses, no `*` or qualifier.
        if td.named_child_count() != 1 || td.child_by_field_name("declarator").is_some() {
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
