//! From the engine's trace to the sheet: per-instruction rows, totals, footprints, the
//! boundary model and every assumption in force.

use super::*;
use crate::engine::{OpStats, Trace};
use crate::ir::{AccessKind, Base, CacheOp, Kernel, Space, Ty};
use crate::launch::Setup;
use crate::source::SourceFiles;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Hashes page numbers for [`SectorSet`]: one multiply and a rotate (FxHash's scheme, as in
/// `rustc-hash`). The keys are plain integers, not attacker-chosen, so the default SipHash buys
/// nothing here and cost much of a large launch's time.
#[derive(Default, Clone, Copy)]
struct PageHasher(u64);

impl Hasher for PageHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = self.0.wrapping_add(v).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits: bring the well-mixed high bits there.
        self.0.rotate_left(26)
    }
}

/// Numbers per page of a [`SectorSet`] (one bit each).
const PAGE: i64 = 256;

/// A set of sector (or granule) numbers: a bitmap per page of 256 consecutive numbers. A
/// kernel's sectors cluster, so consecutive inserts land in one page that is already in cache,
/// where a hash set of sectors would miss the cache on nearly every insert of a large launch.
#[derive(Default)]
struct SectorSet {
    pages: HashMap<i64, [u64; (PAGE / 64) as usize], BuildHasherDefault<PageHasher>>,
    len: usize,
}

impl SectorSet {
    /// Adds `s`; whether it was new.
    fn insert(&mut self, s: i64) -> bool {
        let page = self.pages.entry(s.div_euclid(PAGE)).or_default();
        let bit = s.rem_euclid(PAGE);
        let (word, mask) = (&mut page[(bit / 64) as usize], 1u64 << (bit % 64));
        let new = *word & mask == 0;
        *word |= mask;
        self.len += new as usize;
        new
    }
    fn len(&self) -> usize {
        self.len
    }
    fn clear(&mut self) {
        self.pages.clear();
        self.len = 0;
    }
}

/// The first cache model: each block's loads hit in an unbounded L1 when the block already
/// loaded the sector; every other sector goes to L2; DRAM sees each 64-byte granule once.
#[derive(Default)]
pub struct BoundaryCounter {
    block_sectors: SectorSet,
    read_sectors: SectorSet,
    read_granules: SectorSet,
    written_sectors: SectorSet,
    pub l1_hits: u64,
    pub load_sectors: u64,
    pub store_sectors: u64,
    pub unknown_loads: u64,
    pub unknown_stores: u64,
}

impl BoundaryCounter {
    pub fn begin_block(&mut self, _block: u64) {
        self.block_sectors.clear();
    }
    /// One global access's distinct sectors.
    pub fn access(&mut self, _block: u64, kind: AccessKind, cache: CacheOp, sectors: &[i64]) {
        match kind {
            AccessKind::Load => {
                self.load_sectors += sectors.len() as u64;
                let allocates = !matches!(cache, CacheOp::Cg | CacheOp::Cv);
                for &s in sectors {
                    if allocates && !self.block_sectors.insert(s) {
                        self.l1_hits += 1;
                    }
                    self.read_sectors.insert(s);
                    self.read_granules.insert(s >> 1);
                }
            }
            AccessKind::Store => {
                self.store_sectors += sectors.len() as u64;
                for &s in sectors {
                    self.written_sectors.insert(s);
                }
            }
        }
    }
    pub fn unknown(&mut self, kind: AccessKind, sectors: u64) {
        match kind {
            AccessKind::Load => self.unknown_loads += sectors,
            AccessKind::Store => self.unknown_stores += sectors,
        }
    }
}

fn row_of(kernel: &Kernel, i: usize, st: &OpStats, trace: &Trace, setup: &Setup) -> Row {
    let op = &kernel.mem_ops[i];
    let mut assumptions = Vec::new();
    if st.unknown_executions > 0 {
        assumptions.push(format!(
            "address depends on data read from memory in {} of {} executions: assumed every such lane touches its own sector (bounds {}..{})",
            st.unknown_executions, st.executions, st.sectors_min, st.sectors_max
        ));
    } else if st.data_executions > 0 {
        let fills: Vec<String> = trace
            .used_fills
            .iter()
            .filter_map(|p| setup.fills[p.0 as usize].as_ref().map(|(f, _)| format!("{} = {f}", kernel.param(*p).name)))
            .collect();
        assumptions.push(format!("address computed from array contents given by the launch ({})", fills.join(", ")));
    }
    if st.elided_lanes > 0 {
        assumptions.push(format!(
            "{} lane-level loads removed: the thread already holds this address's value (compiler load elimination)",
            st.elided_lanes
        ));
    }
    if st.varying_trip {
        assumptions.push(
            "inside a loop whose trip count differs between lanes of a warp: nvcc may unroll it (by 4, with a remainder loop), which splits executions differently; counted as the source loop".into(),
        );
    }
    let shared = op.space == Space::Shared;
    let exact = st.unknown_executions == 0 && !st.varying_trip;
    Row {
        line: op.span.line,
        column: op.span.column,
        text: op.text.clone(),
        space: if shared { "shared" } else { "global" },
        op: match op.kind {
            AccessKind::Load => "load",
            AccessKind::Store => "store",
        },
        width: op.width,
        cache_op: op.cache.name(),
        executions: st.executions,
        thread_executions: st.lanes,
        requests: st.executions,
        sectors: if shared { 0 } else { st.sectors },
        ideal_sectors: if shared { 0 } else { st.ideal_sectors },
        logical_bytes: st.lanes * op.width as u64,
        wavefronts: shared.then_some(st.wavefronts),
        ideal_wavefronts: shared.then_some(st.ideal_wavefronts),
        bank_conflicts: shared.then_some(st.wavefronts.saturating_sub(st.ideal_wavefronts)),
        sectors_min: if shared { 0 } else { st.sectors_min },
        sectors_max: if shared { 0 } else { st.sectors_max },
        elided_loads: st.elided_lanes,
        exact,
        assumptions,
    }
}

pub fn build(kernel: &Kernel, setup: &Setup, trace: Trace, files: &SourceFiles) -> Sheet {
    let mut rows: Vec<Row> = trace.ops.iter().enumerate().map(|(i, st)| row_of(kernel, i, st, &trace, setup)).collect();
    // Source order.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (kernel.mem_ops[i].span.file, kernel.mem_ops[i].span.line, kernel.mem_ops[i].span.column));
    rows = order.iter().map(|&i| rows[i].clone()).collect();

    let mut totals = Totals::default();
    for r in &rows {
        match (r.space, r.op) {
            ("global", op) => {
                let t = if op == "load" { &mut totals.global_load } else { &mut totals.global_store };
                t.requests += r.requests;
                t.sectors += r.sectors;
                t.ideal_sectors += r.ideal_sectors;
                t.logical_bytes += r.logical_bytes;
            }
            (_, op) => {
                let t = if op == "load" { &mut totals.shared_load } else { &mut totals.shared_store };
                t.requests += r.requests;
                t.wavefronts += r.wavefronts.unwrap_or(0);
                t.ideal_wavefronts += r.ideal_wavefronts.unwrap_or(0);
                t.bank_conflicts += r.bank_conflicts.unwrap_or(0);
                t.logical_bytes += r.logical_bytes;
            }
        }
    }

    let mut assumptions = vec![
        "threads linearised x fastest; warp w of a block holds linear thread ids 32w..32w+31".to_string(),
        "pointer parameters start 256-byte aligned".to_string(),
    ];
    if setup.offsets.iter().any(|&o| o != 0) {
        let offs: Vec<String> = kernel
            .params
            .iter()
            .zip(&setup.offsets)
            .filter(|(_, o)| **o != 0)
            .map(|(p, o)| format!("{} at +{o} bytes", p.name))
            .collect();
        assumptions.push(format!("pointer offsets given by the launch: {}", offs.join(", ")));
    }
    if rows.iter().any(|r| r.elided_loads > 0) {
        assumptions.push(
            "loads of an address the thread already loaded or stored, with no possibly aliasing store between, are removed as nvcc does (pointers without __restrict__ may alias)".into(),
        );
    }
    for s in &trace.data_branches {
        assumptions.push(format!("branch at {}:{} depends on data read from memory: assumed taken", s.line, s.column));
    }
    for s in &trace.varying_loops {
        assumptions.push(format!(
            "loop at {}:{}: lanes of a warp run different trip counts; if nvcc unrolls it, executions split differently (not exact)",
            s.line, s.column
        ));
    }
    if !kernel.shared.is_empty() {
        assumptions.push(
            "shared arrays laid out in declaration order, each 16-byte aligned; 32 banks of 4 bytes, phases of 128 bytes".into(),
        );
    }
    assumptions.extend(kernel.notes.iter().cloned());

    let footprints = footprints(kernel, &trace);
    let boundaries = boundaries(&trace, &totals, &rows, l2_bytes(&setup.gpu));
    let file = files.files.first().map(|f| f.path.display().to_string()).unwrap_or_default();
    Sheet {
        kernel: kernel.name.clone(),
        file,
        engine: "reference",
        launch: LaunchInfo { grid: setup.grid, block: setup.block, args: setup.args.clone() },
        instructions: rows,
        totals,
        boundaries,
        footprints,
        assumptions,
        work: trace.work,
    }
}

fn footprints(kernel: &Kernel, trace: &Trace) -> Vec<Footprint> {
    let mut out = Vec::new();
    for (pi, p) in kernel.params.iter().enumerate() {
        let Ty::Ptr(t) = &p.ty else { continue };
        let mut fp = Footprint {
            param: p.name.clone(),
            elem_bytes: t.pointee.size(),
            min_byte: 0,
            end_byte: 0,
            loaded: false,
            stored: false,
            complete: true,
        };
        let mut any = false;
        for (i, st) in trace.ops.iter().enumerate() {
            if st.base != Some(Base::Param(crate::ir::ParamId(pi as u32))) {
                continue;
            }
            match kernel.mem_ops[i].kind {
                AccessKind::Load => fp.loaded = true,
                AccessKind::Store => fp.stored = true,
            }
            if st.unknown_executions > 0 {
                fp.complete = false;
            }
            if let (Some(lo), Some(hi)) = (st.min_off, st.end_off) {
                if !any {
                    fp.min_byte = lo;
                    fp.end_byte = hi;
                    any = true;
                } else {
                    fp.min_byte = fp.min_byte.min(lo);
                    fp.end_byte = fp.end_byte.max(hi);
                }
            }
        }
        out.push(fp);
    }
    out
}

/// L2 capacity of the GPU profiles the boundary model knows.
pub fn l2_bytes(gpu: &str) -> u64 {
    match gpu {
        "h100" => 52_428_800,
        "a100" => 41_943_040,
        // Read on the H200: 62,914,560 bytes.
        _ => 62_914_560,
    }
}

fn boundaries(trace: &Trace, totals: &Totals, rows: &[Row], l2: u64) -> Boundaries {
    let b = &trace.boundary;
    // Written data that fits in L2 beside what was read stays there (write-back) until after
    // the kernel: the H200 showed no DRAM writes for such launches.
    let written = b.written_sectors.len() as u64 + b.unknown_stores;
    let footprint = 32 * (b.read_sectors.len() as u64 + written);
    let dram_write = if footprint <= l2 { 0 } else { written };
    let l2_read = b.load_sectors - b.l1_hits + b.unknown_loads;
    let dram_read = 2 * b.read_granules.len() as u64 + b.unknown_loads;
    let mut assumptions = vec![
        "cold L1 and L2 at launch (Nsight Compute's default cache control)".to_string(),
        "L1: a block's global loads hit when the same block already loaded the sector (no capacity limit, no sharing between blocks of one SM); __ldcg/__ldcv loads bypass L1".to_string(),
        "stores write through to L2 without allocating in L1".to_string(),
        "L2 holds the whole launch's footprint; each DRAM read fetches a 64-byte granule (2 sectors)".to_string(),
        format!(
            "DRAM writes: none during the kernel when the launch's footprint ({footprint} bytes) fits in L2 ({l2} bytes), else every distinct sector written once"
        ),
    ];
    if b.unknown_loads + b.unknown_stores > 0 {
        assumptions.push("data-dependent addresses: each such sector counted as a miss at every level".into());
    }
    let _ = rows;
    Boundaries {
        model: "first-touch (unbounded caches)".into(),
        l1_hit_sectors: b.l1_hits,
        l2_read_sectors: l2_read,
        l2_write_sectors: totals.global_store.sectors,
        dram_read_sectors: dram_read,
        dram_write_sectors: dram_write,
        bounds: BoundaryBounds {
            dram_read_sectors: Bound { min: b.read_sectors.len() as u64, max: 2 * totals.global_load.sectors },
            dram_write_sectors: Bound { min: 0, max: written },
        },
        assumptions,
    }
}
