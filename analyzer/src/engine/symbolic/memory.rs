//! Memory instructions over a box: held values (the compiler's load elimination, decided for
//! every point), promoted stores, and the one call per warp instruction into [`count`].

use super::*;

#[derive(Clone)]
pub(super) struct Promoted {
    pub(super) depth: usize,
    pub(super) op: MemOpId,
    pub(super) lane: usize,
    pub(super) base: Base,
    pub(super) off: Form,
}

impl SymbolicRun<'_> {
    /// Whether lane `l` holds the value at `off` (load elimination), decided over the box.
    pub(super) fn holds(&self, st: &AbstractWarp, key: u32, b: Base, l: usize, off: &Form) -> Outcome<bool> {
        let row = st.held.find(key, b);
        if !st.held.holds_where(row, l, |_| true) {
            return Ok(false);
        }
        let held = st.held.rows[row.expect("held")].offset[l];
        self.zero(&off.sub(&held).ok_or_else(overflow)?)
    }

    /// Lane `l` now holds the value at `off` under `key`; more values than the model keeps,
    /// and the reference engine counts instead (it drops the oldest).
    pub(super) fn remember(st: &mut AbstractWarp, key: u32, b: Base, l: usize, off: Form) -> Outcome<()> {
        if st.held.find(key, b).is_none() && st.held.len() >= HELD_MAX {
            return give_up("more held values than the load-elimination model keeps");
        }
        let i = st.held.row(key, b, Form::constant(0));
        st.held.remember(i, 1 << l, |_| off);
        Ok(())
    }

    /// What a lane at address `k` holds after `id` reads or writes it, if anything.
    fn held_at(&self, id: MemOpId, k: ValueKind) -> Option<(Base, Form)> {
        match k {
            ValueKind::Ptr(b, o) => Some((b, o)),
            ValueKind::PtrUnknown(b) if self.same_unknown[id.0 as usize] => {
                Some((b, Form::constant(compiler_model::UNKNOWN_OFFSET as i128)))
            }
            _ => None,
        }
    }

    /// Lanes `m` write memory at `a`: what each held that the write may change (anything, for
    /// an address the analysis does not know) is no longer held.
    pub(super) fn forget(st: &mut AbstractWarp, a: &WarpValues, m: u32, restrict: &[bool]) {
        for l in lanes(m) {
            match a[l].k {
                ValueKind::Ptr(b, _) | ValueKind::PtrUnknown(b) => {
                    st.held.forget(1 << l, |x| may_alias(x, b, restrict))
                }
                _ => st.held.forget_all(1 << l),
            }
        }
    }

    /// The held-value key of this execution, as the reference engine's: the address key with
    /// the values of the completely unrolled loops' counters it reads, which must be constants
    /// shared by the box's lanes (else the reference engine counts it).
    fn held_key(&mut self, id: MemOpId, m: u32, st: &AbstractWarp) -> Outcome<u32> {
        let key = self.keys[id.0 as usize];
        let Some(counters) = &self.op_counters[id.0 as usize] else { return Ok(self.copy_keys.key(key, None)) };
        if counters.is_empty() || m == 0 {
            return Ok(key);
        }
        let value = |c: LocalId, l: usize| match st.vars[c.0 as usize][l].k {
            ValueKind::Int(f) if f.is_const() => Some(f.c),
            _ => None,
        };
        let values = match compiler_model::counter_values(counters, m, value) {
            Ok(values) => values,
            Err(compiler_model::CounterMismatch::NotConstant) => {
                return give_up("the counter of an unrolled loop is not a constant here")
            }
            Err(compiler_model::CounterMismatch::Differs) => {
                return give_up("the counter of an unrolled loop differs between lanes")
            }
        };
        Ok(self.copy_keys.key(key, Some(values)))
    }

    pub(super) fn access(&mut self, id: MemOpId, a: &WarpValues, m: u32, st: &mut AbstractWarp) -> Outcome<()> {
        let op = self.k.mem_op(id);
        if !op.space.has_address() {
            // A texture or surface operation: executions only, as in the reference engine.
            if m == 0 {
                return Ok(());
            }
            return self.record(id, &[], 0, m.count_ones() as u64, false, None);
        }
        let key = self.held_key(id, m, st)?;
        let gvn = compiler_model::is_reuse_candidate(op);
        let mut known: Vec<(usize, Base, Form)> = Vec::with_capacity(WARP);
        let (mut n_unknown, mut active, mut data, mut base_of, mut elided) = (0u64, 0u32, false, None, 0u64);
        for l in lanes(m) {
            let al = a[l];
            let (base, off) = match al.k {
                ValueKind::Ptr(b, o) => (Some(b), Some(o)),
                ValueKind::PtrUnknown(b) => (Some(b), None),
                ValueKind::Missing(_) | ValueKind::Undef => return Err(Stop::Error),
                _ => (None, None),
            };
            data |= al.data;
            if let Some(b) = base {
                base_of = Some(b);
            }
            // An address the analysis does not know, the same value to the compiler.
            let unknown = off.is_none() && gvn && self.same_unknown[id.0 as usize];
            let off = if unknown { Some(Form::constant(compiler_model::UNKNOWN_OFFSET as i128)) } else { off };
            if let (true, Some(b), Some(o)) = (gvn, base, off) {
                if self.holds(st, key, b, l, &o)? {
                    elided += 1;
                    continue;
                }
            }
            active |= 1 << l;
            match (base, off.filter(|_| !unknown)) {
                (Some(b), Some(o)) => known.push((l, b, o)),
                _ => n_unknown += 1,
            }
        }
        // nvcc's merge of this load with the same load of the following unrolled copies.
        let mut width = op.width;
        let mut merged = false;
        if active != 0 && self.chains[id.0 as usize].is_some() {
            match self.chain_step(id, active, st)? {
                compiler_model::ChainStep::Merged => merged = true,
                compiler_model::ChainStep::Issue(w, back) => {
                    width = w;
                    for x in known.iter_mut() {
                        x.2.c -= back as i128;
                    }
                }
            }
        }
        let vol = self.scope.volume();
        let e = &mut self.ops[id.0 as usize].elided_lanes;
        *e = e.saturating_add(vol.saturating_mul(elided as u128));
        // The footprint: lowest offset and one past the highest byte, over the box.
        for (_, _, o) in &known {
            let (lo, hi) = self.scope.range(o);
            let (lo, end) = (lo as i64, (hi + op.width as i128) as i64);
            let s = &mut self.ops[id.0 as usize];
            s.min_off = Some(s.min_off.map_or(lo, |x| x.min(lo)));
            s.end_off = Some(s.end_off.map_or(end, |x| x.max(end)));
        }
        match compiler_model::effect(op) {
            HeldEffect::None => {}
            HeldEffect::HoldLoaded => {
                for l in lanes(active) {
                    if let Some((b, o)) = self.held_at(id, a[l].k) {
                        Self::remember(st, key, b, l, o)?;
                    }
                }
            }
            HeldEffect::Write { hold_written } => {
                Self::forget(st, a, m, &self.restrict);
                if hold_written {
                    for l in lanes(m) {
                        if let Some((b, o)) = self.held_at(id, a[l].k) {
                            Self::remember(st, key, b, l, o)?;
                        }
                    }
                }
            }
        }
        if active == 0 {
            return Ok(());
        }
        if merged {
            // Read by an earlier copy's load: the lanes asked for the bytes, no instruction ran.
            let s = &mut self.ops[id.0 as usize];
            s.lanes = s.lanes.saturating_add(vol.saturating_mul(active.count_ones() as u128));
            return Ok(());
        }
        let depth = super::super::compiler_model::promotion_depth(st.synthetic.iter().copied());
        if let (true, 0, Some(depth)) = (self.promoted_ops[id.0 as usize], n_unknown, depth) {
            for l in lanes(active) {
                if let ValueKind::Ptr(b, o) = a[l].k {
                    // One register per location: the last store to it is the one written.
                    st.promoted.retain(|p| !(p.lane == l && p.base == b && p.off == o));
                    st.promoted.push(Promoted { depth, op: id, lane: l, base: b, off: o });
                }
            }
            return Ok(());
        }
        self.record_as(id, width, &known, n_unknown, active.count_ones() as u64, data, base_of)
    }

    /// The step of chained load `id` for lanes `m`, as the reference engine's: the loop runs
    /// copy by copy, so its counter (and a run-time trip count) must be constants of the box.
    fn chain_step(&mut self, id: MemOpId, m: u32, st: &mut AbstractWarp) -> Outcome<compiler_model::ChainStep> {
        let Some(c) = self.chains[id.0 as usize].clone() else { return give_up("no chain") };
        let konst = |v: &ValueKind| match v {
            ValueKind::Int(f) if f.is_const() => Some(f.c),
            _ => None,
        };
        let trips: Vec<Option<i128>> = match &c.trips {
            crate::ir::unroll::ChainTrips::Constant(t) => vec![Some(*t); WARP],
            crate::ir::unroll::ChainTrips::Runtime { bound, inclusive, .. } => {
                let b = self.eval(bound, m, st)?;
                (0..WARP).map(|l| konst(&b[l].k).map(|v| v - c.start + *inclusive as i128)).collect()
            }
        };
        let lanes = lanes(m).map(|l| konst(&st.vars[c.counter.0 as usize][l].k).zip(trips[l]));
        match compiler_model::chain_step(&c, lanes) {
            Some(step) => Ok(step),
            None => give_up("a merged load's loop counter or trip count is not a constant of the box"),
        }
    }

    pub(super) fn flush_promoted(&mut self, st: &mut AbstractWarp) -> Outcome<()> {
        let depth = st.loops.len() + 1;
        if !st.promoted.iter().any(|p| p.depth == depth) {
            return Ok(());
        }
        let (mut done, keep): (Vec<Promoted>, Vec<Promoted>) = st.promoted.drain(..).partition(|p| p.depth == depth);
        st.promoted = keep;
        done.sort_by_key(|p| (p.op, p.lane));
        for group in done.chunk_by(|a, b| a.op == b.op) {
            let known: Vec<(usize, Base, Form)> = group.iter().map(|p| (p.lane, p.base, p.off)).collect();
            self.record(group[0].op, &known, 0, group.len() as u64, false, Some(group[0].base))?;
        }
        Ok(())
    }

    /// Counts one warp-level instruction at every point of the box: the symbolic twin of the
    /// reference engine's `record`, which it calls on concrete addresses once per residue.
    pub(super) fn record(
        &mut self,
        id: MemOpId,
        known: &[(usize, Base, Form)],
        n_unknown: u64,
        lanes_active: u64,
        data: bool,
        base: Option<Base>,
    ) -> Outcome<()> {
        self.record_as(id, self.k.mem_op(id).width, known, n_unknown, lanes_active, data, base)
    }

    /// [`SymbolicRun::record`] of an instruction `width` bytes wide per lane.
    #[allow(clippy::too_many_arguments)]
    fn record_as(
        &mut self,
        id: MemOpId,
        width: u32,
        known: &[(usize, Base, Form)],
        n_unknown: u64,
        lanes_active: u64,
        data: bool,
        base: Option<Base>,
    ) -> Outcome<()> {
        let op = self.k.mem_op(id);
        // Sector and bank counts survive a shift of every address by the period, so they are
        // counted per residue of the variable part, which must be the same in every lane.
        let slope = known.first().map_or([0; NV], |k| k.2.a);
        if let Some(k) = known.iter().find(|k| k.2.a != slope) {
            let v = (0..NV).rev().find(|&v| k.2.a[v] != slope[v]).unwrap_or(0);
            return Err(Stop::Split(v, Cut::Points));
        }
        let vol = self.scope.volume();
        let period = if op.space == Space::Shared { 128 } else { SECTOR as i64 };
        let dist = self.scope.residues(&slope, period);
        let consts: Vec<i64> = known.iter().map(|(_, b, o)| absolute(self.s, *b, 0).wrapping_add(o.c as i64)).collect();
        let s = &mut self.ops[id.0 as usize];
        s.executions = s.executions.saturating_add(vol);
        s.lanes = s.lanes.saturating_add(vol.saturating_mul(lanes_active as u128));
        if base.is_some() {
            s.base = base;
        }
        if data {
            s.data_executions = s.data_executions.saturating_add(vol);
        }
        let mut addrs = vec![0i64; consts.len()];
        let mut scratch = Vec::with_capacity(64);
        match op.space {
            Space::Global => {
                let ideal = count::ideal_sectors(&consts, n_unknown, width);
                s.ideal_sectors = s.ideal_sectors.saturating_add(vol.saturating_mul(ideal as u128));
                if n_unknown > 0 {
                    s.unknown_executions = s.unknown_executions.saturating_add(vol);
                }
                for (r, &count) in dist.iter().enumerate().filter(|(_, c)| **c > 0) {
                    for (x, c) in addrs.iter_mut().zip(&consts) {
                        *x = c.wrapping_add(r as i64);
                    }
                    let k = if compiler_model::performed_per_lane(op) {
                        count::atomic_sectors(&addrs, width, &mut scratch)
                    } else {
                        sectors_of(&addrs, width, &mut scratch)
                    };
                    let count::GlobalSectors { sectors: sec, min: lo, max: hi } =
                        count::global_sectors(k, n_unknown, width);
                    s.sectors = s.sectors.saturating_add(count.saturating_mul(sec as u128));
                    s.sectors_min = s.sectors_min.saturating_add(count.saturating_mul(lo as u128));
                    s.sectors_max = s.sectors_max.saturating_add(count.saturating_mul(hi as u128));
                }
            }
            Space::Shared => {
                if n_unknown > 0 {
                    return give_up("a shared address that depends on unknown data");
                }
                for (r, &count) in dist.iter().enumerate().filter(|(_, c)| **c > 0) {
                    for (x, c) in addrs.iter_mut().zip(&consts) {
                        *x = c.wrapping_add(r as i64);
                    }
                    let w = wavefronts(&addrs, width);
                    s.wavefronts = s.wavefronts.saturating_add(count.saturating_mul(w.wavefronts as u128));
                    s.ideal_wavefronts = s.ideal_wavefronts.saturating_add(count.saturating_mul(w.ideal as u128));
                }
            }
            // Executions only (`count::record`).
            Space::Texture | Space::Surface => {}
        }
        Ok(())
    }
}
