//! `nvdisasm -c -gi` text -> functions of [`Instr`]s with their line info.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::sass::*;
use std::collections::HashMap;

/// One instruction of a listing: offset, text, line-info frames innermost first.
pub(super) type ListingLine = (u32, String, Vec<(String, u32)>);

/// One function as printed: its instructions with offsets relative to its start, the labels
/// it defines (label -> offset) and the functions it calls.
#[derive(Debug, Default)]
pub(super) struct RawFunction {
    pub name: String,
    /// (offset, text, line-info frames innermost first).
    pub lines: Vec<ListingLine>,
    pub labels: HashMap<String, u32>,
}

/// Splits the listing into functions.
pub(super) fn functions(listing: &str) -> Vec<RawFunction> {
    let mut out: Vec<RawFunction> = Vec::new();
    let mut frames: Vec<(String, u32)> = Vec::new();
    let mut pending_labels: Vec<String> = Vec::new();
    for line in listing.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("//--------------------- .text.") {
            let name = rest.trim_end_matches('-').trim().to_string();
            out.push(RawFunction { name, ..Default::default() });
            frames.clear();
            pending_labels.clear();
            continue;
        }
        let Some(f) = out.last_mut() else { continue };
        if let Some(rest) = t.strip_prefix("//## File ") {
            let parsed = parse_frames(rest);
            // `-gi` prints the whole inlining chain, then the outermost frame alone: keep the
            // longer chain.
            if !(parsed.len() == 1 && frames.len() > 1 && frames.last() == parsed.last()) {
                frames = parsed;
            }
            continue;
        }
        if t.starts_with("/*") {
            let Some(end) = t.find("*/") else { continue };
            let Ok(offset) = u32::from_str_radix(&t[2..end], 16) else { continue };
            let text = t[end + 2..].trim().trim_end_matches(';').trim().to_string();
            for l in pending_labels.drain(..) {
                f.labels.insert(l, offset);
            }
            f.lines.push((offset, text, frames.clone()));
            continue;
        }
        if let Some(label) = t.strip_suffix(':') {
            if !label.contains(' ') && !label.starts_with('.') || label.starts_with(".L") {
                pending_labels.push(label.to_string());
            }
        }
    }
    out
}

/// `"a.cu", line 3 inlined at "b.cu", line 9` -> [(a.cu, 3), (b.cu, 9)].
fn parse_frames(s: &str) -> Vec<(String, u32)> {
    let mut v = Vec::new();
    for part in s.split(" inlined at ") {
        let part = part.trim();
        let Some(rest) = part.strip_prefix('"') else { continue };
        let Some(q) = rest.find('"') else { continue };
        let file = rest[..q].to_string();
        let line =
            rest[q + 1..].trim_start_matches(',').trim().strip_prefix("line ").and_then(|n| n.trim().parse().ok());
        if let Some(line) = line {
            v.push((file, line));
        }
    }
    v
}

fn unsupported(msg: String) -> Diagnostic {
    Diagnostic::new(ErrorKind::Unsupported, msg)
}

/// Splits operands at top-level commas.
fn split_operands(s: &str) -> Vec<String> {
    let mut v = Vec::new();
    let (mut depth, mut tick, mut cur) = (0i32, false, String::new());
    for c in s.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            '`' => tick = !tick,
            _ => {}
        }
        // `RET.REL.NODEC R10 `(fn)`: the register and the function, with no comma between.
        if c == '`' && tick && depth == 0 && cur.ends_with(' ') && !cur.trim().is_empty() {
            v.push(cur.trim().to_string());
            cur.clear();
        }
        if c == ',' && depth == 0 && !tick {
            v.push(cur.trim().to_string());
            cur.clear();
        } else {
            cur.push(c);
        }
    }
    if !cur.trim().is_empty() {
        v.push(cur.trim().to_string());
    }
    v
}

fn parse_int(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = s.strip_prefix("0x") { u64::from_str_radix(h, 16).ok()? as i64 } else { return None };
    Some(if neg { v.wrapping_neg() } else { v })
}

fn parse_reg(s: &str) -> Option<Reg> {
    let (mut neg, mut not, mut abs) = (false, false, false);
    let mut s = s;
    loop {
        if let Some(r) = s.strip_prefix('-') {
            neg = true;
            s = r;
        } else if let Some(r) = s.strip_prefix('~') {
            not = true;
            s = r;
        } else if let Some(r) = s.strip_prefix('|').and_then(|r| r.strip_suffix('|').or(Some(r))) {
            abs = true;
            s = r;
        } else {
            break;
        }
    }
    let s = s.trim_end_matches('|');
    let mut parts = s.split('.');
    let base = parts.next()?;
    let (uniform, idx) = if let Some(r) = base.strip_prefix("UR") {
        (true, r)
    } else if let Some(r) = base.strip_prefix('R') {
        (false, r)
    } else {
        return None;
    };
    let index = if idx == "Z" { RZ } else { idx.parse::<u8>().ok()? };
    let mut wide = false;
    let mut part = (0, 32);
    for p in parts {
        match p {
            "64" => wide = true,
            "B0" | "B1" | "B2" | "B3" => part = (8 * (p.as_bytes()[1] - b'0'), 8),
            "H0" | "H1" => part = (16 * (p.as_bytes()[1] - b'0'), 16),
            _ => {}
        }
    }
    Some(Reg { index, wide, neg, not, abs, uniform, part })
}

fn parse_pred(s: &str) -> Option<PredReg> {
    let (not, s) = match s.strip_prefix('!') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (uniform, r) = if let Some(r) = s.strip_prefix("UP") {
        (true, r)
    } else if let Some(r) = s.strip_prefix('P') {
        (false, r)
    } else {
        return None;
    };
    let index = if r == "T" { PT } else { r.parse::<u8>().ok().filter(|&i| i < 7)? };
    Some(PredReg { index, not, uniform })
}

/// `R2.64+UR4+0x10`, `R0.X4+UR4`, `UR4+-0x4`.
fn parse_address(s: &str) -> Option<(Address, Option<u8>)> {
    let mut a = Address::default();
    let mut scale = None;
    let s = s.replace("+-", "-");
    let mut terms: Vec<(bool, String)> = Vec::new();
    let mut cur = String::new();
    let mut neg = false;
    for c in s.chars() {
        if (c == '+' || c == '-') && !cur.is_empty() {
            terms.push((neg, std::mem::take(&mut cur)));
            neg = c == '-';
        } else if c == '-' && cur.is_empty() {
            neg = true;
        } else if c != '+' {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        terms.push((neg, cur));
    }
    for (neg, t) in terms {
        let t = t.trim();
        if t.is_empty() {
            continue;
        }
        if let Some(v) = parse_int(t) {
            a.offset += if neg { -v } else { v };
        } else if let Some(r) = parse_reg(t) {
            for m in t.split('.').skip(1) {
                if let Some(x) = m.strip_prefix('X').and_then(|x| x.parse::<u8>().ok()) {
                    scale = Some(x);
                }
            }
            if r.uniform {
                a.ureg = Some(r);
            } else {
                a.reg = Some(r);
            }
        } else {
            return None;
        }
    }
    Some((a, scale))
}

fn parse_operand(s: &str, labels: &dyn Fn(&str) -> Option<usize>) -> Operand {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix("desc[") {
        // desc[UR4][R2.64+0x10]
        if let Some(i) = rest.find("][") {
            let inner = rest[i + 2..].trim_end_matches(']');
            if let Some((mut a, scale)) = parse_address(inner) {
                a.desc = true;
                a.scale = scale.unwrap_or(1);
                return Operand::Mem(a);
            }
        }
        return Operand::Other(s.to_string());
    }
    if let Some(inner) = s.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return match parse_address(inner) {
            Some((mut a, scale)) => {
                a.scale = scale.unwrap_or(1);
                Operand::Mem(a)
            }
            None => Operand::Other(s.to_string()),
        };
    }
    if let Some(rest) = s.strip_prefix("c[") {
        if let Some(i) = rest.find("][") {
            if let Some(bank) = parse_int(&rest[..i]) {
                let inner = rest[i + 2..].trim_end_matches(']');
                if let Some((a, None)) = parse_address(inner) {
                    if a.ureg.is_none() {
                        return Operand::Const(ConstRef {
                            bank: bank as u32,
                            reg: a.reg.filter(|r| r.index != RZ),
                            offset: a.offset,
                        });
                    }
                }
            }
        }
        return Operand::Other(s.to_string());
    }
    if let Some(inner) = s.strip_prefix("`(").and_then(|r| r.strip_suffix(")`").or_else(|| r.strip_suffix(')'))) {
        return match labels(inner.trim()) {
            Some(i) => Operand::Target(i),
            None => Operand::Other(s.to_string()),
        };
    }
    for (prefix, hi) in [("32@lo(", false), ("32@hi(", true)] {
        if let Some(inner) = s.strip_prefix(prefix) {
            if hi {
                return Operand::LabelValue(0);
            }
            let inner = inner.trim_matches(|c| c == '(' || c == ')');
            // `(fn + .L_x_3)`: the label's address.
            let label = inner.rsplit('+').next().unwrap_or(inner).trim();
            return match labels(label) {
                Some(i) => Operand::LabelValue(i as i64),
                None => Operand::Other(s.to_string()),
            };
        }
    }
    if let Some(p) = parse_pred(s) {
        return Operand::Pred(p);
    }
    if let Some(r) = parse_reg(s) {
        return Operand::Reg(r);
    }
    if s.starts_with("SR_") || s == "SRZ" {
        return Operand::Special(crate::ir::sass::Special::parse(s));
    }
    if let Some(b) = s.strip_prefix('B').and_then(|b| b.parse::<u8>().ok()) {
        return Operand::Barrier(b);
    }
    if let Some(v) = parse_int(s) {
        return Operand::Int(v);
    }
    if let Some(f) = crate::ir::sass::parse_f32(s) {
        return Operand::Float(f);
    }
    Operand::Other(s.to_string())
}

/// One instruction's text -> [`Instr`]; `labels` resolves a branch target to an index.
pub(super) fn instr(
    offset: u32,
    text: &str,
    loc: Option<Loc>,
    labels: &dyn Fn(&str) -> Option<usize>,
) -> Result<Instr> {
    let mut rest = text.trim();
    let mut guard = None;
    if let Some(r) = rest.strip_prefix('@') {
        let (g, r) = r.split_once(' ').unwrap_or((r, ""));
        let pred = parse_pred(g)
            .ok_or_else(|| unsupported(format!("SASS at 0x{offset:04x}: cannot read the guard `@{g}`")))?;
        guard = Some(Guard { pred });
        rest = r.trim();
    }
    let (mnemonic, ops) = rest.split_once(' ').unwrap_or((rest, ""));
    let mut parts = mnemonic.split('.');
    let opcode = parts.next().unwrap_or("").to_string();
    let mods: Vec<String> = parts.map(str::to_string).collect();
    let operands = split_operands(ops).iter().map(|o| parse_operand(o, labels)).collect();
    Ok(Instr { offset, guard, opcode, mods, operands, loc, text: text.to_string() })
}
