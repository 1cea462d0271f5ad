//! Iteration windows (issue 26): the cache model's cost independent of trip counts.
//!
//! When the engine feeds the cache model a sample of a launch whose blocks are too long to
//! run whole ([`SectorSink::loop_fraction`] below 1), a long loop runs in windows: a few
//! iterations through the model, then a jump over the next ones, again and again to its end.
//! A jump is taken only where the loop's state is *steady*: at the last four iteration tops
//! every integer and pointer local the loop assigns changed by the same step in every active
//! lane (floats and unknown data are left as they are: no address is made of them), the same
//! lanes were active, and the loop has no `break` or `return` (its test is its only exit). The
//! jump moves each such local on by its step times the iterations skipped, so the state after
//! it is the state the loop would have reached; the loop then tests its condition as usual,
//! and a jump to the end leaves the loop with its final state. The remaining trip count comes
//! from the condition itself: the most iterations for which it still holds in every active lane
//! (doubling, then halving; a condition that holds for a prefix of the iterations, as a loop
//! bound does).
//!
//! Windows are spread evenly over the loop's trip count (at least two when it is long), the
//! first at the loop's start and the others in the middle of their cycles, so that a loop whose
//! iterations differ (a triangular nest: short rows first, long ones last; blocks that start in
//! step and drift apart) is seen at all its stages in their proportions; a jump lands one iteration before the next window, and that
//! iteration only warms the caches ([`SectorSink::warm`]): what the iterations just before a
//! window leave in L1 (a stencil's previous row) is there, and the window itself begins at the
//! same phase as the loop did.
//! A loop without a nested loop runs windows of whole periods of its addresses (the iterations
//! after which every step is a multiple of 128 bytes, taking integer steps as 4-byte elements),
//! so that the iterations that share a sector are seen in their proportions. Loops inside a loop
//! that runs in windows run whole: a window's iterations reuse what the iterations before them
//! brought (rows of a triangular nest), and skipping inside would shrink that footprint.
//!
//! The model's per-instruction ratios then carry to the engine's exact sector counts; the warp's
//! later accesses come as late in its stream as they would ([`SectorSink::skip`]), so the
//! in-step merging window still means the same accesses.

use super::*;
use std::rc::Rc;

/// Iterations that end every window (the fewest that show a steady state: 4 tops, 3 steps).
const STEADY: u64 = 4;
/// Windows over a long loop at least (so that a loop whose iterations differ is seen at more
/// than its start).
const MIN_WINDOWS: u64 = 2;
/// Longest window of a loop without nested loops, in iterations.
const MAX_PERIOD: u64 = 32;
/// Iterations past its first window after which a loop whose state is still not steady runs
/// whole.
const PATIENCE: u64 = 64;
/// Most iterations one jump may cover (the search for the trip count doubles up to here).
const HORIZON: u64 = 1 << 40;

/// What the engine needs to run loops in windows, for the whole run.
pub(super) struct Windows {
    /// The fraction of iterations wanted of a loop at the current depth.
    pub(super) frac: f64,
    /// Per loop id: the locals it assigns and whether it holds a nested loop, when it may run in
    /// windows.
    loops: LoopTable,
    /// Iterations under way that only warm the caches (nested windows).
    warm: u32,
}

impl Windows {
    pub(super) fn new(k: &Kernel, frac: f64) -> Self {
        let mut loops = Vec::new();
        collect(&k.body, &mut loops);
        // The engine finds a loop's number by its span: a span two loops share (an inlined
        // function called twice) does not say which, and such loops run whole.
        let spans = loop_table(k).spans;
        for (i, s) in spans.iter().enumerate() {
            if spans.iter().filter(|x| *x == s).count() > 1 {
                if let Some(l) = loops.get_mut(i) {
                    *l = None;
                }
            }
        }
        Windows { frac, loops, warm: 0 }
    }
}

impl Windows {
    pub(super) fn any(&self) -> bool {
        self.loops.iter().any(Option::is_some)
    }
}

/// Per loop statement, in the order [`loop_table`] numbers them: whether it may run in windows.
fn collect(stmts: &[Stmt], out: &mut LoopTable) {
    for s in stmts {
        match s {
            Stmt::If { then, els, .. } => {
                collect(then, out);
                collect(els, out);
            }
            Stmt::Loop { cond, body, step, .. } => {
                let i = out.len();
                out.push(None);
                let eligible = cond.as_ref().is_some_and(|c| !contains_load(c))
                    && body.iter().chain(step).all(|s| !exits(s, true))
                    && body.iter().chain(step).any(moves_global);
                if eligible {
                    let mut assigned = Vec::new();
                    for s in body.iter().chain(step) {
                        assigned_locals(s, &mut assigned);
                    }
                    assigned.sort();
                    assigned.dedup();
                    let nested = body.iter().chain(step).any(has_loop);
                    out[i] = Some((assigned.into(), nested));
                }
                collect(body, out);
                collect(step, out);
            }
            _ => {}
        }
    }
}

/// Whether a statement leaves its loop other than by the loop's test: a `break` of this loop
/// (`own`: not inside a nested loop) or a `return` anywhere.
fn exits(s: &Stmt, own: bool) -> bool {
    match s {
        Stmt::Break => own,
        Stmt::Return => true,
        Stmt::If { then, els, .. } => then.iter().chain(els).any(|s| exits(s, own)),
        Stmt::Loop { body, step, .. } => body.iter().chain(step).any(|s| exits(s, false)),
        _ => false,
    }
}

fn has_loop(s: &Stmt) -> bool {
    match s {
        Stmt::Loop { .. } => true,
        Stmt::If { then, els, .. } => then.iter().chain(els).any(has_loop),
        _ => false,
    }
}

/// Whether a statement (or one inside it) is a global memory access of any kind: only such
/// loops are worth a window.
fn moves_global(s: &Stmt) -> bool {
    let mut any = false;
    let mut expr = |e: &Expr| {
        crate::ir::licm::walk(e, &mut |x| {
            if matches!(x, Expr::Load { .. }) {
                any = true;
            }
        })
    };
    match s {
        Stmt::Assign { value, .. } => expr(value),
        Stmt::Eval(e) => expr(e),
        Stmt::Store { .. } => return true,
        Stmt::If { cond, then, els, .. } => {
            expr(cond);
            any |= then.iter().chain(els).any(moves_global);
        }
        Stmt::Loop { cond, body, step, .. } => {
            if let Some(c) = cond {
                expr(c);
            }
            any |= body.iter().chain(step).any(moves_global);
        }
        _ => {}
    }
    any
}

/// One run of a loop (an activation) in windows.
pub(super) struct Activation {
    locals: Rc<[LocalId]>,
    nested: bool,
    /// The fraction wanted of this loop.
    frac: f64,
    /// The iteration (counted from the loop's start, jumps included) whose top comes next.
    t: u64,
    /// Iterations completed since the current window began.
    run: u64,
    /// Iterations a window runs (before the first decision: what shows a steady state).
    target: u64,
    /// The loop's windows: one every `cycle` iterations, once decided.
    cycle: Option<u64>,
    /// The state at the last iteration tops: active lanes and, per local and lane, its value.
    snaps: Vec<(u32, Vec<V>)>,
    /// The warp's position in its stream at the last top, and the accesses of the last
    /// iteration.
    pos: u64,
    per_iter: u64,
    /// No more jumps in this run.
    done: bool,
    /// The iteration under way only warms the caches.
    warm: bool,
}

/// Per loop statement: the locals it assigns and whether it may run in windows.
type LoopTable = Vec<Option<(Rc<[LocalId]>, bool)>>;

/// How one local moves per iteration, lane by lane (`None`: it stays as it is). Inline lanes:
/// a step is made once per loop activation, and boxing the wider one would allocate there.
#[allow(clippy::large_enum_variant)]
enum Step {
    Int([i128; WARP]),
    Ptr([i64; WARP]),
}

impl Engine<'_> {
    /// A window plan for a run of loop `id`, when the sink wants a fraction of long loops'
    /// iterations and this loop may run in windows.
    pub(super) fn activation(&mut self, id: usize) -> Option<Activation> {
        let w = self.windows.as_mut()?;
        if w.frac >= 1.0 || id == usize::MAX {
            return None;
        }
        let (locals, nested) = w.loops.get(id)?.clone()?;
        let frac = w.frac;
        Some(Activation {
            locals,
            nested,
            frac,
            t: 0,
            run: 0,
            target: STEADY,
            cycle: None,
            snaps: Vec::new(),
            pos: self.boundary.position(),
            per_iter: 0,
            done: false,
            warm: false,
        })
    }

    /// The loop is left: the fraction of its enclosing depth comes back.
    pub(super) fn end_activation(&mut self, a: &Activation) {
        if a.warm {
            self.set_warm(false);
        }
        if let Some(w) = self.windows.as_mut() {
            w.frac = a.frac;
        }
    }

    fn set_warm(&mut self, on: bool) {
        let Some(w) = self.windows.as_mut() else { return };
        let before = w.warm > 0;
        if on {
            w.warm += 1;
        } else {
            w.warm = w.warm.saturating_sub(1);
        }
        let after = w.warm > 0;
        if before != after {
            self.boundary.warm(after);
        }
    }

    /// The top of an iteration (before the loop's test; `first`: the loop's first): records the
    /// state, and where it is steady and a window is over, jumps ahead.
    pub(super) fn window_top(&mut self, a: &mut Activation, first: bool, lm: u32, cond: &Expr, st: &mut WarpState) {
        let pos = self.boundary.position();
        if !first {
            a.t += 1;
            a.run += 1;
            a.per_iter = pos.saturating_sub(a.pos);
        }
        if a.warm {
            // The warming iteration is over: the window's counted iterations begin.
            a.warm = false;
            self.set_warm(false);
            a.run = 0;
        }
        a.pos = pos;
        if a.done || lm == 0 {
            return;
        }
        if a.run + 3 < a.target {
            a.snaps.clear();
            return;
        }
        // The state at this top.
        let mut snap = if a.snaps.len() >= 4 { a.snaps.remove(0).1 } else { Vec::new() };
        snap.clear();
        for &l in a.locals.iter() {
            let v = &st.vars[l.0 as usize];
            snap.extend((0..WARP).map(|lane| v.at(lane)));
        }
        a.snaps.push((lm, snap));
        if a.run < a.target || a.snaps.len() < 4 {
            return;
        }
        let Some(steps) = self.steady(a, lm) else {
            if a.run > a.target + PATIENCE {
                self.give_up(a);
            }
            return;
        };
        let w = if a.nested { STEADY } else { period(&steps).clamp(STEADY, MAX_PERIOD) };
        if a.run < w {
            a.target = w;
            return;
        }
        // Iterations after this one for which the test still holds in every active lane.
        let Some(r) = self.remaining(a, &steps, lm, cond, st) else {
            self.give_up(a);
            return;
        };
        let cycle = match a.cycle {
            Some(c) => c,
            None => {
                let total = a.t + r + 1;
                let n = ((a.frac * total as f64 / w as f64).round() as u64).max(1);
                let n = if total >= MIN_WINDOWS * 2 * w { n.max(MIN_WINDOWS) } else { n };
                let mut c = (total / n).max(2 * w);
                if !a.nested && c >= 2 * w + w {
                    // Windows at one phase of the addresses' period.
                    c -= c % w;
                }
                if c >= total {
                    self.give_up(a);
                    return;
                }
                a.cycle = Some(c);
                a.target = w;
                // Loops inside this one run whole (see the module's doc).
                if let Some(x) = self.windows.as_mut() {
                    x.frac = 1.0;
                }
                c
            }
        };
        // The next window sits in the middle of its cycle (the first one is the loop's start,
        // where the state became steady), after one warming iteration: windows at the starts
        // of their cycles would weigh what changes over a loop (blocks drifting out of step)
        // toward its start. A loop without nested loops keeps its windows at the phase of the
        // loop's start.
        let mut off = (cycle - w) / 2;
        if !a.nested {
            off -= off % w;
        }
        let next = (a.t / cycle + 1) * cycle + off;
        let skip = (next - 1 - a.t).min(r + 1);
        if skip == 0 {
            return;
        }
        self.jump(a, &steps, lm, skip, st);
        self.boundary.skip(a.per_iter.saturating_mul(skip), skip);
        a.t += skip;
        a.run = 0;
        a.snaps.clear();
        a.pos = self.boundary.position();
        if skip <= r {
            // The iteration before the window only warms the caches.
            a.warm = true;
            self.set_warm(true);
        }
    }

    fn give_up(&mut self, a: &mut Activation) {
        a.done = true;
        a.snaps.clear();
        if let Some(x) = self.windows.as_mut() {
            x.frac = a.frac;
        }
    }

    /// Each local's step per iteration over the last four tops, when every one is the same in
    /// every active lane (and the active lanes did not change); `None`: not steady.
    fn steady(&self, a: &Activation, lm: u32) -> Option<Vec<Option<Step>>> {
        if a.snaps.iter().any(|(m, _)| *m != lm) {
            return None;
        }
        let mut out = Vec::with_capacity(a.locals.len());
        for (i, _) in a.locals.iter().enumerate() {
            let at = |s: usize, lane: usize| a.snaps[s].1[i * WARP + lane];
            let mut step: Option<Step> = None;
            for lane in lanes(lm) {
                let v = [at(0, lane), at(1, lane), at(2, lane), at(3, lane)];
                match v.map(|x| x.k) {
                    [K::Int(x0), K::Int(x1), K::Int(x2), K::Int(x3)] => {
                        let d = x1 - x0;
                        if x2 - x1 != d || x3 - x2 != d {
                            return None;
                        }
                        match &mut step {
                            None => {
                                let mut s = [0i128; WARP];
                                s[lane] = d;
                                step = Some(Step::Int(s));
                            }
                            Some(Step::Int(s)) => s[lane] = d,
                            Some(Step::Ptr(_)) => return None,
                        }
                    }
                    [K::Ptr(b0, o0), K::Ptr(b1, o1), K::Ptr(b2, o2), K::Ptr(b3, o3)] => {
                        let d = o1.wrapping_sub(o0);
                        if b1 != b0 || b2 != b0 || b3 != b0 || o2.wrapping_sub(o1) != d || o3.wrapping_sub(o2) != d {
                            return None;
                        }
                        match &mut step {
                            None => {
                                let mut s = [0i64; WARP];
                                s[lane] = d;
                                step = Some(Step::Ptr(s));
                            }
                            Some(Step::Ptr(s)) => s[lane] = d,
                            Some(Step::Int(_)) => return None,
                        }
                    }
                    // Values no address is made of: they stay as they are.
                    [K::Float(_), K::Float(_), K::Float(_), K::Float(_)]
                    | [K::Unknown, K::Unknown, K::Unknown, K::Unknown] => {}
                    [K::PtrUnknown(b0), K::PtrUnknown(b1), K::PtrUnknown(b2), K::PtrUnknown(b3)]
                        if b0 == b1 && b1 == b2 && b2 == b3 => {}
                    [x0, x1, x2, x3] if x0 == x1 && x1 == x2 && x2 == x3 => {}
                    _ => return None,
                }
            }
            let moves = match &step {
                Some(Step::Int(s)) => s.iter().any(|d| *d != 0),
                Some(Step::Ptr(s)) => s.iter().any(|d| *d != 0),
                None => false,
            };
            out.push(if moves { step } else { None });
        }
        Some(out)
    }

    /// The state `n` iterations on from now (lanes of `lm`), written into `st`; `false` when a
    /// local would leave its type's range (the loop's counter would wrap: no jump).
    fn shift(&mut self, a: &Activation, steps: &[Option<Step>], lm: u32, n: u64, st: &mut WarpState) -> bool {
        let snap = &a.snaps.last().expect("a snapshot").1;
        for (i, (&l, step)) in a.locals.iter().zip(steps).enumerate() {
            let Some(step) = step else { continue };
            let ty = match &self.k.locals[l.0 as usize].ty {
                Ty::Int(t) => Some(*t),
                _ => None,
            };
            let mut b = self.pool.lanes();
            for lane in 0..WARP {
                b[lane] = snap[i * WARP + lane];
            }
            for lane in lanes(lm) {
                let v = snap[i * WARP + lane];
                b[lane].k = match (v.k, step) {
                    (K::Int(x), Step::Int(d)) => {
                        let Some(y) = d[lane].checked_mul(n as i128).and_then(|m| x.checked_add(m)) else {
                            self.pool.lanes.push(b);
                            return false;
                        };
                        if ty.is_some_and(|t| t.wrap(y) != y) {
                            self.pool.lanes.push(b);
                            return false;
                        }
                        K::Int(y)
                    }
                    (K::Ptr(base, o), Step::Ptr(d)) => {
                        let Some(y) = d[lane].checked_mul(n as i64).and_then(|m| o.checked_add(m)) else {
                            self.pool.lanes.push(b);
                            return false;
                        };
                        K::Ptr(base, y)
                    }
                    (k, _) => k,
                };
            }
            let v = self.pool.pack(st.alive(), b);
            let old = std::mem::replace(&mut st.vars[l.0 as usize], v);
            self.pool.put(old);
        }
        true
    }

    /// Puts the state of the last top back.
    fn restore(&mut self, a: &Activation, steps: &[Option<Step>], st: &mut WarpState) {
        let snap = &a.snaps.last().expect("a snapshot").1;
        for (i, (&l, step)) in a.locals.iter().zip(steps).enumerate() {
            if step.is_none() {
                continue;
            }
            let mut b = self.pool.lanes();
            b.copy_from_slice(&snap[i * WARP..(i + 1) * WARP]);
            let v = self.pool.pack(st.alive(), b);
            let old = std::mem::replace(&mut st.vars[l.0 as usize], v);
            self.pool.put(old);
        }
    }

    /// Whether the loop's test holds in every lane of `lm`, `n` iterations on.
    fn holds(
        &mut self,
        a: &Activation,
        steps: &[Option<Step>],
        lm: u32,
        cond: &Expr,
        n: u64,
        st: &mut WarpState,
    ) -> bool {
        let ok = self.shift(a, steps, lm, n, st)
            && match self.eval(cond, lm, st) {
                Ok(v) => {
                    let all = lanes(lm).all(|l| match v.at(l).k {
                        K::Int(x) => x != 0,
                        K::Float(f) => f != 0.0,
                        K::Ptr(..) => true,
                        _ => false,
                    });
                    self.pool.put(v);
                    all
                }
                Err(_) => false,
            };
        self.restore(a, steps, st);
        ok
    }

    /// Iterations after the one about to begin for which the test still holds in every active
    /// lane (`None`: it does not even hold now).
    fn remaining(
        &mut self,
        a: &Activation,
        steps: &[Option<Step>],
        lm: u32,
        cond: &Expr,
        st: &mut WarpState,
    ) -> Option<u64> {
        if !self.holds(a, steps, lm, cond, 0, st) {
            return None;
        }
        let (mut lo, mut hi) = (0u64, 1u64);
        while hi <= HORIZON && self.holds(a, steps, lm, cond, hi, st) {
            lo = hi;
            hi *= 2;
        }
        if hi > HORIZON {
            return None;
        }
        // The test holds at `lo`, not at `hi`.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.holds(a, steps, lm, cond, mid, st) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(lo)
    }

    fn jump(&mut self, a: &Activation, steps: &[Option<Step>], lm: u32, n: u64, st: &mut WarpState) {
        let ok = self.shift(a, steps, lm, n, st);
        debug_assert!(ok, "a jump inside the searched range");
        // Addresses the compiler held are stale once their variables moved.
        for (&l, step) in a.locals.iter().zip(steps) {
            if step.is_some() {
                let stale = &self.local_keys[l.0 as usize];
                if !stale.is_empty() {
                    st.held.forget_keys(lm, stale, &self.copy_keys);
                }
            }
        }
    }
}

/// Iterations after which every step is a multiple of a 128-byte line (integer steps taken as
/// 4-byte elements).
fn period(steps: &[Option<Step>]) -> u64 {
    let mut p = 1u64;
    let mut need = |bytes: i128| {
        let g = gcd(bytes.unsigned_abs() % (1 << 64), 128) as u64;
        let q = 128 / g.max(1);
        p = lcm(p, q).min(1 << 16);
    };
    for s in steps.iter().flatten() {
        match s {
            Step::Int(d) => d.iter().filter(|x| **x != 0).for_each(|x| need(*x * 4)),
            Step::Ptr(d) => d.iter().filter(|x| **x != 0).for_each(|x| need(*x as i128)),
        }
    }
    p
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

fn lcm(a: u64, b: u64) -> u64 {
    a / gcd(a as u128, b as u128) as u64 * b
}
