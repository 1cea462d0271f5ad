//! The command line as users and scripts see it: exit codes, stdout, and errors that name
//! `file:line:column` and what is missing.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sector-estimate"))
}

fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples")
}

fn write_tmp(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sector-estimate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
    p
}

fn analyze(file: &PathBuf, extra: &[&str]) -> Output {
    bin().arg("analyze").arg(file).args(extra).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn json_on_stdout_has_the_contract_keys() {
    let o = analyze(
        &examples().join("vec_add.cu"),
        &["--kernel", "vec_add", "--grid", "4096", "--block", "256", "--arg", "n=1048576", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON and nothing else");
    assert_eq!(v["kernel"], "vec_add");
    assert_eq!(v["launch"]["grid"], serde_json::json!([4096, 1, 1]));
    assert_eq!(v["launch"]["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(v["launch"]["args"]["n"], 1048576);
    for k in [
        "line",
        "column",
        "text",
        "space",
        "op",
        "width",
        "requests",
        "sectors",
        "ideal_sectors",
        "logical_bytes",
        "assumptions",
    ] {
        assert!(v["instructions"][0].get(k).is_some(), "instruction key {k}");
    }
    assert_eq!(v["totals"]["global_load"]["sectors"], 262144);
    assert_eq!(v["totals"]["global_store"]["requests"], 32768);
    for k in ["requests", "wavefronts", "bank_conflicts"] {
        assert!(v["totals"]["shared_load"].get(k).is_some());
        assert!(v["totals"]["shared_store"].get(k).is_some());
    }
    for k in [
        "l1_hit_sectors",
        "l2_read_sectors",
        "l2_write_sectors",
        "dram_read_sectors",
        "dram_write_sectors",
        "assumptions",
    ] {
        assert!(v["boundaries"].get(k).is_some(), "boundaries key {k}");
    }
    assert!(v["boundaries"]["bounds"]["dram_read_sectors"]["min"].is_u64());
    assert!(v["assumptions"].is_array());
}

#[test]
fn kernel_may_be_left_out_when_the_file_has_one() {
    let p = write_tmp("one.cu", b"__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\n");
    let o = analyze(&p, &["--grid", "1", "--block", "32", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn grid_expressions_use_the_arguments() {
    let o = analyze(
        &examples().join("vec_add.cu"),
        &["--kernel", "vec_add", "--grid", "ceil(n/256)", "--block", "256", "--arg", "n=1000005", "--format", "json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["launch"]["grid"][0], 3907);
}

#[test]
fn a_missing_argument_names_the_parameter_and_the_line() {
    let o = analyze(&examples().join("vec_add.cu"), &["--kernel", "vec_add", "--grid", "4096", "--block", "256"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("vec_add.cu:28:"), "{e}");
    assert!(e.contains("`n`") && e.contains("--arg n="), "{e}");
}

#[test]
fn unsupported_constructs_are_errors_at_their_place() {
    // An atomic whose result is unused is a reduction of its own: 32 consecutive ints, 4 sectors.
    let p = write_tmp("atomic.cu", b"__global__ void k(int* a) {\n  atomicAdd(&a[threadIdx.x], 1);\n}\n");
    let o = analyze(&p, &["--grid", "1", "--block", "32", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["totals"]["global_red"]["requests"], 1);
    assert_eq!(v["totals"]["global_red"]["sectors"], 4);
    assert_eq!(v["totals"]["global_load"]["requests"], 0);
    // Inline PTX that reads another block's shared memory (a cluster's) is refused by name, at its place.
    let p = write_tmp(
        "asm.cu",
        b"__global__ void k(float* a) {\n  float v; asm(\"ld.shared::cluster.f32 %0, [%1];\" : \"=f\"(v) : \"r\"(0));\n  a[threadIdx.x] = v;\n}\n",
    );
    // (`--via source`: by default a toolkit, where one is found, would count the SASS instead.)
    let o = analyze(&p, &["--grid", "1", "--block", "32", "--via", "source"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("asm.cu:2:") && stderr(&o).contains("ld.shared"), "{}", stderr(&o));
    // Inline PTX that moves no memory never blocks a kernel.
    let p = write_tmp("trap.cu", b"__global__ void k(int* a) {\n  asm(\"trap;\");\n  a[threadIdx.x] = 1;\n}\n");
    let o = analyze(&p, &["--grid", "1", "--block", "32"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn invalid_launches_are_refused() {
    let f = examples().join("vec_add.cu");
    for (grid, block) in
        [("0", "256"), ("1", "1025"), ("1", "1,1,65"), ("2147483648", "32"), ("1,65536", "32"), ("1,1,65536", "32")]
    {
        let o = analyze(&f, &["--kernel", "vec_add", "--grid", grid, "--block", block, "--arg", "n=4"]);
        assert_eq!(o.status.code(), Some(1), "grid {grid} block {block}: {}", stderr(&o));
        assert!(!stderr(&o).is_empty());
    }
}

#[test]
fn bad_usage_exits_2() {
    let f = examples().join("vec_add.cu");
    let o = analyze(&f, &["--kernel", "vec_add", "--block", "256"]);
    assert_eq!(o.status.code(), Some(2), "missing --grid");
    let o = analyze(&f, &["--kernel", "nope", "--grid", "1", "--block", "32"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("vec_add"), "lists the kernels: {}", stderr(&o));
    let o = analyze(&f, &["--kernel", "vec_add", "--grid", "1", "--block", "32", "--arg", "m=3"]);
    assert_eq!(o.status.code(), Some(2));
    let o = analyze(&f, &["--kernel", "vec_add", "--grid", "1", "--block", "32", "--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn hostile_inputs_never_panic() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty.cu", Vec::new()),
        ("binary.cu", (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect()),
        ("utf8.cu", vec![0xff, 0xfe, b'_', b'_', 0xc3, 0x28, b'\n']),
        ("unclosed.cu", b"__global__ void k(float* a) { if (threadIdx.x < 3) { a[0] = 1;".to_vec()),
        ("undefined.cu", b"__global__ void k(float* a) { a[undefined_name] = 1; }".to_vec()),
        ("recursive_macro.cu", b"#define A B\n#define B A\n__global__ void k(float* a) { a[A] = 1; }".to_vec()),
        ("nomem.cu", b"__global__ void k(int n) { int x = n * 2; }".to_vec()),
        (
            "deep.cu",
            format!("__global__ void k(float* a) {{ a[{}0{}] = 1; }}", "(".repeat(5000), ")".repeat(5000)).into_bytes(),
        ),
        ("divzero.cu", b"__global__ void k(float* a, int n) {\n  a[threadIdx.x / n] = 1;\n}".to_vec()),
    ];
    for (name, bytes) in cases {
        let p = write_tmp(name, &bytes);
        let o = analyze(&p, &["--grid", "1", "--block", "32", "--arg", "n=0"]);
        let code = o.status.code();
        assert!(code == Some(0) || code == Some(1) || code == Some(2), "{name}: {code:?} {}", stderr(&o));
        if code != Some(0) {
            assert!(stderr(&o).contains(name), "{name}: the message names the file: {}", stderr(&o));
        }
    }
}

#[test]
fn division_by_zero_in_an_index_is_an_error_at_that_line() {
    let p = write_tmp("dz.cu", b"__global__ void k(float* a, int n) {\n  a[threadIdx.x / n] = 1;\n}\n");
    let o = analyze(&p, &["--grid", "1", "--block", "32", "--arg", "n=0"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("dz.cu:2:"), "{}", stderr(&o));
}

#[test]
fn emit_dot_prints_the_control_flow_graph() {
    let o = analyze(
        &examples().join("loops.cu"),
        &["--kernel", "chunk_sum", "--grid", "1", "--block", "32", "--emit", "dot"],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.starts_with("digraph") && out.contains("Back"), "{out}");
}

#[test]
fn emit_ir_of_a_refused_kernel_gives_its_error_not_no_such_kernel() {
    // Once "Error: no such kernel" (a usage error) for a kernel that exists but is refused.
    let p = write_tmp("refused.cu", b"__global__ void k(float *a) {\n  float v; asm(\"ld.shared::cluster.f32 %0, [%1];\" : \"=f\"(v) : \"r\"(0));\n  a[threadIdx.x] = v;\n}\n");
    for args in [&["--emit", "ir"][..], &["--kernel", "k", "--emit", "ir"][..]] {
        let o = analyze(&p, args);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(stderr(&o).contains("refused.cu:2:") && stderr(&o).contains("ld.shared"), "{}", stderr(&o));
    }
    // A kernel the file does not have is still a usage error.
    let o = analyze(&p, &["--kernel", "nope", "--emit", "ir"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn kernels_lists_the_global_functions() {
    let o = bin().arg("kernels").arg(examples().join("transpose_tiled.cu")).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("transpose_tiled(") && out.contains("transpose_tiled_unpadded("), "{out}");
}

#[test]
fn launch_site_takes_the_launch_from_the_files_own_call() {
    // 4096 blocks of 256 threads over n = 2^20 floats: 32,768 warps, one load and one store of
    // 4 sectors each; T and BS come from the template arguments, n through `int n = N;`.
    let src = b"#define N (1024 * 1024)\ntemplate <typename T, int BS>\n__global__ void scale(const T *in, T *out, int n) {\n    int i = blockIdx.x * BS + threadIdx.x;\n    if (i < n) out[i] = 2 * in[i];\n}\nint main() {\n    float *a, *b;\n    int threads = 256;\n    int n = N;\n    dim3 grid((n + threads - 1) / threads);\n    scale<float, 256><<<grid, threads>>>(a, b, n);\n}\n";
    let f = write_tmp("site.cu", src);
    let o = analyze(&f, &["--launch-site", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["launch"]["grid"][0], 4096);
    assert_eq!(v["launch"]["block"][0], 256);
    assert_eq!(v["totals"]["global_load"]["requests"], 32768);
    assert_eq!(v["totals"]["global_load"]["sectors"], 131072);
    assert!(v["assumptions"].to_string().contains("line 12"));
    // No launch on that line: a usage error that says so.
    let o = analyze(&f, &["--launch-site", "3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("no `<<<...>>>` launch on line 3"), "{}", stderr(&o));
}
