//! One worker thread: a current-thread tokio runtime running its virtual users, recording
//! into its own stats, and handing each second over to the calling thread.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tokio::time::timeout_at;

use super::collect::Report;
use super::shared::Shared;
use super::vu;
use crate::measure::{SecondStats, StageStats, TargetStats};

/// A worker's own records, shared by its connection tasks (one thread, no lock).
pub(super) struct WorkerStats {
    pub(super) targets: Vec<TargetStats>,
    pub(super) stages: Vec<StageStats>,
    pub(super) second: SecondStats,
    /// Index of the second `second` belongs to.
    pub(super) second_index: u32,
    pub(super) last_end: Option<Instant>,
}

pub(super) fn worker(
    index: usize,
    workers: usize,
    shared: Arc<Shared>,
    tx: mpsc::Sender<Report>,
) -> WorkerStats {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds");
    let stats = Rc::new(RefCell::new(WorkerStats {
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
        second: SecondStats::default(),
        second_index: 0,
        last_end: None,
    }));
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        let ticker = tokio::task::spawn_local(ticker(shared.clone(), stats.clone(), tx.clone()));
        let tasks = vu::spawn(index, workers, &shared, &stats);
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
    });
    drop(local);
    let mut stats = Rc::try_unwrap(stats)
        .ok()
        .expect("all tasks have ended")
        .into_inner();
    let last = std::mem::take(&mut stats.second);
    let _ = tx.send(Report::Second {
        second: stats.second_index,
        stats: last,
    });
    let _ = tx.send(Report::Done {
        last: stats.second_index,
    });
    stats
}

/// Hands the worker's per-second stats over once a second, from the start of measuring.
async fn ticker(shared: Arc<Shared>, stats: Rc<RefCell<WorkerStats>>, tx: mpsc::Sender<Report>) {
    let mut second = 0u32;
    loop {
        let boundary = shared.measure_start + Duration::from_secs(u64::from(second) + 1);
        tokio::time::sleep_until(boundary.into()).await;
        let report = {
            let mut s = stats.borrow_mut();
            s.second_index = second + 1;
            Report::Second {
                second,
                stats: std::mem::take(&mut s.second),
            }
        };
        if tx.send(report).is_err() {
            return;
        }
        second += 1;
    }
}
