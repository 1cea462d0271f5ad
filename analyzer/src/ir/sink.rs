//! Loads sunk into the branch that uses them: `v = s[0]; if (t == 0) out[b] = v;` (also through
//! an inlined `return s[0];`) issues the load only in the lanes that take the branch, as nvcc
//! does: LLVM's instcombine moves an instruction into the one successor block that uses it when
//! nothing between may write memory. Measured on the H200 (`validate/probes/round6`: 68 shared
//! loads where every warp loading would be 80).
//!
//! The rule here: in one statement list, an `if` whose condition reads no memory, preceded only
//! by copies between locals back to the statement holding the load (the load's own assignment,
//! or an inlined call whose last memory access it is), with the loaded value reaching nothing but
//! one side of that `if` (through copies, each local assigned once). The load then runs under
//! the `if`'s condition.

use super::*;
use std::collections::{HashMap, HashSet};

/// Rewrites `k`'s body so that such loads run under their branch's condition.
pub fn sink_loads(k: &mut Kernel) {
    let mut uses = HashMap::new();
    let mut defs = HashMap::new();
    for s in &k.body {
        count(s, &mut uses, &mut defs);
    }
    let facts = Facts { uses, defs };
    let mut body = std::mem::take(&mut k.body);
    sink_in(k, &facts, &mut body);
    k.body = body;
}

struct Facts {
    uses: HashMap<LocalId, u32>,
    defs: HashMap<LocalId, u32>,
}

fn count_expr(e: &Expr, uses: &mut HashMap<LocalId, u32>) {
    licm::walk(e, &mut |x| {
        if let Expr::Local(l) = x {
            *uses.entry(*l).or_default() += 1;
        }
    });
}

fn count(s: &Stmt, uses: &mut HashMap<LocalId, u32>, defs: &mut HashMap<LocalId, u32>) {
    match s {
        Stmt::Assign { local, value, .. } => {
            *defs.entry(*local).or_default() += 1;
            count_expr(value, uses);
        }
        Stmt::Store { addr, value, .. } => {
            count_expr(addr, uses);
            count_expr(value, uses);
        }
        Stmt::Eval(e) => count_expr(e, uses),
        Stmt::If { cond, then, els, .. } => {
            count_expr(cond, uses);
            for x in then.iter().chain(els) {
                count(x, uses, defs);
            }
        }
        Stmt::Loop { cond, body, step, .. } => {
            if let Some(c) = cond {
                count_expr(c, uses);
            }
            for x in body.iter().chain(step) {
                count(x, uses, defs);
            }
        }
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier { .. } => {}
    }
}

/// A copy between locals (`a = b`, also through a conversion): `(a, b)`.
fn copy_of(s: &Stmt) -> Option<(LocalId, LocalId)> {
    let Stmt::Assign { local, value, .. } = s else { return None };
    let mut v = value;
    while let Expr::ToInt { arg, .. } | Expr::ToFloat(arg) = v {
        v = arg;
    }
    match v {
        Expr::Local(src) => Some((*local, *src)),
        _ => None,
    }
}

/// An assignment of a value that reads no memory and has no effects (`flag = 1`).
fn quiet_assign(s: &Stmt) -> bool {
    matches!(s, Stmt::Assign { value, .. } if !contains_load(value) && !matches!(value, Expr::Opaque { .. } | Expr::Warp { .. }))
}

/// In an inlined call's loop (or the statement itself), the last memory access when it is a
/// plain load assigned to a local, and the statements after it are copies, quiet assignments,
/// `break`s and inner inlined calls of the same shape: the path to that assignment (indices
/// into nested bodies) and the copies seen after it.
fn last_load(s: &Stmt, path: &mut Vec<usize>, copies: &mut Vec<(LocalId, LocalId)>, dsts: &mut Vec<LocalId>) -> bool {
    match s {
        Stmt::Assign { value: Expr::Load { .. }, .. } => true,
        Stmt::Loop { body, synthetic: true, cond: None, step, .. } if step.is_empty() => {
            for (i, x) in body.iter().enumerate().rev() {
                if let Some(c) = copy_of(x) {
                    copies.push(c);
                    dsts.push(c.0);
                    continue;
                }
                if let Stmt::Assign { local, .. } = x {
                    if quiet_assign(x) {
                        dsts.push(*local);
                        continue;
                    }
                }
                if matches!(x, Stmt::Break) {
                    continue;
                }
                path.push(i);
                return last_load(x, path, copies, dsts);
            }
            false
        }
        _ => false,
    }
}

fn sink_in(k: &Kernel, f: &Facts, list: &mut [Stmt]) {
    for s in list.iter_mut() {
        match s {
            Stmt::If { then, els, .. } => {
                sink_in(k, f, then);
                sink_in(k, f, els);
            }
            Stmt::Loop { body, step, .. } => {
                sink_in(k, f, body);
                sink_in(k, f, step);
            }
            _ => {}
        }
    }
    for j in 1..list.len() {
        // An `if`, or a loop that tests first: the loop's body runs only when its condition
        // holds on entry, so a value used only inside runs under that condition.
        let no_else: Vec<Stmt> = Vec::new();
        let (cond, then, els, in_loop): (&Expr, Vec<&Stmt>, &[Stmt], bool) = match &list[j] {
            Stmt::If { cond, then, els, .. } => (cond, then.iter().collect(), els, false),
            Stmt::Loop { cond: Some(cond), body, step, test_first: true, synthetic: false, .. } => {
                (cond, body.iter().chain(step).collect(), &no_else[..], true)
            }
            _ => continue,
        };
        if contains_load(cond) {
            continue;
        }
        // Back over copies, and over assignments and loops that touch no memory, to the
        // statement holding the load; a value such an assignment gives a local the condition
        // reads is read from its expression instead (`for (j = threadIdx.x; j < n; ..)`).
        let mut copies = Vec::new();
        let mut dsts = Vec::new();
        let mut values_of: Vec<(LocalId, Expr)> = Vec::new();
        let mut i = j;
        while i > 0 {
            i -= 1;
            match copy_of(&list[i]) {
                // A copy is a value given to a local too (`for (j = idx; j < range; ..)`).
                Some(c) => {
                    copies.push(c);
                    dsts.push(c.0);
                    if let Stmt::Assign { local, value, .. } = &list[i] {
                        values_of.push((*local, value.clone()));
                    }
                }
                None if quiet_assign(&list[i]) => {
                    if let Stmt::Assign { local, value, .. } = &list[i] {
                        dsts.push(*local);
                        values_of.push((*local, value.clone()));
                    }
                }
                None if quiet_loop(&list[i]) => {
                    super::unroll::assigned_locals(std::slice::from_ref(&list[i]), &mut dsts);
                }
                None => break,
            }
        }
        let mut path = vec![i];
        if !last_load(&list[i], &mut path, &mut copies, &mut dsts) {
            continue;
        }
        let Some(Stmt::Assign { local: loaded, value: Expr::Load { op, .. }, .. }) = at(list, &path) else { continue };
        let m = k.mem_op(*op);
        if m.volatile || m.kind != AccessKind::Load || !matches!(m.space, Space::Global | Space::Shared) {
            continue;
        }
        // The loaded value and its copies.
        let mut values: HashSet<LocalId> = HashSet::from([*loaded]);
        let mut copy_reads: HashMap<LocalId, u32> = HashMap::new();
        loop {
            let before = values.len();
            for (dst, src) in &copies {
                if values.contains(src) {
                    values.insert(*dst);
                }
            }
            if values.len() == before {
                break;
            }
        }
        for (_, src) in &copies {
            if values.contains(src) {
                *copy_reads.entry(*src).or_default() += 1;
            }
        }
        let mut in_then = HashMap::new();
        let mut in_els = HashMap::new();
        let mut ignore = HashMap::new();
        for x in then.iter() {
            count(x, &mut in_then, &mut ignore);
        }
        if in_loop {
            // The loop's own test reads its counter each trip: uses there are uses too.
            count_expr(cond, &mut in_then);
        }
        for x in els.iter() {
            count(x, &mut in_els, &mut ignore);
        }
        // Each value assigned once, or (an inlined function's result) only inside the call
        // that loads it: its other returns are other paths.
        let mut inside = HashMap::new();
        let mut ignore_uses = HashMap::new();
        count(&list[i], &mut ignore_uses, &mut inside);
        let once = values.iter().all(|v| {
            let all = f.defs.get(v).copied().unwrap_or(0);
            all == 1 || (path.len() > 1 && *v == *loaded && inside.get(v).copied() == Some(all))
        });
        let used = |side: &HashMap<LocalId, u32>| {
            values.iter().all(|v| {
                f.uses.get(v).copied().unwrap_or(0)
                    == copy_reads.get(v).copied().unwrap_or(0) + side.get(v).copied().unwrap_or(0)
            }) && values.iter().any(|v| side.contains_key(v))
        };
        // The condition reads the same values at the load as at the `if`: locals assigned
        // between are read through the values given them (which read nothing assigned between).
        let mut cond = cond.clone();
        let mut substituted = true;
        for (l, v) in &values_of {
            let mut reads = HashMap::new();
            count_expr(v, &mut reads);
            if dsts.iter().any(|d| reads.contains_key(d)) {
                substituted = false;
            }
            replace_local(&mut cond, *l, v);
        }
        let mut cond_locals = HashMap::new();
        count_expr(&cond, &mut cond_locals);
        if !once
            || !substituted && !values_of.is_empty()
            || dsts.iter().any(|d| cond_locals.contains_key(d))
            || values.iter().any(|v| cond_locals.contains_key(v))
        {
            continue;
        }
        // A loop that always runs (`for (q = 0; q < 8; ..)`) guards nothing.
        let mut varies = false;
        licm::walk(&cond, &mut |x| {
            varies |= !matches!(
                x,
                Expr::Int(..) | Expr::Float(_) | Expr::Binary { .. } | Expr::Unary { .. } | Expr::ToInt { .. }
            )
        });
        if in_loop && !varies {
            continue;
        }
        let guard = if used(&in_then) {
            cond
        } else if !in_loop && used(&in_els) {
            Expr::Unary { op: UnOp::LogicalNot, ty: IntTy::I32, arg: Box::new(cond) }
        } else {
            continue;
        };
        let span = match &list[j] {
            Stmt::If { span, .. } | Stmt::Loop { span, .. } => *span,
            _ => unreachable!("an if or a loop"),
        };
        if let Some(slot) = at_mut(list, &path) {
            let load = std::mem::replace(slot, Stmt::Break);
            *slot = Stmt::If { cond: guard, then: vec![load], els: Vec::new(), span };
        }
    }
}

/// A loop that reads and writes no memory, not even a thread's own array (nvcc keeps a load
/// above a loop that writes one), and has no barrier or call with effects.
fn quiet_loop(s: &Stmt) -> bool {
    fn quiet(s: &Stmt) -> bool {
        match s {
            Stmt::Assign { value, .. } => !contains_load(value) && !matches!(value, Expr::Warp { .. }),
            Stmt::If { cond, then, els, .. } => !contains_load(cond) && then.iter().chain(els).all(quiet),
            Stmt::Loop { cond, body, step, .. } => {
                cond.as_ref().is_none_or(|c| !contains_load(c)) && body.iter().chain(step).all(quiet)
            }
            Stmt::Break | Stmt::Continue => true,
            _ => false,
        }
    }
    matches!(s, Stmt::Loop { synthetic: false, .. }) && quiet(s)
}

fn replace_local(e: &mut Expr, l: LocalId, v: &Expr) {
    match e {
        Expr::Local(x) if *x == l => *e = v.clone(),
        _ => e.for_each_operand_mut(&mut |x| replace_local(x, l, v)),
    }
}

fn at<'s>(list: &'s [Stmt], path: &[usize]) -> Option<&'s Stmt> {
    let (first, rest) = path.split_first()?;
    let mut s = list.get(*first)?;
    for i in rest {
        let Stmt::Loop { body, .. } = s else { return None };
        s = body.get(*i)?;
    }
    Some(s)
}

fn at_mut<'s>(list: &'s mut [Stmt], path: &[usize]) -> Option<&'s mut Stmt> {
    let (first, rest) = path.split_first()?;
    let mut s = list.get_mut(*first)?;
    for i in rest {
        let Stmt::Loop { body, .. } = s else { return None };
        s = body.get_mut(*i)?;
    }
    Some(s)
}
