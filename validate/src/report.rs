//! Renders a [`Report`] as markdown (`report.md`) and JSON (`report.json`).

use crate::compare::{Class, CounterResult, Report, Verdict};
use std::fmt::Write;

/// `262144` -> `262,144`.
pub fn thousands(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn num(v: Option<u64>) -> String {
    v.map(thousands).unwrap_or_else(|| "-".into())
}

fn measured(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(x) if x.fract() == 0.0 && x >= 0.0 => thousands(x as u64),
        Some(x) => format!("{x:.2}"),
    }
}

fn difference(r: &CounterResult) -> String {
    match (r.difference, r.relative) {
        (Some(0), _) | (None, _) => String::new(),
        (Some(d), Some(rel)) if rel.abs() < 0.001 => format!("{d:+} ({:+.3}%)", rel * 100.0),
        (Some(d), Some(rel)) => format!("{d:+} ({:+.1}%)", rel * 100.0),
        (Some(d), None) => format!("{d:+}"),
    }
}

fn dims(d: Option<[u32; 3]>) -> String {
    match d {
        Some([x, y, z]) => format!("({x}, {y}, {z})"),
        None => "-".into(),
    }
}

fn verdict_cell(v: Verdict) -> String {
    match v {
        Verdict::Off => "**OFF**".into(),
        v => v.word().into(),
    }
}

/// Relative difference (measured - predicted) / predicted of counter `key`, where both exist.
fn relative(c: &crate::compare::CaseResult, key: &str) -> Option<(f64, u64, f64)> {
    let x = c.counters.iter().find(|x| x.key == key)?;
    let (p, m) = (x.predicted?, x.measured?);
    let rel = if p == 0 {
        if m == 0.0 {
            0.0
        } else {
            f64::INFINITY
        }
    } else {
        (m - p as f64) / p as f64
    };
    Some((rel, p, m))
}

/// The cache model's target: L2 read and DRAM read sectors within 10% of the counters, with
/// every case beyond it named beside its note.
fn criterion(s: &mut String, r: &Report) {
    let _ = writeln!(s, "Cache model against its target (within 10% of the counter, no absolute slack):\n");
    for (key, label) in [("l2_read_sectors", "L2 read sectors"), ("dram_read_sectors", "DRAM read sectors")] {
        let rows: Vec<_> = r.cases.iter().filter_map(|c| relative(c, key).map(|v| (c, v))).collect();
        let beyond: Vec<_> = rows.iter().filter(|(_, (rel, _, _))| rel.abs() > 0.10).collect();
        let _ = writeln!(
            s,
            "- {label}: {}/{} cases within 10% ({:.0}%)",
            rows.len() - beyond.len(),
            rows.len(),
            if rows.is_empty() { 0.0 } else { 100.0 * (rows.len() - beyond.len()) as f64 / rows.len() as f64 }
        );
        for (c, (rel, p, m)) in beyond {
            let _ = writeln!(
                s,
                "  - `{}`: predicted {}, measured {} ({:+.1}%). {}",
                c.name,
                thousands(*p),
                thousands(*m as u64),
                rel * 100.0,
                c.boundary_note.as_deref().unwrap_or("(no note in the manifest)")
            );
        }
    }
    let _ = writeln!(s);
}

/// The markdown report.
pub fn markdown(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# sector-validate report\n");
    let _ = writeln!(
        s,
        "Every number predicted by `sector-estimate` for the examples, beside the counter Nsight \
         Compute measured for the same source, launch and data. Produced by {}.\n",
        r.tool
    );
    let e = &r.environment;
    let _ = writeln!(s, "## Environment\n");
    let _ = writeln!(s, "| | |\n| --- | --- |");
    let _ = writeln!(s, "| GPU | {} |", e.gpu);
    let _ = writeln!(s, "| compute capability | {} |", e.compute_capability);
    let _ = writeln!(s, "| driver | {} (supports CUDA {}) |", e.driver, e.driver_cuda_version);
    let _ = writeln!(s, "| CUDA (profiler session) | {} |", e.cuda_version);
    let _ = writeln!(s, "| NVRTC | {} |", e.nvrtc_version);
    let _ = writeln!(s, "| Nsight Compute | {} |", e.ncu_version);
    if !e.profiler_command.is_empty() {
        let _ = writeln!(s, "\nProfiler command line:\n\n```\n{}\n```", e.profiler_command.trim());
    }
    let t = &r.tolerance;
    let _ = writeln!(
        s,
        "\nVerdicts: **exact** = equal. Engine counters (requests, sectors, instructions, \
         wavefronts, bank conflicts) must be exact unless the sheet marks the accesses behind them \
         data-dependent; those are **within tolerance** at most {:.0}% away. Cache-model counters \
         (L1 hits and misses, L2 and DRAM sectors) are **within tolerance** at most {:.0}% or {} \
         sectors away; shared-memory wavefronts and bank conflicts at most {:.0}% away (the \
         hardware counts a few wavefronts no instruction explains). **within bounds**: outside the tolerance but inside the bounds the sheet \
         states. Anything else is **OFF**.\n",
        t.data_dependent * 100.0,
        t.model * 100.0,
        t.model_abs,
        t.shared * 100.0
    );
    let _ = writeln!(s, "## Summary\n");
    let _ = writeln!(s, "{} cases.\n", r.cases.len());
    for model in [false, true] {
        let title = if model { "Cache-model counters" } else { "Engine counters" };
        let _ = writeln!(s, "{title}:\n");
        for line in r.summary.iter().filter(|x| (x.class == Class::Model) == model) {
            let _ = writeln!(s, "- {}", line.line());
        }
        let _ = writeln!(s);
    }
    criterion(&mut s, r);
    if !r.not_compared.is_empty() {
        let _ = writeln!(s, "Not compared:\n");
        for (name, why) in &r.not_compared {
            let _ = writeln!(s, "- `{name}`: {}", why.replace('\n', " "));
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Cases\n");
    for c in &r.cases {
        let _ = writeln!(s, "### {}\n", c.name);
        let _ = writeln!(
            s,
            "`{}`, kernel `{}`, grid {}, block {}{}. Status: {}.\n",
            c.source,
            c.kernel,
            dims(c.grid),
            dims(c.block),
            c.ncu_id.map(|i| format!(", Nsight Compute result {i}")).unwrap_or_default(),
            c.status.replace('\n', " ")
        );
        if c.host_code_stripped {
            let _ = writeln!(s, "NVRTC needed the file's host code blanked out.\n");
        }
        if c.compiled_by_nvcc {
            let _ = writeln!(s, "NVRTC could not compile the file; the toolkit's `nvcc` did.\n");
        }
        if c.counters.is_empty() {
            continue;
        }
        let has_hand = c.counters.iter().any(|x| x.hand.is_some());
        let _ = writeln!(
            s,
            "| counter | predicted | measured | verdict | difference |{}",
            if has_hand { " by hand |" } else { "" }
        );
        let _ = writeln!(s, "| --- | ---: | ---: | --- | ---: |{}", if has_hand { " ---: |" } else { "" });
        for x in &c.counters {
            let hidden = x.class != Class::Info
                && x.predicted == Some(0)
                && x.measured.is_some_and(|m| m == 0.0)
                && x.hand.is_none();
            if hidden {
                continue;
            }
            let mut label = format!("{} `{}`", x.label, x.metric);
            if x.data_dependent && x.class != Class::Model {
                label += " (data-dependent)";
            }
            let mut pred = num(x.predicted);
            if let Some((lo, hi)) = x.bounds.filter(|(lo, hi)| lo != hi) {
                pred += &format!(" [{}..{}]", thousands(lo), thousands(hi));
            }
            let _ = writeln!(
                s,
                "| {label} | {pred} | {} | {} | {} |{}",
                measured(x.measured),
                verdict_cell(x.verdict),
                difference(x),
                if has_hand { format!(" {} |", num(x.hand)) } else { String::new() }
            );
        }
        let _ = writeln!(s, "\n(Counters predicted and measured as 0 are not shown.)\n");
        if let Some(n) = &c.boundary_note {
            let _ = writeln!(s, "Cache model note: {}\n", n.replace('\n', " "));
        }
        if !c.lines.is_empty() {
            let _ = writeln!(s, "Per source line:\n");
            let _ = writeln!(
                s,
                "| line | access | requests predicted | executions measured | sectors predicted | sectors measured | verdict | SASS |"
            );
            let _ = writeln!(s, "| ---: | --- | ---: | ---: | ---: | ---: | --- | --- |");
            for l in &c.lines {
                let line = match &l.file {
                    Some(f) => format!("{f}:{}", l.line),
                    None => l.line.to_string(),
                };
                let access = if l.accesses.is_empty() {
                    format!("{} {}", l.space, l.op)
                } else {
                    format!("{} {} `{}`", l.space, l.op, l.accesses.join("`, `").replace('|', "\\|"))
                };
                let sass = l.sass.iter().map(|x| format!("`{}`", x.replace('|', "\\|"))).collect::<Vec<_>>().join(" ");
                let _ = writeln!(
                    s,
                    "| {line} | {access}{} | {} | {} | {} | {} | {} | {sass} |",
                    if l.data_dependent { " (data-dependent)" } else { "" },
                    num(l.predicted_requests),
                    num(l.measured_executions),
                    num(l.predicted_sectors),
                    num(l.measured_sectors),
                    verdict_cell(l.verdict),
                );
            }
            let _ = writeln!(s);
        }
        if !c.assumptions.is_empty() {
            let _ = writeln!(s, "Assumptions on the sheet:\n");
            for a in &c.assumptions {
                let _ = writeln!(s, "- {}", a.replace('\n', " "));
            }
            let _ = writeln!(s);
        }
        if !c.boundary_assumptions.is_empty() {
            let _ = writeln!(s, "<details><summary>Cache-model assumptions on the sheet</summary>\n");
            for a in &c.boundary_assumptions {
                let _ = writeln!(s, "- {}", a.replace('\n', " "));
            }
            let _ = writeln!(s, "\n</details>\n");
        }
    }
    let _ = writeln!(s, "## Notes\n\n{}", r.per_line_note);
    s
}

/// The JSON report.
pub fn json(r: &Report) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(262144), "262,144");
        assert_eq!(thousands(1048576), "1,048,576");
    }
}
