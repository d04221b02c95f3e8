//! One worker thread: a current-thread tokio runtime running its virtual users, recording
//! into its own stats (`worker_stats.rs`), and handing each epoch's over to the calling thread
//! (and each second's per target, with the second's last epoch), and its responses' times in
//! batches (the targets' histograms are the calling thread's: `collect.rs`).

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

use tokio::time::timeout_at;

use super::collect::{Report, epochs_per_second};
use super::pre::Gate;
use super::shared::Shared;
use super::worker_stats::{WorkerStats, per_target};
use super::{h3, vu};

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
pub(super) async fn ticker(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    tx: mpsc::Sender<Report>,
) {
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
