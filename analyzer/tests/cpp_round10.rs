//! Round 10 of the census: what HeCBench's sampling and ss (a sample nobody here had read)
//! needed of the source path: a kernel parameter whose address a helper writes through, and an
//! element in parentheses that the grammar reads as a cast to an array type. Each test's numbers
//! are worked out by hand in its comment (a warp is 32 lanes; a sector 32 bytes; pointer
//! parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::{AnalyzeOptions, Sheet};

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
