//! Which kernel parameters' memory a value was read from: the arrays a user gives with
//! `--fill` when a loop's trip count comes from data (`for (j = 0; j < len / 16; j++)` with
//! `len = length[i]` names `length`). A value staged through shared memory (`if (t == 0) s_end =
//! ends[b]; __syncthreads(); while (i < s_end)`) names the array stored there; a value written
//! under a branch (`if (A[x] <= B[y]) found = 1;`) also names what the branch tested. Flow-insensitive:
//! a local's sources are every source of every value ever assigned to it, so the answer may
//! name an array too many, never one too few.

use super::{AccessKind, Base, Expr, Kernel, LocalId, ParamId, Space, Stmt, Ty};
use crate::source::Span;
use std::collections::BTreeSet;

/// The objects a pointer may point into.
type Objects = BTreeSet<Base>;

/// Where a value came from: a parameter's memory, the result of a compare-and-swap, or a plain
/// load of shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Src {
    Param(ParamId),
    CompareAndSwap,
    Shared,
}

type Sources = BTreeSet<Src>;

/// The pointer parameters whose memory `e`'s value was loaded from, through locals and shared
/// memory assigned anywhere in `k`, in parameter order.
pub fn loaded_from(k: &Kernel, e: &Expr) -> Vec<ParamId> {
    let flow = Flow::of(k);
    let mut out = Sources::new();
    flow.data(k, e, &mut out);
    out.into_iter().filter_map(|b| if let Src::Param(p) = b { Some(p) } else { None }).collect()
}

/// The spans of `k`'s loops that retry a compare-and-swap: the condition, or a `break` in the
/// body, tests a value an `atomicCAS` returned (`do { old = v; v = atomicCAS(p, old, f(old)); }
/// while (v != old)`). Empty for a kernel without `atomicCAS`.
pub fn retrying_loops(k: &Kernel) -> Vec<Span> {
    if !k.mem_ops.iter().any(|m| m.compare_and_swap) {
        return Vec::new();
    }
    let flow = Flow::of(k);
    let tests = |e: &Expr| {
        let mut d = Sources::new();
        flow.data(k, e, &mut d);
        d.contains(&Src::CompareAndSwap)
    };
    loops(&k.body)
        .into_iter()
        .filter(|(cond, body, step, _)| {
            cond.is_some_and(tests) || exits(body).into_iter().chain(exits(step)).any(tests)
        })
        .map(|(_, _, _, span)| span)
        .collect()
}

/// Whether a value the kernel loads from shared memory decides a branch, a loop's trip or an
/// address (`if (tid == 0) n = ...; __syncthreads(); for (i = tid; i < n; ...)`, a pointer chase
/// through a tree built in shared memory): then what the block stores there decides the counts.
/// False for a kernel that never stores to shared memory, or whose shared values only flow into
/// other values (a tiled product, a tree reduction).
pub fn shared_values_steer(k: &Kernel) -> bool {
    let stores = k.mem_ops.iter().any(|m| m.space == Space::Shared && m.kind == AccessKind::Store);
    // Copies into shared memory (asynchronous copies, `stmatrix`) write what no lane's value
    // says: such kernels are counted with shared values unknown.
    let opaque_writes =
        k.mem_ops.iter().any(|m| m.kind == AccessKind::AsyncCopy || (m.matrix != 0 && m.kind == AccessKind::Store));
    if !stores || opaque_writes {
        return false;
    }
    let flow = Flow::of(k);
    let steers = |e: &Expr| {
        let mut d = Sources::new();
        flow.data(k, e, &mut d);
        d.contains(&Src::Shared)
    };
    let mut found = false;
    each_decision(&k.body, &mut |e| found = found || steers(e));
    found
}

/// Every expression whose value decides where the kernel goes or what it touches: branch and
/// loop conditions, and the address of every memory operation.
fn each_decision(body: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    let addresses = |e: &Expr, f: &mut dyn FnMut(&Expr)| {
        super::licm::walk(e, &mut |x| {
            if let Expr::Load { addr, .. } = x {
                f(addr);
            }
        })
    };
    for s in body {
        match s {
            Stmt::Assign { value, .. } | Stmt::Eval(value) => addresses(value, f),
            Stmt::Store { addr, value, .. } => {
                f(addr);
                addresses(addr, f);
                addresses(value, f);
            }
            Stmt::If { cond, then, els, .. } => {
                f(cond);
                addresses(cond, f);
                each_decision(then, f);
                each_decision(els, f);
            }
            Stmt::Loop { cond, body, step, .. } => {
                if let Some(c) = cond {
                    f(c);
                    addresses(c, f);
                }
                each_decision(body, f);
                each_decision(step, f);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier { .. } => {}
        }
    }
}

/// Per memory operation: whether its count rests on how the engine decided one of the branches
/// `data_branches` names (a condition on data nobody knows, taken as the sheet states). The
/// operations inside such a branch do; so does everything that runs after it when the branch
/// can change what follows: it leaves a loop or the kernel (`break`, `continue`, `return`), or
/// assigns a local that a later branch, loop or address reads (through other locals), or stores
/// to shared memory whose values steer the kernel. Operations after it in an enclosing loop run
/// again in the next iteration, so the whole loop counts as after.
pub fn assumed_by_branches(k: &Kernel, data_branches: &[Span]) -> Vec<bool> {
    let mut marks = vec![false; k.mem_ops.len()];
    if data_branches.is_empty() {
        return marks;
    }
    let steering = steering_locals(k);
    let shared_steers = shared_values_steer(k);
    let ctx = Branches { k, spans: data_branches, steering: &steering, shared_steers };
    ctx.walk(&k.body, &mut marks, &mut false);
    marks
}

/// The locals whose value reaches a branch or loop condition or an address, directly or
/// through other locals.
fn steering_locals(k: &Kernel) -> Vec<bool> {
    let reads = |e: &Expr, out: &mut Vec<LocalId>| {
        super::licm::walk(e, &mut |x| {
            if let Expr::Local(l) = x {
                out.push(*l);
            }
        })
    };
    let mut steer = vec![false; k.locals.len()];
    each_decision(&k.body, &mut |e| {
        let mut ls = Vec::new();
        reads(e, &mut ls);
        for l in ls {
            steer[l.0 as usize] = true;
        }
    });
    // Each assignment with the locals its value, and the branches around it, read.
    let mut writes = Vec::new();
    collect_writes(&k.body, &mut Vec::new(), &mut writes);
    let assigns: Vec<(LocalId, Vec<LocalId>)> = writes
        .iter()
        .filter_map(|(w, under)| match w {
            Write::Local(l, v) => {
                let mut from = Vec::new();
                reads(v, &mut from);
                under.iter().for_each(|c| reads(c, &mut from));
                Some((*l, from))
            }
            Write::Memory(..) => None,
        })
        .collect();
    loop {
        let mut changed = false;
        for (l, from) in &assigns {
            if steer[l.0 as usize] {
                for f in from {
                    if !steer[f.0 as usize] {
                        steer[f.0 as usize] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return steer;
        }
    }
}

struct Branches<'a> {
    k: &'a Kernel,
    spans: &'a [Span],
    steering: &'a [bool],
    shared_steers: bool,
}

impl Branches<'_> {
    /// Marks what rests on a data branch in `body`; `after`: everything from here on does.
    fn walk(&self, body: &[Stmt], marks: &mut [bool], after: &mut bool) {
        for s in body {
            if *after {
                mark_all(std::slice::from_ref(s), marks);
                continue;
            }
            match s {
                Stmt::If { span, then, els, .. } if self.spans.contains(span) => {
                    mark_all(then, marks);
                    mark_all(els, marks);
                    if self.changes_what_follows(then) || self.changes_what_follows(els) {
                        *after = true;
                    }
                }
                Stmt::If { then, els, .. } => {
                    self.walk(then, marks, after);
                    self.walk(els, marks, after);
                }
                Stmt::Loop { body, step, .. } => {
                    let mut inner = false;
                    self.walk(body, marks, &mut inner);
                    self.walk(step, marks, &mut inner);
                    if inner {
                        mark_all(std::slice::from_ref(s), marks);
                        *after = true;
                    }
                }
                _ => {}
            }
        }
    }

    fn changes_what_follows(&self, body: &[Stmt]) -> bool {
        body.iter().any(|s| match s {
            Stmt::Break | Stmt::Continue | Stmt::Return => true,
            Stmt::Assign { local, .. } => self.steering[local.0 as usize],
            Stmt::Store { op, .. } => self.shared_steers && self.k.mem_op(*op).space == Space::Shared,
            Stmt::If { then, els, .. } => self.changes_what_follows(then) || self.changes_what_follows(els),
            Stmt::Loop { body, step, .. } => self.changes_what_follows(body) || self.changes_what_follows(step),
            Stmt::Eval(_) | Stmt::Barrier { .. } => false,
        })
    }
}

/// Marks every memory operation in `body`.
fn mark_all(body: &[Stmt], marks: &mut [bool]) {
    let ops = |e: &Expr, marks: &mut [bool]| {
        super::licm::walk(e, &mut |x| {
            if let Expr::Load { op, .. } = x {
                marks[op.0 as usize] = true;
            }
        })
    };
    for s in body {
        match s {
            Stmt::Assign { value, .. } | Stmt::Eval(value) => ops(value, marks),
            Stmt::Store { op, addr, value } => {
                marks[op.0 as usize] = true;
                ops(addr, marks);
                ops(value, marks);
            }
            Stmt::If { cond, then, els, .. } => {
                ops(cond, marks);
                mark_all(then, marks);
                mark_all(els, marks);
            }
            Stmt::Loop { cond, body, step, .. } => {
                if let Some(c) = cond {
                    ops(c, marks);
                }
                mark_all(body, marks);
                mark_all(step, marks);
            }
            Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier { .. } => {}
        }
    }
}

/// A loop statement's condition, body, step and span.
type LoopParts<'k> = (Option<&'k Expr>, &'k [Stmt], &'k [Stmt], Span);

/// Each loop statement's parts, in statement order.
fn loops(body: &[Stmt]) -> Vec<LoopParts<'_>> {
    fn walk<'k>(body: &'k [Stmt], out: &mut Vec<LoopParts<'k>>) {
        for s in body {
            match s {
                Stmt::If { then, els, .. } => {
                    walk(then, out);
                    walk(els, out);
                }
                Stmt::Loop { cond, body, step, span, .. } => {
                    out.push((cond.as_ref(), body, step, *span));
                    walk(body, out);
                    walk(step, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(body, &mut out);
    out
}

/// The conditions of the branches that leave this loop (`if (c) break;`, at any depth of
/// branches but not inside an inner loop).
fn exits(body: &[Stmt]) -> Vec<&Expr> {
    fn breaks(body: &[Stmt]) -> bool {
        body.iter().any(|s| match s {
            Stmt::Break => true,
            Stmt::If { then, els, .. } => breaks(then) || breaks(els),
            _ => false,
        })
    }
    let mut out = Vec::new();
    for s in body {
        if let Stmt::If { cond, then, els, .. } = s {
            if breaks(then) || breaks(els) {
                out.push(cond);
            }
            out.extend(exits(then));
            out.extend(exits(els));
        }
    }
    out
}

/// Per local: the objects whose address it may hold, and the parameters whose data it may
/// hold; per shared array, the parameters whose data was stored in it.
struct Flow {
    ptr: Vec<Objects>,
    data: Vec<Sources>,
    shared: Vec<Sources>,
}

impl Flow {
    fn of(k: &Kernel) -> Flow {
        let n = k.locals.len();
        let mut flow = Flow {
            ptr: vec![Objects::new(); n],
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
                        let mut p = Objects::new();
                        flow.ptrs(k, v, &mut p);
                        flow.data(k, v, &mut d);
                        changed |= grow(&mut flow.ptr[l.0 as usize], p);
                        changed |= grow(&mut flow.data[l.0 as usize], d);
                    }
                    Write::Memory(addr, v) => {
                        let mut into = Objects::new();
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
    fn ptrs(&self, k: &Kernel, e: &Expr, out: &mut Objects) {
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
            Expr::Load { op, addr } => {
                let m = k.mem_op(*op);
                if m.compare_and_swap {
                    out.insert(Src::CompareAndSwap);
                }
                if m.space == Space::Shared && m.kind == AccessKind::Load {
                    out.insert(Src::Shared);
                }
                let mut objects = Objects::new();
                self.ptrs(k, addr, &mut objects);
                if objects.is_empty() {
                    self.data(k, addr, out);
                }
                for b in objects {
                    match b {
                        Base::Param(p) => {
                            out.insert(Src::Param(p));
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

fn grow<T: Ord>(set: &mut BTreeSet<T>, more: BTreeSet<T>) -> bool {
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
