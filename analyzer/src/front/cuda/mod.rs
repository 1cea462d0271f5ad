//! The CUDA front end: preprocess -> parse (tree-sitter-cuda) -> lower every `__global__`
//! function to the IR.

pub mod host;
pub mod launch_site;
mod lower;
mod misread;
pub mod preprocess;
mod prune;
pub(crate) mod types;
pub use types::component_layout;

use crate::diag::{Result, Severity};
use crate::ir::Module;
use crate::source::{FileId, FileLoader, SourceFiles};
use std::path::PathBuf;

pub use lower::lower_translation_unit;

/// What the CUDA front end is given: the preprocessor's `-D` and `-I`, and the launch's
/// `NAME=VALUE` args (template parameters take their values from them).
#[derive(Clone, Copy, Debug)]
pub struct CudaOptions<'a> {
    /// `-D NAME[=VALUE]` as (name, value).
    pub defines: &'a [(String, String)],
    pub include_dirs: &'a [PathBuf],
    pub args: &'a [(String, String)],
}

/// Preprocessed size above which unreachable functions are blanked before parsing.
const PRUNE_ABOVE: usize = 256 << 10;

pub fn lower_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &CudaOptions,
    loader: &dyn FileLoader,
) -> Result<Module> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.to_vec(), include_dirs: opts.include_dirs.to_vec() };
    let mut pre = preprocess_unit(files, root, &pp_opts, loader)?;
    // A project header that is not there (a `config.h` the build generates) may hold what a
    // kernel needs: then the kernel's error is the header's. A kernel that lowers without it
    // needed nothing from it, and the header is a warning.
    let header = pre.missing_includes.first().cloned();
    let without = |name: Option<&str>, d: &crate::diag::Diagnostic, h: &crate::diag::Diagnostic| {
        let whose = name.map_or("the file".to_string(), |n| format!("kernel `{n}`"));
        let mut e = h.clone();
        e.message = format!("{}, and without it {whose} cannot be lowered: {}", h.message, d.message);
        e.note(
            "give its directory with -I DIR (or generate it, as the project's build does); a header only host code needs is left out with a warning",
        )
    };
    let mut module = match (lower_translation_unit(&pre, opts.args), &header) {
        (Ok(m), _) => m,
        (Err(d), Some(h)) => return Err(without(None, &d, h)),
        (Err(d), None) => return Err(d),
    };
    // Separate compilation (`nvcc -rdc=true`): a device function another `.cu` file of the
    // folder defines is read from there, as the device linker joins them.
    // Each file read may call into another (up to a few levels).
    let mut linked: Vec<String> = Vec::new();
    for _ in 0..4 {
        let more: Vec<String> =
            link_definitions(files, root, &module, loader).into_iter().filter(|f| !linked.contains(f)).collect();
        if more.is_empty() {
            break;
        }
        let text = &mut files.files[root.0 as usize].text;
        let before = text.len();
        for f in &more {
            text.push_str(&format!("\n#include \"{f}\"\n"));
        }
        let relinked = preprocess_unit(files, root, &pp_opts, loader)
            .and_then(|p| lower_translation_unit(&p, opts.args).map(|m| (p, m)));
        match relinked {
            Ok((p, m)) => {
                linked.extend(more);
                pre = p;
                module = m;
            }
            Err(_) => {
                files.files[root.0 as usize].text.truncate(before);
                break;
            }
        }
    }
    if !linked.is_empty() {
        let note = format!(
            "device functions defined in {} read from there (separate compilation, as nvcc -rdc=true links them)",
            linked.join(", ")
        );
        for k in &mut module.kernels {
            k.notes.push(note.clone());
        }
    }
    module.warnings = pre.warnings.iter().map(|w| w.clone().severity(Severity::Warning)).collect();
    if let Some(h) = &header {
        for (name, d) in module.failed.iter_mut() {
            *d = without(Some(name.as_str()), d, h);
        }
        // Said once a kernel lowered without it; a kernel that did not says it in its error.
        for m in pre.missing_includes.iter().filter(|_| !module.kernels.is_empty()) {
            module.warnings.push(
                m.clone()
                    .severity(Severity::Warning)
                    .note("left out: a kernel that lowers without it needs nothing from it (a macro it would define reads as undefined in #if); -I DIR gives it"),
            );
        }
    }
    Ok(module)
}

/// The translation unit of `root`, preprocessed; in a large one, what no kernel reaches is
/// blanked before parsing (the parse tree dominates memory).
fn preprocess_unit(
    files: &mut SourceFiles,
    root: FileId,
    pp_opts: &preprocess::PreprocessOptions,
    loader: &dyn FileLoader,
) -> Result<preprocess::Preprocessed> {
    let mut pre = preprocess::preprocess_tolerant(files, root, pp_opts, loader)?;
    if pre.text.len() > PRUNE_ABOVE {
        prune::blank_unreachable(&mut pre.text);
    }
    Ok(pre)
}

/// The `.cu` files of the root's folder that define a function some kernel failed to find
/// (`call to `merge`: not a __device__ function of this file`), by name relative to the folder.
fn link_definitions(files: &SourceFiles, root: FileId, module: &Module, loader: &dyn FileLoader) -> Vec<String> {
    let missing: Vec<&str> = module
        .failed
        .iter()
        .filter_map(|(_, d)| {
            let rest = d.message.strip_prefix("call to `")?;
            let (name, tail) = rest.split_once('`')?;
            tail.starts_with(": not a __device__ function of this file").then_some(name)
        })
        .filter(|n| n.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .collect();
    let Some(path) = files.files.get(root.0 as usize).map(|f| f.path.clone()) else { return Vec::new() };
    let (Some(dir), false) = (path.parent(), missing.is_empty()) else { return Vec::new() };
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir })
    else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    let mut names: Vec<std::path::PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        if p.extension().is_none_or(|x| x != "cu") || p.file_name() == path.file_name() {
            continue;
        }
        // Through the loader, as an include is read: an in-memory unit links nothing.
        let Some(text) = loader.load(&p) else { continue };
        if text.contains("__device__") && missing.iter().any(|n| defines(&text, n)) {
            if let Some(f) = p.file_name().and_then(|f| f.to_str()) {
                out.push(f.to_string());
            }
        }
    }
    out
}

/// Whether `text` defines a function `name`: `name(...)` followed by `{` (a body), not `;`.
fn defines(text: &str, name: &str) -> bool {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    text.match_indices(name).any(|(i, _)| {
        let end = i + name.len();
        let b = text.as_bytes();
        if i > 0 && ident(b[i - 1]) || b.get(end).is_some_and(|&c| ident(c)) {
            return false;
        }
        let rest = text[end..].trim_start();
        let Some(close) = rest.starts_with('(').then(|| crate::front::sass::matching(rest, '(', ')')).flatten() else {
            return false;
        };
        let after = rest[close + 1..].trim_start();
        after.strip_prefix("const").map_or(after, str::trim_start).starts_with('{')
    })
}

/// The `<<<...>>>` launches in a CUDA file's own host code; `opts.args` fill host variables
/// of the same names.
pub fn launch_sites_of_file(
    files: &mut SourceFiles,
    root: FileId,
    opts: &CudaOptions,
    loader: &dyn FileLoader,
) -> Result<Vec<launch_site::LaunchSite>> {
    let pp_opts =
        preprocess::PreprocessOptions { defines: opts.defines.to_vec(), include_dirs: opts.include_dirs.to_vec() };
    let pre = preprocess::preprocess_tolerant(files, root, &pp_opts, loader)?;
    launch_site::launch_sites_with(&pre, opts.args)
}
