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

/// A constant of the generated module, from `expand`'s description (`  NAME = 123u64`).
fn constant(expansion: &str, name: &str) -> u64 {
    let prefix = format!("  {name} = ");
    let line = expansion.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("{name}: {expansion}"));
    line[prefix.len()..].trim_end_matches("u64").parse().unwrap_or_else(|_| panic!("{line}"))
}

/// What cuda_std's `#[kernel]` makes of `VEC_ADD_RS` when it expands first (`#[kernel]` above
/// `#[sector_estimate]`): attributes, `extern "C"`, and a Copy check inserted at the body's top
/// (crates/cuda_std_macros/src/lib.rs of Rust-CUDA).
const VEC_ADD_AFTER_KERNEL: &str = r#"
#[no_mangle]
#[cfg_attr(target_arch = "nvptx64", nvvm_internal::kernel())]
pub unsafe extern "C" fn vec_add(a: &[f32], b: &[f32], c: *mut f32, n: usize) {
    assert_kernel_parameter_is_copy::<usize>();
    assert_kernel_parameter_is_copy::<*mut f32>();
    assert_kernel_parameter_is_copy::<&[f32]>();
    assert_kernel_parameter_is_copy::<&[f32]>();
    fn assert_kernel_parameter_is_copy<T: Copy>() {}
    let i = thread::index_1d() as usize;
    if i < n {
        *c.add(i) = a[i] + b[i];
    }
}
"#;

#[test]
fn kernel_attribute_in_either_order() {
    // n = 2^20 floats: every warp reads 128 aligned bytes of `a` and of `b` (4 sectors each) and
    // writes 4 sectors of `c`; 32,768 warps.
    let attr = "grid = 4096, block = 256, n = 1048576";
    for item in [VEC_ADD_RS, VEC_ADD_AFTER_KERNEL, &format!("#[kernel]\n{VEC_ADD_RS}")] {
        let e = expand(attr, item);
        assert!(!e.contains("error at"), "{e}");
        assert_eq!(constant(&e, "LOAD_SECTORS"), 2 * 4 * 32_768, "{e}");
        assert_eq!(constant(&e, "STORE_SECTORS"), 4 * 32_768, "{e}");
        // The rows keep the user's lines: the store is on the body's `*c.add(i)` line.
        assert!(e.contains(&format!("{}:9 ", item.lines().position(|l| l.contains("*c.add(i)")).unwrap() + 1)), "{e}");
    }
}

#[test]
fn every_launch_option_of_the_command_line() {
    let base = "grid = 4096, block = 256, n = 1048576";
    // --offset: `a` 4 bytes past a boundary spans 5 sectors per warp instead of 4.
    let e = expand(&format!("{base}, offset = \"a=4\""), VEC_ADD_RS);
    assert_eq!(constant(&e, "LOAD_SECTORS"), (5 + 4) * 32_768, "{e}");
    // Several at once, as a tuple, and the other launch options.
    let e = expand(
        &format!("{base}, offset = (\"a=4\", \"b=4\"), gpu = \"a100\", engine = \"enumerate\", shared_bytes = 0, max_work = 100000000"),
        VEC_ADD_RS,
    );
    assert_eq!(constant(&e, "LOAD_SECTORS"), (5 + 5) * 32_768, "{e}");
    assert!(e.contains("a100 cache model"), "{e}");
    // -D: the stride comes from a define: 32 lanes x 2 x 4 bytes = 256 bytes, 8 sectors.
    let cu = "const S: &str = r#\"\n__global__ void k(const float *a, float *o) {\n  int i = threadIdx.x;\n  o[i] = a[i * STRIDE];\n}\n\"#;";
    let e = expand("kernel = \"k\", grid = 1, block = 32, define = \"STRIDE=2\"", cu);
    assert_eq!(constant(&e, "LOAD_SECTORS"), 8, "{e}");
    // --fill: an identity index makes the gather coalesced: 4 sectors for idx, 4 for a.
    let gather = "pub unsafe fn g(idx: &[u32], a: &[f32], out: &mut [f32]) {\n    let i = thread::index_1d() as usize;\n    out[i] = a[idx[i] as usize];\n}";
    let e = expand("grid = 1, block = 32, fill = \"idx=identity\"", gather);
    assert_eq!(constant(&e, "LOAD_SECTORS"), 8, "{e}");
    // max_wavefronts_per_request: a column of a 32x32 tile hits one bank 32 times.
    let tile = "const T: &str = r#\"\n__global__ void t(float *o) {\n  __shared__ float s[32 * 32];\n  s[threadIdx.x * 32] = 1.0f;\n  __syncthreads();\n  o[threadIdx.x] = s[threadIdx.x];\n}\n\"#;";
    let e = expand("kernel = \"t\", grid = 1, block = 32, max_wavefronts_per_request = 1", tile);
    assert!(e.contains("32.00 shared-memory wavefronts per request"), "{e}");
}

#[test]
fn unknown_keys_are_named_with_the_options() {
    // `gpus` is neither an option nor a parameter of the Rust kernel.
    let e = expand("grid = 1, block = 32, n = 32, gpus = \"a100\"", VEC_ADD_RS);
    assert!(e.contains("unknown key `gpus`"), "{e}");
    assert!(e.contains("options: grid, block, kernel, gpu, fill, offset"), "{e}");
    assert!(e.contains("parameters: a, b, c, n"), "{e}");
    // In CUDA source the analyzer knows the parameters.
    let e = expand("kernel = \"strided\", grid = 1, block = 32, stride = 1, gpus = \"a100\"", STRIDED_CU);
    assert!(e.contains("unknown key `gpus`"), "{e}");
    assert!(e.contains("options: grid, block"), "{e}");
    assert!(e.contains("parameters: a, out, stride"), "{e}");
    // A bad option value names the option.
    let e = expand("grid = 1, block = 32, n = 32, gpu = \"b300\"", VEC_ADD_RS);
    assert!(e.contains("b300"), "{e}");
}
