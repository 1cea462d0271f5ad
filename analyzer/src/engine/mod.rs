//! The reference engine: every warp of every block, lanes in lockstep under an active mask.
//!
//! Sectors and wavefronts are counted only in [`count`], which [`Engine::record`] calls once
//! per warp-level execution; the global sectors stream out through a [`SectorSink`]. Values
//! are tracked per lane with C's integer semantics; anything read from memory is data (exact
//! when the launch gives the array's fill, otherwise unknown and handled by the stated default
//! assumption).

pub mod count;
mod probe;
pub mod symbolic;
mod warp;

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use crate::launch::{ParamValue, Setup};
use crate::source::Span;
use std::collections::{HashMap, HashSet};

pub use count::{may_alias, sectors_of, wavefronts, NoSink, SectorSink, Wavefronts, SECTOR};
pub use probe::{probe, Capture, LaneAddr, Probe, ProbeOutcome};

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
    /// Lowest byte offset and one past the highest, relative to the parameter's pointer.
    pub min_off: Option<i64>,
    pub end_off: Option<i64>,
    pub base: Option<Base>,
}

/// What the engine observed.
pub struct Trace {
    pub ops: Vec<OpStats>,
    /// Branches whose condition depended on unknown data (assumed taken).
    pub data_branches: Vec<Span>,
    /// Loops whose trip count differed between lanes of one warp.
    pub varying_loops: Vec<Span>,
    /// Reads that used a fill, by parameter.
    pub used_fills: Vec<ParamId>,
    pub work: u64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum K {
    Int(i128),
    Float(f64),
    Ptr(Base, i64),
    /// Pointer into `Base` at an unknown (data-dependent) offset.
    PtrUnknown(Base),
    /// Data read from memory that the analysis does not know.
    Unknown,
    /// Depends on a parameter that has no value.
    Missing(ParamId),
    Undef,
}

/// A lane's value; `data` marks values derived from memory contents.
#[derive(Clone, Copy, Debug, PartialEq)]
struct V {
    k: K,
    data: bool,
}

const UNDEF: V = V { k: K::Undef, data: false };

type Lanes = [V; WARP];

/// Whether two lane values are identical, floats compared by their bits: a lane holding `-0.0`
/// (or one NaN) is not interchangeable with one holding `0.0` (or another NaN).
fn same(a: V, b: V) -> bool {
    a.data == b.data
        && match (a.k, b.k) {
            (K::Float(x), K::Float(y)) => x.to_bits() == y.to_bits(),
            (x, y) => x == y,
        }
}

type Ints = [i128; WARP];
type Offsets = [i64; WARP];

/// A warp's values of one expression, for the lanes of the mask it was evaluated under; lanes
/// outside that mask hold anything, and nothing reads them.
///
/// Most values of a kernel are the same in every lane (constants, parameters, `blockIdx`, a loop
/// counter all lanes share, data nobody knows), and most of the others are plain integers (an
/// index built from `threadIdx`). Both get a compact form, so that they are computed once, or in
/// a tight loop, instead of as 32 general lane values. The forms are only shorthands: every
/// operation gives each lane exactly what computing that lane's [`V`] alone would give.
enum Vals {
    /// Every lane of the mask holds this value.
    Same(V),
    /// Every lane of the mask holds `V { k: K::Int(ints[lane]), data }`.
    Ints(Box<Ints>, bool),
    /// Every lane of the mask holds `V { k: K::Ptr(base, offsets[lane]), data }`.
    Ptrs(Base, Box<Offsets>, bool),
    /// Any values.
    Lanes(Box<Lanes>),
}

impl Vals {
    #[inline]
    fn at(&self, l: usize) -> V {
        match self {
            Vals::Same(v) => *v,
            Vals::Ints(x, data) => V { k: K::Int(x[l]), data: *data },
            Vals::Ptrs(base, o, data) => V { k: K::Ptr(*base, o[l]), data: *data },
            Vals::Lanes(b) => b[l],
        }
    }
}

/// Buffers handed back after use, so that evaluating per-lane expressions allocates only until
/// the deepest expression has been seen once. They stay boxed: a [`Vals`] takes one over
/// without copying it.
#[derive(Default)]
#[allow(clippy::vec_box)]
struct Pool {
    lanes: Vec<Box<Lanes>>,
    ints: Vec<Box<Ints>>,
    offsets: Vec<Box<Offsets>>,
}

impl Pool {
    fn lanes(&mut self) -> Box<Lanes> {
        self.lanes.pop().unwrap_or_else(|| Box::new([UNDEF; WARP]))
    }
    fn ints(&mut self) -> Box<Ints> {
        self.ints.pop().unwrap_or_else(|| Box::new([0; WARP]))
    }
    fn offsets(&mut self) -> Box<Offsets> {
        self.offsets.pop().unwrap_or_else(|| Box::new([0; WARP]))
    }
    fn put(&mut self, v: Vals) {
        match v {
            Vals::Same(_) => {}
            Vals::Ints(b, _) => self.ints.push(b),
            Vals::Ptrs(_, b, _) => self.offsets.push(b),
            Vals::Lanes(b) => self.lanes.push(b),
        }
    }

    /// The most compact form of the values `b` holds in lanes `m` (not empty).
    fn pack(&mut self, m: u32, b: Box<Lanes>) -> Vals {
        let first = b[m.trailing_zeros() as usize];
        if lanes(m).all(|l| same(b[l], first)) {
            self.lanes.push(b);
            return Vals::Same(first);
        }
        match first.k {
            K::Int(_) => {
                let mut x = self.ints();
                for l in lanes(m) {
                    match b[l] {
                        V { k: K::Int(i), data } if data == first.data => x[l] = i,
                        _ => {
                            self.ints.push(x);
                            return Vals::Lanes(b);
                        }
                    }
                }
                self.lanes.push(b);
                Vals::Ints(x, first.data)
            }
            K::Ptr(base, _) => {
                let mut o = self.offsets();
                for l in lanes(m) {
                    match b[l] {
                        V { k: K::Ptr(bl, off), data } if bl == base && data == first.data => o[l] = off,
                        _ => {
                            self.offsets.push(o);
                            return Vals::Lanes(b);
                        }
                    }
                }
                self.lanes.push(b);
                Vals::Ptrs(base, o, first.data)
            }
            _ => Vals::Lanes(b),
        }
    }

    /// `f` of each lane of `m`; once when the operand is uniform.
    #[inline]
    fn map1(&mut self, m: u32, a: Vals, mut f: impl FnMut(V) -> V) -> Vals {
        if let Vals::Same(x) = a {
            return Vals::Same(f(x));
        }
        let mut out = self.lanes();
        for l in lanes(m) {
            out[l] = f(a.at(l));
        }
        self.put(a);
        self.pack(m, out)
    }

    /// `f` of each lane of `m`, lanes in order so that the first failing lane reports; once when
    /// both operands are uniform.
    #[inline]
    fn map2(&mut self, m: u32, a: Vals, b: Vals, mut f: impl FnMut(V, V) -> Result<V>) -> Result<Vals> {
        if let (Vals::Same(x), Vals::Same(y)) = (&a, &b) {
            return Ok(Vals::Same(f(*x, *y)?));
        }
        let mut out = self.lanes();
        for l in lanes(m) {
            out[l] = f(a.at(l), b.at(l))?;
        }
        self.put(a);
        self.put(b);
        Ok(self.pack(m, out))
    }

    /// Integer arithmetic: [`int_op`] in a tight loop when both sides are integers in every
    /// lane, which is what [`int_binary`] would do lane by lane.
    fn int_binary(&mut self, m: u32, op: BinOp, ty: IntTy, a: Vals, b: Vals, span: Span) -> Result<Vals> {
        Ok(match (a, b) {
            (Vals::Ints(mut x, dx), Vals::Ints(y, dy)) => {
                int_lanes(m, op, ty, span, &mut x, |x, l| (x, y[l]))?;
                self.ints.push(y);
                Vals::Ints(x, dx || dy)
            }
            (Vals::Ints(mut x, dx), Vals::Same(V { k: K::Int(y), data: dy })) => {
                int_lanes(m, op, ty, span, &mut x, |x, _| (x, y))?;
                Vals::Ints(x, dx || dy)
            }
            (Vals::Same(V { k: K::Int(x), data: dx }), Vals::Ints(mut y, dy)) => {
                int_lanes(m, op, ty, span, &mut y, |y, _| (x, y))?;
                Vals::Ints(y, dx || dy)
            }
            (a, b) => self.map2(m, a, b, |x, y| int_binary(op, ty, x, y, span))?,
        })
    }

    /// A pointer plus a byte offset: in a tight loop when the pointers lie in one object and the
    /// offsets are integers, which is what the general case does lane by lane.
    fn ptr_offset(&mut self, m: u32, p: Vals, b: Vals) -> Result<Vals> {
        let add = |o: i64, d: i128| o.wrapping_add(d as i64);
        Ok(match (p, b) {
            (Vals::Same(V { k: K::Ptr(base, o), data: dp }), Vals::Ints(d, db)) => {
                let mut out = self.offsets();
                for l in lanes(m) {
                    out[l] = add(o, d[l]);
                }
                self.ints.push(d);
                Vals::Ptrs(base, out, dp || db)
            }
            (Vals::Ptrs(base, mut o, dp), Vals::Same(V { k: K::Int(d), data: db })) => {
                for l in lanes(m) {
                    o[l] = add(o[l], d);
                }
                Vals::Ptrs(base, o, dp || db)
            }
            (Vals::Ptrs(base, mut o, dp), Vals::Ints(d, db)) => {
                for l in lanes(m) {
                    o[l] = add(o[l], d[l]);
                }
                self.ints.push(d);
                Vals::Ptrs(base, o, dp || db)
            }
            (p, b) => self.map2(m, p, b, |p, b| {
                let data = p.data || b.data;
                Ok(match (p.k, b.k) {
                    (K::Ptr(base, o), K::Int(d)) => V { k: K::Ptr(base, add(o, d)), data },
                    (K::Ptr(base, _), K::Unknown) | (K::PtrUnknown(base), _) => V { k: K::PtrUnknown(base), data },
                    (K::Missing(p), _) | (_, K::Missing(p)) => V { k: K::Missing(p), data },
                    (K::Undef, _) | (_, K::Undef) => UNDEF,
                    _ => V { k: K::Unknown, data: true },
                })
            })?,
        })
    }

    /// A copy of `v`'s values.
    fn copy(&mut self, v: &Vals) -> Vals {
        match v {
            Vals::Same(x) => Vals::Same(*x),
            Vals::Ints(src, data) => {
                let mut b = self.ints();
                *b = **src;
                Vals::Ints(b, *data)
            }
            Vals::Ptrs(base, src, data) => {
                let mut b = self.offsets();
                *b = **src;
                Vals::Ptrs(*base, b, *data)
            }
            Vals::Lanes(src) => {
                let mut b = self.lanes();
                *b = **src;
                Vals::Lanes(b)
            }
        }
    }
}

/// Values the threads hold in registers (the GVN model): per address expression (`key`, its
/// value number) into an object (`base`) that a lane loaded or stored, the lanes holding its
/// value and at which offset.
///
/// The model is per lane: each lane has its own list of held values, at most [`HELD_MAX`], the
/// oldest dropped first. The rows serve all lanes of the warp, so that an access finds its row
/// once instead of once per lane; lane `l`'s list is the rows whose `lanes` include `l`, in the
/// order of their `since[l]`.
#[derive(Default)]
struct Held {
    rows: Vec<HeldRow>,
    /// Numbers the entries in the order they were added.
    clock: u64,
}

struct HeldRow {
    key: u32,
    base: Base,
    lanes: u32,
    offset: [i64; WARP],
    since: [u64; WARP],
}

/// The most values one lane holds.
pub(crate) const HELD_MAX: usize = 64;

impl Held {
    fn clear(&mut self) {
        self.rows.clear();
        self.clock = 0;
    }

    fn find(&self, key: u32, base: Base) -> Option<usize> {
        self.rows.iter().position(|r| r.key == key && r.base == base)
    }

    /// The row of `key` into `base`, added if no lane has held it yet.
    fn row(&mut self, key: u32, base: Base) -> usize {
        self.find(key, base).unwrap_or_else(|| {
            self.rows.push(HeldRow { key, base, lanes: 0, offset: [0; WARP], since: [0; WARP] });
            self.rows.len() - 1
        })
    }

    /// Whether lane `l` holds the value at `off` of row `i`.
    fn holds(&self, i: Option<usize>, l: usize, off: i64) -> bool {
        i.is_some_and(|i| self.rows[i].lanes >> l & 1 == 1 && self.rows[i].offset[l] == off)
    }

    /// Lanes `m` now hold the values at `offset(lane)` of row `i`.
    fn remember(&mut self, i: usize, m: u32, offset: impl Fn(usize) -> i64) {
        let new = m & !self.rows[i].lanes;
        // A full list drops its oldest entry; one can only be full when there are more rows.
        if new != 0 && self.rows.len() > HELD_MAX {
            for l in lanes(new) {
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
        // An entry held already keeps its place in the lane's list; only its offset changes.
        for l in lanes(m) {
            r.offset[l] = offset(l);
        }
        for l in lanes(new) {
            r.since[l] = self.clock;
        }
        r.lanes |= m;
        self.clock += 1;
    }

    /// Lanes `m` drop the values whose object satisfies `drop`.
    fn forget(&mut self, m: u32, drop: impl Fn(Base) -> bool) {
        for r in &mut self.rows {
            if r.lanes & m != 0 && drop(r.base) {
                r.lanes &= !m;
            }
        }
    }
}

struct LoopFrame {
    brk: u32,
    cont: u32,
}

/// Where each thread of a warp sits in its block; the same for every block of the launch.
struct WarpShape {
    tid: [[u32; 3]; WARP],
    /// The lanes the warp has (a partial last warp has fewer than 32).
    mask: u32,
    /// Per dimension: whether `threadIdx` there is the same in every lane of the warp.
    tid_uniform: [bool; 3],
}

fn warp_shapes(block: [u32; 3]) -> Vec<WarpShape> {
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
struct WarpState {
    /// Locals, each in the [`Vals`] form over the lanes still alive ([`WarpState::alive`]).
    vars: Vec<Vals>,
    tid: [[u32; 3]; WARP],
    tid_uniform: [bool; 3],
    mask: u32,
    returned: u32,
    loops: Vec<LoopFrame>,
    held: Held,
    /// Stores kept in a register inside their loop ([`crate::ir::licm`]): (loop depth, op,
    /// lane, base, offset); written once when the loop ends.
    promoted: Vec<(usize, MemOpId, usize, Base, i64)>,
}

impl WarpState {
    fn new(locals: usize) -> Self {
        WarpState {
            vars: (0..locals).map(|_| Vals::Same(UNDEF)).collect(),
            tid: [[0; 3]; WARP],
            tid_uniform: [true; 3],
            mask: 0,
            returned: 0,
            loops: Vec::new(),
            held: Held::default(),
            promoted: Vec::new(),
        }
    }

    /// A fresh warp: every local undefined, no lane returned, no value held.
    fn start(&mut self, shape: &WarpShape, pool: &mut Pool) {
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
    }

    /// Lanes that may still run a statement: every later mask lies inside this one.
    fn alive(&self) -> u32 {
        self.mask & !self.returned
    }

    /// `local = v` in lanes `m`; the other lanes keep their value.
    fn assign(&mut self, local: LocalId, v: Vals, m: u32, pool: &mut Pool) {
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

pub struct Engine<'a> {
    k: &'a Kernel,
    s: &'a Setup,
    block_idx: [u32; 3],
    block_linear: u64,
    ops: Vec<OpStats>,
    keys: Vec<u32>,
    op_loops: Vec<Vec<usize>>,
    loop_spans: Vec<Span>,
    varying: Vec<bool>,
    data_branches: HashSet<Span>,
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
    /// Set only by [`probe()`] (`explain`): copies one execution out, lane by lane.
    probe: Option<Box<probe::ProbeState>>,
    /// The first read past the end of a filled array: (parameter, element index, fill length).
    fill_ran_out: Option<(ParamId, i64, u64)>,
}

/// Per memory operation, its address expression's value number: equal keys mean the compiler
/// sees the same address expression (the GVN model's reuse needs equal keys).
pub(crate) fn address_keys(k: &Kernel) -> Vec<u32> {
    crate::ir::vn::address_numbers(k)
}

/// The kernel's loops: per memory operation the loops around it, each loop's span, and the
/// loop of a span.
pub(crate) fn loop_table(k: &Kernel) -> (Vec<Vec<usize>>, Vec<Span>, HashMap<Span, usize>) {
    let mut op_loops = vec![Vec::new(); k.mem_ops.len()];
    let mut spans = Vec::new();
    collect_loops(&k.body, &mut Vec::new(), &mut op_loops, &mut spans);
    let ids = spans.iter().enumerate().map(|(i, s)| (*s, i)).collect();
    (op_loops, spans, ids)
}

/// Byte offset of each shared array in the block's shared window: declaration order, 16-byte
/// aligned, dynamic (`extern`) arrays after the static ones, as the compiler places them.
pub(crate) fn shared_layout(k: &Kernel) -> Vec<i64> {
    let mut at = vec![0; k.shared.len()];
    let mut off = 0i64;
    for pass_extern in [false, true] {
        for (i, a) in k.shared.iter().enumerate().filter(|(_, a)| a.is_extern == pass_extern) {
            off = (off + 15) & !15;
            at[i] = off;
            off += a.bytes() as i64;
        }
    }
    at
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
    for linear in order {
        e.block_idx = [(linear % gx) as u32, (linear / gx % gy) as u32, (linear / (gx * gy)) as u32];
        e.block_linear = linear;
        e.boundary.begin_block(linear);
        for shape in &shapes {
            e.boundary.begin_warp();
            st.start(shape, &mut e.pool);
            e.exec_block(&kernel.body, shape.mask, &mut st)?;
        }
    }
    // The launch said what the array holds, and the kernel reads past it: counting those reads
    // as unknown data would hide the mistake (on a GPU it reads past the buffer).
    if let Some((p, k, len)) = e.fill_ran_out {
        let param = kernel.param(p);
        let fill = setup.fills[p.0 as usize].as_ref().map(|(f, _)| f.to_string()).unwrap_or_default();
        return Err(Diagnostic::at(
            ErrorKind::Launch,
            param.span,
            format!(
                "the fill of `{}` ran out: the kernel reads element {k}, and `{fill}` gives {len} elements",
                param.name
            ),
        )
        .note(format!(
            "give a fill at least as long as the reads (--fill {}=permutation:{}:SEED)",
            param.name,
            k + 1
        )));
    }
    Ok(e.finish())
}

impl<'a> Engine<'a> {
    fn new(k: &'a Kernel, s: &'a Setup, boundary: &'a mut (dyn SectorSink + 'static)) -> Self {
        let keys = address_keys(k);
        let (op_loops, loop_spans, loop_ids) = loop_table(k);
        // Shared arrays laid out in declaration order, each aligned to 16 bytes (an assumption
        // the sheet states; bank conflicts depend only on offsets within an array).
        // Dynamic (`extern`) arrays start where the static ones end, as the compiler places them.
        let shared_base = shared_layout(k).iter().map(|o| SHARED_WINDOW + o).collect();
        Engine {
            promoted: crate::ir::licm::promoted_stores(k),
            k,
            s,
            block_idx: [0; 3],
            block_linear: 0,
            ops: vec![OpStats::default(); k.mem_ops.len()],
            keys,
            op_loops,
            varying: vec![false; loop_spans.len()],
            loop_spans,
            data_branches: HashSet::new(),
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
        }
    }

    fn finish(mut self) -> Trace {
        for (i, loops) in self.op_loops.iter().enumerate() {
            if loops.iter().any(|&l| self.varying[l]) {
                self.ops[i].varying_trip = true;
            }
        }
        let mut data_branches: Vec<Span> = self.data_branches.into_iter().collect();
        data_branches.sort_by_key(|s| (s.file, s.line, s.column));
        let varying_loops = self.loop_spans.iter().zip(&self.varying).filter(|(_, v)| **v).map(|(s, _)| *s).collect();
        let used_fills =
            self.used_fills.iter().enumerate().filter(|(_, u)| **u).map(|(p, _)| ParamId(p as u32)).collect();
        Trace { ops: self.ops, data_branches, varying_loops, used_fills, work: self.work }
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

    fn exec_block(&mut self, stmts: &[Stmt], mask: u32, st: &mut WarpState) -> Result<()> {
        for s in stmts {
            let m = self.live(mask, st);
            if m == 0 {
                return Ok(());
            }
            self.exec(s, m, st)?;
        }
        Ok(())
    }

    fn exec(&mut self, s: &Stmt, m: u32, st: &mut WarpState) -> Result<()> {
        match s {
            Stmt::Assign { local, value, span } => {
                self.tick(*span)?;
                let v = self.eval(value, m, st)?;
                st.assign(*local, v, m, &mut self.pool);
            }
            Stmt::Store { op, addr, value } => {
                let span = self.k.mem_op(*op).span;
                self.tick(span)?;
                let v = self.eval(value, m, st)?;
                self.pool.put(v);
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
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
                self.pool.put(c);
                if t != 0 {
                    self.exec_block(then, t, st)?;
                }
                let e = m & !t;
                if e != 0 && !els.is_empty() {
                    self.exec_block(els, e, st)?;
                }
            }
            Stmt::Loop { cond, body, step, test_first, span, synthetic } => {
                let id = self.loop_ids[span];
                self.loop_stack.push(id);
                st.loops.push(LoopFrame { brk: 0, cont: 0 });
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
            Stmt::Barrier => {
                // The compiler keeps no loaded value across a barrier.
                st.held.forget(m, |_| true);
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
        st: &mut WarpState,
        id: usize,
    ) -> Result<()> {
        let mut lm = m;
        let mut first = true;
        loop {
            self.tick(span)?;
            if let Some(c) = cond {
                if test_first || !first {
                    let v = self.eval(c, lm, st)?;
                    let t = self.truth_loop(&v, lm, span)?;
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

    /// Lanes of `m` where the branch condition holds. Unknown data: taken (stated).
    fn truth(&mut self, c: &Vals, m: u32, span: Span) -> Result<u32> {
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

    fn lane_truth(&mut self, v: V, span: Span) -> Result<bool> {
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

    fn truth_loop(&mut self, c: &Vals, m: u32, span: Span) -> Result<u32> {
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
                "this loop's condition depends on data read from memory, so its trip count is unknown",
            )
            .note(
                "give the array's contents with --fill NAME=SPEC (e.g. constant:8), or bound the loop by a parameter",
            ));
        }
        self.truth(c, m, span)
    }

    fn missing(&self, p: ParamId, span: Span, what: &str) -> Diagnostic {
        let name = &self.k.param(p).name;
        Diagnostic::at(
            ErrorKind::MissingArgument,
            span,
            format!("{what} depends on parameter `{name}`, which has no value"),
        )
        .note(format!("pass --arg {name}=VALUE"))
    }

    fn param_value(&self, p: ParamId) -> V {
        let param = self.k.param(p);
        match &param.ty {
            Ty::Ptr(_) => V { k: K::Ptr(Base::Param(p), 0), data: false },
            _ => match self.s.values[p.0 as usize] {
                Some(ParamValue::Int(i)) => V { k: K::Int(i), data: false },
                Some(ParamValue::Float(f)) => V { k: K::Float(f), data: false },
                None => V { k: K::Missing(p), data: false },
            },
        }
    }

    fn builtin(&self, b: Builtin, st: &WarpState, l: usize) -> i128 {
        let s = self.s;
        (match b {
            Builtin::ThreadIdx(d) => st.tid[l][d as usize],
            Builtin::BlockIdx(d) => self.block_idx[d as usize],
            Builtin::BlockDim(d) => s.block[d as usize],
            Builtin::GridDim(d) => s.grid[d as usize],
            Builtin::WarpSize => WARP as u32,
        }) as i128
    }

    /// The values of `e` in lanes `m`. Operands are evaluated in the same order, lanes in the
    /// same order, as a lane-by-lane evaluation would, so errors and counts do not depend on
    /// which lanes share a value.
    fn eval(&mut self, e: &Expr, m: u32, st: &mut WarpState) -> Result<Vals> {
        if m == 0 {
            // No lane computes anything: no error, no access (a loop test after every lane left).
            return Ok(Vals::Same(UNDEF));
        }
        let int = |v: i128| V { k: K::Int(v), data: false };
        let pool = &mut self.pool;
        Ok(match e {
            Expr::Int(v, _) => Vals::Same(int(*v)),
            Expr::Float(f) => Vals::Same(V { k: K::Float(*f), data: false }),
            Expr::Local(id) => pool.copy(&st.vars[id.0 as usize]),
            Expr::Param(p) => Vals::Same(self.param_value(*p)),
            Expr::Builtin(b) => match b {
                Builtin::ThreadIdx(d) if !st.tid_uniform[*d as usize] => {
                    let mut out = pool.ints();
                    for l in lanes(m) {
                        out[l] = st.tid[l][*d as usize] as i128;
                    }
                    Vals::Ints(out, false)
                }
                _ => Vals::Same(int(self.builtin(*b, st, m.trailing_zeros() as usize))),
            },
            Expr::SharedBase(id) => {
                let a = self.shared_base[id.0 as usize];
                Vals::Same(V { k: K::Ptr(Base::Shared(*id), a - SHARED_WINDOW), data: false })
            }
            Expr::Binary { op, ty, lhs, rhs, span } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                self.pool.int_binary(m, *op, *ty, a, b, *span)?
            }
            Expr::FloatBinary { op, lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                self.pool.map2(m, a, b, |x, y| Ok(float_binary(*op, x, y)))?
            }
            Expr::Unary { op, ty, arg } => {
                let a = self.eval(arg, m, st)?;
                self.pool.map1(m, a, |x| unary(*op, *ty, x))
            }
            Expr::ToInt { ty, arg } => match self.eval(arg, m, st)? {
                // What `to_int` does to an integer, lane by lane.
                Vals::Ints(mut x, data) => {
                    for l in lanes(m) {
                        x[l] = wrap(*ty, x[l]);
                    }
                    Vals::Ints(x, data)
                }
                a => {
                    let s = self.s;
                    self.pool.map1(m, a, |x| to_int(*ty, x, s))
                }
            },
            Expr::ToFloat(arg) => {
                let a = self.eval(arg, m, st)?;
                self.pool.map1(m, a, |x| match x.k {
                    K::Int(v) => V { k: K::Float(v as f64), data: x.data },
                    _ => x,
                })
            }
            Expr::Logical { and, lhs, rhs } => {
                let and = *and;
                // The lane's result when the left side decides it; `None`: the right side decides.
                let decided = |v: V| match v.k {
                    K::Int(x) if (x != 0) != and => Some(V { k: K::Int(!and as i128), data: v.data }),
                    K::Float(f) if (f != 0.0) != and => Some(V { k: K::Int(!and as i128), data: v.data }),
                    K::Ptr(..) | K::PtrUnknown(_) if !and => Some(int(1)),
                    // Unknown data: assume the side that evaluates the right operand.
                    _ => None,
                };
                let a = self.eval(lhs, m, st)?;
                if let Vals::Same(a) = a {
                    if let Some(v) = decided(a) {
                        return Ok(Vals::Same(v));
                    }
                    let b = self.eval(rhs, m, st)?;
                    return Ok(self.pool.map1(m, b, |y| logical_combine(a, y)));
                }
                // Lanes whose result the left side does not decide evaluate the right side.
                let mut out = self.pool.lanes();
                let mut need = 0u32;
                for l in lanes(m) {
                    let v = a.at(l);
                    out[l] = match decided(v) {
                        Some(r) => r,
                        None => {
                            need |= 1 << l;
                            v
                        }
                    };
                }
                self.pool.put(a);
                if need != 0 {
                    let b = self.eval(rhs, need, st)?;
                    for l in lanes(need) {
                        out[l] = logical_combine(out[l], b.at(l));
                    }
                    self.pool.put(b);
                }
                self.pool.pack(m, out)
            }
            Expr::Select { cond, then, els } => {
                let c = self.eval(cond, m, st)?;
                let span = expr_span(cond).unwrap_or(self.k.span);
                let t = self.truth(&c, m, span)?;
                self.pool.put(c);
                let f = m & !t;
                if f == 0 {
                    self.eval(then, t, st)?
                } else if t == 0 {
                    self.eval(els, f, st)?
                } else {
                    let a = self.eval(then, t, st)?;
                    let b = self.eval(els, f, st)?;
                    let mut out = self.pool.lanes();
                    for l in lanes(m) {
                        out[l] = if t >> l & 1 == 1 { a.at(l) } else { b.at(l) };
                    }
                    self.pool.put(a);
                    self.pool.put(b);
                    self.pool.pack(m, out)
                }
            }
            Expr::PtrOffset { ptr, bytes } => {
                let p = self.eval(ptr, m, st)?;
                let b = self.eval(bytes, m, st)?;
                self.pool.ptr_offset(m, p, b)?
            }
            Expr::PtrDiff { lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                self.pool.map2(m, a, b, |a, b| {
                    Ok(match (a.k, b.k) {
                        (K::Ptr(x, o1), K::Ptr(y, o2)) if x == y => {
                            V { k: K::Int((o1 - o2) as i128), data: a.data || b.data }
                        }
                        _ => V { k: K::Unknown, data: true },
                    })
                })?
            }
            Expr::Load { op, addr } => {
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
                let v = self.loaded(&a, m, self.k.mem_op(*op).width);
                self.pool.put(a);
                v
            }
            Expr::Opaque { args, .. } => {
                let mut data = false;
                let mut missing = None;
                for a in args {
                    let v = self.eval(a, m, st)?;
                    let mut see = |v: V| {
                        data |= v.data;
                        if let K::Missing(p) = v.k {
                            missing = Some(p);
                        }
                    };
                    match &v {
                        Vals::Same(v) => see(*v),
                        _ => lanes(m).for_each(|l| see(v.at(l))),
                    }
                    self.pool.put(v);
                }
                let k = match missing {
                    Some(p) => K::Missing(p),
                    None => K::Unknown,
                };
                Vals::Same(V { k, data: data || missing.is_none() })
            }
            Expr::Warp { op, ty, args, .. } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let v = self.eval(a, m, st)?;
                    let mut b = [UNDEF; WARP];
                    for l in lanes(m) {
                        b[l] = v.at(l);
                    }
                    self.pool.put(v);
                    vals.push(b);
                }
                let out = warp::warp_op(*op, *ty, m, &vals, &RefLanes, UNDEF)
                    .unwrap_or_else(|never: std::convert::Infallible| match never {});
                let mut b = self.pool.lanes();
                *b = out;
                self.pool.pack(m, b)
            }
        })
    }

    /// One warp-level execution of memory instruction `op` by lanes `m` at addresses `a`:
    /// applies the compiler's load elimination and counts sectors (global) or wavefronts
    /// (shared). What the lanes read is [`Engine::loaded`].
    fn access(&mut self, id: MemOpId, a: &Vals, m: u32, st: &mut WarpState) -> Result<()> {
        let op = self.k.mem_op(id);
        let key = self.keys[id.0 as usize];
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
        let gvn = op.kind == AccessKind::Load && !op.volatile;
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
                match (base, addr) {
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
        if let Some((lo, end)) = extent {
            self.footprint(id, lo, end);
        }
        // Update what each lane holds after this access: a load's lanes hold what they read; a
        // store's lanes drop what the store may have changed, then hold what they wrote.
        let held = &mut st.held;
        match op.kind {
            AccessKind::Load if op.volatile => {}
            AccessKind::Load => hold(held, key, a, active),
            // The copy's data lands in shared memory, read after a wait (a barrier).
            AccessKind::AsyncCopy => {}
            // A store or an atomic writes memory: what it may change is no longer held.
            AccessKind::Store | AccessKind::Red | AccessKind::Atom => {
                match a {
                    Vals::Ptrs(b, ..) => held.forget(m, |x| self.may_alias(x, *b)),
                    _ => {
                        for l in lanes(m) {
                            match a.at(l).k {
                                K::Ptr(b, _) | K::PtrUnknown(b) => held.forget(1 << l, |x| self.may_alias(x, b)),
                                _ => held.forget(1 << l, |_| true),
                            }
                        }
                    }
                }
                // A store's lanes hold what they wrote; an atomic's location is the other
                // threads' business.
                if op.kind == AccessKind::Store {
                    hold(held, key, a, m);
                }
            }
        }
        if self.probe.is_some() {
            let promoted = self.promoted[id.0 as usize] && n_unknown == 0 && !st.loops.is_empty();
            self.observe(id, a, m, m & !active, promoted);
        }
        if active == 0 {
            return Ok(());
        }
        if self.promoted[id.0 as usize] && n_unknown == 0 && !st.loops.is_empty() {
            // Kept in a register: the memory sees one store after the loop, per lane its last.
            let depth = st.loops.len();
            for l in lanes(active) {
                if let K::Ptr(b, off) = a.at(l).k {
                    st.promoted.retain(|p| !(p.1 == id && p.2 == l));
                    st.promoted.push((depth, id, l, b, off));
                }
            }
            return Ok(());
        }
        self.record(id, &addrs[..n_known], n_unknown, active.count_ones() as u64, data, base_of)
    }

    /// The stores promoted out of the loop that just ended: one warp-level store each.
    fn flush_promoted(&mut self, st: &mut WarpState) -> Result<()> {
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
    fn loaded(&mut self, a: &Vals, m: u32, width: u32) -> Vals {
        let unknown = V { k: K::Unknown, data: true };
        if !self.any_fill {
            // No array's contents are given: every lane reads data nobody knows.
            return Vals::Same(unknown);
        }
        let read = |e: &mut Self, v: V| match v.k {
            K::Ptr(b, off) => e.load_value(b, off, width),
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
    fn may_alias(&self, a: Base, b: Base) -> bool {
        may_alias(a, b, &self.restrict_params)
    }

    fn absolute(&self, b: Base, off: i64) -> i64 {
        absolute(self.s, b, off)
    }

    /// Widens the instruction's footprint to `[lo, end)` (its base is set by [`Engine::record`]).
    fn footprint(&mut self, id: MemOpId, lo: i64, end: i64) {
        let s = &mut self.ops[id.0 as usize];
        s.min_off = Some(s.min_off.map_or(lo, |m| m.min(lo)));
        s.end_off = Some(s.end_off.map_or(end, |m| m.max(end)));
    }

    /// The value a load returns: the fill's element when the array's contents are known.
    #[inline]
    fn load_value(&mut self, b: Base, off: i64, width: u32) -> V {
        if let Base::Param(p) = b {
            if let Some((fill, table)) = &self.s.fills[p.0 as usize] {
                if let Ty::Ptr(t) = &self.k.param(p).ty {
                    if t.pointee.is_int() && off.rem_euclid(width as i64) == 0 {
                        if let Some(v) = fill.value(off / width as i64, table.as_deref()) {
                            self.used_fills[p.0 as usize] = true;
                            let v = match &t.pointee {
                                Ty::Int(it) => it.wrap(v as i128),
                                _ => v as i128,
                            };
                            return V { k: K::Int(v), data: true };
                        }
                        if let (crate::fill::Fill::Permutation { len, .. }, None) = (fill, &self.fill_ran_out) {
                            self.fill_ran_out = Some((p, off / width as i64, *len));
                        }
                    }
                }
            }
        }
        V { k: K::Unknown, data: true }
    }

    /// Counts one warp-level execution: the only place sectors and wavefronts are counted.
    fn record(
        &mut self,
        id: MemOpId,
        addrs: &[i64],
        n_unknown: u64,
        lanes_active: u64,
        data: bool,
        base: Option<Base>,
    ) -> Result<()> {
        let op = self.k.mem_op(id);
        let width = op.width;
        let s = &mut self.ops[id.0 as usize];
        s.executions += 1;
        s.lanes += lanes_active;
        if base.is_some() {
            s.base = base;
        }
        if data {
            s.data_executions += 1;
        }
        match op.space {
            Space::Global => {
                let known = if op.kind.is_atomic() && !op.warp_aggregated {
                    count::atomic_sectors(addrs, width, &mut self.scratch)
                } else {
                    sectors_of(addrs, width, &mut self.scratch)
                };
                s.ideal_sectors += count::ideal_sectors(addrs, n_unknown, width);
                let g = count::global_sectors(known, n_unknown, width);
                s.sectors += g.sectors;
                s.sectors_min += g.min;
                s.sectors_max += g.max;
                // Atomics are performed in L2 and counted apart there: the cache model's reads
                // and writes do not include them. The known lanes' sectors travel; the unknown
                // ones are counted apart.
                let feed = !op.kind.is_atomic();
                if feed {
                    self.boundary.access(id.0 as usize, op.kind, op.cache, &self.scratch, addrs, width);
                }
                if n_unknown > 0 {
                    s.unknown_executions += 1;
                    if feed {
                        self.boundary.unknown(id.0 as usize, op.kind, g.sectors - known);
                    }
                }
            }
            Space::Shared => {
                if n_unknown > 0 && op.kind == AccessKind::Atom {
                    // A shared histogram: one ATOMS per warp whatever the bins; its wavefronts
                    // depend on them (counted for the known lanes, at least one).
                    s.unknown_executions += 1;
                    let w = wavefronts(addrs, width);
                    s.wavefronts += w.wavefronts.max(1);
                    s.ideal_wavefronts += w.ideal.max(1);
                    return Ok(());
                }
                if n_unknown > 0 {
                    return Err(Diagnostic::at(
                        ErrorKind::Unsupported,
                        op.span,
                        format!(
                            "the shared-memory address of `{}` depends on data the analysis does not know",
                            op.text
                        ),
                    ));
                }
                let w = wavefronts(addrs, width);
                s.wavefronts += w.wavefronts;
                s.ideal_wavefronts += w.ideal;
            }
        }
        Ok(())
    }
}

/// The reference engine's lane values for [`warp::warp_op`].
struct RefLanes;

impl warp::LaneValues<V, std::convert::Infallible> for RefLanes {
    fn read(&self, v: &V) -> std::result::Result<warp::Lane<V>, std::convert::Infallible> {
        Ok(match v.k {
            K::Int(x) => warp::Lane::Int(x, v.data),
            K::Missing(_) | K::Undef => warp::Lane::Other(*v),
            _ => warp::Lane::Unknown,
        })
    }
    fn int(&self, x: i128, data: bool) -> V {
        V { k: K::Int(x), data }
    }
    fn unknown(&self) -> V {
        V { k: K::Unknown, data: true }
    }
}

/// Lanes `m` now hold the values at their addresses `a` (those that are known) under `key`.
fn hold(held: &mut Held, key: u32, a: &Vals, m: u32) {
    if let Vals::Ptrs(b, offsets, _) = a {
        let i = held.row(key, *b);
        held.remember(i, m, |l| offsets[l]);
        return;
    }
    for l in lanes(m) {
        if let K::Ptr(b, off) = a.at(l).k {
            let i = held.row(key, b);
            held.remember(i, 1 << l, |_| off);
        }
    }
}

fn collect_loops(stmts: &[Stmt], stack: &mut Vec<usize>, op_loops: &mut [Vec<usize>], spans: &mut Vec<Span>) {
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
                collect_loops(then, stack, op_loops, spans);
                collect_loops(els, stack, op_loops, spans);
            }
            Stmt::Loop { cond, body, step, span, .. } => {
                let id = spans.len();
                // Synthetic loops share the call's span; ids stay per loop statement.
                spans.push(*span);
                stack.push(id);
                if let Some(c) = cond {
                    let mut cops = Vec::new();
                    ops_in_expr(c, &mut cops);
                    for o in cops {
                        op_loops[o.0 as usize].extend(stack.iter().copied());
                    }
                }
                collect_loops(body, stack, op_loops, spans);
                collect_loops(step, stack, op_loops, spans);
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

/// The lanes of mask `m`, lowest first.
#[inline]
pub(crate) fn lanes(m: u32) -> impl Iterator<Item = usize> {
    let mut m = m;
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let l = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(l)
        }
    })
}

fn int_binary(op: BinOp, ty: IntTy, a: V, b: V, span: Span) -> Result<V> {
    let data = a.data || b.data;
    let (x, y) = match (a.k, b.k) {
        (K::Int(x), K::Int(y)) => (x, y),
        (K::Missing(p), _) | (_, K::Missing(p)) => return Ok(V { k: K::Missing(p), data }),
        (K::Undef, _) | (_, K::Undef) => return Ok(UNDEF),
        // Pointer comparisons against pointers of the same base (loop bounds like p < end).
        (K::Ptr(ba, oa), K::Ptr(bb, ob)) if ba == bb => (oa as i128, ob as i128),
        _ => return Ok(V { k: K::Unknown, data: true }),
    };
    Ok(V { k: K::Int(int_op(op, ty, x, y, span)?), data })
}

/// `out[l] = x op y` for the lanes `l` of `m` in order, where `(x, y) = operands(out[l], l)`.
/// The loop is written out once per operator, so that the operator is decided once per warp
/// instead of in every lane.
#[inline(always)]
fn int_lanes(
    m: u32,
    op: BinOp,
    ty: IntTy,
    span: Span,
    out: &mut Ints,
    operands: impl Fn(i128, usize) -> (i128, i128),
) -> Result<()> {
    macro_rules! each_op {
        ($($op:ident)*) => {
            match op {
                $(BinOp::$op => {
                    for l in lanes(m) {
                        let (x, y) = operands(out[l], l);
                        out[l] = int_op(BinOp::$op, ty, x, y, span)?;
                    }
                })*
            }
        };
    }
    each_op!(Add Sub Mul Div Rem Shl Shr And Or Xor Lt Le Gt Ge Eq Ne Min Max);
    Ok(())
}

/// `x op y` in type `ty`; comparisons give 0 or 1.
#[inline(always)]
pub(crate) fn int_op(op: BinOp, ty: IntTy, x: i128, y: i128, span: Span) -> Result<i128> {
    let cmp = |c: bool| Ok(c as i128);
    let v = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x.wrapping_mul(y),
        BinOp::Div | BinOp::Rem => {
            if y == 0 {
                return Err(Diagnostic::at(ErrorKind::Arithmetic, span, "integer division by zero in this expression"));
            }
            if op == BinOp::Div {
                x.wrapping_div(y)
            } else {
                x.wrapping_rem(y)
            }
        }
        BinOp::Shl | BinOp::Shr => {
            if y < 0 || y >= ty.bits.max(32) as i128 {
                return Err(Diagnostic::at(
                    ErrorKind::Arithmetic,
                    span,
                    format!("shift by {y} is outside 0..{} for {}", ty.bits.max(32), ty.name()),
                ));
            }
            if op == BinOp::Shl {
                x << y
            } else {
                x >> y
            }
        }
        BinOp::And => x & y,
        BinOp::Or => x | y,
        BinOp::Xor => x ^ y,
        BinOp::Lt => return cmp(x < y),
        BinOp::Le => return cmp(x <= y),
        BinOp::Gt => return cmp(x > y),
        BinOp::Ge => return cmp(x >= y),
        BinOp::Eq => return cmp(x == y),
        BinOp::Ne => return cmp(x != y),
        BinOp::Min => x.min(y),
        BinOp::Max => x.max(y),
    };
    Ok(wrap(ty, v))
}

/// [`IntTy::wrap`], computed on the low 64 bits for types up to 64 bits wide: C's conversion
/// keeps the type's low bits and sign- or zero-extends them, which two word shifts do without
/// the masks and branches on `i128`.
#[inline(always)]
fn wrap(ty: IntTy, v: i128) -> i128 {
    if !(2..=64).contains(&ty.bits) {
        return ty.wrap(v);
    }
    let unused = 64 - ty.bits as u32;
    // The type's bits at the top of a word, then shifted back down, extending the sign or not.
    let top = (v as i64) << unused;
    if ty.signed {
        (top >> unused) as i128
    } else {
        ((top as u64) >> unused) as i128
    }
}

fn float_binary(op: BinOp, a: V, b: V) -> V {
    let data = a.data || b.data;
    let f = |v: V| match v.k {
        K::Float(f) => Some(f),
        K::Int(i) => Some(i as f64),
        _ => None,
    };
    match (a.k, b.k) {
        (K::Missing(p), _) | (_, K::Missing(p)) => return V { k: K::Missing(p), data },
        (K::Undef, _) | (_, K::Undef) => return UNDEF,
        _ => {}
    }
    let (Some(x), Some(y)) = (f(a), f(b)) else { return V { k: K::Unknown, data: true } };
    let c = |c: bool| V { k: K::Int(c as i128), data };
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
        _ => return V { k: K::Unknown, data: true },
    };
    V { k: K::Float(r), data }
}

fn unary(op: UnOp, ty: IntTy, a: V) -> V {
    let k = match (op, a.k) {
        (UnOp::Neg, K::Int(x)) => K::Int(ty.wrap(-x)),
        (UnOp::Neg, K::Float(f)) => K::Float(-f),
        (UnOp::Not, K::Int(x)) => K::Int(ty.wrap(!x)),
        (UnOp::LogicalNot, K::Int(x)) => K::Int((x == 0) as i128),
        (UnOp::LogicalNot, K::Float(f)) => K::Int((f == 0.0) as i128),
        (UnOp::LogicalNot, K::Ptr(..)) => K::Int(0),
        (_, K::Missing(p)) => K::Missing(p),
        (_, K::Undef) => K::Undef,
        _ => K::Unknown,
    };
    V { k, data: a.data || k == K::Unknown }
}

/// Byte address of `off` into `b`, as the hardware sees it.
pub(crate) fn absolute(s: &Setup, b: Base, off: i64) -> i64 {
    match b {
        Base::Param(p) => param_base(p, s.offsets[p.0 as usize]).wrapping_add(off),
        Base::Shared(_) => off,
    }
}

fn to_int(ty: IntTy, a: V, s: &Setup) -> V {
    let k = match a.k {
        K::Int(x) => K::Int(wrap(ty, x)),
        K::Float(f) if f.is_finite() => K::Int(ty.wrap(f.trunc() as i128)),
        K::Ptr(b, off) => K::Int(ty.wrap(absolute(s, b, off) as i128)),
        K::Float(_) | K::PtrUnknown(_) | K::Unknown => K::Unknown,
        other => other,
    };
    V { k, data: a.data || k == K::Unknown }
}

fn logical_combine(a: V, b: V) -> V {
    let data = a.data || b.data;
    let truth = |v: V| match v.k {
        K::Int(x) => Some(x != 0),
        K::Float(f) => Some(f != 0.0),
        K::Ptr(..) => Some(true),
        _ => None,
    };
    match (a.k, b.k) {
        (K::Missing(p), _) | (_, K::Missing(p)) => V { k: K::Missing(p), data },
        (K::Undef, _) | (_, K::Undef) => UNDEF,
        _ => match truth(b) {
            // Only reached when the left side did not decide, so the right side decides.
            Some(t) if truth(a).is_some() => V { k: K::Int(t as i128), data },
            _ => V { k: K::Unknown, data: true },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The GVN model as it is defined, one list per lane, to check [`Held`] against.
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
            let (mut held, mut lists) = (Held::default(), Lists::default());
            // More keys than a lane may hold in some rounds, so that the oldest are dropped.
            let keys = if round % 2 == 0 { 8 } else { 3 * HELD_MAX as u64 };
            for _ in 0..3000 {
                let m = (next(1 << 32) as u32) & (next(1 << 32) as u32 | 0xffff);
                let (key, base) = (next(keys) as u32, bases[next(3) as usize]);
                match next(8) {
                    0..=5 => {
                        let offs: Vec<i64> = (0..WARP).map(|_| next(4) as i64).collect();
                        let i = held.row(key, base);
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
