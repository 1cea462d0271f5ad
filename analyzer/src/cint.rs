//! C's integer semantics, in one place: the types (LP64, as nvcc's host compiler on Linux:
//! `char` signed 8 bits, `long` 64), integer literals' types, the integer promotions, the usual
//! arithmetic conversions, wraparound of unsigned arithmetic, conversion (truncation) to a
//! narrower type, and the operations C leaves undefined (signed overflow, division by zero,
//! shifts past the width), which are errors here rather than a guess.
//!
//! Used where the tool evaluates host code's integer expressions (`--launch-site`: a grid
//! expression computed in `unsigned` that wraps, a `const unsigned char` block size). Checked
//! against gcc by `tests/cint_gcc.rs` on random expressions.

use std::fmt;

/// An integer type of C (LP64).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CType {
    Bool,
    Char,
    SChar,
    UChar,
    Short,
    UShort,
    Int,
    UInt,
    Long,
    ULong,
    LongLong,
    ULongLong,
}

impl CType {
    pub fn bits(self) -> u32 {
        match self {
            CType::Bool => 1,
            CType::Char | CType::SChar | CType::UChar => 8,
            CType::Short | CType::UShort => 16,
            CType::Int | CType::UInt => 32,
            _ => 64,
        }
    }
    /// Size in bytes (`sizeof`).
    pub fn size(self) -> u32 {
        match self {
            CType::Bool => 1,
            t => t.bits() / 8,
        }
    }
    pub fn signed(self) -> bool {
        matches!(self, CType::Char | CType::SChar | CType::Short | CType::Int | CType::Long | CType::LongLong)
    }
    /// Conversion rank (C11 6.3.1.1).
    pub fn rank(self) -> u8 {
        match self {
            CType::Bool => 0,
            CType::Char | CType::SChar | CType::UChar => 1,
            CType::Short | CType::UShort => 2,
            CType::Int | CType::UInt => 3,
            CType::Long | CType::ULong => 4,
            CType::LongLong | CType::ULongLong => 5,
        }
    }
    fn unsigned_of(self) -> CType {
        match self {
            CType::Char | CType::SChar => CType::UChar,
            CType::Short => CType::UShort,
            CType::Int => CType::UInt,
            CType::Long => CType::ULong,
            CType::LongLong => CType::ULongLong,
            t => t,
        }
    }
    pub fn min(self) -> i128 {
        if self.signed() {
            -(1i128 << (self.bits() - 1))
        } else {
            0
        }
    }
    pub fn max(self) -> i128 {
        if self.signed() {
            (1i128 << (self.bits() - 1)) - 1
        } else {
            (1i128 << self.bits()) - 1
        }
    }
    /// `v` converted to this type: 0 or 1 for `bool`, else reduced modulo 2^bits into the
    /// type's range (what C requires for unsigned targets and gcc does for signed ones).
    pub fn convert(self, v: i128) -> i128 {
        if self == CType::Bool {
            return (v != 0) as i128;
        }
        let bits = self.bits();
        let m = v & ((1i128 << bits) - 1);
        if self.signed() && m > self.max() {
            m - (1i128 << bits)
        } else {
            m
        }
    }
    /// The integer promotions: anything narrower than `int` becomes `int`.
    pub fn promoted(self) -> CType {
        if self.rank() < CType::Int.rank() {
            CType::Int
        } else {
            self
        }
    }
    /// The usual arithmetic conversions of two (promoted) operand types.
    pub fn common(a: CType, b: CType) -> CType {
        let (a, b) = (a.promoted(), b.promoted());
        if a == b {
            return a;
        }
        if a.signed() == b.signed() {
            return if a.rank() >= b.rank() { a } else { b };
        }
        let (u, s) = if a.signed() { (b, a) } else { (a, b) };
        if u.rank() >= s.rank() {
            u
        } else if s.bits() > u.bits() {
            s
        } else {
            s.unsigned_of()
        }
    }
    /// The C spelling.
    pub fn name(self) -> &'static str {
        match self {
            CType::Bool => "bool",
            CType::Char => "char",
            CType::SChar => "signed char",
            CType::UChar => "unsigned char",
            CType::Short => "short",
            CType::UShort => "unsigned short",
            CType::Int => "int",
            CType::UInt => "unsigned int",
            CType::Long => "long",
            CType::ULong => "unsigned long",
            CType::LongLong => "long long",
            CType::ULongLong => "unsigned long long",
        }
    }
    /// A type as written in a declaration (`const unsigned char`, `size_t`, `uint32_t`,
    /// `long int`); qualifiers and storage classes are dropped. `None` for a type that is not
    /// an integer type this module knows.
    pub fn parse(text: &str) -> Option<CType> {
        let words: Vec<&str> = text
            .split(|c: char| c.is_whitespace())
            .filter(|w| {
                !w.is_empty()
                    && !matches!(
                        *w,
                        "const" | "volatile" | "static" | "constexpr" | "register" | "extern" | "inline" | "auto"
                    )
            })
            .collect();
        let one = |w: &str| -> Option<CType> {
            Some(match w.trim_start_matches("std::") {
                "size_t" | "uint64_t" | "uintptr_t" | "unsigned long" => CType::ULong,
                "ssize_t" | "ptrdiff_t" | "int64_t" | "intptr_t" => CType::Long,
                "uint32_t" | "uint" => CType::UInt,
                "int32_t" => CType::Int,
                "uint16_t" | "ushort" => CType::UShort,
                "int16_t" => CType::Short,
                "uint8_t" | "uchar" => CType::UChar,
                "int8_t" => CType::SChar,
                "bool" | "_Bool" => CType::Bool,
                _ => return None,
            })
        };
        if let [w] = words.as_slice() {
            if let Some(t) = one(w) {
                return Some(t);
            }
        }
        let (mut signed, mut unsigned, mut longs, mut short, mut char, mut int) =
            (false, false, 0, false, false, false);
        for w in &words {
            match *w {
                "signed" => signed = true,
                "unsigned" => unsigned = true,
                "long" => longs += 1,
                "short" => short = true,
                "char" => char = true,
                "int" => int = true,
                _ => return None,
            }
        }
        if words.is_empty() || (signed && unsigned) || longs > 2 || (short && (longs > 0 || char)) {
            return None;
        }
        if char && (int || longs > 0) {
            return None;
        }
        Some(match (char, short, longs, unsigned, signed) {
            (true, _, _, true, _) => CType::UChar,
            (true, _, _, _, true) => CType::SChar,
            (true, _, _, _, _) => CType::Char,
            (_, true, _, true, _) => CType::UShort,
            (_, true, _, _, _) => CType::Short,
            (_, _, 1, true, _) => CType::ULong,
            (_, _, 1, _, _) => CType::Long,
            (_, _, 2, true, _) => CType::ULongLong,
            (_, _, 2, _, _) => CType::LongLong,
            (_, _, _, true, _) => CType::UInt,
            _ => CType::Int,
        })
    }
}

impl fmt::Display for CType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A value of an integer type; `v` is always in the type's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub v: i128,
    pub ty: CType,
}

impl Value {
    pub fn new(v: i128, ty: CType) -> Value {
        Value { v: ty.convert(v), ty }
    }
    /// This value converted to `ty` (assignment, initialisation, a cast, a parameter).
    pub fn to(self, ty: CType) -> Value {
        Value::new(self.v, ty)
    }
}

/// Why an expression has no value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A name with no known integer value.
    Unknown(String),
    /// Something this evaluator does not read (floating point, a call).
    Unsupported(String),
    /// What C leaves undefined (signed overflow, division by zero, a shift past the width).
    Undefined(String),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Unknown(n) => write!(f, "`{n}` has no known integer value"),
            EvalError::Unsupported(m) => write!(f, "{m}"),
            EvalError::Undefined(m) => write!(f, "undefined behaviour in C: {m}"),
        }
    }
}

type EvalResult<T> = std::result::Result<T, EvalError>;

/// A parsed integer expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Lit(Value),
    Name(String),
    Unary(char, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(CType, Box<Expr>),
}

/// The type of an integer literal as written (`10`, `0xffffffff`, `3000000000`, `5u`, `1ull`),
/// C11 6.4.4.1 with LP64's sizes; `None` when it is not one or fits no type.
pub fn literal(text: &str) -> Option<Value> {
    let t = text.replace('\'', "");
    let lower = t.to_ascii_lowercase();
    let body_end = lower.trim_end_matches(['u', 'l']).len();
    let (body, suffix) = lower.split_at(body_end);
    let (digits, radix) = if let Some(h) = body.strip_prefix("0x") {
        (h, 16)
    } else if let Some(b) = body.strip_prefix("0b") {
        (b, 2)
    } else if body.len() > 1 && body.starts_with('0') {
        (&body[1..], 8)
    } else {
        (body, 10)
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    let v = u128::from_str_radix(digits, radix).ok()?;
    if v > u64::MAX as u128 {
        return None;
    }
    let v = v as i128;
    let unsigned = suffix.contains('u');
    let longs = suffix.matches('l').count();
    if suffix.len() != longs + unsigned as usize || longs > 2 || (longs == 2 && !suffix.contains("ll")) {
        return None;
    }
    use CType::*;
    let candidates: &[CType] = match (unsigned, longs, radix == 10) {
        (false, 0, true) => &[Int, Long, LongLong],
        (false, 0, false) => &[Int, UInt, Long, ULong, LongLong, ULongLong],
        (true, 0, _) => &[UInt, ULong, ULongLong],
        (false, 1, true) => &[Long, LongLong],
        (false, 1, false) => &[Long, ULong, LongLong, ULongLong],
        (true, 1, _) => &[ULong, ULongLong],
        (false, _, true) => &[LongLong],
        (false, _, false) => &[LongLong, ULongLong],
        (true, _, _) => &[ULongLong],
    };
    candidates.iter().find(|t| v <= t.max()).map(|&ty| Value { v, ty })
}

/// Parses a C integer expression: literals (with suffixes, `'c'` characters), names (a member
/// `g.x` is one name), unary `+ - ~ !`, the binary operators from `*` to `||`, `?:`, casts
/// `(T)e` and `static_cast<T>(e)` to integer types, and `T(e)` for one-word types.
pub fn parse(text: &str) -> EvalResult<Expr> {
    let mut p = Parser { s: text.as_bytes(), i: 0, depth: 0 };
    let e = p.cond()?;
    p.ws();
    if p.i != p.s.len() {
        return Err(EvalError::Unsupported(format!(
            "unexpected `{}` in `{text}`",
            String::from_utf8_lossy(&p.s[p.i..])
        )));
    }
    Ok(e)
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: u32,
}

const BINARY: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<=", ">=", "<", ">"],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self, t: &str) -> bool {
        self.ws();
        self.s[self.i..].starts_with(t.as_bytes())
    }
    fn eat(&mut self, t: &str) -> bool {
        if self.peek(t) {
            self.i += t.len();
            true
        } else {
            false
        }
    }
    fn deeper(&mut self) -> EvalResult<()> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(EvalError::Unsupported("expression nested too deeply".into()));
        }
        Ok(())
    }
    fn cond(&mut self) -> EvalResult<Expr> {
        self.deeper()?;
        let c = self.binary(0)?;
        let r = if self.eat("?") {
            let a = self.cond()?;
            if !self.eat(":") {
                return Err(EvalError::Unsupported("`?` without `:`".into()));
            }
            let b = self.cond()?;
            Expr::Cond(Box::new(c), Box::new(a), Box::new(b))
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }
    fn binary(&mut self, level: usize) -> EvalResult<Expr> {
        if level == BINARY.len() {
            return self.unary();
        }
        let mut l = self.binary(level + 1)?;
        'outer: loop {
            for &op in BINARY[level] {
                // `&` is not `&&`, `|` not `||`, `<` not `<<` nor `<=`.
                if self.peek(op) {
                    let rest = &self.s[self.i + op.len()..];
                    let longer = matches!((op, rest.first()), ("&", Some(b'&')) | ("|", Some(b'|')))
                        || matches!((op, rest.first()), ("<", Some(b'<' | b'=')) | (">", Some(b'>' | b'=')))
                        || (matches!(op, "<<" | ">>") && rest.first() == Some(&b'='))
                        || rest.first() == Some(&b'=') && matches!(op, "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^");
                    if longer {
                        continue;
                    }
                    self.i += op.len();
                    let r = self.binary(level + 1)?;
                    l = Expr::Binary(op, Box::new(l), Box::new(r));
                    continue 'outer;
                }
            }
            return Ok(l);
        }
    }
    fn unary(&mut self) -> EvalResult<Expr> {
        self.deeper()?;
        self.ws();
        let r = if self.peek("++") || self.peek("--") {
            Err(EvalError::Unsupported("`++`/`--` in a constant".into()))
        } else if let Some(op) = ['+', '-', '~', '!'].into_iter().find(|c| self.peek(&c.to_string())) {
            self.i += 1;
            Ok(Expr::Unary(op, Box::new(self.unary()?)))
        } else {
            self.primary()
        };
        self.depth -= 1;
        r
    }
    /// A type name at the cursor (`unsigned long long`, `size_t`), consumed if it is one.
    fn type_name(&mut self) -> Option<CType> {
        let save = self.i;
        let mut words = Vec::new();
        loop {
            self.ws();
            let start = self.i;
            while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
                self.i += 1;
            }
            if start == self.i {
                break;
            }
            words.push(String::from_utf8_lossy(&self.s[start..self.i]).into_owned());
            // Only a run of keyword-like words makes a type.
            let so_far = words.join(" ");
            if CType::parse(&so_far).is_none()
                && !so_far.split(' ').all(|w| matches!(w, "signed" | "unsigned" | "long" | "short" | "const"))
            {
                words.pop();
                self.i = start;
                break;
            }
        }
        match CType::parse(&words.join(" ")) {
            Some(t) if !words.is_empty() => Some(t),
            _ => {
                self.i = save;
                None
            }
        }
    }
    fn primary(&mut self) -> EvalResult<Expr> {
        self.ws();
        if self.eat("(") {
            let save = self.i;
            if let Some(t) = self.type_name() {
                if self.eat(")") {
                    return Ok(Expr::Cast(t, Box::new(self.unary()?)));
                }
            }
            self.i = save;
            let e = self.cond()?;
            return if self.eat(")") { Ok(e) } else { Err(EvalError::Unsupported("missing `)`".into())) };
        }
        if self.eat("static_cast<") {
            let t = self.type_name().ok_or_else(|| EvalError::Unsupported("a cast to a non-integer type".into()))?;
            if !(self.eat(">") && self.eat("(")) {
                return Err(EvalError::Unsupported("malformed static_cast".into()));
            }
            let e = self.cond()?;
            if !self.eat(")") {
                return Err(EvalError::Unsupported("missing `)`".into()));
            }
            return Ok(Expr::Cast(t, Box::new(e)));
        }
        if self.peek("'") {
            self.i += 1;
            let c = match self.s.get(self.i..self.i + 2) {
                Some([b'\\', e]) => {
                    self.i += 2;
                    match *e {
                        b'n' => 10,
                        b't' => 9,
                        b'0' => 0,
                        b'\\' => 92,
                        b'\'' => 39,
                        _ => return Err(EvalError::Unsupported("a character escape".into())),
                    }
                }
                Some([c, _]) if c.is_ascii() => {
                    self.i += 1;
                    *c as i128
                }
                _ => return Err(EvalError::Unsupported("a character literal".into())),
            };
            if !self.eat("'") {
                return Err(EvalError::Unsupported("a character literal".into()));
            }
            return Ok(Expr::Lit(Value { v: c, ty: CType::Int }));
        }
        let start = self.i;
        loop {
            match self.s.get(self.i) {
                Some(c) if c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.') => self.i += 1,
                // `std::size_t`, `ns::N`: a scope, never the `:` of `?:`.
                Some(b':') if self.s.get(self.i + 1) == Some(&b':') => self.i += 2,
                _ => break,
            }
        }
        let word = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        if word.is_empty() {
            return Err(EvalError::Unsupported(format!(
                "expected a value at `{}`",
                String::from_utf8_lossy(&self.s[start..])
            )));
        }
        if word.as_bytes()[0].is_ascii_digit() {
            return literal(&word)
                .map(Expr::Lit)
                .ok_or_else(|| EvalError::Unsupported(format!("`{word}` is not an integer literal of any type")));
        }
        // `unsigned(x)`, `int(x)`: a functional cast.
        if let Some(t) = CType::parse(&word) {
            if self.eat("(") {
                let e = self.cond()?;
                if !self.eat(")") {
                    return Err(EvalError::Unsupported("missing `)`".into()));
                }
                return Ok(Expr::Cast(t, Box::new(e)));
            }
        }
        if matches!(word.as_str(), "true" | "false") {
            return Ok(Expr::Lit(Value { v: (word == "true") as i128, ty: CType::Bool }));
        }
        if self.peek("(") {
            return Err(EvalError::Unsupported(format!("a call to `{word}`")));
        }
        Ok(Expr::Name(word))
    }
}

/// Names' values: `Ok(None)` for a name with no integer value.
pub trait Env {
    fn value(&self, name: &str) -> EvalResult<Option<Value>>;
}

impl<F: Fn(&str) -> EvalResult<Option<Value>>> Env for F {
    fn value(&self, name: &str) -> EvalResult<Option<Value>> {
        self(name)
    }
}

/// No names.
pub fn no_names(_: &str) -> EvalResult<Option<Value>> {
    Ok(None)
}

/// The type an expression has, without evaluating it (for `?:`, whose arm not taken is never
/// evaluated but still decides the type).
pub fn type_of(e: &Expr, env: &dyn Env) -> EvalResult<CType> {
    Ok(match e {
        Expr::Lit(v) => v.ty,
        Expr::Name(n) => env.value(n)?.ok_or_else(|| EvalError::Unknown(n.clone()))?.ty,
        Expr::Unary('!', _) => CType::Int,
        Expr::Unary(_, a) => type_of(a, env)?.promoted(),
        Expr::Binary(op, a, b) => match *op {
            "<<" | ">>" => type_of(a, env)?.promoted(),
            "==" | "!=" | "<" | ">" | "<=" | ">=" | "&&" | "||" => CType::Int,
            _ => CType::common(type_of(a, env)?, type_of(b, env)?),
        },
        Expr::Cond(_, a, b) => CType::common(type_of(a, env)?, type_of(b, env)?),
        Expr::Cast(t, _) => *t,
    })
}

/// Evaluates an expression with C's rules.
pub fn eval(e: &Expr, env: &dyn Env) -> EvalResult<Value> {
    let ub = |m: String| Err(EvalError::Undefined(m));
    Ok(match e {
        Expr::Lit(v) => *v,
        Expr::Name(n) => env.value(n)?.ok_or_else(|| EvalError::Unknown(n.clone()))?,
        Expr::Cast(t, a) => eval(a, env)?.to(*t),
        Expr::Unary(op, a) => {
            let x = eval(a, env)?;
            let t = x.ty.promoted();
            match op {
                '!' => Value { v: (x.v == 0) as i128, ty: CType::Int },
                '+' => x.to(t),
                '~' => Value::new(!x.v, t),
                _ => {
                    if t.signed() && -x.v > t.max() {
                        return ub(format!("-({}) overflows {t}", x.v));
                    }
                    Value::new(-x.v, t)
                }
            }
        }
        Expr::Cond(c, a, b) => {
            let t = CType::common(type_of(a, env)?, type_of(b, env)?);
            let c = eval(c, env)?;
            (if c.v != 0 { eval(a, env)? } else { eval(b, env)? }).to(t)
        }
        Expr::Binary(op, a, b) => {
            match *op {
                "&&" => {
                    let x = eval(a, env)?;
                    return Ok(Value { v: (x.v != 0 && eval(b, env)?.v != 0) as i128, ty: CType::Int });
                }
                "||" => {
                    let x = eval(a, env)?;
                    return Ok(Value { v: (x.v != 0 || eval(b, env)?.v != 0) as i128, ty: CType::Int });
                }
                _ => {}
            }
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            if matches!(*op, "<<" | ">>") {
                let t = x.ty.promoted();
                let (l, n) = (x.v, y.v);
                if n < 0 || n >= t.bits() as i128 {
                    return ub(format!("a shift by {n} of a {}-bit {t}", t.bits()));
                }
                if *op == ">>" {
                    // gcc shifts negative values arithmetically (implementation-defined).
                    return Ok(Value::new(l >> n, t));
                }
                if t.signed() {
                    if l < 0 {
                        return ub(format!("a left shift of the negative value {l}"));
                    }
                    if (l << n) > t.max() {
                        return ub(format!("{l} << {n} overflows {t}"));
                    }
                }
                // In 128 bits unsigned: a 64-bit value shifted by up to 63 fits, and the
                // conversion keeps the low bits (unsigned wraps).
                return Ok(Value::new(((l as u128) << n) as i128, t));
            }
            let t = CType::common(x.ty, y.ty);
            let (l, r) = (x.to(t).v, y.to(t).v);
            let int = |b: bool| Value { v: b as i128, ty: CType::Int };
            let exact = match *op {
                "+" => l + r,
                "-" => l - r,
                // Signed operands are at most 2^63 in size: the product fits in i128. Unsigned
                // ones wrap, so the low 64 bits of a 128-bit wrapping product are enough.
                "*" if t.signed() => l * r,
                "*" => (l as u128).wrapping_mul(r as u128) as i128,
                "/" | "%" => {
                    if r == 0 {
                        return ub(format!("division by zero ({l} {op} 0)"));
                    }
                    if t.signed() && l == t.min() && r == -1 {
                        return ub(format!("{l} {op} -1 overflows {t}"));
                    }
                    if *op == "/" {
                        l / r
                    } else {
                        l % r
                    }
                }
                "&" => l & r,
                "|" => l | r,
                "^" => l ^ r,
                "==" => return Ok(int(l == r)),
                "!=" => return Ok(int(l != r)),
                "<" => return Ok(int(l < r)),
                ">" => return Ok(int(l > r)),
                "<=" => return Ok(int(l <= r)),
                ">=" => return Ok(int(l >= r)),
                _ => return Err(EvalError::Unsupported(format!("operator `{op}`"))),
            };
            if t.signed() && (exact < t.min() || exact > t.max()) {
                return ub(format!("{l} {op} {r} overflows {t}"));
            }
            Value::new(exact, t)
        }
    })
}

/// Parses and evaluates `text`.
pub fn eval_str(text: &str, env: &dyn Env) -> EvalResult<Value> {
    eval(&parse(text)?, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str) -> EvalResult<Value> {
        eval_str(s, &no_names)
    }

    #[test]
    fn literal_types() {
        assert_eq!(literal("10").unwrap().ty, CType::Int);
        assert_eq!(literal("2147483648").unwrap().ty, CType::Long);
        assert_eq!(literal("0x80000000").unwrap().ty, CType::UInt);
        assert_eq!(literal("0xffffffffffffffff").unwrap().ty, CType::ULong);
        assert_eq!(literal("5u").unwrap().ty, CType::UInt);
        assert_eq!(literal("1ULL").unwrap().ty, CType::ULongLong);
        assert_eq!(literal("010").unwrap().v, 8);
        assert!(literal("18446744073709551615").is_none(), "decimal without u: no signed type holds it");
        assert!(literal("1lul").is_none());
    }

    #[test]
    fn wraps_and_truncates_as_c() {
        // 65536u * 65536u is computed in unsigned int: 2^32 mod 2^32 = 0.
        assert_eq!(ev("65536u * 65536u").unwrap(), Value { v: 0, ty: CType::UInt });
        // 256 + 32 = 288, converted to unsigned char: 288 - 256 = 32.
        assert_eq!(ev("(unsigned char)(256 + 32)").unwrap().v, 32);
        // -1 < 1u: -1 becomes 4294967295 (unsigned int), so false.
        assert_eq!(ev("-1 < 1u").unwrap().v, 0);
        // -1 < 1ul... and -1L < 1u: long holds every unsigned int, so true.
        assert_eq!(ev("-1L < 1u").unwrap().v, 1);
        // unsigned char + unsigned char promotes to int: 200 + 100 = 300.
        assert_eq!(ev("(unsigned char)200 + (unsigned char)100").unwrap(), Value { v: 300, ty: CType::Int });
        assert!(matches!(ev("2147483647 + 1"), Err(EvalError::Undefined(_))));
        assert!(matches!(ev("1 / 0"), Err(EvalError::Undefined(_))));
        assert!(matches!(ev("1 << 32"), Err(EvalError::Undefined(_))));
        assert_eq!(ev("1u << 31").unwrap().v, 1 << 31);
        assert_eq!(ev("-7 / 2").unwrap().v, -3);
        assert_eq!(ev("-7 % 2").unwrap().v, -1);
        assert_eq!(ev("0 ? 1 / 0 : 5u").unwrap(), Value { v: 5, ty: CType::UInt });
        assert_eq!(ev("static_cast<unsigned short>(70000)").unwrap().v, 70000 - 65536);
        assert_eq!(ev("~0u").unwrap().v, u32::MAX as i128);
        assert_eq!(ev("-(-2147483647 - 1L)").unwrap().v, 2147483648);
    }

    #[test]
    fn types_from_declarations() {
        assert_eq!(CType::parse("const unsigned char"), Some(CType::UChar));
        assert_eq!(CType::parse("long int"), Some(CType::Long));
        assert_eq!(CType::parse("unsigned"), Some(CType::UInt));
        assert_eq!(CType::parse("size_t"), Some(CType::ULong));
        assert_eq!(CType::parse("float"), None);
        assert_eq!(CType::parse("dim3"), None);
    }
}
