//! The SASS engine: every warp of every block runs the instructions the GPU executes, lanes in
//! lockstep under an active mask, and every memory instruction's warp-level executions go to
//! [`super::count::record`], the same rule the source engines use.
//!
//! Values are 32-bit registers per lane with a known-lane mask (a value read from memory is
//! unknown unless the launch gives the array's fill), uniform registers per warp, predicates per
//! lane. Divergence: the lanes at the lowest instruction index run first (structured code, as
//! nvcc lays it out, reconverges there), and a lane at `BSYNC Bn` waits for the others of its
//! `BSSY Bn` group; `BREAK` leaves a group. A guard or branch condition that depends on unknown
//! data runs the guarded instruction and does not take the branch (the source path's "assumed
//! taken" for an `if` around an access), and says so.
//!
//! `alu.rs` holds the instructions' semantics; this file the warp scheduler, the launch and
//! memory.

mod alu;
mod blocks;
mod loops;

use super::count::{record, Execution, SectorSink};
use super::{OpStats, Trace, WARP};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::sass::{classify, unsupported_memory, Instr, MemClass, Operand, SassKernel};
use crate::ir::{Base, Kernel, ParamId, Space, Ty};
use crate::launch::{ParamValue, Setup};
use std::collections::BTreeSet;

/// The high word of generic addresses in the shared window (`SR_SWINHI`): far from the
/// parameters' buffers ([`super::param_base`]).
pub const SHARED_WINDOW_HI: u32 = 0x00ff_0000;

/// Where file-scope `__device__` variables live (constant bank 4 holds their addresses).
const DEVICE_WINDOW: u64 = 0x00f0_0000_0000_0000;

/// The memory instructions of a kernel in order, with their class: the `i`-th is memory
/// operation `i` of the kernel the front end lifts.
pub fn memory_instructions(k: &SassKernel) -> Vec<(usize, MemClass)> {
    k.instrs.iter().enumerate().filter_map(|(i, ins)| classify(ins).map(|c| (i, c))).collect()
}

/// What the SASS engine observed beside the counts.
#[derive(Default)]
pub struct SassTrace {
    pub trace: Trace,
    /// Instruction indices whose guard or branch condition depended on unknown data.
    pub data_branches: BTreeSet<usize>,
    /// Opcodes whose results the engine does not compute (their registers are unknown after).
    pub opaque: BTreeSet<String>,
    /// Bulk and tensor copies executed (no L1 request; their L2 traffic is not modelled).
    pub bulk: BTreeSet<String>,
    /// By memory operation: the space its addresses fell in (generic ones resolved).
    pub spaces: Vec<Option<Space>>,
    /// Warp-level steps the engine ran (`trace.work` also counts the iterations summaries
    /// covered, as if run): what the work budget is charged.
    pub effort: u64,
    /// Warp executions of calls to functions outside the kernel (`vprintf`, `__assertfail`).
    pub external_calls: u64,
    /// Loop summaries taken, and the iterations they covered.
    pub summaries: u64,
    pub summarised_iterations: u64,
    /// Block summaries taken, and the blocks they covered.
    pub block_summaries: u64,
    pub summarised_blocks: u64,
}

/// Runs the whole launch for its counts: steady loops are summarised (`loops.rs`), so the
/// sink does not see the sectors of the iterations jumped over.
pub fn run(k: &SassKernel, ir: &Kernel, setup: &Setup, sink: &mut dyn SectorSink) -> Result<SassTrace> {
    run_inner(k, ir, setup, &mut (0..setup.blocks()), sink, true)
}

/// Runs the whole launch instruction by instruction, every iteration of every loop: the
/// reference the summaries are held to.
pub fn run_exact(k: &SassKernel, ir: &Kernel, setup: &Setup, sink: &mut dyn SectorSink) -> Result<SassTrace> {
    run_inner(k, ir, setup, &mut (0..setup.blocks()), sink, false)
}

/// Runs the blocks `order` names (linear, x fastest), every iteration, feeding every global
/// sector to `sink` in execution order.
pub fn run_blocks(
    k: &SassKernel,
    ir: &Kernel,
    setup: &Setup,
    order: &mut dyn Iterator<Item = u64>,
    sink: &mut dyn SectorSink,
) -> Result<SassTrace> {
    run_inner(k, ir, setup, order, sink, false)
}

fn run_inner(
    k: &SassKernel,
    ir: &Kernel,
    setup: &Setup,
    order: &mut dyn Iterator<Item = u64>,
    sink: &mut dyn SectorSink,
    summarise: bool,
) -> Result<SassTrace> {
    for ins in &k.instrs {
        if unsupported_memory(ins) {
            // Surface atomics, texture queries, multicast and matrix stores.
            return Err(stop(
                ins,
                if crate::ir::sass::is_texture(ins) {
                    "is a surface atomic or a texture query: only texture fetches and surface reads and writes are counted"
                } else {
                    "moves memory in a way this model does not count yet"
                },
            ));
        }
    }
    // An integer parameter the code reads must be given (it may size an address or a loop; a
    // floating-point one is data, unknown where not given).
    let names: Vec<&str> = k.params.iter().zip(&ir.params).enumerate().filter_map(|(i, (slot, p))| {
        let scalar = matches!(p.ty, Ty::Int(_));
        let missing = setup.values.get(i).is_none_or(|v| v.is_none());
        let read = k.instrs.iter().any(|ins| ins.operands.iter().any(|o| matches!(o,
            Operand::Const(c) if c.bank == 0 && c.reg.is_none() && c.offset >= slot.offset as i64 && c.offset < (slot.offset + slot.size) as i64)));
        (scalar && missing && read).then_some(p.name.as_str())
    }).collect();
    if let Some(first) = names.first() {
        return Err(Diagnostic::new(
            ErrorKind::MissingArgument,
            format!("kernel `{}` reads parameter `{first}`, which the launch does not give", ir.name),
        )
        .note(format!(
            "pass --arg {first}=VALUE{}",
            if names.len() > 1 { format!(" (and {})", names[1..].join(", ")) } else { String::new() }
        )));
    }
    let mem = memory_instructions(k);
    let mut op_of = vec![usize::MAX; k.instrs.len()];
    for (n, (i, _)) in mem.iter().enumerate() {
        op_of[*i] = n;
    }
    let mut m = Machine {
        k,
        ir,
        s: setup,
        decoded: k.instrs.iter().map(alu::decode).collect::<Result<Vec<_>>>()?,
        mods: k.instrs.iter().map(alu::Mods::of).collect(),
        class: mem.iter().map(|(_, c)| *c).collect(),
        op_of,
        bsync: k
            .instrs
            .iter()
            .map(|i| match (i.opcode.as_str(), i.operands.first()) {
                ("BSYNC", Some(Operand::Barrier(b))) => Some(*b),
                _ => None,
            })
            .collect(),
        bank0: bank0(k, ir, setup)?,
        ops: vec![OpStats::default(); mem.len()],
        out: SassTrace { spaces: vec![None; mem.len()], ..SassTrace::default() },
        work: 0,
        block: [0; 3],
        w: Warp::new(),
        scratch: Vec::new(),
        addrs: Vec::with_capacity(WARP),
        used_fills: vec![false; ir.params.len()],
        // Values loaded from a filled array are known and need not move affinely.
        summarise: summarise && setup.fills.iter().all(Option::is_none),
        loops: loops::Loops::default(),
        blocks: blocks::Blocks::default(),
        arrival: None,
    };
    m.loops.nregs = loops::register_count(&m);
    if m.blocks_allowed() {
        // Rows of blocks that differ in one index (the grid's longest dimension), each
        // summarised where its blocks run alike (`blocks.rs`). Counts do not depend on the
        // order blocks run in, and this sink sees none of the blocks jumped over.
        let g = setup.grid.map(u64::from);
        let axis = (0..3).max_by_key(|&d| (g[d], std::cmp::Reverse(d))).unwrap_or(0);
        let len = g[axis];
        let stride = [1, g[0], g[0] * g[1]];
        for row in 0..setup.blocks() / len.max(1) {
            // The row's first block: the other two indices from `row`, in x-fastest order.
            let mut rest = row;
            let mut start = 0;
            for d in (0..3).filter(|&d| d != axis) {
                start += rest % g[d] * stride[d];
                rest /= g[d];
            }
            let mut pos = 0;
            while pos < len {
                m.block_begin(pos, len);
                m.run_block(start + pos * stride[axis], sink)?;
                pos += 1 + m.block_end(pos, len);
            }
        }
    } else {
        for linear in order {
            m.run_block(linear, sink)?;
        }
    }
    m.out.trace.ops = m.ops;
    m.out.trace.work = m.work.saturating_add(m.loops.steps);
    m.out.effort = m.work;
    m.out.summaries = m.loops.summaries;
    m.out.block_summaries = m.blocks.summaries;
    m.out.summarised_blocks = m.blocks.blocks;
    m.out.summarised_iterations = m.loops.iterations;
    m.out.trace.used_fills =
        m.used_fills.iter().enumerate().filter(|(_, &u)| u).map(|(i, _)| ParamId(i as u32)).collect();
    Ok(m.out)
}

fn stop(ins: &Instr, why: &str) -> Diagnostic {
    Diagnostic::new(
        ErrorKind::Unsupported,
        format!("SASS instruction `{}` at 0x{:04x} {why}", ins.mnemonic(), ins.offset),
    )
    .note(format!("the instruction: {}", ins.text))
    .note("`--via source` counts from the source instead")
}

/// Constant bank 0 as the launch fills it: block and grid sizes, then the parameters where
/// their values are given (`None` bytes are unknown).
fn bank0(k: &SassKernel, ir: &Kernel, s: &Setup) -> Result<Vec<Option<u8>>> {
    let end = k.params.iter().map(|p| p.offset + p.size).max().unwrap_or(0x210).max(0x210) as usize;
    let mut b: Vec<Option<u8>> = vec![None; end];
    let put = |b: &mut Vec<Option<u8>>, at: usize, bytes: &[u8]| {
        for (i, x) in bytes.iter().enumerate() {
            if let Some(slot) = b.get_mut(at + i) {
                *slot = Some(*x);
            }
        }
    };
    for d in 0..3 {
        put(&mut b, 4 * d, &s.block[d].to_le_bytes());
        put(&mut b, 0xc + 4 * d, &s.grid[d].to_le_bytes());
    }
    for (i, (slot, p)) in k.params.iter().zip(&ir.params).enumerate() {
        let at = slot.offset as usize;
        let size = slot.size as usize;
        let bytes: Option<Vec<u8>> = match (&p.ty, s.values.get(i).cloned().flatten()) {
            (Ty::Ptr(_), _) => {
                Some((super::absolute(s, Base::Param(ParamId(i as u32)), 0) as u64).to_le_bytes().to_vec())
            }
            (Ty::Float(4), Some(ParamValue::Float(f))) => Some((f as f32).to_le_bytes().to_vec()),
            (Ty::Float(8), Some(ParamValue::Float(f))) => Some(f.to_le_bytes().to_vec()),
            (Ty::Float(2), Some(ParamValue::Float(f))) => Some(half_bits(f as f32).to_le_bytes().to_vec()),
            (_, Some(ParamValue::Int(v))) => Some((v as u128).to_le_bytes().to_vec()),
            (_, Some(ParamValue::Float(f))) => Some((f as f32).to_le_bytes().to_vec()),
            _ => None,
        };
        if let Some(bytes) = bytes {
            put(&mut b, at, &bytes[..size.min(bytes.len())]);
        }
    }
    Ok(b)
}

fn half_bits(f: f32) -> u16 {
    // Round to nearest even. Subnormal halves matter: nvdisasm prints the integer constant 4 that
    // `HFMA2.MMA R0, -RZ, RZ, 0, 2.384185791015625e-07` makes as the half whose bits are 4.
    let x = f.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32 - 127 + 15;
    if exp <= 0 {
        // m * 2^-24: the significand with its leading one, shifted right by 14 - exp.
        let shift = (14 - exp) as u32;
        if shift > 24 || (x & 0x7fff_ffff) == 0 {
            return sign;
        }
        let full = (x & 0x7f_ffff) | 0x80_0000;
        let (m, rest, half) = (full >> shift, full & ((1 << shift) - 1), 1u32 << (shift - 1));
        let m = if rest > half || (rest == half && m & 1 == 1) { m + 1 } else { m };
        return sign | m as u16;
    }
    if exp >= 31 {
        return sign | 0x7c00;
    }
    let mant = x & 0x7f_ffff;
    let mut h = (exp as u32) << 10 | mant >> 13;
    let rest = mant & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 == 1) {
        h += 1;
    }
    sign | h as u16
}

/// One warp's state.
pub(crate) struct Warp {
    /// Register `r` of lane `l` at `r * 32 + l`.
    pub r: Vec<u32>,
    /// Per register, the lanes whose value is known.
    pub rk: Vec<u32>,
    pub ur: [u32; 256],
    pub urk: [bool; 256],
    /// Per predicate, the lanes where it is true, and where it is known.
    pub p: [u32; 8],
    pub pk: [u32; 8],
    pub up: [bool; 8],
    pub upk: [bool; 8],
    pub pc: [usize; WARP],
    /// Lanes that are threads of the block and have not exited.
    pub live: u32,
    /// `BSSY` groups: the lanes that must meet at the matching `BSYNC`.
    pub barrier: [u32; 16],
    /// The warp's first linear thread id.
    pub first_thread: u64,
    /// Whether every live lane is at one instruction (kept up to date by every step, so that
    /// the usual case needs no scan).
    pub converged: bool,
    /// A branch or guard on unknown data was decided by assumption: what the warp executes
    /// from here on rests on it.
    pub assumed: bool,
}

impl Warp {
    fn new() -> Warp {
        Warp {
            r: vec![0; 256 * WARP],
            rk: vec![0; 256],
            ur: [0; 256],
            urk: [false; 256],
            p: [0; 8],
            pk: [0; 8],
            up: [false; 8],
            upk: [false; 8],
            pc: [0; WARP],
            live: 0,
            barrier: [0; 16],
            first_thread: 0,
            converged: true,
            assumed: false,
        }
    }

    fn reset(&mut self, first: u64, mask: u32) {
        self.assumed = false;
        self.rk.iter_mut().for_each(|k| *k = 0);
        self.rk[crate::ir::sass::RZ as usize] = u32::MAX;
        self.urk = [false; 256];
        self.urk[crate::ir::sass::RZ as usize] = true;
        self.ur[crate::ir::sass::RZ as usize] = 0;
        self.p = [0; 8];
        self.pk = [0; 8];
        self.p[7] = u32::MAX;
        self.pk[7] = u32::MAX;
        self.up = [false; 8];
        self.upk = [false; 8];
        self.up[7] = true;
        self.upk[7] = true;
        self.pc = [0; WARP];
        self.live = mask;
        self.barrier = [0; 16];
        self.first_thread = first;
        self.converged = true;
    }

    /// Recomputes [`Warp::converged`] after lanes moved apart or together.
    fn reconverge(&mut self) {
        let live = self.live;
        let first = if live == 0 { 0 } else { self.pc[live.trailing_zeros() as usize] };
        self.converged = alu::mask_lanes(live).all(|l| self.pc[l] == first);
    }
}

pub(crate) struct Machine<'a> {
    pub k: &'a SassKernel,
    pub ir: &'a Kernel,
    pub s: &'a Setup,
    pub decoded: Vec<alu::Op>,
    /// By instruction: its modifiers.
    pub mods: Vec<alu::Mods>,
    /// By memory operation: its class.
    class: Vec<MemClass>,
    /// Whether steady loops are summarised, the warp's loop watching, and a loop head the
    /// last step arrived at.
    summarise: bool,
    loops: loops::Loops,
    blocks: blocks::Blocks,
    arrival: Option<(usize, usize)>,
    /// By instruction: its memory operation, or `usize::MAX`.
    op_of: Vec<usize>,
    /// By instruction: the barrier a `BSYNC` waits on.
    bsync: Vec<Option<u8>>,
    pub bank0: Vec<Option<u8>>,
    ops: Vec<OpStats>,
    pub out: SassTrace,
    work: u64,
    pub block: [u32; 3],
    pub w: Warp,
    scratch: Vec<i64>,
    addrs: Vec<i64>,
    used_fills: Vec<bool>,
}

impl<'a> Machine<'a> {
    fn tick(&mut self, i: usize) -> Result<()> {
        self.work += 1;
        let effort = self.work.saturating_add(self.s.budget.spent());
        if self.work.is_multiple_of(crate::launch::CHECK_EVERY) {
            self.s.budget.check(effort, self.s.max_work, None)?;
        }
        if effort > self.s.max_work {
            let ins = &self.k.instrs[i];
            return Err(Diagnostic::new(
                ErrorKind::Limit,
                format!(
                    "the launch needs more than {} warp-level steps of the SASS engine (at 0x{:04x} `{}`)",
                    self.s.max_work,
                    ins.offset,
                    ins.mnemonic()
                ),
            )
            .note("analyse a smaller launch (fewer blocks or a smaller problem size), or raise the budget with --max-work N"));
        }
        Ok(())
    }

    /// One step of the warp, watched when a loop is, and a loop head it arrives at noted.
    #[inline]
    fn run_step(&mut self, i: usize, at: u32, sink: &mut dyn SectorSink) -> Result<()> {
        self.tick(i)?;
        if !self.summarise {
            return self.step(i, at, sink);
        }
        let watching = self.loops.watching();
        let recording = self.blocks.recording();
        if watching {
            self.observe_before(i, at);
        }
        if recording {
            self.block_before(i, at);
        }
        self.step(i, at, sink)?;
        if watching {
            self.observe_after(i);
        }
        if recording {
            self.block_after(i);
        }
        if let Some((head, tail)) = self.arrival.take() {
            self.arrive(head, tail);
        }
        Ok(())
    }

    /// Runs every warp of block `linear` (x fastest).
    fn run_block(&mut self, linear: u64, sink: &mut dyn SectorSink) -> Result<()> {
        let [gx, gy, _] = self.s.grid.map(u64::from);
        self.block = [(linear % gx) as u32, (linear / gx % gy) as u32, (linear / (gx * gy)) as u32];
        sink.begin_block(linear);
        let threads = self.s.threads_per_block();
        let warps = threads.div_ceil(WARP as u64);
        for w in 0..warps {
            sink.begin_warp();
            let first = w * WARP as u64;
            let n = (threads - first).min(WARP as u64) as u32;
            let mask = if n == 32 { u32::MAX } else { (1u32 << n) - 1 };
            self.block_warp();
            self.run_warp(first, mask, sink)?;
        }
        Ok(())
    }

    fn run_warp(&mut self, first: u64, mask: u32, sink: &mut dyn SectorSink) -> Result<()> {
        self.w.reset(first, mask);
        self.loops.reset_warp();
        self.arrival = None;
        let n = self.k.instrs.len();
        loop {
            let live = self.w.live;
            if live == 0 {
                return Ok(());
            }
            // Converged (the usual case): every live lane at one instruction.
            let first = self.w.pc[live.trailing_zeros() as usize];
            if self.w.converged && first < n && self.bsync[first].is_none() {
                self.run_step(first, live, sink)?;
                continue;
            }
            // The lanes to run: those at the lowest instruction among lanes not waiting at a
            // BSYNC for others of their group.
            let mut best = usize::MAX;
            let mut any_waiting = false;
            for l in 0..WARP {
                if live >> l & 1 == 0 {
                    continue;
                }
                let pc = self.w.pc[l];
                if self.waiting(l, pc) {
                    any_waiting = true;
                    continue;
                }
                best = best.min(pc);
            }
            if best == usize::MAX {
                // Everyone waits (a group whose other lanes can never arrive): release the lowest.
                debug_assert!(any_waiting);
                best = (0..WARP).filter(|l| live >> l & 1 == 1).map(|l| self.w.pc[l]).min().unwrap_or(0);
            }
            if best >= n {
                return Err(Diagnostic::new(
                    ErrorKind::Unsupported,
                    format!("SASS: control ran past the end of `{}` (no EXIT)", self.k.name),
                ));
            }
            let at = (0..WARP).filter(|&l| live >> l & 1 == 1 && self.w.pc[l] == best).fold(0u32, |m, l| m | 1 << l);
            self.run_step(best, at, sink)?;
            self.w.reconverge();
        }
    }

    /// Whether lane `l` at instruction `pc` waits at a `BSYNC` for lanes of its group.
    fn waiting(&self, l: usize, pc: usize) -> bool {
        let Some(b) = self.bsync.get(pc).copied().flatten() else { return false };
        let group = self.w.barrier[b as usize & 15] & self.w.live;
        let _ = l;
        (0..WARP).any(|m| group >> m & 1 == 1 && self.w.pc[m] != pc)
    }

    /// The lanes of `at` where the instruction's guard holds (unknown counts as holding), and
    /// those where it is unknown.
    pub(crate) fn guard(&self, i: usize, at: u32) -> (u32, u32) {
        let Some(g) = self.k.instrs[i].guard else { return (at, 0) };
        let (val, known) = self.pred_lanes(g.pred);
        let val = if g.pred.not { !val } else { val };
        let unknown = at & !known;
        (at & (val | !known), unknown)
    }

    /// A predicate's lanes (true, known).
    pub(crate) fn pred_lanes(&self, p: crate::ir::sass::PredReg) -> (u32, u32) {
        let i = (p.index & 7) as usize;
        if p.uniform {
            let v = if self.w.up[i] { u32::MAX } else { 0 };
            (v, if self.w.upk[i] { u32::MAX } else { 0 })
        } else {
            (self.w.p[i], self.w.pk[i])
        }
    }

    fn step(&mut self, i: usize, at: u32, sink: &mut dyn SectorSink) -> Result<()> {
        let (exec, unknown) = self.guard(i, at);
        let op = self.decoded[i];
        if alu::is_control(op) {
            return self.control(i, op, at, exec, unknown);
        }
        if unknown != 0 {
            self.out.data_branches.insert(i);
            self.w.assumed = true;
        }
        self.advance(at);
        if exec == 0 {
            return Ok(());
        }
        let n = self.op_of[i];
        if n != usize::MAX {
            return self.memory(i, n, exec, sink);
        }
        alu::execute(self, i, op, exec)
    }

    fn advance(&mut self, lanes: u32) {
        for l in alu::mask_lanes(lanes) {
            self.w.pc[l] += 1;
        }
    }

    fn jump(&mut self, lanes: u32, to: usize) {
        for l in alu::mask_lanes(lanes) {
            self.w.pc[l] = to;
        }
    }

    fn control(&mut self, i: usize, op: alu::Op, at: u32, exec: u32, unknown: u32) -> Result<()> {
        use alu::Op;
        let ins = &self.k.instrs[i];
        let target = ins.operands.iter().find_map(|o| match o {
            Operand::Target(t) => Some(*t),
            _ => None,
        });
        let barrier = ins.operands.iter().find_map(|o| match o {
            Operand::Barrier(b) => Some(*b as usize & 15),
            _ => None,
        });
        // A condition the analysis does not know: the branch is not taken, the lane does not
        // exit (the guarded code runs).
        let taken = exec & !unknown;
        if unknown != 0 && matches!(op, Op::Bra | Op::Exit) {
            self.out.data_branches.insert(i);
            self.w.assumed = true;
        }
        match op {
            Op::Bra => {
                let t = target.ok_or_else(|| stop(ins, "branches to a target this reader cannot resolve"))?;
                let taken = if ins.has("DIV") {
                    // Taken when the warp is not converged here.
                    if at != self.w.live {
                        taken
                    } else {
                        0
                    }
                } else {
                    taken
                };
                self.advance(at & !taken);
                self.jump(taken, t);
                // Every live lane went back: the warp arrives at a loop head.
                if t <= i && taken != 0 && taken == self.w.live {
                    self.arrival = Some((t, i));
                }
            }
            Op::Exit => {
                self.advance(at & !taken);
                self.w.live &= !taken;
                for b in &mut self.w.barrier {
                    *b &= !taken;
                }
            }
            // A call outside the kernel through an address from constant bank 4 (`vprintf`,
            // `__assertfail`, `malloc`): its own memory traffic is not counted (as the source
            // path counts `printf`), the registers it may change (R2..R15, R1 the stack
            // pointer kept) are unknown after it, and the sheet says so.
            Op::Call if target.is_none() && ins.mnemonic().starts_with("CALL.ABS") => {
                self.out.external_calls += u64::from(taken != 0);
                for l in 0..WARP {
                    if taken >> l & 1 == 1 {
                        for r in 2..16u8 {
                            let reg = crate::ir::sass::Reg {
                                index: r,
                                wide: false,
                                neg: false,
                                not: false,
                                abs: false,
                                uniform: false,
                                part: (0, 32),
                            };
                            self.set(reg, l, None);
                        }
                    }
                }
                self.advance(at);
            }
            Op::Call => {
                let t = target.ok_or_else(|| stop(ins, "calls a target this reader cannot resolve"))?;
                self.advance(at & !taken);
                self.jump(taken, t);
            }
            Op::Ret => {
                let Some(Operand::Reg(r)) = ins.operands.first() else {
                    return Err(stop(ins, "returns through an address this reader cannot follow"));
                };
                self.advance(at & !taken);
                for l in 0..WARP {
                    if taken >> l & 1 == 1 {
                        let v = self.reg(*r, l).ok_or_else(|| stop(ins, "returns to an unknown address"))?;
                        self.w.pc[l] = v as usize;
                    }
                }
            }
            Op::Bssy => {
                if let Some(b) = barrier {
                    self.w.barrier[b] = exec;
                }
                self.advance(at);
            }
            Op::Bsync => self.advance(at),
            Op::Break => {
                if let Some(b) = barrier {
                    self.w.barrier[b] &= !taken;
                }
                self.advance(at);
            }
            _ => self.advance(at),
        }
        self.w.reconverge();
        Ok(())
    }

    /// A register's value in lane `l` (`None`: unknown).
    pub(crate) fn reg(&self, r: crate::ir::sass::Reg, l: usize) -> Option<u32> {
        let i = r.index as usize;
        if r.uniform {
            return self.w.urk[i].then_some(self.w.ur[i]);
        }
        (self.w.rk[i] >> l & 1 == 1).then(|| if i == 255 { 0 } else { self.w.r[i * WARP + l] })
    }

    /// A 64-bit register pair's value in lane `l`.
    pub(crate) fn reg64(&self, r: crate::ir::sass::Reg, l: usize) -> Option<u64> {
        if r.index == crate::ir::sass::RZ {
            return Some(0);
        }
        let lo = self.reg(r, l)?;
        let hi = self.reg(crate::ir::sass::Reg { index: r.index + 1, ..r }, l)?;
        Some(lo as u64 | (hi as u64) << 32)
    }

    /// Bank-0 bytes `[at, at + n)` as a little-endian number.
    pub(crate) fn const_bytes(&self, bank: u32, at: i64, n: usize) -> Option<u64> {
        if bank == 4 && at >= 0 && n <= 8 {
            // Bank 4 holds the addresses of file-scope `__device__` variables, 8 bytes each:
            // each its own buffer, 256-byte aligned, far from the parameters' and the shared
            // window.
            let slot = (at / 8) as u64;
            let addr = DEVICE_WINDOW + (slot << 32);
            let shift = 8 * (at % 8) as u32;
            let v = addr >> shift;
            return Some(if n >= 8 { v } else { v & ((1u64 << (8 * n)) - 1) });
        }
        if bank != 0 || at < 0 {
            return None;
        }
        let mut v = 0u64;
        for k in 0..n {
            v |= (*self.bank0.get(at as usize + k)?)? as u64 * (1u64 << (8 * k));
        }
        Some(v)
    }

    /// A memory instruction's address operand: the global one for LDGSTS (its shared side is
    /// not counted).
    fn address_operand(&self, i: usize) -> Option<&'a crate::ir::sass::Address> {
        let k: &'a SassKernel = self.k;
        let class = self.class[self.op_of[i]];
        let mut mems = k.instrs[i].operands.iter().filter_map(|o| match o {
            Operand::Mem(a) => Some(a),
            _ => None,
        });
        let first = mems.next();
        match (class.kind, first, mems.next()) {
            (crate::ir::AccessKind::AsyncCopy, Some(_), Some(g)) => Some(g),
            (_, Some(m), _) => Some(m),
            _ => None,
        }
    }

    /// Widens memory operation `n`'s offsets within its buffer to take in lanes at `[lo, hi]`.
    fn note_range(&mut self, n: usize, lo: i64, hi: i64) {
        if let Some(Base::Param(p)) = self.ops[n].base {
            let b = super::absolute(self.s, Base::Param(p), 0);
            let s = &mut self.ops[n];
            let end = hi - b + self.class[n].width as i64;
            s.min_off = Some(s.min_off.map_or(lo - b, |m| m.min(lo - b)));
            s.end_off = Some(s.end_off.map_or(end, |m| m.max(end)));
        }
    }

    fn memory(&mut self, i: usize, n: usize, exec: u32, sink: &mut dyn SectorSink) -> Result<()> {
        if self.w.assumed {
            self.ops[n].after_data_branch = true;
        }
        let class = self.class[n];
        let k = self.k;
        let ins = &k.instrs[i];
        if let Some(space @ (Space::Texture | Space::Surface)) = class.space {
            // The texture pipeline: one execution per warp with an active lane; its operand in
            // brackets (a surface's) holds coordinates, not an address, and what it reads is
            // unknown.
            self.out.spaces[n] = Some(space);
            if exec != 0 {
                let e = Execution {
                    addrs: &[],
                    n_unknown: 0,
                    lanes_active: exec.count_ones() as u64,
                    data: false,
                    base: None,
                    width: self.ir.mem_ops[n].width,
                };
                record(&mut self.ops[n], n, &self.ir.mem_ops[n], &e, &mut self.scratch, sink);
            }
            alu::texture_result(self, i, class, exec);
            return Ok(());
        }
        let Some(a) = self.address_operand(i) else {
            return Err(stop(ins, "has no address this reader can read"));
        };
        self.addrs.clear();
        let mut n_unknown = 0u64;
        let mut lanes = 0u64;
        let mut space = class.space;
        let mut resolved: Option<Space> = None;
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        // LDSM gives row addresses in its first 8n lanes only.
        let addressed = super::count::address_lanes(&self.ir.mem_ops[n], exec);
        for l in 0..WARP {
            if addressed >> l & 1 == 0 {
                continue;
            }
            lanes += 1;
            match self.lane_address(a, l) {
                Some(mut addr) => {
                    if space.is_none() {
                        // A generic address: the shared window, or global memory.
                        let s =
                            if (addr as u64 >> 32) as u32 == SHARED_WINDOW_HI { Space::Shared } else { Space::Global };
                        if resolved.is_some_and(|r| r != s) {
                            return Err(stop(ins, "reaches shared and global memory in one execution"));
                        }
                        resolved = Some(s);
                    }
                    if space.or(resolved) == Some(Space::Shared) {
                        addr &= 0xffff_ffff;
                    }
                    lo = lo.min(addr);
                    hi = hi.max(addr);
                    self.addrs.push(addr);
                }
                None => n_unknown += 1,
            }
        }
        if space.is_none() {
            // Unknown generic addresses: global memory (the usual case; shared windows come
            // from SR_SWINHI, which is known).
            space = Some(resolved.unwrap_or(Space::Global));
        }
        let space = space.unwrap_or(Space::Global);
        let base = if space == Space::Global && !self.addrs.is_empty() { self.base_of(lo, hi) } else { None };
        self.out.spaces[n] = Some(space);
        let width = self.ir.mem_ops[n].width;
        let e = Execution { addrs: &self.addrs, n_unknown, lanes_active: lanes, data: false, base, width };
        if self.ir.mem_ops[n].space == space {
            record(&mut self.ops[n], n, &self.ir.mem_ops[n], &e, &mut self.scratch, sink);
        } else {
            let mut op = self.ir.mem_ops[n].clone();
            op.space = space;
            record(&mut self.ops[n], n, &op, &e, &mut self.scratch, sink);
        }
        if let (Some(Base::Param(p)), false) = (base, self.addrs.is_empty()) {
            let b = super::absolute(self.s, Base::Param(p), 0);
            let s = &mut self.ops[n];
            let end = hi - b + class.width as i64;
            s.min_off = Some(s.min_off.map_or(lo - b, |m| m.min(lo - b)));
            s.end_off = Some(s.end_off.map_or(end, |m| m.max(end)));
        }
        alu::memory_result(self, i, class, exec, base, space)
    }

    /// Lane `l`'s address in a memory operand: register (a pair for `.64`, times its scale),
    /// uniform register and offset; `None` where a register is unknown.
    pub(crate) fn lane_address(&self, a: &crate::ir::sass::Address, l: usize) -> Option<i64> {
        let term = |r: crate::ir::sass::Reg| -> Option<i64> {
            if r.index == crate::ir::sass::RZ {
                Some(0)
            } else if r.wide {
                self.reg64(r, l).map(|x| x as i64)
            } else {
                self.reg(r, l).map(i64::from)
            }
        };
        let mut v = a.offset;
        if let Some(r) = a.reg {
            v = v.wrapping_add(term(r)?.wrapping_mul(a.scale.max(1) as i64));
        }
        if let Some(r) = a.ureg {
            v = v.wrapping_add(term(r)?);
        }
        Some(v)
    }

    /// The parameter whose buffer holds `[lo, hi]`.
    fn base_of(&self, lo: i64, hi: i64) -> Option<Base> {
        let p = (lo >> 40) - 1;
        (p >= 0 && (hi >> 40) - 1 == p && (p as usize) < self.ir.params.len()).then_some(Base::Param(ParamId(p as u32)))
    }

    /// A load's value from a filled array, for lane `l` at `addr`.
    pub(crate) fn fill_value(&mut self, base: Option<Base>, addr: i64, width: u32) -> Option<u32> {
        let Some(Base::Param(p)) = base else { return None };
        let (fill, table) = self.s.fills.get(p.0 as usize)?.as_ref()?;
        let Ty::Ptr(t) = &self.ir.param(p).ty else { return None };
        let size = t.pointee.size() as i64;
        // A whole element, or part of one: nvcc loads only the bytes it uses (`sel[i] & 3` of
        // an `int` array is a 16-bit load of its low half, little-endian).
        let float = matches!(t.pointee, Ty::Float(4 | 8));
        if !(t.pointee.is_int() || float) || width as i64 > size || width > 4 || size > 8 {
            return None;
        }
        let off = addr - super::absolute(self.s, Base::Param(p), 0);
        let (index, within) = (off.div_euclid(size), off.rem_euclid(size));
        if within % width as i64 != 0 {
            return None;
        }
        let v = fill.value(index, table.as_deref())?;
        self.used_fills[p.0 as usize] = true;
        // A float array holds the fill's value as that number: its IEEE bits, as the GPU's
        // registers hold them.
        let bits = match &t.pointee {
            Ty::Int(it) => it.wrap(v as i128) as u64,
            Ty::Float(4) => (v as f32).to_bits() as u64,
            Ty::Float(8) => (v as f64).to_bits(),
            _ => v as u64,
        };
        Some((bits >> (8 * within)) as u32)
    }
}

#[cfg(test)]
mod half_tests {
    #[test]
    fn subnormal_halves_keep_their_bits() {
        // 2^-24 is the smallest subnormal half (bits 1); 4 * 2^-24 has bits 4.
        assert_eq!(super::half_bits(2.0f32.powi(-24)), 1);
        // As nvdisasm prints it: `2.384185791015625e-07`.
        assert_eq!(super::half_bits("2.384185791015625e-07".parse().unwrap()), 4);
        assert_eq!(super::half_bits(1023.0 * 2.0f32.powi(-24)), 1023);
        assert_eq!(super::half_bits(-3.0 * 2.0f32.powi(-24)), 0x8003);
        assert_eq!(super::half_bits(1.0), 0x3c00);
        assert_eq!(super::half_bits(2.0f32.powi(-26)), 0);
    }
}
