//! Round 10 of the census: what HeCBench's sampling and ss (a sample nobody here had read)
//! needed of the source path: a kernel parameter whose address a helper writes through, and an
//! element in parentheses that the grammar reads as a cast to an array type. Each test's numbers
//! are worked out by hand in its comment (a warp is 32 lanes; a sector 32 bytes; pointer
//! parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{analyze::Via, AnalyzeOptions, Sheet};

fn kernel(src: &str, k: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, args) })
}

/// HeCBench's sampling: a random-number helper advances the kernel's `seed` through its address.
const SEED: &str = r#"
__device__ unsigned next(unsigned long long *seed) {
  *seed = *seed * 6364136223846793005ULL + 1ULL;
  return (unsigned)(*seed >> 33);
}
__global__ void draw(const float *x, float *out, unsigned long long seed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  next(&seed);
  out[i] = x[i] + (float)next(&seed);
  out[i + n] = x[i];
}
"#;

#[test]
fn a_kernel_parameter_a_helper_writes_through_is_a_local_of_the_thread() {
    // The parameter is copied to a register at entry; no memory moves for it. Per warp: x[i]
    // twice (two loads of 32 floats at 128-byte-aligned rows: 4 sectors each), two stores of
    // 32 floats (4 sectors each; `out + n` with n = 1024 keeps the rows aligned). Two warps.
    let s = kernel(SEED, "draw", "1", "64", &[("n", "1024")]);
    assert_eq!(total(&s, "global", "load"), (4, 16));
    assert_eq!(total(&s, "global", "store"), (4, 16));
}

/// HeCBench's ss: `#define TOLOWER(x) (('A' <= (x) && (x) <= 'Z') ? ((x) - 'A' + 'a') : (x))`
/// applied to `pattern[idx]`: `(pattern[idx]) - 'A'` parses as a cast of `-'A'` to the
/// array type `pattern[idx]`.
const LOWER: &str = r#"
#define TOLOWER(x) (('A' <= (x) && (x) <= 'Z') ? ((x) - 'A' + 'a') : (x))
typedef unsigned char uchar;
__global__ void lower(const uchar *pattern, uchar *out, int n) {
  __shared__ uchar local[64];
  for (int idx = threadIdx.x; idx < n; idx += blockDim.x)
    local[idx] = TOLOWER(pattern[idx]);
  __syncthreads();
  out[threadIdx.x] = local[threadIdx.x];
}
"#;

#[test]
fn an_element_in_parentheses_before_a_minus_is_a_value_not_a_cast() {
    // n = 64 bytes, one warp: the loop runs twice (idx = lane, lane + 32); each time one load
    // of 32 consecutive bytes (one sector): the macro's other reads of the same element find it
    // in the thread's register (nvcc loads it once), whichever way the data decides. One shared
    // store per iteration. Then out[lane]: 32 bytes, one sector.
    let s = kernel(LOWER, "lower", "1", "32", &[("n", "64")]);
    assert_eq!(total(&s, "global", "load"), (2, 2));
    assert_eq!(total(&s, "global", "store"), (1, 1));
    assert_eq!(total(&s, "shared", "store").0, 2);
}

// ---- The compiler model, from held-out launches whose SASS disagreed with the source path ----

/// HeCBench's ecdh: a helper writes the result through pointers (`*x3 = ..`), called in a loop
/// whose trip count is a parameter; the pointers are `__restrict__` and nothing else in the
/// loop touches them.
const ECDH: &str = r#"
__device__ void add(int m, int x1, int y1, int *x3, int *y3) {
  *x3 = (x1 * x1 + 1) % m;
  *y3 = (y1 * (x1 - *x3)) % m;
}
__global__ void slow(int sk, int *__restrict__ T_x, int *__restrict__ T_y, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  add(m, 3, 5, T_x + i, T_y + i);
  sk -= 2;
  while (sk > 0) {
    add(m, *(T_x + i), *(T_y + i), T_x + i, T_y + i);
    --sk;
  }
}
__global__ void fast(int sk, int *__restrict__ T_x, int *__restrict__ T_y, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  *(T_x + i) = 3;
  *(T_y + i) = 5;
  for (int b = sk - 1; b >= 0; --b) {
    add(m, *(T_x + i), *(T_y + i), T_x + i, T_y + i);
    if ((1 << b) & sk)
      add(m, *(T_x + i), *(T_y + i), T_x + i, T_y + i);
  }
}
"#;

#[test]
fn stores_through_a_helpers_pointers_in_a_loop_are_written_once_after_it() {
    // nvcc keeps `T_x[i]` and `T_y[i]` in registers through the loop (LICM's promotion: the
    // addresses do not change and nothing else in the loop may touch them) and stores each once
    // after it; the stores before the loop stay (the loop may not run). Per warp: 2 stores
    // before, 2 after, each 32 ints in 4 sectors; the loads in the loop read registers. Eight
    // warps: 32 requests, 128 sectors (nvcc's SASS of HeCBench's ecdh has these 4 STG).
    let s = kernel(ECDH, "slow", "1", "256", &[("sk", "18"), ("m", "17")]);
    assert_eq!(total(&s, "global", "store"), (32, 128));
    assert_eq!(total(&s, "global", "load"), (0, 0));
}

#[test]
fn a_conditional_store_to_a_promoted_location_shares_its_register() {
    // The unconditional store of each iteration makes `T_x[i]` a register; the conditional one
    // writes the same register. Per warp: the 2 stores before the loop and 2 after it (not 2 more
    // for the conditional call): 8 warps, 32 requests, 128 sectors.
    let s = kernel(ECDH, "fast", "1", "256", &[("sk", "18"), ("m", "17")]);
    assert_eq!(total(&s, "global", "store"), (32, 128));
    assert_eq!(total(&s, "global", "load"), (0, 0));
}

/// HeCBench's cbsfil: the first element is read before the loop, then again on its first
/// iteration, through a pointer the loop advances.
const WALK: &str = r#"
__global__ void walk(float *image, unsigned pitch, unsigned n) {
  unsigned y = blockIdx.x * blockDim.x + threadIdx.x;
  float *c = (float *)((char *)image + y * pitch);
  float sum = *c;
  for (unsigned k = 0; k < n; k++) {
    sum += 0.5f * *c;
    c = (float *)((char *)c + 4);
  }
  image[y] = sum;
}
"#;

#[test]
fn a_load_on_a_loops_first_iteration_is_not_the_load_before_the_loop() {
    // In the loop `c` is a new value (a phi of the value before the loop and the advanced one):
    // nvcc loads `*c` again on the first iteration. n = 12: 1 + 12 loads per warp; each lane's
    // rows are `pitch` = 1024 bytes apart, so every load touches 32 sectors. One warp: 13
    // requests, 416 sectors; the store of 32 floats: 4 sectors.
    let s = kernel(WALK, "walk", "1", "32", &[("pitch", "1024"), ("n", "12")]);
    assert_eq!(total(&s, "global", "load"), (13, 416));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

/// HeCBench's qrg: a table entry loaded when a bit of the thread's number is set. nvcc unrolls
/// the 31 bits and sets seven predicates at a time from a byte of the number
/// (`R2P PR, R6.B3, 0x7f`): the byte selector decides which bits.
const QRNG: &str = r#"
__global__ void qrng(float *output, const unsigned int *table, const unsigned int seed, const unsigned int N) {
  unsigned int globalID_x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int localID_y = threadIdx.y;
  unsigned int globalSize_x = gridDim.x * blockDim.x;
  for (unsigned int pos = globalID_x; pos < N; pos += globalSize_x) {
    unsigned int result = 0;
    unsigned int data = seed + pos;
    for (int bit = 0; bit < 31; bit++, data >>= 1)
      if (data & 1) result ^= table[bit + localID_y * 31];
    output[__mul24(localID_y, N) + pos] = (float)(result + 1) * 4.656612e-10f;
  }
}
"#;

#[test]
fn a_table_load_under_a_bit_of_the_index_counts_the_same_from_source_and_sass() {
    // Grid 8x8 of 16x16: 512 warps of 16 x-lanes (16 consecutive, aligned `pos`) by 2 rows;
    // 128 columns in all, N = 256: two `pos` per thread, 1,024 warp-iterations. data = 256 +
    // pos is in [256, 512): bits 0-3 differ within a warp (a load every time: 4 x 1,024), bits
    // 4-7 are one value per warp, set for half of them (4 x 512), bit 8 is always set (1,024),
    // bits 9-30 never: 7,168 requests, each reading table[bit] and table[bit + 31] (two
    // sectors). The store: 1,024 requests of two 64-byte rows, 4 sectors each.
    let args = [("N", "256"), ("seed", "256")];
    for via in [Via::Source, Via::Sass] {
        if via == Via::Sass && !sector_analyzer::analyze::toolkit_found() {
            continue;
        }
        let o = AnalyzeOptions { via, ..options("8,8", "16,16", &args) };
        let s = match sector_analyzer::analyze_source("q.cu", QRNG, &o) {
            Ok(a) => a.sheet,
            Err(f) => panic!("{}", f.one_line()),
        };
        assert_eq!(total(&s, "global", "load"), (7168, 14336), "{via:?}");
        assert_eq!(total(&s, "global", "store"), (1024, 4096), "{via:?}");
    }
}

/// HeCBench's clenergy: the four members of a `float4` read on four lines of a loop body with
/// no store between them.
const ATOMS: &str = r#"
__global__ void energy(int n, float h, const float4 *atoms, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float e = 0.0f;
  for (int j = 0; j < n; j++) {
    float dy = h - atoms[j].y;
    float dyz = dy * dy + atoms[j].z;
    float dx = h * i - atoms[j].x;
    e += atoms[j].w * rsqrtf(dx * dx + dyz);
    e += atoms[j].w * 0.5f;
  }
  out[i] = e;
}
__global__ void own(const float4 *p, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float a = p[i].x;
  float b = p[i].y * a;
  float c = p[i].z + p[i].w;
  out[i] = b + c;
}
"#;

#[test]
fn member_loads_of_one_vector_element_on_several_lines_are_one_load() {
    // nvcc's vectorizer merges `.y .z .x .w` of `atoms[j]` (one basic block, no store) into one
    // 16-byte load; the second `.w` reads the same register. One warp, n = 10: every lane reads
    // the same atom, 16 bytes in one sector: 10 requests, 10 sectors (40 and 40 member by
    // member). The store: 32 floats, 4 sectors.
    let s = kernel(ATOMS, "energy", "1", "32", &[("n", "10")]);
    assert_eq!(total(&s, "global", "load"), (10, 10));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // Each lane its own element: 32 lanes x 16 bytes = 512 bytes, 16 sectors in one request
    // (member by member: 4 requests of 16 sectors each).
    let s = kernel(ATOMS, "own", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 16));
}

/// HeCBench's backprop: `delta[index_x]` read before a `__syncthreads()` and again after it.
const BARRIER: &str = r#"
__global__ void after(const float *__restrict__ delta, float *w, const float *plain) {
  int tx = threadIdx.x;
  w[tx] = delta[tx] + plain[tx];
  __syncthreads();
  if (threadIdx.y == 0)
    w[tx + 32] = delta[tx] * plain[tx];
}
"#;

#[test]
fn what_a_thread_read_through_a_const_restrict_pointer_survives_a_barrier() {
    // One warp of 32 (threadIdx.y = 0). Before the barrier: delta[tx] and plain[tx], one request
    // of 4 sectors each. After it, nvcc reads `delta` again from its register (read-only for the
    // whole kernel: `LDG.E.CONSTANT`) but `plain` from memory (another thread may have written
    // it before the barrier): 3 load requests, 12 sectors. Two stores of 4 sectors.
    let s = kernel(BARRIER, "after", "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (3, 12));
    assert_eq!(total(&s, "global", "store"), (2, 8));
}
