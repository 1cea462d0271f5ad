//! Compile errors as the user sees them (`tests/ui/*.rs` with their `.stderr`). Few cases: each
//! one is a compilation. Regenerate the `.stderr` files with `TRYBUILD=overwrite`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
