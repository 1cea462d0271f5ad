//! Round 9 of the census: ordinary C and C++ that real kernels use (HeCBench's grep, geglu,
//! local-ht and stsg) and that the front end refused: a structure declared by a forward
//! typedef and defined after it, a structure defined inside a function, designated
//! initializers, and `sizeof` of a thread's own array. Each test's numbers are worked out by
//! hand in its comment (a warp is 32 lanes; a sector 32 bytes; pointer parameters start
//! 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{analyze::Via, AnalyzeOptions, Sheet};

/// The sheet of kernel `k` of `src` under one launch.
fn kernel(src: &str, k: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, args) })
}

/// The one-line error of a one-warp launch of the source path that must fail.
fn refusal(src: &str) -> String {
    let o = AnalyzeOptions { via: Via::Source, ..options("1", "32", &[]) };
    match sector_analyzer::analyze_source("m.cu", src, &o) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => f.one_line(),
    }
}

/// HeCBench's grep (nfautil.h): a typedef before the structure, members pointing to it.
const FORWARD: &str = r#"
typedef struct State State;
struct State
{
  int c;
  int id;
  State *out;
  State *out1;
  State *dev;
  int lastlist;
  unsigned char free;
};
typedef union Ptrlist Ptrlist;
union Ptrlist
{
  Ptrlist *next;
  State *s;
  int tag;
};
typedef struct Node Node;
struct Graph { Node *nodes; int n; };
struct Node { float w[3]; Node *next; };

__global__ void last(State *pmatchstate, int *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  o[i] = pmatchstate[i].lastlist;
}
__global__ void tags(Ptrlist *l, int *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  o[i] = l[i].tag;
}
__global__ void weights(Graph g, float *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  o[i] = g.nodes[i].w[2];
}
"#;

#[test]
fn a_structure_declared_by_a_forward_typedef_is_laid_out_at_its_definition() {
    // State: c at 0, id at 4, out, out1, dev at 8, 16, 24 (pointers, 8-byte aligned), lastlist
    // at 32, free at 36: 40 bytes, aligned 8. One warp reads `lastlist` at 40 i + 32: 4 bytes
    // each, at 8 i mod 32 within a sector (never across one); consecutive lanes are 40 bytes
    // apart, more than a sector, so each lane has a sector of its own: 1 request, 32 sectors.
    // The store: 32 ints, 128 bytes, 4 sectors.
    let s = kernel(FORWARD, "last", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 32));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // `typedef union Ptrlist Ptrlist;`: the union of two pointers and an int is 8 bytes; `tag`
    // at 8 i: 32 lanes over 256 bytes, 8 sectors.
    let s = kernel(FORWARD, "tags", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 8));
}

#[test]
fn a_pointer_to_a_structure_defined_later_takes_its_final_size() {
    // Graph holds `Node *` before Node is defined. Node: w[3] at 0..12, next at 16: 24 bytes.
    // `g.nodes` is a parameter of its own (Graph by value); `w[2]` of node i is at 24 i + 8:
    // lanes 24 bytes apart (less than a sector), from byte 8 to byte 24 * 31 + 8 + 4 = 756:
    // sectors 0 to 23, each touched, 24 sectors. (With the 0-byte size the declaration had
    // when Graph was laid out every lane would read byte 8: 1 sector.)
    let s = kernel(FORWARD, "weights", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 24));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_structure_that_holds_itself_or_is_never_defined_is_refused_at_its_use() {
    // A by-value member of the structure's own type has no size (C refuses it).
    let e =
        refusal("struct S { int a; S s; };\n__global__ void k(S *p, int *o) { o[threadIdx.x] = p[threadIdx.x].a; }");
    assert!(e.contains("m.cu:2:") && e.contains("type `S` is not supported"), "{e}");
    // Declared, never defined: a pointer to it may be passed, but not used as a structure.
    let e = refusal("typedef struct T T;\n__global__ void k(T *p, int *o) { o[threadIdx.x] = p[threadIdx.x].a; }");
    assert!(e.contains("m.cu:2:") && e.contains("type `T` is declared but never defined"), "{e}");
}

/// HeCBench's geglu: a structure defined inside a kernel template, aligned to its whole size
/// (`alignas(sizeof(scalar_t) * VEC_ELEMS)`), loaded and stored whole.
const GEGLU: &str = r#"
template <typename scalar_t, int VEC_ELEMS, int FOR_LOOP>
__global__ void geglu(scalar_t *out, const scalar_t *x) {
  struct alignas(sizeof(scalar_t) * VEC_ELEMS) U {
    scalar_t data[VEC_ELEMS];
  };
  U ux[FOR_LOOP];
  U uout[FOR_LOOP];
  for (int k = 0; k < FOR_LOOP; k++) {
    int idx = ((blockIdx.x * FOR_LOOP + k) * blockDim.x + threadIdx.x) * VEC_ELEMS;
    ux[k] = *reinterpret_cast<U const *>(&x[idx]);
  }
  for (int k = 0; k < FOR_LOOP; k++)
    for (int i = 0; i < VEC_ELEMS; i++)
      uout[k].data[i] = ux[k].data[i] * scalar_t(2);
  for (int k = 0; k < FOR_LOOP; k++) {
    int idx = ((blockIdx.x * FOR_LOOP + k) * blockDim.x + threadIdx.x) * VEC_ELEMS;
    *reinterpret_cast<U *>(&out[idx]) = uout[k];
  }
}
template <typename T, int N>
__global__ void copy(T *out, const T *in) {
  struct alignas(sizeof(T) * N) V { T v[N]; };
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  V t = *reinterpret_cast<const V *>(&in[i * N]);
  *reinterpret_cast<V *>(&out[i * N]) = t;
}
"#;

#[test]
fn a_structure_defined_in_a_kernel_is_a_vector_load_when_its_alignment_is_its_size() {
    // float x 4, alignas(16): 16 bytes aligned 16, moved as one 16-byte access. 2 blocks of 2
    // warps, 2 iterations: each warp's lanes read 32 x 16 = 512 contiguous bytes starting at a
    // multiple of 512 (idx * 4 bytes = ((2 b + k) * 64 + t) * 16): 16 sectors per request.
    // Loads: 4 warps x 2 = 8 requests, 128 sectors; stores the same.
    let args = [("scalar_t", "float"), ("VEC_ELEMS", "4"), ("FOR_LOOP", "2")];
    let s = kernel(GEGLU, "geglu", "2", "64", &args);
    assert_eq!(total(&s, "global", "load"), (8, 128));
    assert_eq!(total(&s, "global", "store"), (8, 128));
    assert!(s.instructions.iter().all(|r| r.width == 16), "{:?}", s.instructions);
}

#[test]
fn a_local_structures_alignment_expression_sees_the_template_arguments() {
    // float x 2 with alignas(sizeof(float) * 2) = 8: one 8-byte access per lane, a warp's 256
    // contiguous bytes in 8 sectors. One warp: load (1, 8), store (1, 8). (Without the
    // alignment, 8 bytes aligned 4 would move as two 4-byte pieces: 2 requests each way.)
    let s = kernel(GEGLU, "copy", "1", "32", &[("T", "float"), ("N", "2")]);
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (1, 8));
    // double x 2, alignas(16): 16 bytes per lane, 512 bytes per warp, 16 sectors.
    let s = kernel(GEGLU, "copy", "1", "32", &[("T", "double"), ("N", "2")]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
    assert_eq!(total(&s, "global", "store"), (1, 16));
}

/// Structures defined in a `__device__` function and in a declaration, one without a name.
const LOCAL: &str = r#"
__device__ float sum2(const float *p, int i) {
  struct Pair { float a; float b; };
  Pair q = reinterpret_cast<const Pair *>(p)[i];
  return q.a + q.b;
}
__global__ void pairs(const float *p, float *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  o[i] = sum2(p, i);
}
__global__ void anonymous(const int *in, int *o) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  struct { int stride; int base; } q = {3, 1};
  struct Pair { int a; int b; };
  o[q.stride * i + q.base] = in[i];
}
"#;

#[test]
fn structures_defined_in_functions_and_declarations() {
    // Pair (8 bytes, aligned 4, not a vector): `q = p[i]` reads the members used, `a` at 8 i
    // and `b` at 8 i + 4, each 32 lanes over 256 bytes: 2 requests of 8 sectors. The store: 4.
    let s = kernel(LOCAL, "pairs", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 16));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // `o[3 i + 1]`: lanes 12 bytes apart from byte 4 to byte 12 * 31 + 4 + 4 = 380: sectors 0
    // to 11, 12 sectors. `in[i]`: 4. (A second `Pair` in another function is its own type.)
    let s = kernel(LOCAL, "anonymous", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 12));
}

#[test]
fn a_local_structure_with_a_member_function_is_refused_at_the_function() {
    let e = refusal(
        "__global__ void k(int *o) {\n  struct P { int a; __device__ int get() { return a; } };\n  o[threadIdx.x] = 0;\n}",
    );
    assert!(e.contains("m.cu:2:") && e.contains("member function of a structure defined inside a function"), "{e}");
}

/// HeCBench's local-ht: `thread_ht[h].val = {.hi_q_exts = {0}, ...}` on a structure in
/// memory; designated initializers of a structure in registers.
const DESIGNATED: &str = r#"
struct Counts { unsigned a, c, g, t; };
struct Freqs { Counts hi, lo; char ext; int count; };
struct Entry { long long key; Freqs val; };
struct S { int a; int b; int c; };

__global__ void clear(Entry *t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  t[i].val = {.hi = {0}, .lo = {0}, .ext = 0, .count = 0};
}
__global__ void clear_positional(Entry *t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  t[i].val = {{0}, {0}, 0, 0};
}
__global__ void named(int *o) {
  int i = threadIdx.x;
  S s = {.a = 1, .c = 2};
  o[s.c * i + s.b] = s.a;
}
__global__ void nested(const int *in, int *o) {
  int i = threadIdx.x;
  Freqs f = {.hi = {.a = 4, .g = in[i]}, .count = 1};
  o[f.hi.a * i + f.lo.t + f.count] = f.hi.g;
}
"#;

#[test]
fn a_designated_initializer_assigned_to_a_structure_in_memory_stores_it_whole() {
    // Freqs: hi at 0, lo at 16, ext at 32, count at 36: 40 bytes aligned 4; Entry: key at 0,
    // val at 8, 48 bytes. A whole structure in memory is stored in pieces of its alignment, as
    // `x = {a, b}` is: 10 stores of 4 bytes, at 48 i + 8 + 4 k. Lanes are 48 bytes apart (more
    // than a sector), each 4-byte piece inside one sector: 32 sectors per store. One warp:
    // 10 requests, 320 sectors; the same as the list without designators.
    let s = kernel(DESIGNATED, "clear", "1", "32", &[]);
    assert_eq!(total(&s, "global", "store"), (10, 320));
    assert_eq!(total(&s, "global", "load"), (0, 0));
    let p = kernel(DESIGNATED, "clear_positional", "1", "32", &[]);
    assert_eq!(total(&p, "global", "store"), (10, 320));
}

#[test]
fn designated_initializers_name_members_and_zero_the_others() {
    // s = {a = 1, b = 0 (not named), c = 2}: `o[2 i + 0]`, lanes 8 bytes apart over 256
    // bytes: 8 sectors.
    let s = kernel(DESIGNATED, "named", "1", "32", &[]);
    assert_eq!(total(&s, "global", "store"), (1, 8));
    // Nested: hi.a = 4, lo.t = 0, count = 1: `o[4 i + 1]`, lanes 16 bytes apart from byte 4 to
    // byte 16 * 31 + 4 + 4 = 504: sectors 0 to 15, 16 sectors. `in[i]`: 4 sectors.
    let s = kernel(DESIGNATED, "nested", "1", "32", &[]);
    assert_eq!(total(&s, "global", "store"), (1, 16));
    assert_eq!(total(&s, "global", "load"), (1, 4));
}

#[test]
fn a_designator_naming_no_member_is_refused_there() {
    let e = refusal("struct S { int a; };\n__global__ void k(int *o) {\n  S s = {.b = 1};\n  o[threadIdx.x] = s.a;\n}");
    assert!(e.contains("m.cu:3:") && e.contains("`S` has no member `b`"), "{e}");
}

/// HeCBench's stsg: `sizeof(savgolFilter) / sizeof(savgolFilter[0])` of an array sized by its
/// initializer.
const SIZES: &str = r#"
__global__ void filter(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float savgolFilter[] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
  int n = sizeof(savgolFilter) / sizeof(savgolFilter[0]);
  float acc = 0;
  for (int j = 0; j < n; j++) acc += savgolFilter[j] * in[i * n + j];
  out[i] = acc;
}
__global__ void rows(const float *in, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float m[3][4];
  __shared__ float tile[8][32];
  char name[] = "abcd";
  int r = sizeof(m) / sizeof(m[0]);
  int c = sizeof(m[0]) / sizeof(m[0][0]);
  int t = sizeof tile / sizeof tile[0];
  out[r * i] = in[c * i] + in[t * i + sizeof(name)];
}
"#;

#[test]
fn sizeof_of_a_threads_own_array_is_a_constant() {
    // 20 / 4 = 5 taps. Tap j reads in[5 i + j]: lanes 20 bytes apart from byte 4 j to byte
    // 620 + 4 j + 4 <= 640: sectors 0 to 19, 20 sectors each (a 4-byte word never crosses a
    // sector). 5 requests, 100 sectors; the store 4 sectors.
    let s = kernel(SIZES, "filter", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (5, 100));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn sizeof_of_a_row_is_the_rows_size() {
    // m[3][4]: sizeof(m) = 48, sizeof(m[0]) = 16, sizeof(m[0][0]) = 4: r = 3, c = 4; the
    // shared tile: 1024 / 128 = 8; "abcd" is 5 chars. in[4 i]: lanes 16 bytes apart, 512
    // bytes, 16 sectors. in[8 i + 5]: lanes 32 bytes apart from byte 20: each lane in its own
    // sector, 32. out[3 i]: lanes 12 bytes apart from byte 0 to 12 * 31 + 4 = 376: sectors 0 to
    // 11, 12 sectors. Nothing is read from `m`, `tile` or `name`.
    let s = kernel(SIZES, "rows", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 16 + 32));
    assert_eq!(total(&s, "global", "store"), (1, 12));
    assert_eq!(total(&s, "shared", "load"), (0, 0));
}

/// What HeCBench's local-ht does next: a reference bound to a function returning one, a method
/// on a member of it; an array of structures in registers, initialised by designators, copied
/// and asked for a method.
const OBJECTS: &str = r#"
struct Counts { unsigned a, c, g, t; __device__ void bump(unsigned k) { a += k; } };
struct Freqs { Counts hi, lo; char ext; int count; };
struct Entry { long long key; Freqs val; };
struct Base { int rating; int votes; __device__ int twice() const { return 2 * votes; } };

__device__ Entry &slot(Entry *t, int h) { return t[h]; }
__global__ void bump(Entry *t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  Entry &e = slot(t, i);
  e.val.lo.bump(1);
}
__global__ void rate(const int *in, int *o) {
  int i = threadIdx.x;
  Base b[2] = {{.rating = 0, .votes = in[i]}, {.rating = 1, .votes = 2}};
  Base tmp = b[0];
  b[0] = b[1];
  b[1] = tmp;
  o[i] = b[1].twice();
}
"#;

#[test]
fn a_reference_a_function_returns_names_its_place() {
    // `e` is t[i]: `lo.a` at 48 i + 8 + 16 = 48 i + 24, read and written by `bump`; lanes 48
    // bytes apart, each in its own sector: load 1 request of 32 sectors, store the same.
    let s = kernel(OBJECTS, "bump", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 32));
    assert_eq!(total(&s, "global", "store"), (1, 32));
}

#[test]
fn a_threads_own_array_of_structures_is_registers_through_copies_and_methods() {
    // Only `in[i]` (4 sectors) and `o[i]` (4 sectors) touch memory.
    let s = kernel(OBJECTS, "rate", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    assert_eq!(s.instructions.len(), 2, "{:?}", s.instructions);
}

/// Separate compilation (HeCBench's merkle, built with `nvcc -rdc=true`): `tree.cu` declares
/// `merge` from a header and `hash.cu` beside it defines it, calling `mix` from `mix.cu`. The
/// analysis reads both definitions from their files, as the device linker joins them, and says
/// so. One warp: `merge` loads `in[2i]` and `in[2i + 1]` (lanes 8 bytes apart, so each load
/// touches 4-byte words within bytes 0..255: 8 sectors each) and the kernel stores `out[i]`
/// (128 contiguous bytes, 4 sectors).
#[test]
fn a_device_function_of_another_file_is_linked_from_there() {
    let dir = std::env::temp_dir().join(format!("sector-estimate-round9-rdc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("hash.h"), "#pragma once\n__device__ unsigned merge(const unsigned *in, unsigned i);\n")
        .unwrap();
    std::fs::write(
        dir.join("tree.cu"),
        "#include \"hash.h\"\n__global__ void tree(const unsigned *in, unsigned *out) {\n  unsigned i = threadIdx.x;\n  out[i] = merge(in, i);\n}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("hash.cu"),
        "#include \"hash.h\"\n__device__ unsigned mix(unsigned a, unsigned b);\n__device__ unsigned merge(const unsigned *in, unsigned i) {\n  return mix(in[2 * i], in[2 * i + 1]);\n}\n",
    )
    .unwrap();
    std::fs::write(dir.join("mix.cu"), "__device__ unsigned mix(unsigned a, unsigned b) { return a * 31 + b; }\n")
        .unwrap();
    let o = AnalyzeOptions { via: Via::Source, ..options("1", "32", &[]) };
    let a = sector_analyzer::analyze(
        sector_analyzer::Input::File(&dir.join("tree.cu")),
        &o,
        &sector_analyzer::source::DiskLoader,
    )
    .unwrap_or_else(|f| panic!("{}", f.one_line()));
    assert_eq!(total(&a.sheet, "global", "load"), (2, 16));
    assert_eq!(total(&a.sheet, "global", "store"), (1, 4));
    let text = sector_analyzer::sheet::text::render(&a.sheet);
    assert!(text.contains("hash.cu") && text.contains("mix.cu") && text.contains("-rdc"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `*(a + k)` of a pointer to the thread's own array is `a[k]`: registers, no memory (merkle's
/// `ff_p_vec_mul`); `UINT64_MAX` is <cstdint>'s; `(int)sqrtf(float(9))` is 3 (IEEE square
/// root). One warp: `in[i]` 1 request, 4 sectors; three stores `out[32 j + i]`, 4 sectors each.
#[test]
fn own_array_arithmetic_stdint_limits_and_square_roots() {
    let src = r#"
__device__ void add(const unsigned long long *a, const unsigned long long *b, unsigned long long *c) {
  *(c + 0) = *(a + 0) + *(b + 0);
  *(c + 1) = *(a + 1) > UINT64_MAX - *(b + 1) ? 0 : *(a + 1) + *(b + 1);
}
__global__ void k(const float *in, float *out, int n) {
  unsigned long long x[2] = {1, 2}, y[2] = {3, 4}, z[2];
  add(x, y, z);
  int i = threadIdx.x;
  float v = in[i] + (float)z[1];
  int r = (int)sqrtf(float(n));
  for (int j = 0; j < r; j++) out[32 * j + i] = v;
}
"#;
    let s = sheet_with(src, &AnalyzeOptions { via: Via::Source, ..options("1", "32", &[("n", "9")]) });
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (3, 12));
}

/// <type_traits> (HeCBench's bitpacking): `std::make_unsigned<INPUT>::type` of `short` is
/// `unsigned short`, 2 bytes: one warp loads 64 contiguous bytes (2 sectors) and stores 64
/// (2 sectors). Of `float` there is no unsigned type: refused, naming it.
#[test]
fn type_traits_make_unsigned() {
    let src = r#"
template <typename INPUT>
__global__ void k(const INPUT *in, typename std::make_unsigned<INPUT>::type *out) {
  using U = typename std::make_unsigned<INPUT>::type;
  int i = threadIdx.x;
  out[i] = static_cast<U>(in[i]);
}
"#;
    let s = sheet_with(src, &AnalyzeOptions { via: Via::Source, ..options("1", "32", &[("INPUT", "short")]) });
    assert_eq!(total(&s, "global", "load"), (1, 2));
    assert_eq!(total(&s, "global", "store"), (1, 2));
    let e =
        crate::support::failure(src, &AnalyzeOptions { via: Via::Source, ..options("1", "32", &[("INPUT", "float")]) });
    assert!(e.contains("make_unsigned"), "{e}");
}
