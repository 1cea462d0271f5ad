//! Dead loads: a load whose value is never used is removed, as nvcc does (LLVM's dead code
//! elimination: `float unused = in[t];` or the statement `in[t + 32];` issue no LDG). Volatile
//! loads are always issued.
//!
//! The rule is flow-insensitive and so errs towards keeping loads: a local is live when any
//! read of it anywhere feeds a store, a branch or loop condition, the address of a kept load, a
//! call with effects, or another live local. Loads outside every such use are dead.

use super::*;
use std::collections::HashSet;

/// Removes dead loads from `k`'s statements; returns the memory operations removed (they keep
/// their rows, with no executions) and adds a note per operation for the sheet.
pub fn remove_dead_loads(k: &mut Kernel) -> Vec<MemOpId> {
    let live = live_locals(k);
    let mut removed = Vec::new();
    let mut body = std::mem::take(&mut k.body);
    rewrite(k, &live, &mut body, &mut removed);
    k.body = body;
    removed.sort();
    removed.dedup();
    for id in &removed {
        let m = k.mem_op(*id);
        k.notes.push(format!(
            "`{}` at {}:{}: its value is never used, so nvcc removes the load (dead code): no executions counted",
            m.text, m.span.line, m.span.column
        ));
    }
    removed
}

/// An opaque value whose arguments are used even when its result is not.
pub(super) fn has_effects(what: &str) -> bool {
    const EFFECTS: &[&str] = &[
        "printf",
        "assert",
        "__prof",
        "__trap",
        "__brkpt",
        "__shfl",
        "__ballot",
        "__any",
        "__all",
        "__match",
        "__reduce",
        "__nanosleep",
        "__activemask",
        "clock",
        "__globaltimer",
        // A call of the device runtime: its argument reaches the graph after the kernel.
        "cudaGraphSetConditional",
        // The value of a store merged into a wider one: stored, with the other's.
        super::vector_loads::STORED_WITH,
    ];
    what == LOCAL_ARRAY || EFFECTS.iter().any(|e| what.starts_with(e))
}

fn live_locals(k: &Kernel) -> HashSet<LocalId> {
    // Structures and vectors are read member by member through paths the IR does not spell as
    // reads of the local: never take a load into one as dead.
    let mut live: HashSet<LocalId> = (0..k.locals.len())
        .filter(|&i| matches!(k.locals[i].ty, Ty::Vector { .. }))
        .map(|i| LocalId(i as u32))
        .collect();
    loop {
        let before = live.len();
        for s in &k.body {
            mark_stmt(k, s, &mut live);
        }
        if live.len() == before {
            return live;
        }
    }
}

fn mark_stmt(k: &Kernel, s: &Stmt, live: &mut HashSet<LocalId>) {
    match s {
        Stmt::Assign { local, value, .. } => {
            if live.contains(local) {
                use_all(value, live);
            } else {
                use_kept(k, value, live);
            }
        }
        Stmt::Store { addr, value, .. } => {
            use_all(addr, live);
            use_all(value, live);
        }
        Stmt::Eval(e) => use_kept(k, e, live),
        Stmt::If { cond, then, els, .. } => {
            use_all(cond, live);
            for x in then.iter().chain(els) {
                mark_stmt(k, x, live);
            }
        }
        Stmt::Loop { cond, body, step, .. } => {
            if let Some(c) = cond {
                use_all(c, live);
            }
            for x in body.iter().chain(step) {
                mark_stmt(k, x, live);
            }
        }
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier { .. } => {}
    }
}

/// Every local read by `e` is live.
fn use_all(e: &Expr, live: &mut HashSet<LocalId>) {
    licm::walk(e, &mut |x| {
        if let Expr::Local(l) = x {
            live.insert(*l);
        }
    });
}

/// `e`'s value is unused: only what runs anyway (volatile loads, calls with effects) uses locals.
fn use_kept(k: &Kernel, e: &Expr, live: &mut HashSet<LocalId>) {
    for part in kept_parts(k, e) {
        use_all(part, live);
    }
}

/// The parts of an unused expression that still run: volatile loads and calls with effects.
fn kept_parts<'e>(k: &Kernel, e: &'e Expr) -> Vec<&'e Expr> {
    let mut out = Vec::new();
    collect_kept(k, e, &mut out);
    out
}

/// An atomic (or any volatile access) among an opaque value's arguments: the call has effects
/// and uses its other arguments (`atomicAdd(&s[b], in[i])` reads `in[i]`).
pub(super) fn has_effectful_arg(k: &Kernel, args: &[Expr]) -> bool {
    args.iter()
        .any(|a| matches!(a, Expr::Load { op, .. } if k.mem_op(*op).volatile || k.mem_op(*op).kind != AccessKind::Load))
}

fn collect_kept<'e>(k: &Kernel, e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match e {
        Expr::Opaque { args, .. } if has_effectful_arg(k, args) => out.push(e),
        Expr::Load { op, .. } if k.mem_op(*op).volatile => out.push(e),
        Expr::Opaque { what, .. } if has_effects(what) => out.push(e),
        _ => e.for_each_operand(&mut |x| collect_kept(k, x, out)),
    }
}

/// Non-volatile loads in an unused expression, outside its kept parts.
fn dead_loads(k: &Kernel, e: &Expr, out: &mut Vec<MemOpId>) {
    match e {
        Expr::Opaque { args, .. } if has_effectful_arg(k, args) => {}
        Expr::Load { op, .. } if k.mem_op(*op).volatile => {}
        Expr::Opaque { what, .. } if has_effects(what) => {}
        _ => {
            if let Expr::Load { op, .. } = e {
                out.push(*op);
            }
            e.for_each_operand(&mut |x| dead_loads(k, x, out));
        }
    }
}

/// An unused value with dead loads becomes the evaluation of its kept parts alone.
fn strip(k: &Kernel, e: &Expr, removed: &mut Vec<MemOpId>) -> Option<Vec<Stmt>> {
    let mut dead = Vec::new();
    dead_loads(k, e, &mut dead);
    if dead.is_empty() {
        return None;
    }
    removed.extend(dead);
    Some(strip_unused(k, e))
}

/// What of an unused value still runs (its volatile loads and calls with effects), as
/// statements: the value of a dead store.
pub(super) fn strip_unused(k: &Kernel, e: &Expr) -> Vec<Stmt> {
    kept_parts(k, e).into_iter().map(|p| Stmt::Eval(p.clone())).collect()
}

fn rewrite(k: &Kernel, live: &HashSet<LocalId>, stmts: &mut Vec<Stmt>, removed: &mut Vec<MemOpId>) {
    let old = std::mem::take(stmts);
    for mut s in old {
        let replaced = match &mut s {
            Stmt::Assign { local, value, .. } if !live.contains(local) => strip(k, value, removed),
            Stmt::Eval(e) => strip(k, e, removed),
            Stmt::If { then, els, .. } => {
                rewrite(k, live, then, removed);
                rewrite(k, live, els, removed);
                None
            }
            Stmt::Loop { body, step, .. } => {
                rewrite(k, live, body, removed);
                rewrite(k, live, step, removed);
                None
            }
            _ => None,
        };
        match replaced {
            Some(kept) => stmts.extend(kept),
            None => stmts.push(s),
        }
    }
}
