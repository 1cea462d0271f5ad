//! Reading Nsight Compute's CSV output: the `raw` page (one row per profiled launch, every
//! collected metric), the `source` page in its `cuda,sass` form (SASS instructions under the
//! source line they come from, with per-instruction counters) and the `session` page.
//!
//! Numbers come with thousands separators (`"262,144"`) or as decimals (`"262144.000000"`);
//! units sit in the row under the header of the raw page and may carry a prefix (`us`,
//! `Ksector`) unless `--print-units base` was given. [`parse_number`] and [`scale_to_base`] turn
//! both forms into one base-unit value.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, HashSet};

/// The counters `sector-validate profile` asks for (`--metrics`), besides the `SourceCounters`
/// section that gives the per-instruction view.
pub const METRICS: &[&str] = &[
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "smsp__sass_inst_executed_op_global_ld.sum",
    "smsp__sass_inst_executed_op_global_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram__sectors_read.sum",
    "dram__sectors_write.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum",
    "smsp__sass_inst_executed_op_shared_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "gpu__time_duration.sum",
    "launch__grid_size",
    "launch__block_size",
];

/// Counters of atomics and asynchronous copies: asked for only where this Nsight Compute knows
/// them (an unknown metric name fails the whole run).
pub const OPTIONAL_METRICS: &[&str] = &[
    "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
    "smsp__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
    "smsp__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum",
    "smsp__sass_inst_executed_op_shared_atom.sum",
    "smsp__sass_inst_executed_op_global_red.sum",
    "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__sass_inst_executed_op_ldgsts.sum",
    "smsp__inst_executed_op_ldsm.sum",
];

/// [`METRICS`] plus those of [`OPTIONAL_METRICS`] that `ncu --query-metrics` lists for `chip`.
pub fn metrics_for(ncu: &std::path::Path, chip: &str) -> Vec<String> {
    let mut out: Vec<String> = METRICS.iter().map(|m| m.to_string()).collect();
    let listed = std::process::Command::new(ncu)
        .args(["--query-metrics", "--chip", chip])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    let known: HashSet<&str> = listed.split_whitespace().collect();
    for m in OPTIONAL_METRICS {
        let base = m.trim_end_matches(".sum");
        if known.contains(base) {
            out.push(m.to_string());
        }
    }
    out
}

/// Parses one CSV cell as a number: thousands separators removed; `-`, `n/a` and empty cells
/// are `None`.
pub fn parse_number(cell: &str) -> Option<f64> {
    let t = cell.trim().trim_matches('"').trim();
    if t.is_empty() || t == "-" || t.eq_ignore_ascii_case("n/a") {
        return None;
    }
    let cleaned: String = t.chars().filter(|&c| c != ',').collect();
    cleaned.parse::<f64>().ok()
}

/// Multiplies a value shown in `unit` so that it is in the unit's base (`ns` for time, plain
/// counts otherwise). Returns the factor and the base unit's name.
pub fn scale_to_base(unit: &str) -> (f64, String) {
    let u = unit.trim();
    let time = [
        ("ns", 1.0),
        ("us", 1e3),
        ("usecond", 1e3),
        ("ms", 1e6),
        ("msecond", 1e6),
        ("s", 1e9),
        ("second", 1e9),
        ("nsecond", 1.0),
    ];
    for (name, f) in time {
        if u == name {
            return (f, "ns".into());
        }
    }
    // SI prefixes on counted units: Ksector, Msector, Ginst.
    let mut chars = u.chars();
    if let Some(first) = chars.next() {
        let rest: String = chars.collect();
        let known = ["sector", "inst", "request", "warp", "byte", "cycle"];
        if known.contains(&rest.as_str()) {
            let f = match first {
                'K' => 1e3,
                'M' => 1e6,
                'G' => 1e9,
                'T' => 1e12,
                _ => 1.0,
            };
            if f != 1.0 {
                return (f, rest);
            }
        }
    }
    (1.0, u.to_string())
}

/// One profiled launch of the raw page.
#[derive(Clone, Debug, Default)]
pub struct RawResult {
    /// Nsight Compute's result ID: 0, 1, ... in launch order.
    pub id: u32,
    /// The kernel name as printed (demangled by default: `vec_add(const float *, ...)`).
    pub kernel: String,
    pub grid: String,
    pub block: String,
    /// Every numeric cell, in base units.
    pub metrics: BTreeMap<String, f64>,
    /// Every cell as printed (device name, compute capability, ...).
    pub text: BTreeMap<String, String>,
}

impl RawResult {
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.get(name).copied()
    }
    /// The plain function name: `vec_add` for `vec_add(const float *, ...)`,
    /// `strided_load` for `void strided_load<(int)4>(const double *, ...)`, `f` for `ns::f(int)`.
    pub fn function_name(&self) -> String {
        function_name(&self.kernel)
    }
}

/// The plain function name inside a demangled signature (see [`RawResult::function_name`]).
/// A mangled name (`_Z7vec_addPKfS0_Pfi`) is decoded as far as the function's own name.
pub fn function_name(printed: &str) -> String {
    let s = printed.trim();
    if let Some(n) = crate::ptx::mangled_base_name(s) {
        return n;
    }
    // Cut the parameter list: the first '(' at template depth 0.
    let mut depth = 0i32;
    let mut end = s.len();
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth <= 0 => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let mut head = s[..end].trim().to_string();
    // Cut template arguments at the end.
    if head.ends_with('>') {
        let mut d = 0i32;
        let mut start = None;
        for (i, c) in head.char_indices().rev() {
            match c {
                '>' => d += 1,
                '<' => {
                    d -= 1;
                    if d == 0 {
                        start = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        if let Some(i) = start {
            head.truncate(i);
        }
    }
    // Drop a return type and namespaces.
    let head = head.rsplit(' ').next().unwrap_or(&head).to_string();
    head.rsplit("::").next().unwrap_or(&head).to_string()
}

/// Lines before the CSV proper (`==PROF==`, `==WARNING==`, the target's own output) are skipped:
/// the table starts at the first line whose first cell is `"ID"`.
fn csv_reader(text: &str) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new().has_headers(false).flexible(true).from_reader(text.as_bytes())
}

/// Parses the raw page (`ncu -i REP --page raw --csv [--print-units base]`).
pub fn parse_raw(text: &str) -> Result<Vec<RawResult>> {
    let start = text.find("\"ID\",").context("no raw-page table (no header starting with \"ID\")")?;
    let mut rows = Vec::new();
    for rec in csv_reader(&text[start..]).records() {
        let rec = rec.context("malformed CSV in the raw page")?;
        rows.push(rec.iter().map(str::to_string).collect::<Vec<String>>());
    }
    let Some(header) = rows.first().cloned() else { bail!("empty raw page") };
    let mut units: Vec<String> = vec![String::new(); header.len()];
    let mut out = Vec::new();
    for row in rows.iter().skip(1) {
        if row.first().is_some_and(|c| c.trim().is_empty()) {
            // The units row (no ID).
            units = row.clone();
            units.resize(header.len(), String::new());
            continue;
        }
        if row.len() < 5 {
            continue;
        }
        let Some(id) = parse_number(&row[0]) else {
            continue;
        };
        let mut r = RawResult { id: id as u32, ..RawResult::default() };
        for (i, name) in header.iter().enumerate() {
            let cell = row.get(i).map(String::as_str).unwrap_or("");
            r.text.insert(name.clone(), cell.to_string());
            match name.as_str() {
                "Kernel Name" => r.kernel = cell.to_string(),
                "Grid Size" => r.grid = cell.to_string(),
                "Block Size" => r.block = cell.to_string(),
                _ => {}
            }
            if name.contains("__") {
                if let Some(v) = parse_number(cell) {
                    let (f, _) = scale_to_base(units.get(i).map(String::as_str).unwrap_or(""));
                    r.metrics.insert(name.clone(), v * f);
                }
            }
        }
        out.push(r);
    }
    out.sort_by_key(|r| r.id);
    Ok(out)
}

/// One SASS instruction of the source page, under the source line it maps to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SassInstr {
    /// Source file of the line (the block's `File Path`).
    pub file: String,
    /// 1-based source line.
    pub line: u32,
    pub address: String,
    pub sass: String,
    /// Warp-level executions (`Instructions Executed`).
    pub executed: u64,
    pub thread_executed: u64,
    /// `Global`, `Shared`, `Local`, ... or empty for non-memory instructions.
    pub space: String,
    /// `Load`, `Store`, `Atomic`, ...
    pub op: String,
    /// Access size in bits.
    pub size_bits: u32,
    /// `L2 Theoretical Sectors Global`: sectors requested by this instruction, summed.
    pub l2_sectors: u64,
    pub l2_sectors_ideal: u64,
    pub l2_sectors_excessive: u64,
    /// `L1 Tag Requests Global`.
    pub l1_tag_requests: u64,
    /// `L1 Conflicts Shared N-Way`: average ways of a shared access (1 = conflict free).
    pub shared_nway: f64,
}

/// One block of the source page: a function's view in one file.
#[derive(Clone, Debug, Default)]
pub struct SourceBlock {
    pub file: String,
    pub function: String,
    /// Memory instructions only (those with an address space), each address once.
    pub instructions: Vec<SassInstr>,
}

/// Parses the `cuda,sass` source page (`ncu -i REP --page source --csv --print-source cuda,sass`).
/// Nsight Compute may print a SASS row twice under its line; each address is kept once per block.
pub fn parse_source(text: &str) -> Result<Vec<SourceBlock>> {
    let mut blocks: Vec<SourceBlock> = Vec::new();
    let mut col: BTreeMap<String, usize> = BTreeMap::new();
    let mut line: u32 = 0;
    let mut seen: HashSet<String> = HashSet::new();
    for rec in csv_reader(text).records() {
        let rec = rec.context("malformed CSV in the source page")?;
        let row: Vec<&str> = rec.iter().collect();
        let Some(&first) = row.first() else { continue };
        match first {
            "File Path" | "File Name" => {
                blocks.push(SourceBlock { file: row.get(1).unwrap_or(&"").to_string(), ..SourceBlock::default() });
                seen.clear();
                line = 0;
                continue;
            }
            "Function Name" => {
                if let Some(b) = blocks.last_mut() {
                    b.function = row.get(1).unwrap_or(&"").to_string();
                }
                continue;
            }
            // The `sass` view: one block per kernel, no source lines.
            "Kernel Name" => {
                blocks.push(SourceBlock { function: row.get(1).unwrap_or(&"").to_string(), ..SourceBlock::default() });
                seen.clear();
                line = 0;
                continue;
            }
            "Address" => {
                col.clear();
                for (i, name) in row.iter().enumerate() {
                    col.entry(name.to_string()).or_insert(i);
                }
                continue;
            }
            "Line No" => {
                col.clear();
                // Columns 0 and 1 are the source line; SASS columns follow from 2 on.
                for (i, name) in row.iter().enumerate().skip(2) {
                    col.entry(name.to_string()).or_insert(i);
                }
                continue;
            }
            _ => {}
        }
        if col.is_empty() || blocks.is_empty() {
            continue;
        }
        if !first.trim().is_empty() && !first.starts_with("0x") {
            if let Some(n) = parse_number(first) {
                line = n as u32;
            }
            continue;
        }
        let get = |name: &str| col.get(name).and_then(|&i| row.get(i)).copied().unwrap_or("");
        let address = get("Address");
        if !address.starts_with("0x") {
            continue;
        }
        let space = get("Address Space").trim();
        if space.is_empty() || space == "-" {
            continue;
        }
        if !seen.insert(address.to_string()) {
            continue;
        }
        let num = |name: &str| parse_number(get(name)).unwrap_or(0.0);
        let block = blocks.last_mut().expect("checked above");
        block.instructions.push(SassInstr {
            file: block.file.clone(),
            line,
            address: address.to_string(),
            sass: get("Source").trim().to_string(),
            executed: num("Instructions Executed") as u64,
            thread_executed: num("Thread Instructions Executed") as u64,
            space: space.to_string(),
            op: get("Access Operation").trim().to_string(),
            size_bits: num("Access Size") as u32,
            l2_sectors: num("L2 Theoretical Sectors Global") as u64,
            l2_sectors_ideal: num("L2 Theoretical Sectors Global Ideal") as u64,
            l2_sectors_excessive: num("L2 Theoretical Sectors Global Excessive") as u64,
            l1_tag_requests: num("L1 Tag Requests Global") as u64,
            shared_nway: num("L1 Conflicts Shared N-Way"),
        });
    }
    Ok(blocks)
}

/// Parses the session page (`--page session --csv`): every two-column `"name","value"` row,
/// section headers and column titles included (harmless).
pub fn parse_session(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for rec in csv_reader(text).records().flatten() {
        if rec.len() == 2 {
            out.entry(rec[0].to_string()).or_insert_with(|| rec[1].to_string());
        }
    }
    out
}

/// The version line of `ncu --version` (`Version 2025.3.1.0 (build 36398880) (public-release)`),
/// without the word `Version`.
pub fn parse_ncu_version(text: &str) -> Option<String> {
    text.lines().find_map(|l| l.trim().strip_prefix("Version ")).map(|v| v.trim().to_string())
}

/// `nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv`: the first GPU's
/// (name, compute capability, driver version).
pub fn parse_nvidia_smi(text: &str) -> Option<(String, String, String)> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("name"))?;
    let parts: Vec<&str> = line.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [name, cc, driver, ..] => Some((name.to_string(), cc.to_string(), driver.to_string())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_with_separators() {
        assert_eq!(parse_number("\"262,144\""), Some(262144.0));
        assert_eq!(parse_number("262144.000000"), Some(262144.0));
        assert_eq!(parse_number("1,048,576"), Some(1048576.0));
        assert_eq!(parse_number("0.48"), Some(0.48));
        assert_eq!(parse_number("-"), None);
        assert_eq!(parse_number(""), None);
        assert_eq!(parse_number("n/a"), None);
    }

    #[test]
    fn units_to_base() {
        assert_eq!(scale_to_base("us").0, 1e3);
        assert_eq!(scale_to_base("ns").0, 1.0);
        assert_eq!(scale_to_base("Ksector"), (1e3, "sector".into()));
        assert_eq!(scale_to_base("sector"), (1.0, "sector".into()));
        assert_eq!(scale_to_base(""), (1.0, "".into()));
    }

    #[test]
    fn function_names() {
        assert_eq!(function_name("vec_add(const float *, const float *, float *, int)"), "vec_add");
        assert_eq!(function_name("void strided_load<(int)4>(const double *, double *, int)"), "strided_load");
        assert_eq!(function_name("ns::inner::k(int)"), "k");
        assert_eq!(function_name("_Z7vec_addPKfS0_Pfi"), "vec_add");
        assert_eq!(function_name("plain_c_kernel"), "plain_c_kernel");
    }

    #[test]
    fn smi_line() {
        let t = "name, compute_cap, driver_version\nNVIDIA H200, 9.0, 580.159.04\n";
        assert_eq!(parse_nvidia_smi(t), Some(("NVIDIA H200".into(), "9.0".into(), "580.159.04".into())));
    }
}
