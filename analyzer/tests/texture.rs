//! Texture fetches and surface reads and writes (issue 27): each is a row of its own, in space
//! `texture` or `surface`, with its warp-level executions and no sectors; none is in the global
//! totals, and the boundaries say that their traffic is left out.
//!
//! The numbers are worked by hand, and the probe's kernels (`tex1d_lin`, `tex1d_f4`,
//! `tex2d_arr`, `surf_rw`) were measured on the H200 (docs/src/hardware.md): a texture or
//! surface instruction counts 0 on every LSU global counter, and once per warp execution in
//! `smsp__sass_inst_executed_op_texture` (2048 for 65536 threads).

use crate::support::{failure, options, sheet, sheet_with, total};
use sector_analyzer::analyze::EngineKind;
use sector_analyzer::ir::Space;
use sector_analyzer::Sheet;

/// The H200 probe's kernels, as measured.
const PROBE: &str = r#"
#include <cuda_runtime.h>
__global__ void tex1d_lin(cudaTextureObject_t t, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float>(t, i);
}
__global__ void tex1d_f4(cudaTextureObject_t t, float4 *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<float4>(t, i);
}
__global__ void tex2d_arr(cudaTextureObject_t t, float *out, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f, y + 0.5f);
}
__global__ void surf_rw(cudaSurfaceObject_t s, int w, int h) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < w && y < h) {
    float v;
    surf2Dread(&v, s, x * 4, y);
    surf2Dwrite(v + 1.0f, s, x * 4, y);
  }
}
"#;

fn probe(kernel: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    let mut o = options(grid, block, args);
    o.kernel = Some(kernel.into());
    sheet_with(PROBE, &o)
}

/// (requests, logical bytes) of the rows in `space` with op `op`.
fn pipe(s: &Sheet, space: &str, op: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.space == space && r.op == op)
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.logical_bytes))
}

fn json(s: &Sheet) -> serde_json::Value {
    serde_json::from_str(&sector_analyzer::sheet::json::render(s)).unwrap()
}

#[test]
fn a_linear_fetch_is_one_texture_execution_per_warp_and_no_global_load() {
    // tex1d_lin, 65536 threads in blocks of 256: 2048 warps, each fetches once (2048 texture
    // executions, measured: smsp__sass_inst_executed_op_texture = 2048) and stores 32
    // consecutive floats (4 sectors): 2048 requests, 8192 sectors. The H200 measured 0 global
    // load requests and sectors.
    let s = probe("tex1d_lin", "256", "256", &[("n", "65536")]);
    assert_eq!(total(&s, "global", "store"), (2048, 8192));
    assert_eq!(total(&s, "global", "load"), (0, 0));
    assert_eq!(s.totals.global_load.requests, 0);
    assert_eq!(pipe(&s, "texture", "load"), (2048, 65536 * 4));
    assert_eq!((s.totals.texture.requests, s.totals.texture.logical_bytes), (2048, 65536 * 4));
    let row = s.instructions.iter().find(|r| r.space == Space::Texture).unwrap();
    assert_eq!((row.executions, row.sectors, row.ideal_sectors, row.width), (2048, 0, 0, 4));
    assert!(row.exact);
    assert!(row.assumptions.iter().any(|a| a.contains("sectors not predicted")), "{:?}", row.assumptions);
    // The global logical bytes are the stores' alone.
    assert_eq!(s.global_logical_bytes(), 65536 * 4);
}

#[test]
fn a_float4_fetch_has_its_width_and_still_one_execution_per_warp() {
    // tex1d_f4: 2048 warps; each stores 32 float4 = 512 contiguous bytes, 16 sectors (measured
    // texture sectors 16 per instruction too, as for LDG.128: not predicted here).
    let s = probe("tex1d_f4", "256", "256", &[("n", "65536")]);
    assert_eq!(total(&s, "global", "store"), (2048, 2048 * 16));
    assert_eq!(pipe(&s, "texture", "load"), (2048, 65536 * 16));
    assert_eq!(s.instructions.iter().find(|r| r.space == Space::Texture).unwrap().width, 16);
}

#[test]
fn a_2d_array_fetch_in_16x16_blocks() {
    // tex2d_arr, 256x256 in 16x16 blocks: 256 blocks of 8 warps, 2048 warps, one fetch each.
    // A warp holds two rows of 16 threads: out[y * 256 + x] is two runs of 64 bytes starting on
    // 64-byte boundaries, 2 sectors each: 4 per request, 8192 in all.
    let s = probe("tex2d_arr", "16,16", "16,16", &[("w", "256"), ("h", "256")]);
    assert_eq!(total(&s, "global", "store"), (2048, 8192));
    assert_eq!(pipe(&s, "texture", "load"), (2048, 65536 * 4));
}

#[test]
fn a_surface_read_and_write_are_counted_apart_from_global_memory() {
    // surf_rw, 256x256 in 16x16 blocks: 2048 warps, each reads and writes once: surface loads
    // 2048, surface stores 2048; the H200 measured 0 on every global counter.
    let s = probe("surf_rw", "16,16", "16,16", &[("w", "256"), ("h", "256")]);
    assert_eq!(pipe(&s, "surface", "load"), (2048, 65536 * 4));
    assert_eq!(pipe(&s, "surface", "store"), (2048, 65536 * 4));
    assert_eq!((s.totals.surface_load.requests, s.totals.surface_store.requests), (2048, 2048));
    assert!(s.totals.texture.is_empty());
    assert_eq!(s.totals.global_load, Default::default());
    assert_eq!(s.totals.global_store, Default::default());
}

#[test]
fn the_json_gives_texture_totals_only_where_there_are_some() {
    let s = probe("surf_rw", "16,16", "16,16", &[("w", "256"), ("h", "256")]);
    let v = json(&s);
    assert_eq!(v["totals"]["surface_load"]["requests"], 2048);
    assert_eq!(v["totals"]["surface_store"]["requests"], 2048);
    assert!(v["totals"].get("texture").is_none(), "{}", v["totals"]);
    let rows: Vec<(&str, &str)> = v["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["space"].as_str().unwrap(), r["op"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [("surface", "load"), ("surface", "store")]);
    // A kernel without them has none of the keys.
    let plain = sheet("__global__ void k(float *o) { o[threadIdx.x] = 1.0f; }", "1", "32", &[]);
    let v = json(&plain);
    for key in ["texture", "surface_load", "surface_store"] {
        assert!(v["totals"].get(key).is_none(), "{key}");
    }
    assert!(v["boundaries"].get("excludes").is_none());
}

#[test]
fn the_boundaries_say_they_leave_texture_traffic_out() {
    // The H200 counted tex1d_lin's 8192 texture sectors in lts__t_sectors_srcunit_tex_op_read:
    // the estimate (global stores only) must say it does not cover them.
    let s = probe("tex1d_lin", "256", "256", &[("n", "65536")]);
    let b = &s.boundaries;
    assert_eq!(b.excludes, [Space::Texture]);
    assert!(b.assumptions.iter().any(|a| a.starts_with("texture traffic not included")), "{:?}", b.assumptions);
    assert_eq!(b.l2_write_sectors, 8192);
    let text = sector_analyzer::sheet::text::render(&s);
    assert!(text.contains("texture traffic not included"), "{text}");
    assert_eq!(json(&s)["boundaries"]["excludes"], serde_json::json!(["texture"]));
    let md = sector_analyzer::sheet::markdown::render(&s);
    assert!(md.contains("Texture traffic not included"), "{md}");
    let s = probe("surf_rw", "16,16", "16,16", &[("w", "256"), ("h", "256")]);
    assert_eq!(s.boundaries.excludes, [Space::Surface]);
}

#[test]
fn texture_references_take_their_element_type_and_read_mode() {
    // One warp. t4's elements are float4 (16 bytes); tn's unsigned chars read normalized are
    // floats (4); tf's gather returns four texels' floats, a float4 (16); tu's uints (4).
    let src = r#"
    texture<float4, 1, cudaReadModeElementType> t4;
    texture<unsigned char, 2, cudaReadModeNormalizedFloat> tn;
    texture<float, 2> tf;
    typedef unsigned int uint;
    texture<uint, 1> tu;
    __global__ void k(float4 *out, float *o2) {
        int i = threadIdx.x;
        out[i] = tex1Dfetch(t4, i);
        o2[i] = tex2D(tn, i, 0.5f) + (float)tex1Dfetch(tu, i);
        float4 g = tex2Dgather(tf, 0.5f, 0.5f, 0);
        o2[i + 32] = g.x;
    }"#;
    let s = sheet(src, "1", "32", &[]);
    let widths: Vec<(String, u32, u64)> = s
        .instructions
        .iter()
        .filter(|r| r.space == Space::Texture)
        .map(|r| (r.text.clone(), r.width, r.requests))
        .collect();
    assert_eq!(
        widths,
        [
            ("tex1Dfetch(t4, i)".to_string(), 16, 1),
            ("tex2D(tn, i, 0.5f)".to_string(), 4, 1),
            ("tex1Dfetch(tu, i)".to_string(), 4, 1),
            ("tex2Dgather(tf, 0.5f, 0.5f, 0)".to_string(), 16, 1),
        ]
    );
    // out[i]: 32 float4, 16 sectors; o2[i] and o2[i + 32]: 4 each.
    assert_eq!(total(&s, "global", "store"), (3, 24));
}

#[test]
fn surface_references_and_every_form_of_read_and_write() {
    // Two warps of 32. Per warp: surf2Dread(&v, sref, ..) (4 bytes, the variable's type),
    // surf2Dwrite(v, sref, .., cudaBoundaryModeClamp) (the data's type), and through the object
    // s: surf2Dread<float4> (16 bytes), surf1Dread(&e, ..) into a float2 (8), surf3Dwrite<float>
    // (4). Surface reads 3 per warp, writes 2. `surf2Dread(&out[i], s, ..)` writes a global
    // float: one more read, and a store of 32 floats (4 sectors) per warp.
    let src = r#"
    surface<void, cudaSurfaceType2D> sref;
    __global__ void k(cudaSurfaceObject_t s, float *out) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float v;
        surf2Dread(&v, sref, i * 4, 0);
        surf2Dwrite(v, sref, i * 4, 1, cudaBoundaryModeClamp);
        float4 w = surf2Dread<float4>(s, i * 16, 0);
        float2 e; surf1Dread(&e, s, i * 8);
        surf3Dwrite<float>(w.x + e.y, s, i * 4, 0, 0);
        surf2Dread(&out[i], s, i * 4, 2);
    }"#;
    let s = sheet(src, "2", "32", &[]);
    let reads: Vec<u32> =
        s.instructions.iter().filter(|r| r.space == Space::Surface && r.op == "load").map(|r| r.width).collect();
    assert_eq!(reads, [4, 16, 8, 4]);
    assert_eq!(pipe(&s, "surface", "load").0, 8);
    assert_eq!(pipe(&s, "surface", "store"), (4, 2 * 32 * 4 + 2 * 32 * 4));
    assert_eq!(total(&s, "global", "store"), (2, 8));
    assert_eq!(total(&s, "global", "load"), (0, 0));
}

#[test]
fn every_fetch_function_of_the_object_api_is_a_texture_row() {
    // One warp, 10 fetches: one execution each. The coordinates' own load idx[i] is counted
    // (32 ints, 4 sectors); the fetches are not global loads.
    let src = r#"
    __global__ void k(cudaTextureObject_t t, CUtexObject u, float *out, const int *idx) {
        int i = threadIdx.x;
        float a = tex1Dfetch<float>(t, idx[i]) + tex1D<float>(t, i) + tex2D<float>(u, i, 0.5f);
        float4 b = tex3D<float4>(t, i, 0.5f, 0.5f);
        float c = tex2DLod<float>(t, i, 1.0f, 0.0f) + tex2DLayered<float>(t, i, 1.f, 2)
                + texCubemap<float>(t, 1.f, 2.f, 3.f) + tex1DLayered<float>(t, i, 1)
                + tex2DGrad<float>(t, i, 1.f, make_float2(1.f, 0.f), make_float2(0.f, 1.f));
        float4 g = tex2Dgather<float4>(t, i, 0.5f, 1);
        out[i] = a + b.x + c + g.w;
    }"#;
    let s = sheet(src, "1", "32", &[]);
    assert_eq!(pipe(&s, "texture", "load").0, 10);
    assert_eq!(s.totals.texture.requests, 10);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    assert_eq!(total(&s, "global", "store"), (1, 4));
}

#[test]
fn executions_follow_the_active_lanes() {
    // Blocks of 48 threads (a warp of 32 and one of 16), 3 blocks; the fetch runs where i < 100:
    // blocks 0 and 1 fully (2 warps each), block 2 (threads 96..143) only its first warp, lanes
    // 96..99: 5 executions for 100 lanes. The second fetch runs in lanes with even i, every warp
    // of every block: 6.
    let src = r#"
    __global__ void k(cudaTextureObject_t t, float *out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = tex1Dfetch<float>(t, i);
        if (i % 2 == 0) out[i + 1000] = tex1D<float>(t, i);
    }"#;
    let s = sheet(src, "3", "48", &[("n", "100")]);
    let rows: Vec<(u64, u64)> = s
        .instructions
        .iter()
        .filter(|r| r.space == Space::Texture)
        .map(|r| (r.executions, r.thread_executions))
        .collect();
    assert_eq!(rows, [(5, 100), (6, 72)]);
}

#[test]
fn what_a_fetch_reads_is_data_nobody_knows() {
    // A fetched value is data read from memory: a branch on it is taken (stated), an address
    // from it touches a sector per lane (not exact, with bounds), and a loop that moves memory
    // and stops on it is refused at the loop.
    let head = "__global__ void k(cudaTextureObject_t t, float *out) {\n  int i = threadIdx.x;\n  int v = tex1Dfetch<int>(t, i);\n";
    let s = sheet(&format!("{head}  if (v > 0) out[i] = 1.0f;\n}}\n"), "1", "32", &[]);
    assert!(
        s.assumptions.iter().any(|a| a.contains("branch at 4:") && a.contains("assumed taken")),
        "{:?}",
        s.assumptions
    );
    assert_eq!(total(&s, "global", "store"), (1, 4));
    let s = sheet(&format!("{head}  out[v] = 1.0f;\n}}\n"), "1", "32", &[]);
    let row = s.instructions.iter().find(|r| r.space == Space::Global).unwrap();
    assert!(!row.exact);
    assert_eq!((row.sectors, row.sectors_min, row.sectors_max), (32, 1, 32));
    let e = failure(&format!("{head}  for (int j = 0; j < v; j++) out[i + j] = 1.0f;\n}}\n"), &options("1", "32", &[]));
    assert!(e.contains("m.cu:4:") && e.contains("value the analysis does not know"), "{e}");
}

#[test]
fn the_compiler_model_keeps_loads_across_the_texture_pipeline() {
    // nvcc (CUDA 13, sm_90): a fetch whose value is unused is removed (no TLD), and a global
    // load of in[i] before and after a fetch, a surface read and a surface write is one LDG.
    // One warp: in[i] once (4 sectors), out[i] once, the dead fetch 0 executions.
    let src = r#"
    __global__ void k(cudaTextureObject_t t, cudaSurfaceObject_t s, const float *in, float *out) {
        int i = threadIdx.x;
        float a = in[i];
        float dead = tex1Dfetch<float>(t, i);
        float b = tex1Dfetch<float>(t, i + 1);
        float c; surf2Dread(&c, s, i * 4, 0);
        surf2Dwrite(a, s, i * 4, 1);
        out[i] = a + b + c + in[i];
    }"#;
    let s = sheet(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (1, 4));
    let fetches: Vec<u64> = s.instructions.iter().filter(|r| r.space == Space::Texture).map(|r| r.requests).collect();
    assert_eq!(fetches, [0, 1]);
    assert_eq!((pipe(&s, "surface", "load").0, pipe(&s, "surface", "store").0), (1, 1));
}

#[test]
fn both_engines_count_the_texture_pipeline_alike() {
    // The symbolic engine summarises the boxes of warps; the reference engine enumerates them.
    for (kernel, grid, block, args) in [
        ("tex1d_lin", "256", "256", vec![("n", "65500")]),
        ("tex2d_arr", "16,16", "16,16", vec![("w", "250"), ("h", "256")]),
        ("surf_rw", "16,16", "16,16", vec![("w", "256"), ("h", "200")]),
    ] {
        let mut o = options(grid, block, &args);
        o.kernel = Some(kernel.into());
        o.engine = EngineKind::Symbolic;
        let symbolic = sheet_with(PROBE, &o);
        o.engine = EngineKind::Enumerate;
        let reference = sheet_with(PROBE, &o);
        assert_eq!(symbolic.engine, "symbolic", "{kernel}");
        assert_eq!(crate::engines::counted(&symbolic), crate::engines::counted(&reference), "{kernel}");
    }
}

#[test]
fn a_fetch_without_a_known_value_type_is_refused_by_name() {
    let src = "surface<void, 2> sref;\n__global__ void k(float *o) {\n  o[threadIdx.x] = surf2Dread(sref, threadIdx.x * 4, 0);\n}\n";
    let e = failure(src, &options("1", "32", &[]));
    assert!(e.contains("m.cu:3:") && e.contains("the type of the value it reads is not known"), "{e}");
}

#[test]
fn the_sass_path_counts_the_texture_instructions_alike() {
    // TLD, TEX, SULD and SUST counted by executions from the machine code: the same rows'
    // numbers as the source path, the handles given no value (they are not integers the code
    // computes with). Skipped without a toolkit.
    if !sector_analyzer::analyze::toolkit_found() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("sector-texture-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("probe.cu");
    std::fs::write(&file, PROBE).unwrap();
    for (kernel, grid, block, args) in [
        ("tex1d_lin", "256", "256", vec![("n", "65536")]),
        ("tex1d_f4", "256", "256", vec![("n", "65536")]),
        ("tex2d_arr", "16,16", "16,16", vec![("w", "256"), ("h", "256")]),
        ("surf_rw", "16,16", "16,16", vec![("w", "256"), ("h", "256")]),
    ] {
        let mut o = options(grid, block, &args);
        o.kernel = Some(kernel.into());
        let source =
            sector_analyzer::analyze(sector_analyzer::Input::File(&file), &o, &sector_analyzer::source::DiskLoader)
                .unwrap_or_else(|f| panic!("{kernel}: {}", f.one_line()))
                .sheet;
        o.via = sector_analyzer::analyze::Via::Sass;
        let sass =
            sector_analyzer::analyze(sector_analyzer::Input::File(&file), &o, &sector_analyzer::source::DiskLoader)
                .unwrap_or_else(|f| panic!("{kernel} via sass: {}", f.one_line()))
                .sheet;
        let t = |s: &Sheet| {
            let t = &s.totals;
            (t.texture, t.surface_load, t.surface_store, t.global_load, t.global_store)
        };
        assert_eq!(t(&sass), t(&source), "{kernel}");
        assert_eq!(sass.boundaries.excludes, source.boundaries.excludes, "{kernel}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_inline_asm_result_keeps_the_loads_and_fetches_that_fill_its_inputs() {
    // cuda-samples' stereoDisparity: `cost = __usad4(imLeft, imRight)`, a `vabsdiff4` in inline
    // PTX, of a fetched value. The asm's output depends on its inputs, so the fetch and the
    // loads a[i], b[i] are live (nvcc emits TEX and LDGs for them). One warp: one execution
    // each, 4 sectors per load.
    let src = r#"
    __device__ unsigned int sad(unsigned int A, unsigned int B) {
        unsigned int r;
        asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(r) : "r"(A), "r"(B), "r"(0));
        return r;
    }
    __global__ void k(cudaTextureObject_t t, const unsigned *a, const unsigned *b, unsigned *out) {
        int i = threadIdx.x;
        out[i] = sad(a[i], b[i]) + sad(a[i], tex2D<unsigned int>(t, i, 0));
    }"#;
    let s = sheet(src, "1", "32", &[]);
    assert_eq!(total(&s, "global", "load"), (2, 8));
    assert_eq!(pipe(&s, "texture", "load").0, 1);
}

#[test]
fn a_sweep_says_that_its_columns_leave_the_texture_pipeline_out() {
    // tex1d_lin over n = 1024 and 2048, blocks of 256: 1024 / 32 = 32 and 64 warps, one fetch
    // each.
    use sector_analyzer::sweep::{parse_values, render_text, sweep, Axis, SweepOptions};
    let base = sector_analyzer::AnalyzeOptions {
        kernel: Some("tex1d_lin".into()),
        grid: "ceil(n/256)".into(),
        ..Default::default()
    };
    let args = vec![Axis { name: "n".into(), values: parse_values("--arg", "1024,2048", false).unwrap() }];
    let opts = SweepOptions { base, args, blocks: parse_values("--block ", "256", true).unwrap() };
    let r = sweep(
        sector_analyzer::Input::Source { name: "m.cu", text: PROBE },
        &opts,
        &sector_analyzer::source::NoFiles,
        &|| {},
    )
    .unwrap();
    let fetches: Vec<u64> = r.cells.iter().map(|c| c.metrics.as_ref().unwrap().texture_requests).collect();
    assert_eq!(fetches, [32, 64]);
    assert!(render_text(&r).contains("texture and surface accesses, and their DRAM traffic, not included"));
}
