//! The per-second series merged second by second, aligned by wall clock: the run's
//! `time_series` and each target's.
//!
//! A result's second `s` covers `started_at + s`; it goes to merged second `s + offset`,
//! the offset being the result's `started_at` minus the earliest, rounded to whole seconds
//! (`checks::Starts`). Counts are summed. A merged second's latencies come from the sum of
//! its samples' histograms (`TimeSample::histogram`), computed as the run computes a second's
//! (`SpanStats::sample`), and the sum is the merged sample's histogram: exact. A second some
//! of whose samples with responses have no histogram (results before version 4) keeps the
//! response-weighted means of the samples' percentiles and mean (an approximation) and the
//! maximum of their `max_us` (exact); it has no histogram.

use std::collections::BTreeMap;

use super::MergeError;
use crate::measure::SpanStats;
use crate::result::{TimeSample, decode_histogram, encode_histogram};

/// One result's series in a merge.
pub(super) struct Part<'a> {
    /// The result's position among those given, 0-based.
    pub(super) index: usize,
    /// The merged second of the result's second 0.
    pub(super) offset_s: u32,
    /// Its samples.
    pub(super) samples: &'a [TimeSample],
}

/// Merges the series of `parts`, those of the run (`name` `total`) or of one target (`name`),
/// second by second (see the module documentation). Errors: a histogram does not decode.
pub(super) fn merge_series(parts: &[Part<'_>], name: &str) -> Result<Vec<TimeSample>, MergeError> {
    let mut by_second: BTreeMap<u32, Vec<(usize, &TimeSample)>> = BTreeMap::new();
    for part in parts {
        for s in part.samples {
            by_second
                .entry(s.second.saturating_add(part.offset_s))
                .or_default()
                .push((part.index, s));
        }
    }
    by_second
        .into_iter()
        .map(|(second, samples)| {
            let exact = samples
                .iter()
                .all(|(_, s)| s.responses == 0 || s.histogram.is_some());
            if exact {
                added(second, &samples, name)
            } else {
                Ok(weighted(second, &samples))
            }
        })
        .collect()
}

/// Counts summed: responses, errors, requests (absent when a sample lacks them).
fn counts(second: u32, samples: &[(usize, &TimeSample)]) -> TimeSample {
    TimeSample {
        second,
        responses: samples.iter().map(|(_, s)| s.responses).sum(),
        errors: samples.iter().map(|(_, s)| s.errors).sum(),
        requests: samples.iter().map(|(_, s)| s.requests).sum(),
        p50_us: 0,
        p99_us: 0,
        max_us: 0,
        p90_us: None,
        p95_us: None,
        p99_9_us: None,
        mean_us: None,
        histogram: None,
    }
}

/// Merged second `second` from the sum of its samples' histograms.
fn added(
    second: u32,
    samples: &[(usize, &TimeSample)],
    name: &str,
) -> Result<TimeSample, MergeError> {
    let mut stats = SpanStats::default();
    for (index, s) in samples {
        let Some(text) = &s.histogram else {
            continue;
        };
        let error = |reason: String| MergeError::Histogram {
            index: index + 1,
            target: format!("{name} (time_series second {})", s.second),
            reason,
        };
        let h = decode_histogram(text).map_err(|e| error(e.to_string()))?;
        stats
            .latency_us
            .add(&h)
            .map_err(|e| error(format!("{e:?}")))?;
    }
    let sample = stats.sample(second);
    Ok(TimeSample {
        p50_us: sample.p50_us,
        p99_us: sample.p99_us,
        max_us: sample.max_us,
        p90_us: Some(sample.p90_us),
        p95_us: Some(sample.p95_us),
        p99_9_us: Some(sample.p99_9_us),
        mean_us: Some(sample.mean_us),
        histogram: (!stats.latency_us.is_empty()).then(|| encode_histogram(&stats.latency_us)),
        ..counts(second, samples)
    })
}

/// Merged second `second` as response-weighted means of its samples' latencies (`max_us`
/// their maximum), for samples without histograms.
fn weighted(second: u32, samples: &[(usize, &TimeSample)]) -> TimeSample {
    let merged = counts(second, samples);
    let responses = merged.responses;
    let mean = |get: &dyn Fn(&TimeSample) -> Option<f64>| -> Option<f64> {
        if responses == 0 {
            return Some(0.0);
        }
        let mut sum = 0.0;
        for (_, s) in samples {
            sum += get(s)? * s.responses as f64;
        }
        Some(sum / responses as f64)
    };
    let round = |v: Option<f64>| v.map(|v| v.round() as u64);
    TimeSample {
        p50_us: round(mean(&|s| Some(s.p50_us as f64))).unwrap_or(0),
        p99_us: round(mean(&|s| Some(s.p99_us as f64))).unwrap_or(0),
        max_us: samples.iter().map(|(_, s)| s.max_us).max().unwrap_or(0),
        p90_us: round(mean(&|s| s.p90_us.map(|v| v as f64))),
        p95_us: round(mean(&|s| s.p95_us.map(|v| v as f64))),
        p99_9_us: round(mean(&|s| s.p99_9_us.map(|v| v as f64))),
        mean_us: mean(&|s| s.mean_us),
        ..merged
    }
}
