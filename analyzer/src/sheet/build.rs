//! From the engine's trace to the sheet: per-instruction rows, totals, footprints, the
//! boundary model and every assumption in force.

use super::*;
use crate::engine::{OpStats, Trace};
use crate::gpu::{self as profile, Occupancy, Profile};
use crate::ir::{AccessKind, Base, Kernel, Space, Ty};
use crate::launch::Setup;
use crate::source::SourceFiles;

use crate::cache::CacheModel;

/// The file of `id` as a row names it: `None` for the analysed file (the first), else its path,
/// relative to the analysed file's folder where it lies below it.
fn row_file(files: &SourceFiles, id: crate::source::FileId) -> Option<String> {
    if id.0 == 0 {
        return None;
    }
    let path = files.files.get(id.0 as usize)?.path.as_path();
    let root_dir = files.files.first().and_then(|f| f.path.parent()).filter(|d| !d.as_os_str().is_empty());
    let shown = root_dir.and_then(|d| path.strip_prefix(d).ok()).unwrap_or(path);
    Some(shown.display().to_string())
}

fn row_of(
    kernel: &Kernel,
    i: usize,
    st: &OpStats,
    trace: &Trace,
    unrolled: &crate::ir::unroll::UnrolledLoads,
    setup: &Setup,
    files: &SourceFiles,
) -> Row {
    let op = &kernel.mem_ops[i];
    let mut assumptions = Vec::new();
    if let (Some(c), true) = (&unrolled.chains[i], st.executions > 0) {
        assumptions.push(format!(
            "nvcc merges this load across the unrolled copies of the loop at line {}: the copies reading one aligned 16-byte window are one load (up to 16 bytes), as its SASS shows",
            c.loop_span.line
        ));
    }
    let may_merge = unrolled.uncertain[i] && st.executions > 0;
    if may_merge {
        assumptions.push(
            "nvcc may merge this load with the same load of other unrolled copies of its loop into a wider one, in a way the model does not follow: counted as written".into(),
        );
    }
    if st.unknown_executions > 0 && op.space == Space::Shared {
        assumptions.push(format!(
            "shared address depends on data read from memory in {} of {} executions: those lanes counted as if they read consecutive elements (no bank conflict); with conflicts there are more wavefronts",
            st.unknown_executions, st.executions
        ));
    } else if st.unknown_executions > 0 {
        assumptions.push(format!(
            "address depends on data read from memory in {} of {} executions: assumed every such lane touches its own sector (bounds {}..{})",
            st.unknown_executions, st.executions, st.sectors_min, st.sectors_max
        ));
    } else if st.data_executions > 0 {
        let fills: Vec<String> = trace
            .used_fills
            .iter()
            .filter_map(|p| setup.fills[p.0 as usize].as_ref().map(|(f, _)| format!("{} = {f}", kernel.param(*p).name)))
            .collect();
        assumptions.push(format!("address computed from array contents given by the launch ({})", fills.join(", ")));
    }
    if st.elided_lanes > 0 {
        assumptions.push(format!(
            "{} lane-level loads removed: the thread already holds this address's value (compiler load elimination)",
            st.elided_lanes
        ));
    }
    if st.retried {
        assumptions.push(
            "inside a loop that retries a compare-and-swap: counted as one pass (the swap succeeds at once); each thread that loses a race to another runs one more pass".into(),
        );
    }
    if st.after_data_branch {
        assumptions.push(
            "runs inside or after a branch on data the analysis does not know, decided as stated below: its count rests on that".into(),
        );
    }
    if st.varying_trip {
        assumptions.push(
            "inside a loop whose trip count differs between lanes of a warp: nvcc may unroll it (by 4, with a remainder loop), which splits executions differently; counted as the source loop".into(),
        );
    }
    if !op.space.has_address() {
        assumptions.push(TEXTURE_ROW.to_string());
    }
    if op.matrix > 0 && op.kind != AccessKind::Load {
        assumptions.push(
            "stmatrix (STSM) is not measured on the H200: counted as ldmatrix is (lanes 8k..8k+7 give matrix k's row addresses, each matrix's wavefronts those of a quarter-warp of 16-byte stores; in shared_store's wavefronts, not its requests)".into(),
        );
    }
    let shared = op.space == Space::Shared;
    let exact = st.unknown_executions == 0 && !st.varying_trip && !st.retried && !st.after_data_branch && !may_merge;
    Row {
        file: row_file(files, op.span.file),
        line: op.span.line,
        column: op.span.column,
        text: op.text.clone(),
        space: op.space,
        op: op.kind,
        width: op.width,
        matrix: (op.matrix > 0).then_some(op.matrix),
        cache_op: op.cache.name(),
        executions: st.executions,
        thread_executions: st.lanes,
        requests: st.executions,
        sectors: if shared { 0 } else { st.sectors },
        ideal_sectors: if shared { 0 } else { st.ideal_sectors },
        logical_bytes: st.lanes * op.width as u64,
        wavefronts: shared.then_some(st.wavefronts),
        ideal_wavefronts: shared.then_some(st.ideal_wavefronts),
        bank_conflicts: shared.then_some(st.wavefronts.saturating_sub(st.ideal_wavefronts)),
        sectors_min: if shared { 0 } else { st.sectors_min },
        sectors_max: if shared { 0 } else { st.sectors_max },
        elided_loads: st.elided_lanes,
        exact,
        assumptions,
        boundary: None,
        sass: Vec::new(),
        op_id: i,
        span: op.span,
    }
}

/// What a texture or surface row counts, and why it gives no sectors: one text for every such
/// row, so that the compact sheet says it once.
const TEXTURE_ROW: &str = "texture pipeline: requests are warp-level executions (smsp__sass_inst_executed_op_texture for fetches, smsp__inst_executed_op_surface_{ld,st}_pred_on_any for surfaces); sectors not predicted: the texture unit computes the addresses from the binding and layout the host sets up (arrays are block-linear, a layout NVIDIA does not document); none reach the LSU global counters (0 on the H200), and their L2 traffic is not in the boundaries";

/// A shared row's wavefronts, bank conflicts and bytes added to totals `t` (not its requests).
fn add_shared(t: &mut SharedTotals, r: &Row) {
    t.wavefronts += r.wavefronts.unwrap_or(0);
    t.ideal_wavefronts += r.ideal_wavefronts.unwrap_or(0);
    t.bank_conflicts += r.bank_conflicts.unwrap_or(0);
    t.logical_bytes += r.logical_bytes;
}

/// The sheet of one launch from the engine's trace and the cache model that took its sector
/// stream (unfed when the stream was not simulated).
pub fn build(kernel: &Kernel, setup: &Setup, mut trace: Trace, mut cache: CacheModel, files: &SourceFiles) -> Sheet {
    // The last block's accesses are still buffered in the cache model.
    cache.flush();
    let assumed = crate::ir::provenance::assumed_by_branches(kernel, &trace.data_branches);
    let unrolled = crate::ir::unroll::unrolled_loads(kernel);
    for (st, a) in trace.ops.iter_mut().zip(assumed) {
        st.after_data_branch |= a;
    }
    let mut rows: Vec<Row> =
        trace.ops.iter().enumerate().map(|(i, st)| row_of(kernel, i, st, &trace, &unrolled, setup, files)).collect();
    // Source order.
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&i| (kernel.mem_ops[i].span.file, kernel.mem_ops[i].span.line, kernel.mem_ops[i].span.column));
    rows = order.iter().map(|&i| rows[i].clone()).collect();

    let mut totals = Totals::default();
    for r in &rows {
        match (r.space, r.op) {
            (Space::Texture | Space::Surface, op) => {
                let t = match (r.space, op) {
                    (Space::Texture, _) => &mut totals.texture,
                    (_, AccessKind::Load) => &mut totals.surface_load,
                    _ => &mut totals.surface_store,
                };
                t.requests += r.requests;
                t.logical_bytes += r.logical_bytes;
            }
            (Space::Global, op) => {
                // The H200 counts an asynchronous copy in the global-load counters too.
                let into: &mut [&mut GlobalTotals] = match op {
                    AccessKind::Load => &mut [&mut totals.global_load],
                    AccessKind::Red => &mut [&mut totals.global_red],
                    AccessKind::Atom => &mut [&mut totals.global_atom],
                    AccessKind::AsyncCopy if r.cache_op == crate::ir::CacheOp::Cg.name() => {
                        &mut [&mut totals.global_async_copy_bypass, &mut totals.global_load]
                    }
                    AccessKind::AsyncCopy => &mut [&mut totals.global_async_copy, &mut totals.global_load],
                    _ => &mut [&mut totals.global_store],
                };
                for t in into.iter_mut() {
                    t.requests += r.requests;
                    t.sectors += r.sectors;
                    t.ideal_sectors += r.ideal_sectors;
                    t.logical_bytes += r.logical_bytes;
                }
            }
            (_, op) => {
                let t = match op {
                    AccessKind::Load => &mut totals.shared_load,
                    AccessKind::Atom => &mut totals.shared_atom,
                    _ => &mut totals.shared_store,
                };
                // A matrix load's instructions are not in the shared-load instruction counter,
                // its wavefronts are (measured on the H200): its requests go to its own totals.
                if r.matrix.is_none() {
                    t.requests += r.requests;
                }
                add_shared(t, r);
                if r.matrix.is_some() {
                    let m = if op == AccessKind::Load {
                        &mut totals.shared_matrix_load
                    } else {
                        &mut totals.shared_matrix_store
                    };
                    m.requests += r.requests;
                    add_shared(m, r);
                }
            }
        }
    }

    let mut assumptions = vec![
        "threads linearised x fastest; warp w of a block holds linear thread ids 32w..32w+31".to_string(),
        "pointer parameters start 256-byte aligned".to_string(),
    ];
    if setup.offsets.iter().any(|&o| o != 0) {
        let offs: Vec<String> = kernel
            .params
            .iter()
            .zip(&setup.offsets)
            .filter(|(_, o)| **o != 0)
            .map(|(p, o)| format!("{} at +{o} bytes", p.name))
            .collect();
        assumptions.push(format!("pointer offsets given by the launch: {}", offs.join(", ")));
    }
    if rows.iter().any(|r| r.elided_loads > 0) {
        assumptions.push(
            "loads of an address the thread already loaded or stored, with no possibly aliasing store between, are removed as nvcc does (pointers without __restrict__ may alias)".into(),
        );
    }
    for s in &trace.data_branches {
        assumptions.push(format!("branch at {}:{} depends on data read from memory: assumed taken", s.line, s.column));
    }
    if trace.shared_values_read {
        assumptions.push(
            "a value loaded from shared memory is the one the block stored there last: the warp's own store at once (its lanes run in step), another warp's after a __syncthreads() between them".into(),
        );
    }
    for s in &trace.retry_loops {
        assumptions.push(format!(
            "loop at {}:{} retries a compare-and-swap until it succeeds: counted as one pass per thread, as without contention (not exact where threads race for the same word)",
            s.line, s.column
        ));
    }
    for (s, locals) in &trace.summarised_loops {
        let after =
            if locals.is_empty() { String::new() } else { format!("; after it, unknown: {}", locals.join(", ")) };
        assumptions.push(format!(
            "loop at {}:{} moves no memory and its condition depends on a value the analysis does not know (a clock, data): its trip count does not change the counts{after}",
            s.line, s.column
        ));
    }
    for s in &trace.varying_loops {
        assumptions.push(format!(
            "loop at {}:{}: lanes of a warp run different trip counts; if nvcc unrolls it, executions split differently (not exact)",
            s.line, s.column
        ));
    }
    for s in &trace.varying_exact_loops {
        assumptions.push(format!(
            "loop at {}:{}: lanes of a warp run different trip counts; nvcc does not unroll it (its step is known only at run time, or it has another exit), so it runs as written",
            s.line, s.column
        ));
    }
    if !kernel.shared.is_empty() {
        assumptions.push(
            "shared arrays laid out in declaration order, each 16-byte aligned; 32 banks of 4 bytes, phases of 128 bytes".into(),
        );
    }
    assumptions.extend(kernel.notes.iter().cloned());

    let footprints = footprints(kernel, &trace);
    let boundaries = if let Some(why) = cache.out_of_budget.clone() {
        boundaries_bounds_only(&cache, &totals, setup.blocks(), &why)
    } else if cache.fed || totals.global_load.sectors + totals.global_store.sectors == 0 {
        boundaries(&cache, &totals, &mut rows, &order, &footprints)
    } else {
        boundaries_unsimulated(kernel, setup, &totals, &footprints)
    };
    let mut boundaries = boundaries;
    exclude_texture_traffic(&mut boundaries, &rows);
    let file = files.files.first().map(|f| f.path.display().to_string()).unwrap_or_default();
    Sheet {
        kernel: kernel.name.clone(),
        file,
        engine: "enumerate",
        launch: LaunchInfo {
            grid: setup.grid,
            block: setup.block,
            args: setup.args.clone(),
            template_args: std::collections::BTreeMap::new(),
            shared_bytes: setup.shared_bytes,
        },
        instructions: rows,
        totals,
        boundaries,
        footprints,
        assumptions,
        work: trace.work,
        via: None,
        compiler: None,
        listing: None,
    }
}

fn footprints(kernel: &Kernel, trace: &Trace) -> Vec<Footprint> {
    let mut out = Vec::new();
    for (pi, p) in kernel.params.iter().enumerate() {
        let Ty::Ptr(t) = &p.ty else { continue };
        let mut fp = Footprint {
            param: p.name.clone(),
            elem_bytes: t.pointee.size(),
            min_byte: 0,
            end_byte: 0,
            loaded: false,
            stored: false,
            complete: true,
            device_variable: p.device_variable,
        };
        let mut any = false;
        for (i, st) in trace.ops.iter().enumerate() {
            if st.base != Some(Base::Param(crate::ir::ParamId(pi as u32))) {
                continue;
            }
            match kernel.mem_ops[i].kind {
                AccessKind::Load | AccessKind::AsyncCopy => fp.loaded = true,
                AccessKind::Store => fp.stored = true,
                AccessKind::Red | AccessKind::Atom => {
                    fp.loaded = true;
                    fp.stored = true;
                }
            }
            if st.unknown_executions > 0 {
                fp.complete = false;
            }
            if let (Some(lo), Some(hi)) = (st.min_off, st.end_off) {
                if !any {
                    fp.min_byte = lo;
                    fp.end_byte = hi;
                    any = true;
                } else {
                    fp.min_byte = fp.min_byte.min(lo);
                    fp.end_byte = fp.end_byte.max(hi);
                }
            }
        }
        out.push(fp);
    }
    out
}

/// The assumptions every boundary estimate rests on, for profile `p` at occupancy `o`, with
/// `together` blocks resident on an SM at once.
fn profile_assumptions(p: &Profile, o: &Occupancy, together: u64, sync_accesses: u32) -> Vec<String> {
    let l1 = if p.fixed_l1_bytes.is_some() {
        format!("{} bytes, apart from shared memory", super::text::thousands(o.l1_bytes))
    } else {
        format!(
            "{} bytes: {} KiB of L1 and shared memory less a {} KiB shared carveout, the smallest that holds {} resident block(s) of this kernel",
            super::text::thousands(o.l1_bytes),
            p.l1_shared_bytes / 1024,
            o.shared_per_sm / 1024,
            o.resident_blocks
        )
    };
    let mut v = vec![
        format!("GPU profile {}: {} ({})", p.name, p.description, p.source),
        "cold L1 and L2 at launch (Nsight Compute's default cache control)".to_string(),
        format!(
            "blocks of a wave placed round-robin: block b (x fastest, then y, z) on SM b mod {} (the H200 dealt a wave breadth first, consecutive blocks to the two SMs of a TPC, one SM's blocks 80 to 140 apart: round-robin keeps which blocks share an SM and a group close to that); {together} resident per SM at once (at most {} by threads, blocks and shared memory; registers assumed not to limit); the blocks of a wave ({together} per SM) progress together, every warp's k-th global access before any warp's (k+1)-th",
            p.sms, o.resident_blocks
        ),
        format!("L1 per SM: {l1}; 128-byte lines of 32-byte sectors, fully associative, least recently used out; loads allocate{}, stores write through to L2 without allocating", if p.l1_caches_global_loads { " except __ldcg/__ldcv" } else { " only for __ldg/__ldca (this GPU keeps other global loads out of L1)" }),
        format!(
            "L2: {} bytes{}, 128-byte lines of 32-byte sectors, fully associative, least recently used out, write-back; a read miss fetches the {}-byte DRAM granule (its sectors not already present); a store needs no DRAM read, a sector left partly written is completed from DRAM when a load needs it or when it is written back",
            super::text::thousands(p.l2_model_bytes),
            if p.l2_model_bytes < p.l2_bytes {
                format!(
                    " of its {}: data was seen to stay in the H200's L2 only while less than about two thirds of it came in between (it has two partitions)",
                    super::text::thousands(p.l2_bytes)
                )
            } else {
                String::new()
            },
            p.dram_granule_bytes
        ),
        "DRAM writes: dirty lines evicted during the kernel; what stays dirty in L2 at the end is written after the kernel".to_string(),
        if p.dealing.shuffles() {
            "later waves placed dynamically (on the H200 a block of the next wave went to whichever SM freed a slot first, consecutive blocks still to the two SMs of one TPC, and the blocks of a wave started within about a microsecond of each other): each round of a later wave (every SM's next block) deals the TPCs in an order of its own (a hashed affine permutation), so an SM's blocks of one wave are no fixed stride apart and bear no fixed relation to those of the wave before; L1 contents outlive a wave".to_string()
        } else {
            format!("later waves placed dynamically (on the H200 a block of the next wave went to whichever SM freed a slot first, and the blocks of a wave started within about a microsecond of each other): each wave's round-robin assignment is turned by {} SMs, so an SM's blocks of one wave bear no fixed relation to those of the wave before; L1 contents outlive a wave", crate::cache::WAVE_ROTATION)
        },
        "misses to one sector by warps of one SM while it is in flight: one L2 read, the others L1 hits (measured: 1 to 32 warps of a block reading a line together gave one SM's misses)".to_string(),
        "global atomics (RED, ATOM) are performed in L2: no L1 lookup, not in the L1->L2 read and write sectors (as the H200 counts them), but a sector absent from L2 is read from DRAM first and left dirty (the H200 read one DRAM sector per atomic sector of a fresh array)".to_string(),
        format!(
            "bounds: DRAM reads from the sectors first touched (loads and atomics) plus the fewest a launch read of its own ({}), to every load's and atomic's DRAM granule; DRAM writes at most the sectors stored or updated atomically plus data left dirty in L2 before the launch that the launch's lines push out (the H200 wrote back up to 73,224 sectors more than a kernel stored), at most the L2",
            p.launch_dram_read_sectors_min
        ),
    ];
    if p.merge_group_sms > 1 {
        v.push(format!(
            "misses to one sector by different SMs of one group of {} (SMs {}k..{}k+{}, the SMs of a TPC, which get consecutive blocks) in the same step of the replay reach L2 once, while the warps are younger than {} global accesses ({} reference-engine steps, in step as a wave starts; later they drift apart): measured by SM id, the two SMs of a TPC reading the same lines cost one SM's L2 reads, SMs of different TPCs of one GPC merged too, one L2 read per 4 SMs, which the model applies only where barriers keep blocks in step (below); elsewhere an upper estimate",
            p.merge_group_sms,
            p.merge_group_sms,
            p.merge_group_sms,
            p.merge_group_sms - 1,
            sync_accesses,
            crate::cache::SYNC_WORK
        ));
    } else {
        v.push("not modelled: misses of different SMs to one sector at the same moment, which may merge before L2 (not measured on this GPU)".to_string());
    }
    v
}

/// Boundary traffic from the cache model that saw the launch's sector stream; fills each
/// global row's share (`rows[k]` is memory operation `order[k]`).
fn boundaries(
    m: &CacheModel,
    totals: &Totals,
    rows: &mut [Row],
    order: &[usize],
    footprints: &[Footprint],
) -> Boundaries {
    let p = m.profile;
    let g = (p.dram_granule_bytes / p.sector_bytes).max(1) as u64;
    let (sim_l2, sim_dram) = m.ops.iter().fold((0u64, 0u64), |a, t| (a.0 + t.l2_reads, a.1 + t.dram_reads));
    let dram_per_l2 = if sim_l2 > 0 { sim_dram as f64 / sim_l2 as f64 } else { g as f64 };
    let mut tot = RowBoundary::default();
    let (mut sim_stores, mut rest_stores, mut unknown_loads, mut unknown_stores) = (0u64, 0u64, 0u64, 0u64);
    for (k, &i) in order.iter().enumerate() {
        let (Some(t), Some(row)) = (m.ops.get(i), rows.get_mut(k)) else { continue };
        if row.space != Space::Global {
            continue;
        }
        let mut t = *t;
        if m.sample.is_some() {
            // Sampled units: the rest of the instruction's sectors (the engine's exact count)
            // take the sampled ratios; data-dependent sectors scale with the sample.
            let (known, unknown) = match row.op {
                AccessKind::Load => (t.load_sectors, t.unknown_load_sectors),
                AccessKind::Red | AccessKind::Atom => (t.atomic_sectors, 0),
                _ => (t.store_sectors, t.unknown_store_sectors),
            };
            let unknown_all = match known + unknown {
                0 => 0,
                sim => ((unknown as f64 * row.sectors as f64 / sim as f64).round() as u64).min(row.sectors),
            };
            let rest = row.sectors.saturating_sub(known + unknown_all);
            match row.op {
                AccessKind::Load => (t.unknown_load_sectors, t.rest_load_sectors) = (unknown_all, rest),
                AccessKind::Red | AccessKind::Atom => t.rest_atomic_sectors = rest,
                _ => (t.unknown_store_sectors, t.rest_store_sectors) = (unknown_all, rest),
            }
        }
        let t = &t;
        sim_stores += t.store_sectors;
        rest_stores += t.rest_store_sectors;
        unknown_loads += t.unknown_load_sectors;
        unknown_stores += t.unknown_store_sectors;
        let mut rb = RowBoundary {
            l1_hit_sectors: t.l1_hits,
            l2_read_sectors: t.l2_reads,
            l2_write_sectors: t.l2_writes + t.rest_store_sectors + t.unknown_store_sectors,
            dram_read_sectors: t.dram_reads,
        };
        if t.rest_load_sectors > 0 {
            // Past the budget: this instruction's simulated ratios carry over.
            let (hit, read, dram) = if t.load_sectors > 0 {
                let d = if t.l2_reads > 0 { t.dram_reads as f64 / t.l2_reads as f64 } else { dram_per_l2 };
                let n = t.load_sectors as f64;
                (t.l1_hits as f64 / n, t.l2_reads as f64 / n, d)
            } else {
                (0.0, 1.0, dram_per_l2)
            };
            let h = ((t.rest_load_sectors as f64 * hit).round() as u64).min(t.rest_load_sectors);
            let r = ((t.rest_load_sectors as f64 * read).round() as u64).min(t.rest_load_sectors - h);
            rb.l1_hit_sectors += h;
            rb.l2_read_sectors += r;
            rb.dram_read_sectors += (r as f64 * dram).round() as u64;
        }
        if t.rest_atomic_sectors > 0 {
            // Atomics past the budget: the simulated DRAM reads per atomic sector carry over.
            let d = if t.atomic_sectors > 0 { t.dram_reads as f64 / t.atomic_sectors as f64 } else { 1.0 };
            rb.dram_read_sectors += (t.rest_atomic_sectors as f64 * d).round() as u64;
        }
        // Data-dependent lanes: each its own sector, missing L1 and L2.
        rb.l2_read_sectors += t.unknown_load_sectors;
        rb.dram_read_sectors += t.unknown_load_sectors;
        tot.l1_hit_sectors += rb.l1_hit_sectors;
        tot.l2_read_sectors += rb.l2_read_sectors;
        tot.l2_write_sectors += rb.l2_write_sectors;
        tot.dram_read_sectors += rb.dram_read_sectors;
        row.boundary = Some(rb);
    }
    let sampled =
        m.sample.is_some() || (m.sampled() && m.ops.iter().any(|t| t.rest_load_sectors + t.rest_store_sectors > 0));
    let scale = |n: u64| -> u64 {
        if sampled && sim_stores > 0 {
            (n as f64 * (sim_stores + rest_stores) as f64 / sim_stores as f64).round() as u64
        } else {
            n
        }
    };
    let launch = p.launch_dram_read_sectors;
    let atomics = totals.global_red.sectors + totals.global_atom.sectors;
    let mut dram_writes = scale(m.dram_writes).min(totals.global_store.sectors + atomics);
    let mut dram_reads = tot.dram_read_sectors + scale(m.dram_merge_reads) + launch;
    let fits = m.sample.is_some() && footprint_fits(p, footprints);
    if fits {
        // Everything the launch touches fits in L2: DRAM reads are the loaded ranges once,
        // spread over the rows in proportion to their sampled DRAM reads.
        let want = footprint_reads(footprints).min(g * totals.global_load.sectors);
        let have = tot.dram_read_sectors.max(1);
        for row in rows.iter_mut() {
            if let Some(rb) = row.boundary.as_mut() {
                rb.dram_read_sectors = (rb.dram_read_sectors as f64 * want as f64 / have as f64).round() as u64;
            }
        }
        dram_reads = want + launch;
        let written: u64 = footprints.iter().filter(|f| f.stored).map(footprint_sectors).sum();
        if (want + written) * p.sector_bytes as u64 <= p.l2_model_bytes {
            dram_writes = 0;
        }
    }
    let o = &m.occupancy;
    let mut assumptions = profile_assumptions(p, o, m.together as u64, m.sync_accesses);
    if launch > 0 {
        assumptions.push(format!(
            "DRAM reads include {launch} sectors every launch costs besides its loads (code and parameters: the H200 read 88 for kernels that load no global memory)"
        ));
    }
    if m.in_step_runs {
        assumptions.push(format!(
            "a loop of the kernel holds a barrier, which keeps blocks in step: in the first wave, misses to one sector by the blocks of one run of {} consecutive blocks (dealt to one GPC, as measured) in the same replay step reach L2 once per {} SMs, for the warps' whole run (the H200 merged a third of a single-wave tiled product's misses); later waves, placed dynamically, merge as TPC mates, for the warps' whole run too (the barriers keep the two SMs of a TPC together; the H200's TPC mates kept merging when one started 10 us late){}",
            p.run_blocks,
            p.run_merge_sms,
            if m.sample.is_some_and(|s| s.total_waves > 1) { " (the sampled waves are later waves: their ratios leave the first wave's merging out, an upper estimate of L2 reads)" } else { "" }
        ));
    }
    if let Some(s) = &m.sample {
        assumptions.push(format!(
            "sampled units: a unit is one wave's blocks on one group of {} SMs (they share nothing but L2); {} of the launch's {} units ({} of its {} waves) went through the model (whole waves spread evenly over the launch, each after the wave before it, which starts from empty caches and is not counted, so that a sampled wave's history is one wave; or neighbouring groups of its middle wave when one wave is over the budget), the L2 cut to the sampled SMs' share of it ({:.1}%); every global instruction's remaining sectors take its sampled L1-hit, L2-read and DRAM-per-L2-read ratios: waves are alike where blocks run the same instructions with the same trip counts, and the per-instruction ratios keep the mix where edge blocks differ",
            m.merge_group,
            super::text::thousands(s.units),
            super::text::thousands(s.total_units),
            super::text::thousands(s.waves),
            super::text::thousands(s.total_waves),
            s.l2_share * 100.0
        ));
        if s.rounds < m.together as u64 {
            assumptions.push(format!(
                "one unit is over the budget: its SMs ran {} of their {} resident blocks, so L1 reuse between blocks of one SM is undercounted",
                s.rounds, m.together
            ));
        }
        if fits {
            assumptions.push("the launch's loaded ranges fit in L2: DRAM reads are the loaded ranges once (DRAM writes none during the kernel when the stored ranges fit beside them)".into());
        }
    } else if sampled {
        assumptions.push(format!(
            "sampled: the first {} sectors ({} of {} blocks) went through the model; the rest were counted and given each instruction's simulated L1-hit and DRAM-per-L2-read ratios",
            super::text::thousands(m.simulated_sectors),
            super::text::thousands(m.simulated_blocks),
            super::text::thousands(m.blocks)
        ));
    }
    if m.windowed_warps > 0 {
        assumptions.push(format!(
            "windowed: each warp's first {} global accesses went through the model ({} warps had more); the rest of every instruction's sectors take its L1-hit, L2-read and DRAM-per-L2-read ratios from those",
            m.window.unwrap_or(0),
            super::text::thousands(m.windowed_warps)
        ));
    }
    if m.jumps > 0 {
        assumptions.push(format!(
            "iteration windows: the sampled blocks' long loops whose state moved by a constant step (every integer and pointer variable they assign, in every active lane, over four iterations; no exit but the loop's test) ran in windows of a few iterations spread over their trip count (loops inside such a loop whole), each jump landing one iteration before a window, an iteration that only warms the caches; the engine jumped {} times over {} iterations (about {} global accesses), moving the loop's variables on by their steps; every instruction's remaining sectors take the L1-hit, L2-read and DRAM-per-L2-read ratios of the iterations the model saw, and accesses after a jump do not enter the lower bounds",
            super::text::thousands(m.jumps),
            super::text::thousands(m.skipped_iterations),
            super::text::thousands(m.skipped_accesses)
        ));
    }
    if unknown_loads + unknown_stores > 0 {
        assumptions.push(
            "data-dependent addresses: each such sector counted as a miss in L1 and L2 and one DRAM sector".into(),
        );
    }
    Boundaries {
        model: format!("{}: LRU L1 per SM, LRU write-back L2", p.name),
        l1_hit_sectors: tot.l1_hit_sectors,
        l2_read_sectors: tot.l2_read_sectors,
        l2_write_sectors: totals.global_store.sectors,
        dram_read_sectors: dram_reads,
        dram_write_sectors: dram_writes,
        bounds: BoundaryBounds {
            dram_read_sectors: Bound {
                min: m.compulsory_sectors + p.launch_dram_read_sectors_min,
                max: g * (totals.global_load.sectors + atomics)
                    + m.partial_store_sectors
                    + rest_stores
                    + unknown_stores
                    + launch,
            },
            dram_write_sectors: Bound { min: 0, max: dram_write_max(p, totals) },
            l2_read_sectors: Bound {
                min: m.distinct_loaded.min(totals.global_load.sectors),
                max: totals.global_load.sectors,
            },
            l1_hit_sectors: None,
        },
        assumptions,
        gpu: p.name.to_string(),
        method: if m.sample.is_some() {
            "sampled-units"
        } else if sampled {
            "sampled"
        } else {
            "simulated"
        }
        .to_string(),
        bounds_only: false,
        resident_blocks_per_sm: o.resident_blocks,
        l1_bytes_per_sm: o.l1_bytes,
        l2_bytes: p.l2_bytes,
        excludes: Vec::new(),
    }
}

/// Boundaries when the estimate's own budget ran out (`why`): the bounds that hold without a
/// cache model, from the exact counts and what the model saw before it stopped (a subset of
/// the launch's blocks, so its distinct sectors are a lower bound on the launch's):
///
/// - L1 -> L2 reads: at least the distinct sectors loaded (each misses a cold L1 once; misses
///   merged in flight still reach L2 once), at most every load sector (none hits L1);
/// - L1 -> L2 writes: the store sectors (stores write through: a rule, not a bound);
/// - DRAM reads: at least the sectors loaded before any store could have written them (only
///   when the launch stores nothing: a subset cannot tell which stores come first) plus the
///   launch's own least, at most a DRAM granule per load or atomic sector, a read per store
///   sector (partly written sectors are completed from DRAM) and the launch's own reads;
/// - DRAM writes: none to [`dram_write_max`].
///
/// The point keys hold each bound's max (L1 hits the min): nothing built on them is too small.
pub fn boundaries_bounds_only(m: &CacheModel, totals: &Totals, launch_blocks: u64, why: &str) -> Boundaries {
    let p = m.profile;
    let g = (p.dram_granule_bytes / p.sector_bytes).max(1) as u64;
    let loads = totals.global_load.sectors;
    let stores = totals.global_store.sectors;
    let atomics = totals.global_red.sectors + totals.global_atom.sectors;
    let launch = p.launch_dram_read_sectors;
    let l2_min = m.distinct_loaded.min(loads);
    let compulsory = if stores + atomics == 0 { m.compulsory_sectors } else { 0 };
    let dram_read =
        Bound { min: compulsory + p.launch_dram_read_sectors_min, max: g * (loads + atomics) + stores + launch };
    let dram_write = Bound { min: 0, max: dram_write_max(p, totals) };
    let o = &m.occupancy;
    let mut assumptions = vec![
        format!("GPU profile {}: {} ({})", p.name, p.description, p.source),
        "cold L1 and L2 at launch (Nsight Compute's default cache control)".to_string(),
        format!(
            "bounds only: the boundary estimate's own budget ran out ({why}); the counts above are complete and exact, and the boundaries are the bounds that hold without a cache model: L1->L2 reads from the distinct sectors the model saw loaded ({} blocks of {}) to every load sector; L1->L2 writes are the store sectors (stores write through); DRAM reads from the compulsory sectors seen{} to a DRAM granule ({} sectors) per load and atomic sector plus a read per store sector; DRAM writes from none to every stored sector plus the L2's dirty lines; the figures printed are the upper bounds (a larger --estimate-time-limit, or a smaller launch, gives an estimate)",
            super::text::thousands(m.simulated_blocks),
            super::text::thousands(launch_blocks),
            if stores + atomics == 0 { "" } else { " (none counted: the launch stores, and a store can fill a sector before its load)" },
            g
        ),
    ];
    if launch > 0 {
        assumptions.push(format!("DRAM reads include up to {launch} sectors every launch costs besides its loads"));
    }
    Boundaries {
        model: format!("{}: bounds only (the estimate's budget ran out)", p.name),
        l1_hit_sectors: 0,
        l2_read_sectors: loads,
        l2_write_sectors: stores,
        dram_read_sectors: dram_read.max,
        dram_write_sectors: dram_write.max,
        bounds: BoundaryBounds {
            dram_read_sectors: dram_read,
            dram_write_sectors: dram_write,
            l2_read_sectors: Bound { min: l2_min, max: loads },
            l1_hit_sectors: Some(Bound { min: 0, max: loads - l2_min }),
        },
        assumptions,
        gpu: p.name.to_string(),
        method: "bounds-only".to_string(),
        bounds_only: true,
        resident_blocks_per_sm: o.resident_blocks,
        l1_bytes_per_sm: o.l1_bytes,
        l2_bytes: p.l2_bytes,
        excludes: Vec::new(),
    }
}

/// The most DRAM write sectors a launch can show: every sector it stores or updates atomically,
/// plus data left dirty in L2 before the launch that its own lines push out (the H200 wrote
/// back up to 73,224 sectors more than a matrix-vector product stored once its reads passed the
/// L2's size): at most the L2, at most a line per sector the launch sends to L2.
pub fn dram_write_max(p: &Profile, totals: &Totals) -> u64 {
    let own = totals.global_store.sectors + totals.global_red.sectors + totals.global_atom.sectors;
    let to_l2 = totals.global_load.sectors + own;
    let l2_sectors = p.l2_bytes / p.sector_bytes.max(1) as u64;
    own + l2_sectors.min(to_l2.saturating_mul(4))
}

/// A kernel with texture or surface rows: the boundaries say that their traffic is left out.
/// The H200 counts texture and surface misses in the same L2 counters as global ones
/// (`lts__t_sectors_srcunit_tex_op_{read,write}`) and their DRAM traffic with them, so the
/// estimates and the upper bounds cover the global accesses only; the lower bounds still hold
/// (more traffic only adds to the counters).
pub fn exclude_texture_traffic(b: &mut Boundaries, rows: &[Row]) {
    let mut spaces: Vec<Space> = rows.iter().filter(|r| r.texture_pipe()).map(|r| r.space).collect();
    spaces.sort();
    spaces.dedup();
    if spaces.is_empty() {
        return;
    }
    let names: Vec<&str> = spaces.iter().map(|s| s.name()).collect();
    b.assumptions.push(format!(
        "{} traffic not included: the estimates and the upper bounds cover the global accesses only (the H200 counts texture and surface sectors in the same L2 read and write counters, and their DRAM traffic, so a kernel with them shows more there); the lower bounds still hold",
        names.join(" and ")
    ));
    b.excludes = spaces;
}

/// Sectors in the byte range a footprint spans.
fn footprint_sectors(f: &Footprint) -> u64 {
    let (lo, hi) = (f.min_byte.div_euclid(32), (f.end_byte + 31).div_euclid(32));
    (hi - lo).max(0) as u64
}

/// The loaded parameters' ranges, in sectors.
fn footprint_reads(footprints: &[Footprint]) -> u64 {
    footprints.iter().filter(|f| f.loaded).map(footprint_sectors).sum()
}

/// Whether every parameter's range is known and the loaded ones fit in the model's L2
/// together (stores pass through L2 on their way out and were not seen to evict reused loads:
/// the H200 read A and B of a 2048^3 product, 32 MiB, once beside 16 MiB of C).
fn footprint_fits(p: &Profile, footprints: &[Footprint]) -> bool {
    footprints.iter().all(|f| f.complete) && footprint_reads(footprints) * p.sector_bytes as u64 <= p.l2_model_bytes
}

/// Boundaries without a sector stream, for a launch whose request-side counts came in closed
/// form (the symbolic engine) or whose stream was not simulated: the bounds that need no cache
/// model, and an estimate from the pointer parameters' footprints, labelled as such.
///
/// - L1->L2 reads: the load sectors (no L1 reuse assumed; an upper estimate).
/// - L1->L2 writes: the store sectors (stores write through).
/// - DRAM reads: the loaded parameters' byte ranges in sectors, at most the granules of the
///   load sectors, plus the launch's own reads; bounds from that to every load sector's granule.
/// - DRAM writes: none when every footprint fits in L2, else the stored ranges.
pub fn boundaries_unsimulated(kernel: &Kernel, setup: &Setup, totals: &Totals, footprints: &[Footprint]) -> Boundaries {
    let p = profile::lookup(&setup.gpu).unwrap_or(&profile::PROFILES[0]);
    let shared: u64 =
        kernel.shared.iter().filter(|a| !a.is_extern).map(|a| a.bytes()).sum::<u64>() + setup.shared_bytes;
    let o = p.occupancy(setup.threads_per_block(), shared);
    let g = (p.dram_granule_bytes / p.sector_bytes).max(1) as u64;
    let range = |f: &Footprint| -> u64 {
        let (lo, hi) = (f.min_byte.div_euclid(32), (f.end_byte + 31).div_euclid(32));
        (hi - lo).max(0) as u64
    };
    let complete = footprints.iter().all(|f| f.complete);
    let read_range: u64 = footprints.iter().filter(|f| f.loaded).map(range).sum();
    let written_range: u64 = footprints.iter().filter(|f| f.stored).map(range).sum();
    let loads = totals.global_load.sectors;
    let stores = totals.global_store.sectors;
    let launch = p.launch_dram_read_sectors;
    let dram_reads = if complete { read_range.min(g * loads) } else { g * loads } + launch;
    let fits = (read_range + written_range) * p.sector_bytes as u64 <= p.l2_model_bytes;
    let dram_writes = if fits { 0 } else { written_range.min(stores) };
    let together = crate::cache::resident_together(p, &o, setup.blocks());
    let mut assumptions = profile_assumptions(p, &o, together, 0);
    assumptions.retain(|a| !a.starts_with("not modelled") && !a.starts_with("misses to one sector"));
    assumptions.push(
        "unsimulated: no sector stream reached the cache model; L1 hits not estimated (L1->L2 reads shown are the load sectors, an upper estimate), DRAM reads estimated from the loaded parameters' byte ranges, DRAM writes from whether all ranges fit in L2".into(),
    );
    if launch > 0 {
        assumptions.push(format!("DRAM reads include {launch} sectors every launch costs besides its loads"));
    }
    Boundaries {
        model: format!("{}: footprint estimate (no sector stream)", p.name),
        l1_hit_sectors: 0,
        l2_read_sectors: loads,
        l2_write_sectors: stores,
        dram_read_sectors: dram_reads,
        dram_write_sectors: dram_writes,
        bounds: BoundaryBounds {
            dram_read_sectors: Bound {
                min: p.launch_dram_read_sectors_min,
                max: g * (loads + totals.global_red.sectors + totals.global_atom.sectors) + stores + launch,
            },
            dram_write_sectors: Bound { min: 0, max: dram_write_max(p, totals) },
            l2_read_sectors: Bound { min: 0, max: loads },
            l1_hit_sectors: None,
        },
        assumptions,
        gpu: p.name.to_string(),
        method: "unsimulated".to_string(),
        bounds_only: false,
        resident_blocks_per_sm: o.resident_blocks,
        l1_bytes_per_sm: o.l1_bytes,
        l2_bytes: p.l2_bytes,
        excludes: Vec::new(),
    }
}
