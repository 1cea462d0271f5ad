//! Which kernel parameters' memory a value was read from: the arrays a user gives with
//! `--fill` when a loop's trip count comes from data (`for (j = 0; j < len / 16; j++)` with
//! `len = length[i]` names `length`). Flow-insensitive: a local's sources are every source of
//! every value ever assigned to it, so the answer may name an array too many, never one too few.

use super::{Expr, Kernel, LocalId, ParamId, Stmt, Ty};
use std::collections::BTreeSet;

type Sources = BTreeSet<ParamId>;

/// The pointer parameters whose memory `e`'s value was loaded from, through locals assigned
/// anywhere in `k`, in parameter order.
pub fn loaded_from(k: &Kernel, e: &Expr) -> Vec<ParamId> {
    let flow = Flow::of(k);
    let mut out = Sources::new();
    flow.data(k, e, &mut out);
    out.into_iter().collect()
}

/// Per local: the parameters whose address it may hold, and those whose data it may hold.
struct Flow {
    ptr: Vec<Sources>,
    data: Vec<Sources>,
}

impl Flow {
    fn of(k: &Kernel) -> Flow {
        let mut flow = Flow { ptr: vec![Sources::new(); k.locals.len()], data: vec![Sources::new(); k.locals.len()] };
        let mut assigns = Vec::new();
        collect_assigns(&k.body, &mut assigns);
        // Each round can only grow the sets, which are bounded by the parameters: a fixed point.
        loop {
            let mut changed = false;
            for &(l, v) in &assigns {
                let (mut p, mut d) = (Sources::new(), Sources::new());
                flow.ptrs(k, v, &mut p);
                flow.data(k, v, &mut d);
                let i = l.0 as usize;
                let before = (flow.ptr[i].len(), flow.data[i].len());
                flow.ptr[i].extend(p);
                flow.data[i].extend(d);
                changed |= before != (flow.ptr[i].len(), flow.data[i].len());
            }
            if !changed {
                return flow;
            }
        }
    }

    /// The pointer parameters `e` may point into (not through a load: `p[i]` holding a pointer
    /// is data).
    fn ptrs(&self, k: &Kernel, e: &Expr, out: &mut Sources) {
        match e {
            Expr::Param(p) if matches!(k.param(*p).ty, Ty::Ptr(_)) => {
                out.insert(*p);
            }
            Expr::Local(l) => out.extend(self.ptr[l.0 as usize].iter().copied()),
            Expr::Load { .. } => {}
            e => e.for_each_operand(&mut |x| self.ptrs(k, x, out)),
        }
    }

    /// The parameters whose memory `e`'s value was read from: a load names the arrays its
    /// address points into (or, through a pointer read from memory, what that pointer came from).
    fn data(&self, k: &Kernel, e: &Expr, out: &mut Sources) {
        match e {
            Expr::Load { addr, .. } => {
                let mut buffers = Sources::new();
                self.ptrs(k, addr, &mut buffers);
                if buffers.is_empty() {
                    self.data(k, addr, out);
                }
                out.extend(buffers);
            }
            Expr::Local(l) => out.extend(self.data[l.0 as usize].iter().copied()),
            e => e.for_each_operand(&mut |x| self.data(k, x, out)),
        }
    }
}

fn collect_assigns<'k>(body: &'k [Stmt], out: &mut Vec<(LocalId, &'k Expr)>) {
    for s in body {
        match s {
            Stmt::Assign { local, value, .. } => out.push((*local, value)),
            Stmt::If { then, els, .. } => {
                collect_assigns(then, out);
                collect_assigns(els, out);
            }
            Stmt::Loop { body, step, .. } => {
                collect_assigns(body, out);
                collect_assigns(step, out);
            }
            _ => {}
        }
    }
}
