//! Which kernel parameters' memory a value was read from: the arrays a user gives with
//! `--fill` when a loop's trip count comes from data (`for (j = 0; j < len / 16; j++)` with
//! `len = length[i]` names `length`). A value staged through shared memory (`if (t == 0) s_end =
//! ends[b]; __syncthreads(); while (i < s_end)`) names the array stored there; a value written
//! under a branch (`if (A[x] <= B[y]) found = 1;`) also names what the branch tested. Flow-insensitive:
//! a local's sources are every source of every value ever assigned to it, so the answer may
//! name an array too many, never one too few.

use super::{Base, Expr, Kernel, LocalId, ParamId, Stmt, Ty};
use std::collections::BTreeSet;

type Sources = BTreeSet<Base>;

/// The pointer parameters whose memory `e`'s value was loaded from, through locals and shared
/// memory assigned anywhere in `k`, in parameter order.
pub fn loaded_from(k: &Kernel, e: &Expr) -> Vec<ParamId> {
    let flow = Flow::of(k);
    let mut out = Sources::new();
    flow.data(k, e, &mut out);
    out.into_iter().filter_map(|b| if let Base::Param(p) = b { Some(p) } else { None }).collect()
}

/// Per local: the objects whose address it may hold, and the parameters whose data it may
/// hold; per shared array, the parameters whose data was stored in it.
struct Flow {
    ptr: Vec<Sources>,
    data: Vec<Sources>,
    shared: Vec<Sources>,
}

impl Flow {
    fn of(k: &Kernel) -> Flow {
        let n = k.locals.len();
        let mut flow = Flow {
            ptr: vec![Sources::new(); n],
            data: vec![Sources::new(); n],
            shared: vec![Sources::new(); k.shared.len()],
        };
        let mut writes = Vec::new();
        collect_writes(&k.body, &mut Vec::new(), &mut writes);
        // Each round can only grow the sets, which are bounded by the objects: a fixed point.
        loop {
            let mut changed = false;
            for (w, under) in &writes {
                let mut d = Sources::new();
                for c in under {
                    flow.data(k, c, &mut d);
                }
                match *w {
                    Write::Local(l, v) => {
                        let mut p = Sources::new();
                        flow.ptrs(k, v, &mut p);
                        flow.data(k, v, &mut d);
                        changed |= grow(&mut flow.ptr[l.0 as usize], p);
                        changed |= grow(&mut flow.data[l.0 as usize], d);
                    }
                    Write::Memory(addr, v) => {
                        let mut into = Sources::new();
                        flow.ptrs(k, addr, &mut into);
                        flow.data(k, v, &mut d);
                        for b in into {
                            if let Base::Shared(s) = b {
                                changed |= grow(&mut flow.shared[s.0 as usize], d.clone());
                            }
                        }
                    }
                }
            }
            if !changed {
                return flow;
            }
        }
    }

    /// The objects `e` may point into (not through a load: `p[i]` holding a pointer is data).
    fn ptrs(&self, k: &Kernel, e: &Expr, out: &mut Sources) {
        match e {
            Expr::Param(p) if matches!(k.param(*p).ty, Ty::Ptr(_)) => {
                out.insert(Base::Param(*p));
            }
            Expr::SharedBase(s) => {
                out.insert(Base::Shared(*s));
            }
            Expr::Local(l) => out.extend(self.ptr[l.0 as usize].iter().copied()),
            Expr::Load { .. } => {}
            e => e.for_each_operand(&mut |x| self.ptrs(k, x, out)),
        }
    }

    /// The parameters whose memory `e`'s value was read from: a load names the arrays its
    /// address points into (what was stored, for shared memory), or, through a pointer read
    /// from memory, what that pointer came from.
    fn data(&self, k: &Kernel, e: &Expr, out: &mut Sources) {
        match e {
            Expr::Load { addr, .. } => {
                let mut objects = Sources::new();
                self.ptrs(k, addr, &mut objects);
                if objects.is_empty() {
                    self.data(k, addr, out);
                }
                for b in objects {
                    match b {
                        Base::Param(_) => {
                            out.insert(b);
                        }
                        Base::Shared(s) => out.extend(self.shared[s.0 as usize].iter().copied()),
                    }
                }
            }
            Expr::Local(l) => out.extend(self.data[l.0 as usize].iter().copied()),
            e => e.for_each_operand(&mut |x| self.data(k, x, out)),
        }
    }
}

fn grow(set: &mut Sources, more: Sources) -> bool {
    let before = set.len();
    set.extend(more);
    set.len() != before
}

/// A value written to a local, or stored at an address.
enum Write<'k> {
    Local(LocalId, &'k Expr),
    Memory(&'k Expr, &'k Expr),
}

/// Every write with the conditions of the branches and loops around it.
fn collect_writes<'k>(body: &'k [Stmt], under: &mut Vec<&'k Expr>, out: &mut Vec<(Write<'k>, Vec<&'k Expr>)>) {
    for s in body {
        match s {
            Stmt::Assign { local, value, .. } => out.push((Write::Local(*local, value), under.clone())),
            Stmt::Store { addr, value, .. } => out.push((Write::Memory(addr, value), under.clone())),
            Stmt::If { cond, then, els, .. } => {
                under.push(cond);
                collect_writes(then, under, out);
                collect_writes(els, under, out);
                under.pop();
            }
            Stmt::Loop { cond, body, step, .. } => {
                under.extend(cond.as_ref());
                collect_writes(body, under, out);
                collect_writes(step, under, out);
                if cond.is_some() {
                    under.pop();
                }
            }
            _ => {}
        }
    }
}
