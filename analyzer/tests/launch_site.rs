//! `--launch-site` reads the launch as a person reads the file (issue 28, "a sheet in one try"):
//! file-scope and namespace constants, `static const` members, enumerators, `dim3` variables,
//! `#define`s, one-`return` host helpers, C's integer types; every missing value in one message
//! with a command line to fill; values the program reads at run time are never guessed.
//! The expected counts are worked out by hand in each test's comment.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Output};

fn write_tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sector-estimate-launch-site-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p).unwrap().write_all(text.as_bytes()).unwrap();
    p
}

fn analyze(file: &PathBuf, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sector-estimate")).arg("analyze").arg(file).args(extra).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("stdout is JSON")
}

/// NVIDIA's transpose sample, as it is written: file-scope `const int`s, a namespace
/// `constexpr`, a `static const` member, `dim3` variables built from them.
const TRANSPOSE: &str = r#"#include <cstdio>
const int TILE_DIM = 32;
const int BLOCK_ROWS = 8;
namespace cfg { constexpr int NX = 1024; }
struct Size { static const int NY = 512; };

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
  const int nx = cfg::NX, ny = Size::NY;
  // 0xFFFFFFFFu + 1u is 0 in `unsigned int`: the grid's y stays ny / TILE_DIM.
  dim3 dimGrid(nx / TILE_DIM, (ny + 0xFFFFFFFFu + 1u) / TILE_DIM, 1);
  dim3 dimBlock(TILE_DIM, BLOCK_ROWS);
  float *d_idata, *d_odata;
  copy<<<dimGrid, dimBlock>>>(d_odata, d_idata);
  return 0;
}
"#;

#[test]
fn file_scope_constants_and_dim3_variables_give_the_whole_launch() {
    // grid (1024/32, 512/32) = (32, 16): 512 blocks; block (32, 8): 8 warps, each one row of 32
    // consecutive floats (128 bytes, 128-aligned: width is 1024 floats) = 4 sectors.
    // The loop runs j = 0, 8, 16, 24: 4 iterations.
    // Loads: 512 * 8 * 4 = 16384 requests, 16384 * 4 = 65536 sectors; stores the same.
    let f = write_tmp("transpose_copy.cu", TRANSPOSE);
    let v = json(&analyze(&f, &["--launch-site", "--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([32, 16, 1]));
    assert_eq!(v["launch"]["block"], serde_json::json!([32, 8, 1]));
    assert_eq!(v["totals"]["global_load"]["requests"], 16384);
    assert_eq!(v["totals"]["global_load"]["sectors"], 65536);
    assert_eq!(v["totals"]["global_store"]["requests"], 16384);
    assert_eq!(v["totals"]["global_store"]["sectors"], 65536);
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(first.starts_with("launch from the file's own call on line 23"), "{first}");
}

#[test]
fn a_grid_from_the_command_line_is_said_to_come_from_there() {
    // --grid 16,16 replaces the file's grid: 256 blocks * 8 warps * 4 iterations = 8192 load
    // requests of 4 sectors (width is now 16 * 32 = 512 floats, rows still 128-aligned) = 32768.
    let f = write_tmp("transpose_grid.cu", TRANSPOSE);
    let v = json(&analyze(&f, &["--launch-site", "--grid", "16,16", "--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([16, 16, 1]));
    assert_eq!(v["totals"]["global_load"]["requests"], 8192);
    assert_eq!(v["totals"]["global_load"]["sectors"], 32768);
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(!first.contains("file's own call"), "{first}");
    assert!(first.contains("grid (16,16) from the command line"), "{first}");
    assert!(first.contains("block (32, 8)") && !first.contains("block (32, 8) from the command line"), "{first}");
}

/// A template launch with `#define`, an enumerator, a `bool` template argument, a one-`return`
/// host helper, `unsigned` arithmetic, `sizeof` in the dynamic shared memory, and literal
/// `0`/`nullptr` for pointers the kernel does not read.
const TEMPLATE: &str = r#"#include <cstdlib>
#define N (1 << 20)
enum { WARP = 32, THREADS = WARP * 4, UNUSED };

template <typename T, int BS, bool useTexture>
__global__ void scale(const T *in, T *out, int n, const int *lut, float *dbg)
{
  int i = blockIdx.x * BS + threadIdx.x;
  if (useTexture) {
    out[i] = in[lut[i]];
    return;
  }
  if (i < n) out[i] = 2 * in[i];
}

static int iDivUp(int a, int b) { return (a % b != 0) ? (a / b + 1) : (a / b); }

int main()
{
  float *a, *b;
  unsigned int n = N + 100;
  dim3 grid(iDivUp(n, THREADS));
  scale<float, THREADS, false><<<grid, THREADS, THREADS * sizeof(float)>>>(a, b, n, 0, nullptr);
}
"#;

#[test]
fn a_template_launch_with_defines_enums_helpers_and_null_pointers() {
    // n = 2^20 + 100 = 1048676; THREADS = 128 (4 warps); grid = iDivUp(1048676, 128) = 8193.
    // `useTexture` is false: that branch never runs. 8193 * 4 = 32772 warps execute the load
    // and the store; every warp but the last covers 32 floats, 128-aligned: 4 sectors; the last
    // block's last warp has lanes i = 1048672..1048675 active (4 floats at a 128-byte boundary):
    // 1 sector. Sectors: 32771 * 4 + 1 = 131085 for the load and the same for the store.
    // Dynamic shared memory: 128 * sizeof(float) = 512 bytes.
    let f = write_tmp("template_scale.cu", TEMPLATE);
    let v = json(&analyze(&f, &["--launch-site", "--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([8193, 1, 1]));
    assert_eq!(v["launch"]["block"], serde_json::json!([128, 1, 1]));
    assert_eq!(v["launch"]["args"]["n"], 1048676);
    assert_eq!(v["totals"]["global_load"]["requests"], 32772);
    assert_eq!(v["totals"]["global_load"]["sectors"], 131085);
    assert_eq!(v["totals"]["global_store"]["requests"], 32772);
    assert_eq!(v["totals"]["global_store"]["sectors"], 131085);
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(first.contains("512 bytes of dynamic shared memory"), "{first}");
    assert!(first.contains("T=float") && first.contains("BS=128") && first.contains("useTexture=0"), "{first}");
}

#[test]
fn bool_arguments_take_true_and_false() {
    // One warp of 32 lanes: with `flag` true the store runs once over 32 floats (4 sectors);
    // with `flag` false it never runs.
    let f = write_tmp(
        "flag.cu",
        "__global__ void k(float *a, bool flag) {\n  if (flag) a[threadIdx.x] = 1.0f;\n}\nint main() { float *a; k<<<1, 32>>>(a, true); }\n",
    );
    for (flag, requests, sectors) in [("true", 1, 4), ("false", 0, 0)] {
        let arg = format!("flag={flag}");
        let v = json(&analyze(&f, &["--grid", "1", "--block", "32", "--arg", &arg, "--format", "json"]));
        assert_eq!(v["totals"]["global_store"]["requests"], requests, "{flag}");
        assert_eq!(v["totals"]["global_store"]["sectors"], sectors, "{flag}");
    }
    // From the launch itself: `true`.
    let v = json(&analyze(&f, &["--launch-site", "--format", "json"]));
    assert_eq!(v["totals"]["global_store"]["requests"], 1);
}

/// Values the program learns when it runs: read from `std::cin`, written by `scanf` through
/// `&m`, computed by `atoi`, overwritten after a constant initialiser.
const RUNTIME: &str = r#"#include <iostream>
#include <cstdio>
#include <cstdlib>
const int BLOCK = 256;

__global__ void saxpy(int n, float a, const float *x, float *y)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main(int argc, char **argv)
{
  int n = 1 << 20;
  int m;
  std::cin >> n;
  scanf("%d", &m);
  int reps = atoi(argv[1]);
  int threads = 128;
  threads = atoi(argv[2]);
  dim3 grid((n + BLOCK - 1) / BLOCK, m);
  float *x, *y;
  saxpy<<<grid, threads, reps * sizeof(float)>>>(n, 2.0f, x, y);
}
"#;

#[test]
fn every_missing_value_is_named_in_one_message_with_a_command_line() {
    let f = write_tmp("runtime.cu", RUNTIME);
    let o = analyze(&f, &["--launch-site"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    // grid, block, dynamic shared memory and the argument `n`: four pieces, one message.
    assert!(e.contains("needs 4 values"), "{e}");
    assert!(e.contains("grid `grid`") && e.contains("dim3 grid((n + BLOCK - 1) / BLOCK, m)"), "{e}");
    assert!(e.contains("`n` is read on line 16 (`std::cin >> n`)"), "{e}");
    assert!(e.contains("`m` is written by a call on line 17 (`scanf(\"%d\", &m)`)"), "{e}");
    assert!(e.contains("`reps` = `atoi(argv[1])` (line 18) is known only when the program runs"), "{e}");
    assert!(e.contains("`threads` is assigned on line 20 (`threads = atoi(argv[2])`)"), "{e}");
    assert!(e.contains("argument `n`: `n` is read on line 16"), "{e}");
    // Never a guess: the constant initialisers (1 << 20, 128) are not used.
    assert!(!e.contains("1048576"), "{e}");
    assert!(e.contains("--launch-site 23 --arg n=VALUE --arg m=VALUE --arg threads=VALUE --arg reps=VALUE"), "{e}");
    assert_eq!(e.matches("error").count(), 1, "one message: {e}");

    // Filled in: n = 1000, m = 2, threads = 256, reps = 4.
    // grid ((1000 + 255) / 256, 2) = (4, 2), block 256 (8 warps), 16 bytes of shared memory.
    // Per blockIdx.y: 32 warps; i < 1000 leaves 31 full warps (4 sectors per access) and one
    // warp with lanes 992..999 (8 floats at 3968 = 31 * 128: 1 sector) = 125 sectors and 32
    // requests per access. Loads of x[i] and y[i] for two values of blockIdx.y: 128 requests,
    // 500 sectors; the store of y[i]: 64 requests, 250 sectors.
    let o = analyze(
        &f,
        &[
            "--launch-site",
            "--arg",
            "n=1000",
            "--arg",
            "m=2",
            "--arg",
            "threads=256",
            "--arg",
            "reps=4",
            "--format",
            "json",
        ],
    );
    let v = json(&o);
    assert_eq!(v["launch"]["grid"], serde_json::json!([4, 2, 1]));
    assert_eq!(v["launch"]["block"], serde_json::json!([256, 1, 1]));
    assert_eq!(v["launch"]["args"]["n"], 1000);
    assert_eq!(v["totals"]["global_load"]["requests"], 128);
    assert_eq!(v["totals"]["global_load"]["sectors"], 500);
    assert_eq!(v["totals"]["global_store"]["requests"], 64);
    assert_eq!(v["totals"]["global_store"]["sectors"], 250);
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(first.contains("16 bytes of dynamic shared memory"), "{first}");
    assert!(first.contains("n=1000 from the command line"), "{first}");
    assert!(first.contains("m=2") && first.contains("threads=256") && first.contains("reps=4"), "{first}");
}

/// The merge of issue 28 with the C integer evaluator (`cint`): file-scope constants keep their
/// declared C types, and what C leaves undefined is named, never guessed.
#[test]
fn file_constants_keep_c_types_and_undefined_values_are_named() {
    // A file-scope `const unsigned char` of 256 + 32 is 32: one warp storing consecutive
    // floats, 128 bytes, 4 sectors.
    let src = "const unsigned char B = 256 + 32;\n__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\nint main() {\n  float* a;\n  k<<<1, B>>>(a);\n}\n";
    let f = write_tmp("uchar.cu", src);
    let v = json(&analyze(&f, &["--launch-site", "--format", "json"]));
    assert_eq!(v["launch"]["block"], serde_json::json!([32, 1, 1]));
    assert_eq!(v["totals"]["global_store"]["sectors"], 4);
    // 65536 * 65536 overflows `int`: undefined in C, so the grid is missing and said why.
    let src = "__global__ void k(float* a) { a[threadIdx.x] = 1.0f; }\nint main() {\n  float* a;\n  int n = 65536;\n  k<<<n * 65536, 32>>>(a);\n}\n";
    let f = write_tmp("overflow.cu", src);
    let o = analyze(&f, &["--launch-site"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("undefined behaviour in C") && e.contains("overflows int"), "{e}");
    assert!(e.contains("--grid X,Y,Z"), "{e}");
}

/// C-style host code sets a `dim3`'s members one by one (`dim3 grid; grid.x = ...;`, as
/// cuda-samples' tensor-core GEMMs do): 1,024 elements in blocks of 128 x 2 threads, 4 blocks
/// in x; each warp stores 32 consecutive floats (4 sectors): 32 warps, 32 requests, 128 sectors.
/// A member written inside a branch gives the variable no value.
#[test]
fn dim3_members_assigned_before_the_launch_are_read() {
    let src = r#"__global__ void fill(float *out) {
  int i = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  out[i] = 1.0f;
}
int main(int argc, char **argv) {
  const int n = 1024;
  dim3 gridDim;
  dim3 blockDim;
  blockDim.x = 128;
  blockDim.y = 2;
  gridDim.x = n / (blockDim.x * blockDim.y);
  float *out;
  fill<<<gridDim, blockDim>>>(out);
  dim3 other(1);
  if (argc > 1) other.x = 8;
  fill<<<other, blockDim>>>(out);
  return 0;
}
"#;
    let p = write_tmp("dim3_members.cu", src);
    let v = json(&analyze(&p, &["--launch-site", "13", "--format", "json"]));
    assert_eq!(v["launch"]["grid"], serde_json::json!([4, 1, 1]));
    assert_eq!(v["launch"]["block"], serde_json::json!([128, 2, 1]));
    assert_eq!(v["totals"]["global_store"]["requests"], 32);
    assert_eq!(v["totals"]["global_store"]["sectors"], 128);
    let o = analyze(&p, &["--launch-site", "16", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("`other` is assigned on line 15"), "{}", stderr(&o));
}

#[test]
fn sizeof_a_type_the_grammar_reads_as_a_variable_sizes_the_shared_memory() {
    // cuda-samples' tensor-core GEMMs: `SHMEM_SZ = 64 * 8 * sizeof(half)` as the launch's
    // dynamic shared memory. `sizeof(half)` parses as a parenthesised name; it is 2 bytes:
    // 1024 bytes, 256 halves. One warp stores s[0..32) (64 bytes, 1 wavefront) and out[t]
    // (128 bytes from a 256-byte boundary: 4 sectors).
    let f = write_tmp(
        "sizeof_half.cu",
        r#"#include <cuda_fp16.h>
#define SHMEM_SZ (64 * 8 * sizeof(half))
__global__ void k(float *out) {
  extern __shared__ half s[];
  s[threadIdx.x] = __float2half(1.0f);
  out[threadIdx.x] = 1.0f;
}
int main() { float *o; k<<<1, 32, SHMEM_SZ>>>(o); }
"#,
    );
    let v = json(&analyze(&f, &["--launch-site", "--format", "json"]));
    let first = v["assumptions"][0].as_str().unwrap();
    assert!(first.contains("1024 bytes of dynamic shared memory"), "{first}");
    assert_eq!(v["totals"]["global_store"]["sectors"], 4);
}

#[test]
fn a_type_the_host_template_stands_for_is_given_by_its_name() {
    // The launch inside `template <typename T> void run(T *o)`: `--arg T=double` gives the
    // kernel's `scalar_t`. 32 lanes store 8 bytes each: 256 bytes, 8 sectors.
    let f = write_tmp(
        "host_template.cu",
        r#"template <typename scalar_t> __global__ void k(scalar_t *o) { o[threadIdx.x] = 0; }
template <typename T> void run(T *o) { k<T><<<1, 32>>>(o); }
"#,
    );
    let v = json(&analyze(&f, &["--launch-site", "--arg", "T=double", "--format", "json"]));
    assert_eq!(v["totals"]["global_store"]["sectors"], 8, "{v}");
}

/// A host variable passed by reference to a function of the file (`setn(q)` with `int &n`), or
/// to `std::swap`, may be written there: its initialiser is not the launch's value.
const BY_REFERENCE: &str = r#"#include <utility>
__global__ void k(float *a, int n) { if (threadIdx.x < n) a[threadIdx.x] = 0; }
void setn(int &n) { n = 7; }
void show(const int &n) {}
int main() {
  int q = 32, r = 32, s = 32, t = 16;
  setn(q);
  std::swap(r, t);
  show(s);
  float *a;
  k<<<1, 32>>>(a, q);
  k<<<1, 32>>>(a, r);
  k<<<1, 32>>>(a, s);
}
"#;

#[test]
fn a_host_variable_passed_by_reference_has_no_value_at_the_launch() {
    let f = write_tmp("by_reference.cu", BY_REFERENCE);
    for line in ["11", "12"] {
        let o = analyze(&f, &["--launch-site", line]);
        assert_eq!(o.status.code(), Some(1), "line {line}: {}", stderr(&o));
        assert!(stderr(&o).contains("pass --arg n=VALUE"), "{}", stderr(&o));
    }
    // And why: the launch's expression and what happened to it.
    let e = stderr(&analyze(&f, &["--launch-site", "11"]));
    assert!(e.contains("the launch on line 11 passes `q`: `q` is passed by reference on line 7 (`setn(q)`)"), "{e}");
    // A `const` reference cannot write it: s = 32, all 32 lanes store, 128 bytes, 4 sectors.
    let v = json(&analyze(&f, &["--launch-site", "13", "--format", "json"]));
    assert_eq!(v["totals"]["global_store"]["sectors"], 4);
}
