//! Just enough of ELF64 to read a cubin: its kernels (entry symbols), their parameter layout
//! (`.nv.info.<kernel>`: `EIATTR_KPARAM_INFO`) and static shared memory (`.nv.shared.<kernel>`).

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::sass::ParamSlot;

pub(super) struct Section<'a> {
    pub name: String,
    pub kind: u32,
    pub size: u64,
    pub data: &'a [u8],
    pub link: u32,
}

fn bad(why: &str) -> Diagnostic {
    Diagnostic::new(ErrorKind::Unsupported, format!("not a readable cubin: {why}"))
}

fn u16_at(d: &[u8], o: usize) -> Result<u16> {
    d.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]])).ok_or_else(|| bad("truncated"))
}
fn u32_at(d: &[u8], o: usize) -> Result<u32> {
    d.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).ok_or_else(|| bad("truncated"))
}
fn u64_at(d: &[u8], o: usize) -> Result<u64> {
    d.get(o..o + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8]))).ok_or_else(|| bad("truncated"))
}

/// Whether `d` starts like an ELF64 little-endian file.
pub(super) fn is_elf(d: &[u8]) -> bool {
    d.len() > 0x40 && &d[..4] == b"\x7fELF" && d[4] == 2 && d[5] == 1
}

/// The ELF machine number of CUDA (EM_CUDA).
const EM_CUDA: u16 = 190;

pub(super) fn is_cubin(d: &[u8]) -> bool {
    is_elf(d) && u16_at(d, 0x12).is_ok_and(|m| m == EM_CUDA)
}

pub(super) fn sections(d: &[u8]) -> Result<Vec<Section<'_>>> {
    if !is_elf(d) {
        return Err(bad("no ELF64 header"));
    }
    let shoff = u64_at(d, 0x28)? as usize;
    let shentsize = u16_at(d, 0x3a)? as usize;
    let shnum = u16_at(d, 0x3c)? as usize;
    let shstrndx = u16_at(d, 0x3e)? as usize;
    let mut raw = Vec::with_capacity(shnum);
    for i in 0..shnum {
        let o = shoff
            .checked_add(i.checked_mul(shentsize).ok_or_else(|| bad("section table"))?)
            .ok_or_else(|| bad("section table"))?;
        let name = u32_at(d, o)?;
        let kind = u32_at(d, o + 4)?;
        let off = u64_at(d, o + 0x18)? as usize;
        let size = u64_at(d, o + 0x20)?;
        let link = u32_at(d, o + 0x28)?;
        raw.push((name, kind, off, size, link));
    }
    let strtab = raw.get(shstrndx).ok_or_else(|| bad("no section names"))?;
    let names = d.get(strtab.2..strtab.2.saturating_add(strtab.3 as usize)).ok_or_else(|| bad("section names"))?;
    let name_at = |n: u32| -> String {
        let s = names.get(n as usize..).unwrap_or(&[]);
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        String::from_utf8_lossy(&s[..end]).into_owned()
    };
    Ok(raw
        .into_iter()
        .map(|(name, kind, off, size, link)| {
            // NOBITS (8) sections have a size but no bytes in the file.
            let data = if kind == 8 { &[][..] } else { d.get(off..off.saturating_add(size as usize)).unwrap_or(&[]) };
            Section { name: name_at(name), kind, size, data, link }
        })
        .collect())
}

/// The entry (`__global__`) symbols, in symbol-table order.
pub(super) fn entries(d: &[u8], secs: &[Section]) -> Result<Vec<String>> {
    let Some(symtab) = secs.iter().find(|s| s.kind == 2) else { return Ok(Vec::new()) };
    let strtab = secs.get(symtab.link as usize).ok_or_else(|| bad("symbol names"))?;
    let _ = d;
    let mut out = Vec::new();
    for sym in symtab.data.chunks_exact(24) {
        let name = u32::from_le_bytes([sym[0], sym[1], sym[2], sym[3]]) as usize;
        let info = sym[4];
        let other = sym[5];
        // STT_FUNC with STO_CUDA_ENTRY.
        if info & 0xf == 2 && other & 0x10 != 0 {
            let s = strtab.data.get(name..).unwrap_or(&[]);
            let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
            out.push(String::from_utf8_lossy(&s[..end]).into_owned());
        }
    }
    Ok(out)
}

/// The kernel's parameters in bank 0 (offset order), from `EIATTR_KPARAM_INFO` (0x17) and
/// `EIATTR_PARAM_CBANK` (0x0a, where the parameters start).
pub(super) fn params(secs: &[Section], symbol: &str) -> Result<Vec<ParamSlot>> {
    let Some(info) = secs.iter().find(|s| s.name == format!(".nv.info.{symbol}")) else { return Ok(Vec::new()) };
    let b = info.data;
    let mut base = 0x210u32;
    let mut slots: Vec<(u16, ParamSlot)> = Vec::new();
    let mut i = 0usize;
    while i + 4 <= b.len() {
        let (fmt, attr) = (b[i], b[i + 1]);
        match fmt {
            // EIFMT_SVAL: a 16-bit size and that many bytes.
            4 => {
                let size = u16_at(b, i + 2)? as usize;
                let val = b.get(i + 4..i + 4 + size).ok_or_else(|| bad(".nv.info truncated"))?;
                if attr == 0x17 && val.len() >= 12 {
                    let ordinal = u16::from_le_bytes([val[4], val[5]]);
                    let offset = u16::from_le_bytes([val[6], val[7]]) as u32;
                    let flags = u32::from_le_bytes([val[8], val[9], val[10], val[11]]);
                    slots.push((ordinal, ParamSlot { offset, size: (flags >> 18) & 0x3fff }));
                } else if attr == 0x0a && val.len() >= 8 {
                    base = u16::from_le_bytes([val[4], val[5]]) as u32;
                }
                i += 4 + size;
            }
            1..=3 => i += 4,
            _ => return Err(bad(".nv.info attribute format")),
        }
    }
    slots.sort_by_key(|s| s.0);
    Ok(slots.into_iter().map(|(_, s)| ParamSlot { offset: base + s.offset, size: s.size }).collect())
}

/// Static shared memory of the kernel.
pub(super) fn shared_bytes(secs: &[Section], symbol: &str) -> u64 {
    secs.iter().find(|s| s.name == format!(".nv.shared.{symbol}")).map_or(0, |s| s.size)
}
