//! Which loops nvcc may unroll at run time (LLVM's runtime unrolling, a remainder loop beside
//! the unrolled one). That matters only where lanes of a warp run different trip counts: the
//! unrolled copies and the remainder then split the warp's executions differently from the
//! source loop, which the counts do not model. Measured on the H200
//! (`validate/probes/unroll/`): a loop whose induction step is not a compile-time constant
//! (`i += blockDim.x`, `i += blockDim.x * gridDim.x`; its trip count needs a division at run
//! time) or that has a second exit (`break`, `return`) is not unrolled, and its executions are
//! the source loop's exactly; a loop with a constant step and one exit is (by 4, or 16 and more
//! for the smallest bodies, ptxas unrolling again).

use super::*;

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
        _ => None,
    }
}

/// The counter of a loop with a small constant trip count, if this is one.
fn counted(before: &[Stmt], cond: &Expr, body: &[Stmt], step: &[Stmt]) -> Option<(LocalId, i128)> {
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
        if trips > FULL_UNROLL_MAX {
            return None;
        }
        v += by;
    }
    (trips > 0).then_some((l, trips))
}
