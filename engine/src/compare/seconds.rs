//! A scope's complete seconds in two runs, decoded once, in the form the block bootstrap of
//! `two_run.rs` merges them in: each second's latency histogram as sparse counts over the
//! buckets that either run recorded in that scope, and its responses, errors and requests.
//!
//! Merging a resample's seconds is adding their sparse counts into one dense array of those
//! buckets; its percentile is read as HdrHistogram's `value_at_quantile` reads it (the
//! highest value equivalent to the bucket where the cumulative count first reaches
//! `max(1, ⌈q·N⌉)`) and its mean as `mean` does (each bucket at its median equivalent value),
//! so a merge of all the seconds gives exactly what merging the histograms with `add` would.

use std::collections::BTreeMap;

use crate::plan::threshold::{Aggregation, Metric};
use crate::result::{RunResult, TimeSample, decode_histogram};

/// The complete seconds of a run's series: the last second, cut short when the run ended
/// (requests in flight draining), is left out.
pub(super) fn complete_seconds(result: &RunResult) -> impl Iterator<Item = &TimeSample> {
    result
        .time_series
        .iter()
        .filter(|s| f64::from(s.second) + 1.0 <= result.duration_s + 1e-9)
}

/// One run's seconds of one scope, aligned with the run's complete seconds (index `i` is the
/// run's `i`-th complete second, whether or not the scope had traffic in it).
#[derive(Debug, Default)]
pub(super) struct RunSeconds {
    /// Per second: `(bucket, count)` of its latency histogram, buckets indexing
    /// [`ScopeSeconds::highest`].
    counts: Vec<Vec<(u32, u64)>>,
    /// Complete responses per second.
    responses: Vec<f64>,
    /// Failed requests per second.
    errors: Vec<f64>,
    /// Requests that ended per second.
    requests: Vec<f64>,
}

/// A scope's seconds in both runs, over one table of latency buckets.
#[derive(Debug)]
pub(super) struct ScopeSeconds {
    /// `[baseline, current]`.
    pub(super) runs: [RunSeconds; 2],
    /// Each bucket's highest equivalent value, µs, ascending (what a percentile reads).
    highest: Vec<u64>,
    /// Each bucket's median equivalent value, µs (what the mean reads).
    median: Vec<f64>,
    /// Every second with responses carries its histogram (results from version 4 on).
    pub(super) histograms: bool,
}

/// A merge of resampled seconds of one scope in one run.
#[derive(Debug, Default)]
pub(super) struct Merged {
    counts: Vec<u64>,
    total: u64,
    seconds: usize,
    responses: f64,
    errors: f64,
    requests: f64,
}

impl ScopeSeconds {
    /// The scope's seconds from each run's series `[baseline, current]` (a target's own
    /// `time_series`, or the run's for `total`), aligned with the runs' complete `seconds`.
    /// Errors: a histogram that does not decode.
    pub(super) fn new(
        series: [&[TimeSample]; 2],
        seconds: [&[u32]; 2],
    ) -> Result<ScopeSeconds, String> {
        let mut decoded = [Vec::new(), Vec::new()];
        let mut buckets: BTreeMap<u64, f64> = BTreeMap::new();
        let mut histograms = true;
        for side in 0..2 {
            let by_second: BTreeMap<u32, &TimeSample> =
                series[side].iter().map(|s| (s.second, s)).collect();
            for second in seconds[side] {
                let sample = by_second.get(second).copied();
                let mut values = Vec::new();
                if let Some(s) = sample.filter(|s| s.responses > 0) {
                    match &s.histogram {
                        Some(text) => {
                            let h = decode_histogram(text)
                                .map_err(|e| format!("a per-second histogram: {e:#}"))?;
                            for v in h.iter_recorded() {
                                let value = v.value_iterated_to();
                                let highest = h.highest_equivalent(value);
                                buckets.insert(highest, h.median_equivalent(value) as f64);
                                values.push((highest, v.count_at_value()));
                            }
                        }
                        None => histograms = false,
                    }
                }
                decoded[side].push((sample, values));
            }
        }
        let highest: Vec<u64> = buckets.keys().copied().collect();
        let median = buckets.values().copied().collect();
        let index = |v: u64| highest.binary_search(&v).expect("a recorded bucket") as u32;
        let runs = decoded.map(|seconds| {
            let mut run = RunSeconds::default();
            for (sample, values) in seconds {
                run.counts
                    .push(values.into_iter().map(|(v, n)| (index(v), n)).collect());
                let (responses, errors, requests) = sample.map_or((0.0, 0.0, 0.0), counts);
                run.responses.push(responses);
                run.errors.push(errors);
                run.requests.push(requests);
            }
            run
        });
        Ok(ScopeSeconds {
            runs,
            highest,
            median,
            histograms,
        })
    }

    /// Merges the seconds `indices` (with repeats) of run `side` into `out`.
    pub(super) fn merge(&self, side: usize, indices: &[usize], out: &mut Merged) {
        let run = &self.runs[side];
        let mut counts = std::mem::take(&mut out.counts);
        counts.clear();
        counts.resize(self.highest.len(), 0);
        *out = Merged {
            counts,
            seconds: indices.len(),
            ..Merged::default()
        };
        for &i in indices {
            for &(bucket, n) in &run.counts[i] {
                out.counts[bucket as usize] += n;
                out.total += n;
            }
            out.responses += run.responses[i];
            out.errors += run.errors[i];
            out.requests += run.requests[i];
        }
    }

    /// The statistic a rule of `metric` and `aggregation` reads from a merge, in its unit: a
    /// latency percentile or mean (µs; none without responses), the responses per second, or
    /// the error rate (none without requests).
    pub(super) fn statistic(
        &self,
        merged: &Merged,
        metric: Metric,
        aggregation: Aggregation,
    ) -> Option<f64> {
        match metric {
            Metric::Latency if merged.total == 0 => None,
            Metric::Latency => match aggregation {
                Aggregation::Mean => Some(
                    merged
                        .counts
                        .iter()
                        .zip(&self.median)
                        .map(|(n, m)| *n as f64 * m)
                        .sum::<f64>()
                        / merged.total as f64,
                ),
                Aggregation::Median => Some(self.quantile(merged, 0.5)),
                Aggregation::Percentile(p) => Some(self.quantile(merged, p / 100.0)),
                _ => None,
            },
            Metric::Responses if merged.seconds == 0 => None,
            Metric::Responses => Some(merged.responses / merged.seconds as f64),
            Metric::Errors if merged.requests <= 0.0 => None,
            Metric::Errors => Some(merged.errors / merged.requests),
            Metric::Checks => None,
        }
    }

    /// HdrHistogram's `value_at_quantile` of the merge (`merged.total` > 0, 0 < q ≤ 1).
    fn quantile(&self, merged: &Merged, q: f64) -> f64 {
        let rank = ((q.min(1.0) * merged.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, n) in merged.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return self.highest[i] as f64;
            }
        }
        self.highest.last().copied().unwrap_or(0) as f64
    }
}

/// A second's `(responses, errors, requests)`; requests are responses plus errors in results
/// written before the series recorded them (an approximation: an unexpected status is both).
fn counts(s: &TimeSample) -> (f64, f64, f64) {
    let requests = s.requests.unwrap_or(s.responses + s.errors);
    (s.responses as f64, s.errors as f64, requests as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::encode_histogram;
    use hdrhistogram::Histogram;

    /// A second of a 2-significant-digit histogram of `values`, as results record them.
    fn second(second: u32, values: &[u64]) -> TimeSample {
        let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
        for v in values {
            h.record(*v).unwrap();
        }
        TimeSample {
            second,
            responses: values.len() as u64,
            errors: 1,
            p50_us: 0,
            p99_us: 0,
            max_us: 0,
            p90_us: None,
            p95_us: None,
            p99_9_us: None,
            mean_us: None,
            requests: Some(values.len() as u64 + 1),
            histogram: (!values.is_empty()).then(|| encode_histogram(&h)),
        }
    }

    #[test]
    fn a_merge_reads_what_hdrhistograms_add_would() {
        let b = [
            second(0, &[100, 120, 130, 5_000]),
            second(1, &[]),
            second(2, &[90, 95, 101_000, 2_345]),
        ];
        let c = [second(0, &[1, 2, 3]), second(1, &[7_777])];
        let seconds = ScopeSeconds::new([&b, &c], [&[0, 1, 2], &[0, 1]]).unwrap();
        assert!(seconds.histograms);
        let mut merged = Merged::default();
        seconds.merge(0, &[0, 2, 2, 1], &mut merged);
        let mut reference = Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
        for i in [0, 2, 2] {
            let h = decode_histogram(b[i].histogram.as_ref().unwrap()).unwrap();
            reference.add(&h).unwrap();
        }
        for q in [0.01, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0] {
            let got =
                seconds.statistic(&merged, Metric::Latency, Aggregation::Percentile(q * 100.0));
            assert_eq!(got, Some(reference.value_at_quantile(q) as f64), "q {q}");
        }
        let mean = seconds
            .statistic(&merged, Metric::Latency, Aggregation::Mean)
            .unwrap();
        assert!((mean - reference.mean()).abs() < 1e-9 * mean);
        // 4 seconds, 12 responses, 4 errors of 16 requests.
        let rate = seconds.statistic(&merged, Metric::Responses, Aggregation::Rate);
        assert_eq!(rate, Some(3.0));
        let errors = seconds.statistic(&merged, Metric::Errors, Aggregation::Rate);
        assert_eq!(errors, Some(0.25));
        // An empty second only: no latency.
        seconds.merge(1, &[], &mut merged);
        assert_eq!(
            seconds.statistic(&merged, Metric::Latency, Aggregation::Median),
            None
        );
    }
}
