//! Source files being read: their tokens, the directives (`#include`, `#if` and the other
//! conditionals, `#define`, `#pragma`, `#error`), include guards and `#pragma once`.

use super::*;

/// A source token: a byte range of its file.
#[derive(Clone, Copy, Debug)]
pub(super) struct RawTok {
    pub(super) kind: Kind,
    pub(super) start: usize,
    pub(super) end: usize,
    /// 1-based line, 0-based byte column, and byte offset of the line start.
    pub(super) line: u32,
    pub(super) col: usize,
    pub(super) ls: usize,
}

/// One open conditional (`#if` ... `#endif`).
pub(super) struct Cond {
    /// The enclosing code is active.
    pub(super) parent: bool,
    /// The current branch is active.
    pub(super) active: bool,
    /// Some branch was taken (later `#elif`/`#else` are skipped).
    pub(super) taken: bool,
    pub(super) else_seen: bool,
    pub(super) span: Span,
    pub(super) what: &'static str,
}

/// Include-guard detection: `#ifndef X` first, `#endif` last, nothing outside them.
#[derive(Clone, Debug)]
pub(super) enum Guard {
    Start,
    Open(Rc<str>),
    Closed(Rc<str>),
    No,
}

pub(super) struct Src {
    pub(super) file: FileId,
    pub(super) path: PathBuf,
    pub(super) text: Arc<str>,
    pub(super) pos: usize,
    pub(super) line: u32,
    /// Byte offset of the current line's start.
    pub(super) ls: usize,
    /// Only blanks since the last newline: a `#` here starts a directive.
    pub(super) bol: bool,
    pub(super) conds: Vec<Cond>,
    /// Tokens read ahead (looking for a macro's `(`) and put back.
    pub(super) lookahead: VecDeque<RawTok>,
    /// Looking ahead: stop before a directive instead of running it, so that it runs in order.
    pub(super) peeking: bool,
    pub(super) guard: Guard,
    /// After an included file: the line of the `#include`'s end, for the row map.
    pub(super) resume: u32,
}

impl Src {
    pub(super) fn new(file: FileId, path: PathBuf, text: Arc<str>) -> Src {
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

    pub(super) fn lex(&mut self) -> Option<RawTok> {
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

    pub(super) fn slice(&self, t: &RawTok) -> &str {
        &self.text[t.start..t.end]
    }

    pub(super) fn tok(&self, t: &RawTok, space: bool) -> Tok {
        Tok { kind: t.kind, text: self.slice(t).into(), space, hide: None, gen: false }
    }

    pub(super) fn active(&self) -> bool {
        // The innermost conditional decides; outside of any, code is active.
        self.conds.last().map(|c| c.active).unwrap_or(true)
    }

    /// Span of `len` bytes at byte `abs`, found by walking from a known (line, line start).
    pub(super) fn span_at(&self, mut line: u32, mut ls: usize, abs: usize, len: usize) -> Span {
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

    pub(super) fn span(&self, t: &RawTok) -> Span {
        self.span_at(t.line, t.ls, t.start, t.end - t.start)
    }

    pub(super) fn dir(&self) -> PathBuf {
        self.path.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

/// Lexical normalization (`a/./b/../c` -> `a/c`) so that one file has one key.
pub(super) fn normalize(p: &Path) -> PathBuf {
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
pub(super) fn header_name(spec: &str) -> Option<(String, bool)> {
    let close = match spec.as_bytes().first()? {
        b'"' => b'"',
        b'<' => b'>',
        _ => return None,
    };
    let end = spec.as_bytes()[1..].iter().position(|&c| c == close || c == b'\n')? + 1;
    (spec.as_bytes()[end] == close).then(|| (spec[1..end].to_string(), close == b'>'))
}

impl Pp<'_> {
    /// Copies or expands the root file and, in place of each `#include`, the included file.
    /// Open files are kept on an explicit stack, not by recursion, so that a deep include chain
    /// cannot overflow the native stack.
    pub(super) fn run(&mut self, root: Src) -> Result<()> {
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
    pub(super) fn token(&mut self, s: &mut Src, t: RawTok) -> Result<()> {
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

    pub(super) fn finish_file(&mut self, s: &Src) -> Result<()> {
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

    pub(super) fn emit_src(&mut self, s: &Src, t: &RawTok) {
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

    pub(super) fn emit_gen(&mut self, toks: &[Tok], span: Span) -> Result<()> {
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
    pub(super) fn src_next(&mut self, s: &mut Src) -> Result<Option<RawTok>> {
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
    pub(super) fn directive(&mut self, s: &mut Src, hash: RawTok) -> Result<()> {
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
            // `#pragma unroll`, `#pragma unroll N` (or `(N)`, or a macro meaning N): how nvcc
            // unrolls the next loop.
            "pragma" if args.iter().find(|t| t.kind != Kind::Space).is_some_and(|t| &*t.text == "unroll") => {
                let toks = self.expand(args, None, Ctx { span, if_mode: false })?;
                let words: Vec<&str> = toks
                    .iter()
                    .filter(|t| !matches!(t.kind, Kind::Space | Kind::Newline) && !matches!(&*t.text, "(" | ")"))
                    .map(|t| &*t.text)
                    .collect();
                let pragma = match words[1..] {
                    [] => UnrollPragma::Full,
                    [w] => match w.trim_end_matches(['u', 'U', 'l', 'L']).parse::<u32>() {
                        Ok(n) => UnrollPragma::By(n.max(1)),
                        Err(_) => UnrollPragma::Unknown,
                    },
                    _ => UnrollPragma::Unknown,
                };
                self.unroll_pragmas.push((span.file, span.line, pragma));
            }
            "error" => return Err(perr(span, format!("#error {rest}"))),
            "warning" => self.warnings.push(perr(span, format!("#warning {rest}"))),
            // `#line N ["file"]` (macros expanded): the next line is line N for `__LINE__`.
            "line" => {
                let toks = self.expand(args, None, Ctx { span, if_mode: false })?;
                let mut words = toks.iter().filter(|t| !matches!(t.kind, Kind::Space | Kind::Newline));
                let n = line_number("#line", words.next(), words.next(), span)?;
                self.line_shift.insert(s.file, n as i64 - (last_line as i64 + 1));
            }
            // `# N "file"` line markers (what `cpp` writes) mean the same.
            "" if toks.first().is_some_and(|(t, _)| t.kind == Kind::Number) => {
                let mut words = toks.iter().map(|(t, _)| t).filter(|t| !matches!(t.kind, Kind::Space | Kind::Newline));
                let n = line_number("#", words.next(), words.next(), span)?;
                self.line_shift.insert(s.file, n as i64 - (last_line as i64 + 1));
            }
            _ => {} // #ident, unknown directives
        }
        Ok(())
    }

    /// The value of the condition of `#if`/`#elif` (or of the `def` forms).
    pub(super) fn condition(&mut self, directive: &str, args: &[Tok], span: Span) -> Result<bool> {
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

    pub(super) fn find_include(&mut self, dir: &Path, name: &str, angle: bool) -> Option<PathBuf> {
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
    pub(super) fn load(&mut self, p: &Path) -> bool {
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

    pub(super) fn include(&mut self, s: &mut Src, name: &str, angle: bool, span: Span, last_line: u32) -> Result<()> {
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
            let dir = s.dir().display().to_string();
            let mut searched = vec![if dir.is_empty() { ".".to_string() } else { dir }];
            searched.extend(self.opts.include_dirs.iter().map(|d| d.display().to_string()));
            let e = perr(span, format!("cannot find include file \"{name}\""))
                .note(format!("searched: {}", searched.join(", ")));
            if self.tolerant {
                self.missing_includes.push(e);
                return Ok(());
            }
            return Err(e);
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
}

/// The line number of `#line N ["file"]` (or a `# N "file"` marker) as GCC reads it: a decimal
/// digit sequence (a leading 0 is still decimal; `0x10` or a name is an error), kept modulo
/// 2^32 as GCC's unsigned line numbers are (with a warning there, silently here), and an
/// optional file name that must be a string.
fn line_number(directive: &str, n: Option<&Tok>, file: Option<&Tok>, span: Span) -> Result<u32> {
    let Some(n) = n else {
        return Err(perr(span, format!("{directive} without a line number")));
    };
    if n.kind != Kind::Number || !n.text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(perr(span, format!("\"{}\" after {directive} is not a positive integer", n.text)));
    }
    let v = n.text.bytes().fold(0u32, |v, d| v.wrapping_mul(10).wrapping_add((d - b'0') as u32));
    if let Some(f) = file.filter(|f| f.kind != Kind::Str) {
        return Err(perr(span, format!("invalid file name \"{}\" after {directive} {}", f.text, n.text)));
    }
    Ok(v)
}
