//! The aggregates a threshold is judged on (`p(95)`, `rate`, `count`, ...), measured on a
//! target's stats, the whole run's, or a window of seconds. Used by the SLO verdicts of the
//! result and by the window watch while the run goes on.

use hdrhistogram::Histogram;

use super::{SpanStats, TargetStats};
use crate::plan::threshold::{Aggregation, Metric, Threshold};

/// What a threshold can be measured on: a target's (or the run's) stats, or a window of
/// per-second stats.
pub(crate) struct Measures<'a> {
    /// Latency of complete responses, microseconds.
    pub(crate) latency_us: &'a Histogram<u64>,
    /// Requests that ended: complete responses plus transport errors.
    pub(crate) requests: u64,
    /// Complete responses, any status.
    pub(crate) responses: u64,
    /// Failed requests: transport errors plus unexpected statuses.
    pub(crate) errors: u64,
    /// Share of check evaluations that passed, a fraction; `None` when none were evaluated.
    pub(crate) check_pass_rate: Option<f64>,
    /// Length of the measured span, seconds.
    pub(crate) elapsed_s: f64,
}

impl<'a> Measures<'a> {
    /// The measures of a target's (or the whole run's) stats over `elapsed_s` seconds.
    pub(crate) fn of(stats: &'a TargetStats, elapsed_s: f64) -> Measures<'a> {
        Measures {
            latency_us: &stats.latency_us,
            requests: stats.requests(),
            responses: stats.responses(),
            errors: stats.error_count(),
            check_pass_rate: stats.check_pass_rate(),
            elapsed_s,
        }
    }

    /// These measures with `dropped` due requests that were never sent (every in-flight slot
    /// busy) counted as requests that failed.
    pub(crate) fn with_dropped(self, dropped: u64) -> Measures<'a> {
        Measures {
            requests: self.requests + dropped,
            errors: self.errors + dropped,
            ..self
        }
    }

    /// The measures of per-second stats merged over `seconds` seconds.
    pub(crate) fn of_seconds(stats: &'a SpanStats, seconds: f64) -> Measures<'a> {
        Measures {
            latency_us: &stats.latency_us,
            requests: stats.requests,
            responses: stats.responses,
            errors: stats.errors,
            check_pass_rate: None,
            elapsed_s: seconds,
        }
    }

    /// The value of `threshold`'s metric and aggregation, with its unit (`us`, `ratio`, `1/s`,
    /// `count`); `None` when there is nothing to measure (no responses for a latency, no
    /// checks for a check rate).
    pub(crate) fn measure(&self, threshold: &Threshold) -> (Option<f64>, &'static str) {
        let h = self.latency_us;
        match (threshold.metric, threshold.aggregation) {
            (Metric::Latency, aggregation) => {
                let value = (!h.is_empty()).then(|| match aggregation {
                    Aggregation::Percentile(p) => h.value_at_quantile(p / 100.0) as f64,
                    Aggregation::Median => h.value_at_quantile(0.5) as f64,
                    Aggregation::Mean => h.mean(),
                    Aggregation::Min => h.min() as f64,
                    Aggregation::Max => h.max() as f64,
                    Aggregation::Rate | Aggregation::Count => unreachable!("rejected by the plan"),
                });
                (value, "us")
            }
            (Metric::Errors, Aggregation::Rate) => {
                let rate = match self.requests {
                    0 => 0.0,
                    n => self.errors as f64 / n as f64,
                };
                (Some(rate), "ratio")
            }
            (Metric::Errors, _) => (Some(self.errors as f64), "count"),
            (Metric::Responses, Aggregation::Rate) => {
                (Some(rate(self.responses, self.elapsed_s)), "1/s")
            }
            (Metric::Responses, _) => (Some(self.responses as f64), "count"),
            (Metric::Checks, _) => (self.check_pass_rate, "ratio"),
        }
    }
}

/// `count` per second of `elapsed_s`; 0 for an empty span.
pub(crate) fn rate(count: u64, elapsed_s: f64) -> f64 {
    if elapsed_s > 0.0 {
        count as f64 / elapsed_s
    } else {
        0.0
    }
}
