//! The per-second samples a rule's interval is computed from: complete seconds of a run's
//! `time_series` only.

use crate::plan::regression::RegressionRule;
use crate::plan::threshold::Aggregation;
use crate::result::{RunResult, TimeSample};

/// The complete seconds of a run's series: the last second, cut short when the run ended
/// (requests in flight draining), is left out of every statistic.
pub(crate) fn complete_seconds(result: &RunResult) -> impl Iterator<Item = &TimeSample> {
    result
        .time_series
        .iter()
        .filter(|s| f64::from(s.second) + 1.0 <= result.duration_s + 1e-9)
}

/// The latency field a latency rule names in one second, µs; none without responses (or in
/// results written before the field was recorded).
pub(crate) fn second_latency(rule: &RegressionRule, s: &TimeSample) -> Option<f64> {
    if s.responses == 0 {
        return None;
    }
    match rule.aggregation {
        Aggregation::Mean => s.mean_us,
        Aggregation::Median => Some(s.p50_us as f64),
        Aggregation::Percentile(p) => match p {
            50.0 => Some(s.p50_us as f64),
            90.0 => s.p90_us.map(|v| v as f64),
            95.0 => s.p95_us.map(|v| v as f64),
            99.0 => Some(s.p99_us as f64),
            _ => s.p99_9_us.map(|v| v as f64),
        },
        _ => None,
    }
}

/// A latency rule's per-second samples, µs: complete seconds with responses, and the field the
/// rule names.
pub(super) fn latency(rule: &RegressionRule, result: &RunResult) -> Vec<f64> {
    complete_seconds(result)
        .filter_map(|s| second_latency(rule, s))
        .collect()
}

/// Responses of each complete second.
pub(super) fn throughput(result: &RunResult) -> Vec<f64> {
    complete_seconds(result)
        .map(|s| s.responses as f64)
        .collect()
}

/// `(errors, requests)` of each complete second. Results written before the series recorded
/// `requests` have only responses (any status) and errors (transport errors and unexpected
/// statuses); there requests are estimated as responses plus the transport errors, taking the
/// share of unexpected statuses among errors from the run's totals (exact when only one kind
/// of error happened).
pub(super) fn errors(result: &RunResult) -> Vec<(f64, f64)> {
    let t = &result.total;
    let unexpected = t
        .errors_by_kind
        .get("unexpected_status")
        .copied()
        .unwrap_or(0) as f64;
    let transport_share = if t.errors > 0 {
        1.0 - unexpected / t.errors as f64
    } else {
        1.0
    };
    complete_seconds(result)
        .map(|s| {
            let errors = s.errors as f64;
            let requests = s
                .requests
                .map_or(s.responses as f64 + transport_share * errors, |r| r as f64);
            (errors, requests)
        })
        .filter(|(_, requests)| *requests > 0.0)
        .collect()
}

/// The pooled error rate of `(errors, requests)` samples: `Σ errors / Σ requests` (0 without
/// requests).
pub(super) fn pooled_rate(samples: &[(f64, f64)]) -> f64 {
    let (e, r) = samples
        .iter()
        .fold((0.0, 0.0), |(e, r), s| (e + s.0, r + s.1));
    if r > 0.0 { e / r } else { 0.0 }
}
