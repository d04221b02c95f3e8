//! One span of a run, all targets together: an epoch (a second, or a fraction of one for
//! `loadgate ab`) recorded by each worker and merged on the calling thread, and the seconds
//! made of them, which form the time series and feed the window watch.

use hdrhistogram::Histogram;

use super::MAX_LATENCY_US;

/// One span of a run (an epoch or a second), all targets together: what completed in it.
#[derive(Debug, Clone)]
pub(crate) struct SpanStats {
    /// Requests that ended: complete responses plus transport errors.
    pub(crate) requests: u64,
    /// Complete responses (any status).
    pub(crate) responses: u64,
    /// Failed requests.
    pub(crate) errors: u64,
    /// Latency of the responses, in microseconds (2 significant digits: enough for p50/p99).
    pub(crate) latency_us: Histogram<u64>,
}

/// The summary of one span of the measured window (a second, or an epoch), all targets
/// together; the latencies (microseconds) come from a histogram of 2 significant digits and
/// are 0 when the span had no response.
#[derive(Debug, Clone, Copy, PartialEq)]
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
    pub(crate) p50_us: u64,
    pub(crate) p90_us: u64,
    pub(crate) p95_us: u64,
    pub(crate) p99_us: u64,
    pub(crate) p99_9_us: u64,
    pub(crate) max_us: u64,
    /// Mean latency, microseconds.
    pub(crate) mean_us: f64,
}

impl Default for SpanStats {
    fn default() -> Self {
        SpanStats {
            requests: 0,
            responses: 0,
            errors: 0,
            latency_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 2)
                .expect("valid histogram bounds"),
        }
    }
}

impl SpanStats {
    /// The summary of this span, span `index` of the measured window.
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
            p50_us: at(0.5),
            p90_us: at(0.90),
            p95_us: at(0.95),
            p99_us: at(0.99),
            p99_9_us: at(0.999),
            max_us: h.max(),
            mean_us: if h.is_empty() { 0.0 } else { h.mean() },
        }
    }

    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &SpanStats) {
        self.requests += other.requests;
        self.responses += other.responses;
        self.errors += other.errors;
        self.latency_us
            .add(&other.latency_us)
            .expect("histograms of equal bounds add");
    }
}
