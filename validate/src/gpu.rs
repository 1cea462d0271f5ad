//! The GPU side: compile each example with NVRTC (or, for a file NVRTC cannot take, `nvcc`) for
//! the device's own architecture (with line info), fill buffers as planned, launch each case once
//! and check for errors. Nothing here runs unless [`gpu_available`] says the CUDA driver library
//! is present (creating a context without it panics inside cudarc).

use crate::cuda::{kernel_signatures, strip_host_code};
use crate::plan::{cuda_include_dir, nvrtc_options, plan_launch, ArgBytes, ArgPlan, CaseSpec, LaunchPlan};
use crate::ptx;
use anyhow::{anyhow, bail, Result};
use cudarc::driver::{CudaContext, CudaModule, CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether `libcuda` can be loaded.
pub fn gpu_available() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// Whether `libnvrtc` can be loaded.
pub fn nvrtc_available() -> bool {
    // SAFETY: only tries to open the shared library.
    unsafe { cudarc::nvrtc::sys::is_culib_present() }
}

/// The device and its software, as the launching process saw them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceEnv {
    pub gpu: String,
    pub compute_capability: String,
    /// The NVRTC target: `sm_90`.
    pub arch: String,
    /// `cuDriverGetVersion`: the CUDA version the driver supports (`13.0`).
    pub driver_cuda_version: String,
    pub nvrtc_version: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BufferRecord {
    pub param: String,
    pub bytes: u64,
    /// Bytes from the allocation's start to the pointer the kernel got.
    pub ptr_offset: u64,
    pub fill: Option<String>,
}

/// What happened to one case in the launching process. Nsight Compute numbers its results by
/// launch, so the n-th record with `launched` is result n.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LaunchRecord {
    pub case: String,
    pub example: String,
    pub kernel: String,
    /// The PTX entry launched (mangled unless `extern "C"`).
    pub entry: Option<String>,
    /// The launch was issued (so the profiler saw it).
    pub launched: bool,
    pub error: Option<String>,
    /// NVRTC rejected the file as written and compiled it with host code blanked.
    pub host_code_stripped: bool,
    /// NVRTC rejected the file even with host code blanked (a host header such as `<vector>`
    /// it cannot open), and the toolkit's `nvcc` compiled it, as the project's own build does.
    #[serde(default)]
    pub compiled_by_nvcc: bool,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub buffers: Vec<BufferRecord>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LaunchLog {
    pub environment: DeviceEnv,
    pub launches: Vec<LaunchRecord>,
}

impl LaunchLog {
    /// The records that became Nsight Compute results, in result order.
    pub fn launched(&self) -> impl Iterator<Item = &LaunchRecord> {
        self.launches.iter().filter(|r| r.launched)
    }
}

/// NVRTC's output for one file: its PTX (for the entry names and parameter types) and, when
/// NVRTC made one for the device's real architecture, its CUBIN (loaded as is, so the SASS and
/// its line table are NVRTC's own, with no driver JIT in between).
struct Compiled {
    ptx: String,
    cubin: Option<Vec<u8>>,
    stripped: bool,
    by_nvcc: bool,
}

fn c_chars_to_string(v: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = v.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles one source text; `Err` carries NVRTC's log.
fn nvrtc(text: &str, name: &str, options: &[String]) -> Result<(String, Option<Vec<u8>>), String> {
    use cudarc::nvrtc::{result, sys};
    let src = std::ffi::CString::new(text).map_err(|_| "the source holds a NUL byte".to_string())?;
    let cname = std::ffi::CString::new(name).map_err(|_| "the file name holds a NUL byte".to_string())?;
    let prog = result::create_program(&src, Some(&cname)).map_err(|e| format!("nvrtcCreateProgram: {e:?}"))?;
    // SAFETY: `prog` was just created and is destroyed once, below; `src` and `cname` outlive it.
    let out = unsafe {
        match result::compile_program(prog, options) {
            Err(e) => {
                let log = result::get_program_log(prog).map(|l| c_chars_to_string(&l)).unwrap_or_default();
                Err(format!("{e:?}: {}", log.trim()))
            }
            Ok(()) => {
                let ptx =
                    result::get_ptx(prog).map(|p| c_chars_to_string(&p)).map_err(|e| format!("nvrtcGetPTX: {e:?}"));
                let mut size = 0usize;
                let cubin = if sys::nvrtcGetCUBINSize(prog, &mut size).result().is_ok() && size > 0 {
                    let mut buf = vec![0u8; size];
                    sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast()).result().ok().map(|_| buf)
                } else {
                    None
                };
                ptx.map(|p| (p, cubin))
            }
        }
    };
    // SAFETY: created above, not destroyed before.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// Compiles a file as written, and if NVRTC rejects it, once more with its host code blanked,
/// and if that fails too, with the toolkit's `nvcc` (which opens host headers NVRTC cannot).
fn compile(source: &Path, text: &str, options: &[String], arch: &str) -> Result<Compiled, String> {
    // The program is named after the file, so Nsight Compute's source view names (and can
    // import) the file the line numbers refer to.
    let name = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf()).display().to_string();
    let mut opts = vec![format!("--gpu-architecture={arch}")];
    opts.extend(options.iter().cloned());
    match nvrtc(text, &name, &opts) {
        Ok((ptx, cubin)) => Ok(Compiled { ptx, cubin, stripped: false, by_nvcc: false }),
        Err(e1) => {
            let (stripped, n) = strip_host_code(text);
            let e2 = if n == 0 {
                None
            } else {
                match nvrtc(&stripped, &name, &opts) {
                    Ok((ptx, cubin)) => return Ok(Compiled { ptx, cubin, stripped: true, by_nvcc: false }),
                    Err(e2) => Some(e2),
                }
            };
            let nvrtc_said = match &e2 {
                None => format!("NVRTC: {}", short(&e1)),
                Some(e2) => format!(
                    "NVRTC rejected the file as written ({}) and with host code blanked ({})",
                    short(&e1),
                    short(e2)
                ),
            };
            match nvcc(Path::new(&name), &opts) {
                Ok((ptx, cubin)) => Ok(Compiled { ptx, cubin: Some(cubin), stripped: false, by_nvcc: true }),
                Err(e3) => Err(format!("{nvrtc_said}; {e3}")),
            }
        }
    }
}

/// The toolkit's `nvcc`: in `$CUDA_HOME/bin` (and the other roots [`cuda_roots`] names), where
/// `PATH` has it before `/usr/local/cuda/bin`.
fn nvcc_path() -> Option<PathBuf> {
    let mut roots = crate::plan::cuda_roots();
    let fallback = roots.pop();
    let mut dirs: Vec<PathBuf> = roots.into_iter().map(|r| r.join("bin")).collect();
    dirs.extend(std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default());
    dirs.extend(fallback.map(|r| r.join("bin")));
    dirs.into_iter().map(|d| d.join("nvcc")).find(|p| p.is_file())
}

/// Compiles the file itself with `nvcc` to PTX (for the entry names and parameter types) and to
/// a CUBIN for the device's architecture, with the same `-D`, `-I` and `-lineinfo` options.
fn nvcc(source: &Path, nvrtc_opts: &[String]) -> Result<(String, Vec<u8>), String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static SEQ: AtomicUsize = AtomicUsize::new(0);
    let exe = nvcc_path().ok_or("no nvcc to fall back on (set CUDA_HOME or put nvcc on PATH)")?;
    let dir = std::env::temp_dir().join(format!(
        "sector-validate-nvcc-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("nvcc: cannot create {}: {e}", dir.display()))?;
    let opts: Vec<String> = nvrtc_opts
        .iter()
        .map(|o| o.strip_prefix("--gpu-architecture=").map(|a| format!("-arch={a}")).unwrap_or_else(|| o.clone()))
        .collect();
    let run = |kind: &str, out: &Path| -> Result<(), String> {
        let o = std::process::Command::new(&exe)
            .arg(kind)
            .args(&opts)
            .arg(source)
            .arg("-o")
            .arg(out)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
        if o.status.success() {
            Ok(())
        } else {
            Err(format!("nvcc {kind} failed: {}", short(String::from_utf8_lossy(&o.stderr).trim())))
        }
    };
    let (ptx_path, cubin_path) = (dir.join("k.ptx"), dir.join("k.cubin"));
    let out = run("-ptx", &ptx_path).and_then(|_| run("-cubin", &cubin_path)).and_then(|_| {
        let ptx = std::fs::read_to_string(&ptx_path).map_err(|e| format!("nvcc: reading the PTX: {e}"))?;
        let cubin = std::fs::read(&cubin_path).map_err(|e| format!("nvcc: reading the CUBIN: {e}"))?;
        Ok((ptx, cubin))
    });
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn short(s: &str) -> String {
    const MAX: usize = 4000;
    if s.len() <= MAX {
        s.to_string()
    } else {
        let mut cut = MAX;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{} ...", &s[..cut])
    }
}

fn version_text(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

fn device_env(ctx: &Arc<CudaContext>) -> Result<DeviceEnv> {
    let (maj, min) = ctx.compute_capability()?;
    let mut driver = 0i32;
    // SAFETY: writes one int.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
    let (mut nmaj, mut nmin) = (0i32, 0i32);
    // SAFETY: writes two ints; the library was checked present.
    unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut nmaj, &mut nmin) };
    Ok(DeviceEnv {
        gpu: ctx.name()?,
        compute_capability: format!("{maj}.{min}"),
        arch: format!("sm_{maj}{min}"),
        driver_cuda_version: version_text(driver),
        nvrtc_version: format!("{nmaj}.{nmin}"),
    })
}

type ModuleCache = HashMap<(PathBuf, Vec<String>), Result<Arc<Loaded>, String>>;

struct Loaded {
    module: Arc<CudaModule>,
    entries: Vec<ptx::PtxEntry>,
    stripped: bool,
    by_nvcc: bool,
}

/// Runs every case once on device 0, in order. `log` receives one short line per case.
/// A case that cannot be compiled, planned or launched is recorded with its error and the
/// others go on.
pub fn run_launches(cases: &[CaseSpec], log: &mut dyn FnMut(&str)) -> Result<LaunchLog> {
    if !gpu_available() {
        bail!("no GPU: the CUDA driver library (libcuda) cannot be loaded");
    }
    if !nvrtc_available() {
        bail!("NVRTC (libnvrtc) cannot be loaded");
    }
    let ctx = CudaContext::new(0).map_err(|e| anyhow!("cannot create a CUDA context: {e}"))?;
    let stream = ctx.default_stream();
    let environment = device_env(&ctx)?;
    let arch = environment.arch.clone();
    let cuda_include = cuda_include_dir();
    let mut cache: ModuleCache = HashMap::new();
    let mut launches = Vec::new();
    for spec in cases {
        let mut rec = LaunchRecord {
            case: spec.case.name.clone(),
            example: spec.example.clone(),
            kernel: spec.case.kernel.clone(),
            ..LaunchRecord::default()
        };
        let outcome = launch_one(spec, &ctx, &stream, &arch, cuda_include.as_deref(), &mut cache, &mut rec);
        match &outcome {
            Ok(()) => log(&format!("launched {} ({}) grid {:?} block {:?}", rec.case, rec.kernel, rec.grid, rec.block)),
            Err(e) => {
                rec.error = Some(format!("{e:#}"));
                log(&format!("FAILED {}: {e:#}", rec.case));
            }
        }
        launches.push(rec);
    }
    Ok(LaunchLog { environment, launches })
}

fn launch_one(
    spec: &CaseSpec,
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    arch: &str,
    cuda_include: Option<&Path>,
    cache: &mut ModuleCache,
    rec: &mut LaunchRecord,
) -> Result<()> {
    let sheet = spec.prediction.as_ref().map_err(|e| anyhow!("no prediction, so no buffer sizes: {e}"))?;
    // Read as the analysis reads it (bytes that are not UTF-8, in a comment, as U+FFFD).
    let text = sector_analyzer::source::read_source(&spec.source).map_err(|e| anyhow!("cannot read {e}"))?;
    let options = nvrtc_options(&spec.case, &spec.source, cuda_include);
    let key = (spec.source.clone(), options.clone());
    let loaded = cache
        .entry(key)
        .or_insert_with(|| {
            let c = compile(&spec.source, &text, &options, arch)?;
            let entries = ptx::entries(&c.ptx);
            let from_cubin = c.cubin.and_then(|b| ctx.load_module(Ptx::from_binary(b)).ok());
            let module = match from_cubin {
                Some(m) => m,
                None => ctx.load_module(Ptx::from_src(c.ptx)).map_err(|e| format!("loading the PTX: {e}"))?,
            };
            Ok(Arc::new(Loaded { module, entries, stripped: c.stripped, by_nvcc: c.by_nvcc }))
        })
        .clone()
        .map_err(|e| anyhow!(e))?;
    rec.host_code_stripped = loaded.stripped;
    rec.compiled_by_nvcc = loaded.by_nvcc;
    let kernel = &spec.case.kernel;
    let signatures = kernel_signatures(&crate::plan::with_quoted_includes(&spec.source, &text), kernel);
    if signatures.is_empty() {
        bail!("no `__global__` function named `{kernel}` in {}", spec.source.display());
    }
    let candidates = ptx::find_kernel(&loaded.entries, kernel);
    if candidates.is_empty() {
        bail!("the PTX has no entry for `{kernel}` (a template kernel needs an explicit instantiation)");
    }
    // Several instantiations of a template kernel: the one whose type arguments the case names
    // (`T = "double"` -> `_Z9reduce_smIdE...`) comes first.
    let wanted: Vec<&str> = spec.case.args.values().filter_map(|v| ptx::type_code(&v.as_text())).collect();
    let fits = |e: &ptx::PtxEntry| {
        let mut have = ptx::template_type_codes(&e.name);
        wanted.iter().all(|w| match have.iter().position(|h| h == w) {
            Some(i) => {
                have.remove(i);
                true
            }
            None => false,
        })
    };
    let mut candidates = candidates;
    candidates.sort_by_key(|e| !fits(e));
    let (entry, params) = candidates
        .iter()
        .find_map(|e| signatures.iter().find(|s| s.len() == e.params.len()).map(|s| (*e, s)))
        .ok_or_else(|| anyhow!("no PTX entry of `{kernel}` has the parameter count of its source"))?;
    let plan = plan_launch(params, Some(&entry.params), sheet, &spec.case)?;
    rec.entry = Some(entry.name.clone());
    rec.grid = plan.grid;
    rec.block = plan.block;
    rec.buffers = plan
        .buffers
        .iter()
        .map(|b| BufferRecord {
            param: b.param.clone(),
            bytes: b.placement.bytes,
            ptr_offset: b.placement.ptr_offset,
            fill: b.fill.as_ref().map(|f| f.to_string()),
        })
        .collect();
    let func = loaded.module.load_function(&entry.name)?;
    launch(&plan, stream, &func, rec)
}

fn launch(
    plan: &LaunchPlan,
    stream: &Arc<CudaStream>,
    func: &cudarc::driver::CudaFunction,
    rec: &mut LaunchRecord,
) -> Result<()> {
    let mut device = Vec::new();
    for b in &plan.buffers {
        device.push(stream.clone_htod(&b.host_bytes())?);
    }
    let mut ptrs: Vec<u64> = Vec::new();
    for (b, d) in plan.buffers.iter().zip(&device) {
        let (p, _sync) = d.device_ptr(stream);
        ptrs.push(p + b.placement.ptr_offset);
    }
    let values: Vec<ArgPlan> = plan.args.clone();
    let mut builder = stream.launch_builder(func);
    for a in &values {
        match a {
            ArgPlan::Buffer(i) => builder.arg(&ptrs[*i]),
            ArgPlan::Value(ArgBytes::U8(v)) => builder.arg(v),
            ArgPlan::Value(ArgBytes::U16(v)) => builder.arg(v),
            ArgPlan::Value(ArgBytes::U32(v)) => builder.arg(v),
            ArgPlan::Value(ArgBytes::U64(v)) => builder.arg(v),
            ArgPlan::Value(ArgBytes::F32(v)) => builder.arg(v),
            ArgPlan::Value(ArgBytes::F64(v)) => builder.arg(v),
        };
    }
    if plan.shared_bytes > 48 * 1024 {
        // Above 48 KiB a kernel must opt in to dynamic shared memory.
        // SAFETY: `func` is a loaded kernel.
        unsafe {
            cudarc::driver::result::function::set_function_attribute(
                func.cu_function(),
                cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                plan.shared_bytes as i32,
            )
        }
        .map_err(|e| anyhow!("allowing {} bytes of dynamic shared memory: {e}", plan.shared_bytes))?;
    }
    let cfg = LaunchConfig {
        grid_dim: (plan.grid[0], plan.grid[1], plan.grid[2]),
        block_dim: (plan.block[0], plan.block[1], plan.block[2]),
        shared_mem_bytes: plan.shared_bytes,
    };
    // SAFETY: every argument has the size and kind the kernel's PTX declares, and every
    // pointer covers the bytes the analyzer says the kernel touches.
    unsafe { builder.launch(cfg) }.map_err(|e| anyhow!("launch: {e}"))?;
    rec.launched = true;
    stream.synchronize().map_err(|e| anyhow!("after the launch: {e}"))?;
    drop(device);
    Ok(())
}
