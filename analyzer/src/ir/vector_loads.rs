//! Member loads of one CUDA vector element merged, as LLVM's LoadStoreVectorizer merges them:
//! `p[i].x + p[i].y` of a `float2` array is one 8-byte load (`LDG.E.64`), not two 4-byte ones
//! (measured on the H200: `validate/probes/compiled`, `pair_members`, 313 requests and 2,500
//! sectors).
//!
//! Within one statement, or a run of assignments with no store or branch between them (one basic
//! block), loads every lane evaluates whose addresses are one element of a pointer
//! parameter to a built-in vector type (`float2`, `int4`, ... of 8 or 16 bytes, aligned to their
//! size) plus constant member offsets, are merged when together they cover an aligned run of 8
//! or 16 bytes (`.x .y` of a `float2`, `.x .y` or `.z .w` or all four of a `float4`). Other
//! shapes (`.x .z`, three members) are left as written: what the vectorizer makes of them
//! depends on more than this sees. So, at times, does a run of four: alone in a kernel, the four
//! members of a `float4` are one 16-byte load; after other statements that load and store
//! around the same element, nvcc 13.0 made two 8-byte loads of them. The merged load keeps the first member's row, with the run's
//! width; the others keep theirs with no executions, and a note says so.

use super::*;

/// Merges the member loads described above in `k`; returns the operations left without
/// executions.
pub fn merge_vector_member_loads(k: &mut Kernel) -> Vec<MemOpId> {
    let mut body = std::mem::take(&mut k.body);
    let mut merged: Vec<(MemOpId, Vec<MemOpId>, u32)> = Vec::new();
    visit(k, &mut body, &mut merged);
    k.body = body;
    let mut gone = Vec::new();
    for (kept, others, width) in merged {
        k.mem_ops[kept.0 as usize].width = width;
        let m = k.mem_op(kept).clone();
        for o in &others {
            let x = k.mem_op(*o);
            k.notes.push(format!(
                "`{}` at {}:{} is loaded with `{}` at {}:{} as one {width}-byte vector load (nvcc merges member loads of one element)",
                x.text, x.span.line, x.span.column, m.text, m.span.line, m.span.column
            ));
        }
        gone.extend(others);
    }
    gone
}

fn visit(k: &Kernel, stmts: &mut [Stmt], merged: &mut Vec<(MemOpId, Vec<MemOpId>, u32)>) {
    let mut i = 0;
    while i < stmts.len() {
        // A run of assignments and evaluations is one basic block with no store: LLVM's
        // vectorizer merges member loads across its statements (clenergy's `atominfo[j].y`,
        // `.z`, `.x`, `.w` on four lines: one 16-byte load in nvcc's SASS). The run ends where a
        // statement assigns a variable an element address reads (after that statement).
        let start = i;
        let mut reads: Vec<LocalId> = Vec::new();
        while i < stmts.len() {
            let (value, local) = match &stmts[i] {
                Stmt::Assign { value, local, .. } => (value, Some(*local)),
                Stmt::Eval(value) => (value, None),
                _ => break,
            };
            let mut members = Vec::new();
            collect(k, value, &mut members);
            for m in &members {
                super::licm::walk(&m.element, &mut |x| {
                    if let Expr::Local(l) = x {
                        reads.push(*l);
                    }
                });
            }
            i += 1;
            if local.is_some_and(|l| reads.contains(&l)) {
                break;
            }
        }
        if i > start {
            let mut exprs: Vec<&mut Expr> = stmts[start..i]
                .iter_mut()
                .filter_map(|s| match s {
                    Stmt::Assign { value, .. } | Stmt::Eval(value) => Some(value),
                    _ => None,
                })
                .collect();
            merge_in(k, &mut exprs, merged);
            continue;
        }
        match &mut stmts[i] {
            Stmt::Store { value, .. } => merge_in(k, &mut [value], merged),
            Stmt::If { then, els, .. } => {
                visit(k, then, merged);
                visit(k, els, merged);
            }
            Stmt::Loop { body, step, .. } => {
                visit(k, body, merged);
                visit(k, step, merged);
            }
            _ => {}
        }
        i += 1;
    }
}

/// A load every lane evaluating the expression reaches: (its operation, the element address,
/// the member's byte offset).
struct Member {
    op: MemOpId,
    element: Expr,
    offset: i128,
}

fn merge_in(k: &Kernel, exprs: &mut [&mut Expr], merged: &mut Vec<(MemOpId, Vec<MemOpId>, u32)>) {
    let mut members = Vec::new();
    for e in exprs.iter() {
        collect(k, e, &mut members);
    }
    let first = merged.len();
    let mut used = vec![false; members.len()];
    for i in 0..members.len() {
        if used[i] {
            continue;
        }
        let group: Vec<usize> = (i..members.len())
            .filter(|&j| {
                !used[j] && same(&members[i].element, &members[j].element) && same_kind(k, members[i].op, members[j].op)
            })
            .collect();
        if group.len() < 2 {
            continue;
        }
        let width = k.mem_op(members[i].op).width as i128;
        // In program order, so that the first load of the lowest member is the one kept; a
        // member read again reads the same register (GVN), merged away with the others.
        let mut offsets: Vec<(i128, usize)> = group.iter().map(|&j| (members[j].offset, j)).collect();
        offsets.sort();
        offsets.dedup_by_key(|o| o.0);
        let run = offsets.len() as i128 * width;
        let start = offsets[0].0;
        let contiguous = offsets.windows(2).all(|w| w[1].0 == w[0].0 + width);
        let element_bytes = element_size(k, &members[i].element).unwrap_or(0) as i128;
        if offsets.len() < 2 || !contiguous || !matches!(run, 8 | 16) || start % run != 0 || run > element_bytes {
            continue;
        }
        for &j in &group {
            used[j] = true;
        }
        let kept = members[offsets[0].1].op;
        let others: Vec<MemOpId> = group.iter().map(|&j| members[j].op).filter(|&o| o != kept).collect();
        merged.push((kept, others, run as u32));
    }
    // The merged-away loads read nothing of their own: their values come with the kept load.
    let gone: Vec<MemOpId> = merged[first..].iter().flat_map(|(_, o, _)| o.iter().copied()).collect();
    if !gone.is_empty() {
        for e in exprs.iter_mut() {
            drop_loads(e, &gone);
        }
    }
}

fn same_kind(k: &Kernel, a: MemOpId, b: MemOpId) -> bool {
    let (x, y) = (k.mem_op(a), k.mem_op(b));
    x.kind == AccessKind::Load
        && y.kind == AccessKind::Load
        && !x.volatile
        && !y.volatile
        && x.space == y.space
        && x.width == y.width
        && x.cache == y.cache
}

/// The byte size of the built-in vector type an element address points at, when it is one
/// element of a pointer parameter (`p` or `p + i * size`).
fn element_size(k: &Kernel, element: &Expr) -> Option<u64> {
    let p = match element {
        Expr::Param(p) => *p,
        Expr::PtrOffset { ptr, .. } => match &**ptr {
            Expr::Param(p) => *p,
            _ => return None,
        },
        _ => return None,
    };
    let Ty::Ptr(t) = &k.param(p).ty else { return None };
    match &t.pointee {
        Ty::Vector { name, bytes } if !name.starts_with("struct ") && matches!(bytes, 8 | 16) => {
            let lanes = name.chars().last()?.to_digit(10)?;
            matches!(lanes, 2 | 4).then_some(*bytes)
        }
        _ => None,
    }
}

/// Only what every lane evaluating `e` reaches: not the arms of `?:` or the right of `&&`, `||`.
fn collect(k: &Kernel, e: &Expr, out: &mut Vec<Member>) {
    e.for_each_unconditional_operand(&mut |x| collect(k, x, out));
    if let Expr::Load { op, addr } = e {
        let (element, offset) = match &**addr {
            Expr::PtrOffset { ptr, bytes } => match &**bytes {
                Expr::Int(c, _) => ((**ptr).clone(), *c),
                _ => ((**addr).clone(), 0),
            },
            a => (a.clone(), 0),
        };
        if element_size(k, &element).is_some() {
            out.push(Member { op: *op, element, offset });
        }
    }
}

/// Structural equality of two address expressions, spans aside; no loads (a load's value may
/// differ between two evaluations).
fn same(a: &Expr, b: &Expr) -> bool {
    match (a, b) {
        (Expr::Int(x, t), Expr::Int(y, u)) => x == y && t == u,
        (Expr::Local(x), Expr::Local(y)) => x == y,
        (Expr::Param(x), Expr::Param(y)) => x == y,
        (Expr::Builtin(x), Expr::Builtin(y)) => x == y,
        (Expr::SharedBase(x), Expr::SharedBase(y)) => x == y,
        (Expr::Binary { op: o, ty: t, lhs: l, rhs: r, .. }, Expr::Binary { op: p, ty: u, lhs: m, rhs: s, .. }) => {
            o == p && t == u && same(l, m) && same(r, s)
        }
        (Expr::Unary { op: o, ty: t, arg: x }, Expr::Unary { op: p, ty: u, arg: y }) => o == p && t == u && same(x, y),
        (Expr::ToInt { ty: t, arg: x }, Expr::ToInt { ty: u, arg: y }) => t == u && same(x, y),
        (Expr::PtrOffset { ptr: p, bytes: x }, Expr::PtrOffset { ptr: q, bytes: y }) => same(p, q) && same(x, y),
        _ => false,
    }
}

fn drop_loads(e: &mut Expr, gone: &[MemOpId]) {
    match e {
        Expr::Load { op, .. } if gone.contains(op) => *e = Expr::Opaque { args: Vec::new(), what: "member".into() },
        _ => e.for_each_operand_mut(&mut |x| drop_loads(x, gone)),
    }
}
