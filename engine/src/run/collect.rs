//! The calling thread's side of the run: the workers' per-epoch reports merged into the epoch
//! series, the epochs of each second (and the targets' seconds) into the time series, the
//! window watch fed with each whole second, and the responses' times that the workers hand
//! over in batches recorded into each target's histograms (latency, service time, phases).
//!
//! A target's histograms are kept here once for the run, not once per worker thread: what a
//! target costs does not grow with the threads (docs/spec.md, "What a target costs"). Each
//! worker still counts its own statuses, errors and bytes, merged once at the end.
//!
//! Memory stays bounded over a long run: a second's histograms (one for the run, one per
//! target that had a response in it, 2 significant digits, 2 to 11 KB each in memory as
//! `measure::Recorder`s) are encoded as soon as the second is final, and only the encoded text
//! is kept (a few hundred bytes each).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::{Progress, clock};
use crate::measure::{
    ResponseTimes, SpanSample, SpanStats, TargetStats, Watch, WindowVerdict, merge_targets,
};
use crate::plan::threshold::Threshold;

/// One worker's per-epoch hand-over.
pub(super) enum Report {
    /// What completed in epoch `index`, all targets together (`stats`); with the last epoch
    /// of a second (and a worker's last report), what completed per target in that second
    /// (`targets`, in the plan's order; else empty).
    Epoch {
        index: u32,
        stats: SpanStats,
        targets: Vec<SpanStats>,
    },
    /// A batch of complete responses' times, for the targets' histograms.
    Times(Vec<ResponseTimes>),
    /// The worker has ended; its last report was for epoch `last`.
    Done { last: u32 },
}

/// Epochs per second, for epochs of `epoch` (a second, or a whole fraction of one): 1 when
/// epochs are seconds.
pub(super) fn epochs_per_second(epoch: Duration) -> u32 {
    let per_second = Duration::from_secs(1).as_nanos() / epoch.as_nanos().max(1);
    u32::try_from(per_second).unwrap_or(u32::MAX).max(1)
}

/// What the workers handed over for one span (an epoch, or a second), merged: all targets
/// together, and per target (empty until a worker hands its targets' over).
#[derive(Default)]
struct Span {
    total: SpanStats,
    targets: Vec<SpanStats>,
}

impl Span {
    /// Adds a hand-over: all targets' `total` and the per-target `targets`.
    fn add(&mut self, total: &SpanStats, targets: Vec<SpanStats>) {
        self.total.merge(total);
        merge_targets(&mut self.targets, targets);
    }
}

/// Merges the workers' per-epoch reports on the calling thread. An epoch is final once every
/// worker still running has handed it over (finished workers count as having reported); a
/// second is final with its last epoch.
pub(super) struct Collector {
    workers: usize,
    /// Targets of the plan: each second has a sample per target.
    targets: usize,
    measure_start: Instant,
    /// Epochs per second (1 when epochs are seconds).
    epochs_per_second: u32,
    /// Epochs not yet final: how many workers reported each, and what they handed over.
    open: BTreeMap<u32, (usize, Span)>,
    /// Last epochs of the workers that have ended.
    finished: Vec<u32>,
    epochs: Vec<SpanSample>,
    /// The second being filled with its epochs' stats, and its index.
    second: Option<(u32, Span)>,
    time_series: Vec<SpanSample>,
    /// Measured responses and errors in final seconds.
    totals: (u64, u64),
    watch: Watch,
    aborted_by: Option<usize>,
    /// Per target, in the plan's order: the histograms of its responses' times (its counters
    /// are the workers').
    recorded: Vec<TargetStats>,
}

/// What the collector gathered over the run.
pub(super) struct Collected {
    /// One sample per epoch of measuring, in order.
    pub(super) epochs: Vec<SpanSample>,
    /// One sample per second of measuring, in order, each with its histogram and its
    /// targets' seconds.
    pub(super) time_series: Vec<SpanSample>,
    /// Index (in the plan's `slo`) of the `abort_on_fail` threshold that stopped the run.
    pub(super) aborted_by: Option<usize>,
    /// Window thresholds' verdicts, indexed like the plan's `slo`.
    pub(super) windows: Vec<Option<WindowVerdict>>,
    /// Per target, in the plan's order: the histograms of its responses' times (latency,
    /// service time, phases) and its connections' setup counts; the other counters are zero.
    pub(super) targets: Vec<TargetStats>,
}

impl Collector {
    /// A collector for `workers` workers (recording `targets` targets) whose measuring starts
    /// at `measure_start`, handing over epochs of `epoch` (a second, or a whole fraction of
    /// one), watching `thresholds` (the plan's `slo`).
    pub(super) fn new(
        (workers, targets): (usize, usize),
        measure_start: Instant,
        epoch: Duration,
        thresholds: &[Threshold],
    ) -> Self {
        Collector {
            workers,
            targets,
            measure_start,
            epochs_per_second: epochs_per_second(epoch),
            open: BTreeMap::new(),
            finished: Vec::new(),
            epochs: Vec::new(),
            second: None,
            time_series: Vec::new(),
            totals: (0, 0),
            watch: Watch::new(thresholds),
            aborted_by: None,
            recorded: (0..targets).map(|_| TargetStats::default()).collect(),
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
            Report::Epoch {
                index,
                stats,
                targets,
            } => {
                let entry = self.open.entry(index).or_default();
                entry.0 += 1;
                entry.1.add(&stats, targets);
            }
            Report::Times(times) => {
                for t in &times {
                    if let Some(stats) = self.recorded.get_mut(t.target) {
                        stats.record_times(t);
                    }
                }
                return false;
            }
            Report::Done { last } => self.finished.push(last),
        }
        let mut abort = false;
        while let Some((&index, entry)) = self.open.first_key_value() {
            let ended = self.finished.iter().filter(|&&last| last < index).count();
            if entry.0 + ended < self.workers {
                break;
            }
            let (_, span) = self.open.remove(&index).expect("present");
            self.add_epoch(index, span);
            if (index + 1) % self.epochs_per_second == 0 {
                abort |= self.finalize_second();
            }
        }
        abort
    }

    /// Adds epoch `index` to the epoch series and to its second.
    fn add_epoch(&mut self, index: u32, span: Span) {
        self.epochs.push(span.total.sample(index));
        let second = index / self.epochs_per_second;
        if self.second.as_ref().is_some_and(|(s, _)| *s != second) {
            // The second before ended without its last epoch (only at the end of a run).
            self.push_second();
        }
        let (_, sum) = self.second.get_or_insert_with(|| (second, Span::default()));
        sum.add(&span.total, span.targets);
    }

    /// Puts the second being filled (if any) into the time series, its histograms encoded
    /// (the run's and each target's; a target no worker reported has an empty second).
    /// Returns its index and its stats, all targets together.
    fn push_second(&mut self) -> Option<(u32, SpanStats)> {
        let (index, Span { total, targets }) = self.second.take()?;
        let targets = (0..self.targets)
            .map(|t| match targets.get(t) {
                Some(stats) => stats.second(index, Vec::new()),
                None => SpanStats::default().second(index, Vec::new()),
            })
            .collect();
        self.time_series.push(total.second(index, targets));
        Some((index, total))
    }

    /// The second being filled is whole: into the time series, the totals and the watch.
    fn finalize_second(&mut self) -> bool {
        let Some((second, stats)) = self.push_second() else {
            return false;
        };
        self.totals.0 += stats.responses;
        self.totals.1 += stats.errors;
        let whole = self.measure_start + Duration::from_secs(u64::from(second) + 1) <= clock::now();
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
        for (index, (_, span)) in std::mem::take(&mut self.open) {
            self.add_epoch(index, span);
        }
        self.push_second();
        Collected {
            epochs: self.epochs,
            time_series: self.time_series,
            aborted_by: self.aborted_by,
            windows: self.watch.finish(),
            targets: self.recorded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::decode_histogram;

    /// What a worker hands over (as `worker::ticker` does) for `records` of
    /// `(epoch, target, latency_us)` (a latency of 0: a transport error), in epochs of 250 ms
    /// (4 per second), until epoch `last`, its last report.
    fn reports(records: &[(u32, usize, u64)], targets: usize, last: u32) -> Vec<Report> {
        let mut second: Vec<SpanStats> = (0..targets).map(|_| SpanStats::default()).collect();
        let mut out = Vec::new();
        for index in 0..=last {
            let mut stats = SpanStats::default();
            for &(_, t, latency_us) in records.iter().filter(|r| r.0 == index) {
                let latency = (latency_us > 0).then_some(latency_us);
                stats.record(latency, latency.is_none(), false);
                second[t].record(latency, latency.is_none(), false);
            }
            let hand_over = (index + 1) % 4 == 0 || index == last;
            let targets = if hand_over {
                std::mem::replace(
                    &mut second,
                    (0..targets).map(|_| Default::default()).collect(),
                )
            } else {
                Vec::new()
            };
            out.push(Report::Epoch {
                index,
                stats,
                targets,
            });
        }
        out.push(Report::Done { last });
        out
    }

    #[test]
    fn seconds_carry_their_targets_seconds_and_histograms_from_sub_second_epochs() {
        // Worker 0 runs 2 whole seconds (epochs 0..=7); worker 1 ends in epoch 5.
        let a: Vec<_> = (0..8u32)
            .flat_map(|e| (0..10u64).map(move |i| (e, (i % 2) as usize, 1_000 + 97 * i)))
            .collect();
        let b: Vec<_> = (0..6u32)
            .flat_map(|e| [(e, 1, 40_000 + u64::from(e)), (e, 0, 0)])
            .collect();
        let mut collector = Collector::new((2, 3), Instant::now(), Duration::from_millis(250), &[]);
        let (mut ra, mut rb) = (reports(&a, 3, 7).into_iter(), reports(&b, 3, 5).into_iter());
        // Interleaved, as the channel would deliver them.
        loop {
            let (x, y) = (ra.next(), rb.next());
            if x.is_none() && y.is_none() {
                break;
            }
            for report in x.into_iter().chain(y) {
                assert!(!collector.take(report));
            }
        }
        let collected = collector.finish();
        assert_eq!(collected.epochs.len(), 8);
        assert!(collected.epochs.iter().all(|e| e.histogram.is_none()));
        assert_eq!(collected.epochs[5].requests, 12);
        assert_eq!(collected.epochs[6].requests, 10);
        let series = &collected.time_series;
        assert_eq!(series.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1]);
        // Second 0: 4 epochs of worker 0's 10 and worker 1's 2 (one an error); second 1: 4
        // of worker 0's and 2 of worker 1's.
        assert_eq!(
            series
                .iter()
                .map(|s| (s.requests, s.responses, s.errors))
                .collect::<Vec<_>>(),
            [(48, 44, 4), (44, 42, 2)]
        );
        for second in series {
            assert_eq!(second.targets.len(), 3);
            let sum = |f: fn(&SpanSample) -> u64| second.targets.iter().map(f).sum::<u64>();
            assert_eq!(sum(|t| t.requests), second.requests);
            assert_eq!(sum(|t| t.responses), second.responses);
            assert_eq!(sum(|t| t.errors), second.errors);
            // The third target had nothing: an empty second, without a histogram.
            assert_eq!(
                (second.targets[2].requests, &second.targets[2].histogram),
                (0, &None)
            );
            let mut added = crate::measure::SpanStats::default().latency_us;
            for t in &second.targets[..2] {
                let h = decode_histogram(t.histogram.as_deref().unwrap()).unwrap();
                assert_eq!(h.len(), t.responses);
                assert_eq!(h.value_at_quantile(0.99), t.p99_us);
                added.add(&h).unwrap();
            }
            let total = decode_histogram(second.histogram.as_deref().unwrap()).unwrap();
            assert_eq!(total.len(), second.responses);
            assert_eq!(total.value_at_quantile(0.99), second.p99_us);
            let counts = |h: &hdrhistogram::Histogram<u64>| {
                h.iter_recorded()
                    .map(|v| (v.value_iterated_to(), v.count_at_value()))
                    .collect::<Vec<_>>()
            };
            assert_eq!(counts(&total), counts(&added));
        }
        // Worker 1's slow responses are all the second target's.
        assert!(series[1].targets[1].max_us >= 40_000);
        assert!(series[1].targets[0].max_us < 2_000);
    }

    #[test]
    fn responses_times_from_every_worker_go_into_one_record_per_target() {
        use crate::measure::{ResponseTimes, Timing};
        let times = |target, latency_us| ResponseTimes {
            target,
            latency_us,
            service_us: latency_us / 2,
            timing: Timing {
                ttfb_us: latency_us / 3,
                ..Timing::default()
            },
        };
        let mut collector = Collector::new((2, 2), Instant::now(), Duration::from_secs(1), &[]);
        assert!(!collector.take(Report::Times(vec![times(0, 1_000), times(1, 90_000)])));
        assert!(!collector.take(Report::Times(vec![times(1, 7), times(5, 1)])));
        assert!(!collector.take(Report::Done { last: 0 }));
        assert!(!collector.take(Report::Done { last: 0 }));
        let targets = collector.finish().targets;
        assert_eq!(targets.len(), 2, "a target out of the plan is ignored");
        assert_eq!((targets[0].responses(), targets[1].responses()), (1, 2));
        let t1 = &targets[1];
        assert!(t1.latency_us.equivalent(t1.latency_us.max(), 90_000));
        assert_eq!(t1.latency_us.min(), 7);
        assert!(t1.service_us.equivalent(t1.service_us.max(), 45_000));
        assert_eq!(t1.phases.ttfb_us.len(), 2);
        // Counters are the workers': none here.
        assert_eq!(t1.status_counts().len(), 0);
    }
}
