//! The records of one flow's iterations (or of all workers', once merged): how long they
//! took, how many ended, and why those that failed did.

use hdrhistogram::Histogram;

use super::{ErrorKind, Measures, latency_histogram};

/// Why an iteration failed: the first failure of its steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum IterationFailure {
    /// A step's request failed: a transport error or an unexpected status (the step's own
    /// record says which kind).
    Request,
    /// A step's check failed. Checks do not fail requests, nor iterations: reserved for
    /// `on_error` rules that treat them so; counted for reports.
    Check,
    /// An extractor found nothing, and had no default.
    Extraction,
    /// A step used a variable that had no value.
    MissingVariable,
}

impl IterationFailure {
    /// Every reason, in order.
    pub(crate) const ALL: [IterationFailure; 4] = [
        IterationFailure::Request,
        IterationFailure::Check,
        IterationFailure::Extraction,
        IterationFailure::MissingVariable,
    ];

    /// The snake_case name used in results and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            IterationFailure::Request => "request",
            IterationFailure::Check => "check",
            IterationFailure::Extraction => "extraction",
            IterationFailure::MissingVariable => "missing_variable",
        }
    }
}

/// A flow's iterations: their durations and outcomes.
#[derive(Debug, Clone)]
pub(crate) struct FlowStats {
    /// Duration of every iteration that ended (passed or failed), in microseconds: from when
    /// it was due (open model: its arrival on the schedule; closed model: its start) to the
    /// end of its last step, think times included (k6's `iteration_duration`).
    pub(crate) duration_us: Histogram<u64>,
    /// Iterations that ended with every step passing.
    pub(crate) passed: u64,
    /// Iterations that failed, by the reason (index = position in [`IterationFailure::ALL`]).
    pub(crate) failed: [u64; IterationFailure::ALL.len()],
    /// Of the iterations failed for [`IterationFailure::Request`]: by the request's error
    /// kind (index = position in [`ErrorKind::ALL`]).
    pub(crate) failed_requests: [u64; ErrorKind::ALL.len()],
}

impl Default for FlowStats {
    fn default() -> Self {
        FlowStats {
            duration_us: latency_histogram(),
            passed: 0,
            failed: [0; IterationFailure::ALL.len()],
            failed_requests: [0; ErrorKind::ALL.len()],
        }
    }
}

impl FlowStats {
    /// Records an iteration that ended after `duration_us` microseconds; `failure`: why it
    /// failed (and the request's error kind, for [`IterationFailure::Request`]), if it did.
    pub(crate) fn record(
        &mut self,
        duration_us: u64,
        failure: Option<(IterationFailure, Option<ErrorKind>)>,
    ) {
        self.duration_us.saturating_record(duration_us.max(1));
        match failure {
            None => self.passed += 1,
            Some((reason, kind)) => {
                self.failed[reason as usize] += 1;
                if let Some(kind) = kind {
                    self.failed_requests[kind as usize] += 1;
                }
            }
        }
    }

    /// Adds `other`'s records (another worker's) to these.
    pub(crate) fn merge(&mut self, other: &FlowStats) {
        self.duration_us
            .add(&other.duration_us)
            .expect("flow histograms share their bounds");
        self.passed += other.passed;
        for (a, b) in self.failed.iter_mut().zip(other.failed) {
            *a += b;
        }
        for (a, b) in self.failed_requests.iter_mut().zip(other.failed_requests) {
            *a += b;
        }
    }

    /// Iterations that failed, for any reason.
    pub(crate) fn failed_count(&self) -> u64 {
        self.failed.iter().sum()
    }

    /// Iterations that ended, passed or failed.
    pub(crate) fn iterations(&self) -> u64 {
        self.passed + self.failed_count()
    }

    /// The measures a flow's thresholds are judged on, over `elapsed_s` seconds: `latency`
    /// is the iteration duration, `requests` the iterations that ended, `errors` the failed
    /// ones.
    pub(crate) fn measures(&self, elapsed_s: f64) -> Measures<'_> {
        Measures {
            latency_us: &self.duration_us,
            requests: self.iterations(),
            responses: self.iterations(),
            errors: self.failed_count(),
            check_pass_rate: None,
            elapsed_s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_merge_and_measure() {
        let mut a = FlowStats::default();
        a.record(2_000, None);
        a.record(
            5_000,
            Some((IterationFailure::Request, Some(ErrorKind::Timeout))),
        );
        let mut b = FlowStats::default();
        b.record(3_000, Some((IterationFailure::Extraction, None)));
        a.merge(&b);
        assert_eq!(a.iterations(), 3);
        assert_eq!(a.failed_count(), 2);
        assert_eq!(a.failed[IterationFailure::Extraction as usize], 1);
        assert_eq!(a.failed_requests[ErrorKind::Timeout as usize], 1);
        let m = a.measures(1.5);
        assert_eq!((m.requests, m.errors), (3, 2));
        assert_eq!(a.duration_us.max(), a.duration_us.highest_equivalent(5_000));
    }
}
