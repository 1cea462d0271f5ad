//! The Rust front end: cuda_std-style kernel functions -> kernel IR.
//!
//! A three-step pipeline like the CUDA one: parse (`syn`, with proc-macro2's own span tracking so
//! that every construct has a line and a column, even when this runs inside the
//! `#[sector_estimate]` proc macro) -> pick the kernel functions and the file's integer constants
//! -> lower each kernel ([`lower`]). The subset is the one of CONTRACT.md ("Rust kernel subset");
//! anything else is an [`ErrorKind::Unsupported`] error at the construct's span.
//!
//! Which functions are kernels: those marked `#[kernel]` (cuda_std) or `#[sector_estimate]`;
//! when none is marked, every `pub fn`; when there is no `pub fn` either, every `fn` (a file
//! holding one private kernel, as the attribute hands it over).

mod lower;

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::{IntTy, Module};
use crate::source::{FileId, SourceFiles, Span};
use std::collections::HashMap;

/// Switches proc-macro2 to its own implementation while alive, so that parsing a string yields
/// real line/column spans also inside a proc macro (where the compiler's implementation would
/// give every token the call site's span).
struct FallbackSpans;

impl FallbackSpans {
    fn new() -> Self {
        proc_macro2::fallback::force();
        FallbackSpans
    }
}

impl Drop for FallbackSpans {
    fn drop(&mut self) {
        proc_macro2::fallback::unforce();
    }
}

/// What every kernel of the file can see: the file's text (for spans and access texts) and its
/// integer constants.
pub(crate) struct Ctx<'a> {
    pub file: FileId,
    pub lines: Vec<&'a str>,
    pub consts: HashMap<String, (i128, IntTy)>,
}

impl Ctx<'_> {
    /// A proc-macro2 span as the analyzer's span (1-based line and column).
    pub(crate) fn span(&self, s: proc_macro2::Span) -> Span {
        let a = s.start();
        let b = s.end();
        let len = if a.line == b.line {
            b.column.saturating_sub(a.column)
        } else {
            self.lines.get(a.line.wrapping_sub(1)).map_or(1, |l| l.chars().count().saturating_sub(a.column))
        };
        Span { file: self.file, line: a.line.max(1) as u32, column: a.column as u32 + 1, len: len.max(1) as u32 }
    }

    /// The source text a span covers, whitespace runs collapsed to one space.
    pub(crate) fn text(&self, s: proc_macro2::Span) -> String {
        let (a, b) = (s.start(), s.end());
        let mut out = String::new();
        for line in a.line..=b.line {
            let Some(l) = self.lines.get(line.wrapping_sub(1)) else {
                break;
            };
            let from = if line == a.line { a.column } else { 0 };
            let to = if line == b.line { b.column } else { usize::MAX };
            out.extend(l.chars().skip(from).take(to.saturating_sub(from)));
            out.push(' ');
        }
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// Parses a `.rs` file and lowers every kernel function in it.
pub fn lower_file(files: &SourceFiles, root: FileId) -> Result<Module> {
    let text = files.text(root);
    let _fallback = FallbackSpans::new();
    let mut cx = Ctx { file: root, lines: text.lines().collect(), consts: HashMap::new() };
    let file = syn::parse_file(text)
        .map_err(|e| Diagnostic::at(ErrorKind::Syntax, cx.span(e.span()), format!("Rust syntax error: {e}")))?;
    let mut fns = Vec::new();
    collect_items(&file.items, &mut cx, &mut fns);
    let marked: Vec<&syn::ItemFn> = fns.iter().copied().filter(|f| is_marked(&f.attrs)).collect();
    let public: Vec<&syn::ItemFn> =
        fns.iter().copied().filter(|f| matches!(f.vis, syn::Visibility::Public(_))).collect();
    let chosen = if !marked.is_empty() {
        marked
    } else if !public.is_empty() {
        public
    } else {
        fns
    };
    // A kernel that cannot be lowered is an error only when it is the one analysed.
    let mut module = Module::default();
    for f in chosen {
        match lower::lower_kernel(&cx, f) {
            Ok(k) => module.kernels.push(k),
            Err(d) => module.failed.push((f.sig.ident.to_string(), d)),
        }
    }
    Ok(module)
}

fn is_marked(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| a.path().segments.last().is_some_and(|s| s.ident == "kernel" || s.ident == "sector_estimate"))
}

/// Functions and integer constants at the top level and in inline modules, in source order.
fn collect_items<'f>(items: &'f [syn::Item], cx: &mut Ctx, fns: &mut Vec<&'f syn::ItemFn>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => fns.push(f),
            syn::Item::Const(c) => {
                if let Some(ty) = lower::int_type(&c.ty) {
                    if let Some(v) = lower::const_eval(&c.expr, &cx.consts) {
                        cx.consts.insert(c.ident.to_string(), (ty.wrap(v), ty));
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect_items(inner, cx, fns);
                }
            }
            _ => {}
        }
    }
}
