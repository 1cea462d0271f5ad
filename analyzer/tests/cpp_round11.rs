//! Round 11 of the census: what HeCBench's sample `NR%13==4` (frna, hexciton, adamw: code nobody
//! here had read) needed of the source path, and nvcc's dead store elimination, checked against
//! its SASS. Each test's numbers are worked out by hand in its comment (a warp is 32 lanes; a
//! sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{AnalyzeOptions, Sheet};

fn kernel(src: &str, k: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, args) })
}

/// frna's parameter tables: a typedef of a pointer to a structure, members typed with an array
/// typedef and a structure defined inside the structure, `__restrict` after the type's name, and
/// an anonymous enumeration's enumerators.
const TABLES: &str = r#"
typedef enum { A, C, G, U } base_t;
typedef int tab3_t[4][4][4];
typedef struct fparam {
  int a, b;
  float c;
  tab3_t d3;
  struct tl_t { char seq[5]; int val; } tl[4];
  int m[8][4];
} *fparam_t;
__global__ void tables(int *out, const fparam_t __restrict p) {
  int i = threadIdx.x;
  out[i] = p->a + p->d3[i & 3][1][2] + p->tl[i & 3].val + p->m[i & 7][0];
  out[i + G] = 0;
}
"#;

#[test]
fn a_pointer_typedef_array_typedef_members_and_nested_structures_lay_out_as_c_does() {
    // Layout: a 0, b 4, c 8, d3 12 (256 bytes), tl 268 (4 x 12: char[5] then int at 8), m 316
    // (8 x 4 ints, rows of 16 bytes). One warp:
    // - p->a: one address, 1 sector.
    // - d3[k][1][2], k = i & 3: 12 + 64k + 24 = 36, 100, 164, 228: sectors 1, 3, 5, 7: 4.
    // - tl[k].val: 268 + 12k + 8 = 276, 288, 300, 312: sectors 8 and 9: 2.
    // - m[k][0], k = i & 7: 316 + 16k = 316 .. 428: sectors 9 .. 13: 5 (read with the other
    //   dimension first, rows of 32 bytes, it would be 8).
    // Loads: 4 requests, 1 + 4 + 2 + 5 = 12 sectors. Stores: out[i] (4 sectors) and
    // out[i + G], G = 2: bytes 8 .. 135, 5 sectors.
    let s = kernel(TABLES, "tables", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (4, 12));
    assert_eq!(total(&s, "global", "store"), (2, 9));
}

/// adamw: `static __device__ __const__ uint8_t mask = 15;` (GCC's spelling of `const`).
const GCC_CONST: &str = r#"
static __device__ __const__ int K = 3;
__global__ void strided(float *__restrict out) {
  out[threadIdx.x * K] = 1.0f;
}
"#;

#[test]
fn gcc_const_is_const() {
    // Stride 12 bytes: 32 lanes cover bytes 0 .. 375, sectors 0 .. 11: 12.
    let s = kernel(GCC_CONST, "strided", "1", "32", &[]);
    assert_eq!(total(&s, "global", "store"), (1, 12));
}

/// hexciton's kernels: `sigma_out[x] -= ...; sigma_out[x] += ...;` through `__restrict__`
/// pointers. nvcc 13.0 (`-arch=sm_90`, SASS read by `--via sass`) keeps `out[i]` in a register
/// and stores it once in `rmw`; without `__restrict__` (`aliased`) a load through `a` or `b`
/// may read `out[i]`, so every store stays.
const RMW: &str = r#"
__global__ void rmw(float *__restrict__ out, const float *__restrict__ a, const float *__restrict__ b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] += a[i] * b[i];
  out[i] -= a[i+1] * b[i];
  out[i] += b[i+2];
}
__global__ void aliased(float *out, const float *a, const float *b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] += a[i] * b[i];
  out[i] -= a[i+1] * b[i];
  out[i] += b[i+2];
}
__global__ void overwritten(float *__restrict__ out, float *__restrict__ other, const float *__restrict__ a) {
  int i = threadIdx.x;
  out[i] = a[i];
  other[i] = a[i + 1];
  out[i] = 2.0f;
}
"#;

#[test]
fn a_store_overwritten_in_the_same_block_through_restrict_pointers_is_removed() {
    // rmw: loads out[i], a[i], b[i], a[i+1], b[i+2] once each (4, 4, 4, 5, 5 sectors: the
    // shifted rows straddle one more sector); one store of 32 floats, 4 sectors.
    let s = kernel(RMW, "rmw", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (5, 22));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // aliased: b[i] is loaded again after the first store (it may be out[i]): 6 loads,
    // 4 + 4 + 4 + 5 + 4 + 5 = 26 sectors; three stores of 4 sectors.
    let s = kernel(RMW, "aliased", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (6, 26));
    assert_eq!(total(&s, "global", "store"), (3, 12));
    // overwritten: the first store of out[i] is dead (other[i] is another object, a[i + 1]
    // too), and so is the load of a[i] whose value only it stored: one load of a[i + 1]
    // (5 sectors), two stores of 4 sectors.
    let s = kernel(RMW, "overwritten", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 5));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}

/// rowwiseMoments (from PyTorch): a class template's member type alias in its method's
/// signature (`using acc_t = WelfordData<acc_scalar_t, index_t>;`).
const ALIAS: &str = r#"
template <typename T> struct Pair { T a; T b; };
template <typename T> struct Ops {
  using acc_t = Pair<T>;
  __device__ acc_t reduce(acc_t acc, T x) const { acc.a += x; acc.b += x * x; return acc; }
};
__global__ void moments(const float *x, float *out, int n) {
  Ops<float> op;
  Pair<float> acc = {0.f, 0.f};
  for (int j = 0; j < n; j++) acc = op.reduce(acc, x[j * 32 + threadIdx.x]);
  out[threadIdx.x] = acc.a;
  out[threadIdx.x + 32] = acc.b;
}
"#;

#[test]
fn a_member_type_alias_names_a_type_in_the_class_templates_methods() {
    // n = 4 loads of 32 consecutive floats (4 sectors each); two stores of 32 floats.
    let s = kernel(ALIAS, "moments", "1", "32", &[("n", "4")]);
    assert_eq!(total(&s, "global", "load"), (4, 16));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}
