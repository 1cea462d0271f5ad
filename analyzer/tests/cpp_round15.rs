//! Round 15 of the census: HeCBench's sample `NR%13==10` and what the round before left. Each
//! test's numbers are worked out by hand in its comment (a warp is 32 lanes; a sector 32 bytes;
//! pointer parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{AnalyzeOptions, Fill, Sheet};

fn kernel(src: &str, k: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, args) })
}

/// tsne's broadcast kernels: a function object whose type is a template parameter, defined out
/// of line in a namespace.
const FUNCTOR_PARAM: &str = r#"
namespace ns {
template <typename Op, typename T>
__global__ void bcast(T *__restrict__ m, const T *__restrict__ v, const int N, const int M, Op op, const T alpha);
}
template <typename Op, typename T>
__global__ void ns::bcast(T *__restrict__ m, const T *__restrict__ v, const int N, const int M, Op op, const T alpha) {
  const int tid = threadIdx.x + blockIdx.x * blockDim.x;
  const int i = tid % N;
  const int j = tid / N;
  if (j < M) m[j * N + i] = op(m[j * N + i], alpha * v[j]);
}
"#;

#[test]
fn a_toolkit_function_object_as_a_template_argument_moves_no_memory() {
    // 4 blocks of 256 threads, N = 256: thread t reads and writes m[t] (32 warps of 128
    // contiguous bytes: 4 sectors each) and reads v[t / 256], one value a warp (1 sector).
    // `--kernel bcast` names `ns::bcast`, as its declaration and the profiler do.
    let args = [("N", "256"), ("M", "4"), ("Op", "thrust::divides<float>"), ("T", "float")];
    let s = kernel(FUNCTOR_PARAM, "bcast", "4", "256", &args);
    assert_eq!(total(&s, "global", "load"), (64, 32 * 4 + 32));
    assert_eq!(total(&s, "global", "store"), (32, 128));
}

/// bsw's guard `is_valid[t] && t < minSize`: the pointer the access reads is set only for
/// `t < n`; the data test (a shared flag) does not decide the other lanes, the bound does.
const DATA_AND_BOUND: &str = r#"
__global__ void k(const char *a, const int *len, char *out, const char *flags) {
  extern __shared__ char is_valid[];
  const char *longer;
  int n = len[blockIdx.x];
  if (threadIdx.x < n) longer = a;
  is_valid[threadIdx.x] = flags[threadIdx.x];
  __syncthreads();
  if (is_valid[threadIdx.x] && threadIdx.x < n) out[threadIdx.x] = longer[threadIdx.x];
}
"#;

#[test]
fn a_bound_decides_a_guard_joined_with_data() {
    // One block of 64 threads, len[0] = 8: lanes 8..63 fail `t < n` whatever their flag, so
    // only the first warp's lanes 0..7 copy (flags assumed set): one load and one store of 8
    // bytes, one sector each; the second warp moves nothing there.
    let opts = AnalyzeOptions {
        kernel: Some("k".into()),
        shared_bytes: 64,
        fills: vec![("len".into(), Fill::parse("constant:8").unwrap())],
        ..options("1", "64", &[])
    };
    let s = sheet_with(DATA_AND_BOUND, &opts);
    assert_eq!(total(&s, "global", "store"), (1, 1));
    // len[0] once a warp (2), flags (2 requests, 1 sector each), longer (1).
    assert_eq!(total(&s, "global", "load"), (5, 5));
}

/// tgvnn's grid-stride loops end at `N - rows * ndyn`, a `size_t`: arguments with
/// `rows * ndyn > N` wrap it to about 2^64, a loop no analysis finishes.
const WRAPPED_BOUND: &str = r#"
__global__ void k(float *out, const size_t N, const size_t rows, const size_t ndyn) {
  for (size_t id = blockIdx.x * blockDim.x + threadIdx.x; id < N - rows * ndyn; id += blockDim.x * gridDim.x)
    out[id % 1024] = 0.f;
}
"#;

#[test]
fn a_loop_bound_wrapped_below_zero_is_named_when_the_work_runs_out() {
    // N - rows * ndyn = 256 - 65536 = 2^64 - 65280 = 18446744073709486336. The reference
    // engine alone, with a budget it spends inside the loop.
    let opts =
        AnalyzeOptions { max_work: 1 << 16, ..options("1", "32", &[("N", "256"), ("rows", "256"), ("ndyn", "256")]) };
    let input = sector_analyzer::analyze::Input::Source { name: "m.cu", text: WRAPPED_BOUND };
    let (k, setup) = sector_analyzer::analyze::prepare(input, &opts, &sector_analyzer::source::DiskLoader)
        .unwrap_or_else(|f| panic!("{}", f.one_line()));
    let e = sector_analyzer::engine::run(&k, &setup).err().expect("runs out of work");
    let notes = e.notes.join("\n");
    assert!(notes.contains("the loop at line 3 compares with 18446744073709486336"), "{notes}");
}

/// s3d's math helpers: a template declared without a body, defined only in explicit
/// specializations, called with deduced arguments; and casts of a negative literal to a
/// template type, `(real)-2.8e1`, which the grammar reads as a subtraction.
const SPECIALIZED: &str = r#"
template <class T> __device__ __forceinline__ T MIN(T a, T b);
template <> __device__ __forceinline__ double MIN<double>(double a, double b) { return fmin(a, b); }
template <> __device__ __forceinline__ float MIN<float>(float a, float b) { return fminf(a, b); }
template <class real>
__global__ void k(const real *t, real *out) {
  real x = MIN(t[threadIdx.x], (real)-2.5e0);
  int i = (int)-4 + 4;
  out[threadIdx.x * 2 + i] = x + (real)-1.0;
}
"#;

#[test]
fn a_template_defined_only_in_specializations_and_a_cast_of_a_negative_literal() {
    // real = double: the load reads 32 doubles, 256 bytes, 8 sectors; `(int)-4 + 4` is 0, so
    // the store writes every other double over 512 bytes: 16 sectors.
    let s = kernel(SPECIALIZED, "k", "1", "32", &[("real", "double")]);
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (1, 16));
}

/// minisweep's `typedef struct { StepInfo stepinfo[NOCTANT]; } StepInfoAll;` with `enum {
/// NOCTANT = 8 };`: an enumerator sizes an array member of a structure declared after it.
const ENUM_SIZED_MEMBER: &str = r#"
enum { NOCTANT = 8 };
const int NPAD = 2;
typedef struct { int block_z; int octant; int is_active; } StepInfo;
typedef struct { StepInfo stepinfo[NOCTANT]; int pad[NPAD]; } StepInfoAll;
__global__ void k(StepInfoAll *all, int *out) {
  out[threadIdx.x] = all[threadIdx.x].stepinfo[7].octant;
}
"#;

#[test]
fn an_enumerator_sizes_an_array_member() {
    // sizeof(StepInfoAll) = 8 * 12 + 2 * 4 = 104 bytes; lane t reads the int at 104t + 88: 32
    // addresses 104 bytes apart, each in its own sector (104 > 32): 32 sectors. The store is
    // contiguous: 4 sectors.
    let s = kernel(ENUM_SIZED_MEMBER, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 32));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

/// columnarSolver's `#define ENCRYPTEDLEN ((int)sizeof(ENCRYPTED_T)-1)` of a string literal
/// sizes a local array.
const SIZEOF_STRING: &str = r#"
#define TEXT "abc" "de\n"
#define LEN ((int)sizeof(TEXT) - 1)
__global__ void k(int *out) {
  int local[LEN];
  for (int j = 0; j < LEN; ++j) local[j] = j;
  out[threadIdx.x * LEN] = local[threadIdx.x % LEN];
}
"#;

#[test]
fn sizeof_a_string_literal_counts_its_bytes_and_the_terminating_zero() {
    // "abc" "de\n" is 6 characters and a zero: LEN = 6. The store's lanes are 24 bytes
    // apart over 768 bytes: 32 lanes in 24 of the 32-byte sectors (lane t's int at 24t).
    let s = kernel(SIZEOF_STRING, "k", "1", "32", &[]);
    assert_eq!(total(&s, "global", "store"), (1, 24));
}
