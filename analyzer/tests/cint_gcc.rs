//! Property test of the C integer evaluator (`sector_analyzer::cint`) against gcc: random
//! small expressions over literals and casts of every integer type, with every operator the
//! evaluator reads. Each expression the evaluator calls defined is compiled by gcc (C11, with
//! the undefined-behaviour sanitizer where it links) and its type (`_Generic`) and value
//! printed; both must agree. Expressions the evaluator calls undefined are left out (gcc would
//! be free to print anything). Skipped, with a note, where there is no gcc. One compile and one
//! run for all expressions: well under a second.

use sector_analyzer::cint::{eval_str, no_names, CType, EvalError};
use sector_analyzer::fill::splitmix64;
use std::io::Write;
use std::process::Command;

const TYPES: [CType; 12] = [
    CType::Bool,
    CType::Char,
    CType::SChar,
    CType::UChar,
    CType::Short,
    CType::UShort,
    CType::Int,
    CType::UInt,
    CType::Long,
    CType::ULong,
    CType::LongLong,
    CType::ULongLong,
];

/// The C11 spelling (`bool` is C++'s and `<stdbool.h>`'s; `_Bool` is C's own).
fn c_name(t: CType) -> &'static str {
    if t == CType::Bool {
        "_Bool"
    } else {
        t.name()
    }
}

struct Gen(u64);

impl Gen {
    fn next(&mut self, n: u64) -> u64 {
        splitmix64(&mut self.0) % n
    }
    fn value(&mut self) -> u128 {
        const EDGES: [u128; 20] = [
            0, 1, 2, 3, 7, 31, 32, 100, 127, 128, 255, 256, 288, 32767, 65535, 65536, 2147483647, 2147483648,
            4294967295, 4294967296,
        ];
        match self.next(4) {
            0 => u64::MAX as u128 - self.next(3) as u128,
            1 => (1u128 << 63) - self.next(2) as u128,
            2 => splitmix64(&mut self.0) as u128 >> self.next(64),
            _ => EDGES[self.next(EDGES.len() as u64) as usize],
        }
    }
    fn leaf(&mut self) -> String {
        let v = self.value();
        match self.next(5) {
            // A literal whose type the evaluator must find (int, long, unsigned ... by size).
            0 if v <= i64::MAX as u128 => format!("{v}"),
            1 => format!("0x{v:x}"),
            2 if v <= u32::MAX as u128 => format!("{v}u"),
            // Any type, by a cast of an unsigned long long literal.
            _ => format!("(({}){v}ULL)", c_name(TYPES[self.next(12) as usize])),
        }
    }
    fn expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.next(4) == 0 {
            return self.leaf();
        }
        const OPS: [&str; 18] =
            ["+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", ">", "<=", ">=", "==", "!=", "&&", "||"];
        match self.next(8) {
            0 => format!("{}({})", ["-", "~", "!", "+"][self.next(4) as usize], self.expr(depth - 1)),
            1 => format!("(({}) ? ({}) : ({}))", self.expr(depth - 1), self.expr(depth - 1), self.expr(depth - 1)),
            2 => format!("(({})({}))", c_name(TYPES[self.next(12) as usize]), self.expr(depth - 1)),
            3 => {
                // A shift by a small amount, most of them defined.
                let op = if self.next(2) == 0 { "<<" } else { ">>" };
                format!("(({}) {op} {})", self.expr(depth - 1), self.next(40))
            }
            _ => format!(
                "(({}) {} ({}))",
                self.expr(depth - 1),
                OPS[self.next(OPS.len() as u64) as usize],
                self.expr(depth - 1)
            ),
        }
    }
}

fn gcc() -> Option<&'static str> {
    Command::new("gcc").arg("--version").output().ok().filter(|o| o.status.success()).map(|_| "gcc")
}

#[test]
#[allow(clippy::print_stderr)]
fn random_expressions_agree_with_gcc() {
    let Some(cc) = gcc() else {
        eprintln!("note: no gcc on PATH: the C integer evaluator's property test is skipped");
        return;
    };
    // CINT_GCC_SEED and CINT_GCC_CASES explore further than CI's fixed 600.
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut g = Gen(env("CINT_GCC_SEED").unwrap_or(0x5EC7_0E57_1A7E_0029));
    let want = env("CINT_GCC_CASES").unwrap_or(600) as usize;
    let mut cases: Vec<(String, String)> = Vec::new();
    let mut undefined = 0;
    while cases.len() < want {
        let e = g.expr(3);
        match eval_str(&e, &no_names) {
            Ok(v) => {
                let ty = TYPES.iter().position(|t| *t == v.ty).unwrap();
                cases.push((e, format!("{ty} {}", v.v)));
            }
            Err(EvalError::Undefined(_)) => undefined += 1,
            Err(other) => panic!("the evaluator cannot read `{e}`: {other}"),
        }
    }
    assert!(undefined < want, "most random expressions should be defined ({undefined} were not)");
    let mut c = String::from("#include <stdio.h>\n#define TY(e) _Generic((e), ");
    for (i, t) in TYPES.iter().enumerate() {
        c.push_str(&format!("{}: {i}, ", c_name(*t)));
    }
    c.push_str("default: 99)\n#define P(e) do { if ((__typeof__(e))-1 < 0) printf(\"%d %lld\\n\", TY(e), (long long)(e)); else printf(\"%d %llu\\n\", TY(e), (unsigned long long)(e)); } while (0)\nint main(void) {\n");
    for (e, _) in &cases {
        c.push_str(&format!("    P({e});\n"));
    }
    c.push_str("    return 0;\n}\n");
    let dir = std::env::temp_dir().join(format!("sector-estimate-cint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("exprs.c");
    std::fs::File::create(&src).unwrap().write_all(c.as_bytes()).unwrap();
    let exe = dir.join("exprs");
    // With the sanitizer an expression the evaluator wrongly calls defined stops the run.
    let mut ok = false;
    let mut sanitized = false;
    for flags in [&["-fsanitize=undefined", "-fno-sanitize-recover=all"][..], &[][..]] {
        let out = Command::new(cc)
            .args(["-std=c11", "-O0", "-w"])
            .args(flags)
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        if out.status.success() {
            ok = true;
            sanitized = !flags.is_empty();
            break;
        }
        if flags.is_empty() {
            panic!("gcc failed on the generated expressions:\n{}", String::from_utf8_lossy(&out.stderr));
        }
    }
    assert!(ok);
    let run = Command::new(&exe).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the program stopped (undefined behaviour?): {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let got: Vec<&str> = stdout.lines().collect();
    assert_eq!(got.len(), cases.len());
    let mut wrong = Vec::new();
    for ((e, want), g) in cases.iter().zip(&got) {
        if want != g {
            wrong.push(format!("{e}\n    evaluator (type index, value): {want}\n    gcc: {g}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!(
        "{} expressions compared with gcc ({undefined} undefined ones left out; sanitizer: {sanitized})",
        cases.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} disagree:\n{}",
        wrong.len(),
        cases.len(),
        wrong[..wrong.len().min(10)].join("\n")
    );
}

/// Truncation on assignment to a narrow type, as in `const unsigned char b = 256 + 32;`.
#[test]
fn assignment_to_a_narrow_type_truncates() {
    // 256 + 32 = 288 = 0x120; unsigned char keeps the low 8 bits: 0x20 = 32.
    let v = eval_str("256 + 32", &no_names).unwrap().to(CType::UChar);
    assert_eq!(v.v, 32);
    // 40000 as short: 40000 - 65536 = -25536.
    assert_eq!(eval_str("40000", &no_names).unwrap().to(CType::Short).v, -25536);
    // Any nonzero value is true for bool: 256 is 1, not 0 (what 8-bit truncation would give).
    assert_eq!(eval_str("256", &no_names).unwrap().to(CType::Bool).v, 1);
}

/// The CUDA front end's own folding and the engines' integer arithmetic agree with the
/// evaluator (so, through the test above, with gcc) on the same random expressions: each
/// expression's value, the size of its promoted type and that type's signedness are checked
/// inside a kernel, one line each, and a line whose check fails stores (a row with requests).
/// Each value is also assigned to a variable of a random integer type (`const` on every other
/// line, which the front end folds), and the truncated value checked.
/// Comparisons are `bool` in C++ and `int` in C; both promote to `int`, so the checks (on the
/// value, and on `(E) + 0` and `(E) - (E) - 1`) read the same in both languages. Needs no gcc.
#[test]
fn the_cuda_front_end_agrees_with_the_evaluator() {
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<u64>().ok());
    let mut g = Gen(env("CINT_GCC_SEED").unwrap_or(0x5EC7_0E57_1A7E_0029) ^ 0xF0E0);
    let want = env("CINT_GCC_CASES").unwrap_or(400) as usize;
    let mut src = String::from("__global__ void k(int* a) {\n");
    let mut cases = Vec::new();
    while cases.len() < want {
        let e = g.expr(3).replace("_Bool", "bool");
        let Ok(v) = eval_str(&e.replace("bool", "_Bool"), &no_names) else { continue };
        let t = v.ty;
        let cpp_name = if t == CType::Bool { "bool" } else { t.name() };
        let promoted = t.promoted();
        // The value as an unsigned long long literal converted to the type (exact for every type).
        let lit = format!("(({cpp_name}){}ULL)", CType::ULongLong.convert(v.v));
        // Assigned to a variable of a random type (a `const` one is folded by the front end):
        // truncated, or 0/1 for bool, as the evaluator converts.
        let t2 = TYPES[g.next(12) as usize];
        let t2_name = if t2 == CType::Bool { "bool" } else { t2.name() };
        let lit2 = format!("(({t2_name}){}ULL)", CType::ULongLong.convert(v.to(t2).v));
        let constant = if cases.len() % 2 == 1 { "const " } else { "" };
        src.push_str(&format!(
            "    {{ {constant}{t2_name} x = ({e}); if (!((({e}) == {lit}) && sizeof(({e}) + 0) == {} && ((({e}) - ({e}) - 1) < 0) == {} && x == {lit2})) a[threadIdx.x] = 1; }}\n",
            promoted.size(),
            promoted.signed()
        ));
        cases.push((e, format!("{} {}, as {}: {}", t.name(), v.v, t2.name(), v.to(t2).v)));
    }
    src.push_str("}\n");
    let o = sector_analyzer::AnalyzeOptions { grid: "1".into(), block: "32".into(), ..Default::default() };
    let a = match sector_analyzer::analyze_source("exprs.cu", &src, &o) {
        Ok(a) => a,
        Err(f) => {
            let line = f.diagnostic.span.map_or(0, |s| s.line as usize);
            let case =
                cases.get(line.wrapping_sub(2)).map_or(String::new(), |c| format!("{} (evaluator: {})", c.0, c.1));
            panic!("the front end refused line {line}: {}\n{case}", f.diagnostic.message);
        }
    };
    let wrong: Vec<String> = a
        .sheet
        .instructions
        .iter()
        .filter(|r| r.requests > 0)
        .map(|r| {
            let (e, want) = &cases[r.line as usize - 2];
            format!("line {}: {e}\n    evaluator (type, value): {want}", r.line)
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{} of {} disagree:\n{}",
        wrong.len(),
        cases.len(),
        wrong[..wrong.len().min(10)].join("\n")
    );
}
