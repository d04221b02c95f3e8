//! The trend over several results of one spec in time order (nightly runs): each key metric
//! over the window, the latest compared with the run before it and with the median of the runs
//! before it in the window.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::compare::median;
use crate::result::RunResult;
use crate::units::{MISSING, Unit, format_relative};

/// Default number of runs a trend shows (the latest included).
pub(crate) const DEFAULT_WINDOW: usize = 10;

/// One run of the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrendRun {
    /// Short label: the start date and time, `2024-05-01 03:00`.
    pub label: String,
    /// When the run's measuring started, RFC 3339 in UTC (the result's `started_at`).
    pub started_at: String,
}

/// One metric over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TrendMetric {
    /// `throughput`, `p50`, `p95`, `p99`, `error rate`.
    pub label: String,
    /// `rps`, `p50_us`, `p95_us`, `p99_us`, `error_rate`.
    pub key: String,
    /// Unit of `raw`: `1/s` (throughput), `us` (latencies) or `ratio` (error rate, 0.01 = 1%).
    pub unit: String,
    /// The metric in each run, formatted as the reports show it (`12.00ms`), oldest first;
    /// `–` when a run had no responses.
    pub values: Vec<String>,
    /// In `unit`, oldest first; absent when a run had no responses.
    pub raw: Vec<Option<f64>>,
    /// The latest relative to the run before it, e.g. `+3.1%`.
    pub vs_previous: String,
    /// The latest relative to the median of the earlier runs of the window.
    pub vs_median: String,
}

/// The trend of a window of runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Trend {
    /// The runs of the window, oldest first, the latest last.
    pub runs: Vec<TrendRun>,
    /// Throughput, p50, p95, p99 and error rate over the runs.
    pub metrics: Vec<TrendMetric>,
}

type Getter = fn(&RunResult) -> Option<f64>;

/// The trend of `earlier` runs (oldest first) followed by `latest`.
pub fn trend(earlier: &[RunResult], latest: &RunResult) -> Trend {
    let runs: Vec<&RunResult> = earlier.iter().chain(std::iter::once(latest)).collect();
    let metrics: [(&str, &str, Unit, Getter); 5] = [
        ("throughput", "rps", Unit::PerSecond, |r| Some(r.total.rps)),
        ("p50", "p50_us", Unit::Micros, |r| {
            r.total.latency_us.as_ref().map(|l| l.p50_us as f64)
        }),
        ("p95", "p95_us", Unit::Micros, |r| {
            r.total.latency_us.as_ref().map(|l| l.p95_us as f64)
        }),
        ("p99", "p99_us", Unit::Micros, |r| {
            r.total.latency_us.as_ref().map(|l| l.p99_us as f64)
        }),
        ("error rate", "error_rate", Unit::Ratio, |r| {
            Some(r.total.error_rate)
        }),
    ];
    Trend {
        runs: runs
            .iter()
            .map(|r| TrendRun {
                label: r
                    .started_at
                    .get(..16)
                    .unwrap_or(&r.started_at)
                    .replace('T', " "),
                started_at: r.started_at.clone(),
            })
            .collect(),
        metrics: metrics
            .iter()
            .map(|(label, key, unit, get)| {
                let raw: Vec<Option<f64>> = runs.iter().map(|r| get(r)).collect();
                let latest = raw.last().copied().flatten();
                let previous = raw.len().checked_sub(2).and_then(|i| raw[i]);
                let before: Vec<f64> = raw[..raw.len() - 1].iter().flatten().copied().collect();
                let rel = |base: Option<f64>| match (latest, base) {
                    (Some(l), Some(b)) if b != 0.0 => format_relative(Some(l / b - 1.0)),
                    (Some(l), Some(b)) if l == b => "±0".to_string(),
                    _ => MISSING.to_string(),
                };
                TrendMetric {
                    label: label.to_string(),
                    key: key.to_string(),
                    unit: unit.name().to_string(),
                    values: raw.iter().map(|v| unit.format_or_missing(*v)).collect(),
                    vs_previous: rel(previous),
                    vs_median: rel((!before.is_empty()).then(|| median(&before))),
                    raw,
                }
            })
            .collect(),
    }
}
