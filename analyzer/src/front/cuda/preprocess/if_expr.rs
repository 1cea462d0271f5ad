//! `#if` expressions, evaluated as C does in `intmax_t`/`uintmax_t`.

use super::*;

/// A value of an `#if` expression: C evaluates them in `intmax_t`/`uintmax_t`.
pub(super) type Val = (u64, bool);

pub(super) type ExprResult<T> = std::result::Result<T, String>;

pub(super) struct Expr<'a> {
    pub(super) t: &'a [Tok],
    pub(super) i: usize,
    pub(super) depth: u32,
}

pub(super) fn prec(op: &str) -> Option<u8> {
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
    pub(super) fn peek(&self) -> &'a str {
        let t: &'a [Tok] = self.t;
        t.get(self.i).filter(|t| t.kind == Kind::Punct).map_or("", |t| &t.text)
    }

    pub(super) fn enter(&mut self) -> ExprResult<()> {
        self.depth += 1;
        if self.depth > MAX_EXPR_DEPTH {
            return Err("expression nested too deeply".into());
        }
        Ok(())
    }

    pub(super) fn expect(&mut self, p: &str) -> ExprResult<()> {
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
    pub(super) fn comma(&mut self, ev: bool) -> ExprResult<Val> {
        let mut v = self.cond(ev)?;
        while self.peek() == "," {
            self.i += 1;
            v = self.cond(ev)?;
        }
        Ok(v)
    }

    pub(super) fn cond(&mut self, ev: bool) -> ExprResult<Val> {
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
    pub(super) fn binary(&mut self, min: u8, ev: bool) -> ExprResult<Val> {
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

    pub(super) fn unary(&mut self, ev: bool) -> ExprResult<Val> {
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

    pub(super) fn primary(&mut self) -> ExprResult<Val> {
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

pub(super) fn arith(op: &str, l: Val, r: Val, ev: bool) -> ExprResult<Val> {
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
pub(super) fn parse_int(text: &str) -> ExprResult<Val> {
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
pub(super) fn parse_char(text: &str) -> u64 {
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
