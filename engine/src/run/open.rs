//! The open model's dispatch: a dispatcher per worker walks the arrival schedule
//! ([`Arrivals`]), taking every `W`-th arrival, and hands each to an idle virtual user
//! (a request loop) of its worker's pool.
//!
//! `max_in_flight` is one budget for the run, though its virtual users are spread over the
//! workers (each owns its connections): an arrival that finds its own worker's users all busy
//! first lets them finish what has come in (one yield), then goes to another worker that has
//! one idle ([`Budget`]), and is counted as **dropped** (k6's `dropped_iterations`) only when
//! every virtual user of the run is busy. A drop made while the dispatcher was itself behind
//! its schedule by more than `load.health.late_p99` is the generator's, counted apart
//! (`StageStats::dropped_behind`).
//!
//! The hot path stays on its thread: taking and returning a virtual user costs one
//! uncontended atomic operation on the worker's own cache line; the mailbox's lock is taken
//! only when an arrival overflows its worker.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Instant;

use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::clock;
use super::exchange::{Connections, Times, Vu};
use super::pause::pause_precisely;
use super::{Shared, WorkerStats, flow};
use crate::plan::load::Arrivals;

/// An arrival: when it is due, and whether it is measured.
type Arrival = (Instant, bool);

/// The run's in-flight budget, as the workers share it: per worker, its idle virtual users
/// not yet promised to an arrival, and a mailbox for arrivals other workers hand it. A
/// worker's virtual users take arrivals until every worker's dispatcher has ended (one that
/// ends first still lends its users to the others).
pub(super) struct Budget {
    shares: Vec<Share>,
    /// Dispatchers still walking the schedule.
    running: AtomicUsize,
}

/// One worker's part of the [`Budget`], on its own cache line (its owner writes `free` on
/// every request; the others read it only when an arrival overflows).
#[repr(align(128))]
struct Share {
    /// Idle virtual users not promised to an arrival: never more than the pool's idle ones.
    free: AtomicUsize,
    mailbox: Mutex<Mailbox>,
    /// Wakes the worker's mailbox task.
    wake: Notify,
}

/// Arrivals handed over by other workers, each with a virtual user reserved for it.
#[derive(Default)]
struct Mailbox {
    arrivals: Vec<Arrival>,
    /// The worker's dispatcher has ended: no more arrivals are taken.
    closed: bool,
}

impl Budget {
    /// A budget shared by `workers` workers (none: the closed model's).
    pub(super) fn new(workers: usize) -> Budget {
        Budget {
            shares: (0..workers)
                .map(|_| Share {
                    free: AtomicUsize::new(0),
                    mailbox: Mutex::new(Mailbox::default()),
                    wake: Notify::new(),
                })
                .collect(),
            running: AtomicUsize::new(workers),
        }
    }

    /// A dispatcher has handed out its last arrival; after the last one, every mailbox
    /// closes.
    fn finish(&self) {
        if self.running.fetch_sub(1, Ordering::AcqRel) == 1 {
            for w in 0..self.shares.len() {
                self.shares[w].lock().closed = true;
                self.shares[w].wake.notify_one();
            }
        }
    }

    /// Reserves one of worker `w`'s idle virtual users; false when it has none free.
    fn reserve(&self, w: usize) -> bool {
        self.shares[w]
            .free
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Hands `arrival` from worker `from` to the first other worker with an idle virtual
    /// user; false when none has one (every virtual user of the run is busy).
    fn forward(&self, from: usize, arrival: Arrival) -> bool {
        let workers = self.shares.len();
        for w in (1..workers).map(|i| (from + i) % workers) {
            if !self.reserve(w) {
                continue;
            }
            let share = &self.shares[w];
            let mut mailbox = share.lock();
            if mailbox.closed {
                continue;
            }
            mailbox.arrivals.push(arrival);
            drop(mailbox);
            share.wake.notify_one();
            return true;
        }
        false
    }
}

impl Share {
    fn lock(&self) -> std::sync::MutexGuard<'_, Mailbox> {
        self.mailbox.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The open model's virtual users of one worker.
struct Pool {
    /// The worker's index, its share of the [`Budget`].
    index: usize,
    /// Idle virtual users; the last one idled is reused first (its connection is warm).
    idle: RefCell<Vec<Rc<Slot>>>,
    /// Every dispatcher has handed out its last arrival: the users end.
    done: Cell<bool>,
}

impl Pool {
    /// An idle virtual user for an arrival of this worker's, if one is free.
    fn take(&self, budget: &Budget) -> Option<Rc<Slot>> {
        if !budget.reserve(self.index) {
            return None;
        }
        self.reserved()
    }

    /// An idle virtual user already reserved in the budget (`free` counts no more than the
    /// idle ones, so there is one).
    fn reserved(&self) -> Option<Rc<Slot>> {
        self.idle.borrow_mut().pop()
    }

    /// `slot` is idle again.
    fn give_back(&self, budget: &Budget, slot: Rc<Slot>) {
        self.idle.borrow_mut().push(slot);
        budget.shares[self.index]
            .free
            .fetch_add(1, Ordering::Relaxed);
    }
}

/// How the dispatcher hands an arrival to a virtual user, on the worker's thread: a `Cell` and
/// the waiting user's waker (tokio's `Notify` took its lock twice per hand-off).
struct Slot {
    job: Cell<Option<Arrival>>,
    /// The idle virtual user's task, while it waits in [`Slot::next`].
    waker: Cell<Option<Waker>>,
}

impl Slot {
    fn hand(&self, arrival: Arrival) {
        self.job.set(Some(arrival));
        self.wake();
    }

    /// Wakes the virtual user waiting on this slot, if it waits.
    fn wake(&self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }

    /// The next arrival handed to this slot; `None` once `pool` is done.
    async fn next(&self, pool: &Pool) -> Option<Arrival> {
        std::future::poll_fn(|cx| {
            if let Some(arrival) = self.job.take() {
                return Poll::Ready(Some(arrival));
            }
            if pool.done.get() {
                return Poll::Ready(None);
            }
            self.waker.set(Some(cx.waker().clone()));
            Poll::Pending
        })
        .await
    }
}

/// Spawns worker `index`'s (of `workers`) open-model virtual users (`users`, each with its
/// rng seed), its dispatcher and its mailbox task on the current `LocalSet`.
pub(super) fn spawn(
    (index, workers): (usize, usize),
    shared: &Arc<Shared>,
    stats: &Rc<RefCell<WorkerStats>>,
    users: Vec<((u64, u64), Connections)>,
) -> Vec<JoinHandle<()>> {
    let pool = Rc::new(Pool {
        index,
        idle: RefCell::new(Vec::with_capacity(users.len())),
        done: Cell::new(false),
    });
    // Reversed: the idle stack hands out the first group's users first.
    let mut tasks: Vec<JoinHandle<()>> = users
        .into_iter()
        .rev()
        .map(|(number_seed, conns)| {
            let slot = Rc::new(Slot {
                job: Cell::new(None),
                waker: Cell::new(None),
            });
            pool.give_back(&shared.budget, slot.clone());
            tokio::task::spawn_local(open_vu(
                shared.clone(),
                stats.clone(),
                pool.clone(),
                slot,
                conns,
                number_seed,
            ))
        })
        .collect();
    tasks.push(tokio::task::spawn_local(mailbox(
        shared.clone(),
        stats.clone(),
        pool.clone(),
    )));
    tasks.push(tokio::task::spawn_local(dispatcher(
        shared.clone(),
        stats.clone(),
        pool,
        workers,
    )));
    tasks
}

/// Hands this worker's arrivals (every `workers`-th, from its index) to idle users: its own,
/// else another worker's; counts the rest as dropped.
async fn dispatcher(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    pool: Rc<Pool>,
    workers: usize,
) {
    let budget = &shared.budget;
    let behind_us = shared.load.health.late_p99_us;
    let mut arrivals = Arrivals::new(&shared.load.stages);
    let mut timer = shared.precise_timer();
    let mut k = pool.index as u64;
    while let Some(t) = arrivals.time_of(k) {
        let intended = shared.at(t);
        if !pause_precisely(&shared, &mut timer, intended).await {
            break;
        }
        let Some(measured) = shared.admit(intended, pool.index) else {
            break;
        };
        let mut idle = pool.take(budget);
        if idle.is_none() {
            // Let this worker's users that have their responses finish and come back first.
            tokio::task::yield_now().await;
            idle = pool.take(budget);
        }
        match idle {
            Some(slot) => slot.hand((intended, measured)),
            None if budget.forward(pool.index, (intended, measured)) => {}
            // Every in-flight slot of the run is busy.
            None => drop_arrival(&shared, &stats, intended, behind_us),
        }
        k += workers as u64;
    }
    budget.finish();
}

/// Counts an arrival due at `intended` that found every in-flight slot of the run busy
/// (warmup included, for the stage's health), and apart when the generator was itself more
/// than `behind_us` microseconds behind its schedule.
fn drop_arrival(shared: &Shared, stats: &RefCell<WorkerStats>, intended: Instant, behind_us: u64) {
    let late_us = clock::now().saturating_duration_since(intended).as_micros() as u64;
    let mut s = stats.borrow_mut();
    let stage = &mut s.stages[shared.stage_of(intended)];
    stage.dropped += 1;
    stage.dropped_behind += u64::from(late_us > behind_us);
}

/// Hands `arrival` to the idle user reserved for it in the budget (counted as dropped if,
/// against the budget's count, none is idle).
fn hand_reserved(shared: &Shared, stats: &RefCell<WorkerStats>, pool: &Pool, arrival: Arrival) {
    match pool.reserved() {
        Some(slot) => slot.hand(arrival),
        None => drop_arrival(shared, stats, arrival.0, u64::MAX),
    }
}

/// Hands the arrivals other workers forwarded to this worker's users reserved for them,
/// until every dispatcher has ended (or the run was stopped: a worker that failed to start
/// never ends its dispatcher); then ends the worker's idle users.
async fn mailbox(shared: Arc<Shared>, stats: Rc<RefCell<WorkerStats>>, pool: Rc<Pool>) {
    let share = &shared.budget.shares[pool.index];
    loop {
        let _ = tokio::time::timeout(super::COLLECT_INTERVAL, share.wake.notified()).await;
        let halted = shared.halted();
        let (arrivals, closed) = {
            let mut mailbox = share.lock();
            mailbox.closed |= halted;
            (std::mem::take(&mut mailbox.arrivals), mailbox.closed)
        };
        for arrival in arrivals {
            hand_reserved(&shared, &stats, &pool, arrival);
        }
        if closed {
            break;
        }
    }
    pool.done.set(true);
    for slot in pool.idle.borrow_mut().drain(..) {
        slot.wake();
    }
}

/// Open model: a virtual user (`number`, from 1, among the run's; its random `seed`),
/// sending each arrival handed to it.
async fn open_vu(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    pool: Rc<Pool>,
    slot: Rc<Slot>,
    mut conns: Connections,
    (number, seed): (u64, u64),
) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut user = shared
        .flows
        .any()
        .then(|| flow::User::new(&shared.flows, number));
    let mut vu = Vu {
        shared: &shared,
        stats: &stats,
        conns: &mut conns,
        number,
    };
    while let Some((intended, measured)) = slot.next(&pool).await {
        let times = Times {
            intended,
            ready: intended,
            started: clock::now(),
        };
        flow::work(&mut vu, &mut user, &mut rng, times, measured).await;
        if pool.done.get() {
            break;
        }
        pool.give_back(&shared.budget, slot.clone());
    }
}
