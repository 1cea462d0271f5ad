//! The launch an analysis runs under: grid and block (checked as CUDA would check them),
//! parameter values, known contents of index arrays and pointer alignment offsets.

use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::fill::Fill;
use crate::ir::{Kernel, Ty};
use serde::Serialize;
use std::collections::BTreeMap;

/// Static `__shared__` arrays may total at most 48 KiB per block.
pub const MAX_STATIC_SHARED: u64 = 48 * 1024;
/// Static plus dynamic shared memory per block on Hopper (with the opt-in attribute).
pub const MAX_SHARED_PER_BLOCK: u64 = 232_448;

/// What a launch is given, as the caller wrote it (the `--grid`, `--block`, `--arg`, `--fill`,
/// `--offset`, `--gpu`, `--shared-bytes` and `--max-work` flags). The launch owns this type;
/// [`crate::AnalyzeOptions::launch`] makes one from the options, whose fields of the same names
/// it copies.
#[derive(Clone, Debug)]
pub struct LaunchSpec {
    /// One to three comma-separated integer expressions over the args.
    pub grid: String,
    pub block: String,
    /// `NAME=VALUE` pairs as written.
    pub args: Vec<(String, String)>,
    /// Known contents of pointer parameters (index arrays).
    pub fills: Vec<(String, Fill)>,
    /// Byte offset of a pointer parameter past a 256-byte boundary.
    pub offsets: Vec<(String, i64)>,
    /// A [`crate::gpu`] profile name.
    pub gpu: String,
    pub max_work: u64,
    /// Dynamic shared memory per block.
    pub shared_bytes: u64,
    /// Wall-clock limit of the analysis, beside the work budget.
    pub time_limit: Option<std::time::Duration>,
    /// Told the effort so far now and then while an engine runs (for a progress bar).
    pub progress: Option<Progress>,
}

/// A scalar argument as the user gave it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ArgValue {
    Int(i128),
    Float(f64),
}

/// A parameter's value for the engine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Int(i128),
    Float(f64),
}

pub struct Setup {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Per parameter, in order; `None` when not given (an error only if the value is needed).
    pub values: Vec<Option<ParamValue>>,
    /// What the user gave, by name, for the sheet.
    pub args: BTreeMap<String, ArgValue>,
    /// Per parameter: known contents and, for permutations, the materialised table.
    pub fills: Vec<Option<(Fill, Option<Vec<u32>>)>>,
    /// Per parameter: bytes past a 256-byte boundary.
    pub offsets: Vec<i64>,
    pub max_work: u64,
    /// The work budget as every engine shares it: effort spent, deadline, progress reports.
    pub budget: Budget,
    pub gpu: String,
    /// Dynamic shared memory per block.
    pub shared_bytes: u64,
}

/// Called now and then while an engine runs, with (effort spent, budget), in warp-level steps of
/// the reference engine (a symbolic step counts as [`SYMBOLIC_STEP_COST`]): for a progress bar.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>);

// A progress report only draws; a panic inside an analysis leaves nothing it shares broken.
impl std::panic::RefUnwindSafe for Progress {}
impl std::panic::UnwindSafe for Progress {}

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// What one abstract step of the symbolic engine costs, in the reference engine's warp-level
/// steps (measured: a symbolic step takes a few hundred times as long).
pub const SYMBOLIC_STEP_COST: u64 = 400;

/// How often (in steps) an engine looks at the clock and reports progress.
pub const CHECK_EVERY: u64 = 1 << 14;

/// One budget for every engine an analysis runs: `--max-work` counts the effort of all of them
/// together (an engine that gives up leaves the next one only what is left), and an optional
/// deadline refuses the analysis once it has run that long, whatever the build profile.
#[derive(Debug, Default)]
pub struct Budget {
    /// Effort spent by engines that finished or gave up.
    pub spent: std::sync::atomic::AtomicU64,
    pub deadline: Option<std::time::Instant>,
    pub limit: Option<std::time::Duration>,
    pub progress: Option<Progress>,
}

impl Budget {
    pub fn spent(&self) -> u64 {
        self.spent.load(std::sync::atomic::Ordering::Relaxed)
    }
    pub fn spend(&self, n: u64) {
        self.spent.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
    /// Called every [`CHECK_EVERY`] steps with the effort so far (spent before included).
    pub fn check(&self, effort: u64, max_work: u64, span: Option<crate::source::Span>) -> Result<()> {
        if let Some(p) = &self.progress {
            (p.0)(effort, max_work);
        }
        match (self.deadline, self.limit) {
            (Some(d), Some(l)) if std::time::Instant::now() > d => {
                let msg = format!(
                    "the analysis ran longer than {} s ({effort} warp-level steps of work so far)",
                    l.as_secs_f64()
                );
                let d = match span {
                    Some(s) => Diagnostic::at(ErrorKind::Limit, s, msg),
                    None => Diagnostic::new(ErrorKind::Limit, msg),
                };
                Err(d.note("analyse a smaller launch (fewer blocks or a smaller problem size), or allow more time (--time-limit SECONDS)"))
            }
            _ => Ok(()),
        }
    }
}

impl Setup {
    /// The same launch under another work budget (the boundary estimate runs within its own).
    pub fn with_budget(&self, max_work: u64, budget: Budget) -> Setup {
        Setup {
            grid: self.grid,
            block: self.block,
            values: self.values.clone(),
            args: self.args.clone(),
            fills: self.fills.clone(),
            offsets: self.offsets.clone(),
            max_work,
            budget,
            gpu: self.gpu.clone(),
            shared_bytes: self.shared_bytes,
        }
    }

    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&d| d as u64).product()
    }
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&d| d as u64).product()
    }

    pub fn new(kernel: &Kernel, opts: &LaunchSpec) -> Result<Setup> {
        // The time limit covers the setup too (a large permutation fill takes seconds). A limit
        // past what `Instant` can hold is no deadline rather than a panic.
        let deadline = opts.time_limit.and_then(|l| std::time::Instant::now().checked_add(l));
        let mut values = vec![None; kernel.params.len()];
        let mut args = BTreeMap::new();
        let mut named: BTreeMap<String, i128> = BTreeMap::new();
        for (name, text) in &opts.args {
            // Template parameters were bound when the kernel was lowered; an integer one may
            // still size the grid (`--grid 'n/BS'`).
            if kernel.template_params.iter().any(|t| t == name) {
                if let Some(ParamValue::Int(i)) = parse_number(text) {
                    named.insert(name.clone(), i);
                }
                continue;
            }
            let v = parse_number(text).ok_or_else(|| {
                Diagnostic::new(
                    ErrorKind::Usage,
                    format!("--arg {name}={text}: the value is not an integer or a floating-point number"),
                )
            })?;
            if let ParamValue::Int(i) = v {
                named.insert(name.clone(), i);
            }
            args.insert(
                name.clone(),
                match v {
                    ParamValue::Int(i) => ArgValue::Int(i),
                    ParamValue::Float(f) => ArgValue::Float(f),
                },
            );
            match kernel.param_by_name(name) {
                Some(p) => {
                    let param = kernel.param(p);
                    values[p.0 as usize] = Some(match (&param.ty, v) {
                        // The kernel sees the value converted to its type: one that does not fit
                        // would be another number than the header shows.
                        (Ty::Int(t), ParamValue::Int(i)) if t.bits > 1 && t.wrap(i) != i => {
                            let (lo, hi) = int_range(*t);
                            return Err(Diagnostic::new(
                                ErrorKind::Usage,
                                format!(
                                    "--arg {name}={text}: parameter `{name}` is {}, which holds {lo}..={hi}",
                                    t.name()
                                ),
                            )
                            .note("give a value in that range (the kernel would see it wrapped)"));
                        }
                        (Ty::Int(t), ParamValue::Int(i)) => ParamValue::Int(t.wrap(i)),
                        (Ty::Int(t), ParamValue::Float(f)) => {
                            return Err(Diagnostic::new(
                                ErrorKind::Usage,
                                format!("--arg {name}={f}: parameter `{name}` is an integer ({})", t.name()),
                            ))
                        }
                        (Ty::Float(_), ParamValue::Int(i)) => ParamValue::Float(i as f64),
                        (Ty::Float(_), v) => v,
                        (ty, _) => {
                            return Err(Diagnostic::new(
                                ErrorKind::Usage,
                                format!(
                                    "--arg {name}: parameter `{name}` has type {}, which takes no value",
                                    ty.display()
                                ),
                            ))
                        }
                    });
                }
                // Rust slices' lengths (`a_len`) and names used only in --grid are fine.
                None if name.ends_with("_len")
                    || opts.grid.contains(name.as_str())
                    || opts.block.contains(name.as_str()) => {}
                None => {
                    return Err(Diagnostic::new(
                        ErrorKind::Usage,
                        format!("--arg {name}: kernel `{}` has no parameter named `{name}`", kernel.name),
                    )
                    .note(format!(
                        "parameters: {}",
                        kernel.params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(", ")
                    )))
                }
            }
        }
        let block = parse_dims("--block", &opts.block, &named)?;
        // The grid may depend on the block's shape: `--grid 'ceil(n/block)'` (`block` is x).
        for (name, v) in [("block", block[0]), ("block_x", block[0]), ("block_y", block[1]), ("block_z", block[2])] {
            named.entry(name.to_string()).or_insert(v as i128);
        }
        let grid = parse_dims("--grid", &opts.grid, &named)?;
        check_launch(grid, block)?;

        let mut fills: Vec<Option<(Fill, Option<Vec<u32>>)>> = vec![None; kernel.params.len()];
        for (name, fill) in &opts.fills {
            let p = pointer_param(kernel, name, "--fill")?;
            // Integer and floating elements are read back from a fill (a search's keys decide its
            // trip count as indices do); one given for another array would be accepted and never
            // used.
            if let Ty::Ptr(pt) = &kernel.params[p].ty {
                if !pt.pointee.is_int() && !matches!(pt.pointee, Ty::Float(_)) {
                    return Err(Diagnostic::new(
                        ErrorKind::Usage,
                        format!(
                            "--fill {name}={fill}: the elements of `{name}` are {}, and fills give the values of integer and floating-point arrays only",
                            pt.pointee.display()
                        ),
                    )
                    .note("fills describe the integer indices, offsets and counts that decide addresses and loops"));
                }
            }
            // Values the elements cannot hold would be read back as other numbers.
            if let Ty::Ptr(pt) = &kernel.params[p].ty {
                if let Ty::Int(t) = pt.pointee {
                    let (lo, hi) = int_range(t);
                    let extremes: Vec<i128> = match fill {
                        Fill::Constant(v) => vec![*v as i128],
                        Fill::Uniform { lo, hi, .. } => vec![*lo as i128, *hi as i128 - 1],
                        Fill::Permutation { len, .. } => vec![*len as i128 - 1],
                        Fill::Csr { nnz, .. } => vec![*nnz as i128],
                        Fill::Zero | Fill::Identity => Vec::new(),
                    };
                    if t.bits > 1 && extremes.iter().any(|v| *v < lo || *v > hi) {
                        return Err(Diagnostic::new(
                            ErrorKind::Usage,
                            format!(
                                "--fill {name}={fill}: the elements of `{name}` are {}, which holds {lo}..={hi}",
                                t.name()
                            ),
                        ));
                    }
                }
            }
            let table = fill.table_until(deadline).ok_or_else(|| {
                Diagnostic::new(
                    ErrorKind::Limit,
                    format!(
                        "--fill {name}={fill}: building the fill took longer than the time limit ({} s)",
                        opts.time_limit.map_or(0.0, |l| l.as_secs_f64())
                    ),
                )
                .note("give a shorter permutation, or allow more time (--time-limit SECONDS)")
            })?;
            fills[p] = Some((fill.clone(), table));
        }
        let mut offsets = vec![0; kernel.params.len()];
        for (name, off) in &opts.offsets {
            let p = pointer_param(kernel, name, "--offset")?;
            // Every access through the pointer must be aligned to its width, or the launch faults.
            if let Ty::Ptr(pt) = &kernel.params[p].ty {
                let w = pt.pointee.size() as i64;
                if !matches!(pt.pointee, Ty::Void) && w > 1 && off.rem_euclid(w) != 0 {
                    return Err(Diagnostic::new(
                        ErrorKind::Usage,
                        format!(
                            "--offset {name}={off}: `{name}` points to {} ({w} bytes); an offset that is not a multiple of {w} makes every access misaligned: the H200 faults on a misaligned {w}-byte access",
                            pt.pointee.display()
                        ),
                    ));
                }
            }
            offsets[p] = *off;
        }
        crate::gpu::lookup(&opts.gpu).map_err(|m| Diagnostic::new(ErrorKind::Usage, m))?;
        // Saturating: sizes near 2^64 are refused below, never wrapped into small ones.
        let static_shared: u64 = kernel.shared.iter().fold(0u64, |t, a| t.saturating_add(a.bytes()));
        if static_shared > MAX_STATIC_SHARED {
            return Err(Diagnostic::new(
                ErrorKind::Launch,
                format!("kernel `{}` declares {static_shared} bytes of static shared memory; CUDA allows at most {MAX_STATIC_SHARED}", kernel.name),
            ));
        }
        if static_shared.checked_add(opts.shared_bytes).is_none_or(|t| t > MAX_SHARED_PER_BLOCK) {
            return Err(Diagnostic::new(
                ErrorKind::Launch,
                format!(
                    "{} bytes of shared memory per block ({static_shared} static + {} dynamic); an H200 block may use at most {MAX_SHARED_PER_BLOCK}",
                    static_shared as u128 + opts.shared_bytes as u128,
                    opts.shared_bytes
                ),
            ));
        }
        if kernel.shared.iter().any(|a| a.is_extern) && opts.shared_bytes == 0 {
            return Err(Diagnostic::new(
                ErrorKind::MissingArgument,
                format!(
                    "kernel `{}` uses `extern __shared__` memory; give its size with --shared-bytes N",
                    kernel.name
                ),
            ));
        }
        Ok(Setup {
            shared_bytes: opts.shared_bytes,
            grid,
            block,
            values,
            args,
            fills,
            offsets,
            max_work: opts.max_work,
            budget: Budget {
                spent: Default::default(),
                deadline,
                limit: opts.time_limit,
                progress: opts.progress.clone(),
            },
            gpu: opts.gpu.clone(),
        })
    }
}

/// The values an integer type holds.
fn int_range(t: crate::ir::IntTy) -> (i128, i128) {
    if t.signed {
        (-(1i128 << (t.bits - 1)), (1i128 << (t.bits - 1)) - 1)
    } else {
        (0, (1i128 << t.bits) - 1)
    }
}

fn pointer_param(kernel: &Kernel, name: &str, flag: &str) -> Result<usize> {
    match kernel.param_by_name(name) {
        Some(p) if matches!(kernel.param(p).ty, Ty::Ptr(_)) => Ok(p.0 as usize),
        Some(_) => {
            Err(Diagnostic::new(ErrorKind::Usage, format!("{flag} {name}: parameter `{name}` is not a pointer")))
        }
        None => Err(Diagnostic::new(
            ErrorKind::Usage,
            format!("{flag} {name}: kernel `{}` has no parameter named `{name}`", kernel.name),
        )),
    }
}

/// An integer as a C literal (decimal, hex, octal, binary, with C suffixes), `true`/`false` (a `bool`'s 1 and 0), or a
/// floating-point number.
pub fn parse_number(text: &str) -> Option<ParamValue> {
    match text.trim() {
        "true" => return Some(ParamValue::Int(1)),
        "false" => return Some(ParamValue::Int(0)),
        _ => {}
    }
    let t = text.trim().replace('_', "");
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, t.clone()),
    };
    // An integer literal read as C reads it (cint::literal): `0x10` and `0b10000` and `020`
    // (octal) are 16; a word of digits that is no C literal (`08`, past 2^64) is no number.
    let int_like = {
        let b = body.trim_end_matches(['u', 'U', 'l', 'L']);
        !b.is_empty()
            && (b.bytes().all(|c| c.is_ascii_digit()) || b.len() > 2 && matches!(&b[..2], "0x" | "0X" | "0b" | "0B"))
    };
    if int_like {
        // A decimal past `long long` (2^63 .. 2^64 - 1) is taken as unsigned, as gcc does.
        let v = crate::cint::literal(&body).or_else(|| crate::cint::literal(&format!("{body}u")))?.v;
        return Some(ParamValue::Int(if neg { -v } else { v }));
    }
    let f = t.trim_end_matches(['f', 'F']).parse::<f64>().ok()?;
    f.is_finite().then_some(ParamValue::Float(f))
}

/// Checks a launch as the CUDA driver would.
pub fn check_launch(grid: [u32; 3], block: [u32; 3]) -> Result<()> {
    let bad = |m: String| Err(Diagnostic::new(ErrorKind::Launch, m));
    if grid.contains(&0) || block.contains(&0) {
        return bad(format!("launch {grid:?} x {block:?}: every grid and block dimension must be at least 1"));
    }
    let threads: u64 = block.iter().map(|&d| d as u64).product();
    if threads > 1024 {
        return bad(format!("block {block:?} has {threads} threads; CUDA allows at most 1024 per block"));
    }
    if block[0] > 1024 || block[1] > 1024 {
        return bad(format!("block {block:?}: x and y may be at most 1024"));
    }
    if block[2] > 64 {
        return bad(format!("block {block:?}: z may be at most 64"));
    }
    if grid[0] as u64 > (1u64 << 31) - 1 {
        return bad(format!("grid {grid:?}: x may be at most 2147483647"));
    }
    if grid[1] > 65535 || grid[2] > 65535 {
        return bad(format!("grid {grid:?}: y and z may be at most 65535"));
    }
    Ok(())
}

/// Parses `X[,Y[,Z]]`, each an integer expression over the integer `--arg` values.
pub fn parse_dims(flag: &str, text: &str, args: &BTreeMap<String, i128>) -> Result<[u32; 3]> {
    let parts = match x_shape(text) {
        Some(p) => p,
        None => split_top_commas(text),
    };
    if parts.is_empty() || parts.len() > 3 {
        return Err(Diagnostic::new(
            ErrorKind::Usage,
            format!("{flag} {text}: expected one to three comma-separated dimensions"),
        ));
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        let v = DimExpr { s: p.as_bytes(), i: 0, args }
            .parse_all()
            .map_err(|m| Diagnostic::new(ErrorKind::Usage, format!("{flag} {text}: {m}")))?;
        if v < 0 || v > u32::MAX as i128 {
            return Err(Diagnostic::new(
                ErrorKind::Launch,
                format!("{flag} {text}: dimension {v} is out of range (1 to 2^31-1)"),
            ));
        }
        out[i] = v as u32;
    }
    Ok(out)
}

/// `32x8` or `32x8x2`, the shape as `sweep --block` and people write it (`0x20` stays hex).
fn x_shape(text: &str) -> Option<Vec<String>> {
    let parts: Vec<&str> = text.trim().split('x').collect();
    let digits = |p: &&str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    (parts.len() > 1 && parts.len() <= 3 && parts.iter().all(digits) && parts[0] != "0")
        .then(|| parts.iter().map(|p| p.to_string()).collect())
}

fn split_top_commas(s: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        out.last_mut().unwrap().push(c);
    }
    if out.len() == 1 && out[0].trim().is_empty() {
        return Vec::new();
    }
    out
}

/// Recursive-descent integer expressions: + - * / % ( ), `ceil(a/b)` (ceiling division),
/// `min`, `max`, names of integer arguments.
struct DimExpr<'a> {
    s: &'a [u8],
    i: usize,
    args: &'a BTreeMap<String, i128>,
}

type DResult = std::result::Result<i128, String>;

impl DimExpr<'_> {
    fn parse_all(&mut self) -> DResult {
        let v = self.sum(0)?;
        self.ws();
        if self.i != self.s.len() {
            return Err(format!("unexpected `{}`", String::from_utf8_lossy(&self.s[self.i..])));
        }
        Ok(v)
    }
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.s.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn sum(&mut self, depth: u32) -> DResult {
        if depth > 64 {
            return Err("expression nested too deeply".into());
        }
        let mut v = self.product(depth)?;
        loop {
            if self.eat(b'+') {
                v = v.checked_add(self.product(depth)?).ok_or("overflow")?;
            } else if self.eat(b'-') {
                v = v.checked_sub(self.product(depth)?).ok_or("overflow")?;
            } else {
                return Ok(v);
            }
        }
    }
    fn product(&mut self, depth: u32) -> DResult {
        let mut v = self.atom(depth)?;
        loop {
            if self.eat(b'*') {
                v = v.checked_mul(self.atom(depth)?).filter(|v| v.abs() < 1i128 << 100).ok_or("overflow")?;
            } else if self.eat(b'/') {
                let d = self.atom(depth)?;
                if d == 0 {
                    return Err("division by zero".into());
                }
                v /= d;
            } else if self.eat(b'%') {
                let d = self.atom(depth)?;
                if d == 0 {
                    return Err("division by zero".into());
                }
                v %= d;
            } else {
                return Ok(v);
            }
        }
    }
    fn atom(&mut self, depth: u32) -> DResult {
        self.ws();
        if self.eat(b'(') {
            let v = self.sum(depth + 1)?;
            return if self.eat(b')') { Ok(v) } else { Err("missing `)`".into()) };
        }
        if self.eat(b'-') {
            return Ok(-self.atom(depth + 1)?);
        }
        let start = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'_') {
            self.i += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if word.is_empty() {
            return Err("expected a number".into());
        }
        if word.as_bytes()[0].is_ascii_digit() {
            return match parse_number(word) {
                Some(ParamValue::Int(v)) => Ok(v),
                _ => Err(format!("`{word}` is not an integer")),
            };
        }
        if matches!(word, "ceil" | "cdiv" | "min" | "max") {
            if !self.eat(b'(') {
                return Err(format!("`{word}` needs arguments"));
            }
            let a = self.product_or_ceil(word == "ceil", depth + 1)?;
            let r = if word == "ceil" {
                a
            } else {
                if !self.eat(b',') {
                    return Err(format!("`{word}` takes two arguments"));
                }
                let b = self.sum(depth + 1)?;
                match word {
                    "min" => a.min(b),
                    "max" => a.max(b),
                    _ => {
                        if b == 0 {
                            return Err("division by zero".into());
                        }
                        (a + b - 1).div_euclid(b)
                    }
                }
            };
            return if self.eat(b')') { Ok(r) } else { Err("missing `)`".into()) };
        }
        self.args
            .get(word)
            .copied()
            .ok_or_else(|| format!("`{word}` has no integer value; give it with --arg {word}=VALUE"))
    }
    /// Inside `ceil(...)` a top-level `a/b` is a ceiling division.
    fn product_or_ceil(&mut self, ceil: bool, depth: u32) -> DResult {
        if !ceil {
            return self.sum(depth);
        }
        let save = self.i;
        let a = self.sum_no_div(depth)?;
        if self.eat(b'/') {
            let b = self.sum(depth)?;
            if b == 0 {
                return Err("division by zero".into());
            }
            return Ok((a + b - 1).div_euclid(b));
        }
        self.i = save;
        self.sum(depth)
    }
    fn sum_no_div(&mut self, depth: u32) -> DResult {
        // A single atom (possibly parenthesised) before the division.
        self.atom(depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dims(s: &str) -> std::result::Result<[u32; 3], String> {
        let mut a = BTreeMap::new();
        a.insert("n".to_string(), 1000i128);
        parse_dims("--grid", s, &a).map_err(|d| d.message)
    }

    #[test]
    fn dimensions() {
        assert_eq!(dims("64,256").unwrap(), [64, 256, 1]);
        assert_eq!(dims("ceil(n/256)").unwrap(), [4, 1, 1]);
        assert_eq!(dims("(n+255)/256").unwrap(), [4, 1, 1]);
        assert_eq!(dims("n/256, 2, 3").unwrap(), [3, 2, 3]);
        assert!(dims("m").unwrap_err().contains("--arg m"));
        assert!(dims("1,2,3,4").is_err());
        assert!(dims("n/0").is_err());
        // One shape syntax everywhere: `sweep --block 32x8` and `analyze --block 32x8` agree.
        assert_eq!(dims("32x8").unwrap(), [32, 8, 1]);
        assert_eq!(dims("8x4x2").unwrap(), [8, 4, 2]);
        assert_eq!(dims("0x20").unwrap(), [32, 1, 1]);
    }

    #[test]
    fn launch_limits() {
        assert!(check_launch([1, 1, 1], [1024, 1, 1]).is_ok());
        assert!(check_launch([1, 1, 1], [1025, 1, 1]).is_err());
        assert!(check_launch([1, 1, 1], [1, 1, 65]).is_err());
        assert!(check_launch([0, 1, 1], [32, 1, 1]).is_err());
        assert!(check_launch([1, 65536, 1], [32, 1, 1]).is_err());
        assert!(check_launch([(1 << 31) - 1, 1, 1], [32, 1, 1]).is_ok());
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("0x10"), Some(ParamValue::Int(16)));
        // As C reads them: octal, binary, suffixes; `08` is no C literal.
        assert_eq!(parse_number("010"), Some(ParamValue::Int(8)));
        assert_eq!(parse_number("0b101"), Some(ParamValue::Int(5)));
        assert_eq!(parse_number("18446744073709551615ull"), Some(ParamValue::Int(u64::MAX as i128)));
        assert_eq!(parse_number("18446744073709551616"), None);
        assert_eq!(parse_number("08"), None);
        assert_eq!(parse_number("0.5"), Some(ParamValue::Float(0.5)));
        assert_eq!(parse_number("-3"), Some(ParamValue::Int(-3)));
        assert_eq!(parse_number("2.5f"), Some(ParamValue::Float(2.5)));
        assert_eq!(parse_number("abc"), None);
        assert_eq!(parse_number("true"), Some(ParamValue::Int(1)));
        assert_eq!(parse_number("false"), Some(ParamValue::Int(0)));
    }
}
