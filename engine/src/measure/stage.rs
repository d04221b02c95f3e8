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
    /// Of `dropped`, the arrivals dropped while the generator was itself behind its schedule
    /// (by more than `load.health.late_p99`): the generator's drops, not the server's.
    pub(crate) dropped_behind: u64,
    /// Time requests were in flight within this stage, summed over requests, in
    /// microseconds: each request's span from its start to its end, split at the stages'
    /// bounds and cut at the end of the last (duration mode). Divided by the stage's length it
    /// gives the mean number of requests in flight (at most `max_in_flight` in the open
    /// model).
    pub(crate) busy_us: u64,
    /// Requests due in this stage that could not open a connection because loadgate was out
    /// of file descriptors (`fd_limit`).
    pub(crate) fd_limit: u64,
    /// Closed model: time virtual users spent without a connection for want of a file
    /// descriptor (the failed connects and the backoff after each), summed over virtual
    /// users, in microseconds. Divided by the stage's length it gives the mean number of
    /// virtual users that could not run.
    pub(crate) fd_wait_us: u64,
    /// How late requests started after they were due, in microseconds (open model and
    /// pacing only; 2 significant digits).
    pub(crate) lateness_us: Histogram<u64>,
}

impl Default for StageStats {
    fn default() -> Self {
        StageStats {
            sent: 0,
            dropped: 0,
            dropped_behind: 0,
            busy_us: 0,
            fd_limit: 0,
            fd_wait_us: 0,
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
        self.dropped_behind += other.dropped_behind;
        self.busy_us += other.busy_us;
        self.fd_limit += other.fd_limit;
        self.fd_wait_us += other.fd_wait_us;
        self.lateness_us
            .add(&other.lateness_us)
            .expect("histograms of equal bounds add");
    }
}
