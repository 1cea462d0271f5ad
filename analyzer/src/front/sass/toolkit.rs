//! Finding the CUDA toolkit's compiler and disassembler: `SECTOR_ESTIMATE_CUDA` or `CUDA_HOME`
//! / `CUDA_PATH`, then `PATH`, then the Python index's packages (`nvidia-cuda-nvcc`,
//! `nvidia-cuda-nvdisasm`: `site-packages/nvidia/cu13/bin` or `nvidia/cuda_nvcc/bin`), then
//! `/usr/local/cuda`.

use crate::diag::{Diagnostic, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// What to install when a tool is missing.
pub const INSTALL_HINT: &str = "install the CUDA toolkit's compiler and disassembler (no GPU needed): `pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm nvidia-cuda-cccl` (to match the H200's CUDA 13.0: `nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.*`), or set CUDA_HOME to a toolkit; `--via source` needs none";

#[derive(Clone, Debug)]
pub struct Toolkit {
    pub nvcc: Option<PathBuf>,
    pub nvdisasm: PathBuf,
    /// `cuobjdump`, to take cubins out of fatbins and executables.
    pub cuobjdump: Option<PathBuf>,
    /// `include/cccl` beside the compiler (the pip packages do not put it on nvcc's path).
    pub cccl: Option<PathBuf>,
}

fn exe(dir: &Path, name: &str) -> Option<PathBuf> {
    let p = dir.join(name);
    p.is_file().then_some(p)
}

/// Candidate `bin` folders, most specific first.
fn bin_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    for var in ["SECTOR_ESTIMATE_CUDA", "CUDA_HOME", "CUDA_PATH"] {
        if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
            dirs.push(PathBuf::from(v).join("bin"));
        }
    }
    if let Some(path) = std::env::var_os("PATH") {
        dirs.extend(std::env::split_paths(&path));
    }
    for site in python_site_dirs() {
        for sub in [
            "nvidia/cu13/bin",
            "nvidia/cu12/bin",
            "nvidia/cuda_nvcc/bin",
            "nvidia/cuda_nvdisasm/bin",
            "nvidia/cuda_cuobjdump/bin",
        ] {
            dirs.push(site.join(sub));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/bin"));
    dirs
}

/// `site-packages` folders of the Python on `PATH` (where `pip install` puts the toolkit).
fn python_site_dirs() -> Vec<PathBuf> {
    let out = Command::new("python3")
        .args([
            "-c",
            "import site,sys; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()] + sys.path))",
        ])
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(PathBuf::from)
            .filter(|p| p.join("nvidia").is_dir())
            .collect(),
        _ => Vec::new(),
    }
}

/// The toolkit, found once per process.
pub fn find() -> Result<Toolkit> {
    static FOUND: std::sync::OnceLock<Option<Toolkit>> = std::sync::OnceLock::new();
    FOUND.get_or_init(search).clone().ok_or_else(|| {
        Diagnostic::new(ErrorKind::Unsupported, "--via sass: no CUDA disassembler (`nvdisasm`) was found".to_string())
            .note(INSTALL_HINT)
    })
}

fn search() -> Option<Toolkit> {
    let dirs = bin_dirs();
    let first = |name: &str| dirs.iter().find_map(|d| exe(d, name));
    let nvdisasm = first("nvdisasm")?;
    let nvcc = first("nvcc");
    let cccl = nvcc.as_ref().and_then(|n| {
        let inc = n.parent()?.parent()?.join("include/cccl");
        inc.join("nv").is_dir().then_some(inc)
    });
    Some(Toolkit { nvcc, nvdisasm, cuobjdump: first("cuobjdump"), cccl })
}

/// `V13.0.88` from `nvcc --version` (the last `release` line), or `None`.
pub fn version(tool: &Path) -> Option<String> {
    let o = Command::new(tool).arg("--version").output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    text.lines().rev().find_map(|l| {
        l.split_whitespace()
            .find(|w| w.starts_with('V') && w[1..].starts_with(|c: char| c.is_ascii_digit()))
            .map(|v| v[1..].to_string())
    })
}
