//! Values a block stores in shared memory and reads back to decide a loop, a branch or an
//! address (issue 27, round 9): the engine runs the block until what it stores settles, then
//! counts. The kernels are `validate/probes/round9/round9.cu`, measured on the device (its
//! README has the table); each test's numbers are worked out by hand in its comment (a warp is
//! 32 lanes; a sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{failure, options, sheet_with, total};

const PROBE: &str = include_str!("../../validate/probes/round9/round9.cu");

fn probe(k: &str, grid: &str, block: &str) -> sector_analyzer::Sheet {
    let o = sector_analyzer::AnalyzeOptions { kernel: Some(k.into()), ..options(grid, block, &[]) };
    sheet_with(PROBE, &o)
}

fn exact(s: &sector_analyzer::Sheet) -> bool {
    s.instructions.iter().filter(|r| r.space == "global").all(|r| r.exact)
}

/// `n = 3 * blockIdx.x + 1` by thread 0, read by both warps of 64 threads after the barrier;
/// `i` runs from the thread's index below `32 n` in steps of 64. Block 0 (`n = 1`): warp 0
/// stores 32 floats once (128 contiguous bytes, 4 sectors), warp 1 (threads 32..63) not at all.
/// Block 1 (`n = 4`, `i < 128`): each warp twice, 4 sectors each. 5 requests, 20 sectors.
#[test]
fn a_trip_count_one_thread_stores() {
    let s = probe("staged_bound", "2", "64");
    assert_eq!(total(&s, "global", "store"), (5, 20));
    assert!(exact(&s));
    assert!(s.assumptions.iter().any(|a| a.contains("stored there last")), "{:?}", s.assumptions);
}

/// `lo = 100 b`, `hi = lo + 50`; `i = lo + tid` while `i < hi`, steps of 64. Block 0: warp 0
/// stores elements 0..31 (bytes 0..127, 4 sectors), warp 1 elements 32..49 (bytes 128..199, 3
/// sectors). Block 1: warp 0 elements 100..131 (bytes 400..527: sectors 12..16, 5), warp 1
/// elements 132..149 (bytes 528..599: sectors 16..18, 3). 4 requests, 15 sectors.
#[test]
fn a_window_one_thread_stores() {
    let s = probe("window_bounds", "2", "64");
    assert_eq!(total(&s, "global", "store"), (4, 15));
    assert!(exact(&s));
}

/// `next[j] = (5 j + 3) mod 64`, three steps: `j = 125 t + 93 = 61 t + 29 (mod 64)`, a
/// permutation. A warp's 32 values `29 - 3 t (mod 64)`, `t` in 32 consecutive numbers, step
/// by 3 across 96 numbers: every run of 8 elements (one sector of floats) gets some. 2 warps x
/// 2 blocks, 8 sectors each: 4 requests, 32 sectors, where unknown addresses were a guess.
#[test]
fn an_address_read_from_a_table_the_block_built() {
    let s = probe("shared_index_chase", "2", "64");
    assert_eq!(total(&s, "global", "store"), (4, 32));
    assert!(exact(&s));
}

/// Lane `l` sums the `l + 1` ones its warp stored: `n = l + 1`. Pass `i` stores lanes `i..31`
/// at `out[32 i + l]`: bytes `128 i + 4 l`, sectors `i / 8 .. 3` of its 128-byte row, so `4 -
/// i / 8`. 32 passes, 8 x (4 + 3 + 2 + 1) = 80 sectors; trip counts differ between lanes, so
/// the row states nvcc may unroll it.
#[test]
fn a_warp_reads_its_own_stores_at_once() {
    let s = probe("warp_prefix", "1", "32");
    assert_eq!(total(&s, "global", "store"), (32, 80));
}

/// `s[k] = 7 k mod 64`. Thread 0: `t = s[1 + 0] = 7`, then `t = s[2 + 7] = 63`, and `t < 32`
/// fails. Thread 63 (warp 1) stores `out[b]`: one lane, 1 request and 1 sector per block.
#[test]
fn a_branch_on_a_tree_walk() {
    let s = probe("tree_walk", "2", "64");
    assert_eq!(total(&s, "global", "store"), (2, 2));
    assert!(exact(&s));
}

/// Warp 1 stores the bound while warp 0 reads it, with no barrier between: a race. Warp 0's
/// trip count is not known, and the kernel is refused (never a number from one ordering).
#[test]
fn a_race_is_not_read() {
    let src = r#"
__global__ void k(float *out) {
  __shared__ int n;
  if (threadIdx.x == 32) n = 4;
  for (int i = 0; i < n; i++) out[i * 64 + threadIdx.x] = 1.0f;
}
"#;
    let e = failure(src, &options("1", "64", &[]));
    assert!(e.contains("does not know"), "{e}");
}

/// An atomic on the counter leaves its value unknown: the loop it bounds is refused.
#[test]
fn an_atomic_counter_is_not_guessed() {
    let src = r#"
__global__ void k(float *out) {
  __shared__ int n;
  if (threadIdx.x == 0) n = 0;
  __syncthreads();
  atomicAdd(&n, 1);
  __syncthreads();
  for (int i = 0; i < n; i++) out[i * 64 + threadIdx.x] = 1.0f;
}
"#;
    let e = failure(src, &options("1", "64", &[]));
    assert!(e.contains("does not know"), "{e}");
}

/// `explain` follows the same shared values as the sheet: the store of line 11 in `staged_bound`
/// is explained (warp 0 of block 0 stores 32 floats at bytes 0..127 of `out`: 4 sectors), where
/// it used to be refused as a loop bounded by data.
#[test]
fn explain_reads_the_same_shared_values() {
    use sector_analyzer::explain::{explain, render_text, ExplainOptions};
    let opts = ExplainOptions {
        analyze: sector_analyzer::AnalyzeOptions { kernel: Some("staged_bound".into()), ..options("2", "64", &[]) },
        line: 11,
        column: Some(58),
        ..Default::default()
    };
    let input = sector_analyzer::Input::Source { name: "round9.cu", text: PROBE };
    let (x, files) =
        explain(input, &opts, &sector_analyzer::source::NoFiles).unwrap_or_else(|f| panic!("{}", f.one_line()));
    let text = render_text(&x, &files, false);
    assert!(text.contains("4 sectors"), "{text}");
}
