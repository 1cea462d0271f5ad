//! Snapshots of `#[sector_estimate]` expansions (`sector_analyzer::attribute::expand`, the logic
//! behind the `estimator-macros` shell): the generated module's constants and sheet, and every
//! compile error with the `line:column` range it is spanned to. Inputs are parsed from text, so
//! the spans are real positions in that text.

use proc_macro2::TokenStream;
use std::fmt::Write;
use std::str::FromStr;

/// Expands `#[sector_estimate(attr)] item` and describes the result for a person.
fn expand(attr: &str, item: &str) -> String {
    let attr = TokenStream::from_str(attr).expect("attribute tokens");
    let item_ts = TokenStream::from_str(item).expect("item tokens");
    let out = sector_analyzer::attribute::expand(attr, item_ts.clone());
    let file: syn::File = syn::parse2(out).expect("the expansion parses as items");
    let mut s = String::new();
    let pos = |sp: proc_macro2::Span| format!("{}:{}", sp.start().line, sp.start().column + 1);
    let end = |sp: proc_macro2::Span| format!("{}:{}", sp.end().line, sp.end().column + 1);
    for it in &file.items {
        match it {
            syn::Item::Macro(m) => {
                let msg: syn::LitStr = syn::parse2(m.mac.tokens.clone()).expect("compile_error! message");
                let first = m.mac.path.segments.first().expect("path").ident.span();
                let last = m.mac.delimiter.span().close();
                let _ = writeln!(s, "error at {}..{}: {}", pos(first), end(last), msg.value());
            }
            syn::Item::Mod(m) => {
                let vis = match m.vis {
                    syn::Visibility::Inherited => "",
                    _ => "pub ",
                };
                let _ = writeln!(s, "{vis}mod {}", m.ident);
                for inner in m.content.as_ref().map(|c| c.1.as_slice()).unwrap_or_default() {
                    let syn::Item::Const(c) = inner else { continue };
                    let value = match &*c.expr {
                        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(l), .. }) => {
                            if c.ident == "JSON" {
                                format!("<{} bytes of JSON>", l.value().len())
                            } else {
                                format!("\n{}", l.value())
                            }
                        }
                        e => quote::quote!(#e).to_string(),
                    };
                    let _ = writeln!(s, "  {} = {}", c.ident, value.trim_end());
                }
            }
            other => {
                let same = quote::quote!(#other).to_string() == item_ts.to_string();
                let _ = writeln!(s, "item (unchanged: {same})");
            }
        }
    }
    s
}

fn check(name: &str, attr: &str, item: &str) {
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(format!("attribute_{name}"), expand(attr, item));
    });
}

const VEC_ADD_RS: &str = r#"
pub unsafe fn vec_add(a: &[f32], b: &[f32], c: *mut f32, n: usize) {
    let i = thread::index_1d() as usize;
    if i < n {
        *c.add(i) = a[i] + b[i];
    }
}
"#;

const STRIDED_CU: &str = r##"
const STRIDED_CU: &str = r#"
__global__ void strided(const float *a, float *out, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[i * stride];
}
"#;
"##;

#[test]
fn rust_kernel() {
    check("rust_kernel", "grid = 64, block = 256, n = 16384", VEC_ADD_RS);
}

#[test]
fn cuda_constant_2d() {
    let item = r##"pub(crate) const TRANSPOSE: &str = r#"
__global__ void transpose_naive(const float *in, float *out, int rows, int cols)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        out[col * rows + row] = in[row * cols + col];
    }
}
"#;"##;
    check(
        "cuda_constant_2d",
        r#"kernel = "transpose_naive", grid = (2, 8), block = (32, 8), rows = 64, cols = 64"#,
        item,
    );
}

#[test]
fn budgets() {
    // Rust: one access over two budgets; CUDA: the line inside the string; the launch total.
    let rs = "pub unsafe fn strided(a: &[f32], out: &mut [f32], stride: usize) {\n    let i = thread::index_1d() as usize;\n    out[i] = a[i * stride];\n}\n";
    let mut all = expand("grid = 4, block = 64, stride = 4, max_sectors_per_request = 4, min_efficiency = 0.5", rs);
    all.push_str("---\n");
    all.push_str(&expand(
        "kernel = \"strided\", grid = 4, block = 64, stride = 2, max_sectors_per_request = 4, max_sectors = 40",
        STRIDED_CU,
    ));
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("attribute_budgets", all);
    });
}

#[test]
fn errors() {
    let mut all = String::new();
    // A missing value: spanned at the condition that needs it.
    all.push_str(&expand("grid = 64, block = 256", VEC_ADD_RS));
    all.push_str("---\n");
    // An unsupported construct.
    all.push_str(&expand(
        "grid = 1, block = 32",
        "fn k(a: &mut [f32]) {\n    let f = |x: f32| x;\n    a[0] = f(1.0);\n}",
    ));
    all.push_str("---\n");
    // Attribute mistakes, reported together: `kernel` on a fn, no block; then an unknown parameter.
    all.push_str(&expand("grid = 1, kernel = \"k\", m = 3", "fn k(a: &mut [f32]) { a[0] = 1.0; }"));
    all.push_str("---\n");
    all.push_str(&expand("grid = 1, block = 32, nn = 3", "fn k(a: &mut [f32]) { a[0] = 1.0; }"));
    all.push_str("---\n");
    // CUDA: a syntax problem in the string, and a kernel that is not there.
    all.push_str(&expand("kernel = \"nope\", grid = 1, block = 32, stride = 1", STRIDED_CU));
    all.push_str("---\n");
    // Not a function or a string constant; a constant that is not a string literal.
    all.push_str(&expand("grid = 1, block = 32", "struct S;"));
    all.push_str(&expand("grid = 1, block = 32", "const N: usize = 3;"));
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!("attribute_errors", all);
    });
}
