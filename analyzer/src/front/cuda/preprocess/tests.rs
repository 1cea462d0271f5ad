use super::*;

/// Serves files from memory.
struct Mem(HashMap<PathBuf, String>);

impl FileLoader for Mem {
    fn load(&self, path: &Path) -> Option<String> {
        self.0.get(path).cloned()
    }
}

const ROOT: &str = "/src/main.cu";

fn run_with(root: &str, extra: &[(&str, &str)], opts: &PreprocessOptions) -> Result<(Preprocessed, SourceFiles)> {
    let mut files = SourceFiles::default();
    let id = files.add(ROOT, root);
    let mem = Mem(extra.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect());
    let pp = preprocess(&mut files, id, opts, &mem)?;
    Ok((pp, files))
}

fn run(root: &str, extra: &[(&str, &str)]) -> Result<(Preprocessed, SourceFiles)> {
    run_with(root, extra, &PreprocessOptions::default())
}

fn pp(src: &str) -> String {
    run(src, &[]).unwrap().0.text
}

fn err(src: &str) -> Diagnostic {
    run(src, &[]).expect_err("should fail")
}

/// Whitespace-insensitive form of some text.
fn words(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// (row, byte column) of the first occurrence of `needle` in `text`.
fn find_pos(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` not in {text:?}"));
    let row = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map_or(0, |k| k + 1);
    (row, col)
}

fn span(file: u32, line: u32, column: u32, len: u32) -> Span {
    Span { file: FileId(file), line, column, len }
}

#[test]
fn plain_text_is_unchanged() {
    let src = "int a;\n  float b = 1.5e+3f; // c\n/* x\n y */ char c = 'q';\n";
    assert_eq!(pp(src), src);
}

#[test]
fn object_macros_define_and_undef() {
    let out = pp("#define N 32\n#define M (N * 2)\nint a[M];\n#undef N\nint b[N];\n");
    assert_eq!(out.lines().collect::<Vec<_>>(), ["", "", "int a[(32 * 2)];", "", "int b[N];"]);
}

#[test]
fn function_macros_with_nested_parens() {
    let out = pp("#define MAX(a, b) ((a) > (b) ? (a) : (b))\nint x = MAX(f(1, 2), (3, 4));\n");
    assert_eq!(words(&out), "int x = ((f(1, 2)) > ((3, 4)) ? (f(1, 2)) : ((3, 4)));");
}

#[test]
fn multi_line_invocation_keeps_following_text_in_place() {
    let src = "#define ADD(a, b) ((a) + (b))\nint x = ADD(1,\n            2); int y;\nint z;\n";
    let (p, _) = run(src, &[]).unwrap();
    let rows: Vec<&str> = p.text.split('\n').collect();
    assert_eq!(rows[0], "");
    assert_eq!(rows[1], "int x = ((1) + (2))");
    // `; int y;` keeps row 2 and its column (14 in the source).
    assert_eq!(rows[2], "              ; int y;");
    assert_eq!(rows[3], "int z;");
    assert_eq!(p.locate(2, 16, 3), span(0, 3, 17, 3));
    assert_eq!(p.locate(3, 4, 1), span(0, 4, 5, 1));
    // The expansion maps to the macro name.
    assert_eq!(p.locate(1, 10, 1), span(0, 2, 9, 3));
    // The text before the invocation is untouched.
    assert_eq!(p.locate(1, 4, 1), span(0, 2, 5, 1));
}

#[test]
fn function_macro_name_without_parens_is_left_alone() {
    assert_eq!(pp("#define F(x) x\nint F;\nF\n+ 1;\n"), "\nint F;\nF\n+ 1;\n");
    // ... but the `(` may come on a later line.
    assert_eq!(words(&pp("#define F(x) [x]\nF\n(1)\n")), "[1]");
}

#[test]
fn stringify_paste_and_variadic() {
    let out = pp(concat!(
        "#define S(x) #x\n",
        "#define CAT(a, b) a ## b\n",
        "#define V(fmt, ...) f(fmt, ## __VA_ARGS__)\n",
        "#define W(...) g(__VA_ARGS__)\n",
        "#define xy 7\n",
        "S(a  \"b\\n\"  'c')\n",
        "CAT(x, y) CAT(1, 2) CAT(, z) CAT(,)\n",
        "V(1) V(1, 2, 3) W() W(a, (b, c))\n",
    ));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[5], r#""a \"b\\n\" 'c'""#);
    assert_eq!(words(lines[6]), "7 12 z");
    assert_eq!(words(lines[7]), "f(1) f(1,2, 3) g() g(a, (b, c))");
}

#[test]
fn macro_args_are_expanded_before_substitution() {
    let out = pp("#define N 4\n#define SQ(x) ((x) * (x))\n#define S(x) #x\n#define XS(x) S(x)\nSQ(SQ(N)) S(N) XS(N)\n");
    assert_eq!(words(out.lines().nth(4).unwrap()), "((((4) * (4))) * (((4) * (4)))) \"N\" \"4\"");
}

#[test]
fn self_referential_macros_terminate() {
    let out = pp("#define foo foo + 1\n#define a b\n#define b a\n#define f(x) f(x) + x\nfoo; a; b; f(f(2));\n");
    assert_eq!(words(out.lines().nth(4).unwrap()), "foo + 1; a; b; f(f(2) + 2) + f(2) + 2;");
}

#[test]
fn tokens_are_not_glued_by_expansion() {
    let out = pp("#define M -1\n#define E\nint x = -M; int E y;\n");
    assert_eq!(words(out.lines().nth(2).unwrap()), "int x = - -1; int y;");
}

#[test]
fn no_expansion_in_comments_strings_and_chars() {
    let src = "#define X 1\n// #define Y 2\n/* X\n#if 0 */ int a = X; const char *s = \"X\"; char c = 'X';\n#ifdef Y\nbad\n#endif\n";
    let out = pp(src);
    assert!(out.contains("// #define Y 2\n/* X\n#if 0 */ int a = 1;"), "{out}");
    assert!(out.contains("\"X\"") && out.contains("'X'") && !out.contains("bad"));
}

#[test]
fn conditionals_with_defined_and_arithmetic() {
    let src = concat!(
        "#define A 3\n",
        "#if defined(A) && defined A && !defined(B) && (A * 2 + 1 == 7) && (1 << 4) == 16\n",
        "yes1\n",
        "#endif\n",
        "#if (A > 2 ? 10 : 20) / 5 == 2 && -1 < 0 && (-1 > 0u) && ~0 == -1 && (7 % 4 ^ 1) == 2\n",
        "yes2\n",
        "#endif\n",
        "#if UNDEFINED_THING || 0x10 != 16 || 010 != 8 || 0b11 != 3 || 1'000 != 1000 || 'A' != 65\n",
        "no1\n",
        "#else\n",
        "yes3\n",
        "#endif\n",
        "#if 0 && (1 / 0)\n",
        "no2\n",
        "#elif 1 || (1 % 0)\n",
        "yes4\n",
        "#endif\n",
        "#ifndef B\n",
        "yes5\n",
        "#endif\n",
        "#if true && !false && __has_include(\"main.cu\") && !__has_include(<nope.h>) && !__has_builtin(x)\n",
        "yes6\n",
        "#endif\n",
    );
    let out = pp(src);
    for w in ["yes1", "yes2", "yes3", "yes4", "yes5", "yes6"] {
        assert!(out.contains(w), "missing {w}: {out}");
    }
    assert!(!out.contains("no"), "{out}");
    assert_eq!(out.lines().count(), src.lines().count());
}

#[test]
fn elif_chains_and_nesting() {
    let prog = |v: u32| {
        format!(
            "#define V {v}\n#if V == 1\none\n#elif V == 2\n#if 0\nnested\n#elif 1\ntwo\n#else\nnope\n#endif\n#elif V == 3\nthree\n#else\nother\n#endif\n"
        )
    };
    assert_eq!(words(&pp(&prog(1))), "one");
    assert_eq!(words(&pp(&prog(2))), "two");
    assert_eq!(words(&pp(&prog(3))), "three");
    assert_eq!(words(&pp(&prog(9))), "other");
    // Garbage in skipped branches is not evaluated or parsed.
    assert_eq!(words(&pp("#if 0\n#if 1 +\n#elif )(\n#else junk\n#endif\n#else\nok\n#endif\n")), "ok");
}

#[test]
fn predefined_macros_and_command_line_defines() {
    let src =
        "#if defined(__CUDACC__) && __CUDA_ARCH__ >= 900 && __NVCC__ && __cplusplus >= 201103L\nok\n#endif\nN F(2)\n";
    let opts = PreprocessOptions {
        defines: vec![("N".into(), "1".into()), ("F(x)".into(), "x+x".into())],
        include_dirs: vec![],
    };
    let (p, _) = run_with(src, &[], &opts).unwrap();
    assert_eq!(words(&p.text), "ok 1 2+2");
    let opts = PreprocessOptions { defines: vec![("__CUDA_ARCH__".into(), "800".into())], include_dirs: vec![] };
    let (p, _) = run_with(src, &[], &opts).unwrap();
    assert_eq!(words(&p.text), "N F(2)");
}

#[test]
fn includes_next_to_file_and_via_include_dirs() {
    let root = "#include \"a.h\"\n#include <b.h>\n#include \"sub/c.h\"\nint main_line = A + B + C;\n";
    let extra = [
        ("/src/a.h", "#define A 1\nint in_a;\n"),
        ("/inc/b.h", "#define B 2\nint in_b;"),
        ("/src/sub/c.h", "#include \"../d.h\"\n#define C 3\n"),
        ("/src/d.h", "int in_d;\n"),
        // Not reachable through `<...>`: only -I dirs are searched for those.
        ("/src/b.h", "#error wrong b.h\n"),
    ];
    let opts = PreprocessOptions { defines: vec![], include_dirs: vec!["/inc".into()] };
    let (p, files) = run_with(root, &extra, &opts).unwrap();
    assert_eq!(words(&p.text), "int in_a; int in_b; int in_d; int main_line = 1 + 2 + 3;");
    let path = |s: Span| files.path(s.file).to_path_buf();

    let (r, c) = find_pos(&p.text, "in_a");
    let s = p.locate(r, c, 4);
    assert_eq!((path(s), s.line, s.column, s.len), (PathBuf::from("/src/a.h"), 2, 5, 4));
    let (r, c) = find_pos(&p.text, "in_b");
    let s = p.locate(r, c, 4);
    assert_eq!((path(s), s.line, s.column), (PathBuf::from("/inc/b.h"), 2, 5));
    let (r, c) = find_pos(&p.text, "in_d");
    let s = p.locate(r, c, 4);
    assert_eq!((path(s), s.line, s.column), (PathBuf::from("/src/d.h"), 1, 5));
    // A plain line after the includes maps to its own line and column.
    let (r, c) = find_pos(&p.text, "main_line");
    assert_eq!(p.locate(r, c, 9), span(0, 4, 5, 9));
    // Expanded text maps to the macro name.
    let (r, c) = find_pos(&p.text, "2");
    assert_eq!(p.locate(r, c, 1), span(0, 4, 21, 1));
}

#[test]
fn pragma_once_and_include_guards() {
    let root = "#include \"o.h\"\n#include \"o.h\"\n#include \"g.h\"\n#include \"./g.h\"\n#include \"n.h\"\n#include \"n.h\"\n";
    let extra = [
        ("/src/o.h", "#pragma once\nint once;\n"),
        ("/src/g.h", "// guard\n#ifndef G_H\n#define G_H\nint guarded;\n#endif // G_H\n"),
        ("/src/n.h", "int twice;\n"),
    ];
    let (p, files) = run(root, &extra).unwrap();
    // (The comment on the `#endif` line goes with the directive.)
    assert_eq!(words(&p.text), "int once; // guard int guarded; int twice; int twice;");
    // Each file is read once.
    assert_eq!(files.files.len(), 4);
}

#[test]
fn missing_headers() {
    // Missing `<...>` headers (CUDA, system) are skipped.
    assert_eq!(pp("#include <cuda_runtime.h>\n#include <stdio.h>\nint x;\n"), "\n\nint x;\n");
    // A missing quoted header is an error at its name.
    let e = err("int x;\n  #include \"nope.h\"\n");
    assert_eq!(e.kind, ErrorKind::Preprocess);
    assert_eq!(e.span, Some(span(0, 2, 12, 8)));
    assert!(e.message.contains("nope.h"), "{}", e.message);
    let mut files = SourceFiles::default();
    let id = files.add(ROOT, "#include \"nope.h\"\n");
    let e = preprocess(&mut files, id, &PreprocessOptions::default(), &Mem(HashMap::new())).unwrap_err();
    assert_eq!(files.describe(e.span.unwrap()), "/src/main.cu:1:10");
}

#[test]
fn include_through_macro_and_include_cycles() {
    let extra = [("/src/x.h", "int x;\n"), ("/src/loop.h", "#include \"loop.h\"\n")];
    let (p, _) = run("#define H \"x.h\"\n#include H\n", &extra).unwrap();
    assert_eq!(words(&p.text), "int x;");
    let e = run("#include \"loop.h\"\n", &extra).unwrap_err();
    assert!(e.message.contains("nested"), "{}", e.message);
}

#[test]
fn line_continuations_in_directives() {
    let out = pp("#define LONG(a, \\\n  b) a + \\\n  b\nint x = LONG(1, 2);\n");
    assert_eq!(out, "\n\n\nint x = 1 + 2;\n");
}

#[test]
fn conditionals_inside_macro_arguments() {
    let out = pp("#define F(a, b) [a|b]\nF(1,\n#ifdef NOPE\n  2\n#else\n  3\n#endif\n) tail\n");
    assert_eq!(words(&out), "[1|3] tail");
    let (p, _) = run("#define F(a, b) [a|b]\nF(1,\n#ifdef NOPE\n  2\n#else\n  3\n#endif\n) tail\n", &[]).unwrap();
    let (r, c) = find_pos(&p.text, "tail");
    assert_eq!(p.locate(r, c, 4), span(0, 8, 3, 4));
}

#[test]
fn errors_point_at_the_directive() {
    let cases: [(&str, u32, &str); 10] = [
        ("int a;\n#if 1\n", 2, "unterminated #if"),
        ("#else\n", 1, "#else without #if"),
        ("#endif\n", 1, "#endif without #if"),
        ("#if 1\n#else\n#elif 1\n#endif\n", 3, "#elif after #else"),
        ("\n#define 3 x\n", 2, "macro name"),
        ("#define F(a, b\n", 1, "malformed parameter list"),
        ("#define F(a) #b\n", 1, "`#` is not followed"),
        ("\n\n#if 1 +\n#endif\n", 3, "invalid #if expression"),
        ("#if 1 / (2 - 2)\n#endif\n", 1, "division by zero"),
        ("#ifdef\n#endif\n", 1, "no macro name"),
    ];
    for (src, line, msg) in cases {
        let e = err(src);
        assert_eq!(e.kind, ErrorKind::Preprocess, "{src}");
        assert!(e.message.contains(msg), "{src}: {}", e.message);
        let s = e.span.unwrap();
        assert_eq!((s.line, s.column), (line, 1), "{src}");
    }
    let e = err("  #error stop \\\n here\n");
    assert_eq!(e.message, "#error stop  here");
    assert_eq!(e.span.unwrap().column, 3);
    let (p, _) = run("#warning careful\nint x;\n", &[]).unwrap();
    assert_eq!(p.warnings.len(), 1);
    assert_eq!(words(&p.text), "int x;");
}

#[test]
fn unknown_directives_and_pragmas_vanish() {
    let src = "#pragma unroll\n#line 7 \"x\"\n# 12 \"y\"\n#\n#ident \"v\"\n#frobnicate\nint x;\n";
    assert_eq!(pp(src), "\n\n\n\n\n\nint x;\n");
    assert_eq!(words(&pp("#define U _Pragma(\"unroll\") for\nU(;;);\n")), "for(;;);");
}

#[test]
fn macro_argument_errors() {
    let e = err("#define F(a, b) a\nF(1)\n");
    assert!(e.message.contains("takes 2"), "{}", e.message);
    assert_eq!(e.span, Some(span(0, 2, 1, 1)));
    let e = err("#define F(a) a\nint x = F(1,\n");
    assert!(e.message.contains("unterminated argument list"), "{}", e.message);
    assert_eq!(e.span, Some(span(0, 2, 9, 1)));
}

#[test]
fn expansion_limits() {
    // 2^40 tokens of output: refused, not computed.
    let mut src = String::from("#define A0 x\n");
    for i in 1..=40 {
        src.push_str(&format!("#define A{i} A{} A{}\n", i - 1, i - 1));
    }
    src.push_str("A40\n");
    assert_eq!(err(&src).kind, ErrorKind::Limit);
    // The same with empty output: bounded by work.
    assert_eq!(err(&src.replace("A0 x", "A0")).kind, ErrorKind::Limit);
    // Deeply nested arguments and expressions fail cleanly.
    let deep = format!("#define F(x) x\n{}1{}\n", "F(".repeat(100_000), ")".repeat(100_000));
    let e = err(&deep);
    assert!(e.message.contains("nested") || e.kind == ErrorKind::Limit, "{}", e.message);
    assert_eq!(words(&pp(&format!("#define F(x) x\n{}1{}\n", "F(".repeat(150), ")".repeat(150)))), "1");
    let deep = format!("#if {}1{}\n#endif\n", "(".repeat(100_000), ")".repeat(100_000));
    assert!(err(&deep).message.contains("nested"));
    let deep = format!("#if {}1\n#endif\n", "~".repeat(100_000));
    assert!(err(&deep).message.contains("nested"));
    // A long chain of distinct macros is fine below the depth limit, refused above it.
    let chain = |n: usize| {
        let mut s: String = (0..n).map(|i| format!("#define C{i} C{}\n", i + 1)).collect();
        s.push_str("C0\n");
        s
    };
    assert_eq!(words(&pp(&chain(500))), "C500");
    assert!(err(&chain(1500)).message.contains("nested"));
}

#[test]
fn locate_maps_expanded_and_plain_text() {
    let src = "#define IDX (threadIdx.x + 1)\n__global__ void k(float *p) {\n  p[IDX] = 0;\n  p[0] = 1;\n}\n";
    let (p, _) = run(src, &[]).unwrap();
    assert_eq!(p.text.lines().nth(2), Some("  p[(threadIdx.x + 1)] = 0;"));
    let (r, c) = find_pos(&p.text, "threadIdx");
    assert_eq!(p.locate(r, c, 11), span(0, 3, 5, 3));
    // After the expansion on the same row: back to the source column.
    let (r, c) = find_pos(&p.text, "] = 0");
    assert_eq!(p.locate(r, c, 1), span(0, 3, 8, 1));
    let (r, c) = find_pos(&p.text, "= 0");
    assert_eq!(p.locate(r, c, 1), span(0, 3, 10, 1));
    // Untouched rows map 1:1.
    assert_eq!(p.locate(3, 2, 1), span(0, 4, 3, 1));
    assert_eq!(p.locate(1, 0, 10), span(0, 2, 1, 10));
    // Out of range positions do not panic.
    let _ = p.locate(1000, 1000, 0);
}

#[test]
fn columns_are_in_characters() {
    let (p, _) = run("/* é */ int x;\n", &[]).unwrap();
    let (r, c) = find_pos(&p.text, "x;");
    assert_eq!(p.locate(r, c, 1), span(0, 1, 13, 1));
}

#[test]
fn crlf_and_raw_strings() {
    let out = pp("#define X 1\r\nint a = X;\r\nconst char *r = R\"d(\n#define X 2\n)d\"; int b = X;\r\n");
    assert!(out.contains("int a = 1;") && out.contains("#define X 2") && out.contains("int b = 1;"), "{out}");
}

#[test]
fn byte_order_mark_and_blank_lookahead() {
    assert_eq!(pp("\u{FEFF}#define X 1\nint a = X;\n"), "   \nint a = 1;\n");
    // Looking for a `(` across blank lines and comments puts them back unchanged.
    let src = "#define F(x) x\nF /* c */\n\n  y\n";
    assert_eq!(pp(src), "\nF /* c */\n\n  y\n");
    let (p, _) = run(&format!("#define F(x) x\nF{}(1) z\n", "\n".repeat(100_000)), &[]).unwrap();
    let (r, c) = find_pos(&p.text, "z");
    assert_eq!(p.locate(r, c, 1), span(0, 100_002, 5, 1));
}

#[test]
fn expansions_in_included_files_map_there() {
    let extra = [("/src/k.h", "#define W 32\n\nint warp = W;\n")];
    let (p, files) = run("int a;\n#include \"k.h\"\nint b = W;\n", &extra).unwrap();
    assert_eq!(p.text, "int a;\n\n\nint warp = 32;\n\nint b = 32;\n");
    let s = p.locate(3, 11, 2);
    assert_eq!((files.path(s.file), s.line, s.column, s.len), (Path::new("/src/k.h"), 3, 12, 1));
    assert_eq!(p.locate(5, 8, 2), span(0, 3, 9, 1));
    assert_eq!(p.locate(5, 0, 3), span(0, 3, 1, 3));
}

#[test]
fn builtin_macros() {
    let out = pp("\nint l = __LINE__; const char *f = __FILE__; int c = __COUNTER__ + __COUNTER__;\n");
    assert_eq!(words(&out), "int l = 2; const char *f = \"/src/main.cu\"; int c = 0 + 1;");
}

/// A deterministic generator of junk inputs.
fn junk(seed: u64, len: usize) -> String {
    const PIECES: [&str; 24] = [
        "#", "define", "if", "elif", "endif", "include", "(", ")", ",", "\\\n", "\n", "/*", "*/", "//", "\"", "'",
        "##", "...", "F", "X", " ", "defined", "é", "\u{0}",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut s = String::new();
    for _ in 0..len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.push_str(PIECES[(x % PIECES.len() as u64) as usize]);
    }
    s
}

#[test]
fn never_panics_on_junk() {
    for seed in 0..2000 {
        let src = junk(seed, 60);
        if let Ok((p, _)) = run(&src, &[("/src/F", "#define F(x) x x\n")]) {
            for (row, line) in p.text.split('\n').enumerate() {
                for col in 0..=line.len() {
                    let _ = p.locate(row, col, 1);
                }
            }
        }
    }
    let bytes: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let _ = run(&String::from_utf8_lossy(&bytes), &[]);
}

#[test]
fn large_input_is_linear() {
    let mut src = String::from("#define F(a, b) ((a) * (b))\n");
    for i in 0..100_000 {
        src.push_str(&format!("x{i} = F(y{i}, 2) + z; // comment F(1, 2)\n"));
    }
    let start = std::time::Instant::now();
    let (p, _) = run(&src, &[]).unwrap();
    assert!(p.text.contains("x99999 = ((y99999) * (2)) + z;"));
    assert!(start.elapsed().as_secs() < 10);
}

/// C++'s alternative tokens in `#if` (diamond's `#if not defined(_OPENMP)`): operators, so
/// `not defined(NOPE)` holds and `defined(A) and not defined(B)` follows `A` and `B`.
#[test]
fn alternative_tokens_are_operators_in_if() {
    let out = pp("#define A\n#if not defined(NOPE)\nyes\n#endif\n#if defined(A) and not defined(A)\nno\n#endif\n#if (1 bitand 3) not_eq 0 or 0\nthree\n#endif\n");
    assert_eq!(words(&out), "yes three");
}
