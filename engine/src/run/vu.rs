//! Request loops: the tasks that send requests, for both load models (the words are the
//! glossary's, in `plan/load.rs`).
//!
//! - Closed model: each loop is a virtual user. Loop `i` (of all workers) is active while the
//!   stage's level is at least `i + 0.5` connections (with HTTP/2, a group of `streams` loops per
//!   connection); it sends its next request when its last response has been read, after its
//!   think time, or when its pacing schedule says the request is due.
//! - Open model: a dispatcher per worker walks the arrival schedule, taking every `W`-th
//!   arrival, and hands each to an idle loop (`max_in_flight` loops over all workers: one
//!   in-flight budget for the run, `open.rs`); an arrival that finds none idle is counted as
//!   dropped, never silently skipped (k6's `dropped_iterations`).
//! - With flows (`plan.flows`), a loop's unit of work is an iteration of a flow drawn by weight
//!   (`flow/`) in place of a request: closed model, a virtual user loops over iterations,
//!   `load.think_time` and `pacing` between them; open model, an arrival starts one iteration
//!   (the rate is iterations per second) and `max_in_flight` caps the iterations in flight.
//!   `load.requests` (count mode's tickets, [`Shared::admit`]) and a warmup count (`pre.rs`)
//!   then count iterations.
//! - A closed-model virtual user whose connect fails waits before the next try: bounded
//!   exponential backoff with full jitter ([`Backoff`]), so that a refused or exhausted
//!   connect is not retried at once, thousands of times a second.
//!
//! A loop owns one connection per endpoint; with HTTP/2, a handle to a connection it shares with
//! the other `streams - 1` loops of its group (closed model: the group is one connection of the
//! stage's level). Nothing here allocates per request: the dispatcher wakes a loop through its
//! own `Notify`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;

use super::clock;
use super::exchange::{Connections, Times, Vu};
use super::pause::{pause_precisely, pause_until, think};
use super::{Shared, WorkerStats, flow, h3, open, transport};
use crate::measure::ErrorKind;
use crate::plan::Model;

/// Worker `index`'s (of `workers`) virtual users: their numbers among all, and their
/// connections (none open yet; HTTP/3's on the worker's `endpoints`).
///
/// Virtual users come in groups of `streams` that share their connections (HTTP/2 and HTTP/3:
/// one connection per endpoint carries the group's requests at once); group `g` runs on worker
/// `g mod workers`, so that a group never spans threads.
pub(super) fn users(
    index: usize,
    workers: usize,
    shared: &Shared,
    endpoints: &Rc<h3::Endpoints>,
) -> Vec<(usize, Connections)> {
    let streams = shared.load.streams as usize;
    let total = shared.load.request_loops();
    let groups = (index..shared.load.connection_groups()).step_by(workers);
    let loops = |g: usize| g * streams..((g + 1) * streams).min(total);
    // Sized first: grown as it is filled, the vector would take up to twice the room (4 MB
    // more for 10,000 users) while the first level connects.
    let mut users = Vec::with_capacity(groups.clone().map(|g| loops(g).len()).sum());
    users.extend(groups.flat_map(|g| {
        let endpoints = endpoints.clone();
        let group = Rc::new(transport::Group::new(shared.addrs.len(), endpoints));
        loops(g).map(move |i| (i, Connections::new(shared, group.clone())))
    }));
    users
}

/// Spawns worker `index`'s virtual users (from [`users`]) on the current `LocalSet`.
pub(super) fn spawn(
    index: usize,
    workers: usize,
    shared: &Arc<Shared>,
    stats: &Rc<RefCell<WorkerStats>>,
    users: Vec<(usize, Connections)>,
) -> Vec<JoinHandle<()>> {
    let seed = |i: usize| ((index as u64) << 32) ^ i as u64 ^ 0x9e37_79b9_7f4a_7c15;
    match shared.load.model {
        Model::Closed => users
            .into_iter()
            .map(|(i, conns)| {
                tokio::task::spawn_local(closed_vu(
                    shared.clone(),
                    stats.clone(),
                    conns,
                    i,
                    index,
                    seed(i),
                ))
            })
            .collect(),
        Model::Open => {
            let users = users
                .into_iter()
                .map(|(i, conns)| ((i as u64 + 1, seed(i)), conns))
                .collect();
            open::spawn((index, workers), shared, stats, users)
        }
    }
}

/// The wait of a virtual user after repeated failed connects: bounded exponential backoff
/// with full jitter, from the AWS Architecture Blog's "Exponential Backoff And Jitter"
/// (Marc Brooker, 2015, <https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/>):
/// after the `n`-th failure in a row, a wait drawn uniformly from
/// `[0, min(CAP, BASE × 2^(n-1))]`, with `BASE` 1 ms and `CAP` 1 s. A request that gets a
/// connection starts the count again.
struct Backoff {
    /// Failed connects in a row.
    failures: u32,
}

impl Backoff {
    /// The first wait's ceiling.
    const BASE: Duration = Duration::from_millis(1);
    /// The longest wait.
    const CAP: Duration = Duration::from_secs(1);

    /// The wait after one more failed connect in a row.
    fn next(&mut self, rng: &mut fastrand::Rng) -> Duration {
        // 2^10 × 1 ms passes the cap: larger exponents change nothing.
        let ceiling = (Self::BASE * (1 << self.failures.min(10))).min(Self::CAP);
        self.failures = self.failures.saturating_add(1);
        Duration::from_nanos(rng.u64(0..=ceiling.as_nanos() as u64))
    }
}

/// Closed model: virtual user `index` (its request loop's, among all) of worker `worker`,
/// active while the stages' target (in connections) is at least its level, `index / streams`
/// plus one half, from the schedule's time zero; with `load.per_loop_iterations`, until it
/// has run that many measured units.
///
/// An `async move` block, not an `async fn`: an async fn moves its arguments into locals and
/// keeps both, the virtual user's connections (360 bytes) twice in every task.
fn closed_vu(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    mut conns: Connections,
    index: usize,
    worker: usize,
    seed: u64,
) -> impl Future<Output = ()> {
    let level = (index / shared.load.streams as usize) as f64 + 0.5;
    async move {
        let mut vu = Vu {
            shared: &shared,
            stats: &stats,
            conns: &mut conns,
            number: index as u64 + 1,
        };
        let mut rng = fastrand::Rng::with_seed(seed);
        let interval = shared
            .load
            .pacing
            .map(|rate| Duration::from_secs_f64(1.0 / rate));
        let mut next_due: Option<Instant> = None;
        // A paced request is measured from when it was due: it must start then, not on the next
        // tick of tokio's 1 ms timer.
        let mut timer = interval.and_then(|_| shared.precise_timer());
        let mut backoff = Backoff { failures: 0 };
        let mut user = shared
            .flows
            .any()
            .then(|| flow::User::new(&shared.flows, vu.number));
        // `per-vu-iterations`: the measured units (requests; with flows, iterations) left to
        // this user.
        let mut own_left = shared.load.per_loop_iterations;
        // A schedule that starts later (a scenario's `start_time`, `loadgate ab`'s common clock):
        // nothing is sent before its time zero.
        if clock::now() < shared.start && !pause_until(&shared, shared.start).await {
            return;
        }
        loop {
            if own_left == Some(0) {
                break;
            }
            let now = clock::now();
            if shared.load.level_at(shared.secs(now)) < level {
                // Not needed now: close, and wait until the stages need this user again.
                vu.conns.close_all();
                next_due = None;
                let Some(at) = shared.load.first_time_at_least(level, shared.secs(now)) else {
                    break;
                };
                let at = shared.at(at);
                if shared.over(at) || !pause_until(&shared, at).await {
                    break;
                }
                continue;
            }
            let intended = match interval {
                Some(interval) => {
                    let due = next_due.unwrap_or(now);
                    next_due = Some(due + interval);
                    if due > now && !pause_precisely(&shared, &mut timer, due).await {
                        break;
                    }
                    if let Some(end) = shared.end
                        && now >= end
                    {
                        // Still behind schedule when the run ends: the requests that fell due
                        // and were never sent are counted as dropped, not forgotten.
                        let behind = end.saturating_duration_since(due).as_secs_f64();
                        let missed = (behind / interval.as_secs_f64()).ceil() as u64;
                        if due >= shared.measure_start {
                            stats.borrow_mut().stages[shared.stage_of(due)].dropped += missed;
                        }
                        break;
                    }
                    due
                }
                None => now,
            };
            let Some(measured) = shared.admit(intended, worker) else {
                break;
            };
            if measured && let Some(left) = own_left.as_mut() {
                *left -= 1;
            }
            // After a pacing pause the clock is read again; else `now` is this request's start.
            let started = if intended > now { clock::now() } else { now };
            let times = Times {
                intended,
                ready: now,
                started,
            };
            let failure = flow::work(&mut vu, &mut user, &mut rng, times, measured).await;
            match failure {
                Some(kind) if kind.is_connect() => {
                    let wait = backoff.next(&mut rng);
                    let resumed = pause_until(&shared, clock::now() + wait).await;
                    if kind == ErrorKind::FdLimit {
                        let short = (clock::now() - started).as_micros() as u64;
                        stats.borrow_mut().stages[shared.stage_of(started)].fd_wait_us += short;
                    }
                    if !resumed {
                        break;
                    }
                    continue;
                }
                _ => backoff.failures = 0,
            }
            let think = think(shared.load.think_time, &mut rng);
            if !think.is_zero() && !pause_until(&shared, clock::now() + think).await {
                break;
            }
        }
    }
}
