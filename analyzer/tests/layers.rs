//! The module graph is layered (ARCHITECTURE.md): a module may use only modules of lower
//! layers. This test reads every `crate::` path in `src/` and fails on an upward or sideways
//! import, which is what keeps the graph free of cycles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Lowest first. Modules of one layer do not use each other.
const LAYERS: &[&[&str]] = &[
    &["source", "cint"],
    &["diag"],
    &["fill", "finding", "gpu"],
    &["ir"],
    &["launch"],
    &["front"],
    &["engine"],
    &["cache"],
    &["sheet"],
    &["analyze"],
    &["manifest"],
    &["attribute", "check", "explain", "sweep", "fuzzing"],
    &["html"],
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") && !p.ends_with("tests.rs") {
            // Unit-test modules may drive the whole pipeline: they are not part of the layering.
            out.push(p);
        }
    }
}

/// The source without comments (doc links may name any module).
fn code(text: &str) -> String {
    text.lines().map(|l| l.find("//").map_or(l, |i| &l[..i])).collect::<Vec<_>>().join("\n")
}

/// The top-level module each name the crate root re-exports comes from (`Diagnostic` -> `diag`).
fn reexports() -> BTreeMap<String, String> {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let mut map = BTreeMap::new();
    for stmt in code(&lib).split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else { continue };
        let Some((module, names)) = rest.split_once("::") else { continue };
        for n in names.trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace()).split(',') {
            let n = n.trim().rsplit("::").next().unwrap_or("").trim();
            if !n.is_empty() {
                map.insert(n.to_string(), module.trim().to_string());
            }
        }
    }
    map
}

/// The top-level modules `text` names through `crate::` (in paths and `use crate::{..}` lists).
fn uses(text: &str, reexports: &BTreeMap<String, String>) -> Vec<String> {
    let code = code(text);
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            // Only the first segment of each item matters (`engine::{self, Trace}` -> engine).
            let mut depth = 0;
            let mut items = Vec::new();
            let mut start = 0;
            for (k, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&group[start..k]);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            items.push(&group[start..end]);
            items
        } else {
            vec![rest]
        };
        for n in names {
            let n = n.trim();
            let first: String = n.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if first.is_empty() {
                continue;
            }
            out.push(reexports.get(&first).cloned().unwrap_or(first));
        }
    }
    out
}

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

#[test]
fn no_module_uses_a_module_of_its_own_or_a_higher_layer() {
    let root = src();
    let reexports = reexports();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let top = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        // The crate root only declares; the binary and its `cli` modules sit above everything.
        if top == "lib" || top == "bin" || top == "cli" {
            continue;
        }
        let Some(from) = layer_of(&top) else {
            bad.push(format!("{rel}: module `{top}` is in no layer of tests/layers.rs (and ARCHITECTURE.md)"));
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        for used in uses(&text, &reexports) {
            if used == top || used == "self" {
                continue;
            }
            match layer_of(&used) {
                Some(to) if to < from => {}
                Some(_) => bad.push(format!("{rel}: `{top}` uses `crate::{used}`, which is not below it")),
                None => bad.push(format!("{rel}: uses `crate::{used}`, which is in no layer")),
            }
        }
    }
    assert!(bad.is_empty(), "layering violations:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_sees_imports() {
    let r = reexports();
    assert_eq!(r.get("Diagnostic").map(String::as_str), Some("diag"));
    let u =
        uses("use crate::engine::{self, Trace};\nuse crate::{fill::Fill, Sheet};\nlet x = crate::gpu::lookup(a);", &r);
    assert_eq!(u, ["engine", "fill", "sheet", "gpu"]);
    assert_eq!(layer_of("engine").unwrap() + 1, layer_of("cache").unwrap());
}

/// Only `engine/count.rs` turns addresses into sectors or wavefronts.
#[test]
fn only_count_rs_counts_a_sector() {
    let root = src();
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let rules = [
        "fn sectors_of(",
        "fn wavefronts(addrs",
        "fn ideal_sectors(addrs",
        "fn global_sectors(known",
        "div_ceil(SECTOR",
        "pub fn may_alias",
        "pub(crate) fn may_alias",
    ];
    let mut bad = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        if rel == "engine/count.rs" {
            continue;
        }
        let text = code(&std::fs::read_to_string(&f).unwrap());
        for r in rules {
            if text.contains(r) {
                bad.push(format!("{rel}: `{r}` belongs in engine/count.rs"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
