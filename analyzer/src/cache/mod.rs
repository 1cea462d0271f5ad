//! The cache model: turns the engine's stream of global sectors into boundary traffic (L1 hits,
//! L1 -> L2 reads and writes, L2 -> DRAM reads and writes) for one launch under a GPU
//! [`crate::gpu::Profile`].
//!
//! What it assumes (each one is written on the sheet):
//! - caches are cold at launch, as Nsight Compute's default cache control leaves them;
//! - a wave is `together` blocks on every SM; within wave `w` block `b` (x fastest, then y, z)
//!   runs on SM `(b mod per_wave + w x WAVE_ROTATION) mod SMs` (later waves are placed
//!   dynamically on the H200); the engine runs each warp to completion; the model buffers a
//!   wave and replays it with every warp's k-th access side by side, as warps that progress
//!   together present them to the L1s and the L2;
//! - one L1 per SM: sectored 128-byte lines, fully associative, LRU, with the capacity the
//!   shared-memory carveout leaves; loads allocate, except the L1-bypassing `__ldcg`/`__ldcv`
//!   (and, where the profile says so, every load but `__ldg`); stores write through to L2 and
//!   do not allocate; a sector another warp of the SM asked for is a hit;
//! - misses to one sector by SMs of one merge group (the 2 SMs of a TPC on sm_90) in the same replay step reach
//!   L2 once while the warps are younger than [`SYNC_WORK`] steps (measured merging in flight);
//!   in the first wave of a kernel whose loops hold a barrier (blocks kept in step), the misses
//!   of one run of consecutive blocks dealt to one GPC (16 on the H200) in the same replay step
//!   reach L2 once per 4 SMs, for the whole run of the warps (measured by SM id and in tiled
//!   products); in later waves such a kernel's TPC mates merge for the warps' whole run too;
//! - one L2 of the profile's model capacity (on the H200 two thirds of the physical size, as
//!   measured): sectored 128-byte lines, fully associative, LRU, write-back. A read miss fetches
//!   the DRAM granule around the sector (its sectors not already valid). A store that fills
//!   a whole sector needs no DRAM read; one that fills part of it keeps a byte mask, and the
//!   sector is read from DRAM only when a load needs it or it is written back;
//! - dirty lines reach DRAM only when evicted during the kernel (what stays in L2 at the end
//!   is written after Nsight Compute stops counting).
//!
//! Cost: two hash lookups per 128-byte line an access touches (L1, then L2 on a miss).
//! [`sample`] decides which blocks are fed, so that the cost stays bounded; a stream fed whole
//! (the enumerating engine) switches to counting after [`SIM_BUDGET`] sectors and extrapolates
//! with the simulated part's ratios, per instruction (the sheet says so).

pub mod sample;
/// The profiles live in the leaf module [`crate::gpu`]; `cache::profile` is kept as its old path.
pub use crate::gpu as profile;

use crate::gpu::{Occupancy, Profile};
use crate::ir::{AccessKind, CacheOp, Kernel};
use crate::launch::Setup;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Sectors simulated before the model switches to counting and extrapolating (about 2 s of
/// simulation on a 2-core machine).
pub const SIM_BUDGET: u64 = 64_000_000;

/// Hashes line numbers: one multiply (FxHash's scheme). Keys are plain integers, so SipHash
/// would buy nothing and cost much of a large launch's time.
#[derive(Default, Clone, Copy)]
pub struct LineHasher(u64);

impl Hasher for LineHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = self.0.wrapping_add(v).wrapping_mul(0xf135_7aea_2e62_a9c5);
    }
    fn write_i64(&mut self, v: i64) {
        self.write_u64(v as u64);
    }
    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits: bring the well-mixed high bits there.
        self.0.rotate_left(26)
    }
}

type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<LineHasher>>;

const NIL: u32 = u32::MAX;

struct Node<T> {
    key: i64,
    prev: u32,
    next: u32,
    val: T,
}

/// A fully associative set of at most `capacity` lines with least-recently-used replacement.
pub struct Lru<T> {
    capacity: usize,
    map: FastMap<i64, u32>,
    nodes: Vec<Node<T>>,
    /// Most recently used.
    head: u32,
    /// Least recently used: the next victim.
    tail: u32,
}

impl<T> Lru<T> {
    pub fn new(capacity: usize) -> Self {
        Lru { capacity, map: FastMap::default(), nodes: Vec::new(), head: NIL, tail: NIL }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn unlink(&mut self, i: u32) {
        let (p, n) = (self.nodes[i as usize].prev, self.nodes[i as usize].next);
        match p {
            NIL => self.head = n,
            _ => self.nodes[p as usize].next = n,
        }
        match n {
            NIL => self.tail = p,
            _ => self.nodes[n as usize].prev = p,
        }
    }

    fn push_front(&mut self, i: u32) {
        self.nodes[i as usize].prev = NIL;
        self.nodes[i as usize].next = self.head;
        if self.head != NIL {
            self.nodes[self.head as usize].prev = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    /// The line's payload, made most recently used; `None` when the line is absent.
    pub fn get(&mut self, key: i64) -> Option<&mut T> {
        let i = *self.map.get(&key)?;
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
        Some(&mut self.nodes[i as usize].val)
    }

    /// Whether the line is present, without touching its recency.
    pub fn contains(&self, key: i64) -> bool {
        self.map.contains_key(&key)
    }

    /// Inserts an absent line as most recently used. Returns the line it evicted, if the set
    /// was full (with no capacity at all, the new line itself).
    pub fn insert(&mut self, key: i64, val: T) -> Option<(i64, T)> {
        if self.capacity == 0 {
            return Some((key, val));
        }
        if self.map.len() < self.capacity {
            let i = self.nodes.len() as u32;
            self.nodes.push(Node { key, prev: NIL, next: NIL, val });
            self.map.insert(key, i);
            self.push_front(i);
            return None;
        }
        let i = self.tail;
        self.unlink(i);
        let node = &mut self.nodes[i as usize];
        let old_key = std::mem::replace(&mut node.key, key);
        let old_val = std::mem::replace(&mut node.val, val);
        self.map.remove(&old_key);
        self.map.insert(key, i);
        self.push_front(i);
        Some((old_key, old_val))
    }

    /// Empties the set (its capacity stays).
    pub fn clear(&mut self) {
        self.map.clear();
        self.nodes.clear();
        self.head = NIL;
        self.tail = NIL;
    }

    /// Sets the capacity; lines beyond it leave, least recently used first.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
        while self.map.len() > capacity {
            let i = self.tail;
            self.unlink(i);
            let key = self.nodes[i as usize].key;
            self.map.remove(&key);
        }
    }

    /// Payloads from most to least recently used.
    pub fn iter_mru(&self) -> impl Iterator<Item = (i64, &T)> {
        let mut i = self.head;
        std::iter::from_fn(move || {
            if i == NIL {
                return None;
            }
            let n = &self.nodes[i as usize];
            i = n.next;
            Some((n.key, &n.val))
        })
    }
}

/// One L2 line: per sector (bit i = sector i of the line) whether its data is present,
/// whether it is dirty, and the bytes written so far of a sector not yet present.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct L2Line {
    pub valid: u8,
    pub dirty: u8,
    pub partial: [u32; 4],
}

/// Traffic caused by one memory instruction (indexed like the kernel's `mem_ops`).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct OpTraffic {
    /// Sectors simulated.
    pub load_sectors: u64,
    pub store_sectors: u64,
    pub l1_hits: u64,
    pub l2_reads: u64,
    pub l2_writes: u64,
    /// L1 misses merged in flight with another SM's miss to the same sector (not L2 reads).
    pub l2_merged: u64,
    /// DRAM sectors fetched for this instruction's L2 read misses (and for atomics' sectors
    /// not in L2).
    pub dram_reads: u64,
    /// Sectors of global atomics simulated: performed in L2, in neither L1 nor the L2 read and
    /// write counters (measured on the H200), but their lines are read from DRAM when absent.
    pub atomic_sectors: u64,
    /// Atomics' sectors past the simulation budget: counted, not simulated.
    pub rest_atomic_sectors: u64,
    /// Sectors past the simulation budget: counted, not simulated.
    pub rest_load_sectors: u64,
    pub rest_store_sectors: u64,
    /// Sectors of data-dependent lanes (the default assumption: each its own sector).
    pub unknown_load_sectors: u64,
    pub unknown_store_sectors: u64,
}

/// A sector-exact model of one launch's L1s and L2, fed in execution order.
pub struct CacheModel {
    pub profile: &'static Profile,
    pub occupancy: Occupancy,
    /// Blocks resident on an SM at once: the occupancy, or fewer when the grid is small.
    pub together: u32,
    /// The wave (`together` blocks on every SM) whose accesses are buffered.
    wave: u64,
    /// The (wave, SM group) unit being buffered.
    unit: (u64, u64),
    /// The replay step (every warp's `step`-th access) under way.
    step: u32,
    /// Waves replayed only to warm the caches: their traffic is not counted.
    pub warm_waves: Vec<u64>,
    /// Set when only some units were fed (see [`sample`]).
    pub sample: Option<sample::Sample>,
    /// Units and waves fed.
    pub units: u64,
    pub waves: u64,
    /// Per SM, sector-valid bits per line.
    l1: Vec<Lru<u8>>,
    pub(crate) l2: Lru<L2Line>,
    sm: usize,
    /// Whether any access or block reached the model (an engine that never feeds it leaves
    /// `false`, and the sheet then uses [`crate::sheet::build::boundaries_unsimulated`]).
    pub fed: bool,
    pub ops: Vec<OpTraffic>,
    /// Dirty sectors written back to DRAM by evictions during the kernel.
    pub dram_writes: u64,
    /// Partly written sectors read from DRAM to complete them before a write-back.
    pub dram_merge_reads: u64,
    /// Sector stores that covered only part of their sector.
    pub partial_store_sectors: u64,
    /// Loaded sectors no earlier access of the launch touched (the compulsory DRAM reads).
    pub compulsory_sectors: u64,
    /// Distinct sectors loaded.
    pub distinct_loaded: u64,
    touched: SectorSet,
    loaded: SectorSet,
    pub simulated_sectors: u64,
    pub budget: u64,
    pub blocks: u64,
    /// Blocks begun while the model still simulated.
    pub simulated_blocks: u64,
    masks: Vec<(i64, u32)>,
    /// The current wave's accesses, replayed with all its warps interleaved when it ends.
    pending: Vec<Pending>,
    pending_sectors: Vec<i64>,
    pending_addrs: Vec<i64>,
    /// Sectors (with their SM group) sent to L2 in the replay step under way: a later miss of
    /// the same group to one of them merges in flight.
    in_flight: FastMap<i64, u8>,
    /// Whether misses of one run of blocks (see [`crate::gpu::Profile::run_blocks`]) merge in
    /// the first wave: set for kernels whose loops hold a barrier, which keeps blocks in step.
    pub in_step_runs: bool,
    /// Run of the access being replayed (see `run_of`).
    run: u32,
    /// The run of each slot of a wave: where the profile knows the GPCs, the dealer's turns
    /// (consecutive slots dealt to one GPC: blocks that start together on SMs whose misses
    /// merge), else runs of `run_blocks` consecutive slots.
    run_of: Vec<u32>,
    /// The SM of each slot of a wave (the profile's [`crate::gpu::Dealing`]), and each SM's
    /// slots in dealing order.
    deal: Vec<u32>,
    pub(crate) slots_of: Vec<Vec<u32>>,
    /// SMs per merge group (the profile's `merge_group_sms`).
    pub merge_group: u32,
    /// Accesses of a warp (counted from its first) that can still merge with another SM's:
    /// blocks of a wave start together, then drift apart (see [`SYNC_WORK`]).
    pub sync_accesses: u32,
    /// The current block's place in its wave, its warp (counted from 0) and that warp's
    /// accesses so far.
    slot: u32,
    warp: u32,
    warp_seq: u32,
    /// When the estimate's own budget ends (see [`sample::EstimateBudget`]): the replay stops
    /// there, and [`CacheModel::out_of_budget`] says why.
    pub deadline: Option<std::time::Instant>,
    /// Set when the estimate's budget ran out before the launch's sample went through the
    /// model: the sheet then gives the boundaries as bounds only (why, in words).
    pub out_of_budget: Option<String>,
    /// Global accesses of each warp (counted from its first) that go through the model; the
    /// warp's later ones are counted only, and take the instruction's ratios (an experiment of
    /// issue 26: cost independent of trip counts; off unless asked for).
    pub window: Option<u32>,
    /// Warps cut by [`CacheModel::window`].
    pub windowed_warps: u64,
    /// The fraction of long loops' iterations the engine should run (iteration windows,
    /// `engine/windows.rs`; 1: every iteration). [`sample`] sets it when a unit is over the
    /// budget.
    pub loop_fraction: f64,
    /// Jumps the engine made over loop iterations, the iterations jumped over, and the global
    /// accesses it estimated they would have made.
    pub jumps: u64,
    pub skipped_iterations: u64,
    pub skipped_accesses: u64,
    /// Accesses that only warm the caches: replayed, not counted (the iteration a jump lands
    /// on, just before a window).
    warming: bool,
    /// The current warp jumped: its later accesses are the loop's state moved on by its step,
    /// not proven accesses of the launch, and do not enter the lower bounds.
    jumped: bool,
    /// The access being replayed is a proven one (see `jumped`).
    exact: bool,
}

/// One buffered access: the `seq`-th of warp `warp`; its sectors and addresses are ranges of
/// the model's flat buffers.
#[derive(Clone, Copy)]
struct Pending {
    seq: u32,
    sm: u32,
    /// The run of consecutive blocks of its wave dealt to one GPC that its block belongs to.
    run: u32,
    op: u32,
    kind: AccessKind,
    cache: CacheOp,
    width: u32,
    sectors: (u32, u32),
    addrs: (u32, u32),
    /// Only warms the caches (not counted); a proven access of the launch (enters the bounds).
    warm: bool,
    exact: bool,
}

/// Buffered sectors (and addresses) after which a wave's accesses are replayed early, in parts:
/// bounds the model's memory (about 128 MiB of sectors, 160 MiB of entries at a quarter as many).
const PENDING_LIMIT: usize = 1 << 24;

const SECTORS_PER_LINE: i64 = 4;

/// In-flight keys of runs start here, above every SM group's (a group or run number is at most
/// a wave's blocks, below 2^15).
const RUN_KEYS: i64 = 1 << 15;

/// Replayed accesses between two looks at the estimate's deadline.
const DEADLINE_EVERY: usize = 1 << 14;

/// Sorted sectors grouped by 128-byte line: each line, the mask of its sectors present, and
/// those sectors.
fn by_line(sectors: &[i64]) -> impl Iterator<Item = (i64, u8, &[i64])> {
    sectors.chunk_by(|a, b| a.div_euclid(SECTORS_PER_LINE) == b.div_euclid(SECTORS_PER_LINE)).map(|run| {
        let mask = run.iter().fold(0u8, |m, s| m | 1 << s.rem_euclid(SECTORS_PER_LINE));
        (run[0].div_euclid(SECTORS_PER_LINE), mask, run)
    })
}

/// SMs by which each wave's round-robin assignment is turned: later waves are placed
/// dynamically (a block goes to whichever SM frees a slot first, measured), so the blocks an
/// SM runs in one wave bear no fixed relation to those of the wave before; what every block
/// reads still stays in L1 (the H200 missed a datum all blocks read only once per SM over
/// four waves). 61 is prime to 132 and far from its small divisors.
pub const WAVE_ROTATION: u64 = 61;

/// Warp-level steps of the reference engine (statements, about an instruction each) during
/// which the blocks of a wave stay in step: misses of one merge group to a sector merge only
/// while the warps that make them are younger than this. Fitted on the H200 (the reuse
/// examples: in-step merging seen up to about 300 to 2,800 steps into a warp depending on the
/// kernel; the probes that do nothing but load stayed in step for 2,048 loads).
pub const SYNC_WORK: u64 = 1_200;

/// Steps per global access assumed where the launch's ratio is not known beforehand (the
/// reference engine streaming a whole launch): about three in a simple loop.
pub const DEFAULT_WORK_PER_ACCESS: u64 = 3;

/// The engine streams its global sectors straight into the model.
impl crate::engine::SectorSink for CacheModel {
    fn begin_block(&mut self, block: u64) {
        CacheModel::begin_block(self, block)
    }
    fn begin_warp(&mut self) {
        CacheModel::begin_warp(self)
    }
    fn access(&mut self, op: usize, kind: AccessKind, cache: CacheOp, sectors: &[i64], addrs: &[i64], width: u32) {
        CacheModel::access(self, op, kind, cache, sectors, addrs, width)
    }
    fn unknown(&mut self, op: usize, kind: AccessKind, n: u64) {
        CacheModel::unknown(self, op, kind, n)
    }
    fn loop_fraction(&self) -> f64 {
        self.loop_fraction
    }
    fn position(&self) -> u64 {
        self.warp_seq as u64
    }
    fn skip(&mut self, accesses: u64, iterations: u64) {
        self.jumps += 1;
        self.skipped_iterations = self.skipped_iterations.saturating_add(iterations);
        self.skipped_accesses = self.skipped_accesses.saturating_add(accesses);
        self.jumped = true;
        // Later accesses come as late in the warp's stream as they would have (`u32::MAX` marks
        // a warp cut by the access window).
        if self.warp_seq != u32::MAX {
            self.warp_seq = (self.warp_seq as u64 + accesses).min(u32::MAX as u64 - 1) as u32;
        }
    }
    fn warm(&mut self, on: bool) {
        self.warming = on;
    }
    fn counts_shared(&self) -> bool {
        false
    }
}

impl Default for CacheModel {
    /// The H200 profile, 256 threads per block, no shared memory and no instructions known.
    fn default() -> Self {
        CacheModel::with_profile(&profile::PROFILES[0], 256, 0, 1, 0)
    }
}

impl CacheModel {
    /// The model for a launch: the setup's profile (H200 when the name is unknown; the CLI and
    /// [`Setup::new`] reject unknown names first), block size and shared memory.
    pub fn new(kernel: &Kernel, setup: &Setup) -> Self {
        let p = profile::lookup(&setup.gpu).unwrap_or(&profile::PROFILES[0]);
        let shared: u64 =
            kernel.shared.iter().filter(|a| !a.is_extern).map(|a| a.bytes()).sum::<u64>() + setup.shared_bytes;
        CacheModel::with_profile(p, setup.threads_per_block(), shared, setup.blocks(), kernel.mem_ops.len())
    }

    /// The model for `blocks` blocks of `threads_per_block` threads using `shared_per_block`
    /// bytes of shared memory, with `n_ops` memory instructions.
    pub fn with_profile(
        p: &'static Profile,
        threads_per_block: u64,
        shared_per_block: u64,
        blocks: u64,
        n_ops: usize,
    ) -> Self {
        let occupancy = p.occupancy(threads_per_block, shared_per_block);
        let together = resident_together(p, &occupancy, blocks);
        let l1_lines = (occupancy.l1_bytes / p.line_bytes as u64) as usize;
        let deal = p.dealing.order(p.sms, together as u32);
        let mut slots_of = vec![Vec::with_capacity(together as usize); p.sms.max(1) as usize];
        for (slot, &sm) in deal.iter().enumerate() {
            slots_of[sm as usize].push(slot as u32);
        }
        let run_of: Vec<u32> = match deal.first().and_then(|&s| p.dealing.gpc(p.sms, s)) {
            Some(_) => {
                let gpc = |s: u32| p.dealing.gpc(p.sms, s).unwrap_or(0);
                let mut turn = 0u32;
                deal.iter()
                    .enumerate()
                    .map(|(i, &s)| {
                        if i > 0 && gpc(s) != gpc(deal[i - 1]) {
                            turn += 1;
                        }
                        turn
                    })
                    .collect()
            }
            None => (0..deal.len() as u32).map(|i| i / p.run_blocks.max(1)).collect(),
        };
        CacheModel {
            profile: p,
            occupancy,
            together: together as u32,
            wave: u64::MAX,
            unit: (u64::MAX, u64::MAX),
            step: 0,
            units: 0,
            sample: None,
            warm_waves: Vec::new(),
            waves: 0,
            l1: (0..p.sms).map(|_| Lru::new(l1_lines)).collect(),
            l2: Lru::new((p.l2_model_bytes / p.line_bytes as u64) as usize),
            sm: 0,
            fed: false,
            ops: vec![OpTraffic::default(); n_ops],
            dram_writes: 0,
            dram_merge_reads: 0,
            partial_store_sectors: 0,
            compulsory_sectors: 0,
            distinct_loaded: 0,
            touched: SectorSet::default(),
            loaded: SectorSet::default(),
            simulated_sectors: 0,
            budget: SIM_BUDGET,
            blocks: 0,
            simulated_blocks: 0,
            masks: Vec::new(),
            pending: Vec::new(),
            pending_sectors: Vec::new(),
            pending_addrs: Vec::new(),
            in_flight: FastMap::default(),
            in_step_runs: false,
            run: 0,
            deal,
            slots_of,
            run_of,
            merge_group: p.merge_group_sms.max(1),
            sync_accesses: (SYNC_WORK / DEFAULT_WORK_PER_ACCESS) as u32,
            slot: 0,
            warp: 0,
            warp_seq: 0,
            deadline: None,
            out_of_budget: None,
            window: None,
            windowed_warps: 0,
            loop_fraction: 1.0,
            jumps: 0,
            skipped_iterations: 0,
            skipped_accesses: 0,
            warming: false,
            jumped: false,
            exact: true,
        }
    }

    fn op(&mut self, op: usize) -> &mut OpTraffic {
        if op >= self.ops.len() {
            self.ops.resize(op + 1, OpTraffic::default());
        }
        &mut self.ops[op]
    }

    /// Whether the stream went past the simulation budget.
    pub fn sampled(&self) -> bool {
        self.simulated_sectors >= self.budget
    }

    /// Blocks in one wave: `together` on every SM.
    pub fn per_wave(&self) -> u64 {
        self.profile.sms.max(1) as u64 * self.together.max(1) as u64
    }

    /// SM groups per wave (the profile's merge groups; the last may be smaller).
    pub fn groups(&self) -> u64 {
        (self.profile.sms.max(1) as u64).div_ceil(self.merge_group as u64)
    }

    /// The (wave, SM group) unit block `block` belongs to: the blocks that run at the same
    /// time on the SMs whose misses can merge. Units share only the L2.
    pub fn unit_of(&self, block: u64) -> (u64, u64) {
        (block / self.per_wave(), self.sm_of(block) / self.merge_group as u64)
    }

    /// The SM block `block` runs on: in the first wave as the profile deals it
    /// ([`crate::gpu::Dealing`], measured on the H200); later waves, placed dynamically,
    /// round-robin with the assignment rotated by [`WAVE_ROTATION`] SMs per wave.
    pub fn sm_of(&self, block: u64) -> u64 {
        let sms = self.profile.sms.max(1) as u64;
        let (wave, slot) = (block / self.per_wave(), block % self.per_wave());
        match self.deal.get(slot as usize) {
            Some(&s) if wave == 0 => s as u64,
            _ => later_wave_sm(self.profile.dealing.shuffles(), sms, self.merge_group as u64, wave, slot),
        }
    }

    pub fn begin_block(&mut self, block: u64) {
        let unit = self.unit_of(block);
        if unit != self.unit {
            // A wave's accesses are replayed together (its units side by side).
            if unit.0 != self.unit.0 {
                self.flush();
                if self.warm_waves.contains(&unit.0) {
                    // A sampled wave's history is the one wave before it: the waves skipped
                    // in between would have pushed older data out of L2.
                    self.l2.clear();
                    for l1 in &mut self.l1 {
                        l1.clear();
                    }
                }
            }
            if unit.0 != self.unit.0 {
                self.waves += 1;
            }
            self.unit = unit;
            self.units += 1;
        }
        self.wave = unit.0;
        self.slot = (block % self.per_wave()) as u32;
        self.fed = true;
        self.warp = 0;
        self.warp_seq = 0;
        self.blocks += 1;
        if !self.sampled() {
            self.simulated_blocks += 1;
        }
        self.sm = self.sm_of(block) as usize;
    }

    /// The engine starts the next warp of the current block (each warp runs to completion).
    pub fn begin_warp(&mut self) {
        if self.warp_seq > 0 || !self.pending.is_empty() {
            self.warp += 1;
        }
        self.warp_seq = 0;
        self.jumped = false;
        self.warming = false;
    }

    /// Replays the buffered accesses of the current wave with all its warps interleaved: every
    /// warp's first access, then every warp's second, and so on, as warps that progress
    /// together would present them to the L1s and L2. Call once the stream has ended.
    pub fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        if self.out_of_budget.is_some() {
            self.pending.clear();
            self.pending_sectors.clear();
            self.pending_addrs.clear();
            return;
        }
        let warm = self.warm_waves.contains(&self.wave).then(|| self.ops.clone());
        let mut pending = std::mem::take(&mut self.pending);
        let sectors = std::mem::take(&mut self.pending_sectors);
        let addrs = std::mem::take(&mut self.pending_addrs);
        // Stable bucket sort by step: within a step, accesses stay in feeding order (block,
        // then warp), as the hardware's warps of one step are presented.
        let steps = pending.iter().map(|p| p.seq as usize + 1).max().unwrap_or(0);
        let mut start = vec![0u32; steps + 1];
        for p in &pending {
            start[p.seq as usize + 1] += 1;
        }
        for i in 1..=steps {
            start[i] += start[i - 1];
        }
        let mut order = vec![0u32; pending.len()];
        for (i, p) in pending.iter().enumerate() {
            let at = &mut start[p.seq as usize];
            order[*at as usize] = i as u32;
            *at += 1;
        }
        let mut step = u32::MAX;
        for (n, &i) in order.iter().enumerate() {
            if n % DEADLINE_EVERY == DEADLINE_EVERY - 1 && self.past_deadline() {
                break;
            }
            let p = &pending[i as usize];
            if p.seq != step {
                step = p.seq;
                self.step = step;
                self.in_flight.clear();
            }
            self.sm = p.sm as usize;
            self.run = p.run;
            self.exact = p.exact;
            let ss = &sectors[p.sectors.0 as usize..p.sectors.1 as usize];
            let kept = p.warm.then(|| *self.op(p.op as usize));
            match p.kind {
                AccessKind::Load | AccessKind::AsyncCopy => self.load(p.op as usize, p.cache, ss),
                AccessKind::Red | AccessKind::Atom => self.atomic(p.op as usize, ss),
                AccessKind::Store => self.store(p.op as usize, &addrs[p.addrs.0 as usize..p.addrs.1 as usize], p.width),
            }
            if let Some(t) = kept {
                // A warming access: the caches took it, the counts do not.
                self.ops[p.op as usize] = t;
            }
        }
        self.exact = true;
        pending.clear();
        if let Some(ops) = warm {
            self.ops = ops;
        }
        self.pending = pending;
        self.pending_sectors = sectors;
        self.pending_sectors.clear();
        self.pending_addrs = addrs;
        self.pending_addrs.clear();
    }

    /// Whether the estimate's deadline has passed (and if so, marks the model out of budget).
    pub fn past_deadline(&mut self) -> bool {
        if self.out_of_budget.is_some() {
            return true;
        }
        match self.deadline {
            Some(d) if std::time::Instant::now() > d => {
                self.out_of_budget =
                    Some("its time limit ran out while the cache model replayed the sampled accesses".into());
                true
            }
            _ => false,
        }
    }

    fn allocates(&self, cache: CacheOp) -> bool {
        match cache {
            CacheOp::Cg | CacheOp::Cv => false,
            CacheOp::Nc | CacheOp::Ca => true,
            _ => self.profile.l1_caches_global_loads,
        }
    }

    /// One warp-level global access: its distinct sectors (ascending) and, for the byte masks
    /// of stores, the active lanes' addresses and the access width.
    pub fn access(&mut self, op: usize, kind: AccessKind, cache: CacheOp, sectors: &[i64], addrs: &[i64], width: u32) {
        self.fed = true;
        if self.out_of_budget.is_some() {
            return;
        }
        let cut = self.window.is_some_and(|w| self.warp_seq >= w);
        if cut && self.warp_seq != u32::MAX {
            // The first access past the window: the warp is cut here.
            self.windowed_warps += 1;
            self.warp_seq = u32::MAX;
        }
        if cut || self.sampled() {
            let t = self.op(op);
            match kind {
                AccessKind::Load | AccessKind::AsyncCopy => t.rest_load_sectors += sectors.len() as u64,
                AccessKind::Red | AccessKind::Atom => t.rest_atomic_sectors += sectors.len() as u64,
                AccessKind::Store => t.rest_store_sectors += sectors.len() as u64,
            }
            return;
        }
        self.simulated_sectors += sectors.len() as u64;
        self.op(op);
        // Distinct sectors loaded, as they arrive (not at the replay): a lower bound on the
        // launch's L2 reads even when the estimate's budget ends before the replay.
        if matches!(kind, AccessKind::Load | AccessKind::AsyncCopy) && !self.jumped {
            for &s in sectors {
                if self.loaded.insert(s) {
                    self.distinct_loaded += 1;
                }
            }
        }
        let s0 = self.pending_sectors.len() as u32;
        self.pending_sectors.extend_from_slice(sectors);
        let a0 = self.pending_addrs.len() as u32;
        if kind == AccessKind::Store {
            self.pending_addrs.extend_from_slice(addrs);
        }
        self.pending.push(Pending {
            seq: self.warp_seq,
            sm: self.sm as u32,
            run: self.run_of.get(self.slot as usize).copied().unwrap_or(0),
            op: op as u32,
            kind,
            cache,
            width,
            sectors: (s0, self.pending_sectors.len() as u32),
            addrs: (a0, self.pending_addrs.len() as u32),
            warm: self.warming,
            exact: !self.jumped,
        });
        self.warp_seq += 1;
        if self.pending_sectors.len() + self.pending_addrs.len() >= PENDING_LIMIT
            || self.pending.len() >= PENDING_LIMIT / 4
        {
            self.flush();
        }
    }

    /// Lanes whose addresses depend on unknown data: `n` sectors, each assumed its own.
    pub fn unknown(&mut self, op: usize, kind: AccessKind, n: u64) {
        self.fed = true;
        let t = self.op(op);
        match kind {
            AccessKind::Load | AccessKind::AsyncCopy | AccessKind::Red | AccessKind::Atom => {
                t.unknown_load_sectors += n
            }
            AccessKind::Store => t.unknown_store_sectors += n,
        }
    }

    fn load(&mut self, op: usize, cache: CacheOp, sectors: &[i64]) {
        let allocate = self.allocates(cache);
        for (line, mask, run) in by_line(sectors) {
            for &s in run {
                // A sector first touched by an unproven access is not counted as compulsory.
                if self.touched.insert(s) && self.exact {
                    self.compulsory_sectors += 1;
                }
            }
            let mut hit = 0u8;
            if allocate {
                let l1 = &mut self.l1[self.sm];
                match l1.get(line) {
                    Some(v) => {
                        hit = *v & mask;
                        *v |= mask;
                    }
                    None => {
                        l1.insert(line, mask);
                    }
                }
            }
            let mut miss = mask & !hit;
            let mut merged = 0u8;
            // Blocks kept in step by barriers merge across the TPCs of their GPC for their whole
            // run in the first wave, at most `run_merge_sms` SMs per L2 read, and as TPC mates
            // for their whole run in later waves (the barriers keep the two SMs of a TPC
            // together; the H200's TPC mates kept merging when one started 10 us late, the
            // late SM catching up); otherwise TPC mates while young.
            let runs = self.in_step_runs && self.wave == 0;
            let (group, cap) = if runs {
                (RUN_KEYS + self.run as i64, self.profile.run_merge_sms.min(u8::MAX as u32) as u8)
            } else {
                ((self.sm as u32 / self.merge_group) as i64, 0)
            };
            if miss != 0 && (runs || self.merge_group > 1 && (self.in_step_runs || self.step < self.sync_accesses)) {
                for b in 0..4 {
                    if miss & (1 << b) != 0 {
                        let key = ((line * SECTORS_PER_LINE + b as i64) << 16) + group;
                        // SMs the sector's outstanding L2 read serves so far.
                        let n = self.in_flight.entry(key).or_insert(0);
                        if *n > 0 && (cap == 0 || *n < cap) {
                            merged |= 1 << b;
                            *n += 1;
                        } else {
                            *n = 1;
                        }
                    }
                }
                miss &= !merged;
            }
            let t = self.op(op);
            t.load_sectors += mask.count_ones() as u64;
            t.l1_hits += hit.count_ones() as u64;
            t.l2_reads += miss.count_ones() as u64;
            t.l2_merged += merged.count_ones() as u64;
            if miss != 0 {
                let fetched = self.l2_read(line, miss);
                self.op(op).dram_reads += fetched;
            }
        }
    }

    /// A global atomic's distinct sectors: performed in L2, so no L1 lookup and no L1 -> L2 read
    /// or write sector (the H200 counted none for RED and ATOM), but a sector absent from L2 is
    /// read from DRAM first (the H200 read one DRAM sector per atomic sector of a fresh array)
    /// and the line is left dirty.
    fn atomic(&mut self, op: usize, sectors: &[i64]) {
        for (line, mask, run) in by_line(sectors) {
            for &s in run {
                // A sector first touched by an unproven access is not counted as compulsory.
                if self.touched.insert(s) && self.exact {
                    self.compulsory_sectors += 1;
                }
            }
            let fetched = self.l2_read(line, mask);
            let t = self.op(op);
            t.atomic_sectors += mask.count_ones() as u64;
            t.dram_reads += fetched;
            match self.l2_line(line) {
                Some(l) => l.dirty |= mask,
                None => self.dram_writes += mask.count_ones() as u64,
            }
        }
    }

    /// The L2 line, inserted (and a victim written back) when absent; `None` only for an L2
    /// of no capacity.
    fn l2_line(&mut self, line: i64) -> Option<&mut L2Line> {
        if !self.l2.contains(line) {
            if let Some((key, victim)) = self.l2.insert(line, L2Line::default()) {
                if key != line {
                    self.write_back(victim);
                }
            }
        }
        self.l2.get(line)
    }

    fn write_back(&mut self, victim: L2Line) {
        self.dram_writes += victim.dirty.count_ones() as u64;
        // A dirty sector with only some bytes written is completed from DRAM first.
        self.dram_merge_reads += (victim.dirty & !victim.valid).count_ones() as u64;
    }

    /// Sectors per DRAM granule (1, 2 or 4).
    fn granule_sectors(&self) -> u32 {
        (self.profile.dram_granule_bytes / self.profile.sector_bytes).clamp(1, 4)
    }

    /// Reads the `miss` sectors of `line` from L2; returns the DRAM sectors fetched: every
    /// granule holding a needed sector, less its sectors already present.
    fn l2_read(&mut self, line: i64, miss: u8) -> u64 {
        let per = self.granule_sectors();
        let Some(l) = self.l2_line(line) else {
            return granules(miss, per).count_ones() as u64;
        };
        let need = miss & !l.valid;
        if need == 0 {
            return 0;
        }
        let fetch = granules(need, per) & !l.valid;
        l.valid |= fetch;
        for s in 0..4 {
            if fetch & (1 << s) != 0 {
                l.partial[s] = 0;
            }
        }
        fetch.count_ones() as u64
    }

    fn store(&mut self, op: usize, addrs: &[i64], width: u32) {
        // Bytes written per sector.
        let mut masks = std::mem::take(&mut self.masks);
        masks.clear();
        for &a in addrs {
            let end = a + width as i64;
            let mut b = a;
            while b < end {
                let s = b.div_euclid(32);
                let lo = b - s * 32;
                let hi = end.min((s + 1) * 32) - s * 32;
                let m = if hi - lo >= 32 { u32::MAX } else { ((1u32 << (hi - lo)) - 1) << lo };
                masks.push((s, m));
                b = (s + 1) * 32;
            }
        }
        masks.sort_unstable_by_key(|p| p.0);
        let mut i = 0;
        while i < masks.len() {
            let (s, mut m) = masks[i];
            i += 1;
            while i < masks.len() && masks[i].0 == s {
                m |= masks[i].1;
                i += 1;
            }
            self.touched.insert(s);
            let t = self.op(op);
            t.store_sectors += 1;
            t.l2_writes += 1;
            if m != u32::MAX {
                self.partial_store_sectors += 1;
            }
            let line = s.div_euclid(SECTORS_PER_LINE);
            let bit = 1u8 << s.rem_euclid(SECTORS_PER_LINE);
            let idx = s.rem_euclid(SECTORS_PER_LINE) as usize;
            let Some(l) = self.l2_line(line) else {
                // No L2 to hold it: written straight through.
                self.dram_writes += 1;
                continue;
            };
            l.dirty |= bit;
            if l.valid & bit == 0 {
                l.partial[idx] |= m;
                if l.partial[idx] == u32::MAX {
                    l.valid |= bit;
                    l.partial[idx] = 0;
                }
            }
        }
        self.masks = masks;
    }

    /// Lines resident in L2 now (for tests and the sheet).
    pub fn l2_lines(&self) -> usize {
        self.l2.len()
    }

    /// The L2 line's state, without touching recency.
    pub fn l2_state(&self, line: i64) -> Option<L2Line> {
        self.l2.iter_mru().find(|(k, _)| *k == line).map(|(_, v)| *v)
    }
}

/// The multiplier and offset of round `round` of wave `wave` (`round`: the slots `round x SMs`
/// to `round x SMs + SMs - 1`): an affine permutation `x -> (a x + b) mod groups` of the merge
/// groups, `a` a unit modulo `groups`, both from a hash of the pair.
fn shuffle(groups: u64, wave: u64, round: u64) -> (u64, u64) {
    let mut h = LineHasher::default();
    h.write_u64(wave.wrapping_mul(0x9e37_79b9) ^ round);
    h.write_u64(round.wrapping_add(wave << 20));
    let x = h.finish();
    let units: Vec<u64> = (1..groups.max(2)).filter(|&a| gcd(a, groups) == 1).collect();
    let a = units.get((x % units.len().max(1) as u64) as usize).copied().unwrap_or(1);
    (a, (x >> 32) % groups.max(1))
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The SM of slot `slot` of a later wave (`wave` >= 1); without `shuffled` (profiles whose
/// placement was not measured) the round-robin turned by [`WAVE_ROTATION`] SMs. Later waves are placed dynamically (a
/// block goes to whichever SM frees a slot first, measured on the H200): consecutive blocks
/// still went to the two SMs of one TPC (`validate/results/reuse/probes/place.csv.gz`, the
/// second wave: 128, 129, 102, 103, 128, 129, 102, 103, 58, ...), but which TPC bore no fixed
/// relation to the block's place. So each round of a later wave (every SM's `r`-th block)
/// deals its merge groups in an order of their own, an affine permutation from a hash of the
/// wave and round: an SM's blocks of one wave are not a fixed stride apart (a fixed stride puts
/// every block of an SM in one column of a grid whose width divides it).
pub fn later_wave_sm(shuffled: bool, sms: u64, group: u64, wave: u64, slot: u64) -> u64 {
    let g = group.max(1);
    if !shuffled || !sms.is_multiple_of(g) {
        return (slot % sms + wave * WAVE_ROTATION) % sms;
    }
    let groups = sms / g;
    let (round, p) = (slot / sms, slot % sms);
    let (a, b) = shuffle(groups, wave, round);
    ((a * (p / g) + b) % groups) * g + p % g
}

/// The slot of a later wave's round `round` that [`later_wave_sm`] puts on SM `sm`.
pub fn later_wave_slot(shuffled: bool, sms: u64, group: u64, wave: u64, round: u64, sm: u64) -> u64 {
    let g = group.max(1);
    if !shuffled || !sms.is_multiple_of(g) {
        let turn = wave * WAVE_ROTATION % sms;
        return round * sms + (sm + sms - turn) % sms;
    }
    let groups = sms / g;
    let (a, b) = shuffle(groups, wave, round);
    let inv = (1..groups.max(2)).find(|&i| a * i % groups == 1 % groups).unwrap_or(1);
    let x = (sm / g + groups - b) % groups * inv % groups;
    round * sms + x * g + sm % g
}

/// Whether some loop of the kernel holds a barrier: its blocks wait for each other every
/// iteration, so blocks that start together stay in step.
pub fn loop_barrier(kernel: &Kernel) -> bool {
    use crate::ir::Stmt;
    fn has(b: &[Stmt], in_loop: bool) -> bool {
        b.iter().any(|s| match s {
            Stmt::Barrier { .. } => in_loop,
            Stmt::If { then, els, .. } => has(then, in_loop) || has(els, in_loop),
            Stmt::Loop { body, step, .. } => has(body, true) || has(step, true),
            _ => false,
        })
    }
    has(&kernel.body, false)
}

/// Blocks resident on one SM at once: the occupancy limit, or the grid spread over the SMs.
pub fn resident_together(p: &Profile, o: &Occupancy, blocks: u64) -> u64 {
    (o.resident_blocks as u64).min(blocks.div_ceil(p.sms.max(1) as u64)).max(1)
}

/// Sector bits of the granules (of `per` sectors) that hold a sector of `mask`.
fn granules(mask: u8, per: u32) -> u8 {
    let per = per as usize;
    let mut out = 0u8;
    for k in 0..(4 / per) {
        let gm = (((1u16 << per) - 1) << (k * per)) as u8;
        if mask & gm != 0 {
            out |= gm;
        }
    }
    out
}

/// Numbers per page of a [`SectorSet`] (one bit each).
const PAGE: i64 = 256;

/// A set of sector numbers: a bitmap per page of 256 consecutive numbers. A kernel's sectors
/// cluster, so consecutive inserts land in a page already in cache.
#[derive(Default)]
pub struct SectorSet {
    pages: FastMap<i64, [u64; (PAGE / 64) as usize]>,
    len: u64,
}

impl SectorSet {
    /// Adds `s`; whether it was new.
    pub fn insert(&mut self, s: i64) -> bool {
        let page = self.pages.entry(s.div_euclid(PAGE)).or_default();
        let bit = s.rem_euclid(PAGE);
        let (word, mask) = (&mut page[(bit / 64) as usize], 1u64 << (bit % 64));
        let new = *word & mask == 0;
        *word |= mask;
        self.len += new as u64;
        new
    }
    pub fn len(&self) -> u64 {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests;
