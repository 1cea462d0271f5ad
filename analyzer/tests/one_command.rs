//! Issue 28, "a sheet in one try" and "a sheet read in ten seconds": the kinds of file a new user
//! brings each give a sheet in one command (no flags: the file's only launch is read), and the
//! default sheet is short. The expected counts are worked out by hand in each test's comment.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("sector-estimate-one-command-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_tmp(name: &str, text: &str) -> PathBuf {
    let p = dir().join(name);
    std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
    p
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_sector-estimate"));
    c.env_remove("NO_COLOR").env_remove("TERM");
    c
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn analyze(file: &Path, extra: &[&str]) -> Output {
    bin().arg("analyze").arg(file).args(extra).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// NVIDIA's transpose sample as it is written: file-scope `const int`s and `dim3` variables.
const SAMPLE: &str = r#"#include <cstdio>
const int TILE_DIM = 32;
const int BLOCK_ROWS = 8;

__global__ void copy(float *odata, const float *idata)
{
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  int width = gridDim.x * TILE_DIM;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    odata[(y + j) * width + x] = idata[(y + j) * width + x];
}

int main()
{
  const int nx = 1024, ny = 512;
  dim3 dimGrid(nx / TILE_DIM, ny / TILE_DIM, 1);
  dim3 dimBlock(TILE_DIM, BLOCK_ROWS, 1);
  float *d_idata, *d_odata;
  copy<<<dimGrid, dimBlock>>>(d_odata, d_idata);
  return 0;
}
"#;

#[test]
fn a_sample_with_file_scope_constants_needs_no_flag() {
    // grid (1024/32, 512/32) = (32, 16): 512 blocks of 8 warps; each warp stores and loads one
    // row of 32 floats (128 bytes, 128-aligned) per iteration, 4 iterations:
    // 512 * 8 * 4 = 16384 requests of 4 sectors = 65536 sectors each way.
    let f = write_tmp("sample.cu", SAMPLE);
    let v = json(&analyze(&f, &["--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([32, 16, 1]));
    assert_eq!(v["launch"]["block"], serde_json::json!([32, 8, 1]));
    assert_eq!(v["totals"]["global_load"]["requests"], 16384);
    assert_eq!(v["totals"]["global_load"]["sectors"], 65536);
    assert_eq!(v["totals"]["global_store"]["sectors"], 65536);
    // The sheet's first assumption says the launch was read, and why.
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(first.starts_with("launch from the file's own call on line 20 (the kernel's only launch"), "{first}");
    assert!(first.contains("no --grid, --block or --arg was given"), "{first}");
    // The text sheet says it first among its assumptions.
    let t = stdout(&analyze(&f, &[]));
    let said = t.lines().skip_while(|l| *l != "assumptions").nth(1).unwrap_or("");
    assert!(said.starts_with("  - launch from the file's own call on line 20"), "{t}");
}

#[test]
fn flags_or_several_launches_turn_the_default_off() {
    // A flag given: the launch comes from the flags, which must then be whole.
    let f = write_tmp("sample_flags.cu", SAMPLE);
    let o = analyze(&f, &["--grid", "4"]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    // Two launches of the kernel: which one is not guessed; the message names both lines.
    let two =
        SAMPLE.replace("  return 0;", "  copy<<<dim3(nx / TILE_DIM, 1), dimBlock>>>(d_odata, d_idata);\n  return 0;");
    let f = write_tmp("sample_two.cu", &two);
    let o = analyze(&f, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("launches `copy` on lines 20, 21") && e.contains("--launch-site LINE"), "{e}");
    let v = json(&analyze(&f, &["--launch-site", "21", "--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([32, 1, 1]));
    // A kernel with no launch in the file: the usage error says how to give one.
    let o = analyze(&root().join("examples/block100.cu"), &[]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--grid and --block") && stderr(&o).contains("--launch-site"), "{}", stderr(&o));
}

/// A template launch whose dead branch (`useTexture` is false) holds a texture fetch; where it
/// runs, the fetch is a texture row of its own.
const TEMPLATE: &str = r#"#include <cstdlib>
#define N (1 << 20)
#define USE_LDG 0

template <typename T, int BS, bool useTexture>
__global__ void scale(const T *in, T *out, int n, cudaTextureObject_t tex)
{
  int i = blockIdx.x * BS + threadIdx.x;
  if (useTexture) {
    out[i] = tex1Dfetch<T>(tex, i);
    return;
  }
  if (USE_LDG && !useTexture) {
    out[i] = tex1Dfetch<T>(tex, i + 1);
  } else if (i < n) {
    out[i] = 2 * in[i];
  }
}

int main()
{
  float *a, *b;
  cudaTextureObject_t tex = 0;
  scale<float, 128, false><<<N / 128, 128>>>(a, b, N, tex);
}
"#;

#[test]
fn a_template_launch_with_a_dead_texture_branch_gives_a_sheet() {
    // n = 2^20, 128 threads: 8192 blocks of 4 warps, each warp 32 consecutive floats (4 sectors)
    // loaded and stored once: 32768 requests and 131072 sectors each way. The texture fetches
    // are in arms the launch's constants leave dead: `useTexture` is false, `USE_LDG` is 0.
    let f = write_tmp("template_tex.cu", TEMPLATE);
    let v = json(&analyze(&f, &["--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([8192, 1, 1]));
    assert_eq!(v["totals"]["global_load"]["requests"], 32768);
    assert_eq!(v["totals"]["global_load"]["sectors"], 131072);
    assert_eq!(v["totals"]["global_store"]["requests"], 32768);
    assert_eq!(v["totals"]["global_store"]["sectors"], 131072);
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(first.contains("T=float") && first.contains("useTexture=0"), "{first}");
    // Where the branch is live, the fetch is a texture row: one block of 4 warps, 4 executions,
    // and the 4 stores of 4 sectors; nothing in the global loads.
    let o = analyze(
        &f,
        &[
            "--grid",
            "1",
            "--block",
            "128",
            "--arg",
            "T=float",
            "--arg",
            "BS=128",
            "--arg",
            "useTexture=true",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v = json(&o);
    assert_eq!(v["totals"]["texture"]["requests"], 4);
    assert_eq!(v["totals"]["global_load"]["requests"], 0);
    assert_eq!(v["totals"]["global_store"]["sectors"], 16);
}

#[test]
fn kernels_says_which_template_arguments_to_pass() {
    let f = write_tmp("template_kernels.cu", TEMPLATE);
    let o = run(&["kernels", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("--arg T=float --arg BS=VALUE --arg useTexture=false"), "{t}");
    assert!(t.contains("--launch-site"), "{t}");
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["kernels", f.to_str().unwrap(), "--format", "json"]).stdout).unwrap();
    assert!(v[0]["note"].as_str().unwrap().contains("--arg T=float"), "{v}");
}

const CONFIGURED: &str = r#"#include "config.h"
#include <cstdio>

__global__ void saxpy(float a, const float *x, float *y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main()
{
  int n = 1 << 20;
  float *x, *y;
#ifdef HAVE_TIMER
  start_timer();
#endif
  saxpy<<<(n + 255) / 256, 256>>>(2.0f, x, y, n);
  return 0;
}
"#;

#[test]
fn a_missing_generated_header_the_kernel_does_not_need_is_a_warning() {
    // 4096 blocks of 8 warps: 32768 warps, each 32 consecutive floats: loads of x and y
    // 65536 requests and 262144 sectors; the store 32768 and 131072.
    let f = write_tmp("configured.cu", CONFIGURED);
    let o = analyze(&f, &["--format", "json"]);
    let v = json(&o);
    assert_eq!(v["totals"]["global_load"]["requests"], 65536);
    assert_eq!(v["totals"]["global_load"]["sectors"], 262144);
    assert_eq!(v["totals"]["global_store"]["sectors"], 131072);
    let e = stderr(&o);
    assert!(e.contains("warning[preprocess]: cannot find include file \"config.h\""), "{e}");
    assert!(e.contains("left out"), "{e}");
    // `kernels` lists it, with the same warning.
    let o = run(&["kernels", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("saxpy(float a"), "{}", stdout(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    // A kernel that needs it: the header is the error, with what the kernel lacks.
    let needs = CONFIGURED.replace("blockIdx.x * blockDim.x", "blockIdx.x * BLOCK");
    let f = write_tmp("configured_needed.cu", &needs);
    let o = analyze(&f, &[]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let e = stderr(&o);
    assert!(e.contains("error[preprocess]: cannot find include file \"config.h\""), "{e}");
    assert!(e.contains("`BLOCK`") && e.contains("-I DIR"), "{e}");
    assert!(!e.contains("warning["), "{e}");
}

#[test]
fn explain_and_sweep_take_the_launch_from_the_file() {
    let f = write_tmp("sample_explain.cu", SAMPLE);
    let file = f.to_str().unwrap();
    // The store on line 11, the first warp: 32 floats of one row, 4 sectors.
    for extra in [&["--launch-site"][..], &[][..]] {
        let o = run(&[&["explain", file, "--line", "11", "--column", "5"][..], extra].concat());
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let t = stdout(&o);
        assert!(t.contains("launch: grid (32, 16, 1) x block (32, 8, 1)"), "{t}");
        assert!(t.contains("4 sectors"), "{t}");
    }
    // sweep: the call's grid and block, a swept block replacing the call's.
    let o = run(&["sweep", file, "--launch-site", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "{v}");
    // Loads and stores together: 2 * 65536 sectors.
    assert_eq!(cells[0]["metrics"]["sectors"], 131072, "{v}");
    let o = run(&["sweep", file, "--launch-site", "--block", "32x8,32x4", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["cells"].as_array().unwrap().len(), 2, "{v}");
    // Without a grid and without --launch-site, sweep says what to add.
    let o = run(&["sweep", file, "--block", "256"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--launch-site"), "{}", stderr(&o));
}

/// The README's first command. The cache model's estimate has no time limit here: a debug
/// build on a busy machine may pass the command line's 1 s, which gives the boundaries as bounds.
fn first_example(extra: &[&str]) -> Output {
    bin()
        .current_dir(root())
        .args(["analyze", "examples/transpose_naive.cu", "--kernel", "transpose_naive", "--grid", "64,256"])
        .args(["--block", "32,8", "--arg", "rows=2048", "--arg", "cols=2048", "--estimate-time-limit", "0"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn the_default_sheet_is_read_in_ten_seconds() {
    let o = first_example(&[]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    let lines: Vec<&str> = t.lines().collect();
    assert!(lines.len() <= 25, "{} lines:\n{t}", lines.len());
    for l in &lines {
        assert!(l.chars().count() <= 120, "{} columns: {l}", l.chars().count());
    }
    // The table, the totals, the boundaries in two lines, the one assumption that changes a
    // number here; none of the cache model's, nor the thread order, nor the engine's.
    assert!(t.contains("24:9      out[col * rows + row]  global  store"), "{t}");
    assert!(t.contains("global store") && t.contains("4,194,304"), "{t}");
    assert_eq!(lines.iter().filter(|l| l.contains("DRAM reads")).count(), 1, "{t}");
    assert!(t.contains("pointer parameters start 256-byte aligned"), "{t}");
    for verbose_only in ["threads linearised", "symbolic engine", "LRU", "cold L1", "engine:"] {
        assert!(!t.contains(verbose_only), "`{verbose_only}` on the default sheet:\n{t}");
    }
    // --verbose: everything, as before.
    let v = stdout(&first_example(&["--verbose"]));
    for all in ["engine: symbolic", "5. assumptions", "threads linearised", "cold L1 and L2 at launch"] {
        assert!(v.contains(all), "`{all}` missing from --verbose:\n{v}");
    }
    // JSON does not depend on --verbose.
    assert_eq!(first_example(&["--format", "json"]).stdout, first_example(&["--format", "json", "--verbose"]).stdout);
}

#[test]
fn an_assumption_shared_by_rows_is_said_once() {
    // Two gathers through `idx`: both rows rest on the default assumption for data-dependent
    // addresses; the compact sheet says it once, naming both places.
    let src = "__global__ void g(const float *a, const float *b, const int *idx, float *out) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  out[i] = a[idx[i]] + b[idx[i]];\n}\n";
    let f = write_tmp("two_gathers.cu", src);
    let o = analyze(&f, &["--grid", "4", "--block", "256"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    let said: Vec<&str> = t.lines().filter(|l| l.contains("address depends on data read from memory")).collect();
    assert_eq!(said.len(), 1, "{t}");
    assert!(said[0].starts_with("  - 3:12, 3:24: "), "{t}");
    // --verbose keeps one line per row, with each row's own numbers.
    let v = stdout(&analyze(&f, &["--grid", "4", "--block", "256", "--verbose"]));
    assert_eq!(v.lines().filter(|l| l.contains("address depends on data read from memory")).count(), 2, "{v}");
}
