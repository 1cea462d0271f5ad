//! The reference engine: every warp of every block, lanes in lockstep under an active mask.
//!
//! This module is the one place where a sector is counted ([`sectors_of`] and
//! [`Engine::record`]). Values are tracked per lane with C's integer semantics; anything read
//! from memory is data (exact when the launch gives the array's fill, otherwise unknown and
//! handled by the stated default assumption).

mod shared;

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::*;
use crate::launch::{ParamValue, Setup};
use crate::source::Span;
use std::collections::{HashMap, HashSet};

pub use shared::{wavefronts, Wavefronts};

pub const WARP: usize = 32;
pub const SECTOR: u64 = 32;

/// Where parameter `p`'s buffer starts: far apart, 256-byte aligned, plus the user's offset.
pub fn param_base(p: ParamId, offset: i64) -> i64 {
    ((p.0 as i64) + 1) * (1i64 << 40) + offset
}
/// Shared arrays live in their own window.
const SHARED_WINDOW: i64 = 1 << 60;

/// Distinct 32-byte sectors covering `[a, a + width)` for each address; `buf` is scratch.
pub fn sectors_of(addrs: &[i64], width: u32, buf: &mut Vec<i64>) -> u64 {
    buf.clear();
    for &a in addrs {
        let first = a.div_euclid(SECTOR as i64);
        let last = (a + width as i64 - 1).div_euclid(SECTOR as i64);
        for s in first..=last {
            buf.push(s);
        }
    }
    buf.sort_unstable();
    buf.dedup();
    buf.len() as u64
}

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
    /// Sector streams for the cache model: (block, op, sector) in execution order, global only.
    pub boundary: crate::sheet::build::BoundaryCounter,
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

/// Per-lane record of addresses whose value the thread holds in a register (the GVN model).
#[derive(Clone, Copy)]
struct Avail {
    key: u32,
    base: Base,
    addr: i64,
}

struct LoopFrame {
    brk: u32,
    cont: u32,
}

struct WarpState {
    vars: Vec<Lanes>,
    tid: [[u32; 3]; WARP],
    returned: u32,
    loops: Vec<LoopFrame>,
    avail: Vec<Vec<Avail>>,
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
    used_fills: HashSet<ParamId>,
    shared_base: Vec<i64>,
    work: u64,
    scratch: Vec<i64>,
    boundary: crate::sheet::build::BoundaryCounter,
    loop_ids: HashMap<Span, usize>,
    loop_stack: Vec<usize>,
}

/// Runs the whole launch.
pub fn run(kernel: &Kernel, setup: &Setup) -> Result<Trace> {
    let mut e = Engine::new(kernel, setup);
    let [gx, gy, gz] = setup.grid;
    let [bx, by, bz] = setup.block;
    let threads = (bx * by * bz) as usize;
    let warps = threads.div_ceil(WARP);
    let mut linear = 0u64;
    for z in 0..gz {
        for y in 0..gy {
            for x in 0..gx {
                e.block_idx = [x, y, z];
                e.block_linear = linear;
                e.boundary.begin_block(linear);
                for w in 0..warps {
                    let first = w * WARP;
                    let n = (threads - first).min(WARP);
                    let mut tid = [[0u32; 3]; WARP];
                    for (l, t) in tid.iter_mut().enumerate().take(n) {
                        let lin = (first + l) as u32;
                        *t = [lin % bx, (lin / bx) % by, lin / (bx * by)];
                    }
                    let mask = if n == WARP { u32::MAX } else { (1u32 << n) - 1 };
                    let mut st = WarpState {
                        vars: vec![[UNDEF; WARP]; kernel.locals.len()],
                        tid,
                        returned: 0,
                        loops: Vec::new(),
                        avail: vec![Vec::new(); WARP],
                    };
                    e.exec_block(&kernel.body, mask, &mut st)?;
                }
                linear += 1;
            }
        }
    }
    Ok(e.finish())
}

impl<'a> Engine<'a> {
    fn new(k: &'a Kernel, s: &'a Setup) -> Self {
        // Intern address keys: equal keys mean the compiler sees the same address expression.
        let mut interned: HashMap<&str, u32> = HashMap::new();
        let keys = k
            .mem_ops
            .iter()
            .map(|m| {
                let n = interned.len() as u32;
                *interned.entry(m.addr_key.as_str()).or_insert(n)
            })
            .collect();
        let mut op_loops = vec![Vec::new(); k.mem_ops.len()];
        let mut loop_spans = Vec::new();
        collect_loops(&k.body, &mut Vec::new(), &mut op_loops, &mut loop_spans);
        let loop_ids = loop_spans.iter().enumerate().map(|(i, s)| (*s, i)).collect();
        // Shared arrays laid out in declaration order, each aligned to 16 bytes (an assumption
        // the sheet states; bank conflicts depend only on offsets within an array).
        let mut shared_base = Vec::new();
        let mut off = 0i64;
        for a in &k.shared {
            off = (off + 15) & !15;
            shared_base.push(SHARED_WINDOW + off);
            off += a.bytes() as i64;
        }
        Engine {
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
            used_fills: HashSet::new(),
            shared_base,
            work: 0,
            scratch: Vec::with_capacity(64),
            boundary: crate::sheet::build::BoundaryCounter::default(),
            loop_ids,
            loop_stack: Vec::new(),
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
        let varying_loops =
            self.loop_spans.iter().zip(&self.varying).filter(|(_, v)| **v).map(|(s, _)| *s).collect();
        let mut used_fills: Vec<ParamId> = self.used_fills.into_iter().collect();
        used_fills.sort();
        Trace {
            ops: self.ops,
            data_branches,
            varying_loops,
            used_fills,
            boundary: self.boundary,
            work: self.work,
        }
    }

    fn tick(&mut self, span: Span) -> Result<()> {
        self.work += 1;
        if self.work > self.s.max_work {
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
                let slot = &mut st.vars[local.0 as usize];
                for l in lanes(m) {
                    slot[l] = v[l];
                }
            }
            Stmt::Store { op, addr, value } => {
                let span = self.k.mem_op(*op).span;
                self.tick(span)?;
                let _ = self.eval(value, m, st)?;
                let a = self.eval(addr, m, st)?;
                self.access(*op, &a, m, st)?;
            }
            Stmt::Eval(e) => {
                let _ = self.eval(e, m, st)?;
            }
            Stmt::If { cond, then, els, span } => {
                self.tick(*span)?;
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
                let id = self.loop_ids[span];
                self.loop_stack.push(id);
                st.loops.push(LoopFrame { brk: 0, cont: 0 });
                let id = if *synthetic { usize::MAX } else { id };
                let r = self.run_loop(cond.as_ref(), body, step, *test_first, *span, m, st, id);
                st.loops.pop();
                self.loop_stack.pop();
                r?;
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
                for l in lanes(m) {
                    st.avail[l].clear();
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
    fn truth(&mut self, c: &Lanes, m: u32, span: Span) -> Result<u32> {
        let mut t = 0u32;
        for l in lanes(m) {
            let yes = match c[l].k {
                K::Int(v) => v != 0,
                K::Float(f) => f != 0.0,
                K::Ptr(..) | K::PtrUnknown(_) => true,
                K::Unknown => {
                    self.data_branches.insert(span);
                    true
                }
                K::Missing(p) => return Err(self.missing(p, span, "the branch condition")),
                K::Undef => return Err(undef(span, "the branch condition")),
            };
            if yes {
                t |= 1 << l;
            }
        }
        Ok(t)
    }

    fn truth_loop(&mut self, c: &Lanes, m: u32, span: Span) -> Result<u32> {
        for l in lanes(m) {
            if c[l].k == K::Unknown {
                return Err(Diagnostic::at(
                    ErrorKind::Unsupported,
                    span,
                    "this loop's condition depends on data read from memory, so its trip count is unknown",
                )
                .note("give the array's contents with --fill NAME=SPEC (e.g. constant:8), or bound the loop by a parameter"));
            }
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

    fn eval(&mut self, e: &Expr, m: u32, st: &mut WarpState) -> Result<Lanes> {
        let mut out = [UNDEF; WARP];
        match e {
            Expr::Int(v, _) => fill_lanes(&mut out, m, V { k: K::Int(*v), data: false }),
            Expr::Float(f) => fill_lanes(&mut out, m, V { k: K::Float(*f), data: false }),
            Expr::Local(id) => {
                let src = &st.vars[id.0 as usize];
                for l in lanes(m) {
                    out[l] = src[l];
                }
            }
            Expr::Param(p) => fill_lanes(&mut out, m, self.param_value(*p)),
            Expr::Builtin(b) => {
                for l in lanes(m) {
                    out[l] = V { k: K::Int(self.builtin(*b, st, l)), data: false };
                }
            }
            Expr::SharedBase(id) => {
                let a = self.shared_base[id.0 as usize];
                fill_lanes(&mut out, m, V { k: K::Ptr(Base::Shared(*id), a - SHARED_WINDOW), data: false })
            }
            Expr::Binary { op, ty, lhs, rhs, span } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = int_binary(*op, *ty, a[l], b[l], *span)?;
                }
            }
            Expr::FloatBinary { op, lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = float_binary(*op, a[l], b[l]);
                }
            }
            Expr::Unary { op, ty, arg } => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = unary(*op, *ty, a[l]);
                }
            }
            Expr::ToInt { ty, arg } => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = to_int(*ty, a[l], self);
                }
            }
            Expr::ToFloat(arg) => {
                let a = self.eval(arg, m, st)?;
                for l in lanes(m) {
                    out[l] = match a[l].k {
                        K::Int(v) => V { k: K::Float(v as f64), data: a[l].data },
                        _ => a[l],
                    };
                }
            }
            Expr::Logical { and, lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                // Lanes whose result the left side does not decide evaluate the right side.
                let mut need = 0u32;
                for l in lanes(m) {
                    match a[l].k {
                        K::Int(v) => {
                            if (v != 0) == *and {
                                need |= 1 << l;
                            } else {
                                out[l] = V { k: K::Int(!*and as i128), data: a[l].data };
                            }
                        }
                        K::Float(f) => {
                            if (f != 0.0) == *and {
                                need |= 1 << l;
                            } else {
                                out[l] = V { k: K::Int(!*and as i128), data: a[l].data };
                            }
                        }
                        K::Ptr(..) | K::PtrUnknown(_) => {
                            if *and {
                                need |= 1 << l
                            } else {
                                out[l] = V { k: K::Int(1), data: false }
                            }
                        }
                        // Unknown data: assume the side that evaluates the right operand.
                        _ => {
                            need |= 1 << l;
                        }
                    }
                }
                if need != 0 {
                    let b = self.eval(rhs, need, st)?;
                    for l in lanes(need) {
                        out[l] = logical_combine(a[l], b[l]);
                    }
                }
            }
            Expr::Select { cond, then, els } => {
                let c = self.eval(cond, m, st)?;
                let span = expr_span(cond).unwrap_or(self.k.span);
                let t = self.truth(&c, m, span)?;
                if t != 0 {
                    let a = self.eval(then, t, st)?;
                    for l in lanes(t) {
                        out[l] = a[l];
                    }
                }
                let f = m & !t;
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
                    let data = p[l].data || b[l].data;
                    out[l] = match (p[l].k, b[l].k) {
                        (K::Ptr(base, o), K::Int(d)) => V { k: K::Ptr(base, o.wrapping_add(d as i64)), data },
                        (K::Ptr(base, _), K::Unknown) | (K::PtrUnknown(base), _) => {
                            V { k: K::PtrUnknown(base), data }
                        }
                        (K::Missing(p), _) | (_, K::Missing(p)) => V { k: K::Missing(p), data },
                        (K::Undef, _) | (_, K::Undef) => UNDEF,
                        _ => V { k: K::Unknown, data: true },
                    };
                }
            }
            Expr::PtrDiff { lhs, rhs } => {
                let a = self.eval(lhs, m, st)?;
                let b = self.eval(rhs, m, st)?;
                for l in lanes(m) {
                    out[l] = match (a[l].k, b[l].k) {
                        (K::Ptr(x, o1), K::Ptr(y, o2)) if x == y => {
                            V { k: K::Int((o1 - o2) as i128), data: a[l].data || b[l].data }
                        }
                        _ => V { k: K::Unknown, data: true },
                    };
                }
            }
            Expr::Load { op, addr } => {
                let a = self.eval(addr, m, st)?;
                out = self.access(*op, &a, m, st)?;
            }
            Expr::Opaque { args, .. } => {
                let mut data = false;
                let mut missing = None;
                for a in args {
                    let v = self.eval(a, m, st)?;
                    for l in lanes(m) {
                        data |= v[l].data;
                        if let K::Missing(p) = v[l].k {
                            missing = Some(p);
                        }
                    }
                }
                let k = match missing {
                    Some(p) => K::Missing(p),
                    None => K::Unknown,
                };
                fill_lanes(&mut out, m, V { k, data: data || missing.is_none() });
            }
        }
        Ok(out)
    }

    /// One warp-level execution of memory instruction `op` by lanes `m` at addresses `a`:
    /// applies the compiler's load elimination, counts sectors (global) or wavefronts
    /// (shared), and returns the loaded values.
    fn access(&mut self, id: MemOpId, a: &Lanes, m: u32, st: &mut WarpState) -> Result<Lanes> {
        let op = self.k.mem_op(id);
        let key = self.keys[id.0 as usize];
        let mut out = [UNDEF; WARP];
        let mut addrs: [i64; WARP] = [0; WARP];
        let mut n_known = 0usize;
        let mut n_unknown = 0u64;
        let mut active = 0u32;
        let mut data = false;
        let mut base_of = None;
        for l in lanes(m) {
            let (base, addr) = match a[l].k {
                K::Ptr(base, off) => (Some(base), Some(off)),
                K::PtrUnknown(base) => (Some(base), None),
                K::Missing(p) => return Err(self.missing(p, op.span, &format!("the address of `{}`", op.text))),
                K::Undef => return Err(undef(op.span, &format!("the address of `{}`", op.text))),
                K::Int(_) | K::Float(_) | K::Unknown => (None, None),
            };
            data |= a[l].data;
            if let Some(b) = base {
                base_of = Some(b);
            }
            // The GVN model: a lane that already holds this address's value does not load it.
            if op.kind == AccessKind::Load && !op.volatile {
                if let (Some(b), Some(off)) = (base, addr) {
                    if st.avail[l].iter().any(|x| x.key == key && x.base == b && x.addr == off) {
                        self.ops[id.0 as usize].elided_lanes += 1;
                        out[l] = self.load_value(b, off, op.width);
                        continue;
                    }
                }
            }
            active |= 1 << l;
            match (base, addr) {
                (Some(b), Some(off)) => {
                    addrs[n_known] = self.absolute(b, off);
                    n_known += 1;
                    self.footprint(id, b, off, op.width);
                    out[l] = self.load_value(b, off, op.width);
                }
                _ => {
                    n_unknown += 1;
                    out[l] = V { k: K::Unknown, data: true };
                }
            }
        }
        // Update what each lane holds after this access.
        match op.kind {
            AccessKind::Load => {
                if !op.volatile {
                    for l in lanes(active) {
                        if let K::Ptr(b, off) = a[l].k {
                            remember(&mut st.avail[l], Avail { key, base: b, addr: off });
                        }
                    }
                }
            }
            AccessKind::Store => {
                for l in lanes(m) {
                    let v = &mut st.avail[l];
                    match a[l].k {
                        K::Ptr(b, off) => {
                            v.retain(|x| !self.may_alias(x.base, b));
                            remember(v, Avail { key, base: b, addr: off });
                        }
                        K::PtrUnknown(b) => v.retain(|x| !self.may_alias(x.base, b)),
                        _ => v.clear(),
                    }
                }
            }
        }
        if active == 0 {
            return Ok(out);
        }
        self.record(id, &addrs[..n_known], n_unknown, active.count_ones() as u64, data, base_of)?;
        Ok(out)
    }

    /// Whether a store through `b` may change memory read earlier through `a`.
    fn may_alias(&self, a: Base, b: Base) -> bool {
        match (a, b) {
            (Base::Shared(x), Base::Shared(y)) => x == y,
            (Base::Shared(_), _) | (_, Base::Shared(_)) => false,
            (x, y) if x == y => true,
            (x, y) => !(self.k.is_restrict(x) || self.k.is_restrict(y)),
        }
    }

    fn absolute(&self, b: Base, off: i64) -> i64 {
        match b {
            Base::Param(p) => param_base(p, self.s.offsets[p.0 as usize]).wrapping_add(off),
            Base::Shared(_) => off,
        }
    }

    fn footprint(&mut self, id: MemOpId, b: Base, off: i64, width: u32) {
        let s = &mut self.ops[id.0 as usize];
        s.base = Some(b);
        s.min_off = Some(s.min_off.map_or(off, |m| m.min(off)));
        let end = off + width as i64;
        s.end_off = Some(s.end_off.map_or(end, |m| m.max(end)));
    }

    /// The value a load returns: the fill's element when the array's contents are known.
    fn load_value(&mut self, b: Base, off: i64, width: u32) -> V {
        if let Base::Param(p) = b {
            if let Some((fill, table)) = &self.s.fills[p.0 as usize] {
                if let Ty::Ptr(t) = &self.k.param(p).ty {
                    if t.pointee.is_int() && off.rem_euclid(width as i64) == 0 {
                        if let Some(v) = fill.value(off / width as i64, table.as_deref()) {
                            self.used_fills.insert(p);
                            let v = match &t.pointee {
                                Ty::Int(it) => it.wrap(v as i128),
                                _ => v as i128,
                            };
                            return V { k: K::Int(v), data: true };
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
                let known = sectors_of(addrs, width, &mut self.scratch);
                let per_lane = (width as u64).div_ceil(SECTOR);
                let ideal = (lanes_active * width as u64).div_ceil(SECTOR);
                s.ideal_sectors += ideal;
                if n_unknown == 0 {
                    s.sectors += known;
                    s.sectors_min += known;
                    s.sectors_max += known;
                    let block = self.block_linear;
                    self.boundary.access(block, op.kind, op.cache, &self.scratch);
                } else {
                    // Default assumption (DESIGN.md): every unknown lane touches its own sectors.
                    s.unknown_executions += 1;
                    s.sectors += known + n_unknown * per_lane;
                    // Unknown lanes may all fall in sectors already counted, or each in its own
                    // (naturally aligned elements never straddle a sector).
                    s.sectors_min += known.max(per_lane);
                    s.sectors_max += known + n_unknown * per_lane;
                    self.boundary.unknown(op.kind, n_unknown * per_lane);
                }
            }
            Space::Shared => {
                if n_unknown > 0 {
                    return Err(Diagnostic::at(
                        ErrorKind::Unsupported,
                        op.span,
                        format!("the shared-memory address of `{}` depends on data the analysis does not know", op.text),
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

fn remember(v: &mut Vec<Avail>, a: Avail) {
    if let Some(x) = v.iter_mut().find(|x| x.key == a.key && x.base == a.base) {
        x.addr = a.addr;
        return;
    }
    if v.len() >= 64 {
        v.remove(0);
    }
    v.push(a);
}

fn collect_loops(stmts: &[Stmt], stack: &mut Vec<usize>, op_loops: &mut [Vec<usize>], spans: &mut Vec<Span>) {
    fn ops_in_expr(e: &Expr, out: &mut Vec<MemOpId>) {
        match e {
            Expr::Load { op, addr } => {
                out.push(*op);
                ops_in_expr(addr, out);
            }
            Expr::Binary { lhs, rhs, .. }
            | Expr::FloatBinary { lhs, rhs, .. }
            | Expr::Logical { lhs, rhs, .. }
            | Expr::PtrDiff { lhs, rhs } => {
                ops_in_expr(lhs, out);
                ops_in_expr(rhs, out);
            }
            Expr::Unary { arg, .. } | Expr::ToInt { arg, .. } | Expr::ToFloat(arg) => ops_in_expr(arg, out),
            Expr::Select { cond, then, els } => {
                ops_in_expr(cond, out);
                ops_in_expr(then, out);
                ops_in_expr(els, out);
            }
            Expr::PtrOffset { ptr, bytes } => {
                ops_in_expr(ptr, out);
                ops_in_expr(bytes, out);
            }
            Expr::Opaque { args, .. } => args.iter().for_each(|a| ops_in_expr(a, out)),
            _ => {}
        }
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

#[inline]
fn lanes(m: u32) -> impl Iterator<Item = usize> {
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

fn fill_lanes(out: &mut Lanes, m: u32, v: V) {
    for l in lanes(m) {
        out[l] = v;
    }
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
    let cmp = |c: bool| Ok(V { k: K::Int(c as i128), data });
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
    Ok(V { k: K::Int(ty.wrap(v)), data })
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

fn to_int(ty: IntTy, a: V, e: &Engine) -> V {
    let k = match a.k {
        K::Int(x) => K::Int(ty.wrap(x)),
        K::Float(f) if f.is_finite() => K::Int(ty.wrap(f.trunc() as i128)),
        K::Ptr(b, off) => K::Int(ty.wrap(e.absolute(b, off) as i128)),
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
