//! Hostile and malformed inputs (issue 18), one test per class: values the kernel would see
//! differently from what the header shows, totals past 64 bits, runaway work, inputs that are
//! not source files, and the edges (digraphs, a missing brace, a line past the end, deep call
//! chains). Each must end in a sheet that is right or a clear refusal, never a wrong number.

use sector_analyzer::analyze::lower;
use sector_analyzer::explain::{explain, ExplainOptions};
use sector_analyzer::source::{DiskLoader, NoFiles};
use sector_analyzer::{analyze, analyze_source, AnalyzeOptions, ErrorKind, Input, SourceFiles};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn opts(grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

fn refusal(src: &str, o: &AnalyzeOptions) -> sector_analyzer::Diagnostic {
    match analyze_source("h.cu", src, o) {
        Ok(a) => panic!("expected a refusal, got a sheet: {:?}", a.sheet.totals),
        Err(f) => f.diagnostic,
    }
}

fn failure(input: Input, o: &AnalyzeOptions) -> sector_analyzer::analyze::Failure {
    match analyze(input, o, &DiskLoader) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => f,
    }
}

fn write_tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sector-estimate-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
    p
}

const ARGS: &str = "__global__ void k(int n, size_t m, unsigned char c, float* a) {\n    a[threadIdx.x] = 1.0f;\n}\n";

// ---- values as the kernel sees them ----

#[test]
fn an_arg_outside_its_type_is_refused_with_the_range() {
    let d = refusal(ARGS, &opts("1", "32", &[("n", "4294967312")]));
    assert_eq!(d.kind, ErrorKind::Usage);
    assert!(d.message.contains("`n` is int") && d.message.contains("-2147483648..=2147483647"), "{}", d.message);
    let d = refusal(ARGS, &opts("1", "32", &[("m", "-1")]));
    assert!(d.message.contains("0..=18446744073709551615"), "{}", d.message);
    let d = refusal(ARGS, &opts("1", "32", &[("c", "256")]));
    assert!(d.message.contains("0..=255"), "{}", d.message);
    // The ends of each range are fine.
    for (k, v) in [("n", "-2147483648"), ("n", "2147483647"), ("m", "18446744073709551615"), ("c", "255")] {
        analyze_source("h.cu", ARGS, &opts("1", "32", &[(k, v)]))
            .unwrap_or_else(|f| panic!("{k}={v}: {}", f.one_line()));
    }
}

#[test]
fn a_fill_its_elements_cannot_hold_is_refused() {
    let src = "__global__ void k(const unsigned char* idx, float* o) {\n    o[idx[threadIdx.x]] = 1.0f;\n}\n";
    let mut o = opts("1", "32", &[]);
    o.fills = vec![("idx".into(), sector_analyzer::Fill::parse("constant:300").unwrap())];
    let d = refusal(src, &o);
    assert!(d.message.contains("unsigned char, which holds 0..=255"), "{}", d.message);
    o.fills = vec![("idx".into(), sector_analyzer::Fill::parse("constant:255").unwrap())];
    // Every lane stores to element 255: one sector.
    assert_eq!(analyze_source("h.cu", src, &o).unwrap().sheet.totals.global_store.sectors, 1);
}

#[test]
fn a_misaligned_offset_is_refused() {
    let mut o = opts("1", "32", &[]);
    o.offsets = vec![("a".into(), 2)];
    let d = refusal(ARGS, &o);
    assert!(d.message.contains("misaligned 4-byte access"), "{}", d.message);
    // A multiple of the width is a real launch: 32 floats from byte 8 span sectors 0..4.
    o.offsets = vec![("a".into(), 8)];
    let s = analyze_source("h.cu", ARGS, &o).unwrap().sheet;
    assert_eq!(s.totals.global_store.sectors, 5);
}

#[test]
fn totals_past_64_bits_are_refused_not_wrapped() {
    // 2^31-1 x 65535 x 32 blocks of 1024 threads: about 2^62 lanes storing 8 bytes each is about
    // 2^65 bytes, more than a 64-bit count holds (the lane count itself fits).
    let src = "__global__ void k(double* o) {\n    o[threadIdx.x] = 1.0;\n}\n";
    let d = refusal(src, &opts("2147483647,65535,32", "1024", &[]));
    assert_eq!(d.kind, ErrorKind::Limit);
    assert!(d.message.contains("64-bit"), "{}", d.message);
}

// ---- runaway work ----

const SPIN: &str = "__global__ void k(float* o) {\n    int i = threadIdx.x;\n    while (1) { o[i] = 1.0f; }\n}\n";

#[test]
fn max_work_bounds_the_default_engine_and_the_fallback_together() {
    let mut o = opts("1", "32", &[]);
    o.max_work = 2_000_000;
    let t = Instant::now();
    let d = refusal(SPIN, &o);
    assert_eq!(d.kind, ErrorKind::Limit, "{}", d.message);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn a_deadline_refuses_within_about_a_second_of_crossing_it() {
    for engine in [sector_analyzer::analyze::EngineKind::Symbolic, sector_analyzer::analyze::EngineKind::Enumerate] {
        let mut o = opts("1000", "1024", &[]);
        o.engine = engine;
        o.max_work = u64::MAX;
        o.time_limit = Some(Duration::from_millis(300));
        let t = Instant::now();
        let d = refusal(SPIN, &o);
        assert!(d.message.contains("ran longer than"), "{}", d.message);
        assert!(t.elapsed() < Duration::from_millis(1300), "{engine:?}: {:?}", t.elapsed());
    }
}

// ---- inputs that are not source files ----

#[test]
fn devices_directories_and_huge_files_are_refused_before_reading() {
    let o = opts("1", "32", &[]);
    let d = failure(Input::File(std::path::Path::new("/dev/zero")), &o).diagnostic;
    assert!(d.message.contains("not a regular file"), "{}", d.message);
    let d = failure(Input::File(&std::env::temp_dir()), &o).diagnostic;
    assert!(d.message.contains("is a directory"), "{}", d.message);
    let inc = write_tmp("inc.cu", "#include \"/dev/zero\"\n__global__ void k(float* a) { a[threadIdx.x] = 1; }\n");
    let f = failure(Input::File(&inc), &o);
    assert!(f.diagnostic.message.contains("/dev/zero is not a regular file"), "{}", f.diagnostic.message);
    assert_eq!(f.diagnostic.span.map(|s| s.line), Some(1));
    let big = std::env::temp_dir().join(format!("sector-estimate-hostile-big-{}.cu", std::process::id()));
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(sector_analyzer::source::MAX_SOURCE_BYTES + 1).unwrap();
    let d = failure(Input::File(&big), &o).diagnostic;
    let _ = std::fs::remove_file(&big);
    assert!(d.message.contains("MiB are refused"), "{}", d.message);
}

// ---- edges ----

#[test]
fn digraphs_are_the_punctuators_they_spell() {
    let plain = "__global__ void k(float* a) {\n    int t[2] = {0, 1};\n    a[threadIdx.x + t[1]] = 1.0f;\n}\n";
    let digraph =
        "__global__ void k(float* a) <%\n    int t<:2:> = <%0, 1%>;\n    a<:threadIdx.x + t<:1:>:> = 1.0f;\n%>\n";
    let o = opts("1", "32", &[]);
    let a = analyze_source("h.cu", plain, &o).unwrap().sheet;
    let b = analyze_source("h.cu", digraph, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(a.totals.global_store.requests, b.totals.global_store.requests);
    assert_eq!(b.instructions[0].line, 3);
}

#[test]
fn an_unclosed_brace_is_a_source_error_with_its_line() {
    let src = "__global__ void k(float* a) {\n    if (threadIdx.x < 4) {\n        a[threadIdx.x] = 1.0f;\n}\n";
    let d = refusal(src, &opts("1", "32", &[]));
    assert_eq!(d.kind, ErrorKind::Syntax);
    assert!(d.message.contains("missing `}`"), "{}", d.message);
    assert!(d.span.is_some());
}

#[test]
fn a_line_past_the_end_says_so() {
    let p = write_tmp("six.cu", "__global__ void k(float* a) {\n    a[threadIdx.x] = 1.0f;\n}\n");
    let opts = ExplainOptions { analyze: opts("1", "32", &[]), line: 9999, ..Default::default() };
    let Err(f) = explain(Input::File(&p), &opts, &DiskLoader) else { panic!("expected a refusal") };
    let d = f.diagnostic;
    assert!(d.message.contains("has 3 lines"), "{}", d.message);
}

#[test]
fn a_chain_of_17_calls_is_not_recursion_but_recursion_is_refused() {
    let mut src = String::from("__device__ float f17(const float* a, int i) { return a[i]; }\n");
    for n in (0..17).rev() {
        src.push_str(&format!("__device__ float f{n}(const float* a, int i) {{ return f{}(a, i); }}\n", n + 1));
    }
    src.push_str("__global__ void k(const float* a, float* o) {\n    int i = threadIdx.x;\n    o[i] = f0(a, i);\n}\n");
    let s = analyze_source("h.cu", &src, &opts("1", "32", &[])).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(s.totals.global_load.requests, 1);
    let rec = "__device__ float g(const float* a, int i);\n__device__ float f(const float* a, int i) { return i > 0 ? a[i] : g(a, i + 1); }\n__device__ float g(const float* a, int i) { return f(a, i - 1); }\n__global__ void k(const float* a, float* o) {\n    o[threadIdx.x] = f(a, 3);\n}\n";
    let d = refusal(rec, &opts("1", "32", &[]));
    assert!(d.message.contains("recursion") || d.message.contains("inside a condition"), "{}", d.message);
    let rec = "__device__ float f(const float* a, int i) {\n    float x = f(a, i - 1);\n    return a[i] + x;\n}\n__global__ void k(const float* a, float* o) {\n    o[threadIdx.x] = f(a, 3);\n}\n";
    let d = refusal(rec, &opts("1", "32", &[]));
    assert!(d.message.contains("recursion: `f` calls itself"), "{}", d.message);
}

// ---- the IR (issue 13): one load per address, the target bound once ----

#[test]
fn lowering_binds_a_read_modify_write_target_once() {
    let src =
        "__global__ void k(volatile int* idx, float* out) {\n    int i = threadIdx.x;\n    out[idx[i]] += 1.0f;\n}\n";
    let mut files = SourceFiles::default();
    let m =
        lower(&Input::Source { name: "h.cu", text: src }, &AnalyzeOptions::default(), &NoFiles, &mut files).unwrap();
    let ir = sector_analyzer::ir::print::kernel(&m.kernels[0]);
    let body = &ir[ir.find('{').unwrap()..];
    assert_eq!(
        body,
        "{\n  l0 = i32(threadIdx.x)\n  l1 = (p1 +B (i64(load#0[(p0 +B (i64(l0) *.i64 4i64))]) *.i64 4i64))\n  store#2[l1] = (load#1[l1] +.f 1.0f)\n}\n"
    );
}

#[test]
fn a_large_unit_keeps_its_lines_when_unreached_code_is_not_parsed() {
    // 6,000 unused helpers (over 256 KiB, where unreached functions are blanked before parsing),
    // one used helper, then the kernel: its rows keep their lines.
    let mut src = String::new();
    for n in 0..6000 {
        src.push_str(&format!("__device__ float f{n}(float x) {{ return x * 2.0f + 1.0f; /* }} */ }}\n"));
    }
    src.push_str("__device__ int at(int i) { return i + 1; }\n");
    src.push_str("__global__ void k(float* a) {\n    a[at(threadIdx.x)] = f7(1.0f);\n}\n");
    assert!(src.len() > 256 << 10);
    let s = analyze_source("h.cu", &src, &opts("1", "32", &[])).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(s.instructions.len(), 1);
    assert_eq!((s.instructions[0].line, s.instructions[0].column), (6003, 5));
    // Bytes 4..131: five sectors.
    assert_eq!(s.totals.global_store.sectors, 5);
}

#[test]
fn a_shared_array_in_a_const_initialiser_is_read_not_a_crash() {
    // Once a panic: the `const` initialiser was tried as a constant with no shared arrays known.
    let src = "__global__ void k(int *out) {\n  __shared__ int s[256];\n  s[threadIdx.x] = threadIdx.x;\n  __syncthreads();\n  const int v = s[255 - threadIdx.x];\n  out[blockIdx.x * blockDim.x + threadIdx.x] = v;\n}\n";
    let a = analyze_source("h.cu", src, &opts("2", "256", &[])).unwrap();
    // 2 blocks of 8 warps: each warp stores 128 consecutive bytes (4 sectors) and reads shared once.
    assert_eq!(a.sheet.totals.global_store.requests, 16);
    assert_eq!(a.sheet.totals.global_store.sectors, 64);
    assert_eq!(a.sheet.totals.shared_load.requests, 16);
    assert_eq!(a.sheet.totals.shared_store.requests, 16);
}
