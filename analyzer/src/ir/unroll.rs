//! Which loops nvcc may unroll at run time (LLVM's runtime unrolling, a remainder loop beside
//! the unrolled one). That matters only where lanes of a warp run different trip counts: the
//! unrolled copies and the remainder then split the warp's executions differently from the
//! source loop, which the counts do not model. Measured on the H200
//! (`validate/probes/unroll/`): a loop whose induction step is not a compile-time constant
//! (`i += blockDim.x`, `i += blockDim.x * gridDim.x`; its trip count needs a division at run
//! time) or that has a second exit (`break`, `return`) is not unrolled, and its executions are
//! the source loop's exactly; a loop with a constant step and one exit is (by 4, or 16 and more
//! for the smallest bodies, ptxas unrolling again).

use super::shared_layout::SharedLayout;
use super::*;
use std::collections::HashMap;

/// Whether nvcc may unroll this loop at run time: `false` only where it is known not to.
pub fn may_runtime_unroll(cond: Option<&Expr>, body: &[Stmt], step: &[Stmt]) -> bool {
    if exits_early(body, 0) || exits_early(step, 0) {
        return false;
    }
    let Some(cond) = cond else { return true };
    let mut induction = Vec::new();
    licm::walk(cond, &mut |x| {
        if let Expr::Local(l) = x {
            induction.push(*l);
        }
    });
    // Some variable of the condition advances by a value known only at run time.
    !induction.iter().any(|&l| {
        let mut steps = Vec::new();
        increments(body, l, &mut steps);
        increments(step, l, &mut steps);
        !steps.is_empty() && steps.iter().all(|s| runtime_value(s))
    })
}

/// A `break` of this loop (at loop depth 0) or a `return` anywhere inside it.
fn exits_early(stmts: &[Stmt], depth: usize) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Break => depth == 0,
        Stmt::Return => true,
        Stmt::If { then, els, .. } => exits_early(then, depth) || exits_early(els, depth),
        Stmt::Loop { body, step, .. } => exits_early(body, depth + 1) || exits_early(step, depth + 1),
        _ => false,
    })
}

/// What `l` is advanced by in `l = l + E` / `l = l - E` (through conversions), for every
/// assignment to `l`; an assignment of another shape pushes the whole value, which is then
/// not a run-time-only step unless it is one.
fn increments<'a>(stmts: &'a [Stmt], l: LocalId, out: &mut Vec<&'a Expr>) {
    for s in stmts {
        match s {
            Stmt::Assign { local, value, .. } if *local == l => out.push(step_of(value, l).unwrap_or(value)),
            Stmt::If { then, els, .. } => {
                increments(then, l, out);
                increments(els, l, out);
            }
            Stmt::Loop { body, step, .. } => {
                increments(body, l, out);
                increments(step, l, out);
            }
            _ => {}
        }
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::ToInt { arg, .. } => strip(arg),
        e => e,
    }
}

fn step_of(value: &Expr, l: LocalId) -> Option<&Expr> {
    match strip(value) {
        Expr::Binary { op: BinOp::Add, lhs, rhs, .. } => match (strip(lhs), strip(rhs)) {
            (Expr::Local(x), _) if *x == l => Some(rhs),
            (_, Expr::Local(x)) if *x == l => Some(lhs),
            _ => None,
        },
        Expr::Binary { op: BinOp::Sub, lhs, rhs, .. } => match strip(lhs) {
            Expr::Local(x) if *x == l => Some(rhs),
            _ => None,
        },
        _ => None,
    }
}

/// An integer known only at run time: built from the launch's shape or a kernel parameter,
/// with no local, load or other unknown in it.
fn runtime_value(e: &Expr) -> bool {
    let mut runtime = false;
    let mut other = false;
    licm::walk(e, &mut |x| match x {
        Expr::Builtin(Builtin::BlockDim(_) | Builtin::GridDim(_)) | Expr::Param(_) => runtime = true,
        Expr::Int(..) | Expr::Builtin(_) | Expr::Binary { .. } | Expr::ToInt { .. } | Expr::Unary { .. } => {}
        _ => other = true,
    });
    runtime && !other
}

/// The most iterations of a loop with a constant trip count that the model takes nvcc to
/// unroll completely (LLVM's full unrolling of small counted loops; `#pragma unroll`).
pub const FULL_UNROLL_MAX: i128 = 16;

/// Counters of loops nvcc unrolls completely: a constant start assigned just before the loop,
/// a constant step, a condition against a constant, at most [`FULL_UNROLL_MAX`] iterations and
/// one exit. After unrolling, each copy sees its counter as a constant, so two accesses whose
/// addresses differ only in such counters are the same address to GVN exactly when the
/// counters' values give the same expression (`bias[oc + j]` in every copy of an `i` loop).
/// Each counter comes with its loop's depth among such loops (0 for the outermost): copies of
/// sibling loops at one depth share their counters' roles (`x[4 * i + k]` in two `k` loops).
pub fn fully_unrolled_counters(k: &Kernel) -> std::collections::HashMap<LocalId, u32> {
    let mut out = std::collections::HashMap::new();
    collect_counters(&k.body, 0, 1, &mut out, &mut Vec::new());
    out
}

/// The loops [`fully_unrolled_counters`] takes nvcc to unroll completely, by span.
pub fn fully_unrolled_loops(k: &Kernel) -> Vec<crate::source::Span> {
    let mut spans = Vec::new();
    collect_counters(&k.body, 0, 1, &mut std::collections::HashMap::new(), &mut spans);
    spans
}

/// `copies`: how many copies of the statements the enclosing unrolled loops make. A nest of
/// more than [`FULL_UNROLL_MAX`] copies in all is left to the ordinary rules: its copies would
/// hold more values than the held-value model keeps.
fn collect_counters(
    stmts: &[Stmt],
    depth: u32,
    copies: i128,
    out: &mut std::collections::HashMap<LocalId, u32>,
    spans: &mut Vec<crate::source::Span>,
) {
    for (i, s) in stmts.iter().enumerate() {
        match s {
            Stmt::Loop { cond, body, step, synthetic, span, .. } => {
                let counter = if *synthetic {
                    None
                } else {
                    cond.as_ref()
                        .and_then(|c| counted(&stmts[..i], c, body, step))
                        .filter(|(_, trips)| copies * trips <= FULL_UNROLL_MAX)
                };
                let (inner, copies) = match counter {
                    // A local counting two loops is no loop's constant.
                    Some((l, trips)) if out.insert(l, depth).is_none() => {
                        spans.push(*span);
                        (depth + 1, copies * trips)
                    }
                    Some((l, _)) => {
                        out.insert(l, u32::MAX);
                        (depth, copies)
                    }
                    // Inside a loop that stays a loop, copies are not told apart: counters
                    // there are variables (and the symbolic engine may summarise freely).
                    None => continue,
                };
                collect_counters(body, inner, copies, out, spans);
                collect_counters(step, inner, copies, out, spans);
            }
            Stmt::If { then, els, .. } => {
                collect_counters(then, depth, copies, out, spans);
                collect_counters(els, depth, copies, out, spans);
            }
            _ => {}
        }
    }
}

fn int(e: &Expr) -> Option<i128> {
    match strip(e) {
        Expr::Int(v, _) => Some(*v),
        // `-8`, as C writes a negative constant; `HALO + STEPS` of two macros.
        Expr::Unary { op: UnOp::Neg, arg, .. } => int(arg).map(|v| -v),
        Expr::Binary { op, lhs, rhs, .. } => {
            let (a, b) = (int(lhs)?, int(rhs)?);
            match op {
                BinOp::Add => a.checked_add(b),
                BinOp::Sub => a.checked_sub(b),
                BinOp::Mul => a.checked_mul(b),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The counter of a loop with a small constant trip count, if this is one.
fn counted(before: &[Stmt], cond: &Expr, body: &[Stmt], step: &[Stmt]) -> Option<(LocalId, i128)> {
    counted_upto(before, cond, body, step, FULL_UNROLL_MAX)
}

/// The counter of a loop with a constant trip count of at most `max`, if this is one.
fn counted_upto(before: &[Stmt], cond: &Expr, body: &[Stmt], step: &[Stmt], max: i128) -> Option<(LocalId, i128)> {
    let Expr::Binary { op, lhs, rhs, .. } = strip(cond) else { return None };
    let (l, bound, op) = match (strip(lhs), int(rhs)) {
        (Expr::Local(l), Some(b)) => (*l, b, *op),
        _ => return None,
    };
    // The start: the last statement before the loop assigns the counter a constant.
    let start = match before.last() {
        Some(Stmt::Assign { local, value, .. }) if *local == l => int(value)?,
        _ => return None,
    };
    let mut in_body = Vec::new();
    increments(body, l, &mut in_body);
    let mut in_step = Vec::new();
    increments(step, l, &mut in_step);
    if !in_body.is_empty() || in_step.len() != 1 || exits_early(body, 0) {
        return None;
    }
    let by = int(in_step[0])?;
    let Some(Stmt::Assign { value, .. }) = step.iter().find(|s| matches!(s, Stmt::Assign { local, .. } if *local == l))
    else {
        return None;
    };
    let by = match strip(value) {
        Expr::Binary { op: BinOp::Sub, .. } => -by,
        _ => by,
    };
    if by == 0 {
        return None;
    }
    let holds = |v: i128| match op {
        BinOp::Lt => v < bound,
        BinOp::Le => v <= bound,
        BinOp::Gt => v > bound,
        BinOp::Ge => v >= bound,
        BinOp::Ne => v != bound,
        _ => false,
    };
    let (mut v, mut trips) = (start, 0);
    while holds(v) {
        trips += 1;
        if trips > max {
            return None;
        }
        v += by;
    }
    (trips > 0).then_some((l, trips))
}

/// A shared-memory load that nvcc merges with the same load of the following unrolled copies of
/// its loop (LLVM's load-store vectorizer, after unrolling): `As[ty][k]` in a `k` loop reads
/// four consecutive floats per 16-byte `LDS.128`. Measured in nvcc 13.0's SASS
/// (`validate/probes/unroll/chains.cu`): copies whose elements fall in one aligned 16-byte
/// window are one load when they cover 12 bytes or more of it (16 bytes loaded, the gap filled),
/// one 8-byte load when they are two 4-byte elements at an 8-byte boundary, else one load each;
/// a loop with a trip count known only at run time runs four copies per pass (or N for
/// `#pragma unroll N`; one 16-byte load per window) and the rest one by one.
///
/// Only where nvcc is known to unroll and merge ([`loop_chains`]): a body with a call that
/// branches (IEEE division and square root, `sinf`, ...) or one too large for the unroller is
/// copied into separate blocks or not at all, and its loads are one each, as written.
#[derive(Clone, Debug)]
pub struct Chain {
    pub counter: LocalId,
    /// The counter's first value; it steps by 1.
    pub start: i128,
    /// Bytes per element: the load's width (4 or 8).
    pub elem: u32,
    pub trips: ChainTrips,
    /// The loop's span, for the sheet.
    pub loop_span: crate::source::Span,
    /// A store: only whole windows (and whole aligned pairs) merge; a store never writes bytes
    /// no copy writes.
    pub store: bool,
}

#[derive(Clone, Debug)]
pub enum ChainTrips {
    Constant(i128),
    /// `counter < bound` (`<=` when `inclusive`), the bound fixed during the loop.
    Runtime {
        bound: Expr,
        inclusive: bool,
        /// Copies per pass of the unrolled loop (4, or N of `#pragma unroll N`).
        factor: u32,
    },
}

/// Per memory operation: its [`Chain`], and whether nvcc may merge it with its neighbours in a
/// way the model does not follow (its count is then not exact).
#[derive(Clone, Debug, Default)]
pub struct UnrolledLoads {
    pub chains: Vec<Option<Chain>>,
    pub uncertain: Vec<bool>,
}

/// The loads of `k` nvcc merges across unrolled copies ([`Chain`]).
pub fn unrolled_loads(k: &Kernel) -> UnrolledLoads {
    let mut out = UnrolledLoads { chains: vec![None; k.mem_ops.len()], uncertain: vec![false; k.mem_ops.len()] };
    let defs = definitions(k);
    let layout = super::shared_layout::shared_layout(k);
    chains_in(k, &k.body, &defs, &layout, &mut out);
    for op in &k.merge_uncertain {
        out.uncertain[op.0 as usize] = true;
    }
    let fully = fully_unrolled_loops(k);
    big_unrolled_nests(k, &k.body, &fully, &mut Vec::new(), &mut out);
    out
}

/// The most copies of a `#pragma unroll` loop the model takes nvcc to make when it does not
/// count them one by one ([`FULL_UNROLL_MAX`] and less are).
const PRAGMA_UNROLL_MAX: i128 = 4096;

/// `#pragma unroll` loops with constant trip counts nest into more copies than
/// [`FULL_UNROLL_MAX`]: nvcc unrolls them all, and GVN makes a load whose address does not move
/// with an enclosing loop's counter once for all that loop's copies (convolutionSeparable's
/// `kernel[R - j]` in the inner of two such loops, held out on the H200: 6,656 loads where
/// every copy loading would be 37,120). The model keeps the inner loop a loop in each copy; its
/// loads that do not read an enclosing such loop's counter are marked not exact.
fn big_unrolled_nests(
    k: &Kernel,
    stmts: &[Stmt],
    fully: &[crate::source::Span],
    enclosing: &mut Vec<LocalId>,
    out: &mut UnrolledLoads,
) {
    for (i, s) in stmts.iter().enumerate() {
        match s {
            Stmt::Loop { cond, body, step, span, synthetic, .. } => {
                let pragma = k.unroll_pragmas.iter().find(|p| p.0 == *span).map(|p| p.1);
                let counter = cond
                    .as_ref()
                    .filter(|_| !*synthetic && pragma == Some(UnrollPragma::Full))
                    .and_then(|c| counted_upto(&stmts[..i], c, body, step, PRAGMA_UNROLL_MAX));
                if counter.is_some() && !fully.contains(span) && !enclosing.is_empty() {
                    let mut loads = Vec::new();
                    nested_loads(body, &mut loads);
                    for (op, addr) in loads {
                        let m = k.mem_op(op);
                        if m.kind == AccessKind::Load
                            && matches!(m.space, Space::Global | Space::Shared)
                            && !m.volatile
                            && enclosing.iter().any(|c| !reads_local(addr, *c))
                        {
                            out.uncertain[op.0 as usize] = true;
                        }
                    }
                }
                let pushed = counter.map(|(l, _)| enclosing.push(l)).is_some();
                big_unrolled_nests(k, body, fully, enclosing, out);
                big_unrolled_nests(k, step, fully, enclosing, out);
                if pushed {
                    enclosing.pop();
                }
            }
            Stmt::If { then, els, .. } => {
                big_unrolled_nests(k, then, fully, enclosing, out);
                big_unrolled_nests(k, els, fully, enclosing, out);
            }
            _ => {}
        }
    }
}

/// The locals `k` assigns once, with their values: what alignment reads through
/// ([`alignment`]).
pub fn definitions(k: &Kernel) -> HashMap<LocalId, &Expr> {
    let mut all = Vec::new();
    assigned_locals(&k.body, &mut all);
    let mut defs = HashMap::new();
    single_definitions(&k.body, &all, &mut defs);
    defs
}

/// The largest power of two (up to 2^20) nvcc can prove divides integer `e`, reading the locals
/// of `defs` through their definitions.
pub fn alignment(e: &Expr, defs: &HashMap<LocalId, &Expr>) -> i128 {
    let ctx = Affine { l: LocalId(u32::MAX), values: Vec::new(), assigned: Vec::new(), defs };
    ctx.affine(e, true, 0).map_or(1, |(_, a)| a)
}

/// The value of each local assigned once in the kernel (`all`: every assignment's local).
fn single_definitions<'k>(stmts: &'k [Stmt], all: &[LocalId], out: &mut HashMap<LocalId, &'k Expr>) {
    for s in stmts {
        match s {
            Stmt::Assign { local, value, .. } if all.iter().filter(|x| *x == local).count() == 1 => {
                out.insert(*local, value);
            }
            Stmt::If { then, els, .. } => {
                single_definitions(then, all, out);
                single_definitions(els, all, out);
            }
            Stmt::Loop { body, step, .. } => {
                single_definitions(body, all, out);
                single_definitions(step, all, out);
            }
            _ => {}
        }
    }
}

impl Chain {
    /// What the copy with counter value `value` issues, in a loop of `trips` iterations: the
    /// width of its load and how many bytes below the copy's element that load starts (a window
    /// whose first elements no copy reads starts below the first copy's), or `None` where an
    /// earlier copy's wider load read its element.
    pub fn width_at(&self, value: i128, trips: i128) -> Option<(u32, u32)> {
        let j = value - self.start;
        let elem = self.elem as i128;
        let g = 16 / elem;
        if j < 0 || j >= trips {
            return Some((self.elem, 0));
        }
        if let ChainTrips::Runtime { factor, .. } = self.trips {
            // Passes of `factor` copies, the start aligned; the remainder loop one by one.
            return if j >= trips - trips % factor as i128 {
                Some((self.elem, 0))
            } else if j % g == 0 {
                Some((16, 0))
            } else {
                None
            };
        }
        // The element's place in its 16-byte window; the window's first copy and its count.
        let pos = |j: i128| ((self.start + j) * elem).rem_euclid(16) / elem;
        if self.store {
            // Stores: a window every copy of which runs is one 16-byte store, an aligned pair
            // of 4-byte copies one 8-byte store; the rest one by one.
            let first = j - pos(j);
            if first >= 0 && first + g <= trips {
                return (j == first).then_some((16, 0));
            }
            let pair = j - (pos(j) % 2);
            if elem == 4 && pair >= 0 && pair + 2 <= trips {
                return (j == pair).then_some((8, 0));
            }
            return Some((self.elem, 0));
        }
        let first = j - pos(j).min(j);
        let n = (g - pos(first)).min(trips - first);
        let (width, back) = if n * elem >= 12 {
            (16, pos(first) * elem)
        } else if n * elem == 8 && (pos(first) * elem) % 8 == 0 {
            (8, 0)
        } else {
            return Some((self.elem, 0));
        };
        (j == first).then_some((width, back as u32))
    }
}

fn chains_in<'k>(
    k: &'k Kernel,
    stmts: &'k [Stmt],
    defs: &HashMap<LocalId, &'k Expr>,
    layout: &SharedLayout,
    out: &mut UnrolledLoads,
) {
    for (i, s) in stmts.iter().enumerate() {
        match s {
            Stmt::If { then, els, .. } => {
                chains_in(k, then, defs, layout, out);
                chains_in(k, els, defs, layout, out);
            }
            Stmt::Loop { cond, body, step, span, synthetic, .. } => {
                let pragma = k.unroll_pragmas.iter().find(|p| p.0 == *span).map(|p| p.1);
                if !*synthetic && pragma != Some(UnrollPragma::By(1)) {
                    if let Some(c) = cond {
                        loop_chains(k, &stmts[..i], c, body, step, *span, pragma, defs, layout, out);
                    }
                }
                chains_in(k, body, defs, layout, out);
                chains_in(k, step, defs, layout, out);
            }
            _ => {}
        }
    }
}

/// The chains of one loop `for (l = S; l < B; l += 1)`.
#[allow(clippy::too_many_arguments)]
fn loop_chains<'k>(
    k: &Kernel,
    before: &[Stmt],
    cond: &Expr,
    body: &'k [Stmt],
    step: &[Stmt],
    span: crate::source::Span,
    pragma: Option<UnrollPragma>,
    defs: &HashMap<LocalId, &'k Expr>,
    layout: &SharedLayout,
    out: &mut UnrolledLoads,
) {
    let Expr::Binary { op: op @ (BinOp::Lt | BinOp::Le), lhs, rhs, .. } = strip(cond) else { return };
    let Expr::Local(l) = strip(lhs) else { return };
    let l = *l;
    let Some(Stmt::Assign { local, value, .. }) = before.last() else { return };
    let (true, Some(start)) = (*local == l, int(value)) else { return };
    let mut in_body = Vec::new();
    increments(body, l, &mut in_body);
    let mut in_step = Vec::new();
    increments(step, l, &mut in_step);
    let unit = matches!(step.iter().find(|s| matches!(s, Stmt::Assign { local, .. } if *local == l)),
        Some(Stmt::Assign { value, .. }) if matches!(strip(value), Expr::Binary { op: BinOp::Add, .. }));
    if !in_body.is_empty() || in_step.len() != 1 || int(in_step[0]) != Some(1) || !unit || exits_early(body, 0) {
        return;
    }
    let mut assigned = Vec::new();
    assigned_locals(body, &mut assigned);
    assigned_locals(step, &mut assigned);
    let inclusive = *op == BinOp::Le;
    let trips = match int(rhs) {
        Some(b) => ChainTrips::Constant((b - start + inclusive as i128).max(0)),
        None => {
            let mut fixed = true;
            licm::walk(rhs, &mut |x| match x {
                Expr::Local(x) => fixed &= !assigned.contains(x),
                // Lane-local bit operations (`__ffs(stride)`: HeCBench's sobol) are plain values.
                Expr::Warp { op: WarpOp::Popc(_) | WarpOp::Ffs(_) | WarpOp::Clz(_) | WarpOp::Brev(_), .. } => {}
                Expr::Load { .. } | Expr::Opaque { .. } | Expr::Warp { .. } => fixed = false,
                _ => {}
            });
            if !fixed {
                return;
            }
            ChainTrips::Runtime { bound: (**rhs).clone(), inclusive, factor: 4 }
        }
    };
    if matches!(trips, ChainTrips::Constant(t) if t < 2) {
        return;
    }
    // Copies of a body with a barrier, an inner loop that stays a loop or a `continue` are
    // separate blocks.
    let shape = BodyShape::of(body);
    let straight = !shape.inner_rolled && !has(body, &|s| matches!(s, Stmt::Barrier { .. } | Stmt::Continue));
    if shape.splits {
        // Each copy's loads are in blocks of their own: one load each, as written.
        return;
    }
    if straight && shape.inner_unrolled {
        // Loads in an inner loop nvcc unrolls, at addresses that move with this loop: GVN and
        // the vectorizer see them across both loops' copies, which the model does not follow.
        for s in body {
            if let Stmt::Loop { step, .. } = s {
                let mut loads = Vec::new();
                nested_loads(std::slice::from_ref(s), &mut loads);
                // The inner loop's counter is a value like any other here.
                let mut counters = Vec::new();
                assigned_locals(step, &mut counters);
                let assigned: Vec<LocalId> = assigned.iter().copied().filter(|x| !counters.contains(x)).collect();
                for (op, addr) in loads {
                    let m = k.mem_op(op);
                    if m.kind != AccessKind::Load || m.space != Space::Shared {
                        continue;
                    }
                    let ctx = Affine { l, values: Vec::new(), assigned: assigned.clone(), defs };
                    // One element further each copy of this loop (or an address the model
                    // cannot follow that reads its counter): merged across them, perhaps.
                    let merges = match ctx.shared(addr) {
                        Some((_, coef, _)) => coef == m.width as i128,
                        None => reads_local(addr, l),
                    };
                    out.uncertain[op.0 as usize] |= merges;
                }
            }
        }
    }
    // Whether nvcc unrolls this loop as the chains assume; `None`: the model cannot tell.
    let unrolled: Option<ChainTrips> = match (&trips, pragma) {
        (_, Some(UnrollPragma::Unknown)) => None,
        _ if shape.unknown_call => None,
        (ChainTrips::Constant(t), p) => {
            let t = *t;
            let factor = match p {
                Some(UnrollPragma::By(n)) if (n as i128) < t => Some(n as i128),
                Some(_) => None,
                // Past the unroller's size limits, a partial unroll whose passes (the remainder
                // peeled first) the model does not place.
                None if shape.cost > CONSTANT_BODY_COST || t * shape.cost as i128 > FULL_UNROLL_WORK => Some(0),
                None => None,
            };
            match factor {
                None => Some(trips.clone()),
                // Every window full whatever the passes: the copies' count holds.
                Some(f) => ((f == 0 || f % 4 == 0) && t % 4 == 0 && start % 4 == 0 && shape.cost <= CONSTANT_BODY_COST)
                    .then(|| trips.clone()),
            }
        }
        (ChainTrips::Runtime { bound, inclusive, .. }, p) => match p {
            Some(UnrollPragma::By(n)) => {
                Some(ChainTrips::Runtime { bound: bound.clone(), inclusive: *inclusive, factor: n })
            }
            _ if shape.cost > RUNTIME_BODY_COST => None,
            _ => Some(trips.clone()),
        },
    };
    // Locals the body assigns once at its top level, before their use: their values.
    let mut values: Vec<(LocalId, &Expr)> = Vec::new();
    let chain = |elem: u32, trips: &ChainTrips, store: bool| Chain {
        counter: l,
        start,
        elem,
        trips: trips.clone(),
        loop_span: span,
        store,
    };
    for s in body {
        let mut loads = Vec::new();
        let mut conditional = Vec::new();
        match s {
            Stmt::Assign { value, .. } | Stmt::Eval(value) => top_loads(value, &mut loads, &mut conditional),
            Stmt::Store { addr, value, .. } => {
                top_loads(addr, &mut loads, &mut conditional);
                top_loads(value, &mut loads, &mut conditional);
            }
            Stmt::If { cond, then, els, .. } => {
                top_loads(cond, &mut loads, &mut conditional);
                nested_loads(then, &mut conditional);
                nested_loads(els, &mut conditional);
            }
            _ => {}
        }
        for (op, addr, certain) in
            loads.into_iter().map(|(o, a)| (o, a, true)).chain(conditional.into_iter().map(|(o, a)| (o, a, false)))
        {
            let m = k.mem_op(op);
            if m.kind != AccessKind::Load || m.space != Space::Shared || m.volatile || m.matrix > 0 {
                continue;
            }
            let ctx = Affine { l, values: values.clone(), assigned: assigned.clone(), defs };
            let Some((array, coef, align)) = ctx.shared(addr) else {
                // An address the model cannot follow that reads the counter.
                out.uncertain[op.0 as usize] |= reads_local(addr, l) && straight;
                continue;
            };
            // Consecutive elements of an array aligned to 16 bytes, as nvcc can prove it (the
            // array's own place too: after a 4-byte variable, one element at a time).
            if coef == m.width as i128 && !layout.certain[array.0 as usize] {
                out.uncertain[op.0 as usize] = true;
            }
            if coef != m.width as i128 || align.min(layout.alignment(array)) < 16 {
                continue;
            }
            let Some(trips) = &unrolled else {
                out.uncertain[op.0 as usize] |= straight;
                continue;
            };
            let written = has(body, &|s| {
                matches!(s, Stmt::Store { op, addr, .. }
                if k.mem_op(*op).space == Space::Shared && stores_to(addr, array))
            });
            let modelled = matches!(m.width, 4 | 8)
                && certain
                && straight
                && !written
                && match trips {
                    ChainTrips::Runtime { factor, .. } => {
                        (start * m.width as i128) % 16 == 0 && (*factor as i128 * m.width as i128) % 16 == 0
                    }
                    ChainTrips::Constant(_) => true,
                };
            if modelled {
                out.chains[op.0 as usize] = Some(chain(m.width, trips, false));
            } else if straight || !certain {
                out.uncertain[op.0 as usize] = true;
            }
        }
        // A store of the body's top level, one element further each copy: nvcc's copies write
        // whole windows as one store (`s[4 * t + k]` for `k < 4`: one `STS.128`).
        if let Stmt::Store { op, addr, .. } = s {
            let m = k.mem_op(*op);
            let plain = m.kind == AccessKind::Store && m.space == Space::Shared && !m.volatile && m.matrix == 0;
            let ctx = Affine { l, values: values.clone(), assigned: assigned.clone(), defs };
            if let (true, Some((array, coef, align))) = (plain, ctx.shared(addr)) {
                if coef == m.width as i128 {
                    // Another access to the array in the loop: the copies' order matters.
                    let others = has(body, &|x| match x {
                        Stmt::Store { op: o, addr: a, .. } => *o != *op && stores_to(a, array),
                        _ => false,
                    }) || reads_array(k, body, array);
                    let aligned = align.min(layout.alignment(array)) >= 16 && layout.certain[array.0 as usize];
                    let modelled = matches!(m.width, 4 | 8)
                        && straight
                        && !others
                        && aligned
                        // With a trip count known only at run time nvcc's SASS merges stores
                        // in ways the model does not place (pairs, or none, by the remainder).
                        && matches!(&unrolled, Some(ChainTrips::Constant(_)));
                    match (&unrolled, modelled) {
                        (Some(trips), true) => out.chains[op.0 as usize] = Some(chain(m.width, trips, true)),
                        _ if straight && (aligned || !layout.certain[array.0 as usize] || unrolled.is_some()) => {
                            out.uncertain[op.0 as usize] = true;
                        }
                        _ => {}
                    }
                }
            }
        }
        if let Stmt::Assign { local, value, .. } = s {
            let once = assigned.iter().filter(|x| *x == local).count() == 1;
            if once {
                values.push((*local, value));
            }
        }
    }
}

/// Whether a statement of `body` loads from shared array `array` (or from an address the
/// model does not place).
fn reads_array(k: &Kernel, body: &[Stmt], array: SharedId) -> bool {
    let mut loads = Vec::new();
    nested_loads(body, &mut loads);
    loads.iter().any(|(op, addr)| k.mem_op(*op).space == Space::Shared && stores_to(addr, array))
}

/// Whether `e` reads local `l`.
fn reads_local(e: &Expr, l: LocalId) -> bool {
    let mut reads = false;
    licm::walk(e, &mut |x| reads |= matches!(x, Expr::Local(x) if *x == l));
    reads
}

/// Operations a loop body may have for nvcc to unroll it by 4 at run time (HeCBench-sized: 16
/// multiply-adds are, 24 are unrolled by 2, 48 not at all; `validate/probes/unroll/chains.cu`).
const RUNTIME_BODY_COST: u32 = 36;
/// ... and to unroll it completely for a constant trip count (32 multiply-adds are, 48 by 2).
const CONSTANT_BODY_COST: u32 = 72;
/// Operations of all copies nvcc unrolls completely: 257 copies of `a += s[k]` are, 513 are
/// unrolled by a factor with the remainder peeled first.
const FULL_UNROLL_WORK: i128 = 512;

/// What nvcc's unroller and vectorizer see of a loop body: its operations (address arithmetic
/// left out: the copies' addresses fold into offsets), and its calls.
#[derive(Default)]
struct BodyShape {
    cost: u32,
    /// A call compiled with a branch or not inlined (IEEE `/` and `sqrtf`, `sinf`, `logf`,
    /// ...): each copy's loads are in blocks of their own, or the loop stays rolled.
    splits: bool,
    /// A call the model has not seen compiled, or an inner loop it cannot tell unrolled or not.
    unknown_call: bool,
    /// An inner loop nvcc unrolls completely (a small constant trip count, [`counted`]): its
    /// copies are part of the body's block.
    inner_unrolled: bool,
    /// An inner loop that stays a loop: the body is blocks of its own.
    inner_rolled: bool,
}

/// Math functions that compile to straight code small enough to unroll (measured in nvcc 13.0's
/// SASS: the loop's copies merge).
const STRAIGHT_CALLS: &[&str] = &[
    "rsqrtf",
    "expf",
    "exp2f",
    "exp10f",
    "tanhf",
    "coshf",
    "cbrtf",
    "rcbrtf",
    "atanf",
    "atan2f",
    "roundf",
    "truncf",
    "rintf",
    "floorf",
    "ceilf",
    "fabsf",
    "fabs",
    "fminf",
    "fmaxf",
    "fmin",
    "fmax",
    "copysignf",
    "ldexpf",
    "fmaf",
    "fma",
    "frexpf",
    "modff",
    "__expf",
    "__logf",
    "__sinf",
    "__cosf",
    "__saturatef",
    "rhypotf",
    "norm3df",
    "__fdividef",
    "floor",
    "ceil",
    "trunc",
    "round",
    "min",
    "max",
    "abs",
    "__fmul_rn",
    "__fadd_rn",
    "__fmaf_rn",
    "__float2int_rn",
    "__int2float_rn",
    "__float_as_int",
    "__int_as_float",
    "__umulhi",
    "__mulhi",
];
/// ... and those that branch or stay calls (the copies are separate blocks, or not made).
const SPLITTING_CALLS: &[&str] = &[
    "sqrtf",
    "sqrt",
    "sinf",
    "cosf",
    "tanf",
    "sincosf",
    "sin",
    "cos",
    "tan",
    "sincos",
    "__frcp_rn",
    "__fdiv_rn",
    "__fsqrt_rn",
    "hypotf",
    "fdividef",
    "logf",
    "log2f",
    "log10f",
    "log1pf",
    "expm1f",
    "powf",
    "__powf",
    "sinhf",
    "asinf",
    "acosf",
    "fmodf",
    "lgammaf",
    "tgammaf",
    "j0f",
    "remainderf",
    "erff",
    "erfcf",
    "erfinvf",
    "sinpif",
    "cospif",
    "exp",
    "log",
    "pow",
    "exp2",
    "log2",
    "normf",
];

impl BodyShape {
    fn of(body: &[Stmt]) -> BodyShape {
        let mut shape = BodyShape::default();
        fn stmts(ss: &[Stmt], shape: &mut BodyShape) {
            for (i, s) in ss.iter().enumerate() {
                match s {
                    Stmt::Assign { value, .. } | Stmt::Eval(value) => shape.expr(value),
                    Stmt::Store { value, .. } => {
                        shape.cost += 1;
                        shape.expr(value);
                    }
                    Stmt::If { cond, then, els, .. } => {
                        shape.cost += 1;
                        shape.expr(cond);
                        stmts(then, shape);
                        stmts(els, shape);
                    }
                    Stmt::Loop { cond, body, step, synthetic, .. } => {
                        let trips =
                            cond.as_ref().and_then(|c| counted_upto(&ss[..i], c, body, step, 1 << 16)).map(|t| t.1);
                        // An unrolled loop's control disappears; its body is copied.
                        let mut inner = BodyShape::default();
                        stmts(body, &mut inner);
                        match trips {
                            Some(t) if !*synthetic && t * inner.cost as i128 <= FULL_UNROLL_WORK => {
                                shape.inner_unrolled = true;
                                shape.cost = shape.cost.saturating_add(inner.cost.saturating_mul(t as u32));
                            }
                            // Unrolled in part, or not: the model cannot tell the blocks.
                            Some(_) if !*synthetic => shape.unknown_call = true,
                            _ => {
                                shape.inner_rolled = true;
                                cond.iter().for_each(|c| inner.expr(c));
                                stmts(step, &mut inner);
                                shape.cost = shape.cost.saturating_add(inner.cost);
                            }
                        }
                        shape.splits |= inner.splits;
                        shape.unknown_call |= inner.unknown_call;
                        shape.inner_unrolled |= inner.inner_unrolled;
                        shape.inner_rolled |= inner.inner_rolled;
                    }
                    _ => {}
                }
            }
        }
        stmts(body, &mut shape);
        shape
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            // The address folds into the load's offset.
            Expr::Load { .. } => self.cost += 1,
            Expr::Local(_) | Expr::Int(..) | Expr::Float(_) | Expr::SharedBase(_) | Expr::PtrOffset { .. } => {}
            Expr::FloatBinary { op: BinOp::Div, .. } => self.splits = true,
            Expr::Opaque { args, what } => {
                if let Some(name) = what.strip_suffix("()") {
                    if SPLITTING_CALLS.contains(&name) {
                        self.splits = true;
                    } else if !STRAIGHT_CALLS.contains(&name) {
                        self.unknown_call = true;
                    }
                    self.cost += 1;
                }
                args.iter().for_each(|a| self.expr(a));
            }
            Expr::ToInt { arg, .. } => self.expr(arg),
            e => {
                self.cost += 1;
                e.for_each_operand(&mut |x| self.expr(x));
            }
        }
    }
}

/// Loads every lane evaluates in `e` (`(op, addr)`); those under `?:`, `&&` or `||` go to
/// `conditional`.
fn top_loads<'e>(e: &'e Expr, out: &mut Vec<(MemOpId, &'e Expr)>, conditional: &mut Vec<(MemOpId, &'e Expr)>) {
    match e {
        Expr::Load { op, addr } => {
            out.push((*op, addr));
            top_loads(addr, out, conditional);
        }
        Expr::Select { cond, then, els } => {
            top_loads(cond, out, conditional);
            all_loads(then, conditional);
            all_loads(els, conditional);
        }
        Expr::Logical { lhs, rhs, .. } => {
            top_loads(lhs, out, conditional);
            all_loads(rhs, conditional);
        }
        e => e.for_each_operand(&mut |x| top_loads(x, out, conditional)),
    }
}

fn all_loads<'e>(e: &'e Expr, out: &mut Vec<(MemOpId, &'e Expr)>) {
    licm::walk(e, &mut |x| {
        if let Expr::Load { op, addr } = x {
            out.push((*op, addr));
        }
    });
}

fn nested_loads<'e>(stmts: &'e [Stmt], out: &mut Vec<(MemOpId, &'e Expr)>) {
    for s in stmts {
        match s {
            Stmt::Assign { value, .. } | Stmt::Eval(value) => all_loads(value, out),
            Stmt::Store { addr, value, .. } => {
                all_loads(addr, out);
                all_loads(value, out);
            }
            Stmt::If { cond, then, els, .. } => {
                all_loads(cond, out);
                nested_loads(then, out);
                nested_loads(els, out);
            }
            Stmt::Loop { cond, body, step, .. } => {
                cond.iter().for_each(|c| all_loads(c, out));
                nested_loads(body, out);
                nested_loads(step, out);
            }
            _ => {}
        }
    }
}

fn has(stmts: &[Stmt], f: &dyn Fn(&Stmt) -> bool) -> bool {
    stmts.iter().any(|s| {
        f(s) || match s {
            Stmt::If { then, els, .. } => has(then, f) || has(els, f),
            Stmt::Loop { body, step, .. } => has(body, f) || has(step, f),
            _ => false,
        }
    })
}

pub(super) fn assigned_locals(stmts: &[Stmt], out: &mut Vec<LocalId>) {
    for s in stmts {
        match s {
            Stmt::Assign { local, .. } => out.push(*local),
            Stmt::If { then, els, .. } => {
                assigned_locals(then, out);
                assigned_locals(els, out);
            }
            Stmt::Loop { body, step, .. } => {
                assigned_locals(body, out);
                assigned_locals(step, out);
            }
            _ => {}
        }
    }
}

/// Whether a store at `addr` may write shared array `array` (an address the model does not
/// place: it may).
fn stores_to(addr: &Expr, array: SharedId) -> bool {
    let mut bases = Vec::new();
    licm::walk(addr, &mut |x| {
        if let Expr::SharedBase(s) = x {
            bases.push(*s);
        }
    });
    bases.is_empty() || bases.contains(&array)
}

/// What the address arithmetic of one loop reads through: the loop's counter, the locals its body
/// assigns once (before their use) with their values, every local it assigns, and the locals the
/// kernel assigns once anywhere (their definitions, read for alignment only).
struct Affine<'k> {
    l: LocalId,
    values: Vec<(LocalId, &'k Expr)>,
    assigned: Vec<LocalId>,
    defs: &'k HashMap<LocalId, &'k Expr>,
}

impl Affine<'_> {
    /// A shared address `SharedBase(s) + bytes` as `(s, coefficient of l, alignment of the
    /// rest)`; `None` where another local the loop assigns, a load or a value the analysis
    /// cannot follow takes part.
    fn shared(&self, addr: &Expr) -> Option<(SharedId, i128, i128)> {
        self.shared_at(addr, 0)
    }

    /// [`Self::shared`], `depth` locals deep (a local whose value reads itself, `p = p + 4`,
    /// is not followed for ever).
    fn shared_at(&self, addr: &Expr, depth: u32) -> Option<(SharedId, i128, i128)> {
        if depth > 32 {
            return None;
        }
        match strip(addr) {
            Expr::PtrOffset { ptr, bytes } => {
                let (s, c0, a0) = self.shared_at(ptr, depth + 1)?;
                let (c1, a1) = self.affine(bytes, false, 0)?;
                Some((s, c0 + c1, a0.min(a1)))
            }
            Expr::SharedBase(s) => Some((*s, 0, ALIGNED)),
            Expr::Local(x) if *x != self.l => {
                let (_, v) = self.values.iter().find(|(y, _)| y == x)?;
                self.shared_at(v, depth + 1)
            }
            _ => None,
        }
    }

    /// `e` as `coef * l + rest`: the coefficient, and the largest power of two (to
    /// [`ALIGNED`]) known to divide `rest`. `outside`: `e` was computed before the loop, so
    /// every local in it is a constant of the loop.
    fn affine(&self, e: &Expr, outside: bool, depth: u32) -> Option<(i128, i128)> {
        if depth > 32 {
            return Some((0, 1)).filter(|_| outside);
        }
        let go = |e: &Expr| self.affine(e, outside, depth + 1);
        let pow2 = |c: i128| if c == 0 { ALIGNED } else { (1i128 << c.trailing_zeros().min(20)).min(ALIGNED) };
        match strip(e) {
            Expr::Int(c, _) => Some((0, pow2(*c))),
            Expr::Local(x) if *x == self.l && !outside => Some((1, ALIGNED)),
            Expr::Local(x) => match self.values.iter().find(|(y, _)| y == x) {
                Some((_, v)) if !outside => go(v),
                _ if !outside && self.assigned.contains(x) => None,
                _ => match self.defs.get(x) {
                    Some(v) => self.affine(v, true, depth + 1),
                    None => Some((0, 1)),
                },
            },
            Expr::Param(_) | Expr::Builtin(_) => Some((0, 1)),
            Expr::Binary { op: BinOp::Add, lhs, rhs, .. } => {
                let ((c0, a0), (c1, a1)) = (go(lhs)?, go(rhs)?);
                Some((c0 + c1, a0.min(a1)))
            }
            Expr::Binary { op: BinOp::Sub, lhs, rhs, .. } => {
                let ((c0, a0), (c1, a1)) = (go(lhs)?, go(rhs)?);
                Some((c0 - c1, a0.min(a1)))
            }
            Expr::Binary { op: BinOp::Mul, lhs, rhs, .. } => {
                let ((c0, a0), (c1, a1)) = (go(lhs)?, go(rhs)?);
                match (int(lhs), int(rhs)) {
                    (_, Some(m)) => Some((c0 * m, (a0 * pow2(m)).min(ALIGNED))),
                    (Some(m), _) => Some((c1 * m, (a1 * pow2(m)).min(ALIGNED))),
                    _ if c0 == 0 && c1 == 0 => Some((0, (a0 * a1).min(ALIGNED))),
                    _ => None,
                }
            }
            Expr::Binary { op: BinOp::Shl, lhs, rhs, .. } => {
                let (c0, a0) = go(lhs)?;
                let s = int(rhs).filter(|s| (0..20).contains(s))?;
                Some((c0 << s, (a0 << s).min(ALIGNED)))
            }
            _ if outside => Some((0, 1)),
            other => {
                let mut reads = false;
                licm::walk(other, &mut |x| {
                    reads |= matches!(x, Expr::Local(x) if *x == self.l || self.assigned.contains(x))
                        || matches!(x, Expr::Load { .. } | Expr::Opaque { .. } | Expr::Warp { .. })
                });
                (!reads).then_some((0, 1))
            }
        }
    }
}

/// The alignment of a multiple of every power of two the model tracks.
const ALIGNED: i128 = 1 << 20;
