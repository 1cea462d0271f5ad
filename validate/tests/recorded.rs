//! Parsing real Nsight Compute output recorded on an NVIDIA H200 (tests/fixtures/h200-probe).

use sector_validate::ncu::{parse_raw, parse_session, parse_source};
use std::path::{Path, PathBuf};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/h200-probe").join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn raw_page_base_units() {
    let r = parse_raw(&read("raw/raw.csv")).unwrap();
    assert_eq!(r.len(), 5);
    assert_eq!(r.iter().map(|x| x.id).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    let names: Vec<String> = r.iter().map(|x| x.function_name()).collect();
    assert_eq!(names, ["vec_add", "vec_add", "offset_copy", "transpose_shared", "strided_load"]);
    let m = |i: usize, k: &str| r[i].metric(k).unwrap_or_else(|| panic!("{k} missing"));
    assert_eq!(m(0, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"), 65536.0);
    assert_eq!(m(0, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 262144.0);
    assert_eq!(m(0, "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"), 32768.0);
    assert_eq!(m(0, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 131072.0);
    assert_eq!(m(0, "dram__sectors_read.sum"), 262224.0);
    assert_eq!(m(0, "gpu__time_duration.sum"), 5504.0);
    assert_eq!(m(1, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 250.0);
    assert_eq!(m(1, "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"), 125.0);
    assert_eq!(m(2, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 163840.0);
    assert_eq!(m(2, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum"), 28673.0);
    assert_eq!(m(3, "smsp__sass_inst_executed_op_shared_ld.sum"), 32768.0);
    assert_eq!(m(3, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"), 1048694.0);
    assert_eq!(m(3, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"), 32768.0);
    assert_eq!(m(4, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"), 1048576.0);
    assert_eq!(m(0, "launch__grid_size"), 4096.0);
    assert_eq!(r[3].grid, "(32, 32, 1)");
    assert_eq!(r[0].text["device__attribute_display_name"], "NVIDIA H200");
    assert_eq!(r[0].text["CC"], "9.0");
}

#[test]
fn raw_page_automatic_units_agree() {
    let base = parse_raw(&read("raw/raw.csv")).unwrap();
    let auto = parse_raw(&read("ncu-pages/raw-auto-units.csv")).unwrap();
    assert_eq!(base.len(), auto.len());
    for (b, a) in base.iter().zip(&auto) {
        for k in sector_validate::ncu::METRICS {
            let (x, y) = (b.metric(k), a.metric(k));
            assert!(x.is_some() && y.is_some(), "{k}");
            let (x, y) = (x.unwrap(), y.unwrap());
            // Time is printed in us with three decimals: equal to the ns value.
            assert!((x - y).abs() < 0.5, "{k}: {x} vs {y}");
        }
    }
    let mangled = parse_raw(&read("ncu-pages/raw-mangled.csv")).unwrap();
    assert_eq!(mangled[0].kernel, "_Z7vec_addPKfS0_Pfi");
    assert_eq!(mangled[0].function_name(), "vec_add");
    assert_eq!(mangled[4].function_name(), "strided_load");
}

#[test]
fn source_page_per_launch() {
    let b = parse_source(&read("raw/source-0.csv")).unwrap();
    assert_eq!(b.len(), 1);
    assert!(b[0].file.ends_with("probe.cu"));
    assert_eq!(b[0].function, "vec_add(const float *, const float *, float *, int)");
    // Nsight Compute prints each SASS row twice here; each address counts once.
    let i = &b[0].instructions;
    assert_eq!(i.len(), 3, "{i:#?}");
    assert!(i.iter().all(|x| x.line == 9 && x.executed == 32768 && x.l2_sectors == 131072));
    assert_eq!(i.iter().filter(|x| x.op == "Load").count(), 2);
    assert_eq!(i[2].op, "Store");
    assert_eq!(i[0].space, "Global");
    assert_eq!(i[0].size_bits, 32);
    assert!(i[0].sass.starts_with("LDG.E"));

    let b = parse_source(&read("raw/source-2.csv")).unwrap();
    let ld = &b[0].instructions[0];
    assert_eq!((ld.line, ld.l2_sectors, ld.l2_sectors_ideal, ld.l1_tag_requests), (17, 163840, 131072, 65536));

    let b = parse_source(&read("raw/source-3.csv")).unwrap();
    let i = &b[0].instructions;
    let at = |line: u32, space: &str, op: &str| {
        i.iter()
            .find(|x| x.line == line && x.space == space && x.op == op)
            .unwrap_or_else(|| panic!("{line} {space} {op}"))
    };
    assert_eq!(at(26, "Global", "Load").l2_sectors, 131072);
    assert_eq!(at(26, "Shared", "Store").shared_nway, 1.0);
    assert_eq!(at(30, "Shared", "Load").shared_nway, 32.0);
    assert_eq!(at(30, "Global", "Store").executed, 32768);

    let b = parse_source(&read("raw/source-4.csv")).unwrap();
    assert!(b[0].function.contains("strided_load"));
    assert_eq!(b[0].instructions[0].size_bits, 64);
    assert_eq!(b[0].instructions[0].l2_sectors, 1048576);
}

#[test]
fn source_page_of_all_launches_and_of_nvrtc() {
    let b = parse_source(&read("ncu-pages/source-cuda-sass-all.csv")).unwrap();
    assert_eq!(b.len(), 5);
    assert_eq!(b.iter().map(|x| x.instructions.len()).collect::<Vec<_>>(), [3, 3, 2, 4, 2]);
    let n = parse_source(&read("ncu-pages/nvrtc-source-cuda-sass.csv")).unwrap();
    assert_eq!(n.len(), 1);
    let i = &n[0].instructions;
    assert_eq!(i.len(), 3);
    assert!(i.iter().all(|x| x.line == 5 && x.executed == 2048 && x.l2_sectors == 8192));
    // The `sass` view: no lines, instructions still read.
    let s = parse_source(&read("ncu-pages/source-sass-launch2.csv")).unwrap();
    assert!(!s.is_empty());
    assert_eq!(s[0].instructions.len(), 2);
    assert_eq!(s[0].instructions[0].l2_sectors, 163840);
}

#[test]
fn session_page() {
    let s = parse_session(&read("raw/session.csv"));
    assert_eq!(s["CUDA Version"], "13.0");
    assert_eq!(s["display_name"], "NVIDIA H200");
    assert!(s["Profiler Command Line"].contains("--clock-control none"));
}

#[test]
fn raw_folder_loads() {
    let m = sector_validate::rawdir::load(&fixture("raw")).unwrap();
    assert_eq!(m.results.len(), 5);
    assert_eq!(m.sources.len(), 5);
    assert_eq!(m.log.launched().count(), 4);
    let e = &m.environment;
    assert_eq!(e.gpu, "NVIDIA H200");
    assert_eq!(e.compute_capability, "9.0");
    assert_eq!(e.driver, "580.159.04");
    assert_eq!(e.cuda_version, "13.0");
    assert_eq!(e.ncu_version, "2025.3.1.0 (build 36398880) (public-release)");
}
