//! Dead stores: a store that a later store in the same basic block overwrites, with nothing
//! between them that may read the location, is removed, as nvcc does (LLVM's dead store
//! elimination). `out[i] += a[i]; out[i] -= b[i];` through `__restrict__` pointers is one STG,
//! not two: the value stays in a register between them (checked against nvcc 13.0's SASS in
//! `tests/cpp_round11.rs`).
//!
//! The rule errs towards keeping stores. Store `S` at address `A` is dead when, in the same
//! statement list after it, a plain store with `A`'s value number (the same address and width in
//! the compiler's eyes, [`super::vn`]) comes before any of:
//! - a branch, a loop, a barrier, a `return`, or an assignment to a variable `A` reads;
//! - an atomic, a volatile access, an asynchronous copy, a call with effects;
//! - a load that may read `A`: through a pointer that may alias `A`'s (the same object, or
//!   neither `__restrict__`), unless it loads `A` itself and `S` is a read-modify-write of `A`
//!   (`A += v`): that load then reads the register the read of `S` left, as the held-value model
//!   has it;
//! - a store to an object that may alias `A`'s (it would drop the held value that model keeps).
//!
//! A dead store has no executions. Its value is still computed (its loads counted) when it is a
//! read-modify-write, whose result the next store's value reads from a register; otherwise
//! nothing reads the value, and its loads are dead code too.

use super::licm::walk;
use super::*;

/// Removes dead stores from `k`'s statements; returns the memory operations removed (they keep
/// their rows, with no executions) and adds a note per operation for the sheet.
pub fn remove_dead_stores(k: &mut Kernel) -> Vec<MemOpId> {
    let numbers = vn::address_numbers(k);
    let variables = vn::address_variables(k);
    // By memory operation, the object its address points into, seen through locals assigned once.
    let bases: Vec<Option<Base>> = {
        let (addrs, once) = vn::definitions(k);
        addrs.iter().map(|a| a.and_then(|a| super::licm::base_through(a, &once, 0))).collect()
    };
    let mut body = std::mem::take(&mut k.body);
    let mut removed = Vec::new();
    Cx { k, numbers, variables, bases }.visit(&mut body, &mut removed);
    k.body = body;
    for id in &removed {
        let m = k.mem_op(*id);
        k.notes.push(format!(
            "`{}` at {}:{}: a later store in the same block writes the same address first, so nvcc removes this one (dead store): no executions counted",
            m.text, m.span.line, m.span.column
        ));
    }
    removed
}

struct Cx<'k> {
    k: &'k Kernel,
    numbers: Vec<u32>,
    variables: Vec<Vec<LocalId>>,
    bases: Vec<Option<Base>>,
}

impl Cx<'_> {
    fn visit(&self, stmts: &mut Vec<Stmt>, removed: &mut Vec<MemOpId>) {
        for s in stmts.iter_mut() {
            match s {
                Stmt::If { then, els, .. } => {
                    self.visit(then, removed);
                    self.visit(els, removed);
                }
                Stmt::Loop { body, step, .. } => {
                    self.visit(body, removed);
                    self.visit(step, removed);
                }
                _ => {}
            }
        }
        let dead: Vec<Option<bool>> = (0..stmts.len()).map(|i| self.is_dead(stmts, i)).collect();
        let old = std::mem::take(stmts);
        for (s, dead) in old.into_iter().zip(dead) {
            match (s, dead) {
                (Stmt::Store { op, addr, value }, Some(rmw)) => {
                    removed.push(op);
                    // The address's loads still run; so do the value's when the next store's
                    // value is computed from it (in a register). A value nothing reads is dead
                    // code with its loads, as `dce` has it.
                    stmts.push(Stmt::Eval(addr));
                    if rmw {
                        stmts.push(Stmt::Eval(value));
                    } else {
                        stmts.extend(dce::strip_unused(self.k, &value));
                    }
                }
                (s, _) => stmts.push(s),
            }
        }
    }

    fn plain_store(&self, op: MemOpId) -> bool {
        let m = self.k.mem_op(op);
        m.kind == AccessKind::Store && !m.volatile && m.space.has_address() && m.matrix == 0
    }

    /// Whether memory reached through `a` (unknown: `None`) may be the object `b`.
    fn may_alias(&self, a: Option<Base>, b: Base) -> bool {
        a.is_none_or(|a| self.k.may_share_memory(a, b))
    }

    /// Whether statement `i` is a dead store, and then whether it is a read-modify-write.
    fn is_dead(&self, stmts: &[Stmt], i: usize) -> Option<bool> {
        let Stmt::Store { op, value, .. } = &stmts[i] else { return None };
        if !self.plain_store(*op) {
            return None;
        }
        let base = self.bases[op.0 as usize]?;
        let number = self.numbers[op.0 as usize];
        let mut rmw = false;
        walk(value, &mut |x| {
            if let Expr::Load { op: l, .. } = x {
                rmw |= self.numbers[l.0 as usize] == number;
            }
        });
        // Whether evaluating `e` may read the location (or has effects that keep the store).
        let reads = |e: &Expr| {
            let mut r = false;
            walk(e, &mut |x| match x {
                Expr::Load { op: l, .. } => {
                    let m = self.k.mem_op(*l);
                    if m.kind != AccessKind::Load || m.volatile {
                        r = true;
                    } else if self.numbers[l.0 as usize] == number {
                        r |= !rmw;
                    } else if m.space.has_address() {
                        r |= self.may_alias(self.bases[l.0 as usize], base);
                    }
                }
                Expr::Opaque { what, args } => r |= dce::has_effects(what) || dce::has_effectful_arg(self.k, args),
                _ => {}
            });
            r
        };
        for s in &stmts[i + 1..] {
            match s {
                Stmt::Store { op: o, addr: a, value: v } => {
                    if reads(a) || reads(v) {
                        return None;
                    }
                    if self.plain_store(*o) && self.numbers[o.0 as usize] == number {
                        return Some(rmw);
                    }
                    if !self.plain_store(*o) || self.may_alias(self.bases[o.0 as usize], base) {
                        return None;
                    }
                }
                Stmt::Assign { local, value, .. } => {
                    if reads(value) || self.variables[op.0 as usize].contains(local) {
                        return None;
                    }
                }
                Stmt::Eval(e) => {
                    if reads(e) {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        None
    }
}
