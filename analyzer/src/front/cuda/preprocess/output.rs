//! The output text with its position map: every row's segments say where its bytes came from.

use super::*;

pub(super) struct Out {
    pub(super) text: String,
    pub(super) rows: Vec<usize>,
    pub(super) segs: Vec<Seg>,
    /// Bytes written on the current row.
    pub(super) col: usize,
    /// Source line the current row stands for.
    pub(super) file: FileId,
    pub(super) line: u32,
    pub(super) last_gen: bool,
}

impl Out {
    pub(super) fn new(file: FileId) -> Out {
        let segs = vec![Seg { out_col: 0, file, line: 1, col: 0, len: 0 }];
        Out { text: String::new(), rows: vec![0], segs, col: 0, file, line: 1, last_gen: false }
    }

    pub(super) fn start_row(&mut self, file: FileId, line: u32) {
        self.text.push('\n');
        self.rows.push(self.segs.len());
        self.segs.push(Seg { out_col: 0, file, line, col: 0, len: 0 });
        (self.col, self.file, self.line) = (0, file, line);
    }

    /// Makes the current row stand for `line` of `file` (a new row if this one has text).
    pub(super) fn retarget(&mut self, file: FileId, line: u32) {
        if self.col != 0 {
            return self.start_row(file, line);
        }
        let first = self.rows.last().copied().unwrap_or(0);
        self.segs.truncate(first);
        self.segs.push(Seg { out_col: 0, file, line, col: 0, len: 0 });
        (self.file, self.line) = (file, line);
    }

    /// Emits empty rows until the current row stands for `line`.
    pub(super) fn sync(&mut self, file: FileId, line: u32) {
        while self.line < line {
            self.start_row(file, self.line + 1);
        }
    }

    /// Writes source text that starts at (`line`, byte `col`).
    pub(super) fn src(&mut self, s: &str, file: FileId, line: u32, col: usize) {
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
    pub(super) fn gen(&mut self, s: &str, span: Span) {
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
