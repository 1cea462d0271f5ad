//! A SASS kernel as the engines' kernel: named parameters with their types, and one memory
//! operation per memory instruction, placed at the source line the line table gives.

use super::Declaration;
use crate::diag::Result;
use crate::front::builder::KernelBuilder;
use crate::front::cuda::types::named_type;
use crate::ir::sass::{classify, SassKernel};
use crate::ir::{Kernel, Param, PtrTy, Space, Ty};
use crate::source::{SourceFiles, Span};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Bytes of a source file the lift reads to show a row's line (larger files show no text).
const MAX_SOURCE_BYTES: u64 = 8 << 20;

/// A C type as a demangler prints it (`float const*`, `unsigned int`, `Params`): its IR type.
/// `size` is the parameter's size in bank 0 (a structure passed by value).
pub fn type_of(text: &str, size: u32) -> Ty {
    let stars = text.matches('*').count() + text.matches('&').count();
    let words: Vec<&str> = text
        .split(|c: char| c == '*' || c == '&' || c.is_whitespace())
        .filter(|w| !w.is_empty() && !matches!(*w, "const" | "volatile" | "__restrict__" | "__restrict" | "restrict"))
        .collect();
    let name = words.join(" ");
    let is_const = text.contains("const");
    let restrict = text.contains("restrict");
    let scalar = named_type(&name)
        .unwrap_or_else(|| Ty::Vector { name: name.clone(), bytes: if stars == 0 { size as u64 } else { 1 } });
    let mut ty = scalar;
    for k in 0..stars {
        let last = k + 1 == stars;
        ty = Ty::Ptr(Box::new(PtrTy {
            pointee: ty,
            space: Space::Global,
            is_const,
            restrict: restrict && last,
            volatile: false,
        }));
    }
    ty
}

/// Where the lift finds source lines: the input's own file and any other file the line table
/// names, read once each.
pub struct Lines<'a> {
    pub files: &'a mut SourceFiles,
    /// The input file's id and its path as the compiler saw it.
    pub root: Option<(crate::source::FileId, PathBuf)>,
    /// The compiled input's folder, where a source the line table names by a path that does not
    /// exist here is looked for by its file name (a cubin built on another machine).
    beside: Option<PathBuf>,
    ids: HashMap<String, crate::source::FileId>,
}

/// Where the source file `path` (as a line table names it) is on this machine: the path
/// itself, or a file of that name in `beside`.
pub fn source_path(path: &str, beside: Option<&Path>) -> Option<PathBuf> {
    let p = Path::new(path);
    if p.is_file() {
        return Some(p.to_path_buf());
    }
    let near = beside?.join(p.file_name()?);
    near.is_file().then_some(near)
}

impl<'a> Lines<'a> {
    pub fn new(files: &'a mut SourceFiles, root: Option<(crate::source::FileId, PathBuf)>) -> Self {
        Lines { files, root, beside: None, ids: HashMap::new() }
    }

    /// Sources the line table names by paths that do not exist here are looked for in `folder`.
    pub fn beside(mut self, folder: Option<PathBuf>) -> Self {
        self.beside = folder;
        self
    }

    fn file(&mut self, named: &str) -> crate::source::FileId {
        if let Some(&id) = self.ids.get(named) {
            return id;
        }
        let found = source_path(named, self.beside.as_deref()).filter(|_| self.root.is_none());
        let path = found.as_ref().and_then(|p| p.to_str()).unwrap_or(named);
        let canon = std::fs::canonicalize(path).ok();
        let id = match &self.root {
            Some((id, root)) if canon.is_some() && std::fs::canonicalize(root).ok() == canon => *id,
            Some((id, root)) if Path::new(path).file_name() == root.file_name() && canon.is_none() => *id,
            _ => {
                let text = std::fs::metadata(path)
                    .ok()
                    .filter(|m| m.is_file() && m.len() <= MAX_SOURCE_BYTES)
                    .and_then(|_| std::fs::read(path).ok())
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                self.files.add(PathBuf::from(path), text)
            }
        };
        self.ids.insert(named.to_string(), id);
        id
    }
}

/// The engines' kernel for `k`: parameters named from the source declaration where there is
/// one (else `param0`, ...), typed from the mangled name (else by size: 8 bytes a pointer).
pub fn kernel(k: &SassKernel, decl: Option<&Declaration>, lines: &mut Lines) -> Result<Kernel> {
    let base_name = k.name.split('<').next().unwrap_or(&k.name).to_string();
    let root_span = match &lines.root {
        Some((id, _)) => {
            let text = lines.files.text(*id);
            let line = text
                .lines()
                .position(|l| l.contains("__global__") && l.contains(base_name.as_str()))
                .or_else(|| text.lines().position(|l| l.contains(base_name.as_str()) && l.contains('(')))
                .map_or(1, |p| p as u32 + 1);
            Span { file: *id, line, column: 1, len: 1 }
        }
        None => Span { file: lines.file(""), line: 1, column: 1, len: 1 },
    };
    let mut kernel = Kernel::new(base_name, root_span);
    // Names in order; a compiler's hidden trailing parameters (Triton's scratch pointers) keep
    // their positional names.
    let numba = numba_slots(&k.param_types, decl.map(|d| d.params.as_slice())).filter(|s| s.len() == k.params.len());
    let (names, types): (Option<Vec<String>>, &[String]) = match &numba {
        Some(slots) => (Some(slots.iter().map(|s| s.0.clone()).collect()), &[]),
        None => (decl.map(|d| d.params.clone()).filter(|p| p.len() <= k.params.len()), &k.param_types),
    };
    let numba_types: Vec<String> = numba.iter().flatten().map(|s| s.1.clone()).collect();
    let types = if numba.is_some() { numba_types.as_slice() } else { types };
    let mut guessed = false;
    for (i, slot) in k.params.iter().enumerate() {
        let name = names.as_ref().and_then(|n| n.get(i).cloned()).unwrap_or_else(|| format!("param{i}"));
        let ty = match types.get(i).filter(|_| types.len() == k.params.len()) {
            Some(t) => type_of(t, slot.size),
            None => {
                guessed = true;
                match slot.size {
                    8 => type_of("void*", 8),
                    4 => Ty::Int(crate::ir::IntTy::I32),
                    n => Ty::Vector { name: format!("{n}-byte value"), bytes: n as u64 },
                }
            }
        };
        // A texture or surface object is a handle the texture instructions take: a value moved
        // whole, which the launch need not give (an integer parameter the code reads must be).
        let handle = numba.is_none() && decl.is_some_and(|d| d.handles.get(i) == Some(&true));
        let ty = if handle && slot.size == 8 {
            Ty::Vector { name: "texture or surface object".into(), bytes: 8 }
        } else {
            ty
        };
        kernel.params.push(Param { name, ty, span: root_span, device_variable: false, constant_variable: false });
    }
    if guessed && !k.params.is_empty() {
        kernel.notes.push(format!(
            "`{}` is not a mangled C++ name: its 8-byte parameters are taken as pointers, 4-byte ones as 32-bit integers",
            k.symbol
        ));
    }
    if let Some(d) = decl {
        kernel.template_params = d.template_params.clone();
    }
    // Each memory instruction is one memory operation, made as every front end makes one.
    let mut builder = KernelBuilder::new(kernel);
    for ins in &k.instrs {
        let Some(c) = classify(ins) else { continue };
        let (span, text) = match &ins.loc {
            Some(loc) => {
                let file = lines.file(&loc.file);
                let src = lines.files.line_text(file, loc.line).map(str::to_string).unwrap_or_default();
                let column = src.len() - src.trim_start().len() + 1;
                let text = src.trim();
                let text = if text.is_empty() { ins.mnemonic() } else { text.to_string() };
                (Span { file, line: loc.line, column: column as u32, len: text.len().max(1) as u32 }, text)
            }
            None => (root_span, ins.mnemonic()),
        };
        let op = builder.memory_operation(
            c.kind,
            c.space.unwrap_or(Space::Global),
            u64::from(c.width),
            c.cache,
            false,
            &text,
            span,
        );
        builder.kernel.mem_ops[op.0 as usize].matrix = c.matrix.map_or(0, |n| n as u8);
    }
    Ok(builder.kernel)
}

/// Numba passes an array argument (`Array<float, 1, C, mutable, aligned>` in the mangled name)
/// as `5 + 2N` parameters: `meminfo`, `parent`, `nitems`, `itemsize`, `data`, then the `N`
/// extents and the `N` strides in bytes. The slots as (`x.data`-style name, C type), scalars as
/// they are; `None` when no parameter is such an array.
pub fn numba_slots(types: &[String], names: Option<&[String]>) -> Option<Vec<(String, String)>> {
    if !types.iter().any(|t| t.starts_with("Array<")) {
        return None;
    }
    let mut out = Vec::new();
    for (i, t) in types.iter().enumerate() {
        let name = names.and_then(|n| n.get(i).cloned()).unwrap_or_else(|| format!("param{i}"));
        let Some(inner) = t.strip_prefix("Array<").and_then(|r| r.strip_suffix('>')) else {
            out.push((name, t.clone()));
            continue;
        };
        let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
        let (elem, dims) = (parts.first()?, parts.get(1)?.parse::<u32>().ok()?);
        let readonly = parts.contains(&"readonly");
        let word = "long long".to_string();
        out.push((format!("{name}.meminfo"), "void*".into()));
        out.push((format!("{name}.parent"), "void*".into()));
        out.push((format!("{name}.nitems"), word.clone()));
        out.push((format!("{name}.itemsize"), word.clone()));
        out.push((format!("{name}.data"), format!("{elem}{}*", if readonly { " const" } else { "" })));
        for d in 0..dims {
            out.push((format!("{name}.shape[{d}]"), word.clone()));
        }
        for d in 0..dims {
            out.push((format!("{name}.strides[{d}]"), word.clone()));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numba_arrays_expand_into_their_fields() {
        let types: Vec<String> =
            ["float", "Array<float, 2, C, readonly, aligned>", "int"].iter().map(|s| s.to_string()).collect();
        let names: Vec<String> = ["a", "x", "n"].iter().map(|s| s.to_string()).collect();
        let slots = numba_slots(&types, Some(&names)).unwrap();
        let got: Vec<&str> = slots.iter().map(|s| s.0.as_str()).collect();
        assert_eq!(
            got,
            [
                "a",
                "x.meminfo",
                "x.parent",
                "x.nitems",
                "x.itemsize",
                "x.data",
                "x.shape[0]",
                "x.shape[1]",
                "x.strides[0]",
                "x.strides[1]",
                "n"
            ]
        );
        assert_eq!(slots[5].1, "float const*");
        assert!(numba_slots(&names, None).is_none());
    }

    #[test]
    fn reads_demangled_types() {
        assert_eq!(type_of("float const*", 8).display(), "float*");
        assert!(matches!(type_of("float const*", 8), Ty::Ptr(p) if p.is_const && p.pointee.size() == 4));
        assert_eq!(type_of("unsigned int", 4).display(), "unsigned int");
        assert_eq!(type_of("float4*", 8).display(), "float4*");
        assert!(matches!(type_of("Params", 24), Ty::Vector { bytes: 24, .. }));
        assert!(matches!(type_of("int**", 8), Ty::Ptr(p) if matches!(&p.pointee, Ty::Ptr(_))));
    }
}
