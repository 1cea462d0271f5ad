//! Memory instructions: the compiler's reuse of loaded values (GVN) and promoted stores
//! (LICM), the values a load reads, and the one call per warp-level execution into
//! [`count`], which counts the sectors.

use super::compiler_model::{self, ChainStep, HeldEffect};
use super::*;
use crate::ir::unroll::ChainTrips;

impl Engine<'_> {
    /// The held-value key of this execution of `id`: its address key, with the values of the
    /// completely unrolled loops' counters it reads (one per unrolled copy).
    fn held_key(&mut self, id: MemOpId, m: u32, st: &WarpState) -> u32 {
        let key = self.keys[id.0 as usize];
        let Some(counters) = &self.op_counters[id.0 as usize] else { return self.copy_keys.key(key, None) };
        if counters.is_empty() || m == 0 {
            return key;
        }
        let values = compiler_model::counter_values(counters, m, |c, l| match st.vars[c.0 as usize].at(l).k {
            K::Int(i) => Some(i),
            _ => None,
        });
        self.copy_keys.key(key, values.ok())
    }

    /// One warp-level execution of memory instruction `op` by lanes `m` at addresses `a`:
    /// applies the compiler's load elimination and counts sectors (global) or wavefronts
    /// (shared). What the lanes read is [`Engine::loaded`].
    pub(super) fn access(&mut self, id: MemOpId, a: &Vals, m: u32, st: &mut WarpState) -> Result<()> {
        let op = self.k.mem_op(id);
        if !op.space.has_address() {
            // A texture or surface operation: one execution per warp with an active lane, at an
            // address the texture unit computes (`a` holds its handle and coordinates).
            if self.probe.is_some() {
                self.observe(id, a, m, 0, false);
            }
            if m == 0 {
                return Ok(());
            }
            return self.record(id, &[], 0, m.count_ones() as u64, false, None);
        }
        if op.kind.is_atomic() && op.space == Space::Shared && self.shared_values.is_some() {
            self.remember_shared(a, None, m, op.width);
        }
        let key = self.held_key(id, m, st);
        let mut addrs: [i64; WARP] = [0; WARP];
        let mut n_known = 0usize;
        let mut n_unknown = 0u64;
        let mut active = 0u32;
        let mut data = false;
        let mut base_of = None;
        let mut elided = 0u64;
        // Lowest offset accessed and one past the highest byte, for the footprint.
        let mut extent: Option<(i64, i64)> = None;
        let mut widen = |off: i64| {
            let end = off + op.width as i64;
            extent = Some(extent.map_or((off, end), |(lo, hi)| (lo.min(off), hi.max(end))));
        };
        // The GVN model: a lane that already holds this address's value does not load it.
        let gvn = compiler_model::is_reuse_candidate(op);
        if let Vals::Ptrs(b, offsets, d) = a {
            // Every lane points into one object: the general loop below, with the decisions
            // that depend only on the object taken once.
            let origin = self.absolute(*b, 0);
            let row = if gvn { st.held.find(key, *b) } else { None };
            for l in lanes(m) {
                let off = offsets[l];
                if gvn && st.held.holds(row, l, off) {
                    elided += 1;
                    continue;
                }
                active |= 1 << l;
                addrs[n_known] = origin.wrapping_add(off);
                n_known += 1;
                widen(off);
            }
            data = *d;
            base_of = Some(*b);
        } else {
            // The held-values row of the last object seen (lanes nearly always share one).
            let mut row: Option<(Base, Option<usize>)> = None;
            for l in lanes(m) {
                let al = a.at(l);
                let (base, addr) = match al.k {
                    K::Ptr(base, off) => (Some(base), Some(off)),
                    K::PtrUnknown(base) => (Some(base), None),
                    K::Missing(p) => return Err(self.missing(p, op.span, &format!("the address of `{}`", op.text))),
                    K::Undef => return Err(undef(op.span, &format!("the address of `{}`", op.text))),
                    K::Int(_) | K::Float(_) | K::Unknown => (None, None),
                };
                data |= al.data;
                if let Some(b) = base {
                    base_of = Some(b);
                }
                // An address the analysis does not know, the same value to the compiler.
                let addr = match addr {
                    None if gvn && self.same_unknown[id.0 as usize] => Some(compiler_model::UNKNOWN_OFFSET),
                    a => a,
                };
                if let (true, Some(b), Some(off)) = (gvn, base, addr) {
                    let i = match row {
                        Some((rb, i)) if rb == b => i,
                        _ => st.held.find(key, b),
                    };
                    row = Some((b, i));
                    if st.held.holds(i, l, off) {
                        elided += 1;
                        continue;
                    }
                }
                active |= 1 << l;
                match (base, addr.filter(|o| *o != compiler_model::UNKNOWN_OFFSET)) {
                    (Some(b), Some(off)) => {
                        addrs[n_known] = self.absolute(b, off);
                        n_known += 1;
                        widen(off);
                    }
                    _ => n_unknown += 1,
                }
            }
        }
        self.ops[id.0 as usize].elided_lanes += elided;
        // nvcc's merge of this load with the same load of the following unrolled copies.
        let mut width = op.width;
        let mut merged = false;
        if active != 0 && self.chains[id.0 as usize].is_some() {
            match self.chain_step(id, active, st)? {
                Some(ChainStep::Merged) => merged = true,
                Some(ChainStep::Issue(w, back)) => {
                    width = w;
                    addrs[..n_known].iter_mut().for_each(|a| *a -= back as i64);
                }
                None => {}
            }
        }
        if let Some((lo, end)) = extent {
            self.footprint(id, lo, end);
        }
        // Update what each lane holds after this access: a load's lanes hold what they read; a
        // store's lanes drop what the store may have changed, then hold what they wrote.
        let held = &mut st.held;
        match compiler_model::effect(op) {
            HeldEffect::None => {}
            HeldEffect::HoldLoaded => hold(held, key, a, active, self.same_unknown[id.0 as usize]),
            HeldEffect::Write { hold_written } => {
                match a {
                    Vals::Ptrs(b, ..) => held.forget(m, |x| self.may_alias(x, *b)),
                    _ => {
                        for l in lanes(m) {
                            match a.at(l).k {
                                K::Ptr(b, _) | K::PtrUnknown(b) => held.forget(1 << l, |x| self.may_alias(x, b)),
                                _ => held.forget_all(1 << l),
                            }
                        }
                    }
                }
                if hold_written {
                    hold(held, key, a, m, self.same_unknown[id.0 as usize]);
                }
            }
        }
        let depth = compiler_model::promotion_depth(st.loops.iter().map(|f| f.synthetic));
        if self.probe.is_some() {
            let promoted = self.promoted[id.0 as usize] && n_unknown == 0 && depth.is_some();
            self.observe(id, a, m, m & !active, promoted);
        }
        if active == 0 {
            return Ok(());
        }
        if merged {
            // Read by an earlier copy's load: the lanes asked for the bytes, no instruction ran.
            self.ops[id.0 as usize].lanes += active.count_ones() as u64;
            return Ok(());
        }
        if let (true, 0, Some(depth)) = (self.promoted[id.0 as usize], n_unknown, depth) {
            // Kept in a register: the memory sees one store after the loop, per lane its last.
            for l in lanes(active) {
                if let K::Ptr(b, off) = a.at(l).k {
                    // One register per location: the last store to it is the one written.
                    st.promoted.retain(|p| !(p.2 == l && p.3 == b && p.4 == off));
                    st.promoted.push((depth, id, l, b, off));
                }
            }
            return Ok(());
        }
        self.record_as(id, width, &addrs[..n_known], n_unknown, active.count_ones() as u64, data, base_of)
    }

    /// The step of chained load `id` ([`compiler_model::chain_step`]) for lanes `m`.
    fn chain_step(&mut self, id: MemOpId, m: u32, st: &mut WarpState) -> Result<Option<ChainStep>> {
        let Some(c) = self.chains[id.0 as usize].clone() else { return Ok(None) };
        let trips: Vec<Option<i128>> = match &c.trips {
            ChainTrips::Constant(t) => vec![Some(*t); WARP],
            ChainTrips::Runtime { bound, inclusive, .. } => {
                let b = self.eval(bound, m, st)?;
                (0..WARP)
                    .map(|l| match b.at(l).k {
                        K::Int(v) => Some(v - c.start + *inclusive as i128),
                        _ => None,
                    })
                    .collect()
            }
        };
        let lanes = lanes(m).map(|l| match (st.vars[c.counter.0 as usize].at(l).k, trips[l]) {
            (K::Int(v), Some(t)) => Some((v, t)),
            _ => None,
        });
        Ok(compiler_model::chain_step(&c, lanes))
    }

    /// The stores promoted out of the loop that just ended: one warp-level store each.
    pub(super) fn flush_promoted(&mut self, st: &mut WarpState) -> Result<()> {
        let depth = st.loops.len() + 1;
        if !st.promoted.iter().any(|p| p.0 == depth) {
            return Ok(());
        }
        let mut done: Vec<(usize, MemOpId, usize, Base, i64)> = Vec::new();
        st.promoted.retain(|p| {
            if p.0 == depth {
                done.push(*p);
                false
            } else {
                true
            }
        });
        done.sort_by_key(|p| (p.1, p.2));
        for group in done.chunk_by(|a, b| a.1 == b.1) {
            let id = group[0].1;
            let addrs: Vec<i64> = group.iter().map(|p| self.absolute(p.3, p.4)).collect();
            self.record(id, &addrs, 0, group.len() as u64, false, Some(group[0].3))?;
        }
        Ok(())
    }

    /// What lanes `m` read at addresses `a` (not empty), whether or not the compiler removed
    /// their load: a removed load reuses the same value.
    pub(super) fn loaded(&mut self, a: &Vals, m: u32, width: u32) -> Vals {
        let unknown = V { k: K::Unknown, data: true };
        if !self.any_fill && self.shared_values.is_none() {
            // No array's contents are given: every lane reads data nobody knows.
            return Vals::Same(unknown);
        }
        let read = |e: &mut Self, v: V| match (v.k, &e.shared_values) {
            (K::Ptr(Base::Shared(_), off), Some(sv)) => {
                let v = sv.load(off, width);
                e.shared_values_read |= !matches!(v.k, K::Unknown);
                v
            }
            (K::Ptr(b, off), _) => e.load_value(b, off, width),
            _ => unknown,
        };
        if let Vals::Same(v) = a {
            return Vals::Same(read(self, *v));
        }
        let mut out = self.pool.lanes();
        for l in lanes(m) {
            out[l] = read(self, a.at(l));
        }
        self.pool.pack(m, out)
    }

    /// Whether a store through `b` may change memory read earlier through `a`.
    pub(super) fn may_alias(&self, a: Base, b: Base) -> bool {
        may_alias(a, b, &self.restrict_params)
    }

    pub(super) fn absolute(&self, b: Base, off: i64) -> i64 {
        absolute(self.s, b, off)
    }

    /// Widens the instruction's footprint to `[lo, end)` (its base is set by [`Engine::record`]).
    pub(super) fn footprint(&mut self, id: MemOpId, lo: i64, end: i64) {
        let s = &mut self.ops[id.0 as usize];
        s.min_off = Some(s.min_off.map_or(lo, |m| m.min(lo)));
        s.end_off = Some(s.end_off.map_or(end, |m| m.max(end)));
    }

    /// The value a load returns: the fill's element when the array's contents are known.
    #[inline]
    pub(super) fn load_value(&mut self, b: Base, off: i64, width: u32) -> V {
        if let Base::Param(p) = b {
            if let Some((fill, table)) = &self.s.fills[p.0 as usize] {
                if let Ty::Ptr(t) = &self.k.param(p).ty {
                    let float = matches!(t.pointee, Ty::Float(_));
                    if (t.pointee.is_int() || float)
                        && t.pointee.size() == width as u64
                        && off.rem_euclid(width as i64) == 0
                    {
                        if let Some(v) = fill.value(off / width as i64, table.as_deref()) {
                            self.used_fills[p.0 as usize] = true;
                            // A float array holds the fill's value as that number (as
                            // sector-validate writes it).
                            if float {
                                return V { k: K::Float(v as f64), data: true };
                            }
                            let v = match &t.pointee {
                                Ty::Int(it) => it.wrap(v as i128),
                                _ => v as i128,
                            };
                            return V { k: K::Int(v), data: true };
                        }
                        if let (Some(len), None) = (fill.elements(), &self.fill_ran_out) {
                            self.fill_ran_out = Some((p, off / width as i64, len));
                        }
                    }
                }
            }
        }
        V { k: K::Unknown, data: true }
    }

    /// Counts one warp-level execution: the only place sectors and wavefronts are counted.
    pub(super) fn record(
        &mut self,
        id: MemOpId,
        addrs: &[i64],
        n_unknown: u64,
        lanes_active: u64,
        data: bool,
        base: Option<Base>,
    ) -> Result<()> {
        self.record_as(id, self.k.mem_op(id).width, addrs, n_unknown, lanes_active, data, base)
    }

    /// [`Engine::record`] of an instruction `width` bytes wide per lane (a merged load's).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn record_as(
        &mut self,
        id: MemOpId,
        width: u32,
        addrs: &[i64],
        n_unknown: u64,
        lanes_active: u64,
        data: bool,
        base: Option<Base>,
    ) -> Result<()> {
        let op = self.k.mem_op(id);
        let s = &mut self.ops[id.0 as usize];
        let exec = count::Execution { addrs, n_unknown, lanes_active, data, base, width };
        count::record(s, id.0 as usize, op, &exec, &mut self.scratch, &mut *self.boundary);
        Ok(())
    }
}

/// Lanes `m` now hold the values at their addresses `a` (those that are known) under `key`.
/// With `unknown`, lanes at an address the analysis does not know hold it too
/// ([`compiler_model::UNKNOWN_OFFSET`]).
fn hold(held: &mut HeldValues<i64>, key: u32, a: &Vals, m: u32, unknown: bool) {
    if let Vals::Ptrs(b, offsets, _) = a {
        let i = held.row(key, *b, 0);
        held.remember(i, m, |l| offsets[l]);
        return;
    }
    for l in lanes(m) {
        let (b, off) = match a.at(l).k {
            K::Ptr(b, off) => (b, off),
            K::PtrUnknown(b) if unknown => (b, compiler_model::UNKNOWN_OFFSET),
            _ => continue,
        };
        let i = held.row(key, b, 0);
        held.remember(i, 1 << l, |_| off);
    }
}
