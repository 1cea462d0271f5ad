//! The sheet as one self-contained HTML page (`analyze --format html`): the kernel's source with
//! each line that holds a memory access coloured by its excess sectors, the rows' numbers beside
//! them and on hover, the lane map of `explain` for a row on click, the totals, the boundaries as
//! an inline SVG chart and every assumption. No network, fonts, scripts or styles from outside:
//! the file opens anywhere. All text from the kernel is escaped.

use crate::analyze::{analyze, counts_sass, lower, pick_kernel, sheet_of, Analysis, AnalyzeOptions, Failure, Input};
use crate::diag::Result;
use crate::explain::{AccessExplanation, LaneMap};
use crate::ir::Space;
use crate::sheet::text::{launch_line, thousands};
use crate::sheet::{Bound, Row, Sheet};
use crate::source::FileLoader;
use crate::source::SourceFiles;
use std::fmt::Write;

/// The highlight of the line with the most excess sectors (and the end of the colour scale).
pub const WORST_RGB: (u8, u8, u8) = (0xf2, 0x8b, 0x82);
/// The start of the scale: a line with very little excess.
const MILD_RGB: (u8, u8, u8) = (0xfd, 0xf0, 0xc2);
/// A memory line with no excess at all.
pub const IDEAL_RGB: (u8, u8, u8) = (0xdf, 0xf3, 0xe0);
/// The page's background.
pub const BACKGROUND_RGB: (u8, u8, u8) = (0xff, 0xff, 0xff);

/// Sector colours of the lane map (qualitative, told apart by eye): lanes and the sectors they
/// touch share a colour.
const SECTOR_COLOURS: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#edc948", "#76b7b2", "#e15759", "#9c755f", "#ff9da7", "#bab0ac"];

/// `s` as HTML text or attribute value.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

fn hex((r, g, b): (u8, u8, u8)) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// What a row moves beyond the ideal, in its own unit: sectors (global), wavefronts (shared).
fn excess(r: &Row) -> u64 {
    match r.space {
        Space::Shared => r.wavefronts.unwrap_or(0).saturating_sub(r.ideal_wavefronts.unwrap_or(0)),
        Space::Global => r.excess_sectors(),
        // Not predicted: no excess to colour.
        Space::Texture | Space::Surface => 0,
    }
}

/// A line's highlight: ideal green, else from mild to [`WORST_RGB`] by its share of the worst
/// line's excess (global and shared each against their own worst).
fn line_colour(rows: &[&Row], worst_global: u64, worst_shared: u64) -> (u8, u8, u8) {
    let t = rows
        .iter()
        .map(|r| {
            let worst = if r.space == Space::Shared { worst_shared } else { worst_global };
            if worst == 0 {
                0.0
            } else {
                excess(r) as f64 / worst as f64
            }
        })
        .fold(0.0f64, f64::max);
    if rows.iter().all(|r| excess(r) == 0) {
        return IDEAL_RGB;
    }
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    (mix(MILD_RGB.0, WORST_RGB.0), mix(MILD_RGB.1, WORST_RGB.1), mix(MILD_RGB.2, WORST_RGB.2))
}

fn per_request(r: &Row) -> String {
    if r.requests == 0 {
        return "-".into();
    }
    match r.space {
        Space::Shared => format!("{:.2} wf/req", r.wavefronts.unwrap_or(0) as f64 / r.requests as f64),
        Space::Global => format!("{:.2} sect/req", r.sectors_per_request()),
        Space::Texture | Space::Surface => "-".into(),
    }
}

/// A row's numbers in one line (the hover text and the chips beside the source).
fn row_summary(r: &Row) -> String {
    match r.space {
        Space::Shared => format!(
            "{} {} {} B: {} requests, {} wavefronts (ideal {}), {} bank conflicts",
            r.space,
            r.op_label(),
            r.width,
            thousands(r.requests),
            thousands(r.wavefronts.unwrap_or(0)),
            thousands(r.ideal_wavefronts.unwrap_or(0)),
            thousands(r.bank_conflicts.unwrap_or(0))
        ),
        Space::Global => format!(
            "{} {} {} B: {} requests, {} sectors (ideal {}), excess {}, {}",
            r.space,
            r.op_label(),
            r.width,
            thousands(r.requests),
            thousands(r.sectors),
            thousands(r.ideal_sectors),
            thousands(r.excess_sectors()),
            per_request(r)
        ),
        Space::Texture | Space::Surface => format!(
            "{} {} {} B: {} executions, sectors not predicted (the texture unit's)",
            r.space,
            r.op,
            r.width,
            thousands(r.requests)
        ),
    }
}

const STYLE: &str = r#"
:root { --mono: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", "Liberation Mono", monospace;
  --sans: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", "Liberation Sans", Arial, sans-serif;
  --ink: #1f2328; --muted: #656d76; --rule: #d0d7de; --panel: #f6f8fa; }
* { box-sizing: border-box; }
body { margin: 0; background: #ffffff; color: var(--ink); font: 14px/1.45 var(--sans); }
header { padding: 14px 20px 10px; border-bottom: 1px solid var(--rule); }
h1 { font-size: 20px; margin: 0 0 2px; font-weight: 600; }
h1 code { font-family: var(--mono); }
h2 { font-size: 15px; margin: 0 0 8px; font-weight: 600; }
.sub { color: var(--muted); font-size: 13px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; padding: 10px 20px; border-bottom: 1px solid var(--rule); }
.card { background: var(--panel); border: 1px solid var(--rule); border-radius: 6px; padding: 5px 11px; min-width: 96px; }
.card b { display: block; font-size: 18px; font-variant-numeric: tabular-nums; }
.card span { color: var(--muted); font-size: 12px; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 440px; gap: 0; }
.source { overflow: auto; border-right: 1px solid var(--rule); max-height: 78vh; position: relative; }
table.src { border-collapse: collapse; font: 13px/1.5 var(--mono); width: 100%; }
table.src td { padding: 0 8px; white-space: pre; vertical-align: top; }
table.src td.no { color: #8c959f; text-align: right; user-select: none; width: 1%; border-right: 1px solid var(--rule); }
table.src td.code { tab-size: 4; }
table.src td.notes { white-space: normal; padding: 0 8px 3px 22px; font: 12px/1.6 var(--sans); color: #3d444d; }
.caption { padding: 4px 12px; border-bottom: 1px solid var(--rule); background: var(--panel); position: sticky; top: 0; z-index: 1; }
tr.mem { cursor: pointer; }
tr.mem td.no { color: var(--ink); font-weight: 600; }
tr.sel td.no { box-shadow: inset 4px 0 0 #1f2328; }
.chip { display: inline-block; margin: 0 6px 0 0; padding: 0 8px; border-radius: 9px; background: rgba(255,255,255,.75);
  border: 1px solid rgba(0,0,0,.15); cursor: pointer; }
.chip code { font-family: var(--mono); }
aside { padding: 12px 16px; overflow: auto; max-height: 78vh; }
.detail[hidden] { display: none; }
.detail h3 { font: 600 14px var(--sans); margin: 0 0 6px; }
.detail h3 code { font-family: var(--mono); background: var(--panel); padding: 1px 4px; border-radius: 4px; }
table.nums { border-collapse: collapse; font-size: 13px; margin-bottom: 10px; }
table.nums td { padding: 1px 10px 1px 0; font-variant-numeric: tabular-nums; }
table.nums td:first-child { color: var(--muted); }
.lanes { display: grid; grid-template-columns: repeat(8, 1fr); gap: 3px; margin: 6px 0 10px; }
.lane { border-radius: 4px; padding: 2px 3px; font: 11px/1.25 var(--mono); text-align: center; color: #fff; }
.lane small { display: block; opacity: .85; font-size: 9px; }
.lane.inactive { background: repeating-linear-gradient(45deg, #eaeef2, #eaeef2 4px, #f6f8fa 4px, #f6f8fa 8px); color: #8c959f; }
.lane.elided { background: #d0d7de; color: #3d444d; }
.lmap { font: 11px var(--mono); margin: 4px 0 10px; }
.lmap .line { display: flex; align-items: center; gap: 4px; margin: 2px 0; }
.lmap .label { width: 86px; color: var(--muted); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sector { display: flex; gap: 1px; padding: 2px; border-radius: 3px; border: 2px solid transparent; }
.sector.untouched { border: 1px dashed #d0d7de; padding: 3px; }
.cell { width: 7px; height: 14px; border-radius: 1px; }
.legend { color: var(--muted); font-size: 12px; }
.legend i { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin: 0 3px 0 8px; vertical-align: -1px; }
ul.why { padding-left: 18px; margin: 6px 0; font-size: 13px; }
section.block { padding: 14px 20px; border-top: 1px solid var(--rule); }
table.rows { border-collapse: collapse; font-size: 13px; }
table.rows th, table.rows td { padding: 3px 10px; border-bottom: 1px solid #eaeef2; text-align: right; white-space: nowrap; }
table.rows th { color: var(--muted); font-weight: 600; }
table.rows td.t, table.rows th.t { text-align: left; }
table.rows td code { font-family: var(--mono); }
table.rows tr[data-row] { cursor: pointer; }
table.rows tr[data-row]:hover { background: var(--panel); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 3px; vertical-align: -2px; border: 1px solid rgba(0,0,0,.15); }
ul.assume { margin: 4px 0; padding-left: 18px; font-size: 13px; }
details summary { cursor: pointer; color: var(--muted); font-size: 13px; }
.flex { display: flex; flex-wrap: wrap; gap: 28px; align-items: flex-start; }
"#;

/// Shows the clicked row's details (lane map included) and marks its line.
const SCRIPT: &str = r#"
(function () {
  function select(i) {
    document.querySelectorAll('.detail').forEach(function (d) { d.hidden = d.getAttribute('data-row') !== i; });
    document.querySelectorAll('tr.mem').forEach(function (t) {
      t.classList.toggle('sel', (' ' + t.getAttribute('data-rows') + ' ').indexOf(' ' + i + ' ') >= 0);
    });
  }
  // Open on the line shown first (a file may hold other kernels and long comments above).
  var src = document.querySelector('.source'), first = document.querySelector('tr.sel');
  if (src && first) { src.scrollTop = Math.max(0, first.offsetTop - src.clientHeight / 3); }
  document.addEventListener('click', function (e) {
    var chip = e.target.closest('[data-row]');
    if (chip) { select(chip.getAttribute('data-row')); return; }
    var line = e.target.closest('tr.mem');
    if (line) { select(line.getAttribute('data-worst')); }
  });
})();
"#;

/// The page. `source` is the analysed file's text (rows in other files are in the table only);
/// `lanes` holds, per row of the sheet, what `explain` shows for its first warp-level execution
/// or why there is none ([`crate::explain::first_executions`]).
pub fn render(sheet: &Sheet, source: &str, lanes: &[LaneMap]) -> String {
    let rows = &sheet.instructions;
    let worst_global = rows.iter().filter(|r| r.space == Space::Global).map(excess).max().unwrap_or(0);
    let worst_shared = rows.iter().filter(|r| r.space == Space::Shared).map(excess).max().unwrap_or(0);
    let first = first_row(sheet);

    let mut o = String::new();
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // Nothing may be fetched: no network is needed (or allowed) to open the report.
    o.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n",
    );
    let _ = writeln!(o, "<title>{} — sector-estimate</title>", escape(&sheet.kernel));
    let _ = writeln!(o, "<style>{STYLE}</style>\n</head>\n<body>");

    // Header and cards.
    let _ = writeln!(
        o,
        "<header><h1>Kernel <code>{}</code> <span class=\"sub\">in {}</span></h1>",
        escape(&sheet.kernel),
        escape(&sheet.file)
    );
    let via = match sheet.via {
        Some(v) => format!("; counted from {}", escape(v)),
        None => String::new(),
    };
    let _ = writeln!(
        o,
        "<div class=\"sub\">launch: {}; engine: {}{via}</div></header>",
        escape(&launch_line(sheet)),
        escape(sheet.engine)
    );
    cards(&mut o, sheet);

    // Source and the selected row.
    o.push_str("<main>\n<div class=\"source\">\n");
    let _ = writeln!(
        o,
        "<div class=\"legend caption\">lines with a memory access, by excess sectors over the ideal (shared: wavefronts):\
         <i style=\"background:{}\"></i>none<i style=\"background:{}\"></i>a little<i style=\"background:{}\"></i>the most. \
         Click one for its warp, lane by lane.</div>",
        hex(IDEAL_RGB),
        hex(MILD_RGB),
        hex(WORST_RGB)
    );
    source_table(&mut o, sheet, source, worst_global, worst_shared);
    o.push_str("</div>\n<aside>\n");
    if rows.is_empty() {
        o.push_str("<p>The kernel has no memory instructions.</p>\n");
    }
    for (i, r) in rows.iter().enumerate() {
        detail(&mut o, i, r, lanes.get(i), Some(i) == first);
    }
    o.push_str("</aside>\n</main>\n");

    // Every row, the totals, the boundaries, the assumptions.
    o.push_str("<section class=\"block\"><h2>Memory instructions</h2>\n");
    rows_table(&mut o, sheet, worst_global, worst_shared);
    o.push_str("</section>\n<section class=\"block\"><div class=\"flex\">\n<div><h2>Totals</h2>\n");
    totals_table(&mut o, sheet);
    o.push_str("</div>\n<div><h2>Boundaries</h2>\n");
    boundaries_chart(&mut o, sheet);
    o.push_str("</div>\n</div></section>\n");
    assumptions(&mut o, sheet);
    o.push_str(
        "<footer class=\"block sub\" style=\"padding:10px 20px\">sector-estimate: counts are exact by the counting rules unless marked *; boundaries are estimates of the named cache model.</footer>\n",
    );
    let _ = writeln!(o, "<script>{SCRIPT}</script>\n</body>\n</html>");
    o
}

fn cards(o: &mut String, sheet: &Sheet) {
    let t = &sheet.totals;
    let (requests, sectors, ideal) = (
        t.global_load.requests + t.global_store.requests,
        sheet.global_sectors(),
        t.global_load.ideal_sectors + t.global_store.ideal_sectors,
    );
    o.push_str("<div class=\"cards\">");
    let mut card = |value: String, what: &str| {
        let _ = write!(o, "<div class=\"card\"><b>{}</b><span>{}</span></div>", escape(&value), escape(what));
    };
    card(thousands(requests), "global requests");
    card(thousands(sectors), "global sectors");
    card(thousands(ideal), "ideal sectors");
    card(thousands(sectors.saturating_sub(ideal)), "excess sectors");
    if requests > 0 {
        card(format!("{:.2}", sectors as f64 / requests as f64), "sectors per request");
    }
    if sectors > 0 {
        card(format!("{:.0}%", ideal as f64 / sectors as f64 * 100.0), "efficiency (ideal / sectors)");
    }
    let shared = [t.shared_load, t.shared_store, t.shared_atom];
    if shared.iter().any(|s| s.requests > 0 || s.wavefronts > 0) {
        card(thousands(shared.iter().map(|s| s.bank_conflicts).sum()), "shared bank conflicts");
    }
    let b = &sheet.boundaries;
    if b.bounds_only {
        card(
            format!("{}..{}", thousands(b.bounds.dram_read_sectors.min), thousands(b.bounds.dram_read_sectors.max)),
            "DRAM read sectors (bounds)",
        );
    } else {
        card(thousands(b.dram_read_sectors + b.dram_write_sectors), "DRAM sectors (estimate)");
    }
    o.push_str("</div>\n");
}

fn source_table(o: &mut String, sheet: &Sheet, source: &str, worst_global: u64, worst_shared: u64) {
    o.push_str("<table class=\"src\">\n");
    for (n, text) in source.lines().enumerate() {
        let line = n as u32 + 1;
        let here: Vec<(usize, &Row)> =
            sheet.instructions.iter().enumerate().filter(|(_, r)| r.file.is_none() && r.line == line).collect();
        let code = escape(text.trim_end_matches('\r'));
        if here.is_empty() {
            let _ = writeln!(o, "<tr id=\"L{line}\"><td class=\"no\">{line}</td><td class=\"code\">{code}</td></tr>");
            continue;
        }
        let refs: Vec<&Row> = here.iter().map(|(_, r)| *r).collect();
        let colour = hex(line_colour(&refs, worst_global, worst_shared));
        let ids: Vec<String> = here.iter().map(|(i, _)| i.to_string()).collect();
        let worst =
            here.iter().max_by_key(|(i, r)| (excess(r), r.sectors, std::cmp::Reverse(*i))).map_or(0, |(i, _)| *i);
        let title: Vec<String> =
            here.iter().map(|(_, r)| format!("{} `{}`: {}", r.place(), r.text, row_summary(r))).collect();
        let mut chips = String::new();
        for (i, r) in &here {
            let what = match r.space {
                Space::Shared => format!(
                    "{} wavefronts · {} bank conflicts",
                    thousands(r.wavefronts.unwrap_or(0)),
                    thousands(r.bank_conflicts.unwrap_or(0))
                ),
                Space::Global => {
                    format!("{} sectors · +{} excess", thousands(r.sectors), thousands(r.excess_sectors()))
                }
                Space::Texture | Space::Surface => "sectors not predicted".to_string(),
            };
            let _ = write!(
                chips,
                "<span class=\"chip\" data-row=\"{i}\"><code>{}</code> {} {} · {} · {}{}</span>",
                escape(&r.text),
                r.space,
                r.op_label(),
                escape(&per_request(r)),
                escape(&what),
                if r.exact { "" } else { " *" }
            );
        }
        let sel = if here.iter().any(|(i, _)| Some(*i) == first_row(sheet)) { " sel" } else { "" };
        let attrs = format!(
            "class=\"mem{sel}\" style=\"background:{colour}\" data-rows=\"{}\" data-worst=\"{worst}\" title=\"{}\"",
            ids.join(" "),
            escape(&title.join("\n"))
        );
        // The numbers on a row of their own under the line: they never hide the code.
        let _ = writeln!(
            o,
            "<tr id=\"L{line}\" {attrs}><td class=\"no\">{line}</td><td class=\"code\">{code}</td></tr>\n<tr {attrs}><td class=\"no\"></td><td class=\"notes\">{chips}</td></tr>"
        );
    }
    o.push_str("</table>\n");
}

/// The row shown first: the one with the most excess, else the most sectors, else the first.
fn first_row(sheet: &Sheet) -> Option<usize> {
    let rows = &sheet.instructions;
    (0..rows.len()).max_by_key(|&i| (excess(&rows[i]), rows[i].sectors, std::cmp::Reverse(i)))
}

/// One row's panel: its numbers over the launch, then its first warp-level execution lane by
/// lane.
fn detail(o: &mut String, i: usize, r: &Row, x: Option<&LaneMap>, shown: bool) {
    let _ = writeln!(o, "<div class=\"detail\" data-row=\"{i}\"{}>", if shown { "" } else { " hidden" });
    let _ = writeln!(
        o,
        "<h3>{} <code>{}</code> {} {}, {} B</h3>",
        escape(&r.place()),
        escape(&r.text),
        r.space,
        r.op_label(),
        r.width
    );
    o.push_str("<table class=\"nums\">");
    let mut num = |k: &str, v: String| {
        let _ = write!(o, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&v));
    };
    num("executions (warp-level)", thousands(r.executions));
    num("requests", thousands(r.requests));
    match r.space {
        Space::Shared => {
            num("wavefronts", thousands(r.wavefronts.unwrap_or(0)));
            num("ideal wavefronts", thousands(r.ideal_wavefronts.unwrap_or(0)));
            num("bank conflicts", thousands(r.bank_conflicts.unwrap_or(0)));
        }
        Space::Global => {
            num("sectors", thousands(r.sectors));
            num("ideal sectors", thousands(r.ideal_sectors));
            num("excess sectors", thousands(r.excess_sectors()));
            num("sectors per request", per_request(r).replace(" sect/req", ""));
        }
        Space::Texture | Space::Surface => num("sectors", "not predicted (the texture unit's)".to_string()),
    }
    if r.sectors_min != r.sectors_max {
        num("sectors, whatever the data", format!("{}..{}", thousands(r.sectors_min), thousands(r.sectors_max)));
    }
    if r.elided_loads > 0 {
        num("lane loads the compiler removes", thousands(r.elided_loads));
    }
    if let Some(b) = r.boundary {
        num("L1 hits (estimate)", thousands(b.l1_hit_sectors));
        num(
            "L1→L2 reads, writes (estimates)",
            format!("{}, {}", thousands(b.l2_read_sectors), thousands(b.l2_write_sectors)),
        );
        num("DRAM reads (estimate)", thousands(b.dram_read_sectors));
    }
    num("exact", if r.exact { "yes".into() } else { "no: see the assumptions".into() });
    o.push_str("</table>\n");
    if !r.assumptions.is_empty() {
        o.push_str("<ul class=\"assume\">");
        for a in &r.assumptions {
            let _ = write!(o, "<li>{}</li>", escape(a));
        }
        o.push_str("</ul>\n");
    }
    match x {
        Some(Ok(x)) => lane_map(o, x),
        Some(Err(why)) => {
            let _ = writeln!(o, "<p class=\"sub\">No lane map: {}.</p>", escape(why));
        }
        None => o.push_str("<p class=\"sub\">No lane map.</p>\n"),
    }
    o.push_str("</div>\n");
}

/// Lines of a lane map drawn; a warp touches at most 32 sectors, but 32 lines of one sector each
/// say no more than the first few.
const MAX_LINES_SHOWN: usize = 12;

/// `explain`'s view of one warp-level execution: each lane's sector, the 128-byte lines with the
/// bytes asked for, and why.
fn lane_map(o: &mut String, x: &AccessExplanation) {
    let _ = writeln!(
        o,
        "<h2 style=\"margin-top:6px\">One warp: block ({}, {}, {}), warp {}, execution {} of {}</h2>",
        x.block[0],
        x.block[1],
        x.block[2],
        x.warp,
        x.execution,
        thousands(x.executions)
    );
    let shared = x.space == Space::Shared;
    let what = if shared {
        format!(
            "{} request, {} wavefront(s), ideal {}",
            x.requests,
            x.wavefronts.unwrap_or(0),
            x.ideal_wavefronts.unwrap_or(0)
        )
    } else {
        format!(
            "{} request, {} sectors, ideal {}, {} useful bytes",
            x.requests, x.sectors, x.ideal_sectors, x.useful_bytes
        )
    };
    let _ = writeln!(o, "<div class=\"sub\">into <code>{}</code>: {}</div>", escape(&x.object), escape(&what));
    // Colours by sector (global) or bank (shared), in order of first appearance.
    let key = |l: &crate::explain::Lane| if shared { l.bank } else { l.sector };
    let mut order: Vec<i64> = Vec::new();
    for l in &x.lanes {
        if let Some(k) = key(l) {
            if !order.contains(&k) {
                order.push(k);
            }
        }
    }
    let colour = |k: i64| SECTOR_COLOURS[order.iter().position(|&s| s == k).unwrap_or(0) % SECTOR_COLOURS.len()];
    o.push_str("<div class=\"lanes\">");
    for l in &x.lanes {
        let place = match (l.index, l.offset) {
            (Some(ix), _) => format!("{}[{ix}]", x.object),
            (None, Some(off)) => format!("{} + {off} bytes", x.object),
            (None, None) => "address unknown (data-dependent)".into(),
        };
        let unit = if shared { "bank" } else { "sector" };
        let title = format!(
            "lane {}, thread ({}, {}, {}): {}; {place}{}",
            l.lane,
            l.thread[0],
            l.thread[1],
            l.thread[2],
            l.state,
            key(l).map(|k| format!(", {unit} {k}")).unwrap_or_default()
        );
        let (class, style, label) = match (l.state, key(l)) {
            ("active", Some(k)) => {
                ("lane", format!(" style=\"background:{}\"", colour(k)), format!("{}{k}", &unit[..1]))
            }
            ("active", None) => ("lane", " style=\"background:#57606a\"".to_string(), "?".into()),
            ("elided", _) => ("lane elided", String::new(), "reg".into()),
            _ => ("lane inactive", String::new(), "–".into()),
        };
        let _ = write!(
            o,
            "<div class=\"{class}\"{style} title=\"{}\"><small>lane {}</small>{}</div>",
            escape(&title),
            l.lane,
            escape(&label)
        );
    }
    o.push_str("</div>\n");
    let _ = writeln!(
        o,
        "<div class=\"legend\">{}</div>",
        if shared {
            "bN: the bank of the lane's first byte; striped: the lane does not execute the access; reg: its load is removed (the value is in a register)"
        } else {
            "sN: the 32-byte sector the lane touches, counted from the 256-byte boundary at or below the object; striped: the lane does not execute the access; reg: its load is removed (the value is in a register)"
        }
    );
    if !x.lines.is_empty() {
        o.push_str("<div class=\"lmap\">");
        for m in x.lines.iter().take(MAX_LINES_SHOWN) {
            let _ = write!(
                o,
                "<div class=\"line\"><span class=\"label\" title=\"{0}, 128-byte line {1} from its 256-byte boundary\">{0} line {1}</span>",
                escape(&m.object),
                m.line
            );
            for (s, (n, cells)) in m.sectors.iter().zip(&m.cells).enumerate() {
                let sector = m.line * 4 + s as i64;
                match n {
                    None => {
                        let _ = write!(o, "<span class=\"sector untouched\" title=\"sector {sector}: not moved\">");
                        for _ in 0..8 {
                            o.push_str("<span class=\"cell\"></span>");
                        }
                    }
                    Some(n) => {
                        let c = colour(sector);
                        let _ = write!(
                            o,
                            "<span class=\"sector\" style=\"border-color:{c}\" title=\"sector {sector}: {n} of 32 bytes asked for\">"
                        );
                        for ch in cells.chars() {
                            let fill = match ch {
                                '#' => c.to_string(),
                                '+' => format!("{c}80"),
                                _ => "#eaeef2".to_string(),
                            };
                            let _ = write!(o, "<span class=\"cell\" style=\"background:{fill}\"></span>");
                        }
                    }
                }
                o.push_str("</span>");
            }
            o.push_str("</div>");
        }
        if x.lines.len() > MAX_LINES_SHOWN {
            let _ = write!(
                o,
                "<div class=\"legend\">and {} more 128-byte lines (the first {MAX_LINES_SHOWN} shown)</div>",
                x.lines.len() - MAX_LINES_SHOWN
            );
        }
        o.push_str(
            "<div class=\"legend\">each cell 4 bytes: <i style=\"background:#4e79a7\"></i>asked for<i style=\"background:#4e79a780\"></i>partly<i style=\"background:#eaeef2\"></i>moved, not asked for</div></div>\n",
        );
    }
    if !x.why.is_empty() {
        o.push_str("<ul class=\"why\">");
        for w in &x.why {
            let _ = write!(o, "<li>{}</li>", escape(w));
        }
        o.push_str("</ul>\n");
    }
}

fn rows_table(o: &mut String, sheet: &Sheet, worst_global: u64, worst_shared: u64) {
    o.push_str("<table class=\"rows\"><tr><th></th><th class=\"t\">line:col</th><th class=\"t\">access</th><th class=\"t\">space</th><th class=\"t\">op</th><th>B</th><th>requests</th><th>sectors</th><th>ideal</th><th>sect/req</th><th>excess</th><th>wavefronts</th><th class=\"t\">exact</th></tr>\n");
    for (i, r) in sheet.instructions.iter().enumerate() {
        let colour = hex(line_colour(&[r], worst_global, worst_shared));
        let (sectors, ideal, spr, ex) = match r.space {
            Space::Shared => (
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                format!("{} conflicts", thousands(r.bank_conflicts.unwrap_or(0))),
            ),
            Space::Global => (
                thousands(r.sectors),
                thousands(r.ideal_sectors),
                if r.requests == 0 { "-".into() } else { format!("{:.2}", r.sectors_per_request()) },
                thousands(r.excess_sectors()),
            ),
            Space::Texture | Space::Surface => ("-".to_string(), "-".to_string(), "-".to_string(), "-".to_string()),
        };
        let wf = match (r.wavefronts, r.ideal_wavefronts) {
            (Some(w), Some(iw)) => format!("{} (ideal {})", thousands(w), thousands(iw)),
            (Some(w), None) => thousands(w),
            _ => "-".into(),
        };
        let _ = writeln!(
            o,
            "<tr data-row=\"{i}\"><td><span class=\"swatch\" style=\"background:{colour}\"></span></td><td class=\"t\">{}</td><td class=\"t\"><code>{}</code></td><td class=\"t\">{}</td><td class=\"t\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"t\">{}</td></tr>",
            escape(&r.place()),
            escape(&r.text),
            r.space,
            r.op_label(),
            r.width,
            thousands(r.requests),
            sectors,
            ideal,
            spr,
            escape(&ex),
            escape(&wf),
            if r.exact { "yes" } else { "no *" }
        );
    }
    o.push_str("</table>\n");
}

fn totals_table(o: &mut String, sheet: &Sheet) {
    let t = &sheet.totals;
    o.push_str("<table class=\"rows\"><tr><th class=\"t\"></th><th>requests</th><th>sectors</th><th>ideal</th><th>logical bytes</th></tr>\n");
    for group in t.global_groups().iter().filter(|g| g.listed()) {
        let (name, g, note) = (group.name, group.totals, if group.in_loads { " (in loads)" } else { "" });
        let _ = writeln!(
            o,
            "<tr><td class=\"t\">{name}{note}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            thousands(g.requests),
            thousands(g.sectors),
            thousands(g.ideal_sectors),
            thousands(g.logical_bytes)
        );
    }
    for (name, s) in t.shared_groups() {
        if s.requests > 0 || s.wavefronts > 0 {
            let _ = writeln!(
                o,
                "<tr><td class=\"t\">{name}</td><td>{}</td><td>{} wf</td><td>{} wf</td><td>{}</td></tr>",
                thousands(s.requests),
                thousands(s.wavefronts),
                thousands(s.ideal_wavefronts),
                thousands(s.logical_bytes)
            );
        }
    }
    for (name, x) in t.texture_groups() {
        if x.requests > 0 {
            let _ = writeln!(
                o,
                "<tr><td class=\"t\">{name}</td><td>{}</td><td>not predicted</td><td>-</td><td>{}</td></tr>",
                thousands(x.requests),
                thousands(x.logical_bytes)
            );
        }
    }
    o.push_str("</table>\n");
}

/// Chart geometry: label column, bar area, row height.
const CHART_LABEL_W: u32 = 118;
const CHART_BAR_W: u32 = 260;
const CHART_ROW_H: u32 = 30;

/// The boundaries as horizontal bars (sectors), each estimate's bounds as a whisker across it.
fn boundaries_chart(o: &mut String, sheet: &Sheet) {
    let b = &sheet.boundaries;
    let l1_bound = b.bounds.l1_hit_sectors;
    // (label, estimate (None when only bounds are known), bounds, colour)
    let bars: [(&str, Option<u64>, Option<Bound>, &str); 5] = [
        ("L1 hits", (!b.bounds_only).then_some(b.l1_hit_sectors), l1_bound, "#9ecae1"),
        ("L1→L2 reads", (!b.bounds_only).then_some(b.l2_read_sectors), Some(b.bounds.l2_read_sectors), "#6baed6"),
        ("L1→L2 writes", Some(b.l2_write_sectors), None, "#4292c6"),
        ("DRAM reads", (!b.bounds_only).then_some(b.dram_read_sectors), Some(b.bounds.dram_read_sectors), "#2171b5"),
        ("DRAM writes", (!b.bounds_only).then_some(b.dram_write_sectors), Some(b.bounds.dram_write_sectors), "#08519c"),
    ];
    let scale =
        bars.iter().flat_map(|(_, v, bd, _)| [v.unwrap_or(0), bd.map_or(0, |x| x.max)]).max().unwrap_or(0).max(1)
            as f64;
    let x = |v: u64| CHART_LABEL_W as f64 + v as f64 / scale * CHART_BAR_W as f64;
    let (w, h) = (CHART_LABEL_W + CHART_BAR_W + 190, CHART_ROW_H * bars.len() as u32 + 12);
    let _ = writeln!(
        o,
        "<div class=\"sub\">{}</div>",
        escape(&if b.bounds_only {
            format!("{} profile: bounds only, not estimates (the estimate's budget ran out)", b.gpu)
        } else {
            format!("{} cache model, {}: bars are estimates in sectors, whiskers the bounds that hold without a cache model", b.gpu, b.method)
        })
    );
    if let Some(line) = crate::sheet::text::excluded_line(b) {
        let _ = writeln!(o, "<div class=\"sub\">{}</div>", escape(&line));
    }
    let _ = writeln!(
        o,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"boundaries\" font-family=\"system-ui, DejaVu Sans, sans-serif\" font-size=\"12\">"
    );
    for (k, (label, value, bound, colour)) in bars.iter().enumerate() {
        let y = 6 + k as u32 * CHART_ROW_H;
        let mid = y + CHART_ROW_H / 2;
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"#3d444d\">{}</text>",
            CHART_LABEL_W - 8,
            mid + 4,
            escape(label)
        );
        let _ = writeln!(
            o,
            "<line x1=\"{CHART_LABEL_W}\" y1=\"{y}\" x2=\"{CHART_LABEL_W}\" y2=\"{}\" stroke=\"#d0d7de\"/>",
            y + CHART_ROW_H
        );
        if let Some(v) = value {
            let _ = writeln!(
                o,
                "<rect x=\"{CHART_LABEL_W}\" y=\"{}\" width=\"{:.1}\" height=\"{}\" rx=\"2\" fill=\"{colour}\"><title>{} sectors = {} bytes</title></rect>",
                y + 7,
                x(*v) - CHART_LABEL_W as f64,
                CHART_ROW_H - 14,
                thousands(*v),
                thousands(v * 32)
            );
        }
        if let Some(bd) = bound {
            let (x0, x1) = (x(bd.min), x(bd.max));
            let _ = writeln!(
                o,
                "<g stroke=\"#1f2328\" stroke-width=\"1.5\"><title>bounds {}..{} sectors</title><line x1=\"{x0:.1}\" y1=\"{mid}\" x2=\"{x1:.1}\" y2=\"{mid}\"/><line x1=\"{x0:.1}\" y1=\"{}\" x2=\"{x0:.1}\" y2=\"{}\"/><line x1=\"{x1:.1}\" y1=\"{}\" x2=\"{x1:.1}\" y2=\"{}\"/></g>",
                thousands(bd.min),
                thousands(bd.max),
                mid - 6,
                mid + 6,
                mid - 6,
                mid + 6
            );
        }
        let text = match (value, bound) {
            (Some(v), Some(bd)) if bd.min != bd.max => {
                format!("{} ({}..{})", thousands(*v), thousands(bd.min), thousands(bd.max))
            }
            (Some(v), _) => thousands(*v),
            (None, Some(bd)) => format!("{}..{}", thousands(bd.min), thousands(bd.max)),
            (None, None) => "-".into(),
        };
        let _ = writeln!(
            o,
            "<text x=\"{}\" y=\"{}\" fill=\"#1f2328\">{}</text>",
            CHART_LABEL_W + CHART_BAR_W + 10,
            mid + 4,
            escape(&text)
        );
    }
    o.push_str("</svg>\n");
}

/// Every assumption in force: the sheet's, each row's (with its place), the cache model's.
fn assumptions(o: &mut String, sheet: &Sheet) {
    o.push_str("<section class=\"block\"><h2>Assumptions</h2>\n<ul class=\"assume\">\n");
    for a in &sheet.assumptions {
        let _ = writeln!(o, "<li>{}</li>", escape(a));
    }
    for r in &sheet.instructions {
        for a in &r.assumptions {
            let _ =
                writeln!(o, "<li><b>{}</b> <code>{}</code>: {}</li>", escape(&r.place()), escape(&r.text), escape(a));
        }
    }
    o.push_str("</ul>\n");
    let b = &sheet.boundaries;
    if !b.assumptions.is_empty() {
        let _ = writeln!(
            o,
            "<details><summary>the cache model's {} assumption{} (boundaries only)</summary>\n<ul class=\"assume\">",
            b.assumptions.len(),
            if b.assumptions.len() == 1 { "" } else { "s" }
        );
        for a in &b.assumptions {
            let _ = writeln!(o, "<li>{}</li>", escape(a));
        }
        o.push_str("</ul></details>\n");
    }
    o.push_str("</section>\n");
}

/// What the HTML report's lane maps may take together, beyond the sheet (or `--time-limit`
/// where that is less): a row whose first warp comes late in a large launch is left without one
/// rather than holding up the report.
pub const LANE_MAPS_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// [`crate::analyze::analyze`] and, for each of the sheet's rows, the lane map of its first warp-level execution
/// ([`crate::explain::first_executions`]), from one lowering: the HTML report's data. Counts
/// from SASS have no lane maps (their rows stand for source lines, not for one access).
pub fn analyze_with_lanes(
    input: Input,
    opts: &AnalyzeOptions,
    loader: &dyn FileLoader,
) -> std::result::Result<(Analysis, Vec<crate::explain::LaneMap>), Failure> {
    if counts_sass(&input, opts) {
        let a = analyze(input, opts, loader)?;
        let why = "the counts come from SASS, whose rows stand for source lines (--via source gives lane maps)";
        let none = vec![Err(why.to_string()); a.sheet.instructions.len()];
        return Ok((a, none));
    }
    let mut files = SourceFiles::default();
    let mut inner = || -> Result<_> {
        let module = lower(&input, opts, loader, &mut files)?;
        let kernel = pick_kernel(&module, opts.kernel.as_deref(), &files)?;
        let sheet = sheet_of(kernel, opts, &files)?;
        let mut spec = opts.launch();
        spec.time_limit = Some(spec.time_limit.map_or(LANE_MAPS_TIME, |t| t.min(LANE_MAPS_TIME)));
        let lanes = match crate::launch::Setup::new(kernel, &spec) {
            Ok(setup) => crate::explain::first_executions(kernel, &setup, &sheet.instructions),
            Err(d) => vec![Err(d.message); sheet.instructions.len()],
        };
        Ok((sheet, module.warnings.clone(), lanes))
    };
    match inner() {
        Ok((sheet, warnings, lanes)) => Ok((Analysis { sheet, warnings, files }, lanes)),
        Err(diagnostic) => Err(Failure { diagnostic, files }),
    }
}
