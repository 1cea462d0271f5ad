//! Issue 27, round 8 of the census: what a refusal names so that the user (and the census) can
//! give it. Each test's numbers are worked out by hand in its comment (a warp is 32 lanes; a
//! sector 32 bytes; pointer parameters start 256-byte aligned).

use crate::support::{options, sheet_with, total};
use sector_analyzer::fill::Fill;

/// `validate/probes/round8/round8.cu`: kernels of this round measured on the device (its README
/// has the table); the tests below assert what was measured.
const PROBE: &str = include_str!("../../validate/probes/round8/round8.cu");

/// The sheet of the probe's kernel `k` under one launch.
fn probe(k: &str, grid: &str, block: &str, args: &[(&str, &str)], fills: &[(&str, &str)]) -> sector_analyzer::Sheet {
    let o = sector_analyzer::AnalyzeOptions {
        kernel: Some(k.into()),
        fills: fills.iter().map(|(n, f)| (n.to_string(), Fill::parse(f).unwrap())).collect(),
        ..options(grid, block, args)
    };
    sheet_with(PROBE, &o)
}

/// The notes of a one-warp launch's refusal.
fn refusal_notes(src: &str) -> String {
    match sector_analyzer::analyze_source("m.cu", src, &options("1", "32", &[])) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => f.diagnostic.notes.join("\n"),
    }
}

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
    let e = refusal_notes(HASH);
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
    let e = refusal_notes(SEARCH);
    assert!(e.contains("the condition is read from `A`, `B`:"), "{e}");
}

/// A float maximum written as a compare-and-swap loop (HeCBench's atomicCAS, and the classic
/// `atomicMax` for floats): each lane of one warp updates its own word.
#[test]
fn a_loop_retrying_a_compare_and_swap_is_one_pass_and_says_so() {
    // A float maximum, each lane its own word, 4 blocks of 4 warps. One pass: `*a` and `v[i]`
    // load 32 consecutive words per warp (1 request, 4 sectors each); the CAS (result used:
    // atom) 1 request over the same 4 sectors. Not exact: another thread could win the race
    // and cost a pass. Measured: ld 32 / 128, atom 16 / 64.
    let s = probe("cas_max_own", "4", "128", &[], &[]);
    assert_eq!(total(&s, "global", "load"), (32, 128));
    assert_eq!(total(&s, "global", "atom"), (16, 64));
    let cas = s.instructions.iter().find(|r| r.op == "atom").unwrap();
    assert!(!cas.exact);
    assert!(s.assumptions.iter().any(|a| a.contains("retries a compare-and-swap")), "{:?}", s.assumptions);
    // The minimum's loop tests data before it runs (`val < ret`): entered once, left by the
    // break. 32 lanes on one 8-byte word: the load is 1 request of 1 sector; the CAS, lanes to
    // one address served one after another, 32 sectors. Measured the same (the losers read 5
    // and leave at the test).
    let s = probe("cas_min_shared_word", "1", "32", &[("val", "5")], &[]);
    assert_eq!(total(&s, "global", "load"), (1, 1));
    assert_eq!(total(&s, "global", "atom"), (1, 32));
    // An add by CAS, 32 lanes on one word: one pass counted (1 / 32), not exact; measured 32
    // passes, 32 requests and 32 + 31 + ... + 1 = 528 sectors.
    let s = probe("cas_add_shared_word", "1", "32", &[("val", "1")], &[]);
    assert_eq!(total(&s, "global", "atom"), (1, 32));
    assert!(s.instructions.iter().filter(|r| r.op == "atom").all(|r| !r.exact));
}

#[test]
fn a_pointer_into_a_threads_own_array_moves_no_memory() {
    // HeCBench's dwconv1d: `float4 *s = ss + j; s->x += 1` on the thread's own array. One
    // warp; each lane's 16-byte vectors sit 32 bytes apart, so every lane has a sector of its
    // own: 2 loads of 32 sectors, 2 stores of 32 sectors; nothing for `s`. Measured the same.
    let s = probe("own_array_pointer", "1", "32", &[], &[]);
    assert_eq!(total(&s, "global", "load"), (2, 64));
    assert_eq!(total(&s, "global", "store"), (2, 64));
    assert_eq!(s.instructions.len(), 2);
}

/// HeCBench's f16atomic: overloads on `__half *` and `__nv_bfloat16 *`, both 2-byte floats to
/// the analysis, picked by the line they are defined on.
const TWINS: &str = r#"
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void add(__half *r) { r[threadIdx.x] = r[threadIdx.x]; }
__global__ void add(__nv_bfloat16 *r) { r[2 * threadIdx.x] = r[2 * threadIdx.x]; }
"#;

#[test]
fn overloads_the_analysis_reads_alike_are_picked_by_line() {
    let pick = |k: &str| sector_analyzer::AnalyzeOptions { kernel: Some(k.into()), ..options("1", "32", &[]) };
    // Line 4: 32 lanes x 2 bytes = 64 bytes, 2 sectors. Line 5: a 4-byte stride, 128 bytes over
    // 4 sectors.
    assert_eq!(total(&sheet_with(TWINS, &pick("add@4")), "global", "store"), (1, 2));
    assert_eq!(total(&sheet_with(TWINS, &pick("add@5")), "global", "store"), (1, 4));
    let e = crate::support::failure(TWINS, &pick("add"));
    assert!(e.contains("add@4, add@5"), "{e}");
    let e = crate::support::failure(TWINS, &pick("add@6"));
    assert!(e.contains("no kernel `add` defined on line 6"), "{e}");
}

#[test]
fn an_undeclared_name_asks_for_the_builds_define() {
    // dwconv1d's `BF`, which its build passes as -DBF=...: given with -D, the loop runs BF
    // times; BF = 2 stores 2 x 128 bytes, 8 sectors.
    let src = "__global__ void k(float *a) { for (int j = 0; j < BF; j++) a[j * 32 + threadIdx.x] = 0; }";
    let e = refusal_notes(src);
    assert!(e.contains("-D BF=VALUE"), "{e}");
    let o = sector_analyzer::AnalyzeOptions { defines: vec![("BF".into(), "2".into())], ..options("1", "32", &[]) };
    assert_eq!(total(&sheet_with(src, &o), "global", "store"), (2, 8));
}

#[test]
fn a_call_in_a_lazy_operand_runs_only_where_it_is_evaluated() {
    // HeCBench's gc: `load2` on the right of `&&` and in an arm of `?:`. n = 8, a[] = 1: lanes
    // 0..7 call load2(a): a[i] and a[i + 32], 32 bytes each, 1 sector per request. They take
    // `1`; of the others, lanes 16..31 call load2(b): 64 bytes, 2 sectors per request. The
    // store: 128 bytes, 4 sectors. Measured: ld 4 / 6, st 1 / 4.
    let s = probe("lazy_calls", "1", "32", &[("n", "8")], &[("a", "constant:1")]);
    assert_eq!(total(&s, "global", "load"), (4, 2 + 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
    // Per inlined load (both calls' rows read `a[i]`, the helper's text): 1, 1, 2, 2 sectors.
    let mut per_row: Vec<u64> = s.instructions.iter().filter(|r| r.op == "load").map(|r| r.sectors).collect();
    per_row.sort();
    assert_eq!(per_row, [1, 1, 2, 2]);
}

#[test]
fn a_fill_gives_a_float_arrays_values_too() {
    // `w[0]` = 3.0 bounds the loop: 3 iterations of one warp storing 128 bytes, 4 sectors each;
    // `w[0]` is read again each test (the stores may alias it): 4 loads of 1 sector. Measured:
    // ld 4 / 4, st 3 / 12.
    let s = probe("float_bound", "1", "32", &[], &[("w", "constant:3")]);
    assert_eq!(total(&s, "global", "load"), (4, 4));
    assert_eq!(total(&s, "global", "store"), (3, 12));
}

#[test]
fn an_enumerator_of_an_unread_header_is_not_the_users_mistake() {
    // cub's `BlockScanAlgorithm`: the source path cannot know `BLOCK_SCAN_RAKING`'s value; it
    // refuses (and the SASS path, which compiles the file, may take it), never a usage error.
    let src = "template <int B, Algo A> __global__ void k(float *a) { a[threadIdx.x] = 0; }";
    let o = sector_analyzer::AnalyzeOptions {
        via: sector_analyzer::analyze::Via::Source,
        ..options("1", "32", &[("B", "4"), ("A", "cub::BLOCK_SCAN_RAKING")])
    };
    match sector_analyzer::analyze_source("m.cu", src, &o) {
        Ok(_) => panic!("expected a refusal"),
        Err(f) => {
            assert_eq!(f.diagnostic.kind, sector_analyzer::ErrorKind::Unsupported, "{}", f.one_line());
            assert!(f.one_line().contains("`cub::BLOCK_SCAN_RAKING` is not declared in the file"), "{}", f.one_line());
        }
    }
}

/// HeCBench's flame: a `__constant__` structure's array members reached through a helper's
/// pointer (`&cp.t[idx][0]`), a pointer to its structures (`vp[k].idx`), a reference to an
/// element, and `q.x = q.y = 0` on the thread's own vector. None of it moves global memory.
const CONSTANT_MEMBERS: &str = r#"
struct VP { float factor; int idx; };
struct P { float t[4][6]; VP vp[4][2]; float colors[4]; };
__constant__ P cp;
__device__ float2 aff(float2 p, const float *w) { float2 r; r.x = w[0] * p.x + w[1]; r.y = w[2]; return r; }
__global__ void flame(const float2 *in, float2 *out, float *col) {
  int i = threadIdx.x;
  int idx = i & 3;
  float2 p = aff(in[i], &cp.t[idx][0]);
  const VP *vp = &cp.vp[idx][0];
  float2 q;
  q.x = q.y = 0.0f;
  for (int k = 0; k < 2; k++) {
    if (vp[k].idx == 0) q.x += p.x;
  }
  const float &c = cp.colors[idx];
  col[i] = c;
  out[i] = q;
}
"#;

#[test]
fn constant_structure_members_through_pointers_and_references_move_no_global_memory() {
    // One warp: in[i] and out[i] are 8-byte float2s, 256 bytes: 8 sectors each; col[i] 128
    // bytes, 4 sectors.
    let s = sheet_with(CONSTANT_MEMBERS, &options("1", "32", &[]));
    assert_eq!(total(&s, "global", "load"), (1, 8));
    assert_eq!(total(&s, "global", "store"), (2, 12));
}

#[test]
fn a_std_pair_parameter_is_a_structure_of_two_members() {
    // HeCBench's dropout (PyTorch's RNG seeds): `seeds.first` = 1 shifts 32 floats by 4 bytes:
    // 128 bytes from byte 4 cross 5 sectors.
    let src = "#include <utility>\n#include <cstdint>\n__global__ void k(float *a, std::pair<uint64_t, uint64_t> seeds) { a[threadIdx.x + seeds.first] = 0; }";
    let s = sheet_with(src, &options("1", "32", &[("seeds.first", "1")]));
    assert_eq!(total(&s, "global", "store"), (1, 5));
}

#[test]
fn a_member_template_called_with_the_template_keyword_is_inlined() {
    // HeCBench's kiss: `rng.template next<T>()` in a template kernel; the generator lives in
    // registers. One warp stores 32 floats: 128 bytes, 4 sectors.
    let src = r#"
struct Rng { unsigned s; template <typename T> __device__ T next() { s = s * 1664525u + 1013904223u; return (T)s; } };
template <typename T> __global__ void k(T *a) { Rng rng{threadIdx.x}; a[threadIdx.x] = rng.template next<T>(); }
"#;
    let s = sheet_with(src, &options("1", "32", &[("T", "float")]));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn a_bound_read_from_an_array_of_structures_says_fill_cannot_describe_it() {
    // RSBench's windows, SSSP's nodes: `--fill` gives integers and floats, not structures.
    let src = "struct W { int n; };\n__global__ void k(const W *w, float *o) { for (int j = 0; j < w[0].n; j++) o[j * 32 + threadIdx.x] = 0; }";
    let e = refusal_notes(src);
    assert!(e.contains("read from `w`, whose elements --fill cannot describe"), "{e}");
}
