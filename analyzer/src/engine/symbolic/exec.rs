//! Statements: the abstract walk of one warp class under an active mask, loops (run, or
//! summarised by induction) and the branch decisions, each of which must hold over the box.

use super::*;

/// One warp class's state in the abstract walk: its variables, active and returned lanes, the
/// loops it is in, and what the compiler holds in registers.
#[derive(Clone)]
pub(super) struct AbstractWarp {
    pub(super) vars: Vec<WarpValues>,
    pub(super) mask: u32,
    pub(super) returned: u32,
    pub(super) loops: Vec<(u32, u32)>,
    /// Per open loop, whether it is the front end's (an inlined helper's body).
    pub(super) synthetic: Vec<bool>,
    pub(super) held: HeldValues<Form>,
    pub(super) promoted: Vec<Promoted>,
}

impl AbstractWarp {
    pub(super) fn alive(&self) -> u32 {
        self.mask & !self.returned
    }
}

impl SymbolicRun<'_> {
    pub(super) fn live(&self, mask: u32, st: &AbstractWarp) -> u32 {
        let mut m = mask & !st.returned;
        if let Some(f) = st.loops.last() {
            m &= !(f.0 | f.1);
        }
        m
    }

    pub(super) fn exec_block(&mut self, stmts: &[Stmt], mask: u32, st: &mut AbstractWarp) -> Outcome<()> {
        for s in stmts {
            let m = self.live(mask, st);
            if m == 0 {
                return Ok(());
            }
            self.exec(s, m, st)?;
        }
        Ok(())
    }

    pub(super) fn exec(&mut self, s: &Stmt, m: u32, st: &mut AbstractWarp) -> Outcome<()> {
        self.step()?;
        if matches!(s, Stmt::Assign { .. } | Stmt::Store { .. } | Stmt::If { .. }) {
            self.tick();
        }
        match s {
            Stmt::Assign { local, value, .. } => {
                let v = self.eval(value, m, st)?;
                let slot = &mut st.vars[local.0 as usize];
                for l in lanes(m) {
                    slot[l] = v[l];
                }
                // As the reference engine: values held under keys reading this local go stale.
                let stale = &self.local_keys[local.0 as usize];
                if !stale.is_empty() {
                    st.held.forget_keys(m, stale, &self.copy_keys);
                }
            }
            Stmt::Store { op, addr, value } => {
                self.eval(value, m, st)?;
                let m = count::address_lanes(self.k.mem_op(*op), m);
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
            }
            Stmt::Eval(e) => {
                self.eval(e, m, st)?;
            }
            Stmt::If { cond, then, els, span } => {
                let c = self.eval(cond, m, st)?;
                let t = self.truth(&c, m, *span)?;
                if t != 0 {
                    self.exec_block(then, t, st)?;
                }
                let e = m & !t;
                if e != 0 && !els.is_empty() {
                    self.exec_block(els, e, st)?;
                }
            }
            Stmt::Loop { cond, body, step, test_first, span, synthetic } => {
                if let Some(stale) = self.entry_keys.get(span) {
                    st.held.forget_keys(m, stale, &self.copy_keys);
                }
                let id = if *synthetic { usize::MAX } else { self.loop_ids[span] };
                st.loops.push((0, 0));
                st.synthetic.push(*synthetic);
                let r = self.run_loop(cond.as_ref(), body, step, *test_first, *span, m, st, id);
                st.loops.pop();
                st.synthetic.pop();
                r?;
                self.flush_promoted(st)?;
            }
            Stmt::Break => {
                if let Some(f) = st.loops.last_mut() {
                    f.0 |= m;
                }
            }
            Stmt::Continue => {
                if let Some(f) = st.loops.last_mut() {
                    f.1 |= m;
                }
            }
            Stmt::Return => st.returned |= m,
            Stmt::Barrier { .. } => st.held.forget(m, |b| !self.k.is_read_only(b)),
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn run_loop(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        span: Span,
        m: u32,
        st: &mut AbstractWarp,
        id: usize,
    ) -> Outcome<()> {
        let mut lm = m;
        let mut first = true;
        let mut prev: Option<(AbstractWarp, u32)> = None;
        // Iterations to run one by one before the next attempt at a summary.
        let mut wait = 0u64;
        let mut failures = 0u32;
        let mut total: i128 = 0;
        // A loop nvcc unrolls completely (at most 16 iterations) is never summarised.
        let mut complete = false;
        if let Some(c) = cond {
            crate::ir::licm::walk(c, &mut |x| {
                if let Expr::Local(l) = x {
                    complete |= self.unrolled_counters.contains(l);
                }
            });
        }
        loop {
            self.step()?;
            if total > HORIZON {
                return give_up("a loop runs more than 2^40 iterations");
            }
            if !first && wait == 0 && self.scope.used < NV && !complete {
                if let Some(delta) = prev.as_ref().and_then(|(p, plm)| delta(p, *plm, st, lm)) {
                    match self.summarise(cond, body, step, span, &mut lm, st, id, &delta)? {
                        Some(n) => {
                            total += n;
                            self.stats.summaries += 1;
                            self.stats.summarised_iterations += n as u128;
                            // The state now is the one `n` iterations on; the previous one is
                            // one iteration back, by the same change.
                            let mut back = st.clone();
                            advance(&mut back, &delta, -1);
                            prev = Some((back, lm));
                            continue;
                        }
                        None => {
                            failures += 1;
                            wait = 1 << failures.min(10);
                        }
                    }
                }
            }
            wait = wait.saturating_sub(1);
            prev = if wait <= 1 { Some((st.clone(), lm)) } else { None };
            total += 1;
            self.stats.single_iterations += 1;
            self.tick();
            if !self.iteration(cond, body, step, test_first, first, span, &mut lm, st, id)? {
                return Ok(());
            }
            first = false;
        }
    }

    /// One iteration as the reference runs it; false when the loop ends.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn iteration(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        first: bool,
        span: Span,
        lm: &mut u32,
        st: &mut AbstractWarp,
        id: usize,
    ) -> Outcome<bool> {
        if let Some(c) = cond {
            if test_first || !first {
                let t = if *lm == 0 {
                    0
                } else {
                    let v = self.eval(c, *lm, st)?;
                    if lanes(*lm).any(|l| matches!(v[l].k, ValueKind::Unknown)) {
                        // A loop that moves no memory: summarised as the reference does.
                        if let Some(assigned) = super::super::exec::summarisable(c, body, step) {
                            for &x in &assigned {
                                let slot = &mut st.vars[x.0 as usize];
                                for l in lanes(*lm) {
                                    slot[l] = UNKNOWN;
                                }
                            }
                            if !self.summarised_loops.iter().any(|(s, _)| *s == span) {
                                let names = assigned.iter().map(|x| self.k.locals[x.0 as usize].name.clone()).collect();
                                self.summarised_loops.push((span, names));
                            }
                            return Ok(false);
                        }
                    }
                    self.truth_loop(&v, *lm, span)?
                };
                if t != *lm && t != 0 && id != usize::MAX {
                    self.varying[id] = true;
                }
                *lm = t;
            }
        }
        if *lm == 0 {
            return Ok(false);
        }
        self.exec_block(body, *lm, st)?;
        let f = st.loops.last_mut().expect("loop frame");
        f.1 = 0;
        let leaving = (f.0 | st.returned) & *lm;
        if leaving != 0 && leaving != *lm && id != usize::MAX {
            self.varying[id] = true;
        }
        *lm &= !leaving;
        if *lm == 0 {
            return Ok(false);
        }
        self.exec_block(step, *lm, st)?;
        let f = st.loops.last().expect("loop frame");
        let leaving = (f.0 | st.returned) & *lm;
        if leaving != 0 && leaving != *lm && id != usize::MAX {
            self.varying[id] = true;
        }
        *lm &= !leaving;
        Ok(true)
    }

    /// Runs as many iterations as one abstract iteration can stand for, from state `st`
    /// that moves by `delta` per iteration; how many, or `None` when the state does not
    /// move that way (the caller then runs the iteration on its own).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn summarise(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        span: Span,
        lm: &mut u32,
        st: &mut AbstractWarp,
        id: usize,
        delta: &Delta,
    ) -> Outcome<Option<i128>> {
        let v = self.scope.used;
        let save = self.checkpoint();
        let mut n = HORIZON;
        loop {
            self.scope.used = v + 1;
            self.scope.n[v] = n;
            let mut s = st.clone();
            if n > 1 {
                vary(&mut s, delta, v);
            }
            let mut l = *lm;
            let r = self.iteration(cond, body, step, true, false, span, &mut l, &mut s, id);
            self.scope.used = v;
            self.scope.n[v] = 1;
            match r {
                Ok(true) if l == *lm && (n == 1 || follows(&s, st, delta, v)) => {
                    // One iteration is simply run: its state is what it computed. More are
                    // proven to move the state by `delta` each.
                    if n == 1 {
                        *st = s;
                    } else {
                        advance(st, delta, n);
                    }
                    // The loop test the reference runs at the top of each of the n iterations.
                    self.work = self.work.saturating_add(self.scope.volume().saturating_mul(n as u128));
                    return Ok(Some(n));
                }
                Ok(_) => {
                    self.restore(save);
                    return Ok(None);
                }
                Err(Stop::Split(w, Cut::At(t))) if w == v && t > 0 && t < n => {
                    self.restore(save.clone());
                    n = t;
                }
                Err(Stop::Split(w, _)) if w == v => {
                    self.restore(save);
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
    }

    // ---- decisions ----

    /// Lanes of `m` where `c` holds. Unknown data: taken (stated), as the reference does.
    pub(super) fn truth(&mut self, c: &WarpValues, m: u32, span: Span) -> Outcome<u32> {
        let mut t = 0u32;
        for l in lanes(m) {
            if self.lane_truth(&c[l], span)? {
                t |= 1 << l;
            }
        }
        Ok(t)
    }

    pub(super) fn lane_truth(&mut self, v: &LaneValue, span: Span) -> Outcome<bool> {
        Ok(match v.k {
            ValueKind::Int(x) => self.nonzero(&x)?,
            ValueKind::Float(f) => f != 0.0,
            ValueKind::FloatSym(vars) => return Err(points(vars)),
            ValueKind::Ptr(..) | ValueKind::PtrUnknown(_) => true,
            ValueKind::Unknown => {
                self.data_branches.insert(span);
                true
            }
            ValueKind::Missing(_) | ValueKind::Undef => return Err(Stop::Error),
        })
    }

    pub(super) fn truth_loop(&mut self, c: &WarpValues, m: u32, span: Span) -> Outcome<u32> {
        if lanes(m).any(|l| matches!(c[l].k, ValueKind::Unknown)) {
            // Refused, or summarised when the loop moves no memory: the reference decides.
            return give_up("a loop whose condition the analysis does not know");
        }
        self.truth(c, m, span)
    }

    /// Whether `x < 0` at every point (true), at none (false), or a cut.
    pub(super) fn negative(&self, x: &Form) -> Outcome<bool> {
        let (lo, hi) = self.scope.range(x);
        if hi < 0 {
            Ok(true)
        } else if lo >= 0 {
            Ok(false)
        } else {
            let (v, t) = self.scope.sign_cut(x);
            Err(Stop::Split(v, Cut::At(t)))
        }
    }

    pub(super) fn zero(&self, x: &Form) -> Outcome<bool> {
        if x.is_const() {
            return Ok(x.c == 0);
        }
        let (lo, hi) = self.scope.range(x);
        if lo > 0 || hi < 0 {
            return Ok(false);
        }
        // Cut where the sign changes, then where zero gives way to positive.
        let e = if lo < 0 { *x } else { x.plus(-1).ok_or_else(overflow)? };
        let (v, t) = self.scope.sign_cut(&e);
        Err(Stop::Split(v, Cut::At(t)))
    }

    pub(super) fn nonzero(&self, x: &Form) -> Outcome<bool> {
        Ok(!self.zero(x)?)
    }
}
