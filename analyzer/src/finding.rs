//! Findings: one struct for what `explain` and `check` report about a place in the source, and
//! its rendering as a source snippet (the line, a caret under the access, the numbers), the way
//! errors are rendered. Pure functions: the caller decides where the text goes.

use crate::source::{SourceFiles, Span};
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

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
        let mut s = format!("{}: {}\n", severity_word(f.severity), f.message);
        for n in &f.notes {
            s.push_str(&format!("  = {n}\n"));
        }
        return s;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}
