//! `sector-estimate explain`: one warp-level execution of the access(es) on a line, lane by lane.

use super::common::{color_for, parse_index, site_launch, LaunchArgs, NoLaunch};
use super::{out, report, usage, SourceArgs};
use sector_analyzer::explain::{self, ExplainOptions};
use sector_analyzer::source::DiskLoader;
use sector_analyzer::Input;
use std::io::IsTerminal;

#[derive(Clone, Copy, clap::ValueEnum)]
pub(super) enum ExplainFormat {
    /// Lanes, the sector map and why, for a person.
    Text,
    /// The same as data.
    Json,
}

#[derive(clap::Args)]
#[command(after_help = "Examples:
  sector-estimate explain examples/vec_add.cu --grid 4096 --block 256 --arg n=1048576 --line 29
  sector-estimate explain examples/transpose_naive.cu --grid 64,256 --block 32x8 --arg rows=2048 --arg cols=2048 --line 24 --column 9 --block-index 3,0,0 --warp 2")]
pub(super) struct ExplainArgs {
    #[command(flatten)]
    src: SourceArgs,
    #[command(flatten)]
    launch: LaunchArgs,
    /// Grid shape X[,Y[,Z]] or XxY[xZ], as for `analyze` (integer expressions over --arg values).
    /// Required unless --launch-site finds it in the file.
    #[arg(long, allow_hyphen_values = true)]
    grid: Option<String>,
    /// Block shape X[,Y[,Z]] or XxY[xZ], as for `analyze` (`32,8` or `32x8`).
    #[arg(long, allow_hyphen_values = true)]
    block: Option<String>,
    /// Take the launch from the file's own `kernel<...><<<grid, block, smem>>>(...)` call (the one
    /// on LINE, or the kernel's first), as `analyze --launch-site` does; flags given explicitly
    /// win. Without --grid, --block and --arg, the kernel's only launch in the file is taken.
    #[arg(long = "launch-site", value_name = "LINE", num_args = 0..=1)]
    launch_site: Option<Option<u32>>,
    /// The source line of the access (1-based, in FILE).
    #[arg(long)]
    line: u32,
    /// The access's column, when the line has several and you want one.
    #[arg(long)]
    column: Option<u32>,
    /// blockIdx of the warp to show, X[,Y[,Z]]; default: the first block that executes the access.
    #[arg(long, value_name = "X,Y,Z")]
    block_index: Option<String>,
    /// Warp of that block (threads 32W..32W+31); default: the first warp that executes the access.
    #[arg(long, value_name = "W")]
    warp: Option<u32>,
    /// Which execution of the access by that warp, counted from 0 (loop iterations).
    #[arg(long, value_name = "I", default_value_t = 0)]
    iteration: u64,
    /// How to print the explanation.
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
}

pub(super) fn run(a: ExplainArgs) -> i32 {
    if let Some(w) = a.warp.filter(|&w| w >= 32) {
        return usage(&format!("--warp {w}: a block has at most 1024 threads, so warps 0 to 31"));
    }
    let by_default = a.grid.is_none() && a.block.is_none() && a.launch.args.is_empty() && a.launch_site.is_none();
    if !by_default && a.launch_site.is_none() && (a.grid.is_none() || a.block.is_none()) {
        return usage("explain needs the launch: add --grid and --block, or --launch-site to read it from the file");
    }
    let (grid, block) = (a.grid.clone().unwrap_or_default(), a.block.clone().unwrap_or_default());
    let mut analyze = match a.launch.options(&a.src, &grid, &block, true) {
        Ok(o) => o,
        Err(m) => return usage(&m),
    };
    if by_default || a.launch_site.is_some() {
        match site_launch(&a.src.file, analyze, a.launch_site, "explain") {
            Ok((o, _)) => analyze = o,
            Err(NoLaunch::Usage(m)) => return usage(&m),
            Err(NoLaunch::Failure(f)) => return report(&f),
        }
    }
    let block = match a.block_index.as_deref().map(|s| parse_index("--block-index", s)).transpose() {
        Ok(b) => b,
        Err(m) => return usage(&m),
    };
    let opts = ExplainOptions {
        analyze,
        line: a.line,
        column: a.column,
        block,
        warp: a.warp,
        execution: a.iteration,
        launch_totals: true,
    };
    match explain::explain(Input::File(&a.src.file), &opts, &DiskLoader) {
        Ok((x, files)) => out(&match a.format {
            ExplainFormat::Text => explain::render_text(&x, &files, color_for(std::io::stdout().is_terminal())),
            ExplainFormat::Json => explain::render_json(&x),
        }),
        Err(f) => report(&f),
    }
}
