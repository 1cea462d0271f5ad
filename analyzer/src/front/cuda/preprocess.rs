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
//!
//! This file holds the options, the result with its position map, and the preprocessor's state;
//! `lex.rs` makes tokens, `directives.rs` reads source files and runs their directives,
//! `macros.rs` expands macros, `if_expr.rs` evaluates `#if` expressions, `output.rs` writes the
//! output rows and their segments.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::UnrollPragma;
use crate::source::{FileId, FileLoader, SourceFiles, Span};
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

mod directives;
mod if_expr;
mod lex;
mod macros;
mod output;

use directives::*;
use if_expr::*;
use lex::*;
use macros::*;
use output::*;

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
    /// Project headers not found ([`preprocess_tolerant`] only), each as its error.
    pub missing_includes: Vec<Diagnostic>,
    /// `#pragma unroll` lines met in active code (file, line and [`UnrollPragma`]), for the loop
    /// that follows ([`Preprocessed::unroll_pragma`]).
    pub unroll_pragmas: Vec<(FileId, u32, UnrollPragma)>,
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
    /// The `#pragma unroll` just above a loop starting at `span` (on one of the three lines
    /// before it, in the same file), if any.
    pub fn unroll_pragma(&self, span: Span) -> Option<UnrollPragma> {
        self.unroll_pragmas
            .iter()
            .rev()
            .find(|&&(f, l, _)| f == span.file && l < span.line && span.line - l <= 3)
            .map(|p| p.2)
    }

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

/// Preprocesses `root` (already in `files`); included files are added to `files`. A project
/// header (`#include "..."`) that cannot be found is an error.
pub fn preprocess(
    files: &mut SourceFiles,
    root: FileId,
    opts: &PreprocessOptions,
    loader: &dyn FileLoader,
) -> Result<Preprocessed> {
    preprocess_with(files, root, opts, loader, false)
}

/// [`preprocess`], going on past a project header that cannot be found (a `config.h` the build
/// generates): each one is in [`Preprocessed::missing_includes`], as the error it would have been,
/// for the front end to decide whether the kernels needed it.
pub fn preprocess_tolerant(
    files: &mut SourceFiles,
    root: FileId,
    opts: &PreprocessOptions,
    loader: &dyn FileLoader,
) -> Result<Preprocessed> {
    preprocess_with(files, root, opts, loader, true)
}

fn preprocess_with(
    files: &mut SourceFiles,
    root: FileId,
    opts: &PreprocessOptions,
    loader: &dyn FileLoader,
    tolerant: bool,
) -> Result<Preprocessed> {
    let Some(file) = files.files.get(root.0 as usize) else {
        return Err(Diagnostic::new(ErrorKind::Preprocess, "unknown root file"));
    };
    let text: Arc<str> = file.text.as_str().into();
    let path = file.path.clone();
    let mut pp = Pp::new(files, loader, opts, root, &path);
    pp.tolerant = tolerant;
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
        // GCC's spellings of the qualifiers, which nvcc's host compiler takes: the grammar knows
        // `__restrict__` after a type name (`const T __restrict p`) and `const`.
        ("__restrict", "__restrict__"),
        ("__const__", "const"),
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
    let Pp { out, tables, warnings, missing_includes, unroll_pragmas, .. } = pp;
    Ok(Preprocessed {
        text: out.text,
        warnings,
        missing_includes,
        unroll_pragmas,
        rows: out.rows,
        segs: out.segs,
        lines: tables,
    })
}

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
    unroll_pragmas: Vec<(FileId, u32, UnrollPragma)>,
    /// Go on past a project header that cannot be found, keeping its error here.
    tolerant: bool,
    missing_includes: Vec<Diagnostic>,
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
    /// `#line N` (and `# N "file"` markers) per file: the presumed line minus the physical one,
    /// for `__LINE__` (C11 6.10.4: the next source line has line number N).
    line_shift: HashMap<FileId, i64>,
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
            unroll_pragmas: Vec::new(),
            tolerant: false,
            missing_includes: Vec::new(),
            pending: None,
            open_files: 1,
            nesting: 0,
            collecting: 0,
            work: 0,
            work_mark: 0,
            counter: 0,
            cur_path: path.to_path_buf(),
            line_shift: HashMap::new(),
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
}

#[cfg(test)]
mod tests;
