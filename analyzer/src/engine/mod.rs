//! The reference engine: every warp of every block, lanes in lockstep under an active mask.
//!
//! Sectors and wavefronts are counted only in [`count`], which [`Engine::record`] calls once
//! per warp-level execution; the global sectors stream out through a [`SectorSink`]. Values
//! are tracked per lane with C's integer semantics; anything read from memory is data (exact
//! when the launch gives the array's fill, otherwise unknown and handled by the stated default
//! assumption).
//!
//! This file is the driver (launch, blocks, warps, the work budget); `exec.rs` walks the
//! statements, `eval.rs` evaluates expressions, `memory.rs` handles memory instructions (load
//! reuse, promoted stores, the call into [`count`]), `values.rs` holds the lane values and their
//! arithmetic.

pub(crate) mod compiler_model;
/// How a refusal of a loop whose trip count depends on data begins: the value is the user's to
/// give (`--fill`), never a guess (the SASS fallback does not take these).
pub const LOOP_ON_UNKNOWN_DATA: &str = "this loop's condition depends on a value the analysis does not know";

pub mod count;
mod eval;
mod exec;
mod memory;
mod probe;
pub mod sass;
mod shared_values;
pub mod symbolic;
mod values;
mod warp;
mod windows;

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use crate::launch::{ParamValue, Setup};
use crate::source::Span;
use std::collections::{HashMap, HashSet};

use compiler_model::HeldValues;
pub use count::{may_alias, sectors_of, wavefronts, NoSink, SectorSink, Wavefronts, SECTOR};
use exec::*;
pub use probe::{probe, Capture, LaneAddr, Probe, ProbeOutcome};
use values::*;

pub const WARP: usize = 32;

/// Where parameter `p`'s buffer starts: far apart, 256-byte aligned, plus the user's offset.
pub fn param_base(p: ParamId, offset: i64) -> i64 {
    ((p.0 as i64) + 1) * (1i64 << 40) + offset
}
/// Shared arrays live in their own window.
const SHARED_WINDOW: i64 = 1 << 60;

/// Counts for one memory instruction over the launch.
#[derive(Clone, Debug, Default)]
pub struct OpStats {
    pub executions: u64,
    pub lanes: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub sectors_min: u64,
    pub sectors_max: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    /// Executions with at least one unknown (data-dependent) address.
    pub unknown_executions: u64,
    /// Executions whose addresses came from filled (known) data.
    pub data_executions: u64,
    pub elided_lanes: u64,
    /// Executed inside a loop whose trip count differed between lanes of a warp.
    pub varying_trip: bool,
    /// Inside a loop that retries a compare-and-swap, counted as one pass.
    pub retried: bool,
    /// Executed after a branch on data the analysis does not know, taken as the sheet states:
    /// its count rests on that assumption.
    pub after_data_branch: bool,
    /// Lowest byte offset and one past the highest, relative to the parameter's pointer.
    pub min_off: Option<i64>,
    pub end_off: Option<i64>,
    pub base: Option<Base>,
}

impl OpStats {
    /// The counters, in declaration order (not the flags and offsets).
    pub fn counters(&self) -> [u64; 11] {
        [
            self.executions,
            self.lanes,
            self.sectors,
            self.ideal_sectors,
            self.sectors_min,
            self.sectors_max,
            self.wavefronts,
            self.ideal_wavefronts,
            self.unknown_executions,
            self.data_executions,
            self.elided_lanes,
        ]
    }

    /// [`OpStats::counters`], mutably.
    pub fn counters_mut(&mut self) -> [&mut u64; 11] {
        [
            &mut self.executions,
            &mut self.lanes,
            &mut self.sectors,
            &mut self.ideal_sectors,
            &mut self.sectors_min,
            &mut self.sectors_max,
            &mut self.wavefronts,
            &mut self.ideal_wavefronts,
            &mut self.unknown_executions,
            &mut self.data_executions,
            &mut self.elided_lanes,
        ]
    }
}

/// What the engine observed.
#[derive(Default)]
pub struct Trace {
    pub ops: Vec<OpStats>,
    /// Branches whose condition depended on unknown data (assumed taken).
    pub data_branches: Vec<Span>,
    /// Loops whose trip count differed between lanes of one warp, and which nvcc may unroll
    /// at run time: their accesses' counts are not exact.
    pub varying_loops: Vec<Span>,
    /// Loops whose trip count differed between lanes of one warp, which nvcc does not unroll
    /// ([`crate::ir::unroll`]): counted exactly as the source loop.
    pub varying_exact_loops: Vec<Span>,
    /// Reads that used a fill, by parameter.
    pub used_fills: Vec<ParamId>,
    /// Loops that move no memory whose condition the analysis could not decide (a spin on
    /// `clock()`): summarised, the locals they assign unknown after them.
    pub summarised_loops: Vec<(Span, Vec<String>)>,
    /// Loops that retry a compare-and-swap on data the analysis does not know: one pass.
    pub retry_loops: Vec<Span>,
    /// A load read a value the block stored in shared memory ([`shared_values`]).
    pub shared_values_read: bool,
    pub work: u64,
}

pub struct Engine<'a> {
    k: &'a Kernel,
    s: &'a Setup,
    block_idx: [u32; 3],
    block_linear: u64,
    ops: Vec<OpStats>,
    keys: Vec<u32>,
    op_loops: Vec<Vec<usize>>,
    loop_spans: Vec<Span>,
    loop_unrollable: Vec<bool>,
    varying: Vec<bool>,
    data_branches: HashSet<Span>,
    summarised_loops: Vec<(Span, Vec<String>)>,
    /// The spans of loops that retry a compare-and-swap ([`crate::ir::provenance`]), and those
    /// of them whose test met unknown data (counted as one pass).
    retry_spans: HashSet<Span>,
    retried: HashSet<Span>,
    /// By parameter: whether a read used its fill.
    used_fills: Vec<bool>,
    /// Whether the launch gives any array's contents.
    any_fill: bool,
    /// By parameter: whether it is a `__restrict__` pointer.
    restrict_params: Vec<bool>,
    shared_base: Vec<i64>,
    work: u64,
    /// Effort other engines spent on this launch before this run (one `--max-work` for all).
    effort_before: u64,
    scratch: Vec<i64>,
    /// Where the global sectors go, in execution order (the cache model, or nowhere).
    boundary: &'a mut (dyn SectorSink + 'static),
    loop_ids: HashMap<Span, usize>,
    loop_stack: Vec<usize>,
    pool: Pool,
    /// By memory operation: a store promoted out of its loop (LLVM's LICM).
    promoted: Vec<bool>,
    /// By local: the address keys an assignment to it makes stale ([`held_keys`]).
    local_keys: Vec<Vec<u32>>,
    /// By memory operation: an address the compiler sees as one value even where the analysis
    /// does not know it ([`crate::ir::vn::same_unknown_address`]).
    same_unknown: Vec<bool>,
    /// By loop: the address keys its entry makes stale ([`loop_entry_keys`]).
    entry_keys: HashMap<Span, Vec<u32>>,
    /// By memory operation: the completely unrolled loops' counters its address reads (`None`:
    /// never taken as held).
    op_counters: Vec<Option<Vec<LocalId>>>,
    copy_keys: CopyKeys,
    /// By memory operation: the load nvcc merges across unrolled copies of its loop, if it is one.
    chains: Vec<Option<crate::ir::unroll::Chain>>,
    /// Set only by [`probe()`] (`explain`): copies one execution out, lane by lane.
    probe: Option<Box<probe::ProbeState>>,
    /// The first read past the end of a filled array: (parameter, element index, fill length).
    fill_ran_out: Option<(ParamId, i64, u64)>,
    /// Long loops in iteration windows, when the sink wants only a fraction of them.
    windows: Option<Box<windows::Windows>>,
    /// What the block stored in shared memory, for kernels whose shared values steer them
    /// ([`shared_values`]).
    shared_values: Option<Box<shared_values::SharedValues>>,
    shared_values_read: bool,
}

/// Per memory operation, its address expression's value number: equal keys mean the compiler
/// sees the same address expression (the GVN model's reuse needs equal keys).
pub(crate) fn address_keys(k: &Kernel) -> Vec<u32> {
    crate::ir::vn::copy_numbers(k, &crate::ir::unroll::fully_unrolled_counters(k))
}

/// How the variables of addresses ([`crate::ir::vn::address_variables`]) bear on held values.
/// `stale`, per local: the address keys ([`address_keys`]) that assigning it makes stale for
/// the compiler, even where the address comes out the same at run time. `counters`, per memory
/// operation: the counters of completely unrolled loops its address reads
/// ([`crate::ir::unroll::fully_unrolled_counters`]); they are constants in each unrolled copy,
/// so they are part of the address's identity (the held value's key) instead.
/// Per loop that stays a loop (not one nvcc unrolls completely, not an inlined helper's body):
/// the address keys its entry makes stale. A local the loop assigns is a new value (SSA's phi)
/// from the first iteration on, so a load inside the loop is not the load of the same
/// expression before it: `Sum = *c; for (..) { Sum += *c; c += step; }` loads `*c` again on
/// the first iteration (cbsfil on the H200's SASS: 13 loads, not 12).
pub(crate) fn loop_entry_keys(k: &Kernel, local_keys: &[Vec<u32>]) -> HashMap<Span, Vec<u32>> {
    fn visit(stmts: &[Stmt], unrolled: &[Span], local_keys: &[Vec<u32>], out: &mut HashMap<Span, Vec<u32>>) {
        for s in stmts {
            match s {
                Stmt::Loop { body, step, span, synthetic, .. } => {
                    if !*synthetic && !unrolled.contains(span) {
                        let mut assigned = Vec::new();
                        exec::assigned_locals(s, &mut assigned);
                        let mut keys: Vec<u32> =
                            assigned.iter().flat_map(|l| local_keys[l.0 as usize].iter().copied()).collect();
                        keys.sort_unstable();
                        keys.dedup();
                        if !keys.is_empty() {
                            out.insert(*span, keys);
                        }
                    }
                    visit(body, unrolled, local_keys, out);
                    visit(step, unrolled, local_keys, out);
                }
                Stmt::If { then, els, .. } => {
                    visit(then, unrolled, local_keys, out);
                    visit(els, unrolled, local_keys, out);
                }
                _ => {}
            }
        }
    }
    let unrolled = crate::ir::unroll::fully_unrolled_loops(k);
    let mut out = HashMap::new();
    visit(&k.body, &unrolled, local_keys, &mut out);
    out
}

pub(crate) fn held_keys(k: &Kernel, keys: &[u32]) -> (Vec<Vec<u32>>, Vec<Option<Vec<LocalId>>>) {
    let unrolled = crate::ir::unroll::fully_unrolled_counters(k);
    let mut stale = vec![Vec::new(); k.locals.len()];
    let mut counters = vec![Some(Vec::new()); k.mem_ops.len()];
    for (op, vars) in crate::ir::vn::address_variables(k).into_iter().enumerate() {
        let mut by_depth: Vec<(u32, LocalId)> = Vec::new();
        // Global accesses only: shared ones in unrolled loops keep the counters as variables,
        // so that the symbolic engine may still summarise those loops (tiled products).
        let global = k.mem_ops[op].space == Space::Global;
        for l in vars {
            if let Some(&d) = unrolled.get(&l).filter(|d| **d != u32::MAX && global) {
                by_depth.push((d, l));
                continue;
            }
            let v: &mut Vec<u32> = &mut stale[l.0 as usize];
            if !v.contains(&keys[op]) {
                v.push(keys[op]);
            }
        }
        // Values in the order of the counters' roles, as the key numbers them; two counters
        // in one role leave the roles ambiguous: such an access is never taken as held.
        by_depth.sort();
        counters[op] = if by_depth.windows(2).any(|w| w[0].0 == w[1].0) {
            None
        } else {
            Some(by_depth.into_iter().map(|(_, l)| l).collect())
        };
    }
    (stale, counters)
}

/// Held-value keys of accesses inside completely unrolled loops: the static key with the
/// values its loop counters have in this copy, numbered apart from every static key.
#[derive(Default)]
pub(crate) struct CopyKeys {
    numbers: HashMap<(u32, Vec<i128>), u32>,
    /// Per key handed out, counted down from `u32::MAX`: the static key it is a copy of.
    statics: Vec<u32>,
}

impl CopyKeys {
    /// The key of `key` with these counter values (`None`: the lanes disagree, a key of its own).
    pub(crate) fn key(&mut self, key: u32, values: Option<Vec<i128>>) -> u32 {
        let fresh = u32::MAX - self.statics.len() as u32;
        let k = match values {
            Some(v) => *self.numbers.entry((key, v)).or_insert(fresh),
            None => fresh,
        };
        if k == fresh {
            self.statics.push(key);
        }
        k
    }

    /// The static key a copy's key was made from; `None` for a static key.
    pub(crate) fn static_key(&self, k: u32) -> Option<u32> {
        let i = u32::MAX - k;
        self.statics.get(i as usize).copied()
    }
}

/// The kernel's loops: per memory operation the loops around it, each loop's span, and the
/// loop of a span.
pub(crate) fn loop_table(k: &Kernel) -> LoopTable {
    let mut op_loops = vec![Vec::new(); k.mem_ops.len()];
    let mut spans = Vec::new();
    let mut unrollable = Vec::new();
    collect_loops(&k.body, &mut Vec::new(), &mut op_loops, &mut spans, &mut unrollable);
    let ids = spans.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    LoopTable { op_loops, spans, ids, unrollable }
}

/// The loops of a kernel, numbered in statement order.
pub(crate) struct LoopTable {
    /// Per memory operation: the loops around it, outermost first.
    pub op_loops: Vec<Vec<usize>>,
    pub spans: Vec<Span>,
    pub ids: HashMap<Span, usize>,
    /// Per loop: whether nvcc may unroll it at run time ([`crate::ir::unroll`]); a varying
    /// trip count makes the counts inexact only there.
    pub unrollable: Vec<bool>,
}

/// The varying loops of a run, split into those whose counts are inexact (nvcc may unroll
/// them) and those counted exactly as the source loop (nvcc does not unroll them).
pub(crate) fn split_varying(spans: &[Span], varying: &[bool], unrollable: &[bool]) -> (Vec<Span>, Vec<Span>) {
    let (mut inexact, mut exact) = (Vec::new(), Vec::new());
    for ((s, v), u) in spans.iter().zip(varying).zip(unrollable) {
        match (v, u) {
            (true, true) => inexact.push(*s),
            (true, false) => exact.push(*s),
            _ => {}
        }
    }
    (inexact, exact)
}

/// Byte offset of each shared array in the block's shared window, as nvcc places them
/// ([`crate::ir::shared_layout`]).
pub(crate) fn shared_layout(k: &Kernel) -> Vec<i64> {
    crate::ir::shared_layout::shared_layout(k).base
}

/// The shared array holding byte `addr` of the shared window, given each array's first byte
/// (`layout`, from [`shared_layout`]): the last array starting at or before `addr`, when `addr`
/// is inside it (an `extern` array reaches to the end of the window). What
/// [`Expr::SharedAddress`] turns an integer address into.
pub(crate) fn shared_array_at(k: &Kernel, layout: &[i64], addr: i128) -> Option<SharedId> {
    let (i, start) = layout
        .iter()
        .enumerate()
        .filter(|(_, &start)| i128::from(start) <= addr)
        .max_by_key(|(i, &start)| (start, *i))?;
    let a = &k.shared[i];
    (a.is_extern || addr < i128::from(*start) + a.bytes() as i128).then_some(SharedId(i as u32))
}

/// The error of an [`Expr::SharedAddress`] at `span` that is not an address in shared memory.
pub(crate) fn not_shared(k: &Kernel, span: Span, what: Option<Base>, addr: Option<i128>) -> Diagnostic {
    let why = match (what, addr) {
        (Some(Base::Param(p)), _) => {
            format!("the address is in global memory (parameter `{}`), where a shared-memory address is needed", k.param(p).name)
        }
        (_, Some(a)) => format!("the shared-memory address {a} is in no shared array of the kernel"),
        _ => "the shared-memory address is not known (it is computed from memory contents, or from values the analysis does not follow, such as another asm statement's output)".to_string(),
    };
    Diagnostic::at(ErrorKind::Unsupported, span, format!("inline assembly: {why}"))
        .note("the address must come from `__cvta_generic_to_shared` of a pointer into a `__shared__` array")
}

/// Whether the kernel has a loop the engine may run in iteration windows when it feeds a
/// sampled cache model (`windows.rs`).
pub fn has_window_loops(kernel: &Kernel) -> bool {
    windows::Windows::new(kernel, 0.5).any()
}

/// Runs the whole launch for its counts.
pub fn run(kernel: &Kernel, setup: &Setup) -> Result<Trace> {
    run_with(kernel, setup, &mut NoSink)
}

/// Runs the whole launch, streaming every global sector into `sink` in execution order.
pub fn run_with(kernel: &Kernel, setup: &Setup, sink: &mut (dyn SectorSink + 'static)) -> Result<Trace> {
    run_blocks(kernel, setup, &mut (0..setup.blocks()), sink)
}

/// Runs the blocks `order` names by linear index (x fastest, then y, z), in that order, feeding
/// their global sectors to `sink`: the cache model's sampled units. The trace counts those
/// blocks alone.
pub fn run_blocks(
    kernel: &Kernel,
    setup: &Setup,
    order: &mut dyn Iterator<Item = u64>,
    sink: &mut (dyn SectorSink + 'static),
) -> Result<Trace> {
    let mut e = Engine::new(kernel, setup, sink);
    let [gx, gy, _] = setup.grid;
    let (gx, gy) = (gx as u64, gy as u64);
    let shapes = warp_shapes(setup.block);
    let mut st = WarpState::new(kernel.locals.len());
    // Where shared values steer the kernel, a second engine that counts nothing runs each block
    // until what it stores in shared memory settles.
    let mut quiet = NoSink;
    let mut scout = crate::ir::provenance::shared_values_steer(kernel).then(|| Engine::new(kernel, setup, &mut quiet));
    for linear in order {
        e.block_idx = [(linear % gx) as u32, (linear / gx % gy) as u32, (linear / (gx * gy)) as u32];
        e.block_linear = linear;
        e.boundary.begin_block(linear);
        settle_block(&mut scout, &mut e, &shapes, &mut st)?;
        for (w, shape) in shapes.iter().enumerate() {
            e.boundary.begin_warp();
            if let Some(sv) = e.shared_values.as_mut() {
                sv.begin_warp(w as u32);
            }
            st.start(shape, &mut e.pool);
            if let Err(d) = e.exec_block(&kernel.body, shape.mask, &mut st) {
                // A read past the fill's end explains what failed after it (an unknown trip count).
                return Err(match e.fill_ran_out {
                    Some(ran_out) => fill_ran_out(kernel, setup, ran_out).note(format!("then: {}", d.message)),
                    None => d,
                });
            }
        }
    }
    // The launch said what the array holds, and the kernel reads past it: counting those reads
    // as unknown data would hide the mistake (on a GPU it reads past the buffer).
    if let Some(ran_out) = e.fill_ran_out {
        return Err(fill_ran_out(kernel, setup, ran_out));
    }
    Ok(e.finish())
}

/// Before the counting engine `e` runs its current block: the stores the block leaves in shared
/// memory, settled by `scout` ([`Engine::settle_shared`]). Nothing known stored, or stores that
/// do not settle: the block, and every later one, is counted with shared values unknown.
fn settle_block(scout: &mut Option<Engine>, e: &mut Engine, shapes: &[WarpShape], st: &mut WarpState) -> Result<()> {
    let Some(s) = scout.as_mut() else { return Ok(()) };
    s.block_idx = e.block_idx;
    s.block_linear = e.block_linear;
    match s.settle_shared(shapes, st)? {
        Some(log) => e.shared_values = Some(Box::new(shared_values::SharedValues::new(log))),
        None => {
            e.shared_values = None;
            *scout = None;
        }
    }
    Ok(())
}

impl Engine<'_> {
    /// Runs the current block (counting nothing) until what it stores in shared memory settles:
    /// the settled stores, or `None` when no store holds a known value or they do not settle
    /// within [`shared_values::MAX_RUNS`] runs. A warp that stops on an error stops there; the
    /// counting run reports it. Only a limit (time, work) ends the launch.
    fn settle_shared(&mut self, shapes: &[WarpShape], st: &mut WarpState) -> Result<Option<shared_values::Log>> {
        let mut before = shared_values::Log::default();
        for _ in 0..shared_values::MAX_RUNS {
            self.shared_values = Some(Box::new(shared_values::SharedValues::new(before)));
            for (w, shape) in shapes.iter().enumerate() {
                if let Some(sv) = self.shared_values.as_mut() {
                    sv.begin_warp(w as u32);
                }
                st.start(shape, &mut self.pool);
                if let Err(d) = self.exec_block(&self.k.body, shape.mask, st) {
                    if d.kind == ErrorKind::Limit {
                        return Err(d);
                    }
                }
            }
            let sv = self.shared_values.take().expect("set above");
            if !sv.knows_any() {
                return Ok(None);
            }
            if sv.settled() {
                return Ok(Some(sv.into_log()));
            }
            before = sv.into_log();
        }
        Ok(None)
    }
}

/// The error for a read of element `k` of parameter `p`'s fill, which gives `len` elements.
fn fill_ran_out(kernel: &Kernel, setup: &Setup, (p, k, len): (ParamId, i64, u64)) -> Diagnostic {
    let param = kernel.param(p);
    let fill = setup.fills[p.0 as usize].as_ref().map(|(f, _)| f.to_string()).unwrap_or_default();
    Diagnostic::at(
        ErrorKind::Launch,
        param.span,
        format!(
            "the fill of `{}` ran out: the kernel reads element {k}, and `{fill}` gives {len} elements",
            param.name
        ),
    )
    .note(match setup.fills[p.0 as usize].as_ref().map(|(f, _)| f) {
        Some(crate::fill::Fill::Csr { nnz, .. }) => format!(
            "give a fill at least as long as the reads (--fill {}=csr:{}:{nnz}:SEED has {} offsets)",
            param.name,
            k,
            k + 1
        ),
        _ => format!("give a fill at least as long as the reads (--fill {}=permutation:{}:SEED)", param.name, k + 1),
    })
}

impl<'a> Engine<'a> {
    fn new(k: &'a Kernel, s: &'a Setup, boundary: &'a mut (dyn SectorSink + 'static)) -> Self {
        let keys = address_keys(k);
        let (local_keys, op_counters) = held_keys(k, &keys);
        let chains = crate::ir::unroll::unrolled_loads(k).chains;
        let LoopTable { op_loops, spans: loop_spans, ids: loop_ids, unrollable: loop_unrollable } = loop_table(k);
        // Shared arrays laid out in declaration order, each aligned to 16 bytes (an assumption
        // the sheet states; bank conflicts depend only on offsets within an array).
        // Dynamic (`extern`) arrays start where the static ones end, as the compiler places them.
        let shared_base = shared_layout(k).iter().map(|o| SHARED_WINDOW + o).collect();
        let retry_spans = crate::ir::provenance::retrying_loops(k).into_iter().collect();
        let frac = boundary.loop_fraction();
        let windows = (frac < 1.0).then(|| Box::new(windows::Windows::new(k, frac)));
        Engine {
            windows,
            promoted: crate::ir::licm::promoted_stores(k),
            entry_keys: loop_entry_keys(k, &local_keys),
            same_unknown: crate::ir::vn::same_unknown_address(k),
            local_keys,
            op_counters,
            chains,
            copy_keys: CopyKeys::default(),
            k,
            s,
            block_idx: [0; 3],
            block_linear: 0,
            ops: vec![OpStats::default(); k.mem_ops.len()],
            keys,
            op_loops,
            varying: vec![false; loop_spans.len()],
            loop_spans,
            loop_unrollable,
            data_branches: HashSet::new(),
            summarised_loops: Vec::new(),
            retry_spans,
            retried: HashSet::new(),
            used_fills: vec![false; k.params.len()],
            any_fill: s.fills.iter().any(Option::is_some),
            restrict_params: (0..k.params.len()).map(|p| k.is_restrict(Base::Param(ParamId(p as u32)))).collect(),
            shared_base,
            work: 0,
            effort_before: s.budget.spent(),
            scratch: Vec::with_capacity(64),
            boundary,
            loop_ids,
            loop_stack: Vec::new(),
            pool: Pool::default(),
            probe: None,
            fill_ran_out: None,
            shared_values: None,
            shared_values_read: false,
        }
    }

    fn finish(mut self) -> Trace {
        for (i, loops) in self.op_loops.iter().enumerate() {
            if loops.iter().any(|&l| self.varying[l] && self.loop_unrollable[l]) {
                self.ops[i].varying_trip = true;
            }
            if loops.iter().any(|&l| self.retried.contains(&self.loop_spans[l])) {
                self.ops[i].retried = true;
            }
        }
        let mut retry_loops: Vec<Span> = self.retried.into_iter().collect();
        retry_loops.sort_by_key(|s| (s.file, s.line, s.column));
        let mut data_branches: Vec<Span> = self.data_branches.into_iter().collect();
        data_branches.sort_by_key(|s| (s.file, s.line, s.column));
        let (varying_loops, varying_exact_loops) =
            split_varying(&self.loop_spans, &self.varying, &self.loop_unrollable);
        let used_fills =
            self.used_fills.iter().enumerate().filter(|(_, u)| **u).map(|(p, _)| ParamId(p as u32)).collect();
        Trace {
            ops: self.ops,
            data_branches,
            varying_loops,
            varying_exact_loops,
            used_fills,
            summarised_loops: self.summarised_loops,
            retry_loops,
            shared_values_read: self.shared_values_read,
            work: self.work,
        }
    }

    fn tick(&mut self, span: Span) -> Result<()> {
        self.work += 1;
        // Effort shared with the engines that ran before on this launch.
        let effort = self.work.saturating_add(self.effort_before);
        if self.work.is_multiple_of(crate::launch::CHECK_EVERY) {
            self.s.budget.check(effort, self.s.max_work, Some(span))?;
        }
        if effort > self.s.max_work {
            return Err(Diagnostic::at(
                ErrorKind::Limit,
                span,
                format!(
                    "the launch needs more than {} warp-level steps of the reference engine",
                    self.s.max_work
                ),
            )
            .note("analyse a smaller launch (fewer blocks or a smaller problem size), or raise the budget with --max-work N"));
        }
        Ok(())
    }

    fn live(&self, mask: u32, st: &WarpState) -> u32 {
        let mut m = mask & !st.returned;
        if let Some(f) = st.loops.last() {
            m &= !(f.brk | f.cont);
        }
        m
    }
}

fn collect_loops(
    stmts: &[Stmt],
    stack: &mut Vec<usize>,
    op_loops: &mut [Vec<usize>],
    spans: &mut Vec<Span>,
    unrollable: &mut Vec<bool>,
) {
    fn ops_in_expr(e: &Expr, out: &mut Vec<MemOpId>) {
        crate::ir::licm::walk(e, &mut |x| {
            if let Expr::Load { op, .. } = x {
                out.push(*op);
            }
        });
    }
    for s in stmts {
        let mut ops = Vec::new();
        match s {
            Stmt::Assign { value, .. } => ops_in_expr(value, &mut ops),
            Stmt::Store { op, addr, value } => {
                ops.push(*op);
                ops_in_expr(addr, &mut ops);
                ops_in_expr(value, &mut ops);
            }
            Stmt::Eval(e) => ops_in_expr(e, &mut ops),
            Stmt::If { cond, then, els, .. } => {
                ops_in_expr(cond, &mut ops);
                collect_loops(then, stack, op_loops, spans, unrollable);
                collect_loops(els, stack, op_loops, spans, unrollable);
            }
            Stmt::Loop { cond, body, step, span, .. } => {
                let id = spans.len();
                // Synthetic loops share the call's span; ids stay per loop statement.
                spans.push(*span);
                unrollable.push(crate::ir::unroll::may_runtime_unroll(cond.as_ref(), body, step));
                stack.push(id);
                if let Some(c) = cond {
                    let mut cops = Vec::new();
                    ops_in_expr(c, &mut cops);
                    for o in cops {
                        op_loops[o.0 as usize].extend(stack.iter().copied());
                    }
                }
                collect_loops(body, stack, op_loops, spans, unrollable);
                collect_loops(step, stack, op_loops, spans, unrollable);
                stack.pop();
            }
            _ => {}
        }
        for o in ops {
            op_loops[o.0 as usize].extend(stack.iter().copied());
        }
    }
}

fn expr_span(e: &Expr) -> Option<Span> {
    match e {
        Expr::Binary { span, .. } => Some(*span),
        _ => None,
    }
}

fn undef(span: Span, what: &str) -> Diagnostic {
    Diagnostic::at(ErrorKind::Unsupported, span, format!("{what} reads a variable that has no value yet"))
}

/// Byte address of `off` into `b`, as the hardware sees it.
pub(crate) fn absolute(s: &Setup, b: Base, off: i64) -> i64 {
    match b {
        Base::Param(p) => param_base(p, s.offsets[p.0 as usize]).wrapping_add(off),
        Base::Shared(_) => off,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_wrap_equals_intty_wrap() {
        let tys = [
            IntTy::BOOL,
            IntTy::I8,
            IntTy::U8,
            IntTy::I16,
            IntTy::U16,
            IntTy::I32,
            IntTy::U32,
            IntTy::I64,
            IntTy::U64,
            IntTy { bits: 24, signed: true },
            IntTy { bits: 24, signed: false },
        ];
        let mut vals = vec![0i128, 1, -1, i128::MAX, i128::MIN, 1 << 64, (1 << 64) - 1, -(1 << 64)];
        for s in [7, 8, 15, 16, 31, 32, 63, 64, 65, 100] {
            for d in [-1i128, 0, 1] {
                vals.push((1i128 << s) + d);
                vals.push(-(1i128 << s) + d);
            }
        }
        for ty in tys {
            for &v in &vals {
                assert_eq!(wrap(ty, v), ty.wrap(v), "{} {v}", ty.name());
            }
        }
    }
}
