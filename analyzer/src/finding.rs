//! Findings: one struct for what the tool says about a place in the source (an error, a
//! warning, a violated budget, an explanation), and the one set of renderers every command uses
//! for it:
//! - [`render`] (full): rustc's layout, `error[rule]: message`, the file, line and column, the
//!   source line with a caret under the construct, and the notes;
//! - [`concise`]: one line in clang's layout, `file:line:col: error: message [rule]`, which
//!   editors' problem matchers read;
//! - [`json`], [`github`] (workflow commands) and [`sarif`] (SARIF 2.1.0) over [`Placed`]
//!   findings.
//!
//! A [`Diagnostic`] becomes a finding with [`Finding::from_diagnostic`]. Pure functions: the
//! caller decides where the text goes.

use crate::diag::Diagnostic;
pub use crate::diag::Severity;
use crate::source::{SourceFiles, Span};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};
use serde::Serialize;
use std::fmt::Write as _;

/// Something to say about a place in the source.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable name for the kind of finding (`max-sectors-per-request`, ...).
    pub rule: String,
    pub message: String,
    #[serde(skip)]
    pub span: Option<Span>,
    /// Written under the caret.
    pub label: String,
    pub notes: Vec<String>,
}

impl Finding {
    /// An analysis diagnostic as a finding: its kind is the rule, its notes stay notes.
    pub fn from_diagnostic(d: &Diagnostic) -> Finding {
        Finding {
            severity: d.severity,
            rule: d.kind.code().to_string(),
            message: d.message.clone(),
            span: d.span,
            label: String::new(),
            notes: d.notes.clone(),
        }
    }
}

/// Byte offset of a 1-based line and column (columns count characters).
pub fn line_col_offset(text: &str, line: u32, column: u32) -> Option<usize> {
    let mut off = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line as usize {
            let col = l.char_indices().nth(column.saturating_sub(1) as usize).map(|(b, _)| b).unwrap_or(l.len());
            return Some(off + col);
        }
        off += l.len();
    }
    None
}

/// The finding with its source line and a caret under `span`, as text (ANSI colours when
/// `color`). A finding without a span, or whose file is not among `files`, is its message and
/// notes alone.
pub fn render(files: &SourceFiles, f: &Finding, color: bool) -> String {
    let mut simple = SimpleFiles::new();
    let ids: Vec<usize> =
        files.files.iter().map(|sf| simple.add(sf.path.display().to_string(), sf.text.clone())).collect();
    let severity = match f.severity {
        Severity::Error => CsSeverity::Error,
        Severity::Warning => CsSeverity::Warning,
        Severity::Note => CsSeverity::Note,
    };
    let mut cs = CsDiagnostic::new(severity).with_message(f.message.clone());
    if !f.rule.is_empty() {
        cs = cs.with_code(f.rule.clone());
    }
    if let Some(span) = f.span {
        if let Some(&fid) = ids.get(span.file.0 as usize) {
            let text = files.text(span.file);
            if let Some(start) = line_col_offset(text, span.line, span.column) {
                let line_end = text[start..].find('\n').map_or(text.len(), |e| start + e);
                let end = (start + span.len.max(1) as usize).min(line_end).max(start);
                cs = cs.with_labels(vec![Label::primary(fid, start..end).with_message(f.label.clone())]);
            }
        }
    }
    cs = cs.with_notes(f.notes.clone());
    let config = term::Config::default();
    let mut out = Vec::new();
    let ok = if color {
        let mut w = termcolor::Ansi::new(&mut out);
        term::emit(&mut w, &config, &simple, &cs).is_ok()
    } else {
        let mut w = termcolor::NoColor::new(&mut out);
        term::emit(&mut w, &config, &simple, &cs).is_ok()
    };
    if !ok {
        let mut s = format!("{}: {}\n", f.severity.word(), f.message);
        for n in &f.notes {
            s.push_str(&format!("  = {n}\n"));
        }
        return s;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line in clang's layout: `file:line:col: error: message [rule]` (`error: message` when the
/// finding has no place in `files`).
pub fn concise(files: &SourceFiles, f: &Finding) -> String {
    concise_placed(&[Placed::of(files, f, "")])
}

/// [`concise`] for findings already placed: one line each.
pub fn concise_placed(items: &[Placed]) -> String {
    let mut s = String::new();
    for p in items {
        let rule = if p.finding.rule.is_empty() { String::new() } else { format!(" [{}]", p.finding.rule) };
        let place = match (p.file.is_empty(), p.line, p.column) {
            (true, ..) => String::new(),
            (false, Some(l), Some(c)) => format!("{}:{l}:{c}: ", p.file),
            (false, Some(l), None) => format!("{}:{l}: ", p.file),
            (false, None, _) => format!("{}: ", p.file),
        };
        let _ = writeln!(s, "{place}{}: {}{rule}", p.finding.severity.word(), p.finding.message);
    }
    s
}

/// A finding with its place written out (the file as the user names it), for the renderers that
/// print places rather than snippets. `properties` are extra keys for JSON and SARIF.
#[derive(Clone, Debug, Serialize)]
pub struct Placed<'a> {
    #[serde(flatten)]
    pub finding: &'a Finding,
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    /// One past the last column of the construct.
    pub end_column: Option<u32>,
    #[serde(skip)]
    pub properties: serde_json::Map<String, serde_json::Value>,
}

impl<'a> Placed<'a> {
    /// The finding placed by its span in `files` (`file` when it has none).
    pub fn of(files: &SourceFiles, f: &'a Finding, file: &str) -> Placed<'a> {
        let span = f.span.filter(|s| (s.file.0 as usize) < files.files.len());
        Placed {
            finding: f,
            file: span.map_or_else(|| file.to_string(), |s| files.path(s.file).display().to_string()),
            line: span.map(|s| s.line),
            column: span.map(|s| s.column),
            end_column: span.map(|s| s.column + s.len.max(1)),
            properties: serde_json::Map::new(),
        }
    }
}

/// The findings as a JSON array.
pub fn json(items: &[Placed]) -> String {
    let mut s = serde_json::to_string_pretty(items).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}

/// GitHub Actions workflow commands: one `::error` (`::warning`, `::notice`) annotation per
/// finding, titled `sector-estimate RULE`.
pub fn github(items: &[Placed]) -> String {
    fn data(s: &str) -> String {
        s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
    }
    fn prop(s: &str) -> String {
        data(s).replace(':', "%3A").replace(',', "%2C")
    }
    let mut s = String::new();
    for f in items {
        let level = match f.finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "notice",
        };
        let mut props = vec![format!("file={}", prop(&f.file))];
        if let Some(l) = f.line {
            props.push(format!("line={l}"));
        }
        if let Some(c) = f.column {
            props.push(format!("col={c}"));
        }
        if let Some(e) = f.end_column {
            props.push(format!("endColumn={e}"));
        }
        props.push(format!("title={}", prop(&format!("sector-estimate {}", f.finding.rule))));
        let _ = writeln!(s, "::{level} {}::{}", props.join(","), data(&f.finding.message));
    }
    s
}

pub const SARIF_SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF 2.1.0 for code scanning; `rules` are (id, short description), and a finding's
/// `ruleIndex` is its rule's place there.
/// A relative path as a URI reference: `/` separators, reserved bytes percent-encoded.
pub fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.replace('\\', "/").bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// SARIF 2.1.0 for code scanning. Paths are taken as relative to the repository root
/// (`%SRCROOT%`, GitHub code scanning's convention); `root`, when known, is given as that base's
/// absolute URI in `originalUriBaseIds`.
pub fn sarif(items: &[Placed], rules: &[(&str, &str)], root: Option<&std::path::Path>) -> String {
    use serde_json::json;
    let results: Vec<serde_json::Value> = items
        .iter()
        .map(|f| {
            let mut region = serde_json::Map::new();
            if let Some(l) = f.line {
                region.insert("startLine".into(), json!(l));
            }
            if let Some(c) = f.column {
                region.insert("startColumn".into(), json!(c));
            }
            if let Some(e) = f.end_column {
                region.insert("endColumn".into(), json!(e));
            }
            let mut physical = serde_json::Map::new();
            physical.insert("artifactLocation".into(), json!({ "uri": uri_path(&f.file), "uriBaseId": "SRCROOT" }));
            if !region.is_empty() {
                physical.insert("region".into(), serde_json::Value::Object(region));
            }
            json!({
                "ruleId": f.finding.rule,
                "ruleIndex": rules.iter().position(|(id, _)| *id == f.finding.rule).unwrap_or(0),
                "level": f.finding.severity.word(),
                "message": { "text": f.finding.message },
                "locations": [{ "physicalLocation": physical }],
                "properties": f.properties,
            })
        })
        .collect();
    let base = match root {
        Some(root) => {
            let mut uri = format!("file://{}", uri_path(&root.display().to_string()));
            if !uri.ends_with('/') {
                uri.push('/');
            }
            json!({ "SRCROOT": { "uri": uri } })
        }
        None => json!({ "SRCROOT": { "description": { "text": "The repository root" } } }),
    };
    let doc = json!({
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "originalUriBaseIds": base,
            "tool": { "driver": {
                "name": "sector-estimate",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules.iter().map(|(id, text)| json!({ "id": id, "shortDescription": { "text": text } })).collect::<Vec<_>>(),
            }},
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}
