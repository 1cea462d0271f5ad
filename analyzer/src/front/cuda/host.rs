//! What the compilers need from a `.cu` file's syntax (tree-sitter-cuda): a kernel's parameter
//! list (names, which are pointers, the pointee type; `sector-validate` builds its launches from
//! it) and a copy of the file with its host code blanked, for NVRTC (`sector-validate`) and for
//! `--via sass` when host code written for another toolkit or library does not compile.

use tree_sitter::{Node, Parser, Tree};

fn parse(text: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_cuda::LANGUAGE.into()).ok()?;
    parser.parse(text, None)
}

/// One kernel parameter as declared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSig {
    pub name: String,
    /// Declared as a pointer (`T *p`, `T p[]`).
    pub pointer: bool,
    /// The type as written without qualifiers: `float`, `unsigned int`, `float4`, `T`.
    pub base_type: String,
}

fn text<'a>(node: Node, src: &'a str) -> &'a str {
    &src[node.byte_range()]
}

/// Children worth descending into for top-level items: preprocessor conditionals, namespaces,
/// `extern "C" { }`.
fn container_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut out = Vec::new();
    let mut cur = node.walk();
    for child in node.children(&mut cur) {
        out.push(child);
    }
    out
}

fn is_container(kind: &str) -> bool {
    matches!(
        kind,
        "translation_unit"
            | "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "preproc_elifdef"
            | "namespace_definition"
            | "declaration_list"
            | "linkage_specification"
    )
}

/// The function definition inside a node (itself, or the one a `template` wraps).
fn function_of(node: Node) -> Option<Node> {
    match node.kind() {
        "function_definition" => Some(node),
        "template_declaration" => {
            let mut cur = node.walk();
            let found = node.children(&mut cur).find_map(function_of);
            found
        }
        _ => None,
    }
}

/// The text of a function definition before its body: specifiers, return type, declarator.
fn header<'a>(func: Node, src: &'a str) -> &'a str {
    let end = func.child_by_field_name("body").map(|b| b.start_byte()).unwrap_or(func.end_byte());
    &src[func.start_byte()..end]
}

fn has_word(hay: &str, word: &str) -> bool {
    hay.match_indices(word).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + word.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

fn function_declarator(func: Node) -> Option<Node> {
    let mut d = func.child_by_field_name("declarator")?;
    loop {
        if d.kind() == "function_declarator" {
            return Some(d);
        }
        d = d.child_by_field_name("declarator")?;
    }
}

fn function_name(func: Node, src: &str) -> Option<String> {
    let decl = function_declarator(func)?;
    let name = decl.child_by_field_name("declarator")?;
    let t = text(name, src);
    let t = t.split('<').next().unwrap_or(t);
    Some(t.rsplit("::").next().unwrap_or(t).trim().to_string())
}

fn param_sig(node: Node, src: &str) -> ParamSig {
    let base_type = node
        .child_by_field_name("type")
        .map(|t| text(t, src).split_whitespace().collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    let mut pointer = false;
    let mut name = String::new();
    let mut d = node.child_by_field_name("declarator");
    while let Some(n) = d {
        match n.kind() {
            "pointer_declarator" | "abstract_pointer_declarator" | "array_declarator" => {
                pointer = true;
            }
            "identifier" => {
                name = text(n, src).to_string();
                break;
            }
            _ => {}
        }
        d = n.child_by_field_name("declarator");
    }
    ParamSig { name, pointer, base_type }
}

/// The parameter lists of every `__global__` definition named `kernel` (several when
/// preprocessor branches hold variants), in source order.
pub fn kernel_signatures(src: &str, kernel: &str) -> Vec<Vec<ParamSig>> {
    let Some(tree) = parse(src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if let Some(func) = function_of(node) {
            if has_word(header(func, src), "__global__") && function_name(func, src).as_deref() == Some(kernel) {
                if let Some(params) = function_declarator(func).and_then(|d| d.child_by_field_name("parameters")) {
                    let mut cur = params.walk();
                    let list: Vec<ParamSig> = params
                        .named_children(&mut cur)
                        .filter(|p| p.kind().ends_with("parameter_declaration"))
                        .map(|p| param_sig(p, src))
                        .filter(|p| !(p.base_type == "void" && !p.pointer && p.name.is_empty()))
                        .collect();
                    out.push((func.start_byte(), list));
                }
            }
            continue;
        }
        if is_container(node.kind()) {
            stack.extend(container_children(node));
        }
    }
    out.sort_by_key(|(pos, _)| *pos);
    out.into_iter().map(|(_, l)| l).collect()
}

/// Angle-bracket headers NVRTC can use (its own built-ins, or CUDA's include folder).
fn device_header(path: &str) -> bool {
    let p = path.trim_matches(|c| c == '<' || c == '>' || c == '"');
    [
        "cuda_fp16",
        "cuda_bf16",
        "cuda_fp8",
        "cooperative_groups",
        "cuda/",
        "mma.h",
        "cuda_pipeline",
        "cuda_awbarrier",
        "cub/",
        "crt/",
        "sm_",
        "device_",
        "vector_types",
        "vector_functions",
        "cuda_texture_types",
        "surface_",
        "texture_",
    ]
    .iter()
    .any(|pre| p.starts_with(pre))
}

/// A file-scope declaration device code cannot use: a host function's prototype (it may name
/// a library's types, `cublasHandle_t`), or a host variable that is not a constant (device code
/// cannot read host variables; it can read `const` and `constexpr` ones). Type definitions and
/// anything marked for the device stay.
fn host_only_declaration(node: Node, t: &str) -> bool {
    let device =
        ["__device__", "__global__", "__constant__", "__shared__", "__managed__"].iter().any(|w| has_word(t, w));
    let defines_type = node.child_by_field_name("type").is_some_and(|ty| {
        matches!(ty.kind(), "struct_specifier" | "class_specifier" | "union_specifier" | "enum_specifier")
            && ty.child_by_field_name("body").is_some()
    });
    if device || defines_type || has_word(t, "typedef") {
        return false;
    }
    let function = function_declarator(node).is_some();
    function || !(has_word(t, "const") || has_word(t, "constexpr"))
}

/// A copy of `src` in which host-only code is blanked (replaced by spaces, newlines kept, so
/// every line keeps its number): function definitions that are neither `__global__` nor
/// `__device__`, `#include <...>` of host headers, top-level declarations or `using`s that
/// name `std::`, host functions' prototypes and host variables that are not constants. Returns the copy and how many regions were blanked.
pub fn strip_host_code(src: &str) -> (String, usize) {
    let Some(tree) = parse(src) else {
        return (src.to_string(), 0);
    };
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    let device_text = device_functions_text(tree.root_node(), src);
    let mut stack = vec![tree.root_node()];
    while let Some(node) = stack.pop() {
        if let Some(class) = host_only_class(node, src, &device_text) {
            ranges.push(class);
            continue;
        }
        if let Some(func) = function_of(node) {
            let h = header(func, src);
            // `struct __align__(8) S { ... };` reads to the grammar as a function named
            // `__align__`: a type definition, which device code needs.
            let type_definition = ["struct", "class", "union"].iter().any(|k| h.trim_start().starts_with(k));
            if !has_word(h, "__global__") && !has_word(h, "__device__") && !type_definition {
                ranges.push(node.byte_range());
            }
            continue;
        }
        match node.kind() {
            "preproc_include" => {
                let path = node.child_by_field_name("path").map(|p| text(p, src)).unwrap_or("");
                if path.starts_with('<') && !device_header(path) {
                    ranges.push(node.byte_range());
                }
            }
            "declaration" | "using_declaration" | "alias_declaration" => {
                let t = text(node, src);
                if t.contains("std::")
                    || (node.kind() == "using_declaration" && has_word(t, "std"))
                    || (node.kind() == "declaration" && host_only_declaration(node, t))
                {
                    ranges.push(node.byte_range());
                }
            }
            k if is_container(k) => stack.extend(container_children(node)),
            _ => {}
        }
    }
    let mut out: Vec<u8> = src.as_bytes().to_vec();
    for r in &ranges {
        for b in &mut out[r.clone()] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
    }
    // Multi-byte characters inside a blanked range became spaces byte by byte: still UTF-8.
    (String::from_utf8(out).unwrap_or_else(|_| src.to_string()), ranges.len())
}

/// The text of every `__global__` and `__device__` function, to tell which types device code
/// names.
fn device_functions_text(root: Node, src: &str) -> String {
    let mut out = String::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if let Some(func) = function_of(node) {
            let h = header(func, src);
            if has_word(h, "__global__") || has_word(h, "__device__") {
                out.push_str(text(node, src));
                out.push('\n');
            }
            continue;
        }
        if is_container(node.kind()) {
            stack.extend(container_children(node));
        }
    }
    out
}

/// A class or structure definition with methods (`class Timer { StopWatchInterface *t; void
/// start(); };`) that device code never names and that has no device member: host code, whose
/// member types may come from a host library this machine lacks.
fn host_only_class(node: Node, src: &str, device_text: &str) -> Option<std::ops::Range<usize>> {
    let spec = match node.kind() {
        "class_specifier" | "struct_specifier" => node,
        "declaration" => {
            let t = node.child_by_field_name("type")?;
            if node.child_by_field_name("declarator").is_some() {
                return None;
            }
            t
        }
        _ => return None,
    };
    if !matches!(spec.kind(), "class_specifier" | "struct_specifier") || spec.child_by_field_name("body").is_none() {
        return None;
    }
    let name = text(spec.child_by_field_name("name")?, src);
    let body = text(node, src);
    if has_word(device_text, name) || has_word(body, "__device__") || has_word(body, "__global__") {
        return None;
    }
    // Only a class with methods (host behaviour); plain data stays, other types may hold it.
    let fields = spec.child_by_field_name("body")?;
    let mut cur = fields.walk();
    let methods = fields.named_children(&mut cur).any(|m| {
        m.kind() == "function_definition"
            || m.kind() == "template_declaration"
            || (matches!(m.kind(), "field_declaration" | "declaration")
                && m.child_by_field_name("declarator").is_some_and(|d| d.kind() == "function_declarator"))
    });
    methods.then(|| node.byte_range())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = r#"#include <cstdio>
#include <cuda_fp16.h>
#include "common.cuh"
#include <vector>
using namespace std;
static std::vector<float> host_data;

__device__ float twice(float v) { return 2.0f * v; }

__global__ void vec_add(const float *__restrict__ a, const float *b, float *c, int n, unsigned int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = twice(a[i]) + b[i];
}

namespace ns {
__global__ void inner(double x[], long long k) {}
}

template <typename T>
static T *to_device(const std::vector<T> &host)
{
    T *dev = nullptr;
    cudaMalloc(&dev, host.size() * sizeof(T));
    return dev;
}

int main()
{
    vec_add<<<1, 32>>>(0, 0, 0, 32, 0);
    printf("é\n");
    return 0;
}
"#;

    #[test]
    fn host_classes_device_code_never_names_are_blanked() {
        let src = "struct Pair { float a, b; };\nstruct Plain { int n; };\nclass Operator {\n    StopWatchInterface *t;\n    void start();\n};\n__global__ void k(Pair *p) { p[0].a = 1; }\n";
        let (out, _) = strip_host_code(src);
        assert!(!out.contains("StopWatchInterface") && !out.contains("Operator"), "{out}");
        assert!(out.contains("struct Pair { float a, b; };") && out.contains("struct Plain"), "{out}");
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn signatures() {
        let s = kernel_signatures(SRC, "vec_add");
        assert_eq!(s.len(), 1);
        let p = &s[0];
        assert_eq!(p.len(), 5);
        assert_eq!(p[0], ParamSig { name: "a".into(), pointer: true, base_type: "float".into() });
        assert_eq!(p[3], ParamSig { name: "n".into(), pointer: false, base_type: "int".into() });
        assert_eq!(p[4].base_type, "unsigned int");
        let inner = kernel_signatures(SRC, "inner");
        assert_eq!(inner[0][0], ParamSig { name: "x".into(), pointer: true, base_type: "double".into() });
        assert_eq!(inner[0][1].base_type, "long long");
        assert!(kernel_signatures(SRC, "twice").is_empty());
    }

    #[test]
    fn keeps_aligned_structures() {
        let src = "struct __align__(8) SumMax {\n    float maxval;\n    float sum;\n};\n__global__ void k(SumMax *a) { a[0].sum = 1.0f; }\nint main() { return 0; }\n";
        let (out, _) = strip_host_code(src);
        assert!(out.contains("struct __align__(8) SumMax"), "{out}");
        assert!(out.contains("float maxval;"), "{out}");
        assert!(!out.contains("main"), "{out}");
    }

    #[test]
    fn strips_guarded_host_code_too() {
        let src = "__global__ void k(float *a) { a[0] = 1.0f; }\n\n#ifndef __CUDACC_RTC__\n#include <cstdio>\n#include <vector>\n\ntemplate <typename T>\nstatic T *to_device(const std::vector<T> &host)\n{\n    T *dev = nullptr;\n    return dev;\n}\n\nint main()\n{\n    k<<<1, 32>>>(nullptr);\n    std::printf(\"x\");\n    return 0;\n}\n#endif\n";
        let (out, n) = strip_host_code(src);
        assert!(!out.contains("main"), "{n}: {out}");
        assert!(!out.contains("to_device"), "{out}");
        assert!(out.contains("#ifndef __CUDACC_RTC__") && out.contains("#endif"));
    }

    #[test]
    fn strips_host_code_keeping_lines() {
        let (out, n) = strip_host_code(SRC);
        assert_eq!(out.lines().count(), SRC.lines().count());
        assert!(n >= 5, "{n}: {out}");
        assert!(!out.contains("main"));
        assert!(!out.contains("cudaMalloc"));
        assert!(!out.contains("<cstdio>"));
        assert!(!out.contains("<vector>"));
        assert!(!out.contains("using namespace"));
        assert!(!out.contains("host_data"));
        assert!(out.contains("#include <cuda_fp16.h>"));
        assert!(out.contains("#include \"common.cuh\""));
        assert!(out.contains("__device__ float twice"));
        assert!(out.contains("__global__ void vec_add"));
        assert!(out.contains("__global__ void inner"));
        // Same line numbers: the kernel stays on its line.
        let line_of = |s: &str, pat: &str| s.lines().position(|l| l.contains(pat));
        assert_eq!(line_of(&out, "void vec_add"), line_of(SRC, "void vec_add"));
    }

    #[test]
    fn strips_host_prototypes_and_host_variables_keeping_what_device_code_reads() {
        let src = r#"void runCublas(cublasHandle_t handle, int M, float *A);
cublasHandle_t handle;
float *d_A = nullptr;
const int TILE = 32;
constexpr float SCALE = 2.0f;
struct Pair { int a, b; };
typedef struct { float x; } Wrapped;
__device__ int counter;
__constant__ float coeffs[16];
extern __device__ float lookup(int);
__global__ void k(float *out) { out[threadIdx.x] = SCALE * TILE * coeffs[0] + lookup(counter); }
"#;
        let (out, _) = strip_host_code(src);
        for gone in ["runCublas", "cublasHandle_t", "d_A"] {
            assert!(!out.contains(gone), "{gone} stayed: {out}");
        }
        for kept in [
            "const int TILE",
            "constexpr float SCALE",
            "struct Pair",
            "Wrapped",
            "__device__ int counter",
            "coeffs[16]",
            "lookup(int)",
            "__global__ void k",
        ] {
            assert!(out.contains(kept), "{kept} went: {out}");
        }
    }
}
