//! Issue 27, round 8 of the census: what a refusal names so that the user (and the census) can
//! give it. Each test's numbers are worked out by hand in its comment (a warp is 32 lanes; a
//! sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::fill::Fill;

/// HeCBench's murmurhash3: the trip count `len / 16` comes from `length[i]`, passed to a helper
/// and kept in locals; the loop's own line names no array.
const HASH: &str = r#"
__device__ void hash(const unsigned char *key, unsigned len, unsigned long long *out) {
  unsigned nblocks = len / 16;
  unsigned long long h = 0;
  for (unsigned i = 0; i < nblocks; i++) h += ((const unsigned long long *)key)[i * 2];
  out[0] = h;
}
__global__ void k(const unsigned char *keys, const unsigned *off, const unsigned *length, unsigned long long *out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  hash(keys + off[i], length[i], out + i);
}
"#;

#[test]
fn a_loop_bounded_by_data_names_the_arrays_its_condition_was_read_from() {
    let e = match sector_analyzer::analyze_source("m.cu", HASH, &options("1", "32", &[])) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => f.diagnostic.notes.join("\n"),
    };
    assert!(e.contains("the condition is read from `length`:"), "{e}");
    assert!(e.contains("--fill length=SPEC"), "{e}");
    // Not `off`, which only moves the key's address.
    assert!(!e.contains("`off`"), "{e}");
    // Given length[i] = 64 and off[i] = 0: 4 iterations, every lane reading the same 8 bytes at
    // keys + 16 i: 4 requests of 1 sector. off and length: 1 request of 4 sectors each.
    let o = sector_analyzer::AnalyzeOptions {
        fills: vec![
            ("length".into(), Fill::parse("constant:64").unwrap()),
            ("off".into(), Fill::parse("constant:0").unwrap()),
        ],
        ..options("1", "32", &[])
    };
    let s = sheet_with(HASH, &o);
    assert_eq!(total(&s, "global", "load"), (4 + 2, 4 + 8));
}

/// A merge path's search (HeCBench's merge): the loop tests a shared flag that one lane sets
/// under a comparison of `A` and `B`; `out` is only written.
const SEARCH: &str = r#"
__global__ void search(const int *A, const int *B, int *out) {
  __shared__ int found;
  if (threadIdx.x == 0) found = 0;
  __syncthreads();
  int x = 0;
  while (!found) {
    if (A[x] <= B[x]) found = 1;
    x++;
    out[x] = 0;
    __syncthreads();
  }
}
"#;

#[test]
fn a_flag_staged_through_shared_memory_names_what_its_branch_tested() {
    let e = match sector_analyzer::analyze_source("m.cu", SEARCH, &options("1", "32", &[])) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => f.diagnostic.notes.join("\n"),
    };
    assert!(e.contains("the condition is read from `A`, `B`:"), "{e}");
}

/// A float maximum written as a compare-and-swap loop (HeCBench's atomicCAS, and the classic
/// `atomicMax` for floats): each lane of one warp updates its own word.
const CAS_MAX: &str = r#"
__global__ void amax(float *out, const float *v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int *a = (int *)&out[i];
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(fmaxf(v[i], __int_as_float(assumed))));
  } while (assumed != old);
}
__global__ void amin(unsigned long long *a, unsigned long long val) {
  unsigned long long ret = *a;
  while (val < ret) {
    unsigned long long old = ret;
    if ((ret = atomicCAS(a, old, val)) == old) break;
  }
}
"#;

#[test]
fn a_loop_retrying_a_compare_and_swap_is_one_pass_and_says_so() {
    // One pass: `*a` and `v[i]` load 32 consecutive words (1 request, 4 sectors each); the CAS
    // (result used: atom) 1 request over the same 4 sectors. Not exact: another thread could
    // win the race and cost a pass.
    let o = sector_analyzer::AnalyzeOptions { kernel: Some("amax".into()), ..options("1", "32", &[]) };
    let s = sheet_with(CAS_MAX, &o);
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(total(&s, "global", "atom"), (1, 4));
    let cas = s.instructions.iter().find(|r| r.op == "atom").unwrap();
    assert!(!cas.exact);
    assert!(s.assumptions.iter().any(|a| a.contains("retries a compare-and-swap")), "{:?}", s.assumptions);
    // The minimum's loop tests data before it runs (`val < ret`): entered once, left by the
    // break. 32 lanes on one 8-byte word: the load is 1 request of 1 sector; the CAS, lanes to
    // one address served one after another, 32 sectors.
    let o = sector_analyzer::AnalyzeOptions { kernel: Some("amin".into()), ..options("1", "32", &[("val", "5")]) };
    let s = sheet_with(CAS_MAX, &o);
    assert_eq!(total(&s, "global", "load"), (1, 1));
    assert_eq!(total(&s, "global", "atom"), (1, 32));
}
