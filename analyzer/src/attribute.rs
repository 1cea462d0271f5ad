//! The `#[sector_estimate]` attribute: everything but the `proc_macro` glue, which lives in the
//! thin `estimator-macros` crate. Working on `proc_macro2` token streams keeps it testable here.
//!
//! On a Rust kernel function the item's tokens are laid out again as text at their own lines and
//! columns (the compiler reports them), so the sheet's `line:col` are the user's file's, and a
//! row maps back to the tokens of its access for a compile error spanned exactly there. On a
//! `const` (or `static`) holding CUDA source the string's value is analysed as a `.cu` file;
//! errors point at the string literal and name the line inside it.
//!
//! Output: the item unchanged, then a module named after the item in snake case plus
//! `_sector_estimate`, with the item's visibility, holding the totals as constants and the text
//! sheet (also its documentation). Every problem is one `compile_error!`; when the analysis
//! failed the module is still emitted with zeros, so the user sees the error and not a cascade
//! of unresolved names.

use crate::analyze::{analyze_source, AnalyzeOptions};
use crate::sheet::Sheet;
use proc_macro2::{Delimiter, Ident, Spacing, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;

/// Longest an analysis inside the attribute may run before it is refused with a compile error.
pub const ATTRIBUTE_TIME_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);
/// Expands `#[sector_estimate(attr)] item`.
pub fn expand(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut errors: Vec<syn::Error> = Vec::new();
    let parsed: syn::Item = match syn::parse2(item.clone()) {
        Ok(i) => i,
        Err(e) => {
            let err = syn::Error::new(
                e.span(),
                "#[sector_estimate] goes on a kernel `fn` or on a `const` holding CUDA source",
            );
            return emit(&errors_with(err), &item, None);
        }
    };
    let target = match Target::of(&parsed, &item) {
        Ok(t) => t,
        Err(e) => return emit(&errors_with(e), &item, None),
    };
    let args = Args::parse(attr, &target, &mut errors);
    let mut module = ModuleSpec {
        vis: target.vis.clone(),
        name: format_ident!("{}_sector_estimate", snake(&target.ident.to_string())),
        warnings: Vec::new(),
    };
    if !errors.is_empty() {
        return emit(&errors, &item, Some((&module, None)));
    }
    let Some(args) = args else {
        return emit(&errors, &item, Some((&module, None)));
    };

    let (name, text) = match &target.kind {
        Kind::Rust => {
            let file = item.clone().into_iter().next().map(|t| t.span().file()).unwrap_or_default();
            let name = if file.ends_with(".rs") { file } else { format!("{}.rs", target.ident) };
            (name, target.layout.text.clone())
        }
        Kind::Cuda { source, .. } => (format!("{}.cu", target.ident), source.clone()),
    };
    let opts = AnalyzeOptions {
        kernel: match &target.kind {
            Kind::Rust => Some(target.ident.to_string()),
            Kind::Cuda { .. } => args.kernel.clone(),
        },
        grid: args.grid.0.clone(),
        block: args.block.0.clone(),
        args: args.params.iter().map(|p| (p.name.clone(), p.value.clone())).collect(),
        max_work: args.max_work.unwrap_or(crate::analyze::DEFAULT_MAX_WORK),
        // rust-analyzer expands the attribute as the user types, and a user's crate builds the
        // analyzer unoptimised: a wall-clock bound holds whatever the build profile.
        time_limit: Some(ATTRIBUTE_TIME_LIMIT),
        gpu: args.gpu.clone().unwrap_or_else(|| "h200".into()),
        shared_bytes: args.shared_bytes,
        engine: args.engine,
        fills: args.fills.clone(),
        offsets: args.offsets.clone(),
        defines: args.defines.clone(),
        include_dirs: args.include_dirs.clone(),
        ..AnalyzeOptions::default()
    };
    // A name that is neither an option nor a parameter (nor used in `grid`/`block`): say which
    // it could be, before its value is read as a parameter's.
    let known = match &target.kind {
        Kind::Rust => target.params.clone(),
        Kind::Cuda { .. } => {
            let mut files = crate::SourceFiles::default();
            let input = crate::Input::Source { name: &name, text: &text };
            crate::analyze::lower(&input, &opts, &crate::source::NoFiles, &mut files).ok().and_then(|m| {
                let k = crate::analyze::pick_kernel(&m, opts.kernel.as_deref(), &files).ok()?;
                Some(k.params.iter().map(|p| p.name.clone()).collect())
            })
        }
    };
    if let Some(names) = known {
        for p in &args.params {
            let in_shape = args.grid.0.contains(&p.name) || args.block.0.contains(&p.name);
            if !names.contains(&p.name) && !p.name.ends_with("_len") && !in_shape {
                errors.push(syn::Error::new(
                    p.span,
                    format!(
                        "unknown key `{}`: not an option of #[sector_estimate] and not a parameter of `{}`\n  = note: options: {}\n  = note: parameters: {}",
                        p.name,
                        target.ident,
                        OPTIONS.join(", "),
                        if names.is_empty() { "(none)".to_string() } else { names.join(", ") }
                    ),
                ));
            }
        }
        if !errors.is_empty() {
            return emit(&errors, &item, Some((&module, None)));
        }
    }
    match analyze_source(&name, &text, &opts) {
        Ok(a) => {
            check_budgets(&a.sheet, &args, &target, &mut errors);
            // Stable Rust has no warning API for proc macros: warnings go into the module.
            module.warnings = a
                .warnings
                .iter()
                .map(|w| {
                    crate::finding::concise(&a.files, &crate::finding::Finding::from_diagnostic(w))
                        .trim_end()
                        .to_string()
                })
                .collect();
            emit(&errors, &item, Some((&module, Some(&a.sheet))))
        }
        Err(f) => {
            errors.push(target.diagnostic(&f.diagnostic, &args));
            emit(&errors, &item, Some((&module, None)))
        }
    }
}

fn errors_with(e: syn::Error) -> Vec<syn::Error> {
    vec![e]
}

/// Where the generated constants go.
struct ModuleSpec {
    vis: syn::Visibility,
    name: Ident,
    /// The analysis's warnings, one line each (clang's layout).
    warnings: Vec<String>,
}

/// The item unchanged, every error, and the module of constants.
fn emit(errors: &[syn::Error], item: &TokenStream, module: Option<(&ModuleSpec, Option<&Sheet>)>) -> TokenStream {
    let errs = errors.iter().map(|e| e.to_compile_error());
    let module = module.map(|(m, sheet)| module_tokens(m, sheet));
    quote! {
        #(#errs)*
        #item
        #module
    }
}

fn module_tokens(m: &ModuleSpec, sheet: Option<&Sheet>) -> TokenStream {
    let (vis, name) = (&m.vis, &m.name);
    let (lr, ls, li, sr, ss, si, lb, json, text, grid, block) = match sheet {
        Some(s) => {
            let t = &s.totals;
            (
                t.global_load.requests,
                t.global_load.sectors,
                t.global_load.ideal_sectors,
                t.global_store.requests,
                t.global_store.sectors,
                t.global_store.ideal_sectors,
                s.global_logical_bytes(),
                crate::sheet::json::render(s),
                crate::sheet::text::render(s),
                s.launch.grid,
                s.launch.block,
            )
        }
        None => (0, 0, 0, 0, 0, 0, 0, String::new(), String::new(), [0; 3], [0; 3]),
    };
    let mut doc = match sheet {
        Some(s) => format!(
            " The accounting sheet of kernel `{}` under `#[sector_estimate]`'s launch (whole launch, global memory).\n\n```text\n{}```",
            s.kernel, text
        ),
        None => " The analysis failed: see the compile error.".to_string(),
    };
    // Present only when there is something to say, as `WARNINGS`.
    let warnings = (!m.warnings.is_empty()).then(|| {
        let w = &m.warnings;
        doc.push_str(&format!("\n\nWarnings:\n\n```text\n{}\n```", w.join("\n")));
        quote! {
            /// The analysis's warnings (`#warning`, ...), one line each: `file:line:col: warning: message`.
            pub const WARNINGS: &[&str] = &[#(#w),*];
        }
    });
    let [gx, gy, gz] = grid;
    let [bx, by, bz] = block;
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        #vis mod #name {
            /// Global load requests (`l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum`).
            pub const LOAD_REQUESTS: u64 = #lr;
            /// Global load sectors (`l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`).
            pub const LOAD_SECTORS: u64 = #ls;
            /// The fewest sectors that could carry the same loaded bytes.
            pub const LOAD_IDEAL_SECTORS: u64 = #li;
            /// Global store requests (`l1tex__t_requests_pipe_lsu_mem_global_op_st.sum`).
            pub const STORE_REQUESTS: u64 = #sr;
            /// Global store sectors (`l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum`).
            pub const STORE_SECTORS: u64 = #ss;
            /// The fewest sectors that could carry the same stored bytes.
            pub const STORE_IDEAL_SECTORS: u64 = #si;
            /// Bytes the program asks for in global memory (active lanes x width, loads and stores).
            pub const LOGICAL_BYTES: u64 = #lb;
            /// The launch analysed.
            pub const GRID: [u32; 3] = [#gx, #gy, #gz];
            pub const BLOCK: [u32; 3] = [#bx, #by, #bz];
            /// The text accounting sheet.
            pub const SHEET: &str = #text;
            /// The sheet as `sector-estimate --format json` prints it.
            pub const JSON: &str = #json;
            #warnings
        }
    }
}

/// `VEC_ADD_CU` -> `vec_add_cu`, `vecAdd` -> `vec_add`.
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    let mut prev: Option<char> = None;
    for c in name.chars() {
        if c.is_uppercase() && prev.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
            out.push('_');
        }
        out.extend(c.to_lowercase());
        prev = Some(c);
    }
    out
}

enum Kind {
    Rust,
    Cuda { source: String, lit: Span },
}

/// The annotated item.
struct Target {
    ident: Ident,
    vis: syn::Visibility,
    kind: Kind,
    layout: Layout,
    /// A Rust kernel's parameter names: the names an attribute argument may give a value to.
    /// `None` for CUDA source (read from the source when the attribute is expanded).
    params: Option<Vec<String>>,
}

/// The kernel as the analyzer reads it: without attributes and ABI, and without what
/// cuda_std's `#[kernel]` inserts when it expands first (`#[kernel]` above
/// `#[sector_estimate]`): a nested `fn assert_kernel_parameter_is_copy<T: Copy>() {}` and its
/// calls. Those move no memory, and their spans point at the `#[kernel]` line, not the body.
fn kernel_only(f: &syn::ItemFn) -> syn::ItemFn {
    let mut f = f.clone();
    f.attrs.clear();
    f.sig.abi = None;
    let inserted = |s: &syn::Stmt| -> bool {
        let named = |p: &syn::Path| p.segments.last().is_some_and(|s| s.ident == "assert_kernel_parameter_is_copy");
        match s {
            syn::Stmt::Item(syn::Item::Fn(g)) => g.sig.ident == "assert_kernel_parameter_is_copy",
            syn::Stmt::Expr(syn::Expr::Call(c), _) => matches!(&*c.func, syn::Expr::Path(p) if named(&p.path)),
            _ => false,
        }
    };
    f.block.stmts.retain(|s| !inserted(s));
    f
}

/// Parameter names of a Rust kernel (`NAME_len` gives a slice's length its value too).
fn rust_params(f: &syn::ItemFn) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for input in &f.sig.inputs {
        let syn::FnArg::Typed(t) = input else { continue };
        let syn::Pat::Ident(id) = &*t.pat else { return None };
        out.push(id.ident.to_string());
    }
    Some(out)
}

impl Target {
    fn of(item: &syn::Item, tokens: &TokenStream) -> syn::Result<Target> {
        let cuda = |ident: &Ident, vis: &syn::Visibility, expr: &syn::Expr| -> syn::Result<Target> {
            let mut e = expr;
            while let syn::Expr::Group(g) = e {
                e = &g.expr;
            }
            match e {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Ok(Target {
                    ident: ident.clone(),
                    vis: vis.clone(),
                    kind: Kind::Cuda { source: s.value(), lit: s.span() },
                    layout: Layout::default(),
                    params: None,
                }),
                other => Err(syn::Error::new(
                    other.span(),
                    "#[sector_estimate] on a constant needs CUDA source as a string literal (`r#\"...\"#`)",
                )),
            }
        };
        match item {
            syn::Item::Fn(f) => {
                let _ = tokens;
                Ok(Target {
                    ident: f.sig.ident.clone(),
                    vis: f.vis.clone(),
                    kind: Kind::Rust,
                    layout: {
                        let k = kernel_only(f);
                        Layout::of(quote!(#k))
                    },
                    params: rust_params(f),
                })
            }
            syn::Item::Const(c) => cuda(&c.ident, &c.vis, &c.expr),
            syn::Item::Static(s) => cuda(&s.ident, &s.vis, &s.expr),
            other => Err(syn::Error::new(
                other.span(),
                "#[sector_estimate] goes on a kernel `fn` or on a `const` holding CUDA source",
            )),
        }
    }

    /// A failed analysis as a compile error at the construct it names.
    fn diagnostic(&self, d: &crate::Diagnostic, args: &Args) -> syn::Error {
        let mut msg = d.message.clone();
        for n in &d.notes {
            let n = match n.strip_prefix("pass --arg ") {
                Some(rest) => format!("add `{}` to #[sector_estimate(...)]", rest.replacen('=', " = ", 1)),
                None => n.clone(),
            };
            msg.push_str("\n  = note: ");
            msg.push_str(&n);
        }
        // Usage and launch errors name an attribute argument.
        if let Some((span, rest)) = args.blame(&msg) {
            return syn::Error::new(span, rest);
        }
        match (d.span, &self.kind) {
            (Some(s), Kind::Rust) if s.file.0 == 0 => {
                match self.layout.tokens_in(s.line as usize, s.column as usize, s.len as usize) {
                    Some((a, b)) => spanned(a, b, &msg),
                    None => syn::Error::new(self.ident.span(), msg),
                }
            }
            (Some(s), Kind::Cuda { lit, .. }) if s.file.0 == 0 => {
                syn::Error::new(*lit, format!("line {} of the CUDA source in `{}`: {msg}", s.line, self.ident))
            }
            (_, Kind::Cuda { lit, .. }) => syn::Error::new(*lit, msg),
            _ => syn::Error::new(self.ident.span(), msg),
        }
    }

    /// The error for one sheet row (an access), spanned at the access.
    fn row_error(&self, r: &crate::sheet::Row, msg: &str) -> syn::Error {
        match &self.kind {
            Kind::Rust => match self.layout.access(r.line as usize, r.column as usize, &r.text) {
                Some((a, b)) => spanned(a, b, msg),
                None => syn::Error::new(self.ident.span(), format!("line {}: {msg}", r.line)),
            },
            Kind::Cuda { lit, .. } => {
                syn::Error::new(*lit, format!("line {} of the CUDA source in `{}`: {msg}", r.line, self.ident))
            }
        }
    }
}

/// An error covering the tokens from `a` to `b`.
fn spanned(a: Span, b: Span, msg: &str) -> syn::Error {
    let ts: TokenStream =
        [TokenTree::Ident(Ident::new("first", a)), TokenTree::Ident(Ident::new("last", b))].into_iter().collect();
    syn::Error::new_spanned(ts, msg)
}

fn check_budgets(sheet: &Sheet, args: &Args, target: &Target, errors: &mut Vec<syn::Error>) {
    use crate::ir::Space;
    use crate::sheet::budget::{launch_violation, row_violations, Budgets};
    let global = Budgets {
        max_sectors_per_request: args.max_sectors_per_request.map(|(max, _)| max),
        min_efficiency: args.min_efficiency.map(|(min, _)| min),
        ..Budgets::default()
    };
    let shared = Budgets {
        max_wavefronts_per_request: args.max_wavefronts_per_request.map(|(max, _)| max),
        ..Budgets::default()
    };
    // The global accesses first, then the shared ones.
    for (space, budgets) in [(Space::Global, global), (Space::Shared, shared)] {
        for r in sheet.instructions.iter().filter(|r| r.space == space) {
            for v in row_violations(r, &budgets) {
                errors.push(target.row_error(r, &v.message));
            }
        }
    }
    if let Some((max, span)) = args.max_sectors {
        if let Some(v) = launch_violation(sheet, max) {
            errors.push(syn::Error::new(span, v.message));
        }
    }
}

/// One kernel parameter value.
struct ParamArg {
    name: String,
    value: String,
    span: Span,
}

/// The attribute's arguments.
struct Args {
    kernel: Option<String>,
    grid: (String, Span),
    block: (String, Span),
    params: Vec<ParamArg>,
    max_sectors_per_request: Option<(f64, Span)>,
    min_efficiency: Option<(f64, Span)>,
    max_sectors: Option<(u64, Span)>,
    max_wavefronts_per_request: Option<(f64, Span)>,
    max_work: Option<u64>,
    gpu: Option<String>,
    shared_bytes: u64,
    engine: crate::analyze::EngineKind,
    fills: Vec<(String, crate::Fill)>,
    offsets: Vec<(String, i64)>,
    defines: Vec<(String, String)>,
    include_dirs: Vec<std::path::PathBuf>,
}

/// The attribute's own keys; every other `name = value` gives a kernel parameter its value.
pub const OPTIONS: &[&str] = &[
    "grid",
    "block",
    "kernel",
    "gpu",
    "fill",
    "offset",
    "define",
    "include",
    "shared_bytes",
    "engine",
    "max_work",
    "max_sectors_per_request",
    "min_efficiency",
    "max_sectors",
    "max_wavefronts_per_request",
];

/// The keys that may be given several times, or as a tuple of strings: `fill`, `offset`,
/// `define`, `include` (as the command line's repeated `--fill`, `--offset`, `-D`, `-I`).
fn strings(e: &syn::Expr) -> syn::Result<Vec<String>> {
    match e {
        syn::Expr::Tuple(t) => t.elems.iter().map(value_text).collect(),
        syn::Expr::Array(a) => a.elems.iter().map(value_text).collect(),
        syn::Expr::Paren(p) => strings(&p.expr),
        other => Ok(vec![value_text(other)?]),
    }
}

impl Args {
    fn parse(attr: TokenStream, target: &Target, errors: &mut Vec<syn::Error>) -> Option<Args> {
        let parser = Punctuated::<syn::MetaNameValue, syn::Token![,]>::parse_terminated;
        let list = match syn::parse::Parser::parse2(parser, attr) {
            Ok(l) => l,
            Err(e) => {
                errors.push(syn::Error::new(
                    e.span(),
                    format!("{e}: expected `name = value, ...` (grid = 4096, block = (32, 8), n = 1048576)"),
                ));
                return None;
            }
        };
        let mut kernel = None;
        let mut grid = None;
        let mut block = None;
        let mut params: Vec<ParamArg> = Vec::new();
        let mut spr = None;
        let mut eff = None;
        let mut max_sectors = None;
        let mut max_work = None;
        let mut wf = None;
        let mut gpu = None;
        let mut shared_bytes = 0;
        let mut engine = crate::analyze::EngineKind::default();
        let (mut fills, mut offsets, mut defines, mut include_dirs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut seen: Vec<String> = Vec::new();
        for nv in &list {
            let Some(name) = nv.path.get_ident().map(|i| i.to_string()) else {
                errors.push(syn::Error::new(nv.path.span(), "expected a plain name"));
                continue;
            };
            let repeatable = matches!(name.as_str(), "fill" | "offset" | "define" | "include");
            if seen.contains(&name) && !repeatable {
                errors.push(syn::Error::new(nv.path.span(), format!("`{name}` is given twice")));
                continue;
            }
            seen.push(name.clone());
            if repeatable {
                let items = match strings(&nv.value) {
                    Ok(v) => v,
                    Err(e) => {
                        errors.push(e);
                        continue;
                    }
                };
                let vspan = nv.value.span();
                for item in items {
                    let pair = item.split_once('=').map(|(k, v)| (k.trim().to_string(), v.trim().to_string()));
                    match (name.as_str(), pair) {
                        ("define", Some(p)) => defines.push(p),
                        ("define", None) => defines.push((item.trim().to_string(), "1".to_string())),
                        ("include", _) => {
                            // Relative to the crate being compiled, as `include_str!` users expect.
                            let base = std::env::var_os("CARGO_MANIFEST_DIR").map(std::path::PathBuf::from);
                            include_dirs.push(base.unwrap_or_default().join(item.trim()));
                        }
                        ("fill", Some((k, v))) => match crate::Fill::parse(&v) {
                            Ok(f) => fills.push((k, f)),
                            Err(d) => errors.push(syn::Error::new(vspan, format!("fill `{item}`: {}", d.message))),
                        },
                        ("offset", Some((k, v))) => match v.parse::<i64>() {
                            Ok(b) if (0..1 << 20).contains(&b) => offsets.push((k, b)),
                            _ => errors.push(syn::Error::new(
                                vspan,
                                format!("offset `{item}`: expected NAME=BYTES, a byte count from 0 to 1048575"),
                            )),
                        },
                        (_, _) => errors.push(syn::Error::new(
                            vspan,
                            format!("`{name}` takes \"NAME=VALUE\" strings, e.g. {name} = (\"a=...\", \"b=...\")"),
                        )),
                    }
                }
                continue;
            }
            let value = match value_text(&nv.value) {
                Ok(v) => v,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let vspan = nv.value.span();
            let number = |errors: &mut Vec<syn::Error>| -> Option<f64> {
                match value.parse::<f64>() {
                    Ok(v) if v >= 0.0 => Some(v),
                    _ => {
                        errors.push(syn::Error::new(vspan, format!("`{name}` takes a non-negative number")));
                        None
                    }
                }
            };
            match name.as_str() {
                "kernel" => match (&target.kind, &nv.value) {
                    (Kind::Cuda { .. }, syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. })) => {
                        kernel = Some(s.value())
                    }
                    (Kind::Cuda { .. }, _) => {
                        errors.push(syn::Error::new(vspan, "`kernel` takes the kernel's name as a string"))
                    }
                    (Kind::Rust, _) => errors.push(syn::Error::new(
                        nv.path.span(),
                        "`kernel` picks a kernel inside CUDA source; on a Rust `fn` the kernel is the function itself",
                    )),
                },
                "grid" => grid = Some((value, vspan)),
                "block" => block = Some((value, vspan)),
                "max_sectors_per_request" => spr = number(errors).map(|v| (v, vspan)),
                "min_efficiency" => match number(errors) {
                    Some(v) if v <= 1.0 => eff = Some((v, vspan)),
                    Some(_) => errors.push(syn::Error::new(vspan, "`min_efficiency` is a fraction between 0 and 1")),
                    None => {}
                },
                "max_sectors" => match value.parse::<u64>() {
                    Ok(v) => max_sectors = Some((v, vspan)),
                    Err(_) => errors.push(syn::Error::new(vspan, "`max_sectors` takes an integer")),
                },
                "max_work" => match value.parse::<u64>() {
                    Ok(v) => max_work = Some(v),
                    Err(_) => errors.push(syn::Error::new(vspan, "`max_work` takes an integer")),
                },
                "max_wavefronts_per_request" => wf = number(errors).map(|v| (v, vspan)),
                "shared_bytes" => match value.parse::<u64>() {
                    Ok(v) => shared_bytes = v,
                    Err(_) => errors.push(syn::Error::new(vspan, "`shared_bytes` takes an integer (bytes per block)")),
                },
                "gpu" => match crate::cache::profile::lookup(&value) {
                    Ok(_) => gpu = Some(value),
                    Err(m) => errors.push(syn::Error::new(vspan, m)),
                },
                "engine" => match value.as_str() {
                    "symbolic" => engine = crate::analyze::EngineKind::Symbolic,
                    "enumerate" => engine = crate::analyze::EngineKind::Enumerate,
                    _ => errors.push(syn::Error::new(vspan, "`engine` is \"symbolic\" or \"enumerate\"")),
                },
                _ => params.push(ParamArg { name, value, span: nv.path.span() }),
            }
        }
        let call = Span::call_site();
        if grid.is_none() {
            errors.push(syn::Error::new(
                call,
                "#[sector_estimate] needs the launch: add `grid = ...` (an integer or a tuple)",
            ));
        }
        if block.is_none() {
            errors.push(syn::Error::new(
                call,
                "#[sector_estimate] needs the launch: add `block = ...` (an integer or a tuple)",
            ));
        }
        Some(Args {
            kernel,
            grid: grid?,
            block: block?,
            params,
            max_sectors_per_request: spr,
            min_efficiency: eff,
            max_sectors,
            max_wavefronts_per_request: wf,
            max_work,
            gpu,
            shared_bytes,
            engine,
            fills,
            offsets,
            defines,
            include_dirs,
        })
    }

    /// The attribute argument a usage or launch message is about, and the message without
    /// its command-line prefix.
    fn blame(&self, msg: &str) -> Option<(Span, String)> {
        for p in &self.params {
            for prefix in [format!("--arg {}={}: ", p.name, p.value), format!("--arg {}: ", p.name)] {
                if let Some(rest) = msg.strip_prefix(&prefix) {
                    if rest.contains(&format!("has no parameter named `{}`", p.name)) {
                        return Some((
                            p.span,
                            format!(
                                "unknown key `{}`: not an option of #[sector_estimate] and {rest}\n  = note: options: {}",
                                p.name,
                                OPTIONS.join(", ")
                            ),
                        ));
                    }
                    return Some((p.span, rest.to_string()));
                }
            }
        }
        for (flag, (text, span)) in [("--grid", &self.grid), ("--block", &self.block)] {
            if let Some(rest) = msg.strip_prefix(&format!("{flag} {text}: ")) {
                return Some((*span, rest.to_string()));
            }
        }
        if msg.starts_with("block ") {
            return Some((self.block.1, msg.to_string()));
        }
        if msg.starts_with("grid ") || msg.starts_with("launch ") {
            return Some((self.grid.1, msg.to_string()));
        }
        None
    }
}

/// An argument's value as the command line would take it: `4096`, `(32, 8)` -> `32,8`,
/// `"n / 256"` -> `n / 256`, `-1`, `0.5`.
fn value_text(e: &syn::Expr) -> syn::Result<String> {
    match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => Ok(i.base10_digits().to_string()),
            syn::Lit::Float(f) => Ok(f.base10_digits().to_string()),
            syn::Lit::Str(s) => Ok(s.value()),
            other => Err(syn::Error::new(other.span(), "expected a number, a string or a tuple of numbers")),
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => Ok(format!("-{}", value_text(&u.expr)?)),
        syn::Expr::Tuple(t) if !t.elems.is_empty() && t.elems.len() <= 3 => {
            Ok(t.elems.iter().map(value_text).collect::<syn::Result<Vec<_>>>()?.join(","))
        }
        syn::Expr::Paren(p) => value_text(&p.expr),
        syn::Expr::Group(g) => value_text(&g.expr),
        other => Err(syn::Error::new(other.span(), "expected a number, a string or a tuple of up to three numbers")),
    }
}

/// One token of the laid-out text.
#[derive(Clone, Debug)]
struct Placed {
    line: usize,
    /// 0-based column in characters.
    col: usize,
    text: String,
    span: Span,
}

/// An item's tokens written out as text, each at its own line and column when the compiler
/// reports them (so the text's positions are the user's file's), else one after another.
#[derive(Clone, Debug, Default)]
struct Layout {
    text: String,
    tokens: Vec<Placed>,
}

impl Layout {
    fn of(ts: TokenStream) -> Layout {
        let mut leaves = Vec::new();
        flatten(ts, &mut leaves);
        let mut out = Layout::default();
        let (mut line, mut col) = (1usize, 0usize);
        let mut glued = false;
        let mut prev: Option<String> = None;
        for (text, span, joint) in leaves {
            let at = span.start();
            if at.line > line {
                out.text.push_str(&"\n".repeat(at.line - line));
                line = at.line;
                col = 0;
            }
            if at.line == line && at.line > 0 && at.column >= col {
                out.text.push_str(&" ".repeat(at.column - col));
                col = at.column;
            } else if col > 0 && !glued && spaced(prev.as_deref(), &text) {
                out.text.push(' ');
                col += 1;
            }
            out.tokens.push(Placed { line, col, text: text.clone(), span });
            out.text.push_str(&text);
            match text.rfind('\n') {
                Some(nl) => {
                    line += text.matches('\n').count();
                    col = text[nl + 1..].chars().count();
                }
                None => col += text.chars().count(),
            }
            glued = joint;
            prev = Some(text.clone());
            if at.line == 0 && matches!(text.as_str(), ";" | "{" | "}") {
                out.text.push('\n');
                line += 1;
                col = 0;
            }
        }
        out.text.push('\n');
        out
    }

    /// First and last token spans inside `len` bytes from 1-based `column` of `line`.
    fn tokens_in(&self, line: usize, column: usize, len: usize) -> Option<(Span, Span)> {
        let from = column.checked_sub(1)?;
        let inside: Vec<&Placed> =
            self.tokens.iter().filter(|t| t.line == line && t.col >= from && t.col < from + len.max(1)).collect();
        Some((inside.first()?.span, inside.last()?.span))
    }

    /// The tokens of the access written `text` that starts at `line:column`.
    fn access(&self, line: usize, column: usize, text: &str) -> Option<(Span, Span)> {
        let want: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        let start = self.tokens.iter().position(|t| t.line == line && t.col + 1 == column)?;
        let mut got = String::new();
        for t in &self.tokens[start..] {
            got.extend(t.text.chars().filter(|c| !c.is_whitespace()));
            if got == want {
                return Some((self.tokens[start].span, t.span));
            }
            if !want.starts_with(&got) {
                break;
            }
        }
        Some((self.tokens[start].span, self.tokens[start].span))
    }
}

/// Whether two tokens laid out without positions need a space between them (readability only:
/// the text stays valid Rust either way, since joint punctuation is never split).
fn spaced(prev: Option<&str>, cur: &str) -> bool {
    let Some(prev) = prev else { return false };
    let word = |t: &str| t.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_');
    !(matches!(prev, "(" | "[" | ".")
        || matches!(cur, ")" | "]" | "," | ";" | "." | ":")
        || (matches!(cur, "(" | "[") && (word(prev) || matches!(prev, ")" | "]"))))
}

/// Leaf tokens (group delimiters included) with their spans and whether they glue to the next.
fn flatten(ts: TokenStream, out: &mut Vec<(String, Span, bool)>) {
    for tt in ts {
        match tt {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("", ""),
                };
                if !open.is_empty() {
                    out.push((open.to_string(), g.span_open(), false));
                }
                flatten(g.stream(), out);
                if !close.is_empty() {
                    out.push((close.to_string(), g.span_close(), false));
                }
            }
            TokenTree::Punct(p) => out.push((p.as_char().to_string(), p.span(), p.spacing() == Spacing::Joint)),
            TokenTree::Ident(i) => out.push((i.to_string(), i.span(), false)),
            TokenTree::Literal(l) => out.push((l.to_string(), l.span(), false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn snake_case_names() {
        assert_eq!(snake("vec_add"), "vec_add");
        assert_eq!(snake("VEC_ADD_CU"), "vec_add_cu");
        assert_eq!(snake("vecAdd2D"), "vec_add2_d");
    }

    #[test]
    fn layout_keeps_positions() {
        let src = "\n\n  pub fn f(a: &[f32]) {\n      let x = a[1];\n  }\n";
        let ts = TokenStream::from_str(src).unwrap();
        let l = Layout::of(ts);
        let line = l.text.lines().nth(3).unwrap();
        assert_eq!(line, "      let x = a[1];");
        let (a, b) = l.access(4, 15, "a[1]").unwrap();
        assert_eq!((a.start().line, a.start().column, b.start().column), (4, 14, 17));
    }
}
