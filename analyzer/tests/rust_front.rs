//! The Rust front end: Rust twins give the same sheets as their CUDA originals, and every
//! refusal names the construct's line and column. One `check` helper per feature, one-line cases.

use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, analyze_source, AnalyzeOptions, Input, Sheet};
use std::path::Path;

fn opts(kernel: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        kernel: Some(kernel.into()),
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..AnalyzeOptions::default()
    }
}

fn example(file: &str, o: &AnalyzeOptions) -> Sheet {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples").join(file);
    match analyze(Input::File(&path), o, &DiskLoader) {
        Ok(a) => a.sheet,
        Err(f) => panic!("{file}: {}", f.one_line()),
    }
}

/// One access: op, width, requests, sectors, ideal sectors, logical bytes.
type Access = (&'static str, u32, u64, u64, u64, u64);
/// A twin pair: Rust kernel, CUDA file, grid, block, args.
type Twin<'a> = (&'a str, &'a str, &'a str, &'a str, &'a [(&'a str, &'a str)]);

/// What must be equal between twins: per access (in source order of the loads and the stores)
/// and in total.
fn accounting(s: &Sheet) -> (Vec<Access>, String) {
    let mut rows: Vec<_> = s
        .instructions
        .iter()
        .map(|r| (r.op.name(), r.width, r.requests, r.sectors, r.ideal_sectors, r.logical_bytes))
        .collect();
    rows.sort();
    (rows, format!("{:?}", s.totals))
}

#[test]
fn rust_twins_give_the_cuda_sheets() {
    let cases: &[Twin] = &[
        ("vec_add", "vec_add.cu", "4096", "256", &[("n", "1048576")]),
        ("vec_add", "vec_add.cu", "3907", "256", &[("n", "1000005")]),
        ("strided", "strided.cu", "256", "256", &[("stride", "3")]),
        ("transpose_naive", "transpose_naive.cu", "32,125", "32,8", &[("rows", "1000"), ("cols", "1000")]),
        ("scale_grid_stride", "grid_stride.cu", "132", "256", &[("n", "1048576")]),
        ("stencil1d", "stencil.cu", "4096", "256", &[("n", "1048576")]),
    ];
    for (kernel, cu, grid, block, args) in cases {
        let o = opts(kernel, grid, block, args);
        let rs = example("kernels.rs", &o);
        let c = example(cu, &o);
        assert_eq!(accounting(&rs), accounting(&c), "{kernel} vs {cu} under {grid} x {block} {args:?}");
        assert_eq!(rs.boundaries.dram_read_sectors, c.boundaries.dram_read_sectors, "{kernel}");
    }
}

fn run(src: &str, args: &[(&str, &str)]) -> Result<Sheet, String> {
    let o = AnalyzeOptions {
        grid: "4".into(),
        block: "64".into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..AnalyzeOptions::default()
    };
    analyze_source("k.rs", src, &o).map(|a| a.sheet).map_err(|f| f.one_line())
}

/// `src` fails with a message containing `want` (which starts with `k.rs:LINE:COL`).
fn check_err(src: &str, args: &[(&str, &str)], want: &str) {
    match run(src, args) {
        Ok(_) => panic!("expected `{want}`, the analysis succeeded:\n{src}"),
        Err(e) => assert!(e.contains(want), "expected `{want}`, got `{e}`\n{src}"),
    }
}

/// `src` gives these global (load requests, load sectors, store requests, store sectors).
fn check(src: &str, args: &[(&str, &str)], want: (u64, u64, u64, u64)) {
    let s = run(src, args).unwrap_or_else(|e| panic!("{e}\n{src}"));
    let t = &s.totals;
    let got = (t.global_load.requests, t.global_load.sectors, t.global_store.requests, t.global_store.sectors);
    assert_eq!(got, want, "{src}");
}

#[test]
fn refusals_name_the_construct() {
    let k = |body: &str| format!("pub unsafe fn k(a: &[f32], p: *mut f32, n: usize) {{\n{body}\n}}\n");
    check_err(&k("    let f = |x: f32| x;"), &[], "k.rs:2:13: a closure is not supported");
    check_err(&k("    match n { _ => {} }"), &[], "k.rs:2:5: `match` is not supported");
    check_err(&k("    let v = a.iter();"), &[], "k.rs:2:13: the method `.iter()` here");
    check_err(&k("    println!(\"{}\", n);"), &[], "k.rs:2:5: a macro call is not supported");
    check_err(&k("    foo(n);"), &[], "k.rs:2:5: call to `foo` is not supported");
    check_err(&k("    'o: loop { break 'o; }"), &[], "k.rs:2:5: a labelled loop is not supported");
    check_err(&k("    let x = a[1..];"), &[], "k.rs:2:15: a sub-slice is not supported");
    check_err(&k("    if let Some(x) = None::<u32> {}"), &[], "k.rs:2:8: `if let` is not supported");
    check_err("pub fn k(s: S) {}\n", &[], "k.rs:1:13: this parameter type is not supported");
    check_err("pub fn k(a: &[f32]) -> f32 { a[0] }\n", &[], "k.rs:1:24: a kernel that returns a value");
    check_err("pub fn k<T>(a: &[T]) {}\n", &[], "k.rs:1:9: a generic kernel is not supported");
    check_err("pub fn k(a: &[f32] {}\n", &[], "k.rs:1:");
}

#[test]
fn missing_values_name_the_parameter() {
    let src = "pub unsafe fn k(a: &[f32], n: usize) {\n    let i = thread::index_1d() as usize;\n    if i < n { let _ = a[i]; }\n}\n";
    check_err(src, &[], "k.rs:3:8: the branch condition depends on parameter `n`, which has no value");
    let len =
        "pub unsafe fn k(a: &mut [f32]) {\n    let i = thread::index_1d() as usize;\n    a[i % a.len()] = 1.0;\n}\n";
    check_err(len, &[], "k.rs:3:5: the address of `a[i % a.len()]` depends on parameter `a_len`, which has no value");
    check(len, &[("a_len", "64")], (0, 0, 8, 32));
}

#[test]
fn rust_semantics() {
    let k = |body: &str| {
        format!("pub unsafe fn k(a: &[f32], b: &mut [f32], p: *mut f32, n: usize) {{\n    let i = thread::index_1d() as usize;\n{body}\n}}\n")
    };
    // 4 blocks x 2 warps: 8 warps of 32 lanes.
    check(&k("    b[i] = a[i];"), &[], (8, 32, 8, 32));
    // An unsuffixed literal counter takes its type from `k < n` and `a[k]`. Slices do not
    // alias, so `b[i]` stays in a register through the loop (LICM, as the H200 showed for the
    // `__restrict__` CUDA twin): one load before and one store after.
    check(
        &k("    let mut k = 0;\n    while k < n { b[i] += a[k * 64 + i]; k += 1; }"),
        &[("n", "3")],
        (8 + 24, 32 + 96, 8, 32),
    );
    // `for` with a range, `step_by`, `rev`, `continue` and `break`.
    check(&k("    for j in 0..4 { if j == 1 { continue; } b[i] = a[j * 256 + i]; }"), &[], (24, 96, 24, 96));
    check(
        &k("    for j in (0..8).step_by(2) { b[i] = a[j * 256 + i]; }"),
        &[],
        // `b[i]` is written on every iteration and nothing else may alias it: one store after.
        (32, 128, 8, 32),
    );
    check(&k("    for j in (0..4).rev() { if j == 1 { break; } b[i] = a[j * 256 + i]; }"), &[], (16, 64, 16, 64));
    // Raw pointers: `*p.add(i)`, `.read()`, `.write()`, `.offset()`; a compound assignment is a
    // load and a store.
    check(&k("    *p.add(i) += 1.0;"), &[], (8, 32, 8, 32));
    check(&k("    p.add(2 * i).write(p.offset(-1).add(i + 1).read());"), &[], (8, 32, 8, 64));
    // `if` as a value, `unsafe` blocks, `min`, wrapping u32 arithmetic.
    check(&k("    let j = if i < 32 { i } else { 0 };\n    b[i] = unsafe { a[j] };"), &[], (8, 4 + 7, 8, 32));
    check(&k("    b[i.min(40)] = 0.0;"), &[], (0, 0, 8, 4 + 2 + 6));
    check(
        &k("    let w = (thread::thread_idx_x() as u32).wrapping_sub(1) as usize;\n    if w < 64 { b[w] = 0.0; }"),
        &[],
        (0, 0, 8, 36),
    );
    // The loads a thread already holds are not loaded again (slices alias nothing).
    check(&k("    let x = a[i];\n    b[i] = x + a[i];"), &[], (8, 32, 8, 32));
}
