//! The counting rule: the one place where a warp-level execution becomes sectors (global
//! memory) or wavefronts (shared memory), and where the engines' sector stream leaves the
//! engine (through [`SectorSink`]).
//!
//! Both engines call these functions: the reference engine once per execution, the symbolic
//! engine once per residue of a box of executions (the counts are invariant under a shift by
//! the period). `explain` calls them on the lanes it shows. Nothing else counts a sector.

use crate::ir::{AccessKind, Base, CacheOp, Space};

/// Bytes in a sector.
pub const SECTOR: u64 = 32;

/// Distinct 32-byte sectors covering `[a, a + width)` for each address; `buf` is scratch and
/// ends up holding them in increasing order.
pub fn sectors_of(addrs: &[i64], width: u32, buf: &mut Vec<i64>) -> u64 {
    buf.clear();
    // Addresses in increasing order (the usual access) cover their sectors in increasing order
    // too, so the new ones are those past the last one kept, and no sort is needed.
    let ordered = addrs.windows(2).all(|w| w[0] <= w[1]);
    for &a in addrs {
        let first = a.div_euclid(SECTOR as i64);
        let last = (a + width as i64 - 1).div_euclid(SECTOR as i64);
        let from = match buf.last() {
            Some(&s) if ordered => first.max(s + 1),
            _ => first,
        };
        buf.extend(from..=last);
    }
    if !ordered {
        buf.sort_unstable();
        buf.dedup();
    }
    buf.len() as u64
}

/// Sectors one warp-level atomic costs. Lanes on the same address are served one after the
/// other (measured on the H200: 32 lanes adding to one int cost 32 sectors, 32 consecutive ints
/// 4), so the lanes are taken in passes, the `k`-th pass holding the `k`-th lane of every
/// address, and each pass costs its distinct sectors.
pub fn atomic_sectors(addrs: &[i64], width: u32, buf: &mut Vec<i64>) -> u64 {
    let mut sorted = addrs.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).all(|w| w[0] != w[1]) {
        return sectors_of(&sorted, width, buf);
    }
    let mut passes: Vec<Vec<i64>> = Vec::new();
    for run in sorted.chunk_by(|a, b| a == b) {
        for (k, &a) in run.iter().enumerate() {
            if passes.len() <= k {
                passes.push(Vec::new());
            }
            passes[k].push(a);
        }
    }
    passes.iter().map(|p| sectors_of(p, width, buf)).sum()
}

/// One warp-level execution of a global access: the sectors counted, and the fewest and most
/// the unknown lanes allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GlobalSectors {
    pub sectors: u64,
    pub min: u64,
    pub max: u64,
}

/// The rule for one execution whose known lanes cover `known` distinct sectors and whose
/// `n_unknown` lanes read data-dependent addresses of `width` bytes.
pub fn global_sectors(known: u64, n_unknown: u64, width: u32) -> GlobalSectors {
    if n_unknown == 0 {
        return GlobalSectors { sectors: known, min: known, max: known };
    }
    let per_lane = (width as u64).div_ceil(SECTOR);
    // Default assumption (DESIGN.md): every unknown lane touches its own sectors. They may also
    // all fall in sectors already counted, or each in its own (naturally aligned elements never
    // straddle a sector).
    GlobalSectors { sectors: known + n_unknown * per_lane, min: known.max(per_lane), max: known + n_unknown * per_lane }
}

/// The fewest sectors that carry the bytes the lanes ask for: lanes reading the same element
/// share its bytes; `addrs` are the known lanes' addresses, `n_unknown` the other lanes.
pub fn ideal_sectors(addrs: &[i64], n_unknown: u64, width: u32) -> u64 {
    let mut distinct = [0i64; 32];
    let unique = if addrs.len() <= 32 {
        let d = &mut distinct[..addrs.len()];
        d.copy_from_slice(addrs);
        d.sort_unstable();
        d.windows(2).filter(|w| w[0] != w[1]).count() as u64 + u64::from(!addrs.is_empty())
    } else {
        let mut d = addrs.to_vec();
        d.sort_unstable();
        d.dedup();
        d.len() as u64
    };
    ((unique + n_unknown) * width as u64).div_ceil(SECTOR)
}

/// Whether a store through `b` may change memory read earlier through `a`; `restrict` says, by
/// parameter, which pointers are `__restrict__`.
pub fn may_alias(a: Base, b: Base, restrict: &[bool]) -> bool {
    let restricted = |x: Base| match x {
        Base::Param(p) => restrict[p.0 as usize],
        Base::Shared(_) => true,
    };
    match (a, b) {
        (Base::Shared(x), Base::Shared(y)) => x == y,
        (Base::Shared(_), _) | (_, Base::Shared(_)) => false,
        (x, y) if x == y => true,
        (x, y) => !(restricted(x) || restricted(y)),
    }
}

/// Where the reference engine sends the global sectors it counts, in execution order: the
/// cache model implements it ([`crate::cache::CacheModel`]); the engine does not know it.
pub trait SectorSink {
    /// Block `block` (linear, x fastest) starts.
    fn begin_block(&mut self, block: u64);
    /// The block's next warp starts.
    fn begin_warp(&mut self);
    /// Instruction `op` touched `sectors` (sorted, distinct) at the known lanes' `addrs`.
    fn access(&mut self, op: usize, kind: AccessKind, cache: CacheOp, sectors: &[i64], addrs: &[i64], width: u32);
    /// Instruction `op` touched `n` sectors at addresses the analysis does not know.
    fn unknown(&mut self, op: usize, kind: AccessKind, n: u64);
    /// The fraction of long loops' iterations the sink wants (iteration windows, issue 26):
    /// below 1 the reference engine runs such loops in windows and jumps over the rest
    /// ([`SectorSink::skip`]). The counting engines' sinks want every iteration.
    fn loop_fraction(&self) -> f64 {
        1.0
    }
    /// Global accesses the current warp has made so far (its position in its own stream).
    fn position(&self) -> u64 {
        0
    }
    /// The current warp jumped over `iterations` loop iterations, about `accesses` global
    /// accesses: its later accesses come that much later in its stream.
    fn skip(&mut self, _accesses: u64, _iterations: u64) {}
    /// Accesses from now on only warm the caches (`true`) or are counted again (`false`).
    fn warm(&mut self, _on: bool) {}
    /// Whether the engine feeding this sink keeps its shared-memory counts. The cache model is
    /// fed by a run whose counts are dropped (the sheet's come from the counting engine) and
    /// needs only the global sectors, so that run skips the wavefronts, a sixth of its time on a
    /// tiled product.
    fn counts_shared(&self) -> bool {
        true
    }
}

/// One warp-level execution of a memory instruction: the known lanes' addresses in lane order,
/// how many active lanes had an unknown address, the active lanes, whether the addresses came
/// from filled data, and the buffer they fall in.
pub struct Execution<'a> {
    pub addrs: &'a [i64],
    pub n_unknown: u64,
    pub lanes_active: u64,
    pub data: bool,
    pub base: Option<Base>,
    /// Bytes per lane: the operation's width, or a merged load's ([`crate::ir::unroll::Chain`]).
    pub width: u32,
}

/// Adds one execution of memory instruction `id` (`op`) to its counts `s`, and streams its
/// global sectors into `boundary`: the rule every engine applies per execution.
pub fn record(
    s: &mut super::OpStats,
    id: usize,
    op: &crate::ir::MemOp,
    e: &Execution,
    scratch: &mut Vec<i64>,
    boundary: &mut dyn SectorSink,
) {
    let Execution { addrs, n_unknown, lanes_active, data, base, width } = *e;
    s.executions += 1;
    s.lanes += lanes_active;
    if base.is_some() {
        s.base = base;
    }
    if data {
        s.data_executions += 1;
    }
    match op.space {
        Space::Global => {
            let known = if super::compiler_model::performed_per_lane(op) {
                atomic_sectors(addrs, width, scratch)
            } else {
                sectors_of(addrs, width, scratch)
            };
            s.ideal_sectors += ideal_sectors(addrs, n_unknown, width);
            let g = global_sectors(known, n_unknown, width);
            s.sectors += g.sectors;
            s.sectors_min += g.min;
            s.sectors_max += g.max;
            // Atomics are performed in L2 (the cache model keeps them out of the L1 and of
            // the L2 read and write counters, but their lines must be in L2): their distinct
            // sectors travel. The known lanes' sectors travel; the unknown ones of loads and
            // stores are counted apart (those of atomics, histogram bins, are not fed).
            let feed = !op.kind.is_atomic();
            if op.kind.is_atomic() {
                sectors_of(addrs, width, scratch);
            }
            boundary.access(id, op.kind, op.cache, &*scratch, addrs, width);
            if n_unknown > 0 {
                s.unknown_executions += 1;
                if feed {
                    boundary.unknown(id, op.kind, g.sectors - known);
                }
            }
        }
        Space::Shared if !boundary.counts_shared() => {}
        Space::Shared => {
            if n_unknown > 0 {
                // One instruction per warp whatever the addresses; its wavefronts depend on
                // them. Counted as the known lanes show them, and no fewer than the active
                // lanes need reading consecutive elements (no bank conflict): stated on the
                // row (a shared histogram's ATOMS, a load at an index read from memory).
                s.unknown_executions += 1;
                let w = wavefronts(addrs, width);
                let consecutive: Vec<i64> = (0..lanes_active as i64).map(|i| i * width as i64).collect();
                let least = wavefronts(&consecutive, width).wavefronts.max(1);
                s.wavefronts += w.wavefronts.max(least);
                s.ideal_wavefronts += w.ideal.max(least);
                return;
            }
            let w = wavefronts(addrs, width);
            s.wavefronts += w.wavefronts;
            s.ideal_wavefronts += w.ideal;
        }
        // The texture pipeline: its executions are counted above; its sectors depend on the
        // texture's binding and layout (host code), and none reach the global counters or the
        // sector stream (measured on the H200: 0 on every LSU global counter).
        Space::Texture | Space::Surface => {}
    }
}

/// The lanes of the active lanes `m` whose addresses instruction `op` uses. `ldmatrix` and
/// `stmatrix` of `n` matrices take the row addresses of matrix `k` from lanes `8k..8k+7` and
/// ignore the other lanes' (measured on the H200: `LDSM.16.M88.x` for one warp costs the
/// wavefronts of its `n` quarter-warps of 16-byte rows); with a 16-byte width, [`wavefronts`]'
/// phases of eight lanes are then exactly the matrices. Every other access uses all of `m`.
pub fn address_lanes(op: &crate::ir::MemOp, m: u32) -> u32 {
    match op.matrix {
        0 => m,
        n => m & (u32::MAX >> (32 - 8 * u32::from(n.min(4)))),
    }
}

/// A sink that drops the stream (engines run for their counts alone).
pub struct NoSink;

impl SectorSink for NoSink {
    fn begin_block(&mut self, _: u64) {}
    fn begin_warp(&mut self) {}
    fn access(&mut self, _: usize, _: AccessKind, _: CacheOp, _: &[i64], _: &[i64], _: u32) {}
    fn unknown(&mut self, _: usize, _: AccessKind, _: u64) {}
}

// Shared-memory wavefronts: 32 banks of 4 bytes (Hopper and earlier).

/// Wavefronts one shared-memory instruction needs, and the fewest it could need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wavefronts {
    pub wavefronts: u64,
    pub ideal: u64,
}

const BANKS: i64 = 32;
const WORD: i64 = 4;

/// `addrs` are the active lanes' byte addresses in lane order.
///
/// Model: a request is split into phases of 128 bytes worth of lanes (all 32 lanes for accesses
/// of up to 4 bytes, 16 for 8 bytes, 8 for 16 bytes). In a phase each bank serves one 4-byte word
/// per wavefront; lanes reading the same word share it (broadcast). A phase needs as many
/// wavefronts as its busiest bank has distinct words.
///
/// Two neighbouring phases of 8- or 16-byte accesses (the two halves of the warp; the two
/// quarters of one half) are served together when their lanes pair up, every lane reading what
/// lane `l ^ 1` reads or every lane what lane `l ^ 2` reads: they then take the wavefronts of
/// their words together. A 16-byte load of one address in every lane is 2 wavefronts,
/// `s[lane >> 1]` and `s[lane & 1]` 2, `s[lane & 3]` and `0 0 0 1` in every four lanes 4 (24
/// patterns of each width measured on Hopper, `validate/probes/wide`).
pub fn wavefronts(addrs: &[i64], width: u32) -> Wavefronts {
    if addrs.is_empty() {
        return Wavefronts { wavefronts: 0, ideal: 0 };
    }
    let width = width.max(1) as i64;
    let per_phase = (128 / width.max(WORD)).max(1) as usize;
    let mut words: Vec<i64> = Vec::with_capacity(128);
    let each: Vec<u64> = addrs.chunks(per_phase).map(|p| phase_wavefronts(p, width, &mut words)).collect();
    let mut total = 0u64;
    let mut i = 0;
    while i < each.len() {
        if matches!(width, 8 | 16) && i % 2 == 0 && i + 1 < each.len() {
            let both = &addrs[i * per_phase..((i + 2) * per_phase).min(addrs.len())];
            if lanes_pair_up(both) {
                total += phase_wavefronts(both, width, &mut words).min(each[i] + each[i + 1]);
                i += 2;
                continue;
            }
        }
        total += each[i];
        i += 1;
    }
    let bytes = addrs.len() as u64 * width as u64;
    Wavefronts { wavefronts: total, ideal: bytes.div_ceil(128).max(1) }
}

/// Wavefronts of one phase: its busiest bank's distinct words (at least one). `words` is scratch.
fn phase_wavefronts(phase: &[i64], width: i64, words: &mut Vec<i64>) -> u64 {
    words.clear();
    for &a in phase {
        let first = a.div_euclid(WORD);
        let last = (a + width - 1).div_euclid(WORD);
        words.extend(first..=last);
    }
    words.sort_unstable();
    words.dedup();
    let mut per_bank = [0u64; BANKS as usize];
    for &w in words.iter() {
        per_bank[w.rem_euclid(BANKS) as usize] += 1;
    }
    per_bank.iter().copied().max().unwrap_or(0).max(1)
}

/// Whether every lane reads what its neighbour one or two lanes over reads (lane `l` and lane
/// `l ^ 1` throughout, or `l` and `l ^ 2`): then the hardware serves the two phases together.
fn lanes_pair_up(lanes: &[i64]) -> bool {
    [1usize, 2].iter().any(|&k| (0..lanes.len()).all(|l| lanes.get(l ^ k).is_none_or(|&o| o == lanes[l])))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lanes(f: impl Fn(i64) -> i64) -> Vec<i64> {
        (0..32).map(f).collect()
    }

    #[test]
    fn row_of_floats_is_one_wavefront() {
        assert_eq!(wavefronts(&lanes(|l| 4 * l), 4).wavefronts, 1);
    }

    #[test]
    fn column_of_unpadded_tile_conflicts_32_ways() {
        // tile[32][32] read by column: every lane in bank 0.
        assert_eq!(wavefronts(&lanes(|l| 4 * 32 * l), 4).wavefronts, 32);
    }

    #[test]
    fn column_of_padded_tile_is_conflict_free() {
        // tile[32][33]: lane l at word 33 l, bank l.
        assert_eq!(wavefronts(&lanes(|l| 4 * 33 * l), 4).wavefronts, 1);
    }

    #[test]
    fn broadcast_is_one_wavefront() {
        assert_eq!(wavefronts(&lanes(|_| 64), 4).wavefronts, 1);
    }

    #[test]
    fn stride_two_is_two_way() {
        assert_eq!(wavefronts(&lanes(|l| 8 * l), 4).wavefronts, 2);
    }

    /// Wavefronts of one 16-byte and one 8-byte load per pattern of elements across the lanes,
    /// as measured on an H100 (`validate/probes/wide`, `validate/results/wide/wide.csv`).
    #[test]
    fn wide_loads_share_wavefronts_as_measured() {
        type Case = (&'static str, fn(i64) -> i64, u64, u64);
        let cases: &[Case] = &[
            ("one address", |_| 0, 2, 1),
            ("one a half", |l| l >> 4, 2, 1),
            ("one a quarter", |l| l >> 3, 2, 1),
            ("two alternating", |l| l & 1, 2, 1),
            ("four cycling", |l| l & 3, 4, 2),
            ("eight cycling", |l| l & 7, 4, 2),
            ("quarters A B A B", |l| (l >> 3) & 1, 2, 1),
            ("every lane its own", |l| l, 4, 2),
            ("four lanes each", |l| l >> 2, 2, 1),
            ("sixteen cycling", |l| l & 15, 4, 2),
            ("eight in one bank group", |l| 8 * (l & 7), 32, 8),
            ("two lanes each", |l| l >> 1, 2, 1),
            ("every lane, one bank group", |l| 8 * l, 32, 16),
            // Second round: which phases pair.
            ("0 0 1 2 in each four", |l| if l & 3 == 0 { 0 } else { (l & 3) - 1 }, 4, 2),
            ("quarters in the same banks", |l| ((l >> 1) & 3) | (((l >> 3) & 1) << 3), 4, 1),
            ("two in one bank group, alternating", |l| 8 * (l & 1), 4, 1),
            ("0 0 1 1", |l| (l >> 1) & 1, 2, 1),
            ("alternating, a pair a quarter", |l| (l & 1) + 2 * (l >> 3), 2, 1),
            ("alternating, two pairs a quarter", |l| (l & 1) + 2 * ((l >> 2) & 1), 2, 1),
            ("0 0 0 1", |l| i64::from(l & 3 == 3), 4, 2),
            ("alternating, four bank groups", |l| (l & 1) + 8 * ((l >> 2) & 1) + 16 * ((l >> 3) & 1), 8, 2),
            ("one a half, one bank group", |l| 8 * (l >> 4), 2, 1),
            ("one a quarter, same banks", |l| 8 * ((l >> 3) & 1), 4, 1),
            ("one a quarter, other banks", |l| 4 * ((l >> 3) & 1), 2, 1),
        ];
        for &(what, elem, wide, half) in cases {
            assert_eq!(wavefronts(&lanes(|l| 16 * elem(l)), 16).wavefronts, wide, "16 bytes, {what}");
            assert_eq!(wavefronts(&lanes(|l| 8 * elem(l)), 8).wavefronts, half, "8 bytes, {what}");
        }
    }

    #[test]
    fn float4_copy_takes_four() {
        let w = wavefronts(&lanes(|l| 16 * l), 16);
        assert_eq!((w.wavefronts, w.ideal), (4, 4));
    }
}
