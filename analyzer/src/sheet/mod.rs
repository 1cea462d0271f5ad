//! The accounting sheet: the engine's counts per source instruction, totals, boundaries and the
//! assumptions behind them. Renderers ([`text`], [`markdown`], [`json`], [`html`]) are pure
//! functions of it (the HTML page also of the source text and the rows' lane maps).

pub mod budget;
pub mod build;
pub mod json;
pub mod markdown;
pub mod text;

use crate::ir::{AccessKind, Space};
use crate::source::Span;
use serde::Serialize;
use std::collections::BTreeMap;

pub use crate::launch::ArgValue;

#[derive(Clone, Debug, Serialize)]
pub struct LaunchInfo {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub args: BTreeMap<String, ArgValue>,
    /// The kernel's template arguments as the launch bound them (`T = "float"`, `BS = "256"`):
    /// with `grid`, `block`, `args` and `shared_bytes`, everything needed to launch it again.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub template_args: BTreeMap<String, String>,
    /// Dynamic shared memory per block, in bytes.
    #[serde(skip_serializing_if = "is_zero")]
    pub shared_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One source-level memory instruction and what it costs over the whole launch.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Row {
    /// The file the instruction is written in when it is not the analysed file (a header the
    /// kernel is defined in, at any include depth): the path as the include reached it, relative
    /// to the analysed file's folder where it lies below it. `line` and `column` are in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    pub line: u32,
    pub column: u32,
    pub text: String,
    /// `global`, `shared`, `texture` or `surface` in the JSON. A texture or surface row counts
    /// executions only ([`Row::texture_pipe`]).
    pub space: Space,
    /// `load`, `store`, `red`, `atom` or `async_copy` in the JSON ([`AccessKind::name`]).
    pub op: AccessKind,
    pub width: u32,
    /// `ldmatrix`/`stmatrix` (`LDSM`/`STSM`): the number of 8x8 matrices each execution moves
    /// (1, 2 or 4); its `width` is a row's 16 bytes and its lanes are the 8 per matrix that give
    /// row addresses. Absent from the JSON for every other access.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matrix: Option<u8>,
    pub cache_op: &'static str,
    /// Warp-level executions with at least one active lane.
    pub executions: u64,
    /// Thread-level executions (active lanes summed over executions).
    pub thread_executions: u64,
    /// Global: one per execution (`l1tex__t_requests_*`); shared, texture and surface:
    /// instructions executed.
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub logical_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wavefronts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal_wavefronts: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bank_conflicts: Option<u64>,
    /// Bounds on `sectors` that hold whatever the data-dependent addresses are; equal to
    /// `sectors` when every address was known.
    pub sectors_min: u64,
    pub sectors_max: u64,
    /// Lane-level loads the compiler removes (the value was already in a register).
    pub elided_loads: u64,
    pub exact: bool,
    pub assumptions: Vec<String>,
    /// What this instruction's sectors cause below L1 under the cache model (global only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boundary: Option<RowBoundary>,
    /// Counted from SASS: the machine instructions this row's counts come from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sass: Vec<SassInstruction>,
    /// The memory operation this row counts (an index into the kernel's operations).
    #[serde(skip)]
    pub op_id: usize,
    /// The memory operation's span (`line` and `column` are its start): where a finding about
    /// this row points.
    #[serde(skip)]
    pub span: Span,
}

/// One SASS memory instruction behind a row: where it is in the kernel's code, as
/// `nvdisasm` prints it, and its own counts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SassInstruction {
    pub offset: String,
    pub instruction: String,
    pub executions: u64,
    pub sectors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wavefronts: Option<u64>,
}

/// One instruction's share of the boundary traffic.
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct RowBoundary {
    pub l1_hit_sectors: u64,
    pub l2_read_sectors: u64,
    pub l2_write_sectors: u64,
    /// DRAM sectors fetched for this instruction's L2 read misses.
    pub dram_read_sectors: u64,
}

impl Row {
    /// `line:column`, or `file:line:column` for a row in another file than the analysed one.
    pub fn place(&self) -> String {
        match &self.file {
            Some(f) => format!("{f}:{}:{}", self.line, self.column),
            None => format!("{}:{}", self.line, self.column),
        }
    }
    /// The operation as renderers show it: `load`, `store`, ... and `ldsm.x4` (`stsm.x4`) for a
    /// matrix load (store) of four matrices.
    pub fn op_label(&self) -> String {
        match self.matrix {
            Some(n) if self.op == AccessKind::Load => format!("ldsm.x{n}"),
            Some(n) => format!("stsm.x{n}"),
            None => self.op.to_string(),
        }
    }
    pub fn sectors_per_request(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.sectors as f64 / self.requests as f64
        }
    }
    pub fn excess_sectors(&self) -> u64 {
        self.sectors.saturating_sub(self.ideal_sectors)
    }
    /// A texture fetch or a surface read or write: its executions are counted, its sectors are
    /// the texture unit's and not predicted (its `sectors` are 0, as the H200's LSU global
    /// counters show them).
    pub fn texture_pipe(&self) -> bool {
        !self.space.has_address()
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct GlobalTotals {
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub logical_bytes: u64,
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct SharedTotals {
    pub requests: u64,
    pub wavefronts: u64,
    pub ideal_wavefronts: u64,
    pub bank_conflicts: u64,
    pub logical_bytes: u64,
}

#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Totals {
    /// Global loads, asynchronous copies included (the H200's load counters include LDGSTS).
    pub global_load: GlobalTotals,
    pub global_store: GlobalTotals,
    pub shared_load: SharedTotals,
    pub shared_store: SharedTotals,
    /// Global atomics whose result is unused (RED), and whose result is used (ATOM).
    pub global_red: GlobalTotals,
    pub global_atom: GlobalTotals,
    /// Global-to-shared asynchronous copies through L1 (LDGSTS, `cp.async.ca`), also inside
    /// `global_load`: what `l1tex__t_{requests,sectors}_pipe_lsu_mem_global_op_ldgsts_cache_access`
    /// counts.
    pub global_async_copy: GlobalTotals,
    /// Those that bypass L1 (LDGSTS.BYPASS, the 16-byte `cp.async.cg`): inside `global_load`, not
    /// in the `cache_access` counters (measured on the H200); absent from the JSON when none.
    #[serde(skip_serializing_if = "GlobalTotals::is_empty")]
    pub global_async_copy_bypass: GlobalTotals,
    /// Shared-memory atomics (ATOMS); absent from the JSON when there are none.
    #[serde(skip_serializing_if = "SharedTotals::is_empty")]
    pub shared_atom: SharedTotals,
    /// Matrix loads from shared memory (`ldmatrix`, LDSM): their requests are
    /// `smsp__inst_executed_op_ldsm`, not in `shared_load.requests` (the H200's
    /// `smsp__sass_inst_executed_op_shared_ld` leaves LDSM out), while their wavefronts, bank
    /// conflicts and bytes are also inside `shared_load` (its wavefront counter includes them).
    /// Absent from the JSON when there are none.
    #[serde(skip_serializing_if = "SharedTotals::is_empty")]
    pub shared_matrix_load: SharedTotals,
    /// Matrix stores to shared memory (`stmatrix`, STSM), counted as the loads are (not
    /// measured): inside `shared_store` but for their requests. Absent when there are none.
    #[serde(skip_serializing_if = "SharedTotals::is_empty")]
    pub shared_matrix_store: SharedTotals,
    /// Texture fetches (TEX, TLD: `smsp__sass_inst_executed_op_texture`); absent from the JSON
    /// when there are none.
    #[serde(skip_serializing_if = "TextureTotals::is_empty")]
    pub texture: TextureTotals,
    /// Surface reads (SULD) and writes (SUST); absent from the JSON when there are none.
    #[serde(skip_serializing_if = "TextureTotals::is_empty")]
    pub surface_load: TextureTotals,
    #[serde(skip_serializing_if = "TextureTotals::is_empty")]
    pub surface_store: TextureTotals,
}

/// Texture fetches, surface reads or surface writes: warp-level instructions executed (with at
/// least one active lane) and the bytes their lanes ask for. Their sectors are the texture
/// unit's, not predicted; none of them is in the global totals (the H200 counts them on none
/// of the LSU global counters).
#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct TextureTotals {
    pub requests: u64,
    pub logical_bytes: u64,
}

impl TextureTotals {
    pub fn is_empty(&self) -> bool {
        *self == TextureTotals::default()
    }
}

impl GlobalTotals {
    pub fn is_empty(&self) -> bool {
        *self == GlobalTotals::default()
    }
}

impl SharedTotals {
    pub fn is_empty(&self) -> bool {
        *self == SharedTotals::default()
    }
}

/// One kind of global access's totals, as every renderer lists them.
pub(crate) struct GlobalGroup<'a> {
    pub(crate) name: &'static str,
    pub(crate) totals: &'a GlobalTotals,
    /// Listed even when zero: loads and stores.
    pub(crate) always: bool,
    /// Also inside the loads' totals: the asynchronous copies.
    pub(crate) in_loads: bool,
}

impl GlobalGroup<'_> {
    /// Whether a renderer lists it: loads and stores always, the others where the kernel has them.
    pub(crate) fn listed(&self) -> bool {
        self.always || self.totals.requests > 0
    }
}

impl Totals {
    /// The global kinds in the order every renderer lists them.
    pub(crate) fn global_groups(&self) -> [GlobalGroup<'_>; 6] {
        let group = |name, totals, always, in_loads| GlobalGroup { name, totals, always, in_loads };
        [
            group("global load", &self.global_load, true, false),
            group("global store", &self.global_store, true, false),
            group("global red", &self.global_red, false, false),
            group("global atom", &self.global_atom, false, false),
            group("async copy", &self.global_async_copy, false, true),
            group("async bypass", &self.global_async_copy_bypass, false, true),
        ]
    }

    /// The texture pipeline's kinds in the order every renderer lists them (where the kernel
    /// has them).
    pub(crate) fn texture_groups(&self) -> [(&'static str, &TextureTotals); 3] {
        [("texture", &self.texture), ("surface load", &self.surface_load), ("surface store", &self.surface_store)]
    }

    /// The shared kinds in the order every renderer lists them.
    pub(crate) fn shared_groups(&self) -> [(&'static str, &SharedTotals); 5] {
        [
            ("shared load", &self.shared_load),
            ("shared store", &self.shared_store),
            ("shared atom", &self.shared_atom),
            // Their wavefronts are also in the shared loads' (stores') totals, their requests not.
            ("ldmatrix (wf in loads)", &self.shared_matrix_load),
            ("stmatrix (wf in stores)", &self.shared_matrix_store),
        ]
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Bound {
    pub min: u64,
    pub max: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct BoundaryBounds {
    pub dram_read_sectors: Bound,
    pub dram_write_sectors: Bound,
    /// Distinct sectors loaded ..= sectors loaded (misses to one sector merged at most down to
    /// one read, at least every load sector missing L1).
    pub l2_read_sectors: Bound,
    /// L1 hits on global loads: at least none, at most the load sectors less the fewest L2
    /// reads (given only with `bounds_only`, in JSON only then).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l1_hit_sectors: Option<Bound>,
}

/// Traffic below L1 under the cache model named in `assumptions`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Boundaries {
    pub model: String,
    pub l1_hit_sectors: u64,
    pub l2_read_sectors: u64,
    pub l2_write_sectors: u64,
    pub dram_read_sectors: u64,
    pub dram_write_sectors: u64,
    pub bounds: BoundaryBounds,
    pub assumptions: Vec<String>,
    /// The `--gpu` profile.
    pub gpu: String,
    /// `simulated` (every sector through the model), `sampled` (the first sectors simulated,
    /// the rest extrapolated), `sampled-units`, `unsimulated` (no sector stream: footprints and
    /// bounds only) or `bounds-only` (the estimate's own budget ran out: see `bounds_only`).
    pub method: String,
    /// The estimate's budget ran out: the counts are complete and exact, the boundaries are
    /// only the bounds that hold without a cache model (`bounds`); each point key holds its
    /// bound's max (`l1_hit_sectors` the min, 0), so nothing built on them is too small.
    /// In JSON only when true.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bounds_only: bool,
    pub resident_blocks_per_sm: u32,
    pub l1_bytes_per_sm: u64,
    pub l2_bytes: u64,
    /// The spaces whose traffic the estimate and its bounds leave out (`texture`, `surface`):
    /// the H200 counts texture and surface sectors in the same L2 counters, so a kernel that has
    /// them shows more there. Absent from the JSON when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub excludes: Vec<Space>,
}

/// Lowest and highest byte a pointer parameter's accesses touch (relative to the pointer),
/// so a harness can size its buffer.
#[derive(Clone, Debug, Serialize)]
pub struct Footprint {
    pub param: String,
    pub elem_bytes: u64,
    /// Lowest byte offset touched (may be negative).
    pub min_byte: i64,
    /// One past the highest byte offset touched.
    pub end_byte: i64,
    pub loaded: bool,
    pub stored: bool,
    /// False when some address of this parameter was data-dependent and unknown.
    pub complete: bool,
    /// `param` names a file-scope `__device__` variable (its own buffer), not a parameter
    /// (in JSON only where true).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub device_variable: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sheet {
    pub kernel: String,
    pub file: String,
    pub engine: &'static str,
    pub launch: LaunchInfo,
    pub instructions: Vec<Row>,
    pub totals: Totals,
    pub boundaries: Boundaries,
    pub footprints: Vec<Footprint>,
    pub assumptions: Vec<String>,
    /// Warp-level work the engine did, for cost reports.
    pub work: u64,
    /// What was counted: `"sass"` when the machine code was (absent: the source).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<&'static str>,
    /// The compiler and disassembler behind SASS counts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compiler: Option<String>,
    /// The SASS listing with each memory instruction's counts (`--emit sass`).
    #[serde(skip)]
    pub listing: Option<String>,
}

impl Sheet {
    /// Logical bytes of global loads and stores together.
    pub fn global_logical_bytes(&self) -> u64 {
        self.totals.global_load.logical_bytes + self.totals.global_store.logical_bytes
    }
    pub fn global_sectors(&self) -> u64 {
        self.totals.global_load.sectors + self.totals.global_store.sectors
    }
    /// The `n` global accesses with the most sectors, heaviest first, as `line L `text`: N`:
    /// where a launch's sector budget went.
    pub fn heaviest_global(&self, n: usize) -> Vec<String> {
        let mut rows: Vec<&Row> = self.instructions.iter().filter(|r| r.space == Space::Global).collect();
        rows.sort_by_key(|r| std::cmp::Reverse(r.sectors));
        rows.iter()
            .take(n)
            .map(|r| format!("line {} `{}`: {}", r.place(), r.text, text::thousands(r.sectors)))
            .collect()
    }
}
