//! The SASS front end: CUDA source compiled by the toolkit's `nvcc` (device code, for the
//! profile's architecture), or a cubin, fatbin, object or executable built by any toolchain
//! (nvcc, Triton, Numba), disassembled by `nvdisasm -c -gi` and read into
//! [`crate::ir::sass::SassModule`]. It knows nothing about sectors: the engine
//! ([`crate::engine::sass`]) runs what this reads.
//!
//! Kernel parameters are named from the source where there is one (the `__global__`
//! declaration's parameter list), their types from the mangled symbol, their places in constant
//! bank 0 from the cubin's `.nv.info`.

mod elf;
pub mod lift;
mod parse;
pub mod toolkit;

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::sass::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// What the SASS front end is given beside the input.
#[derive(Clone, Debug, Default)]
pub struct SassOptions<'a> {
    /// `sm_90`.
    pub arch: String,
    pub defines: &'a [(String, String)],
    pub include_dirs: &'a [PathBuf],
    /// Template arguments to instantiate the kernel with, in the template's order
    /// (`["float", "256"]`), when the translation unit does not instantiate it itself.
    pub instantiate: Option<(String, Vec<String>)>,
    /// Non-type template arguments written as names (cub's `BLOCK_SCAN_RAKING`), by position:
    /// compiled as [`VALUE_PROBE`]`<position, name>` so that the instance's demangled name gives
    /// the value the kernel's instance is named with.
    pub value_probes: Vec<(usize, String)>,
}

/// The kernel template whose instances carry the values of [`SassOptions::value_probes`].
pub const VALUE_PROBE: &str = "__sector_estimate_value";

/// Whether `bytes` are a cubin, fatbin, or an object or executable (not CUDA source).
pub fn is_binary(bytes: &[u8]) -> bool {
    elf::is_elf(bytes) || is_fatbin(bytes)
}

fn is_fatbin(bytes: &[u8]) -> bool {
    bytes.len() >= 4 && bytes[..4] == [0x50, 0xed, 0x55, 0xba]
}

fn failure(msg: impl Into<String>) -> Diagnostic {
    Diagnostic::new(ErrorKind::Unsupported, msg.into())
}

/// A scratch folder of this process, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("sector-estimate-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| failure(format!("cannot make a scratch folder {}: {e}", dir.display())))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Compiled modules of this process, by everything the compile depends on: a sweep or a
/// manifest analyses one file under many launches and compiles it once.
fn compiled() -> &'static std::sync::Mutex<HashMap<u64, SassModule>> {
    static CACHE: std::sync::OnceLock<std::sync::Mutex<HashMap<u64, SassModule>>> = std::sync::OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Compiles CUDA source (the file at `path`, whose text is `text`) and reads its SASS.
pub fn compile(path: &Path, text: &str, opts: &SassOptions) -> Result<SassModule> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (path, text, &opts.arch, opts.defines, opts.include_dirs, &opts.instantiate, &opts.value_probes).hash(&mut h);
    let key = h.finish();
    if let Some(m) = compiled().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(m);
    }
    let m = compile_uncached(path, text, opts)?;
    if let Ok(mut c) = compiled().lock() {
        if c.len() >= 64 {
            c.clear();
        }
        c.insert(key, m.clone());
    }
    Ok(m)
}

fn compile_uncached(path: &Path, text: &str, opts: &SassOptions) -> Result<SassModule> {
    let tk = toolkit::find()?;
    let nvcc = tk.nvcc.clone().ok_or_else(|| {
        failure("--via sass: no CUDA compiler (`nvcc`) was found to compile the source").note(toolkit::INSTALL_HINT)
    })?;
    let scratch = Scratch::new()?;
    let name = path.file_name().map_or_else(|| "kernel.cu".into(), |n| n.to_string_lossy().into_owned());
    let name = if name.ends_with(".cu") { name } else { format!("{name}.cu") };
    let instance = opts.instantiate.as_ref().map(|(kernel, targs)| {
        let mut s = format!("\nstatic void *__sector_estimate_instance = (void *)&{kernel}<{}>;\n", targs.join(", "));
        if !opts.value_probes.is_empty() {
            s.push_str(&format!("template <int I, auto V> __global__ void {VALUE_PROBE}() {{}}\n"));
            for (i, name) in &opts.value_probes {
                s.push_str(&format!(
                    "static void *__sector_estimate_value_{i} = (void *)&{VALUE_PROBE}<{i}, {name}>;\n"
                ));
            }
        }
        s
    });
    // The file is compiled where it is (its includes and line info stay its own) unless it
    // exists only in memory or needs an explicit instantiation appended.
    let abs = std::fs::canonicalize(path).ok().filter(|p| p.is_file());
    let unit = match (&abs, &instance) {
        (Some(p), None) => p.clone(),
        (abs, inst) => {
            let mut body = match abs {
                Some(p) => format!("#include \"{}\"\n", p.display()),
                None => text.to_string(),
            };
            body.push_str(inst.as_deref().unwrap_or(""));
            write_unit(&scratch.0.join(&name), &body)?
        }
    };
    let cubin = scratch.0.join("kernel.cubin");
    let mut notes = Vec::new();
    if let Err(as_written) = run_nvcc(&nvcc, &tk, path, opts, &unit, &cubin, None) {
        // Host code written for another toolkit release or for libraries this machine lacks
        // (cuBLAS, MPI) does not stop the device code: compile it again with the host code
        // blanked (lines kept, `#line` naming the file) and headers nvcc cannot find stubbed.
        let (blanked, _) = crate::front::cuda::host::strip_host_code(text);
        let origin = abs.as_deref().unwrap_or(path);
        let body = format!("#line 1 \"{}\"\n{blanked}{}", origin.display(), instance.as_deref().unwrap_or(""));
        let device_dir = scratch.0.join("device-only");
        let unit = write_unit(&device_dir.join(&name), &body)?;
        // The project's own headers beside it, blanked the same way: nvcc finds a quoted
        // include next to the including file first.
        if let Some(dir) = origin.parent() {
            let mut budget = 64;
            blank_headers(text, dir, &device_dir, 0, &mut budget)?;
        }
        let stubs = scratch.0.join("stubs");
        let mut stubbed: Vec<String> = Vec::new();
        let device_only = loop {
            match run_nvcc(&nvcc, &tk, path, opts, &unit, &cubin, Some(&stubs)) {
                Ok(()) => break Ok(()),
                Err(err) => match missing_header(&err) {
                    Some(h) if stubbed.len() < 16 && !stubbed.contains(&h) && safe_header(&h) => {
                        write_unit(&stubs.join(&h), "")?;
                        stubbed.push(h);
                    }
                    _ => break Err(err),
                },
            }
        };
        if let Err(err) = device_only {
            let first: Vec<&str> = as_written.lines().filter(|l| !l.trim().is_empty()).take(8).collect();
            let again = err.lines().find(|l| l.contains("error")).unwrap_or("").trim().to_string();
            let mut d =
                failure(format!("--via sass: nvcc could not compile {}", path.display())).note(first.join("\n"));
            if !again.is_empty() {
                d = d.note(format!("with its host code blanked it failed too: {again}"));
            }
            return Err(d.note("the SASS path compiles the file with nvcc; `--via source` reads it without a toolkit"));
        }
        notes.push(format!(
            "nvcc could not compile {} as written, so its device code was compiled alone (host functions blanked{})",
            path.display(),
            if stubbed.is_empty() {
                String::new()
            } else {
                format!("; headers nvcc could not find taken as empty: {}", stubbed.join(", "))
            }
        ));
    }
    let bytes = std::fs::read(&cubin).map_err(|e| failure(format!("cannot read nvcc's cubin: {e}")))?;
    let mut m = read_cubin(&bytes, &tk)?;
    m.compiler = Some(match toolkit::version(&nvcc) {
        Some(v) => format!("nvcc {v}"),
        None => "nvcc".to_string(),
    });
    m.arch = opts.arch.clone();
    m.notes = notes;
    Ok(m)
}

/// Writes blanked copies of the headers `text` includes with quotes (found relative to
/// `dir`) under `into`, keeping their relative paths, recursively; at most `budget` files.
fn blank_headers(text: &str, dir: &Path, into: &Path, depth: u32, budget: &mut u32) -> Result<()> {
    if depth > 16 {
        return Ok(());
    }
    for line in text.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("include")) else {
            continue;
        };
        let Some(name) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) else { continue };
        if !safe_header(name) || *budget == 0 {
            continue;
        }
        let orig = dir.join(name);
        let copy = into.join(name);
        let Ok(meta) = std::fs::metadata(&orig) else { continue };
        if !meta.is_file() || meta.len() > 16 << 20 || copy.exists() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&orig) else { continue };
        *budget -= 1;
        let header = String::from_utf8_lossy(&bytes);
        let (blanked, _) = crate::front::cuda::host::strip_host_code(&header);
        let shown = std::fs::canonicalize(&orig).unwrap_or_else(|_| orig.clone());
        write_unit(&copy, &format!("#line 1 \"{}\"\n{blanked}", shown.display()))?;
        if let (Some(d), Some(i)) = (orig.parent(), copy.parent()) {
            blank_headers(&header, d, i, depth + 1, budget)?;
        }
    }
    Ok(())
}

fn write_unit(p: &Path, body: &str) -> Result<PathBuf> {
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(|e| failure(format!("cannot make {}: {e}", dir.display())))?;
    }
    std::fs::write(p, body).map_err(|e| failure(format!("cannot write {}: {e}", p.display())))?;
    Ok(p.to_path_buf())
}

/// Runs nvcc on `unit` for a cubin; its error output where it fails.
fn run_nvcc(
    nvcc: &Path,
    tk: &toolkit::Toolkit,
    path: &Path,
    opts: &SassOptions,
    unit: &Path,
    cubin: &Path,
    stubs: Option<&Path>,
) -> std::result::Result<(), String> {
    let mut cmd = Command::new(nvcc);
    cmd.args(["-cubin", &format!("-arch={}", opts.arch), "-lineinfo", "-O3", "-w"]);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        cmd.arg("-I").arg(dir);
    }
    for d in opts.include_dirs {
        cmd.arg("-I").arg(d);
    }
    if let Some(c) = &tk.cccl {
        cmd.arg("-isystem").arg(c);
    }
    if let Some(s) = stubs {
        // Only headers found nowhere else are in it.
        cmd.arg("-I").arg(s);
    }
    for (k, v) in opts.defines {
        cmd.arg(format!("-D{k}={v}"));
    }
    cmd.arg("-o").arg(cubin).arg(unit);
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// The header a compiler's "fatal error: NAME: No such file or directory" names.
fn missing_header(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|l| {
        let rest = l.split("fatal error: ").nth(1)?;
        let (name, why) = rest.rsplit_once(": ")?;
        why.starts_with("No such file").then(|| name.trim().to_string())
    })
}

/// A header name that stays inside the stub folder.
fn safe_header(h: &str) -> bool {
    !h.is_empty() && !h.starts_with('/') && !h.split(['/', '\\']).any(|c| c == "..")
}

/// Reads a cubin, or the cubins of a fatbin, object or executable for `arch`.
pub fn load_binary(bytes: &[u8], arch: &str) -> Result<SassModule> {
    let tk = toolkit::find()?;
    if elf::is_cubin(bytes) {
        let mut m = read_cubin(bytes, &tk)?;
        m.arch = cubin_arch(bytes).unwrap_or_else(|| arch.to_string());
        return Ok(m);
    }
    // A fatbin or a host object: cuobjdump takes its cubins out.
    let cuobjdump = tk.cuobjdump.clone().ok_or_else(|| {
        failure("a fatbin, object or executable needs `cuobjdump` to take its cubins out")
            .note("`pip install nvidia-cuda-cuobjdump`, or give the .cubin itself")
    })?;
    let scratch = Scratch::new()?;
    let input = scratch.0.join("input.bin");
    std::fs::write(&input, bytes).map_err(|e| failure(format!("cannot write {}: {e}", input.display())))?;
    let out = Command::new(&cuobjdump)
        .current_dir(&scratch.0)
        .args(["-xelf", "all", "input.bin"])
        .output()
        .map_err(|e| failure(format!("cannot run {}: {e}", cuobjdump.display())))?;
    if !out.status.success() {
        return Err(failure("cuobjdump found no cubin in the file")
            .note(String::from_utf8_lossy(&out.stderr).trim().to_string()));
    }
    let mut cubins: Vec<PathBuf> = std::fs::read_dir(&scratch.0)
        .map_err(|e| failure(e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "cubin"))
        .collect();
    cubins.sort();
    let want = arch.trim_start_matches("sm_");
    let pick =
        cubins.iter().find(|p| p.to_string_lossy().contains(&format!("sm_{want}"))).or(cubins.first()).ok_or_else(
            || failure("the file holds no cubin (only PTX?); compile it for an architecture (-arch=sm_90)"),
        )?;
    let b = std::fs::read(pick).map_err(|e| failure(e.to_string()))?;
    let mut m = read_cubin(&b, &tk)?;
    m.arch = cubin_arch(&b).unwrap_or_else(|| arch.to_string());
    Ok(m)
}

/// `sm_90` from a cubin's ELF flags (the architecture number in the low bits of `e_flags`).
fn cubin_arch(bytes: &[u8]) -> Option<String> {
    let f = bytes.get(0x30..0x34).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))?;
    // CUDA 12+: the SM number in bits 8..16; older: bits 0..8.
    let sm = if f >> 8 & 0xff != 0 { f >> 8 & 0xff } else { f & 0xff };
    (sm > 0).then(|| format!("sm_{sm}"))
}

fn read_cubin(bytes: &[u8], tk: &toolkit::Toolkit) -> Result<SassModule> {
    let secs = elf::sections(bytes)?;
    let entries = elf::entries(bytes, &secs)?;
    let scratch = Scratch::new()?;
    let p = scratch.0.join("kernel.cubin");
    std::fs::write(&p, bytes).map_err(|e| failure(format!("cannot write {}: {e}", p.display())))?;
    let out = Command::new(&tk.nvdisasm)
        .args(["-c", "-gi"])
        .arg(&p)
        .output()
        .map_err(|e| failure(format!("cannot run {}: {e}", tk.nvdisasm.display())))?;
    if !out.status.success() {
        return Err(
            failure("nvdisasm could not read the cubin").note(String::from_utf8_lossy(&out.stderr).trim().to_string())
        );
    }
    let listing = String::from_utf8_lossy(&out.stdout);
    let funcs = parse::functions(&listing);
    let toolkit_root = tk.nvdisasm.parent().and_then(Path::parent).and_then(|p| std::fs::canonicalize(p).ok());
    let mut kernels = Vec::new();
    for sym in &entries {
        kernels.push(kernel(
            sym,
            &funcs,
            toolkit_root.as_deref(),
            elf::params(&secs, sym)?,
            elf::shared_bytes(&secs, sym),
        )?);
    }
    Ok(SassModule {
        notes: Vec::new(),
        kernels,
        arch: String::new(),
        compiler: None,
        disassembler: toolkit::version(&tk.nvdisasm).map_or_else(|| "nvdisasm".into(), |v| format!("nvdisasm {v}")),
    })
}

/// Whether a line-table file is one of the toolkit's own headers.
fn is_toolkit_file(file: &str, root: Option<&Path>) -> bool {
    let canon = std::fs::canonicalize(file).ok();
    if let (Some(c), Some(r)) = (&canon, root) {
        if c.starts_with(r) {
            return true;
        }
    }
    [
        "/cuda/include/",
        "/nvidia/cu1",
        "/cuda_runtime",
        "/targets/x86_64-linux/include/",
        "/include/cccl/",
        "/cuda_nvcc/",
    ]
    .iter()
    .any(|p| file.contains(p))
}

/// A kernel from `nvdisasm -c -gi` text, with its parameter layout given (what a cubin's
/// `.nv.info` would say): for tests and for listings saved without their cubin.
pub fn from_listing(listing: &str, symbol: &str, params: Vec<ParamSlot>, shared_bytes: u64) -> Result<SassKernel> {
    kernel(symbol, &parse::functions(listing), None, params, shared_bytes)
}

fn kernel(
    symbol: &str,
    funcs: &[parse::RawFunction],
    root: Option<&Path>,
    params: Vec<ParamSlot>,
    shared_bytes: u64,
) -> Result<SassKernel> {
    let by_name: HashMap<&str, &parse::RawFunction> = funcs.iter().map(|f| (f.name.as_str(), f)).collect();
    let main = by_name.get(symbol).ok_or_else(|| failure(format!("nvdisasm printed no code for `{symbol}`")))?;
    // The kernel, then every function it calls (transitively), one code space.
    let mut order: Vec<&parse::RawFunction> = vec![main];
    let mut i = 0;
    while i < order.len() {
        for (_, text, _) in &order[i].lines {
            if text.contains("CALL") {
                if let Some(t) = text.split("`(").nth(1).and_then(|r| r.split(')').next()) {
                    if let Some(f) = by_name.get(t.trim()) {
                        if !order.iter().any(|o| o.name == f.name) {
                            order.push(f);
                        }
                    }
                }
            }
        }
        i += 1;
    }
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut base = 0usize;
    for f in &order {
        labels.insert(f.name.clone(), base);
        let pos: HashMap<u32, usize> = f.lines.iter().enumerate().map(|(k, l)| (l.0, base + k)).collect();
        for (l, off) in &f.labels {
            if let Some(&k) = pos.get(off) {
                labels.insert(l.clone(), k);
            }
        }
        base += f.lines.len();
    }
    let resolve = |l: &str| labels.get(l).copied();
    let mut instrs = Vec::with_capacity(base);
    for f in &order {
        for (offset, text, frames) in &f.lines {
            let loc = frames
                .iter()
                .find(|(file, _)| !is_toolkit_file(file, root))
                .or(frames.last())
                .map(|(file, line)| Loc { file: file.clone(), line: *line });
            instrs.push(parse::instr(*offset, text, loc, &resolve)?);
        }
    }
    return_addresses(&mut instrs, &order.iter().map(|f| f.lines.len()).collect::<Vec<_>>());
    let (name, param_types) = demangle(symbol);
    Ok(SassKernel { symbol: symbol.to_string(), name, param_types, params, shared_bytes, instrs })
}

/// A call to a subroutine in the caller's own section (`$__internal_0_$__cuda_sm20_div_*`, the
/// slow paths of division and reciprocal) passes its return address as a byte offset
/// (`MOV R8, 0x12a0` before `CALL.REL.NOINC` at 0x1290); the engine's code addresses are
/// instruction indices, as `32@lo(fn + .L_x_3@srel)` reads, so such a move becomes the index of
/// the instruction after the call.
fn return_addresses(instrs: &mut [crate::ir::sass::Instr], lens: &[usize]) {
    let mut base = 0;
    for &len in lens {
        for c in base..base + len {
            if instrs[c].opcode != "CALL" || !instrs[c].has("REL") || c + 1 >= base + len {
                continue;
            }
            let back = instrs[c].offset as i64 + 16;
            for m in (base.max(c.saturating_sub(8))..c).rev() {
                if instrs[m].opcode == "MOV"
                    && matches!(instrs[m].operands.as_slice(), [Operand::Reg(_), Operand::Int(v)] if *v == back)
                {
                    instrs[m].operands[1] = Operand::LabelValue((c + 1) as i64);
                    break;
                }
            }
        }
        base += len;
    }
}

/// `_Z5scaleIfEvPT_i` -> (`scale<float>`, [`float*`, `int`]); an unmangled symbol is its own
/// name with no known types.
pub fn demangle(symbol: &str) -> (String, Vec<String>) {
    let Ok(sym) = cpp_demangle::Symbol::new(symbol) else { return (symbol.to_string(), Vec::new()) };
    let Ok(text) = sym.demangle(&cpp_demangle::DemangleOptions::default()) else {
        return (symbol.to_string(), Vec::new());
    };
    // `void scale<float>(float*, int)`: the name is what precedes the parameter list, less a
    // return type.
    let Some(open) = top_level_paren(&text) else { return (text, Vec::new()) };
    let head = &text[..open];
    let name = split_top(head, ' ').last().cloned().unwrap_or_else(|| head.to_string());
    // ABI tags (`[abi:cxx11]`, Numba's `[abi:v1][abi:cw51...]`) are not part of the name a user
    // writes.
    let name = strip_abi_tags(&name);
    let inner = &text[open + 1..text.rfind(')').unwrap_or(text.len())];
    let params = if inner.trim().is_empty() || inner.trim() == "void" { Vec::new() } else { split_top(inner, ',') };
    (name, params.into_iter().map(|p| p.trim().to_string()).collect())
}

fn strip_abi_tags(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find("[abi:") {
        out.push_str(&rest[..at]);
        rest = rest[at..].find(']').map_or("", |end| &rest[at + end + 1..]);
    }
    out.push_str(rest);
    out
}

/// The `(` opening the parameter list: the first at template depth 0.
fn top_level_paren(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

fn split_top(s: &str, sep: char) -> Vec<String> {
    let mut v = Vec::new();
    let (mut depth, mut cur) = (0i32, String::new());
    for c in s.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            _ => {}
        }
        if c == sep && depth == 0 {
            if !cur.trim().is_empty() {
                v.push(cur.trim().to_string());
            }
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

/// A `__global__` declaration read from source text: its template parameters and its
/// parameters' names, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Declaration {
    pub template_params: Vec<String>,
    /// By template parameter: whether it has a default (`int BM = 128`); C++ lets the
    /// trailing ones be left out.
    pub template_defaults: Vec<bool>,
    /// By template parameter: whether it is a type (`typename T`, `class T`, a template).
    pub template_types: Vec<bool>,
    /// The namespaces around it, as a qualifier (`dwt_cuda::`; empty at file scope).
    pub scope: String,
    pub params: Vec<String>,
    /// By parameter: declared as a texture or surface object (`cudaTextureObject_t`,
    /// `cudaSurfaceObject_t`, `CUtexObject`, `CUsurfObject`), a handle only the texture
    /// instructions read (empty where not known).
    pub handles: Vec<bool>,
}

/// Whether a parameter's declaration (`cudaTextureObject_t tex`) is a texture or surface object.
fn is_handle(p: &str) -> bool {
    p.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| matches!(w, "cudaTextureObject_t" | "cudaSurfaceObject_t" | "CUtexObject" | "CUsurfObject"))
}

/// The namespaces still open at the end of `text` (comments removed), as `a::b::`: each `{`
/// either opens a `namespace NAME` or something else, each `}` closes the latest.
fn namespaces_at(text: &str) -> String {
    let mut open: Vec<Option<String>> = Vec::new();
    let mut last = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => {
                let head = text[last..i].trim_end();
                let words: Vec<&str> = head.split_whitespace().collect();
                let name = match words.as_slice() {
                    [.., "namespace", n] if n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') => {
                        Some(n.to_string())
                    }
                    _ => None,
                };
                open.push(name);
                last = i + 1;
            }
            '}' => {
                open.pop();
                last = i + 1;
            }
            ';' => last = i + 1,
            _ => {}
        }
    }
    open.into_iter().flatten().map(|n| format!("{n}::")).collect()
}

/// Finds `__global__ ... name(...)` in `text` (comments removed) and reads its parameter names
/// and template parameter names.
pub fn declaration(text: &str, name: &str) -> Option<Declaration> {
    let clean = strip_comments(text);
    let bytes = clean.as_bytes();
    let mut from = 0;
    while let Some(pos) = clean[from..].find(name) {
        let at = from + pos;
        from = at + name.len();
        let before_ok = at == 0 || !(bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        let rest = clean[at + name.len()..].trim_start();
        if !before_ok || !rest.starts_with('(') {
            continue;
        }
        // `__global__` between the previous declaration's end and the name.
        let start = clean[..at].rfind([';', '}']).map_or(0, |i| i + 1);
        let head = &clean[start..at];
        if !head.contains("__global__") {
            continue;
        }
        let close = matching(rest, '(', ')')?;
        let declared: Vec<String> =
            split_top(&rest[1..close], ',').into_iter().filter(|p| p.trim() != "void").collect();
        let params = declared.iter().map(|p| last_ident(p.split('=').next().unwrap_or(p))).collect();
        let handles = declared.iter().map(|p| !p.contains('*') && is_handle(p)).collect();
        let template_list: Vec<String> = head
            .find("template")
            .and_then(|t| {
                let r = head[t + 8..].trim_start();
                let close = matching(r, '<', '>')?;
                Some(split_top(&r[1..close], ','))
            })
            .unwrap_or_default();
        let template_params = template_list.iter().map(|p| last_ident(p.split('=').next().unwrap_or(p))).collect();
        let template_defaults = template_list.iter().map(|p| p.contains('=')).collect();
        let template_types = template_list
            .iter()
            .map(|p| {
                matches!(p.split_whitespace().next(), Some("typename" | "class" | "template"))
                    || p.trim_start().starts_with("template<")
            })
            .collect();
        let scope = namespaces_at(&clean[..at]);
        return Some(Declaration { template_params, template_defaults, template_types, scope, params, handles });
    }
    None
}

/// A Triton (Python) kernel's `def name(...)`: its parameters less the `tl.constexpr` ones,
/// which are compiled in and are not kernel parameters.
pub fn python_declaration(text: &str, name: &str) -> Option<Declaration> {
    let at = text.find(&format!("def {name}("))?;
    let rest = &text[at + 4 + name.len()..];
    let close = matching(rest, '(', ')')?;
    let params = split_top(&rest[1..close], ',')
        .iter()
        .filter(|p| !p.contains("constexpr"))
        .map(|p| p.split([':', '=']).next().unwrap_or(p).trim().to_string())
        .filter(|p| !p.is_empty())
        .collect();
    Some(Declaration { params, ..Default::default() })
}

/// The byte index of the `close` that balances the first `open` of `s`.
pub(crate) fn matching(s: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The declared name in a parameter declaration: `const float *__restrict__ a` -> `a`,
/// `float v[3]` -> `v`.
fn last_ident(p: &str) -> String {
    let p = p.split('[').next().unwrap_or(p);
    p.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .rfind(|w| !w.is_empty() && !w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or("")
        .to_string()
}

fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
            out.push(' ');
        } else {
            let ch = s[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_templates() {
        let (n, p) = demangle("_Z5scaleIfEvPT_i");
        assert_eq!(n, "scale<float>");
        assert_eq!(p, vec!["float*", "int"]);
        let (n, p) = demangle("_Z7vec_addPKfS0_Pfi");
        assert_eq!(n, "vec_add");
        assert_eq!(p, vec!["float const*", "float const*", "float*", "int"]);
        assert_eq!(demangle("add_kernel").0, "add_kernel");
        // Numba: a module path, ABI tags, arrays as `Array<...>`.
        let (n, p) = demangle("_ZN8__main__5saxpyB2v1B4abcdEf5ArrayIfLi1E1C7mutable7alignedEi");
        assert_eq!(n, "__main__::saxpy");
        assert_eq!(p, ["float", "Array<float, 1, C, mutable, aligned>", "int"]);
    }

    #[test]
    fn reads_declarations() {
        let src = "// x\ntemplate <typename T, int BS = 256>\n__global__ void k(const T *__restrict__ a, /* c */ float v[3], int n) { }";
        let d = declaration(src, "k").unwrap();
        assert_eq!(d.template_params, vec!["T", "BS"]);
        assert_eq!(d.template_defaults, vec![false, true]);
        assert_eq!(d.scope, "");
        // Rodinia's dwt2d: kernels inside a namespace, after a closed one and a class.
        let src = "namespace a { int x; }\nnamespace dwt_cuda {\nstruct S { int y; };\nnamespace inner {\n__global__ void k(int n) { }\n}\n}";
        assert_eq!(declaration(src, "k").unwrap().scope, "dwt_cuda::inner::");
        assert_eq!(d.params, vec!["a", "v", "n"]);
        assert!(declaration("void k(int n) {}", "k").is_none());
    }
}
