//! The accounting sheet for a person, laid out like the seed lesson's worked examples.

use super::{Row, Sheet};
use crate::ir::Space;
use std::fmt::Write;

/// `1234567` -> `1,234,567`.
pub fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn launch_line(sheet: &Sheet) -> String {
    let g = sheet.launch.grid;
    let b = sheet.launch.block;
    let threads = b.iter().map(|&d| d as u64).product::<u64>();
    let blocks = g.iter().map(|&d| d as u64).product::<u64>();
    let warps = threads.div_ceil(32);
    let mut s = format!(
        "grid ({}, {}, {}) x block ({}, {}, {}): {} block{} of {} thread{} ({} warp{}{})",
        g[0],
        g[1],
        g[2],
        b[0],
        b[1],
        b[2],
        thousands(blocks),
        if blocks == 1 { "" } else { "s" },
        threads,
        if threads == 1 { "" } else { "s" },
        warps,
        if warps == 1 { "" } else { "s" },
        if threads % 32 != 0 { format!(", the last with {} lanes", threads % 32) } else { String::new() }
    );
    if !sheet.launch.args.is_empty() {
        let args: Vec<String> = sheet
            .launch
            .args
            .iter()
            .map(|(k, v)| match v {
                super::ArgValue::Int(i) => format!("{k}={i}"),
                super::ArgValue::Float(f) => format!("{k}={f}"),
            })
            .collect();
        let _ = write!(s, "; {}", args.join(", "));
    }
    s
}

/// `s` cut to at most `n` characters, marked with `...` when cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n.saturating_sub(3)).collect::<String>() + "..."
    }
}

fn spr(r: &Row) -> String {
    if r.requests == 0 {
        "-".into()
    } else {
        format!("{:.2}", r.sectors_per_request())
    }
}

/// A row's sectors, ideal sectors, sectors per request and excess cells: wavefronts and bank
/// conflicts for shared memory; none for the texture pipeline, whose sectors are not predicted.
fn cost_cells(r: &Row) -> [String; 4] {
    match r.space {
        Space::Shared => [
            format!("{} wf", thousands(r.wavefronts.unwrap_or(0))),
            format!("{} wf", thousands(r.ideal_wavefronts.unwrap_or(0))),
            "-".into(),
            format!("{} conflicts", thousands(r.bank_conflicts.unwrap_or(0))),
        ],
        Space::Texture | Space::Surface => ["-".into(), "-".into(), "-".into(), "-".into()],
        Space::Global => [thousands(r.sectors), thousands(r.ideal_sectors), spr(r), thousands(r.excess_sectors())],
    }
}

/// Sheet-level assumptions that change no number on the sheet: the counting rule's thread
/// order, how the engine went about it, what was inlined. The compact sheet leaves them to
/// `--verbose`.
fn changes_no_number(a: &str) -> bool {
    a.starts_with("threads linearised x fastest")
        || a.starts_with("symbolic engine")
        || a == "lambda inlined"
        || (a.starts_with("__device__ function `") && a.ends_with("` inlined"))
}

/// A row's assumption without the row's own numbers, so that rows that rest on the same
/// assumption share one line: ` in 12 of 40 executions`, ` (bounds 4..32)` and a leading count
/// (`1024 lane-level loads removed`) go.
fn general(a: &str) -> String {
    let mut s = a.to_string();
    // ` in N of M executions`
    if let Some(at) = s.find(" in ") {
        let rest = &s[at + 4..];
        let digits = |t: &str| t.chars().take_while(|c| c.is_ascii_digit()).count();
        let n = digits(rest);
        if n > 0 && rest[n..].starts_with(" of ") {
            let m = digits(&rest[n + 4..]);
            if m > 0 && rest[n + 4 + m..].starts_with(" executions") {
                let end = at + 4 + n + 4 + m + " executions".len();
                s.replace_range(at..end, "");
            }
        }
    }
    // ` (bounds N..M)`
    if let Some(at) = s.find(" (bounds ") {
        if let Some(close) = s[at..].find(')') {
            let inner = &s[at + " (bounds ".len()..at + close];
            if inner.chars().all(|c| c.is_ascii_digit() || c == '.' || c == ',') {
                s.replace_range(at..at + close + 1, "");
            }
        }
    }
    // `N lane-level loads removed`
    let lead = s.chars().take_while(|c| c.is_ascii_digit()).count();
    if lead > 0 && s[lead..].starts_with(" lane-level") {
        s.replace_range(..lead + 1, "");
    }
    s
}

/// The assumptions that change a number on this sheet, each once: the sheet's own (less those
/// that change none), then the rows', grouped by what they say, each group naming its rows.
pub fn compact_assumptions(sheet: &Sheet) -> Vec<String> {
    let rows_elide = sheet.instructions.iter().any(|r| r.elided_loads > 0);
    let mut out: Vec<String> = sheet
        .assumptions
        .iter()
        .filter(|a| !changes_no_number(a))
        // The rule of load elimination is said where it applied, on the rows' line.
        .filter(|a| !(rows_elide && a.starts_with("loads of an address the thread already loaded or stored")))
        .cloned()
        .collect();
    // (general text, the rows' places, the first row's own text)
    let mut groups: Vec<(String, Vec<String>, String)> = Vec::new();
    for r in &sheet.instructions {
        for a in &r.assumptions {
            let g = general(a);
            let place = format!("{}:{}", r.line, r.column);
            match groups.iter_mut().find(|(k, _, _)| *k == g) {
                Some((_, places, _)) => {
                    if !places.contains(&place) {
                        places.push(place)
                    }
                }
                None => groups.push((g, vec![place], a.clone())),
            }
        }
    }
    for (g, places, first) in groups {
        if places.len() == 1 {
            out.push(format!("{}: {first}", places[0]));
        } else {
            out.push(format!("{}: {g}", places.join(", ")));
        }
    }
    out
}

/// The compact sheet (the default): the launch, one table of the instructions and their totals,
/// the bytes, the boundaries in two lines, and only the assumptions that change a number on it,
/// each once. Everything else is in [`render_verbose`] and the JSON.
pub fn render(sheet: &Sheet) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "sector-estimate: kernel `{}` in {}", sheet.kernel, sheet.file);
    let _ = writeln!(o, "launch: {}", launch_line(sheet));
    let _ = writeln!(o);
    let header = ["line:col", "access", "space", "op", "B", "requests", "sectors", "ideal", "sect/req", "excess", ""];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for r in &sheet.instructions {
        let [sectors, ideal, per_request, excess] = cost_cells(r);
        table.push(vec![
            r.place(),
            clip(&r.text, 32),
            r.space.to_string(),
            r.op_label(),
            r.width.to_string(),
            thousands(r.requests),
            sectors,
            ideal,
            per_request,
            excess,
            if r.exact { String::new() } else { "*".into() },
        ]);
    }
    // The totals, in the table's columns: global loads and stores always, the other kinds
    // where the kernel has them.
    let t = &sheet.totals;
    let mut totals: Vec<Vec<String>> = Vec::new();
    let global = |name: &str, g: &super::GlobalTotals| {
        let spr =
            if g.requests == 0 { "-".to_string() } else { format!("{:.2}", g.sectors as f64 / g.requests as f64) };
        vec![
            String::new(),
            name.to_string(),
            String::new(),
            String::new(),
            String::new(),
            thousands(g.requests),
            thousands(g.sectors),
            thousands(g.ideal_sectors),
            spr,
            thousands(g.sectors.saturating_sub(g.ideal_sectors)),
            String::new(),
        ]
    };
    for g in t.global_groups().iter().filter(|g| g.listed()) {
        let name = if g.in_loads { format!("{} (in loads)", g.name) } else { g.name.to_string() };
        totals.push(global(&name, g.totals));
    }
    for (name, s) in t.shared_groups() {
        if s.requests > 0 || s.wavefronts > 0 {
            totals.push(vec![
                String::new(),
                name.to_string(),
                String::new(),
                String::new(),
                String::new(),
                thousands(s.requests),
                format!("{} wf", thousands(s.wavefronts)),
                format!("{} wf", thousands(s.ideal_wavefronts)),
                "-".into(),
                format!("{} conflicts", thousands(s.bank_conflicts)),
                String::new(),
            ]);
        }
    }
    for (name, x) in t.texture_groups() {
        if x.requests > 0 {
            let dash = || "-".to_string();
            totals.push(vec![
                String::new(),
                name.to_string(),
                String::new(),
                String::new(),
                String::new(),
                thousands(x.requests),
                dash(),
                dash(),
                dash(),
                dash(),
                String::new(),
            ]);
        }
    }
    let all: Vec<&Vec<String>> = table.iter().chain(&totals).collect();
    let widths: Vec<usize> =
        (0..header.len()).map(|c| all.iter().map(|row| row[c].chars().count()).max().unwrap_or(0)).collect();
    let rule = widths.iter().sum::<usize>() + 2 * (widths.len() - 1);
    let line_of = |row: &[String]| {
        let mut line = String::from("  ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            // Text columns left, numbers right.
            if c <= 3 || c == 10 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        line.trim_end().to_string()
    };
    for (i, row) in table.iter().enumerate() {
        let _ = writeln!(o, "{}", line_of(row));
        if i == 0 {
            let _ = writeln!(o, "  {}", "-".repeat(rule));
        }
    }
    if sheet.instructions.is_empty() {
        let _ = writeln!(o, "  (the kernel has no memory instructions)");
    }
    let _ = writeln!(o, "  -- totals {}", "-".repeat(rule.saturating_sub(10)));
    for row in &totals {
        let _ = writeln!(o, "{}", line_of(row));
    }
    if sheet.instructions.iter().any(|r| !r.exact) {
        let _ = writeln!(o, "  * not exact: see its assumption below");
    }
    let logical = sheet.global_logical_bytes();
    let sector_bytes = sheet.global_sectors() * 32;
    let _ = write!(
        o,
        "  global bytes: {} logical ({} loaded, {} stored), {} in sectors",
        thousands(logical),
        thousands(t.global_load.logical_bytes),
        thousands(t.global_store.logical_bytes),
        thousands(sector_bytes)
    );
    if logical > 0 {
        let _ = write!(o, " ({:.2}x)", sector_bytes as f64 / logical as f64);
    }
    let _ = writeln!(o);
    let _ = writeln!(o);
    let b = &sheet.boundaries;
    if b.bounds_only {
        let (l2, dr, dw) = (&b.bounds.l2_read_sectors, &b.bounds.dram_read_sectors, &b.bounds.dram_write_sectors);
        let _ = writeln!(
            o,
            "boundaries (BOUNDS, not estimates; {}): L1->L2 reads between {} and {}  writes {}",
            b.gpu,
            thousands(l2.min),
            thousands(l2.max),
            thousands(b.l2_write_sectors)
        );
        let _ = writeln!(
            o,
            "  DRAM reads between {} and {}  writes between {} and {}",
            thousands(dr.min),
            thousands(dr.max),
            thousands(dw.min),
            thousands(dw.max)
        );
    } else {
        let _ = writeln!(
            o,
            "boundaries ({} cache model, {}; estimates): L1 hits {}  L1->L2 reads {}  writes {}",
            b.gpu,
            b.method,
            thousands(b.l1_hit_sectors),
            thousands(b.l2_read_sectors),
            thousands(b.l2_write_sectors)
        );
        let _ = writeln!(
            o,
            "  DRAM reads {} (bounds {}..{})  writes {}",
            thousands(b.dram_read_sectors),
            thousands(b.bounds.dram_read_sectors.min),
            thousands(b.bounds.dram_read_sectors.max),
            thousands(b.dram_write_sectors)
        );
    }
    if let Some(line) = excluded_line(b) {
        let _ = writeln!(o, "  {line}");
    }
    let said = compact_assumptions(sheet);
    if !said.is_empty() {
        let _ = writeln!(o);
        let _ = writeln!(o, "assumptions");
        for a in &said {
            let _ = writeln!(o, "  - {a}");
        }
    }
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "--verbose adds the engine, the boundaries per instruction and the cache model's {} assumption{}",
        b.assumptions.len(),
        if b.assumptions.len() == 1 { "" } else { "s" }
    );
    o
}

/// What the boundaries leave out, on one line (texture and surface traffic), if anything.
pub(crate) fn excluded_line(b: &super::Boundaries) -> Option<String> {
    if b.excludes.is_empty() {
        return None;
    }
    let names: Vec<&str> = b.excludes.iter().map(|s| s.name()).collect();
    Some(format!(
        "{} traffic not included: these boundaries and their upper bounds are the global accesses' only",
        names.join(" and ")
    ))
}

/// The whole sheet (`--verbose`): the engine, logical bytes, every instruction, the totals, the
/// boundaries per instruction and every assumption in force (the sheet's, the cache model's and
/// each row's, once per row).
pub fn render_verbose(sheet: &Sheet) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "sector-estimate: kernel `{}` in {}", sheet.kernel, sheet.file);
    let _ = writeln!(o, "launch: {}", launch_line(sheet));
    let _ = writeln!(o, "engine: {} ({} warp-level steps)", sheet.engine, thousands(sheet.work));
    let t = &sheet.totals;
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "1. logical bytes (active lanes x width): {} global ({} loaded, {} stored)",
        thousands(sheet.global_logical_bytes()),
        thousands(t.global_load.logical_bytes),
        thousands(t.global_store.logical_bytes)
    );
    let _ = writeln!(o);
    let _ =
        writeln!(o, "2. sector demand per instruction (32-byte sectors, summed over every executed warp instruction)");
    let header = ["line:col", "access", "space", "op", "B", "requests", "sectors", "ideal", "sect/req", "excess", ""];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    for r in &sheet.instructions {
        let [sectors, ideal, per_request, excess] = cost_cells(r);
        table.push(vec![
            r.place(),
            r.text.clone(),
            r.space.to_string(),
            r.op_label(),
            r.width.to_string(),
            thousands(r.requests),
            sectors,
            ideal,
            per_request,
            excess,
            if r.exact { String::new() } else { "*".into() },
        ]);
    }
    let widths: Vec<usize> =
        (0..header.len()).map(|c| table.iter().map(|row| row[c].chars().count()).max().unwrap_or(0)).collect();
    for (i, row) in table.iter().enumerate() {
        let mut line = String::from("  ");
        for (c, cell) in row.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            // Text columns left, numbers right.
            if c <= 3 || c == 10 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
            line.push_str("  ");
        }
        let _ = writeln!(o, "{}", line.trim_end());
        if i == 0 {
            let _ = writeln!(o, "  {}", "-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len() - 1)));
        }
    }
    if sheet.instructions.is_empty() {
        let _ = writeln!(o, "  (the kernel has no memory instructions)");
    }
    if sheet.instructions.iter().any(|r| !r.exact) {
        let _ = writeln!(o, "  * not exact: see the instruction's assumptions below");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "3. totals");
    let groups = t.global_groups();
    for g in groups.iter().filter(|g| g.always) {
        let (name, g) = (g.name, g.totals);
        let spr = if g.requests == 0 { 0.0 } else { g.sectors as f64 / g.requests as f64 };
        let _ = writeln!(
            o,
            "  {name:<12}  requests {:>12}  sectors {:>12}  ideal {:>12}  sectors/request {:.2}  ({} sector bytes for {} logical)",
            thousands(g.requests),
            thousands(g.sectors),
            thousands(g.ideal_sectors),
            spr,
            thousands(g.sectors * 32),
            thousands(g.logical_bytes)
        );
    }
    // Atomics and asynchronous copies have counters of their own; shown when the kernel has them.
    for g in groups.iter().filter(|g| !g.always && g.listed()) {
        let (name, g) = (g.name, g.totals);
        let _ = writeln!(
            o,
            "  {name:<12}  requests {:>12}  sectors {:>12}  ideal {:>12}  sectors/request {:.2}",
            thousands(g.requests),
            thousands(g.sectors),
            thousands(g.ideal_sectors),
            g.sectors as f64 / g.requests as f64
        );
    }
    if groups.iter().any(|g| g.in_loads && g.totals.requests > 0) {
        let _ = writeln!(o, "  (global load includes the asynchronous copies, as the H200's load counters do)");
    }
    for (name, s) in t.shared_groups() {
        if s.requests > 0 || s.wavefronts > 0 {
            let _ = writeln!(
                o,
                "  {name:<12}  requests {:>12}  wavefronts {:>9}  ideal {:>12}  bank conflicts {}",
                thousands(s.requests),
                thousands(s.wavefronts),
                thousands(s.ideal_wavefronts),
                thousands(s.bank_conflicts)
            );
        }
    }
    for (name, x) in t.texture_groups() {
        if x.requests > 0 {
            let _ = writeln!(
                o,
                "  {name:<12}  requests {:>12}  sectors not predicted (the texture unit's; in no global counter)",
                thousands(x.requests)
            );
        }
    }
    let b = &sheet.boundaries;
    let _ = writeln!(o);
    if b.bounds_only {
        let (l2, dr, dw) = (&b.bounds.l2_read_sectors, &b.bounds.dram_read_sectors, &b.bounds.dram_write_sectors);
        let _ = writeln!(o, "4. boundaries (model: {}; {}; BOUNDS, not estimates: see assumptions)", b.model, b.method);
        let _ = writeln!(
            o,
            "  L1->L2 reads between {} and {}  writes {}  DRAM reads between {} and {}  writes between {} and {}",
            thousands(l2.min),
            thousands(l2.max),
            thousands(b.l2_write_sectors),
            thousands(dr.min),
            thousands(dr.max),
            thousands(dw.min),
            thousands(dw.max)
        );
    } else {
        let _ = writeln!(o, "4. boundaries (model: {}; {}; estimates, see assumptions)", b.model, b.method);
    }
    if !b.bounds_only {
        let _ = writeln!(
            o,
            "  L1 hits {}  L1->L2 reads {}  writes {}  DRAM reads {} (bounds {}..{})  writes {}",
            thousands(b.l1_hit_sectors),
            thousands(b.l2_read_sectors),
            thousands(b.l2_write_sectors),
            thousands(b.dram_read_sectors),
            thousands(b.bounds.dram_read_sectors.min),
            thousands(b.bounds.dram_read_sectors.max),
            thousands(b.dram_write_sectors)
        );
    }
    if let Some(line) = excluded_line(b) {
        let _ = writeln!(o, "  {line}");
    }
    let per_row: Vec<_> = sheet.instructions.iter().filter_map(|r| r.boundary.map(|rb| (r, rb))).collect();
    if per_row.len() > 1 {
        let _ = writeln!(
            o,
            "  {:<9} {:<22} {:>6} {:>12} {:>12} {:>12} {:>12}",
            "line:col", "access", "op", "L1 hits", "L2 reads", "L2 writes", "DRAM reads"
        );
        for (r, rb) in per_row {
            let _ = writeln!(
                o,
                "  {:<9} {:<22} {:>6} {:>12} {:>12} {:>12} {:>12}",
                r.place(),
                clip(&r.text, 22),
                r.op_label(),
                thousands(rb.l1_hit_sectors),
                thousands(rb.l2_read_sectors),
                thousands(rb.l2_write_sectors),
                thousands(rb.dram_read_sectors)
            );
        }
    }
    for a in &b.assumptions {
        let _ = writeln!(o, "  - {a}");
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "5. assumptions");
    for a in &sheet.assumptions {
        let _ = writeln!(o, "  - {a}");
    }
    for r in &sheet.instructions {
        for a in &r.assumptions {
            let _ = writeln!(o, "  - {} `{}`: {a}", r.place(), r.text);
        }
    }
    o
}
