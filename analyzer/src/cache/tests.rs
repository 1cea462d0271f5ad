//! The cache model on tiny caches, every number worked by hand.

use super::*;
use crate::gpu::{Profile, PROFILES};

/// Two SMs, an L1 of 2 lines (256 B, no carveout) per SM, an L2 of 2 lines, 64-byte granules.
const TINY_PROFILE: Profile = Profile {
    name: "tiny",
    description: "test",
    sms: 2,
    l2_bytes: 256,
    l2_model_bytes: 256,
    l1_shared_bytes: 256,
    shared_carveouts_kib: &[0],
    fixed_l1_bytes: None,
    reserved_shared_per_block: 0,
    sector_bytes: 32,
    line_bytes: 128,
    dram_granule_bytes: 64,
    max_blocks_per_sm: 1,
    max_threads_per_sm: 1024,
    l1_caches_global_loads: true,
    launch_dram_read_sectors: 0,
    launch_dram_read_sectors_min: 0,
    merge_group_sms: 1,
    run_blocks: 0,
    run_merge_sms: 0,
    dealing: crate::gpu::Dealing::RoundRobin,
    source: "test",
};
static TINY: Profile = TINY_PROFILE;

/// TINY with its two SMs in one merge group.
static TINY_MERGE: Profile = Profile { name: "tiny-merge", merge_group_sms: 2, ..TINY_PROFILE };

fn tiny() -> CacheModel {
    CacheModel::with_profile(&TINY, 32, 0, 4, 2)
}

/// One access, replayed at once (the model buffers a block's accesses until `flush`).
fn acc(m: &mut CacheModel, op: usize, kind: AccessKind, cache: CacheOp, sectors: &[i64], addrs: &[i64]) {
    m.access(op, kind, cache, sectors, addrs, 4);
    m.flush();
}

fn load(m: &mut CacheModel, sectors: &[i64]) {
    acc(m, 0, AccessKind::Load, CacheOp::Default, sectors, &[]);
}

#[test]
fn lru_evicts_least_recently_used() {
    let mut l: Lru<u8> = Lru::new(2);
    assert_eq!(l.insert(10, 1), None);
    assert_eq!(l.insert(20, 2), None);
    assert_eq!(l.get(10).copied(), Some(1)); // 10 is now the most recent
    assert_eq!(l.insert(30, 3), Some((20, 2)));
    assert!(l.contains(10) && l.contains(30) && !l.contains(20));
    assert_eq!(l.insert(40, 4), Some((10, 1)));
    assert_eq!(l.iter_mru().map(|(k, _)| k).collect::<Vec<_>>(), vec![40, 30]);
    let mut none: Lru<u8> = Lru::new(0);
    assert_eq!(none.insert(1, 1), Some((1, 1)));
    assert!(none.is_empty());
}

#[test]
fn l1_hits_within_an_sm_and_granule_fetches() {
    let mut m = tiny();
    m.begin_block(0); // SM 0
    load(&mut m, &[0, 1, 2, 3]); // line 0 cold: 4 L1 misses, 4 L2 reads, 2 granules = 4 DRAM
    load(&mut m, &[0, 1, 2, 3]); // 4 L1 hits
    load(&mut m, &[4]); // line 1 sector 0: 1 miss, granule {4,5}: 2 DRAM sectors
    let t = m.ops[0];
    assert_eq!((t.l1_hits, t.l2_reads, t.dram_reads), (4, 5, 6));
    m.begin_block(1); // SM 1: its own cold L1
    load(&mut m, &[5]); // L1 miss; L2 has sector 5 from the granule: no DRAM read
    let t = m.ops[0];
    assert_eq!((t.l1_hits, t.l2_reads, t.dram_reads), (4, 6, 6));
    m.begin_block(2); // next wave, turned by 61 SMs: SM 1, which holds line 1 only
    load(&mut m, &[0]);
    let t = m.ops[0];
    assert_eq!((t.l1_hits, t.l2_reads, t.dram_reads), (4, 7, 6));
    m.begin_block(3); // SM 0, which still holds line 0 from block 0
    load(&mut m, &[0]);
    assert_eq!(m.ops[0].l1_hits, 5);
    assert_eq!(m.compulsory_sectors, 6);
    assert_eq!(m.distinct_loaded, 6);
}

#[test]
fn capacity_misses_in_l1_and_l2() {
    let mut m = tiny();
    m.begin_block(0);
    load(&mut m, &[0]); // L1 {0}, L2 {0}; DRAM 2
    load(&mut m, &[4]); // L1 {1,0}, L2 {1,0}; DRAM 2
    load(&mut m, &[8]); // evicts line 0 from both: DRAM 2
    load(&mut m, &[0]); // L1 miss, L2 miss (line 0 was evicted): DRAM 2 again
    let t = m.ops[0];
    assert_eq!((t.l1_hits, t.l2_reads, t.dram_reads), (0, 4, 8));
    assert_eq!(m.compulsory_sectors, 3);
    load(&mut m, &[0]); // L1 hit now
    assert_eq!(m.ops[0].l1_hits, 1);
    assert_eq!(m.dram_writes, 0); // nothing dirty was evicted
}

#[test]
fn cg_bypasses_l1() {
    let mut m = tiny();
    m.begin_block(0);
    acc(&mut m, 0, AccessKind::Load, CacheOp::Cg, &[0], &[]);
    acc(&mut m, 0, AccessKind::Load, CacheOp::Cg, &[0], &[]); // misses L1 again, hits L2
    let t = m.ops[0];
    assert_eq!((t.l1_hits, t.l2_reads, t.dram_reads), (0, 2, 2));
    load(&mut m, &[0]); // a default load allocates: miss, then hit
    load(&mut m, &[0]);
    assert_eq!(m.ops[0].l1_hits, 1);
}

#[test]
fn stores_write_back_and_partial_sectors() {
    let mut m = tiny();
    m.begin_block(0);
    // 8 lanes x 4 bytes from byte 0: sector 0 written whole; no DRAM read, no L1 allocation.
    let full: Vec<i64> = (0..8).map(|l| l * 4).collect();
    acc(&mut m, 1, AccessKind::Store, CacheOp::Default, &[0], &full);
    load(&mut m, &[0]); // L1 miss, L2 hit on the written sector: no DRAM read
    assert_eq!((m.ops[0].l1_hits, m.ops[0].l2_reads, m.ops[0].dram_reads), (0, 1, 0));
    assert_eq!(m.ops[1].l2_writes, 1);
    assert_eq!(m.partial_store_sectors, 0);
    // A 4-byte store to sector 4 (line 1): partial, dirty.
    acc(&mut m, 1, AccessKind::Store, CacheOp::Default, &[4], &[128]);
    assert_eq!(m.partial_store_sectors, 1);
    let l = m.l2_state(1).unwrap();
    assert_eq!((l.valid, l.dirty, l.partial[0]), (0, 1, 0xf));
    // Two more lines evict line 0 (dirty sector 0: 1 write) and line 1 (partial: 1 merge read
    // and 1 write).
    load(&mut m, &[8]);
    load(&mut m, &[12]);
    assert_eq!((m.dram_writes, m.dram_merge_reads), (2, 1));
    // Compulsory: sector 0 was written before it was read, so it is not compulsory.
    assert_eq!(m.compulsory_sectors, 2);
}

#[test]
fn partial_sector_then_load_reads_dram() {
    let mut m = tiny();
    m.begin_block(0);
    acc(&mut m, 1, AccessKind::Store, CacheOp::Default, &[0], &[0]);
    load(&mut m, &[0]); // the sector is not all there: its granule {0,1} comes from DRAM
    assert_eq!(m.ops[0].dram_reads, 2);
    let l = m.l2_state(0).unwrap();
    assert_eq!((l.valid, l.dirty, l.partial[0]), (0b11, 1, 0));
}

#[test]
fn budget_switches_to_counting() {
    let mut m = tiny();
    m.budget = 2;
    m.begin_block(0);
    load(&mut m, &[0, 1]);
    assert!(m.sampled());
    m.begin_block(1);
    load(&mut m, &[4, 5, 6]);
    assert_eq!(m.ops[0].rest_load_sectors, 3);
    assert_eq!((m.blocks, m.simulated_blocks), (2, 1));
}

#[test]
fn every_profile_has_sane_sizes() {
    for p in PROFILES {
        assert_eq!((p.sector_bytes, p.line_bytes), (32, 128), "{}", p.name);
        assert!(p.l2_model_bytes <= p.l2_bytes && p.l2_model_bytes >= 128 && p.sms > 0, "{}", p.name);
        let o = p.occupancy(256, 0);
        assert!(o.l1_bytes > 0 && o.resident_blocks > 0, "{}", p.name);
    }
}

#[test]
fn resident_blocks_form_waves() {
    let h = &PROFILES[0];
    // 256 threads: 8 resident per SM when the grid fills them; 64 blocks: one per SM.
    assert_eq!(CacheModel::with_profile(h, 256, 0, 4096, 1).together, 8);
    assert_eq!(CacheModel::with_profile(h, 256, 0, 64, 1).together, 1);
    assert_eq!(CacheModel::with_profile(h, 256, 0, 300, 1).together, 3);
    // TINY: 2 SMs, one block each: blocks 0 and 1 form a wave and are interleaved; block 2
    // starts the next wave, on SM 1 (each wave is turned by 61 SMs).
    let mut m = tiny();
    m.begin_block(0);
    m.begin_warp();
    m.access(0, AccessKind::Load, CacheOp::Default, &[0], &[], 4);
    m.access(0, AccessKind::Load, CacheOp::Default, &[4], &[], 4);
    m.begin_block(1);
    m.begin_warp();
    m.access(0, AccessKind::Load, CacheOp::Default, &[0], &[], 4);
    assert_eq!(m.ops[0].l2_reads, 0); // the wave is still buffered
    m.begin_block(2); // replays blocks 0 and 1: SM 0 reads 0 and 4, SM 1 reads 0 (an L2 hit)
    assert_eq!((m.ops[0].l2_reads, m.ops[0].dram_reads), (3, 4));
    m.begin_warp();
    m.access(0, AccessKind::Load, CacheOp::Default, &[0], &[], 4);
    m.flush(); // the next wave is turned by 61 SMs: block 2 runs on SM 1, which read line 0 for block 1
    assert_eq!((m.ops[0].l1_hits, m.ops[0].l2_reads, m.ops[0].dram_reads), (1, 3, 4));
}

/// Two SMs of one merge group: block 0 on SM 0, block 1 on SM 1, each one warp reading the
/// given sectors in order.
fn two_sms(sync: u32, a: &[i64], b: &[i64]) -> OpTraffic {
    let mut m = CacheModel::with_profile(&TINY_MERGE, 32, 0, 2, 1);
    m.sync_accesses = sync;
    for (block, ss) in [(0, a), (1, b)] {
        m.begin_block(block);
        m.begin_warp();
        for &s in ss {
            m.access(0, AccessKind::Load, CacheOp::Default, &[s], &[], 4);
        }
    }
    m.flush();
    m.ops[0]
}

#[test]
fn misses_of_a_group_merge_in_step() {
    // Both SMs miss sector 0 at their first access: one L2 read, one merged.
    let t = two_sms(10, &[0], &[0]);
    assert_eq!((t.l1_hits, t.l2_reads, t.l2_merged), (0, 1, 1));
    // At different steps (SM 1 reads sector 0 second): no merge; the second is an L2 hit.
    let t = two_sms(10, &[0, 4], &[4, 0]);
    assert_eq!((t.l2_reads, t.l2_merged), (4, 0));
    // Past the in-step window (warps older than 0 accesses): no merge.
    let t = two_sms(0, &[0], &[0]);
    assert_eq!((t.l2_reads, t.l2_merged), (2, 0));
    // Without a merge group (TINY): no merge either.
    let mut m = tiny();
    for block in [0, 1] {
        m.begin_block(block);
        m.begin_warp();
        m.access(0, AccessKind::Load, CacheOp::Default, &[0], &[], 4);
    }
    m.flush();
    assert_eq!((m.ops[0].l2_reads, m.ops[0].l2_merged), (2, 0));
}

#[test]
fn units_are_waves_times_groups() {
    let h = &PROFILES[0];
    // 256-thread blocks: 8 per SM, 1,056 per wave, 66 groups of 2 SMs (the TPCs).
    let m = CacheModel::with_profile(h, 256, 0, 10_000, 1);
    assert_eq!((m.per_wave(), m.groups()), (1056, 66));
    assert_eq!(m.unit_of(0), (0, 0));
    assert_eq!(m.unit_of(131), (0, 65)); // SM 131
    assert_eq!(m.unit_of(132 + 5), (0, 2)); // SM 5
                                            // Later waves: every round of 132 blocks on all 132 SMs, consecutive pairs on one TPC.
    for wave in 1..3u64 {
        let sms: std::collections::BTreeSet<u64> = (0..132).map(|p| m.sm_of(wave * 1056 + 264 + p)).collect();
        assert_eq!(sms.len(), 132);
        for p in (0..132).step_by(2) {
            let b = wave * 1056 + p;
            assert_eq!(m.unit_of(b), m.unit_of(b + 1));
            assert_eq!(m.unit_of(b).0, wave);
        }
    }
}

/// A kernel whose blocks all behave alike: each block's 8 warps read the same 32 floats
/// (one line) per step, 64 steps, block b its own rows.
const ALIKE: &str = r#"
__global__ void alike(const float *a, float *out) {
    float s = 0.0f;
    for (int i = 0; i < 64; ++i) {
        s += a[(blockIdx.x * 64 + i) * 32 + (threadIdx.x & 31)];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
"#;

#[test]
fn sampled_units_keep_the_ratios_of_alike_waves() {
    let opts = crate::analyze::AnalyzeOptions { grid: "20000".into(), block: "256".into(), ..Default::default() };
    let (kernel, setup) = crate::analyze::prepare(
        crate::analyze::Input::Source { name: "alike.cu", text: ALIKE },
        &opts,
        &crate::source::NoFiles,
    )
    .unwrap();
    let trace = crate::engine::run(&kernel, &setup).unwrap();
    let full = sample::stream(&kernel, &setup, &trace, u64::MAX).unwrap();
    assert!(full.sample.is_none());
    let part = sample::stream(&kernel, &setup, &trace, trace.work / 10).unwrap();
    let s = part.sample.expect("sampled");
    assert!(s.units < s.total_units && s.waves < s.total_waves, "{s:?}");
    // Per block: 64 lines of 4 sectors, each read by 8 warps at once: 256 misses, 1,792 hits.
    for m in [&full, &part] {
        let t = m.ops[0];
        assert_eq!(t.load_sectors % 2048, 0);
        assert_eq!((t.l1_hits * 8, (t.l2_reads + t.l2_merged) * 8), (t.load_sectors * 7, t.load_sectors));
    }
}

#[test]
fn warps_of_a_block_are_interleaved() {
    // Two warps each read lines 0, 1, 2 (one sector each) through a 2-line L1. Run one after
    // the other, LRU keeps nothing the second warp needs; interleaved, the second warp reads
    // each line right after the first: 3 hits.
    let mut m = tiny();
    m.begin_block(0);
    for _ in 0..2 {
        m.begin_warp();
        for s in [0, 4, 8] {
            m.access(0, AccessKind::Load, CacheOp::Default, &[s], &[], 4);
        }
    }
    assert_eq!(m.ops[0].l1_hits, 0); // still buffered
    m.flush();
    assert_eq!((m.ops[0].l1_hits, m.ops[0].l2_reads), (3, 3));
    // The same sequence with a flush after every access (warp after warp): no hits.
    let mut m = tiny();
    m.begin_block(0);
    for _ in 0..2 {
        for s in [0, 4, 8] {
            load(&mut m, &[s]);
        }
    }
    assert_eq!((m.ops[0].l1_hits, m.ops[0].l2_reads), (0, 6));
}

#[test]
fn atomics_are_performed_in_l2() {
    // The H200 counted no L1 lookup and no L1 -> L2 read or write sector for RED and ATOM, and
    // read one DRAM sector per atomic sector of a fresh array.
    let mut m = tiny();
    m.begin_block(0);
    acc(&mut m, 1, AccessKind::Red, CacheOp::Default, &[0, 1, 2, 3], &[]);
    let t = m.ops[1];
    assert_eq!((t.l1_hits, t.l2_reads, t.l2_writes, t.atomic_sectors, t.dram_reads), (0, 0, 0, 4, 4));
    assert_eq!(m.compulsory_sectors, 4);
    // The same line again: in L2 now, no DRAM read.
    acc(&mut m, 1, AccessKind::Atom, CacheOp::Default, &[1], &[]);
    assert_eq!((m.ops[1].atomic_sectors, m.ops[1].dram_reads), (5, 4));
    // A load of it misses L1 (the atomics never allocated there) and hits L2.
    load(&mut m, &[2]);
    assert_eq!((m.ops[0].l1_hits, m.ops[0].l2_reads, m.ops[0].dram_reads), (0, 1, 0));
    // Two new lines push line 0 out of the 2-line L2: its 4 dirty sectors are written back.
    load(&mut m, &[4]);
    load(&mut m, &[8]);
    assert_eq!(m.dram_writes, 4);
}

/// Eight SMs, one block each, runs of 4 consecutive blocks, one L2 read per 2 SMs of a run.
static TINY_RUNS: Profile = Profile {
    name: "tiny-runs",
    sms: 8,
    run_blocks: 4,
    run_merge_sms: 2,
    l2_bytes: 1024,
    l2_model_bytes: 1024,
    ..TINY_PROFILE
};

/// Blocks 0..16 (two waves of 8): every block of wave `w` loads sector `first[w]` at its first access.
fn runs(in_step: bool, first: [i64; 2]) -> OpTraffic {
    let mut m = CacheModel::with_profile(&TINY_RUNS, 32, 0, 16, 1);
    m.in_step_runs = in_step;
    m.sync_accesses = 0; // the TPC rule's young window is over at once: runs ignore it
    for block in 0..16 {
        m.begin_block(block);
        m.begin_warp();
        m.access(0, AccessKind::Load, CacheOp::Default, &[first[block as usize / 8]], &[], 4);
    }
    m.flush();
    m.ops[0]
}

#[test]
fn runs_of_blocks_in_step_merge_per_cap_in_the_first_wave() {
    // Wave 0: runs {0..3} and {4..7}, 4 SMs each missing sector 0 at step 0: 2 L2 reads per
    // run (2 SMs per read), 4 merged. Wave 1 (sector 8, not in any L1): no runs after the
    // first wave and no merge group: 8 L2 reads. 16 L1 misses in all, no hits.
    let t = runs(true, [0, 8]);
    assert_eq!((t.l1_hits, t.l2_reads, t.l2_merged), (0, 4 + 8, 4));
    // Kernels without a barrier in a loop: every miss reaches L2.
    let t = runs(false, [0, 8]);
    assert_eq!((t.l1_hits, t.l2_reads, t.l2_merged), (0, 16, 0));
}

fn lowered(text: &str) -> Kernel {
    let mut files = crate::SourceFiles::default();
    let input = crate::Input::Source { name: "k.cu", text };
    let opts = crate::AnalyzeOptions::default();
    let mut m = crate::analyze::lower(&input, &opts, &crate::source::NoFiles, &mut files).expect("lowers");
    m.kernels.remove(0)
}

#[test]
fn loop_barrier_needs_a_barrier_inside_a_loop() {
    let once = "__global__ void k(float *a) { __shared__ float s[32]; s[threadIdx.x] = a[threadIdx.x]; \
                __syncthreads(); a[threadIdx.x] = s[31 - threadIdx.x]; }";
    assert!(!loop_barrier(&lowered(once)));
    let tiled = "__global__ void k(float *a, int n) { __shared__ float s[32]; float t = 0; \
                 for (int i = 0; i < n; ++i) { s[threadIdx.x] = a[i * 32 + threadIdx.x]; __syncthreads(); \
                 if (threadIdx.x == 0) t += s[5]; __syncthreads(); } a[threadIdx.x] = t; }";
    assert!(loop_barrier(&lowered(tiled)));
}

#[test]
fn later_waves_keep_tpc_pairs_and_invert() {
    // Every round of a later wave puts one block on each SM, consecutive slots 2k, 2k+1 on the
    // two SMs of one TPC, and `later_wave_slot` finds the slot again.
    for wave in 1..4u64 {
        for round in 0..3u64 {
            let mut seen = [false; 132];
            for p in 0..132u64 {
                let slot = round * 132 + p;
                let sm = super::later_wave_sm(true, 132, 2, wave, slot);
                assert!(!seen[sm as usize], "wave {wave} round {round}: SM {sm} twice");
                seen[sm as usize] = true;
                assert_eq!(sm % 2, p % 2);
                if p % 2 == 1 {
                    assert_eq!(sm - 1, super::later_wave_sm(true, 132, 2, wave, slot - 1));
                }
                assert_eq!(super::later_wave_slot(true, 132, 2, wave, round, sm), slot);
            }
        }
    }
    // An SM's blocks of one wave are not a fixed stride apart: with 8 rounds, a grid 12 blocks
    // wide (12 divides 132) puts them in more than one column.
    let cols: std::collections::BTreeSet<u64> =
        (0..8).map(|r| (1056 + super::later_wave_slot(true, 132, 2, 1, r, 0)) % 12).collect();
    assert!(cols.len() > 1, "{cols:?}");
}
