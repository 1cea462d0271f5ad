//! Budgets: the limits `check` and the attribute hold a sheet to, and the one place that decides
//! whether a row or a launch breaks one and says so.
//!
//! Invariants: a budget left out is not checked; a per-request or efficiency budget is held
//! only by rows with requests (global rows for sectors, shared rows for wavefronts); the
//! comparisons allow 1e-9 for floating-point error; the messages are the same words for every
//! driver (`check` puts the launch's name before them).

use super::text::thousands;
use super::{Row, Sheet};
use crate::diag::{Diagnostic, ErrorKind, Result};
use crate::ir::Space;
use serde::{Deserialize, Serialize};

/// The budgets an access or a launch is held to; a budget left out is not checked.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// Per global access: sectors / requests at most this.
    pub max_sectors_per_request: Option<f64>,
    /// Per global access: ideal sectors / sectors at least this (0 to 1).
    pub min_efficiency: Option<f64>,
    /// Per kernel: global sectors of the whole launch; per line: that access's sectors.
    pub max_sectors: Option<u64>,
    /// Per shared access: wavefronts / requests at most this (1 is conflict-free).
    pub max_wavefronts_per_request: Option<f64>,
}

impl Budgets {
    /// These budgets, with `outer`'s where these leave one out.
    pub fn over(self, outer: Budgets) -> Budgets {
        Budgets {
            max_sectors_per_request: self.max_sectors_per_request.or(outer.max_sectors_per_request),
            min_efficiency: self.min_efficiency.or(outer.min_efficiency),
            max_sectors: self.max_sectors.or(outer.max_sectors),
            max_wavefronts_per_request: self.max_wavefronts_per_request.or(outer.max_wavefronts_per_request),
        }
    }

    /// An error naming `what` when a budget is out of its range.
    pub fn validate(&self, what: &str) -> Result<()> {
        let bad = |m: String| Err(Diagnostic::new(ErrorKind::Usage, format!("{what}: {m}")));
        if let Some(e) = self.min_efficiency {
            if !(0.0..=1.0).contains(&e) {
                return bad(format!("min_efficiency = {e}: a fraction between 0 and 1"));
            }
        }
        for (k, v) in [
            ("max_sectors_per_request", self.max_sectors_per_request),
            ("max_wavefronts_per_request", self.max_wavefronts_per_request),
        ] {
            if v.is_some_and(|v| v.is_nan() || v < 0.0) {
                return bad(format!("{k} must be a non-negative number"));
            }
        }
        Ok(())
    }
}

/// One broken budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Violation {
    /// The budget's rule name (`max-sectors-per-request`, `min-efficiency`, `max-sectors`,
    /// `max-wavefronts-per-request`).
    pub rule: &'static str,
    /// What is wrong, in a sentence that names the access and the budget.
    pub message: String,
    /// The measured value beside the budget, short (for a label under the source).
    pub label: String,
    pub value: f64,
    pub budget: f64,
}

/// The budgets `row` breaks, in this order: sectors per request, efficiency, sectors (global
/// rows); wavefronts per request (shared rows). `max_sectors` here is the row's own budget.
pub fn row_violations(row: &Row, budgets: &Budgets) -> Vec<Violation> {
    let mut out = Vec::new();
    if row.requests == 0 {
        return out;
    }
    if row.space == Space::Global {
        let spr = row.sectors_per_request();
        if let Some(max) = budgets.max_sectors_per_request {
            if spr > max + 1e-9 {
                out.push(Violation {
                    rule: "max-sectors-per-request",
                    message: format!(
                        "`{}` touches {:.2} sectors per request, over the budget `max_sectors_per_request = {}` ({}-byte {}s, {} requests, {} sectors where {} would do)",
                        row.text,
                        spr,
                        number(max),
                        row.width,
                        row.op.name(),
                        thousands(row.requests),
                        thousands(row.sectors),
                        thousands(row.ideal_sectors)
                    ),
                    label: format!("{spr:.2} sectors per request (budget {})", number(max)),
                    value: spr,
                    budget: max,
                });
            }
        }
        if let Some(min) = budgets.min_efficiency {
            if row.sectors > 0 {
                let efficiency = row.ideal_sectors as f64 / row.sectors as f64;
                if efficiency + 1e-9 < min {
                    out.push(Violation {
                        rule: "min-efficiency",
                        message: format!(
                            "`{}` uses {:.1}% of the sectors it moves, under the budget `min_efficiency = {}` ({} sectors where {} would do)",
                            row.text,
                            efficiency * 100.0,
                            number(min),
                            thousands(row.sectors),
                            thousands(row.ideal_sectors)
                        ),
                        label: format!("efficiency {:.3} (budget {})", efficiency, number(min)),
                        value: efficiency,
                        budget: min,
                    });
                }
            }
        }
        if let Some(max) = budgets.max_sectors {
            if row.sectors > max {
                out.push(Violation {
                    rule: "max-sectors",
                    message: format!(
                        "`{}` touches {} sectors over the launch, over the budget `max_sectors = {}`",
                        row.text,
                        thousands(row.sectors),
                        thousands(max)
                    ),
                    label: format!("{} sectors (budget {})", thousands(row.sectors), thousands(max)),
                    value: row.sectors as f64,
                    budget: max as f64,
                });
            }
        }
    } else if let (Some(max), Some(wavefronts)) = (budgets.max_wavefronts_per_request, row.wavefronts) {
        let per = wavefronts as f64 / row.requests as f64;
        if per > max + 1e-9 {
            out.push(Violation {
                rule: "max-wavefronts-per-request",
                message: format!(
                    "`{}` needs {:.2} shared-memory wavefronts per request, over the budget `max_wavefronts_per_request = {}` ({} requests, {} wavefronts, {} bank conflicts)",
                    row.text,
                    per,
                    number(max),
                    thousands(row.requests),
                    thousands(wavefronts),
                    thousands(row.bank_conflicts.unwrap_or(0))
                ),
                label: format!("{per:.2} wavefronts per request (budget {})", number(max)),
                value: per,
                budget: max,
            });
        }
    }
    out
}

/// The launch's budget on its global sectors, if it breaks it.
pub fn launch_violation(sheet: &Sheet, max_sectors: u64) -> Option<Violation> {
    let total = sheet.global_sectors();
    if total <= max_sectors {
        return None;
    }
    let top = sheet.heaviest_global(3);
    Some(Violation {
        rule: "max-sectors",
        message: format!(
            "the launch moves {} global sectors, over the budget `max_sectors = {}` (largest: {})",
            thousands(total),
            thousands(max_sectors),
            top.join("; ")
        ),
        label: format!("{} sectors (budget {})", thousands(total), thousands(max_sectors)),
        value: total as f64,
        budget: max_sectors as f64,
    })
}

/// A budget as the user wrote it: a whole number without a fraction.
pub fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}
