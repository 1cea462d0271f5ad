//! Parsing costs memory: a tree-sitter tree takes tens of bytes per byte of source. Top-level
//! function definitions that no kernel can reach (by name, directly or through other functions)
//! are blanked before parsing: their bytes become spaces, newlines kept, so every line and
//! column of what is parsed stays where it was. Anything not plainly a function definition
//! (types, templates, namespaces, declarations) is kept, and so is every kernel.

use std::collections::{HashMap, HashSet};

struct Item {
    /// First byte of the header (after leading white space).
    start: usize,
    /// The `{` that opens the body and the `}` that closes it.
    open: usize,
    close: usize,
}

/// Blanks the unreachable functions of a preprocessed translation unit; returns how many.
pub(super) fn blank_unreachable(text: &mut String) -> usize {
    let b = text.as_bytes();
    let Some(items) = top_level_bodies(b) else { return 0 };
    // Candidates: plain function definitions, by name.
    let mut by_name: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let header = &text[it.start..it.open];
        match function_name(header) {
            Some(name) if !header.contains("__global__") => by_name.entry(name).or_default().push(i),
            _ => roots.push(i),
        }
    }
    if by_name.is_empty() {
        return 0;
    }
    // Everything outside the candidates is kept and may name them; so is each reached one.
    let mut keep: HashSet<usize> = HashSet::new();
    let mut work: Vec<(usize, usize)> = Vec::new();
    let mut last = 0;
    for it in &items {
        work.push((last, it.start));
        last = it.close + 1;
    }
    work.push((last, b.len()));
    for &r in &roots {
        work.push((items[r].start, items[r].close + 1));
    }
    let mut seen_names: HashSet<&str> = HashSet::new();
    while let Some((from, to)) = work.pop() {
        for name in identifiers(&text[from..to]) {
            if !seen_names.insert(name) {
                continue;
            }
            for &i in by_name.get(name).map(Vec::as_slice).unwrap_or(&[]) {
                if keep.insert(i) {
                    work.push((items[i].start, items[i].close + 1));
                }
            }
        }
    }
    let blank: Vec<(usize, usize)> = by_name
        .values()
        .flatten()
        .filter(|i| !keep.contains(i))
        .map(|&i| (items[i].start, items[i].close + 1))
        .collect();
    if blank.is_empty() {
        return 0;
    }
    let mut bytes = std::mem::take(text).into_bytes();
    for &(from, to) in &blank {
        for c in &mut bytes[from..to] {
            if *c != b'\n' && *c != b'\r' {
                *c = b' ';
            }
        }
    }
    // Only ASCII bytes of whole characters were replaced: still UTF-8.
    *text = String::from_utf8(bytes).unwrap_or_default();
    blank.len()
}

/// The top-level `{ ... }` bodies with their headers, skipping comments and literals; `None`
/// when the braces do not balance (the parser then reports the file as it is).
fn top_level_bodies(b: &[u8]) -> Option<Vec<Item>> {
    let mut items = Vec::new();
    let (mut depth, mut i, mut start, mut open) = (0usize, 0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 2;
                continue;
            }
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'{' => {
                if depth == 0 {
                    open = i;
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    let s = start + b[start..open].iter().take_while(|c| c.is_ascii_whitespace()).count();
                    items.push(Item { start: s, open, close: i });
                    start = i + 1;
                }
            }
            b';' if depth == 0 => start = i + 1,
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then_some(items)
}

/// The name a header defines when it is plainly a function definition: `... name(params) quals`.
fn function_name(header: &str) -> Option<&str> {
    const NOT_FUNCTIONS: &[&str] =
        &["struct", "class", "union", "enum", "namespace", "template", "extern", "typedef", "operator", "using"];
    if header.contains('=') || header.contains('<') || header.contains('#') {
        return None;
    }
    let words: Vec<&str> = identifiers(header).collect();
    if words.iter().any(|w| NOT_FUNCTIONS.contains(w)) {
        return None;
    }
    let paren = header.find('(')?;
    let tail = header[header.rfind(')')? + 1..].trim();
    if !tail.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c.is_whitespace()) {
        return None;
    }
    let before = header[..paren].trim_end();
    let name_start = before.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |p| p + 1);
    let name = &before[name_start..];
    (!name.is_empty() && !name.as_bytes()[0].is_ascii_digit() && name_start > 0).then_some(name)
}

fn identifiers(s: &str) -> impl Iterator<Item = &str> {
    s.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.as_bytes().first().is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreached_functions_become_blank_lines_and_reached_ones_stay() {
        let src = "__device__ float used(float x) { return helper(x); }\n\
                   __device__ float helper(float x) { return x; }\n\
                   __device__ float unused(float x) {\n  return \"}\" [0] + x; }\n\
                   struct S { int a; };\n\
                   __global__ void k(float* a) { a[0] = used(1.0f); }\n";
        let mut t = src.to_string();
        assert_eq!(blank_unreachable(&mut t), 1);
        assert_eq!(t.lines().count(), src.lines().count());
        assert!(t.contains("used(float x)") && t.contains("helper(float x)") && !t.contains("unused"));
        assert!(t.contains("struct S") && t.contains("__global__ void k"));
        assert_eq!(t.lines().nth(2).unwrap().trim(), "");
    }

    #[test]
    fn unbalanced_text_is_left_alone() {
        let mut t = "__device__ void f() { \n__global__ void k() {}".to_string();
        assert_eq!(blank_unreachable(&mut t), 0);
    }
}
