//! Register promotion of loop-invariant accesses (LLVM's LICM scalar promotion, as nvcc runs
//! it): a store inside a loop to an address that does not change in the loop, where nothing
//! else in the loop may touch that memory, is kept in a register and written once after the
//! loop. A side table keyed by memory operation, like naga's analyses.

use super::*;
use std::collections::HashSet;

/// Per memory operation: whether it is a store promoted out of its innermost loop.
pub fn promoted_stores(k: &Kernel) -> Vec<bool> {
    let mut out = vec![false; k.mem_ops.len()];
    let keys = super::vn::address_numbers(k);
    let (_, once) = super::vn::definitions(k);
    visit(k, &keys, &once, &k.body, &mut out);
    out
}

/// Per local, its one assigned value when it has exactly one ([`super::vn::definitions`]): an
/// inlined helper's parameters (`int *x3` bound to `T_x + i` at each call).
type Once<'k> = [Option<&'k Expr>];

fn visit(k: &Kernel, keys: &[u32], once: &Once, stmts: &[Stmt], out: &mut [bool]) {
    for s in stmts {
        match s {
            Stmt::If { then, els, .. } => {
                visit(k, keys, once, then, out);
                visit(k, keys, once, els, out);
            }
            Stmt::Loop { body, step, synthetic: false, .. } => {
                promote_in_loop(k, keys, once, body, step, out);
                visit(k, keys, once, body, out);
                visit(k, keys, once, step, out);
            }
            Stmt::Loop { body, step, .. } => {
                visit(k, keys, once, body, out);
                visit(k, keys, once, step, out);
            }
            _ => {}
        }
    }
}

/// The base of an address seen through locals defined once (a helper's pointer parameter).
pub(super) fn base_through(e: &Expr, once: &Once, depth: u32) -> Option<Base> {
    match e {
        Expr::Local(l) if depth < 8 => base_through(once[l.0 as usize]?, once, depth + 1),
        Expr::PtrOffset { ptr, .. } => base_through(ptr, once, depth),
        _ => root_base(e),
    }
}

/// Whether `e` has the same value on every iteration of a loop that assigns `assigned`: it
/// reads no memory, and each local it reads is either not assigned in the loop or defined once
/// (in the loop, before any read of it there) by such an expression.
fn invariant(e: &Expr, assigned: &HashSet<LocalId>, once: &Once, depth: u32) -> bool {
    if contains_load(e) || depth > 8 {
        return false;
    }
    let mut ok = true;
    walk(e, &mut |x| {
        if let Expr::Local(l) = x {
            if assigned.contains(l) {
                ok &= once[l.0 as usize].is_some_and(|v| invariant(v, assigned, once, depth + 1));
            }
        }
    });
    ok
}

/// The pointer parameter or shared array an address is computed from, when it is evident.
pub fn root_base(e: &Expr) -> Option<Base> {
    match e {
        Expr::Param(p) => Some(Base::Param(*p)),
        Expr::SharedBase(s) => Some(Base::Shared(*s)),
        Expr::PtrOffset { ptr, .. } => root_base(ptr),
        _ => None,
    }
}

struct Access<'k> {
    op: MemOpId,
    base: Option<Base>,
    addr: Option<&'k Expr>,
}

fn promote_in_loop(k: &Kernel, keys: &[u32], once: &Once, body: &[Stmt], step: &[Stmt], out: &mut [bool]) {
    let mut accesses = Vec::new();
    let mut assigned = HashSet::new();
    let mut exits = false;
    let mut calls_barrier = false;
    for s in body.iter().chain(step) {
        collect(s, &mut accesses, &mut assigned, &mut exits, &mut calls_barrier);
    }
    for a in &mut accesses {
        if a.base.is_none() {
            a.base = a.addr.and_then(|e| base_through(e, once, 0));
        }
    }
    if exits || calls_barrier {
        // A store is promoted only when it runs on every iteration; early exits and barriers
        // make that unprovable here.
        return;
    }
    // A location is promoted when a store to it runs on every iteration and nothing else in
    // the loop may touch it; then every store to it in the loop (a conditional one too) writes
    // the register, and one store after the loop writes memory.
    let clean = |op: MemOpId, addr: &Expr| -> Option<Base> {
        let m = k.mem_op(op);
        // Shared stores too: a shared accumulator (`acc[tid] += x` in a loop with no barrier)
        // was written once after the loop on the H200 (validate/probes/compiled).
        if m.volatile || !matches!(m.space, Space::Global | Space::Shared) || m.kind != AccessKind::Store {
            return None;
        }
        let base = base_through(addr, once, 0)?;
        if !invariant(addr, &assigned, once, 0) {
            return None;
        }
        accesses
            .iter()
            .all(|a| {
                if a.op == op {
                    return true;
                }
                match a.base {
                    Some(b) if !k.may_share_memory(b, base) => true,
                    // An atomic on the same object reads memory on every iteration.
                    Some(_) if k.mem_op(a.op).kind.is_atomic() => false,
                    Some(b) if b == base => keys[a.op.0 as usize] == keys[op.0 as usize],
                    _ => false,
                }
            })
            .then_some(base)
    };
    let mut every = Vec::new();
    every_iteration_stores(body, &mut every);
    let mut locations = Vec::new();
    for s in every {
        let Stmt::Store { op, addr, .. } = s else { continue };
        if let Some(base) = clean(*op, addr) {
            out[op.0 as usize] = true;
            locations.push((base, keys[op.0 as usize]));
        }
    }
    let mut all = Vec::new();
    loop_stores(body, &mut all);
    for s in all {
        let Stmt::Store { op, addr, .. } = s else { continue };
        if locations
            .contains(&(base_through(addr, once, 0).unwrap_or(Base::Param(ParamId(u32::MAX))), keys[op.0 as usize]))
            && clean(*op, addr).is_some()
        {
            out[op.0 as usize] = true;
        }
    }
}

/// The stores of a loop body that run on every iteration: those at its top level, and those
/// of an inlined helper (a synthetic loop run once) up to the first statement that may leave it
/// early (`break`, or a branch holding one: an early `return` of the helper).
fn every_iteration_stores<'k>(stmts: &'k [Stmt], out: &mut Vec<&'k Stmt>) {
    for s in stmts {
        match s {
            Stmt::Store { .. } => out.push(s),
            Stmt::Loop { body, step, synthetic: true, .. } if step.is_empty() => {
                let end = body.iter().position(leaves).unwrap_or(body.len());
                every_iteration_stores(&body[..end], out);
            }
            _ => {}
        }
    }
}

/// Every store of a loop body outside its inner loops of the user's: under branches and in
/// inlined helpers too.
fn loop_stores<'k>(stmts: &'k [Stmt], out: &mut Vec<&'k Stmt>) {
    for s in stmts {
        match s {
            Stmt::Store { .. } => out.push(s),
            Stmt::If { then, els, .. } => {
                loop_stores(then, out);
                loop_stores(els, out);
            }
            Stmt::Loop { body, step, synthetic: true, .. } => {
                loop_stores(body, out);
                loop_stores(step, out);
            }
            _ => {}
        }
    }
}

/// Whether a statement may leave the loop around it (not counting loops inside it).
fn leaves(s: &Stmt) -> bool {
    match s {
        Stmt::Break | Stmt::Continue | Stmt::Return => true,
        Stmt::If { then, els, .. } => then.iter().chain(els).any(leaves),
        _ => false,
    }
}

fn collect<'k>(
    s: &'k Stmt,
    acc: &mut Vec<Access<'k>>,
    assigned: &mut HashSet<LocalId>,
    exits: &mut bool,
    barrier: &mut bool,
) {
    match s {
        Stmt::Assign { local, value, .. } => {
            assigned.insert(*local);
            loads(value, acc);
        }
        Stmt::Store { op, addr, value } => {
            acc.push(Access { op: *op, base: root_base(addr), addr: Some(addr) });
            loads(addr, acc);
            loads(value, acc);
        }
        Stmt::Eval(e) => loads(e, acc),
        Stmt::If { cond, then, els, .. } => {
            loads(cond, acc);
            for x in then.iter().chain(els) {
                collect(x, acc, assigned, exits, barrier);
            }
        }
        Stmt::Loop { cond, body, step, .. } => {
            if let Some(c) = cond {
                loads(c, acc);
            }
            // Breaks inside an inner loop leave only that loop.
            let mut inner_exit = false;
            for x in body.iter().chain(step) {
                collect(x, acc, assigned, &mut inner_exit, barrier);
            }
        }
        Stmt::Break | Stmt::Continue | Stmt::Return => *exits = true,
        Stmt::Barrier { .. } => *barrier = true,
    }
}

fn loads<'k>(e: &'k Expr, acc: &mut Vec<Access<'k>>) {
    walk(e, &mut |x| {
        if let Expr::Load { op, addr } = x {
            acc.push(Access { op: *op, base: root_base(addr), addr: Some(addr) });
        }
    });
}

fn contains_load(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| found |= matches!(x, Expr::Load { .. }));
    found
}

/// Visits every node of an expression.
pub fn walk<'e>(e: &'e Expr, f: &mut impl FnMut(&'e Expr)) {
    f(e);
    e.for_each_operand(&mut |x| walk(x, f));
}
