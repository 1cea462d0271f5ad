//! Every example case: the hand-worked numbers of its manifest hold, and its text and JSON sheets
//! match the snapshots under the top-level `snapshots/`.

use sector_analyzer::manifest::{examples_in, Manifest};
use sector_analyzer::source::DiskLoader;
use sector_analyzer::{analyze, Input, Sheet};
use std::path::Path;
use std::time::Instant;

pub(crate) fn measured(sheet: &Sheet, key: &str) -> Option<u64> {
    let t = &sheet.totals;
    Some(match key {
        "global_load_requests" => t.global_load.requests,
        "global_load_sectors" => t.global_load.sectors,
        "global_load_ideal_sectors" => t.global_load.ideal_sectors,
        "global_store_requests" => t.global_store.requests,
        "global_store_sectors" => t.global_store.sectors,
        "global_store_ideal_sectors" => t.global_store.ideal_sectors,
        "logical_bytes" => sheet.global_logical_bytes(),
        "shared_load_requests" => t.shared_load.requests,
        "shared_store_requests" => t.shared_store.requests,
        "shared_load_wavefronts" => t.shared_load.wavefronts,
        "shared_store_wavefronts" => t.shared_store.wavefronts,
        "global_red_requests" => t.global_red.requests,
        "global_red_sectors" => t.global_red.sectors,
        "global_atom_requests" => t.global_atom.requests,
        "global_atom_sectors" => t.global_atom.sectors,
        "global_async_copy_requests" => t.global_async_copy.requests,
        "global_async_copy_sectors" => t.global_async_copy.sectors,
        "global_async_copy_bypass_requests" => t.global_async_copy_bypass.requests,
        "global_async_copy_bypass_sectors" => t.global_async_copy_bypass.sectors,
        "shared_atom_requests" => t.shared_atom.requests,
        // Boundaries: worked by hand from the cache model's stated rules (the manifests' `why`).
        "l1_hit_sectors" => sheet.boundaries.l1_hit_sectors,
        "l2_read_sectors" => sheet.boundaries.l2_read_sectors,
        "l2_write_sectors" => sheet.boundaries.l2_write_sectors,
        "dram_read_sectors" => sheet.boundaries.dram_read_sectors,
        "dram_write_sectors" => sheet.boundaries.dram_write_sectors,
        _ => return None,
    })
}

#[test]
#[allow(clippy::print_stderr)]
fn examples_match_hand_worked_numbers_and_snapshots() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let pairs = examples_in(&dir);
    assert!(pairs.len() >= 15, "expected at least 15 examples, found {}", pairs.len());
    let mut failures = Vec::new();
    let mut cases = 0;
    let mut slowest = (0.0f64, String::new());
    for (src, manifest) in pairs {
        let m = Manifest::load(&manifest).unwrap_or_else(|d| panic!("{}", d.message));
        for case in &m.cases {
            cases += 1;
            let opts = case.options().unwrap_or_else(|d| panic!("{}: {}", case.name, d.message));
            let rel = Path::new("examples").join(src.file_name().unwrap());
            let start = Instant::now();
            let result = analyze(Input::File(&src), &opts, &DiskLoader);
            let secs = start.elapsed().as_secs_f64();
            if secs > slowest.0 {
                slowest = (secs, case.name.clone());
            }
            let mut a = match result {
                Ok(a) => a,
                Err(f) => {
                    failures.push(format!("{}: analysis failed: {}", case.name, f.one_line()));
                    continue;
                }
            };
            a.sheet.file = rel.display().to_string();
            for (key, want) in &case.expect {
                match measured(&a.sheet, key) {
                    Some(got) if got == *want => {}
                    Some(got) => failures.push(format!("{}: {key}: expected {want}, sheet says {got}", case.name)),
                    None => failures.push(format!("{}: unknown expectation key {key}", case.name)),
                }
            }
            insta::with_settings!({
                snapshot_path => "../../snapshots",
                prepend_module_to_snapshot => false,
                omit_expression => true,
            }, {
                insta::assert_snapshot!(format!("{}.text", case.name), sector_analyzer::sheet::text::render(&a.sheet));
                insta::assert_snapshot!(format!("{}.json", case.name), sector_analyzer::sheet::json::render(&a.sheet));
            });
        }
    }
    eprintln!("{cases} cases; slowest {} took {:.3}s", slowest.1, slowest.0);
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}
