//! GPU profiles for the cache model: the sizes that decide what reaches L2 and DRAM.
//!
//! Sources (the table "GPU profiles" in `docs/src/boundaries.md`): the H200 numbers were read on
//! the device; the RTX 3060 Ti, RTX 2080 Ti and Tesla P4 numbers are the seed lessons' (`000_`,
//! `004_`; the P4's 20 SMs are the GP104 part's, which the seed does not give);
//! H100 and A100 are NVIDIA's published sizes for the SXM parts.

/// One GPU as the cache model sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    /// The `--gpu` name.
    pub name: &'static str,
    pub description: &'static str,
    pub sms: u32,
    pub l2_bytes: u64,
    /// The capacity the model gives L2. On the H200, data survived in L2 between two reads
    /// only while less than about two thirds of `l2_bytes` came between them (the L2 is two
    /// partitions; some lines take room in both): the model's LRU L2 gets that two thirds.
    pub l2_model_bytes: u64,
    /// L1 data cache and shared memory together, per SM (one SRAM split by the carveout).
    pub l1_shared_bytes: u64,
    /// Shared-memory sizes the carveout can take, per SM, in KiB, smallest first. The L1 gets
    /// the rest of `l1_shared_bytes`.
    pub shared_carveouts_kib: &'static [u32],
    /// Where L1 and shared memory are separate SRAMs (Pascal): the L1 size, whatever the
    /// shared-memory use.
    pub fixed_l1_bytes: Option<u64>,
    /// Shared memory the driver reserves per resident block (1 KiB since sm_80).
    pub reserved_shared_per_block: u64,
    pub sector_bytes: u32,
    pub line_bytes: u32,
    /// Smallest DRAM read: an L2 read miss fetches this aligned granule.
    pub dram_granule_bytes: u32,
    pub max_blocks_per_sm: u32,
    pub max_threads_per_sm: u32,
    /// Whether ordinary global loads allocate in L1 (Pascal caches only `__ldg` loads there).
    pub l1_caches_global_loads: bool,
    /// DRAM read sectors a launch costs besides its own loads (code, parameters); measured
    /// on the H200, 0 where not measured.
    pub launch_dram_read_sectors: u64,
    /// The fewest of those seen on one launch (the DRAM-read lower bound uses it): the H200
    /// read 80 to 88 over 144 launches.
    pub launch_dram_read_sectors_min: u64,
    /// SMs (consecutive ids: the two SMs of a TPC on the H200) whose L1 misses to one sector in
    /// the same step reach L2 once. Measured on the H200 by `%smid` (`validate/probes/reuse/
    /// topo.cu`): SMs 0 and 1 (2 and 3, 64 and 65, ...) reading the same lines cost one SM's L2
    /// reads, even with one of them started 10 us late (1.2 SMs' worth; 30 us: 1.6), while SMs
    /// 0 and 2 (0 and 3, 1 and 2, 3 and 4, ...) cost two; SMs 0-3 cost two. SMs of different
    /// TPCs merged too where few SMs ran (0, 16, 32 and 48 as one; 0 and 124), but not with
    /// every SM busy (all 132 cost 35 SMs' reads; 16 of them 10), so the model leaves that out.
    /// 1: no merging across SMs (not measured).
    pub merge_group_sms: u32,
    /// Consecutive blocks of the first wave dealt to one GPC (0: not known, no merging across
    /// TPCs). On the H200 (`validate/results/reuse/probes/place.csv.gz`) blocks 0-15 went to
    /// SMs 124-131, 0, 1, 16, 17, 32, 33, 48, 49, blocks 16-31 to 2, 3, 18, 19, 34, 35, 50, 51,
    /// 64, 65, 78, 79, 92, 93, 106, 107, and so on; the GPC probe (`validate/probes/reuse/
    /// gpc.sh`, `validate/results/products/probes/gpc.csv`) showed each such set of SMs to be
    /// one merge domain (SM 0 merged with 16, 32, 48, 124, 126, 128 and 130, even 3 us apart,
    /// not with 2, 18, 34, 50 or 64) and no two SMs of different runs to merge.
    pub run_blocks: u32,
    /// SMs whose misses to one sector one L2 read of a GPC serves at most: 4 SMs of a GPC
    /// cost one SM's L2 reads, 8 two, 16 four (SMs 0, 16, 32, 48: 1.0; 124-131: 2.1; 0-63, 8
    /// SMs in each of 8 GPCs: 16.4; 64-119: 14.2; 0-131: 35.0, with or without other traffic).
    pub run_merge_sms: u32,
    /// How the first wave's blocks are dealt to SMs.
    pub dealing: Dealing,
    /// Where the numbers come from, for the sheet.
    pub source: &'static str,
}

const KIB: u64 = 1024;

/// Every profile `--gpu` accepts.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "h200",
        description: "NVIDIA H200 (sm_90)",
        sms: 132,
        l2_bytes: 62_914_560,
        l2_model_bytes: 41_943_040,
        l1_shared_bytes: 256 * KIB,
        shared_carveouts_kib: &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
        fixed_l1_bytes: None,
        reserved_shared_per_block: KIB,
        sector_bytes: 32,
        line_bytes: 128,
        dram_granule_bytes: 64,
        max_blocks_per_sm: 32,
        max_threads_per_sm: 2048,
        l1_caches_global_loads: true,
        launch_dram_read_sectors: 88,
        launch_dram_read_sectors_min: 80,
        merge_group_sms: 2,
        run_blocks: 16,
        run_merge_sms: 4,
        dealing: Dealing::Shuffled,
        source: "read on the H200 (132 SMs, L2 62,914,560 bytes, 256 KiB L1+shared per SM); 64-byte DRAM granule, 88 sectors per launch and reuse in L2 up to two thirds of its size measured there",
    },
    Profile {
        name: "h100",
        description: "NVIDIA H100 SXM (sm_90)",
        sms: 132,
        l2_bytes: 52_428_800,
        l2_model_bytes: 34_952_533,
        l1_shared_bytes: 256 * KIB,
        shared_carveouts_kib: &[0, 8, 16, 32, 64, 100, 132, 164, 196, 228],
        fixed_l1_bytes: None,
        reserved_shared_per_block: KIB,
        sector_bytes: 32,
        line_bytes: 128,
        dram_granule_bytes: 64,
        max_blocks_per_sm: 32,
        max_threads_per_sm: 2048,
        l1_caches_global_loads: true,
        launch_dram_read_sectors: 88,
        launch_dram_read_sectors_min: 80,
        merge_group_sms: 2,
        run_blocks: 16,
        run_merge_sms: 4,
        dealing: Dealing::RoundRobin,
        source: "NVIDIA's H100 SXM sizes (132 SMs, 50 MiB L2); granule, per-launch reads and the two-thirds L2 as measured on the H200 (same sm_90 memory system)",
    },
    Profile {
        name: "a100",
        description: "NVIDIA A100 SXM (sm_80)",
        sms: 108,
        l2_bytes: 41_943_040,
        l2_model_bytes: 27_962_026,
        l1_shared_bytes: 192 * KIB,
        shared_carveouts_kib: &[0, 8, 16, 32, 64, 100, 132, 164],
        fixed_l1_bytes: None,
        reserved_shared_per_block: KIB,
        sector_bytes: 32,
        line_bytes: 128,
        dram_granule_bytes: 64,
        max_blocks_per_sm: 32,
        max_threads_per_sm: 2048,
        l1_caches_global_loads: true,
        launch_dram_read_sectors: 0,
        launch_dram_read_sectors_min: 0,
        merge_group_sms: 1,
        run_blocks: 0,
        run_merge_sms: 0,
        dealing: Dealing::RoundRobin,
        source: "NVIDIA's A100 SXM sizes (108 SMs, 40 MiB L2 in two partitions, 192 KiB L1+shared per SM); L2 model capacity two thirds of it as on the H200; not measured",
    },
    Profile {
        name: "rtx3060ti",
        description: "NVIDIA GeForce RTX 3060 Ti (sm_86)",
        sms: 38,
        l2_bytes: 3 * 1024 * KIB,
        l2_model_bytes: 3 * 1024 * KIB,
        l1_shared_bytes: 128 * KIB,
        shared_carveouts_kib: &[0, 8, 16, 32, 64, 100],
        fixed_l1_bytes: None,
        reserved_shared_per_block: KIB,
        sector_bytes: 32,
        line_bytes: 128,
        dram_granule_bytes: 32,
        max_blocks_per_sm: 16,
        max_threads_per_sm: 1536,
        l1_caches_global_loads: true,
        launch_dram_read_sectors: 0,
        launch_dram_read_sectors_min: 0,
        merge_group_sms: 1,
        run_blocks: 0,
        run_merge_sms: 0,
        dealing: Dealing::RoundRobin,
        source: "the seed's RTX 3060 Ti (38 SMs, 128 KiB L1+shared per SM, 3 MB L2); GDDR6 read granule assumed 32 bytes",
    },
    Profile {
        name: "rtx2080ti",
        description: "NVIDIA GeForce RTX 2080 Ti (sm_75)",
        sms: 68,
        l2_bytes: 5_767_168,
        l2_model_bytes: 5_767_168,
        l1_shared_bytes: 96 * KIB,
        shared_carveouts_kib: &[32, 64],
        fixed_l1_bytes: None,
        reserved_shared_per_block: 0,
        sector_bytes: 32,
        line_bytes: 128,
        dram_granule_bytes: 32,
        max_blocks_per_sm: 16,
        max_threads_per_sm: 1024,
        l1_caches_global_loads: true,
        launch_dram_read_sectors: 0,
        launch_dram_read_sectors_min: 0,
        merge_group_sms: 1,
        run_blocks: 0,
        run_merge_sms: 0,
        dealing: Dealing::RoundRobin,
        source: "the seed's RTX 2080 Ti (68 SMs, 64 KiB L1, 5.5 MB L2); 96 KiB L1+shared split 64/32; GDDR6 read granule assumed 32 bytes",
    },
    Profile {
        name: "tesla-p4",
        description: "NVIDIA Tesla P4 (sm_61)",
        sms: 20,
        l2_bytes: 2 * 1024 * KIB,
        l2_model_bytes: 2 * 1024 * KIB,
        l1_shared_bytes: 48 * KIB,
        shared_carveouts_kib: &[0],
        fixed_l1_bytes: Some(48 * KIB),
        reserved_shared_per_block: 0,
        sector_bytes: 32,
        line_bytes: 128,
        dram_granule_bytes: 32,
        max_blocks_per_sm: 32,
        max_threads_per_sm: 2048,
        l1_caches_global_loads: false,
        launch_dram_read_sectors: 0,
        launch_dram_read_sectors_min: 0,
        merge_group_sms: 1,
        run_blocks: 0,
        run_merge_sms: 0,
        dealing: Dealing::RoundRobin,
        source: "the seed's Tesla P4 (48 KB L1 per SM, 2 MB L2; 20 SMs of the GP104 part); Pascal keeps shared memory apart and caches only __ldg loads in L1; GDDR5 read granule assumed 32 bytes",
    },
];

/// The profile named `name`, or a message listing the known ones.
pub fn lookup(name: &str) -> Result<&'static Profile, String> {
    PROFILES
        .iter()
        .find(|p| p.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| format!("--gpu {name}: unknown GPU profile; known profiles are {}", names().join(", ")))
}

pub fn names() -> Vec<&'static str> {
    PROFILES.iter().map(|p| p.name).collect()
}

/// How the blocks of a launch's first wave are dealt to SMs (breadth first: every SM gets a
/// block before any gets another, up to the blocks resident at once).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dealing {
    /// Block `b` of a wave on SM `b mod SMs`, later waves turned by
    /// [`crate::cache::WAVE_ROTATION`] SMs (not measured).
    RoundRobin,
    /// The first wave round-robin, later waves shuffled per round of the wave
    /// ([`crate::cache::later_wave_sm`]): on the H200 a later wave's blocks went to whichever
    /// SM freed a slot first, consecutive blocks to the two SMs of one TPC, the TPCs in no fixed
    /// order. The model of the H200.
    Shuffled,
    /// The H200's dealing, measured by `%smid` (`validate/results/reuse/probes/place.csv.gz`:
    /// 3,168 blocks of 256 threads, 8,448 of 32, 528 of 1,024, 1,024 of 256) and reproduced
    /// block for block by [`Dealing::order`] on every full first wave measured. Its SMs form
    /// 8 GPCs ([`h200_gpc`]), the merge domains the GPC probe found; blocks are dealt GPC by
    /// GPC, one block to each SM of the GPC (TPC mates together), the GPCs in a fixed cycle of
    /// 124 SMs, while the 8 SMs 124-131 (half of GPC 0) are dealt 8 blocks at a time more
    /// often: first, then after 72 blocks of the cycle, then after every 92, 92, 98 and 90
    /// (4 such turns per 3 cycles; an SM there got a block every 80 to 106 blocks, one of the
    /// cycle every 132 to 140). Every SM's blocks of one wave are thus 80 to 140 apart in
    /// launch order, not a fixed 132: a grid 12, 24 or 48 blocks wide puts blocks of several
    /// columns on one SM, as the H200 did. Later waves as [`Dealing::Shuffled`]. Not the H200
    /// profile's default: with it, 147 of the 165 validated launches had L2 reads within 10%,
    /// against 148 with the first wave round-robin (the single-wave naive 512^3 product with
    /// 16 x 16 blocks moved from -0.4% to -15%: the in-step window `SYNC_WORK` was fitted with
    /// round-robin placement).
    H200,
}

/// The GPC of H200 SM `sm` (the merge domains of `validate/results/products/probes/gpc.csv`
/// and the runs of [`Dealing::H200`]): SMs 0-63 by TPC modulo 8 (GPC 0 holds 0, 1, 16, 17,
/// 32, 33, 48, 49), SMs 64-119 by TPC modulo 7 into GPCs 1-7, 120-121 in GPC 6, 122-123 in
/// GPC 7, 124-131 in GPC 0: six GPCs of 16 SMs and two of 18.
pub fn h200_gpc(sm: u32) -> u32 {
    match sm {
        124.. => 0,
        122..=123 => 7,
        120..=121 => 6,
        64..=119 => 1 + (sm - 64) / 2 % 7,
        _ => sm / 2 % 8,
    }
}

impl Dealing {
    /// The SM of each block of a wave of `together` blocks on each of `sms` SMs, in launch
    /// order (a wave's `sms x together` slots).
    pub fn order(self, sms: u32, together: u32) -> Vec<u32> {
        let sms = sms.max(1);
        let together = together.max(1);
        let slots = sms as usize * together as usize;
        match self {
            Dealing::H200 if sms == 132 => {
                // The cycle of 124 SMs: GPC by GPC, ascending SM ids within one, 120-123 last.
                let mut cycle: Vec<u32> = (0..124).collect();
                cycle.sort_by_key(|&s| (h200_gpc(s), s >= 120, s));
                let mut held = vec![0u32; sms as usize];
                let mut out = Vec::with_capacity(slots);
                let put = |s: u32, held: &mut Vec<u32>, out: &mut Vec<u32>| {
                    if held[s as usize] < together {
                        held[s as usize] += 1;
                        out.push(s);
                    }
                };
                for s in 124..132 {
                    put(s, &mut held, &mut out);
                }
                let gaps = [92u64, 92, 98, 90];
                let (mut dealt, mut next, mut turn) = (0u64, 72u64, 0usize);
                while out.len() < slots {
                    if dealt == next {
                        for s in 124..132 {
                            put(s, &mut held, &mut out);
                        }
                        next += gaps[turn % 4];
                        turn += 1;
                    }
                    put(cycle[(dealt % 124) as usize], &mut held, &mut out);
                    dealt += 1;
                }
                out
            }
            _ => (0..slots).map(|b| (b % sms as usize) as u32).collect(),
        }
    }

    /// Whether later waves are shuffled per round ([`crate::cache::later_wave_sm`]) rather
    /// than turned.
    pub fn shuffles(self) -> bool {
        !matches!(self, Dealing::RoundRobin)
    }

    /// The merge domain (GPC) of SM `sm`, where it is known.
    pub fn gpc(self, sms: u32, sm: u32) -> Option<u32> {
        match self {
            Dealing::H200 if sms == 132 => Some(h200_gpc(sm)),
            _ => None,
        }
    }
}

/// How a launch sits on one SM: blocks resident at once, the shared-memory carveout and the
/// L1 capacity left beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occupancy {
    pub resident_blocks: u32,
    pub shared_per_sm: u64,
    pub l1_bytes: u64,
}

impl Profile {
    /// Occupancy of blocks of `threads` threads using `shared_per_block` bytes of shared memory
    /// (static + dynamic). Registers are not known, so they are assumed not to limit it.
    pub fn occupancy(&self, threads: u64, shared_per_block: u64) -> Occupancy {
        let warps = threads.div_ceil(32).max(1);
        let mut blocks = (self.max_blocks_per_sm as u64).min((self.max_threads_per_sm as u64 / (warps * 32)).max(1));
        let max_shared = *self.shared_carveouts_kib.last().unwrap_or(&0) as u64 * KIB;
        let per_block = if shared_per_block > 0 { shared_per_block + self.reserved_shared_per_block } else { 0 };
        if let Some(fit) = max_shared.checked_div(per_block) {
            blocks = blocks.min(fit.max(1));
        }
        let need = blocks * per_block;
        // The driver picks the smallest carveout that keeps the occupancy.
        let carveout =
            self.shared_carveouts_kib.iter().map(|&k| k as u64 * KIB).find(|&c| c >= need).unwrap_or(max_shared);
        let l1_bytes = match self.fixed_l1_bytes {
            Some(b) => b,
            None => self.l1_shared_bytes.saturating_sub(carveout),
        };
        Occupancy { resident_blocks: blocks as u32, shared_per_sm: carveout, l1_bytes }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_and_error() {
        assert_eq!(lookup("h200").unwrap().l2_bytes, 62_914_560);
        assert_eq!(lookup("H100").unwrap().name, "h100");
        let e = lookup("b200").unwrap_err();
        assert!(e.contains("h200") && e.contains("tesla-p4"), "{e}");
    }

    #[test]
    fn occupancy_by_hand() {
        let h = lookup("h200").unwrap();
        // 256 threads, no shared memory: 2048 / 256 = 8 blocks, no carveout, all 256 KiB is L1.
        assert_eq!(h.occupancy(256, 0), Occupancy { resident_blocks: 8, shared_per_sm: 0, l1_bytes: 256 * KIB });
        // 32x33 floats (4,224 B) + 1 KiB reserved = 5,248 B; 8 blocks need 41,984 B -> 64 KiB
        // carveout, 192 KiB of L1.
        assert_eq!(
            h.occupancy(256, 4224),
            Occupancy { resident_blocks: 8, shared_per_sm: 64 * KIB, l1_bytes: 192 * KIB }
        );
        // 100 threads round up to 4 warps: 2048 / 128 = 16 blocks.
        assert_eq!(h.occupancy(100, 0).resident_blocks, 16);
        // 48 KiB + 1 KiB per block: 228 KiB / 49 KiB = 4 blocks in the 228 KiB carveout.
        assert_eq!(h.occupancy(256, 48 * KIB).resident_blocks, 4);
        // They need 200,704 B: the 196 KiB carveout, 60 KiB of L1.
        assert_eq!(h.occupancy(256, 48 * KIB).l1_bytes, 60 * KIB);
        let p4 = lookup("tesla-p4").unwrap();
        assert_eq!(p4.occupancy(256, 4096).l1_bytes, 48 * KIB);
    }
    #[test]
    fn h200_dealing_as_measured() {
        // `validate/results/reuse/probes/place.csv.gz`, 3,168 blocks of 256 threads (8 per SM):
        // %smid of blocks 0-31 and 80-89, 138-141 and 1,048-1,055.
        let d = Dealing::H200.order(132, 8);
        assert_eq!(d.len(), 1056);
        let first: [u32; 32] = [
            124, 125, 126, 127, 128, 129, 130, 131, 0, 1, 16, 17, 32, 33, 48, 49, 2, 3, 18, 19, 34, 35, 50, 51, 64, 65,
            78, 79, 92, 93, 106, 107,
        ];
        assert_eq!(d[..32], first);
        assert_eq!(d[80..90], [124, 125, 126, 127, 128, 129, 130, 131, 10, 11]);
        assert_eq!(d[138..142], [122, 123, 0, 1]);
        assert_eq!(d[1048..], [90, 91, 104, 105, 118, 119, 122, 123]);
        // Breadth first: every SM holds 8.
        for sm in 0..132 {
            assert_eq!(d.iter().filter(|&&s| s == sm).count(), 8, "SM {sm}");
        }
        // The GPC probe: SM 0 merged with 16, 32, 48, 124, 126, 128 and 130, not with 2, 18,
        // 34, 50, 64, 66, 96, 120 or 122; 18 with 64, 14 with 30, 46 with 62, 64 with 78.
        for s in [16, 32, 48, 124, 126, 128, 130] {
            assert_eq!(h200_gpc(s), h200_gpc(0), "SM {s}");
        }
        for s in [2, 18, 34, 50, 64, 66, 96, 120, 122] {
            assert_ne!(h200_gpc(s), h200_gpc(0), "SM {s}");
        }
        for (a, b) in [(18, 64), (14, 30), (46, 62), (64, 78)] {
            assert_eq!(h200_gpc(a), h200_gpc(b), "SMs {a} and {b}");
        }
        assert_ne!(h200_gpc(64), h200_gpc(80));
        assert_eq!(Dealing::RoundRobin.order(4, 2), [0, 1, 2, 3, 0, 1, 2, 3]);
    }
}
