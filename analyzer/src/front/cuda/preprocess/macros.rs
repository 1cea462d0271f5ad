//! Macro definitions and expansion (Prosser's algorithm: hide sets, argument pre-expansion,
//! `#` and `##`), and the builtin macros.

use super::*;

pub(super) struct Macro {
    /// Interned name, the element of hide sets.
    pub(super) id: u32,
    /// `None` for object-like macros.
    pub(super) params: Option<Vec<Rc<str>>>,
    /// The last parameter takes the remaining arguments (`...` or `name...`).
    pub(super) variadic: bool,
    /// Body tokens, each with the index of the parameter it names.
    pub(super) body: Vec<(Tok, Option<usize>)>,
}

pub(super) struct MacroDef {
    pub(super) name: Rc<str>,
    pub(super) params: Option<Vec<Rc<str>>>,
    pub(super) variadic: bool,
    pub(super) body: Vec<(Tok, Option<usize>)>,
}

/// Parses the tokens after `#define`.
pub(super) fn parse_define(toks: &[Tok]) -> std::result::Result<MacroDef, String> {
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
pub(super) fn stringify(arg: &[Tok]) -> Tok {
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
pub(super) fn paste(l: &Tok, r: &Tok) -> Vec<Tok> {
    let mut toks: Vec<Tok> = lex_toks(&format!("{}{}", l.text, r.text)).into_iter().map(|(t, _)| t).collect();
    if let Some(f) = toks.first_mut() {
        f.space = l.space;
    }
    toks
}

/// Removes `( ... )` from the top of `stack`; returns what was inside.
pub(super) fn take_parens(stack: &mut Vec<Tok>) -> Option<Vec<Tok>> {
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
pub(super) struct Ctx {
    /// Where errors are reported: the outermost macro name, or the `#if` directive.
    pub(super) span: Span,
    /// Expanding an `#if` expression: `defined` and `__has_include` are operators.
    pub(super) if_mode: bool,
}

impl Pp<'_> {
    /// Fully expands `toks`. With `src`, a function-like macro name at the end may take its
    /// arguments from the following source text.
    pub(super) fn expand(&mut self, toks: Vec<Tok>, src: Option<&mut Src>, ctx: Ctx) -> Result<Vec<Tok>> {
        if self.nesting >= MAX_ARG_NESTING {
            return Err(perr(ctx.span, "macro arguments nested too deeply"));
        }
        self.nesting += 1;
        let r = self.expand_inner(toks, src, ctx);
        self.nesting -= 1;
        r
    }

    pub(super) fn expand_inner(&mut self, toks: Vec<Tok>, mut src: Option<&mut Src>, ctx: Ctx) -> Result<Vec<Tok>> {
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
    pub(super) fn if_operator(&mut self, t: &Tok, stack: &mut Vec<Tok>, out: &mut Vec<Tok>, ctx: Ctx) -> Result<bool> {
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
            // C++'s alternative tokens are operators, not identifiers (`#if not defined(X)`).
            alt @ ("not" | "and" | "or" | "bitand" | "bitor" | "xor" | "compl" | "not_eq") => {
                let op = match alt {
                    "not" => "!",
                    "and" => "&&",
                    "or" => "||",
                    "bitand" => "&",
                    "bitor" => "|",
                    "xor" => "^",
                    "compl" => "~",
                    _ => "!=",
                };
                out.push(Tok::new(Kind::Punct, op));
                return Ok(true);
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
    pub(super) fn builtin(
        &mut self,
        t: &Tok,
        stack: &mut Vec<Tok>,
        mut src: Option<&mut Src>,
        out: &mut Vec<Tok>,
        ctx: Ctx,
    ) -> Result<bool> {
        let mut tok = match &*t.text {
            "__LINE__" => {
                let shift = self.line_shift.get(&ctx.span.file).copied().unwrap_or(0);
                // Line numbers are unsigned 32-bit, as GCC's (`#line 4294967295` wraps after).
                Tok::new(Kind::Number, &(ctx.span.line as i64 + shift).rem_euclid(1 << 32).to_string())
            }
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
    pub(super) fn peek_lparen(&mut self, stack: &mut Vec<Tok>, src: Option<&mut Src>) -> Result<bool> {
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
    pub(super) fn collect_args(
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

    pub(super) fn collect_args_inner(
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
    pub(super) fn subst(
        &mut self,
        m: &Macro,
        args: &[Vec<Tok>],
        hide: &Hide,
        space: bool,
        ctx: Ctx,
    ) -> Result<Vec<Tok>> {
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
