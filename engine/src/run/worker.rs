//! One worker thread: a current-thread tokio runtime running its virtual users, recording
//! into its own stats, and handing each epoch's over to the calling thread (and each
//! second's per target, with the second's last epoch), and its responses' times in batches
//! (the targets' histograms are the calling thread's: `collect.rs`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

use tokio::time::timeout_at;

use super::collect::{Report, epochs_per_second};
use super::pre::Gate;
use super::shared::Shared;
use super::{h3, vu};
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
    fn finish_times(&mut self) {
        let (batch, tx) = std::mem::take(&mut self.times);
        if let Some(tx) = tx.filter(|_| !batch.is_empty()) {
            let _ = tx.send(Report::Times(batch));
        }
    }
}

/// An empty span per target of `shared`.
fn per_target(shared: &Shared) -> Vec<SpanStats> {
    shared
        .targets
        .iter()
        .map(|_| SpanStats::default())
        .collect()
}

/// Runs worker `index` (of `workers`) until its virtual users end; returns its records.
/// With a `gate`, its work before the clock starts comes first (`shared` is then laid out
/// from a provisional start, and the run's comes through the gate). Errors: its runtime
/// could not be built (out of file descriptors, most likely); the run is then halted.
pub(super) fn worker(
    index: usize,
    workers: usize,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Report>,
    gate: Option<Gate>,
) -> std::io::Result<WorkerStats> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            shared.stop.store(true, Ordering::Relaxed);
            if let Some(gate) = &gate {
                gate.ready();
            }
            let _ = tx.send(Report::Done { last: 0 });
            return Err(e);
        }
    };
    let stats = Rc::new(RefCell::new(WorkerStats::new(&shared, Some(tx.clone()))));
    let local = tokio::task::LocalSet::new();
    let endpoints = Rc::new(h3::Endpoints::default());
    local.block_on(&runtime, async {
        let users = vu::users(index, workers, &shared, &endpoints);
        let (shared, users) = match gate {
            Some(gate) => gate.pass(shared, users).await,
            None => (shared, users),
        };
        let ticker = tokio::task::spawn_local(ticker(shared.clone(), stats.clone(), tx.clone()));
        let tasks = vu::spawn(index, workers, &shared, &stats, users);
        let all = async {
            for task in tasks {
                let _ = task.await;
            }
        };
        match shared.hard_deadline {
            Some(deadline) => {
                let _ = timeout_at(deadline.into(), all).await;
            }
            None => all.await,
        }
        ticker.abort();
        endpoints.close().await;
    });
    drop(local);
    let mut stats = Rc::try_unwrap(stats)
        .ok()
        .expect("all tasks have ended")
        .into_inner();
    stats.udp_buffers = endpoints.buffers();
    stats.finish_times();
    let _ = tx.send(Report::Epoch {
        index: stats.epoch_index,
        stats: std::mem::take(&mut stats.epoch),
        targets: std::mem::take(&mut stats.second),
    });
    let _ = tx.send(Report::Done {
        last: stats.epoch_index,
    });
    Ok(stats)
}

/// Hands the worker's stats of each epoch over at its end, from the start of measuring, and
/// its targets' stats of each second with the second's last epoch.
async fn ticker(shared: Arc<Shared>, stats: Rc<RefCell<WorkerStats>>, tx: mpsc::Sender<Report>) {
    let per_second = epochs_per_second(shared.epoch);
    let mut index = 0u32;
    loop {
        let boundary = shared.measure_start + shared.epoch * (index + 1);
        tokio::time::sleep_until(boundary.into()).await;
        let report = {
            let mut s = stats.borrow_mut();
            s.epoch_index = index + 1;
            let second_ends = (index + 1).is_multiple_of(per_second);
            Report::Epoch {
                index,
                stats: std::mem::take(&mut s.epoch),
                targets: if second_ends {
                    std::mem::replace(&mut s.second, per_target(&shared))
                } else {
                    Vec::new()
                },
            }
        };
        if tx.send(report).is_err() {
            return;
        }
        index += 1;
    }
}
