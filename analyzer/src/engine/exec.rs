//! Statement execution: a warp's state and shape, the statement walk under an active mask,
//! loops and branch decisions.

use super::*;

pub(super) struct LoopFrame {
    pub(super) brk: u32,
    pub(super) cont: u32,
    /// The front end's loop around an inlined helper's body, not one of the user's.
    pub(super) synthetic: bool,
}

/// Where each thread of a warp sits in its block; the same for every block of the launch.
pub(super) struct WarpShape {
    pub(super) tid: [[u32; 3]; WARP],
    /// The lanes the warp has (a partial last warp has fewer than 32).
    pub(super) mask: u32,
    /// Per dimension: whether `threadIdx` there is the same in every lane of the warp.
    pub(super) tid_uniform: [bool; 3],
}

pub(super) fn warp_shapes(block: [u32; 3]) -> Vec<WarpShape> {
    let [bx, by, bz] = block;
    let threads = (bx * by * bz) as usize;
    (0..threads.div_ceil(WARP))
        .map(|w| {
            let first = w * WARP;
            let n = (threads - first).min(WARP);
            let mut tid = [[0u32; 3]; WARP];
            for (l, t) in tid.iter_mut().enumerate().take(n) {
                let lin = (first + l) as u32;
                *t = [lin % bx, (lin / bx) % by, lin / (bx * by)];
            }
            let tid_uniform = [0, 1, 2].map(|d| tid[..n].iter().all(|t| t[d] == tid[0][d]));
            let mask = if n == WARP { u32::MAX } else { (1u32 << n) - 1 };
            WarpShape { tid, mask, tid_uniform }
        })
        .collect()
}

/// One warp's execution state; kept from warp to warp so that its buffers are reused.
pub(super) struct WarpState {
    /// Locals, each in the [`Vals`] form over the lanes still alive ([`WarpState::alive`]).
    pub(super) vars: Vec<Vals>,
    pub(super) tid: [[u32; 3]; WARP],
    pub(super) tid_uniform: [bool; 3],
    pub(super) mask: u32,
    pub(super) returned: u32,
    pub(super) loops: Vec<LoopFrame>,
    pub(super) held: HeldValues<i64>,
    /// Stores kept in a register inside their loop ([`crate::ir::licm`]): (loop depth, op,
    /// lane, base, offset); written once when the loop ends.
    pub(super) promoted: Vec<(usize, MemOpId, usize, Base, i64)>,
    /// Branches around the statement being run whose condition was unknown in some lane
    /// (taken by assumption): a value stored to shared memory there is not taken as known.
    pub(super) assumed_depth: u32,
}

impl WarpState {
    pub(super) fn new(locals: usize) -> Self {
        WarpState {
            vars: (0..locals).map(|_| Vals::Same(UNDEF)).collect(),
            tid: [[0; 3]; WARP],
            tid_uniform: [true; 3],
            mask: 0,
            returned: 0,
            loops: Vec::new(),
            held: HeldValues::default(),
            promoted: Vec::new(),
            assumed_depth: 0,
        }
    }

    /// A fresh warp: every local undefined, no lane returned, no value held.
    pub(super) fn start(&mut self, shape: &WarpShape, pool: &mut Pool) {
        for v in &mut self.vars {
            pool.put(std::mem::replace(v, Vals::Same(UNDEF)));
        }
        self.tid = shape.tid;
        self.tid_uniform = shape.tid_uniform;
        self.mask = shape.mask;
        self.returned = 0;
        self.loops.clear();
        self.held.clear();
        self.promoted.clear();
        self.assumed_depth = 0;
    }

    /// Lanes that may still run a statement: every later mask lies inside this one.
    pub(super) fn alive(&self) -> u32 {
        self.mask & !self.returned
    }

    /// `local = v` in lanes `m`; the other lanes keep their value.
    pub(super) fn assign(&mut self, local: LocalId, v: Vals, m: u32, pool: &mut Pool) {
        let alive = self.alive();
        let slot = &mut self.vars[local.0 as usize];
        // Written in every lane that will ever read it: nothing of the old value remains.
        if m == alive {
            pool.put(std::mem::replace(slot, v));
            return;
        }
        if let (Vals::Same(old), Vals::Same(new)) = (&*slot, &v) {
            if same(*old, *new) {
                return;
            }
        }
        let mut b = pool.lanes();
        for l in lanes(alive) {
            b[l] = if m >> l & 1 == 1 { v.at(l) } else { slot.at(l) };
        }
        pool.put(v);
        let old = std::mem::replace(slot, pool.pack(alive, b));
        pool.put(old);
    }
}

impl Engine<'_> {
    pub(super) fn exec_block(&mut self, stmts: &[Stmt], mask: u32, st: &mut WarpState) -> Result<()> {
        for s in stmts {
            let m = self.live(mask, st);
            if m == 0 {
                return Ok(());
            }
            self.exec(s, m, st)?;
        }
        Ok(())
    }

    pub(super) fn exec(&mut self, s: &Stmt, m: u32, st: &mut WarpState) -> Result<()> {
        match s {
            Stmt::Assign { local, value, span } => {
                self.tick(*span)?;
                let v = self.eval(value, m, st)?;
                st.assign(*local, v, m, &mut self.pool);
                let stale = &self.local_keys[local.0 as usize];
                if !stale.is_empty() {
                    st.held.forget_keys(m, stale, &self.copy_keys);
                }
            }
            Stmt::Store { op, addr, value } => {
                let span = self.k.mem_op(*op).span;
                self.tick(span)?;
                let v = self.eval(value, m, st)?;
                let m = count::address_lanes(self.k.mem_op(*op), m);
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
                let o = self.k.mem_op(*op);
                if self.shared_values.is_some() && o.kind == AccessKind::Store && o.space == Space::Shared {
                    // Under a branch taken by assumption, the value stored is not known.
                    let known = (st.assumed_depth == 0).then_some(&v);
                    self.remember_shared(&a, known, m, o.width);
                }
                self.pool.put(v);
                // A store reads nothing, but its address's fill counts as used, as for a load.
                let loaded = self.loaded(&a, m, self.k.mem_op(*op).width);
                self.pool.put(a);
                self.pool.put(loaded);
            }
            Stmt::Eval(e) => {
                let v = self.eval(e, m, st)?;
                self.pool.put(v);
            }
            Stmt::If { cond, then, els, span } => {
                self.tick(*span)?;
                let c = self.eval(cond, m, st)?;
                let t = self.truth(&c, m, *span)?;
                let assumed = any_unknown(&c, m) as u32;
                st.assumed_depth += assumed;
                // A retry loop's exit test on the swap's result (`if (v == old) break;`), taken
                // as a branch on data is: the swap succeeds, one pass.
                if let Some(&l) = self.loop_stack.last().filter(|_| !self.retry_spans.is_empty()) {
                    let looping = self.loop_spans[l];
                    if self.retry_spans.contains(&looping) && self.data_branches.remove(span) {
                        self.retried.insert(looping);
                    }
                }
                self.pool.put(c);
                if t != 0 {
                    self.exec_block(then, t, st)?;
                }
                let e = m & !t;
                if e != 0 && !els.is_empty() {
                    self.exec_block(els, e, st)?;
                }
                st.assumed_depth -= assumed;
            }
            Stmt::Loop { cond, body, step, test_first, span, synthetic } => {
                if let Some(stale) = self.entry_keys.get(span) {
                    st.held.forget_keys(m, stale, &self.copy_keys);
                }
                let id = self.loop_ids[span];
                self.loop_stack.push(id);
                st.loops.push(LoopFrame { brk: 0, cont: 0, synthetic: *synthetic });
                let id = if *synthetic { usize::MAX } else { id };
                let r = self.run_loop(cond.as_ref(), body, step, *test_first, *span, m, st, id);
                st.loops.pop();
                self.loop_stack.pop();
                r?;
                self.flush_promoted(st)?;
            }
            Stmt::Break => {
                if let Some(f) = st.loops.last_mut() {
                    f.brk |= m;
                }
            }
            Stmt::Continue => {
                if let Some(f) = st.loops.last_mut() {
                    f.cont |= m;
                }
            }
            Stmt::Return => st.returned |= m,
            Stmt::Barrier { block } => {
                // The compiler keeps no loaded value across a barrier, but what it read through
                // a `const __restrict__` pointer (backprop's `delta[index_x]` on the H200's SASS).
                st.held.forget(m, |b| !self.k.is_read_only(b));
                if let (true, Some(sv)) = (*block, self.shared_values.as_mut()) {
                    sv.barrier();
                }
            }
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
        st: &mut WarpState,
        id: usize,
    ) -> Result<()> {
        // A long loop of a sampled block may run in windows (`windows.rs`).
        let mut act = if cond.is_some() { self.activation(id) } else { None };
        let r = self.run_iterations(cond, body, step, test_first, span, m, st, id, &mut act);
        if let Some(a) = &act {
            self.end_activation(a);
        }
        r.map_err(|d| self.long_loop(d, cond, span, m, st))
    }

    #[allow(clippy::too_many_arguments)]
    fn run_iterations(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        span: Span,
        m: u32,
        st: &mut WarpState,
        id: usize,
        act: &mut Option<super::windows::Activation>,
    ) -> Result<()> {
        let mut lm = m;
        let mut first = true;
        loop {
            if let (Some(a), Some(c)) = (act.as_mut(), cond) {
                self.window_top(a, first, lm, c, st);
            }
            self.tick(span)?;
            if let Some(c) = cond {
                if test_first || !first {
                    let v = self.eval(c, lm, st)?;
                    if self.summarise_loop(&v, lm, c, body, step, span, st) {
                        self.pool.put(v);
                        return Ok(());
                    }
                    let t = if !self.retry_spans.is_empty() && self.retry_spans.contains(&span) {
                        self.retry_truth(&v, lm, test_first && first, span)?
                    } else {
                        self.truth_loop(&v, lm, c, span)?
                    };
                    self.pool.put(v);
                    if t != lm && t != 0 && id != usize::MAX {
                        // Some lanes leave while others go on: trip counts differ in this warp.
                        self.varying[id] = true;
                    }
                    lm = t;
                }
            }
            first = false;
            if lm == 0 {
                return Ok(());
            }
            self.exec_block(body, lm, st)?;
            let f = st.loops.last_mut().expect("loop frame");
            f.cont = 0;
            let leaving = (f.brk | st.returned) & lm;
            if leaving != 0 && leaving != lm && id != usize::MAX {
                self.varying[id] = true;
            }
            lm &= !leaving;
            if lm == 0 {
                return Ok(());
            }
            self.exec_block(step, lm, st)?;
            // A test in the step (`do { } while (++i < n)`) may break too.
            let f = st.loops.last().expect("loop frame");
            let leaving = (f.brk | st.returned) & lm;
            if leaving != 0 && leaving != lm && id != usize::MAX {
                self.varying[id] = true;
            }
            lm &= !leaving;
        }
    }

    /// A launch out of time or work inside a loop whose test compares with a value no loop
    /// reaches (2^40 or more, as `N - rows * ndyn` below zero wraps in `size_t`): the error
    /// says so, since a larger time limit would not help.
    fn long_loop(&mut self, d: Diagnostic, cond: Option<&Expr>, span: Span, lm: u32, st: &mut WarpState) -> Diagnostic {
        let Some(Expr::Binary { op: BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Ne, lhs, rhs, .. }) = cond
        else {
            return d;
        };
        if d.kind != ErrorKind::Limit || d.notes.iter().any(|n| n.contains(WRAPPED)) {
            return d;
        }
        let Some(lane) = lanes(lm).next() else { return d };
        for side in [lhs, rhs] {
            let Ok(v) = self.eval(side, lm, st) else { continue };
            let x = v.at(lane);
            self.pool.put(v);
            if let K::Int(x) = x.k {
                if x.unsigned_abs() >= 1 << 40 {
                    return d.note(format!(
                        "the loop at line {} compares with {x} (thread {lane} of the warp){WRAPPED}",
                        span.line
                    ));
                }
            }
        }
        d
    }

    /// Lanes of `m` where the branch condition holds. Unknown data: taken (stated).
    pub(super) fn truth(&mut self, c: &Vals, m: u32, span: Span) -> Result<u32> {
        if m == 0 {
            // A loop test after every lane left: no lane looks at the condition.
            return Ok(0);
        }
        match c {
            Vals::Same(v) => Ok(if self.lane_truth(*v, span)? { m } else { 0 }),
            c => {
                let mut t = 0u32;
                for l in lanes(m) {
                    if self.lane_truth(c.at(l), span)? {
                        t |= 1 << l;
                    }
                }
                Ok(t)
            }
        }
    }

    pub(super) fn lane_truth(&mut self, v: V, span: Span) -> Result<bool> {
        Ok(match v.k {
            K::Int(v) => v != 0,
            K::Float(f) => f != 0.0,
            K::Ptr(..) | K::PtrUnknown(_) => true,
            K::Unknown => {
                self.data_branches.insert(span);
                true
            }
            K::Missing(p) => return Err(self.missing(p, span, "the branch condition")),
            K::Undef => return Err(undef(span, "the branch condition")),
        })
    }

    /// A loop that moves no memory, whose condition is unknown in some lane of `m` (a spin on
    /// `clock()`): however often it runs, it counts nothing. Its lanes leave it with every
    /// local it assigns unknown, so that a later address or branch that depends on one is
    /// handled as any unknown value is (stated on the sheet). `false`: not such a loop, or the
    /// condition is known.
    #[allow(clippy::too_many_arguments)]
    fn summarise_loop(
        &mut self,
        v: &Vals,
        m: u32,
        cond: &Expr,
        body: &[Stmt],
        step: &[Stmt],
        span: Span,
        st: &mut WarpState,
    ) -> bool {
        let unknown = |v: V| matches!(v.k, K::Unknown);
        let any_unknown = m != 0
            && match v {
                Vals::Same(v) => unknown(*v),
                v => lanes(m).any(|l| unknown(v.at(l))),
            };
        let Some(assigned) = (if any_unknown { summarisable(cond, body, step) } else { None }) else {
            return false;
        };
        for &l in &assigned {
            st.assign(l, Vals::Same(V { k: K::Unknown, data: true }), m, &mut self.pool);
        }
        if !self.summarised_loops.iter().any(|(s, _)| *s == span) {
            let names = assigned.iter().map(|l| self.k.locals[l.0 as usize].name.clone()).collect();
            self.summarised_loops.push((span, names));
        }
        true
    }

    /// The test of a loop that retries a compare-and-swap: a lane whose test depends on data
    /// the analysis does not know enters once and leaves after that pass (the swap succeeds
    /// at once, as without contention); known tests are taken as they are.
    fn retry_truth(&mut self, c: &Vals, m: u32, first_test: bool, span: Span) -> Result<u32> {
        let mut t = 0u32;
        for l in lanes(m) {
            let v = c.at(l);
            let taken = if matches!(v.k, K::Unknown) {
                self.retried.insert(span);
                first_test
            } else {
                self.lane_truth(v, span)?
            };
            if taken {
                t |= 1 << l;
            }
        }
        Ok(t)
    }

    pub(super) fn truth_loop(&mut self, c: &Vals, m: u32, cond: &Expr, span: Span) -> Result<u32> {
        let unknown = |v: V| matches!(v.k, K::Unknown);
        let any_unknown = m != 0
            && match c {
                Vals::Same(v) => unknown(*v),
                c => lanes(m).any(|l| unknown(c.at(l))),
            };
        if any_unknown {
            return Err(Diagnostic::at(
                ErrorKind::Unsupported,
                span,
                format!("{} (data read from memory, a clock) and the loop moves memory, so its trip count decides the counts", super::LOOP_ON_UNKNOWN_DATA),
            )
            .note(fill_hint(self.k, cond))
            .note("a loop that waits for memory another thread, kernel or the host writes (a spin-wait, a retry until a store sticks) cannot be counted from the source and is refused"));
        }
        self.truth(c, m, span)
    }
}

/// What to give for a loop bounded by data: the arrays its condition was read from, by name.
fn fill_hint(k: &Kernel, cond: &Expr) -> String {
    let from = crate::ir::provenance::loaded_from(k, cond);
    // `--fill` describes arrays of integers and floats; an array of structures is named apart.
    let fillable =
        |p: &ParamId| matches!(&k.param(*p).ty, Ty::Ptr(t) if t.pointee.is_int() || matches!(t.pointee, Ty::Float(_)));
    let arrays: Vec<String> = from.iter().filter(|p| fillable(p)).map(|&p| k.param(p).name.clone()).collect();
    let others: Vec<String> = from.iter().filter(|p| !fillable(p)).map(|&p| format!("`{}`", k.param(p).name)).collect();
    if arrays.is_empty() && !others.is_empty() {
        return format!(
            "the condition is read from {}, whose elements --fill cannot describe (it gives arrays of integers and floats); bound the loop by a parameter",
            others.join(", ")
        );
    }
    if arrays.is_empty() {
        return "where the value is read from an array, give the array's contents with --fill NAME=SPEC (e.g. constant:8), or bound the loop by a parameter".into();
    }
    let named = arrays.iter().map(|a| format!("`{a}`")).collect::<Vec<_>>().join(", ");
    let example = arrays.iter().map(|a| format!("--fill {a}=SPEC")).collect::<Vec<_>>().join(" ");
    let also = if others.is_empty() {
        String::new()
    } else {
        format!(" (and from {}, whose elements --fill cannot describe)", others.join(", "))
    };
    format!("the condition is read from {named}{also}: give {} contents with {example} (e.g. constant:8, csr:ROWS:NNZ:SEED), or bound the loop by a parameter", if arrays.len() == 1 { "its" } else { "their" })
}

/// The locals a loop assigns, when it moves no memory (its condition included): such a loop
/// can be summarised whatever its trip count. `None`: it moves memory.
pub(super) fn summarisable(cond: &Expr, body: &[Stmt], step: &[Stmt]) -> Option<Vec<LocalId>> {
    if contains_load(cond) || !body.iter().chain(step).all(moves_nothing) {
        return None;
    }
    let mut assigned = Vec::new();
    for s in body.iter().chain(step) {
        assigned_locals(s, &mut assigned);
    }
    assigned.sort();
    assigned.dedup();
    Some(assigned)
}

/// Whether a statement moves no memory and leaves every lane to the statement after its loop:
/// no load, store, atomic or barrier, no `return`.
pub(super) fn moves_nothing(s: &Stmt) -> bool {
    match s {
        Stmt::Assign { value, .. } => !contains_load(value),
        Stmt::Eval(e) => !contains_load(e),
        Stmt::If { cond, then, els, .. } => !contains_load(cond) && then.iter().chain(els).all(moves_nothing),
        Stmt::Loop { cond, body, step, .. } => {
            !cond.as_ref().is_some_and(contains_load) && body.iter().chain(step).all(moves_nothing)
        }
        Stmt::Break | Stmt::Continue => true,
        Stmt::Store { .. } | Stmt::Return | Stmt::Barrier { .. } => false,
    }
}

pub(super) fn assigned_locals(s: &Stmt, out: &mut Vec<LocalId>) {
    match s {
        Stmt::Assign { local, .. } => out.push(*local),
        Stmt::If { then, els, .. } => then.iter().chain(els).for_each(|s| assigned_locals(s, out)),
        Stmt::Loop { body, step, .. } => body.iter().chain(step).for_each(|s| assigned_locals(s, out)),
        _ => {}
    }
}

/// Whether a lane of `m` holds data nobody knows: a branch on `c` is then taken by assumption.
fn any_unknown(c: &Vals, m: u32) -> bool {
    match c {
        Vals::Same(v) => m != 0 && matches!(v.k, K::Unknown),
        Vals::Ints(..) | Vals::Ptrs(..) => false,
        Vals::Lanes(b) => lanes(m).any(|l| matches!(b[l].k, K::Unknown)),
    }
}

impl Engine<'_> {
    /// What a store (`v`), or an atomic or a store of a value not known (`None`), leaves at its
    /// shared-memory addresses, for later loads ([`super::shared_values`]). A store under a
    /// branch taken by assumption passes `None`: a flag set when data compare so ends its loop
    /// as a loop bounded by data (refused), never as the assumption decided.
    pub(super) fn remember_shared(&mut self, a: &Vals, v: Option<&Vals>, m: u32, width: u32) {
        let Some(sv) = self.shared_values.as_mut() else { return };
        let mut at = Vec::new();
        for l in lanes(m) {
            let v = v.map_or(V { k: K::Unknown, data: true }, |v| v.at(l));
            match a.at(l).k {
                K::Ptr(Base::Shared(_), off) => at.push((off, v)),
                _ => {
                    sv.store_somewhere();
                    return;
                }
            }
        }
        sv.store(width, &at);
    }
}

/// What [`Engine::long_loop`] adds to a bound no loop reaches.
const WRAPPED: &str =
    ": a count below zero in an unsigned type wraps to such a value, and no time limit reaches its end; check the launch's arguments";
