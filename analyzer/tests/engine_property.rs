//! The engine against a direct per-lane computation, on random affine index expressions,
//! element widths, guards and launches.

use proptest::prelude::*;
use sector_analyzer::{analyze_source, AnalyzeOptions};
use std::collections::BTreeSet;

#[derive(Clone, Debug)]
struct Case {
    ty: (&'static str, u64),
    /// idx = cx*tx + cy*ty + cb*bx + c0, guarded by idx < n
    cx: i64,
    cy: i64,
    cb: i64,
    c0: i64,
    n: i64,
    block: (u32, u32),
    grid: u32,
    offset: i64,
}

fn case() -> impl Strategy<Value = Case> {
    (
        prop::sample::select(vec![("char", 1u64), ("short", 2), ("float", 4), ("double", 8), ("float4", 16)]),
        -3i64..40,
        -3i64..70,
        0i64..300,
        0i64..200,
        1i64..3000,
        (1u32..70, 1u32..5),
        1u32..6,
        0i64..16,
    )
        .prop_map(|(ty, cx, cy, cb, c0, n, block, grid, offset)| Case {
            ty,
            cx,
            cy,
            cb,
            c0,
            n,
            block,
            grid,
            offset,
        })
}

/// Requests and sectors computed directly from the counting rules.
fn direct(c: &Case) -> (u64, u64) {
    let (bx, by) = (c.block.0 as i64, c.block.1 as i64);
    let threads = bx * by;
    let width = c.ty.1 as i64;
    let (mut requests, mut sectors) = (0u64, 0u64);
    for b in 0..c.grid as i64 {
        for w in 0..(threads + 31) / 32 {
            let mut set = BTreeSet::new();
            for lin in w * 32..((w + 1) * 32).min(threads) {
                let (tx, ty) = (lin % bx, lin / bx);
                let idx = c.cx * tx + c.cy * ty + c.cb * b + c.c0;
                // The kernel's guard: 0 <= idx < n.
                if idx < 0 || idx >= c.n {
                    continue;
                }
                let addr = c.offset + idx * width;
                for s in addr.div_euclid(32)..=(addr + width - 1).div_euclid(32) {
                    set.insert(s);
                }
            }
            if !set.is_empty() {
                requests += 1;
                sectors += set.len() as u64;
            }
        }
    }
    (requests, sectors)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]
    #[test]
    fn engine_equals_direct_count(c in case()) {
        let src = format!(
            "__global__ void k(const {t}* a, {t}* o, int n) {{
                int idx = {cx} * (int)threadIdx.x + {cy} * (int)threadIdx.y + {cb} * (int)blockIdx.x + {c0};
                if (idx >= 0 && idx < n) {{ o[0] = a[idx]; }}
            }}",
            t = c.ty.0, cx = c.cx, cy = c.cy, cb = c.cb, c0 = c.c0
        );
        let opts = AnalyzeOptions {
            grid: c.grid.to_string(),
            block: format!("{},{}", c.block.0, c.block.1),
            args: vec![("n".into(), c.n.to_string())],
            offsets: vec![("a".into(), c.offset * c.ty.1 as i64 % 256)],
            ..Default::default()
        };
        let mut c2 = c.clone();
        c2.offset = c.offset * c.ty.1 as i64 % 256;
        let sheet = analyze_source("p.cu", &src, &opts).map_err(|f| TestCaseError::fail(f.one_line()))?.sheet;
        let row = sheet.instructions.iter().find(|r| r.op == "load").expect("the load");
        prop_assert_eq!((row.requests, row.sectors), direct(&c2));
    }
}
