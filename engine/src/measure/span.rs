//! One span of a run: an epoch (a second, or a fraction of one for `loadgate ab`) of all
//! targets together, recorded by each worker and merged on the calling thread, and the
//! seconds made of them, which form the time series and feed the window watch; and each
//! target's seconds, recorded beside (one more `record` per response), which form the
//! targets' time series.

use super::{Recorder, encode_histogram};

/// One span of a run (an epoch or a second), all targets together or one target's: what
/// completed in it.
#[derive(Debug, Clone)]
pub(crate) struct SpanStats {
    /// Requests that ended: complete responses plus transport errors.
    pub(crate) requests: u64,
    /// Complete responses (any status).
    pub(crate) responses: u64,
    /// Failed requests.
    pub(crate) errors: u64,
    /// Requests (measured, ended in this span) that started more than [`super::LATE_US`]
    /// after they were due (open model and pacing only).
    pub(crate) late: u64,
    /// Latency of the responses, in microseconds (2 significant digits: enough for p50/p99),
    /// made at the span's first response.
    pub(crate) latency_us: Recorder,
}

/// The summary of one span of the measured window (a second, or an epoch), all targets
/// together or one target's; the latencies (microseconds) come from a histogram of 2
/// significant digits and are 0 when the span had no response.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SpanSample {
    /// The span's index since measuring started: it covers `[index × length, (index + 1) ×
    /// length)` for spans of `length` (1 s for seconds).
    pub(crate) index: u32,
    /// Requests that ended in this span: complete responses plus transport errors.
    pub(crate) requests: u64,
    /// Complete responses (any status) that ended in this span.
    pub(crate) responses: u64,
    /// Failed requests that ended in this span.
    pub(crate) errors: u64,
    /// Requests that ended in this span and had started late ([`SpanStats::late`]).
    pub(crate) late: u64,
    pub(crate) p50_us: u64,
    pub(crate) p90_us: u64,
    pub(crate) p95_us: u64,
    pub(crate) p99_us: u64,
    pub(crate) p99_9_us: u64,
    pub(crate) max_us: u64,
    /// Mean latency, microseconds.
    pub(crate) mean_us: f64,
    /// A second's latency histogram (the one the percentiles above come from), encoded as
    /// results carry it ([`encode_histogram`]); `None` for an epoch and for a second without
    /// responses.
    pub(crate) histogram: Option<String>,
    /// A second of the whole run: each target's same second, in the plan's order (the
    /// second's `index` is this sample's, whatever theirs say: `loadgate ab`'s alternating
    /// mode renumbers only the run's); empty for an epoch and for a target's own second.
    pub(crate) targets: Vec<SpanSample>,
}

impl Default for SpanStats {
    fn default() -> Self {
        SpanStats {
            requests: 0,
            responses: 0,
            errors: 0,
            late: 0,
            latency_us: Recorder::coarse(),
        }
    }
}

impl SpanStats {
    /// Records a request that ended in this span: `latency_us` (microseconds) when a response
    /// came, whether it `failed` (a transport error or an unexpected status), whether it
    /// started `late` (more than [`super::LATE_US`] after it was due).
    #[inline]
    pub(crate) fn record(&mut self, latency_us: Option<u64>, failed: bool, late: bool) {
        self.requests += 1;
        self.errors += u64::from(failed);
        self.late += u64::from(late);
        if let Some(latency_us) = latency_us {
            self.responses += 1;
            self.latency_us.record(latency_us.max(1));
        }
    }

    /// The summary of this span, span `index` of the measured window (an epoch's: without
    /// its histogram).
    pub(crate) fn sample(&self, index: u32) -> SpanSample {
        let h = &self.latency_us;
        let at = |q| {
            if h.is_empty() {
                0
            } else {
                h.value_at_quantile(q)
            }
        };
        SpanSample {
            index,
            requests: self.requests,
            responses: self.responses,
            errors: self.errors,
            late: self.late,
            p50_us: at(0.5),
            p90_us: at(0.90),
            p95_us: at(0.95),
            p99_us: at(0.99),
            p99_9_us: at(0.999),
            max_us: h.max(),
            mean_us: if h.is_empty() { 0.0 } else { h.mean() },
            histogram: None,
            targets: Vec::new(),
        }
    }

    /// The summary of this span as second `index` of the measured window, with its histogram
    /// encoded (absent without responses) and `targets`, the targets' same second (empty
    /// for a target's own second).
    pub(crate) fn second(&self, index: u32, targets: Vec<SpanSample>) -> SpanSample {
        SpanSample {
            histogram: (!self.latency_us.is_empty()).then(|| encode_histogram(&self.latency_us)),
            targets,
            ..self.sample(index)
        }
    }

    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &SpanStats) {
        self.requests += other.requests;
        self.responses += other.responses;
        self.errors += other.errors;
        self.late += other.late;
        self.latency_us.merge(&other.latency_us);
    }
}

/// Adds per-target spans `from` into `into`, target by target (`into` empty: takes `from`
/// as it is).
pub(crate) fn merge_targets(into: &mut Vec<SpanStats>, from: Vec<SpanStats>) {
    if into.is_empty() {
        *into = from;
        return;
    }
    for (sum, s) in into.iter_mut().zip(&from) {
        sum.merge(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::decode_histogram;

    #[test]
    fn a_second_carries_the_histogram_its_percentiles_come_from() {
        let mut s = SpanStats::default();
        for latency_us in (1..=200).map(|i| i * 37) {
            s.record(Some(latency_us), latency_us > 7_000, false);
        }
        s.record(None, true, true);
        let epoch = s.sample(3);
        assert_eq!((epoch.requests, epoch.responses), (201, 200));
        assert_eq!((epoch.errors, epoch.late), (12, 1));
        assert_eq!((epoch.histogram, epoch.targets), (None, Vec::new()));
        let target = s.sample(3);
        let second = s.second(3, vec![target.clone()]);
        assert_eq!(second.targets, vec![target]);
        let h = decode_histogram(second.histogram.as_deref().expect("a histogram")).unwrap();
        assert_eq!(h.len(), second.responses);
        let at = |q| h.value_at_quantile(q);
        assert_eq!(
            [second.p50_us, second.p90_us, second.p95_us, second.p99_us],
            [at(0.5), at(0.9), at(0.95), at(0.99)]
        );
        assert_eq!((second.p99_9_us, second.max_us), (at(0.999), h.max()));
        assert!((second.mean_us - h.mean()).abs() < 1e-9);
        // 2 significant digits: 7,400 µs is kept within 1%.
        assert!(second.max_us.abs_diff(7_400) <= 74, "{}", second.max_us);
        // A second without responses has no histogram.
        let mut errors_only = SpanStats::default();
        errors_only.record(None, true, false);
        let second = errors_only.second(0, Vec::new());
        assert_eq!(
            (second.requests, second.errors, second.histogram),
            (1, 1, None)
        );
    }

    #[test]
    fn per_target_spans_merge_target_by_target() {
        let span = |latency_us: u64| {
            let mut s = SpanStats::default();
            s.record(Some(latency_us), false, false);
            s
        };
        let mut sum = Vec::new();
        merge_targets(&mut sum, vec![span(100), span(200)]);
        merge_targets(&mut sum, vec![span(300), span(400)]);
        assert_eq!(sum.len(), 2);
        assert_eq!((sum[0].responses, sum[1].responses), (2, 2));
        assert!(sum[0].latency_us.equivalent(sum[0].latency_us.max(), 300));
        assert!(sum[1].latency_us.equivalent(sum[1].latency_us.max(), 400));
        assert_eq!(sum[1].latency_us.min(), 200);
    }
}
