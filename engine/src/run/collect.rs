//! The calling thread's side of the run: the workers' per-second reports merged into the
//! time series, and the window watch fed with each whole second.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::measure::{SecondSample, SecondStats, Watch, WindowVerdict};
use crate::plan::threshold::Threshold;

/// One worker's per-second hand-over.
pub(super) enum Report {
    /// What completed in one second.
    Second { second: u32, stats: SecondStats },
    /// The worker has ended; its last report was for second `last`.
    Done { last: u32 },
}

/// Merges the workers' per-second reports on the calling thread. A second is final once every
/// worker still running has handed it over; finished workers count as having reported.
pub(super) struct Collector {
    workers: usize,
    measure_start: Instant,
    open: BTreeMap<u32, (usize, SecondStats)>,
    /// Last seconds of the workers that have ended.
    finished: Vec<u32>,
    time_series: Vec<SecondSample>,
    /// Measured responses and errors in final seconds.
    pub(super) totals: (u64, u64),
    watch: Watch,
    aborted_by: Option<usize>,
}

/// What the collector gathered over the run.
pub(super) struct Collected {
    /// One sample per second of measuring, in order.
    pub(super) time_series: Vec<SecondSample>,
    /// Index (in the plan's `slo`) of the `abort_on_fail` threshold that stopped the run.
    pub(super) aborted_by: Option<usize>,
    /// Window thresholds' verdicts, indexed like the plan's `slo`.
    pub(super) windows: Vec<Option<WindowVerdict>>,
}

impl Collector {
    /// A collector for `workers` workers whose measuring starts at `measure_start`, watching
    /// `thresholds` (the plan's `slo`).
    pub(super) fn new(workers: usize, measure_start: Instant, thresholds: &[Threshold]) -> Self {
        Collector {
            workers,
            measure_start,
            open: BTreeMap::new(),
            finished: Vec::new(),
            time_series: Vec::new(),
            totals: (0, 0),
            watch: Watch::new(thresholds),
            aborted_by: None,
        }
    }

    /// Responses in the last final second (0 before the first).
    pub(super) fn last_second_responses(&self) -> u64 {
        self.time_series.last().map_or(0, |s| s.responses)
    }

    /// Takes a report; returns true when an `abort_on_fail` threshold has just failed.
    pub(super) fn take(&mut self, report: Report) -> bool {
        match report {
            Report::Second { second, stats } => {
                let entry = self.open.entry(second).or_default();
                entry.0 += 1;
                entry.1.merge(&stats);
            }
            Report::Done { last } => self.finished.push(last),
        }
        let mut abort = false;
        while let Some((&second, entry)) = self.open.first_key_value() {
            let ended = self.finished.iter().filter(|&&last| last < second).count();
            if entry.0 + ended < self.workers {
                break;
            }
            let (_, stats) = self.open.remove(&second).expect("present");
            abort |= self.finalize(second, stats);
        }
        abort
    }

    fn finalize(&mut self, second: u32, stats: SecondStats) -> bool {
        self.totals.0 += stats.responses;
        self.totals.1 += stats.errors;
        self.time_series.push(stats.sample(second));
        let whole =
            self.measure_start + Duration::from_secs(u64::from(second) + 1) <= Instant::now();
        if whole && !self.watch.is_idle() && self.aborted_by.is_none() {
            self.aborted_by = self.watch.second(&stats);
            return self.aborted_by.is_some();
        }
        false
    }

    /// Ends the collection once every worker has ended: seconds still open (a worker ended
    /// without reporting them all) join the series as they are.
    pub(super) fn finish(self) -> Collected {
        let mut time_series = self.time_series;
        for (second, (_, stats)) in self.open {
            time_series.push(stats.sample(second));
        }
        time_series.sort_by_key(|s| s.second);
        Collected {
            time_series,
            aborted_by: self.aborted_by,
            windows: self.watch.finish(),
        }
    }
}
