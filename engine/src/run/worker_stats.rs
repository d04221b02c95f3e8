//! A worker's own records: its counters per target, stage and flow, what completed in the
//! current epoch and second, and its responses' times on their way to the calling thread in
//! batches (the targets' histograms are the calling thread's: `collect.rs`). Its connection
//! tasks share them (one thread, no lock); the work before the clock (`pre.rs`) records its
//! warmup into a scratch copy that is dropped.

use std::sync::mpsc;
use std::time::Instant;

use super::collect::Report;
use super::shared::Shared;
use crate::measure::{FlowStats, ResponseTimes, SpanStats, StageStats, TargetStats};
use crate::udp::UdpBuffers;

/// Responses' times a worker holds before it hands them over as one [`Report::Times`]
/// (about 100 bytes each: 100 KB per worker).
const TIMES_BATCH: usize = 1_024;

/// A worker's own records, shared by its connection tasks (one thread, no lock).
pub(super) struct WorkerStats {
    /// Per target: its counters (statuses, errors, bytes, checks...); the histograms of its
    /// responses' times are recorded by the calling thread from [`WorkerStats::record_times`].
    pub(super) targets: Vec<TargetStats>,
    pub(super) stages: Vec<StageStats>,
    /// Per flow: its measured iterations.
    pub(super) flows: Vec<FlowStats>,
    /// What completed in the current epoch (`Shared::epoch` long, from the start of measuring).
    pub(super) epoch: SpanStats,
    /// Index of the epoch `epoch` belongs to.
    pub(super) epoch_index: u32,
    /// Per target, in the plan's order: what completed in the current second (from the start
    /// of measuring), handed over with the second's last epoch.
    pub(super) second: Vec<SpanStats>,
    pub(super) last_end: Option<Instant>,
    /// The UDP buffers of the worker's QUIC endpoints (HTTP/3); `None` when it opened none.
    pub(super) udp_buffers: Option<UdpBuffers>,
    /// Responses' times not handed over yet, and where they go (`None` once the worker ended).
    times: (Vec<ResponseTimes>, Option<mpsc::Sender<Report>>),
}

impl WorkerStats {
    /// Empty records for the targets and stages of `shared`, handing responses' times over to
    /// `tx` (`None`: the warmup's records, dropped).
    pub(super) fn new(shared: &Shared, tx: Option<mpsc::Sender<Report>>) -> WorkerStats {
        WorkerStats {
            targets: shared
                .targets
                .iter()
                .map(|_| TargetStats::default())
                .collect(),
            stages: shared
                .load
                .stages
                .iter()
                .map(|_| StageStats::default())
                .collect(),
            flows: shared
                .flows
                .plans
                .iter()
                .map(|_| FlowStats::default())
                .collect(),
            epoch: SpanStats::default(),
            epoch_index: 0,
            second: per_target(shared),
            last_end: None,
            udp_buffers: None,
            times: (Vec::new(), tx),
        }
    }

    /// Records a complete response's times: handed over to the calling thread with the next
    /// batch.
    #[inline]
    pub(super) fn record_times(&mut self, times: ResponseTimes) {
        if self.times.1.is_none() {
            return;
        }
        self.times.0.push(times);
        if self.times.0.len() >= TIMES_BATCH {
            self.hand_over_times();
        }
    }

    /// Hands the times held over to the calling thread.
    fn hand_over_times(&mut self) {
        if let Some(tx) = &self.times.1 {
            let batch = std::mem::replace(&mut self.times.0, Vec::with_capacity(TIMES_BATCH));
            // The calling thread gone: the run is over, the times have nowhere to go.
            let _ = tx.send(Report::Times(batch));
        }
    }

    /// Hands the last times over and lets go of the channel: the calling thread collects
    /// until every worker's sender is gone, and these records outlive the worker.
    pub(super) fn finish_times(&mut self) {
        let (batch, tx) = std::mem::take(&mut self.times);
        if let Some(tx) = tx.filter(|_| !batch.is_empty()) {
            let _ = tx.send(Report::Times(batch));
        }
    }
}

/// An empty span per target of `shared`.
pub(super) fn per_target(shared: &Shared) -> Vec<SpanStats> {
    shared
        .targets
        .iter()
        .map(|_| SpanStats::default())
        .collect()
}
