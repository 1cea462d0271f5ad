//! The symbolic engine against the reference on random kernels: affine and non-affine
//! indices, guards, loops with fixed and per-lane trip counts, breaks, shared memory, 1-3-D
//! launches and odd sizes. Whatever the symbolic engine summarises must count exactly what
//! enumeration counts; what it cannot, it hands to enumeration.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use sector_analyzer::analyze::EngineKind;
use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};
use std::sync::atomic::{AtomicUsize, Ordering};

/// splitmix64: the kernel is drawn from one seed, so a failing case is its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64) as i64
    }
}

const VARS: &[&str] = &["tx", "ty", "tz", "bx", "by", "bz", "n", "gx"];

/// An int expression over `vars`.
fn expr(r: &mut Rng, depth: u32, vars: &[&str]) -> String {
    let leaf = |r: &mut Rng| {
        if r.below(3) == 0 {
            r.range(-3, 40).to_string()
        } else {
            r.pick(vars).to_string()
        }
    };
    if depth == 0 {
        return leaf(r);
    }
    let mut e = || expr(r, depth - 1, vars);
    let (a, b) = (e(), e());
    match r.below(14) {
        0 | 1 => leaf(r),
        2 | 3 => format!("({a} + {b})"),
        4 => format!("({a} - {b})"),
        5 | 6 => format!("({a} * {})", r.range(-2, 70)),
        7 => format!("({a} * {b})"),
        8 => format!("({a} / {})", r.range(1, 9)),
        9 => format!("({a} % {})", r.range(1, 9)),
        10 => format!("({a} >> {})", r.range(0, 4)),
        11 => format!("({a} & {})", r.pick(&["1", "3", "7", "31", "~7", "12"])),
        12 => format!("({a} ^ {})", r.range(0, 40)),
        _ => format!("min({a}, {b})"),
    }
}

fn condition(r: &mut Rng, vars: &[&str]) -> String {
    let a = expr(r, 2, vars);
    match r.below(5) {
        0 => format!("{a} < n"),
        1 => format!("{a} % 3 != 0"),
        2 => format!("{a} >= {}", r.range(0, 30)),
        3 => format!("{a} == {}", r.range(0, 8)),
        _ => format!("({a} < n && {} > 0)", expr(r, 1, vars)),
    }
}

fn statement(r: &mut Rng, depth: u32, vars: &mut Vec<&'static str>, loops: u32) -> String {
    let idx = |r: &mut Rng, vars: &[&str]| expr(r, 3, vars);
    match r.below(if depth == 0 { 3 } else { 7 }) {
        0 => format!("out[{}] = a[{}];", idx(r, vars), idx(r, vars)),
        1 => format!("acc += a[{}] + a[{}];", idx(r, vars), idx(r, vars)),
        2 => format!("s[({}) & 255] = acc; acc += s[({}) & 255];", idx(r, vars), idx(r, vars)),
        3 | 4 if loops < 2 => {
            let k: &'static str = ["k0", "k1"][loops as usize];
            let lo = r.range(0, 3);
            let hi = match r.below(4) {
                0 => r.range(0, 9).to_string(),
                1 => format!("(n % {})", r.range(1, 8)),
                2 => format!("(tx % {})", r.range(1, 5)),
                _ => format!("{}", r.range(20, 300)),
            };
            let step = r.pick(&["1", "1", "2", "3"]);
            vars.push(k);
            let brk = if r.below(4) == 0 { format!("if ({}) break; ", condition(r, vars)) } else { String::new() };
            let body = statement(r, depth - 1, vars, loops + 1);
            vars.pop();
            format!("for (int {k} = {lo}; {k} < {hi}; {k} += {step}) {{ {brk}{body} }}")
        }
        5 => {
            let c = condition(r, vars);
            let (t, e) = (statement(r, depth - 1, vars, loops), statement(r, depth - 1, vars, loops));
            format!("if ({c}) {{ {t} }} else {{ {e} }}")
        }
        _ => {
            let (x, y) = (statement(r, depth - 1, vars, loops), statement(r, depth - 1, vars, loops));
            format!("{x} {y}")
        }
    }
}

fn kernel(seed: u64) -> (String, AnalyzeOptions) {
    let mut r = Rng(seed);
    let mut vars = VARS.to_vec();
    let body = (0..1 + r.below(3)).map(|_| statement(&mut r, 3, &mut vars, 0)).collect::<Vec<_>>().join("\n    ");
    let ret = if r.below(4) == 0 { format!("if ({}) return;", condition(&mut r, &vars)) } else { String::new() };
    let src = format!(
        "__global__ void k(const float *a, float *out, int n) {{
    __shared__ float s[256];
    int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    int bx = blockIdx.x, by = blockIdx.y, bz = blockIdx.z, gx = gridDim.x;
    float acc = 0.0f;
    {ret}
    {body}
    out[0] = acc;
}}"
    );
    // 1-3-D launches with odd sizes, at most 1024 threads a block.
    let dims = 1 + r.below(3);
    let block = match dims {
        1 => format!("{}", r.range(1, 200)),
        2 => format!("{},{}", r.range(1, 70), r.range(1, 6)),
        _ => format!("{},{},{}", r.range(1, 40), r.range(1, 4), r.range(1, 4)),
    };
    let grid = match r.below(3) {
        0 => format!("{}", r.range(1, 40)),
        1 => format!("{},{}", r.range(1, 9), r.range(1, 9)),
        _ => format!("{},{},{}", r.range(1, 4), r.range(1, 4), r.range(1, 4)),
    };
    let opts =
        AnalyzeOptions { grid, block, args: vec![("n".into(), r.range(0, 600).to_string())], ..Default::default() };
    (src, opts)
}

fn counted(s: &Sheet) -> serde_json::Value {
    serde_json::json!({
        "instructions": s.instructions,
        "totals": s.totals,
        "footprints": s.footprints,
        "boundaries": s.boundaries,
        "work": s.work,
    })
}

fn check(seed: u64, summarised: &AtomicUsize) -> Result<(), TestCaseError> {
    let (src, mut opts) = kernel(seed);
    opts.engine = EngineKind::Enumerate;
    let reference = analyze_source("k.cu", &src, &opts);
    opts.engine = EngineKind::Symbolic;
    let symbolic = analyze_source("k.cu", &src, &opts);
    match (reference, symbolic) {
        (Ok(r), Ok(s)) => {
            if s.sheet.engine == "symbolic" {
                summarised.fetch_add(1, Ordering::Relaxed);
            }
            prop_assert_eq!(counted(&r.sheet), counted(&s.sheet), "seed {}:\n{}\n{:?}", seed, src, opts);
        }
        (Err(r), Err(s)) => prop_assert_eq!(r.one_line(), s.one_line()),
        (r, s) => prop_assert!(
            false,
            "seed {}: one engine failed: {:?} / {:?}\n{}",
            seed,
            r.err().map(|f| f.one_line()),
            s.err().map(|f| f.one_line()),
            src
        ),
    }
    Ok(())
}

#[test]
fn symbolic_counts_what_enumeration_counts() {
    let cases = 160;
    let summarised = AtomicUsize::new(0);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig { cases, ..ProptestConfig::default() });
    if let Err(e) = runner.run(&any::<u64>(), |seed| check(seed, &summarised)) {
        panic!("{e}");
    }
    // The property says nothing if the symbolic engine hands everything to enumeration.
    let summarised = summarised.load(Ordering::Relaxed);
    assert!(summarised * 2 >= cases as usize, "only {summarised} of {cases} random kernels summarised");
}
