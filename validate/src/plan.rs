//! Everything about a case that can be decided on the host, without a GPU: the cases of an
//! examples folder and their predictions, the size and placement of every buffer (from the
//! analyzer's per-parameter footprints), the bytes written into it (the manifest's fills), and
//! the scalar arguments in the form the kernel's PTX declares them.

use crate::cuda::ParamSig;
use crate::ptx::PtxParam;
use anyhow::{anyhow, bail, Context, Result};
use sector_analyzer::ir::Ty;
use sector_analyzer::manifest::{examples_in, Case, Manifest, Scalar};
use sector_analyzer::sheet::{ArgValue, Footprint, Sheet};
use sector_analyzer::Fill;
use std::path::{Path, PathBuf};

/// One case of one example, with the analyzer's prediction (or why there is none).
#[derive(Clone, Debug)]
pub struct CaseSpec {
    /// The example's file stem (`vec_add` for `examples/vec_add.cu`).
    pub example: String,
    pub source: PathBuf,
    pub case: Case,
    pub prediction: std::result::Result<Sheet, String>,
}

/// Every case of every example in `dir`, in file order then manifest order. `only` keeps the
/// named cases (an unknown name is an error). Rust examples are left out: they are not launched.
pub fn load_cases(dir: &Path, only: &[String]) -> Result<Vec<CaseSpec>> {
    let mut out = Vec::new();
    let pairs = examples_in(dir);
    if pairs.is_empty() {
        bail!("no examples (NAME.cu with NAME.toml) in {}", dir.display());
    }
    for (source, manifest_path) in pairs {
        if source.extension().is_some_and(|e| e == "rs") {
            continue;
        }
        let manifest = Manifest::load(&manifest_path).map_err(|d| anyhow!("{}", d.message))?;
        let example = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        for case in manifest.cases {
            if !only.is_empty() && !only.contains(&case.name) {
                continue;
            }
            let prediction = predict(&source, &case);
            out.push(CaseSpec { example: example.clone(), source: source.clone(), case, prediction });
        }
    }
    for name in only {
        if !out.iter().any(|c| &c.case.name == name) {
            bail!("no case named `{name}` in {}", dir.display());
        }
    }
    Ok(out)
}

/// Runs the analyzer on one case. A panic inside the analyzer becomes an error for this case.
pub fn predict(source: &Path, case: &Case) -> std::result::Result<Sheet, String> {
    let opts = case.options().map_err(|d| d.message)?;
    let run = std::panic::catch_unwind(|| {
        sector_analyzer::analyze(sector_analyzer::Input::File(source), &opts, &sector_analyzer::source::DiskLoader)
            .map(|a| a.sheet)
            .map_err(|f| f.one_line())
    });
    match run {
        Ok(r) => r,
        Err(_) => Err("the analyzer panicked on this case".into()),
    }
}

/// How one scalar component of an element is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    Int(u32),
    Float(u32),
    /// A type the validator does not know (a struct, a template parameter, a macro): filled as
    /// an integer of its size.
    Unknown(u32),
}

impl Component {
    pub fn bytes(self) -> u32 {
        match self {
            Component::Int(b) | Component::Float(b) | Component::Unknown(b) => b,
        }
    }
}

/// The element type behind a type name: its component and the number of components
/// (`float4` is four 4-byte floats), as the analyzer lays the type out
/// ([`sector_analyzer::front::cuda::component_layout`]). `None` when the name is unknown.
pub fn type_layout(name: &str) -> Option<(Component, u32)> {
    let words: Vec<&str> = name
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile" | "__restrict__" | "__restrict" | "restrict" | "struct"))
        .collect();
    let n = words.join(" ");
    let n = n.strip_prefix("std::").unwrap_or(&n);
    let (scalar, count) = sector_analyzer::front::cuda::component_layout(n)?;
    let component = match scalar {
        Ty::Float(bytes) => Component::Float(u32::from(bytes)),
        other => Component::Int(other.size() as u32),
    };
    Some((component, count))
}

/// Where a kernel's pointer points inside its allocation, and how big the allocation is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// Bytes from the allocation's (256-byte aligned) start to the pointer passed to the kernel.
    pub ptr_offset: u64,
    /// Bytes allocated.
    pub bytes: u64,
}

/// Extra room on both sides when a footprint is incomplete (data-dependent addresses the
/// analyzer could not know).
pub const INCOMPLETE_MARGIN: i64 = 1 << 20;

fn round_up(v: i64, to: i64) -> i64 {
    (v + to - 1).div_euclid(to) * to
}

/// Sizes a buffer from a footprint: the pointer is `offset` bytes past a 256-byte boundary
/// (as the analyzer assumed) and bytes `min_byte .. end_byte` around it are inside the
/// allocation.
pub fn place(min_byte: i64, end_byte: i64, offset: i64, complete: bool) -> Placement {
    let margin = if complete { 0 } else { INCOMPLETE_MARGIN };
    let off = offset.rem_euclid(256);
    let before = (-min_byte).max(0) + margin;
    let a = off + round_up((before - off).max(0), 256);
    let end = a + end_byte.max(0) + margin;
    let bytes = round_up(end.max(a + 1), 256).max(256);
    Placement { ptr_offset: a as u64, bytes: bytes as u64 }
}

/// One device buffer: its placement and contents.
#[derive(Clone, Debug)]
pub struct BufferPlan {
    pub param: String,
    pub placement: Placement,
    /// Bytes per element of the pointer's type.
    pub elem_bytes: u32,
    pub component: Component,
    pub fill: Option<Fill>,
    pub footprint: Option<Footprint>,
}

fn encode(component: Component, value: f64, int_value: i64, out: &mut [u8]) {
    match component {
        Component::Float(4) => out.copy_from_slice(&(value as f32).to_le_bytes()),
        Component::Float(8) => out.copy_from_slice(&value.to_le_bytes()),
        Component::Float(2) => out.copy_from_slice(&f32_to_f16_bits(value as f32).to_le_bytes()),
        c => {
            let b = int_value.to_le_bytes();
            let n = (c.bytes() as usize).min(8).min(out.len());
            out[..n].copy_from_slice(&b[..n]);
        }
    }
}

/// IEEE half from single (round to nearest even; enough for small integers and 1.0).
pub fn f32_to_f16_bits(v: f32) -> u16 {
    let x = v.to_bits();
    let sign = ((x >> 16) & 0x8000) as u16;
    let exp = ((x >> 23) & 0xff) as i32;
    let man = x & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = (man | 0x80_0000) >> (1 - e);
        let round = (m >> 12) & 1 != 0 && ((m & 0x1fff) != 0x1000 || (m >> 13) & 1 != 0);
        return sign | ((m >> 13) as u16 + round as u16);
    }
    let mut h = sign as u32 | ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && h & 1 != 0) {
        h += 1;
    }
    h as u16
}

impl BufferPlan {
    /// The allocation's contents: element `k` of the pointer (the pointer being
    /// `placement.ptr_offset` bytes in) holds the fill's value `k`, written as the pointer's
    /// element type (each component of a vector type gets it). Without a fill, floating-point
    /// buffers hold 1.0 and integer buffers 0.
    pub fn host_bytes(&self) -> Vec<u8> {
        let mut buf = vec![0u8; self.placement.bytes as usize];
        let stride = self.elem_bytes.max(1) as i64;
        let comp = self.component.bytes().max(1) as i64;
        let ncomp = (stride / comp).max(1);
        let table = self.fill.as_ref().and_then(|f| f.table());
        let start = self.placement.ptr_offset as i64;
        let k_lo = -(start / stride);
        let k_hi = (buf.len() as i64 - start) / stride;
        let float = matches!(self.component, Component::Float(_));
        if self.fill.is_none() && !float {
            return buf;
        }
        for k in k_lo..k_hi {
            let pos = start + k * stride;
            if pos < 0 || pos + stride > buf.len() as i64 {
                continue;
            }
            let v = match &self.fill {
                Some(f) => f.value(k, table.as_deref()).unwrap_or(0),
                None => 1,
            };
            for c in 0..ncomp {
                let p = (pos + c * comp) as usize;
                encode(self.component, v as f64, v, &mut buf[p..p + comp as usize]);
            }
        }
        buf
    }
}

/// A scalar argument, as passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgBytes {
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ArgPlan {
    /// The pointer into `buffers[i]`.
    Buffer(usize),
    Value(ArgBytes),
}

/// Everything a launch needs, decided on the host.
#[derive(Clone, Debug)]
pub struct LaunchPlan {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory per block (the manifest's `shared_bytes`).
    pub shared_bytes: u32,
    pub buffers: Vec<BufferPlan>,
    pub args: Vec<ArgPlan>,
}

fn scalar_value(name: &str, sheet: &Sheet, case: &Case) -> Option<(i128, f64)> {
    if let Some(v) = sheet.launch.args.get(name) {
        return Some(match *v {
            ArgValue::Int(i) => (i, i as f64),
            ArgValue::Float(f) => (f as i128, f),
        });
    }
    match case.args.get(name)? {
        Scalar::Int(i) => Some((*i as i128, *i as f64)),
        Scalar::Float(f) => Some((*f as i128, *f)),
        Scalar::Str(s) => {
            let t = s.trim();
            if let Ok(i) = t.parse::<i128>() {
                Some((i, i as f64))
            } else {
                t.parse::<f64>().ok().map(|f| (f as i128, f))
            }
        }
    }
}

fn encode_scalar(bytes: u32, float: bool, int: i128, f: f64) -> Result<ArgBytes> {
    Ok(match (bytes, float) {
        (4, true) => ArgBytes::F32(f as f32),
        (8, true) => ArgBytes::F64(f),
        (2, true) => ArgBytes::U16(f32_to_f16_bits(f as f32)),
        (1, false) => ArgBytes::U8(int as u8),
        (2, false) => ArgBytes::U16(int as u16),
        (4, false) => ArgBytes::U32(int as u32),
        (8, false) => ArgBytes::U64(int as u64),
        _ => bail!("a {bytes}-byte scalar parameter is not supported"),
    })
}

/// Builds the launch of one case from the kernel's declared parameters, the PTX's view of
/// them (when compiled; it decides scalar widths) and the analyzer's sheet.
pub fn plan_launch(params: &[ParamSig], ptx: Option<&[PtxParam]>, sheet: &Sheet, case: &Case) -> Result<LaunchPlan> {
    if let Some(p) = ptx {
        if p.len() != params.len() {
            bail!("the kernel's source declares {} parameters but its PTX entry has {}", params.len(), p.len());
        }
    }
    let mut buffers = Vec::new();
    let mut args = Vec::new();
    for (i, param) in params.iter().enumerate() {
        let declared = ptx.map(|p| &p[i]);
        if declared.is_some_and(|d| d.aggregate) {
            bail!("parameter `{}` is a struct passed by value: not supported", param.name);
        }
        if param.pointer {
            let footprint = sheet.footprints.iter().find(|f| f.param == param.name).cloned();
            let layout = type_layout(&param.base_type);
            let elem_bytes = match (&layout, &footprint) {
                (Some((c, n)), _) => c.bytes() * n,
                // A structure of 4 GiB or more per element is past any buffer a harness allocates.
                (None, Some(f)) => u32::try_from(f.elem_bytes.max(1)).unwrap_or(u32::MAX),
                (None, None) => 4,
            };
            let component = layout.map(|l| l.0).unwrap_or(Component::Unknown(elem_bytes.min(8)));
            let offset = case.offsets.get(&param.name).copied().unwrap_or(0);
            let placement = match &footprint {
                Some(f) => place(f.min_byte, f.end_byte, offset, f.complete),
                None => place(0, 0, offset, true),
            };
            let fill = match case.fills.get(&param.name) {
                Some(text) => Some(Fill::parse(text).map_err(|d| anyhow!("{}", d.message))?),
                None => None,
            };
            buffers.push(BufferPlan { param: param.name.clone(), placement, elem_bytes, component, fill, footprint });
            args.push(ArgPlan::Buffer(buffers.len() - 1));
        } else {
            let layout = type_layout(&param.base_type);
            let (bytes, float) = match (declared, layout) {
                (Some(d), _) => (d.bytes, d.float),
                (None, Some((c, 1))) => (c.bytes(), matches!(c, Component::Float(_))),
                (None, _) => bail!("cannot tell the size of parameter `{}` ({})", param.name, param.base_type),
            };
            let (int, f) = scalar_value(&param.name, sheet, case).unwrap_or((0, 1.0));
            let value = encode_scalar(bytes, float, int, f).with_context(|| format!("parameter `{}`", param.name))?;
            args.push(ArgPlan::Value(value));
        }
    }
    let shared_bytes =
        u32::try_from(case.shared_bytes).map_err(|_| anyhow!("shared_bytes {} is too large", case.shared_bytes))?;
    Ok(LaunchPlan { grid: sheet.launch.grid, block: sheet.launch.block, shared_bytes, buffers, args })
}

/// NVRTC options for a case: line info (so Nsight Compute maps SASS to source lines), the
/// case's `-D`s, the file's own folder and CUDA's include folder for `#include`s.
pub fn nvrtc_options(case: &Case, source: &Path, cuda_include: Option<&Path>) -> Vec<String> {
    let mut o = vec!["-lineinfo".to_string()];
    for (k, v) in &case.defines {
        o.push(format!("-D{k}={}", v.as_text()));
    }
    if let Some(dir) = source.parent() {
        let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
        o.push(format!("-I{}", dir.display()));
    }
    if let Some(inc) = cuda_include {
        o.push(format!("-I{}", inc.display()));
        // CUDA 13 keeps libcu++ (`<cuda/pipeline>`, `<cuda/std/...>`, which cooperative groups
        // include) under include/cccl.
        let cccl = inc.join("cccl");
        if cccl.is_dir() {
            o.push(format!("-I{}", cccl.display()));
        }
    }
    o
}

/// The file's text followed by the files it includes with `#include "..."` from its own folder
/// (transitively, each once): a kernel defined in an included file (`#include "kernels.cu"`) is
/// found there, as nvcc finds it.
pub fn with_quoted_includes(source: &Path, text: &str) -> String {
    let mut out = text.to_string();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut todo: Vec<(PathBuf, String)> = vec![(source.to_path_buf(), text.to_string())];
    while let Some((path, body)) = todo.pop() {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        for line in body.lines() {
            let Some(rest) = line.trim_start().strip_prefix('#') else { continue };
            let Some(rest) = rest.trim_start().strip_prefix("include") else { continue };
            let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) else { continue };
            let p = dir.join(name);
            if seen.contains(&p) || seen.len() >= 64 {
                continue;
            }
            seen.push(p.clone());
            if let Ok(t) = std::fs::read_to_string(&p) {
                out.push('\n');
                out.push_str(&t);
                todo.push((p, t));
            }
        }
    }
    out
}

/// CUDA's include folder, where one is installed (`$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`).
pub fn cuda_include_dir() -> Option<PathBuf> {
    cuda_roots().into_iter().map(|r| r.join("include")).find(|p| p.join("cuda_fp16.h").exists())
}

/// Where a CUDA toolkit may be installed, in the order looked at: `$CUDA_HOME`, `$CUDA_PATH`,
/// `$CUDA_ROOT`, then `/usr/local/cuda`.
pub fn cuda_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> =
        ["CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"].iter().filter_map(|v| std::env::var_os(v).map(PathBuf::from)).collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots
}

/// A dry run of one case, without a GPU: the launch as planned from the source's declarations
/// (the PTX, which decides scalar widths on a GPU, is not consulted), for `sector-validate plan`.
pub fn describe(spec: &CaseSpec) -> String {
    use std::fmt::Write;
    let mut s = format!("{} ({}, kernel {})\n", spec.case.name, spec.source.display(), spec.case.kernel);
    let sheet = match &spec.prediction {
        Ok(sheet) => sheet,
        Err(e) => return s + &format!("  no prediction: {e}\n"),
    };
    let text = match sector_analyzer::source::read_source(&spec.source) {
        Ok(t) => t,
        Err(e) => return s + &format!("  cannot read the source: {e}\n"),
    };
    let (_, blanked) = crate::cuda::strip_host_code(&text);
    let sigs = crate::cuda::kernel_signatures(&with_quoted_includes(&spec.source, &text), &spec.case.kernel);
    let Some(sig) = sigs.first() else {
        return s + "  no __global__ definition of the kernel found\n";
    };
    match plan_launch(sig, None, sheet, &spec.case) {
        Err(e) => {
            let _ = writeln!(s, "  cannot plan: {e:#}");
        }
        Ok(p) => {
            let _ = writeln!(
                s,
                "  grid {:?} block {:?}, {} bytes of dynamic shared memory; {blanked} host-code \
                 regions would be blanked if NVRTC refused the file",
                p.grid, p.block, p.shared_bytes
            );
            for (param, arg) in sig.iter().zip(&p.args) {
                match arg {
                    ArgPlan::Buffer(i) => {
                        let b = &p.buffers[*i];
                        let fp = b
                            .footprint
                            .as_ref()
                            .map(|f| {
                                format!(
                                    "bytes {}..{}{}",
                                    f.min_byte,
                                    f.end_byte,
                                    if f.complete { "" } else { " (incomplete)" }
                                )
                            })
                            .unwrap_or_else(|| "not accessed".into());
                        let _ = writeln!(
                            s,
                            "  {} {} *: {fp}; {} bytes allocated, pointer at +{}; {} elements of {} bytes as {:?}; fill {}",
                            param.base_type,
                            param.name,
                            b.placement.bytes,
                            b.placement.ptr_offset,
                            (b.placement.bytes - b.placement.ptr_offset) / b.elem_bytes.max(1) as u64,
                            b.elem_bytes,
                            b.component,
                            b.fill.as_ref().map(|f| f.to_string()).unwrap_or_else(|| "default".into())
                        );
                    }
                    ArgPlan::Value(v) => {
                        let _ = writeln!(s, "  {} {} = {v:?}", param.base_type, param.name);
                    }
                }
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placement_aligned_and_offset() {
        // 1 MiB of floats from the pointer, no offset: pointer at the allocation's start.
        assert_eq!(place(0, 4 << 20, 0, true), Placement { ptr_offset: 0, bytes: 4 << 20 });
        // Offset 4: pointer 4 bytes past the boundary, allocation covers its end.
        let p = place(0, 1000, 4, true);
        assert_eq!(p.ptr_offset, 4);
        assert!(p.bytes >= 1004 && p.bytes.is_multiple_of(256));
        // Negative reach (a[i-1]): room before the pointer, pointer still `offset` past 256.
        let p = place(-4, 4096, 12, true);
        assert_eq!(p.ptr_offset % 256, 12);
        assert!(p.ptr_offset >= 4);
        assert!(p.bytes as i64 >= p.ptr_offset as i64 + 4096);
        let p = place(-300, 10, 0, true);
        assert_eq!(p.ptr_offset, 512);
        // Nothing touched: one small buffer.
        assert_eq!(place(0, 0, 0, true), Placement { ptr_offset: 0, bytes: 256 });
        // Incomplete footprints get a margin on both sides.
        let p = place(0, 1024, 0, false);
        assert!(p.ptr_offset as i64 >= INCOMPLETE_MARGIN);
        assert!(p.bytes as i64 >= p.ptr_offset as i64 + 1024 + INCOMPLETE_MARGIN);
    }

    #[test]
    fn layouts() {
        assert_eq!(type_layout("float"), Some((Component::Float(4), 1)));
        assert_eq!(type_layout("const unsigned int"), Some((Component::Int(4), 1)));
        assert_eq!(type_layout("float4"), Some((Component::Float(4), 4)));
        assert_eq!(type_layout("double2"), Some((Component::Float(8), 2)));
        assert_eq!(type_layout("uchar4"), Some((Component::Int(1), 4)));
        assert_eq!(type_layout("long long"), Some((Component::Int(8), 1)));
        assert_eq!(type_layout("__half"), Some((Component::Float(2), 1)));
        // As the analyzer reads them: bfloat16 is a 2-byte float, C's size words in any order.
        assert_eq!(type_layout("__nv_bfloat16"), Some((Component::Float(2), 1)));
        assert_eq!(type_layout("__half2"), Some((Component::Float(2), 2)));
        assert_eq!(type_layout("cuComplex"), Some((Component::Float(4), 2)));
        assert_eq!(type_layout("unsigned short int"), Some((Component::Int(2), 1)));
        assert_eq!(type_layout("long unsigned int"), Some((Component::Int(8), 1)));
        assert_eq!(type_layout("signed char"), Some((Component::Int(1), 1)));
        assert_eq!(type_layout("T"), None);
        assert_eq!(type_layout("my_struct"), None);
    }

    fn buffer(fill: Option<&str>, component: Component, elem: u32, ptr_offset: u64, bytes: u64) -> BufferPlan {
        BufferPlan {
            param: "p".into(),
            placement: Placement { ptr_offset, bytes },
            elem_bytes: elem,
            component,
            fill: fill.map(|f| Fill::parse(f).unwrap()),
            footprint: None,
        }
    }

    fn ints(b: &[u8]) -> Vec<i32> {
        b.chunks(4).map(|c| i32::from_le_bytes(c.try_into().unwrap())).collect()
    }

    #[test]
    fn fills_are_written_as_the_element_type() {
        let b = buffer(Some("identity"), Component::Int(4), 4, 0, 256).host_bytes();
        assert_eq!(ints(&b)[..5], [0, 1, 2, 3, 4]);
        assert_eq!(ints(&b).len(), 64);
        let b = buffer(Some("constant:7"), Component::Int(4), 4, 0, 256).host_bytes();
        assert!(ints(&b).iter().all(|&v| v == 7));
        // A permutation: exactly the analyzer's table.
        let f = Fill::parse("permutation:64:1").unwrap();
        let t = f.table().unwrap();
        let b = buffer(Some("permutation:64:1"), Component::Int(4), 4, 0, 256).host_bytes();
        assert_eq!(ints(&b), t.iter().map(|&v| v as i32).collect::<Vec<_>>());
        // Uniform: element-addressable, same as Fill::value.
        let b = buffer(Some("uniform:0:100:3"), Component::Int(4), 4, 0, 256).host_bytes();
        let f = Fill::parse("uniform:0:100:3").unwrap();
        for (k, v) in ints(&b).iter().enumerate() {
            assert_eq!(*v as i64, f.value(k as i64, None).unwrap());
        }
        // 8-byte integers and floats.
        let b = buffer(Some("identity"), Component::Int(8), 8, 0, 256).host_bytes();
        assert_eq!(i64::from_le_bytes(b[24..32].try_into().unwrap()), 3);
        let b = buffer(Some("identity"), Component::Float(4), 4, 0, 256).host_bytes();
        assert_eq!(f32::from_le_bytes(b[8..12].try_into().unwrap()), 2.0);
    }

    #[test]
    fn element_zero_sits_at_the_pointer() {
        // The pointer is 8 bytes into the allocation: elements -2 and -1 come before it.
        let b = buffer(Some("identity"), Component::Int(4), 4, 8, 256).host_bytes();
        assert_eq!(ints(&b)[..4], [-2, -1, 0, 1]);
    }

    #[test]
    fn defaults_without_fill() {
        let b = buffer(None, Component::Float(4), 16, 0, 256).host_bytes();
        assert!(b.chunks(4).all(|c| f32::from_le_bytes(c.try_into().unwrap()) == 1.0));
        let b = buffer(None, Component::Int(4), 4, 0, 256).host_bytes();
        assert!(b.iter().all(|&x| x == 0));
        let b = buffer(None, Component::Float(8), 8, 0, 256).host_bytes();
        assert_eq!(f64::from_le_bytes(b[0..8].try_into().unwrap()), 1.0);
    }

    #[test]
    fn half_conversion() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(2.0), 0x4000);
        assert_eq!(f32_to_f16_bits(0.0), 0);
        assert_eq!(f32_to_f16_bits(-1.0), 0xbc00);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
    }

    #[test]
    fn scalars_follow_the_ptx() {
        assert_eq!(encode_scalar(4, false, -1, 0.0).unwrap(), ArgBytes::U32(u32::MAX));
        assert_eq!(encode_scalar(8, false, 1 << 40, 0.0).unwrap(), ArgBytes::U64(1 << 40));
        assert_eq!(encode_scalar(4, true, 0, 2.5).unwrap(), ArgBytes::F32(2.5));
        assert!(encode_scalar(3, false, 0, 0.0).is_err());
    }
}
