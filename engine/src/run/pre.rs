//! Before the clock starts: the first level's connections opened (`load.pre_connect`, closed
//! model; vastar's pre-connect) and the warmup requests sent (`load.warmup: N`), so that a
//! short run measures neither connects nor a cold start as latency.
//!
//! With flows, a warmup of N is N iterations (as `load.requests` counts iterations): each one
//! a whole iteration of a flow drawn by weight, recorded nowhere.
//!
//! Each worker does its share over its own virtual users' connections, then waits at its
//! [`Gate`]; the calling thread starts the clock ([`Opener::open`]: the run's [`Shared`] is
//! laid out from then) once every worker is ready, and hands it to them. A connection opened
//! here still reports its setup with its first measured response, marked `pre_connected`:
//! that response's latency does not include it.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use super::exchange::{Connections, Times, Vu};
use super::shared::{Shared, StopFlags};
use super::transport::{self, Conn, Route};
use super::worker_stats::WorkerStats;
use super::{COLLECT_INTERVAL, clock, flow};
use crate::plan::{LoadPlan, Model};

/// What a run of `load` does before the clock starts: open the first level's connections
/// (`load.pre_connect`, unless `pre_connect` is false: see `Ready::on_given_clock`), send
/// warmup requests. `None`: nothing.
pub(super) fn work(load: &LoadPlan, pre_connect: bool) -> Option<Work> {
    let work = Work {
        pre_connect: pre_connect && load.pre_connect,
        warmup_requests: load.warmup_requests,
    };
    (work.pre_connect || work.warmup_requests > 0).then_some(work)
}

/// The work before the clock starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct Work {
    /// Open the first level's connections.
    pre_connect: bool,
    /// Send this many warmup requests (over all workers).
    warmup_requests: u64,
}

/// A worker's side of the start: says when it is ready, and receives the run's shared state
/// once the clock has started.
pub(super) struct Gate {
    ready: mpsc::Sender<()>,
    go: mpsc::Receiver<Arc<Shared>>,
    /// Warmup requests taken so far, by all workers.
    taken: Arc<AtomicU64>,
    work: Work,
}

/// The calling thread's side of the start.
pub(super) struct Opener {
    ready: mpsc::Receiver<()>,
    go: Vec<mpsc::Sender<Arc<Shared>>>,
}

/// One gate per worker (of `workers`) and their opener, when there is `work`; else none.
pub(super) fn gates(workers: usize, work: Option<Work>) -> (Vec<Option<Gate>>, Option<Opener>) {
    let Some(work) = work else {
        return ((0..workers).map(|_| None).collect(), None);
    };
    let (ready_tx, ready) = mpsc::channel();
    let taken = Arc::new(AtomicU64::new(0));
    let (gates, go) = (0..workers)
        .map(|_| {
            let (go_tx, go) = mpsc::channel();
            let gate = Gate {
                ready: ready_tx.clone(),
                go,
                taken: taken.clone(),
                work,
            };
            (Some(gate), go_tx)
        })
        .unzip();
    (gates, Some(Opener { ready, go }))
}

impl Opener {
    /// Waits until every worker is ready (or has ended), setting `halt` when `stop` is set,
    /// then starts the clock: `start` lays out the run's shared state from its time zero
    /// (`not_before`, or now if later), which every worker then receives.
    pub(super) fn open(
        self,
        not_before: Instant,
        flags: StopFlags<'_>,
        start: impl FnOnce(Instant) -> Arc<Shared>,
    ) -> Arc<Shared> {
        let mut ready = 0;
        while ready < self.go.len() {
            match self.ready.recv_timeout(COLLECT_INTERVAL) {
                Ok(()) => ready += 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if flags.stop.load(Ordering::Relaxed) {
                        flags.halt.store(true, Ordering::Relaxed);
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        let shared = start(not_before.max(Instant::now()));
        for go in self.go {
            let _ = go.send(shared.clone());
        }
        shared
    }
}

impl Gate {
    /// Says that this worker is ready without doing anything (it could not start).
    pub(super) fn ready(&self) {
        let _ = self.ready.send(());
    }

    /// Does this worker's share before the clock over its `users` (`shared` is laid out from
    /// a provisional start: only its targets and load are used), says it is ready and waits
    /// (blocking the thread) for the clock to start. Returns the run's shared state (`shared`,
    /// stopped, when the calling thread gave up) and the users with their connections.
    pub(super) async fn pass(
        self,
        shared: Arc<Shared>,
        users: Vec<(usize, Connections)>,
    ) -> (Arc<Shared>, Vec<(usize, Connections)>) {
        let users = before_clock(&shared, users, self.work, &self.taken).await;
        let _ = self.ready.send(());
        match self.go.recv() {
            Ok(run) => (run, users),
            Err(_) => {
                shared.stop.store(true, Ordering::Relaxed);
                (shared, users)
            }
        }
    }
}

/// Does the `work`: opens the first level's connections (closed model) and sends warmup
/// requests while there are some left (`taken` counts them over all workers), each virtual
/// user on its own task; returns the users with their connections, in their order.
async fn before_clock(
    shared: &Arc<Shared>,
    users: Vec<(usize, Connections)>,
    work: Work,
    taken: &Arc<AtomicU64>,
) -> Vec<(usize, Connections)> {
    let load = &shared.load;
    let first_level = load.level_at(0.0);
    // Nothing is recorded of the warmup requests: their records go here and are dropped.
    let scratch = Rc::new(RefCell::new(WorkerStats::new(shared, None)));
    let tasks: Vec<_> = users
        .into_iter()
        .map(|(i, mut conns)| {
            let level = (i / load.streams as usize) as f64 + 0.5;
            let connect = work.pre_connect && level <= first_level;
            // The first level's users warm up; at least the first group.
            let warm = work.warmup_requests > 0
                && (load.model == Model::Open || level <= first_level.max(0.5));
            let (shared, scratch, taken) = (shared.clone(), scratch.clone(), taken.clone());
            tokio::task::spawn_local(async move {
                if connect {
                    pre_connect(&shared, &mut conns).await;
                }
                if warm {
                    // Boxed: inline, a request's future would make each of these tasks,
                    // all alive at once while the first level connects, as large.
                    Box::pin(warm_up(&shared, &scratch, &mut conns, i, &taken, work)).await;
                }
                (i, conns)
            })
        })
        .collect();
    let mut users = Vec::with_capacity(tasks.len());
    for task in tasks {
        users.push(task.await.expect("a task before the clock does not panic"));
    }
    users
}

/// Sends warmup requests from virtual user `i` on `conns` while there are some left (`taken`
/// counts them over all workers), recorded into `scratch`.
async fn warm_up(
    shared: &Arc<Shared>,
    scratch: &RefCell<WorkerStats>,
    conns: &mut Connections,
    i: usize,
    taken: &AtomicU64,
    work: Work,
) {
    let mut rng = fastrand::Rng::with_seed(i as u64 ^ 0x5eed);
    let number = i as u64 + 1;
    let mut user = shared
        .flows
        .any()
        .then(|| flow::User::new(&shared.flows, number));
    let mut vu = Vu {
        shared,
        stats: scratch,
        conns,
        number,
    };
    while !shared.halted() && taken.fetch_add(1, Ordering::Relaxed) < work.warmup_requests {
        let times = Times::at(clock::now());
        flow::work(&mut vu, &mut user, &mut rng, times, false).await;
    }
}

/// Opens a virtual user's connection to each endpoint (bounded by the timeout of a target
/// on it), its setup marked as done before the clock; one that fails is left to the first
/// request.
async fn pre_connect(shared: &Shared, conns: &mut Connections) {
    for e in 0..conns.slots.len() {
        let Some(t) = shared.endpoint_of.iter().position(|&x| x == e) else {
            continue;
        };
        let target = &shared.targets[t];
        let mut code = None;
        let route = Route {
            addr: shared.addrs[e],
            slot: e,
            group: &conns.group,
        };
        let connect = transport::connect(route, target, &mut code);
        if let Ok(Ok(mut conn)) = tokio::time::timeout(target.timeout, connect).await {
            match &mut conn {
                Conn::H1(_, Some(setup)) | Conn::H1Tls(_, Some(setup)) => {
                    setup.pre_connected = true;
                }
                Conn::H2(h2) => {
                    h2.mark_pre_connected();
                    let _ = tokio::time::timeout(target.timeout, h2.settle()).await;
                }
                Conn::H3(h3) => h3.mark_pre_connected(),
                Conn::Ws(ws) => ws.mark_pre_connected(),
                Conn::H1(_, None) | Conn::H1Tls(_, None) => {}
            }
            conns.slots[e] = Some(conn);
        }
    }
}
