//! Every integration test of the analyzer, in one binary: each `tests/NAME.rs` is a module here,
//! so the library and its dependencies are linked once, not once per file (a fresh clone's
//! `cargo test` spent most of its time linking). Run one file's tests with
//! `cargo test -p sector-analyzer --test it NAME::`.

mod attribute;
mod boundaries;
mod check;
mod cint_gcc;
mod cli;
mod compiled;
mod compiler_model;
mod cpp_census;
mod cpp_front;
mod cpp_modern;
mod cpp_round10;
mod cpp_round11;
mod cpp_round14;
mod cpp_round15;
mod cpp_round3;
mod cpp_round4;
mod cpp_round5;
mod cpp_round6;
mod cpp_round8;
mod cpp_round9;
mod engine_property;
mod engines;
mod engines_property;
mod estimate;
mod examples;
mod explain;
mod first_hour;
mod fuzz_regressions;
mod gpu_census;
mod hostile;
mod hostile3;
mod html;
mod inline_ptx_shared;
mod launch_site;
mod layers;
mod lowering;
mod merged_shared;
mod one_command;
mod overloads;
mod preprocess;
mod rust_front;
mod sass;
mod scale;
mod seed;
mod shared_layout;
mod shared_values;
mod structure;
mod support;
mod sweep;
mod texture;

/// `autotests = false` (Cargo.toml) builds only this file: a new `tests/*.rs` must be listed
/// above, or it would never run.
#[test]
fn every_test_file_is_a_module_here() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let listed = include_str!("it.rs");
    let mut missing = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else { continue };
        if path.extension().is_some_and(|x| x == "rs") && stem != "it" && !listed.contains(&format!("\nmod {stem};")) {
            missing.push(stem.to_string());
        }
    }
    assert!(missing.is_empty(), "add `mod NAME;` to analyzer/tests/it.rs for: {missing:?}");
}
