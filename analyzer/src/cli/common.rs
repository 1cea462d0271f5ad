//! Flags shared by `explain` and `sweep`: the launch, given as for `analyze`.

use super::{defines, split_pair, SourceArgs};
use sector_analyzer::analyze::{DEFAULT_ESTIMATE_TIME_LIMIT_S, DEFAULT_MAX_WORK, DEFAULT_TIME_LIMIT_S};
use sector_analyzer::{AnalyzeOptions, Fill};

/// The one `--gpu` flag of every subcommand, checked against the library's profiles
/// ([`sector_analyzer::gpu::PROFILES`]).
#[derive(clap::Args, Clone)]
pub(super) struct GpuArg {
    /// GPU profile for the boundary model: h200, h100, a100, rtx3060ti, rtx2080ti, tesla-p4.
    #[arg(long, default_value = "h200", value_parser = parse_gpu)]
    pub gpu: String,
}

fn parse_gpu(name: &str) -> Result<String, String> {
    match sector_analyzer::gpu::lookup(name) {
        Ok(_) => Ok(name.to_string()),
        Err(_) => Err(format!("unknown GPU profile; known profiles are {}", sector_analyzer::gpu::names().join(", "))),
    }
}

#[derive(clap::Args)]
pub(super) struct LaunchArgs {
    /// The kernel; may be left out when the file has exactly one.
    #[arg(long)]
    pub kernel: Option<String>,
    /// A kernel parameter's value (or a template parameter's): NAME=VALUE.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Contents of an index array: NAME=zero|identity|constant:V|permutation:LEN:SEED|uniform:LO:HI:SEED|csr:ROWS:NNZ:SEED
    /// (csr: ROWS+1 sorted row offsets from 0 to NNZ, as a CSR matrix's row pointers).
    #[arg(long = "fill", value_name = "NAME=SPEC")]
    pub fills: Vec<String>,
    /// A pointer parameter's byte offset past a 256-byte boundary: NAME=BYTES.
    #[arg(long = "offset", value_name = "NAME=BYTES")]
    pub offsets: Vec<String>,
    #[command(flatten)]
    pub gpu: GpuArg,
    /// Dynamic shared memory per block (`extern __shared__` arrays), in bytes.
    #[arg(long, default_value_t = 0)]
    pub shared_bytes: u64,
    /// Work budget of every engine together, in warp-level steps of the reference engine.
    #[arg(long, default_value_t = DEFAULT_MAX_WORK)]
    pub max_work: u64,
    /// Wall-clock limit in seconds per analysis (0: none).
    #[arg(long, default_value_t = DEFAULT_TIME_LIMIT_S)]
    pub time_limit: u64,
    /// Wall-clock limit in seconds of the boundary estimate, apart from --time-limit: where it
    /// runs out, the boundaries are given as bounds (0: none).
    #[arg(long, default_value_t = DEFAULT_ESTIMATE_TIME_LIMIT_S, value_name = "SECONDS")]
    pub estimate_time_limit: f64,
}

/// The estimate's budget from `--estimate-time-limit SECONDS` (0 or less: no limit), or a usage
/// message: not a number, infinite, or past `MAX_TIME_LIMIT_S` (which `Duration` and a
/// deadline could not hold).
pub(super) fn estimate_budget(seconds: f64) -> Result<sector_analyzer::cache::sample::EstimateBudget, String> {
    if seconds.is_nan() {
        return Err("--estimate-time-limit NaN: give a number of seconds (0 for no limit)".into());
    }
    if seconds > MAX_TIME_LIMIT_S as f64 {
        let seconds = if seconds < 1e15 { format!("{seconds}") } else { format!("{seconds:e}") };
        return Err(format!(
            "--estimate-time-limit {seconds}: at most {MAX_TIME_LIMIT_S} seconds (about 31 years); give 0 for no limit"
        ));
    }
    Ok(sector_analyzer::cache::sample::EstimateBudget {
        time_limit: (seconds > 0.0).then(|| std::time::Duration::from_secs_f64(seconds)),
        ..Default::default()
    })
}

/// Longest `--time-limit` (and sweep `--total-time-limit`) taken, in seconds: about 31 years.
/// Past it a deadline could not be represented (`Instant` + 2^64 s overflows).
pub(super) const MAX_TIME_LIMIT_S: u64 = 1_000_000_000;
/// Largest `--max-work`: the engines add efforts in 64 bits, far below this stays exact.
pub(super) const MAX_WORK_LIMIT: u64 = 1_000_000_000_000_000_000;

/// `--time-limit SECONDS` as a duration (0: none), or a usage message.
pub(super) fn time_limit(flag: &str, seconds: u64) -> Result<Option<std::time::Duration>, String> {
    if seconds > MAX_TIME_LIMIT_S {
        return Err(format!(
            "{flag} {seconds}: at most {MAX_TIME_LIMIT_S} seconds (about 31 years); give 0 for no limit"
        ));
    }
    Ok((seconds > 0).then(|| std::time::Duration::from_secs(seconds)))
}

/// `--max-work N` checked, or a usage message.
pub(super) fn max_work(n: u64) -> Result<u64, String> {
    if n == 0 {
        return Err("--max-work 0: give at least 1 warp-level step of work".into());
    }
    if n > MAX_WORK_LIMIT {
        return Err(format!("--max-work {n}: at most {MAX_WORK_LIMIT} warp-level steps"));
    }
    Ok(n)
}

/// `NAME=VALUE` flags given more than once: the same value twice is fine, two different values
/// are a usage error (which one was meant cannot be guessed).
pub(super) fn no_conflicts(flag: &str, pairs: &[(String, String)]) -> Result<(), String> {
    for (i, (k, v)) in pairs.iter().enumerate() {
        // One number written two ways (`--arg n=16 --arg n=0x10`) is one value.
        let same = |w: &String| {
            w == v
                || flag == "--arg"
                    && sector_analyzer::launch::parse_number(w)
                        .is_some_and(|a| Some(a) == sector_analyzer::launch::parse_number(v))
        };
        if let Some((_, w)) = pairs[..i].iter().find(|(k2, w)| k2 == k && !same(w)) {
            return Err(format!("{flag} {k} is given twice with different values ({k}={w} and {k}={v}); give it once"));
        }
    }
    Ok(())
}

impl LaunchArgs {
    /// The options `analyze` would build from the same flags; `Err` is a usage message. `args`
    /// are left as written (`sweep` expands ranges itself).
    pub(super) fn options(
        &self,
        src: &SourceArgs,
        grid: &str,
        block: &str,
        with_args: bool,
    ) -> Result<AnalyzeOptions, String> {
        let mut opts = AnalyzeOptions {
            kernel: self.kernel.clone(),
            grid: grid.to_string(),
            block: block.to_string(),
            defines: defines(src),
            include_dirs: src.include.clone(),
            gpu: self.gpu.gpu.clone(),
            max_work: max_work(self.max_work)?,
            time_limit: time_limit("--time-limit", self.time_limit)?,
            estimate: estimate_budget(self.estimate_time_limit)?,
            shared_bytes: self.shared_bytes,
            ..Default::default()
        };
        no_conflicts("-D", &opts.defines)?;
        let args = self.args.iter().map(|a| split_pair("--arg", a)).collect::<Result<Vec<_>, _>>()?;
        if with_args {
            no_conflicts("--arg", &args)?;
            opts.args = args;
        }
        let fills = self.fills.iter().map(|f| split_pair("--fill", f)).collect::<Result<Vec<_>, _>>()?;
        no_conflicts("--fill", &fills)?;
        for (k, v) in fills {
            // The notes say why (`a permutation has 1 to 268435456 elements`).
            let fill = Fill::parse(&v)
                .map_err(|d| std::iter::once(d.message).chain(d.notes).collect::<Vec<_>>().join("; "))?;
            opts.fills.push((k, fill));
        }
        let offsets = self.offsets.iter().map(|o| split_pair("--offset", o)).collect::<Result<Vec<_>, _>>()?;
        no_conflicts("--offset", &offsets)?;
        for (k, v) in offsets {
            let o = format!("{k}={v}");
            match v.parse::<i64>() {
                Ok(b) if (0..1 << 20).contains(&b) => opts.offsets.push((k, b)),
                _ => return Err(format!("--offset {o}: expected a byte count from 0 to 1048575")),
            }
        }
        Ok(opts)
    }
}

/// `X,Y,Z` (one to three non-negative integers; missing ones are 0).
pub(super) fn parse_index(flag: &str, s: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("{flag} {s}: expected one to three comma-separated indices"));
    }
    let mut out = [0u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.parse().map_err(|_| format!("{flag} {s}: `{p}` is not a non-negative integer"))?;
    }
    Ok(out)
}

/// Whether to colour output written to stderr or stdout.
pub(super) fn color_for(stream_is_terminal: bool) -> bool {
    super::color_on(stream_is_terminal)
}

/// Why a command got no launch from the file.
pub(super) enum NoLaunch {
    /// A usage error (exit 2): no launch given and none to take.
    Usage(String),
    /// The file could not be read, or its launch lacks values (exit 1).
    Failure(sector_analyzer::analyze::Failure),
}

/// The launch from the file's own `<<<...>>>` call: the one `--launch-site [LINE]` names
/// (`Some`), or, given no `--launch-site` (`None`) and no `--grid`, `--block` or `--arg`, the
/// kernel's only launch in the file. Values in `opts` (the command line) win. Returns the options
/// and the sheet's first assumption, which says where each value came from.
pub(super) fn site_launch(
    file: &std::path::Path,
    opts: AnalyzeOptions,
    launch_site: Option<Option<u32>>,
    command: &str,
) -> Result<(AnalyzeOptions, Option<String>), NoLaunch> {
    use sector_analyzer::analyze::{self, DefaultLaunch};
    use sector_analyzer::source::DiskLoader;
    use sector_analyzer::Input;
    if let Some(line) = launch_site {
        return analyze::apply_launch_site_described(Input::File(file), &opts, line, &DiskLoader)
            .map(|(o, _, said)| (o, Some(said)))
            .map_err(NoLaunch::Failure);
    }
    match analyze::default_launch_site(Input::File(file), &opts, &DiskLoader) {
        Ok((DefaultLaunch::Taken(o, _), said)) => Ok((*o, said)),
        Ok((DefaultLaunch::Several(k, lines), _)) => {
            let lines: Vec<String> = lines.iter().map(u32::to_string).collect();
            Err(NoLaunch::Usage(format!(
                "{command} needs the launch: the file launches `{k}` on lines {}; pick one with --launch-site LINE, or give --grid and --block",
                lines.join(", ")
            )))
        }
        Ok((DefaultLaunch::None, _)) => Err(NoLaunch::Usage(format!(
            "{command} needs the launch: add --grid and --block (e.g. --grid 'ceil(n/256)' --block 256), or --launch-site to read it from the file's own <<<...>>> call"
        ))),
        Err(f) => Err(NoLaunch::Failure(f)),
    }
}
