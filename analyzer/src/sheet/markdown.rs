//! The sheet as Markdown tables (for reports and pull requests).

use super::text::{launch_line, thousands};
use super::Sheet;
use std::fmt::Write;

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

pub fn render(sheet: &Sheet) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "### `{}` ({})\n", sheet.kernel, sheet.file);
    let _ = writeln!(o, "Launch: {}. Engine: {}.\n", launch_line(sheet), sheet.engine);
    let _ = writeln!(o, "| line:col | access | space | op | bytes | requests | sectors | ideal | sectors/request | excess | wavefronts | exact |");
    let _ = writeln!(o, "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for r in &sheet.instructions {
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.place(),
            cell(&r.text),
            r.space,
            r.op_label(),
            r.width,
            thousands(r.requests),
            if r.texture_pipe() { "-".into() } else { thousands(r.sectors) },
            if r.texture_pipe() { "-".into() } else { thousands(r.ideal_sectors) },
            if r.requests == 0 || r.texture_pipe() { "-".into() } else { format!("{:.2}", r.sectors_per_request()) },
            if r.texture_pipe() { "-".into() } else { thousands(r.excess_sectors()) },
            r.wavefronts.map(thousands).unwrap_or_else(|| "-".into()),
            if r.exact { "yes" } else { "no" }
        );
    }
    let t = &sheet.totals;
    let _ = writeln!(o, "\n| totals | requests | sectors | ideal | logical bytes |");
    let _ = writeln!(o, "|---|---:|---:|---:|---:|");
    for g in t.global_groups().iter().filter(|g| g.listed()) {
        let (n, g) = (g.name, g.totals);
        let _ = writeln!(
            o,
            "| {n} | {} | {} | {} | {} |",
            thousands(g.requests),
            thousands(g.sectors),
            thousands(g.ideal_sectors),
            thousands(g.logical_bytes)
        );
    }
    // Shared loads and stores always (this table's own layout), atomics and matrix loads and
    // stores where there are some.
    for (n, s) in t.shared_groups() {
        if matches!(n, "shared load" | "shared store") || s.requests > 0 {
            let _ = writeln!(
                o,
                "| {n} | {} | {} wavefronts | {} | {} |",
                thousands(s.requests),
                thousands(s.wavefronts),
                thousands(s.ideal_wavefronts),
                thousands(s.logical_bytes)
            );
        }
    }
    for (n, x) in t.texture_groups() {
        if x.requests > 0 {
            let _ =
                writeln!(o, "| {n} | {} | not predicted | - | {} |", thousands(x.requests), thousands(x.logical_bytes));
        }
    }
    let b = &sheet.boundaries;
    if b.bounds_only {
        let (l2, dr, dw) = (&b.bounds.l2_read_sectors, &b.bounds.dram_read_sectors, &b.bounds.dram_write_sectors);
        let _ = writeln!(
            o,
            "\nBoundaries ({}; {}): **bounds, not estimates**: L1->L2 reads {}..{}, writes {}, DRAM reads {}..{}, writes {}..{}.\n",
            b.model,
            b.method,
            thousands(l2.min),
            thousands(l2.max),
            thousands(b.l2_write_sectors),
            thousands(dr.min),
            thousands(dr.max),
            thousands(dw.min),
            thousands(dw.max)
        );
    }
    if !b.bounds_only {
        let _ = writeln!(
        o,
        "\nBoundaries ({}; {}): L1 hits {}, L1->L2 reads {}, writes {}, DRAM reads {} (bounds {}..{}), writes {}.\n",
        b.model,
        b.method,
        thousands(b.l1_hit_sectors),
        thousands(b.l2_read_sectors),
        thousands(b.l2_write_sectors),
        thousands(b.dram_read_sectors),
        thousands(b.bounds.dram_read_sectors.min),
        thousands(b.bounds.dram_read_sectors.max),
        thousands(b.dram_write_sectors)
    );
    }
    if let Some(line) = super::text::excluded_line(b) {
        let _ = writeln!(o, "{}.\n", line[..1].to_uppercase() + &line[1..]);
    }
    let per_row: Vec<_> = sheet.instructions.iter().filter_map(|r| r.boundary.map(|rb| (r, rb))).collect();
    if per_row.len() > 1 {
        let _ = writeln!(o, "| line:col | access | op | L1 hits | L2 reads | L2 writes | DRAM reads |");
        let _ = writeln!(o, "| --- | --- | --- | ---: | ---: | ---: | ---: |");
        for (r, rb) in per_row {
            let _ = writeln!(
                o,
                "| {} | `{}` | {} | {} | {} | {} | {} |",
                r.place(),
                cell(&r.text),
                r.op_label(),
                thousands(rb.l1_hit_sectors),
                thousands(rb.l2_read_sectors),
                thousands(rb.l2_write_sectors),
                thousands(rb.dram_read_sectors)
            );
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "Assumptions:\n");
    for a in sheet.assumptions.iter().chain(&b.assumptions) {
        let _ = writeln!(o, "- {a}");
    }
    for r in &sheet.instructions {
        for a in &r.assumptions {
            let _ = writeln!(o, "- {} `{}`: {a}", r.place(), cell(&r.text));
        }
    }
    o
}
