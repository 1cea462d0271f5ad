//! Which blocks go through the cache model, so that its cost does not grow with the launch.
//!
//! The model's state splits into units: the blocks of one wave (`together` per SM) on one
//! merge group of SMs. L1s are private to an SM and misses merge only inside a group, so a
//! unit's L1 hits and L2 reads depend on its own blocks and on what its SMs' L1s kept from the
//! wave before (data every block reads); units share the L2. A launch whose warp-level steps fit
//! in [`SAMPLE_WORK`] sends every unit (`simulated`). A larger one sends whole waves spread
//! evenly over the launch, or, when not even one wave fits the budget, neighbouring groups of
//! its middle wave (`sampled-units`), and the sheet
//! carries each instruction's L1-hit and L2-read ratios from the sampled units to the
//! instruction's exact sector count from the engine: waves of a launch are alike when its
//! blocks run the same instructions with the same trip counts, and where they do not (edge
//! blocks, guards), the per-instruction ratios keep the mix.
//!
//! When not even one unit fits the budget, its cost is its blocks' trip counts, which no
//! choice of units shrinks: the reference engine then runs the long loops of the unit's blocks
//! in iteration windows (`engine/windows.rs`), the fraction of their iterations that half the
//! budget leaves ([`CacheModel::loop_fraction`]), jumping over the rest where a loop's state is
//! steady; where the first block shows that even so the unit is over, its SMs run fewer of
//! their resident blocks. Without such loops (or with the SASS engine, which has no windows),
//! fewer resident blocks is all there is.

use super::CacheModel;
use crate::diag::Result;
use crate::engine::Trace;
use crate::ir::{Kernel, Space};
use crate::launch::Setup;

/// Warp-level steps of the reference engine plus global sectors the cache model is fed at most (about half a second on
/// one busy core).
pub const SAMPLE_WORK: u64 = 2_000_000;

/// The estimate's own budget, apart from the counting's (`--time-limit`, `--max-work`): the
/// sheet's exact counts never wait on it. When it runs out the model stops where it is
/// ([`CacheModel::out_of_budget`]) and the sheet gives the boundaries as bounds only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimateBudget {
    /// Wall-clock limit of the estimate, from its start (`None`: none of its own; it still
    /// ends at the analysis' deadline, `AnalyzeOptions::time_limit`, where one is set, and
    /// without either a library caller's results never depend on the machine's speed).
    pub time_limit: Option<std::time::Duration>,
    /// Warp-level steps of the reference engine the estimate may take (`None`: what the
    /// counting left of `--max-work`).
    pub max_work: Option<u64>,
    /// Global accesses of each warp that go through the model (`None`: all). Past it a warp's
    /// accesses are counted only and take their instruction's ratios, so that the model's cost
    /// stops growing with trip counts (the engine still runs every iteration). Off by default:
    /// an experiment whose error against the whole simulation `benches/sampling_error.rs` prints.
    pub warp_window: Option<u32>,
    /// Whether a sample over the budget may run long loops in iteration windows
    /// (`engine/windows.rs`: the cost independent of trip counts). `false`: today's model
    /// before windows, where a unit over the budget runs fewer of its resident blocks (for
    /// measuring one against the other).
    pub iteration_windows: bool,
    /// The fraction of long loops' iterations to run whatever the budget (`None`: what the
    /// budget leaves): for measuring the windows' own error against whole loops
    /// (`benches/sampling_error.rs` with `FRACTION=F`).
    pub loop_fraction: Option<f64>,
}

impl Default for EstimateBudget {
    fn default() -> Self {
        EstimateBudget {
            time_limit: None,
            max_work: None,
            warp_window: None,
            iteration_windows: true,
            loop_fraction: None,
        }
    }
}

/// How the blocks were chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Blocks per SM sent in each sampled unit (the resident count, or fewer when one unit
    /// is over the budget).
    pub rounds: u64,
    /// Units sent through the model, and units in the launch.
    pub units: u64,
    pub total_units: u64,
    /// Distinct waves among the units sent, and waves in the launch.
    pub waves: u64,
    pub total_waves: u64,
    /// Fraction of the L2 the sampled units were given (their SMs' share of it).
    pub l2_share: f64,
}

/// How blocks map to units: SMs, SMs per group, blocks per SM in a wave.
#[derive(Clone, Copy)]
struct Shape {
    sms: u64,
    group: u64,
    together: u64,
    /// Blocks per SM sent (all `together`, fewer when one unit is over the budget).
    rounds: u64,
    /// Whether later waves are shuffled ([`crate::gpu::Dealing::shuffles`]).
    shuffled: bool,
}

/// The blocks of unit `(wave, group)`, each SM's `r`-th block of the wave before any SM's
/// `r + 1`-th (see [`CacheModel::sm_of`]; `slots_of`: each SM's slots of the first wave in
/// dealing order).
fn unit_blocks(s: Shape, slots_of: &[Vec<u32>], blocks: u64, wave: u64, group: u64) -> impl Iterator<Item = u64> + '_ {
    let Shape { sms, group: g, together, rounds, shuffled } = s;
    let base = wave * sms * together;
    (0..rounds.min(together)).flat_map(move |r| {
        (group * g..((group + 1) * g).min(sms))
            .filter_map(move |sm| match wave {
                0 => slots_of[sm as usize].get(r as usize).map(|&slot| slot as u64),
                _ => Some(super::later_wave_slot(shuffled, sms, g, wave, r, sm)),
            })
            .map(move |slot| base + slot)
            .filter(move |&b| b < blocks)
    })
}

/// Feeds the launch's blocks, all of them or a sample of units, through a fresh cache model.
/// `trace` is the symbolic engine's (its warp-level steps and executions); `budget` the steps
/// the model may take.
pub fn stream(kernel: &Kernel, setup: &Setup, trace: &Trace, budget: u64) -> Result<CacheModel> {
    stream_within(kernel, setup, trace, budget, EstimateBudget::default())
}

/// [`stream`] within the estimate's own budget `limit`: the model comes back whatever happens
/// to the budget (marked [`CacheModel::out_of_budget`] when it ran out); only errors of the
/// launch itself (a fill that ran out) are errors.
pub fn stream_within(
    kernel: &Kernel,
    setup: &Setup,
    trace: &Trace,
    budget: u64,
    limit: EstimateBudget,
) -> Result<CacheModel> {
    stream_with(kernel, setup, trace, budget, limit, true, &mut |setup, order, m| {
        crate::engine::run_blocks(kernel, setup, order, m).map(|t| t.work)
    })
}

/// [`stream_within`] with the engine that runs the blocks: `run` runs the blocks its iterator
/// names, in order, into the cache model, under the setup it is given (the estimate's budget),
/// and returns the warp-level steps it took;
/// the SASS engine uses it too. `windows`: whether that engine runs long loops in iteration
/// windows when the model asks for a fraction of them ([`CacheModel::loop_fraction`]; the
/// reference engine does, `engine/windows.rs`); without them, a unit over the budget runs fewer
/// of its resident blocks.
/// Runs the engine over the blocks an iterator names, feeding the cache model; returns the work.
pub type UnitRunner<'r> = dyn FnMut(&Setup, &mut dyn Iterator<Item = u64>, &mut CacheModel) -> Result<u64> + 'r;

pub fn stream_with(
    kernel: &Kernel,
    setup: &Setup,
    trace: &Trace,
    budget: u64,
    limit: EstimateBudget,
    windows: bool,
    run: &mut UnitRunner<'_>,
) -> Result<CacheModel> {
    let start = std::time::Instant::now();
    // Without a limit of its own, the estimate ends where the analysis' deadline is (what is
    // left of `--time-limit`), with bounds instead of an error.
    let own = crate::launch::Budget {
        spent: Default::default(),
        // A limit past what `Instant` holds is no deadline of its own (never a panic).
        deadline: limit.time_limit.and_then(|l| start.checked_add(l)).or(setup.budget.deadline),
        limit: limit.time_limit.or(setup.budget.limit),
        progress: None,
    };
    let max_work = limit.max_work.unwrap_or_else(|| setup.max_work.saturating_sub(setup.budget.spent()));
    let setup = &setup.with_budget(max_work, own);
    // Cost: the engine's steps plus the model's sectors.
    let sectors: u64 = trace
        .ops
        .iter()
        .zip(&kernel.mem_ops)
        .filter(|(_, op)| op.space == Space::Global)
        .map(|(st, _)| st.sectors)
        .sum();
    let cost = trace.work + sectors;
    let work = trace.work;
    let mut m = CacheModel::new(kernel, setup);
    m.deadline = setup.budget.deadline;
    m.window = limit.warp_window;
    // The warps' in-step window, in their own global accesses.
    let accesses: u64 = trace
        .ops
        .iter()
        .zip(&kernel.mem_ops)
        .filter(|(_, op)| op.space == Space::Global)
        .map(|(st, _)| st.executions)
        .sum();
    if work > 0 {
        m.sync_accesses = (super::SYNC_WORK as f64 * accesses as f64 / work as f64).round().min(u32::MAX as f64) as u32;
    }
    // Barriers keep a wave's blocks in step (the H200's tiled products merged a third of their
    // misses in a single wave, against a sixth with TPC mates alone).
    m.in_step_runs = m.profile.run_blocks > 0 && super::loop_barrier(kernel);
    let blocks = setup.blocks();
    let per_wave = m.per_wave();
    let total_waves = blocks.div_ceil(per_wave).max(1);
    let groups = m.groups();
    let total_units = total_waves * groups;
    // Every unit in wave order: the whole launch, as the hardware runs it wave after wave.
    let mut warm: Vec<u64> = Vec::new();
    let together = m.together.max(1) as u64;
    let mut rounds = together;
    // Long loops in iteration windows instead of fewer resident blocks, where the engine runs
    // them so and the kernel has such a loop.
    let windows = windows && limit.iteration_windows && crate::engine::has_window_loops(kernel);
    // Whether not even one unit fits the budget: only then do loops run in windows.
    let mut over = false;
    let picks: Vec<(u64, u64)> = if cost <= budget {
        (0..total_units).map(|u| (u / groups, u % groups)).collect()
    } else {
        // A whole unit's cost (the launch's mean per block times a unit's blocks): a launch
        // whose last wave is partial, or whose grid fills few SMs, has fewer blocks than
        // `total_units` whole units, and the sample should cost at most the budget.
        let unit_size = (m.merge_group as u64 * together).min(blocks.max(1));
        let per_unit = ((cost as f64 / blocks.max(1) as f64 * unit_size as f64).ceil() as u64).max(1);
        let n = (budget / per_unit).clamp(1, total_units);
        over = per_unit > budget;
        if over && !windows {
            // Not even one unit fits: its SMs run fewer of their resident blocks (the first
            // ones of the wave), each block still a whole block.
            rounds = (together * budget / per_unit).max(1);
        }
        if n >= 2 * groups && total_waves > 1 {
            // Whole waves, evenly spread, each after the wave before it, which starts from
            // empty caches, warms them (what it brings that the counted wave reuses) and is
            // not counted.
            let k = (n / (2 * groups)).min(total_waves / 2).max(1);
            let mut v = Vec::new();
            for i in 0..k {
                let w = ((2 * i + 1) * total_waves / (2 * k)).clamp(1, total_waves - 1);
                if v.last().is_some_and(|&(lw, _)| lw >= w - 1) {
                    continue;
                }
                warm.push(w - 1);
                v.extend((0..groups).map(|g| (w - 1, g)));
                v.extend((0..groups).map(|g| (w, g)));
            }
            v
        } else if n >= groups {
            let w = total_waves / 2;
            (0..groups).map(|g| (w, g)).collect()
        } else {
            // Less than a wave: neighbouring groups of the middle wave (neighbouring blocks,
            // so that what they share in L2 is seen), among the groups that have blocks, in
            // the order their first block of the wave is dealt.
            let w = total_waves / 2;
            let mut here: Vec<u64> = Vec::new();
            for b in w * per_wave..((w + 1) * per_wave).min(blocks) {
                let g = m.unit_of(b).1;
                if !here.contains(&g) {
                    here.push(g);
                }
                if here.len() as u64 == groups {
                    break;
                }
            }
            let n = (n as usize).min(here.len()).max(1);
            let first = (here.len().max(n) - n) / 2;
            here.iter().skip(first).take(n).map(|&g| (w, g)).collect()
        }
    };
    let sampled = picks.len() as u64 != total_units || rounds < together;
    let mut waves: Vec<u64> = picks.iter().map(|p| p.0).filter(|w| !warm.contains(w)).collect();
    waves.dedup();
    let counted = picks.iter().filter(|p| !warm.contains(&p.0)).count() as u64;
    let l2_share = if sampled {
        // The sampled units of a wave get their SMs' share of L2, as their wave would leave them.
        let sms_per_wave = counted as f64 / waves.len() as f64 * m.merge_group as f64;
        (sms_per_wave / m.profile.sms.max(1) as f64).min(1.0)
    } else {
        1.0
    };
    if sampled {
        let lines = (m.l2.capacity() as f64 * l2_share).round() as usize;
        m.l2.set_capacity(lines.max(1));
    }
    // The simulation budget of the old, stream-order sampling does not apply to units.
    m.budget = u64::MAX;
    m.warm_waves = warm;
    let mut info = Sample { rounds, units: counted, total_units, waves: waves.len() as u64, total_waves, l2_share };
    let slots_of = m.slots_of.clone();
    let mut shape = Shape {
        sms: m.profile.sms.max(1) as u64,
        group: m.merge_group as u64,
        together,
        rounds,
        shuffled: m.profile.dealing.shuffles(),
    };
    let picked: u64 = picks.iter().map(|&(w, g)| unit_blocks(shape, &slots_of, blocks, w, g).count() as u64).sum();
    // A sample in iteration windows gets half the budget: the engine's steps in windows cost
    // more than in whole loops (the jumps), and the estimate should stay near half a second.
    let window_budget = budget / 2;
    if windows && over {
        // The sample's blocks, at the launch's mean cost per block: where they are over the
        // budget, long loops run that fraction of their iterations.
        let sample_cost = cost as f64 / blocks.max(1) as f64 * picked as f64;
        if sample_cost > window_budget as f64 {
            m.loop_fraction = (window_budget as f64 / sample_cost).max(1e-9);
        }
    }
    if let Some(f) = limit.loop_fraction.filter(|_| windows) {
        m.loop_fraction = f.clamp(1e-9, 1.0);
    }
    let r = if m.loop_fraction < 1.0 && picked > 1 && limit.loop_fraction.is_none() {
        // The first block alone shows what a block costs in windows (a loop gives only so few
        // windows); where the sample's blocks would still be over the budget, its SMs run fewer
        // of their resident blocks, as without windows.
        let mut order = picks.iter().flat_map(|&(w, g)| unit_blocks(shape, &slots_of, blocks, w, g));
        let first = order.next();
        run(setup, &mut first.into_iter(), &mut m).and_then(|work| {
            let per_block = (work + m.simulated_sectors).max(1);
            let affordable = (window_budget / per_block).max(1);
            if affordable < picked {
                let per_round = (picks.len() as u64 * m.merge_group as u64).max(1);
                shape.rounds = (affordable / per_round).clamp(1, shape.rounds);
                info.rounds = shape.rounds;
            }
            let mut rest = picks.iter().flat_map(|&(w, g)| unit_blocks(shape, &slots_of, blocks, w, g)).skip(1);
            run(setup, &mut rest, &mut m)
        })
    } else {
        let mut order = picks.iter().flat_map(|&(w, g)| unit_blocks(shape, &slots_of, blocks, w, g));
        run(setup, &mut order, &mut m)
    };
    match r {
        Ok(_) => {}
        Err(d) if d.kind == crate::diag::ErrorKind::Limit => {
            if m.out_of_budget.is_none() {
                let late = setup.budget.deadline.is_some_and(|d| std::time::Instant::now() > d);
                m.out_of_budget = Some(match limit.time_limit {
                    Some(l) if late => {
                        format!("its time limit of {} s ran out while the sampled blocks ran", l.as_secs_f64())
                    }
                    None if late => "the analysis' time limit ran out while the sampled blocks ran".to_string(),
                    _ => format!("the sampled blocks need more than its {} warp-level steps of work", max_work),
                });
            }
        }
        Err(d) => return Err(d),
    }
    m.flush();
    m.sample = (sampled || m.windowed_warps > 0 || m.jumps > 0).then_some(info);
    Ok(m)
}
