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
use std::collections::HashMap;

/// Merges the member loads described above in `k`; returns the operations left without
/// executions.
pub fn merge_vector_member_loads(k: &mut Kernel) -> Vec<MemOpId> {
    let owned: HashMap<LocalId, Expr> =
        super::unroll::definitions(k).into_iter().map(|(l, e)| (l, e.clone())).collect();
    let defs: HashMap<LocalId, &Expr> = owned.iter().map(|(l, e)| (*l, e)).collect();
    let layout = super::shared_layout::shared_layout(k);
    let mut body = std::mem::take(&mut k.body);
    let mut merged: Vec<Merge> = Vec::new();
    let mut uncertain = Vec::new();
    let cx = Cx { k, defs: &defs, layout: &layout };
    visit(&cx, &mut body, &mut merged, &mut uncertain);
    k.body = body;
    k.merge_uncertain.extend(uncertain);
    let mut gone = Vec::new();
    for Merge { kept, others, width, why } in merged {
        k.mem_ops[kept.0 as usize].width = width;
        let m = k.mem_op(kept).clone();
        for o in &others {
            let x = k.mem_op(*o);
            let (verb, what) = if m.kind == AccessKind::Store { ("stored", "store") } else { ("loaded", "load") };
            k.notes.push(format!(
                "`{}` at {}:{} is {verb} with `{}` at {}:{} as one {width}-byte vector {what} ({why})",
                x.text, x.span.line, x.span.column, m.text, m.span.line, m.span.column
            ));
        }
        gone.extend(others);
    }
    gone
}

type Defs<'d> = HashMap<LocalId, &'d Expr>;

/// What a merged-away store's value becomes: evaluated, its loads kept (the wider store writes it).
pub(super) const STORED_WITH: &str = "stored with a neighbouring store";

/// What the merges read: the kernel, its single-definition locals, its shared layout.
struct Cx<'a> {
    k: &'a Kernel,
    defs: &'a Defs<'a>,
    layout: &'a super::shared_layout::SharedLayout,
}

/// Loads merged into one: the kept load (its row gets the width), the others (no executions of
/// their own), the width, and what merged them, for the note.
struct Merge {
    kept: MemOpId,
    others: Vec<MemOpId>,
    width: u32,
    why: &'static str,
}

fn visit(cx: &Cx, stmts: &mut [Stmt], merged: &mut Vec<Merge>, uncertain: &mut Vec<MemOpId>) {
    let k = cx.k;
    merge_shared_stores(cx, stmts, merged, uncertain);
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
            merge_in(cx, &mut exprs, merged, uncertain);
            continue;
        }
        match &mut stmts[i] {
            Stmt::Store { value, .. } => merge_in(cx, &mut [value], merged, uncertain),
            Stmt::If { then, els, .. } => {
                visit(cx, then, merged, uncertain);
                visit(cx, els, merged, uncertain);
            }
            Stmt::Loop { body, step, .. } => {
                visit(cx, body, merged, uncertain);
                visit(cx, step, merged, uncertain);
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

fn merge_in(cx: &Cx, exprs: &mut [&mut Expr], merged: &mut Vec<Merge>, uncertain: &mut Vec<MemOpId>) {
    let first = merged.len();
    merge_members(cx.k, exprs, merged);
    merge_shared(cx, exprs, merged, uncertain);
    // The merged-away loads read nothing of their own: their values come with the kept load.
    let gone: Vec<MemOpId> = merged[first..].iter().flat_map(|m| m.others.iter().copied()).collect();
    if !gone.is_empty() {
        for e in exprs.iter_mut() {
            drop_loads(e, &gone);
        }
    }
}

/// Member loads of one vector element ([`merge_vector_member_loads`]).
fn merge_members(k: &Kernel, exprs: &mut [&mut Expr], merged: &mut Vec<Merge>) {
    let mut members = Vec::new();
    for e in exprs.iter() {
        collect(k, e, &mut members);
    }
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
        merged.push(Merge { kept, others, width: run as u32, why: "nvcc merges member loads of one element" });
    }
}

/// A shared-memory load `s[X + c]` of 4 or 8 bytes every lane evaluating the expression
/// reaches: its operation, array, the terms of `X` (bytes) and `c`.
struct SharedElem {
    op: MemOpId,
    array: SharedId,
    terms: Terms,
    offset: i128,
}

/// Loads of shared memory at constant distances, as ptxas merges them: with their common part
/// `X` a multiple of 16 bytes, loads of whole elements within one aligned 16-byte window are
/// one 16-byte load of the whole window when they read 12 bytes or more (`s[4 * t + 1]` to
/// `s[4 * t + 3]`, or `s[4 * t]`, `s[4 * t + 2]`, `s[4 * t + 3]`: one `LDS.128` from
/// `s[4 * t]`); two 4-byte loads of an aligned 8-byte pair (`X` a multiple of 8) are one 8-byte
/// load (`s[2 * t]`, `s[2 * t + 1]`: one `LDS.64`). Windows are of the shared window, where the
/// arrays lie as [`super::shared_layout`] places them: two `float` variables declared one after
/// the other (`s_mean`, `s_variance`) read together are one `LDS.64` when the first starts a
/// pair, and an array after a 4-byte variable starts off its windows. All from nvcc 13.0's SASS
/// (`validate/probes/unroll/chains.cu`). Where an array's place depends on an emission order
/// the model does not know, its loads that may merge are marked not exact.
fn merge_shared(cx: &Cx, exprs: &mut [&mut Expr], merged: &mut Vec<Merge>, uncertain: &mut Vec<MemOpId>) {
    let k = cx.k;
    let mut elems = Vec::new();
    for e in exprs.iter() {
        collect_shared(k, cx.defs, e, &mut elems);
    }
    let mut shifts = Vec::new();
    for group in groups(k, &elems) {
        let members: Vec<&SharedElem> = group.iter().map(|&j| &elems[j]).collect();
        for p in decide(cx, &members, false, uncertain) {
            let ops: Vec<MemOpId> = p.members.iter().map(|&m| members[m].op).collect();
            let why = match (p.width, p.back) {
                (16, 0) => "nvcc merges shared loads in one aligned 16-byte window",
                (16, _) => "nvcc merges shared loads in one aligned 16-byte window, read from its first byte",
                _ => "nvcc merges an aligned pair of 4-byte shared loads",
            };
            merged.push(Merge { kept: ops[0], others: ops[1..].to_vec(), width: p.width, why });
            if p.back != 0 {
                shifts.push((ops[0], p.back));
            }
        }
    }
    // A load of the whole window starts at its first byte, before the first element read.
    for (op, back) in shifts {
        for e in exprs.iter_mut() {
            start_earlier(e, op, back);
        }
    }
}

/// Shared accesses ptxas may merge: of one array with the same run-time part, or at constant
/// addresses of any arrays (`s_mean`, `s_variance`: ptxas places them), of one kind and width.
fn groups(k: &Kernel, elems: &[SharedElem]) -> Vec<Vec<usize>> {
    let mut used = vec![false; elems.len()];
    let mut out = Vec::new();
    for i in 0..elems.len() {
        if used[i] {
            continue;
        }
        let constant = elems[i].terms.is_empty();
        let (a, b) = (k.mem_op(elems[i].op), |j: usize| k.mem_op(elems[j].op));
        let group: Vec<usize> = (i..elems.len())
            .filter(|&j| {
                !used[j]
                    && (elems[j].array == elems[i].array || constant)
                    && b(j).kind == a.kind
                    && b(j).width == a.width
                    && b(j).cache == a.cache
                    && same_terms(&elems[i].terms, &elems[j].terms)
            })
            .collect();
        for &j in &group {
            used[j] = true;
        }
        if group.len() >= 2 {
            out.push(group);
        }
    }
    out
}

/// One merged access: its members (indices into the group, the first kept), its width, and how
/// many bytes before the first member's address it starts.
#[derive(PartialEq, Debug)]
struct Planned {
    members: Vec<usize>,
    width: u32,
    back: i128,
}

/// The merges of one group under the model's layout; where another emission order the model
/// admits gives other merges, the group's accesses are marked uncertain.
fn decide(cx: &Cx, members: &[&SharedElem], stores: bool, uncertain: &mut Vec<MemOpId>) -> Vec<Planned> {
    let primary = plan(cx, members, &cx.layout.base, stores);
    // The same accesses merged the same way, whichever of them comes first.
    let shape = |p: &[Planned]| {
        let mut v: Vec<(Vec<usize>, u32)> = p
            .iter()
            .map(|x| {
                let mut m = x.members.clone();
                m.sort();
                (m, x.width)
            })
            .collect();
        v.sort();
        v
    };
    let want = shape(&primary);
    if cx.layout.alternatives.iter().any(|alt| shape(&plan(cx, members, alt, stores)) != want) {
        uncertain.extend(members.iter().map(|m| m.op));
    }
    primary
}

/// The merges of one group with the arrays at `bases`: the window rule of [`merge_shared`] for
/// loads, whole windows and pairs for stores ([`merge_shared_stores`]).
fn plan(cx: &Cx, members: &[&SharedElem], bases: &[i64], stores: bool) -> Vec<Planned> {
    let first = members[0];
    let width = cx.k.mem_op(first.op).width as i128;
    let constant = first.terms.is_empty();
    // Where the common part `X` falls in its aligned window: a fixed remainder modulo a power of two.
    let (align, rem) = first.terms.iter().fold((i128::MAX, 0), |(a, r), (atom, c)| {
        let (b, q) = scale_residue(residue(atom, cx.defs, 0), *c);
        let m = a.min(b);
        (m, (r + q).rem_euclid(m))
    });
    // An address computed at run time is as aligned as its array's place allows: after a 4-byte
    // variable, ptxas merges none of an array's accesses; after 8 bytes, pairs.
    let align = if constant { align } else { align.min(super::shared_layout::alignment_in(bases, first.array)) };
    let window = if align >= 16 {
        16
    } else if align >= 8 {
        8
    } else {
        return Vec::new();
    };
    // By place, in program order within one place.
    let mut at: Vec<(i128, usize)> =
        members.iter().enumerate().map(|(j, m)| (i128::from(bases[m.array.0 as usize]) + m.offset + rem, j)).collect();
    at.sort();
    let mut offsets: Vec<i128> = at.iter().map(|a| a.0).collect();
    offsets.dedup();
    if stores && offsets.len() < at.len() {
        // A location written twice: left as written.
        return Vec::new();
    }
    let at_ref = &at;
    let ops_at = move |o: i128| at_ref.iter().filter(move |a| a.0 == o).map(|a| a.1);
    let run_of = |cells: &[i128], width: u32, back: i128| Planned {
        members: cells.iter().flat_map(|&o| ops_at(o)).collect(),
        width,
        back,
    };
    let mut out = Vec::new();
    if stores {
        let has = |o: i128| offsets.contains(&o);
        let mut o = 0;
        while o < offsets.len() {
            let x = offsets[o];
            let cells16: Vec<i128> = (0..16 / width).map(|c| x + c * width).collect();
            if window == 16 && x.rem_euclid(16) == 0 && cells16.iter().all(|&c| has(c)) {
                out.push(run_of(&cells16, 16, 0));
                o += cells16.len();
            } else if width == 4 && x.rem_euclid(8) == 0 && has(x + 4) {
                out.push(run_of(&[x, x + 4], 8, 0));
                o += 2;
            } else {
                o += 1;
            }
        }
        return out;
    }
    let mut w0 = 0;
    while w0 < offsets.len() {
        let win = offsets[w0].div_euclid(window);
        let w1 = offsets[w0..].iter().position(|o| o.div_euclid(window) != win).map_or(offsets.len(), |p| w0 + p);
        let run = &offsets[w0..w1];
        let whole = run.iter().all(|o| o % width == 0);
        if window == 16 && whole && run.len() as i128 * width >= 12 {
            out.push(run_of(run, 16, run[0].rem_euclid(16)));
        } else if width == 4 {
            // Aligned pairs of 4-byte loads.
            for pair in run.chunk_by(|a, b| b.div_euclid(8) == a.div_euclid(8)) {
                if pair.len() == 2 {
                    out.push(run_of(pair, 8, 0));
                }
            }
        }
        w0 = w1;
    }
    out
}

/// Stores to shared memory at constant distances in one run of statements (nothing between them
/// but assignments and evaluations that read no shared memory), as ptxas merges them: the four
/// 4-byte stores (or two 8-byte ones) of one aligned 16-byte window are one `STS.128`, two
/// 4-byte stores of an aligned 8-byte pair one `STS.64`; a window only partly written is never
/// written whole. The window is placed as for loads ([`merge_shared`]): `s[2 * t] = a;
/// s[2 * t + 1] = b;` is one `STS.64`, and `a = ..; b = ..;` of two `float` variables declared
/// together one `STS.64` when the first starts a pair (nvcc 13.0's SASS). The merged-away stores
/// keep their values' evaluation (their loads) and move nothing of their own.
fn merge_shared_stores(cx: &Cx, stmts: &mut [Stmt], merged: &mut Vec<Merge>, uncertain: &mut Vec<MemOpId>) {
    let k = cx.k;
    let reads_shared = |e: &Expr| {
        let mut found = false;
        super::licm::walk(e, &mut |x| {
            if let Expr::Load { op, .. } = x {
                found |= k.mem_op(*op).space == Space::Shared;
            }
        });
        found
    };
    let first = merged.len();
    let mut i = 0;
    while i < stmts.len() {
        // One run: its stores.
        let mut elems: Vec<SharedElem> = Vec::new();
        let mut j = i;
        while j < stmts.len() {
            match &stmts[j] {
                Stmt::Store { op, addr, value } => {
                    let m = k.mem_op(*op);
                    let plain = m.kind == AccessKind::Store
                        && m.space == Space::Shared
                        && !m.volatile
                        && m.matrix == 0
                        && matches!(m.width, 4 | 8)
                        && !reads_shared(addr)
                        && !reads_shared(value);
                    match shared_linear(addr, cx.defs, 0).filter(|_| plain) {
                        Some((array, terms, offset)) => elems.push(SharedElem { op: *op, array, terms, offset }),
                        None => break,
                    }
                }
                Stmt::Assign { value, .. } | Stmt::Eval(value) if !reads_shared(value) => {}
                _ => break,
            }
            j += 1;
        }
        for group in groups(k, &elems) {
            let members: Vec<&SharedElem> = group.iter().map(|&g| &elems[g]).collect();
            for p in decide(cx, &members, true, uncertain) {
                let ops: Vec<MemOpId> = p.members.iter().map(|&m| members[m].op).collect();
                let why = if p.width == 16 {
                    "nvcc merges stores filling one aligned 16-byte window of shared memory"
                } else {
                    "nvcc merges stores to an aligned pair of 4-byte shared locations"
                };
                merged.push(Merge { kept: ops[0], others: ops[1..].to_vec(), width: p.width, why });
            }
        }
        i = j.max(i + 1);
    }
    // This list's merged-away stores: their values are still evaluated.
    let gone: Vec<MemOpId> = merged[first..].iter().flat_map(|m| m.others.iter().copied()).collect();
    for st in stmts.iter_mut() {
        if let Stmt::Store { op, value, .. } = st {
            if gone.contains(op) {
                let v = std::mem::replace(value, Expr::Int(0, IntTy::I32));
                *st = Stmt::Eval(Expr::Opaque { args: vec![v], what: STORED_WITH.into() });
            }
        }
    }
}

fn start_earlier(e: &mut Expr, target: MemOpId, back: i128) {
    match e {
        Expr::Load { op, addr } if *op == target => {
            let ptr = std::mem::replace(addr.as_mut(), Expr::Int(0, IntTy::I64));
            **addr = Expr::PtrOffset { ptr: Box::new(ptr), bytes: Box::new(Expr::Int(-back, IntTy::I64)) };
        }
        _ => e.for_each_operand_mut(&mut |x| start_earlier(x, target, back)),
    }
}

/// Integer `e` as nvcc can prove it: a power of two (up to 2^20; `i128::MAX` for a constant) and
/// `e`'s fixed remainder modulo it, reading single-definition locals through their values
/// (`i = 4 * (t & 7) + 1`: remainder 1 modulo 4).
fn residue(e: &Expr, defs: &Defs, depth: u32) -> (i128, i128) {
    if depth > 16 {
        return (1, 0);
    }
    match e {
        Expr::Int(c, _) => (i128::MAX, *c),
        Expr::Local(l) => match defs.get(l) {
            Some(d) => residue(d, defs, depth + 1),
            None => (1, 0),
        },
        Expr::ToInt { arg, .. } => residue(arg, defs, depth + 1),
        Expr::Binary { op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs, .. } => {
            let (a, r) = residue(lhs, defs, depth + 1);
            let (b, q) = residue(rhs, defs, depth + 1);
            let m = a.min(b);
            if m == i128::MAX {
                return (m, if *op == BinOp::Sub { r - q } else { r + q });
            }
            (m, (if *op == BinOp::Sub { r - q } else { r + q }).rem_euclid(m))
        }
        Expr::Binary { op: BinOp::Mul, lhs, rhs, .. } => match (&**lhs, &**rhs) {
            (x, Expr::Int(m, _)) | (Expr::Int(m, _), x) => scale_residue(residue(x, defs, depth + 1), *m),
            _ => (super::unroll::alignment(e, defs), 0),
        },
        Expr::Binary { op: BinOp::Shl, lhs, rhs, .. } => match &**rhs {
            Expr::Int(s, _) if (0..20).contains(s) => scale_residue(residue(lhs, defs, depth + 1), 1 << s),
            _ => (super::unroll::alignment(e, defs), 0),
        },
        _ => (super::unroll::alignment(e, defs), 0),
    }
}

/// `(a, r)` times `m`: `(a * k + r) * m` is `r * m` modulo `a` times `m`'s power of two.
fn scale_residue((a, r): (i128, i128), m: i128) -> (i128, i128) {
    if a == i128::MAX {
        return (a, r * m);
    }
    let b = a.saturating_mul(pow2(m)).min(1 << 20);
    (b, (r * m).rem_euclid(b))
}

fn pow2(c: i128) -> i128 {
    if c == 0 {
        i128::MAX
    } else {
        1i128 << c.trailing_zeros().min(20)
    }
}

fn collect_shared(k: &Kernel, defs: &Defs, e: &Expr, out: &mut Vec<SharedElem>) {
    e.for_each_unconditional_operand(&mut |x| collect_shared(k, defs, x, out));
    let Expr::Load { op, addr } = e else { return };
    let m = k.mem_op(*op);
    if m.kind != AccessKind::Load || m.space != Space::Shared || m.volatile || m.matrix > 0 || !matches!(m.width, 4 | 8)
    {
        return;
    }
    if let Some((array, terms, offset)) = shared_linear(addr, defs, 0) {
        out.push(SharedElem { op: *op, array, terms, offset });
    }
}

/// Summands of an integer expression, each an expression with no constant part times a coefficient.
type Terms = Vec<(Expr, i128)>;

/// `SharedBase(s) + bytes` as the array and `bytes` as terms and a constant; a pointer local
/// assigned once is read through its value (an inlined helper's `float* s` parameter).
fn shared_linear(addr: &Expr, defs: &Defs, depth: u32) -> Option<(SharedId, Terms, i128)> {
    if depth > 16 {
        return None;
    }
    match addr {
        Expr::SharedBase(s) => Some((*s, Vec::new(), 0)),
        Expr::Local(l) => shared_linear(defs.get(l)?, defs, depth + 1),
        Expr::PtrOffset { ptr, bytes } => {
            let (s, mut terms, c) = shared_linear(ptr, defs, depth + 1)?;
            let (more, d) = linear(bytes, 0)?;
            for t in more {
                add_term(&mut terms, t);
            }
            Some((s, terms, c + d))
        }
        _ => None,
    }
}

/// An integer expression as a sum of terms (each an expression with no constant summand,
/// times a coefficient) and a constant; `None` for a load or one too deep.
fn linear(e: &Expr, depth: u32) -> Option<(Terms, i128)> {
    if depth > 32 {
        return None;
    }
    let scale =
        |(terms, c): (Terms, i128), m: i128| (terms.into_iter().map(|(t, x)| (t, x * m)).collect::<Vec<_>>(), c * m);
    match e {
        Expr::Int(c, _) => Some((Vec::new(), *c)),
        Expr::ToInt { arg, .. } => linear(arg, depth + 1),
        Expr::Binary { op: op @ (BinOp::Add | BinOp::Sub), lhs, rhs, .. } => {
            let (mut terms, a) = linear(lhs, depth + 1)?;
            let (more, b) = scale(linear(rhs, depth + 1)?, if *op == BinOp::Sub { -1 } else { 1 });
            for t in more {
                add_term(&mut terms, t);
            }
            Some((terms, a + b))
        }
        Expr::Binary { op: BinOp::Mul, lhs, rhs, .. } => match (&**lhs, &**rhs) {
            (x, Expr::Int(m, _)) | (Expr::Int(m, _), x) => Some(scale(linear(x, depth + 1)?, *m)),
            _ => atom(e),
        },
        Expr::Binary { op: BinOp::Shl, lhs, rhs, .. } => match &**rhs {
            Expr::Int(s, _) if (0..20).contains(s) => Some(scale(linear(lhs, depth + 1)?, 1 << s)),
            _ => atom(e),
        },
        _ => atom(e),
    }
}

fn atom(e: &Expr) -> Option<(Terms, i128)> {
    let mut load = false;
    super::licm::walk(e, &mut |x| load |= matches!(x, Expr::Load { .. } | Expr::Opaque { .. } | Expr::Warp { .. }));
    (!load).then(|| (vec![(e.clone(), 1)], 0))
}

fn add_term(terms: &mut Terms, (t, c): (Expr, i128)) {
    match terms.iter_mut().find(|(x, _)| same(x, &t)) {
        Some(x) => x.1 += c,
        None => terms.push((t, c)),
    }
    terms.retain(|x| x.1 != 0);
}

fn same_terms(a: &[(Expr, i128)], b: &[(Expr, i128)]) -> bool {
    a.len() == b.len() && a.iter().all(|(t, c)| b.iter().any(|(u, d)| c == d && same(t, u)))
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
