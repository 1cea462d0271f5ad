//! What the C++ front end's test files share: a launch's options, a kernel's sheet from source
//! text, its error, and the totals of its rows.

use sector_analyzer::{analyze_source, AnalyzeOptions, Sheet};

/// The options of a launch: `grid` and `block` as the command line takes them, `--arg`s.
pub(crate) fn options(grid: &str, block: &str, args: &[(&str, &str)]) -> AnalyzeOptions {
    AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    }
}

/// The sheet of the file's kernel under `o` (the file named `m.cu`); a failure panics with it.
pub(crate) fn sheet_with(src: &str, o: &AnalyzeOptions) -> Sheet {
    analyze_source("m.cu", src, o).unwrap_or_else(|f| panic!("{}", f.one_line())).sheet
}

/// The sheet of the file's kernel under one launch.
pub(crate) fn sheet(src: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    sheet_with(src, &options(grid, block, args))
}

/// The one-line error of a launch that must fail.
pub(crate) fn failure(src: &str, o: &AnalyzeOptions) -> String {
    match analyze_source("m.cu", src, o) {
        Ok(_) => panic!("expected an error"),
        Err(f) => f.one_line(),
    }
}

/// (requests, sectors) of the rows with this op and space.
pub(crate) fn total(s: &Sheet, space: &str, op: &str) -> (u64, u64) {
    s.instructions
        .iter()
        .filter(|r| r.space == space && r.op == op)
        .fold((0, 0), |(a, b), r| (a + r.requests, b + r.sectors))
}
