//! `sector-estimate sweep`: a kernel over ranges of parameters and block shapes.

use super::common::{site_launch, LaunchArgs, NoLaunch};
use super::{out, report, split_pair, usage, SourceArgs};
use sector_analyzer::analyze::Failure;
use sector_analyzer::source::DiskLoader;
use sector_analyzer::sweep::{self, Axis, Metric, SweepOptions};
use sector_analyzer::{Input, SourceFiles};
use std::io::{IsTerminal, Write};

#[derive(Clone, Copy, clap::ValueEnum)]
pub(super) enum SweepFormat {
    /// A table for a person.
    Text,
    /// One row per configuration.
    Csv,
    /// Every configuration with its metrics or its error.
    Json,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub(super) enum MetricArg {
    SectorsPerRequest,
    BytesPerUsefulByte,
    Efficiency,
    DramBytes,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sector-estimate sweep examples/vec_add.cu --grid 'ceil(n/block)' --block 32..1024:x2 --arg n=1048576
  sector-estimate sweep examples/transpose_naive.cu --grid 'ceil(cols/block_x),ceil(rows/block_y)' --block 32x8,16x16,32x32 --arg rows=2048 --arg cols=2048 --svg map.svg --metric efficiency
  sector-estimate sweep examples/cpp_templates.cu --kernel gather --grid 'ceil(n/block)' --block 256 --arg T=float,double,char --arg n=16384 --arg BS=256")]
pub(super) struct SweepArgs {
    #[command(flatten)]
    src: SourceArgs,
    #[command(flatten)]
    launch: LaunchArgs,
    /// The grid: X[,Y[,Z]] integer expressions over the --arg values and the block shape
    /// (`block` or `block_x`, `block_y`, `block_z`), e.g. 'ceil(n/block)'.
    /// Required unless --launch-site finds it in the file.
    #[arg(long, allow_hyphen_values = true)]
    grid: Option<String>,
    /// Block shapes to sweep: comma-separated items, each X, XxY or XxYxZ, or a range of X
    /// (`32..1024:x2`). Required unless --launch-site finds the block in the file.
    #[arg(long)]
    block: Option<String>,
    /// Start from the file's own `kernel<...><<<grid, block, smem>>>(...)` call (the one on LINE,
    /// or the kernel's first): its grid, block, dynamic shared memory, template and scalar
    /// arguments; --grid, --block and every --arg (swept or fixed) replace the call's.
    #[arg(long = "launch-site", value_name = "LINE", num_args = 0..=1)]
    launch_site: Option<Option<u32>>,
    /// How to print the table.
    #[arg(long, value_enum, default_value = "text")]
    format: SweepFormat,
    /// Also write an SVG heatmap of --metric to this file.
    #[arg(long, value_name = "FILE")]
    svg: Option<std::path::PathBuf>,
    /// What the --svg heatmap shows (default: sectors-per-request).
    #[arg(long, value_enum)]
    metric: Option<MetricArg>,
    /// Threads to use, at least 1 (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Wall-clock limit of the whole sweep in seconds (0: none); configurations not analysed
    /// by then are reported as such.
    #[arg(long, default_value_t = sweep::DEFAULT_TOTAL_TIME_LIMIT_S)]
    total_time_limit: u64,
}

/// Most threads `--jobs` may ask for.
const MAX_JOBS: usize = 1024;

pub(super) fn run(a: SweepArgs) -> i32 {
    if a.metric.is_some() && a.svg.is_none() {
        return usage("--metric picks what the --svg heatmap shows: add --svg FILE");
    }
    if a.jobs == Some(0) {
        return usage("--jobs 0: give at least 1 thread (or leave --jobs out for every core)");
    }
    if let Some(n) = a.jobs.filter(|&n| n > MAX_JOBS) {
        return usage(&format!("--jobs {n}: at most {MAX_JOBS} threads"));
    }
    let total_limit = match super::common::time_limit("--total-time-limit", a.total_time_limit) {
        Ok(t) => t,
        Err(m) => return usage(&m),
    };
    if a.launch_site.is_none() && (a.grid.is_none() || a.block.is_none()) {
        return usage(&format!(
            "sweep needs {}: add {}or --launch-site to start from the file's own <<<...>>> call",
            if a.grid.is_none() { "the grid" } else { "the blocks to sweep" },
            if a.grid.is_none() { "--grid " } else { "--block " }
        ));
    }
    let grid = a.grid.clone().unwrap_or_default();
    let mut base = match a.launch.options(&a.src, &grid, if a.block.is_some() { "1" } else { "" }, false) {
        Ok(o) => o,
        Err(m) => return usage(&m),
    };
    // An --arg with a list or range is an axis; a single value is fixed.
    let mut axes: Vec<Axis> = Vec::new();
    let pairs = match a.launch.args.iter().map(|arg| split_pair("--arg", arg)).collect::<Result<Vec<_>, _>>() {
        Ok(p) => p,
        Err(m) => return usage(&m),
    };
    if let Err(m) = super::common::no_conflicts("--arg", &pairs) {
        return usage(&m);
    }
    for (k, v) in pairs {
        if v.contains("..") || v.contains(',') {
            match sweep::parse_values(&format!("--arg {k}="), &v, false) {
                Ok(values) => {
                    axes.retain(|x| x.name != k);
                    axes.push(Axis { name: k, values });
                }
                Err(d) => return usage(&d.message),
            }
        } else {
            base.args.push((k, v));
        }
    }
    // The file's own launch: what the flags leave open. A swept argument stands in with its
    // first value (the call may need it for its grid); the sweep then replaces it.
    let mut block_list = a.block.clone().unwrap_or_default();
    if a.launch_site.is_some() {
        base.args.extend(axes.iter().map(|x| (x.name.clone(), x.values[0].clone())));
        match site_launch(&a.src.file, base, a.launch_site, "sweep") {
            Ok((mut o, _)) => {
                let swept: Vec<&String> = axes.iter().map(|x| &x.name).collect();
                o.args.retain(|(k, _)| !swept.contains(&k));
                if a.block.is_none() {
                    // The call's `32, 8` is one shape: `32x8` in a sweep's list.
                    block_list = o.block.split(',').map(str::trim).collect::<Vec<_>>().join("x");
                }
                base = o;
            }
            Err(NoLaunch::Usage(m)) => return usage(&m),
            Err(NoLaunch::Failure(f)) => return report(&f),
        }
    }
    let blocks = match sweep::parse_values("--block ", &block_list, true) {
        Ok(b) => b,
        Err(d) => return usage(&d.message),
    };
    let opts = SweepOptions { base, args: axes, blocks };
    let total = match opts.configurations() {
        Ok(c) => c.len(),
        Err(d) => return usage(&d.message),
    };
    let bar = if std::io::stderr().is_terminal() {
        let b = indicatif::ProgressBar::new(total as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} configuration(s) {elapsed}") {
            b.set_style(style);
        }
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let progress = || bar.inc(1);
    let run = || sweep::sweep_within(Input::File(&a.src.file), &opts, &DiskLoader, &progress, total_limit);
    let result = match a.jobs {
        Some(n) => match rayon::ThreadPoolBuilder::new().num_threads(n.max(1)).build() {
            Ok(pool) => pool.install(run),
            Err(e) => return usage(&format!("--jobs {n}: {e}")),
        },
        None => run(),
    };
    bar.finish_and_clear();
    let result = match result {
        Ok(r) => r,
        Err(d) => return report(&Failure { diagnostic: d, files: SourceFiles::default() }),
    };
    if let Some(path) = &a.svg {
        let metric = match a.metric.unwrap_or(MetricArg::SectorsPerRequest) {
            MetricArg::SectorsPerRequest => Metric::SectorsPerRequest,
            MetricArg::BytesPerUsefulByte => Metric::BytesPerUsefulByte,
            MetricArg::Efficiency => Metric::Efficiency,
            MetricArg::DramBytes => Metric::DramBytes,
        };
        let svg = match sweep::render_svg(&result, metric) {
            Ok(s) => s,
            Err(d) => return report(&Failure { diagnostic: d, files: SourceFiles::default() }),
        };
        if let Err(e) = std::fs::write(path, svg) {
            let _ = writeln!(std::io::stderr(), "error: writing {}: {e}", path.display());
            return 1;
        }
    }
    let code = out(&match a.format {
        SweepFormat::Text => sweep::render_text(&result),
        SweepFormat::Csv => sweep::render_csv(&result),
        SweepFormat::Json => sweep::render_json(&result),
    });
    // Every configuration failed: nothing was analysed.
    if code == 0 && result.cells.iter().all(|c| c.error.is_some()) {
        return 1;
    }
    code
}
