//! What the generator did in each stage of the load: the raw material of its health check.

use hdrhistogram::Histogram;

use super::MAX_LATENCY_US;

/// What the generator did in one stage of the load: the raw material of its health check.
#[derive(Debug, Clone)]
pub(crate) struct StageStats {
    /// Requests started whose due time fell in this stage.
    pub(crate) sent: u64,
    /// Open model: arrivals that found every in-flight slot busy and were not sent.
    pub(crate) dropped: u64,
    /// Sum of the service times of this stage's requests, in microseconds; divided by the
    /// stage's length it gives the mean number of requests in flight.
    pub(crate) busy_us: u64,
    /// How late requests started after they were due, in microseconds (open model and
    /// pacing only; 2 significant digits).
    pub(crate) lateness_us: Histogram<u64>,
}

impl Default for StageStats {
    fn default() -> Self {
        StageStats {
            sent: 0,
            dropped: 0,
            busy_us: 0,
            lateness_us: Histogram::new_with_bounds(1, MAX_LATENCY_US, 2)
                .expect("valid histogram bounds"),
        }
    }
}

impl StageStats {
    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &StageStats) {
        self.sent += other.sent;
        self.dropped += other.dropped;
        self.busy_us += other.busy_us;
        self.lateness_us
            .add(&other.lateness_us)
            .expect("histograms of equal bounds add");
    }
}
