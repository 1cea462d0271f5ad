//! What a block's threads store in shared memory, for the loads whose value decides a branch, a
//! loop or an address ([`crate::ir::provenance::shared_values_steer`]): `if (tid == 0) n =
//! count(...); __syncthreads(); for (i = tid; i < n; i += blockDim.x)`.
//!
//! The engine runs a block's warps one after another, each to its end, so a value that a later
//! warp stores before a `__syncthreads()` is not there yet when an earlier warp reads it after
//! the barrier. The block therefore runs first without counting, again and again, each run
//! reading the other warps' stores from the run before, until what it stores settles (a fixed
//! point: in a block without races, the stores of barrier phase `p` are right from run `p + 1`
//! on). The counting run then reads the settled stores.
//!
//! A load reads the latest store to its address that it is ordered after: its own warp's latest
//! (the warp runs in step), or another warp's from an earlier barrier phase. Two stores it cannot
//! order (two warps in the same phase, or another warp in the load's own phase) give data nobody
//! knows unless they store the same value, as do an atomic, a store of another width or at an
//! overlapping address, and memory nobody stored.

use super::values::{same, K, V};
use std::collections::HashMap;

/// Runs of a block before its stores are taken as not settling (a long chain of barrier phases
/// each feeding the next): the block is then counted with shared values unknown, as without
/// this model.
pub(super) const MAX_RUNS: usize = 6;

const UNKNOWN: V = V { k: K::Unknown, data: true };

/// One warp's last store to an address in one barrier phase.
#[derive(Clone, Copy, Debug)]
struct Write {
    warp: u32,
    phase: u32,
    v: V,
}

/// The stores of one run to one address.
#[derive(Clone, Debug, Default)]
struct Cell {
    width: u32,
    /// Stores of other widths or at overlapping addresses: a load here reads nobody knows what.
    mixed: bool,
    writes: Vec<Write>,
}

/// The stores of one run of a block, by shared-memory address.
#[derive(Clone, Debug, Default)]
pub(super) struct Log {
    cells: HashMap<i64, Cell>,
    /// A store or atomic at an address the analysis does not know: any load may read it.
    poisoned: bool,
    /// The widest store so far: a store overlaps only cells starting less than this before it.
    widest: u32,
}

impl Log {
    /// Whether the two runs stored the same values (floats by their bits).
    fn settled(&self, other: &Log) -> bool {
        self.poisoned == other.poisoned
            && self.cells.len() == other.cells.len()
            && self.cells.iter().all(|(a, c)| {
                other.cells.get(a).is_some_and(|d| {
                    c.width == d.width
                        && c.mixed == d.mixed
                        && c.writes.len() == d.writes.len()
                        && c.writes
                            .iter()
                            .all(|w| d.writes.iter().any(|x| x.warp == w.warp && x.phase == w.phase && same(x.v, w.v)))
                })
            })
    }

    /// Whether any store of the run stored a value the analysis knows: if none did, running the
    /// block again learns nothing.
    fn knows_any(&self) -> bool {
        !self.poisoned && self.cells.values().any(|c| !c.mixed && c.writes.iter().any(|w| !matches!(w.v.k, K::Unknown)))
    }

    fn store(&mut self, addr: i64, width: u32, warp: u32, phase: u32, v: V) {
        if !self.cells.contains_key(&addr) {
            // A new address: any store overlapping it at another address mixes both.
            self.widest = self.widest.max(width);
            let mut overlaps = false;
            for a in addr - self.widest as i64 + 1..addr + width as i64 {
                if let Some(c) = self.cells.get_mut(&a).filter(|c| a + c.width as i64 > addr) {
                    c.mixed = true;
                    overlaps = true;
                }
            }
            self.cells.insert(addr, Cell { width, mixed: overlaps, writes: Vec::new() });
        }
        let c = self.cells.get_mut(&addr).expect("inserted above");
        if c.width != width {
            c.mixed = true;
        }
        match c.writes.iter_mut().find(|w| w.warp == warp && w.phase == phase) {
            Some(w) => w.v = v,
            None => c.writes.push(Write { warp, phase, v }),
        }
    }
}

/// The shared-memory values of the block being run.
pub(super) struct SharedValues {
    /// The other warps' stores: those of the run before (settled, in the counting run).
    before: Log,
    /// This run's stores.
    now: Log,
    warp: u32,
    phase: u32,
}

impl SharedValues {
    pub(super) fn new(before: Log) -> Self {
        SharedValues { before, now: Log::default(), warp: 0, phase: 0 }
    }

    /// The block's warp `w` starts, before its first barrier.
    pub(super) fn begin_warp(&mut self, w: u32) {
        self.warp = w;
        self.phase = 0;
    }

    /// The warp passed a `__syncthreads()`.
    pub(super) fn barrier(&mut self) {
        self.phase += 1;
    }

    /// One store instruction: each lane's address and value. Lanes that store different values
    /// at one address leave it unknown (which lane wins is not defined).
    pub(super) fn store(&mut self, width: u32, lanes: &[(i64, V)]) {
        for (i, &(a, v)) in lanes.iter().enumerate() {
            if lanes[..i].iter().any(|(b, _)| *b == a) {
                continue;
            }
            let agree = lanes[i + 1..].iter().filter(|(b, _)| *b == a).all(|(_, x)| same(*x, v));
            self.now.store(a, width, self.warp, self.phase, if agree { v } else { UNKNOWN });
        }
    }

    /// A store or atomic at an address the analysis does not know: every load of this run and
    /// the next reads data nobody knows.
    pub(super) fn store_somewhere(&mut self) {
        self.now.poisoned = true;
    }

    /// The value a load of `width` bytes at `addr` reads.
    pub(super) fn load(&self, addr: i64, width: u32) -> V {
        if self.now.poisoned || self.before.poisoned {
            return UNKNOWN;
        }
        let fits = |c: &Cell| !c.mixed && c.width == width;
        // This warp's own latest store (its lanes run in step).
        let own = match self.now.cells.get(&addr) {
            Some(c) if !fits(c) => return UNKNOWN,
            Some(c) => c.writes.iter().filter(|w| w.warp == self.warp).max_by_key(|w| w.phase).copied(),
            None => None,
        };
        // The other warps' latest stores ordered before the load by a barrier.
        let mut other: Option<(u32, V)> = None;
        if let Some(c) = self.before.cells.get(&addr) {
            if !fits(c) {
                return UNKNOWN;
            }
            for w in c.writes.iter().filter(|w| w.warp != self.warp) {
                if w.phase >= self.phase {
                    // A store in the load's own phase is a race; a later one is not seen.
                    if w.phase == self.phase {
                        return UNKNOWN;
                    }
                    continue;
                }
                other = match other {
                    Some((p, v)) if p > w.phase => Some((p, v)),
                    Some((p, v)) if p == w.phase => Some((p, if same(v, w.v) { v } else { UNKNOWN })),
                    _ => Some((w.phase, w.v)),
                };
            }
        }
        match (own, other) {
            (Some(o), Some((p, v))) if o.phase == p => {
                if same(o.v, v) {
                    v
                } else {
                    UNKNOWN
                }
            }
            (Some(o), Some((p, _))) if o.phase > p => o.v,
            (Some(o), None) => o.v,
            (_, Some((_, v))) => v,
            (None, None) => UNKNOWN,
        }
    }

    /// This run's stores, for the next run to read.
    pub(super) fn into_log(self) -> Log {
        self.now
    }

    /// Whether this run stored what the run before did.
    pub(super) fn settled(&self) -> bool {
        self.now.settled(&self.before)
    }

    pub(super) fn knows_any(&self) -> bool {
        self.now.knows_any()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i128) -> V {
        V { k: K::Int(i), data: false }
    }

    /// Warp 1 stores 7 before the barrier; warp 0 reads it after the barrier only once the run
    /// before saw the store.
    #[test]
    fn another_warps_store_is_read_after_the_barrier() {
        let mut first = SharedValues::new(Log::default());
        first.begin_warp(0);
        first.barrier();
        assert!(matches!(first.load(0, 4).k, K::Unknown));
        first.begin_warp(1);
        first.store(4, &[(0, int(7))]);
        let mut second = SharedValues::new(first.into_log());
        second.begin_warp(0);
        assert!(matches!(second.load(0, 4).k, K::Unknown), "before the barrier: a race");
        second.barrier();
        assert_eq!(second.load(0, 4).k, K::Int(7));
    }

    /// Two lanes storing different values at one address leave it unknown; the warp's own
    /// later store wins over another warp's earlier one.
    #[test]
    fn conflicting_lanes_and_own_stores() {
        let mut s = SharedValues::new(Log::default());
        s.begin_warp(0);
        s.store(4, &[(0, int(1)), (0, int(2)), (4, int(3))]);
        assert!(matches!(s.load(0, 4).k, K::Unknown));
        assert_eq!(s.load(4, 4).k, K::Int(3));
        assert!(matches!(s.load(4, 8).k, K::Unknown), "another width");
        s.store(4, &[(6, int(5))]);
        assert!(matches!(s.load(4, 4).k, K::Unknown), "an overlapping store");
    }
}
