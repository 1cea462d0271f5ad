//! Launch manifests: `examples/NAME.toml` beside `examples/NAME.cu`, one or more cases each.
//! The snapshot tests, the CLI and `sector-validate` read the same cases.

use crate::analyze::AnalyzeOptions;
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::fill::Fill;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(rename = "case")]
    pub cases: Vec<Case>,
}

/// A scalar written as a TOML integer, float or string.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Int(i64),
    Float(f64),
    Str(String),
}

impl Scalar {
    pub fn as_text(&self) -> String {
        match self {
            Scalar::Int(v) => v.to_string(),
            Scalar::Float(v) => v.to_string(),
            Scalar::Str(s) => s.clone(),
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Unique across all examples.
    pub name: String,
    pub kernel: String,
    pub grid: Scalar,
    pub block: Scalar,
    #[serde(default)]
    pub args: BTreeMap<String, Scalar>,
    /// Pointer parameter -> fill (see [`Fill::parse`]).
    #[serde(default)]
    pub fills: BTreeMap<String, String>,
    /// Pointer parameter -> byte offset past a 256-byte boundary.
    #[serde(default)]
    pub offsets: BTreeMap<String, i64>,
    #[serde(default)]
    pub defines: BTreeMap<String, Scalar>,
    /// Dynamic shared memory per block, in bytes.
    #[serde(default)]
    pub shared_bytes: u64,
    /// Numbers worked out by hand, independently of the tool.
    #[serde(default)]
    pub expect: BTreeMap<String, u64>,
    /// Free text: why the expected numbers are what they are.
    #[serde(default)]
    pub why: Option<String>,
    /// Free text for the validation report: what the cache model does not capture here, or
    /// what the case probes.
    #[serde(default)]
    pub boundary_note: Option<String>,
}

impl Manifest {
    pub fn parse(text: &str, path: &Path) -> Result<Manifest> {
        toml::from_str(text).map_err(|e| Diagnostic::new(ErrorKind::Usage, format!("{}: {e}", path.display())))
    }
    pub fn load(path: &Path) -> Result<Manifest> {
        let text = crate::source::read_config(path).map_err(|why| Diagnostic::new(ErrorKind::Usage, why))?;
        Manifest::parse(&text, path)
    }
}

impl Case {
    pub fn options(&self) -> Result<AnalyzeOptions> {
        let launch = Launch {
            name: Some(self.name.clone()),
            grid: self.grid.clone(),
            block: self.block.clone(),
            args: self.args.clone(),
            fills: self.fills.clone(),
            offsets: self.offsets.clone(),
            defines: self.defines.clone(),
            shared_bytes: self.shared_bytes,
        };
        launch.options(Some(self.kernel.clone()))
    }
}

/// One launch of a kernel: a manifest case's launch, or a `launch` entry of `check`'s config.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Launch {
    pub name: Option<String>,
    pub grid: Scalar,
    pub block: Scalar,
    #[serde(default)]
    pub args: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub fills: BTreeMap<String, String>,
    #[serde(default)]
    pub offsets: BTreeMap<String, i64>,
    #[serde(default)]
    pub defines: BTreeMap<String, Scalar>,
    #[serde(default)]
    pub shared_bytes: u64,
}

impl Launch {
    pub fn options(&self, kernel: Option<String>) -> Result<AnalyzeOptions> {
        let mut fills = Vec::new();
        for (p, f) in &self.fills {
            fills.push((p.clone(), Fill::parse(f)?));
        }
        Ok(AnalyzeOptions {
            kernel,
            grid: self.grid.as_text(),
            block: self.block.as_text(),
            args: self.args.iter().map(|(k, v)| (k.clone(), v.as_text())).collect(),
            defines: self.defines.iter().map(|(k, v)| (k.clone(), v.as_text())).collect(),
            fills,
            offsets: self.offsets.iter().map(|(k, v)| (k.clone(), *v)).collect(),
            shared_bytes: self.shared_bytes,
            ..AnalyzeOptions::default()
        })
    }
}

/// Every `(source, manifest)` pair in a folder, sorted by name: `X.cu` with `X.toml`.
pub fn examples_in(dir: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else { return out };
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "toml") {
            for ext in ["cu", "rs"] {
                let src = p.with_extension(ext);
                if src.exists() {
                    out.push((src, p.clone()));
                }
            }
        }
    }
    out.sort();
    out
}
