//! Round 14 of the census: what HeCBench's sample `NR%13==9` (atan2, dslash, prna, tsne: code
//! nobody here had read) needed of the source path. Each test's numbers are worked out by hand in
//! its comment (a warp is 32 lanes; a sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{AnalyzeOptions, Sheet};

fn kernel(src: &str, k: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, args) })
}

/// atan2's polynomial coefficients are hexadecimal floating literals (`float(-0xf.8eed2p-4)`).
const HEX_FLOAT: &str = r#"
__device__ float poly(float x) { return x * (float(-0xf.8eed2p-4) + x * x * float(0x3.1238p-4)); }
__global__ void hex(const float *in, float *out) {
  int i = threadIdx.x;
  out[i * (int)0x1p3f] = poly(in[i]);
}
"#;

#[test]
fn hexadecimal_floating_literals_have_their_values() {
    // 0x1p3 = 8: the store's stride is 8 floats, 32 bytes, one sector a lane: 32. The load is
    // contiguous: 128 bytes, 4 sectors.
    let s = kernel(HEX_FLOAT, "hex", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 32));
}

/// dslash's complex arithmetic macros parenthesise their arguments: `(a->e[j][i]).real` of a
/// member `Complx e[3][3]`.
const PAREN_MEMBER: &str = r#"
typedef struct { float real; float imag; } fcomplex;
typedef struct { fcomplex e[4][8]; } matrix;
#define CONJG(a, b) { (b).real = (a).real; (b).imag = -(a).imag; }
__global__ void conj(const matrix *a, matrix *b) {
  int i = threadIdx.x;
  CONJG(a->e[i >> 3][i & 7], b->e[i & 3][i >> 2]);
}
"#;

#[test]
fn a_member_of_a_parenthesised_element_of_a_two_dimensional_member() {
    // Loads: e[i >> 3][i & 7] is element i (row-major, 8 bytes each): .real at 8i, .imag at
    // 8i + 4: each 256 bytes of the 4-byte-aligned structure, 8 sectors, 2 requests.
    // Stores: e[i & 3][i >> 2] is element 8(i & 3) + (i >> 2): still all 32 elements, each
    // field in the same 8 sectors: 2 requests, 16 sectors.
    let s = kernel(PAREN_MEMBER, "conj", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 16));
    assert_eq!(total(&s, "global", "store"), (2, 16));
}

/// prna's tables: a pointer to an array typedef chosen at run time (`tab4_t *sp; sp =
/// &p->tstacki;` then `(*sp)[a][b]`), and C's pointer to rows (`float (*a)[4] = (float (*)[4]) in`).
const ROWS: &str = r#"
typedef float tab_t[4][4];
struct param { float first; tab_t stack; tab_t other; };
__global__ void table(const param *p, float *out, int which) {
  int i = threadIdx.x;
  const tab_t *sp;
  if (which) sp = &p->other; else sp = &p->stack;
  out[i] = (*sp)[i & 3][1];
}
__global__ void rows(const float *in, float *out) {
  int i = threadIdx.x;
  const float (*a)[4] = (const float (*)[4]) in;
  out[i] = a[i][1] + (*a)[2];
}
"#;

#[test]
fn pointers_to_rows_index_row_major() {
    // table, which = 0: stack at byte 4, (*sp)[k][1] at 4 + 16k + 4 = 8, 24, 40, 56 for k = i & 3:
    // sectors 0 and 1, 2. which = 1: other at 68, 72 + 16k = 72 .. 120: sectors 2 and 3, 2.
    // The store: 4 sectors.
    let s = kernel(ROWS, "table", "1", "32", &[("which", "0")]);
    assert_eq!(total(&s, "global", "load"), (1, 2));
    let s = kernel(ROWS, "table", "1", "32", &[("which", "1")]);
    assert_eq!(total(&s, "global", "load"), (1, 2));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // rows: a[i][1] at 16i + 4: 512 bytes, 16 sectors; (*a)[2] one address, 1 sector.
    let s = kernel(ROWS, "rows", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 17));
}

/// dslash's `mult_su3_mat_vec(a, b, &v)`: a helper writing `c->c[i]`, an array member of the
/// caller's own structure, through the pointer it was given.
const OWN_MEMBER: &str = r#"
typedef struct { float real; float imag; } fcomplex;
typedef struct { fcomplex c[3]; } vec;
__device__ void mul(const vec *a, vec *c) {
  for (int i = 0; i < 3; i++) {
    fcomplex x = {0.0f, 0.0f};
    x.real += a->c[i].real;
    c->c[i] = x;
  }
}
__global__ void own(const vec *a, vec *b) {
  int t = threadIdx.x;
  vec v;
  mul(a + t, &v);
  b[t] = v;
}
"#;

#[test]
fn a_helper_writes_an_array_member_of_the_callers_own_structure() {
    // vec is 24 bytes, 4-byte aligned. Loads a[t].c[i].real: 3 requests, 32 lanes 24 bytes apart
    // cover 768 bytes, 24 sectors each: 72. The store b[t] = v: six 4-byte stores (the structure
    // is only 4-byte aligned), each 24 sectors: 144. v itself stays in registers.
    let s = kernel(OWN_MEMBER, "own", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (3, 72));
    assert_eq!(total(&s, "global", "store"), (6, 144));
}

/// dslash's `b->c[j]` with `b = src + fwd[4 * site + k]`: an address the analysis does not know
/// (an offset read from memory) is still one value to the compiler, which loads it once where
/// nothing it may alias is written in between.
const UNKNOWN_REUSE: &str = r#"
__global__ void reuse(const float *__restrict__ src, const int *__restrict__ idx, float *__restrict__ out) {
  int t = threadIdx.x;
  const float *b = src + idx[t];
  float s = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) s += b[j] * (i + 1);
  out[t] = s;
}
__global__ void noreuse(const float *src, const int *idx, float *out) {
  int t = threadIdx.x;
  const float *b = src + idx[t];
  float s = 0;
  for (int i = 0; i < 3; i++) {
    for (int j = 0; j < 3; j++) s += b[j] * (i + 1);
    out[t + 32 * i] = s;
  }
}
typedef struct { float real; float imag; } fcomplex;
typedef struct { fcomplex e[3][3]; } mat;
__device__ inline void adj(const mat *a, mat *b) {
  int i, j;
  for (i = 0; i < 3; i++) for (j = 0; j < 3; j++) { b->e[i][j].real = a->e[j][i].real; }
}
__global__ void directions(const mat *__restrict__ f, const size_t *__restrict__ idx, mat *__restrict__ out) {
  size_t s = blockIdx.x * blockDim.x + threadIdx.x;
  for (int dir = 0; dir < 4; dir++) adj(f + 4 * idx[4 * s + dir] + dir, out + 4 * s + dir);
}
"#;

#[test]
fn an_address_read_from_memory_is_loaded_once_where_the_compiler_sees_one_value() {
    // reuse: idx[t] once; b[0], b[1], b[2] once each for all three i (the SASS: 4 loads).
    let s = kernel(UNKNOWN_REUSE, "reuse", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load").0, 4);
    // noreuse: each store to `out` may change `src`: b[j] again for every i, 1 + 9.
    let s = kernel(UNKNOWN_REUSE, "noreuse", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load").0, 10);
    // directions: per direction idx once and nine different elements a->e[j][i].real (the
    // counters i and j make each copy's address its own): 4 x (1 + 9) = 40, as the SASS has.
    let s = kernel(UNKNOWN_REUSE, "directions", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load").0, 40);
}

/// tsne's DFT kernels: `thrust::complex<float>` values, 8 bytes aligned to 8, moved whole;
/// their arithmetic (`+`, `*`, `thrust::conj`, `.real()`, `thrust::abs`) is registers.
const COMPLEX: &str = r#"
__global__ void dft(const thrust::complex<float> *in, thrust::complex<float> *out, float *re, int n) {
  int i = threadIdx.x;
  thrust::complex<float> s, t;
  s = 0.0f;
  t = thrust::complex<float>(1.0f, 2.0f);
  for (int k = 0; k < n; k++) s += thrust::conj(in[k * 32 + i]) * t;
  out[i] = s;
  re[i] = s.real() + thrust::abs(s);
}
"#;

#[test]
fn thrust_complex_values_move_whole() {
    // n = 4: in[k * 32 + i], 8 bytes a lane, 256 contiguous bytes a request: 4 x 8 sectors.
    // out[i]: one 8-byte store, 8 sectors; re[i]: 4 sectors.
    let s = kernel(COMPLEX, "dft", "1", "32", &[("n", "4")]);
    assert_eq!(total(&s, "global", "load"), (4, 32));
    assert_eq!(total(&s, "global", "store"), (2, 12));
}

/// bsw's `(diag < minSize || diag >= maxSize)`: the grammar reads `diag<minSize || diag>` as a
/// template and `= maxSize` as an assignment; `t < lo || t > hi` as `t<lo || t>` compared with
/// `hi`. Both are the comparisons the text means.
const MISREAD: &str = r#"
__global__ void ge(float *out, int lo, int hi) {
  int t = threadIdx.x;
  bool skip = (t < lo || t >= hi);
  if (skip) return;
  out[t] = 1.0f;
}
__global__ void gt(float *out, int lo, int hi) {
  int t = threadIdx.x;
  if (t < lo || t > hi) return;
  out[t] = 1.0f;
}
"#;

#[test]
fn a_comparison_read_as_a_template_is_the_comparison() {
    // lo = 8, hi = 40, two warps. ge: threads 8 .. 39 store: warp 0 bytes 32 .. 127 (3
    // sectors), warp 1 bytes 128 .. 159 (1). gt: threads 8 .. 40: warp 1 bytes 128 .. 163 (2).
    let s = kernel(MISREAD, "ge", "1", "64", &[("lo", "8"), ("hi", "40")]);
    assert_eq!(total(&s, "global", "store"), (2, 4));
    let s = kernel(MISREAD, "gt", "1", "64", &[("lo", "8"), ("hi", "40")]);
    assert_eq!(total(&s, "global", "store"), (2, 5));
}

/// bsw: a pointer into shared memory stepped by itself in a loop (`p = p + 1`) sent the
/// unroller's shared-address reader round the local's own value until the stack overflowed.
const SELF_STEP: &str = r#"
__global__ void walk(float *out) {
  __shared__ float s[256];
  s[threadIdx.x] = 1.0f;
  __syncthreads();
  float *p = s;
  float acc = 0.0f;
  for (int i = 0; i < 4; i++) {
    p = p + 1;
    acc += p[threadIdx.x % 32];
  }
  out[threadIdx.x] = acc;
}
"#;

#[test]
fn a_shared_pointer_stepped_by_itself_is_counted() {
    // Two warps, four loads each of 32 consecutive words (one wavefront each): 8 loads, 8
    // wavefronts, as nvcc's SASS has them (the copies' addresses differ by lane alignment, so
    // none merge).
    let s = kernel(SELF_STEP, "walk", "1", "64", &[]);
    assert_eq!(total(&s, "shared", "load").0, 8);
}

/// dense-embedding: a load used only in a loop whose counter starts as a copy of another local
/// (`for (j = idx; j < range; ..)`) runs under the loop's entry test, as nvcc sinks it.
const SINK_COPY: &str = r#"
__global__ void sink(const float *__restrict__ dense, float *output, int dim, int range) {
  int idx = threadIdx.x;
  const float e = dense[idx];
  for (int j = idx; j < range; j += dim) {
    output[j] = e;
  }
}
"#;

#[test]
fn a_load_sinks_into_a_loop_whose_counter_starts_as_a_copy() {
    // range = 0: no thread enters the loop, so none loads (nvcc's SASS: no load issued).
    let s = kernel(SINK_COPY, "sink", "2", "64", &[("dim", "64"), ("range", "0")]);
    assert_eq!(total(&s, "global", "load"), (0, 0));
    // range = 100: every thread enters (idx < 64 < 100); 4 warps
    // load 128 contiguous bytes each: 4 requests, 16 sectors.
    let s = kernel(SINK_COPY, "sink", "2", "64", &[("dim", "64"), ("range", "100")]);
    assert_eq!(total(&s, "global", "load"), (4, 16));
}
