//! The pipeline through SASS: source compiled by the toolkit (or a cubin as given) -> the SASS
//! engine -> the same sheet, its rows merged per source line and each naming its instructions.

use super::{AnalyzeOptions, Input};
use crate::cache::CacheModel;
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::front::sass::{self as front, lift, SassOptions};
use crate::ir::sass::{SassKernel, SassModule};
use crate::sheet::{Row, SassInstruction, Sheet};
use crate::source::SourceFiles;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bytes of an input file the SASS path reads (a cubin or an executable holding one).
const MAX_INPUT_BYTES: u64 = 512 << 20;

/// The architecture a GPU profile's code is compiled for.
pub fn arch_of(gpu: &str) -> String {
    let d = crate::gpu::lookup(gpu).map(|p| p.description).unwrap_or("(sm_90)");
    d.split("(sm_").nth(1).and_then(|r| r.split(')').next()).map_or_else(|| "sm_90".into(), |n| format!("sm_{n}"))
}

/// Whether the input is a compiled binary (a cubin, fatbin, object or executable).
pub fn is_binary_input(input: &Input) -> bool {
    match input {
        Input::File(p) => {
            // The ELF header (64 bytes) decides; a fatbin's magic is in its first 4.
            let mut head = Vec::with_capacity(128);
            std::fs::File::open(p)
                .and_then(|f| std::io::Read::read_to_end(&mut std::io::Read::take(f, 128), &mut head))
                .is_ok()
                && front::is_binary(&head)
        }
        Input::Source { .. } => false,
    }
}

/// Whether a toolkit that can compile CUDA is on this machine (for `--via auto`).
pub fn toolkit_found() -> bool {
    front::toolkit::find().is_ok_and(|t| t.nvcc.is_some())
}

/// A compiled source file: its id, path and text.
type CompiledSource = (crate::source::FileId, PathBuf, String);

/// The SASS module of the input and, for source, its text and path.
fn compile_input(
    input: &Input,
    opts: &AnalyzeOptions,
    files: &mut SourceFiles,
    instantiate: Option<(String, Vec<String>)>,
    value_probes: Vec<(usize, String)>,
) -> Result<(SassModule, Option<CompiledSource>)> {
    if input.is_rust() {
        return Err(Diagnostic::new(ErrorKind::Usage, "--via sass reads CUDA source or compiled code (a cubin, fatbin or executable), not Rust source")
            .note("compile the Rust kernel to PTX and a cubin (e.g. with nvcc or ptxas) and give the cubin, or use --via source"));
    }
    let arch = opts.arch.clone().unwrap_or_else(|| arch_of(&opts.gpu));
    let so = SassOptions {
        arch: arch.clone(),
        defines: &opts.defines,
        include_dirs: &opts.include_dirs,
        instantiate,
        value_probes,
    };
    match input {
        Input::File(path) => {
            let meta = std::fs::metadata(path)
                .map_err(|e| Diagnostic::new(ErrorKind::Usage, format!("cannot read {}: {e}", path.display())))?;
            if !meta.is_file() || meta.len() > MAX_INPUT_BYTES {
                return Err(Diagnostic::new(
                    ErrorKind::Usage,
                    format!("{}: not a regular file of at most {} MiB", path.display(), MAX_INPUT_BYTES >> 20),
                ));
            }
            let bytes = std::fs::read(path)
                .map_err(|e| Diagnostic::new(ErrorKind::Usage, format!("cannot read {}: {e}", path.display())))?;
            if front::is_binary(&bytes) {
                files.add(*path, String::new());
                return Ok((front::load_binary(&bytes, &arch)?, None));
            }
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let id = match files.files.iter().position(|f| f.path == *path) {
                Some(i) => crate::source::FileId(i as u32),
                None => files.add(*path, text.clone()),
            };
            Ok((front::compile(path, &text, &so)?, Some((id, path.to_path_buf(), text))))
        }
        Input::Source { name, text } => {
            let id = match files.files.iter().position(|f| f.path == Path::new(name)) {
                Some(i) => crate::source::FileId(i as u32),
                None => files.add(*name, *text),
            };
            Ok((front::compile(Path::new(name), text, &so)?, Some((id, PathBuf::from(name), text.to_string()))))
        }
    }
}

/// A kernel's declaration in the file or in the project headers it includes with quotes
/// (found beside the including file or in the `-I` folders), breadth first, at most 64 files.
fn declaration_in(path: &Path, text: &str, name: &str, include_dirs: &[PathBuf]) -> Option<front::Declaration> {
    if let Some(d) = front::declaration(text, name) {
        return Some(d);
    }
    let mut queue: std::collections::VecDeque<(PathBuf, String)> = [(path.to_path_buf(), text.to_string())].into();
    let mut seen = std::collections::HashSet::new();
    while let Some((p, t)) = queue.pop_front() {
        for line in t.lines() {
            let Some(rest) =
                line.trim_start().strip_prefix('#').map(str::trim_start).and_then(|r| r.strip_prefix("include"))
            else {
                continue;
            };
            let Some(inc) = rest.trim().strip_prefix('"').and_then(|r| r.split('"').next()) else { continue };
            let dirs = p.parent().map(Path::to_path_buf).into_iter().chain(include_dirs.iter().cloned());
            let Some(found) = dirs.map(|d| d.join(inc)).find(|c| c.is_file()) else { continue };
            let key = std::fs::canonicalize(&found).unwrap_or_else(|_| found.clone());
            if seen.len() >= 64 || !seen.insert(key) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&found) else { continue };
            if meta.len() > 8 << 20 {
                continue;
            }
            let Ok(bytes) = std::fs::read(&found) else { continue };
            let header = String::from_utf8_lossy(&bytes).into_owned();
            if let Some(d) = front::declaration(&header, name) {
                return Some(d);
            }
            queue.push_back((found, header));
        }
    }
    None
}

/// The kernel `name` names: its symbol, its demangled name, or its name without template
/// arguments (then the one instantiated with the template arguments `--arg` gives).
fn pick<'m>(m: &'m SassModule, name: Option<&str>, targs: &[String], file: &str) -> Result<Option<&'m SassKernel>> {
    let base = |k: &SassKernel| k.name.split('<').next().unwrap_or(&k.name).to_string();
    let list = || m.kernels.iter().map(|k| k.name.clone()).collect::<Vec<_>>().join(", ");
    let Some(n) = name else {
        return match m.kernels.as_slice() {
            [k] => Ok(Some(k)),
            [] => Err(Diagnostic::new(ErrorKind::Unsupported, format!("{file}: the compiled file has no kernels"))),
            _ => Err(Diagnostic::new(
                ErrorKind::Usage,
                format!("{file}: the file has several kernels; pick one with --kernel"),
            )
            .note(format!("kernels in this file: {}", list()))),
        };
    };
    if let Some(k) = m.kernels.iter().find(|k| k.symbol == n || k.name == n) {
        return Ok(Some(k));
    }
    // A kernel in a namespace (`dwt_cuda::fdwt53Kernel<64, 8>`) is found by its own name too.
    let same: Vec<&SassKernel> =
        m.kernels.iter().filter(|k| base(k) == n || base(k).rsplit("::").next() == Some(n)).collect();
    match same.as_slice() {
        [] => Ok(None),
        [k] if targs.is_empty() => Ok(Some(k)),
        _ if targs.is_empty() => Err(Diagnostic::new(
            ErrorKind::Usage,
            format!("{file}: `{n}` is instantiated several times; give its template parameters with --arg"),
        )
        .note(format!("instances: {}", same.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ")))),
        // The instance whose leading template arguments are the ones given (the rest defaulted).
        _ => Ok(same.iter().find(|k| template_args_match(&k.name, targs)).copied()),
    }
}

/// A toolkit name without its namespaces: `thrust::divides<float>` is an alias of
/// `cuda::std::__4::divides<float>`, the name the instance carries; `std::uint32_t` is `uint32_t`.
fn toolkit_unqualified(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while !rest.is_empty() {
        let ns = ["cuda::std::", "thrust::", "std::", "cuda::"].iter().find(|p| rest.starts_with(**p));
        let at_name_start = !out.chars().last().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':');
        if let (Some(p), true) = (ns, at_name_start) {
            rest = &rest[p.len()..];
            // The library's inline version namespace (`__4::`).
            if let Some(v) = rest.strip_prefix("__") {
                let digits = v.chars().take_while(char::is_ascii_digit).count();
                if digits > 0 && v[digits..].starts_with("::") {
                    rest = &v[digits + 2..];
                }
            }
            continue;
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// Whether `name<a, b, ...>`'s leading arguments are `given` (`256` matches `256u`, `(int)256`).
fn template_args_match(name: &str, given: &[String]) -> bool {
    let Some(open) = name.find('<') else { return false };
    let inner = name[open + 1..].strip_suffix('>').unwrap_or(&name[open + 1..]);
    let mut depth = 0i32;
    let mut args = vec![String::new()];
    for c in inner.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            args.push(String::new());
        } else {
            if let Some(a) = args.last_mut() {
                a.push(c);
            }
        }
    }
    let norm = |s: &str| -> String {
        let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        let s = match s.rfind(')') {
            Some(i) if s.starts_with('(') => s[i + 1..].to_string(),
            _ => s,
        };
        let t = s.trim_end_matches(['u', 'U', 'l', 'L']);
        if !t.is_empty() && t.trim_start_matches('-').chars().all(|c| c.is_ascii_digit()) {
            return t.to_string();
        }
        // The instance's name spells a type as the demangler does (x86-64 Linux's `<cstdint>`):
        // `compressKernelI<uint32_t>` is `compressKernelI<unsigned int>`.
        let bare = toolkit_unqualified(&s);
        let same = match bare.as_str() {
            "uint8_t" => "unsignedchar",
            "int8_t" => "signedchar",
            "uint16_t" | "unsignedshortint" => "unsignedshort",
            "int16_t" | "shortint" | "signedshort" => "short",
            "uint32_t" | "unsigned" => "unsignedint",
            "int32_t" | "signed" | "signedint" => "int",
            "uint64_t" | "size_t" | "unsignedlongint" => "unsignedlong",
            "int64_t" | "ptrdiff_t" | "longint" | "signedlong" => "long",
            "unsignedlonglongint" => "unsignedlonglong",
            "longlongint" | "signedlonglong" => "longlong",
            "half" => "__half",
            "nv_bfloat16" => "__nv_bfloat16",
            other => other,
        };
        same.to_string()
    };
    given.len() <= args.len() && given.iter().zip(&args).all(|(g, a)| norm(g) == norm(a))
}

pub(super) fn analyze(
    input: &Input,
    opts: &AnalyzeOptions,
    files: &mut SourceFiles,
) -> Result<(Sheet, Vec<Diagnostic>)> {
    let (mut module, mut src) = compile_input(input, opts, files, None, Vec::new())?;
    let file = files.files.first().map(|f| f.path.display().to_string()).unwrap_or_default();
    // Template arguments from `--arg`, in the template's order.
    let decl_of = |src: &Option<CompiledSource>, name: &str| {
        src.as_ref().and_then(|(_, path, text)| declaration_in(path, text, name, &opts.include_dirs))
    };
    let targs = |decl: &Option<front::Declaration>| -> Vec<String> {
        decl.as_ref()
            .map(|d| {
                d.template_params
                    .iter()
                    .map_while(|t| opts.args.iter().find(|(n, _)| n == t).map(|(_, v)| v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let wanted = opts.kernel.clone();
    let decl0 = wanted.as_deref().and_then(|n| decl_of(&src, n));
    let mut found = pick(&module, wanted.as_deref(), &targs(&decl0), &file)?.map(|k| k.symbol.clone());
    if found.is_none() {
        // A template nothing instantiates: instantiate it for the `--arg` values.
        let n = wanted.clone().unwrap_or_default();
        let d = decl0.clone().filter(|d| !d.template_params.is_empty());
        match d {
            // Given arguments first; trailing parameters with defaults may be left to C++.
            Some(d)
                if !targs(&Some(d.clone())).is_empty()
                    || (d.template_defaults.len() == d.template_params.len()
                        && d.template_defaults.iter().all(|has| *has)) =>
            {
                // Named with its namespaces (`dwt_cuda::fdwt53Kernel<64, 8>`), as at file scope.
                let qualified = format!("{}{n}", d.scope);
                let mut given = targs(&Some(d.clone()));
                // Non-type arguments written as names (an enumerator of a header): their values,
                // as the instance's name spells them, come from probe instances.
                let probes: Vec<(usize, String)> = given
                    .iter()
                    .enumerate()
                    .filter(|(i, v)| {
                        !d.template_types.get(*i).copied().unwrap_or(true)
                            && !matches!(v.as_str(), "true" | "false")
                            && v.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    })
                    .map(|(i, v)| (i, v.clone()))
                    .collect();
                let (m2, s2) = compile_input(input, opts, files, Some((qualified, given.clone())), probes)?;
                module = m2;
                src = s2;
                for k in module.kernels.iter().filter(|k| k.name.starts_with(crate::front::sass::VALUE_PROBE)) {
                    let inner = k.name.split_once('<').and_then(|(_, r)| r.strip_suffix('>'));
                    if let Some((i, v)) = inner.and_then(|r| r.split_once(',')) {
                        if let Some(slot) = i.trim().parse::<usize>().ok().and_then(|i| given.get_mut(i)) {
                            *slot = v.trim().to_string();
                        }
                    }
                }
                module.kernels.retain(|k| !k.name.starts_with(crate::front::sass::VALUE_PROBE));
                found = pick(&module, Some(&n), &given, &file)?.map(|k| k.symbol.clone());
            }
            Some(d) => {
                let missing: Vec<&String> =
                    d.template_params.iter().filter(|t| !opts.args.iter().any(|(a, _)| a == *t)).collect();
                return Err(Diagnostic::new(
                    ErrorKind::MissingArgument,
                    format!("`{n}` is a template; give its parameters to instantiate it"),
                )
                .note(format!(
                    "pass --arg {}",
                    missing.iter().map(|t| format!("{t}=VALUE")).collect::<Vec<_>>().join(" --arg ")
                )));
            }
            None => {}
        }
    }
    let Some(symbol) = found else {
        let names = module.kernels.iter().map(|k| k.name.clone()).collect::<Vec<_>>().join(", ");
        return Err(Diagnostic::new(
            ErrorKind::Usage,
            format!("{file}: no kernel named `{}` in the compiled code", wanted.unwrap_or_default()),
        )
        .note(if names.is_empty() {
            "the compiled code has no kernels".to_string()
        } else {
            format!("kernels: {names}")
        }));
    };
    let sk = module.kernels.iter().find(|k| k.symbol == symbol).expect("picked from the module");
    let base = sk.name.split('<').next().unwrap_or(&sk.name).to_string();
    // A compiled input: the declaration from the source file its line table names (a `.py`
    // file for Triton).
    let beside = Path::new(&file).parent().map(Path::to_path_buf);
    // Declared inside its namespaces under its own name.
    let own = base.rsplit("::").next().unwrap_or(&base).to_string();
    let decl =
        decl_of(&src, &base).or_else(|| decl_of(&src, &own)).or_else(|| compiled_declaration(sk, beside.as_deref()));
    let root = src.as_ref().map(|(id, p, _)| (*id, p.clone()));
    let mut lines = lift::Lines::new(files, root).beside(beside.clone());
    let mut kernel = lift::kernel(sk, decl.as_ref(), &mut lines)?;
    let mut launch = opts.launch();
    kernel.notes.extend(numba_defaults(&kernel, &mut launch.args));
    let setup = crate::launch::Setup::new(&kernel, &launch)?;
    let run = crate::engine::sass::run(sk, &kernel, &setup, &mut crate::engine::NoSink)?;
    // The budget pays for the steps run; `trace.work` (what the launch is, for the estimate's
    // sampling) also counts the iterations summaries jumped over.
    setup.budget.spend(run.effort);
    for (op, s) in kernel.mem_ops.iter_mut().zip(&run.spaces) {
        if let Some(s) = s {
            op.space = *s;
        }
    }
    super::check_totals(&kernel, &run.trace)?;
    let per_instr: Vec<SassInstruction> = crate::engine::sass::memory_instructions(sk)
        .iter()
        .zip(&run.trace.ops)
        .zip(&kernel.mem_ops)
        .map(|(((i, _), st), op)| {
            let ins = &sk.instrs[*i];
            let shared = op.space == crate::ir::Space::Shared;
            SassInstruction {
                offset: format!("0x{:04x}", ins.offset),
                instruction: ins.text.clone(),
                executions: st.executions,
                sectors: if shared { 0 } else { st.sectors },
                wavefronts: shared.then_some(st.wavefronts),
            }
        })
        .collect();
    let cache = stream(sk, &kernel, &setup, &run.trace, opts.estimate)?;
    let mut notes = Vec::new();
    for &i in &run.data_branches {
        let ins = &sk.instrs[i];
        let line = ins.loc.as_ref().map_or(String::new(), |l| format!("line {} ", l.line));
        let what = if matches!(ins.opcode.as_str(), "BRA" | "EXIT") {
            "not taken (the code after it runs)"
        } else {
            "the instruction runs"
        };
        notes.push(format!(
            "{line}(SASS 0x{:04x} `{}`): its condition depends on data read from memory: {what}",
            ins.offset,
            ins.mnemonic()
        ));
    }
    if run.summaries > 0 {
        notes.push(format!(
            "SASS engine: {} warp-level steps counted by running {}: {} loop iteration(s) covered by {} summaries (registers proved to move by a fixed amount an iteration, no comparison changing, addresses moving by whole sectors)",
            run.trace.work, run.effort, run.summarised_iterations, run.summaries
        ));
    }
    if run.external_calls > 0 {
        notes.push(format!(
            "{} warp call(s) of a function outside the kernel (`CALL.ABS`: printf's `vprintf`, `__assertfail`, `malloc`): the memory it moves is not counted, as the source path does not count printf's",
            run.external_calls
        ));
    }
    if !run.opaque.is_empty() {
        notes.push(format!(
            "results of {} are not computed: an address or branch that used one would be marked as depending on unknown data",
            run.opaque.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !run.bulk.is_empty() {
        notes.push(format!(
            "bulk copies ({}) move data between global and shared memory through L2 with no L1 request: none of the counts above; their L2 and DRAM traffic is not in the boundaries",
            run.bulk.iter().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    if !run.trace.used_fills.is_empty() {
        let fills: Vec<String> = run
            .trace
            .used_fills
            .iter()
            .filter_map(|p| setup.fills[p.0 as usize].as_ref().map(|(f, _)| format!("{} = {f}", kernel.param(*p).name)))
            .collect();
        notes.push(format!("values loaded from arrays the launch gives: {}", fills.join(", ")));
    }
    let trace = run.trace;
    let mut sheet = crate::sheet::build::build(&kernel, &setup, trace, cache, files);
    sheet.engine = "sass";
    sheet.via = Some("sass");
    let made = match &module.compiler {
        Some(c) => format!("{c} for {}, read by {}", module.arch, module.disassembler),
        None => format!("{} code for {}, read by {}", "compiled", module.arch, module.disassembler),
    };
    sheet.compiler = Some(made.clone());
    sheet.assumptions.insert(0, format!("counted from the SASS the GPU executes: {made}"));
    sheet.assumptions.extend(module.notes.iter().cloned());
    sheet.assumptions.extend(notes);
    merge_rows(&mut sheet, &per_instr);
    sheet.listing = Some(listing(sk, &per_instr));
    Ok((sheet, Vec::new()))
}

/// The cache model fed by the SASS engine, all blocks or a sample of them.
/// A compiled kernel's declaration, from the source file its line table names (a `.py` file
/// for Triton and Numba), found where the table says or beside the compiled input.
fn compiled_declaration(sk: &SassKernel, beside: Option<&Path>) -> Option<front::Declaration> {
    let base = sk.name.split('<').next().unwrap_or(&sk.name);
    let file = lift::source_path(&sk.instrs.iter().find_map(|i| i.loc.as_ref())?.file, beside)?;
    std::fs::metadata(&file).ok().filter(|m| m.is_file() && m.len() < (8 << 20))?;
    let text = String::from_utf8_lossy(&std::fs::read(&file).ok()?).into_owned();
    if file.extension().is_some_and(|e| e == "py") {
        // Numba's names carry the module (`__main__::saxpy`); Python's `def` does not.
        front::python_declaration(&text, base.rsplit("::").next().unwrap_or(base))
    } else {
        front::declaration(&text, base)
    }
}

/// Every kernel of a compiled input, lifted (for `kernels`).
pub(super) fn lower_binary(input: &Input, opts: &AnalyzeOptions, files: &mut SourceFiles) -> Result<crate::ir::Module> {
    let (module, _) = compile_input(input, opts, files, None, Vec::new())?;
    let file = files.files.first().map(|f| f.path.clone()).unwrap_or_default();
    let beside = file.parent().map(Path::to_path_buf);
    let mut out = crate::ir::Module { kernels: Vec::new(), failed: Vec::new(), warnings: Vec::new() };
    for sk in &module.kernels {
        let decl = compiled_declaration(sk, beside.as_deref());
        let mut lines = lift::Lines::new(files, None).beside(beside.clone());
        match lift::kernel(sk, decl.as_ref(), &mut lines) {
            Ok(k) => out.kernels.push(k),
            Err(d) => out.failed.push((sk.name.clone(), d)),
        }
    }
    Ok(out)
}

/// Fields of Numba's array parameters (`x.itemsize`, `x.nitems`, `x.strides[d]`) that follow
/// from the element type and the extents the user gave, where the user did not give them; the
/// notes for the sheet.
fn numba_defaults(kernel: &crate::ir::Kernel, args: &mut Vec<(String, String)>) -> Vec<String> {
    let mut notes = Vec::new();
    let given = |args: &Vec<(String, String)>, n: &str| args.iter().find(|(a, _)| a == n).map(|(_, v)| v.clone());
    for p in &kernel.params {
        let Some(array) = p.name.strip_suffix(".data") else { continue };
        let crate::ir::Ty::Ptr(ptr) = &p.ty else { continue };
        if !kernel.params.iter().any(|q| q.name == format!("{array}.itemsize")) {
            continue;
        }
        let itemsize = ptr.pointee.size();
        if given(args, &format!("{array}.itemsize")).is_none() {
            args.push((format!("{array}.itemsize"), itemsize.to_string()));
        }
        let dims = kernel.params.iter().filter(|q| q.name.starts_with(&format!("{array}.shape["))).count();
        let shape: Option<Vec<u64>> = (0..dims)
            .map(|d| given(args, &format!("{array}.shape[{d}]")).and_then(|v| v.trim().parse::<u64>().ok()))
            .collect();
        let Some(shape) = shape else { continue };
        if given(args, &format!("{array}.nitems")).is_none() {
            if let Some(n) = shape.iter().try_fold(1u64, |a, &e| a.checked_mul(e)) {
                args.push((format!("{array}.nitems"), n.to_string()));
            }
        }
        let mut stride = itemsize;
        let mut assumed = false;
        for d in (0..dims).rev() {
            let name = format!("{array}.strides[{d}]");
            if given(args, &name).is_none() {
                args.push((name, stride.to_string()));
                assumed = true;
            }
            stride = stride.saturating_mul(shape[d]);
        }
        if assumed {
            notes.push(format!(
                "Numba array `{array}`: C-contiguous strides from its shape (pass --arg {array}.strides[0]=BYTES for another layout)"
            ));
        }
    }
    notes
}

fn stream(
    sk: &SassKernel,
    kernel: &crate::ir::Kernel,
    setup: &crate::launch::Setup,
    trace: &crate::engine::Trace,
    estimate: crate::cache::sample::EstimateBudget,
) -> Result<CacheModel> {
    let budget = crate::cache::sample::SAMPLE_WORK.min(setup.max_work);
    crate::cache::sample::stream_with(kernel, setup, trace, budget, estimate, false, &mut |setup, order, m| {
        crate::engine::sass::run_blocks(sk, kernel, setup, order, m).map(|t| t.trace.work)
    })
}

/// Rows of one source line, column, text and kind of access become one, listing its
/// instructions (an unrolled loop's copies, the pieces of a split copy).
/// What makes two SASS rows one: place, access, space, kind, width, cache operator and matrix
/// count (an LDSM and an LDS.128 of one line stay apart: only one is a shared-load instruction).
type RowKey = (u32, u32, String, crate::ir::Space, crate::ir::AccessKind, u32, &'static str, Option<u8>);

fn merge_rows(sheet: &mut Sheet, per_instr: &[SassInstruction]) {
    let mut merged: Vec<Row> = Vec::new();
    let mut at: BTreeMap<RowKey, usize> = BTreeMap::new();
    for r in std::mem::take(&mut sheet.instructions) {
        let key = (r.line, r.column, r.text.clone(), r.space, r.op, r.width, r.cache_op, r.matrix);
        let ins = per_instr.get(r.op_id).cloned();
        match at.get(&key) {
            Some(&i) => {
                let m = &mut merged[i];
                m.executions += r.executions;
                m.thread_executions += r.thread_executions;
                m.requests += r.requests;
                m.sectors += r.sectors;
                m.ideal_sectors += r.ideal_sectors;
                m.logical_bytes += r.logical_bytes;
                let add = |a: &mut Option<u64>, b: Option<u64>| {
                    if let (Some(x), Some(y)) = (a.as_mut(), b) {
                        *x += y;
                    }
                };
                add(&mut m.wavefronts, r.wavefronts);
                add(&mut m.ideal_wavefronts, r.ideal_wavefronts);
                add(&mut m.bank_conflicts, r.bank_conflicts);
                m.sectors_min += r.sectors_min;
                m.sectors_max += r.sectors_max;
                m.exact &= r.exact;
                for a in r.assumptions {
                    if !m.assumptions.contains(&a) {
                        m.assumptions.push(a);
                    }
                }
                if let (Some(b), Some(x)) = (m.boundary.as_mut(), r.boundary) {
                    b.l1_hit_sectors += x.l1_hit_sectors;
                    b.l2_read_sectors += x.l2_read_sectors;
                    b.l2_write_sectors += x.l2_write_sectors;
                    b.dram_read_sectors += x.dram_read_sectors;
                }
                m.sass.extend(ins);
            }
            None => {
                at.insert(key, merged.len());
                let mut r = r;
                r.sass = ins.into_iter().collect();
                merged.push(r);
            }
        }
    }
    sheet.instructions = merged;
}

/// The kernel's SASS with each memory instruction's executions and sectors (or wavefronts).
fn listing(sk: &SassKernel, per_instr: &[SassInstruction]) -> String {
    let mut out = String::new();
    let mem = crate::engine::sass::memory_instructions(sk);
    let mut counts = vec![None; sk.instrs.len()];
    for ((i, _), s) in mem.iter().zip(per_instr) {
        counts[*i] = Some(s);
    }
    let mut last_loc = None;
    for (ins, c) in sk.instrs.iter().zip(&counts) {
        if ins.loc != last_loc {
            if let Some(l) = &ins.loc {
                out.push_str(&format!("        // {}:{}\n", l.file, l.line));
            }
            last_loc = ins.loc.clone();
        }
        let text = format!("/*{:04x}*/ {}", ins.offset, ins.text);
        match c {
            Some(s) => {
                let what = match s.wavefronts {
                    Some(w) => format!("{w} wavefronts"),
                    None => format!("{} sectors", s.sectors),
                };
                out.push_str(&format!("{text:<64} ; {} executions, {what}\n", s.executions));
            }
            None => {
                out.push_str(&text);
                out.push('\n');
            }
        }
    }
    out
}
