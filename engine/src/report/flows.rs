//! The per-flow table of every report: each flow's iterations (how many, per second, the share
//! that failed and why, the iteration duration's p50/p95/p99), with its steps under it, each
//! the row of the target that measured it, with its `group`. Formatted here, like the rest of
//! the view (`view.rs`), so that every format shows the same numbers. Empty without flows.

use serde::Serialize;

use super::view::{KeyValue, TargetView};
use crate::result::{FlowResult, FlowStep, RunResult};
use crate::spec::printable;
use crate::units::{MISSING, Unit};

/// One flow of the current run, formatted.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FlowView {
    pub name: String,
    pub weight: String,
    /// Iterations that ended.
    pub iterations: String,
    /// Iterations per second, `12.5/s`.
    pub rate: String,
    /// Failed iterations, a percentage of those that ended.
    pub failed: String,
    /// Failed iterations by reason (`request`, `check`, `extraction`, `missing_variable`).
    pub failed_by_reason: Vec<KeyValue>,
    /// Iterations failed for a request, by its error kind.
    pub failed_requests_by_kind: Vec<KeyValue>,
    /// Iteration duration percentiles.
    pub p50: String,
    pub p95: String,
    pub p99: String,
    pub steps: Vec<StepView>,
}

/// One step of a flow: its target's row in the report's target table, and its group.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StepView {
    /// The step's `group`, or empty.
    pub group: String,
    /// The step's latency p50 (the target table shows p95 and p99 only).
    pub p50: String,
    /// The target that measured the step (`flow/step`).
    pub target: TargetView,
}

/// The flows of `current`, each with its steps' rows from `targets` (the view's target rows:
/// a step whose target is not among them is left out).
pub(crate) fn flow_views(current: &RunResult, targets: &[TargetView]) -> Vec<FlowView> {
    current
        .flows
        .iter()
        .map(|flow| flow_view(flow, targets))
        .collect()
}

fn flow_view(flow: &FlowResult, targets: &[TargetView]) -> FlowView {
    let percentile = |get: fn(&crate::result::LatencySummary) -> u64| {
        Unit::Micros.format_or_missing(flow.duration_us.as_ref().map(|d| get(d) as f64))
    };
    let counts = |map: &std::collections::BTreeMap<String, u64>| {
        map.iter()
            .map(|(k, v)| KeyValue {
                key: k.clone(),
                value: v.to_string(),
            })
            .collect()
    };
    FlowView {
        name: flow.name.clone(),
        weight: flow.weight.to_string(),
        iterations: flow.iterations.to_string(),
        rate: Unit::PerSecond.format(flow.iterations_per_s),
        failed: if flow.iterations > 0 {
            Unit::Ratio.format(flow.failed_rate())
        } else {
            MISSING.to_string()
        },
        failed_by_reason: counts(&flow.failed_by_reason),
        failed_requests_by_kind: counts(&flow.failed_requests_by_kind),
        p50: percentile(|d| d.p50_us),
        p95: percentile(|d| d.p95_us),
        p99: percentile(|d| d.p99_us),
        steps: flow
            .steps
            .iter()
            .filter_map(|step| {
                let target = targets.iter().find(|t| t.name == step.target)?;
                let p50 = target.metrics.iter().find(|r| r.label == "p50");
                Some(StepView {
                    group: step.group.clone().unwrap_or_default(),
                    p50: p50.map_or_else(|| MISSING.to_string(), |r| r.current.clone()),
                    target: target.clone(),
                })
            })
            .collect(),
    }
}

/// The flow SLO thresholds' metric names as the spec writes them: a flow's `latency` is its
/// `iteration_duration`, `requests` its `iterations`, `errors` its `failed_iterations`.
pub(crate) fn flow_metric_name(metric: &str) -> &str {
    match metric {
        "latency" => "iteration_duration",
        "requests" => "iterations",
        "errors" => "failed_iterations",
        other => other,
    }
}

/// The flows of `result` as the console summary of a run shows them (see [`text_table`]);
/// empty without flows.
pub(super) fn console_table(result: &RunResult) -> String {
    if result.flows.is_empty() {
        return String::new();
    }
    let targets: Vec<TargetView> = result
        .targets
        .iter()
        .map(|t| super::view::target_view(Some(t), None, None))
        .collect();
    text_table(&flow_views(result, &targets))
}

/// The flows as a text table: a line per flow (its iterations), its steps' lines under it
/// (their requests), then each flow's failed iterations by reason; names with control and
/// hidden characters escaped (`spec::printable`). Empty without flows.
pub(super) fn text_table(flows: &[FlowView]) -> String {
    use std::fmt::Write as _;
    if flows.is_empty() {
        return String::new();
    }
    let mut rows: Vec<[String; 8]> = vec![
        [
            "flow / step",
            "group",
            "iterations",
            "rate",
            "failed",
            "p50",
            "p95",
            "p99",
        ]
        .map(String::from),
    ];
    for f in flows {
        rows.push([
            printable(&f.name),
            String::new(),
            f.iterations.clone(),
            f.rate.clone(),
            f.failed.clone(),
            f.p50.clone(),
            f.p95.clone(),
            f.p99.clone(),
        ]);
        for s in &f.steps {
            let t = &s.target;
            rows.push([
                format!("  {}", printable(&t.name)),
                printable(&s.group),
                t.requests.clone(),
                t.rps.clone(),
                t.error_rate.clone(),
                s.p50.clone(),
                t.p95.clone(),
                t.p99.clone(),
            ]);
        }
    }
    let width = |i: usize| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..8).map(width).collect();
    let mut out = String::from("\n");
    for row in &rows {
        let _ = write!(
            out,
            "  {:<w0$}  {:<w1$}",
            row[0],
            row[1],
            w0 = widths[0],
            w1 = widths[1]
        );
        for (cell, w) in row[2..].iter().zip(&widths[2..]) {
            let _ = write!(out, "  {cell:>w$}");
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "  (a flow's line: its iterations, from due to the end of the last step; a step's: its requests)"
    );
    for f in flows.iter().filter(|f| !f.failed_by_reason.is_empty()) {
        let list = |kv: &[KeyValue]| {
            kv.iter()
                .map(|r| format!("{}: {}", r.key, r.value))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut line = format!(
            "  {} failed iterations: {}",
            printable(&f.name),
            list(&f.failed_by_reason)
        );
        if !f.failed_requests_by_kind.is_empty() {
            let _ = write!(
                line,
                " (failed requests: {})",
                list(&f.failed_requests_by_kind)
            );
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// A flow in the JSON verdict: its iterations in numbers, and as the reports show them.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, Serialize, schemars::JsonSchema)]
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
    pub failed_by_reason: std::collections::BTreeMap<String, u64>,
    /// Iterations failed for `request`, by the request's error kind.
    pub failed_requests_by_kind: std::collections::BTreeMap<String, u64>,
    /// Iteration duration percentiles, microseconds; absent when no iteration ended.
    pub duration_us: Option<VerdictPercentiles>,
    /// `iterations_per_s`, `failed_rate` and the duration percentiles as the reports show them
    /// (`12.5/s`, `1.000%`, `250ms`).
    pub display: FlowDisplay,
}

/// Percentiles of a flow's iteration duration, microseconds.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, Serialize, schemars::JsonSchema)]
pub(crate) struct VerdictPercentiles {
    /// Median, microseconds.
    pub p50_us: u64,
    /// 95th percentile, microseconds.
    pub p95_us: u64,
    /// 99th percentile, microseconds.
    pub p99_us: u64,
}

/// A flow's numbers formatted by the engine.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, Serialize, schemars::JsonSchema)]
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

/// The flows of `current` for the JSON verdict.
pub(crate) fn verdict_flows(current: &RunResult) -> Vec<VerdictFlow> {
    current
        .flows
        .iter()
        .map(|f| {
            let view = flow_view(f, &[]);
            VerdictFlow {
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
                display: FlowDisplay {
                    rate: view.rate,
                    failed: view.failed,
                    p50: view.p50,
                    p95: view.p95,
                    p99: view.p99,
                },
            }
        })
        .collect()
}
