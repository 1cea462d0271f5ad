//! The compiler model: the values a thread holds in registers, as nvcc's LLVM keeps them (GVN's
//! reuse of loaded values), and the decisions about a memory operation that the compiler takes,
//! not the hardware. Both engines and `explain` call it; it is generic over the engines' offset
//! type (`i64` for the reference engine, an affine [`Form`](super::symbolic::Form) over a box for
//! the symbolic one).
//!
//! The model, per lane:
//! - A load of an address the lane holds is removed ([`HeldValues::holds`]); a load that is not
//!   removed, and a store, make the lane hold the value at that address under the access's
//!   key ([`HeldValues::remember`]). Only a plain (not `volatile`) load is ever removed
//!   ([`is_reuse_candidate`]).
//! - The key is the address expression's value number ([`super::address_keys`]), with the
//!   values of the completely unrolled loops' counters it reads ([`counter_values`]); an
//!   assignment to a variable of the address makes its keys stale ([`HeldValues::forget_keys`]).
//! - A store or an atomic drops what it may change ([`HeldValues::forget`], with
//!   [`may_alias`](super::may_alias)); a barrier drops everything but what was read through a `const __restrict__` pointer
//!   ([`crate::ir::Kernel::is_read_only`]);
//!   what each access does is [`effect`].
//! - A lane holds at most [`HELD_MAX`] values, the oldest dropped first. The symbolic engine
//!   gives up (the reference engine then runs) rather than drop one.
//! - An atomic the compiler did not aggregate per warp is performed lane by lane
//!   ([`performed_per_lane`]).

use super::WARP;
use crate::ir::{AccessKind, Base, LocalId, MemOp};

/// The most values one lane holds.
pub(crate) const HELD_MAX: usize = 64;

/// Values the lanes of a warp hold in registers: per address key into an object, the lanes
/// holding its value and at which offset.
///
/// Each lane has its own list of held values; the rows serve all lanes of the warp, so that an
/// access finds its row once instead of once per lane. Lane `l`'s list is the rows whose `lanes`
/// include `l`, in the order of their `since[l]`.
#[derive(Clone, Debug)]
pub(crate) struct HeldValues<Offset> {
    pub(crate) rows: Vec<HeldRow<Offset>>,
    /// Numbers the entries in the order they were added.
    clock: u64,
}

impl<Offset> Default for HeldValues<Offset> {
    fn default() -> Self {
        HeldValues { rows: Vec::new(), clock: 0 }
    }
}

/// The values held under one key into one object.
#[derive(Clone, Debug)]
pub(crate) struct HeldRow<Offset> {
    pub(crate) key: u32,
    pub(crate) base: Base,
    /// The lanes holding a value of this row.
    pub(crate) lanes: u32,
    /// Per lane, the offset into `base` of the value it holds.
    pub(crate) offset: [Offset; WARP],
    /// Per lane, when it began holding it (the order of its list).
    since: [u64; WARP],
}

/// The offset a lane holds for an address the analysis does not know but the compiler sees as
/// one value ([`crate::ir::vn::same_unknown_address`]): never a real offset.
pub(crate) const UNKNOWN_OFFSET: i64 = i64::MIN;

/// What an access does to the values its lanes hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HeldEffect {
    /// Nothing: a `volatile` load, or an asynchronous copy (its data lands in shared memory,
    /// read after a wait).
    None,
    /// The lanes that loaded hold what they read.
    HoldLoaded,
    /// The access writes memory: what it may change is no longer held; a store's lanes then
    /// hold what they wrote (an atomic's location is the other threads' business).
    Write { hold_written: bool },
}

/// Whether the compiler may remove this access because the lane holds its value.
pub(crate) fn is_reuse_candidate(op: &MemOp) -> bool {
    op.kind == AccessKind::Load && !op.volatile && op.space.has_address()
}

/// What an execution of `op` does to the held values. Texture and surface operations change
/// nothing: nvcc (CUDA 13, sm_90) kept a global load's value across a texture fetch, a surface
/// read and a surface write (one LDG for `in[i]` read before and after each).
pub(crate) fn effect(op: &MemOp) -> HeldEffect {
    if !op.space.has_address() {
        return HeldEffect::None;
    }
    match op.kind {
        AccessKind::Load if op.volatile => HeldEffect::None,
        AccessKind::Load => HeldEffect::HoldLoaded,
        AccessKind::AsyncCopy => HeldEffect::None,
        AccessKind::Store => HeldEffect::Write { hold_written: true },
        AccessKind::Red | AccessKind::Atom => HeldEffect::Write { hold_written: false },
    }
}

/// The loop a promoted store is written after: the innermost loop of the user's (an inlined
/// helper's body is a loop of the front end's, run once), as a depth counted from 1 over all
/// open loops; `None` outside every loop of the user's. `synthetic`: the open loops, outermost
/// first, whether each is the front end's.
pub(crate) fn promotion_depth(
    mut synthetic: impl DoubleEndedIterator<Item = bool> + ExactSizeIterator,
) -> Option<usize> {
    synthetic.rposition(|s| !s).map(|i| i + 1)
}

/// Whether the lanes' accesses are performed one by one (an atomic the compiler did not
/// aggregate per warp) rather than as one request over their sectors.
pub(crate) fn performed_per_lane(op: &MemOp) -> bool {
    op.kind.is_atomic() && !op.warp_aggregated
}

/// Why the completely unrolled loops' counters give no key of one unrolled copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CounterMismatch {
    /// The first lane's counter is not a known constant.
    NotConstant,
    /// The lanes' counters differ.
    Differs,
}

/// The values of `counters` (the completely unrolled loops' counters an address reads) shared
/// by lanes `m` (not empty), for the key of this unrolled copy; `value(counter, lane)` is a
/// lane's constant value of a counter, if it has one.
pub(crate) fn counter_values(
    counters: &[LocalId],
    m: u32,
    value: impl Fn(LocalId, usize) -> Option<i128>,
) -> Result<Vec<i128>, CounterMismatch> {
    let first = m.trailing_zeros() as usize;
    let mut values = Vec::with_capacity(counters.len());
    for &c in counters {
        let x = value(c, first).ok_or(CounterMismatch::NotConstant)?;
        if super::lanes(m).any(|l| value(c, l) != Some(x)) {
            return Err(CounterMismatch::Differs);
        }
        values.push(x);
    }
    Ok(values)
}

impl<Offset: Copy> HeldValues<Offset> {
    pub(crate) fn clear(&mut self) {
        self.rows.clear();
        self.clock = 0;
    }

    pub(crate) fn len(&self) -> usize {
        self.rows.len()
    }

    /// The row of `key` into `base`, if a lane held it.
    pub(crate) fn find(&self, key: u32, base: Base) -> Option<usize> {
        self.rows.iter().position(|r| r.key == key && r.base == base)
    }

    /// The row of `key` into `base`, added if no lane has held it yet (`zero`: the offsets of
    /// a new row, held by no lane).
    pub(crate) fn row(&mut self, key: u32, base: Base, zero: Offset) -> usize {
        self.find(key, base).unwrap_or_else(|| {
            self.rows.push(HeldRow { key, base, lanes: 0, offset: [zero; WARP], since: [0; WARP] });
            self.rows.len() - 1
        })
    }

    /// Whether lane `l` holds a value of row `i` whose offset `same` accepts.
    pub(crate) fn holds_where(&self, i: Option<usize>, l: usize, same: impl FnOnce(&Offset) -> bool) -> bool {
        i.is_some_and(|i| self.rows[i].lanes >> l & 1 == 1 && same(&self.rows[i].offset[l]))
    }

    /// Lanes `m` now hold the values at `offset(lane)` of row `i`. A lane whose list is full
    /// drops its oldest entry; an entry held already keeps its place, only its offset changes.
    pub(crate) fn remember(&mut self, i: usize, m: u32, offset: impl Fn(usize) -> Offset) {
        let new = m & !self.rows[i].lanes;
        // A list can only be full when there are more rows.
        if new != 0 && self.rows.len() > HELD_MAX {
            for l in super::lanes(new) {
                let bit = 1u32 << l;
                let mine = || (0..self.rows.len()).filter(|&j| self.rows[j].lanes & bit != 0);
                if mine().count() >= HELD_MAX {
                    if let Some(oldest) = mine().min_by_key(|&j| self.rows[j].since[l]) {
                        self.rows[oldest].lanes &= !bit;
                    }
                }
            }
        }
        let r = &mut self.rows[i];
        for l in super::lanes(m) {
            r.offset[l] = offset(l);
        }
        for l in super::lanes(new) {
            r.since[l] = self.clock;
        }
        r.lanes |= m;
        self.clock += 1;
    }

    /// Lanes `m` drop the values held under these address keys (a variable of their
    /// addresses was assigned).
    /// A key of an unrolled copy ([`super::CopyKeys`]) goes stale with its static key.
    pub(crate) fn forget_keys(&mut self, m: u32, keys: &[u32], copies: &super::CopyKeys) {
        for r in &mut self.rows {
            if r.lanes & m != 0
                && (keys.contains(&r.key) || copies.static_key(r.key).is_some_and(|k| keys.contains(&k)))
            {
                r.lanes &= !m;
            }
        }
    }

    /// Lanes `m` drop the values whose object satisfies `drop` (a write that may change it).
    pub(crate) fn forget(&mut self, m: u32, drop: impl Fn(Base) -> bool) {
        for r in &mut self.rows {
            if r.lanes & m != 0 && drop(r.base) {
                r.lanes &= !m;
            }
        }
    }

    /// Lanes `m` drop every value (a store to memory the model cannot place).
    pub(crate) fn forget_all(&mut self, m: u32) {
        self.forget(m, |_| true);
    }
}

impl HeldValues<i64> {
    /// Whether lane `l` holds the value at `offset` of row `i`.
    pub(crate) fn holds(&self, i: Option<usize>, l: usize, offset: i64) -> bool {
        self.holds_where(i, l, |&held| held == offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::lanes;
    use crate::ir::{ParamId, SharedId};

    /// The GVN model as it is defined, one list per lane, to check [`HeldValues`] against.
    #[derive(Default)]
    struct Lists {
        lanes: [Vec<(u32, Base, i64)>; WARP],
        dropped: usize,
    }

    impl Lists {
        fn remember(&mut self, l: usize, key: u32, base: Base, off: i64) {
            let v = &mut self.lanes[l];
            if let Some(x) = v.iter_mut().find(|x| x.0 == key && x.1 == base) {
                x.2 = off;
                return;
            }
            if v.len() >= HELD_MAX {
                v.remove(0);
                self.dropped += 1;
            }
            v.push((key, base, off));
        }
    }

    #[test]
    fn held_rows_equal_per_lane_lists() {
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let bases = [Base::Param(ParamId(0)), Base::Param(ParamId(1)), Base::Shared(SharedId(0))];
        let mut dropped = 0;
        for round in 0..20 {
            let (mut held, mut lists) = (HeldValues::<i64>::default(), Lists::default());
            // More keys than a lane may hold in some rounds, so that the oldest are dropped.
            let keys = if round % 2 == 0 { 8 } else { 3 * HELD_MAX as u64 };
            for _ in 0..3000 {
                let m = (next(1 << 32) as u32) & (next(1 << 32) as u32 | 0xffff);
                let (key, base) = (next(keys) as u32, bases[next(3) as usize]);
                match next(8) {
                    0..=5 => {
                        let offs: Vec<i64> = (0..WARP).map(|_| next(4) as i64).collect();
                        let i = held.row(key, base, 0);
                        held.remember(i, m, |l| offs[l]);
                        for l in lanes(m) {
                            lists.remember(l, key, base, offs[l]);
                        }
                    }
                    6 => {
                        held.forget(m, |b| b == base);
                        for l in lanes(m) {
                            lists.lanes[l].retain(|x| x.1 != base);
                        }
                    }
                    _ => {
                        let i = held.find(key, base);
                        for l in 0..WARP {
                            for off in 0..4 {
                                let want = lists.lanes[l].contains(&(key, base, off));
                                assert_eq!(held.holds(i, l, off), want);
                            }
                        }
                    }
                }
            }
            for (l, list) in lists.lanes.iter().enumerate() {
                let n = held.rows.iter().filter(|r| r.lanes >> l & 1 == 1).count();
                assert_eq!(n, list.len());
            }
            dropped += lists.dropped;
        }
        // The lists did fill up, so the order in which they drop entries was checked too.
        assert!(dropped > 100, "{dropped} entries dropped");
    }
}

/// What one execution of a load nvcc merges across unrolled copies
/// ([`crate::ir::unroll::Chain`]) issues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChainStep {
    /// A load of this many bytes per lane (`.0`), starting this many bytes (`.1`) below each
    /// lane's element.
    Issue(u32, u32),
    /// Nothing: an earlier copy's wider load read the element.
    Merged,
}

/// The step of chain `c` for lanes each giving its counter's value and the loop's trip count
/// (`None` where not a known integer). `None` when a lane's is unknown or the lanes disagree:
/// the load is then counted as written.
pub(crate) fn chain_step(
    c: &crate::ir::unroll::Chain,
    mut lanes: impl Iterator<Item = Option<(i128, i128)>>,
) -> Option<ChainStep> {
    let first = lanes.next()??;
    if !lanes.all(|x| x == Some(first)) {
        return None;
    }
    Some(c.width_at(first.0, first.1).map_or(ChainStep::Merged, |(w, back)| ChainStep::Issue(w, back)))
}
