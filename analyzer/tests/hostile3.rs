//! Hostile inputs, round 3 (issue 29): command-line numbers near 2^64, readers that must stop
//! before they read (devices, FIFOs, huge files), C's integer types in the host code's launch,
//! `#line`, overloaded kernels, flags given twice, UTF-16/32 and CR-only sources, sweeps and
//! checks bounded in time. Every expected number is worked out by hand in the comment beside it.

use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, analyze_source, AnalyzeOptions, Input};
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

fn bin(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sector-estimate")).args(args).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("sector-estimate-hostile3-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir().join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

fn opts(grid: &str, block: &str) -> AnalyzeOptions {
    AnalyzeOptions { grid: grid.into(), block: block.into(), ..Default::default() }
}

const STORE: &str = "__global__ void k(float* a) {\n    a[threadIdx.x] = 1.0f;\n}\n";

// ---- (1) durations and counts from the command line ----

#[test]
fn a_time_limit_near_2_to_the_64_is_a_usage_error_in_every_subcommand() {
    let f = write("store.cu", STORE.as_bytes());
    let f = f.to_str().unwrap();
    let huge = "18446744073709551615";
    for args in [
        vec!["analyze", f, "--grid", "1", "--block", "32", "--time-limit", huge],
        vec!["explain", f, "--grid", "1", "--block", "32", "--line", "2", "--time-limit", huge],
        vec!["sweep", f, "--grid", "1", "--block", "32,64", "--time-limit", huge],
        vec!["sweep", f, "--grid", "1", "--block", "32,64", "--total-time-limit", huge],
        vec!["check", "--config", "x.toml", "--time-limit", huge],
    ] {
        let o = bin(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("time-limit 18446744073709551615: at most"), "{args:?}: {}", stderr(&o));
    }
    // The library takes any duration: one past what `Instant` holds is no deadline, no panic.
    let mut o = opts("1", "32");
    o.time_limit = Some(Duration::from_secs(u64::MAX));
    // One warp stores 32 consecutive floats from a 256-byte aligned base: 128 bytes, 4 sectors.
    assert_eq!(analyze_source("k.cu", STORE, &o).unwrap().sheet.totals.global_store.sectors, 4);
}

#[test]
fn other_counts_are_checked() {
    let f = write("store2.cu", STORE.as_bytes());
    let f = f.to_str().unwrap();
    for (args, want) in [
        (vec!["analyze", f, "--grid", "1", "--block", "32", "--max-work", "18446744073709551615"], "--max-work"),
        (vec!["analyze", f, "--grid", "1", "--block", "32", "--max-work", "0"], "--max-work 0"),
        (vec!["sweep", f, "--grid", "1", "--block", "32", "--jobs", "18446744073709551615"], "--jobs"),
        (vec!["explain", f, "--grid", "1", "--block", "32", "--line", "2", "--warp", "4294967295"], "--warp"),
    ] {
        let o = bin(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{args:?}: {}", stderr(&o));
    }
    // A geometric range whose next value passes 2^127 stops instead of overflowing: 1 and
    // 2^64-1 are the values (the second is no block size: that cell fails, the first runs).
    let o = bin(&["sweep", f, "--grid", "1", "--block", "1..18446744073709551615:x18446744073709551615"]);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
}

#[test]
fn shared_bytes_near_2_to_the_64_do_not_wrap() {
    let src = "__global__ void k(float* a) {\n    __shared__ float s[256];\n    extern __shared__ float d[];\n    s[threadIdx.x] = 1.0f;\n    d[threadIdx.x] = s[threadIdx.x];\n    a[threadIdx.x] = d[threadIdx.x];\n}\n";
    let mut o = opts("1", "32");
    o.shared_bytes = u64::MAX;
    let f = analyze_source("k.cu", src, &o).err().expect("a refusal");
    // 256 floats = 1024 static bytes; 1024 + (2^64 - 1) = 18446744073709551616 + 1023
    // = 18446744073709552639, shown whole (not wrapped to 1023).
    assert!(f.diagnostic.message.contains("18446744073709552639 bytes of shared memory"), "{}", f.diagnostic.message);
}

// ---- (2) readers bounded before they read ----

#[test]
fn devices_fifos_and_huge_files_are_refused_by_every_reader() {
    let started = Instant::now();
    // check --config on a device.
    let o = bin(&["check", "--config", "/dev/zero"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    // A config whose manifest is a device.
    let src = write("m.cu", STORE.as_bytes());
    let cfg = write(
        "dev.toml",
        format!(
            "[[kernel]]\nfile = \"{}\"\nmanifest = \"/dev/zero\"\nbudgets = {{ max_sectors_per_request = 4 }}\n",
            src.display()
        )
        .as_bytes(),
    );
    let o = bin(&["check", "--config", cfg.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/dev/zero is not a regular file"), "{}", stderr(&o));
    // A FIFO nobody writes to: opening it would wait forever.
    let fifo = dir().join("fifo.toml");
    let _ = std::fs::remove_file(&fifo);
    if Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
        let o = bin(&["check", "--config", fifo.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
        let d = sector_analyzer::source::read_source(&fifo).unwrap_err();
        assert!(d.contains("not a regular file"), "{d}");
    }
    // A config of 17 MiB (sparse: nothing written) is refused from its size.
    let big = dir().join("big.toml");
    std::fs::File::create(&big).unwrap().set_len(17 << 20).unwrap();
    let o = bin(&["check", "--config", big.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("config files over 16 MiB are refused"), "{}", stderr(&o));
    // An include of a device.
    let inc = write("inc.cu", b"#include \"/dev/zero\"\n__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n");
    let f = analyze(Input::File(&inc), &opts("1", "32"), &DiskLoader).err().expect("a refusal");
    assert!(f.diagnostic.message.contains("not a regular file"), "{}", f.diagnostic.message);
    assert!(started.elapsed() < Duration::from_secs(30), "no reader may wait or read on");
}

// ---- (3) numbers: `#line` ----

#[test]
fn line_follows_hash_line() {
    // The line after `#line 100` is line 100: a[threadIdx.x * 100] puts lanes 400 bytes apart,
    // each in its own sector: 32 sectors for the warp. Without `#line` __LINE__ would be 3
    // (12 bytes apart, 31 * 12 + 4 = 376 bytes: 12 sectors).
    let src = "__global__ void k(float* a) {\n#line 100\n    a[threadIdx.x * __LINE__] = 1.0f;\n}\n";
    let a = analyze_source("k.cu", src, &opts("1", "32")).unwrap();
    assert_eq!(a.sheet.totals.global_store.sectors, 32);
    // Macros in `#line` are expanded; a line marker `# N "file"` counts the same.
    let src =
        "#define L 200\n__global__ void k(float* a) {\n#line L\n    a[threadIdx.x * (__LINE__ - 192)] = 1.0f;\n}\n";
    // __LINE__ = 200, so 8 floats = 32 bytes apart: one sector per lane, 32 sectors.
    assert_eq!(analyze_source("k.cu", src, &opts("1", "32")).unwrap().sheet.totals.global_store.sectors, 32);
    let src = "__global__ void k(float* a) {\n# 1 \"x.cu\"\n    a[threadIdx.x * __LINE__] = 1.0f;\n}\n";
    // __LINE__ = 1: consecutive floats, 128 bytes: 4 sectors.
    assert_eq!(analyze_source("k.cu", src, &opts("1", "32")).unwrap().sheet.totals.global_store.sectors, 4);
}

// ---- (4) C's integer types in the host code's launch ----

fn site(src: &str) -> Result<sector_analyzer::Analysis, String> {
    let f = write("site.cu", src.as_bytes());
    let o = AnalyzeOptions { grid: String::new(), block: String::new(), ..Default::default() };
    let (o, _) = sector_analyzer::analyze::apply_launch_site(Input::File(&f), &o, None, &DiskLoader)
        .map_err(|f| f.one_line())?;
    analyze(Input::File(&f), &o, &DiskLoader).map_err(|f| f.one_line())
}

#[test]
fn launch_site_uses_cs_integer_types() {
    // 256 + 32 = 288 in int; `unsigned char` keeps 288 mod 256 = 32: one warp of 32 threads
    // storing consecutive floats, 128 bytes, 4 sectors (288 threads would be 9 warps: 36).
    let src = format!(
        "{STORE}int main() {{\n    float* a;\n    const unsigned char b = 256 + 32;\n    k<<<1, b>>>(a);\n}}\n"
    );
    let a = site(&src).unwrap();
    assert_eq!(a.sheet.launch.block, [32, 1, 1]);
    assert_eq!(a.sheet.totals.global_store.sectors, 4);
    // 65536u * 256u = 2^24 fits; 65536u * 65536u = 2^32 wraps to 0 in unsigned int: a grid
    // of 0 blocks, which CUDA refuses (not 16,777,216 nor 4,294,967,296 blocks).
    let src = format!("{STORE}int main() {{\n    float* a;\n    unsigned n = 65536;\n    dim3 grid(n * 65536u);\n    k<<<grid, 32>>>(a);\n}}\n");
    let e = site(&src).err().expect("a refusal");
    assert!(e.contains("must be at least 1"), "{e}");
    // A dim3 component of a negative int is 2^32 - 1 in unsigned int: past the 2^31 - 1 limit.
    let src = format!("{STORE}int main() {{\n    float* a;\n    int m = -1;\n    k<<<m, 32>>>(a);\n}}\n");
    let e = site(&src).err().expect("a refusal");
    assert!(e.contains("4294967295"), "{e}");
}

// ---- (5) sweeps and checks bounded in total time ----

#[test]
fn a_sweep_stops_at_its_total_time_limit() {
    use sector_analyzer::sweep::{parse_values, sweep_within, SweepOptions};
    let base = opts("1", "32");
    let opts = SweepOptions { base, args: Vec::new(), blocks: parse_values("--block ", "32..1024:+32", true).unwrap() };
    let started = Instant::now();
    let r = sweep_within(Input::Source { name: "k.cu", text: STORE }, &opts, &DiskLoader, &|| {}, Some(Duration::ZERO))
        .unwrap();
    // 32, 64, ..., 1024: 32 configurations, none started.
    assert_eq!(r.cells.len(), 32);
    assert!(r.cells.iter().all(|c| c.error.as_deref().is_some_and(|e| e.contains("total time limit"))));
    assert!(started.elapsed() < Duration::from_secs(5));
}

// ---- (6) overloaded kernels, flags twice ----

const OVERLOADS: &str = "__global__ void scale(float* a, int n) {\n    a[threadIdx.x] = 1.0f;\n}\n__global__ void scale(double* a, int n) {\n    a[threadIdx.x] = 1.0;\n}\n";

#[test]
fn overloaded_kernels_are_picked_by_signature() {
    let mut o = opts("1", "32");
    o.kernel = Some("scale".into());
    let e = analyze_source("o.cu", OVERLOADS, &o).err().expect("ambiguous");
    assert!(e.diagnostic.message.contains("2 overloaded kernels"), "{}", e.diagnostic.message);
    assert!(
        e.diagnostic.message.contains("scale(float*, int)") && e.diagnostic.message.contains("scale(double*, int)")
    );
    // 32 lanes x 8-byte doubles = 256 bytes: 8 sectors (floats would be 4).
    o.kernel = Some("scale(double *, int)".into());
    assert_eq!(analyze_source("o.cu", OVERLOADS, &o).unwrap().sheet.totals.global_store.sectors, 8);
    o.kernel = Some("scale(float*,int)".into());
    assert_eq!(analyze_source("o.cu", OVERLOADS, &o).unwrap().sheet.totals.global_store.sectors, 4);
    o.kernel = Some("scale(int*, int)".into());
    assert!(analyze_source("o.cu", OVERLOADS, &o).is_err());
    // `kernels` says how to pick each.
    let f = write("o.cu", OVERLOADS.as_bytes());
    let out = bin(&["kernels", f.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("--kernel 'scale(double*, int)'"), "{text}");
}

#[test]
fn a_flag_given_twice_with_different_values_is_an_error() {
    let src =
        write("n.cu", b"__global__ void k(float* a, int n) {\n    if (threadIdx.x < n) a[threadIdx.x] = 1.0f;\n}\n");
    let f = src.to_str().unwrap();
    let o = bin(&["analyze", f, "--grid", "1", "--block", "32", "--arg", "n=32", "--arg", "n=64"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--arg n is given twice with different values"), "{}", stderr(&o));
    // The same value twice is no conflict.
    let o = bin(&["analyze", f, "--grid", "1", "--block", "32", "--arg", "n=32", "--arg", "n=32"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = bin(&["sweep", f, "--grid", "1", "--block", "32", "--arg", "n=1,2", "--arg", "n=3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

// ---- (7) encodings and line endings ----

#[test]
fn utf16_and_utf32_are_named() {
    let utf16le: Vec<u8> = [0xFF, 0xFE].into_iter().chain(STORE.encode_utf16().flat_map(|u| u.to_le_bytes())).collect();
    let utf16be_bare: Vec<u8> = STORE.encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
    let utf32le: Vec<u8> =
        [0xFF, 0xFE, 0, 0].into_iter().chain(STORE.chars().flat_map(|c| (c as u32).to_le_bytes())).collect();
    for (name, bytes, want) in
        [("a16.cu", utf16le, "UTF-16"), ("b16.cu", utf16be_bare, "UTF-16"), ("c32.cu", utf32le, "UTF-32")]
    {
        let p = write(name, &bytes);
        let f = analyze(Input::File(&p), &opts("1", "32"), &DiskLoader).err().expect("a refusal");
        assert!(f.diagnostic.message.contains(want), "{name}: {}", f.diagnostic.message);
        let o = bin(&["kernels", p.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(want) && stderr(&o).contains("iconv"), "{name}: {}", stderr(&o));
    }
}

#[test]
fn cr_only_line_endings_are_lines() {
    // With CR as the line end, `a[...]` is on line 3, so __LINE__ is 3: lanes 12 bytes apart,
    // 31 * 12 + 4 = 376 bytes from a sector boundary: sectors 0..=11, 12 sectors. Read as one
    // line, __LINE__ would be 1: 4 sectors.
    let src = "__global__ void k(float* a) {\r\r    a[threadIdx.x * __LINE__] = 1.0f;\r}\r";
    let p = write("cr.cu", src.as_bytes());
    let a = analyze(Input::File(&p), &opts("1", "32"), &DiskLoader).unwrap();
    assert_eq!(a.sheet.totals.global_store.sectors, 12);
    assert_eq!(a.sheet.instructions[0].line, 3);
    assert_eq!(analyze_source("cr.cu", src, &opts("1", "32")).unwrap().sheet.totals.global_store.sectors, 12);
}

// ---- the time limit covers the fills ----

#[test]
fn a_permutation_is_not_built_past_the_deadline() {
    let f = sector_analyzer::Fill::parse("permutation:268435456:1").unwrap();
    // A deadline already passed: given up before the first million elements.
    let started = Instant::now();
    assert_eq!(f.table_until(Some(Instant::now() - Duration::from_millis(1))), None);
    assert!(started.elapsed() < Duration::from_secs(1));
}

// ---- (3) numbers: structures of 2^32 bytes ----

#[test]
fn structures_of_2_to_the_32_bytes_and_more_are_counted_in_64_bits() {
    let one = |src: &str| analyze_source("b.cu", src, &opts("1", "32")).map(|a| a.sheet.totals.global_store.sectors);
    // `float v[1 << 30]` is 2^30 * 4 = 2^32 bytes: lane l stores at l * 2^32, every lane in
    // its own sector: 32 (in 32 bits the size would wrap to 0 and give 1 sector, or to a
    // 4-byte element and give 4).
    let big = "struct Big { float v[1 << 30]; };\n__global__ void k(Big* b) {\n    b[threadIdx.x].v[0] = 1.0f;\n}\n";
    assert_eq!(one(big).unwrap(), 32);
    // 2^61 floats = 2^63 bytes: lane l at l * 2^63 mod 2^64, so even lanes at the base and
    // odd lanes 2^63 bytes on (64-bit addresses wrap): 2 sectors.
    assert_eq!(one(&big.replace("1 << 30", "1L << 61")).unwrap(), 2);
    // 2^62 - 1 floats = 2^64 - 4 bytes, the largest nvcc takes: lane l at -4 l mod 2^64,
    // i.e. from base - 124 to base + 3 (base 256-aligned): sectors base-128 .. base: 5.
    assert_eq!(one(&big.replace("1 << 30", "(1L << 62) - 1")).unwrap(), 5);
    // 2^62 floats = 2^64 bytes: nvcc says "array is too large"; refused, never wrapped.
    let f = analyze_source("b.cu", &big.replace("1 << 30", "1L << 62"), &opts("1", "32")).err().expect("a refusal");
    assert!(f.diagnostic.message.contains("structure `Big` is 2^64 bytes or more"), "{}", f.diagnostic.message);
    // 2^63 + (2^63 - 1) chars, then an int at offset 2^64 - 1 rounded up to 2^64: nvcc says
    // "class is too large"; refused.
    let over = "struct Big { char v[0x8000000000000000UL]; char w[0x7fffffffffffffffUL]; int c; };\n__global__ void k(Big* b) {\n    b[threadIdx.x].c = 1;\n}\n";
    assert!(one(over).is_err());
    // A member past 2^32: `j` at 4 + 2^32 (after `int a` and one 2^32-byte `In`, 4-aligned):
    // 32 consecutive floats from 4 bytes past a sector boundary (2^32 + 4 = 4 mod 32): bytes
    // 4..132 of the 256-aligned base's sectors 0..4: 5 sectors.
    let nested = "struct In { float v[1 << 30]; };\nstruct Big { int a; In i; In j; };\n__global__ void k(Big* b) {\n    b[0].j.v[threadIdx.x] = 1.0f;\n}\n";
    assert_eq!(one(nested).unwrap(), 5);
    // sizeof(Big) = 2^32 (unsigned long): (2^32 >> 29) = 8 floats = 32 bytes apart: 32
    // sectors; (unsigned)(2^32 + 8) = 8: the same.
    for e in ["sizeof(Big) >> 29", "(unsigned)(sizeof(Big) + 8)"] {
        let src = format!("struct Big {{ float v[1 << 30]; }};\n__global__ void k(float* a) {{\n    a[threadIdx.x * ({e})] = 1.0f;\n}}\n");
        assert_eq!(one(&src).unwrap(), 32, "{e}");
    }
}

#[test]
fn kernel_parameters_past_cudas_32764_bytes_are_refused() {
    // 40000 bytes of structure, then a pointer at 40000: 40008 bytes, as nvcc counts them
    // ("Formal parameter space overflowed (40008 bytes required, max 32764 bytes allowed)").
    let src =
        "struct Big { float v[10000]; };\n__global__ void k(Big b, float* a) {\n    a[threadIdx.x] = b.v[0];\n}\n";
    let f = analyze_source("p.cu", src, &opts("1", "32")).err().expect("a refusal");
    assert!(
        f.diagnostic.message.contains("parameters take 40008 bytes; CUDA allows at most 32764"),
        "{}",
        f.diagnostic.message
    );
    // 8189 floats = 32756 bytes, the pointer at 32760 (8-aligned): 32768, past it too.
    let f = analyze_source("p.cu", &src.replace("10000", "8189"), &opts("1", "32")).err().expect("a refusal");
    assert!(f.diagnostic.message.contains("32768 bytes"), "{}", f.diagnostic.message);
    // 8188 floats = 32752 bytes + 8 = 32760: fits; one warp reads b.v[0] from the parameter
    // (no global load) and stores 32 consecutive floats: 4 sectors.
    let a = analyze_source("p.cu", &src.replace("10000", "8188"), &opts("1", "32")).unwrap();
    assert_eq!(a.sheet.totals.global_store.sectors, 4);
}
