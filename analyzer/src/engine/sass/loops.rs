//! Loop summaries: a warp that runs the same loop iteration after iteration, its registers
//! moving by the same amounts each time, jumps over iterations in one step, with every count
//! exactly what running them would give.
//!
//! At each arrival at a loop head (a backward branch every live lane takes) the warp's state
//! is kept; two iterations are watched instruction by instruction. The jump is taken only when
//! all of this holds, which makes the state after `k` more iterations `S + k·D` and each
//! iteration's counts those of the last one:
//!
//! - both iterations ran the same instructions with the same lanes, and the three states at the
//!   head have the same lanes live, known and waiting, the same predicates, and registers moving
//!   by one delta `D` (lane by lane, 32-bit wrapping);
//! - every instruction that reads a moving register is one whose result is an affine function
//!   of it (moves, additions, multiplications by a value that does not move, `LEA` and left shifts by a constant ([`ring_op`]),
//!   selections by a predicate that does not change), a comparison, or a memory instruction;
//!   any other (floating point, shifts right, bitwise logic, `IMAD.HI`) refuses the summary;
//! - no moving value crosses 0 or 2^31 during the jump (so signed and unsigned readings, sign
//!   and zero extensions, 64-bit pairs and carries all stay affine), and no comparison changes
//!   its outcome in any lane (solved in closed form per lane): the path stays the same;
//! - every memory instruction's lanes move by one amount, a multiple of 32 bytes for global
//!   memory (its sectors translate) and of 4 for shared memory (every bank rotates alike, so
//!   each phase's most-loaded bank holds as many words),
//!   without leaving their 4 GiB window, and its counts were the same in both iterations.
//!
//! Where addresses move by less than that (a loop nvcc did not unroll, a float further each
//! time), the watch starts again with `32 / gcd(step, 32)` iterations taken as one.
//!
//! Values read from memory are unknown to the engine (launches with filled arrays are not
//! summarised) and stores are not modelled, so memory contents never steer the loop.

use super::{alu, Machine};
use crate::engine::{OpStats, WARP};
use crate::ir::sass::{Operand, RZ};
use crate::ir::Space;
use std::collections::HashMap;

/// Steps of one iteration watched at most (a longer body is not summarised).
const MAX_BODY: usize = 20_000;

/// Values by lane, and the lanes where they are known.
pub(super) type Lanes = ([u32; WARP], u32);

/// A register: uniform or not, and its index.
pub(super) type Loc = (bool, u8);

/// The warp's state at a loop head.
struct Snap {
    r: Vec<u32>,
    rk: Vec<u32>,
    ur: [u32; 256],
    urk: [bool; 256],
    preds: ([u32; 8], [u32; 8], [bool; 8], [bool; 8]),
    live: u32,
    barrier: [u32; 16],
    ops: Vec<OpStats>,
}

/// One step of a watched iteration (or block): the instruction, its lanes, and what it read
/// or wrote.
#[derive(Clone)]
pub(super) struct Step {
    pub i: usize,
    pub at: u32,
    pub exec: u32,
    /// Registers written (after the step): values and known lanes.
    pub words: Vec<(Loc, [u32; WARP], u32)>,
    /// A comparison's two integer operands (before the step).
    pub cmp: Option<(Lanes, Lanes)>,
    /// A memory instruction's lane addresses (before the step).
    pub addrs: Option<[Option<i64>; WARP]>,
}

struct Watch {
    head: usize,
    /// Arrivals that make one watched iteration (iterations that together move whole
    /// sectors), and those since the last kept state.
    period: u64,
    count: u64,
    /// The backward branch that closes the loop.
    tail: usize,
    snaps: Vec<Snap>,
    iters: Vec<Vec<Step>>,
    cur: Vec<Step>,
}

/// A warp's loop watching, and what the summaries covered.
#[derive(Default)]
pub(super) struct Loops {
    watch: Option<Watch>,
    /// By loop head: failed attempts, and arrivals still to let pass before the next.
    backoff: HashMap<usize, (u32, u64)>,
    pub summaries: u64,
    pub iterations: u64,
    /// Warp-level steps the summaries stood for.
    pub steps: u64,
    /// Registers `0 .. nregs` are all the kernel can write (a state kept at a loop head
    /// holds only those).
    pub nregs: usize,
}

impl Loops {
    pub(super) fn reset_warp(&mut self) {
        self.watch = None;
        self.backoff.clear();
    }

    pub(super) fn watching(&self) -> bool {
        self.watch.is_some()
    }
}

/// One past the highest register the kernel names, widened by the most registers one
/// instruction writes from its first.
pub(super) fn register_count(m: &Machine) -> usize {
    let mut top = 0usize;
    let mut span = 4usize;
    for (i, ins) in m.k.instrs.iter().enumerate() {
        if let alu::Op::Opaque(n) = m.decoded[i] {
            span = span.max(n as usize);
        }
        if let Some(c) = crate::ir::sass::classify(ins) {
            span = span.max(c.matrix.unwrap_or_else(|| c.width.div_ceil(4)) as usize);
        }
        for o in &ins.operands {
            let r = match o {
                Operand::Reg(r) => Some(r),
                Operand::Mem(a) => a.reg.as_ref(),
                Operand::Const(c) => c.reg.as_ref(),
                _ => None,
            };
            if let Some(r) = r.filter(|r| !r.uniform && r.index != RZ) {
                top = top.max(r.index as usize + 1);
            }
        }
    }
    (top + span).min(RZ as usize)
}

/// The registers an instruction writes and reads (predicates are not tracked: none may change
/// during a jump). Over-approximating the reads only refuses more.
pub(super) fn roles(m: &Machine, i: usize, op: alu::Op) -> (Vec<Loc>, Vec<Loc>) {
    let ins = &m.k.instrs[i];
    let ops = &ins.operands;
    let mut dests = Vec::new();
    let mut srcs = Vec::new();
    let wide_mods = ins.mods.iter().any(|x| matches!(x.as_str(), "64" | "U64" | "S64" | "B64" | "F64" | "WIDE" | "HI"));
    let mut src = |r: &crate::ir::sass::Reg, pair: bool| {
        if r.index != RZ {
            srcs.push((r.uniform, r.index));
            if (pair || r.wide) && r.index + 1 != RZ {
                srcs.push((r.uniform, r.index + 1));
            }
        }
    };
    // The position of the destination register, if the instruction writes one.
    let dest_at = match op {
        alu::Op::Memory => {
            let n = m.op_of[i];
            let c = m.class[n];
            if matches!(c.kind, crate::ir::AccessKind::Load | crate::ir::AccessKind::Atom) {
                ops.iter()
                    .position(|o| matches!(o, Operand::Reg(_)))
                    .map(|p| (p, c.matrix.unwrap_or_else(|| c.width.div_ceil(4))))
            } else {
                None
            }
        }
        alu::Op::Nop | alu::Op::Bulk | alu::Op::Isetp | alu::Op::Fsetp | alu::Op::Plop3 | alu::Op::R2p => None,
        _ if alu::is_control(op) => None,
        alu::Op::Shfl => ops.iter().position(|o| matches!(o, Operand::Reg(_))).map(|p| (p, 1)),
        alu::Op::Opaque(n) => matches!(ops.first(), Some(Operand::Reg(_))).then_some((0, n as u32)),
        alu::Op::Cs2r => Some((0, if ins.has("32") { 1 } else { 2 })),
        _ => {
            matches!(ops.first(), Some(Operand::Reg(_))).then_some((0, if wide_mods && !ins.has("HI") { 2 } else { 1 }))
        }
    };
    for (p, o) in ops.iter().enumerate() {
        match o {
            Operand::Reg(r) => {
                if let Some((at, n)) = dest_at {
                    if p == at {
                        for k in 0..n {
                            let idx = r.index as u32 + k;
                            if idx < RZ as u32 {
                                dests.push((r.uniform, idx as u8));
                            }
                        }
                        continue;
                    }
                }
                src(r, wide_mods);
            }
            Operand::Mem(a) => {
                for r in a.reg.iter().chain(a.ureg.iter()) {
                    src(r, false);
                }
            }
            Operand::Const(c) => {
                if let Some(r) = &c.reg {
                    src(r, false);
                }
            }
            _ => {}
        }
    }
    (dests, srcs)
}

/// Whether an operand is a register marked moving (index: uniform, register number).
pub(super) fn reg_moves(moving: &[[bool; 256]; 2], o: Option<&Operand>) -> bool {
    matches!(o, Some(Operand::Reg(r)) if r.index != RZ && moving[r.uniform as usize][r.index as usize])
}

/// Whether instruction `i`'s result is a ring operation mod 2^32 of the `moving` values it
/// reads, so that it moves affinely with them: moves, additions, a multiplication by a value
/// that does not move, `LEA` (a·2^s + b) and `SHF.L` by a constant. Carries out hold while the
/// result does not wrap, which the callers check on every result (`reach`); the high-half
/// forms (`.HI`) are not affine.
pub(super) fn ring_op(m: &Machine, i: usize, op: alu::Op, moving: &[[bool; 256]; 2]) -> bool {
    let ins = &m.k.instrs[i];
    let md = m.mods[i];
    match op {
        alu::Op::Mov | alu::Op::Iadd3 | alu::Op::Viadd | alu::Op::Sel => true,
        alu::Op::Imad => {
            let both = reg_moves(moving, ins.operands.get(1)) && reg_moves(moving, ins.operands.get(2));
            !md.has(alu::modbit::HI) && !both
        }
        // `LEA d, [Pc,] a, b, s [, Pin]`: the shift must not move.
        alu::Op::Lea => {
            let shift = 1 + alu::pred_outs(&ins.operands).count() + 2;
            !md.has(alu::modbit::HI) && !reg_moves(moving, ins.operands.get(shift))
        }
        alu::Op::Shf => {
            md.has(alu::modbit::L)
                && !md.has(alu::modbit::HI)
                && matches!(ins.operands.get(2), Some(Operand::Int(0..=31)))
        }
        _ => false,
    }
}

/// The largest `j` for which `v + j·d` (d the signed reading of the wrapping delta) stays in
/// range read both unsigned and signed: no wrap, no sign change.
pub(super) fn reach(v: u32, d: u32) -> u64 {
    let d = d as i32 as i64;
    if d == 0 {
        return u64::MAX;
    }
    let (x, y) = (v as i64, v as i32 as i64);
    let (u, s) = if d > 0 {
        ((u32::MAX as i64 - x) / d, (i32::MAX as i64 - y) / d)
    } else {
        (x / -d, (y - i32::MIN as i64) / -d)
    };
    u.min(s).max(0) as u64
}

/// The first `j > 0` at which the comparison `e0 + j·de <cmp> 0` differs from `j = 0`.
pub(super) fn first_flip(cmp: u64, e0: i128, de: i128) -> Option<Option<u64>> {
    use alu::modbit::*;
    let lt = |e0: i128, de: i128| -> Option<u64> {
        if e0 < 0 && de > 0 {
            Some(((-e0 + de - 1) / de) as u64)
        } else if e0 >= 0 && de < 0 {
            Some((e0 / -de + 1) as u64)
        } else {
            None
        }
    };
    if de == 0 {
        return Some(None);
    }
    Some(match cmp {
        LT => lt(e0, de),
        LE => lt(e0 - 1, de),
        GT => lt(-e0, -de),
        GE => lt(-e0 - 1, -de),
        EQ | NE => {
            if e0 == 0 {
                Some(1)
            } else if (-e0) % de == 0 && (-e0) / de > 0 {
                Some(((-e0) / de) as u64)
            } else {
                None
            }
        }
        _ => return None,
    })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub(super) fn stats_sub(a: &OpStats, b: &OpStats) -> [u64; 11] {
    let (x, y) = (a.counters(), b.counters());
    std::array::from_fn(|k| x[k].wrapping_sub(y[k]))
}

pub(super) fn stats_add(s: &mut OpStats, d: &[u64; 11], k: u64) {
    let fields = s.counters_mut();
    for (f, x) in fields.into_iter().zip(d) {
        *f = f.saturating_add(x.saturating_mul(k));
    }
}

/// What a summary does: `k` iterations, each moving the registers by their delta and adding
/// its counts, and each memory instruction's last addresses (lowest, highest, width).
struct Jump {
    k: u64,
    ranges: Vec<(usize, i64, i64)>,
    steps: u64,
}

impl Machine<'_> {
    fn snap(&self) -> Snap {
        let w = &self.w;
        // Registers past the highest the kernel can write never change.
        let n = self.loops.nregs;
        Snap {
            r: w.r[..n * WARP].to_vec(),
            rk: w.rk[..n].to_vec(),
            ur: w.ur,
            urk: w.urk,
            preds: (w.p, w.pk, w.up, w.upk),
            live: w.live,
            barrier: w.barrier,
            ops: self.ops.clone(),
        }
    }

    /// Before a watched step: what it reads.
    pub(super) fn observe_before(&mut self, i: usize, at: u32) {
        let s = self.capture_before(i, at);
        if let Some(w) = &mut self.loops.watch {
            w.cur.push(s);
        }
    }

    /// What a step is about to read: its lanes, a comparison's operands, a memory
    /// instruction's addresses.
    pub(super) fn capture_before(&self, i: usize, at: u32) -> Step {
        let (exec, _) = self.guard(i, at);
        let op = self.decoded[i];
        let mut s = Step { i, at, exec, words: Vec::new(), cmp: None, addrs: None };
        if op == alu::Op::Isetp {
            let ops = &self.k.instrs[i].operands;
            let uniform = matches!(ops.first(), Some(Operand::Pred(p)) if p.uniform);
            let run = if uniform { exec & exec.wrapping_neg() } else { exec };
            if let (Some(a), Some(b)) = (ops.get(2), ops.get(3)) {
                s.cmp = Some((alu::operand_values(self, a, run), alu::operand_values(self, b, run)));
            }
        }
        if op == alu::Op::Lea && self.mods[i].has(alu::modbit::HI) {
            // The low word whose top bits it reads (a block summary checks they stay put).
            let ops = &self.k.instrs[i].operands;
            let first = 1 + alu::pred_outs(ops).count();
            if let Some(a) = ops.get(first) {
                let v = alu::operand_values(self, a, exec);
                s.cmp = Some((v, v));
            }
        }
        if op == alu::Op::Memory {
            if let Some(a) = self.address_operand(i) {
                let mut v = [None; WARP];
                for l in alu::mask_lanes(exec) {
                    v[l] = self.lane_address(a, l);
                }
                s.addrs = Some(v);
            }
        }
        s
    }

    /// After a watched step: the registers it wrote.
    pub(super) fn observe_after(&mut self, i: usize) {
        let words = self.capture_after(i);
        let mut abandon = false;
        if let Some(w) = &mut self.loops.watch {
            if let Some(s) = w.cur.last_mut() {
                s.words = words;
            }
            abandon = w.cur.len() > MAX_BODY;
        }
        if abandon {
            let head = self.loops.watch.take().map(|w| w.head);
            if let Some(h) = head {
                self.failed(h);
            }
        }
    }

    /// The registers a step wrote, with their values and known lanes.
    pub(super) fn capture_after(&self, i: usize) -> Vec<(Loc, [u32; WARP], u32)> {
        let op = self.decoded[i];
        if alu::is_control(op) || op == alu::Op::Memory {
            return Vec::new();
        }
        let (dests, _) = roles(self, i, op);
        dests
            .iter()
            .map(|&(u, idx)| {
                if u {
                    let k = if self.w.urk[idx as usize] { u32::MAX } else { 0 };
                    ((u, idx), [self.w.ur[idx as usize]; WARP], k)
                } else {
                    let mut v = [0u32; WARP];
                    v.copy_from_slice(&self.w.r[idx as usize * WARP..(idx as usize + 1) * WARP]);
                    ((u, idx), v, self.w.rk[idx as usize])
                }
            })
            .collect()
    }

    fn failed(&mut self, head: usize) {
        let e = self.loops.backoff.entry(head).or_insert((0, 0));
        e.0 = (e.0 + 1).min(20);
        e.1 = 1u64 << e.0;
    }

    /// The warp, converged, arrived at loop head `head` by the backward branch at `tail`.
    pub(super) fn arrive(&mut self, head: usize, tail: usize) {
        if let Some(e) = self.loops.backoff.get_mut(&head) {
            if e.1 > 0 {
                e.1 -= 1;
                if self.loops.watch.as_ref().is_some_and(|w| w.head == head) {
                    self.loops.watch = None;
                }
                return;
            }
        }
        let same = self.loops.watch.as_ref().is_some_and(|w| w.head == head);
        if !same {
            // A loop inside the one watched runs on within its iterations (summarising the
            // outer loop covers more); any other loop is watched from here.
            if self.loops.watch.as_ref().is_some_and(|w| w.head < head && head <= w.tail) {
                return;
            }
            let snap = self.snap();
            self.loops.watch =
                Some(Watch { head, tail, period: 1, count: 0, snaps: vec![snap], iters: Vec::new(), cur: Vec::new() });
            return;
        }
        if let Some(w) = self.loops.watch.as_mut() {
            w.count += 1;
            if w.count < w.period {
                return;
            }
            w.count = 0;
        }
        let snap = self.snap();
        let Some(w) = self.loops.watch.as_mut() else { return };
        let it = std::mem::take(&mut w.cur);
        w.iters.push(it);
        w.snaps.push(snap);
        if w.snaps.len() < 3 {
            return;
        }
        let Some(w) = self.loops.watch.take() else { return };
        match self.plan(&w) {
            Ok(j) => {
                self.apply(&w, &j);
                self.loops.backoff.remove(&head);
            }
            // Watch again from here, that many iterations at a time.
            Err(p) if p > 1 && w.period == 1 && p <= 32 => {
                let snap = self.snap();
                self.loops.watch = Some(Watch {
                    head,
                    tail: w.tail,
                    period: p,
                    count: 0,
                    snaps: vec![snap],
                    iters: Vec::new(),
                    cur: Vec::new(),
                });
            }
            Err(_) => self.failed(head),
        }
    }

    /// The summary's size, or `None` where a condition above does not hold.
    #[allow(clippy::needless_range_loop)] // registers are indexed in several arrays at once
    fn plan(&self, w: &Watch) -> Result<Jump, u64> {
        let (s0, s1, s2) = (&w.snaps[0], &w.snaps[1], &w.snaps[2]);
        let (p0, p1) = (&w.iters[0], &w.iters[1]);
        if p0.len() != p1.len() || p0.iter().zip(p1).any(|(a, b)| (a.i, a.at, a.exec) != (b.i, b.at, b.exec)) {
            return Err(0);
        }
        for s in [s1, s2] {
            if s.live != s0.live || s.barrier != s0.barrier || s.preds != s0.preds || s.rk != s0.rk || s.urk != s0.urk {
                return Err(0);
            }
        }
        // Head registers: one delta, and how far it may go.
        let mut kmax = u64::MAX;
        let mut moving = [[false; 256]; 2];
        for r in 0..RZ as usize {
            if r >= self.loops.nregs {
                // Only uniform registers from here.
                if s0.urk[r] && (s1.ur[r] != s0.ur[r] || s2.ur[r] != s1.ur[r]) {
                    let (a, b, c) = (s0.ur[r], s1.ur[r], s2.ur[r]);
                    let d = b.wrapping_sub(a);
                    if c.wrapping_sub(b) != d {
                        return Err(0);
                    }
                    moving[1][r] = true;
                    kmax = kmax.min(reach(a, d).saturating_sub(2));
                }
                continue;
            }
            let known = s0.rk[r];
            for l in alu::mask_lanes(known) {
                let (a, b, c) = (s0.r[r * WARP + l], s1.r[r * WARP + l], s2.r[r * WARP + l]);
                let d = b.wrapping_sub(a);
                if c.wrapping_sub(b) != d {
                    return Err(0);
                }
                if d != 0 {
                    moving[0][r] = true;
                    kmax = kmax.min(reach(a, d).saturating_sub(2));
                }
            }
            if s0.urk[r] {
                let (a, b, c) = (s0.ur[r], s1.ur[r], s2.ur[r]);
                let d = b.wrapping_sub(a);
                if c.wrapping_sub(b) != d {
                    return Err(0);
                }
                if d != 0 {
                    moving[1][r] = true;
                    kmax = kmax.min(reach(a, d).saturating_sub(2));
                }
            }
        }
        // The body: which values move, and whether each instruction keeps them affine.
        let mut var = moving;
        let mut flips = false;
        let mut ranges = Vec::new();
        for (a, b) in p0.iter().zip(p1) {
            let op = self.decoded[a.i];
            if matches!(op, alu::Op::Call | alu::Op::Ret) {
                return Err(0);
            }
            if alu::is_control(op) || a.exec == 0 {
                continue;
            }
            let (dests, srcs) = roles(self, a.i, op);
            let moves = srcs.iter().any(|&(u, r)| var[u as usize][r as usize]);
            let md = self.mods[a.i];
            let affine = ring_op(self, a.i, op, &var);
            match op {
                alu::Op::Memory => {
                    let n = self.op_of[a.i];
                    let (Some(x), Some(y)) = (&a.addrs, &b.addrs) else { return Err(0) };
                    let q = match self.out.spaces[n] {
                        Some(Space::Global) => 32,
                        // Banks are words: a whole-word move rotates them all alike.
                        Some(Space::Shared) => 4,
                        _ => return Err(0),
                    };
                    let mut t = None;
                    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
                    for l in alu::mask_lanes(a.exec) {
                        match (x[l], y[l]) {
                            (Some(u), Some(v)) => {
                                let d = v.wrapping_sub(u);
                                if t.is_some_and(|t| t != d) {
                                    return Err(0);
                                }
                                t = Some(d);
                                lo = lo.min(v);
                                hi = hi.max(v);
                            }
                            (None, None) => {}
                            _ => return Err(0),
                        }
                    }
                    if let Some(t) = t {
                        if t % q != 0 {
                            // Iterations that together move by whole sectors may be one.
                            let g = gcd(t.unsigned_abs() % q as u64, q as u64);
                            return Err(q as u64 / g);
                        }
                        if t != 0 {
                            ranges.push((n, lo, hi, t));
                        }
                    }
                }
                alu::Op::Isetp if moves => {
                    if md.has(alu::modbit::EX) {
                        return Err(0);
                    }
                    let (Some(((a0, ak0), (b0, bk0))), Some(((a1, ak1), (b1, bk1)))) = (&a.cmp, &b.cmp) else {
                        return Err(0);
                    };
                    if ak0 != ak1 || bk0 != bk1 {
                        return Err(0);
                    }
                    let unsigned = md.has(alu::modbit::U32);
                    let read = |x: u32| if unsigned { x as i128 } else { x as i32 as i128 };
                    for l in alu::mask_lanes(ak0 & bk0) {
                        let e0 = read(a0[l]) - read(b0[l]);
                        let de = read(a1[l]) - read(b1[l]) - e0;
                        if let Some(j) = first_flip(md.first, e0, de).ok_or(0u64)? {
                            flips = true;
                            kmax = kmax.min(j.saturating_sub(2));
                        }
                    }
                }
                alu::Op::Nop | alu::Op::Opaque(_) | alu::Op::OpaquePred | alu::Op::Isetp => {}
                _ if moves && !affine => return Err(0),
                _ => {}
            }
            // The written registers: moving where an affine instruction read a moving value
            // (or lanes that did not run keep a moving one), else fixed.
            let all = a.exec == s0.live;
            let now = moves && affine;
            for &(u, r) in &dests {
                let v = &mut var[u as usize][r as usize];
                *v = now || (*v && !all && !u);
            }
            if now {
                for ((loc, x, kx), (_, y, ky)) in a.words.iter().zip(&b.words) {
                    if kx != ky {
                        return Err(0);
                    }
                    let lanes = if loc.0 { 1 } else { *kx };
                    for l in alu::mask_lanes(lanes) {
                        let d = y[l].wrapping_sub(x[l]);
                        if d != 0 {
                            kmax = kmax.min(reach(x[l], d).saturating_sub(1));
                        }
                    }
                }
            }
        }
        // A register that moved at the head must be one the body moves.
        for u in 0..2 {
            for r in 0..RZ as usize {
                if moving[u][r] && !var[u][r] {
                    return Err(0);
                }
            }
        }
        // Each iteration's counts were the same.
        for (x, (y, z)) in s0.ops.iter().zip(s1.ops.iter().zip(&s2.ops)) {
            if stats_sub(y, x) != stats_sub(z, y) {
                return Err(0);
            }
        }
        // A loop no comparison ends runs until a value would wrap; one that never changes
        // anything is left to the work budget.
        if !flips && kmax == u64::MAX || kmax == 0 {
            return Err(0);
        }
        let k = kmax;
        // The addresses of the last jumped iteration stay in their 4 GiB window (and buffer).
        let mut last = Vec::new();
        for &(n, lo, hi, t) in &ranges {
            let step = (t as i128) * k as i128;
            let (l2, h2) = (lo as i128 + step, hi as i128 + step);
            if l2 >> 32 != (lo as i128) >> 32 || h2 >> 32 != (hi as i128) >> 32 {
                return Err(0);
            }
            last.push((n, l2 as i64, h2 as i64));
        }
        Ok(Jump { k, ranges: last, steps: p1.len() as u64 })
    }

    fn apply(&mut self, w: &Watch, j: &Jump) {
        let (s1, s2) = (&w.snaps[1], &w.snaps[2]);
        let k = j.k as u32;
        let kk = j.k;
        for r in 0..RZ as usize {
            for l in alu::mask_lanes(s2.rk.get(r).copied().unwrap_or(0)) {
                let d = s2.r[r * WARP + l].wrapping_sub(s1.r[r * WARP + l]);
                let x = &mut self.w.r[r * WARP + l];
                *x = x.wrapping_add(d.wrapping_mul(k));
            }
            if s2.urk[r] {
                let d = s2.ur[r].wrapping_sub(s1.ur[r]);
                self.w.ur[r] = self.w.ur[r].wrapping_add(d.wrapping_mul(k));
            }
        }
        for (n, (y, z)) in s1.ops.iter().zip(&s2.ops).enumerate() {
            let d = stats_sub(z, y);
            stats_add(&mut self.ops[n], &d, kk);
        }
        for &(n, lo, hi) in &j.ranges {
            self.note_range(n, lo, hi);
        }
        if self.blocks.recording() {
            let n = self.loops.nregs;
            let mut deltas = Vec::with_capacity(n * WARP + 256);
            for r in 0..n {
                let known = s2.rk.get(r).copied().unwrap_or(0);
                for l in 0..WARP {
                    let d = s2.r[r * WARP + l].wrapping_sub(s1.r[r * WARP + l]);
                    deltas.push(if known >> l & 1 == 1 { d } else { 0 });
                }
            }
            for r in 0..256 {
                deltas.push(if s2.urk[r] { s2.ur[r].wrapping_sub(s1.ur[r]) } else { 0 });
            }
            self.block_summary(w.head, kk, w.iters[0].len(), w.iters[1].len(), deltas);
        }
        self.loops.summaries += 1;
        self.loops.iterations += kk * w.period;
        self.loops.steps = self.loops.steps.saturating_add(kk.saturating_mul(j.steps));
    }
}
