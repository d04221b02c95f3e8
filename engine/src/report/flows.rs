//! The per-flow table of every report: each flow's iterations (how many, per second, the share
//! that failed and why, the iteration duration's p50/p95/p99), with its steps under it, each
//! the row of the target that measured it, with its `group`. Formatted here, like the rest of
//! the view (`view.rs`), so that every format shows the same numbers, and as the JSON verdict
//! shows them (`verdict_flows.rs`). Empty without flows.

use serde::Serialize;

use super::target_view::{KeyValue, TargetView, target_view};
use super::verdict_flows::FlowDisplay;
use crate::compare::TargetMetric;
use crate::result::{FlowResult, RunResult, SloVerdict};
use crate::spec::printable;
use crate::units::MISSING;

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
    let counts = |map: &std::collections::BTreeMap<String, u64>| {
        map.iter()
            .map(|(k, v)| KeyValue {
                key: k.clone(),
                value: v.to_string(),
            })
            .collect()
    };
    let display = FlowDisplay::of(flow);
    FlowView {
        name: flow.name.clone(),
        weight: flow.weight.to_string(),
        iterations: flow.iterations.to_string(),
        rate: display.rate,
        failed: display.failed,
        failed_by_reason: counts(&flow.failed_by_reason),
        failed_requests_by_kind: counts(&flow.failed_requests_by_kind),
        p50: display.p50,
        p95: display.p95,
        p99: display.p99,
        steps: flow
            .steps
            .iter()
            .filter_map(|step| {
                let target = targets.iter().find(|t| t.name == step.target)?;
                let p50 = target
                    .metrics
                    .iter()
                    .find(|r| r.metric == TargetMetric::P50);
                Some(StepView {
                    group: step.group.clone().unwrap_or_default(),
                    p50: p50.map_or_else(|| MISSING.to_string(), |r| r.current.clone()),
                    target: target.clone(),
                })
            })
            .collect(),
    }
}

/// The name the spec gives the metric of `v`, an SLO verdict of `result`: a flow's by the
/// flow's blocks' names ([`Metric::flow_name`]: `iteration_duration`, ...), else as the
/// verdict records it (`latency`, ...).
///
/// [`Metric::flow_name`]: crate::plan::threshold::Metric::flow_name
pub(crate) fn slo_metric_name(v: &SloVerdict, result: &RunResult) -> &'static str {
    if result.flows.iter().any(|f| f.name == v.scope) {
        v.metric.flow_name()
    } else {
        v.metric.name()
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
        .map(|t| target_view(Some(t), None, None))
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
