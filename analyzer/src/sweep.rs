//! `sweep`: one kernel analysed over the cartesian product of parameter ranges and block shapes,
//! in parallel; a table (text, CSV, JSON) and an SVG heatmap of one metric, like the seeds'
//! decision map. A configuration that cannot be analysed is a failed cell with its reason.

use crate::analyze::{analyze, AnalyzeOptions, Input};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::sheet::text::thousands;
use crate::source::FileLoader;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt::Write;

/// More configurations than this is almost surely a mistyped range.
pub const MAX_CONFIGURATIONS: usize = 10_000;

/// One swept dimension: a kernel parameter (`--arg`) or the block shape.
#[derive(Clone, Debug, Serialize)]
pub struct Axis {
    pub name: String,
    pub values: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct SweepOptions {
    /// Kernel, fixed `--arg`s, fills, offsets, defines, GPU, work budget. Its `grid` is the grid
    /// expression (over the args and `block`, `block_x`, `block_y`, `block_z`); its `block` is
    /// ignored: the block shapes are `blocks`.
    pub base: AnalyzeOptions,
    /// Swept parameters, in the order given.
    pub args: Vec<Axis>,
    /// Block shapes (`256`, `32,8`).
    pub blocks: Vec<String>,
}

/// Whole-launch numbers of one configuration.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Metrics {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Global loads and stores together.
    pub requests: u64,
    pub sectors: u64,
    pub ideal_sectors: u64,
    pub logical_bytes: u64,
    pub sectors_per_request: f64,
    /// Sector bytes moved per logical byte asked for.
    pub bytes_per_useful_byte: f64,
    /// Ideal sectors / sectors (1 is perfect).
    pub efficiency: f64,
    /// Predicted DRAM bytes (reads and writes) under the sheet's boundary model.
    pub dram_bytes: u64,
    /// Texture fetches and surface reads and writes executed (warp-level): in none of the
    /// columns above, their traffic not in `dram_bytes` (in the JSON only when there are some).
    #[serde(skip_serializing_if = "is_zero")]
    pub texture_requests: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    /// This configuration's value of each axis, in [`SweepResult::axes`] order.
    pub values: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Metrics>,
    /// Why the configuration could not be analysed (`file:line:column: message`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SweepResult {
    pub kernel: String,
    pub file: String,
    pub grid: String,
    /// The swept parameters, then `block`.
    pub axes: Vec<Axis>,
    pub cells: Vec<Cell>,
}

/// The metric a heatmap shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    SectorsPerRequest,
    BytesPerUsefulByte,
    Efficiency,
    DramBytes,
}

impl Metric {
    pub fn title(self) -> &'static str {
        match self {
            Metric::SectorsPerRequest => "global sectors per request",
            Metric::BytesPerUsefulByte => "sector bytes moved per useful byte",
            Metric::Efficiency => "efficiency (ideal sectors / sectors)",
            Metric::DramBytes => "predicted DRAM bytes",
        }
    }
    pub fn of(self, m: &Metrics) -> f64 {
        match self {
            Metric::SectorsPerRequest => m.sectors_per_request,
            Metric::BytesPerUsefulByte => m.bytes_per_useful_byte,
            Metric::Efficiency => m.efficiency,
            Metric::DramBytes => m.dram_bytes as f64,
        }
    }
    /// Whether a higher value is better (colours run the other way).
    pub fn higher_is_better(self) -> bool {
        self == Metric::Efficiency
    }
    pub fn format(self, v: f64) -> String {
        match self {
            Metric::DramBytes => human_bytes(v),
            _ => format!("{v:.2}"),
        }
    }
}

fn human_bytes(v: f64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = v;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < units.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}

/// Parses a list of values: comma-separated items, each a number (`true` and `false` are 1 and
/// 0) or a range `A..B:xF` (geometric, factor F > 1) or `A..B:+S` (arithmetic, step S > 0), both
/// including B when they reach it; or, for a template's type parameter, every item a type name
/// (`float,double`). For block shapes (`shapes`), an item may be `XxY[xZ]` (`32x8`). `flag` starts the
/// messages: `--arg n=`, `--block `.
pub fn parse_values(flag: &str, text: &str, shapes: bool) -> Result<Vec<String>> {
    let bad = |m: String| Diagnostic::new(ErrorKind::Usage, format!("{flag}{text}: {m}"));
    let mut out = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    for item in text.split(',').map(str::trim) {
        if item.is_empty() {
            return Err(bad("an empty item".into()));
        }
        if let Some((range, step)) = item.split_once("..") {
            let (to, step) = step
                .split_once(':')
                .ok_or_else(|| bad(format!("`{item}`: a range needs a step, `:xF` (times F) or `:+S` (plus S)")))?;
            let int = |s: &str| -> Result<i128> {
                match crate::launch::parse_number(s) {
                    Some(crate::launch::ParamValue::Int(v)) => Ok(v),
                    _ => Err(bad(format!("`{s}` is not an integer"))),
                }
            };
            let (from, to) = (int(range)?, int(to)?);
            if from > to {
                return Err(bad(format!("`{item}`: the range runs backwards")));
            }
            let mut v = from;
            if let Some(f) = step.strip_prefix('x') {
                let f = int(f)?;
                if f < 2 || from < 1 {
                    return Err(bad(format!(
                        "`{item}`: a geometric range needs a start of at least 1 and a factor of at least 2"
                    )));
                }
                while v <= to {
                    out.push(v.to_string());
                    match v.checked_mul(f) {
                        Some(n) => v = n,
                        None => break,
                    }
                    if out.len() > MAX_CONFIGURATIONS {
                        break;
                    }
                }
            } else if let Some(s) = step.strip_prefix('+') {
                let s = int(s)?;
                if s < 1 {
                    return Err(bad(format!("`{item}`: the step must be at least 1")));
                }
                while v <= to {
                    out.push(v.to_string());
                    match v.checked_add(s) {
                        Some(n) => v = n,
                        None => break,
                    }
                    if out.len() > MAX_CONFIGURATIONS {
                        break;
                    }
                }
            } else {
                return Err(bad(format!("`{item}`: the step is `xF` (times F) or `+S` (plus S)")));
            }
        } else if shapes && item.contains(['x', 'X']) {
            let dims: Vec<&str> = item.split(['x', 'X']).map(str::trim).collect();
            if dims.len() > 3 || dims.iter().any(|d| d.parse::<u32>().is_err()) {
                return Err(bad(format!("`{item}`: a block shape is X, XxY or XxYxZ in integers")));
            }
            out.push(dims.join(","));
        } else if crate::launch::parse_number(item).is_some() {
            out.push(item.to_string());
        } else if !shapes && is_type_name(item) {
            // A template's type parameter (`--arg T=float,double`): the analysis of each
            // configuration says whether the kernel takes it.
            types.push(item);
            out.push(item.to_string());
        } else if shapes {
            return Err(bad(format!("`{item}` is not a number")));
        } else {
            return Err(bad(format!("`{item}` is neither a number nor a type name")));
        }
        if out.len() > MAX_CONFIGURATIONS {
            return Err(bad(format!("more than {MAX_CONFIGURATIONS} values")));
        }
    }
    // One parameter is a type or a value, never both.
    if let (Some(t), true) = (types.first(), types.len() < out.len()) {
        let number = out.iter().find(|v| crate::launch::parse_number(v).is_some()).cloned().unwrap_or_default();
        return Err(bad(format!("`{t}` is a type name and `{number}` a number: a list is one or the other")));
    }
    Ok(out)
}

/// A type as a template argument spells it: words (`unsigned int`), scopes (`cuda::std::byte`)
/// and trailing pointers (`float *`). Template arguments (`<`) and commas cannot be list items.
pub fn is_type_name(s: &str) -> bool {
    let ident = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let core = s.trim_end_matches(['*', ' ']);
    !core.is_empty()
        && core.split("::").all(|scope| {
            let mut words = scope.split(' ').filter(|w| !w.is_empty()).peekable();
            words.peek().is_some() && words.all(ident)
        })
}

impl SweepOptions {
    /// The axes in result order: the swept parameters, then `block`.
    pub fn axes(&self) -> Vec<Axis> {
        let mut axes = self.args.clone();
        axes.push(Axis { name: "block".into(), values: self.blocks.clone() });
        axes
    }

    /// Every configuration, the last axis fastest.
    pub fn configurations(&self) -> Result<Vec<Vec<String>>> {
        let axes = self.axes();
        let total = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len())).unwrap_or(usize::MAX);
        if total == 0 {
            return Err(Diagnostic::new(ErrorKind::Usage, "the sweep has no configuration: an axis has no value"));
        }
        if total > MAX_CONFIGURATIONS {
            return Err(Diagnostic::new(
                ErrorKind::Usage,
                format!("the sweep has {total} configurations; at most {MAX_CONFIGURATIONS} are allowed"),
            ));
        }
        let mut out = vec![Vec::new()];
        for a in &axes {
            out = out
                .into_iter()
                .flat_map(|prefix| a.values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat()))
                .collect();
        }
        Ok(out)
    }
}

/// Analyses every configuration on the rayon pool; `progress` is called once per finished
/// configuration, from any thread.
pub fn sweep(
    input: Input,
    opts: &SweepOptions,
    loader: &(dyn FileLoader + Sync),
    progress: &(dyn Fn() + Sync),
) -> Result<SweepResult> {
    sweep_within(input, opts, loader, progress, None)
}

/// Default bound on a whole sweep's wall-clock time (`sweep --total-time-limit`), in seconds.
pub const DEFAULT_TOTAL_TIME_LIMIT_S: u64 = 300;

/// [`sweep`] bounded in total time: every analysis gets at most what is left of `total` (beside
/// its own limit), and configurations not started when it has run out are failed cells that
/// say so. `None`: each analysis has only its own limit.
pub fn sweep_within(
    input: Input,
    opts: &SweepOptions,
    loader: &(dyn FileLoader + Sync),
    progress: &(dyn Fn() + Sync),
    total: Option<std::time::Duration>,
) -> Result<SweepResult> {
    let start = std::time::Instant::now();
    let deadline = total.and_then(|t| start.checked_add(t));
    let configs = opts.configurations()?;
    let axes = opts.axes();
    let (name, text): (String, Option<String>) = match &input {
        Input::File(p) => (p.display().to_string(), None),
        Input::Source { name, text } => (name.to_string(), Some(text.to_string())),
    };
    let path = match &input {
        Input::File(p) => Some(p.to_path_buf()),
        Input::Source { .. } => None,
    };
    let misspelt = std::sync::OnceLock::new();
    let cells: Vec<(Cell, Option<String>)> = configs
        .par_iter()
        .map(|values| {
            let mut o = opts.base.clone();
            for (a, v) in axes.iter().zip(values) {
                if a.name == "block" {
                    o.block = v.clone();
                } else {
                    o.args.retain(|(k, _)| k != &a.name);
                    o.args.push((a.name.clone(), v.clone()));
                }
            }
            let input = match (&path, &text) {
                (Some(p), _) => Input::File(p),
                (None, t) => Input::Source { name: &name, text: t.as_deref().unwrap_or("") },
            };
            if let Some(d) = deadline {
                let left = d.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    progress();
                    let t = total.map_or(0, |t| t.as_secs());
                    let msg = format!(
                        "not analysed: the sweep ran past its total time limit ({t} s; --total-time-limit SECONDS)"
                    );
                    return (Cell { values: values.clone(), metrics: None, error: Some(msg) }, None);
                }
                o.time_limit = Some(o.time_limit.map_or(left, |l| l.min(left)));
            }
            let cell = match analyze(input, &o, loader) {
                Ok(a) => {
                    let kernel = a.sheet.kernel.clone();
                    let s = &a.sheet;
                    let (ld, st) = (&s.totals.global_load, &s.totals.global_store);
                    let requests = ld.requests + st.requests;
                    let sectors = ld.sectors + st.sectors;
                    let ideal = ld.ideal_sectors + st.ideal_sectors;
                    let logical = ld.logical_bytes + st.logical_bytes;
                    let b = &s.boundaries;
                    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
                    let cell = Cell {
                        values: values.clone(),
                        metrics: Some(Metrics {
                            grid: s.launch.grid,
                            block: s.launch.block,
                            requests,
                            sectors,
                            ideal_sectors: ideal,
                            logical_bytes: logical,
                            sectors_per_request: round4(ratio(sectors as f64, requests as f64)),
                            bytes_per_useful_byte: round4(ratio((sectors * 32) as f64, logical as f64)),
                            efficiency: round4(if sectors == 0 { 1.0 } else { ideal as f64 / sectors as f64 }),
                            dram_bytes: (b.dram_read_sectors + b.dram_write_sectors) * 32,
                            texture_requests: s.totals.texture_groups().iter().map(|(_, t)| t.requests).sum(),
                        }),
                        error: None,
                    };
                    (cell, Some(kernel))
                }
                Err(f) => {
                    // A misspelt --arg name is the command's mistake, not this configuration's.
                    if f.diagnostic.kind == crate::diag::ErrorKind::Usage
                        && f.diagnostic.message.contains("has no parameter named")
                    {
                        let _ = misspelt.set(f.diagnostic.clone());
                    }
                    (Cell { values: values.clone(), metrics: None, error: Some(f.one_line()) }, None)
                }
            };
            progress();
            cell
        })
        .collect();
    if let Some(d) = misspelt.into_inner() {
        return Err(d);
    }
    // The kernel's name, also when the file's only kernel was taken without --kernel.
    let kernel = opts.base.kernel.clone().or_else(|| cells.iter().find_map(|(_, k)| k.clone())).unwrap_or_default();
    let cells = cells.into_iter().map(|(c, _)| c).collect();
    Ok(SweepResult { kernel, file: name, grid: opts.base.grid.clone(), axes, cells })
}

fn round4(v: f64) -> f64 {
    (v * 10_000.0).round() / 10_000.0
}

fn shape(d: [u32; 3]) -> String {
    match d {
        [x, 1, 1] => x.to_string(),
        [x, y, 1] => format!("{x}x{y}"),
        [x, y, z] => format!("{x}x{y}x{z}"),
    }
}

/// The table for a person.
pub fn render_text(r: &SweepResult) -> String {
    let failed = r.cells.iter().filter(|c| c.error.is_some()).count();
    let kernel = if r.kernel.is_empty() { String::new() } else { format!("kernel `{}` in ", r.kernel) };
    let texture = r.cells.iter().any(|c| c.metrics.as_ref().is_some_and(|m| m.texture_requests > 0));
    let mut s = format!(
        "sector-estimate sweep: {kernel}{}, grid {}\n{} ({} analysed, {failed} failed); global loads and stores together{}\n\n",
        r.file,
        r.grid,
        if r.cells.len() == 1 { "1 configuration".to_string() } else { format!("{} configurations", r.cells.len()) },
        r.cells.len() - failed,
        if texture { " (texture and surface accesses, and their DRAM traffic, not included)" } else { "" }
    );
    let mut head: Vec<String> = r.axes.iter().map(|a| a.name.clone()).collect();
    head.extend(
        ["grid", "requests", "sectors", "ideal", "sect/req", "bytes/useful", "efficiency", "DRAM bytes"]
            .map(String::from),
    );
    let rows: Vec<Vec<String>> = r
        .cells
        .iter()
        .map(|c| {
            let mut row: Vec<String> = c.values.iter().map(|v| v.replace(',', "x")).collect();
            match (&c.metrics, &c.error) {
                (Some(m), _) => row.extend([
                    shape(m.grid),
                    thousands(m.requests),
                    thousands(m.sectors),
                    thousands(m.ideal_sectors),
                    format!("{:.2}", m.sectors_per_request),
                    format!("{:.2}", m.bytes_per_useful_byte),
                    format!("{:.2}", m.efficiency),
                    thousands(m.dram_bytes),
                ]),
                (None, e) => row.push(format!("failed: {}", e.as_deref().unwrap_or(""))),
            }
            row
        })
        .collect();
    let n_axes = r.axes.len();
    let mut widths: Vec<usize> = head.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (i, v) in row.iter().enumerate() {
            // A failure's reason runs on past the columns.
            if i < widths.len() && !(i == n_axes && v.starts_with("failed")) {
                widths[i] = widths[i].max(v.len());
            }
        }
    }
    // Type names read from the left, numbers from the right.
    let text_axis: Vec<bool> = r
        .axes
        .iter()
        .map(|a| a.values.iter().any(|v| is_type_name(v) && crate::launch::parse_number(v).is_none()))
        .collect();
    let line = |cols: &[String]| {
        let mut l = String::new();
        for (i, v) in cols.iter().enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            if i == n_axes && v.starts_with("failed") {
                l.push_str(v);
            } else if i < n_axes && text_axis[i] {
                let _ = write!(l, "{v:<w$}", w = widths[i]);
            } else if i < n_axes {
                let _ = write!(l, "{v:>w$}", w = widths[i]);
            } else {
                let _ = write!(l, "{v:>w$}", w = widths.get(i).copied().unwrap_or(0));
            }
        }
        l.trim_end().to_string()
    };
    let _ = writeln!(s, "{}", line(&head));
    let _ = writeln!(s, "{}", "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
    for row in &rows {
        let _ = writeln!(s, "{}", line(row));
    }
    s
}

/// One row per configuration: the axes, then the numbers; `error` names a failed one.
pub fn render_csv(r: &SweepResult) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head: Vec<String> = r.axes.iter().map(|a| a.name.clone()).collect();
    head.extend(
        [
            "grid_x",
            "grid_y",
            "grid_z",
            "block_x",
            "block_y",
            "block_z",
            "requests",
            "sectors",
            "ideal_sectors",
            "logical_bytes",
            "sectors_per_request",
            "bytes_per_useful_byte",
            "efficiency",
            "dram_bytes",
            "error",
        ]
        .map(String::from),
    );
    let _ = w.write_record(&head);
    for c in &r.cells {
        let mut row: Vec<String> = c.values.iter().map(|v| v.replace(',', "x")).collect();
        match &c.metrics {
            Some(m) => {
                row.extend(m.grid.iter().chain(&m.block).map(|v| v.to_string()));
                row.extend([
                    m.requests.to_string(),
                    m.sectors.to_string(),
                    m.ideal_sectors.to_string(),
                    m.logical_bytes.to_string(),
                    m.sectors_per_request.to_string(),
                    m.bytes_per_useful_byte.to_string(),
                    m.efficiency.to_string(),
                    m.dram_bytes.to_string(),
                    String::new(),
                ]);
            }
            None => {
                row.extend(std::iter::repeat_n(String::new(), 14));
                row.push(c.error.clone().unwrap_or_default());
            }
        }
        let _ = w.write_record(&row);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

pub fn render_json(r: &SweepResult) -> String {
    let mut s = serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// Heatmap geometry, fixed so that a reader (or a test) can find the cells: every configuration
/// is one `<rect>` of exactly this size.
pub const SVG_CELL_W: u32 = 96;
pub const SVG_CELL_H: u32 = 34;
const LEFT: u32 = 170;
const TOP: u32 = 78;
const LEGEND_H: u32 = 70;

/// How a sweep lays out on the heatmap: columns are the first axis with several values (the
/// problem size, as on the seeds' decision map), rows every combination of the others.
pub struct Layout {
    pub column_axis: usize,
    pub columns: Vec<String>,
    /// Row labels, and for each cell its (row, column).
    pub rows: Vec<String>,
    pub place: Vec<(usize, usize)>,
}

pub fn layout(r: &SweepResult) -> Layout {
    let column_axis = r.axes.iter().position(|a| a.values.len() > 1).unwrap_or(r.axes.len() - 1);
    let columns = r.axes[column_axis].values.clone();
    let mut rows: Vec<String> = Vec::new();
    let mut place = Vec::new();
    for c in &r.cells {
        let label: Vec<String> = r
            .axes
            .iter()
            .zip(&c.values)
            .enumerate()
            .filter(|(i, (a, _))| *i != column_axis && a.values.len() > 1)
            .map(|(_, (a, v))| format!("{}={}", a.name, v.replace(',', "x")))
            .collect();
        let label = if label.is_empty() { r.kernel.clone() } else { label.join(", ") };
        let row = rows.iter().position(|l| *l == label).unwrap_or_else(|| {
            rows.push(label);
            rows.len() - 1
        });
        let col = columns.iter().position(|v| *v == c.values[column_axis]).unwrap_or(0);
        place.push((row, col));
    }
    Layout { column_axis, columns, rows, place }
}

/// A perceptually ordered palette (viridis anchors): `t` = 0 is the best value.
fn palette(t: f64) -> (u8, u8, u8) {
    const ANCHORS: [(u8, u8, u8); 5] = [(253, 231, 37), (94, 201, 98), (33, 145, 140), (59, 82, 139), (68, 1, 84)];
    let t = t.clamp(0.0, 1.0) * (ANCHORS.len() - 1) as f64;
    let i = (t.floor() as usize).min(ANCHORS.len() - 2);
    let f = t - i as f64;
    let (a, b) = (ANCHORS[i], ANCHORS[i + 1]);
    let mix = |x: u8, y: u8| (x as f64 + (y as f64 - x as f64) * f).round() as u8;
    (mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// The heatmap as an SVG document (plotters' SVG backend, no fonts needed).
pub fn render_svg(r: &SweepResult, metric: Metric) -> Result<String> {
    use plotters::prelude::*;
    use plotters::style::text_anchor::{HPos, Pos, VPos};
    let l = layout(r);
    let width = LEFT + SVG_CELL_W * l.columns.len() as u32 + 30;
    let height = TOP + SVG_CELL_H * l.rows.len() as u32 + LEGEND_H;
    let values: Vec<f64> = r.cells.iter().filter_map(|c| c.metrics.as_ref()).map(|m| metric.of(m)).collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // Log scale when the values span more than a factor of 10 (DRAM bytes over problem sizes).
    let log = lo > 0.0 && hi / lo > 10.0;
    let norm = |v: f64| {
        let t = if hi <= lo {
            0.0
        } else if log {
            (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
        } else {
            (v - lo) / (hi - lo)
        };
        if metric.higher_is_better() {
            1.0 - t
        } else {
            t
        }
    };
    let err = |e: String| Diagnostic::new(ErrorKind::Usage, format!("drawing the heatmap: {e}"));
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(e.to_string()))?;
        let font = |size: u32| ("sans-serif", size).into_font();
        let text = |s: &str, x: u32, y: u32, size: u32, pos: Pos, color: RGBColor| {
            Text::new(s.to_string(), (x as i32, y as i32), font(size).color(&color).pos(pos))
        };
        let left = Pos::new(HPos::Left, VPos::Center);
        let center = Pos::new(HPos::Center, VPos::Center);
        let right = Pos::new(HPos::Right, VPos::Center);
        let draw = |e: Text<'_, (i32, i32), String>| root.draw(&e).map_err(|e| err(e.to_string()));
        draw(text(&format!("{}: {}", r.kernel, metric.title()), 10, 18, 16, left, BLACK))?;
        draw(text(&format!("grid {}; rows and columns as labelled", r.grid), 10, 38, 12, left, RGBColor(90, 90, 90)))?;
        let axis = &r.axes[l.column_axis].name;
        draw(text(axis, LEFT - 8, TOP - 14, 12, right, BLACK))?;
        for (i, c) in l.columns.iter().enumerate() {
            let x = LEFT + SVG_CELL_W * i as u32 + SVG_CELL_W / 2;
            draw(text(&c.replace(',', "x"), x, TOP - 14, 12, center, BLACK))?;
        }
        for (j, rl) in l.rows.iter().enumerate() {
            let y = TOP + SVG_CELL_H * j as u32 + SVG_CELL_H / 2;
            draw(text(rl, LEFT - 8, y, 12, right, BLACK))?;
        }
        for (c, &(row, col)) in r.cells.iter().zip(&l.place) {
            let x0 = (LEFT + SVG_CELL_W * col as u32) as i32;
            let y0 = (TOP + SVG_CELL_H * row as u32) as i32;
            let (fill, label, ink) = match &c.metrics {
                Some(m) => {
                    let v = metric.of(m);
                    let t = norm(v);
                    let (cr, cg, cb) = palette(t);
                    let ink = if t > 0.55 { WHITE } else { BLACK };
                    (RGBColor(cr, cg, cb), metric.format(v), ink)
                }
                None => (RGBColor(200, 200, 200), "failed".to_string(), RGBColor(120, 0, 0)),
            };
            root.draw(&Rectangle::new([(x0, y0), (x0 + SVG_CELL_W as i32, y0 + SVG_CELL_H as i32)], fill.filled()))
                .map_err(|e| err(e.to_string()))?;
            draw(text(&label, x0 as u32 + SVG_CELL_W / 2, y0 as u32 + SVG_CELL_H / 2, 12, center, ink))?;
        }
        // Legend: the palette from best to worst with the extreme values.
        let ly = TOP + SVG_CELL_H * l.rows.len() as u32 + 24;
        let steps = 10u32;
        for i in 0..steps {
            let (cr, cg, cb) = palette(i as f64 / (steps - 1) as f64);
            let x0 = (LEFT + 16 * i) as i32;
            root.draw(&Rectangle::new([(x0, ly as i32), (x0 + 16, ly as i32 + 12)], RGBColor(cr, cg, cb).filled()))
                .map_err(|e| err(e.to_string()))?;
        }
        if !values.is_empty() {
            let (best, worst) = if metric.higher_is_better() { (hi, lo) } else { (lo, hi) };
            draw(text(&format!("best {}", metric.format(best)), LEFT - 8, ly + 6, 11, right, BLACK))?;
            draw(text(
                &format!("{} worst{}", metric.format(worst), if log { "  (log scale)" } else { "" }),
                LEFT + 16 * steps + 8,
                ly + 6,
                11,
                left,
                BLACK,
            ))?;
        }
        let failed = r.cells.iter().filter(|c| c.metrics.is_none()).count();
        if failed > 0 {
            draw(text(
                &format!("grey: {failed} configuration(s) could not be analysed (see the table)"),
                LEFT,
                ly + 30,
                11,
                left,
                RGBColor(120, 0, 0),
            ))?;
        }
        root.present().map_err(|e| err(e.to_string()))?;
    }
    Ok(buf)
}
