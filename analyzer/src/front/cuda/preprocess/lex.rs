//! Lexing: source text into tokens (lazily, as byte ranges) and the tokens macro processing
//! works on, each with its hide set.

use super::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
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

pub(super) const BOM: &str = "\u{FEFF}";

pub(super) fn is_id_start(c: u8) -> bool {
    // Bytes >= 0x80 are parts of UTF-8 characters: treating them as identifier bytes keeps every
    // token boundary on a character boundary.
    c.is_ascii_alphabetic() || c == b'_' || c == b'$' || c >= 0x80
}

pub(super) fn is_id(c: u8) -> bool {
    is_id_start(c) || c.is_ascii_digit()
}

/// Lexes one token at `b[i]` (`i < b.len()`); returns its kind and end. Always advances and
/// only stops on character boundaries.
pub(super) fn lex(b: &[u8], i: usize) -> (Kind, usize) {
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

pub(super) fn space_end(b: &[u8], mut i: usize) -> usize {
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

pub(super) fn find(b: &[u8], from: usize, pat: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(pat.len()).position(|w| w == pat).map(|p| p + from)
}

/// End of a quoted literal starting at `b[i]`; an unterminated one ends at the end of its line.
pub(super) fn quoted(b: &[u8], i: usize) -> usize {
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
pub(super) fn raw_string(b: &[u8], q: usize) -> usize {
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

pub(super) fn number_end(b: &[u8], mut i: usize) -> usize {
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

pub(super) fn punct_len(b: &[u8]) -> usize {
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
pub(super) type Hide = Option<Rc<[u32]>>;

pub(super) fn hide_has(h: &Hide, id: u32) -> bool {
    h.as_ref().is_some_and(|h| h.binary_search(&id).is_ok())
}

pub(super) fn hide_len(h: &Hide) -> usize {
    h.as_ref().map_or(0, |h| h.len())
}

pub(super) fn hide_add(h: &Hide, id: u32) -> Hide {
    let mut v = h.as_deref().map_or_else(Vec::new, <[u32]>::to_vec);
    if let Err(p) = v.binary_search(&id) {
        v.insert(p, id);
    }
    Some(v.into())
}

pub(super) fn hide_inter(a: &Hide, b: &Hide) -> Hide {
    let (Some(a), Some(b)) = (a, b) else {
        return None;
    };
    let v: Vec<u32> = a.iter().copied().filter(|x| b.binary_search(x).is_ok()).collect();
    (!v.is_empty()).then(|| v.into())
}

pub(super) fn hide_union(a: &Hide, b: &Hide) -> Hide {
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
pub(super) struct Tok {
    pub(super) kind: Kind,
    pub(super) text: Rc<str>,
    /// Whitespace preceded it (kept for `#` stringification and output spacing).
    pub(super) space: bool,
    pub(super) hide: Hide,
    /// Produced by an expansion (as opposed to read from the source unchanged).
    pub(super) gen: bool,
}

impl Tok {
    pub(super) fn new(kind: Kind, text: &str) -> Tok {
        Tok { kind, text: text.into(), space: false, hide: None, gen: true }
    }
    pub(super) fn is(&self, p: &str) -> bool {
        self.kind == Kind::Punct && &*self.text == p
    }
}

/// Lexes a string into tokens (dropping blanks), with their byte offsets.
pub(super) fn lex_toks(s: &str) -> Vec<(Tok, usize)> {
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
pub(super) fn join_tokens(toks: &[Tok]) -> String {
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
pub(super) fn hazard(a: u8, b: u8) -> bool {
    const OPS: &[u8] = b"+-*/%<>=!&|^#:.";
    (is_id(a) && (is_id(b) || b == b'"' || b == b'\''))
        || (a.is_ascii_digit() && b == b'.')
        || (a == b'.' && b.is_ascii_digit())
        || (OPS.contains(&a) && OPS.contains(&b))
}
