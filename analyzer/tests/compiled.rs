//! Compiled code from other toolchains, counted through its SASS: a Triton kernel and a Numba
//! kernel, each built here without a GPU (the scripts beside them) and committed as a cubin.
//! Their line tables name the Python files by the paths they were built at; the rows find them
//! beside the cubin. Needs the toolkit's `nvdisasm`; skipped without it.

use sector_analyzer::analyze::AnalyzeOptions;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, Input, Sheet};
use std::path::PathBuf;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/compiled").join(rel)
}

#[allow(clippy::print_stderr)]
fn run(rel: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Option<Sheet> {
    if !sector_analyzer::analyze::toolkit_found() {
        eprintln!("no CUDA toolkit (nvdisasm) found: compiled-code tests skipped");
        return None;
    }
    let opts = AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
        ..Default::default()
    };
    let path = fixture(rel);
    match analyze(Input::File(&path), &opts, &DiskLoader) {
        Ok(a) => Some(a.sheet),
        Err(f) => panic!("{}", f.one_line()),
    }
}

/// (file name, line, op, requests, sectors) of every row.
fn rows(s: &Sheet) -> Vec<(String, u32, String, u64, u64)> {
    s.instructions
        .iter()
        .map(|r| {
            let file = r.file.as_deref().unwrap_or(&s.file);
            let name = std::path::Path::new(file).file_name().unwrap().to_string_lossy().into_owned();
            (name, r.line, r.op.to_string(), r.requests, r.sectors)
        })
        .collect()
}

/// Triton's vector add with BLOCK_SIZE 1024 and 4 warps (128 threads a program): each thread
/// loads 8 floats of x and of y, 128 apart, so every warp instruction covers 32 consecutive
/// floats. n = 100,003: 3,125 full instructions of 4 sectors, and one of 3 floats starting on a
/// sector boundary (byte 400,000 = 12,500 x 32): 1 sector. cdiv(100,003, 1,024) = 98 programs.
#[test]
fn a_triton_kernel_is_counted_on_its_python_lines() {
    let Some(s) = run("triton/add.cubin", "98", "128", &[("n_elements", "100003")]) else { return };
    let want = |line, op: &str| ("add.py".to_string(), line, op.to_string(), 3_126, 12_501);
    assert_eq!(rows(&s), vec![want(11, "load"), want(12, "load"), want(13, "store")]);
    assert!(s.instructions[0].text.starts_with("x = tl.load(x_ptr + offsets"), "{}", s.instructions[0].text);
}

/// Numba passes each array as 7 parameters (meminfo, parent, nitems, itemsize, data, shape,
/// strides); they are named `x.data`, `x.shape[0]`, ... and the itemsize and strides follow
/// from the element type and the shape. n = 1,000 threads of 4 blocks of 256 load x[i] and
/// y[i] and store out[i]: 31 full warps and one of 8 lanes, 1,000 x 4 bytes = 125 sectors each;
/// the two loads of line 9 share its row.
#[test]
fn a_numba_kernel_names_its_arrays_fields() {
    let args = [("a", "2.0"), ("n", "1000"), ("x.shape[0]", "1000"), ("y.shape[0]", "1000"), ("out.shape[0]", "1000")];
    let Some(s) = run("numba/saxpy.cubin", "4", "256", &args) else { return };
    let mut got = rows(&s);
    got.sort_by(|a, b| a.2.cmp(&b.2));
    let row = |op: &str, n: u64| ("saxpy.py".to_string(), 9, op.to_string(), 32 * n, 125 * n);
    assert_eq!(got, vec![row("load", 2), row("store", 1)]);
    assert!(s.assumptions.iter().any(|a| a.contains("x.strides[0]")), "{:?}", s.assumptions);
    // Without the shapes the sheet asks for them by name.
    let e = match analyze(
        Input::File(&fixture("numba/saxpy.cubin")),
        &AnalyzeOptions {
            grid: "4".into(),
            block: "256".into(),
            args: vec![("a".into(), "2".into()), ("n".into(), "1000".into())],
            ..Default::default()
        },
        &DiskLoader,
    ) {
        Ok(_) => panic!("expected the shapes to be asked for"),
        Err(f) => f.one_line(),
    };
    assert!(e.contains(".shape[0]"), "{e}");
}

// ---- Compiler-shaped kernels against the H200 (validate/probes/compiled) ----

/// Each launch of `validate/probes/compiled/compiled.cu`'s `main()`: (the kernel as Nsight
/// Compute names it, --kernel, grid, block, args, fills).
type Launch = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    &'static [(&'static str, &'static str)],
);
const N: (&str, &str) = ("n", "10000");
const PROBE: &[(&str, Launch)] = &[
    ("void copy_struct<F3>", ("copy_struct", "40", "256", &[("T", "F3"), N], &[])),
    ("void copy_struct<F4>", ("copy_struct", "40", "256", &[("T", "F4"), N], &[])),
    ("void copy_struct<D3>", ("copy_struct", "40", "256", &[("T", "D3"), N], &[])),
    ("void copy_struct<P5>", ("copy_struct", "40", "256", &[("T", "P5"), N], &[])),
    ("void copy_struct<S24>", ("copy_struct", "40", "256", &[("T", "S24"), N], &[])),
    ("void copy_struct<H6>", ("copy_struct", "40", "256", &[("T", "H6"), N], &[])),
    ("count_zero", ("count_zero", "40", "256", &[N], &[("in", "zero")])),
    ("sum_float", ("sum_float", "40", "256", &[N], &[])),
    ("shared_acc", ("shared_acc", "16", "256", &[("iters", "50")], &[])),
    ("tri_sum", ("tri_sum", "8", "256", &[], &[])),
    ("stride_loop", ("stride_loop", "2", "256", &[N], &[])),
    ("local_pick", ("local_pick", "40", "256", &[N], &[("idx", "identity")])),
    ("bytes_xor", ("bytes_xor", "40", "256", &[N], &[])),
    ("warp_sum", ("warp_sum", "40", "256", &[N], &[])),
    ("reload", ("reload", "40", "256", &[N], &[])),
    ("hist_shared", ("hist_shared", "40", "256", &[N], &[("idx", "identity")])),
    ("invariant_restrict", ("invariant_restrict", "8", "256", &[("j", "5"), ("n", "40")], &[])),
    ("invariant_alias", ("invariant_alias", "8", "256", &[("j", "5"), ("n", "40")], &[])),
    ("pair_members", ("pair_members", "40", "256", &[N], &[])),
    ("pair_struct", ("pair_struct", "40", "256", &[N], &[])),
    ("both_branches", ("both_branches", "40", "256", &[N], &[])),
    ("adjacent_scalars", ("adjacent_scalars", "40", "256", &[N], &[])),
    ("switch_loads", ("switch_loads", "40", "256", &[N], &[("sel", "identity")])),
    ("reread_after_sync", ("reread_after_sync", "16", "256", &[], &[])),
    ("unroll_one", ("unroll_one", "4", "256", &[("n", "1000")], &[])),
    ("const_loop", ("const_loop", "4", "256", &[], &[])),
];

/// Launches where a path differs from the H200, and why (validate/probes/compiled/README.md).
const KNOWN: &[(&str, &str)] = &[];

/// Nsight Compute's metric for each sheet total compared.
const METRICS: &[(&str, &str)] = &[
    ("global_load_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    ("global_load_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    ("global_store_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    ("global_store_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    ("global_red_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"),
    ("global_red_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"),
    ("global_atom_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"),
    ("global_atom_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"),
    ("shared_load_requests", "smsp__sass_inst_executed_op_shared_ld.sum"),
    ("shared_store_requests", "smsp__sass_inst_executed_op_shared_st.sum"),
];

/// A CSV line's cells (quoted, commas inside quotes kept).
fn cells(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for c in line.chars() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// The H200's counters by kernel (the name up to its parameter list) and metric.
fn probe_measured() -> std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../validate/results/compiled/compiled.csv");
    let text = std::fs::read_to_string(path).expect("the probe's measurement is in the repository");
    let mut header: Vec<String> = Vec::new();
    let mut out: std::collections::BTreeMap<String, std::collections::BTreeMap<String, u64>> = Default::default();
    for line in text.lines() {
        let c = cells(line);
        if c.first().is_some_and(|x| x == "ID") {
            header = c;
            continue;
        }
        if header.is_empty() || c.len() != header.len() {
            continue;
        }
        let at = |name: &str| header.iter().position(|h| h == name).map(|i| c[i].clone()).unwrap_or_default();
        let kernel = at("Kernel Name");
        let kernel = kernel.split('(').next().unwrap_or("").trim().to_string();
        let value: u64 = at("Metric Value").replace(',', "").parse().unwrap_or(0);
        out.entry(kernel).or_default().insert(at("Metric Name"), value);
    }
    out
}

/// Both paths against what the H200 counted. The SASS path (with a toolkit) equals every
/// counter of every launch; the source path equals them too except where its rows say they
/// are not exact (loops nvcc unrolls with a remainder when lanes' trip counts differ).
#[test]
fn compiler_shaped_kernels_equal_the_h200() {
    let measured = probe_measured();
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../validate/probes/compiled/compiled.cu");
    let mut vias = vec![sector_analyzer::analyze::Via::Source];
    if sector_analyzer::analyze::toolkit_found() {
        vias.push(sector_analyzer::analyze::Via::Sass);
    }
    let mut wrong = Vec::new();
    for via in vias {
        for (ncu_name, (kernel, grid, block, args, fills)) in PROBE {
            let opts = AnalyzeOptions {
                via,
                kernel: Some(kernel.to_string()),
                grid: grid.to_string(),
                block: block.to_string(),
                args: args.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
                fills: fills.iter().map(|(a, f)| (a.to_string(), sector_analyzer::Fill::parse(f).unwrap())).collect(),
                ..Default::default()
            };
            let sheet = match analyze(Input::File(&file), &opts, &DiskLoader) {
                Ok(a) => a.sheet,
                Err(f) => panic!("{ncu_name} via {via:?}: {}", f.one_line()),
            };
            let m = &measured[*ncu_name];
            let exact = sheet.instructions.iter().all(|r| r.exact);
            for (key, metric) in METRICS {
                let want = m.get(*metric).copied().unwrap_or(0);
                let got = crate::examples::measured(&sheet, key).unwrap();
                let known = KNOWN.iter().any(|(k, v)| k == kernel && *v == format!("{via:?}"));
                if got != want && exact && !known {
                    wrong.push(format!("{ncu_name} via {via:?}: {key} {got}, the H200 {want}"));
                }
            }
            if !exact {
                assert!(
                    matches!(via, sector_analyzer::analyze::Via::Source)
                        && ["tri_sum", "stride_loop", "unroll_one"].contains(kernel),
                    "{ncu_name} via {via:?} is not exact"
                );
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// `printf` compiles to a call of `vprintf` outside the kernel (`CALL.ABS.NOINC` through an
/// address in constant bank 4): it does not stop the count. Two warps each store 32 floats: 2
/// requests, 8 sectors; the call is stated on the sheet.
#[test]
fn a_printf_call_does_not_stop_the_sass_path() {
    if !sector_analyzer::analyze::toolkit_found() {
        return;
    }
    let src = "#include <cstdio>\n__global__ void k(float *o) {\n    printf(\"%d\\n\", threadIdx.x);\n    o[threadIdx.x] = 1.0f;\n}\n";
    let opts = AnalyzeOptions {
        via: sector_analyzer::analyze::Via::Sass,
        grid: "1".into(),
        block: "64".into(),
        ..Default::default()
    };
    let s = match analyze(Input::Source { name: "printf.cu", text: src }, &opts, &DiskLoader) {
        Ok(a) => a.sheet,
        Err(f) => panic!("{}", f.one_line()),
    };
    assert_eq!((s.totals.global_store.requests, s.totals.global_store.sectors), (2, 8));
    assert!(s.assumptions.iter().any(|a| a.contains("outside the kernel")), "{:?}", s.assumptions);
}
