//! `explain`: the seed lesson's per-lane reasoning, reproduced; every example's first access
//! explained and snapshotted; the command line's output and errors.

use sector_analyzer::analyze::lower;
use sector_analyzer::explain::{explain, render_json, render_text, ExplainOptions, Explanation};
use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::{DiskLoader, FileId, SourceFiles};
use sector_analyzer::{AnalyzeOptions, Input};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn launch(kernel: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        kernel: Some(kernel.into()),
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

fn run(file: &str, analyze: AnalyzeOptions, line: u32) -> (Explanation, SourceFiles) {
    let opts = ExplainOptions { analyze, line, launch_totals: true, ..Default::default() };
    let path = root().join("examples").join(file);
    let (mut x, mut files) =
        explain(Input::File(&path), &opts, &DiskLoader).unwrap_or_else(|f| panic!("{}", f.one_line()));
    relative(&mut x, &mut files);
    (x, files)
}

/// Paths as a reader in the repository's root sees them, for stable snapshots.
fn relative(x: &mut Explanation, files: &mut SourceFiles) {
    for f in &mut files.files {
        if let Some(name) = f.path.file_name() {
            f.path = Path::new("examples").join(name);
        }
    }
    x.file = files.files[0].path.display().to_string();
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "../../snapshots",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

/// The seed: "Suppose m = 1024, a warp has 32 active lanes ... The read touches four sectors.
/// Output addresses are 4,096 bytes apart, so its store touches 32 distinct sectors ... 36
/// sectors ... If both accesses touched four sectors, the corresponding count would be eight."
#[test]
fn seed_transpose_36_versus_8() {
    let (x, files) = run(
        "transpose_naive.cu",
        launch("transpose_naive", "32,128", "32,8", &[("rows", "1024"), ("cols", "1024")]),
        24,
    );
    let [store, load] = &x.accesses[..] else { panic!("two accesses on line 24") };
    assert_eq!((store.op.name(), store.sectors, store.ideal_sectors), ("store", 32, 4));
    assert_eq!((load.op.name(), load.sectors, load.ideal_sectors), ("load", 4, 4));
    assert_eq!(store.sectors + load.sectors, 36);
    assert_eq!(store.ideal_sectors + load.ideal_sectors, 8);
    // Neighbouring lanes write addresses 4m = 4,096 bytes apart.
    let offsets: Vec<i64> = store.lanes.iter().map(|l| l.offset.unwrap()).collect();
    assert!(offsets.windows(2).all(|w| w[1] - w[0] == 4096));
    assert!(store.why.iter().any(|w| w.contains("4,096 bytes apart")), "{:?}", store.why);
    let text = render_text(&x, &files, false);
    assert!(text.contains("32 + 4 = 36 sectors for 256 useful bytes, where 8 would do"), "{text}");
    snapshot("explain_seed_transpose_1024", &text);
}

/// The seed: consecutive floats from a sector boundary touch 4 sectors; 4 bytes past a boundary,
/// 5; a permutation of the same span, 4; floats 128 bytes apart, 32.
#[test]
fn seed_alignment_permutation_and_stride() {
    // The line's load (`out[i] = a[...]` has a store first).
    let warp = |file: &str, opts: AnalyzeOptions, line: u32| {
        let x = run(file, opts, line).0;
        x.accesses.iter().find(|a| a.op == "load").cloned().unwrap_or_else(|| x.accesses[0].clone())
    };
    let mut a = launch("vec_add", "4096", "256", &[("n", "1048576")]);
    let add = run("vec_add.cu", a.clone(), 29).0.accesses[0].clone();
    assert_eq!((add.sectors, add.useful_bytes), (4, 128));
    a.offsets = vec![("c".into(), 4)];
    let off = run("vec_add.cu", a, 29).0.accesses[0].clone();
    assert_eq!(off.sectors, 5);
    assert!(off.why.iter().any(|w| w.starts_with("misaligned")), "{:?}", off.why);

    // Lanes reversed: a permutation of one aligned 128-byte span, still 4 sectors.
    let rev = warp("lane_perm.cu", launch("lane_reversed", "1024", "256", &[]), 19);
    assert_eq!((rev.op.name(), rev.sectors), ("load", 4));
    assert!(rev.why.iter().any(|w| w.contains("reverse order")), "{:?}", rev.why);
    let mul7 = warp("lane_perm.cu", launch("lane_mul7", "1024", "256", &[]), 35);
    assert_eq!((mul7.op.name(), mul7.sectors), ("load", 4));
    assert!(mul7.why.iter().any(|w| w.contains("permutation")), "{:?}", mul7.why);

    // Floats 128 bytes apart: every lane its own sector, 32 of them for 128 useful bytes.
    let x = run("strided.cu", launch("strided", "256", "256", &[("stride", "32")]), 19).0;
    let strided = x.accesses.iter().find(|a| a.op == "load").unwrap();
    assert_eq!((strided.sectors, strided.useful_bytes, strided.ideal_sectors), (32, 128, 4));

    // The gather: index 4, data 32 (the default assumption: each unknown lane its own sector),
    // out 4: 40 sectors where 12 would do.
    let x = run("gather.cu", launch("gather", "4096", "256", &[("n", "1048576")]), 23).0;
    let sectors: Vec<u64> = x.accesses.iter().map(|a| a.sectors).collect();
    assert_eq!(sectors.iter().sum::<u64>(), 40, "{sectors:?}");
    assert!(x.accesses.iter().any(|a| a.why.iter().any(|w| w.contains("default assumption"))));
}

fn first_access_line(src: &Path, opts: &AnalyzeOptions) -> u32 {
    let mut files = SourceFiles::default();
    let module = lower(&Input::File(src), opts, &DiskLoader, &mut files).unwrap_or_else(|d| panic!("{}", d.message));
    let k = module.kernels.iter().find(|k| Some(&k.name) == opts.kernel.as_ref()).expect("the case's kernel");
    k.mem_ops.iter().filter(|m| m.span.file == FileId(0)).map(|m| m.span.line).min().expect("an access")
}

#[test]
fn explain_every_example_first_access() {
    let mut n = 0;
    for (src, manifest) in examples_in(&root().join("examples")) {
        let m = Manifest::load(&manifest).unwrap_or_else(|d| panic!("{}", d.message));
        let case = &m.cases[0];
        let analyze = case.options().unwrap();
        let line = first_access_line(&src, &analyze);
        let opts = ExplainOptions { analyze, line, launch_totals: true, ..Default::default() };
        let (mut x, mut files) = explain(Input::File(&src), &opts, &DiskLoader)
            .unwrap_or_else(|f| panic!("{}: {}", case.name, f.one_line()));
        relative(&mut x, &mut files);
        for a in &x.accesses {
            // A full warp of the sheet's rows: the execution's numbers are consistent.
            assert!(a.sectors >= a.ideal_sectors, "{}: {a:?}", case.name);
            assert!(!a.why.is_empty());
            if let Some(r) = &a.whole_launch {
                assert!(r.requests > 0, "{}: the sheet has the access", case.name);
            }
        }
        let json: serde_json::Value = serde_json::from_str(&render_json(&x)).expect("JSON");
        assert_eq!(json["kernel"], case.kernel.as_str());
        snapshot(&format!("explain_{}", case.name), &render_text(&x, &files, false));
        n += 1;
    }
    assert!(n >= 15, "{n} examples");
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sector-estimate"))
}

#[test]
fn cli_explain_text_json_and_errors() {
    let base = [
        "explain",
        "examples/block100.cu",
        "--kernel",
        "saxpy",
        "--grid",
        "40",
        "--block",
        "100",
        "--arg",
        "n=4000",
        "--arg",
        "alpha=2",
    ];
    let line = first_access_line(&root().join("examples/block100.cu"), &launch("saxpy", "40", "100", &[("n", "4000")]));
    let line = line.to_string();
    let o = bin()
        .current_dir(root())
        .args(base)
        .args(["--line", &line, "--block-index", "1", "--warp", "3"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8(o.stdout).unwrap();
    assert!(text.contains("partial warp"), "{text}");
    snapshot("explain_cli_block100_partial_warp", &text);

    let o = bin().current_dir(root()).args(base).args(["--line", &line, "--format", "json"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("stdout is JSON and nothing else");
    assert_eq!(v["accesses"][0]["lanes"].as_array().unwrap().len(), 32);

    // A line without an access: usage error naming the lines that have one.
    let o = bin().current_dir(root()).args(base).args(["--line", "1"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("examples/block100.cu:1") && err.contains(&line), "{err}");

    // A warp that does not exist, an execution that does not happen.
    let o = bin().current_dir(root()).args(base).args(["--line", &line, "--warp", "4"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("has 4 warps"));
    let o = bin()
        .current_dir(root())
        .args(base)
        .args(["--line", &line, "--iteration", "1", "--block-index", "0", "--warp", "0"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("block100.cu:") && err.contains("executed once"), "{err}");
    let o = bin().current_dir(root()).args(base).args(["--line", &line, "--block-index", "40"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("outside the grid"));
}
