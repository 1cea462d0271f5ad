//! Diagnostics: every refusal names a place in the user's source and what is missing there.

use crate::source::Span;
use std::fmt;

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

#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub kind: ErrorKind,
    pub message: String,
    pub span: Option<Span>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Diagnostic { kind, message: message.into(), span: None, notes: Vec::new() }
    }
    pub fn at(kind: ErrorKind, span: Span, message: impl Into<String>) -> Self {
        Diagnostic { kind, message: message.into(), span: Some(span), notes: Vec::new() }
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
