//! The flows in the JSON verdict (`verdict.rs`): each flow's iterations in numbers, and as
//! every report shows them ([`FlowDisplay::of`], which the reports' flow table reads too).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::result::{FlowResult, FlowStep, RunResult};
use crate::units::{MISSING, Unit};

/// A flow in the JSON verdict: its iterations in numbers, and as the reports show them.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub(crate) struct VerdictFlow {
    /// The flow's `name`.
    pub name: String,
    /// Its steps, in order: each step's target (`flow/step`, a row of the verdict's `targets`
    /// when there is a baseline) and `group`.
    pub steps: Vec<FlowStep>,
    /// Iterations that ended, passed or failed.
    pub iterations: u64,
    /// Iterations that ended per second of the measured window.
    pub iterations_per_s: f64,
    /// Failed iterations.
    pub failed: u64,
    /// `failed / iterations`, a fraction (0.01 = 1%); 0 without iterations.
    pub failed_rate: f64,
    /// Failed iterations by reason: `request`, `check`, `extraction`, `missing_variable`.
    pub failed_by_reason: BTreeMap<String, u64>,
    /// Iterations failed for `request`, by the request's error kind.
    pub failed_requests_by_kind: BTreeMap<String, u64>,
    /// Iteration duration percentiles, microseconds; absent when no iteration ended.
    pub duration_us: Option<VerdictPercentiles>,
    /// `iterations_per_s`, `failed_rate` and the duration percentiles as the reports show them
    /// (`12.5/s`, `1.000%`, `250ms`).
    pub display: FlowDisplay,
}

/// Percentiles of a flow's iteration duration, microseconds.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub(crate) struct VerdictPercentiles {
    /// Median, microseconds.
    pub p50_us: u64,
    /// 95th percentile, microseconds.
    pub p95_us: u64,
    /// 99th percentile, microseconds.
    pub p99_us: u64,
}

/// A flow's numbers formatted by the engine.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, JsonSchema)]
pub(crate) struct FlowDisplay {
    /// Iterations per second, e.g. `12.5/s`.
    pub rate: String,
    /// Failed iterations, e.g. `1.000%` (`–` without iterations).
    pub failed: String,
    /// Iteration duration p50, e.g. `250ms`.
    pub p50: String,
    /// Iteration duration p95.
    pub p95: String,
    /// Iteration duration p99.
    pub p99: String,
}

impl FlowDisplay {
    /// The numbers of `flow` formatted as every report shows them: `–` for the failed share
    /// without iterations and for the percentiles when no iteration ended.
    pub(crate) fn of(flow: &FlowResult) -> FlowDisplay {
        let percentile = |get: fn(&crate::result::LatencySummary) -> u64| {
            Unit::Micros.format_or_missing(flow.duration_us.as_ref().map(|d| get(d) as f64))
        };
        FlowDisplay {
            rate: Unit::PerSecond.format(flow.iterations_per_s),
            failed: if flow.iterations > 0 {
                Unit::Ratio.format(flow.failed_rate())
            } else {
                MISSING.to_string()
            },
            p50: percentile(|d| d.p50_us),
            p95: percentile(|d| d.p95_us),
            p99: percentile(|d| d.p99_us),
        }
    }
}

/// The flows of `current` for the JSON verdict.
pub(crate) fn verdict_flows(current: &RunResult) -> Vec<VerdictFlow> {
    current
        .flows
        .iter()
        .map(|f| VerdictFlow {
            name: f.name.clone(),
            steps: f.steps.clone(),
            iterations: f.iterations,
            iterations_per_s: f.iterations_per_s,
            failed: f.failed,
            failed_rate: f.failed_rate(),
            failed_by_reason: f.failed_by_reason.clone(),
            failed_requests_by_kind: f.failed_requests_by_kind.clone(),
            duration_us: f.duration_us.as_ref().map(|d| VerdictPercentiles {
                p50_us: d.p50_us,
                p95_us: d.p95_us,
                p99_us: d.p99_us,
            }),
            display: FlowDisplay::of(f),
        })
        .collect()
}
