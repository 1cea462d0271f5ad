//! Accesses both arms of an `if`/`else` share, merged as LLVM's SimplifyCFG merges them (nvcc
//! runs it): a load both arms begin with is hoisted above the branch, and a store to one address
//! both arms end with is sunk below it (each arm computes only the value stored). A warp whose
//! lanes take both arms then issues the access once, for all its active lanes, not once per arm:
//! measured on the H200 (`validate/probes/compiled`, `both_branches`: 313 load requests and
//! 1,250 sectors where the arms as written make 626 and 2,500).
//!
//! The load merged is each arm's first memory access, in the arm's first statement: nothing
//! in either arm runs before it that could change memory. Both accesses have the same width,
//! space, cache operator and address number ([`super::vn`]); a store's address may not read a
//! local either arm assigns. The second arm's operation is left without executions (its row
//! stays, with a note).

use super::*;
use std::collections::HashSet;

/// Merges the shared leading loads and trailing stores of every `if`/`else` in `k`; returns the
/// memory operations left without executions and adds a note for each.
pub fn merge_branch_accesses(k: &mut Kernel) -> Vec<MemOpId> {
    let keys = super::vn::address_numbers(k);
    let mut body = std::mem::take(&mut k.body);
    let mut merged = Vec::new();
    rewrite(k, &keys, &mut body, &mut merged);
    k.body = body;
    for (kept, gone) in &merged {
        let (a, b) = (k.mem_op(*kept), k.mem_op(*gone));
        k.notes.push(format!(
            "`{}` at {}:{} and `{}` at {}:{} begin or end both arms of one `if`: nvcc merges them into one access before or after the branch, counted at {}:{}",
            a.text, a.span.line, a.span.column, b.text, b.span.line, b.span.column, a.span.line, a.span.column
        ));
    }
    merged.into_iter().map(|(_, gone)| gone).collect()
}

fn rewrite(k: &mut Kernel, keys: &[u32], stmts: &mut Vec<Stmt>, merged: &mut Vec<(MemOpId, MemOpId)>) {
    let mut i = 0;
    while i < stmts.len() {
        let (mut before, mut after) = (None, None);
        match &mut stmts[i] {
            Stmt::If { then, els, .. } => {
                rewrite(k, keys, then, merged);
                rewrite(k, keys, els, merged);
                if !then.is_empty() && !els.is_empty() {
                    before = hoist(k, keys, then, els, merged);
                    after = sink(k, keys, then, els, merged);
                }
            }
            Stmt::Loop { body, step, .. } => {
                rewrite(k, keys, body, merged);
                rewrite(k, keys, step, merged);
            }
            _ => {}
        }
        if let Some(s) = before {
            stmts.insert(i, s);
            i += 1;
        }
        if let Some(s) = after {
            stmts.insert(i + 1, s);
            i += 1;
        }
        i += 1;
    }
}

/// Whether two operations are one access to the compiler.
fn same_access(k: &Kernel, keys: &[u32], a: MemOpId, b: MemOpId) -> bool {
    let (x, y) = (k.mem_op(a), k.mem_op(b));
    !x.volatile
        && !y.volatile
        && x.kind == y.kind
        && x.space == y.space
        && x.width == y.width
        && x.cache == y.cache
        && keys[a.0 as usize] == keys[b.0 as usize]
}

/// The first load an arm's first statement evaluates, when that statement evaluates a load
/// before any other memory access: an assignment or an evaluation.
fn first_load(s: &Stmt) -> Option<(MemOpId, Expr)> {
    let e = match s {
        Stmt::Assign { value, .. } => value,
        Stmt::Eval(e) => e,
        _ => return None,
    };
    unconditional_load(e)
}

/// The first load `e` evaluates for every lane that evaluates `e`: not one inside an arm of a
/// `?:` or the right of `&&` / `||`, which only some lanes reach.
fn unconditional_load(e: &Expr) -> Option<(MemOpId, Expr)> {
    let mut found = None;
    e.for_each_unconditional_operand(&mut |x| {
        if found.is_none() {
            found = unconditional_load(x);
        }
    });
    match e {
        Expr::Load { op, addr } if found.is_none() => Some((*op, (**addr).clone())),
        _ => found,
    }
}

fn hoist(
    k: &mut Kernel,
    keys: &[u32],
    then: &mut [Stmt],
    els: &mut [Stmt],
    merged: &mut Vec<(MemOpId, MemOpId)>,
) -> Option<Stmt> {
    let (a, addr) = first_load(&then[0])?;
    let (b, _) = first_load(&els[0])?;
    if a == b || !same_access(k, keys, a, b) || k.mem_op(a).kind != AccessKind::Load {
        return None;
    }
    let ty = k.mem_op(a).width;
    let local = k.add_local(format!("$hoisted{}", a.0), Ty::Vector { name: "a hoisted load".into(), bytes: ty as u64 });
    replace_load(&mut then[0], a, local);
    replace_load(&mut els[0], b, local);
    merged.push((a, b));
    let span = k.mem_op(a).span;
    Some(Stmt::Assign { local, value: Expr::Load { op: a, addr: Box::new(addr) }, span })
}

fn sink(
    k: &mut Kernel,
    keys: &[u32],
    then: &mut Vec<Stmt>,
    els: &mut Vec<Stmt>,
    merged: &mut Vec<(MemOpId, MemOpId)>,
) -> Option<Stmt> {
    let (Some(Stmt::Store { op: a, addr, .. }), Some(Stmt::Store { op: b, .. })) = (then.last(), els.last()) else {
        return None;
    };
    let (a, b, addr) = (*a, *b, addr.clone());
    if a == b || !same_access(k, keys, a, b) || k.mem_op(a).kind != AccessKind::Store {
        return None;
    }
    // The address is evaluated after the branch: it may not read what either arm assigns.
    let mut assigned = HashSet::new();
    for s in then.iter().chain(els.iter()) {
        assigned_locals(s, &mut assigned);
    }
    let mut reads_assigned = false;
    super::licm::walk(&addr, &mut |x| reads_assigned |= matches!(x, Expr::Local(l) if assigned.contains(l)));
    if reads_assigned {
        return None;
    }
    let width = k.mem_op(a).width;
    let local =
        k.add_local(format!("$sunk{}", a.0), Ty::Vector { name: "a sunk store's value".into(), bytes: width as u64 });
    for arm in [&mut *then, &mut *els] {
        if let Some(Stmt::Store { value, .. }) = arm.pop() {
            let span = k.mem_op(a).span;
            arm.push(Stmt::Assign { local, value, span });
        }
    }
    merged.push((a, b));
    Some(Stmt::Store { op: a, addr, value: Expr::Local(local) })
}

fn assigned_locals(s: &Stmt, out: &mut HashSet<LocalId>) {
    match s {
        Stmt::Assign { local, .. } => {
            out.insert(*local);
        }
        Stmt::If { then, els, .. } => then.iter().chain(els).for_each(|x| assigned_locals(x, out)),
        Stmt::Loop { body, step, .. } => body.iter().chain(step).for_each(|x| assigned_locals(x, out)),
        _ => {}
    }
}

/// The load of `op` in `s` becomes the local holding it.
fn replace_load(s: &mut Stmt, op: MemOpId, local: LocalId) {
    let e = match s {
        Stmt::Assign { value, .. } => value,
        Stmt::Eval(e) => e,
        _ => return,
    };
    replace_in(e, op, local);
}

fn replace_in(e: &mut Expr, op: MemOpId, local: LocalId) {
    if matches!(e, Expr::Load { op: o, .. } if *o == op) {
        *e = Expr::Local(local);
        return;
    }
    e.for_each_operand_mut(&mut |x| replace_in(x, op, local));
}
