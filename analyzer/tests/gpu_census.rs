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

#[test]
fn a_shift_by_a_run_time_amount_past_the_width_is_clamped_as_the_gpu_does() {
    // One warp, s = 32 (a parameter: a run-time amount to nvcc). PTX clamps the amount to the
    // width: 1u << 32 = 0, so a[t + 0] covers bytes 0..127, 4 sectors (a shift modulo the
    // width, 1u << 0 = 1, would give 5). 0x80000001u >> 32 = 0: b[t], 4 sectors (modulo:
    // 0x80000001, odd, 5). With s + 1 = 33, the signed -8 >> 33 is the sign, -1: c[t + 1 - 1],
    // 4 sectors (modulo: -8 >> 1 = -4, c[t - 3], 5). An int amount of -1 reads as unsigned:
    // 1 << -1 = 0, d[t], 4 sectors.
    let src = r#"
    __global__ void k(float *a, float *b, float *c, float *d, unsigned s, int neg) {
        unsigned t = threadIdx.x;
        a[t + (1u << s)] = 1.0f;
        b[t + (0x80000001u >> s)] = 1.0f;
        c[t + 1 + (-8 >> (s + 1))] = 1.0f;
        d[t + (1 << neg)] = 1.0f;
    }"#;
    let s = run(src, "1", "32", &[("s", "32"), ("neg", "-1")]);
    assert_eq!(row(&s, "a[t + (1u << s)]"), (1, 4));
    assert_eq!(row(&s, "b[t + (0x80000001u >> s)]"), (1, 4));
    assert_eq!(row(&s, "c[t + 1 + (-8 >> (s + 1))]"), (1, 4));
    assert_eq!(row(&s, "d[t + (1 << neg)]"), (1, 4));
    // The same amounts below the width shift as usual: s = 1 gives a[t + 2], bytes 8..135,
    // 5 sectors.
    let s = run(src, "1", "32", &[("s", "1"), ("neg", "0")]);
    assert_eq!(row(&s, "a[t + (1u << s)]"), (1, 5));
}

#[test]
fn a_shift_by_a_constant_past_the_width_is_an_error_where_it_runs() {
    // C++ leaves `x << 32` undefined and nvcc folds it to an unspecified value: refused at its
    // line when it runs, never in a branch that does not.
    let src = "__global__ void k(unsigned *a, int c) {\n    if (c) a[(threadIdx.x << 32) & 31] = 1;\n    a[threadIdx.x] = 1;\n}\n";
    let e = fail(src, "1", "32", &[("c", "1")]);
    assert!(e.contains("m.cu:2:15") && e.contains("shift by the constant 32"), "{e}");
    let s = run(src, "1", "32", &[("c", "0")]);
    assert_eq!(row(&s, "a[threadIdx.x]").0, 1);
}

#[test]
fn a_loop_that_moves_no_memory_is_summarised_whatever_its_trip_count() {
    // One warp spins on clock64(): the loop moves nothing, so its trip count changes no count.
    // a[t] (4 bytes x 32 lanes, 128 bytes aligned): 1 request, 4 sectors. out[t] stores the
    // unknown clock (8 bytes x 32 lanes): 1 request, 8 sectors, exact (the value is not an
    // address). b[now & 31]: an address from the unknown clock, the stated default (every
    // lane its own sector: 32), not exact.
    let src = r#"
    __global__ void k(long long *out, long long ticks, float *a, float *b) {
        long long end = clock64() + ticks;
        long long now = 0;
        do {
            now = clock64();
        } while (now < end);
        a[threadIdx.x] = 1.0f;
        out[threadIdx.x] = now;
        b[now & 31] = 1.0f;
    }"#;
    let s = run(src, "1", "32", &[("ticks", "1000")]);
    assert_eq!(row(&s, "a[threadIdx.x]"), (1, 4));
    assert_eq!(row(&s, "out[threadIdx.x]"), (1, 8));
    let b = s.instructions.iter().find(|r| r.text == "b[now & 31]").unwrap();
    assert_eq!((b.requests, b.sectors, b.exact), (1, 32, false));
    assert!(s.assumptions.iter().any(|a| a.contains("loop at 5:9") && a.contains("now")), "{:?}", s.assumptions);
}

#[test]
fn a_spin_on_memory_is_refused_unless_the_fill_decides_it() {
    // `while (latch[0] < 1);` waits for another agent's store: refused. With the launch saying
    // latch holds 1, the first test leaves: one 4-byte load by one warp, 1 sector.
    let src = "__global__ void k(volatile unsigned *latch) {\n    while (latch[0] < 1)\n        ;\n}\n";
    let e = fail(src, "1", "32", &[]);
    assert!(e.contains("m.cu:2:5") && e.contains("spin-wait"), "{e}");
    let mut o = opts("1", "32", &[]);
    o.fills = vec![("latch".into(), sector_analyzer::fill::Fill::Constant(1))];
    let s = analyze_source("m.cu", src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(row(&s, "latch[0]"), (1, 1));
}

#[test]
fn a_trip_count_from_exact_float_functions_is_known() {
    // ceil(1000.0 / 512) = 2: thread 0 reads p[0] and p[1] (8 bytes each, 1 sector each).
    let src = r#"
    __global__ void k(double *p, int n) {
        if (threadIdx.x == 0) {
            int blocks = ceil((double)n / (double)512);
            double s = 0.0;
            for (int x = 0; x < blocks; x++) s += p[x];
            p[0] = s;
        }
    }"#;
    let s = run(src, "1", "32", &[("n", "1000")]);
    assert_eq!(row(&s, "p[x]"), (2, 2));
}

#[test]
fn a_shared_address_from_data_is_counted_conflict_free_and_stated_unless_the_fill_decides_it() {
    // One warp reads t[idx[l] * 32]. Unknown idx: one instruction, counted as 32 consecutive
    // 4-byte words, 1 wavefront, not exact, stated. With idx = identity, lane l reads word 32l:
    // all in bank 0, 32 wavefronts, exact. d[idx[l]] (8 bytes): unknown, 32 consecutive doubles,
    // 256 bytes, 2 wavefronts.
    let src = r#"
    __global__ void k(const int *idx, float *out) {
        __shared__ float t[1024];
        __shared__ double d[64];
        t[threadIdx.x] = 0.0f;
        d[threadIdx.x] = 0.0;
        __syncthreads();
        out[threadIdx.x] = t[idx[threadIdx.x] * 32] + (float)d[idx[threadIdx.x]];
    }"#;
    let wf = |s: &Sheet, text: &str| {
        let r = s.instructions.iter().find(|r| r.text == text).unwrap();
        (r.requests, r.wavefronts.unwrap(), r.exact)
    };
    let s = run(src, "1", "32", &[]);
    assert_eq!(wf(&s, "t[idx[threadIdx.x] * 32]"), (1, 1, false));
    assert_eq!(wf(&s, "d[idx[threadIdx.x]]"), (1, 2, false));
    assert!(s.instructions.iter().any(|r| r.assumptions.iter().any(|a| a.contains("shared address depends on data"))));
    let mut o = opts("1", "32", &[]);
    o.fills = vec![("idx".into(), sector_analyzer::fill::Fill::Identity)];
    let s = analyze_source("m.cu", src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
    assert_eq!(wf(&s, "t[idx[threadIdx.x] * 32]"), (1, 32, true));
}

#[test]
fn mul24_is_computed() {
    // __mul24(blockIdx.x, blockDim.x) + t over 2 blocks of 32: 2 requests of 4 sectors.
    // __umul24(0x1000001, 2) keeps the low 24 bits, 1 x 2 = 2: b[2 + t], bytes 8..135,
    // 5 sectors. __mul24(0xFFFFFF, 1) sign-extends the 24 bits: -1, so c[t + 1 - 1], 4 sectors.
    let src = r#"
    __global__ void k(float *a, float *b, float *c) {
        a[__mul24(blockIdx.x, blockDim.x) + threadIdx.x] = 1.0f;
        b[__umul24(0x1000001u, 2u) + threadIdx.x] = 1.0f;
        c[threadIdx.x + 1 + __mul24(0xFFFFFF, 1)] = 1.0f;
    }"#;
    let s = run(src, "2", "32", &[]);
    assert_eq!(row(&s, "a[__mul24(blockIdx.x, blockDim.x) + threadIdx.x]"), (2, 8));
    assert_eq!(row(&s, "b[__umul24(0x1000001u, 2u) + threadIdx.x]"), (2, 10));
    assert_eq!(row(&s, "c[threadIdx.x + 1 + __mul24(0xFFFFFF, 1)]"), (2, 8));
}
