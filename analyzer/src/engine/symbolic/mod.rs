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
//!
//! # Layout
//!
//! This file is the driver: the launch cut into boxes, the budgets, the accumulators. Statements,
//! loops and decisions are in `exec.rs`, loop summaries by induction in `induction.rs`,
//! expressions in `eval.rs`, memory instructions (held values, promoted stores, the call into
//! [`count`]) in `memory.rs`, the abstract values and their arithmetic in `values.rs`, the affine
//! forms in `form.rs`. The reference engine (`engine/`) has the same layout.
//!
//! # Invariants
//!
//! - **The reference engine's numbers, or none.** A trace from this engine is, field for field,
//!   the reference engine's trace of the same launch (`tests/engines.rs` checks the examples,
//!   `tests/engines_property.rs` random kernels). What the engine cannot show to be exact over a box is a `Stop`: a cut
//!   that the driver applies before running the pieces again, or a give-up, after which the
//!   caller runs the reference engine.
//! - **Every decision holds at every point of its box.** Branches, loop tests, held loads and
//!   wrap-arounds are decided over the box's ranges (`zero`, `negative`, `nonzero`); one that is
//!   not the same everywhere is a cut, never a guess.
//! - **Only [`count`] counts.** `SymbolicRun::record` hands it concrete addresses once per residue of the
//!   lane-uniform variable part and multiplies by the number of points; counts add up in `u128`
//!   and a total past 2^64 is a give-up, never a wrapped number.
//! - **A box that stops leaves nothing behind.** Its counts are rolled back (`checkpoint`,
//!   `restore`) before its pieces run.
//! - **Loop summaries are proved.** A summary is taken only when one abstract iteration, with the
//!   iteration number as a variable, maps the state at `t` exactly to the state at `t + 1`
//!   (`follows`), over at most `HORIZON` iterations.
//! - **One compiler model.** Address keys (value numbers), promoted stores and `may_alias` come
//!   from the same functions as the reference engine's; more held values than `HELD_MAX` per
//!   lane is a give-up here where the reference drops the oldest.
//! - **Errors are the reference engine's.** This engine reports no error of the launch
//!   (`Stop::Error` hands it over); only its share of the work budget is refused here.

mod eval;
mod exec;
mod form;
mod induction;
mod memory;
mod values;

pub use form::{Form, Scope, NV};

use super::compiler_model::{self, HeldEffect, HeldValues, HELD_MAX};
use super::{
    absolute, address_keys, constant_shift, exact_float_fn, held_keys, int_op, lanes, loop_table, may_alias,
    sectors_of, shared_array_at, shared_layout, split_varying, wavefronts, LoopTable, OpStats, Trace,
};
use super::{count, warp, SECTOR, WARP};
use crate::diag::Diagnostic;
use crate::ir::*;
use crate::launch::{ParamValue, Setup};
use crate::source::Span;
use exec::*;
use induction::*;
use memory::*;
use std::collections::{HashMap, HashSet};
use values::*;

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
    if !crate::ir::provenance::retrying_loops(kernel).is_empty() {
        // The reference engine counts a retry's one pass and states it.
        return Err(Fallback::GiveUp("a loop retries a compare-and-swap".into()));
    }
    let mut e = SymbolicRun::new(kernel, setup);
    match e.launch() {
        Ok(()) => {
            let (trace, stats) = e.finish()?;
            // A decision on data that the block itself stored in shared memory: the reference
            // engine follows what was stored (`engine/shared_values.rs`).
            let undecided = !trace.data_branches.is_empty() || trace.ops.iter().any(|o| o.unknown_executions > 0);
            if undecided && crate::ir::provenance::shared_values_steer(kernel) {
                return Err(Fallback::GiveUp(
                    "a branch or an address depends on values the block stored in shared memory".into(),
                ));
            }
            Ok((trace, stats))
        }
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

/// A step of the symbolic walk: its value, or why the walk stops (to the reference engine).
type Outcome<T> = std::result::Result<T, Stop>;

fn give_up<T>(why: impl Into<String>) -> Outcome<T> {
    Err(Stop::GiveUp(why.into()))
}

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

/// Counts for one memory instruction, wide enough for any box.
#[derive(Clone, Default)]
struct InstructionCounts {
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

/// One run of the symbolic engine over a launch: the kernel, the launch, the box and the counts.
struct SymbolicRun<'a> {
    k: &'a Kernel,
    s: &'a Setup,
    scope: Scope,
    blk: [Form; 3],
    tid: [[Form; 3]; WARP],
    ops: Vec<InstructionCounts>,
    keys: Vec<u32>,
    promoted_ops: Vec<bool>,
    /// By local: the address keys an assignment to it makes stale (as the reference engine).
    local_keys: Vec<Vec<u32>>,
    /// By loop: the address keys its entry makes stale (as the reference engine).
    entry_keys: HashMap<Span, Vec<u32>>,
    /// By memory operation: an unknown address the compiler sees as one value (as the
    /// reference engine).
    same_unknown: Vec<bool>,
    /// By memory operation: the completely unrolled loops' counters its address reads.
    op_counters: Vec<Option<Vec<LocalId>>>,
    copy_keys: super::CopyKeys,
    /// Counters of completely unrolled loops that global accesses' held-value keys read: their
    /// loops run one iteration at a time, so that each copy's counter is a constant there.
    unrolled_counters: std::collections::HashSet<LocalId>,
    /// By memory operation: the load nvcc merges across unrolled copies, if it is one (its
    /// loop's counter is in `unrolled_counters`: the loop runs copy by copy).
    chains: Vec<Option<crate::ir::unroll::Chain>>,
    restrict: Vec<bool>,
    shared_base: Vec<i64>,
    op_loops: Vec<Vec<usize>>,
    loop_spans: Vec<Span>,
    loop_ids: HashMap<Span, usize>,
    loop_unrollable: Vec<bool>,
    varying: Vec<bool>,
    data_branches: HashSet<Span>,
    summarised_loops: Vec<(Span, Vec<String>)>,
    steps: u64,
    boxes: u64,
    stats: Stats,
    /// The reference engine's warp-level steps for what has been counted.
    work: u128,
}

impl<'a> SymbolicRun<'a> {
    fn new(k: &'a Kernel, s: &'a Setup) -> Self {
        let keys = address_keys(k);
        let (local_keys, op_counters) = held_keys(k, &keys);
        let chains = crate::ir::unroll::unrolled_loads(k).chains;
        let unrolled_counters =
            op_counters.iter().flatten().flatten().copied().chain(chains.iter().flatten().map(|c| c.counter)).collect();
        let LoopTable { op_loops, spans: loop_spans, ids: loop_ids, unrollable: loop_unrollable } = loop_table(k);
        SymbolicRun {
            k,
            s,
            scope: Scope { n: [1; NV], used: 0 },
            blk: [Form::constant(0); 3],
            tid: [[Form::constant(0); 3]; WARP],
            ops: vec![InstructionCounts::default(); k.mem_ops.len()],
            keys,
            promoted_ops: crate::ir::licm::promoted_stores(k),
            entry_keys: super::loop_entry_keys(k, &local_keys),
            local_keys,
            same_unknown: crate::ir::vn::same_unknown_address(k),
            op_counters,
            copy_keys: super::CopyKeys::default(),
            unrolled_counters,
            chains,
            restrict: (0..k.params.len()).map(|p| k.is_restrict(Base::Param(ParamId(p as u32)))).collect(),
            shared_base: shared_layout(k),
            op_loops,
            varying: vec![false; loop_spans.len()],
            loop_spans,
            loop_ids,
            loop_unrollable,
            data_branches: HashSet::new(),
            summarised_loops: Vec::new(),
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
                varying_trip: self.op_loops[i].iter().any(|&l| self.varying[l] && self.loop_unrollable[l]),
                retried: false,
                after_data_branch: false,
                min_off: a.min_off,
                end_off: a.end_off,
                base: a.base,
            });
        }
        let mut data_branches: Vec<Span> = self.data_branches.into_iter().collect();
        data_branches.sort_by_key(|s| (s.file, s.line, s.column));
        let (varying_loops, varying_exact_loops) =
            split_varying(&self.loop_spans, &self.varying, &self.loop_unrollable);
        let trace = Trace {
            ops,
            data_branches,
            varying_loops,
            varying_exact_loops,
            used_fills: Vec::new(),
            summarised_loops: self.summarised_loops,
            retry_loops: Vec::new(),
            shared_values_read: false,
            work: narrow(self.work)?,
        };
        Ok((trace, Stats { steps: self.steps, ..self.stats }))
    }

    fn checkpoint(&self) -> (Vec<InstructionCounts>, u128) {
        (self.ops.clone(), self.work)
    }
    fn restore(&mut self, c: (Vec<InstructionCounts>, u128)) {
        (self.ops, self.work) = c;
    }

    /// One reference-engine step at every point of the box.
    fn tick(&mut self) {
        self.work = self.work.saturating_add(self.scope.volume());
    }

    fn step(&mut self) -> Outcome<()> {
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

    fn launch(&mut self) -> Outcome<()> {
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

    fn run_box(&mut self, b: &TopBox, class: &WarpClass) -> Outcome<()> {
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
        let mut st = AbstractWarp {
            vars: vec![[UNDEF; WARP]; self.k.locals.len()],
            mask: class.mask,
            returned: 0,
            loops: Vec::new(),
            synthetic: Vec::new(),
            held: HeldValues::default(),
            promoted: Vec::new(),
        };
        self.exec_block(&self.k.body, class.mask, &mut st)
    }
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
