//! Diagnostics: every refusal names a place in the user's source and what is missing there.
//! A diagnostic has a severity: errors stop the analysis; warnings (`#warning`, ...) and notes
//! travel beside a finished sheet ([`crate::Analysis::warnings`]). All of them are rendered by
//! the renderers of [`crate::finding`] (full, concise, JSON, GitHub, SARIF).

use crate::source::Span;
use serde::Serialize;
use std::fmt;

/// How serious a diagnostic (or a finding) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl Severity {
    /// `error`, `warning`, `note`: the word clang and rustc print.
    pub fn word(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// What kind of problem stopped the analysis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The source could not be read or parsed.
    Syntax,
    /// The preprocessor failed (unterminated `#if`, macro recursion, bad expression).
    Preprocess,
    /// A construct inside a kernel that the analyzer does not model.
    Unsupported,
    /// A parameter value the analysis needs was not given.
    MissingArgument,
    /// The launch configuration is invalid.
    Launch,
    /// Arithmetic the C rules leave undefined at this point (division by zero, shift too far).
    Arithmetic,
    /// The analysis would exceed its work budget.
    Limit,
    /// Bad usage: unknown kernel, unknown parameter, malformed value.
    Usage,
}

impl ErrorKind {
    /// A stable name for the kind, used as the rule of a rendered diagnostic.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax",
            ErrorKind::Preprocess => "preprocess",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::MissingArgument => "missing-argument",
            ErrorKind::Launch => "launch",
            ErrorKind::Arithmetic => "arithmetic",
            ErrorKind::Limit => "limit",
            ErrorKind::Usage => "usage",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// [`Severity::Error`] unless made with [`Diagnostic::warning`] or [`Diagnostic::severity`].
    pub severity: Severity,
    pub kind: ErrorKind,
    pub message: String,
    pub span: Option<Span>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Error, kind, message: message.into(), span: None, notes: Vec::new() }
    }
    pub fn at(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Error, kind, message: message.into(), span: Some(span), notes: Vec::new() }
    }
    /// A warning at `span`: reported beside the result, never instead of it.
    pub fn warning(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { severity: Severity::Warning, ..Diagnostic::at(kind, span, message) }
    }
    pub fn severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
    pub fn with_span(mut self, span: Span) -> Self {
        if self.span.is_none() {
            self.span = Some(span);
        }
        self
    }
    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

pub type Result<T> = std::result::Result<T, Diagnostic>;
