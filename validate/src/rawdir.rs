//! The folder of raw files one profiling run leaves (`OUTPUT/raw/`), from which `compare`
//! rebuilds the report anywhere, without a GPU:
//!
//! | file | what |
//! | --- | --- |
//! | `launch.json` | the launching process's log: device, versions, one record per case |
//! | `raw.csv` | `ncu -i profile.ncu-rep --page raw --csv --print-units base` |
//! | `source-ID.csv` | `ncu -i profile.ncu-rep --page source --csv --print-source cuda,sass --launch-skip ID --launch-count 1` |
//! | `session.csv` | `ncu -i profile.ncu-rep --page session --csv` |
//! | `ncu-version.txt` | `ncu --version` |
//! | `nvidia-smi.csv` | `nvidia-smi --query-gpu=name,compute_cap,driver_version --format=csv` |
//! | `profile.ncu-rep` | the Nsight Compute report itself (not read by `compare`) |
//! | `ncu-profile.log` | what `ncu` printed while profiling |

use crate::compare::{Environment, Measurements};
use crate::gpu::LaunchLog;
use crate::ncu;
use anyhow::{Context, Result};
use std::path::Path;

pub const LAUNCH_LOG: &str = "launch.json";
pub const RAW_CSV: &str = "raw.csv";
pub const SESSION_CSV: &str = "session.csv";
pub const NCU_VERSION: &str = "ncu-version.txt";
pub const NVIDIA_SMI: &str = "nvidia-smi.csv";
pub const REPORT: &str = "profile";
pub const PROFILE_LOG: &str = "ncu-profile.log";

pub fn source_csv(id: u32) -> String {
    format!("source-{id}.csv")
}

fn read_opt(dir: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(dir.join(name)).ok()
}

/// Reads a raw folder. `launch.json` and `raw.csv` are required; the rest fills in what it can.
pub fn load(dir: &Path) -> Result<Measurements> {
    let log_text = std::fs::read_to_string(dir.join(LAUNCH_LOG))
        .with_context(|| format!("cannot read {}", dir.join(LAUNCH_LOG).display()))?;
    let log: LaunchLog =
        serde_json::from_str(&log_text).with_context(|| format!("malformed {}", dir.join(LAUNCH_LOG).display()))?;
    let raw_text = std::fs::read_to_string(dir.join(RAW_CSV))
        .with_context(|| format!("cannot read {}", dir.join(RAW_CSV).display()))?;
    let results = ncu::parse_raw(&raw_text).with_context(|| format!("in {}", dir.join(RAW_CSV).display()))?;
    let mut sources = std::collections::HashMap::new();
    for r in &results {
        if let Some(text) = read_opt(dir, &source_csv(r.id)) {
            let blocks =
                ncu::parse_source(&text).with_context(|| format!("in {}", dir.join(source_csv(r.id)).display()))?;
            sources.insert(r.id, blocks);
        }
    }
    let session = read_opt(dir, SESSION_CSV).map(|t| ncu::parse_session(&t)).unwrap_or_default();
    let smi = read_opt(dir, NVIDIA_SMI).and_then(|t| ncu::parse_nvidia_smi(&t));
    let first = results.first();
    let from_raw = |k: &str| first.and_then(|r| r.text.get(k)).cloned().filter(|s| !s.is_empty());
    let env = &log.environment;
    let pick = |a: Option<String>, b: &str| a.filter(|s| !s.is_empty()).unwrap_or_else(|| b.to_string());
    let environment = Environment {
        gpu: pick(from_raw("device__attribute_display_name").or(smi.as_ref().map(|s| s.0.clone())), &env.gpu),
        compute_capability: pick(from_raw("CC").or(smi.as_ref().map(|s| s.1.clone())), &env.compute_capability),
        driver: smi.as_ref().map(|s| s.2.clone()).unwrap_or_default(),
        driver_cuda_version: env.driver_cuda_version.clone(),
        cuda_version: session.get("CUDA Version").cloned().unwrap_or_default(),
        nvrtc_version: env.nvrtc_version.clone(),
        ncu_version: read_opt(dir, NCU_VERSION).and_then(|t| ncu::parse_ncu_version(&t)).unwrap_or_default(),
        profiler_command: session.get("Profiler Command Line").cloned().unwrap_or_default(),
    };
    Ok(Measurements { log, results, sources, environment })
}
