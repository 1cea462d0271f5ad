//! GPU features the census of public code met (issue 15's leftovers, data-dependent loops and
//! shared addresses, shifts by the width): each test's numbers are worked out by hand in its
//! comment.

use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

fn opts(grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

fn run(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    analyze_source("m.cu", src, &opts(grid, block, args)).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

fn fail(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> String {
    match analyze_source("m.cu", src, &opts(grid, block, args)) {
        Ok(_) => panic!("expected an error"),
        Err(f) => format!("{} {}", f.one_line(), f.diagnostic.notes.join(" ")),
    }
}

/// (requests, sectors) of the row written `text`.
fn row(s: &Sheet, text: &str) -> (u64, u64) {
    let r = s.instructions.iter().find(|r| r.text == text).unwrap_or_else(|| panic!("no row `{text}`"));
    (r.requests, r.sectors)
}

#[test]
fn a_coalesced_groups_votes_count_its_ranks_not_the_warps_lanes() {
    // One warp; lanes 16..31 take the branch, so the group is those 16 lanes, ranks 0..15.
    // The odd lanes vote: ranks 1, 3, ..., 15, so ballot = 0xAAAA (the warp's own ballot would
    // be 0xAAAA0000). b & 7 = 2: lanes 16..31 store out[18..33], bytes 72..135: sectors 2, 3
    // and 4 (with 0xAAAA0000 & 7 = 0 it would be two sectors).
    // all(lane >= 16) holds over the group: q[lane + 2] is bytes 72..135 again, 3 sectors;
    // any(lane == 3) does not (lane 3 is not in the group): r[lane], bytes 64..127, 2 sectors.
    let src = r#"
    #include <cooperative_groups.h>
    namespace cg = cooperative_groups;
    __global__ void k(float *out, float *q, float *r) {
        if (threadIdx.x >= 16) {
            cg::coalesced_group g = cg::coalesced_threads();
            unsigned b = g.ballot(threadIdx.x & 1);
            out[threadIdx.x + (b & 7)] = 1.0f;
            q[threadIdx.x + 2 * g.all(threadIdx.x >= 16)] = 1.0f;
            r[threadIdx.x + 2 * g.any(threadIdx.x == 3)] = 1.0f;
        }
    }"#;
    let s = run(src, "1", "32", &[]);
    assert_eq!(row(&s, "out[threadIdx.x + (b & 7)]"), (1, 3));
    assert_eq!(row(&s, "q[threadIdx.x + 2 * g.all(threadIdx.x >= 16)]"), (1, 3));
    assert_eq!(row(&s, "r[threadIdx.x + 2 * g.any(threadIdx.x == 3)]"), (1, 2));
}

#[test]
fn a_producer_consumer_pipeline_with_roles_moves_what_its_copies_move() {
    // Block 32 x 2: warp 0 (threadIdx.y == 0) consumes, warp 1 produces. The producer warp
    // copies A[0..31] (one LDGSTS request, 128 bytes: 4 sectors); the consumer warp reads
    // As[0][x] (one shared load, one wavefront) and stores C[0..31] (4 sectors). The roles
    // (`cuda::pipeline_role`) move no memory.
    let src = r#"
    #include <cooperative_groups.h>
    #include <cuda/pipeline>
    namespace cg = cooperative_groups;
    __global__ void k(float *A, float *C) {
        __shared__ float As[4][32];
        auto cta = cg::this_thread_block();
        __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, 4> state;
        const auto role = (cta.thread_index().y < 1) ? cuda::pipeline_role::consumer : cuda::pipeline_role::producer;
        auto pipe = cuda::make_pipeline(cta, &state, role);
        if (role == cuda::pipeline_role::producer) {
            pipe.producer_acquire();
            cuda::memcpy_async(&As[0][threadIdx.x], &A[threadIdx.x], cuda::aligned_size_t<4>(4), pipe);
            pipe.producer_commit();
        } else {
            pipe.consumer_wait();
            C[threadIdx.x] = As[0][threadIdx.x];
            pipe.consumer_release();
        }
    }"#;
    let s = run(src, "1", "32,2", &[]);
    assert_eq!(s.totals.global_async_copy.requests, 1);
    assert_eq!(s.totals.global_async_copy.sectors, 4);
    assert_eq!(row(&s, "C[threadIdx.x]"), (1, 4));
    assert_eq!(s.totals.shared_load.requests, 1);
}

#[test]
fn a_graph_conditional_handle_moves_no_memory_and_says_so() {
    // One thread: *d is one 1-byte load (1 sector); setting the condition is not an access.
    let src = r#"
    __global__ void k(char *d, cudaGraphConditionalHandle h) {
        unsigned int v = *d & 1;
        cudaGraphSetConditional(h, v);
    }"#;
    let s = run(src, "1", "1", &[]);
    assert_eq!(s.instructions.len(), 1);
    assert_eq!(row(&s, "*d"), (1, 1));
    assert!(s.assumptions.iter().any(|a| a.contains("cudaGraphSetConditional")), "{:?}", s.assumptions);
}

#[test]
fn a_struct_members_value_is_asked_for_and_taken_by_its_dotted_name() {
    // 4 blocks of 256: idx < 1000 holds in warps 0..30 fully (992 lanes) and in 8 lanes of
    // warp 31. s.p[idx] (4 bytes): 31 requests of 4 sectors and one of 1 sector: 32, 125.
    let src = r#"
    struct S { float *p; int n; };
    __global__ void k(S s, float *out) {
        int idx = blockIdx.x * blockDim.x + threadIdx.x;
        if (idx < s.n) out[idx] = s.p[idx];
    }"#;
    let e = fail(src, "4", "256", &[]);
    // The form scripts/census.py's ASK_ARG reads.
    assert!(e.contains("pass --arg s.n=VALUE"), "{e}");
    let s = run(src, "4", "256", &[("s.n", "1000")]);
    assert_eq!(row(&s, "s.p[idx]"), (32, 125));
}

#[test]
fn device_side_launches_and_curand_are_refused_by_name() {
    let launch = "__global__ void child(float *p) { p[threadIdx.x] = 0; }\n__global__ void k(float *p) {\n    if (threadIdx.x == 0) child<<<1, 32>>>(p);\n}\n";
    let mut o = opts("1", "32", &[]);
    o.kernel = Some("k".into());
    let e = analyze_source("m.cu", launch, &o).map(|_| ()).unwrap_err().one_line();
    assert!(e.contains("m.cu:3:27") && e.contains("dynamic parallelism"), "{e}");
    let stream = "__global__ void k(float *p) {\n    cudaStream_t s;\n    p[0] = 0;\n}\n";
    let e = fail(stream, "1", "32", &[]);
    assert!(e.contains("m.cu:2:5") && e.contains("dynamic parallelism"), "{e}");
    let init = "template <typename S>\n__global__ void k(S *st, unsigned seed) {\n    curand_init(seed, threadIdx.x, 0, &st[threadIdx.x]);\n}\n";
    let e = fail(init, "1", "32", &[("S", "float"), ("seed", "1")]);
    assert!(e.contains("m.cu:3:5") && e.contains("cuRAND") && e.contains("curand_init"), "{e}");
}
