//! The three scale cases of the symbolic engine: launches far beyond what enumeration can run,
//! counted in closed form. Every number here is worked out by hand from the kernel.

use sector_analyzer::{analyze, AnalyzeOptions, Input, Sheet};
use std::path::Path;

fn sheet(file: &str, grid: &str, block: &str, args: &[(&str, &str)]) -> Sheet {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scale").join(file);
    let opts = AnalyzeOptions {
        grid: grid.into(),
        block: block.into(),
        args: args.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    let a = analyze(Input::File(&path), &opts, &sector_analyzer::source::DiskLoader)
        .unwrap_or_else(|f| panic!("{}", f.one_line()));
    assert_eq!(a.sheet.engine, "symbolic", "{file}: not summarised: {:?}", a.sheet.assumptions);
    a.sheet
}

fn row<'s>(s: &'s Sheet, text: &str) -> &'s sector_analyzer::sheet::Row {
    s.instructions.iter().find(|r| r.text == text).unwrap_or_else(|| panic!("no row {text}"))
}

#[test]
fn copy_of_2_pow_34_floats() {
    // 2^34 threads in 2^26 blocks of 256: 2^29 warps, each reading and writing 32 consecutive
    // 4-byte floats from a 128-byte boundary: 4 sectors a request.
    let s = sheet("copy64.cu", "67108864", "256", &[("n", "17179869184")]);
    for text in ["in[i]", "out[i]"] {
        let r = row(&s, text);
        assert_eq!((r.requests, r.sectors, r.ideal_sectors), (1 << 29, 1 << 31, 1 << 31), "{text}");
        assert_eq!(r.logical_bytes, 1 << 36);
    }
    // The reference engine would take 3 steps per warp (the index, the test, the store).
    assert_eq!(s.work, 3 << 29);
}

#[test]
fn naive_matmul_4096() {
    // 256 x 256 blocks of 16 x 16: 2^19 warps, each two rows of 16 threads, 4096 iterations.
    let s = sheet("matmul_naive.cu", "256,256", "16,16", &[("n", "4096")]);
    let a = row(&s, "A[row * n + k]");
    // A: the two rows' elements, two floats 16 KiB apart: 2 sectors, 1 ideal.
    assert_eq!((a.requests, a.sectors, a.ideal_sectors), (1 << 31, 1 << 32, 1 << 31));
    let b = row(&s, "B[k * n + col]");
    // B: 16 consecutive floats from a 64-byte boundary, the same for both rows: 2 sectors.
    assert_eq!((b.requests, b.sectors, b.ideal_sectors), (1 << 31, 1 << 32, 1 << 32));
    let c = row(&s, "C[row * n + col]");
    // C: two rows of 16 floats: 4 sectors.
    assert_eq!((c.requests, c.sectors), (1 << 19, 1 << 21));
}

#[test]
fn tiled_transpose_32768() {
    // 1024 x 1024 blocks of 32 x 8, each moving a 32 x 32 tile in 4 steps of 8 rows.
    let s = sheet("transpose_tiled.cu", "1024,1024", "32,8", &[("n", "32768")]);
    let requests = 1u64 << 25;
    for text in ["in[(y + j) * n + x]", "out[(y + j) * n + x]"] {
        let r = row(&s, text);
        // A row of 32 floats from a 128-byte boundary.
        assert_eq!((r.requests, r.sectors), (requests, 4 * requests), "{text}");
    }
    for text in ["tile[threadIdx.y + j][threadIdx.x]", "tile[threadIdx.x][threadIdx.y + j]"] {
        let r = row(&s, text);
        // Rows of the padded tile and its columns (word 33 l + c, bank (l + c) mod 32) alike hit
        // 32 different banks: one wavefront.
        assert_eq!((r.requests, r.wavefronts), (requests, Some(requests)), "{text}");
    }
}
