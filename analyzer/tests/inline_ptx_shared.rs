//! Issue 27: shared memory in inline PTX, as LeetCUDA's HGEMM and flash-attention kernels write
//! it: `ldmatrix` (LDSM), `stmatrix` (STSM), `ld.shared` and `st.shared` at addresses from
//! `__cvta_generic_to_shared`. The numbers are worked out by hand from what was measured on the
//! H200 (`l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld` for one warp, row `r` at byte
//! `r * stride`): `ldmatrix.x4` at stride 16 takes 4 wavefronts, at stride 128 32, at stride 32 8;
//! `.x2` 2 and 16; `.x1` 1 and 8. Lanes `8k..8k+7` give matrix `k`'s eight 16-byte rows, the other
//! lanes' addresses are ignored, and each matrix costs what a quarter-warp of 16-byte loads does:
//! the most distinct 16-byte rows falling in one bank. LDSM is not in
//! `smsp__sass_inst_executed_op_shared_ld` (the sheet's `shared_load.requests`) but its wavefronts
//! are in `shared_load.wavefronts`; its instructions are `totals.shared_matrix_load.requests`.

use crate::engines::counted;
use crate::support::{failure, options, sheet};
use sector_analyzer::analyze::EngineKind;
use sector_analyzer::{analyze_source, Sheet};

const MACROS: &str = r#"
#include <cstdint>
#define LDMATRIX_X1(R, addr) \
  asm volatile("ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%1];\n" : "=r"(R) : "r"(addr))
#define LDMATRIX_X2(R0, R1, addr) \
  asm volatile("ldmatrix.sync.aligned.x2.m8n8.shared.b16 {%0, %1}, [%2];\n" : "=r"(R0), "=r"(R1) : "r"(addr))
#define LDMATRIX_X4(R0, R1, R2, R3, addr) \
  asm volatile("ldmatrix.sync.aligned.x4.m8n8.shared.b16 {%0, %1, %2, %3}, [%4];\n" \
               : "=r"(R0), "=r"(R1), "=r"(R2), "=r"(R3) : "r"(addr))
"#;

/// The one matrix row of sheet `s`: (requests, wavefronts, bank conflicts, matrices).
fn matrix_row(s: &Sheet) -> (u64, u64, u64, u8) {
    let rows: Vec<_> = s.instructions.iter().filter(|r| r.matrix.is_some()).collect();
    assert_eq!(rows.len(), 1, "{:?}", s.instructions);
    let r = rows[0];
    assert_eq!((r.space.to_string(), r.op.to_string(), r.width), ("shared".into(), "load".into(), 16));
    (r.requests, r.wavefronts.unwrap_or(0), r.bank_conflicts.unwrap_or(0), r.matrix.unwrap_or(0))
}

fn strided(src_body: &str, stride: &str) -> Sheet {
    sheet(&format!("{MACROS}{src_body}"), "1", "32", &[("stride", stride)])
}

#[test]
fn ldmatrix_x4_costs_one_wavefront_per_matrix_without_conflicts() {
    // Lane l gives row l at byte 16 l: matrix k's rows are bytes 128k..128k+127, all 32 banks
    // once, 1 wavefront; 4 matrices, 4 wavefronts, no conflict. One warp, one execution.
    let body = r#"
    __global__ void k(unsigned *out, int stride) {
        __shared__ unsigned char s[4096];
        int lane = threadIdx.x % 32;
        uint32_t a = __cvta_generic_to_shared(&s[lane * stride]);
        uint32_t r0, r1, r2, r3;
        LDMATRIX_X4(r0, r1, r2, r3, a);
        out[threadIdx.x] = r0 + r1 + r2 + r3;
    }"#;
    let s = strided(body, "16");
    assert_eq!(matrix_row(&s), (1, 4, 0, 4));
    let t = &s.totals;
    // Not a shared-load instruction, but its wavefronts are the shared-load wavefronts.
    assert_eq!((t.shared_load.requests, t.shared_load.wavefronts, t.shared_load.bank_conflicts), (0, 4, 0));
    assert_eq!(
        (t.shared_matrix_load.requests, t.shared_matrix_load.wavefronts, t.shared_matrix_load.bank_conflicts),
        (1, 4, 0)
    );
    // 4 matrices of 8 rows of 16 bytes.
    assert_eq!(t.shared_matrix_load.logical_bytes, 512);
    // Stride 128: the 8 rows of a matrix are 8 distinct 16-byte rows in banks 0..3: 8
    // wavefronts each, 32, 28 conflicts (measured: 32). Stride 32: rows r and r + 4 share banks
    // (128 bytes apart): 2 each, 8, 4 conflicts (measured: 8).
    let s = strided(body, "128");
    assert_eq!(matrix_row(&s), (1, 32, 28, 4));
    assert_eq!((s.totals.shared_load.requests, s.totals.shared_load.wavefronts), (0, 32));
    let s = strided(body, "32");
    assert_eq!(matrix_row(&s), (1, 8, 4, 4));
}

#[test]
fn ldmatrix_x2_and_x1_read_addresses_from_their_first_16_and_8_lanes_only() {
    // Lanes 16..31 (x2) and 8..31 (x1) point far outside the array: their addresses are
    // ignored, as the hardware ignores them. x2 at stride 16: 2 matrices of 128 contiguous
    // bytes, 2 wavefronts; at stride 128, 8 each, 16 (measured 2 and 16). x1: 1 and 8.
    let x2 = r#"
    __global__ void k(unsigned *out, int stride) {
        __shared__ unsigned char s[4096];
        int lane = threadIdx.x % 32;
        uint32_t a = __cvta_generic_to_shared(&s[lane * stride]) + (lane < 16 ? 0 : 1000000);
        uint32_t r0, r1;
        LDMATRIX_X2(r0, r1, a);
        out[threadIdx.x] = r0 + r1;
    }"#;
    assert_eq!(matrix_row(&strided(x2, "16")), (1, 2, 0, 2));
    assert_eq!(matrix_row(&strided(x2, "128")), (1, 16, 14, 2));
    let x1 = r#"
    __global__ void k(unsigned *out, int stride) {
        __shared__ unsigned char s[4096];
        int lane = threadIdx.x % 32;
        uint32_t a = __cvta_generic_to_shared(&s[lane * stride]) + (lane < 8 ? 0 : 1000000);
        uint32_t r;
        LDMATRIX_X1(r, a);
        out[threadIdx.x] = r;
    }"#;
    let s = strided(x1, "16");
    assert_eq!(matrix_row(&s), (1, 1, 0, 1));
    // 1 matrix of 8 rows of 16 bytes.
    assert_eq!(s.totals.shared_matrix_load.logical_bytes, 128);
    assert_eq!(matrix_row(&strided(x1, "128")), (1, 8, 7, 1));
}

#[test]
fn leetcuda_tiles_padded_and_unpadded() {
    // hgemm_mma.cu's A fragment: s_a[64][K] halves, lane l reads row l % 16 at column
    // (l / 16) * 8, through `uint32_t p = __cvta_generic_to_shared(&s_a[m][k])` and the macro.
    // Padded, K = 40 (80-byte rows): rows 0..7 start at words 20r, banks {0, 20, 8, 28, 16, 4,
    // 24, 12} + 0..3, all distinct: 1 wavefront per matrix (rows 8..15 are 160 words = 5 x 32
    // further, the same banks; column 8 shifts all by 4 words), 4 in all. Unpadded, K = 32
    // (64-byte rows): row r at word 16r, banks 0..3 for even r and 16..19 for odd: 4 rows per
    // bank, 4 wavefronts per matrix, 16, 12 conflicts. 2 warps x 3 iterations x 4 blocks = 24
    // executions.
    let src = format!(
        "{MACROS}{}",
        r#"
    template <int K>
    __global__ void k(unsigned *out) {
        __shared__ half s_a[64][K];
        int lane = threadIdx.x % 32;
        int warp = threadIdx.x / 32;
        uint32_t acc = 0;
        for (int i = 0; i < 3; ++i) {
            int m = warp * 16 + lane % 16;
            int kk = (lane / 16) * 8;
            uint32_t p = __cvta_generic_to_shared(&s_a[m][kk]);
            uint32_t r0, r1, r2, r3;
            LDMATRIX_X4(r0, r1, r2, r3, p);
            acc += r0 ^ r1 ^ r2 ^ r3;
        }
        out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    }"#
    );
    for (k, per_execution) in [("40", 4), ("32", 16)] {
        let mut o = options("4", "64", &[("K", k)]);
        o.engine = EngineKind::Symbolic;
        let symbolic = analyze_source("m.cu", &src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
        o.engine = EngineKind::Enumerate;
        let reference = analyze_source("m.cu", &src, &o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet;
        assert_eq!(counted(&symbolic), counted(&reference), "K = {k}");
        assert_eq!(symbolic.engine, "symbolic", "K = {k}: {:?}", symbolic.assumptions.last());
        let conflicts = (per_execution - 4) * 24;
        assert_eq!(matrix_row(&reference), (24, 24 * per_execution, conflicts, 4), "K = {k}");
    }
}

#[test]
fn the_address_may_be_computed_on_the_32_bit_value_and_passed_to_a_helper() {
    // `static_cast<unsigned>(__cvta_generic_to_shared(s))` plus lane * 16 plus a tile offset
    // of 512 bytes, through a __device__ function: rows at 512 + 16 l, conflict-free, 4
    // wavefronts. The row's text is the asm statement, in the helper.
    let src = format!(
        "{MACROS}{}",
        r#"
    __device__ __forceinline__ void ldsm_x4(uint32_t &a, uint32_t &b, uint32_t &c, uint32_t &d, uint32_t addr) {
        LDMATRIX_X4(a, b, c, d, addr);
    }
    __global__ void k(unsigned *out) {
        __shared__ __align__(128) uint32_t s[1024];
        uint32_t base = static_cast<unsigned>(__cvta_generic_to_shared(s));
        uint32_t smem_addr = base + (threadIdx.x % 32) * 16;
        uint32_t r[4];
        ldsm_x4(r[0], r[1], r[2], r[3], smem_addr + 2 * 256);
        out[threadIdx.x] = r[0] + r[3];
    }"#
    );
    let s = sheet(&src, "1", "32", &[]);
    assert_eq!(matrix_row(&s), (1, 4, 0, 4));
}

#[test]
fn ld_shared_and_st_shared_count_as_the_cpp_accesses() {
    // st.shared.f32 at s[l]: 128 contiguous bytes, 1 wavefront. ld.shared.f32 at s[2l]: words
    // 0, 2, .., 62, two per even bank: 2 wavefronts, 1 conflict. st.shared.v4.f32 at t[l]: 16
    // bytes a lane, 512 contiguous bytes, 4 wavefronts (ideal 4). One warp: shared_store 2
    // requests and 5 wavefronts, shared_load 1 request and 2 wavefronts; no matrix totals.
    let src = r#"
    __global__ void k(float *out) {
        __shared__ float s[64];
        __shared__ float4 t[32];
        unsigned lane = threadIdx.x;
        float x;
        asm volatile("st.shared.f32 [%0], %1;" :: "r"((unsigned)__cvta_generic_to_shared(&s[lane])), "f"(1.0f));
        asm volatile("ld.shared.f32 %0, [%1];" : "=f"(x) : "r"((unsigned)__cvta_generic_to_shared(&s[2 * lane])));
        asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};"
                     :: "r"((uint32_t)__cvta_generic_to_shared(&t[lane])), "f"(x), "f"(x), "f"(x), "f"(x));
        out[lane] = x;
    }"#;
    let s = sheet(src, "1", "32", &[]);
    let t = &s.totals;
    assert_eq!((t.shared_store.requests, t.shared_store.wavefronts, t.shared_store.bank_conflicts), (2, 5, 0));
    assert_eq!((t.shared_load.requests, t.shared_load.wavefronts, t.shared_load.bank_conflicts), (1, 2, 1));
    assert!(t.shared_matrix_load.is_empty() && t.shared_matrix_store.is_empty());
    assert!(s.instructions.iter().all(|r| r.matrix.is_none()));
    let json: serde_json::Value = serde_json::from_str(&sector_analyzer::sheet::json::render(&s)).unwrap();
    assert!(json["totals"].get("shared_matrix_load").is_none(), "{}", json["totals"]);
}

#[test]
fn matrix_rows_in_json_and_text() {
    // The x4 of the first test plus a C++ shared load of s[l] (1 request, 1 wavefront):
    // shared_load 1 request, 5 wavefronts; the matrix load 1 request, 4 wavefronts.
    let src = format!(
        "{MACROS}{}",
        r#"
    __global__ void k(unsigned *out) {
        __shared__ uint32_t s[1024];
        uint32_t r0, r1, r2, r3;
        LDMATRIX_X4(r0, r1, r2, r3, (uint32_t)__cvta_generic_to_shared(&s[threadIdx.x * 4]));
        out[threadIdx.x] = r0 + r1 + r2 + r3 + s[threadIdx.x];
    }"#
    );
    let s = sheet(&src, "1", "32", &[]);
    let json: serde_json::Value = serde_json::from_str(&sector_analyzer::sheet::json::render(&s)).unwrap();
    let t = &json["totals"];
    assert_eq!((t["shared_load"]["requests"].as_u64(), t["shared_load"]["wavefronts"].as_u64()), (Some(1), Some(5)));
    let m = &t["shared_matrix_load"];
    assert_eq!(
        (m["requests"].as_u64(), m["wavefronts"].as_u64(), m["bank_conflicts"].as_u64()),
        (Some(1), Some(4), Some(0))
    );
    assert!(t.get("shared_matrix_store").is_none());
    let rows = json["instructions"].as_array().unwrap();
    let matrix: Vec<_> = rows.iter().filter(|r| r.get("matrix").is_some()).collect();
    assert_eq!(matrix.len(), 1);
    assert_eq!(
        (matrix[0]["matrix"].as_u64(), matrix[0]["space"].as_str(), matrix[0]["op"].as_str()),
        (Some(4), Some("shared"), Some("load"))
    );
    let text = sector_analyzer::sheet::text::render(&s);
    assert!(text.contains("ldsm.x4") && text.contains("ldmatrix"), "{text}");
    // ptxas drops an ldmatrix whose registers are dead; the source path says it counts them all.
    assert!(s.assumptions.iter().any(|a| a.contains("ptxas removes one whose registers are never read")));
}

#[test]
fn stmatrix_is_counted_as_ldmatrix_and_says_so() {
    // stmatrix.x2 at rows 16 l (lanes 0..15): 2 wavefronts, in shared_store's wavefronts and
    // the matrix-store totals' requests, with the assumption on the row.
    let src = r#"
    __global__ void k(unsigned v) {
        __shared__ uint32_t s[1024];
        uint32_t a = __cvta_generic_to_shared(&s[threadIdx.x * 4]);
        asm volatile("stmatrix.sync.aligned.x2.m8n8.shared.b16 [%0], {%1, %2};\n" :: "r"(a), "r"(v), "r"(v));
    }"#;
    let s = sheet(src, "1", "32", &[("v", "1")]);
    let t = &s.totals;
    assert_eq!((t.shared_store.requests, t.shared_store.wavefronts), (0, 2));
    assert_eq!((t.shared_matrix_store.requests, t.shared_matrix_store.wavefronts), (1, 2));
    let r = s.instructions.iter().find(|r| r.matrix == Some(2)).expect("the stmatrix row");
    assert!(r.assumptions.iter().any(|a| a.contains("stmatrix (STSM) is not measured")), "{:?}", r.assumptions);
}

#[test]
fn an_address_outside_shared_memory_is_an_error_at_the_asm() {
    // 100000 is past the only array's 4096 bytes; a global pointer is no shared address.
    let outside = format!(
        "{MACROS}{}",
        r#"
    __global__ void k(unsigned *out) {
        __shared__ uint32_t s[1024];
        s[threadIdx.x] = 0;
        uint32_t r0, r1, r2, r3;
        LDMATRIX_X4(r0, r1, r2, r3, 100000u + threadIdx.x * 16);
        out[threadIdx.x] = r0;
    }"#
    );
    let e = failure(&outside, &options("1", "32", &[]));
    assert!(e.contains("m.cu:15:9") && e.contains("100000 is in no shared array"), "{e}");
    let global = r#"
    __global__ void k(float *out) {
        float x;
        asm volatile("ld.shared.f32 %0, [%1];" : "=f"(x) : "l"(out + threadIdx.x));
        out[threadIdx.x] = x;
    }"#;
    let e = failure(global, &options("1", "32", &[]));
    assert!(e.contains("m.cu:4:") && e.contains("global memory (parameter `out`)"), "{e}");
    // An address another asm statement computed is a value nobody knows: an error, not a guess.
    let converted = r#"
    __global__ void k(unsigned *out) {
        __shared__ unsigned s[1024];
        unsigned a, r;
        asm("cvta.to.shared.u32 %0, %1;" : "=r"(a) : "l"(&s[threadIdx.x * 4]));
        asm volatile("ldmatrix.sync.aligned.x1.m8n8.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(a));
        out[threadIdx.x] = r;
    }"#;
    let e = failure(converted, &options("1", "32", &[]));
    assert!(e.contains("m.cu:6:") && e.contains("address is not known"), "{e}");
}

#[test]
fn other_shapes_and_cluster_memory_are_refused_by_name() {
    let src = r#"
    __global__ void k(float *out) {
        __shared__ float s[64];
        float x;
        asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(x) : "r"((unsigned)__cvta_generic_to_shared(&s[threadIdx.x])));
        out[threadIdx.x] = x;
    }"#;
    let e = failure(src, &options("1", "32", &[]));
    assert!(e.contains("ld.shared::cluster.f32") && e.contains("m.cu:5:"), "{e}");
}

#[test]
fn the_sass_path_counts_ldsm_as_the_source_path_counts_ldmatrix() {
    // With a CUDA toolkit: the same kernel through nvcc's LDSM.16.M88{.4,.2,} and through the
    // source. Per warp at stride 16: 4 + 2 + 1 = 7 wavefronts; at stride 128: 32 + 16 + 8 = 56.
    // 2 blocks of 2 warps: 4 executions of each instruction.
    if !sector_analyzer::analyze::toolkit_found() {
        return;
    }
    let src = format!(
        "{MACROS}{}",
        r#"
__global__ void k(unsigned *out, int stride) {
    __shared__ __align__(128) unsigned char s[4096];
    int lane = threadIdx.x % 32;
    uint32_t a = __cvta_generic_to_shared(&s[lane * stride]);
    uint32_t r0, r1, r2, r3, q0, q1, p0;
    LDMATRIX_X4(r0, r1, r2, r3, a);
    LDMATRIX_X2(q0, q1, a);
    LDMATRIX_X1(p0, a);
    out[blockIdx.x * blockDim.x + threadIdx.x] = r0 + r1 + r2 + r3 + q0 + q1 + p0;
}
"#
    );
    let dir = std::env::temp_dir().join(format!("sector-ldsm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ldsm.cu");
    std::fs::write(&file, &src).unwrap();
    for (stride, per_warp) in [("16", 7), ("32", 14), ("128", 56)] {
        let mut o = options("2", "64", &[("stride", stride)]);
        let mut counts = Vec::new();
        for via in [sector_analyzer::analyze::Via::Source, sector_analyzer::analyze::Via::Sass] {
            o.via = via;
            let s =
                sector_analyzer::analyze(sector_analyzer::Input::File(&file), &o, &sector_analyzer::source::DiskLoader)
                    .unwrap_or_else(|f| panic!("{}", f.one_line()))
                    .sheet;
            let rows: Vec<_> = s
                .instructions
                .iter()
                .filter(|r| r.matrix.is_some())
                .map(|r| (r.line, r.matrix, r.requests, r.wavefronts, r.bank_conflicts))
                .collect();
            let t = &s.totals;
            assert_eq!((t.shared_load.requests, t.shared_load.wavefronts), (0, 4 * per_warp), "stride {stride}");
            counts.push((rows, t.shared_load, t.shared_matrix_load));
        }
        assert_eq!(counts[0], counts[1], "stride {stride}: source, then SASS");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_pointer_that_views_a_threads_own_array_moves_no_memory() {
    // LeetCUDA's flash attention (tiling_qk, tiling_qkv: 14 kernels stopped here once ldmatrix
    // was read): `uint32_t *t = reinterpret_cast<uint32_t *>(&(R_Q[0][0])); t[0] = ...;` writes
    // registers, and `LDST128BITS(O[..]) = LDST128BITS(t[0])` stores them: only that store moves
    // memory, 16 bytes a lane from O + 16 t, 512 contiguous bytes from a 256-byte boundary: 1
    // request, 16 sectors.
    let src = r#"
    #define LDST128BITS(value) (reinterpret_cast<float4 *>(&(value))[0])
    __global__ void k(float *O) {
        uint32_t R_Q[2][4];
        uint32_t R_D[4];
        for (int i = 0; i < 4; ++i) R_D[i] = threadIdx.x + i;
        uint32_t *t_uptr = reinterpret_cast<uint32_t *>(&(R_Q[0][0]));
        t_uptr[0] = R_D[0];
        t_uptr[1] = __shfl_sync(0xffffffff, R_D[1], threadIdx.x + 1, 4);
        LDST128BITS(O[threadIdx.x * 4]) = LDST128BITS(t_uptr[0]);
    }"#;
    let s = sheet(src, "1", "32", &[]);
    assert_eq!(s.instructions.len(), 1, "{:?}", s.instructions);
    assert_eq!((s.totals.global_store.requests, s.totals.global_store.sectors), (1, 16));
    // A pointer the kernel moves cannot be followed: refused, at its place.
    let moved = r#"
    __global__ void k(unsigned *out) {
        uint32_t R_Q[8];
        uint32_t *t = reinterpret_cast<uint32_t *>(&(R_Q[0]));
        t += 1;
        out[threadIdx.x] = t[0];
    }"#;
    let e = failure(moved, &options("1", "32", &[]));
    assert!(e.contains("m.cu:5:") && e.contains("changing a pointer to a thread's own variable"), "{e}");
}
