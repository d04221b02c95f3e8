//! The calling thread's side of the run: the workers' per-epoch reports merged into the epoch
//! series, the epochs of each second into the time series, and the window watch fed with each
//! whole second.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::Progress;
use crate::measure::{SpanSample, SpanStats, Watch, WindowVerdict};
use crate::plan::threshold::Threshold;

/// One worker's per-epoch hand-over.
pub(super) enum Report {
    /// What completed in epoch `index`.
    Epoch { index: u32, stats: SpanStats },
    /// The worker has ended; its last report was for epoch `last`.
    Done { last: u32 },
}

/// Merges the workers' per-epoch reports on the calling thread. An epoch is final once every
/// worker still running has handed it over (finished workers count as having reported); a
/// second is final with its last epoch.
pub(super) struct Collector {
    workers: usize,
    measure_start: Instant,
    /// Epochs per second (1 when epochs are seconds).
    epochs_per_second: u32,
    open: BTreeMap<u32, (usize, SpanStats)>,
    /// Last epochs of the workers that have ended.
    finished: Vec<u32>,
    epochs: Vec<SpanSample>,
    /// The second being filled with its epochs' stats, and its index.
    second: Option<(u32, SpanStats)>,
    time_series: Vec<SpanSample>,
    /// Measured responses and errors in final seconds.
    totals: (u64, u64),
    watch: Watch,
    aborted_by: Option<usize>,
}

/// What the collector gathered over the run.
pub(super) struct Collected {
    /// One sample per epoch of measuring, in order.
    pub(super) epochs: Vec<SpanSample>,
    /// One sample per second of measuring, in order.
    pub(super) time_series: Vec<SpanSample>,
    /// Index (in the plan's `slo`) of the `abort_on_fail` threshold that stopped the run.
    pub(super) aborted_by: Option<usize>,
    /// Window thresholds' verdicts, indexed like the plan's `slo`.
    pub(super) windows: Vec<Option<WindowVerdict>>,
}

impl Collector {
    /// A collector for `workers` workers whose measuring starts at `measure_start`, handing
    /// over epochs of `epoch` (a second, or a whole fraction of one), watching `thresholds`
    /// (the plan's `slo`).
    pub(super) fn new(
        workers: usize,
        measure_start: Instant,
        epoch: Duration,
        thresholds: &[Threshold],
    ) -> Self {
        let per_second = Duration::from_secs(1).as_nanos() / epoch.as_nanos().max(1);
        Collector {
            workers,
            measure_start,
            epochs_per_second: u32::try_from(per_second).unwrap_or(u32::MAX).max(1),
            open: BTreeMap::new(),
            finished: Vec::new(),
            epochs: Vec::new(),
            second: None,
            time_series: Vec::new(),
            totals: (0, 0),
            watch: Watch::new(thresholds),
            aborted_by: None,
        }
    }

    /// The progress at `now`: measured responses and errors in final seconds, and the last
    /// final second's responses, errors, p50 and p99 (zeros before the first).
    pub(super) fn progress(&self, now: Instant) -> Progress {
        let last = self.time_series.last();
        Progress {
            warming_up: now < self.measure_start,
            elapsed: now.saturating_duration_since(self.measure_start),
            responses: self.totals.0,
            errors: self.totals.1,
            last_second_rps: last.map_or(0, |s| s.responses),
            last_second_errors: last.map_or(0, |s| s.errors),
            last_second_p50_us: last.map_or(0, |s| s.p50_us),
            last_second_p99_us: last.map_or(0, |s| s.p99_us),
        }
    }

    /// Takes a report; returns true when an `abort_on_fail` threshold has just failed.
    pub(super) fn take(&mut self, report: Report) -> bool {
        match report {
            Report::Epoch { index, stats } => {
                let entry = self.open.entry(index).or_default();
                entry.0 += 1;
                entry.1.merge(&stats);
            }
            Report::Done { last } => self.finished.push(last),
        }
        let mut abort = false;
        while let Some((&index, entry)) = self.open.first_key_value() {
            let ended = self.finished.iter().filter(|&&last| last < index).count();
            if entry.0 + ended < self.workers {
                break;
            }
            let (_, stats) = self.open.remove(&index).expect("present");
            self.add_epoch(index, &stats);
            if (index + 1) % self.epochs_per_second == 0 {
                abort |= self.finalize_second();
            }
        }
        abort
    }

    /// Adds epoch `index` to the epoch series and to its second.
    fn add_epoch(&mut self, index: u32, stats: &SpanStats) {
        self.epochs.push(stats.sample(index));
        let second = index / self.epochs_per_second;
        if self.second.as_ref().is_some_and(|(s, _)| *s != second) {
            // The second before ended without its last epoch (only at the end of a run).
            self.push_second();
        }
        let (_, sum) = self
            .second
            .get_or_insert_with(|| (second, SpanStats::default()));
        sum.merge(stats);
    }

    /// Puts the second being filled (if any) into the time series: its index and stats.
    fn push_second(&mut self) -> Option<(u32, SpanStats)> {
        let (index, stats) = self.second.take()?;
        self.time_series.push(stats.sample(index));
        Some((index, stats))
    }

    /// The second being filled is whole: into the time series, the totals and the watch.
    fn finalize_second(&mut self) -> bool {
        let Some((second, stats)) = self.push_second() else {
            return false;
        };
        self.totals.0 += stats.responses;
        self.totals.1 += stats.errors;
        let whole =
            self.measure_start + Duration::from_secs(u64::from(second) + 1) <= Instant::now();
        if whole && !self.watch.is_idle() && self.aborted_by.is_none() {
            self.aborted_by = self.watch.second(&stats);
            return self.aborted_by.is_some();
        }
        false
    }

    /// Ends the collection once every worker has ended: epochs still open (a worker ended
    /// without reporting them all) join the series as they are, and so does a second whose
    /// last epoch never came.
    pub(super) fn finish(mut self) -> Collected {
        for (index, (_, stats)) in std::mem::take(&mut self.open) {
            self.add_epoch(index, &stats);
        }
        self.push_second();
        Collected {
            epochs: self.epochs,
            time_series: self.time_series,
            aborted_by: self.aborted_by,
            windows: self.watch.finish(),
        }
    }
}
