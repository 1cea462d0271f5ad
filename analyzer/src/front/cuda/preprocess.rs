//! A C preprocessor sufficient for real CUDA files.
//!
//! The output keeps the input's line structure so that tree-sitter positions map back to the
//! user's source cheaply:
//! - text without macro invocations is copied verbatim (same row, same column);
//! - directive lines and lines in skipped `#if` branches become empty lines;
//! - an included file's lines are spliced in where its `#include` line was;
//! - an expansion is written on the row of the macro name, and the source lines consumed by a
//!   multi-line invocation become empty rows, so the text after the closing `)` keeps its own
//!   row and is padded back to its own column.
//!
//! Every output row carries a list of segments ([`Seg`]) saying where its bytes came from;
//! [`Preprocessed::locate`] looks them up.
//!
//! Expansion follows Prosser's algorithm (the one the C standard describes): every token carries
//! the set of macros it was produced by (its hide set) and is never expanded by those again,
//! which is what makes self-referential macros terminate. Source files are lexed lazily into
//! byte ranges so that the common case, a line with no macros, costs one pass and no allocation.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::source::{FileId, FileLoader, SourceFiles, Span};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

/// A CUDA toolkit header (`"cuda_fp16.h"`, `"cooperative_groups.h"`, `"cuda/barrier"`), or
/// one of cuda-samples' host helpers: included with quotes, found or not, it never stops a kernel.
fn toolkit_header(name: &str) -> bool {
    let base = name.rsplit('/').next().unwrap_or(name);
    name.starts_with("cuda/")
        || name.starts_with("cub/")
        || name.starts_with("thrust/")
        || name.starts_with("cooperative_groups")
        || base.starts_with("cuda")
        || base.starts_with("curand")
        || base.starts_with("cublas")
        || base.starts_with("cufft")
        || base.starts_with("cusparse")
        || base.starts_with("sm_")
        || base.starts_with("device_")
        || base.starts_with("helper_")
        || (!name.contains('/') && C_HEADERS.contains(&name))
        || matches!(base, "mma.h" | "vector_types.h" | "vector_functions.h" | "math_constants.h" | "crt/host_defines.h")
}

/// The C and C++ standard headers, which CUDA files sometimes include with quotes.
const C_HEADERS: &[&str] = &[
    "math.h",
    "stdio.h",
    "stdlib.h",
    "string.h",
    "stdint.h",
    "assert.h",
    "float.h",
    "limits.h",
    "time.h",
    "stddef.h",
    "stdbool.h",
    "cmath",
    "cstdio",
    "cstdlib",
    "cstring",
    "cstdint",
    "cassert",
    "cfloat",
    "climits",
    "algorithm",
    "vector",
    "iostream",
    "sys/time.h",
    "unistd.h",
];

/// Nested `#include`s before we assume an include cycle.
const MAX_INCLUDE_DEPTH: usize = 200;
/// Bytes one top-level macro invocation may expand to.
const MAX_EXPANSION_BYTES: usize = 10 << 20;
/// Macros one token may be produced by in a chain of expansions (`A` -> `B` -> ... ).
const MAX_HIDE: usize = 1000;
/// Recursion of argument pre-expansion (`f(f(f(...)))`); bounded to protect the native stack.
const MAX_ARG_NESTING: usize = 200;
/// Tokens one top-level invocation may process: stops exponential expansions that output
/// nothing (`#define A1 A0 A0`, `#define A2 A1 A1`, ...), and bounds the memory held by nested
/// argument lists (each level keeps copies of its arguments).
const MAX_WORK: u64 = 4_000_000;
/// Tokens all expansions of one translation unit may process.
const MAX_TOTAL_WORK: u64 = 100_000_000;
/// Size of the whole translation unit (e.g. a big header included a thousand times unguarded).
const MAX_OUTPUT: usize = 256 << 20;
/// Nesting of parentheses and unary operators in an `#if` expression (recursive descent).
const MAX_EXPR_DEPTH: u32 = 256;

#[derive(Clone, Debug, Default)]
pub struct PreprocessOptions {
    /// `-D NAME[=VALUE]`: (name, value); a bare `-D NAME` has the value `1`.
    pub defines: Vec<(String, String)>,
    /// `-I DIR`, searched in order after the including file's folder.
    pub include_dirs: Vec<PathBuf>,
}

/// The preprocessed translation unit and the map from its positions back to the user's files.
#[derive(Clone, Debug)]
pub struct Preprocessed {
    pub text: String,
    /// `#warning` directives met in active code, in order.
    pub warnings: Vec<Diagnostic>,
    /// For each output row, the index in `segs` of its first segment.
    rows: Vec<usize>,
    segs: Vec<Seg>,
    /// Line tables of the files read, by `FileId`, to turn byte columns into character columns.
    lines: Vec<Option<Arc<LineTable>>>,
}

/// Where a run of output bytes on one row came from.
#[derive(Clone, Copy, Debug)]
struct Seg {
    /// Byte column in the output row where the run starts.
    out_col: u32,
    file: FileId,
    line: u32,
    /// Verbatim runs: 0-based byte column in the source line of the run's first byte.
    /// Expansions: 1-based character column of the macro name.
    col: u32,
    /// 0 for verbatim text; otherwise the length of the macro name it expands.
    len: u32,
}

#[derive(Debug)]
struct LineTable {
    text: Arc<str>,
    /// Byte offset of the start of each line.
    starts: Vec<usize>,
}

impl LineTable {
    fn new(text: Arc<str>) -> Self {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineTable { text, starts }
    }

    /// 0-based character column of byte column `byte` of 1-based `line`.
    fn char_col(&self, line: u32, byte: usize) -> usize {
        let Some(&start) = (line as usize).checked_sub(1).and_then(|l| self.starts.get(l)) else {
            return byte;
        };
        let end = self.starts.get(line as usize).copied().unwrap_or(self.text.len());
        let want = start.saturating_add(byte);
        let stop = want.min(end);
        // Count UTF-8 lead bytes: never slices, so a column inside a character cannot panic.
        let chars = self.text.as_bytes()[start..stop].iter().filter(|&&b| b & 0xC0 != 0x80).count();
        chars + (want - stop)
    }
}

impl Preprocessed {
    /// Maps a 0-based (row, byte column) of `text` to a span in the original file.
    ///
    /// Verbatim text maps to its own line and column; text produced by a macro expansion maps to
    /// the macro name of the outermost invocation (with the name's length). The column is in
    /// characters, as [`Span`] documents; `len` stays in bytes.
    pub fn locate(&self, row: usize, col: usize, len: usize) -> Span {
        let row = row.min(self.rows.len().saturating_sub(1));
        let first = self.rows.get(row).copied().unwrap_or(0);
        let end = self.rows.get(row + 1).copied().unwrap_or(self.segs.len());
        let segs = self.segs.get(first..end).unwrap_or(&[]);
        let Some(seg) = segs.get(segs.partition_point(|s| s.out_col as usize <= col).saturating_sub(1)) else {
            return Span { line: 1, column: 1, len: 1, ..Span::default() };
        };
        if seg.len > 0 {
            return Span { file: seg.file, line: seg.line, column: seg.col, len: seg.len };
        }
        let byte = (seg.col as usize).saturating_add(col.saturating_sub(seg.out_col as usize));
        let column = match self.lines.get(seg.file.0 as usize) {
            Some(Some(table)) => table.char_col(seg.line, byte),
            _ => byte,
        };
        Span { file: seg.file, line: seg.line, column: sat32(column + 1), len: sat32(len.max(1)) }
    }
}

fn sat32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Preprocesses `root` (already in `files`); included files are added to `files`.
pub fn preprocess(
    files: &mut SourceFiles,
    root: FileId,
    opts: &PreprocessOptions,
    loader: &dyn FileLoader,
) -> Result<Preprocessed> {
    let Some(file) = files.files.get(root.0 as usize) else {
        return Err(Diagnostic::new(ErrorKind::Preprocess, "unknown root file"));
    };
    let text: Arc<str> = file.text.as_str().into();
    let path = file.path.clone();
    let mut pp = Pp::new(files, loader, opts, root, &path);
    // Predefines first so that `-D` may override them (e.g. `-D __CUDA_ARCH__=800`).
    let predefined = [
        ("__CUDACC__", "1"),
        ("__CUDA_ARCH__", "900"),
        ("__NVCC__", "1"),
        ("__cplusplus", "201703L"),
        ("__CUDACC_VER_MAJOR__", "12"),
        ("__CUDACC_VER_MINOR__", "4"),
        ("__CUDACC_VER_BUILD__", "0"),
        ("__CUDA_API_VER_MAJOR__", "12"),
        ("__CUDA_API_VER_MINOR__", "4"),
        ("__x86_64__", "1"),
        ("__linux__", "1"),
        ("__align__(n)", "alignas(n)"),
    ];
    let start = Span { file: root, line: 1, column: 1, len: 1 };
    for (name, value) in
        predefined.iter().map(|&(n, v)| (n, v)).chain(opts.defines.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    {
        let toks: Vec<Tok> = lex_toks(&format!("{name} {value}")).into_iter().map(|(t, _)| t).collect();
        let def =
            parse_define(&toks).map_err(|m| Diagnostic::at(ErrorKind::Preprocess, start, format!("-D {name}: {m}")))?;
        pp.define(def);
    }
    pp.set_table(root, Arc::clone(&text));
    pp.loaded.insert(normalize(&path), (root, Arc::clone(&text)));
    pp.run(Src::new(root, path, text))?;
    let Pp { out, tables, warnings, .. } = pp;
    Ok(Preprocessed { text: out.text, warnings, rows: out.rows, segs: out.segs, lines: tables })
}

// ---------------------------------------------------------------------------------------------
// Lexing

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Ident,
    /// A preprocessing number (`0x1fu`, `1.5e+3`, `1'000`).
    Number,
    /// A string or character literal, with its prefix (`L"x"`, `u8'c'`, `R"(raw)"`).
    Str,
    Punct,
    /// Blanks, comments and backslash-newlines: they may span lines but never end one.
    Space,
    Newline,
}

const BOM: &str = "\u{FEFF}";

fn is_id_start(c: u8) -> bool {
    // Bytes >= 0x80 are parts of UTF-8 characters: treating them as identifier bytes keeps every
    // token boundary on a character boundary.
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

fn is_id(c: u8) -> bool {
    is_id_start(c) || c.is_ascii_digit()
}

/// Lexes one token at `b[i]` (`i < b.len()`); returns its kind and end. Always advances and
/// only stops on character boundaries.
fn lex(b: &[u8], i: usize) -> (Kind, usize) {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    let c = b[i];
    match c {
        b'\n' => (Kind::Newline, i + 1),
        b' ' | b'\t' | b'\r' | 0x0b | 0x0c => (Kind::Space, space_end(b, i)),
        b'/' if matches!(at(i + 1), b'*' | b'/') => (Kind::Space, space_end(b, i)),
        b'\\' if at(i + 1) == b'\n' || (at(i + 1) == b'\r' && at(i + 2) == b'\n') => (Kind::Space, space_end(b, i)),
        // A byte order mark is blank (and is written out as three spaces, see `emit_src`).
        0xEF if b[i..].starts_with(BOM.as_bytes()) => (Kind::Space, i + BOM.len()),
        b'"' | b'\'' => (Kind::Str, quoted(b, i)),
        b'0'..=b'9' => (Kind::Number, number_end(b, i)),
        b'.' if at(i + 1).is_ascii_digit() => (Kind::Number, number_end(b, i)),
        _ if is_id_start(c) => {
            let mut j = i + 1;
            while j < b.len() && is_id(b[j]) {
                j += 1;
            }
            match (&b[i..j], at(j)) {
                (b"R" | b"LR" | b"uR" | b"UR" | b"u8R", b'"') => (Kind::Str, raw_string(b, j)),
                (b"L" | b"u" | b"U" | b"u8", b'"' | b'\'') => (Kind::Str, quoted(b, j)),
                _ => (Kind::Ident, j),
            }
        }
        _ => (Kind::Punct, i + punct_len(&b[i..])),
    }
}

fn space_end(b: &[u8], mut i: usize) -> usize {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'\\' if at(i + 1) == b'\n' => i += 2,
            b'\\' if at(i + 1) == b'\r' && at(i + 2) == b'\n' => i += 3,
            b'/' if at(i + 1) == b'*' => i = find(b, i + 2, b"*/").map_or(b.len(), |k| k + 2),
            b'/' if at(i + 1) == b'/' => {
                // A line comment ends at a newline not escaped by a backslash.
                i += 2;
                while i < b.len() && b[i] != b'\n' {
                    i += match (b[i], at(i + 1), at(i + 2)) {
                        (b'\\', b'\n', _) => 2,
                        (b'\\', b'\r', b'\n') => 3,
                        _ => 1,
                    };
                }
            }
            _ => break,
        }
    }
    i.min(b.len())
}

fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(pat.len()).position(|w| w == pat).map(|p| p + from)
}

/// End of a quoted literal starting at `b[i]`; an unterminated one ends at the end of its line.
fn quoted(b: &[u8], i: usize) -> usize {
    let q = b[i];
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' if b.get(j + 1) == Some(&b'\r') && b.get(j + 2) == Some(&b'\n') => j += 3,
            b'\\' => j += 2,
            b'\n' => return j,
            c if c == q => return j + 1,
            _ => j += 1,
        }
    }
    b.len()
}

/// End of a raw string whose opening quote is `b[q]`; a malformed one lexes as a plain string.
fn raw_string(b: &[u8], q: usize) -> usize {
    let mut k = q + 1;
    while k < b.len() && k - q <= 17 && !matches!(b[k], b'(' | b')' | b'\\' | b'"' | b' ' | b'\t' | b'\n' | b'\r') {
        k += 1;
    }
    if b.get(k) != Some(&b'(') {
        return quoted(b, q);
    }
    let mut close = vec![b')'];
    close.extend_from_slice(&b[q + 1..k]);
    close.push(b'"');
    find(b, k + 1, &close).map_or_else(|| quoted(b, q), |e| e + close.len())
}

fn number_end(b: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < b.len() {
        let c = b[i];
        if matches!(c, b'+' | b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P') {
            i += 1;
        } else if c == b'\'' && b.get(i + 1).is_some_and(u8::is_ascii_alphanumeric) {
            i += 2; // C++14 digit separator
        } else if is_id(c) || c == b'.' {
            i += 1;
        } else {
            break;
        }
    }
    i
}

fn punct_len(b: &[u8]) -> usize {
    let at = |k: usize| b.get(k).copied().unwrap_or(0);
    match (b[0], at(1), at(2)) {
        (b'<', b'<', b'=') | (b'>', b'>', b'=') | (b'.', b'.', b'.') | (b'-', b'>', b'*') | (b'<', b'=', b'>') => 3,
        (b'#', b'#', _) | (b'-', b'>', _) | (b'+', b'+', _) | (b'-', b'-', _) | (b'<', b'<', _) | (b'>', b'>', _) => 2,
        (b'&', b'&', _) | (b'|', b'|', _) | (b':', b':', _) | (b'.', b'*', _) => 2,
        // Digraphs; `<::` not followed by `:` or `>` is `<` then `::` (C++11).
        (b'<', b':', b':') if !matches!(at(3), b':' | b'>') => 1,
        (b'<', b'%', _) | (b'%', b'>', _) | (b'<', b':', _) | (b':', b'>', _) => 2,
        (b'<' | b'>' | b'=' | b'!' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^', b'=', _) => 2,
        _ => 1,
    }
}

/// The set of macros a token was produced by (sorted macro ids); `None` is empty.
type Hide = Option<Rc<[u32]>>;

fn hide_has(h: &Hide, id: u32) -> bool {
    h.as_ref().is_some_and(|h| h.binary_search(&id).is_ok())
}

fn hide_len(h: &Hide) -> usize {
    h.as_ref().map_or(0, |h| h.len())
}

fn hide_add(h: &Hide, id: u32) -> Hide {
    let mut v = h.as_deref().map_or_else(Vec::new, <[u32]>::to_vec);
    if let Err(p) = v.binary_search(&id) {
        v.insert(p, id);
    }
    Some(v.into())
}

fn hide_inter(a: &Hide, b: &Hide) -> Hide {
    let (Some(a), Some(b)) = (a, b) else {
        return None;
    };
    let v: Vec<u32> = a.iter().copied().filter(|x| b.binary_search(x).is_ok()).collect();
    (!v.is_empty()).then(|| v.into())
}

fn hide_union(a: &Hide, b: &Hide) -> Hide {
    match (a, b) {
        (None, x) | (x, None) => x.clone(),
        (Some(x), Some(y)) if Rc::ptr_eq(x, y) => a.clone(),
        (Some(x), Some(y)) => {
            let mut v: Vec<u32> = x.iter().chain(y.iter()).copied().collect();
            v.sort_unstable();
            v.dedup();
            Some(v.into())
        }
    }
}

/// A token in macro processing (source tokens are [`RawTok`]s until a macro needs them).
#[derive(Clone, Debug)]
struct Tok {
    kind: Kind,
    text: Rc<str>,
    /// Whitespace preceded it (kept for `#` stringification and output spacing).
    space: bool,
    hide: Hide,
    /// Produced by an expansion (as opposed to read from the source unchanged).
    gen: bool,
}

impl Tok {
    fn new(kind: Kind, text: &str) -> Tok {
        Tok { kind, text: text.into(), space: false, hide: None, gen: true }
    }
    fn is(&self, p: &str) -> bool {
        self.kind == Kind::Punct && &*self.text == p
    }
}

/// Lexes a string into tokens (dropping blanks), with their byte offsets.
fn lex_toks(s: &str) -> Vec<(Tok, usize)> {
    let b = s.as_bytes();
    let (mut i, mut space, mut v) = (0, false, Vec::new());
    while i < b.len() {
        let (kind, end) = lex(b, i);
        if matches!(kind, Kind::Space | Kind::Newline) {
            space = true;
        } else {
            v.push((Tok { kind, text: s[i..end].into(), space, hide: None, gen: false }, i));
            space = false;
        }
        i = end;
    }
    v
}

/// Joins tokens as text, one blank where the source had whitespace.
fn join_tokens(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (k, t) in toks.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

/// Would writing a token starting with `b` right after `a` change how the text lexes?
fn hazard(a: u8, b: u8) -> bool {
    const OPS: &[u8] = b"+-*/%<>=!&|^#:.";
    (is_id(a) && (is_id(b) || b == b'"' || b == b'\''))
        || (a.is_ascii_digit() && b == b'.')
        || (a == b'.' && b.is_ascii_digit())
        || (OPS.contains(&a) && OPS.contains(&b))
}

// ---------------------------------------------------------------------------------------------
// Output with position map

struct Out {
    text: String,
    rows: Vec<usize>,
    segs: Vec<Seg>,
    /// Bytes written on the current row.
    col: usize,
    /// Source line the current row stands for.
    file: FileId,
    line: u32,
    last_gen: bool,
}

impl Out {
    fn new(file: FileId) -> Out {
        let segs = vec![Seg { out_col: 0, file, line: 1, col: 0, len: 0 }];
        Out { text: String::new(), rows: vec![0], segs, col: 0, file, line: 1, last_gen: false }
    }

    fn start_row(&mut self, file: FileId, line: u32) {
        self.text.push('\n');
        self.rows.push(self.segs.len());
        self.segs.push(Seg { out_col: 0, file, line, col: 0, len: 0 });
        (self.col, self.file, self.line) = (0, file, line);
    }

    /// Makes the current row stand for `line` of `file` (a new row if this one has text).
    fn retarget(&mut self, file: FileId, line: u32) {
        if self.col != 0 {
            return self.start_row(file, line);
        }
        let first = self.rows.last().copied().unwrap_or(0);
        self.segs.truncate(first);
        self.segs.push(Seg { out_col: 0, file, line, col: 0, len: 0 });
        (self.file, self.line) = (file, line);
    }

    /// Emits empty rows until the current row stands for `line`.
    fn sync(&mut self, file: FileId, line: u32) {
        while self.line < line {
            self.start_row(file, self.line + 1);
        }
    }

    /// Writes source text that starts at (`line`, byte `col`).
    fn src(&mut self, s: &str, file: FileId, line: u32, col: usize) {
        self.last_gen = false;
        for (k, piece) in s.split('\n').enumerate() {
            let (line, col) = if k == 0 { (line, col) } else { (line.saturating_add(sat32(k)), 0) };
            if k > 0 {
                self.start_row(file, line);
            }
            if piece.is_empty() {
                continue;
            }
            let last = self.segs.last().copied();
            let continues = last.is_some_and(|s| {
                s.len == 0
                    && s.file == file
                    && s.line == line
                    && s.col as usize + (self.col - s.out_col as usize) == col
            });
            if !continues {
                self.segs.push(Seg { out_col: sat32(self.col), file, line, col: sat32(col), len: 0 });
            }
            self.text.push_str(piece);
            self.col += piece.len();
        }
    }

    /// Writes text produced by the expansion of the macro named at `span`.
    fn gen(&mut self, s: &str, span: Span) {
        self.last_gen = true;
        for (k, piece) in s.split('\n').enumerate() {
            if k > 0 {
                // Only raw strings carry newlines into expansions; the row still stands for
                // the invocation's line.
                self.start_row(self.file, self.line);
            }
            if piece.is_empty() {
                continue;
            }
            let last = self.segs.last().copied();
            let same =
                last.is_some_and(|s| s.len > 0 && s.file == span.file && s.line == span.line && s.col == span.column);
            if !same {
                let (file, line, col, len) = (span.file, span.line, span.column, span.len.max(1));
                self.segs.push(Seg { out_col: sat32(self.col), file, line, col, len });
            }
            self.text.push_str(piece);
            self.col += piece.len();
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Source files being read

/// A source token: a byte range of its file.
#[derive(Clone, Copy, Debug)]
struct RawTok {
    kind: Kind,
    start: usize,
    end: usize,
    /// 1-based line, 0-based byte column, and byte offset of the line start.
    line: u32,
    col: usize,
    ls: usize,
}

/// One open conditional (`#if` ... `#endif`).
struct Cond {
    /// The enclosing code is active.
    parent: bool,
    /// The current branch is active.
    active: bool,
    /// Some branch was taken (later `#elif`/`#else` are skipped).
    taken: bool,
    else_seen: bool,
    span: Span,
    what: &'static str,
}

/// Include-guard detection: `#ifndef X` first, `#endif` last, nothing outside them.
#[derive(Clone, Debug)]
enum Guard {
    Start,
    Open(Rc<str>),
    Closed(Rc<str>),
    No,
}

struct Src {
    file: FileId,
    path: PathBuf,
    text: Arc<str>,
    pos: usize,
    line: u32,
    /// Byte offset of the current line's start.
    ls: usize,
    /// Only blanks since the last newline: a `#` here starts a directive.
    bol: bool,
    conds: Vec<Cond>,
    /// Tokens read ahead (looking for a macro's `(`) and put back.
    lookahead: VecDeque<RawTok>,
    /// Looking ahead: stop before a directive instead of running it, so that it runs in order.
    peeking: bool,
    guard: Guard,
    /// After an included file: the line of the `#include`'s end, for the row map.
    resume: u32,
}

impl Src {
    fn new(file: FileId, path: PathBuf, text: Arc<str>) -> Src {
        Src {
            file,
            path,
            text,
            pos: 0,
            line: 1,
            ls: 0,
            bol: true,
            conds: Vec::new(),
            lookahead: VecDeque::new(),
            peeking: false,
            guard: Guard::Start,
            resume: 1,
        }
    }

    fn lex(&mut self) -> Option<RawTok> {
        let b = self.text.as_bytes();
        if self.pos >= b.len() {
            return None;
        }
        let (kind, end) = lex(b, self.pos);
        let t = RawTok { kind, start: self.pos, end, line: self.line, col: self.pos - self.ls, ls: self.ls };
        if matches!(kind, Kind::Space | Kind::Str | Kind::Newline) {
            for (k, &c) in b[self.pos..end].iter().enumerate() {
                if c == b'\n' {
                    self.line = self.line.saturating_add(1);
                    self.ls = self.pos + k + 1;
                }
            }
        }
        self.pos = end;
        Some(t)
    }

    fn slice(&self, t: &RawTok) -> &str {
        &self.text[t.start..t.end]
    }

    fn tok(&self, t: &RawTok, space: bool) -> Tok {
        Tok { kind: t.kind, text: self.slice(t).into(), space, hide: None, gen: false }
    }

    fn active(&self) -> bool {
        // The innermost conditional decides; outside of any, code is active.
        self.conds.last().map(|c| c.active).unwrap_or(true)
    }

    /// Span of `len` bytes at byte `abs`, found by walking from a known (line, line start).
    fn span_at(&self, mut line: u32, mut ls: usize, abs: usize, len: usize) -> Span {
        let abs = abs.min(self.text.len());
        for (k, &c) in self.text.as_bytes()[ls.min(abs)..abs].iter().enumerate() {
            if c == b'\n' {
                line = line.saturating_add(1);
                ls += k + 1;
            }
        }
        let before = &self.text.as_bytes()[ls.min(abs)..abs];
        let column = before.iter().filter(|&&b| b & 0xC0 != 0x80).count() + 1;
        Span { file: self.file, line, column: sat32(column), len: sat32(len.max(1)) }
    }

    fn span(&self, t: &RawTok) -> Span {
        self.span_at(t.line, t.ls, t.start, t.end - t.start)
    }

    fn dir(&self) -> PathBuf {
        self.path.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

/// Lexical normalization (`a/./b/../c` -> `a/c`) so that one file has one key.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            c => out.push(c),
        }
    }
    out
}

/// `"name"` or `<name>` at the start of `spec`: (name, is angle form).
fn header_name(spec: &str) -> Option<(String, bool)> {
    let close = match spec.as_bytes().first()? {
        b'"' => b'"',
        b'<' => b'>',
        _ => return None,
    };
    let end = spec.as_bytes()[1..].iter().position(|&c| c == close || c == b'\n')? + 1;
    (spec.as_bytes()[end] == close).then(|| (spec[1..end].to_string(), close == b'>'))
}

// ---------------------------------------------------------------------------------------------
// Macros

struct Macro {
    /// Interned name, the element of hide sets.
    id: u32,
    /// `None` for object-like macros.
    params: Option<Vec<Rc<str>>>,
    /// The last parameter takes the remaining arguments (`...` or `name...`).
    variadic: bool,
    /// Body tokens, each with the index of the parameter it names.
    body: Vec<(Tok, Option<usize>)>,
}

struct MacroDef {
    name: Rc<str>,
    params: Option<Vec<Rc<str>>>,
    variadic: bool,
    body: Vec<(Tok, Option<usize>)>,
}

/// Parses the tokens after `#define`.
fn parse_define(toks: &[Tok]) -> std::result::Result<MacroDef, String> {
    let Some(name) = toks.first() else {
        return Err("macro name missing in #define".into());
    };
    if name.kind != Kind::Ident {
        return Err(format!("macro name must be an identifier, found `{}`", name.text));
    }
    if &*name.text == "defined" {
        return Err("`defined` cannot be used as a macro name".into());
    }
    let (mut i, mut params, mut variadic) = (1, None, false);
    // Function-like only when `(` touches the name: `#define F (x)` is object-like.
    if toks.get(1).is_some_and(|t| t.is("(") && !t.space) {
        let bad = || format!("malformed parameter list in #define of `{}`", name.text);
        let mut ps: Vec<Rc<str>> = Vec::new();
        i = 2;
        loop {
            let t = toks.get(i).ok_or_else(bad)?;
            i += 1;
            if t.is(")") && ps.is_empty() {
                break;
            }
            if t.is("...") {
                variadic = true;
                ps.push("__VA_ARGS__".into());
            } else if t.kind == Kind::Ident {
                if ps.contains(&t.text) {
                    return Err(format!("duplicate macro parameter `{}`", t.text));
                }
                ps.push(t.text.clone());
                if toks.get(i).is_some_and(|t| t.is("...")) {
                    variadic = true;
                    i += 1;
                }
            } else {
                return Err(bad());
            }
            let sep = toks.get(i).ok_or_else(bad)?;
            i += 1;
            if sep.is(")") {
                break;
            }
            if !sep.is(",") || variadic {
                return Err(bad());
            }
        }
        params = Some(ps);
    }
    let ps = params.as_deref().unwrap_or(&[]);
    let mut body: Vec<(Tok, Option<usize>)> = toks[i..]
        .iter()
        .map(|t| (t.clone(), if t.kind == Kind::Ident { ps.iter().position(|p| *p == t.text) } else { None }))
        .collect();
    if let Some((t, _)) = body.first_mut() {
        t.space = false;
    }
    if body.first().is_some_and(|(t, _)| t.is("##")) || body.last().is_some_and(|(t, _)| t.is("##")) {
        return Err("`##` cannot appear at either end of a macro body".into());
    }
    if params.is_some() {
        for (k, (t, _)) in body.iter().enumerate() {
            if t.is("#") && !body.get(k + 1).is_some_and(|(_, p)| p.is_some()) {
                return Err("`#` is not followed by a macro parameter".into());
            }
        }
    }
    Ok(MacroDef { name: name.text.clone(), params, variadic, body })
}

/// `#x`: the argument's spelling as a string literal.
fn stringify(arg: &[Tok]) -> Tok {
    let mut s = String::from("\"");
    for (k, t) in arg.iter().enumerate() {
        if k > 0 && t.space {
            s.push(' ');
        }
        if t.kind == Kind::Str {
            for c in t.text.chars() {
                if matches!(c, '"' | '\\') {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    Tok::new(Kind::Str, &s)
}

/// `a ## b`. An invalid paste is re-lexed into several tokens rather than refused.
fn paste(l: &Tok, r: &Tok) -> Vec<Tok> {
    let mut toks: Vec<Tok> = lex_toks(&format!("{}{}", l.text, r.text)).into_iter().map(|(t, _)| t).collect();
    if let Some(f) = toks.first_mut() {
        f.space = l.space;
    }
    toks
}

/// Removes `( ... )` from the top of `stack`; returns what was inside.
fn take_parens(stack: &mut Vec<Tok>) -> Option<Vec<Tok>> {
    if !stack.last()?.is("(") {
        return None;
    }
    stack.pop();
    let (mut depth, mut inner) = (0usize, Vec::new());
    loop {
        let t = stack.pop()?;
        if t.is(")") {
            if depth == 0 {
                return Some(inner);
            }
            depth -= 1;
        } else if t.is("(") {
            depth += 1;
        }
        inner.push(t);
    }
}

#[derive(Clone, Copy)]
struct Ctx {
    /// Where errors are reported: the outermost macro name, or the `#if` directive.
    span: Span,
    /// Expanding an `#if` expression: `defined` and `__has_include` are operators.
    if_mode: bool,
}

// ---------------------------------------------------------------------------------------------
// The preprocessor

struct Pp<'a> {
    files: &'a mut SourceFiles,
    loader: &'a dyn FileLoader,
    opts: &'a PreprocessOptions,
    macros: HashMap<Rc<str>, Rc<Macro>>,
    ids: HashMap<Rc<str>, u32>,
    out: Out,
    /// Files read so far, by normalized path.
    loaded: HashMap<PathBuf, (FileId, Arc<str>)>,
    missing: HashSet<PathBuf>,
    /// Files found but refused (a device, a directory, too large), with why.
    refused: Vec<String>,
    once: HashSet<PathBuf>,
    guards: HashMap<PathBuf, Rc<str>>,
    tables: Vec<Option<Arc<LineTable>>>,
    warnings: Vec<Diagnostic>,
    /// An included file to read before the rest of the current one.
    pending: Option<Src>,
    /// Files being read (the root and the chain of includes).
    open_files: usize,
    nesting: usize,
    /// Inside a macro's argument list, where `#include` cannot be honored.
    collecting: usize,
    work: u64,
    work_mark: u64,
    counter: u64,
    /// The file being read, for `__FILE__` and `__has_include`.
    cur_path: PathBuf,
}

fn perr(span: Span, msg: impl Into<String>) -> Diagnostic {
    Diagnostic::at(ErrorKind::Preprocess, span, msg)
}

impl<'a> Pp<'a> {
    fn new(
        files: &'a mut SourceFiles,
        loader: &'a dyn FileLoader,
        opts: &'a PreprocessOptions,
        root: FileId,
        path: &Path,
    ) -> Self {
        Pp {
            files,
            loader,
            opts,
            macros: HashMap::new(),
            ids: HashMap::new(),
            out: Out::new(root),
            loaded: HashMap::new(),
            missing: HashSet::new(),
            refused: Vec::new(),
            once: HashSet::new(),
            guards: HashMap::new(),
            tables: Vec::new(),
            warnings: Vec::new(),
            pending: None,
            open_files: 1,
            nesting: 0,
            collecting: 0,
            work: 0,
            work_mark: 0,
            counter: 0,
            cur_path: path.to_path_buf(),
        }
    }

    fn set_table(&mut self, id: FileId, text: Arc<str>) {
        let i = id.0 as usize;
        if self.tables.len() <= i {
            self.tables.resize(i + 1, None);
        }
        self.tables[i] = Some(Arc::new(LineTable::new(text)));
    }

    fn define(&mut self, d: MacroDef) {
        let next = sat32(self.ids.len());
        let id = *self.ids.entry(d.name.clone()).or_insert(next);
        let m = Macro { id, params: d.params, variadic: d.variadic, body: d.body };
        self.macros.insert(d.name, Rc::new(m));
    }

    fn is_defined(&self, name: &str) -> bool {
        self.macros.contains_key(name) || matches!(name, "__LINE__" | "__FILE__" | "__COUNTER__" | "__has_include")
    }

    /// A name the expander replaces when met in text.
    fn expandable(&self, name: &str) -> bool {
        self.macros.contains_key(name) || matches!(name, "__LINE__" | "__FILE__" | "__COUNTER__" | "_Pragma")
    }

    /// Counts expansion work; fails past the per-invocation or global budget.
    fn tick(&mut self, n: u64, span: Span) -> Result<()> {
        self.work += n;
        if self.work - self.work_mark > MAX_WORK || self.work > MAX_TOTAL_WORK {
            return Err(Diagnostic::at(ErrorKind::Limit, span, "macro expansion exceeds the work budget"));
        }
        Ok(())
    }

    // ----- reading files

    /// Copies or expands the root file and, in place of each `#include`, the included file.
    /// Open files are kept on an explicit stack, not by recursion, so that a deep include chain
    /// cannot overflow the native stack.
    fn run(&mut self, root: Src) -> Result<()> {
        let mut stack = vec![root];
        while let Some(s) = stack.last_mut() {
            if let Some(t) = self.src_next(s)? {
                self.token(s, t)?;
            } else if let Some(child) = self.pending.take() {
                self.cur_path.clone_from(&child.path);
                stack.push(child);
                self.open_files = stack.len();
            } else {
                self.finish_file(s)?;
                stack.pop();
                self.open_files = stack.len();
                if let Some(parent) = stack.last() {
                    self.out.retarget(parent.file, parent.resume);
                    self.cur_path.clone_from(&parent.path);
                    if self.out.text.len() > MAX_OUTPUT {
                        let span = Span { file: parent.file, line: parent.resume, column: 1, len: 1 };
                        return Err(Diagnostic::at(ErrorKind::Limit, span, "preprocessed output exceeds 256 MiB"));
                    }
                }
            }
        }
        Ok(())
    }

    /// Copies one token of active text, or expands it if it names a macro.
    fn token(&mut self, s: &mut Src, t: RawTok) -> Result<()> {
        match t.kind {
            Kind::Newline => {}
            Kind::Ident if self.expandable(s.slice(&t)) => {
                self.out.sync(s.file, t.line);
                let ctx = Ctx { span: s.span(&t), if_mode: false };
                let tok = s.tok(&t, false);
                self.work_mark = self.work;
                let toks = self.expand(vec![tok], Some(s), ctx)?;
                if toks.len() == 1 && !toks[0].gen {
                    self.emit_src(s, &t);
                } else {
                    self.emit_gen(&toks, ctx.span)?;
                }
            }
            _ => self.emit_src(s, &t),
        }
        Ok(())
    }

    fn finish_file(&mut self, s: &Src) -> Result<()> {
        if let Some(c) = s.conds.last() {
            return Err(perr(c.span, format!("unterminated #{} (no matching #endif)", c.what)));
        }
        if let Guard::Closed(name) = &s.guard {
            self.guards.insert(normalize(&s.path), name.clone());
        }
        self.out.sync(s.file, s.line);
        if self.out.col != 0 {
            self.out.start_row(s.file, s.line.saturating_add(1));
        }
        Ok(())
    }

    fn emit_src(&mut self, s: &Src, t: &RawTok) {
        let text = match s.slice(t) {
            BOM => "   ",
            // Digraphs, as the same punctuators of the same width (columns stay put).
            "<%" => "{ ",
            "%>" => "} ",
            "<:" => "[ ",
            ":>" => "] ",
            t => t,
        };
        self.out.sync(s.file, t.line);
        if self.out.col == 0 && t.col > 0 {
            // The start of this line went into a multi-line invocation above: pad so the rest
            // keeps its column.
            self.out.src(&" ".repeat(t.col), s.file, t.line, 0);
        } else if self.out.last_gen
            && hazard(self.out.text.as_bytes().last().copied().unwrap_or(b' '), text.as_bytes()[0])
        {
            self.out.src(" ", s.file, t.line, t.col);
        }
        self.out.src(text, s.file, t.line, t.col);
    }

    fn emit_gen(&mut self, toks: &[Tok], span: Span) -> Result<()> {
        for (k, t) in toks.iter().enumerate() {
            let last = self.out.text.as_bytes().last().copied().unwrap_or(b'\n');
            let first = t.text.as_bytes().first().copied().unwrap_or(b' ');
            if (k > 0 && t.space) || hazard(last, first) {
                self.out.gen(" ", span);
            }
            self.out.gen(&t.text, span);
        }
        if self.out.text.len() > MAX_OUTPUT {
            return Err(Diagnostic::at(ErrorKind::Limit, span, "preprocessed output exceeds 256 MiB"));
        }
        Ok(())
    }

    /// The next token of active text, running directives and skipping inactive lines on the
    /// way. While peeking, stops (returning `None`) before a directive.
    fn src_next(&mut self, s: &mut Src) -> Result<Option<RawTok>> {
        if let Some(t) = s.lookahead.pop_front() {
            return Ok(Some(t));
        }
        loop {
            let (pos, line, ls) = (s.pos, s.line, s.ls);
            let Some(t) = s.lex() else { return Ok(None) };
            match t.kind {
                Kind::Newline | Kind::Space => {
                    s.bol |= t.kind == Kind::Newline;
                    if s.active() {
                        return Ok(Some(t));
                    }
                    continue;
                }
                _ => {}
            }
            if s.bol && s.slice(&t) == "#" {
                if s.peeking {
                    (s.pos, s.line, s.ls) = (pos, line, ls);
                    return Ok(None);
                }
                self.directive(s, t)?;
                if self.pending.is_some() {
                    return Ok(None); // an `#include`: the caller switches files
                }
                continue;
            }
            s.bol = false;
            if matches!(s.guard, Guard::Start | Guard::Closed(_)) {
                s.guard = Guard::No;
            }
            if s.active() {
                return Ok(Some(t));
            }
        }
    }

    /// Runs the directive whose `#` is `hash`, consuming its line(s).
    fn directive(&mut self, s: &mut Src, hash: RawTok) -> Result<()> {
        let body_start = s.pos;
        let (mut end, mut last_line) = (body_start, hash.line);
        while let Some(t) = s.lex() {
            last_line = t.line;
            if t.kind == Kind::Newline {
                break;
            }
            end = t.end;
            last_line = s.line;
        }
        s.bol = true;
        let text = Arc::clone(&s.text);
        let raw = &text[body_start..end];
        let toks = lex_toks(raw);
        let line_end = text[hash.start..].find('\n').map_or(text.len(), |k| hash.start + k);
        let shown = text[hash.start..line_end].trim_end_matches(|c: char| c.is_whitespace() || c == '\\');
        let span = s.span_at(hash.line, hash.ls, hash.start, shown.len());
        let name: Rc<str> = match toks.first() {
            Some((t, _)) if t.kind == Kind::Ident => t.text.clone(),
            _ => "".into(), // `#`, `# 12 "file"` line markers, junk: ignored
        };
        let after_name = toks.first().map_or(0, |(t, off)| off + t.text.len());
        let args: Vec<Tok> = toks.iter().skip(1).map(|(t, _)| t.clone()).collect();
        // The message of `#error`/`#warning`, continuation lines joined.
        let rest = raw[after_name..].replace("\\\r\n", "").replace("\\\n", "");
        let rest = rest.trim();

        if s.conds.is_empty() {
            s.guard = match (&s.guard, &*name, args.first()) {
                (Guard::Start, "ifndef", Some(t)) if t.kind == Kind::Ident => Guard::Open(t.text.clone()),
                _ => Guard::No,
            };
        }
        match &*name {
            "if" | "ifdef" | "ifndef" => {
                let parent = s.active();
                let what = match &*name {
                    "if" => "if",
                    "ifdef" => "ifdef",
                    _ => "ifndef",
                };
                let active = parent && self.condition(&name, &args, span)?;
                s.conds.push(Cond { parent, active, taken: active, else_seen: false, span, what });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                let Some(c) = s.conds.last() else {
                    return Err(perr(span, format!("#{name} without #if")));
                };
                if c.else_seen {
                    return Err(perr(span, format!("#{name} after #else")));
                }
                if s.conds.len() == 1 && matches!(s.guard, Guard::Open(_)) {
                    s.guard = Guard::No;
                }
                let (parent, taken) = (c.parent, c.taken);
                // Skipped #elif conditions are not evaluated: they may be garbage.
                let active = parent && !taken && (&*name == "else" || self.condition(&name, &args, span)?);
                if let Some(c) = s.conds.last_mut() {
                    c.active = active;
                    c.taken |= active;
                    c.else_seen = &*name == "else";
                }
            }
            "endif" => {
                if s.conds.pop().is_none() {
                    return Err(perr(span, "#endif without #if"));
                }
                if let (true, Guard::Open(g)) = (s.conds.is_empty(), &s.guard) {
                    s.guard = Guard::Closed(g.clone());
                }
            }
            _ if !s.active() => {}
            "define" => {
                let def = parse_define(&args).map_err(|m| perr(span, m))?;
                self.define(def);
            }
            "undef" => match args.first() {
                Some(t) if t.kind == Kind::Ident => {
                    self.macros.remove(&t.text);
                }
                _ => return Err(perr(span, "macro name missing in #undef")),
            },
            "include" | "include_next" | "import" => {
                if self.collecting > 0 {
                    return Err(perr(span, "#include inside a macro's argument list is not supported"));
                }
                let spec = raw[after_name..].trim_start();
                let abs = body_start + (raw.len() - spec.len());
                let (name, angle, nspan) = match header_name(spec) {
                    Some((n, angle)) => {
                        let nspan = s.span_at(hash.line, hash.ls, abs, n.len() + 2);
                        (n, angle, nspan)
                    }
                    None => {
                        // `#include MACRO`
                        let toks = self.expand(args, None, Ctx { span, if_mode: false })?;
                        let joined = join_tokens(&toks);
                        let (n, angle) = header_name(joined.trim())
                            .ok_or_else(|| perr(span, "#include expects \"FILE\" or <FILE>"))?;
                        (n, angle, span)
                    }
                };
                if name.is_empty() {
                    return Err(perr(nspan, "empty file name in #include"));
                }
                self.include(s, &name, angle, nspan, last_line)?;
            }
            "pragma" if args.first().is_some_and(|t| &*t.text == "once") => {
                self.once.insert(normalize(&s.path));
            }
            "error" => return Err(perr(span, format!("#error {rest}"))),
            "warning" => self.warnings.push(perr(span, format!("#warning {rest}"))),
            _ => {} // #line, #ident, unknown directives
        }
        Ok(())
    }

    /// The value of the condition of `#if`/`#elif` (or of the `def` forms).
    fn condition(&mut self, directive: &str, args: &[Tok], span: Span) -> Result<bool> {
        if directive.ends_with("def") {
            return match args.first() {
                Some(t) if t.kind == Kind::Ident => Ok(self.is_defined(&t.text) != directive.ends_with("ndef")),
                _ => Err(perr(span, format!("no macro name given in #{directive}"))),
            };
        }
        let mark = self.work_mark;
        self.work_mark = self.work;
        let toks = self.expand(args.to_vec(), None, Ctx { span, if_mode: true });
        self.work_mark = mark;
        let toks = toks?;
        if toks.is_empty() {
            return Err(perr(span, format!("#{directive} with no expression")));
        }
        let mut e = Expr { t: &toks, i: 0, depth: 0 };
        let v = e.comma(true).map_err(|m| perr(span, format!("invalid #{directive} expression: {m}")))?;
        if let Some(t) = toks.get(e.i) {
            return Err(perr(span, format!("invalid #{directive} expression: unexpected `{}`", t.text)));
        }
        Ok(v.0 != 0)
    }

    fn find_include(&mut self, dir: &Path, name: &str, angle: bool) -> Option<PathBuf> {
        let mut cands = Vec::new();
        if Path::new(name).is_absolute() {
            cands.push(PathBuf::from(name));
        } else {
            if !angle {
                cands.push(dir.join(name));
            }
            cands.extend(self.opts.include_dirs.iter().map(|d| d.join(name)));
        }
        cands.into_iter().map(|c| normalize(&c)).find(|p| self.load(p))
    }

    /// Reads a file once; later calls answer from the cache.
    fn load(&mut self, p: &Path) -> bool {
        if self.loaded.contains_key(p) {
            return true;
        }
        if let Some(why) = self.loader.refusal(p) {
            self.refused.push(why);
            return false;
        }
        if self.missing.contains(p) {
            return false;
        }
        let Some(text) = self.loader.load(p) else {
            self.missing.insert(p.to_path_buf());
            return false;
        };
        let text: Arc<str> = text.into();
        let id = self.files.add(p, &*text);
        self.set_table(id, Arc::clone(&text));
        self.loaded.insert(p.to_path_buf(), (id, text));
        true
    }

    fn include(&mut self, s: &mut Src, name: &str, angle: bool, span: Span, last_line: u32) -> Result<()> {
        if self.open_files >= MAX_INCLUDE_DEPTH {
            return Err(perr(span, format!("#include nested more than {MAX_INCLUDE_DEPTH} levels deep")));
        }
        self.refused.clear();
        let Some(path) = self.find_include(&s.dir(), name, angle) else {
            if let Some(why) = self.refused.first() {
                return Err(perr(span, format!("#include \"{name}\": {why}")));
            }
            if angle || toolkit_header(name) {
                // System and CUDA toolkit headers are not needed to lower kernels: the front end
                // knows the declarations kernels use from them.
                return Ok(());
            }
            let mut searched = vec![s.dir().display().to_string()];
            searched.extend(self.opts.include_dirs.iter().map(|d| d.display().to_string()));
            return Err(perr(span, format!("cannot find include file \"{name}\""))
                .note(format!("searched: {}", searched.join(", "))));
        };
        if self.once.contains(&path) || self.guards.get(&path).is_some_and(|g| self.is_defined(g)) {
            return Ok(());
        }
        let Some((id, text)) = self.loaded.get(&path).cloned() else {
            return Ok(());
        };
        // The included rows replace the directive's; [`Pp::run`] reads the file next.
        self.out.sync(s.file, span.line);
        self.out.retarget(id, 1);
        s.resume = last_line;
        self.pending = Some(Src::new(id, path, text));
        Ok(())
    }

    // ----- macro expansion

    /// Fully expands `toks`. With `src`, a function-like macro name at the end may take its
    /// arguments from the following source text.
    fn expand(&mut self, toks: Vec<Tok>, src: Option<&mut Src>, ctx: Ctx) -> Result<Vec<Tok>> {
        if self.nesting >= MAX_ARG_NESTING {
            return Err(perr(ctx.span, "macro arguments nested too deeply"));
        }
        self.nesting += 1;
        let r = self.expand_inner(toks, src, ctx);
        self.nesting -= 1;
        r
    }

    fn expand_inner(&mut self, toks: Vec<Tok>, mut src: Option<&mut Src>, ctx: Ctx) -> Result<Vec<Tok>> {
        // Unscanned tokens, next one last: a replacement is pushed back to be rescanned.
        let mut stack: Vec<Tok> = toks.into_iter().rev().collect();
        let mut out = Vec::new();
        let mut bytes = 0usize;
        while let Some(t) = stack.pop() {
            self.tick(1, ctx.span)?;
            if self.nesting == 1 {
                bytes += t.text.len() + 1;
                if bytes > MAX_EXPANSION_BYTES {
                    return Err(Diagnostic::at(ErrorKind::Limit, ctx.span, "macro expansion exceeds 10 MiB"));
                }
            }
            if t.kind != Kind::Ident || (ctx.if_mode && self.if_operator(&t, &mut stack, &mut out, ctx)?) {
                if t.kind != Kind::Ident {
                    out.push(t);
                }
                continue;
            }
            let Some(m) = self.macros.get(&t.text).cloned() else {
                if !self.builtin(&t, &mut stack, src.as_deref_mut(), &mut out, ctx)? {
                    out.push(t);
                }
                continue;
            };
            if hide_has(&t.hide, m.id) {
                out.push(t);
                continue;
            }
            let (args, hide) = match &m.params {
                None => (Vec::new(), hide_add(&t.hide, m.id)),
                Some(params) => {
                    if !self.peek_lparen(&mut stack, src.as_deref_mut())? {
                        out.push(t);
                        continue;
                    }
                    let n = params.len();
                    let (mut args, rparen) = self.collect_args(&mut stack, src.as_deref_mut(), n, m.variadic, ctx)?;
                    if m.variadic && args.len() + 1 == n {
                        args.push(Vec::new()); // `F(a)` for `F(a, ...)`
                    }
                    if args.len() != n {
                        return Err(perr(
                            ctx.span,
                            format!("macro `{}` takes {n} argument(s), but {} given", t.text, args.len()),
                        ));
                    }
                    // Prosser: the result is hidden from what both the name and `)` were hidden
                    // from, plus this macro.
                    (args, hide_add(&hide_inter(&t.hide, &rparen.hide), m.id))
                }
            };
            if hide_len(&hide) > MAX_HIDE {
                return Err(perr(ctx.span, format!("macro expansion nested more than {MAX_HIDE} levels deep")));
            }
            let body = self.subst(&m, &args, &hide, t.space, ctx)?;
            self.tick(body.len() as u64, ctx.span)?;
            stack.extend(body.into_iter().rev());
        }
        Ok(out)
    }

    /// `defined X`, `defined(X)`, `__has_include(...)` and other `__has_*(...)` in `#if`.
    fn if_operator(&mut self, t: &Tok, stack: &mut Vec<Tok>, out: &mut Vec<Tok>, ctx: Ctx) -> Result<bool> {
        let value = match &*t.text {
            "defined" => {
                let paren = stack.last().is_some_and(|x| x.is("("));
                if paren {
                    stack.pop();
                }
                let name = stack
                    .pop()
                    .filter(|x| x.kind == Kind::Ident)
                    .ok_or_else(|| perr(ctx.span, "operator `defined` requires a macro name"))?;
                if paren && !stack.pop().is_some_and(|x| x.is(")")) {
                    return Err(perr(ctx.span, "missing `)` after `defined(`"));
                }
                self.is_defined(&name.text)
            }
            "__has_include" | "__has_include_next" => {
                let bad = || perr(ctx.span, "`__has_include` expects (\"FILE\") or (<FILE>)");
                let inner = take_parens(stack).ok_or_else(bad)?;
                let (name, angle) = header_name(join_tokens(&inner).trim()).ok_or_else(bad)?;
                let dir = self.cur_path.parent().map(Path::to_path_buf).unwrap_or_default();
                self.find_include(&dir, &name, angle).is_some()
            }
            // `__has_attribute(x)`, `__has_builtin(x)`, ...: claim nothing.
            s if s.starts_with("__has_") && stack.last().is_some_and(|x| x.is("(")) => {
                take_parens(stack);
                false
            }
            _ => return Ok(false),
        };
        out.push(Tok::new(Kind::Number, if value { "1" } else { "0" }));
        Ok(true)
    }

    /// `__LINE__`, `__FILE__`, `__COUNTER__`, and `_Pragma(...)` (dropped, like `#pragma`).
    fn builtin(
        &mut self,
        t: &Tok,
        stack: &mut Vec<Tok>,
        mut src: Option<&mut Src>,
        out: &mut Vec<Tok>,
        ctx: Ctx,
    ) -> Result<bool> {
        let mut tok = match &*t.text {
            "__LINE__" => Tok::new(Kind::Number, &ctx.span.line.to_string()),
            "__FILE__" => {
                let p = self.cur_path.display().to_string().replace('\\', "\\\\").replace('"', "\\\"");
                Tok::new(Kind::Str, &format!("\"{p}\""))
            }
            "__COUNTER__" => {
                self.counter += 1;
                Tok::new(Kind::Number, &(self.counter - 1).to_string())
            }
            "_Pragma" => {
                if !self.peek_lparen(stack, src.as_deref_mut())? {
                    return Ok(false);
                }
                self.collect_args(stack, src, 1, true, ctx)?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        tok.space = t.space;
        out.push(tok);
        Ok(true)
    }

    /// Consumes a `(` if it is the next token (skipping blanks and newlines in the source).
    fn peek_lparen(&mut self, stack: &mut Vec<Tok>, src: Option<&mut Src>) -> Result<bool> {
        if let Some(t) = stack.last() {
            let yes = t.is("(");
            if yes {
                stack.pop();
            }
            return Ok(yes);
        }
        let Some(s) = src else { return Ok(false) };
        // The blanks skipped, merged into one token so that memory stays constant over any
        // number of blank lines (it is only ever copied verbatim).
        let mut blank: Option<RawTok> = None;
        let mut next = None;
        s.peeking = true;
        let found = loop {
            match self.src_next(s) {
                Err(e) => {
                    s.peeking = false;
                    return Err(e);
                }
                Ok(None) => break false,
                Ok(Some(t)) if matches!(t.kind, Kind::Space | Kind::Newline) => {
                    let b = blank.get_or_insert(RawTok { kind: Kind::Space, ..t });
                    b.end = t.end;
                }
                Ok(Some(t)) => {
                    let yes = t.kind == Kind::Punct && s.slice(&t) == "(";
                    if !yes {
                        next = Some(t);
                    }
                    break yes;
                }
            }
        };
        s.peeking = false;
        if !found {
            for t in [next, blank].into_iter().flatten() {
                s.lookahead.push_front(t);
            }
        }
        Ok(found)
    }

    /// Reads arguments up to the matching `)` (the `(` is consumed). Directives met in the
    /// source between the arguments run, as in GCC.
    fn collect_args(
        &mut self,
        stack: &mut Vec<Tok>,
        src: Option<&mut Src>,
        n: usize,
        variadic: bool,
        ctx: Ctx,
    ) -> Result<(Vec<Vec<Tok>>, Tok)> {
        self.collecting += 1;
        let r = self.collect_args_inner(stack, src, n, variadic, ctx);
        self.collecting -= 1;
        r
    }

    fn collect_args_inner(
        &mut self,
        stack: &mut Vec<Tok>,
        mut src: Option<&mut Src>,
        n: usize,
        variadic: bool,
        ctx: Ctx,
    ) -> Result<(Vec<Vec<Tok>>, Tok)> {
        let unterminated = || perr(ctx.span, "unterminated argument list of macro invocation");
        let mut args: Vec<Vec<Tok>> = vec![Vec::new()];
        let (mut depth, mut space) = (0usize, false);
        loop {
            let t = if let Some(t) = stack.pop() {
                t
            } else if let Some(s) = src.as_deref_mut() {
                let r = self.src_next(s)?.ok_or_else(unterminated)?;
                if matches!(r.kind, Kind::Space | Kind::Newline) {
                    space = true;
                    continue;
                }
                let t = s.tok(&r, space);
                space = false;
                t
            } else {
                return Err(unterminated());
            };
            self.tick(1, ctx.span)?;
            if t.is("(") {
                depth += 1;
            } else if t.is(")") {
                if depth == 0 {
                    if n == 0 && args.len() == 1 && args[0].is_empty() {
                        args.clear();
                    }
                    return Ok((args, t));
                }
                depth -= 1;
            } else if t.is(",") && depth == 0 && !(variadic && args.len() >= n) {
                args.push(Vec::new());
                continue;
            }
            if let Some(a) = args.last_mut() {
                a.push(t);
            }
        }
    }

    /// The body of `m` with arguments substituted (`#`, `##`, pre-expanded parameters).
    fn subst(&mut self, m: &Macro, args: &[Vec<Tok>], hide: &Hide, space: bool, ctx: Ctx) -> Result<Vec<Tok>> {
        let body = &m.body;
        let va = if m.variadic { args.len().checked_sub(1) } else { None };
        let mut expanded: Vec<Option<Vec<Tok>>> = vec![None; args.len()];
        let mut res: Vec<Tok> = Vec::new();
        let mut i = 0;
        while i < body.len() {
            let (t, p) = &body[i];
            let next = body.get(i + 1);
            if m.params.is_some() && t.is("#") {
                if let Some((_, Some(pi))) = next {
                    let mut s = stringify(&args[*pi]);
                    s.space = t.space;
                    res.push(s);
                    i += 2;
                    continue;
                }
            }
            if t.is("##") {
                let Some((rt, rp)) = next else { break };
                let rhs: &[Tok] = match rp {
                    Some(pi) => &args[*pi],
                    None => std::slice::from_ref(rt),
                };
                if rhs.is_empty() {
                    // GNU `, ## __VA_ARGS__`: an empty variadic argument eats the comma.
                    if rp.is_some() && *rp == va && res.last().is_some_and(|l| l.is(",")) {
                        res.pop();
                    }
                } else if let Some(l) = res.pop() {
                    res.extend(paste(&l, &rhs[0]));
                    res.extend(rhs[1..].iter().cloned());
                } else {
                    res.extend(rhs.iter().cloned());
                }
                i += 2;
                continue;
            }
            let Some(pi) = *p else {
                res.push(t.clone());
                i += 1;
                continue;
            };
            if next.is_some_and(|(n, _)| n.is("##")) {
                // Operands of `##` are not macro-expanded.
                if args[pi].is_empty() {
                    // Placemarker: `x ## y` with empty x is just y.
                    match body.get(i + 2) {
                        Some((_, Some(ri))) => res.extend(args[*ri].iter().cloned()),
                        Some((rt, None)) => res.push(rt.clone()),
                        None => {}
                    }
                    i += 3;
                } else {
                    res.extend(args[pi].iter().cloned());
                    i += 1;
                }
                continue;
            }
            if expanded[pi].is_none() {
                expanded[pi] = Some(self.expand(args[pi].clone(), None, ctx)?);
            }
            let start = res.len();
            res.extend(expanded[pi].iter().flatten().cloned());
            if let Some(f) = res.get_mut(start) {
                f.space = t.space;
            }
            i += 1;
        }
        // Everything produced here is hidden from this macro (and what the name was hidden from).
        let mut cache: Option<(Hide, Hide)> = None;
        for (k, r) in res.iter_mut().enumerate() {
            r.hide = match (&r.hide, &cache) {
                (None, _) => hide.clone(),
                (Some(h), Some((from, to))) if from.as_ref().is_some_and(|f| Rc::ptr_eq(f, h)) => to.clone(),
                (h, _) => {
                    let to = hide_union(h, hide);
                    cache = Some((h.clone(), to.clone()));
                    to
                }
            };
            r.gen = true;
            if k == 0 {
                r.space = space;
            }
        }
        Ok(res)
    }
}

// ---------------------------------------------------------------------------------------------
// `#if` expressions

/// A value of an `#if` expression: C evaluates them in `intmax_t`/`uintmax_t`.
type Val = (u64, bool);
type ExprResult<T> = std::result::Result<T, String>;

struct Expr<'a> {
    t: &'a [Tok],
    i: usize,
    depth: u32,
}

fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "*" | "/" | "%" => 10,
        "+" | "-" => 9,
        "<<" | ">>" => 8,
        "<" | ">" | "<=" | ">=" => 7,
        "==" | "!=" => 6,
        "&" => 5,
        "^" => 4,
        "|" => 3,
        "&&" => 2,
        "||" => 1,
        _ => return None,
    })
}

impl<'a> Expr<'a> {
    fn peek(&self) -> &'a str {
        let t: &'a [Tok] = self.t;
        t.get(self.i).filter(|t| t.kind == Kind::Punct).map_or("", |t| &t.text)
    }

    fn enter(&mut self) -> ExprResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err("expression nested too deeply".into());
        }
        Ok(())
    }

    fn expect(&mut self, p: &str) -> ExprResult<()> {
        if self.peek() == p {
            self.i += 1;
            return Ok(());
        }
        Err(match self.t.get(self.i) {
            Some(t) => format!("expected `{p}` before `{}`", t.text),
            None => format!("expected `{p}` at end of expression"),
        })
    }

    /// `a, b` (`ev`: the value is used; division by zero in an unevaluated operand is fine).
    fn comma(&mut self, ev: bool) -> ExprResult<Val> {
        let mut v = self.cond(ev)?;
        while self.peek() == "," {
            self.i += 1;
            v = self.cond(ev)?;
        }
        Ok(v)
    }

    fn cond(&mut self, ev: bool) -> ExprResult<Val> {
        self.enter()?;
        let c = self.binary(1, ev)?;
        let v = if self.peek() == "?" {
            self.i += 1;
            let yes = c.0 != 0;
            let a = self.comma(ev && yes)?;
            self.expect(":")?;
            let b = self.cond(ev && !yes)?;
            (if yes { a.0 } else { b.0 }, a.1 || b.1)
        } else {
            c
        };
        self.depth -= 1;
        Ok(v)
    }

    /// Precedence climbing over the binary operators of at least precedence `min`.
    fn binary(&mut self, min: u8, ev: bool) -> ExprResult<Val> {
        let mut l = self.unary(ev)?;
        while let Some(p) = prec(self.peek()).filter(|&p| p >= min) {
            let op = self.peek();
            self.i += 1;
            l = match op {
                "&&" => {
                    let r = self.binary(p + 1, ev && l.0 != 0)?;
                    (u64::from(l.0 != 0 && r.0 != 0), false)
                }
                "||" => {
                    let r = self.binary(p + 1, ev && l.0 == 0)?;
                    (u64::from(l.0 != 0 || r.0 != 0), false)
                }
                _ => {
                    let r = self.binary(p + 1, ev)?;
                    arith(op, l, r, ev)?
                }
            };
        }
        Ok(l)
    }

    fn unary(&mut self, ev: bool) -> ExprResult<Val> {
        self.enter()?;
        let op = self.peek();
        let v = match op {
            "-" | "+" | "~" | "!" => {
                self.i += 1;
                let v = self.unary(ev)?;
                match op {
                    "-" => (v.0.wrapping_neg(), v.1),
                    "+" => v,
                    "~" => (!v.0, v.1),
                    _ => (u64::from(v.0 == 0), false),
                }
            }
            "(" => {
                self.i += 1;
                let v = self.comma(ev)?;
                self.expect(")")?;
                v
            }
            _ => self.primary()?,
        };
        self.depth -= 1;
        Ok(v)
    }

    fn primary(&mut self) -> ExprResult<Val> {
        let Some(t) = self.t.get(self.i) else {
            return Err("expected a value at end of expression".into());
        };
        self.i += 1;
        match t.kind {
            Kind::Number => parse_int(&t.text),
            Kind::Str if t.text.trim_start_matches(|c: char| c.is_ascii_alphanumeric()).starts_with('\'') => {
                Ok((parse_char(&t.text), false))
            }
            // Identifiers left after expansion are 0; C++ keeps `true` as 1.
            Kind::Ident => Ok((u64::from(&*t.text == "true"), false)),
            _ => Err(format!("unexpected `{}`", t.text)),
        }
    }
}

fn arith(op: &str, l: Val, r: Val, ev: bool) -> ExprResult<Val> {
    let u = l.1 || r.1;
    let (a, b) = (l.0, r.0);
    let (sa, sb) = (a as i64, b as i64);
    let cmp = |x: bool| Ok((u64::from(x), false));
    match op {
        "*" => Ok((a.wrapping_mul(b), u)),
        "/" | "%" if b == 0 => {
            if ev {
                Err("division by zero".into())
            } else {
                Ok((0, u))
            }
        }
        "/" => Ok((if u { a / b } else { sa.wrapping_div(sb) as u64 }, u)),
        "%" => Ok((if u { a % b } else { sa.wrapping_rem(sb) as u64 }, u)),
        "+" => Ok((a.wrapping_add(b), u)),
        "-" => Ok((a.wrapping_sub(b), u)),
        "<<" | ">>" => {
            // Shifting by a negative or too large count is undefined: give 0 (or -1).
            let n = if !r.1 && sb < 0 { 64 } else { b.min(64) } as u32;
            let v = match (op, n >= 64, l.1) {
                (">>", true, false) if sa < 0 => u64::MAX,
                (_, true, _) => 0,
                ("<<", false, _) => a << n,
                (_, false, true) => a >> n,
                _ => (sa >> n) as u64,
            };
            Ok((v, l.1))
        }
        "<" => cmp(if u { a < b } else { sa < sb }),
        ">" => cmp(if u { a > b } else { sa > sb }),
        "<=" => cmp(if u { a <= b } else { sa <= sb }),
        ">=" => cmp(if u { a >= b } else { sa >= sb }),
        "==" => cmp(a == b),
        "!=" => cmp(a != b),
        "&" => Ok((a & b, u)),
        "^" => Ok((a ^ b, u)),
        "|" => Ok((a | b, u)),
        _ => Err(format!("unexpected `{op}`")),
    }
}

/// An integer constant: decimal, `0x`, `0b` or octal, with `'` separators and `u`/`l` suffixes.
fn parse_int(text: &str) -> ExprResult<Val> {
    let s: String = text.chars().filter(|&c| c != '\'').collect();
    let lower = s.to_ascii_lowercase();
    let (digits, radix) = if let Some(d) = lower.strip_prefix("0x") {
        (d, 16)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (d, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    let value = digits.trim_end_matches(['u', 'l', 'z']);
    let suffix = &digits[value.len()..];
    let invalid = || format!("invalid integer constant `{text}`");
    if !matches!(suffix, "" | "u" | "l" | "ul" | "lu" | "ll" | "ull" | "llu" | "z" | "uz" | "zu") {
        return Err(invalid());
    }
    let v = if value.is_empty() && radix == 8 {
        0 // `0u`
    } else if value.is_empty() || value.starts_with('+') {
        return Err(invalid());
    } else {
        u64::from_str_radix(value, radix).map_err(|_| invalid())?
    };
    // Too large for intmax_t: the constant is unsigned (as GCC treats it).
    Ok((v, suffix.contains('u') || v > i64::MAX as u64))
}

/// A character constant's value (multi-character constants pack bytes, as GCC does).
fn parse_char(text: &str) -> u64 {
    let body = text.trim_start_matches(|c: char| c != '\'');
    let body = body.strip_prefix('\'').unwrap_or(body);
    let body = body.strip_suffix('\'').unwrap_or(body);
    let mut chars = body.chars().peekable();
    let (mut v, mut first) = (0u64, true);
    while let Some(c) = chars.next() {
        let code = if c != '\\' {
            u64::from(c)
        } else {
            match chars.next() {
                Some('n') => 10,
                Some('t') => 9,
                Some('r') => 13,
                Some('a') => 7,
                Some('b') => 8,
                Some('f') => 12,
                Some('v') => 11,
                Some('e') => 27,
                Some('x') => {
                    let mut n = 0u64;
                    while let Some(d) = chars.peek().and_then(|c| c.to_digit(16)) {
                        n = n.wrapping_mul(16).wrapping_add(u64::from(d));
                        chars.next();
                    }
                    n
                }
                Some(d @ '0'..='7') => {
                    let mut n = u64::from(d) - u64::from('0');
                    for _ in 0..2 {
                        let Some(d) = chars.peek().and_then(|c| c.to_digit(8)) else {
                            break;
                        };
                        n = n * 8 + u64::from(d);
                        chars.next();
                    }
                    n
                }
                Some(c) => u64::from(c),
                None => 0,
            }
        };
        v = if first { code } else { v.wrapping_shl(8) | (code & 0xff) };
        first = false;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves files from memory.
    struct Mem(HashMap<PathBuf, String>);

    impl FileLoader for Mem {
        fn load(&self, path: &Path) -> Option<String> {
            self.0.get(path).cloned()
        }
    }

    const ROOT: &str = "/src/main.cu";

    fn run_with(root: &str, extra: &[(&str, &str)], opts: &PreprocessOptions) -> Result<(Preprocessed, SourceFiles)> {
        let mut files = SourceFiles::default();
        let id = files.add(ROOT, root);
        let mem = Mem(extra.iter().map(|(p, t)| (PathBuf::from(p), t.to_string())).collect());
        let pp = preprocess(&mut files, id, opts, &mem)?;
        Ok((pp, files))
    }

    fn run(root: &str, extra: &[(&str, &str)]) -> Result<(Preprocessed, SourceFiles)> {
        run_with(root, extra, &PreprocessOptions::default())
    }

    fn pp(src: &str) -> String {
        run(src, &[]).unwrap().0.text
    }

    fn err(src: &str) -> Diagnostic {
        run(src, &[]).expect_err("should fail")
    }

    /// Whitespace-insensitive form of some text.
    fn words(s: &str) -> String {
        s.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// (row, byte column) of the first occurrence of `needle` in `text`.
    fn find_pos(text: &str, needle: &str) -> (usize, usize) {
        let at = text.find(needle).unwrap_or_else(|| panic!("`{needle}` not in {text:?}"));
        let row = text[..at].matches('\n').count();
        let col = at - text[..at].rfind('\n').map_or(0, |k| k + 1);
        (row, col)
    }

    fn span(file: u32, line: u32, column: u32, len: u32) -> Span {
        Span { file: FileId(file), line, column, len }
    }

    #[test]
    fn plain_text_is_unchanged() {
        let src = "int a;\n  float b = 1.5e+3f; // c\n/* x\n y */ char c = 'q';\n";
        assert_eq!(pp(src), src);
    }

    #[test]
    fn object_macros_define_and_undef() {
        let out = pp("#define N 32\n#define M (N * 2)\nint a[M];\n#undef N\nint b[N];\n");
        assert_eq!(out.lines().collect::<Vec<_>>(), ["", "", "int a[(32 * 2)];", "", "int b[N];"]);
    }

    #[test]
    fn function_macros_with_nested_parens() {
        let out = pp("#define MAX(a, b) ((a) > (b) ? (a) : (b))\nint x = MAX(f(1, 2), (3, 4));\n");
        assert_eq!(words(&out), "int x = ((f(1, 2)) > ((3, 4)) ? (f(1, 2)) : ((3, 4)));");
    }

    #[test]
    fn multi_line_invocation_keeps_following_text_in_place() {
        let src = "#define ADD(a, b) ((a) + (b))\nint x = ADD(1,\n            2); int y;\nint z;\n";
        let (p, _) = run(src, &[]).unwrap();
        let rows: Vec<&str> = p.text.split('\n').collect();
        assert_eq!(rows[0], "");
        assert_eq!(rows[1], "int x = ((1) + (2))");
        // `; int y;` keeps row 2 and its column (14 in the source).
        assert_eq!(rows[2], "              ; int y;");
        assert_eq!(rows[3], "int z;");
        assert_eq!(p.locate(2, 16, 3), span(0, 3, 17, 3));
        assert_eq!(p.locate(3, 4, 1), span(0, 4, 5, 1));
        // The expansion maps to the macro name.
        assert_eq!(p.locate(1, 10, 1), span(0, 2, 9, 3));
        // The text before the invocation is untouched.
        assert_eq!(p.locate(1, 4, 1), span(0, 2, 5, 1));
    }

    #[test]
    fn function_macro_name_without_parens_is_left_alone() {
        assert_eq!(pp("#define F(x) x\nint F;\nF\n+ 1;\n"), "\nint F;\nF\n+ 1;\n");
        // ... but the `(` may come on a later line.
        assert_eq!(words(&pp("#define F(x) [x]\nF\n(1)\n")), "[1]");
    }

    #[test]
    fn stringify_paste_and_variadic() {
        let out = pp(concat!(
            "#define S(x) #x\n",
            "#define CAT(a, b) a ## b\n",
            "#define V(fmt, ...) f(fmt, ## __VA_ARGS__)\n",
            "#define W(...) g(__VA_ARGS__)\n",
            "#define xy 7\n",
            "S(a  \"b\\n\"  'c')\n",
            "CAT(x, y) CAT(1, 2) CAT(, z) CAT(,)\n",
            "V(1) V(1, 2, 3) W() W(a, (b, c))\n",
        ));
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[5], r#""a \"b\\n\" 'c'""#);
        assert_eq!(words(lines[6]), "7 12 z");
        assert_eq!(words(lines[7]), "f(1) f(1,2, 3) g() g(a, (b, c))");
    }

    #[test]
    fn macro_args_are_expanded_before_substitution() {
        let out =
            pp("#define N 4\n#define SQ(x) ((x) * (x))\n#define S(x) #x\n#define XS(x) S(x)\nSQ(SQ(N)) S(N) XS(N)\n");
        assert_eq!(words(out.lines().nth(4).unwrap()), "((((4) * (4))) * (((4) * (4)))) \"N\" \"4\"");
    }

    #[test]
    fn self_referential_macros_terminate() {
        let out = pp("#define foo foo + 1\n#define a b\n#define b a\n#define f(x) f(x) + x\nfoo; a; b; f(f(2));\n");
        assert_eq!(words(out.lines().nth(4).unwrap()), "foo + 1; a; b; f(f(2) + 2) + f(2) + 2;");
    }

    #[test]
    fn tokens_are_not_glued_by_expansion() {
        let out = pp("#define M -1\n#define E\nint x = -M; int E y;\n");
        assert_eq!(words(out.lines().nth(2).unwrap()), "int x = - -1; int y;");
    }

    #[test]
    fn no_expansion_in_comments_strings_and_chars() {
        let src = "#define X 1\n// #define Y 2\n/* X\n#if 0 */ int a = X; const char *s = \"X\"; char c = 'X';\n#ifdef Y\nbad\n#endif\n";
        let out = pp(src);
        assert!(out.contains("// #define Y 2\n/* X\n#if 0 */ int a = 1;"), "{out}");
        assert!(out.contains("\"X\"") && out.contains("'X'") && !out.contains("bad"));
    }

    #[test]
    fn conditionals_with_defined_and_arithmetic() {
        let src = concat!(
            "#define A 3\n",
            "#if defined(A) && defined A && !defined(B) && (A * 2 + 1 == 7) && (1 << 4) == 16\n",
            "yes1\n",
            "#endif\n",
            "#if (A > 2 ? 10 : 20) / 5 == 2 && -1 < 0 && (-1 > 0u) && ~0 == -1 && (7 % 4 ^ 1) == 2\n",
            "yes2\n",
            "#endif\n",
            "#if UNDEFINED_THING || 0x10 != 16 || 010 != 8 || 0b11 != 3 || 1'000 != 1000 || 'A' != 65\n",
            "no1\n",
            "#else\n",
            "yes3\n",
            "#endif\n",
            "#if 0 && (1 / 0)\n",
            "no2\n",
            "#elif 1 || (1 % 0)\n",
            "yes4\n",
            "#endif\n",
            "#ifndef B\n",
            "yes5\n",
            "#endif\n",
            "#if true && !false && __has_include(\"main.cu\") && !__has_include(<nope.h>) && !__has_builtin(x)\n",
            "yes6\n",
            "#endif\n",
        );
        let out = pp(src);
        for w in ["yes1", "yes2", "yes3", "yes4", "yes5", "yes6"] {
            assert!(out.contains(w), "missing {w}: {out}");
        }
        assert!(!out.contains("no"), "{out}");
        assert_eq!(out.lines().count(), src.lines().count());
    }

    #[test]
    fn elif_chains_and_nesting() {
        let prog = |v: u32| {
            format!(
                "#define V {v}\n#if V == 1\none\n#elif V == 2\n#if 0\nnested\n#elif 1\ntwo\n#else\nnope\n#endif\n#elif V == 3\nthree\n#else\nother\n#endif\n"
            )
        };
        assert_eq!(words(&pp(&prog(1))), "one");
        assert_eq!(words(&pp(&prog(2))), "two");
        assert_eq!(words(&pp(&prog(3))), "three");
        assert_eq!(words(&pp(&prog(9))), "other");
        // Garbage in skipped branches is not evaluated or parsed.
        assert_eq!(words(&pp("#if 0\n#if 1 +\n#elif )(\n#else junk\n#endif\n#else\nok\n#endif\n")), "ok");
    }

    #[test]
    fn predefined_macros_and_command_line_defines() {
        let src = "#if defined(__CUDACC__) && __CUDA_ARCH__ >= 900 && __NVCC__ && __cplusplus >= 201103L\nok\n#endif\nN F(2)\n";
        let opts = PreprocessOptions {
            defines: vec![("N".into(), "1".into()), ("F(x)".into(), "x+x".into())],
            include_dirs: vec![],
        };
        let (p, _) = run_with(src, &[], &opts).unwrap();
        assert_eq!(words(&p.text), "ok 1 2+2");
        let opts = PreprocessOptions { defines: vec![("__CUDA_ARCH__".into(), "800".into())], include_dirs: vec![] };
        let (p, _) = run_with(src, &[], &opts).unwrap();
        assert_eq!(words(&p.text), "N F(2)");
    }

    #[test]
    fn includes_next_to_file_and_via_include_dirs() {
        let root = "#include \"a.h\"\n#include <b.h>\n#include \"sub/c.h\"\nint main_line = A + B + C;\n";
        let extra = [
            ("/src/a.h", "#define A 1\nint in_a;\n"),
            ("/inc/b.h", "#define B 2\nint in_b;"),
            ("/src/sub/c.h", "#include \"../d.h\"\n#define C 3\n"),
            ("/src/d.h", "int in_d;\n"),
            // Not reachable through `<...>`: only -I dirs are searched for those.
            ("/src/b.h", "#error wrong b.h\n"),
        ];
        let opts = PreprocessOptions { defines: vec![], include_dirs: vec!["/inc".into()] };
        let (p, files) = run_with(root, &extra, &opts).unwrap();
        assert_eq!(words(&p.text), "int in_a; int in_b; int in_d; int main_line = 1 + 2 + 3;");
        let path = |s: Span| files.path(s.file).to_path_buf();

        let (r, c) = find_pos(&p.text, "in_a");
        let s = p.locate(r, c, 4);
        assert_eq!((path(s), s.line, s.column, s.len), (PathBuf::from("/src/a.h"), 2, 5, 4));
        let (r, c) = find_pos(&p.text, "in_b");
        let s = p.locate(r, c, 4);
        assert_eq!((path(s), s.line, s.column), (PathBuf::from("/inc/b.h"), 2, 5));
        let (r, c) = find_pos(&p.text, "in_d");
        let s = p.locate(r, c, 4);
        assert_eq!((path(s), s.line, s.column), (PathBuf::from("/src/d.h"), 1, 5));
        // A plain line after the includes maps to its own line and column.
        let (r, c) = find_pos(&p.text, "main_line");
        assert_eq!(p.locate(r, c, 9), span(0, 4, 5, 9));
        // Expanded text maps to the macro name.
        let (r, c) = find_pos(&p.text, "2");
        assert_eq!(p.locate(r, c, 1), span(0, 4, 21, 1));
    }

    #[test]
    fn pragma_once_and_include_guards() {
        let root = "#include \"o.h\"\n#include \"o.h\"\n#include \"g.h\"\n#include \"./g.h\"\n#include \"n.h\"\n#include \"n.h\"\n";
        let extra = [
            ("/src/o.h", "#pragma once\nint once;\n"),
            ("/src/g.h", "// guard\n#ifndef G_H\n#define G_H\nint guarded;\n#endif // G_H\n"),
            ("/src/n.h", "int twice;\n"),
        ];
        let (p, files) = run(root, &extra).unwrap();
        // (The comment on the `#endif` line goes with the directive.)
        assert_eq!(words(&p.text), "int once; // guard int guarded; int twice; int twice;");
        // Each file is read once.
        assert_eq!(files.files.len(), 4);
    }

    #[test]
    fn missing_headers() {
        // Missing `<...>` headers (CUDA, system) are skipped.
        assert_eq!(pp("#include <cuda_runtime.h>\n#include <stdio.h>\nint x;\n"), "\n\nint x;\n");
        // A missing quoted header is an error at its name.
        let e = err("int x;\n  #include \"nope.h\"\n");
        assert_eq!(e.kind, ErrorKind::Preprocess);
        assert_eq!(e.span, Some(span(0, 2, 12, 8)));
        assert!(e.message.contains("nope.h"), "{}", e.message);
        let mut files = SourceFiles::default();
        let id = files.add(ROOT, "#include \"nope.h\"\n");
        let e = preprocess(&mut files, id, &PreprocessOptions::default(), &Mem(HashMap::new())).unwrap_err();
        assert_eq!(files.describe(e.span.unwrap()), "/src/main.cu:1:10");
    }

    #[test]
    fn include_through_macro_and_include_cycles() {
        let extra = [("/src/x.h", "int x;\n"), ("/src/loop.h", "#include \"loop.h\"\n")];
        let (p, _) = run("#define H \"x.h\"\n#include H\n", &extra).unwrap();
        assert_eq!(words(&p.text), "int x;");
        let e = run("#include \"loop.h\"\n", &extra).unwrap_err();
        assert!(e.message.contains("nested"), "{}", e.message);
    }

    #[test]
    fn line_continuations_in_directives() {
        let out = pp("#define LONG(a, \\\n  b) a + \\\n  b\nint x = LONG(1, 2);\n");
        assert_eq!(out, "\n\n\nint x = 1 + 2;\n");
    }

    #[test]
    fn conditionals_inside_macro_arguments() {
        let out = pp("#define F(a, b) [a|b]\nF(1,\n#ifdef NOPE\n  2\n#else\n  3\n#endif\n) tail\n");
        assert_eq!(words(&out), "[1|3] tail");
        let (p, _) = run("#define F(a, b) [a|b]\nF(1,\n#ifdef NOPE\n  2\n#else\n  3\n#endif\n) tail\n", &[]).unwrap();
        let (r, c) = find_pos(&p.text, "tail");
        assert_eq!(p.locate(r, c, 4), span(0, 8, 3, 4));
    }

    #[test]
    fn errors_point_at_the_directive() {
        let cases: [(&str, u32, &str); 10] = [
            ("int a;\n#if 1\n", 2, "unterminated #if"),
            ("#else\n", 1, "#else without #if"),
            ("#endif\n", 1, "#endif without #if"),
            ("#if 1\n#else\n#elif 1\n#endif\n", 3, "#elif after #else"),
            ("\n#define 3 x\n", 2, "macro name"),
            ("#define F(a, b\n", 1, "malformed parameter list"),
            ("#define F(a) #b\n", 1, "`#` is not followed"),
            ("\n\n#if 1 +\n#endif\n", 3, "invalid #if expression"),
            ("#if 1 / (2 - 2)\n#endif\n", 1, "division by zero"),
            ("#ifdef\n#endif\n", 1, "no macro name"),
        ];
        for (src, line, msg) in cases {
            let e = err(src);
            assert_eq!(e.kind, ErrorKind::Preprocess, "{src}");
            assert!(e.message.contains(msg), "{src}: {}", e.message);
            let s = e.span.unwrap();
            assert_eq!((s.line, s.column), (line, 1), "{src}");
        }
        let e = err("  #error stop \\\n here\n");
        assert_eq!(e.message, "#error stop  here");
        assert_eq!(e.span.unwrap().column, 3);
        let (p, _) = run("#warning careful\nint x;\n", &[]).unwrap();
        assert_eq!(p.warnings.len(), 1);
        assert_eq!(words(&p.text), "int x;");
    }

    #[test]
    fn unknown_directives_and_pragmas_vanish() {
        let src = "#pragma unroll\n#line 7 \"x\"\n# 12 \"y\"\n#\n#ident \"v\"\n#frobnicate\nint x;\n";
        assert_eq!(pp(src), "\n\n\n\n\n\nint x;\n");
        assert_eq!(words(&pp("#define U _Pragma(\"unroll\") for\nU(;;);\n")), "for(;;);");
    }

    #[test]
    fn macro_argument_errors() {
        let e = err("#define F(a, b) a\nF(1)\n");
        assert!(e.message.contains("takes 2"), "{}", e.message);
        assert_eq!(e.span, Some(span(0, 2, 1, 1)));
        let e = err("#define F(a) a\nint x = F(1,\n");
        assert!(e.message.contains("unterminated argument list"), "{}", e.message);
        assert_eq!(e.span, Some(span(0, 2, 9, 1)));
    }

    #[test]
    fn expansion_limits() {
        // 2^40 tokens of output: refused, not computed.
        let mut src = String::from("#define A0 x\n");
        for i in 1..=40 {
            src.push_str(&format!("#define A{i} A{} A{}\n", i - 1, i - 1));
        }
        src.push_str("A40\n");
        assert_eq!(err(&src).kind, ErrorKind::Limit);
        // The same with empty output: bounded by work.
        assert_eq!(err(&src.replace("A0 x", "A0")).kind, ErrorKind::Limit);
        // Deeply nested arguments and expressions fail cleanly.
        let deep = format!("#define F(x) x\n{}1{}\n", "F(".repeat(100_000), ")".repeat(100_000));
        let e = err(&deep);
        assert!(e.message.contains("nested") || e.kind == ErrorKind::Limit, "{}", e.message);
        assert_eq!(words(&pp(&format!("#define F(x) x\n{}1{}\n", "F(".repeat(150), ")".repeat(150)))), "1");
        let deep = format!("#if {}1{}\n#endif\n", "(".repeat(100_000), ")".repeat(100_000));
        assert!(err(&deep).message.contains("nested"));
        let deep = format!("#if {}1\n#endif\n", "~".repeat(100_000));
        assert!(err(&deep).message.contains("nested"));
        // A long chain of distinct macros is fine below the depth limit, refused above it.
        let chain = |n: usize| {
            let mut s: String = (0..n).map(|i| format!("#define C{i} C{}\n", i + 1)).collect();
            s.push_str("C0\n");
            s
        };
        assert_eq!(words(&pp(&chain(500))), "C500");
        assert!(err(&chain(1500)).message.contains("nested"));
    }

    #[test]
    fn locate_maps_expanded_and_plain_text() {
        let src = "#define IDX (threadIdx.x + 1)\n__global__ void k(float *p) {\n  p[IDX] = 0;\n  p[0] = 1;\n}\n";
        let (p, _) = run(src, &[]).unwrap();
        assert_eq!(p.text.lines().nth(2), Some("  p[(threadIdx.x + 1)] = 0;"));
        let (r, c) = find_pos(&p.text, "threadIdx");
        assert_eq!(p.locate(r, c, 11), span(0, 3, 5, 3));
        // After the expansion on the same row: back to the source column.
        let (r, c) = find_pos(&p.text, "] = 0");
        assert_eq!(p.locate(r, c, 1), span(0, 3, 8, 1));
        let (r, c) = find_pos(&p.text, "= 0");
        assert_eq!(p.locate(r, c, 1), span(0, 3, 10, 1));
        // Untouched rows map 1:1.
        assert_eq!(p.locate(3, 2, 1), span(0, 4, 3, 1));
        assert_eq!(p.locate(1, 0, 10), span(0, 2, 1, 10));
        // Out of range positions do not panic.
        let _ = p.locate(1000, 1000, 0);
    }

    #[test]
    fn columns_are_in_characters() {
        let (p, _) = run("/* é */ int x;\n", &[]).unwrap();
        let (r, c) = find_pos(&p.text, "x;");
        assert_eq!(p.locate(r, c, 1), span(0, 1, 13, 1));
    }

    #[test]
    fn crlf_and_raw_strings() {
        let out = pp("#define X 1\r\nint a = X;\r\nconst char *r = R\"d(\n#define X 2\n)d\"; int b = X;\r\n");
        assert!(out.contains("int a = 1;") && out.contains("#define X 2") && out.contains("int b = 1;"), "{out}");
    }

    #[test]
    fn byte_order_mark_and_blank_lookahead() {
        assert_eq!(pp("\u{FEFF}#define X 1\nint a = X;\n"), "   \nint a = 1;\n");
        // Looking for a `(` across blank lines and comments puts them back unchanged.
        let src = "#define F(x) x\nF /* c */\n\n  y\n";
        assert_eq!(pp(src), "\nF /* c */\n\n  y\n");
        let (p, _) = run(&format!("#define F(x) x\nF{}(1) z\n", "\n".repeat(100_000)), &[]).unwrap();
        let (r, c) = find_pos(&p.text, "z");
        assert_eq!(p.locate(r, c, 1), span(0, 100_002, 5, 1));
    }

    #[test]
    fn expansions_in_included_files_map_there() {
        let extra = [("/src/k.h", "#define W 32\n\nint warp = W;\n")];
        let (p, files) = run("int a;\n#include \"k.h\"\nint b = W;\n", &extra).unwrap();
        assert_eq!(p.text, "int a;\n\n\nint warp = 32;\n\nint b = 32;\n");
        let s = p.locate(3, 11, 2);
        assert_eq!((files.path(s.file), s.line, s.column, s.len), (Path::new("/src/k.h"), 3, 12, 1));
        assert_eq!(p.locate(5, 8, 2), span(0, 3, 9, 1));
        assert_eq!(p.locate(5, 0, 3), span(0, 3, 1, 3));
    }

    #[test]
    fn builtin_macros() {
        let out = pp("\nint l = __LINE__; const char *f = __FILE__; int c = __COUNTER__ + __COUNTER__;\n");
        assert_eq!(words(&out), "int l = 2; const char *f = \"/src/main.cu\"; int c = 0 + 1;");
    }

    /// A deterministic generator of junk inputs.
    fn junk(seed: u64, len: usize) -> String {
        const PIECES: [&str; 24] = [
            "#", "define", "if", "elif", "endif", "include", "(", ")", ",", "\\\n", "\n", "/*", "*/", "//", "\"", "'",
            "##", "...", "F", "X", " ", "defined", "é", "\u{0}",
        ];
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut s = String::new();
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            s.push_str(PIECES[(x % PIECES.len() as u64) as usize]);
        }
        s
    }

    #[test]
    fn never_panics_on_junk() {
        for seed in 0..2000 {
            let src = junk(seed, 60);
            if let Ok((p, _)) = run(&src, &[("/src/F", "#define F(x) x x\n")]) {
                for (row, line) in p.text.split('\n').enumerate() {
                    for col in 0..=line.len() {
                        let _ = p.locate(row, col, 1);
                    }
                }
            }
        }
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let _ = run(&String::from_utf8_lossy(&bytes), &[]);
    }

    #[test]
    fn large_input_is_linear() {
        let mut src = String::from("#define F(a, b) ((a) * (b))\n");
        for i in 0..100_000 {
            src.push_str(&format!("x{i} = F(y{i}, 2) + z; // comment F(1, 2)\n"));
        }
        let start = std::time::Instant::now();
        let (p, _) = run(&src, &[]).unwrap();
        assert!(p.text.contains("x99999 = ((y99999) * (2)) + z;"));
        assert!(start.elapsed().as_secs() < 10);
    }
}
