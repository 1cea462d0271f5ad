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
    visit(k, &keys, &k.body, &mut out);
    out
}

fn visit(k: &Kernel, keys: &[u32], stmts: &[Stmt], out: &mut [bool]) {
    for s in stmts {
        match s {
            Stmt::If { then, els, .. } => {
                visit(k, keys, then, out);
                visit(k, keys, els, out);
            }
            Stmt::Loop { body, step, synthetic: false, .. } => {
                promote_in_loop(k, keys, body, step, out);
                visit(k, keys, body, out);
                visit(k, keys, step, out);
            }
            Stmt::Loop { body, step, .. } => {
                visit(k, keys, body, out);
                visit(k, keys, step, out);
            }
            _ => {}
        }
    }
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

fn may_alias(k: &Kernel, a: Base, b: Base) -> bool {
    match (a, b) {
        (Base::Shared(x), Base::Shared(y)) => x == y,
        (Base::Shared(_), _) | (_, Base::Shared(_)) => false,
        (x, y) if x == y => true,
        (x, y) => !(k.is_restrict(x) || k.is_restrict(y)),
    }
}

struct Access {
    op: MemOpId,
    base: Option<Base>,
}

fn promote_in_loop(k: &Kernel, keys: &[u32], body: &[Stmt], step: &[Stmt], out: &mut [bool]) {
    let mut accesses = Vec::new();
    let mut assigned = HashSet::new();
    let mut exits = false;
    let mut calls_barrier = false;
    for s in body.iter().chain(step) {
        collect(s, &mut accesses, &mut assigned, &mut exits, &mut calls_barrier);
    }
    if exits || calls_barrier {
        // A store is promoted only when it runs on every iteration; early exits and barriers
        // make that unprovable here.
        return;
    }
    for s in body {
        let Stmt::Store { op, addr, .. } = s else { continue };
        let m = k.mem_op(*op);
        // Shared stores too: a shared accumulator (`acc[tid] += x` in a loop with no barrier)
        // was written once after the loop on the H200 (validate/probes/compiled).
        if m.volatile || !matches!(m.space, Space::Global | Space::Shared) || m.kind != AccessKind::Store {
            continue;
        }
        let Some(base) = root_base(addr) else { continue };
        if uses_any(addr, &assigned) || contains_load(addr) {
            continue;
        }
        let clean = accesses.iter().all(|a| {
            if a.op == *op {
                return true;
            }
            match a.base {
                Some(b) if !may_alias(k, b, base) => true,
                // An atomic on the same object reads memory on every iteration.
                Some(_) if k.mem_op(a.op).kind.is_atomic() => false,
                Some(b) if b == base => keys[a.op.0 as usize] == keys[op.0 as usize],
                _ => false,
            }
        });
        if clean {
            out[op.0 as usize] = true;
        }
    }
}

fn collect(s: &Stmt, acc: &mut Vec<Access>, assigned: &mut HashSet<LocalId>, exits: &mut bool, barrier: &mut bool) {
    match s {
        Stmt::Assign { local, value, .. } => {
            assigned.insert(*local);
            loads(value, acc);
        }
        Stmt::Store { op, addr, value } => {
            acc.push(Access { op: *op, base: root_base(addr) });
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

fn loads(e: &Expr, acc: &mut Vec<Access>) {
    walk(e, &mut |x| {
        if let Expr::Load { op, addr } = x {
            acc.push(Access { op: *op, base: root_base(addr) });
        }
    });
}

fn contains_load(e: &Expr) -> bool {
    let mut found = false;
    walk(e, &mut |x| found |= matches!(x, Expr::Load { .. }));
    found
}

fn uses_any(e: &Expr, locals: &HashSet<LocalId>) -> bool {
    let mut found = false;
    walk(e, &mut |x| {
        if let Expr::Local(l) = x {
            found |= locals.contains(l);
        }
    });
    found
}

/// Visits every node of an expression.
pub fn walk(e: &Expr, f: &mut impl FnMut(&Expr)) {
    f(e);
    e.for_each_operand(&mut |x| walk(x, f));
}
