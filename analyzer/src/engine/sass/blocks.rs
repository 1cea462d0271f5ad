//! Block summaries: blocks of one row of the grid (consecutive blocks that differ in one
//! index only) whose warps run the same instructions with values that move by the same amount
//! from block to block are counted once and the rest of the row added, with every count
//! exactly what running them would give.
//!
//! Three consecutive blocks are recorded step by step (each warp's steps, and the loop
//! summaries taken in them). The jump over `K` further blocks is taken only when all of this
//! holds, which makes block `b + 2 + m` run what block `b + 2` ran, every value moved by `m`
//! times its step:
//!
//! - the three blocks ran the same instructions with the same lanes, took the same loop
//!   summaries (same loop, same number of iterations, same per-iteration deltas), and counted
//!   the same;
//! - a value that differs between the blocks comes from the block index (`S2R`), or from an
//!   instruction whose result is an affine function of the values it reads (the loop
//!   summaries' rule: moves, additions, multiplications by a value that does not move, `LEA`);
//!   every other instruction reads only values that do not move; each moving value moves by
//!   one step per block;
//! - over the `K` blocks (and, inside a summarised loop, over its iterations too: the values
//!   are affine in both, so the box's corners decide) no moving value crosses 0 or 2^31 and no
//!   comparison changes its outcome in any lane;
//! - every memory instruction's lanes move by one amount per block, a multiple of 32 bytes
//!   for global memory and of 4 for shared memory, without leaving their 4 GiB window.
//!
//! Memory contents never steer a block: loads are unknown to the engine (launches with filled
//! arrays are not summarised) and stores are not modelled.

use super::loops::{first_flip, reach, reg_moves, ring_op, roles, stats_add, stats_sub, Loc, Step};
use super::{alu, Machine};
use crate::engine::OpStats;
use crate::ir::sass::{Operand, RZ};
use crate::ir::Space;

/// Steps of one block recorded at most (a longer block is not summarised).
const MAX_STEPS: usize = 200_000;

/// A loop summary taken while a block was recorded.
#[derive(PartialEq)]
pub(super) struct Summary {
    /// Where in the block's steps it was taken, and the steps of the two iterations (or groups
    /// of iterations) it was planned from, which end there.
    pub at: usize,
    pub p0: usize,
    pub p1: usize,
    pub head: usize,
    /// Iterations (groups) jumped.
    pub k: u64,
    /// Per register (lane by lane, then uniform), the delta of one iteration.
    pub deltas: Vec<u32>,
}

/// One recorded block.
#[derive(Default)]
pub(super) struct Record {
    pub steps: Vec<Step>,
    /// Step index where each warp starts.
    pub warps: Vec<usize>,
    pub summaries: Vec<Summary>,
    /// Counts before the block, and the engine's tallies before it (steps run, steps as if
    /// run, external calls, summaries, iterations).
    ops: Vec<OpStats>,
    tallies: [u64; 5],
    /// Counts and tallies the block added.
    added: Vec<[u64; 11]>,
    added_tallies: [u64; 5],
    pub overflow: bool,
}

/// The block watching of a launch.
#[derive(Default)]
pub(super) struct Blocks {
    /// The block being recorded, and the ones before it in this attempt.
    pub cur: Option<Record>,
    done: Vec<Record>,
    /// Failed attempts, and blocks still to run before the next.
    failures: u32,
    wait: u64,
    /// Summaries taken and blocks they covered.
    pub summaries: u64,
    pub blocks: u64,
}

impl Blocks {
    pub(super) fn recording(&self) -> bool {
        self.cur.is_some()
    }
}

/// What a block summary does.
struct Jump {
    k: u64,
    /// By memory operation: the lowest and highest address of the last jumped block.
    ranges: Vec<(usize, i64, i64)>,
}

/// The corners of the box `j in [0, kj]`, `m in [0, km]` of `v + j·dj + m·dm`.
fn corners(v: i128, dj: i128, dm: i128, kj: u64, km: u64) -> [i128; 4] {
    let (kj, km) = (kj as i128, km as i128);
    [v, v + kj * dj, v + km * dm, v + kj * dj + km * dm]
}

/// Whether a 32-bit value stays in range read both unsigned and signed over the box.
fn stays(v: u32, dj: u32, dm: u32, kj: u64, km: u64) -> bool {
    let (dj, dm) = (dj as i32 as i128, dm as i32 as i128);
    let u = corners(v as i128, dj, dm, kj, km);
    let s = corners(v as i32 as i128, dj, dm, kj, km);
    u.iter().all(|&x| (0..1i128 << 32).contains(&x)) && s.iter().all(|&x| (-(1i128 << 31)..1i128 << 31).contains(&x))
}

/// The most blocks `m` for which `v + m·d` stays in range read both unsigned and signed.
fn block_reach(v: u32, d: u32) -> u64 {
    reach(v, d)
}

impl Machine<'_> {
    /// Whether the launch's blocks may be summarised: `run` (not the exact reference) and no
    /// filled arrays.
    pub(super) fn blocks_allowed(&self) -> bool {
        self.summarise
    }

    /// Decides before block `pos` of a row of `len` whether to record it.
    pub(super) fn block_begin(&mut self, pos: u64, len: u64) {
        let b = &mut self.blocks;
        if b.cur.is_none() && b.done.is_empty() {
            if b.wait > 0 {
                b.wait -= 1;
                return;
            }
            // Three to record and at least one to jump over.
            if len < 4 || pos + 4 > len {
                return;
            }
        } else if b.cur.is_none() && pos == 0 {
            // A new row: start again.
            b.done.clear();
            if len < 4 {
                return;
            }
        }
        let tallies = self.tallies();
        self.blocks.cur = Some(Record { ops: self.ops.clone(), tallies, ..Record::default() });
    }

    fn tallies(&self) -> [u64; 5] {
        [
            self.work,
            self.work.saturating_add(self.loops.steps),
            self.out.external_calls,
            self.loops.summaries,
            self.loops.iterations,
        ]
    }

    /// Notes the start of a warp of the block being recorded.
    pub(super) fn block_warp(&mut self) {
        if let Some(r) = &mut self.blocks.cur {
            r.warps.push(r.steps.len());
        }
    }

    /// After block `pos` of a row of `len` ran: the blocks to jump over (0: none).
    pub(super) fn block_end(&mut self, pos: u64, len: u64) -> u64 {
        let Some(mut r) = self.blocks.cur.take() else { return 0 };
        let after = self.tallies();
        r.added = self.ops.iter().zip(&r.ops).map(|(a, b)| stats_sub(a, b)).collect();
        r.added_tallies = std::array::from_fn(|i| after[i].wrapping_sub(r.tallies[i]));
        r.ops = Vec::new();
        if r.overflow {
            self.block_failed();
            return 0;
        }
        self.blocks.done.push(r);
        if self.blocks.done.len() < 3 {
            return 0;
        }
        let left = len - pos - 1;
        let done = std::mem::take(&mut self.blocks.done);
        match self.block_plan(&done, left) {
            Some(j) if j.k > 0 => {
                let t = &done[2];
                for (n, d) in t.added.iter().enumerate() {
                    stats_add(&mut self.ops[n], d, j.k);
                }
                for &(n, lo, hi) in &j.ranges {
                    self.note_range(n, lo, hi);
                }
                let [_, asif, calls, sums, iters] = t.added_tallies;
                let k = j.k;
                self.loops.steps = self.loops.steps.saturating_add(asif.saturating_mul(k));
                self.out.external_calls = self.out.external_calls.saturating_add(calls.saturating_mul(k));
                self.loops.summaries = self.loops.summaries.saturating_add(sums.saturating_mul(k));
                self.loops.iterations = self.loops.iterations.saturating_add(iters.saturating_mul(k));
                self.blocks.summaries += 1;
                self.blocks.blocks += k;
                self.blocks.failures = 0;
                k
            }
            _ => {
                self.block_failed();
                0
            }
        }
    }

    fn block_failed(&mut self) {
        let b = &mut self.blocks;
        b.done.clear();
        b.failures = (b.failures + 1).min(20);
        b.wait = 1u64 << b.failures;
    }

    /// Records a step of the block being recorded (before it runs).
    pub(super) fn block_before(&mut self, i: usize, at: u32) {
        let s = self.capture_before(i, at);
        if let Some(r) = &mut self.blocks.cur {
            if r.steps.len() >= MAX_STEPS {
                r.overflow = true;
            } else {
                r.steps.push(s);
            }
        }
    }

    /// Records what the step just run wrote.
    pub(super) fn block_after(&mut self, i: usize) {
        let words = self.capture_after(i);
        if let Some(r) = &mut self.blocks.cur {
            if !r.overflow {
                if let Some(s) = r.steps.last_mut() {
                    s.words = words;
                }
            }
        }
    }

    /// Notes a loop summary taken in the block being recorded: `k` iterations of `len1`
    /// steps planned from the two watched ones (`len0` and `len1` steps) that just ran.
    pub(super) fn block_summary(&mut self, head: usize, k: u64, len0: usize, len1: usize, deltas: Vec<u32>) {
        if let Some(r) = &mut self.blocks.cur {
            let at = r.steps.len();
            if at < len0 + len1 {
                r.overflow = true;
                return;
            }
            r.summaries.push(Summary { at, p0: at - len1 - len0, p1: at - len1, head, k, deltas });
        }
    }

    /// The number of blocks after the three recorded that run as the last one did, moved.
    #[allow(clippy::needless_range_loop)] // lanes are indexed in several arrays at once
    fn block_plan(&self, t: &[Record], left: u64) -> Option<Jump> {
        let (t0, t1, t2) = (&t[0], &t[1], &t[2]);
        if left == 0 || t0.steps.len() != t1.steps.len() || t1.steps.len() != t2.steps.len() {
            return None;
        }
        if t0.warps != t1.warps || t1.warps != t2.warps || t0.added != t1.added || t1.added != t2.added {
            return None;
        }
        if t0.added_tallies != t1.added_tallies || t1.added_tallies != t2.added_tallies {
            return None;
        }
        let same_summaries = |a: &[Summary], b: &[Summary]| a == b;
        if !same_summaries(&t0.summaries, &t1.summaries) || !same_summaries(&t1.summaries, &t2.summaries) {
            return None;
        }
        for ((a, b), c) in t0.steps.iter().zip(&t1.steps).zip(&t2.steps) {
            if (a.i, a.at, a.exec) != (b.i, b.at, b.exec) || (b.i, b.at, b.exec) != (c.i, c.at, c.exec) {
                return None;
            }
        }
        // For each step inside a summarised loop's last watched iteration: the iterations
        // jumped, and the same step one iteration earlier.
        let mut in_loop: Vec<Option<(u64, usize)>> = vec![None; t2.steps.len()];
        for s in &t2.summaries {
            for x in s.p1..s.at {
                in_loop[x] = Some((s.k, x - (s.p1 - s.p0)));
            }
        }
        let mut kmax = left;
        let mut moving = [[false; 256]; 2];
        let mut ranges: Vec<(usize, i64, i64, i64)> = Vec::new();
        let mut trans: Vec<Option<i64>> = vec![None; self.ops.len()];
        let mut warp_starts = t2.warps.iter().peekable();
        for (x, ((a, b), c)) in t0.steps.iter().zip(&t1.steps).zip(&t2.steps).enumerate() {
            while warp_starts.peek().is_some_and(|&&w| w <= x) {
                warp_starts.next();
                moving = [[false; 256]; 2];
            }
            let op = self.decoded[c.i];
            if alu::is_control(op) || c.exec == 0 {
                if matches!(op, alu::Op::Call | alu::Op::Ret) && c.exec != 0 {
                    // Return addresses are values too; calls inside the kernel are rare.
                    return None;
                }
                continue;
            }
            let (dests, srcs) = roles(self, c.i, op);
            let moves = srcs.iter().any(|&(u, r)| moving[u as usize][r as usize]);
            let ins = &self.k.instrs[c.i];
            let md = self.mods[c.i];
            let affine = ring_op(self, c.i, op, &moving);
            // The box this step's values span: iterations of a summarised loop, and blocks.
            let (kj, prev) = match in_loop[x] {
                Some((k, p)) => (k, Some(&t2.steps[p])),
                None => (0, None),
            };
            match op {
                alu::Op::Memory => {
                    let n = self.op_of[c.i];
                    let (Some(xa), Some(xb), Some(xc)) = (&a.addrs, &b.addrs, &c.addrs) else { return None };
                    let q = match self.out.spaces[n] {
                        Some(Space::Global) => 32,
                        Some(Space::Shared) => 4,
                        _ => return None,
                    };
                    let mut tr = None;
                    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
                    for l in alu::mask_lanes(c.exec) {
                        match (xa[l], xb[l], xc[l]) {
                            (Some(u), Some(v), Some(w)) => {
                                let d = w.wrapping_sub(v);
                                if v.wrapping_sub(u) != d || tr.is_some_and(|t| t != d) {
                                    return None;
                                }
                                tr = Some(d);
                                // Inside a summarised loop the iterations jumped move it too.
                                let dj = prev
                                    .and_then(|p| p.addrs.as_ref())
                                    .and_then(|p| p[l])
                                    .map_or(0, |p| w.wrapping_sub(p));
                                let c4 = corners(w as i128, dj as i128, d as i128, kj, left);
                                let win = (w as i128) >> 32;
                                if c4.iter().any(|&y| y >> 32 != win) {
                                    return None;
                                }
                                // The iterations jumped reach further in this block.
                                let far = (w as i128 + kj as i128 * dj as i128) as i64;
                                lo = lo.min(w).min(far);
                                hi = hi.max(w).max(far);
                            }
                            (None, None, None) => {}
                            _ => return None,
                        }
                    }
                    if let Some(tr) = tr {
                        if tr % q != 0 || trans[n].is_some_and(|t| t != tr) {
                            return None;
                        }
                        trans[n] = Some(tr);
                        ranges.push((n, lo, hi, tr));
                    }
                }
                alu::Op::Isetp if moves => {
                    if md.has(alu::modbit::EX) {
                        return None;
                    }
                    let (Some(ca), Some(cb), Some(cc)) = (&a.cmp, &b.cmp, &c.cmp) else { return None };
                    let ((a0, ak0), (b0, bk0)) = ca;
                    let ((a1, ak1), (b1, bk1)) = cb;
                    let ((a2, ak2), (b2, bk2)) = cc;
                    if ak0 != ak1 || ak1 != ak2 || bk0 != bk1 || bk1 != bk2 {
                        return None;
                    }
                    let unsigned = md.has(alu::modbit::U32);
                    let read = |x: u32| if unsigned { x as i128 } else { x as i32 as i128 };
                    for l in alu::mask_lanes(ak0 & bk0) {
                        let e0 = read(a0[l]) - read(b0[l]);
                        let e1 = read(a1[l]) - read(b1[l]);
                        let e2 = read(a2[l]) - read(b2[l]);
                        let de = e2 - e1;
                        if e1 - e0 != de {
                            return None;
                        }
                        match prev.and_then(|p| p.cmp.as_ref()) {
                            // In a summarised loop: one sign (or zero throughout) over the box.
                            Some(((pa, pak), (pb, pbk))) => {
                                if pak != ak2 || pbk != bk2 {
                                    return None;
                                }
                                let dj = e2 - (read(pa[l]) - read(pb[l]));
                                let c4 = corners(e2, dj, de, kj, left);
                                let constant =
                                    c4.iter().all(|&y| y > 0) || c4.iter().all(|&y| y < 0) || (dj == 0 && de == 0);
                                if !constant {
                                    return None;
                                }
                            }
                            None => {
                                if let Some(j) = first_flip(md.first, e2, de)? {
                                    kmax = kmax.min(j - 1);
                                }
                            }
                        }
                    }
                }
                // `LEA.HI d, a, b, c, s`: the top `s` bits of a moving low word `a`, which stay
                // put over the box when its corners agree on them (and on the sign, for `.SX32`).
                alu::Op::Lea if moves && md.has(alu::modbit::HI) => {
                    let ops = &ins.operands;
                    let first = 1 + alu::pred_outs(ops).count();
                    let sx = md.has(alu::modbit::SX32);
                    let others = ops.iter().skip(first + 1).any(|o| reg_moves(&moving, Some(o)));
                    let shift = match ops.get(first + if sx { 2 } else { 3 }) {
                        Some(Operand::Int(s @ 1..=31)) => *s as u32,
                        _ => return None,
                    };
                    let (Some(((a0, k0), _)), Some(((a1, k1), _)), Some(((a2, k2), _))) = (&a.cmp, &b.cmp, &c.cmp)
                    else {
                        return None;
                    };
                    if others || !reg_moves(&moving, ops.get(first)) || k0 != k1 || k1 != k2 {
                        return None;
                    }
                    let pv = prev.and_then(|p| p.cmp.as_ref()).map(|((v, _), _)| v);
                    for l in alu::mask_lanes(*k2) {
                        let d = a2[l].wrapping_sub(a1[l]);
                        if a1[l].wrapping_sub(a0[l]) != d {
                            return None;
                        }
                        let dj = pv.map_or(0, |p| a2[l].wrapping_sub(p[l]));
                        if !stays(a2[l], dj, d, kj, left) {
                            return None;
                        }
                        let (dj, dm) = (dj as i32 as i128, d as i32 as i128);
                        let top = corners(a2[l] as i128, dj, dm, kj, left).map(|x| x >> (32 - shift));
                        if top.iter().any(|&t| t != top[0]) {
                            return None;
                        }
                    }
                }
                // `SHF.R.HI d, RZ, 31, x`: the sign of a moving `x`, which its own check keeps.
                alu::Op::Shf
                    if moves
                        && !md.has(alu::modbit::L)
                        && md.has(alu::modbit::HI)
                        && matches!(ins.operands.get(1), Some(Operand::Reg(r)) if r.index == RZ)
                        && matches!(ins.operands.get(2), Some(Operand::Int(31))) => {}
                alu::Op::Nop | alu::Op::Opaque(_) | alu::Op::OpaquePred | alu::Op::Isetp => {}
                alu::Op::S2r => {}
                _ if moves && !affine => return None,
                _ => {}
            }
            // The written registers: moving where their values differ between the blocks,
            // which only the block index or an affine instruction reading a moving value
            // may cause.
            let source = op == alu::Op::S2r || (moves && affine);
            let pw = prev.map(|p| &p.words);
            for (w, ((la, va, ka), ((_, vb, kb), (_, vc, kc)))) in
                a.words.iter().zip(b.words.iter().zip(&c.words)).enumerate()
            {
                if ka != kb || kb != kc {
                    return None;
                }
                let lanes = if la.0 { 1 } else { *ka };
                let mut moved = false;
                for l in alu::mask_lanes(lanes) {
                    let d = vc[l].wrapping_sub(vb[l]);
                    if vb[l].wrapping_sub(va[l]) != d {
                        return None;
                    }
                    let dj = pw.and_then(|p| p.get(w)).map_or(0, |(_, pv, _)| vc[l].wrapping_sub(pv[l]));
                    if d != 0 {
                        moved = true;
                        if kj > 0 {
                            if !stays(vc[l], dj, d, kj, left) {
                                return None;
                            }
                        } else {
                            kmax = kmax.min(block_reach(vc[l], d));
                        }
                    }
                }
                if moved && !source {
                    return None;
                }
                let loc: Loc = *la;
                moving[loc.0 as usize][loc.1 as usize] = moved;
            }
            for &(u, r) in &dests {
                if !c.words.iter().any(|(l, _, _)| *l == (u, r)) {
                    moving[u as usize][r as usize] = false;
                }
            }
        }
        if kmax == 0 {
            return None;
        }
        // The addresses of the last block jumped over.
        let k = kmax;
        let mut last = Vec::new();
        for &(n, lo, hi, tr) in &ranges {
            let step = tr as i128 * k as i128;
            let (l2, h2) = (lo as i128 + step, hi as i128 + step);
            if l2 >> 32 != (lo as i128) >> 32 || h2 >> 32 != (hi as i128) >> 32 {
                return None;
            }
            last.push((n, l2 as i64, h2 as i64));
        }
        Some(Jump { k, ranges: last })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_box_of_positive_corners_is_positive_throughout() {
        // e = 10 - j - 2m over j <= 4, m <= 3: lowest corner 10 - 4 - 6 = 0: not strictly one sign.
        let c = corners(10, -1, -2, 4, 3);
        assert_eq!(c, [10, 6, 4, 0]);
        assert!(stays(100, 1, 4, 10, 10));
        // 2^31 - 1 + 1: the signed reading wraps.
        assert!(!stays(i32::MAX as u32 - 1, 1, 0, 2, 0));
        // 0 - 1: the unsigned reading wraps.
        assert!(!stays(0, 0, u32::MAX, 0, 1));
    }
}
