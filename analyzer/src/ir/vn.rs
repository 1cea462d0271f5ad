//! Address identity by structure (value numbering, as the compiler's GVN does it).
//!
//! Load removal needs to know when two memory operations compute the same address expression:
//! nvcc reuses a value only when it can prove the addresses equal, and it proves that on its
//! value graph, not on the text. Here every expression gets a number; equal numbers mean the
//! same value by construction:
//! - commutative operators sort their operands, and chains of one associative operator in one
//!   type are flattened first, so `i + 1`, `1 + i` and `(1 + j) + i - ...` agree where they should;
//! - `a > b` is `b < a`, `a >= b` is `b <= a`;
//! - a local assigned exactly once in the kernel stands for the value assigned to it (SSA's view:
//!   `int j = i + 1; a[j]` and `a[i + 1]` are one address);
//! - a volatile load and an opaque call are each a value of their own.
//!
//! Whether two executions of operations with equal numbers really touch the same byte is still
//! decided at run time by the engines (same object, same offset): numbers only say the compiler
//! can see it. A side table keyed by memory operation, like naga's analyses.

use super::*;
use std::collections::HashMap;

#[derive(Clone, PartialEq, Eq, Hash)]
enum Node {
    Int(i128, IntTy),
    Float(u64),
    Local(LocalId),
    Param(ParamId),
    Builtin(Builtin),
    Shared(SharedId),
    Int2(BinOp, IntTy, Vec<u32>),
    Float2(BinOp, Vec<u32>),
    Unary(UnOp, IntTy, u32),
    ToInt(IntTy, u32),
    ToFloat(u32),
    Logical(bool, u32, u32),
    Select(u32, u32, u32),
    /// A pointer and the sorted byte offsets added to it.
    Offset(u32, Vec<u32>),
    PtrDiff(u32, u32),
    SharedAddress(u32),
    Load(u32, u32),
    /// A value equal only to itself.
    Unique(u32),
    /// The counter of a completely unrolled loop at this depth.
    Counter(u32),
    /// A memory operation's key: access width and address.
    Access(u32, u32),
}

/// How deep a chain of single-assignment locals is followed before a local is taken as itself.
const MAX_DEPTH: u32 = 200;

struct Numbering<'k> {
    k: &'k Kernel,
    table: HashMap<Node, u32>,
    /// By local: its one assigned value, when it has exactly one.
    defs: Vec<Option<&'k Expr>>,
    /// By local: its number once computed; `None` while being computed (a cycle).
    local_vn: HashMap<LocalId, Option<u32>>,
    uniques: u32,
    depth: u32,
    /// Counters of completely unrolled loops, by depth: numbered by role ([`copy_numbers`]).
    counters: &'k HashMap<LocalId, u32>,
}

/// Per memory operation, a number for its address: operations with equal numbers compute the
/// same address expression in the compiler's eyes (and move the same width).
pub fn address_numbers(k: &Kernel) -> Vec<u32> {
    numbers(k, &HashMap::new())
}

/// As [`address_numbers`], with the counters of completely unrolled loops (by their depth,
/// [`super::unroll::fully_unrolled_counters`]) numbered by role: in every unrolled copy the
/// counter is a constant, so `x[4 * i + k]` of two sibling `k` loops is one expression whose
/// value the counters' values then decide. For the held-value model only: LICM asks whether
/// an address changes inside its loop, and there a counter is a variable.
pub fn copy_numbers(k: &Kernel, counters: &HashMap<LocalId, u32>) -> Vec<u32> {
    numbers(k, counters)
}

/// Per memory operation, its address; per local, its one assigned value when it has exactly
/// one (SSA's view: every read after it sees that expression's value of the time).
pub fn definitions(k: &Kernel) -> (Vec<Option<&Expr>>, Vec<Option<&Expr>>) {
    let mut addrs: Vec<Option<&Expr>> = vec![None; k.mem_ops.len()];
    let mut counts = vec![0u32; k.locals.len()];
    let mut defs: Vec<Option<&Expr>> = vec![None; k.locals.len()];
    for s in &k.body {
        scan(s, &mut addrs, &mut counts, &mut defs);
    }
    for (d, c) in defs.iter_mut().zip(&counts) {
        if *c != 1 {
            *d = None;
        }
    }
    (addrs, defs)
}

fn numbers(k: &Kernel, counters: &HashMap<LocalId, u32>) -> Vec<u32> {
    let (addrs, defs) = definitions(k);
    let mut n = Numbering { k, table: HashMap::new(), defs, local_vn: HashMap::new(), uniques: 0, depth: 0, counters };
    k.mem_ops
        .iter()
        .zip(&addrs)
        .map(|(m, a)| {
            let a = match a {
                Some(a) => n.number(a),
                None => n.unique(),
            };
            n.intern(Node::Access(m.width, a))
        })
        .collect()
}

/// Per memory operation, whether the compiler sees its address as one value until a local it
/// reads is assigned again, even where the analysis does not know that value (an offset read
/// from memory): the address, through the single-assignment locals that stand for their values,
/// reads memory only through `const __restrict__` parameters, which nothing in the kernel
/// writes, and calls nothing opaque. A lane that loaded it then holds its value as for a known
/// address (dslash's `b->c[j]` of `b = src + fwd[4 * site + k]`, loaded once per `j`).
pub fn same_unknown_address(k: &Kernel) -> Vec<bool> {
    let (addrs, defs) = definitions(k);
    let read_only = |e: &Expr| {
        let mut root = e;
        loop {
            match root {
                Expr::PtrOffset { ptr, .. } => root = ptr,
                Expr::Local(l) => match defs[l.0 as usize] {
                    Some(d) => root = d,
                    None => return false,
                },
                Expr::Param(p) => {
                    return matches!(&k.param(*p).ty, Ty::Ptr(pt) if pt.is_const && pt.restrict && !pt.volatile)
                }
                _ => return false,
            }
        }
    };
    addrs
        .iter()
        .map(|a| {
            let Some(a) = a else { return false };
            let mut ok = true;
            let mut seen = std::collections::HashSet::new();
            let mut stack: Vec<&Expr> = vec![a];
            while let Some(e) = stack.pop() {
                licm::walk(e, &mut |x| match x {
                    Expr::Local(l) if seen.insert(*l) => {
                        if let Some(d) = defs[l.0 as usize] {
                            stack.push(d);
                        }
                    }
                    Expr::Load { op, addr } => {
                        let m = k.mem_op(*op);
                        ok &= !m.volatile && m.space == Space::Global && read_only(addr);
                    }
                    Expr::Opaque { .. } => ok = false,
                    _ => {}
                });
            }
            ok
        })
        .collect()
}

/// Per memory operation, the locals its address reads that are assigned more than once (loop
/// counters, variables updated in place), through the single-assignment locals that stand for
/// their values. An assignment to one of them gives the address a new value in the compiler's
/// eyes, whatever it is at run time: a value held for the old one cannot serve the new one.
pub fn address_variables(k: &Kernel) -> Vec<Vec<LocalId>> {
    let mut addrs: Vec<Option<&Expr>> = vec![None; k.mem_ops.len()];
    let mut counts = vec![0u32; k.locals.len()];
    let mut defs: Vec<Option<&Expr>> = vec![None; k.locals.len()];
    for s in &k.body {
        scan(s, &mut addrs, &mut counts, &mut defs);
    }
    addrs
        .iter()
        .map(|a| {
            let mut out = Vec::new();
            let mut seen = std::collections::HashSet::new();
            let mut stack: Vec<&Expr> = a.iter().copied().collect();
            while let Some(e) = stack.pop() {
                licm::walk(e, &mut |x| {
                    if let Expr::Local(l) = x {
                        if seen.insert(*l) {
                            match (counts[l.0 as usize], defs[l.0 as usize]) {
                                (1, Some(d)) => stack.push(d),
                                _ => out.push(*l),
                            }
                        }
                    }
                });
            }
            out.sort_by_key(|l| l.0);
            out
        })
        .collect()
}

fn scan<'k>(s: &'k Stmt, addrs: &mut [Option<&'k Expr>], counts: &mut [u32], defs: &mut [Option<&'k Expr>]) {
    let exprs = |e: &'k Expr, addrs: &mut [Option<&'k Expr>]| loads_in(e, addrs);
    match s {
        Stmt::Assign { local, value, .. } => {
            counts[local.0 as usize] += 1;
            defs[local.0 as usize] = Some(value);
            exprs(value, addrs);
        }
        Stmt::Store { op, addr, value } => {
            addrs[op.0 as usize].get_or_insert(addr);
            exprs(addr, addrs);
            exprs(value, addrs);
        }
        Stmt::Eval(e) => exprs(e, addrs),
        Stmt::If { cond, then, els, .. } => {
            exprs(cond, addrs);
            for x in then.iter().chain(els) {
                scan(x, addrs, counts, defs);
            }
        }
        Stmt::Loop { cond, body, step, .. } => {
            if let Some(c) = cond {
                exprs(c, addrs);
            }
            for x in body.iter().chain(step) {
                scan(x, addrs, counts, defs);
            }
        }
        Stmt::Break | Stmt::Continue | Stmt::Return | Stmt::Barrier { .. } => {}
    }
}

fn loads_in<'k>(e: &'k Expr, addrs: &mut [Option<&'k Expr>]) {
    if let Expr::Load { op, addr } = e {
        addrs[op.0 as usize].get_or_insert(addr);
    }
    e.for_each_operand(&mut |x| loads_in(x, addrs));
}

fn commutative(op: BinOp) -> bool {
    matches!(
        op,
        BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Eq | BinOp::Ne | BinOp::Min | BinOp::Max
    )
}

fn associative(op: BinOp) -> bool {
    matches!(op, BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Min | BinOp::Max)
}

impl<'k> Numbering<'k> {
    fn intern(&mut self, n: Node) -> u32 {
        let next = self.table.len() as u32;
        *self.table.entry(n).or_insert(next)
    }

    fn unique(&mut self) -> u32 {
        self.uniques += 1;
        let u = self.uniques;
        self.intern(Node::Unique(u))
    }

    fn local(&mut self, l: LocalId) -> u32 {
        if let Some(&d) = self.counters.get(&l).filter(|d| **d != u32::MAX) {
            return self.intern(Node::Counter(d));
        }
        match self.local_vn.get(&l) {
            Some(Some(v)) => return *v,
            // Defined in terms of itself: the local is its own value.
            Some(None) => return self.intern(Node::Local(l)),
            None => {}
        }
        let v = match self.defs.get(l.0 as usize).copied().flatten() {
            Some(def) if self.depth < MAX_DEPTH => {
                self.local_vn.insert(l, None);
                self.depth += 1;
                let v = self.number(def);
                self.depth -= 1;
                v
            }
            _ => self.intern(Node::Local(l)),
        };
        self.local_vn.insert(l, Some(v));
        v
    }

    /// The operands of a chain of `op` in `ty`, flattened.
    fn flatten<'e>(e: &'e Expr, op: BinOp, ty: IntTy, out: &mut Vec<&'e Expr>) {
        match e {
            Expr::Binary { op: o, ty: t, lhs, rhs, .. } if *o == op && *t == ty => {
                Self::flatten(lhs, op, ty, out);
                Self::flatten(rhs, op, ty, out);
            }
            _ => out.push(e),
        }
    }

    fn number(&mut self, e: &'k Expr) -> u32 {
        let node = match e {
            Expr::Int(v, t) => Node::Int(*v, *t),
            Expr::Float(f) => Node::Float(f.to_bits()),
            Expr::Local(l) => return self.local(*l),
            Expr::Param(p) => Node::Param(*p),
            Expr::Builtin(b) => Node::Builtin(*b),
            Expr::SharedBase(s) => Node::Shared(*s),
            Expr::Binary { op, ty, lhs, rhs, .. } => {
                let mut parts = Vec::new();
                if associative(*op) {
                    Self::flatten(e, *op, *ty, &mut parts);
                } else {
                    parts.push(lhs);
                    parts.push(rhs);
                }
                let mut vs: Vec<u32> = parts.into_iter().map(|p| self.number(p)).collect();
                let op = match op {
                    BinOp::Gt => {
                        vs.reverse();
                        BinOp::Lt
                    }
                    BinOp::Ge => {
                        vs.reverse();
                        BinOp::Le
                    }
                    o => *o,
                };
                if commutative(op) {
                    vs.sort_unstable();
                }
                Node::Int2(op, *ty, vs)
            }
            Expr::FloatBinary { op, lhs, rhs } => {
                // Floating addition is not associative: only the two operands commute.
                let mut vs = vec![self.number(lhs), self.number(rhs)];
                if matches!(op, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max | BinOp::Eq | BinOp::Ne) {
                    vs.sort_unstable();
                }
                Node::Float2(*op, vs)
            }
            Expr::Unary { op, ty, arg } => Node::Unary(*op, *ty, self.number(arg)),
            Expr::ToInt { ty, arg } => Node::ToInt(*ty, self.number(arg)),
            Expr::ToFloat(arg) => Node::ToFloat(self.number(arg)),
            Expr::Logical { and, lhs, rhs } => Node::Logical(*and, self.number(lhs), self.number(rhs)),
            Expr::Select { cond, then, els } => Node::Select(self.number(cond), self.number(then), self.number(els)),
            Expr::PtrOffset { .. } => {
                // `(p + a) + b` and `p + (a + b)` point at the same byte: a base and a sorted
                // list of offsets (zero offsets dropped).
                let mut offs = Vec::new();
                let mut cur = e;
                while let Expr::PtrOffset { ptr, bytes } = cur {
                    if !matches!(**bytes, Expr::Int(0, _)) {
                        offs.push(&**bytes);
                    }
                    cur = ptr;
                }
                let base = self.number(cur);
                let mut vs: Vec<u32> = offs.into_iter().map(|o| self.number(o)).collect();
                if vs.is_empty() {
                    return base;
                }
                vs.sort_unstable();
                Node::Offset(base, vs)
            }
            Expr::PtrDiff { lhs, rhs } => Node::PtrDiff(self.number(lhs), self.number(rhs)),
            Expr::SharedAddress { addr, .. } => Node::SharedAddress(self.number(addr)),
            Expr::Load { op, addr } => {
                let m = self.k.mem_op(*op);
                let a = self.number(addr);
                if m.volatile {
                    return self.unique();
                }
                Node::Load(m.width, a)
            }
            // A warp intrinsic's value depends on the other lanes: never the same as another.
            Expr::Opaque { args, .. } | Expr::Warp { args, .. } => {
                for a in args {
                    self.number(a);
                }
                return self.unique();
            }
        };
        self.intern(node)
    }
}
