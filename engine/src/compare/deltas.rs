//! Metrics of each target, and SLO verdicts, in both runs: values beside each other with their
//! change, without a verdict of their own.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use crate::plan::regression::ScopeKind;
use crate::plan::threshold::{Metric, Severity};
use crate::result::{RunResult, SloVerdict, TargetResult};
use crate::units::Unit;

/// A number compared per target ([`MetricDelta`]), named in the verdict as the result names
/// it: a latency percentile or mean of complete responses (`p50` .. `p99_9`, `mean`), the
/// error rate, the throughput (`rps`, complete responses per second).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetMetric {
    /// Latency p50, µs.
    P50,
    /// Latency p90, µs.
    P90,
    /// Latency p95, µs.
    P95,
    /// Latency p99, µs.
    P99,
    /// Latency p99.9, µs.
    #[serde(rename = "p99_9")]
    P999,
    /// Mean latency, µs.
    Mean,
    /// Failed requests over requests that ended, a fraction.
    ErrorRate,
    /// Complete responses per second of the measured window.
    Rps,
}

impl TargetMetric {
    /// The reports' label of it: `p50`, `p90`, `p95`, `p99`, `p99.9`, `mean`, `error rate`,
    /// `throughput`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            TargetMetric::P50 => "p50",
            TargetMetric::P90 => "p90",
            TargetMetric::P95 => "p95",
            TargetMetric::P99 => "p99",
            TargetMetric::P999 => "p99.9",
            TargetMetric::Mean => "mean",
            TargetMetric::ErrorRate => "error rate",
            TargetMetric::Rps => "throughput",
        }
    }
}

/// One metric of one target, in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricDelta {
    /// `p50`, `p90`, `p95`, `p99`, `p99_9`, `mean` (latency, `us`), `error_rate` (`ratio`),
    /// `rps` (`1/s`).
    #[schemars(with = "String")]
    pub metric: TargetMetric,
    /// Unit of `baseline`, `current` and `change`: `us`, `ratio` (0.01 = 1%) or `1/s`.
    pub unit: String,
    /// The baseline's value; absent when the target is not in it or had no responses.
    pub baseline: Option<f64>,
    /// The current run's value; absent when the target is not in it or had no responses.
    pub current: Option<f64>,
    /// `current - baseline`.
    pub change: Option<f64>,
    /// `current / baseline - 1`; absent when the baseline is 0 or absent.
    pub relative_change: Option<f64>,
}

/// A target (or `total`) in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetDelta {
    /// The target's name, or `total`.
    pub name: String,
    /// The target exists in the baseline.
    pub in_baseline: bool,
    /// The target exists in the current run.
    pub in_current: bool,
    /// The metrics of [`MetricDelta::metric`], in that order.
    pub metrics: Vec<MetricDelta>,
}

/// An SLO verdict of the current run beside the same threshold's value in the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SloDelta {
    /// `total`, or the target's, flow's or scenario's name.
    pub scope: String,
    /// `latency`, `errors`, `requests` or `checks`.
    #[schemars(with = "String")]
    pub metric: Metric,
    /// The threshold as written, e.g. `p(95) < 200ms`.
    pub threshold: String,
    /// Unit of `limit`, `measured`, `baseline` and `change`: `us`, `ratio` (0.01 = 1%), `1/s`
    /// or `count`.
    pub unit: String,
    /// The threshold's limit in `unit`.
    pub limit: f64,
    /// `limit` formatted by the engine as its reports show it, e.g. `200.00ms`, `1.000%`.
    pub limit_text: String,
    /// The current run's measured value in `unit`; absent when it could not be measured.
    pub measured: Option<f64>,
    /// `measured` formatted by the engine as the Markdown report shows it, e.g. `12.34ms`;
    /// the reports' missing-value text `–` when absent.
    pub measured_text: String,
    /// The same threshold's measured value in the baseline, when it had it.
    pub baseline: Option<f64>,
    /// `measured - baseline`.
    pub change: Option<f64>,
    /// Whether the current run met the threshold.
    pub passed: bool,
    /// What the scope is: `total`, `target`, `flow` or `scenario`; absent in results written
    /// before scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub scope_kind: Option<ScopeKind>,
    /// Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
    /// all of them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// `fail` (a failure fails the run) or `warn` (a failure is a warning, never fails it);
    /// absent for `fail`.
    #[serde(default, skip_serializing_if = "is_fail")]
    pub severity: Severity,
}

/// Whether a severity is `fail`, the default (left out of the JSON).
fn is_fail(s: &Severity) -> bool {
    *s == Severity::Fail
}

impl SloDelta {
    /// The SLO verdict `v` of the current run, beside `baseline`, the baseline's measured value
    /// of the same threshold (in `v.unit`).
    pub(crate) fn of(v: &SloVerdict, baseline: Option<f64>) -> SloDelta {
        let unit = Unit::from_name(&v.unit);
        SloDelta {
            scope: v.scope.clone(),
            metric: v.metric,
            threshold: v.threshold.clone(),
            unit: v.unit.clone(),
            limit: v.limit,
            limit_text: unit.format(v.limit),
            measured: v.measured,
            measured_text: unit.format_or_missing(v.measured),
            baseline,
            change: v.measured.zip(baseline).map(|(m, b)| m - b),
            passed: v.passed,
            scope_kind: v.scope_kind,
            tags: v.tags.clone(),
            severity: v.severity,
        }
    }
}

/// Every SLO of the current run, with the baseline's value of the same threshold (same scope,
/// metric, tags and threshold text).
pub(super) fn slo_deltas(baseline: &RunResult, current: &RunResult) -> Vec<SloDelta> {
    current
        .slo
        .iter()
        .map(|v| {
            let base = baseline
                .slo
                .iter()
                .find(|b| same_threshold(b, v))
                .and_then(|b| b.measured);
            SloDelta::of(v, base)
        })
        .collect()
}

/// Whether two SLO verdicts are of the same threshold: scope (a kind absent in older results
/// matches any), metric, tags and text.
fn same_threshold(a: &SloVerdict, b: &SloVerdict) -> bool {
    let kinds = match (a.scope_kind, b.scope_kind) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    kinds
        && a.scope == b.scope
        && a.metric == b.metric
        && a.tags == b.tags
        && a.threshold == b.threshold
}

/// The metrics compared per target: which, unit, value.
pub(crate) fn target_metrics(t: &TargetResult) -> Vec<(TargetMetric, Unit, Option<f64>)> {
    let l = t.latency_us.as_ref();
    vec![
        (TargetMetric::P50, Unit::Micros, l.map(|l| l.p50_us as f64)),
        (TargetMetric::P90, Unit::Micros, l.map(|l| l.p90_us as f64)),
        (TargetMetric::P95, Unit::Micros, l.map(|l| l.p95_us as f64)),
        (TargetMetric::P99, Unit::Micros, l.map(|l| l.p99_us as f64)),
        (
            TargetMetric::P999,
            Unit::Micros,
            l.map(|l| l.p99_9_us as f64),
        ),
        (TargetMetric::Mean, Unit::Micros, l.map(|l| l.mean_us)),
        (TargetMetric::ErrorRate, Unit::Ratio, Some(t.error_rate)),
        (TargetMetric::Rps, Unit::PerSecond, Some(t.rps)),
    ]
}

fn delta(name: &str, b: Option<&TargetResult>, c: Option<&TargetResult>) -> TargetDelta {
    let bm = b.map(target_metrics);
    let cm = c.map(target_metrics);
    let names = bm.as_ref().or(cm.as_ref()).expect("one side exists");
    let metrics = names
        .iter()
        .enumerate()
        .map(|(i, (metric, unit, _))| {
            let base = bm.as_ref().and_then(|m| m[i].2);
            let cur = cm.as_ref().and_then(|m| m[i].2);
            MetricDelta {
                metric: *metric,
                unit: unit.name().to_string(),
                baseline: base,
                current: cur,
                change: base.zip(cur).map(|(b, c)| c - b),
                relative_change: base
                    .zip(cur)
                    .filter(|(b, _)| *b != 0.0)
                    .map(|(b, c)| c / b - 1.0),
            }
        })
        .collect();
    TargetDelta {
        name: name.to_string(),
        in_baseline: b.is_some(),
        in_current: c.is_some(),
        metrics,
    }
}

/// `total` first, then the current run's targets, then targets only the baseline has.
pub(super) fn target_deltas(baseline: &RunResult, current: &RunResult) -> Vec<TargetDelta> {
    let mut out = vec![delta("total", Some(&baseline.total), Some(&current.total))];
    for t in &current.targets {
        let b = baseline.targets.iter().find(|b| b.name == t.name);
        out.push(delta(&t.name, b, Some(t)));
    }
    for b in &baseline.targets {
        if !current.targets.iter().any(|t| t.name == b.name) {
            out.push(delta(&b.name, Some(b), None));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_slo_is_matched_with_the_baseline_s_by_its_tags_and_kind_too() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let mut baseline = crate::result::read(std::path::Path::new(path)).unwrap();
        let slo = baseline.slo[0].clone();
        let tagged = |kind: &str, measured: f64, scope_kind: ScopeKind| {
            let mut v = slo.clone();
            v.tags = [("kind".to_string(), kind.to_string())].into();
            v.measured = Some(measured);
            v.scope_kind = Some(scope_kind);
            v
        };
        baseline.slo = vec![
            tagged("read", 1.0, ScopeKind::Total),
            tagged("write", 2.0, ScopeKind::Total),
            tagged("write", 3.0, ScopeKind::Scenario),
        ];
        let mut current = baseline.clone();
        current.slo.reverse();
        current.slo[0].severity = Severity::Warn;
        let deltas = slo_deltas(&baseline, &current);
        let baselines: Vec<Option<f64>> = deltas.iter().map(|d| d.baseline).collect();
        assert_eq!(baselines, [Some(3.0), Some(2.0), Some(1.0)]);
        assert_eq!(deltas[0].severity, Severity::Warn);
        assert_eq!(deltas[0].scope_kind, Some(ScopeKind::Scenario));
        assert_eq!(deltas[1].tags["kind"], "write");
    }
}
