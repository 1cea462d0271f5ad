//! Prediction beside measurement: which Nsight Compute counter each sheet number is compared
//! with, the verdict rules, the per-line comparison, and the report model that
//! [`crate::report`] renders.
//!
//! Verdicts:
//! - `exact`: the measured count equals the prediction.
//! - `within tolerance`: a counter that may legitimately differ and does so by little: engine
//!   counters (requests, sectors, wavefronts) of accesses whose addresses are data-dependent
//!   (the sheet marks such rows inexact) within `data_dependent` (relative), and cache-model
//!   counters (L1 hits, L2 and DRAM traffic) within `model` (relative) or `model_abs` sectors.
//! - `within bounds`: outside the tolerance but inside the bounds the sheet states.
//! - `off`: anything else; an engine counter of a case with only known addresses is either
//!   exact or off.

use crate::gpu::{LaunchLog, LaunchRecord};
use crate::ncu::{RawResult, SourceBlock};
use crate::plan::CaseSpec;
use sector_analyzer::sheet::Sheet;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Exact,
    WithinTolerance,
    WithinBounds,
    Off,
    /// No measurement (the case did not run, or the metric is missing).
    NotMeasured,
    /// A measurement without a prediction (time).
    Info,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Exact => "exact",
            Verdict::WithinTolerance => "within tolerance",
            Verdict::WithinBounds => "within bounds",
            Verdict::Off => "OFF",
            Verdict::NotMeasured => "not measured",
            Verdict::Info => "",
        }
    }
}

/// How a counter is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Counted by the engine, exact by construction where addresses are known.
    Engine,
    /// Counted by the engine, but the hardware counter adds a few events the instructions do
    /// not explain (shared-memory wavefronts and bank conflicts).
    EngineShared,
    /// Estimated by the cache model.
    Model,
    /// Shown, not judged.
    Info,
}

#[derive(Clone, Copy, Debug, Serialize)]
pub struct Tolerance {
    /// Relative tolerance for engine counters of data-dependent accesses.
    pub data_dependent: f64,
    /// Relative tolerance for cache-model counters.
    pub model: f64,
    /// Absolute slack (sectors) for cache-model counters.
    pub model_abs: u64,
    /// Relative tolerance for shared-memory wavefronts and bank conflicts.
    pub shared: f64,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { data_dependent: 0.10, model: 0.10, model_abs: 64, shared: 0.01 }
    }
}

type Pred = fn(&Sheet) -> Option<u64>;
type Bounds = fn(&Sheet) -> Option<(u64, u64)>;

/// One counter compared per case.
pub struct CounterDef {
    pub key: &'static str,
    pub label: &'static str,
    pub metric: &'static str,
    pub class: Class,
    pub predicted: Pred,
    pub bounds: Bounds,
    /// `(space, op)` of the sheet rows behind the counter: their exactness decides whether the
    /// counter is data-dependent.
    pub rows: Option<(&'static str, &'static str)>,
}

fn no_bounds(_: &Sheet) -> Option<(u64, u64)> {
    None
}

fn row_bounds(s: &Sheet, space: &str, op: &str) -> Option<(u64, u64)> {
    let rows = s.instructions.iter().filter(|r| r.space == space && r.op == op);
    let (lo, hi) = rows.fold((0u64, 0u64), |(lo, hi), r| (lo + r.sectors_min, hi + r.sectors_max));
    Some((lo, hi))
}

fn nonempty(b: sector_analyzer::sheet::Bound) -> Option<(u64, u64)> {
    (b.max >= b.min && b.max > 0).then_some((b.min, b.max))
}

/// Every counter of the report, in report order.
pub const COUNTERS: &[CounterDef] = &[
    CounterDef {
        key: "global_load_requests",
        label: "global load requests",
        metric: "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_load.requests),
        bounds: no_bounds,
        rows: Some(("global", "load")),
    },
    CounterDef {
        key: "global_load_sectors",
        label: "global load sectors",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_load.sectors),
        bounds: |s| row_bounds(s, "global", "load"),
        rows: Some(("global", "load")),
    },
    CounterDef {
        key: "global_store_requests",
        label: "global store requests",
        metric: "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_store.requests),
        bounds: no_bounds,
        rows: Some(("global", "store")),
    },
    CounterDef {
        key: "global_store_sectors",
        label: "global store sectors",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_store.sectors),
        bounds: |s| row_bounds(s, "global", "store"),
        rows: Some(("global", "store")),
    },
    CounterDef {
        key: "global_red_requests",
        label: "global reductions (RED) requests",
        metric: "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_red.requests),
        bounds: no_bounds,
        rows: Some(("global", "red")),
    },
    CounterDef {
        key: "global_red_sectors",
        label: "global reductions (RED) sectors",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_red.sectors),
        bounds: |s| row_bounds(s, "global", "red"),
        rows: Some(("global", "red")),
    },
    CounterDef {
        key: "global_atom_requests",
        label: "global atomics (ATOM) requests",
        metric: "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_atom.requests),
        bounds: no_bounds,
        rows: Some(("global", "atom")),
    },
    CounterDef {
        key: "global_atom_sectors",
        label: "global atomics (ATOM) sectors",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_atom.sectors),
        bounds: |s| row_bounds(s, "global", "atom"),
        rows: Some(("global", "atom")),
    },
    CounterDef {
        key: "global_async_copy_requests",
        label: "async copies (LDGSTS) requests",
        metric: "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_async_copy.requests),
        bounds: no_bounds,
        rows: Some(("global", "async_copy")),
    },
    CounterDef {
        key: "global_async_copy_sectors",
        label: "async copies (LDGSTS) sectors",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_async_copy.sectors),
        bounds: |s| row_bounds(s, "global", "async_copy"),
        rows: Some(("global", "async_copy")),
    },
    CounterDef {
        key: "global_async_copy_bypass_requests",
        label: "async copies bypassing L1 (LDGSTS.BYPASS) requests",
        metric: "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_async_copy_bypass.requests),
        bounds: no_bounds,
        rows: Some(("global", "async_copy")),
    },
    CounterDef {
        key: "global_async_copy_bypass_sectors",
        label: "async copies bypassing L1 (LDGSTS.BYPASS) sectors",
        metric: "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_async_copy_bypass.sectors),
        bounds: no_bounds,
        rows: Some(("global", "async_copy")),
    },
    CounterDef {
        key: "shared_atom_instructions",
        label: "shared atomics (ATOMS) instructions",
        metric: "smsp__sass_inst_executed_op_shared_atom.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.shared_atom.requests),
        bounds: no_bounds,
        rows: Some(("shared", "atom")),
    },
    CounterDef {
        key: "shared_matrix_load_instructions",
        label: "matrix loads (LDSM, ldmatrix) instructions",
        metric: "smsp__inst_executed_op_ldsm.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.shared_matrix_load.requests),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "global_red_instructions",
        label: "executed RED instructions",
        metric: "smsp__sass_inst_executed_op_global_red.sum",
        class: Class::Info,
        predicted: |s| Some(s.totals.global_red.requests),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "global_atom_instructions",
        label: "executed ATOM instructions",
        metric: "smsp__sass_inst_executed_op_global_atom.sum",
        class: Class::Info,
        predicted: |s| Some(s.totals.global_atom.requests),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "ldgsts_instructions",
        label: "executed LDGSTS instructions",
        metric: "smsp__sass_inst_executed_op_ldgsts.sum",
        class: Class::Info,
        predicted: |s| Some(s.totals.global_async_copy.requests + s.totals.global_async_copy_bypass.requests),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "global_load_instructions",
        label: "executed global load instructions",
        metric: "smsp__sass_inst_executed_op_global_ld.sum",
        class: Class::Engine,
        predicted: |s| {
            let t = &s.totals;
            Some(t.global_load.requests - t.global_async_copy.requests - t.global_async_copy_bypass.requests)
        },
        bounds: no_bounds,
        rows: Some(("global", "load")),
    },
    CounterDef {
        key: "global_store_instructions",
        label: "executed global store instructions",
        metric: "smsp__sass_inst_executed_op_global_st.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.global_store.requests),
        bounds: no_bounds,
        rows: Some(("global", "store")),
    },
    CounterDef {
        key: "shared_load_requests",
        label: "shared load instructions",
        metric: "smsp__sass_inst_executed_op_shared_ld.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.shared_load.requests),
        bounds: no_bounds,
        rows: Some(("shared", "load")),
    },
    CounterDef {
        key: "shared_store_requests",
        label: "shared store instructions",
        metric: "smsp__sass_inst_executed_op_shared_st.sum",
        class: Class::Engine,
        predicted: |s| Some(s.totals.shared_store.requests),
        bounds: no_bounds,
        rows: Some(("shared", "store")),
    },
    CounterDef {
        key: "shared_load_wavefronts",
        label: "shared load wavefronts",
        metric: "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        class: Class::EngineShared,
        predicted: |s| Some(s.totals.shared_load.wavefronts),
        bounds: no_bounds,
        rows: Some(("shared", "load")),
    },
    CounterDef {
        key: "shared_store_wavefronts",
        label: "shared store wavefronts",
        metric: "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        class: Class::EngineShared,
        predicted: |s| Some(s.totals.shared_store.wavefronts),
        bounds: no_bounds,
        rows: Some(("shared", "store")),
    },
    CounterDef {
        key: "shared_load_bank_conflicts",
        label: "shared load bank conflicts",
        metric: "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        class: Class::EngineShared,
        predicted: |s| Some(s.totals.shared_load.bank_conflicts),
        bounds: no_bounds,
        rows: Some(("shared", "load")),
    },
    CounterDef {
        key: "shared_store_bank_conflicts",
        label: "shared store bank conflicts",
        metric: "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        class: Class::EngineShared,
        predicted: |s| Some(s.totals.shared_store.bank_conflicts),
        bounds: no_bounds,
        rows: Some(("shared", "store")),
    },
    CounterDef {
        key: "l1_hit_sectors",
        label: "L1 hit sectors (global loads)",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
        class: Class::Model,
        predicted: |s| Some(s.boundaries.l1_hit_sectors),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "l1_miss_sectors",
        label: "L1 miss sectors (global loads)",
        metric: "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
        class: Class::Model,
        predicted: |s| Some(s.totals.global_load.sectors.saturating_sub(s.boundaries.l1_hit_sectors)),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "l2_read_sectors",
        label: "L2 read sectors from L1",
        metric: "lts__t_sectors_srcunit_tex_op_read.sum",
        class: Class::Model,
        predicted: |s| Some(s.boundaries.l2_read_sectors),
        bounds: |s| nonempty(s.boundaries.bounds.l2_read_sectors),
        rows: None,
    },
    CounterDef {
        key: "l2_write_sectors",
        label: "L2 write sectors from L1",
        metric: "lts__t_sectors_srcunit_tex_op_write.sum",
        class: Class::Model,
        predicted: |s| Some(s.boundaries.l2_write_sectors),
        bounds: no_bounds,
        rows: None,
    },
    CounterDef {
        key: "dram_read_sectors",
        label: "DRAM read sectors",
        metric: "dram__sectors_read.sum",
        class: Class::Model,
        predicted: |s| Some(s.boundaries.dram_read_sectors),
        bounds: |s| nonempty(s.boundaries.bounds.dram_read_sectors),
        rows: None,
    },
    CounterDef {
        key: "dram_write_sectors",
        label: "DRAM write sectors",
        metric: "dram__sectors_write.sum",
        class: Class::Model,
        predicted: |s| Some(s.boundaries.dram_write_sectors),
        bounds: |s| nonempty(s.boundaries.bounds.dram_write_sectors),
        rows: None,
    },
    CounterDef {
        key: "time_ns",
        label: "kernel time (ns)",
        metric: "gpu__time_duration.sum",
        class: Class::Info,
        predicted: |_| None,
        bounds: no_bounds,
        rows: None,
    },
];

/// Judges one measurement. `data_dependent` matters for engine counters only.
pub fn verdict(
    class: Class,
    predicted: Option<u64>,
    measured: Option<f64>,
    data_dependent: bool,
    bounds: Option<(u64, u64)>,
    tol: &Tolerance,
) -> Verdict {
    let Some(m) = measured else {
        return Verdict::NotMeasured;
    };
    let Some(p) = predicted else {
        return Verdict::Info;
    };
    if class == Class::Info {
        return Verdict::Info;
    }
    let m = m.round() as i128;
    let p = p as i128;
    if m == p {
        return Verdict::Exact;
    }
    let d = (m - p).abs() as f64;
    let in_bounds = bounds.is_some_and(|(lo, hi)| (lo as i128..=hi as i128).contains(&m));
    let within = match class {
        Class::Engine if data_dependent => d <= tol.data_dependent * p as f64,
        Class::Engine => return Verdict::Off,
        Class::EngineShared => d <= tol.shared.max(if data_dependent { tol.data_dependent } else { 0.0 }) * p as f64,
        Class::Model => d <= (tol.model * p as f64).max(tol.model_abs as f64),
        Class::Info => false,
    };
    if within {
        Verdict::WithinTolerance
    } else if in_bounds {
        Verdict::WithinBounds
    } else {
        Verdict::Off
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct CounterResult {
    pub key: &'static str,
    pub label: &'static str,
    pub metric: &'static str,
    pub class: Class,
    pub predicted: Option<u64>,
    pub measured: Option<f64>,
    /// The manifest's hand-derived number, where it gives one.
    pub hand: Option<u64>,
    pub verdict: Verdict,
    /// measured - predicted.
    pub difference: Option<i128>,
    /// (measured - predicted) / predicted.
    pub relative: Option<f64>,
    pub bounds: Option<(u64, u64)>,
    pub data_dependent: bool,
}

/// Per source line and access kind: the sheet's rows beside the SASS instructions compiled from
/// that line.
#[derive(Clone, Debug, Serialize)]
pub struct LineResult {
    /// `None` for the example's own file; the file's path for a line of an included file.
    pub file: Option<String>,
    pub line: u32,
    /// `global` or `shared`.
    pub space: String,
    /// `load` or `store`.
    pub op: String,
    /// The source accesses on the line (the sheet's `text`).
    pub accesses: Vec<String>,
    /// The SASS instructions (opcode and operands).
    pub sass: Vec<String>,
    pub predicted_requests: Option<u64>,
    /// Warp-level executions of the line's SASS instructions (`Instructions Executed`).
    pub measured_executions: Option<u64>,
    pub predicted_sectors: Option<u64>,
    /// `L2 Theoretical Sectors Global`.
    pub measured_sectors: Option<u64>,
    pub predicted_ideal_sectors: Option<u64>,
    pub measured_ideal_sectors: Option<u64>,
    pub data_dependent: bool,
    pub verdict: Verdict,
}

#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub name: String,
    pub example: String,
    pub kernel: String,
    pub source: String,
    /// `compared`, or why not.
    pub status: String,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    /// Nsight Compute's result ID.
    pub ncu_id: Option<u32>,
    pub measured_kernel: Option<String>,
    pub host_code_stripped: bool,
    /// NVRTC could not compile the file and the toolkit's `nvcc` did.
    pub compiled_by_nvcc: bool,
    pub data_dependent: bool,
    pub assumptions: Vec<String>,
    /// The manifest's `boundary_note`: what the cache model does not capture in this case.
    pub boundary_note: Option<String>,
    /// The cache model's assumptions on the sheet.
    pub boundary_assumptions: Vec<String>,
    pub counters: Vec<CounterResult>,
    pub lines: Vec<LineResult>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Environment {
    pub gpu: String,
    pub compute_capability: String,
    pub driver: String,
    pub driver_cuda_version: String,
    pub cuda_version: String,
    pub nvrtc_version: String,
    pub ncu_version: String,
    pub profiler_command: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub key: &'static str,
    pub label: &'static str,
    pub class: Class,
    /// Cases with a measurement and a prediction.
    pub compared: usize,
    pub exact: usize,
    pub within_tolerance: usize,
    pub within_bounds: usize,
    pub off: usize,
    pub off_cases: Vec<String>,
}

impl Summary {
    /// `global load sectors: 17/17 cases exact` (plus the other verdicts when there are any).
    pub fn line(&self) -> String {
        if self.compared == 0 {
            return format!("{}: no case compared", self.label);
        }
        let mut s = format!("{}: {}/{} cases exact", self.label, self.exact, self.compared);
        if self.within_tolerance > 0 {
            s += &format!(", {} within tolerance", self.within_tolerance);
        }
        if self.within_bounds > 0 {
            s += &format!(", {} within bounds", self.within_bounds);
        }
        if self.off > 0 {
            s += &format!(", {} off ({})", self.off, self.off_cases.join(", "));
        }
        s
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub tool: String,
    pub environment: Environment,
    pub tolerance: Tolerance,
    pub cases: Vec<CaseResult>,
    pub summary: Vec<Summary>,
    /// Cases that were not compared, and why.
    pub not_compared: Vec<(String, String)>,
    pub per_line_note: String,
}

/// What one profiling run left behind (see [`crate::rawdir`]).
#[derive(Clone, Debug, Default)]
pub struct Measurements {
    pub log: LaunchLog,
    pub results: Vec<RawResult>,
    /// Source-page blocks per result ID.
    pub sources: HashMap<u32, Vec<SourceBlock>>,
    pub environment: Environment,
}

fn data_dependent_rows(sheet: &Sheet, space: &str, op: &str) -> bool {
    sheet.instructions.iter().any(|r| r.space == space && r.op == op && !r.exact)
}

/// Whether a source-page file is the example itself. By file name: the profile may have run
/// in another folder (another machine) than the comparison.
fn same_file(measured: &str, source: &Path) -> bool {
    let m = Path::new(measured);
    m == source || (m.file_name().is_some() && m.file_name() == source.file_name())
}

fn normalise_space(space: &str) -> Option<&'static str> {
    match space {
        "Global" | "Generic" => Some("global"),
        "Shared" => Some("shared"),
        _ => None,
    }
}

fn normalise_op(op: &str) -> Option<&'static str> {
    match op {
        "Load" => Some("load"),
        "Store" => Some("store"),
        _ => None,
    }
}

/// Compares the sheet's rows with the SASS instructions, line by line.
pub fn compare_lines(sheet: &Sheet, source: &Path, blocks: &[SourceBlock], tol: &Tolerance) -> Vec<LineResult> {
    type Key = (Option<String>, u32, &'static str, &'static str);
    let mut map: BTreeMap<Key, LineResult> = BTreeMap::new();
    let blank = |file: Option<String>, line: u32, space: &str, op: &str| LineResult {
        file,
        line,
        space: space.into(),
        op: op.into(),
        accesses: Vec::new(),
        sass: Vec::new(),
        predicted_requests: None,
        measured_executions: None,
        predicted_sectors: None,
        measured_sectors: None,
        predicted_ideal_sectors: None,
        measured_ideal_sectors: None,
        data_dependent: false,
        verdict: Verdict::NotMeasured,
    };
    for r in &sheet.instructions {
        let (space, op) = match (r.space.name(), r.op.name()) {
            ("global", "load") => ("global", "load"),
            ("global", "store") => ("global", "store"),
            ("shared", "load") => ("shared", "load"),
            ("shared", "store") => ("shared", "store"),
            _ => continue,
        };
        let e = map.entry((None, r.line, space, op)).or_insert_with(|| blank(None, r.line, space, op));
        e.accesses.push(r.text.clone());
        *e.predicted_requests.get_or_insert(0) += r.requests;
        if space == "global" {
            *e.predicted_sectors.get_or_insert(0) += r.sectors;
            *e.predicted_ideal_sectors.get_or_insert(0) += r.ideal_sectors;
        }
        e.data_dependent |= !r.exact;
    }
    for b in blocks {
        let file = if same_file(&b.file, source) { None } else { Some(b.file.clone()) };
        for i in &b.instructions {
            let (Some(space), Some(op)) = (normalise_space(&i.space), normalise_op(&i.op)) else {
                continue;
            };
            let e =
                map.entry((file.clone(), i.line, space, op)).or_insert_with(|| blank(file.clone(), i.line, space, op));
            e.sass.push(i.sass.clone());
            *e.measured_executions.get_or_insert(0) += i.executed;
            if space == "global" {
                *e.measured_sectors.get_or_insert(0) += i.l2_sectors;
                *e.measured_ideal_sectors.get_or_insert(0) += i.l2_sectors_ideal;
            }
        }
    }
    let mut out: Vec<LineResult> = map.into_values().collect();
    for l in &mut out {
        let dd = l.data_dependent;
        let req = verdict(
            Class::Engine,
            l.predicted_requests.or(Some(0)),
            l.measured_executions.map(|v| v as f64).or(Some(0.0)),
            dd,
            None,
            tol,
        );
        let sec = if l.space == "global" {
            verdict(
                Class::Engine,
                l.predicted_sectors.or(Some(0)),
                l.measured_sectors.map(|v| v as f64).or(Some(0.0)),
                dd,
                None,
                tol,
            )
        } else {
            Verdict::Exact
        };
        l.verdict = if blocks.is_empty() { Verdict::NotMeasured } else { worst(req, sec) };
    }
    out
}

fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Exact | Verdict::Info => 0,
        Verdict::WithinTolerance => 1,
        Verdict::WithinBounds => 2,
        Verdict::NotMeasured => 3,
        Verdict::Off => 4,
    }
}

fn worst(a: Verdict, b: Verdict) -> Verdict {
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

fn case_counters(spec: &CaseSpec, sheet: &Sheet, raw: Option<&RawResult>, tol: &Tolerance) -> Vec<CounterResult> {
    COUNTERS
        .iter()
        .map(|c| {
            let predicted = (c.predicted)(sheet);
            let measured = raw.and_then(|r| r.metric(c.metric));
            let dd = c.rows.is_some_and(|(space, op)| data_dependent_rows(sheet, space, op));
            let bounds = (c.bounds)(sheet);
            let v = verdict(c.class, predicted, measured, dd, bounds, tol);
            let difference = match (predicted, measured) {
                (Some(p), Some(m)) => Some(m.round() as i128 - p as i128),
                _ => None,
            };
            let relative = match (predicted, difference) {
                (Some(p), Some(d)) if p > 0 => Some(d as f64 / p as f64),
                _ => None,
            };
            CounterResult {
                key: c.key,
                label: c.label,
                metric: c.metric,
                class: c.class,
                predicted,
                measured,
                hand: spec.case.expect.get(c.key).copied(),
                verdict: v,
                difference,
                relative,
                bounds,
                data_dependent: dd,
            }
        })
        .collect()
}

/// `(4096, 1, 1)` as printed by Nsight Compute.
fn parse_dims(s: &str) -> Option<[u32; 3]> {
    let v: Vec<u32> = s
        .trim()
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(|x| x.trim().parse().ok())
        .collect::<Option<Vec<u32>>>()?;
    match v.as_slice() {
        [x, y, z] => Some([*x, *y, *z]),
        _ => None,
    }
}

/// Builds the report: every case of `cases`, matched to its launch record and its profiler
/// result (the n-th launched record is the n-th result).
pub fn build_report(cases: &[CaseSpec], m: &Measurements, tol: Tolerance) -> Report {
    let launched: Vec<&LaunchRecord> = m.log.launched().collect();
    let mut results = m.results.clone();
    results.sort_by_key(|r| r.id);
    let mut out_cases = Vec::new();
    let mut not_compared = Vec::new();
    for spec in cases {
        let rec = m.log.launches.iter().find(|r| r.case == spec.case.name);
        let index = launched.iter().position(|r| r.case == spec.case.name);
        let raw = index.and_then(|i| results.get(i));
        let mut status = String::from("compared");
        let mut raw_ok = raw;
        if let Some(r) = raw {
            let got = r.function_name();
            let grid_ok = match (&spec.prediction, parse_dims(&r.grid), parse_dims(&r.block)) {
                (Ok(s), Some(g), Some(b)) => s.launch.grid == g && s.launch.block == b,
                _ => true,
            };
            if !grid_ok {
                status = format!(
                    "profiler result {} ran grid {} block {}, not the case's: launches and results do not line up",
                    r.id, r.grid, r.block
                );
                raw_ok = None;
            } else if got != spec.case.kernel {
                status = format!(
                    "profiler result {} is kernel `{got}`, not `{}`: launches and results do not line up",
                    r.id, spec.case.kernel
                );
                raw_ok = None;
            }
        } else {
            status = match rec {
                None => "not in this run's launch log".into(),
                Some(r) if !r.launched => {
                    format!("not launched: {}", r.error.clone().unwrap_or_default())
                }
                Some(_) => "launched, but the profiler has no result for it".into(),
            };
        }
        if let Some(e) = rec.and_then(|r| r.error.as_ref()).filter(|_| rec.is_some_and(|r| r.launched)) {
            status = format!("{status} (the launch reported: {e})");
        }
        let sheet = match &spec.prediction {
            Ok(s) => s,
            Err(e) => {
                not_compared.push((spec.case.name.clone(), format!("no prediction: {e}")));
                out_cases.push(CaseResult {
                    name: spec.case.name.clone(),
                    example: spec.example.clone(),
                    kernel: spec.case.kernel.clone(),
                    source: spec.source.display().to_string(),
                    status: format!("no prediction: {e}"),
                    grid: None,
                    block: None,
                    ncu_id: raw_ok.map(|r| r.id),
                    measured_kernel: raw.map(|r| r.kernel.clone()),
                    host_code_stripped: rec.is_some_and(|r| r.host_code_stripped),
                    compiled_by_nvcc: rec.is_some_and(|r| r.compiled_by_nvcc),
                    data_dependent: false,
                    assumptions: Vec::new(),
                    boundary_note: spec.case.boundary_note.clone(),
                    boundary_assumptions: Vec::new(),
                    counters: Vec::new(),
                    lines: Vec::new(),
                });
                continue;
            }
        };
        if raw_ok.is_none() {
            not_compared.push((spec.case.name.clone(), status.clone()));
        }
        let counters = case_counters(spec, sheet, raw_ok, &tol);
        let blocks = raw_ok.and_then(|r| m.sources.get(&r.id)).map(Vec::as_slice).unwrap_or(&[]);
        let lines = compare_lines(sheet, &spec.source, blocks, &tol);
        let mut assumptions = sheet.assumptions.clone();
        for r in &sheet.instructions {
            for a in &r.assumptions {
                let a = format!("line {}: {a}", r.line);
                if !assumptions.contains(&a) {
                    assumptions.push(a);
                }
            }
        }
        out_cases.push(CaseResult {
            name: spec.case.name.clone(),
            example: spec.example.clone(),
            kernel: spec.case.kernel.clone(),
            source: spec.source.display().to_string(),
            status,
            grid: Some(sheet.launch.grid),
            block: Some(sheet.launch.block),
            ncu_id: raw_ok.map(|r| r.id),
            measured_kernel: raw.map(|r| r.kernel.clone()),
            host_code_stripped: rec.is_some_and(|r| r.host_code_stripped),
            compiled_by_nvcc: rec.is_some_and(|r| r.compiled_by_nvcc),
            data_dependent: sheet.instructions.iter().any(|r| !r.exact),
            assumptions,
            boundary_note: spec.case.boundary_note.clone(),
            boundary_assumptions: sheet.boundaries.assumptions.clone(),
            counters,
            lines,
        });
    }
    let summary = summarise(&out_cases);
    Report {
        tool: format!("sector-validate {}", env!("CARGO_PKG_VERSION")),
        environment: m.environment.clone(),
        tolerance: tol,
        cases: out_cases,
        summary,
        not_compared,
        per_line_note: "Per line, requests are compared with the warp-level executions of the \
            line's SASS memory instructions (Nsight Compute's `Instructions Executed`, which also \
            counts executions whose lanes are all predicated off) and sectors with `L2 Theoretical \
            Sectors Global`."
            .into(),
    }
}

fn summarise(cases: &[CaseResult]) -> Vec<Summary> {
    COUNTERS
        .iter()
        .filter(|c| c.class != Class::Info)
        .map(|c| {
            let mut s = Summary {
                key: c.key,
                label: c.label,
                class: c.class,
                compared: 0,
                exact: 0,
                within_tolerance: 0,
                within_bounds: 0,
                off: 0,
                off_cases: Vec::new(),
            };
            for case in cases {
                let Some(r) = case.counters.iter().find(|r| r.key == c.key) else {
                    continue;
                };
                match r.verdict {
                    Verdict::Exact => s.exact += 1,
                    Verdict::WithinTolerance => s.within_tolerance += 1,
                    Verdict::WithinBounds => s.within_bounds += 1,
                    Verdict::Off => {
                        s.off += 1;
                        s.off_cases.push(case.name.clone());
                    }
                    Verdict::NotMeasured | Verdict::Info => continue,
                }
                s.compared += 1;
            }
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Tolerance = Tolerance { data_dependent: 0.10, model: 0.10, model_abs: 64, shared: 0.01 };

    #[test]
    fn engine_counters_of_known_addresses_are_exact_or_off() {
        assert_eq!(verdict(Class::Engine, Some(100), Some(100.0), false, None, &T), Verdict::Exact);
        assert_eq!(verdict(Class::Engine, Some(100), Some(101.0), false, None, &T), Verdict::Off);
        assert_eq!(verdict(Class::Engine, Some(100), Some(101.0), false, Some((0, 200)), &T), Verdict::Off);
    }

    #[test]
    fn data_dependent_engine_counters() {
        assert_eq!(verdict(Class::Engine, Some(100), Some(109.0), true, None, &T), Verdict::WithinTolerance);
        assert_eq!(verdict(Class::Engine, Some(100), Some(111.0), true, None, &T), Verdict::Off);
        assert_eq!(verdict(Class::Engine, Some(100), Some(150.0), true, Some((50, 200)), &T), Verdict::WithinBounds);
        assert_eq!(verdict(Class::Engine, Some(100), Some(250.0), true, Some((50, 200)), &T), Verdict::Off);
    }

    #[test]
    fn model_counters() {
        assert_eq!(verdict(Class::Model, Some(1000), Some(1090.0), false, None, &T), Verdict::WithinTolerance);
        assert_eq!(verdict(Class::Model, Some(1000), Some(1200.0), false, None, &T), Verdict::Off);
        // Absolute slack for small counts.
        assert_eq!(verdict(Class::Model, Some(0), Some(40.0), false, None, &T), Verdict::WithinTolerance);
        assert_eq!(
            verdict(Class::Model, Some(1000), Some(1500.0), false, Some((500, 2000)), &T),
            Verdict::WithinBounds
        );
    }

    #[test]
    fn shared_wavefronts_allow_a_little() {
        // Seen on the H200: 1,048,694 wavefronts for 32,768 fully conflicting warp loads.
        assert_eq!(
            verdict(Class::EngineShared, Some(1_048_576), Some(1_048_694.0), false, None, &T),
            Verdict::WithinTolerance
        );
        assert_eq!(verdict(Class::EngineShared, Some(32_768), Some(65_536.0), false, None, &T), Verdict::Off);
    }

    #[test]
    fn missing_and_info() {
        assert_eq!(verdict(Class::Engine, Some(1), None, false, None, &T), Verdict::NotMeasured);
        assert_eq!(verdict(Class::Info, None, Some(5.0), false, None, &T), Verdict::Info);
    }

    #[test]
    fn summary_lines() {
        let s = Summary {
            key: "k",
            label: "global load sectors",
            class: Class::Engine,
            compared: 17,
            exact: 16,
            within_tolerance: 0,
            within_bounds: 0,
            off: 1,
            off_cases: vec!["gather_permutation".into()],
        };
        assert_eq!(s.line(), "global load sectors: 16/17 cases exact, 1 off (gather_permutation)");
    }
}
