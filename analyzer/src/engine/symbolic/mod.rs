//! The symbolic engine: the reference engine's counts, computed for whole boxes of warp
//! executions at once.
//!
//! A *box* is a set of warp executions described by variables: the block index in each
//! dimension, the warp within a run of warps whose threads differ by a fixed step (a *warp
//! class*), and the iteration of each loop being summarised. Every value a lane computes is an
//! affine [`Form`] over those variables, so one abstract run of a warp stands for every point of
//! the box. The run is exact when every decision it takes (a branch, a loop test, a held load,
//! a wrap-around) is the same at every point; when one is not, the run stops and names a cut
//! that makes it so (the first block past `i < n`, the last iteration of a loop), and the box is
//! run again in pieces. Sector counts need no decision: shifting every lane's address by a
//! multiple of 32 bytes keeps the number of distinct sectors, so a warp instruction is counted
//! once per residue of its (lane-uniform) variable part modulo 32 (128 for shared-memory banks).
//!
//! Loops are summarised by induction: after two iterations the state's change per iteration is
//! read off; one abstract iteration is run with the iteration number as a variable, and the
//! range is accepted when that iteration maps the state at `t` to the state at `t + 1` exactly.
//!
//! What the engine cannot summarise (array contents given by the launch, products of two
//! varying values over many points, too many pieces) makes it give up: the caller then runs the
//! reference engine, which is also what reports every error, so that messages never depend on
//! the engine.

mod form;

pub use form::{Form, Scope, NV};

use super::{
    absolute, address_keys, int_op, lanes, loop_table, may_alias, sectors_of, shared_layout, wavefronts, OpStats, Trace,
};
use super::{count, HELD_MAX, SECTOR, WARP};
use crate::diag::Diagnostic;
use crate::ir::*;
use crate::launch::{ParamValue, Setup};
use crate::source::Span;
use std::collections::{HashMap, HashSet};

/// Why the symbolic engine did not produce a trace.
#[derive(Debug)]
pub enum Fallback {
    /// Outside what it summarises; the reason is for the sheet.
    GiveUp(String),
    /// The launch has an error: the reference engine reports it.
    Error,
    /// Out of time: the analysis is refused (no other engine runs).
    Refused(Diagnostic),
}

/// Steps of abstract execution before the engine gives up.
const STEP_BUDGET: u64 = 20_000_000;
/// Abstract steps after which the engine gives up unless each covers four reference steps.
const EARLY_STEPS: u64 = 131_072;
/// Pieces of the launch before the engine gives up.
const BOX_BUDGET: u64 = 200_000;
/// Loop iterations one summary may cover at most (a loop that runs longer is split).
const HORIZON: i128 = 1 << 40;
/// Enumerating a variable point by point is refused past this many points.
const MAX_POINTS: i128 = 4096;

/// What the symbolic engine did, for the sheet: how much was summarised and how much run point
/// by point.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    /// Abstract steps (statements and loop tests of abstract warps).
    pub steps: u64,
    /// Boxes the launch was counted in (each a set of blocks and warps run once).
    pub pieces: u64,
    /// Pieces that are a single block and warp: enumerated.
    pub single_warps: u64,
    /// Loop iterations of abstract warps run one at a time.
    pub single_iterations: u64,
    /// Loop iterations covered by summaries, and the summaries.
    pub summarised_iterations: u128,
    pub summaries: u64,
}

/// Summarises the whole launch, or says why not. The trace's `work` is the reference engine's
/// (warp-level steps it would take).
pub fn run(kernel: &Kernel, setup: &Setup) -> Result<(Trace, Stats), Fallback> {
    if setup.fills.iter().any(Option::is_some) {
        return Err(Fallback::GiveUp("array contents are given (--fill): values differ per element".into()));
    }
    let mut e = Sym::new(kernel, setup);
    match e.launch() {
        Ok(()) => e.finish(),
        Err(Stop::GiveUp(why)) => {
            // What it spent counts against the budget the reference engine gets next.
            setup.budget.spend(e.steps.saturating_mul(crate::launch::SYMBOLIC_STEP_COST));
            Err(Fallback::GiveUp(why))
        }
        Err(Stop::Error) => Err(Fallback::Error),
        Err(Stop::Refused(d)) => Err(Fallback::Refused(d)),
        Err(Stop::Split(..)) => Err(Fallback::GiveUp("internal: a cut reached no owner".into())),
    }
}

/// How to cut a variable's range.
#[derive(Clone, Copy, Debug)]
enum Cut {
    /// `0..t` and `t..n`.
    At(i128),
    /// Every point on its own.
    Points,
    /// By residue modulo `m`.
    Mod(i128),
}

enum Stop {
    Split(usize, Cut),
    /// An error in the launch: the reference engine reports it, in its own words.
    Error,
    GiveUp(String),
    Refused(Diagnostic),
}

impl From<Diagnostic> for Stop {
    fn from(_: Diagnostic) -> Self {
        Stop::Error
    }
}

type R<T> = std::result::Result<T, Stop>;

fn give_up<T>(why: impl Into<String>) -> R<T> {
    Err(Stop::GiveUp(why.into()))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum SK {
    Int(Form),
    Float(f64),
    /// A float computed from a varying integer: fine as data, cut to points where it decides.
    FloatSym(u8),
    Ptr(Base, Form),
    PtrUnknown(Base),
    Unknown,
    Missing(ParamId),
    Undef,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct SV {
    k: SK,
    data: bool,
}

const UNDEF: SV = SV { k: SK::Undef, data: false };
const UNKNOWN: SV = SV { k: SK::Unknown, data: true };

fn int(f: Form) -> SV {
    SV { k: SK::Int(f), data: false }
}

/// Identical values, floats by their bits.
fn same(a: &SV, b: &SV) -> bool {
    a.data == b.data
        && match (a.k, b.k) {
            (SK::Float(x), SK::Float(y)) => x.to_bits() == y.to_bits(),
            (x, y) => x == y,
        }
}

type L = [SV; WARP];

/// A run of warps `w0, w0 + 1, ..` of a block whose lane `l` has thread index
/// `tid[l] + j·step` in the `j`-th warp of the run, all with the same lanes.
struct WarpClass {
    tid: [[i128; 3]; WARP],
    step: [i128; 3],
    count: i128,
    mask: u32,
}

fn warp_classes(block: [u32; 3]) -> Vec<WarpClass> {
    let [bx, by, _] = block.map(|d| d as u64);
    let threads = block.iter().map(|&d| d as u64).product::<u64>();
    let warps = threads.div_ceil(WARP as u64);
    let shape = |w: u64| {
        let mut tid = [[0i128; 3]; WARP];
        let n = (threads - w * WARP as u64).min(WARP as u64);
        for (l, t) in tid.iter_mut().enumerate().take(n as usize) {
            let lin = w * WARP as u64 + l as u64;
            *t = [(lin % bx) as i128, ((lin / bx) % by) as i128, (lin / (bx * by)) as i128];
        }
        let mask = if n == WARP as u64 { u32::MAX } else { (1u32 << n) - 1 };
        (tid, mask)
    };
    let mut out: Vec<WarpClass> = Vec::new();
    for w in 0..warps {
        let (tid, mask) = shape(w);
        if let Some(c) = out.last_mut() {
            if c.mask == mask {
                let step = [0, 1, 2].map(|d| tid[0][d] - c.tid[0][d]);
                let fits = |j: i128| {
                    lanes(mask).all(|l| {
                        (0..3).all(|d| tid[l][d] - c.tid[l][d] == if j == 1 { step[d] } else { j * c.step[d] })
                    })
                };
                if (c.count == 1 && fits(1)) || (c.count > 1 && fits(c.count)) {
                    if c.count == 1 {
                        c.step = step;
                    }
                    c.count += 1;
                    continue;
                }
            }
        }
        out.push(WarpClass { tid, step: [0; 3], count: 1, mask });
    }
    out
}

/// A held value (the compiler's load elimination), as in the reference engine.
#[derive(Clone)]
struct HeldRow {
    key: u32,
    base: Base,
    lanes: u32,
    off: [Form; WARP],
}

#[derive(Clone)]
struct Promoted {
    depth: usize,
    op: MemOpId,
    lane: usize,
    base: Base,
    off: Form,
}

#[derive(Clone)]
struct Ws {
    vars: Vec<L>,
    mask: u32,
    returned: u32,
    loops: Vec<(u32, u32)>,
    held: Vec<HeldRow>,
    promoted: Vec<Promoted>,
}

impl Ws {
    fn alive(&self) -> u32 {
        self.mask & !self.returned
    }
}

/// Per-iteration change of a loop's state: one constant per lane of every value that moves.
struct Delta {
    vars: Vec<[i128; WARP]>,
    held: Vec<[i128; WARP]>,
    promoted: Vec<i128>,
}

/// Counts for one memory instruction, wide enough for any box.
#[derive(Clone, Default)]
struct Acc {
    executions: u128,
    lanes: u128,
    sectors: u128,
    ideal_sectors: u128,
    sectors_min: u128,
    sectors_max: u128,
    wavefronts: u128,
    ideal_wavefronts: u128,
    unknown_executions: u128,
    data_executions: u128,
    elided_lanes: u128,
    min_off: Option<i64>,
    end_off: Option<i64>,
    base: Option<Base>,
}

/// One box of the launch: per variable (block x, y, z, warp) its first value, step and count.
#[derive(Clone, Copy)]
struct TopBox {
    lo: [i128; 4],
    stride: [i128; 4],
    n: [i128; 4],
}

struct Sym<'a> {
    k: &'a Kernel,
    s: &'a Setup,
    scope: Scope,
    blk: [Form; 3],
    tid: [[Form; 3]; WARP],
    ops: Vec<Acc>,
    keys: Vec<u32>,
    promoted_ops: Vec<bool>,
    restrict: Vec<bool>,
    shared_base: Vec<i64>,
    op_loops: Vec<Vec<usize>>,
    loop_spans: Vec<Span>,
    loop_ids: HashMap<Span, usize>,
    varying: Vec<bool>,
    data_branches: HashSet<Span>,
    steps: u64,
    boxes: u64,
    stats: Stats,
    /// The reference engine's warp-level steps for what has been counted.
    work: u128,
}

impl<'a> Sym<'a> {
    fn new(k: &'a Kernel, s: &'a Setup) -> Self {
        let keys = address_keys(k);
        let (op_loops, loop_spans, loop_ids) = loop_table(k);
        Sym {
            k,
            s,
            scope: Scope { n: [1; NV], used: 0 },
            blk: [Form::constant(0); 3],
            tid: [[Form::constant(0); 3]; WARP],
            ops: vec![Acc::default(); k.mem_ops.len()],
            keys,
            promoted_ops: crate::ir::licm::promoted_stores(k),
            restrict: (0..k.params.len()).map(|p| k.is_restrict(Base::Param(ParamId(p as u32)))).collect(),
            shared_base: shared_layout(k),
            op_loops,
            varying: vec![false; loop_spans.len()],
            loop_spans,
            loop_ids,
            data_branches: HashSet::new(),
            steps: 0,
            boxes: 0,
            stats: Stats::default(),
            work: 0,
        }
    }

    fn finish(self) -> Result<(Trace, Stats), Fallback> {
        let narrow = |x: u128| u64::try_from(x).map_err(|_| Fallback::GiveUp("a count exceeds 2^64".into()));
        let mut ops = Vec::with_capacity(self.ops.len());
        for (i, a) in self.ops.iter().enumerate() {
            ops.push(OpStats {
                executions: narrow(a.executions)?,
                lanes: narrow(a.lanes)?,
                sectors: narrow(a.sectors)?,
                ideal_sectors: narrow(a.ideal_sectors)?,
                sectors_min: narrow(a.sectors_min)?,
                sectors_max: narrow(a.sectors_max)?,
                wavefronts: narrow(a.wavefronts)?,
                ideal_wavefronts: narrow(a.ideal_wavefronts)?,
                unknown_executions: narrow(a.unknown_executions)?,
                data_executions: narrow(a.data_executions)?,
                elided_lanes: narrow(a.elided_lanes)?,
                varying_trip: self.op_loops[i].iter().any(|&l| self.varying[l]),
                min_off: a.min_off,
                end_off: a.end_off,
                base: a.base,
            });
        }
        let mut data_branches: Vec<Span> = self.data_branches.into_iter().collect();
        data_branches.sort_by_key(|s| (s.file, s.line, s.column));
        let varying_loops = self.loop_spans.iter().zip(&self.varying).filter(|(_, v)| **v).map(|(s, _)| *s).collect();
        let trace = Trace { ops, data_branches, varying_loops, used_fills: Vec::new(), work: narrow(self.work)? };
        Ok((trace, Stats { steps: self.steps, ..self.stats }))
    }

    fn checkpoint(&self) -> (Vec<Acc>, u128) {
        (self.ops.clone(), self.work)
    }
    fn restore(&mut self, c: (Vec<Acc>, u128)) {
        (self.ops, self.work) = c;
    }

    /// One reference-engine step at every point of the box.
    fn tick(&mut self) {
        self.work = self.work.saturating_add(self.scope.volume());
    }

    fn step(&mut self) -> R<()> {
        self.steps += 1;
        // The launch's work budget bounds this engine's effort too, each abstract step costing
        // what it takes in time; giving up leaves the reference engine the rest.
        let cost = crate::launch::SYMBOLIC_STEP_COST;
        let budget = STEP_BUDGET.min(self.s.max_work / cost);
        if self.steps > budget {
            return give_up(format!("more than {budget} abstract steps"));
        }
        if self.steps.is_multiple_of(crate::launch::CHECK_EVERY) {
            if let Err(d) = self.s.budget.check(self.steps * cost, self.s.max_work, None) {
                return Err(Stop::Refused(d));
            }
        }
        // An abstract step costs several of the reference's: when the summaries so far cover
        // few steps each, enumeration is the faster way.
        if self.steps.is_multiple_of(65_536) && self.steps >= EARLY_STEPS && (self.steps as u128) * 4 > self.work {
            return give_up(format!(
                "{} abstract steps covered only {} warp-level steps: enumerating is faster",
                self.steps, self.work
            ));
        }
        Ok(())
    }

    // ---- the launch, box by box ----

    fn launch(&mut self) -> R<()> {
        let g = self.s.grid.map(|d| d as i128);
        for class in warp_classes(self.s.block) {
            let mut work = vec![TopBox { lo: [0; 4], stride: [1; 4], n: [g[0], g[1], g[2], class.count] }];
            while let Some(b) = work.pop() {
                if b.n.contains(&0) {
                    continue;
                }
                self.boxes += 1;
                if self.boxes > BOX_BUDGET {
                    return give_up(format!("the launch splits into more than {BOX_BUDGET} pieces"));
                }
                let save = self.checkpoint();
                match self.run_box(&b, &class) {
                    Ok(()) => {
                        self.stats.pieces += 1;
                        self.stats.single_warps += b.n.iter().all(|&n| n == 1) as u64;
                    }
                    Err(Stop::Split(v, cut)) if v < 4 => {
                        self.restore(save);
                        let (lo, st, n) = (b.lo[v], b.stride[v], b.n[v]);
                        let mut piece = |lo: i128, stride: i128, n: i128| {
                            let mut p = b;
                            (p.lo[v], p.stride[v], p.n[v]) = (lo, stride, n);
                            work.push(p);
                        };
                        match cut {
                            Cut::At(t) if t > 0 && t < n => {
                                piece(lo + st * t, st, n - t);
                                piece(lo, st, t);
                            }
                            Cut::Mod(m) if m > 1 && m < n => {
                                for j in (0..m).rev() {
                                    piece(lo + st * j, st * m, (n - j + m - 1) / m);
                                }
                            }
                            _ if n <= MAX_POINTS => {
                                for t in (0..n).rev() {
                                    piece(lo + st * t, st, 1);
                                }
                            }
                            _ => return give_up(format!("a value is not affine over {n} blocks or warps")),
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    fn run_box(&mut self, b: &TopBox, class: &WarpClass) -> R<()> {
        self.scope = Scope { n: [1; NV], used: 4 };
        self.scope.n[..4].copy_from_slice(&b.n);
        let var = |v: usize, lo: i128, stride: i128, n: i128| {
            let mut f = Form::constant(lo);
            if n > 1 {
                f.a[v] = stride as i64;
            }
            f
        };
        for d in 0..3 {
            self.blk[d] = var(d, b.lo[d], b.stride[d], b.n[d]);
        }
        for l in lanes(class.mask) {
            for d in 0..3 {
                let step = class.step[d];
                self.tid[l][d] = var(3, class.tid[l][d] + step * b.lo[3], step * b.stride[3], b.n[3]);
            }
        }
        let mut st = Ws {
            vars: vec![[UNDEF; WARP]; self.k.locals.len()],
            mask: class.mask,
            returned: 0,
            loops: Vec::new(),
            held: Vec::new(),
            promoted: Vec::new(),
        };
        self.exec_block(&self.k.body, class.mask, &mut st)
    }

    // ---- statements ----

    fn live(&self, mask: u32, st: &Ws) -> u32 {
        let mut m = mask & !st.returned;
        if let Some(f) = st.loops.last() {
            m &= !(f.0 | f.1);
        }
        m
    }

    fn exec_block(&mut self, stmts: &[Stmt], mask: u32, st: &mut Ws) -> R<()> {
        for s in stmts {
            let m = self.live(mask, st);
            if m == 0 {
                return Ok(());
            }
            self.exec(s, m, st)?;
        }
        Ok(())
    }

    fn exec(&mut self, s: &Stmt, m: u32, st: &mut Ws) -> R<()> {
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
            }
            Stmt::Store { op, addr, value } => {
                self.eval(value, m, st)?;
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
                let id = if *synthetic { usize::MAX } else { self.loop_ids[span] };
                st.loops.push((0, 0));
                let r = self.run_loop(cond.as_ref(), body, step, *test_first, *span, m, st, id);
                st.loops.pop();
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
            Stmt::Barrier => {
                for r in &mut st.held {
                    r.lanes &= !m;
                }
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn run_loop(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        span: Span,
        m: u32,
        st: &mut Ws,
        id: usize,
    ) -> R<()> {
        let mut lm = m;
        let mut first = true;
        let mut prev: Option<(Ws, u32)> = None;
        // Iterations to run one by one before the next attempt at a summary.
        let mut wait = 0u64;
        let mut failures = 0u32;
        let mut total: i128 = 0;
        loop {
            self.step()?;
            if total > HORIZON {
                return give_up("a loop runs more than 2^40 iterations");
            }
            if !first && wait == 0 && self.scope.used < NV {
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
    fn iteration(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        test_first: bool,
        first: bool,
        span: Span,
        lm: &mut u32,
        st: &mut Ws,
        id: usize,
    ) -> R<bool> {
        if let Some(c) = cond {
            if test_first || !first {
                let t = if *lm == 0 {
                    0
                } else {
                    let v = self.eval(c, *lm, st)?;
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
    fn summarise(
        &mut self,
        cond: Option<&Expr>,
        body: &[Stmt],
        step: &[Stmt],
        span: Span,
        lm: &mut u32,
        st: &mut Ws,
        id: usize,
        delta: &Delta,
    ) -> R<Option<i128>> {
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
    fn truth(&mut self, c: &L, m: u32, span: Span) -> R<u32> {
        let mut t = 0u32;
        for l in lanes(m) {
            if self.lane_truth(&c[l], span)? {
                t |= 1 << l;
            }
        }
        Ok(t)
    }

    fn lane_truth(&mut self, v: &SV, span: Span) -> R<bool> {
        Ok(match v.k {
            SK::Int(x) => self.nonzero(&x)?,
            SK::Float(f) => f != 0.0,
            SK::FloatSym(vars) => return Err(points(vars)),
            SK::Ptr(..) | SK::PtrUnknown(_) => true,
            SK::Unknown => {
                self.data_branches.insert(span);
                true
            }
            SK::Missing(_) | SK::Undef => return Err(Stop::Error),
        })
    }

    fn truth_loop(&mut self, c: &L, m: u32, span: Span) -> R<u32> {
        if lanes(m).any(|l| matches!(c[l].k, SK::Unknown)) {
            return Err(Stop::Error);
        }
        self.truth(c, m, span)
    }

    /// Whether `x < 0` at every point (true), at none (false), or a cut.
    fn negative(&self, x: &Form) -> R<bool> {
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

    fn zero(&self, x: &Form) -> R<bool> {
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

    fn nonzero(&self, x: &Form) -> R<bool> {
        Ok(!self.zero(x)?)
    }

    // ---- integer arithmetic on forms ----

    fn wrap(&self, ty: IntTy, x: Form) -> R<Form> {
        if x.is_const() {
            return Ok(Form::constant(ty.wrap(x.c)));
        }
        if ty.bits < 2 || ty.bits > 64 {
            return Err(points_of(&x));
        }
        let size = 1i128 << ty.bits;
        let min = if ty.signed { -(size / 2) } else { 0 };
        let (lo, hi) = self.scope.range(&x);
        // Which copy of the type's range `lo` falls in; the form wraps by that many sizes if
        // `hi` falls in the same one.
        let q = (lo - min).div_euclid(size);
        if (hi - min).div_euclid(size) == q {
            return x.plus(-q * size).ok_or_else(overflow);
        }
        let edge = x.plus(-(min + (q + 1) * size)).ok_or_else(overflow)?;
        let (v, t) = self.scope.sign_cut(&edge);
        Err(Stop::Split(v, Cut::At(t)))
    }

    /// `floor(x / d)` for `d > 0`, when it is affine.
    fn floor_div(&self, x: &Form, d: i128) -> R<Form> {
        let mut out = Form::constant(x.c.div_euclid(d));
        for v in 0..NV {
            let a = x.a[v] as i128;
            if a.rem_euclid(d) != 0 {
                return Err(Stop::Split(v, Cut::Mod(d / form::gcd(a.rem_euclid(d), d))));
            }
            out.a[v] = (a / d) as i64;
        }
        // The constant part's remainder is carried by `c`; exact because every other term is a
        // multiple of `d`.
        Ok(out)
    }

    /// C's truncating `x / d`.
    fn trunc_div(&self, x: &Form, d: i128) -> R<Form> {
        if d < 0 {
            return self.trunc_div(x, -d)?.scale(-1).ok_or_else(overflow);
        }
        if !self.negative(x)? {
            self.floor_div(x, d)
        } else {
            let neg = x.scale(-1).ok_or_else(overflow)?;
            self.floor_div(&neg, d)?.scale(-1).ok_or_else(overflow)
        }
    }

    /// `x & m`, `x | m`, `x ^ m` for a constant `m`, when affine.
    fn bits(&self, op: BinOp, x: &Form, m: i128) -> R<Form> {
        if m < 0 {
            return match op {
                // x & m = x - (x & !m): the bits outside m, taken away.
                BinOp::And => x.sub(&self.bits(BinOp::And, x, !m)?).ok_or_else(overflow),
                _ => Err(points_of(x)),
            };
        }
        let width = 128 - m.leading_zeros();
        let size = 1i128 << width;
        // The low `width` bits of x are constant when every variable's step is a multiple of
        // 2^width; otherwise cut by residue.
        for v in 0..NV {
            if (x.a[v] as i128).rem_euclid(size) != 0 {
                let a = (x.a[v] as i128).rem_euclid(size);
                return Err(Stop::Split(v, Cut::Mod(size / form::gcd(a, size))));
            }
        }
        let low = x.c.rem_euclid(size);
        let and = low & m;
        let r = match op {
            BinOp::And => Form::constant(and),
            BinOp::Or => x.plus(m - and).ok_or_else(overflow)?,
            _ => x.plus(m - 2 * and).ok_or_else(overflow)?,
        };
        Ok(r)
    }

    fn int_op(&self, op: BinOp, ty: IntTy, x: Form, y: Form, span: Span) -> R<Form> {
        if x.is_const() && y.is_const() {
            return Ok(Form::constant(int_op(op, ty, x.c, y.c, span)?));
        }
        let bool_of = |b: bool| Ok(Form::constant(b as i128));
        let d = || x.sub(&y).ok_or_else(overflow);
        match op {
            BinOp::Add => self.wrap(ty, x.add(&y).ok_or_else(overflow)?),
            BinOp::Sub => self.wrap(ty, d()?),
            BinOp::Mul if y.is_const() => self.wrap(ty, x.scale(y.c).ok_or_else(overflow)?),
            BinOp::Mul if x.is_const() => self.wrap(ty, y.scale(x.c).ok_or_else(overflow)?),
            BinOp::Div | BinOp::Rem if y.is_const() => {
                if y.c == 0 {
                    // The reference engine reports it.
                    return Err(Stop::Error);
                }
                let q = self.trunc_div(&x, y.c)?;
                let r = if op == BinOp::Div {
                    q
                } else {
                    x.sub(&q.scale(y.c).ok_or_else(overflow)?).ok_or_else(overflow)?
                };
                self.wrap(ty, r)
            }
            BinOp::Shl | BinOp::Shr if y.is_const() => {
                if y.c < 0 || y.c >= ty.bits.max(32) as i128 {
                    return Err(Stop::Error);
                }
                if op == BinOp::Shl {
                    self.wrap(ty, x.scale(1i128 << y.c).ok_or_else(overflow)?)
                } else {
                    self.wrap(ty, self.floor_div(&x, 1i128 << y.c)?)
                }
            }
            BinOp::And | BinOp::Or | BinOp::Xor if y.is_const() || x.is_const() => {
                let (v, m) = if y.is_const() { (x, y.c) } else { (y, x.c) };
                self.wrap(ty, self.bits(op, &v, m)?)
            }
            BinOp::Lt => bool_of(self.negative(&d()?)?),
            BinOp::Gt => bool_of(self.negative(&d()?.scale(-1).ok_or_else(overflow)?)?),
            BinOp::Le => bool_of(self.negative(&d()?.plus(-1).ok_or_else(overflow)?)?),
            BinOp::Ge => bool_of(self.negative(&d()?.scale(-1).ok_or_else(overflow)?.plus(-1).ok_or_else(overflow)?)?),
            BinOp::Eq => bool_of(self.zero(&d()?)?),
            BinOp::Ne => bool_of(!self.zero(&d()?)?),
            BinOp::Min | BinOp::Max => {
                let x_less = self.negative(&d()?)?;
                Ok(if x_less == (op == BinOp::Min) { x } else { y })
            }
            // A product, quotient or bit operation of two varying values: one of them point
            // by point.
            _ => Err(points_of(if y.is_const() { &x } else { &y })),
        }
    }

    fn int_binary(&self, op: BinOp, ty: IntTy, a: SV, b: SV, span: Span) -> R<SV> {
        let data = a.data || b.data;
        let (x, y) = match (a.k, b.k) {
            (SK::Int(x), SK::Int(y)) => (x, y),
            (SK::Missing(p), _) | (_, SK::Missing(p)) => return Ok(SV { k: SK::Missing(p), data }),
            (SK::Undef, _) | (_, SK::Undef) => return Ok(UNDEF),
            (SK::Ptr(ba, oa), SK::Ptr(bb, ob)) if ba == bb => (oa, ob),
            _ => return Ok(UNKNOWN),
        };
        Ok(SV { k: SK::Int(self.int_op(op, ty, x, y, span)?), data })
    }

    // ---- expressions ----

    fn param_value(&self, p: ParamId) -> SV {
        match &self.k.param(p).ty {
            Ty::Ptr(_) => SV { k: SK::Ptr(Base::Param(p), Form::constant(0)), data: false },
            _ => match self.s.values[p.0 as usize] {
                Some(ParamValue::Int(i)) => int(Form::constant(i)),
                Some(ParamValue::Float(f)) => SV { k: SK::Float(f), data: false },
                None => SV { k: SK::Missing(p), data: false },
            },
        }
    }

    fn builtin(&self, b: Builtin, l: usize) -> Form {
        let s = self.s;
        match b {
            Builtin::ThreadIdx(d) => self.tid[l][d as usize],
            Builtin::BlockIdx(d) => self.blk[d as usize],
            Builtin::BlockDim(d) => Form::constant(s.block[d as usize] as i128),
            Builtin::GridDim(d) => Form::constant(s.grid[d as usize] as i128),
            Builtin::WarpSize => Form::constant(WARP as i128),
        }
    }

    fn eval(&mut self, e: &Expr, m: u32, st: &mut Ws) -> R<L> {
        let mut out = [UNDEF; WARP];
        if m == 0 {
            return Ok(out);
        }
        match e {
            Expr::Int(v, _) => fill(&mut out, m, int(Form::constant(*v))),
            Expr::Float(f) => fill(&mut out, m, SV { k: SK::Float(*f), data: false }),
            Expr::Local(id) => {
                let src = &st.vars[id.0 as usize];
                for l in lanes(m) {
                    out[l] = src[l];
                }
            }
            Expr::Param(p) => fill(&mut out, m, self.param_value(*p)),
            Expr::Builtin(b) => {
                for l in lanes(m) {
                    out[l] = int(self.builtin(*b, l));
                }
            }
            Expr::SharedBase(id) => fill(
                &mut out,
                m,
                SV {
                    k: SK::Ptr(Base::Shared(*id), Form::constant(self.shared_base[id.0 as usize] as i128)),
                    data: false,
                },
            ),
            Expr::Binary { op, ty, lhs, rhs, span } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = self.int_binary(*op, *ty, a[l], b[l], *span)?;
                }
            }
            Expr::FloatBinary { op, lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = float_binary(*op, a[l], b[l])?;
                }
            }
            Expr::Unary { op, ty, arg } => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = self.unary(*op, *ty, a[l])?;
                }
            }
            Expr::ToInt { ty, arg } => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = self.to_int(*ty, a[l])?;
                }
            }
            Expr::ToFloat(arg) => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    let x = a[l];
                    out[l] = match x.k {
                        SK::Int(f) if f.is_const() => SV { k: SK::Float(f.c as f64), data: x.data },
                        SK::Int(f) => SV { k: SK::FloatSym(var_mask(&f)), data: x.data },
                        _ => x,
                    };
                }
            }
            Expr::Logical { and, lhs, rhs } => {
                let and = *and;
                let a = self.eval(lhs, m, st)?;
                let mut need = 0u32;
                for l in lanes(m) {
                    let v = a[l];
                    out[l] = match self.decided(v, and)? {
                        Some(r) => r,
                        None => {
                            need |= 1 << l;
                            v
                        }
                    };
                }
                if need != 0 {
                    let b = self.eval(rhs, need, st)?;
                    for l in lanes(need) {
                        out[l] = self.logical_combine(out[l], b[l])?;
                    }
                }
            }
            Expr::Select { cond, then, els } => {
                let c = self.eval(cond, m, st)?;
                let span = match &**cond {
                    Expr::Binary { span, .. } => *span,
                    _ => self.k.span,
                };
                let t = self.truth(&c, m, span)?;
                let f = m & !t;
                if t != 0 {
                    let a = self.eval(then, t, st)?;
                    for l in lanes(t) {
                        out[l] = a[l];
                    }
                }
                if f != 0 {
                    let b = self.eval(els, f, st)?;
                    for l in lanes(f) {
                        out[l] = b[l];
                    }
                }
            }
            Expr::PtrOffset { ptr, bytes } => {
                let p = self.eval(ptr, m, st)?;
                let b = self.eval(bytes, m, st)?;
                for l in lanes(m) {
                    let (p, b) = (p[l], b[l]);
                    let data = p.data || b.data;
                    out[l] = match (p.k, b.k) {
                        (SK::Ptr(base, o), SK::Int(d)) => {
                            SV { k: SK::Ptr(base, self.wrap64(o.add(&d).ok_or_else(overflow)?)?), data }
                        }
                        (SK::Ptr(base, _), SK::Unknown) | (SK::PtrUnknown(base), _) => {
                            SV { k: SK::PtrUnknown(base), data }
                        }
                        (SK::Missing(q), _) | (_, SK::Missing(q)) => SV { k: SK::Missing(q), data },
                        (SK::Undef, _) | (_, SK::Undef) => UNDEF,
                        _ => UNKNOWN,
                    };
                }
            }
            Expr::PtrDiff { lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = match (a[l].k, b[l].k) {
                        (SK::Ptr(x, o1), SK::Ptr(y, o2)) if x == y => {
                            SV { k: SK::Int(o1.sub(&o2).ok_or_else(overflow)?), data: a[l].data || b[l].data }
                        }
                        _ => UNKNOWN,
                    };
                }
            }
            Expr::Load { op, addr } => {
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
                fill(&mut out, m, UNKNOWN);
            }
            Expr::Opaque { args, .. } => {
                let mut data = false;
                let mut missing = None;
                for a in args {
                    let v = self.eval(a, m, st)?;
                    for l in lanes(m) {
                        data |= v[l].data;
                        if let SK::Missing(p) = v[l].k {
                            missing = Some(p);
                        }
                    }
                }
                let k = match missing {
                    Some(p) => SK::Missing(p),
                    None => SK::Unknown,
                };
                fill(&mut out, m, SV { k, data: data || missing.is_none() });
            }
            Expr::Warp { op, ty, args, .. } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a, m, st)?);
                }
                out = super::warp::warp_op(*op, *ty, m, &vals, &SymLanes, UNDEF)?;
            }
        }
        Ok(out)
    }

    /// Pointer offsets are 64-bit and wrap as the reference's `wrapping_add` does.
    fn wrap64(&self, x: Form) -> R<Form> {
        self.wrap(IntTy::I64, x)
    }

    /// The lane's `&&`/`||` result when the left side decides it.
    fn decided(&self, v: SV, and: bool) -> R<Option<SV>> {
        let r = |v: SV| Some(SV { k: SK::Int(Form::constant(!and as i128)), data: v.data });
        Ok(match v.k {
            SK::Int(x) if self.nonzero(&x)? != and => r(v),
            SK::Float(f) if (f != 0.0) != and => r(v),
            SK::FloatSym(vars) => return Err(points(vars)),
            SK::Ptr(..) | SK::PtrUnknown(_) if !and => Some(int(Form::constant(1))),
            _ => None,
        })
    }

    fn logical_combine(&self, a: SV, b: SV) -> R<SV> {
        let data = a.data || b.data;
        let truth = |v: SV| -> R<Option<bool>> {
            Ok(match v.k {
                SK::Int(x) => Some(self.nonzero(&x)?),
                SK::Float(f) => Some(f != 0.0),
                SK::FloatSym(vars) => return Err(points(vars)),
                SK::Ptr(..) => Some(true),
                _ => None,
            })
        };
        Ok(match (a.k, b.k) {
            (SK::Missing(p), _) | (_, SK::Missing(p)) => SV { k: SK::Missing(p), data },
            (SK::Undef, _) | (_, SK::Undef) => UNDEF,
            _ => match truth(b)? {
                Some(t) if truth(a)?.is_some() => SV { k: SK::Int(Form::constant(t as i128)), data },
                _ => UNKNOWN,
            },
        })
    }

    fn unary(&self, op: UnOp, ty: IntTy, a: SV) -> R<SV> {
        let k = match (op, a.k) {
            (UnOp::Neg, SK::Int(x)) => SK::Int(self.wrap(ty, x.scale(-1).ok_or_else(overflow)?)?),
            (UnOp::Neg, SK::Float(f)) => SK::Float(-f),
            (UnOp::Neg, SK::FloatSym(v)) => SK::FloatSym(v),
            (UnOp::Not, SK::Int(x)) => {
                SK::Int(self.wrap(ty, x.scale(-1).and_then(|x| x.plus(-1)).ok_or_else(overflow)?)?)
            }
            (UnOp::LogicalNot, SK::Int(x)) => SK::Int(Form::constant(self.zero(&x)? as i128)),
            (UnOp::LogicalNot, SK::Float(f)) => SK::Int(Form::constant((f == 0.0) as i128)),
            (UnOp::LogicalNot, SK::FloatSym(v)) => return Err(points(v)),
            (UnOp::LogicalNot, SK::Ptr(..)) => SK::Int(Form::constant(0)),
            (_, SK::Missing(p)) => SK::Missing(p),
            (_, SK::Undef) => SK::Undef,
            _ => SK::Unknown,
        };
        Ok(SV { k, data: a.data || k == SK::Unknown })
    }

    fn to_int(&self, ty: IntTy, a: SV) -> R<SV> {
        let k = match a.k {
            SK::Int(x) => SK::Int(self.wrap(ty, x)?),
            SK::Float(f) if f.is_finite() => SK::Int(Form::constant(ty.wrap(f.trunc() as i128))),
            SK::FloatSym(v) => return Err(points(v)),
            SK::Ptr(b, off) => {
                let at = absolute(self.s, b, 0) as i128;
                SK::Int(self.wrap(ty, off.plus(at).ok_or_else(overflow)?)?)
            }
            SK::Float(_) | SK::PtrUnknown(_) | SK::Unknown => SK::Unknown,
            other => other,
        };
        Ok(SV { k, data: a.data || k == SK::Unknown })
    }

    // ---- memory ----

    /// Whether lane `l` holds the value at `off` (load elimination), decided over the box.
    fn holds(&self, st: &Ws, key: u32, b: Base, l: usize, off: &Form) -> R<bool> {
        let Some(r) = st.held.iter().find(|r| r.key == key && r.base == b) else { return Ok(false) };
        if r.lanes >> l & 1 == 0 {
            return Ok(false);
        }
        self.zero(&off.sub(&r.off[l]).ok_or_else(overflow)?)
    }

    fn remember(st: &mut Ws, key: u32, b: Base, l: usize, off: Form) -> R<()> {
        let i = match st.held.iter().position(|r| r.key == key && r.base == b) {
            Some(i) => i,
            None => {
                if st.held.len() >= HELD_MAX {
                    return give_up("more held values than the load-elimination model keeps");
                }
                st.held.push(HeldRow { key, base: b, lanes: 0, off: [Form::constant(0); WARP] });
                st.held.len() - 1
            }
        };
        st.held[i].off[l] = off;
        st.held[i].lanes |= 1 << l;
        Ok(())
    }

    /// Lanes `m` write memory at `a`: what each held that the write may change (anything, for
    /// an address the analysis does not know) is no longer held.
    fn forget(st: &mut Ws, a: &L, m: u32, restrict: &[bool]) {
        for l in lanes(m) {
            let hit = a[l].k;
            for r in &mut st.held {
                let drop = match hit {
                    SK::Ptr(b, _) | SK::PtrUnknown(b) => may_alias(r.base, b, restrict),
                    _ => true,
                };
                if r.lanes >> l & 1 == 1 && drop {
                    r.lanes &= !(1 << l);
                }
            }
        }
    }

    fn access(&mut self, id: MemOpId, a: &L, m: u32, st: &mut Ws) -> R<()> {
        let op = self.k.mem_op(id);
        let key = self.keys[id.0 as usize];
        let gvn = op.kind == AccessKind::Load && !op.volatile;
        let mut known: Vec<(usize, Base, Form)> = Vec::with_capacity(WARP);
        let (mut n_unknown, mut active, mut data, mut base_of, mut elided) = (0u64, 0u32, false, None, 0u64);
        for l in lanes(m) {
            let al = a[l];
            let (base, off) = match al.k {
                SK::Ptr(b, o) => (Some(b), Some(o)),
                SK::PtrUnknown(b) => (Some(b), None),
                SK::Missing(_) | SK::Undef => return Err(Stop::Error),
                _ => (None, None),
            };
            data |= al.data;
            if let Some(b) = base {
                base_of = Some(b);
            }
            if let (true, Some(b), Some(o)) = (gvn, base, off) {
                if self.holds(st, key, b, l, &o)? {
                    elided += 1;
                    continue;
                }
            }
            active |= 1 << l;
            match (base, off) {
                (Some(b), Some(o)) => known.push((l, b, o)),
                _ => n_unknown += 1,
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
        match op.kind {
            AccessKind::Load if op.volatile => {}
            AccessKind::AsyncCopy => {}
            AccessKind::Red | AccessKind::Atom => {
                Self::forget(st, a, m, &self.restrict);
            }
            AccessKind::Load => {
                for l in lanes(active) {
                    if let SK::Ptr(b, o) = a[l].k {
                        Self::remember(st, key, b, l, o)?;
                    }
                }
            }
            AccessKind::Store => {
                Self::forget(st, a, m, &self.restrict);
                for l in lanes(m) {
                    if let SK::Ptr(b, o) = a[l].k {
                        Self::remember(st, key, b, l, o)?;
                    }
                }
            }
        }
        if active == 0 {
            return Ok(());
        }
        if self.promoted_ops[id.0 as usize] && n_unknown == 0 && !st.loops.is_empty() {
            let depth = st.loops.len();
            for l in lanes(active) {
                if let SK::Ptr(b, o) = a[l].k {
                    st.promoted.retain(|p| !(p.op == id && p.lane == l));
                    st.promoted.push(Promoted { depth, op: id, lane: l, base: b, off: o });
                }
            }
            return Ok(());
        }
        self.record(id, &known, n_unknown, active.count_ones() as u64, data, base_of)
    }

    fn flush_promoted(&mut self, st: &mut Ws) -> R<()> {
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
    fn record(
        &mut self,
        id: MemOpId,
        known: &[(usize, Base, Form)],
        n_unknown: u64,
        lanes_active: u64,
        data: bool,
        base: Option<Base>,
    ) -> R<()> {
        let op = self.k.mem_op(id);
        let width = op.width;
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
                    let k = if op.kind.is_atomic() && !op.warp_aggregated {
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
                    return Err(Stop::Error);
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
        }
        Ok(())
    }
}

/// The symbolic engine's lane values for the warp intrinsics: an integer that varies over the
/// box cannot be decided once for every point, so the engine gives up (the reference engine
/// then enumerates).
struct SymLanes;

impl super::warp::LaneValues<SV, Stop> for SymLanes {
    fn read(&self, v: &SV) -> R<super::warp::Lane<SV>> {
        use super::warp::Lane;
        Ok(match v.k {
            SK::Int(f) if f.is_const() => Lane::Int(f.c, v.data),
            SK::Int(_) => return give_up("a warp intrinsic of a value that varies between warps or iterations"),
            SK::Missing(_) | SK::Undef => Lane::Other(*v),
            _ => Lane::Unknown,
        })
    }
    fn int(&self, x: i128, data: bool) -> SV {
        SV { k: SK::Int(Form::constant(x)), data }
    }
    fn unknown(&self) -> SV {
        UNKNOWN
    }
}

fn fill(out: &mut L, m: u32, v: SV) {
    for l in lanes(m) {
        out[l] = v;
    }
}

fn overflow() -> Stop {
    Stop::GiveUp("an affine coefficient overflows".into())
}

fn var_mask(f: &Form) -> u8 {
    (0..NV).filter(|&v| f.a[v] != 0).fold(0u8, |m, v| m | 1 << v)
}

/// Cut the innermost of `vars` into points.
fn points(vars: u8) -> Stop {
    match (0..NV).rev().find(|&v| vars >> v & 1 == 1) {
        Some(v) => Stop::Split(v, Cut::Points),
        None => Stop::GiveUp("internal: a constant float marked varying".into()),
    }
}

fn points_of(f: &Form) -> Stop {
    points(var_mask(f))
}

fn float_binary(op: BinOp, a: SV, b: SV) -> R<SV> {
    let data = a.data || b.data;
    match (a.k, b.k) {
        (SK::Missing(p), _) | (_, SK::Missing(p)) => return Ok(SV { k: SK::Missing(p), data }),
        (SK::Undef, _) | (_, SK::Undef) => return Ok(UNDEF),
        _ => {}
    }
    let f = |v: SV| match v.k {
        SK::Float(f) => Some(Ok(f)),
        SK::Int(i) if i.is_const() => Some(Ok(i.c as f64)),
        SK::Int(i) => Some(Err(var_mask(&i))),
        SK::FloatSym(m) => Some(Err(m)),
        _ => None,
    };
    let (Some(x), Some(y)) = (f(a), f(b)) else { return Ok(UNKNOWN) };
    let (x, y) = match (x, y) {
        (Ok(x), Ok(y)) => (x, y),
        (x, y) => {
            let vars = x.err().unwrap_or(0) | y.err().unwrap_or(0);
            let arith = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max);
            return if arith {
                Ok(SV { k: SK::FloatSym(vars), data })
            } else if is_cmp(op) {
                Err(points(vars))
            } else {
                Ok(UNKNOWN)
            };
        }
    };
    let c = |c: bool| Ok(SV { k: SK::Int(Form::constant(c as i128)), data });
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => x / y,
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
        BinOp::Lt => return c(x < y),
        BinOp::Le => return c(x <= y),
        BinOp::Gt => return c(x > y),
        BinOp::Ge => return c(x >= y),
        BinOp::Eq => return c(x == y),
        BinOp::Ne => return c(x != y),
        _ => return Ok(UNKNOWN),
    };
    Ok(SV { k: SK::Float(r), data })
}

fn is_cmp(op: BinOp) -> bool {
    matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
}

// ---- loop summaries ----

/// How one value moved from `p` to `c`: a constant per lane, or `None` when not by a constant.
fn moved(p: &SV, c: &SV) -> Option<i128> {
    if p.data != c.data {
        return None;
    }
    match (p.k, c.k) {
        (SK::Int(x), SK::Int(y)) if x.a == y.a => Some(y.c - x.c),
        (SK::Ptr(b1, x), SK::Ptr(b2, y)) if b1 == b2 && x.a == y.a => Some(y.c - x.c),
        _ if same(p, c) => Some(0),
        _ => None,
    }
}

fn fits(d: i128) -> Option<i128> {
    i64::try_from(d).ok().map(|_| d)
}

/// The change of a loop's state over one iteration, from state `p` (lanes `plm` in the loop)
/// to state `c`; `None` when something other than values moved by constants.
fn delta(p: &Ws, plm: u32, c: &Ws, clm: u32) -> Option<Delta> {
    if plm != clm || p.mask != c.mask || p.returned != c.returned || p.loops != c.loops {
        return None;
    }
    let alive = c.alive();
    let mut d = Delta { vars: Vec::with_capacity(c.vars.len()), held: Vec::new(), promoted: Vec::new() };
    for (pv, cv) in p.vars.iter().zip(&c.vars) {
        let mut row = [0i128; WARP];
        for l in lanes(alive) {
            row[l] = fits(moved(&pv[l], &cv[l])?)?;
        }
        d.vars.push(row);
    }
    if p.held.len() != c.held.len() || p.promoted.len() != c.promoted.len() {
        return None;
    }
    for (pr, cr) in p.held.iter().zip(&c.held) {
        if (pr.key, pr.base, pr.lanes) != (cr.key, cr.base, cr.lanes) {
            return None;
        }
        let mut row = [0i128; WARP];
        for l in lanes(cr.lanes) {
            if pr.off[l].a != cr.off[l].a {
                return None;
            }
            row[l] = fits(cr.off[l].c - pr.off[l].c)?;
        }
        d.held.push(row);
    }
    for (pp, cp) in p.promoted.iter().zip(&c.promoted) {
        if (pp.depth, pp.op, pp.lane, pp.base) != (cp.depth, cp.op, cp.lane, cp.base) || pp.off.a != cp.off.a {
            return None;
        }
        d.promoted.push(fits(cp.off.c - pp.off.c)?);
    }
    Some(d)
}

/// Applies `f` to every value of the state that `delta` moves.
fn each_moving(st: &mut Ws, d: &Delta, mut f: impl FnMut(&mut Form, i128)) {
    let alive = st.alive();
    for (vals, row) in st.vars.iter_mut().zip(&d.vars) {
        for l in lanes(alive) {
            if row[l] != 0 {
                match &mut vals[l].k {
                    SK::Int(x) | SK::Ptr(_, x) => f(x, row[l]),
                    _ => {}
                }
            }
        }
    }
    for (r, row) in st.held.iter_mut().zip(&d.held) {
        for l in lanes(r.lanes) {
            if row[l] != 0 {
                f(&mut r.off[l], row[l]);
            }
        }
    }
    for (p, &dd) in st.promoted.iter_mut().zip(&d.promoted) {
        if dd != 0 {
            f(&mut p.off, dd);
        }
    }
}

/// The state `n` iterations on.
fn advance(st: &mut Ws, d: &Delta, n: i128) {
    each_moving(st, d, |x, dd| x.c += dd * n);
}

/// The state at iteration `t` of a summary: each moving value gets `t` with its step.
fn vary(st: &mut Ws, d: &Delta, v: usize) {
    each_moving(st, d, |x, dd| x.a[v] = dd as i64);
}

/// Whether the state after one abstract iteration (`after`) is the state at `t + 1`, that is
/// the start state (`start`) moved by one step plus `t` steps.
fn follows(after: &Ws, start: &Ws, d: &Delta, v: usize) -> bool {
    let mut want = start.clone();
    vary(&mut want, d, v);
    advance(&mut want, d, 1);
    if (after.mask, after.returned, &after.loops) != (want.mask, want.returned, &want.loops) {
        return false;
    }
    let alive = want.alive();
    let vars_ok = after.vars.iter().zip(&want.vars).all(|(a, w)| lanes(alive).all(|l| same(&a[l], &w[l])));
    let held_ok = after.held.len() == want.held.len()
        && after.held.iter().zip(&want.held).all(|(a, w)| {
            (a.key, a.base, a.lanes) == (w.key, w.base, w.lanes) && lanes(w.lanes).all(|l| a.off[l] == w.off[l])
        });
    let promoted_ok = after.promoted.len() == want.promoted.len()
        && after
            .promoted
            .iter()
            .zip(&want.promoted)
            .all(|(a, w)| (a.depth, a.op, a.lane, a.base, a.off) == (w.depth, w.op, w.lane, w.base, w.off));
    vars_ok && held_ok && promoted_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_classes_of_common_shapes() {
        // 256 threads in x: one run of 8 warps, 32 threads apart.
        let c = warp_classes([256, 1, 1]);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].count, c[0].step), (8, [32, 0, 0]));
        // 16 x 16: lanes 16..31 are the next row; warps two rows apart.
        let c = warp_classes([16, 16, 1]);
        assert_eq!((c.len(), c[0].count, c[0].step), (1, 8, [0, 2, 0]));
        // 100 threads: three full warps and a partial one of 4 lanes.
        let c = warp_classes([100, 1, 1]);
        assert_eq!(c.len(), 2);
        assert_eq!((c[0].count, c[1].count, c[1].mask), (3, 1, 0xf));
        // 24 x 2: rows straddle warps, so the lane pattern changes from warp to warp.
        let c = warp_classes([24, 4, 1]);
        assert_eq!(c.iter().map(|c| c.count).sum::<i128>(), 3);
    }
}
