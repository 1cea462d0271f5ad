//! `explain`: the seed lesson's reasoning for one warp-level execution of one instruction. Each
//! lane's thread, element, byte offset and sector; a map of the 128-byte lines and 32-byte
//! sectors the warp touches with the useful bytes marked; then why (active lanes, stride,
//! alignment, broadcast). The lanes come from the reference engine ([`crate::engine::probe()`]);
//! the sectors are counted by the engine's own rule ([`crate::engine::count`]).

use crate::analyze::{AnalyzeOptions, Failure, Input};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::engine::{self, Capture, LaneAddr, Probe, ProbeOutcome, SECTOR, WARP};
use crate::finding::{self, Finding, Severity};
use crate::ir::{AccessKind, Base, Kernel, MemOpId, Space};
use crate::launch::Setup;
use crate::sheet::text::thousands;
use crate::sheet::{LaunchInfo, Row};
use crate::source::{FileId, FileLoader, SourceFiles, Span};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// What to explain: the launch (as for `analyze`), the source line, and which warp-level
/// execution.
#[derive(Clone, Debug, Default)]
pub struct ExplainOptions {
    pub analyze: AnalyzeOptions,
    /// 1-based line of the root file.
    pub line: u32,
    /// Picks one access when the line has several; `None`: all of them.
    pub column: Option<u32>,
    /// `blockIdx`; `None`: the first block, in launch order, whose warp executes the access.
    pub block: Option<[u32; 3]>,
    /// Warp of the block; `None`: the first warp that executes the access.
    pub warp: Option<u32>,
    /// Which execution by that warp, from 0 (a loop's iterations).
    pub execution: u64,
    /// Also analyse the whole launch, to set this execution beside the instruction's average.
    pub launch_totals: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Explanation {
    pub kernel: String,
    pub file: String,
    pub launch: LaunchInfo,
    pub accesses: Vec<AccessExplanation>,
    /// Accesses on the line that the selected warp does not execute, with the reason.
    pub skipped: Vec<Skipped>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Skipped {
    pub line: u32,
    pub column: u32,
    pub text: String,
    pub reason: String,
}

/// One lane of the execution.
#[derive(Clone, Debug, Serialize)]
pub struct Lane {
    pub lane: u32,
    pub thread: [u32; 3],
    /// `active` (accesses memory), `inactive` (masked off by a branch, loop or return),
    /// `elided` (the compiler removed its load: the value is in a register).
    pub state: &'static str,
    /// Element index, `offset / width`, when the offset is a multiple of the width.
    pub index: Option<i64>,
    /// Bytes past the pointer (or the shared array's start); `None` when data-dependent.
    pub offset: Option<i64>,
    /// Sector number from the 256-byte boundary at or below the object.
    pub sector: Option<i64>,
    /// Shared memory: the bank of the first byte.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bank: Option<i64>,
}

/// One 128-byte line the warp touches.
#[derive(Clone, Debug, Serialize)]
pub struct LineMap {
    pub object: String,
    /// Line number from the 256-byte boundary at or below the object.
    pub line: i64,
    /// Per sector of the line: `None` when not touched, else the useful bytes in it.
    pub sectors: [Option<u32>; 4],
    /// One character per 4 bytes: `#` all requested, `+` some, `.` moved but not requested,
    /// ` ` sector not touched.
    pub cells: [String; 4],
}

/// The instruction over the whole launch (the sheet's row).
#[derive(Clone, Debug, Serialize)]
pub struct LaunchRow {
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub sectors_per_request: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wavefronts: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct AccessExplanation {
    pub line: u32,
    pub column: u32,
    pub text: String,
    /// `global` or `shared` in the JSON.
    pub space: Space,
    /// `load`, `store`, ... in the JSON ([`AccessKind::name`]).
    pub op: AccessKind,
    pub width: u32,
    #[serde(skip)]
    pub span: Span,
    pub block: [u32; 3],
    pub warp: u32,
    pub execution: u64,
    /// Executions of the access by this warp in all.
    pub executions: u64,
    /// The object the lanes point into (a pointer parameter or a shared array).
    pub object: String,
    /// Its start past a 256-byte boundary (`--offset`; shared arrays: their place in shared
    /// memory).
    pub object_offset: i64,
    pub lanes: Vec<Lane>,
    pub lines: Vec<LineMap>,
    /// 1 when at least one lane accessed memory, else 0.
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub useful_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wavefronts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal_wavefronts: Option<u64>,
    pub why: Vec<String>,
    pub whole_launch: Option<LaunchRow>,
}

/// Explains every access on the line (or the one at `column`).
pub fn explain(
    input: Input,
    opts: &ExplainOptions,
    loader: &dyn FileLoader,
) -> std::result::Result<(Explanation, SourceFiles), Failure> {
    let mut files = SourceFiles::default();
    match explain_inner(&input, opts, loader, &mut files) {
        Ok(e) => Ok((e, files)),
        Err(diagnostic) => Err(Failure { diagnostic, files }),
    }
}

fn explain_inner(
    input: &Input,
    opts: &ExplainOptions,
    loader: &dyn FileLoader,
    files: &mut SourceFiles,
) -> Result<Explanation> {
    let module = crate::analyze::lower(input, &opts.analyze, loader, files)?;
    let kernel = crate::analyze::pick_kernel(&module, opts.analyze.kernel.as_deref(), files)?;
    let setup = Setup::new(kernel, &opts.analyze.launch())?;
    let file = files.files.first().map(|f| f.path.display().to_string()).unwrap_or_default();

    // The accesses on the line, in column order (an inlined helper called twice gives two).
    let mut ops: Vec<MemOpId> = (0..kernel.mem_ops.len() as u32)
        .map(MemOpId)
        .filter(|&id| {
            let s = kernel.mem_op(id).span;
            s.file == FileId(0) && s.line == opts.line && opts.column.is_none_or(|c| s.column == c)
        })
        .collect();
    ops.sort_by_key(|&id| kernel.mem_op(id).span.column);
    if ops.is_empty() {
        let lines = files.files.first().map_or(0, |f| f.text.lines().count()) as u32;
        if opts.line == 0 || opts.line > lines {
            return Err(Diagnostic::new(
                ErrorKind::Usage,
                format!("--line {}: {file} has {lines} line{}", opts.line, if lines == 1 { "" } else { "s" }),
            ));
        }
        return Err(no_access_here(kernel, opts, &file));
    }

    // The sheet's rows for the same accesses, when the whole launch is wanted and analysable:
    // counted on this kernel, so that each access finds its row by id. (Rows counted from SASS
    // stand for source lines, not for one access: none is shown then.)
    let sheet = if opts.launch_totals && !crate::analyze::counts_sass(input, &opts.analyze) {
        crate::analyze::sheet_of(kernel, &opts.analyze, files).ok()
    } else {
        None
    };

    let mut accesses = Vec::new();
    let mut skipped = Vec::new();
    let mut first_error = None;
    for &id in &ops {
        let op = kernel.mem_op(id);
        let probe = Probe { op: id, block: opts.block, warp: opts.warp, execution: opts.execution };
        match engine::probe(kernel, &setup, probe)? {
            ProbeOutcome::Found(c) => {
                let row = sheet.as_ref().and_then(|s| s.instructions.iter().find(|r| r.op_id == id.0 as usize));
                accesses.push(explain_one(kernel, &setup, id, &c, row));
            }
            ProbeOutcome::NotFound { most_executions } => {
                let reason = not_found_reason(opts, most_executions);
                if first_error.is_none() {
                    first_error = Some(
                        Diagnostic::at(ErrorKind::Usage, op.span, format!("`{}` {reason}", op.text)).note(
                            "--block-index X,Y,Z and --warp W pick the warp (leave them out for the first warp that executes the access); --iteration I counts its executions from 0",
                        ),
                    );
                }
                skipped.push(Skipped { line: op.span.line, column: op.span.column, text: op.text.clone(), reason });
            }
        }
    }
    if accesses.is_empty() {
        return Err(first_error.expect("an access was looked at"));
    }
    Ok(Explanation {
        kernel: kernel.name.clone(),
        file,
        launch: LaunchInfo {
            grid: setup.grid,
            block: setup.block,
            args: setup.args.clone(),
            template_args: BTreeMap::new(),
            shared_bytes: setup.shared_bytes,
        },
        accesses,
        skipped,
    })
}

/// A row's lane map, or why it has none (a sentence).
pub type LaneMap = std::result::Result<AccessExplanation, String>;

/// What `explain` shows for each row of a sheet counted from `kernel` and `setup`: its first
/// warp-level execution, by the first warp in launch order that executes it, lane by lane; the
/// kernel is not lowered again. The HTML report's lane maps. A row gets the reason instead when
/// no warp executes it or looking for its warp ran out of `setup`'s budget.
pub fn first_executions(kernel: &Kernel, setup: &Setup, rows: &[Row]) -> Vec<LaneMap> {
    let never = || "no warp executes this access in this launch".to_string();
    rows.iter()
        .map(|row| {
            // A row no warp executes would make the probe walk the whole launch for nothing.
            if row.executions == 0 || row.op_id >= kernel.mem_ops.len() {
                return Err(never());
            }
            let id = MemOpId(row.op_id as u32);
            let probe = Probe { op: id, block: None, warp: None, execution: 0 };
            match engine::probe(kernel, setup, probe) {
                Ok(ProbeOutcome::Found(c)) => Ok(explain_one(kernel, setup, id, &c, Some(row))),
                Ok(ProbeOutcome::NotFound { .. }) => Err(never()),
                Err(d) => Err(format!("looking for the first warp that executes it stopped: {}", d.message)),
            }
        })
        .collect()
}

fn not_found_reason(opts: &ExplainOptions, most: u64) -> String {
    let warp = match (opts.block, opts.warp) {
        (Some(b), Some(w)) => format!("warp {w} of block ({}, {}, {})", b[0], b[1], b[2]),
        (Some(b), None) => format!("no warp of block ({}, {}, {})", b[0], b[1], b[2]),
        (None, Some(w)) => format!("warp {w} of no block"),
        (None, None) => "no warp of the launch".to_string(),
    };
    let times = |n: u64| if n == 1 { "once".to_string() } else { format!("{n} times") };
    match (opts.block, opts.warp) {
        (Some(_), Some(_)) if most == 0 => format!("is not executed by {warp}"),
        (Some(_), Some(_)) => {
            format!(
                "is executed {} by {warp}, so there is no execution {} (counted from 0)",
                times(most),
                opts.execution
            )
        }
        _ if opts.execution == 0 => format!("is executed by {warp}"),
        _ => format!("is executed more than {} by {warp} (at most {})", times(opts.execution), times(most)),
    }
}

fn no_access_here(kernel: &Kernel, opts: &ExplainOptions, file: &str) -> Diagnostic {
    let lines: BTreeSet<(u32, u32)> = kernel
        .mem_ops
        .iter()
        .filter(|m| m.span.file == FileId(0))
        .map(|m| (m.span.line, if opts.column.is_some() { m.span.column } else { 0 }))
        .collect();
    let place = match opts.column {
        Some(c) => format!("{file}:{}:{c}", opts.line),
        None => format!("{file}:{}", opts.line),
    };
    let d = Diagnostic::new(ErrorKind::Usage, format!("{place}: kernel `{}` has no memory access there", kernel.name));
    let listed: Vec<String> =
        lines.iter().take(40).map(|(l, c)| if *c == 0 { l.to_string() } else { format!("{l}:{c}") }).collect();
    if listed.is_empty() {
        d.note(format!("kernel `{}` has no memory access in this file", kernel.name))
    } else {
        d.note(format!(
            "its accesses are on {}: {}",
            if opts.column.is_some() { "line:column" } else { "lines" },
            listed.join(", ")
        ))
    }
}

fn object_name(kernel: &Kernel, b: Base) -> String {
    match b {
        Base::Param(p) => kernel.param(p).name.clone(),
        Base::Shared(s) => kernel.shared[s.0 as usize].name.clone(),
    }
}

/// Lanes as a short list of ranges: `0-4, 9, 30-31`.
fn ranges(mask: u32) -> String {
    let mut out = Vec::new();
    let mut l = 0;
    while l < 32 {
        if mask >> l & 1 == 1 {
            let start = l;
            while l + 1 < 32 && mask >> (l + 1) & 1 == 1 {
                l += 1;
            }
            out.push(if start == l { start.to_string() } else { format!("{start}-{l}") });
        }
        l += 1;
    }
    out.join(", ")
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

fn explain_one(kernel: &Kernel, setup: &Setup, id: MemOpId, c: &Capture, row: Option<&Row>) -> AccessExplanation {
    let op = kernel.mem_op(id);
    let width = op.width;
    let w = width as i64;
    let active = c.present & !c.elided;
    let lane_list = |m: u32| (0..WARP as u32).filter(move |l| m >> l & 1 == 1);
    let known: Vec<(u32, LaneAddr)> = lane_list(active).filter_map(|l| c.addrs[l as usize].map(|a| (l, a))).collect();
    let n_unknown = lane_list(active).filter(|&l| c.addrs[l as usize].is_none()).count() as u64;
    let main_base = known.first().map(|(_, a)| a.base);
    let object = main_base.map(|b| object_name(kernel, b)).unwrap_or_else(|| "unknown".into());
    let object_offset = known.first().map(|(_, a)| a.from_boundary - a.offset).unwrap_or(0);
    let shared = op.space == Space::Shared;

    // Per lane.
    let lanes: Vec<Lane> = lane_list(c.lanes)
        .map(|l| {
            let state = if c.present >> l & 1 == 0 {
                "inactive"
            } else if c.elided >> l & 1 == 1 {
                "elided"
            } else {
                "active"
            };
            let a = if state == "inactive" { None } else { c.addrs[l as usize] };
            Lane {
                lane: l,
                thread: c.tid[l as usize],
                state,
                index: a.and_then(|a| (a.offset.rem_euclid(w) == 0).then_some(a.offset.div_euclid(w))),
                offset: a.map(|a| a.offset),
                sector: a.map(|a| a.from_boundary.div_euclid(SECTOR as i64)),
                bank: if shared { a.map(|a| a.from_boundary.div_euclid(4).rem_euclid(32)) } else { None },
            }
        })
        .collect();

    // Sectors, as Engine::record counts them.
    let abs: Vec<i64> = known.iter().map(|(_, a)| a.absolute).collect();
    let mut scratch = Vec::new();
    let known_sectors = if engine::compiler_model::performed_per_lane(op) {
        engine::count::atomic_sectors(&abs, width, &mut scratch)
    } else {
        engine::sectors_of(&abs, width, &mut scratch)
    };
    let requests = u64::from(active != 0 && !c.promoted);
    let (mut sectors, mut ideal_sectors, mut wavefronts, mut ideal_wavefronts) = (0, 0, None, None);
    // A texture or surface operation: one instruction, no sectors predicted.
    if requests == 1 && op.space.has_address() {
        if shared {
            let wf = engine::wavefronts(&abs, width);
            wavefronts = Some(wf.wavefronts);
            ideal_wavefronts = Some(wf.ideal);
        } else {
            sectors = engine::count::global_sectors(known_sectors, n_unknown, width).sectors;
            ideal_sectors = engine::count::ideal_sectors(&abs, n_unknown, width);
        }
    }

    // Useful bytes, per object, from its boundary.
    let mut useful: BTreeMap<(String, i64), BTreeSet<i64>> = BTreeMap::new();
    for (_, a) in &known {
        let name = object_name(kernel, a.base);
        for b in a.from_boundary..a.from_boundary + w {
            useful.entry((name.clone(), b.div_euclid(128))).or_default().insert(b);
        }
    }
    let useful_bytes: u64 = useful.values().map(|s| s.len() as u64).sum();
    let lines: Vec<LineMap> = if shared || c.promoted {
        Vec::new()
    } else {
        useful
            .iter()
            .map(|((name, line), bytes)| {
                let mut sectors = [None; 4];
                let mut cells: [String; 4] = Default::default();
                for (s, (slot, cell)) in sectors.iter_mut().zip(cells.iter_mut()).enumerate() {
                    let start = line * 128 + s as i64 * 32;
                    let n = (start..start + 32).filter(|b| bytes.contains(b)).count() as u32;
                    if n == 0 {
                        *cell = " ".repeat(8);
                        continue;
                    }
                    *slot = Some(n);
                    for q in 0..8 {
                        let k = (0..4).filter(|i| bytes.contains(&(start + q * 4 + i))).count();
                        cell.push(match k {
                            4 => '#',
                            0 => '.',
                            _ => '+',
                        });
                    }
                }
                LineMap { object: name.clone(), line: *line, sectors, cells }
            })
            .collect()
    };

    let mut e = AccessExplanation {
        line: op.span.line,
        column: op.span.column,
        text: op.text.clone(),
        space: op.space,
        op: op.kind,
        width,
        span: op.span,
        block: c.block,
        warp: c.warp,
        execution: c.execution,
        executions: c.executions,
        object,
        object_offset,
        lanes,
        lines,
        requests,
        sectors,
        ideal_sectors,
        useful_bytes,
        wavefronts,
        ideal_wavefronts,
        why: Vec::new(),
        whole_launch: row.map(|r| LaunchRow {
            requests: r.requests,
            sectors: r.sectors,
            ideal_sectors: r.ideal_sectors,
            sectors_per_request: (r.sectors_per_request() * 100.0).round() / 100.0,
            wavefronts: r.wavefronts,
        }),
    };
    e.why = why(kernel, setup, c, &e, &known, n_unknown);
    e
}

/// The reasons, in the order the seed lesson checks them: which lanes take part, how their
/// addresses step from lane to lane, alignment, then the count.
fn why(
    kernel: &Kernel,
    setup: &Setup,
    c: &Capture,
    e: &AccessExplanation,
    known: &[(u32, LaneAddr)],
    n_unknown: u64,
) -> Vec<String> {
    let mut out = Vec::new();
    let w = e.width as i64;
    let threads = setup.threads_per_block();
    let n_lanes = c.lanes.count_ones() as u64;
    if n_lanes < WARP as u64 {
        out.push(format!(
            "partial warp: a block of {threads} threads ends with warp {} of {n_lanes} lanes (threads {}..{}); lanes {n_lanes}-31 do not exist",
            c.warp,
            c.warp as u64 * 32,
            c.warp as u64 * 32 + n_lanes - 1
        ));
    }
    let inactive = c.lanes & !c.present;
    if inactive != 0 {
        out.push(format!(
            "{} ({}) do not execute this access: a branch, a loop exit or a `return` masked them off before it",
            plural(inactive.count_ones() as u64, "lane", "lanes"),
            ranges(inactive)
        ));
    }
    if c.elided != 0 {
        out.push(format!(
            "{} ({}) already hold this value in a register (they loaded or stored this address before, with no store in between that may alias it): the compiler removes their load",
            plural(c.elided.count_ones() as u64, "lane", "lanes"),
            ranges(c.elided)
        ));
    }
    let active = c.present & !c.elided;
    if active == 0 {
        out.push("no lane accesses memory: this execution is no request".into());
        return out;
    }
    if c.promoted {
        out.push("the compiler keeps this store in a register inside its loop (LLVM's LICM: nothing in the loop may alias it): this execution makes no request; memory sees one store per lane after the loop, of the lane's last value".into());
        return out;
    }
    let n_active = active.count_ones() as u64;
    if !e.space.has_address() {
        out.push(format!(
            "{} x {} bytes = {} bytes asked for, through the texture pipeline: one {} instruction for the warp; the texture unit computes its addresses from the {}'s binding and layout (host code), so its sectors are not predicted (none on the LSU global counters)",
            plural(n_active, "active lane", "active lanes"),
            e.width,
            thousands(n_active * e.width as u64),
            e.space,
            e.space
        ));
        return out;
    }
    out.push(format!(
        "{} x {} bytes = {} bytes asked for{}",
        plural(n_active, "active lane", "active lanes"),
        e.width,
        thousands(n_active * e.width as u64),
        if e.useful_bytes > 0 && e.useful_bytes < (n_active - n_unknown) * e.width as u64 {
            format!(", {} of them distinct (lanes share addresses)", thousands(e.useful_bytes))
        } else {
            String::new()
        }
    ));
    if n_unknown > 0 {
        out.push(format!(
            "{} of the active lanes take their address from data read from memory, which the analysis does not know: by the default assumption each touches its own sector (give the array's contents with --fill to make it exact)",
            plural(n_unknown, "lane", "lanes")
        ));
    }

    // How addresses step from lane to lane.
    if known.len() >= 2 {
        let bases: BTreeSet<String> = known.iter().map(|(_, a)| object_name(kernel, a.base)).collect();
        if bases.len() > 1 {
            out.push(format!(
                "the lanes point into {} different objects ({}): each object's sectors are its own",
                bases.len(),
                bases.iter().cloned().collect::<Vec<_>>().join(", ")
            ));
        }
        out.push(stride_reason(c, known, w));
    }

    // Alignment of the span.
    if !known.is_empty() && e.space == Space::Global {
        let lo = known.iter().map(|(_, a)| a.from_boundary).min().unwrap_or(0);
        let hi = known.iter().map(|(_, a)| a.from_boundary + w).max().unwrap_or(0);
        let into = lo.rem_euclid(SECTOR as i64);
        let distinct: BTreeSet<i64> = known.iter().map(|(_, a)| a.from_boundary).collect();
        let contiguous = distinct.len() as i64 * w == hi - lo;
        if e.object_offset != 0 {
            out.push(format!(
                "`{}` starts {} bytes past a 256-byte boundary (--offset): sectors are counted from that boundary",
                e.object, e.object_offset
            ));
        }
        if contiguous {
            let aligned = (hi - lo).div_euclid(SECTOR as i64) + i64::from((hi - lo) % SECTOR as i64 != 0);
            let span = e.sectors as i64;
            if into != 0 && span > aligned {
                out.push(format!(
                    "misaligned: the span starts {into} bytes past a sector boundary, so its {} bytes cover {span} sectors where an aligned start would need {aligned}",
                    hi - lo
                ));
            } else if into == 0 && (hi - lo) % SECTOR as i64 == 0 {
                out.push(format!(
                    "aligned: the span starts on a sector boundary (byte {}), so its {} bytes fill {span} whole sector{}",
                    thousands(lo as u64),
                    hi - lo,
                    if span == 1 { "" } else { "s" }
                ));
            } else if into == 0 {
                out.push(format!(
                    "aligned: the span starts on a sector boundary (byte {}); its {} bytes need {span} sector{}, the last one partly used",
                    thousands(lo as u64),
                    hi - lo,
                    if span == 1 { "" } else { "s" }
                ));
            } else {
                out.push(format!(
                    "the span starts {into} bytes past a sector boundary and still fits in {span} sector{}",
                    if span == 1 { "" } else { "s" }
                ));
            }
        }
    }

    // The count.
    match e.space {
        Space::Shared => {
            let wf = e.wavefronts.unwrap_or(0);
            let ideal = e.ideal_wavefronts.unwrap_or(0);
            out.push(if wf > ideal {
                format!(
                    "{} where {ideal} would do: lanes that use different 4-byte words of one bank wait for each other (bank conflicts)",
                    plural(wf, "wavefront", "wavefronts")
                )
            } else {
                format!("{}: no bank conflict", plural(wf, "wavefront", "wavefronts"))
            });
        }
        _ => {
            let moved = e.sectors * SECTOR;
            let pct = if moved > 0 { 100.0 * e.useful_bytes as f64 / moved as f64 } else { 0.0 };
            let mut s = format!(
                "{} ({} bytes moved) {} {} useful bytes: {:.1}% of the bytes moved are used",
                plural(e.sectors, "sector", "sectors"),
                thousands(moved),
                if e.sectors == 1 { "carries" } else { "carry" },
                thousands(e.useful_bytes + n_unknown * e.width as u64),
                pct.min(100.0)
            );
            if n_unknown > 0 {
                s = format!(
                    "{} ({} bytes moved, by the default assumption for the unknown lanes)",
                    plural(e.sectors, "sector", "sectors"),
                    thousands(moved)
                );
            }
            if e.sectors > e.ideal_sectors {
                let _ = write!(
                    s,
                    "; the fewest sectors that could carry them is {}, so this execution costs {:.1}x the ideal",
                    e.ideal_sectors,
                    e.sectors as f64 / e.ideal_sectors.max(1) as f64
                );
            } else {
                s.push_str("; no fewer sectors could carry them");
            }
            out.push(s);
        }
    }
    if let Some(r) = &e.whole_launch {
        if r.requests > 0 {
            let per = r.sectors as f64 / r.requests as f64;
            let this = if e.space == Space::Shared { e.wavefronts.unwrap_or(0) as f64 } else { e.sectors as f64 };
            let unit = if e.space == Space::Shared { "wavefronts" } else { "sectors" };
            let total = if e.space == Space::Shared { r.wavefronts.unwrap_or(0) } else { r.sectors };
            let avg = total as f64 / r.requests as f64;
            let _ = per;
            out.push(format!(
                "over the whole launch this access makes {} and {} {unit}, {avg:.2} per request: this execution ({this:.0}) is {}",
                plural(r.requests, "request", "requests"),
                thousands(total),
                if (avg - this).abs() < 0.005 { "typical" } else if this > avg { "above the average" } else { "below the average" }
            ));
        }
    }
    out
}

/// How the active lanes' addresses step from one lane to the next.
fn stride_reason(c: &Capture, known: &[(u32, LaneAddr)], w: i64) -> String {
    let all_same = known.iter().all(|(_, a)| a.absolute == known[0].1.absolute);
    if all_same {
        return "broadcast: every active lane uses the same address, so one sector serves them all".into();
    }
    if let Some(d) = constant_stride(known) {
        return stride_words(d, w, "consecutive lanes");
    }
    // A permutation of a contiguous span.
    let mut distinct: Vec<i64> = known.iter().map(|(_, a)| a.absolute).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let contiguous = distinct.windows(2).all(|p| p[1] - p[0] == w);
    if contiguous && distinct.len() == known.len() {
        return format!(
            "the lanes' addresses are a permutation of one contiguous span of {} bytes: lane order does not matter, the same sectors as in order",
            distinct.len() as i64 * w
        );
    }
    // Rows of a 2-D block: lanes with the same threadIdx.y (and .z) step evenly.
    let mut rows: BTreeMap<(u32, u32), Vec<(u32, LaneAddr)>> = BTreeMap::new();
    for &(l, a) in known {
        let t = c.tid[l as usize];
        rows.entry((t[2], t[1])).or_default().push((l, a));
    }
    if rows.len() > 1 {
        let strides: BTreeSet<Option<i64>> =
            rows.values().map(|r| if r.len() < 2 { None } else { constant_stride(r) }).collect();
        let firsts: Vec<i64> = rows.values().map(|r| r[0].1.absolute).collect();
        if strides.len() == 1 && strides.iter().next().is_some_and(|s| s.is_some()) {
            let d = strides.into_iter().next().flatten().unwrap_or(0);
            let row_steps: BTreeSet<i64> = firsts.windows(2).map(|p| p[1] - p[0]).collect();
            let step = if row_steps.len() == 1 {
                format!(", and the rows start {} bytes apart", row_steps.iter().next().copied().unwrap_or(0))
            } else {
                String::new()
            };
            return format!(
                "the warp spans {} rows of the block (threadIdx.y); within a row {}{step}",
                rows.len(),
                stride_words(d, w, "consecutive lanes")
            );
        }
    }
    let lo = distinct.first().copied().unwrap_or(0);
    let hi = distinct.last().copied().unwrap_or(0) + w;
    format!(
        "irregular addresses: {} distinct addresses spread over {} bytes",
        distinct.len(),
        thousands((hi - lo) as u64)
    )
}

/// The stride per lane when every pair of active lanes agrees on it.
fn constant_stride(known: &[(u32, LaneAddr)]) -> Option<i64> {
    let (l0, a0) = known[0];
    let (l1, a1) = known[1];
    let dl = (l1 - l0) as i64;
    let dd = a1.absolute - a0.absolute;
    if dd % dl != 0 {
        return None;
    }
    let d = dd / dl;
    known.iter().all(|(l, a)| a.absolute - a0.absolute == d * (*l as i64 - l0 as i64)).then_some(d)
}

fn stride_words(d: i64, w: i64, who: &str) -> String {
    let elems = if d % w == 0 { format!(" ({} elements)", d / w) } else { String::new() };
    if d == w {
        format!("{who} use consecutive elements ({w} bytes apart): together they cover one contiguous span")
    } else if d == -w {
        format!("{who} use consecutive elements in reverse order ({w} bytes apart): still one contiguous span")
    } else if d.abs() >= SECTOR as i64 {
        format!(
            "{who} are {} bytes apart{elems}: at least one sector, so every lane touches a sector of its own",
            thousands(d.unsigned_abs())
        )
    } else {
        format!(
            "{who} are {} bytes apart{elems}, more than the {w} bytes each uses: the span has gaps, and sectors carry bytes no lane asked for",
            d.abs()
        )
    }
}

/// The explanation for a person: for each access, a source snippet with the numbers, the lanes,
/// the map and why.
pub fn render_text(x: &Explanation, files: &SourceFiles, color: bool) -> String {
    let mut s = String::new();
    let g = x.launch.grid;
    let b = x.launch.block;
    let _ = writeln!(s, "sector-estimate explain: kernel `{}` in {}", x.kernel, x.file);
    let args: Vec<String> = x
        .launch
        .args
        .iter()
        .map(|(k, v)| match v {
            crate::sheet::ArgValue::Int(i) => format!("{k}={i}"),
            crate::sheet::ArgValue::Float(f) => format!("{k}={f}"),
        })
        .collect();
    let _ = writeln!(
        s,
        "launch: grid ({}, {}, {}) x block ({}, {}, {}){}",
        g[0],
        g[1],
        g[2],
        b[0],
        b[1],
        b[2],
        if args.is_empty() { String::new() } else { format!("; {}", args.join(", ")) }
    );
    for a in &x.accesses {
        s.push('\n');
        render_access(&mut s, a, files, color);
    }
    for k in &x.skipped {
        let _ = writeln!(s, "\n{}:{} `{}` {}", k.line, k.column, k.text, k.reason);
    }
    if let Some(l) = line_summary(x) {
        let _ = writeln!(s, "\n{l}");
    }
    s
}

fn render_access(s: &mut String, a: &AccessExplanation, files: &SourceFiles, color: bool) {
    let times = match a.executions {
        1 => "the only one by this warp".to_string(),
        n => format!("of {n} by this warp, counted from 0"),
    };
    let n_active = a.lanes.iter().filter(|l| l.state == "active").count();
    let numbers = if a.space == Space::Shared {
        format!(
            "{n_active} x {}-byte {} {}: {} (fewest {})",
            a.width,
            a.space,
            a.op,
            plural(a.wavefronts.unwrap_or(0), "wavefront", "wavefronts"),
            a.ideal_wavefronts.unwrap_or(0)
        )
    } else if a.requests == 0 {
        format!("{}-byte {} {}: no request in this execution", a.width, a.space, a.op)
    } else if !a.space.has_address() {
        format!("{n_active} x {}-byte {} {}: one instruction, sectors not predicted", a.width, a.space, a.op)
    } else {
        format!(
            "{n_active} x {}-byte {} {}: {} for {} useful bytes (fewest {})",
            a.width,
            a.space,
            a.op,
            plural(a.sectors, "sector", "sectors"),
            a.useful_bytes,
            a.ideal_sectors
        )
    };
    let f = Finding {
        severity: Severity::Note,
        rule: String::new(),
        message: format!(
            "warp {} of block ({}, {}, {}), execution {} ({times})",
            a.warp, a.block[0], a.block[1], a.block[2], a.execution
        ),
        span: Some(a.span),
        label: numbers,
        notes: Vec::new(),
    };
    s.push_str(&finding::render(files, &f, color));

    // Lanes: a texture or surface operation has no address of its own to map.
    if !a.space.has_address() {
        let _ = writeln!(s, "no lane map: the texture unit computes the lanes' addresses from the coordinates\n");
        let _ = writeln!(s, "why:");
        for w in &a.why {
            let _ = writeln!(s, "  - {w}");
        }
        return;
    }
    let shared = a.space == Space::Shared;
    let _ = writeln!(
        s,
        "lanes of `{}`: element = byte offset / {}; {}",
        a.object,
        a.width,
        if shared {
            "offsets from the array's start, banks of 4-byte words from the start of shared memory".to_string()
        } else if a.object_offset != 0 {
            format!(
                "offsets from the pointer; sectors counted from the 256-byte boundary {} bytes below it",
                a.object_offset
            )
        } else {
            "offsets from the pointer, which starts on a 256-byte boundary; sector = offset / 32".to_string()
        }
    );
    let mut head = vec!["lane", "threadIdx", "element", "byte offset", if shared { "bank" } else { "sector" }];
    head.push("");
    let opt = |v: Option<i64>| v.map_or("-".to_string(), |v| v.to_string());
    let rows: Vec<Vec<String>> = a
        .lanes
        .iter()
        .map(|l| {
            let t = format!("({}, {}, {})", l.thread[0], l.thread[1], l.thread[2]);
            match l.state {
                "inactive" => {
                    vec![l.lane.to_string(), t, String::new(), String::new(), String::new(), "inactive".into()]
                }
                state => vec![
                    l.lane.to_string(),
                    t,
                    opt(l.index),
                    l.offset.map_or("data".to_string(), |o| o.to_string()),
                    if shared { opt(l.bank) } else { opt(l.sector) },
                    if state == "elided" { "in a register: no load".into() } else { String::new() },
                ],
            }
        })
        .collect();
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for r in &rows {
        for (w, v) in widths.iter_mut().zip(r) {
            *w = (*w).max(v.len());
        }
    }
    let line = |cells: Vec<String>| {
        let mut l = String::from(" ");
        for (i, (v, w)) in cells.iter().zip(&widths).enumerate() {
            l.push_str("  ");
            if i == 1 || i == 5 {
                let _ = write!(l, "{v:<w$}");
            } else {
                let _ = write!(l, "{v:>w$}");
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(s, "{}", line(head.iter().map(|h| h.to_string()).collect()));
    for r in rows {
        let _ = writeln!(s, "{}", line(r));
    }

    // Map.
    if !a.lines.is_empty() {
        let objects: BTreeSet<&str> = a.lines.iter().map(|l| l.object.as_str()).collect();
        let _ = writeln!(
            s,
            "\n128-byte lines and their four 32-byte sectors (# 4 useful bytes, + some useful, . moved but unused, blank: not touched)"
        );
        let first = |l: &LineMap| format!("{}..{}", l.line * 128, l.line * 128 + 127);
        let lw = a.lines.iter().map(|l| l.line.to_string().len()).max().unwrap_or(1);
        let bw = a.lines.iter().map(|l| first(l).len()).max().unwrap_or(1);
        for l in &a.lines {
            let touched = l.sectors.iter().flatten().count();
            let used: u32 = l.sectors.iter().flatten().sum();
            let obj = if objects.len() > 1 { format!("{} ", l.object) } else { String::new() };
            let _ = writeln!(
                s,
                "  {obj}line {:>lw$}  bytes {:<bw$}  |{}|{}|{}|{}|  {} of {} bytes used",
                l.line,
                first(l),
                l.cells[0],
                l.cells[1],
                l.cells[2],
                l.cells[3],
                used,
                touched * 32
            );
        }
    }

    let _ = writeln!(s, "\nwhy:");
    for w in &a.why {
        let _ = writeln!(s, "  - {w}");
    }
}

/// For a line of several global accesses executed by one warp: their sectors together, as the
/// seed lesson adds the transpose's read and write (36 sectors where 8 would do).
fn line_summary(x: &Explanation) -> Option<String> {
    let g: Vec<&AccessExplanation> = x.accesses.iter().filter(|a| a.space == Space::Global).collect();
    if g.len() < 2 || g.iter().any(|a| (a.block, a.warp, a.execution) != (g[0].block, g[0].warp, g[0].execution)) {
        return None;
    }
    let sectors: u64 = g.iter().map(|a| a.sectors).sum();
    let ideal: u64 = g.iter().map(|a| a.ideal_sectors).sum();
    let useful: u64 = g.iter().map(|a| a.useful_bytes).sum();
    let parts: Vec<String> = g.iter().map(|a| a.sectors.to_string()).collect();
    Some(format!(
        "line {}, warp {} of block ({}, {}, {}): its {} global accesses touch {} = {} sectors for {} useful bytes, where {} would do",
        g[0].line,
        g[0].warp,
        g[0].block[0],
        g[0].block[1],
        g[0].block[2],
        g.len(),
        parts.join(" + "),
        sectors,
        useful,
        ideal
    ))
}

/// The machine form: the same facts as JSON.
pub fn render_json(x: &Explanation) -> String {
    let mut s = serde_json::to_string_pretty(x).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
