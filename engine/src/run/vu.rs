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
use tokio::time::sleep_until;

use super::clock;
use super::deadline::Deadline;
use super::timer::PreciseTimer;
use super::transport::Outgoing;
use super::{Shared, WorkerStats, checks, flow, h1, h3, open, redirect, transport};
use crate::measure::{ErrorKind, LATE_US, ResponseTimes};
use crate::plan::{Model, TargetPlan, ThinkTime};

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
    (index..shared.load.connection_groups())
        .step_by(workers)
        .flat_map(|g| {
            let endpoints = endpoints.clone();
            let group = Rc::new(transport::Group::new(shared.addrs.len(), endpoints));
            (g * streams..((g + 1) * streams).min(total))
                .map(move |i| (i, Connections::new(shared, group.clone())))
        })
        .collect()
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
    let streams = shared.load.streams as usize;
    match shared.load.model {
        Model::Closed => users
            .into_iter()
            .map(|(i, conns)| {
                let level = (i / streams) as f64 + 0.5;
                tokio::task::spawn_local(closed_vu(
                    shared.clone(),
                    stats.clone(),
                    conns,
                    (level, index),
                    seed(i),
                ))
            })
            .collect(),
        Model::Open => {
            let users = users
                .into_iter()
                .map(|(i, conns)| (seed(i), conns))
                .collect();
            open::spawn((index, workers), shared, stats, users)
        }
    }
}

/// A virtual user's connections, one per endpoint (HTTP/2: handles to its group's), its
/// buffer for checked responses, its timer and the byte counts of its current request.
pub(super) struct Connections {
    pub(super) slots: Vec<Option<transport::Conn>>,
    pub(super) group: Rc<transport::Group>,
    capture: h1::Capture,
    deadline: Deadline,
    traffic: h1::Traffic,
}

impl Connections {
    fn new(shared: &Shared, group: Rc<transport::Group>) -> Connections {
        Connections {
            slots: shared.addrs.iter().map(|_| None).collect(),
            group,
            capture: h1::Capture::default(),
            deadline: Deadline::new(),
            traffic: h1::Traffic::default(),
        }
    }

    /// The last response kept (head, and body when asked for).
    pub(super) fn capture(&self) -> &h1::Capture {
        &self.capture
    }

    /// Closes this virtual user's connections, and its group's shared HTTP/2 connections
    /// (streams still in flight on them finish first).
    fn close_all(&mut self) {
        self.slots.iter_mut().for_each(|c| *c = None);
        self.group.close();
    }
}

/// What one request sends, and what of its response is kept.
#[derive(Debug, Clone, Copy)]
pub(super) struct Job<'a> {
    /// The target (an index into the plan's) whose request it is, and is recorded as.
    pub(super) target: usize,
    /// Its bytes: the target's own, or rendered (a flow step).
    pub(super) outgoing: Outgoing<'a>,
    /// Keep the response's head in the virtual user's capture whatever the checks need, and
    /// its body too when `Some(true)` (a flow step's cookie jar and extractors); `None`: only
    /// what the target's checks and redirects need.
    pub(super) keep: Option<bool>,
}

impl Job<'_> {
    /// Target `t`'s own request, its response kept as its checks need.
    pub(super) fn planned(t: usize) -> Job<'static> {
        Job {
            target: t,
            outgoing: Outgoing::Planned,
            keep: None,
        }
    }
}

/// Sends one request (`job`), due at `intended`, and records it when `measured`.
/// `ready`: when the virtual user was free to send it; `started`: now (the caller's clock
/// reading, one fewer per request). A start later than both `intended` and `ready` is the
/// generator's own lateness (a paced connection still busy with a slow response is not).
/// Returns the response's status, or why the request failed: an error kind, where
/// [`ErrorKind::UnexpectedStatus`] says that a response came (and was kept, when asked).
#[allow(clippy::too_many_arguments)]
pub(super) async fn request(
    shared: &Shared,
    stats: &RefCell<WorkerStats>,
    conns: &mut Connections,
    job: Job<'_>,
    intended: Instant,
    ready: Instant,
    started: Instant,
    measured: bool,
) -> Result<u16, ErrorKind> {
    let t = job.target;
    let target = &shared.targets[t];
    let e = shared.endpoint_of[t];
    let addr = shared.addrs[e];
    let Connections {
        slots,
        group,
        capture,
        deadline,
        traffic,
    } = conns;
    let conn = &mut slots[e];
    let captures = target.captures() || job.keep.is_some();
    capture.keep_body = target.captures_body() || job.keep == Some(true);
    traffic.reset();
    let timeout_at = started + target.timeout;
    let outcome = deadline
        .run(timeout_at, async {
            let at = (started, timeout_at);
            let kept = captures.then_some(&mut *capture);
            let request = (target, job.outgoing);
            let response =
                transport::send(conn, addr, request, group, e, at, kept, traffic).await?;
            if target.redirects == 0 {
                return Ok(response);
            }
            // Boxed: inline, the hops' futures would make every request's future larger.
            let at = (e, timeout_at);
            Box::pin(redirect::follow(
                response, conn, addr, request, group, at, capture, traffic,
            ))
            .await
        })
        .await;
    let response_end = outcome
        .as_ref()
        .and_then(|o| o.as_ref().ok())
        .map(|r| r.end);
    let end = response_end.unwrap_or_else(Instant::now);
    let outcome = match outcome {
        Some(result) => result,
        None if conn.is_none() => Err(ErrorKind::ConnectTimeout),
        None => Err(ErrorKind::Timeout),
    };
    match &outcome {
        Ok(response) if response.keep_alive && target.keep_alive => {}
        _ if !target.keep_alive => {
            // `keep_alive: false`: a connection per request (HTTP/2: the group's too).
            *conn = None;
            group.close_slot(e);
        }
        _ => *conn = None,
    }
    let answer = answer(&outcome, target);
    let service_us = end.duration_since(started).as_micros() as u64;
    {
        let mut guard = stats.borrow_mut();
        let s = &mut *guard;
        let late_us = record_stage(shared, s, (intended, ready, started, end), answer.err());
        if measured {
            let latency_us = end.duration_since(intended).as_micros() as u64;
            s.last_end = Some(end);
            let record = &mut s.targets[t];
            // Every request's bytes, whatever its outcome.
            record.bytes_sent += traffic.sent;
            record.bytes_received += traffic.received;
            let (latency, failed) = match outcome {
                Ok(response) => {
                    let expected = target.expect_status.contains(response.status);
                    record.record_response(response.status, expected);
                    record.record_slow(latency_us, target.slow_us);
                    let seen = &traffic.seen;
                    record.upstream.record(seen.envoy_us, &seen.server_timing);
                    record.note_alt_svc(&seen.alt_svc_h3);
                    seen.record_stream(&mut record.streaming, intended);
                    if captures {
                        checks::evaluate(&target.checks, capture, |i, passed| {
                            record.record_check(i, passed)
                        });
                    }
                    let times = ResponseTimes::new(t, latency_us, service_us, response.timing);
                    s.record_times(times);
                    (Some(latency_us), !expected)
                }
                Err(kind) => {
                    record.record_error(kind);
                    record.record_error_code(kind, traffic.error_code);
                    (None, true)
                }
            };
            let late = late_us > LATE_US;
            s.epoch.record(latency, failed, late);
            s.second[t].record(latency, failed, late);
        }
    }
    if conn.is_none() {
        // After an error or a closed connection: let the other tasks run, so that a target
        // failing fast cannot starve this thread.
        tokio::task::yield_now().await;
    }
    answer
}

/// What [`request`] returns of `outcome`, a request of `target`: its status, or why it failed.
fn answer(
    outcome: &Result<transport::Response, ErrorKind>,
    target: &TargetPlan,
) -> Result<u16, ErrorKind> {
    match outcome {
        Ok(response) if !target.expect_status.contains(response.status) => {
            Err(ErrorKind::UnexpectedStatus)
        }
        other => other.as_ref().map(|r| r.status).map_err(|k| *k),
    }
}

/// Records a request in its stage's health (every stage, warmup included): sent, time in
/// flight, a connect that failed for want of a file descriptor, and how late it started after
/// it was due (`times`: intended, ready, started, end; see [`request`]). Returns that
/// lateness in microseconds, 0 when requests have no schedule.
fn record_stage(
    shared: &Shared,
    s: &mut WorkerStats,
    (intended, ready, started, end): (Instant, Instant, Instant, Instant),
    failure: Option<ErrorKind>,
) -> u64 {
    shared.add_busy(&mut s.stages, started, end);
    let stage = &mut s.stages[shared.stage_of(intended)];
    stage.sent += 1;
    stage.fd_limit += u64::from(failure == Some(ErrorKind::FdLimit));
    if !shared.scheduled {
        return 0;
    }
    let late_us = started
        .saturating_duration_since(intended.max(ready))
        .as_micros() as u64;
    stage.lateness_us.saturating_record(late_us.max(1));
    late_us
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

/// Closed model: a virtual user of worker `worker`, active while the stages' target (in
/// connections) is at least `level`.
async fn closed_vu(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    mut conns: Connections,
    (level, worker): (f64, usize),
    seed: u64,
) {
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
    let mut user = shared.flows.any().then(|| flow::User::new(&shared.flows));
    loop {
        let now = clock::now();
        if shared.load.level_at(shared.secs(now)) < level {
            // Not needed now: close, and wait until the stages need this user again.
            conns.close_all();
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
        // After a pacing pause the clock is read again; else `now` is this request's start.
        let started = if intended > now { clock::now() } else { now };
        let times = (intended, now, started);
        let failure = work(
            &shared, &stats, &mut conns, &mut user, &mut rng, times, measured,
        )
        .await;
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

/// A pause of `think_time`: fixed, or drawn uniformly from its range.
pub(super) fn think(think_time: Option<ThinkTime>, rng: &mut fastrand::Rng) -> Duration {
    match think_time {
        Some(ThinkTime::Fixed(d)) => d,
        Some(ThinkTime::Uniform(low, high)) => {
            let span = (high - low).as_nanos() as u64;
            low + Duration::from_nanos(rng.u64(0..=span))
        }
        None => Duration::ZERO,
    }
}

/// One unit of a virtual user's work (`times`: intended, ready, started, as [`request`]'s):
/// a request of a target drawn by weight or, with flows (`user`: the virtual user's flow
/// state), an iteration of a flow drawn by weight. `measured`: whether it is recorded.
/// Returns why its (first) failed request failed, if one did.
pub(super) async fn work(
    shared: &Shared,
    stats: &RefCell<WorkerStats>,
    conns: &mut Connections,
    user: &mut Option<flow::User>,
    rng: &mut fastrand::Rng,
    (intended, ready, started): (Instant, Instant, Instant),
    measured: bool,
) -> Option<ErrorKind> {
    // Tests on a virtual clock: the fake server takes the request, recorded as `request`
    // records its stage and epoch (`run/virtual_clock.rs`).
    #[cfg(test)]
    if let Some(server) = &shared.fake {
        let served = server.serve(intended, ready, started).await;
        let s = &mut *stats.borrow_mut();
        let late_us = record_stage(shared, s, (intended, ready, started, served.end), None);
        if measured {
            let latency_us = (served.end - intended).as_micros() as u64;
            s.epoch
                .record(Some(latency_us), served.failed, late_us > LATE_US);
        }
        return served.failed.then_some(ErrorKind::UnexpectedStatus);
    }
    match user {
        // Boxed: inline, an iteration's future would make every request's future larger.
        Some(user) => {
            let times = (intended, ready, started);
            Box::pin(user.iteration(shared, stats, conns, rng, times, measured)).await
        }
        None => {
            let job = Job::planned(shared.pick(rng));
            request(
                shared, stats, conns, job, intended, ready, started, measured,
            )
            .await
            .err()
        }
    }
}

/// Sleeps until `deadline` in slices of at most [`super::COLLECT_INTERVAL`], so that a stopped
/// run is noticed; false when the run was stopped.
pub(super) async fn pause_until(shared: &Shared, deadline: Instant) -> bool {
    loop {
        if shared.halted() {
            return false;
        }
        let now = clock::now();
        if now >= deadline {
            return true;
        }
        sleep_until(deadline.min(now + super::COLLECT_INTERVAL).into()).await;
    }
}

/// How long before an arrival (or a paced request) is due [`pause_precisely`] switches from
/// tokio's 1 ms timer to the precise one.
const PRECISE_SPAN: Duration = Duration::from_millis(2);

/// Sleeps until `deadline`, when a request is due (an arrival, a paced request): long gaps
/// (low rates) in slices, as [`pause_until`], to notice a stop; the last [`PRECISE_SPAN`] on
/// `timer` (tokio's timer when there is none), so that the request starts on time and its
/// latency holds none of the generator's lateness. False when the run was stopped.
pub(super) async fn pause_precisely(
    shared: &Shared,
    timer: &mut Option<PreciseTimer>,
    deadline: Instant,
) -> bool {
    let coarse_until = deadline.checked_sub(PRECISE_SPAN).unwrap_or(deadline);
    if !pause_until(shared, coarse_until).await {
        return false;
    }
    if clock::now() < deadline {
        let precise = match timer.as_mut() {
            Some(timer) => timer.sleep_until(deadline).await.is_ok(),
            None => false,
        };
        if !precise {
            sleep_until(deadline.into()).await;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use tokio::io::AsyncReadExt as _;

    use crate::measure::ErrorKind;
    use crate::run::deadline::Deadline;
    use crate::run::h1::{self, Failure, H1Conn, Traffic};

    /// A body that never pauses (every read is ready: tokio's cooperative budget then runs
    /// out inside the read loop, and a timer polled after it could never fire) still ends at
    /// the request's deadline, with the bytes read counted.
    #[tokio::test(flavor = "current_thread")]
    async fn a_body_that_never_pauses_times_out_at_the_deadline() {
        let head = &b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n"[..];
        let stream = tokio::io::join(head.chain(tokio::io::repeat(b'x')), tokio::io::sink());
        let mut conn = H1Conn::new(stream, h1::tcp_io_error);
        let mut traffic = Traffic::default();
        let started = Instant::now();
        let at = started + Duration::from_millis(200);
        let exchange = conn.exchange(b"GET / HTTP/1.1\r\n\r\n", false, None, at, &mut traffic);
        let outcome =
            tokio::time::timeout(Duration::from_secs(3), Deadline::new().run(at, exchange)).await;
        let took = started.elapsed();
        assert!(
            matches!(
                outcome,
                Ok(Some(Err(Failure::Error(ErrorKind::Timeout))) | None)
            ),
            "{outcome:?} after {took:?}"
        );
        assert!(took < Duration::from_millis(700), "{took:?}");
        assert_eq!(traffic.sent, 18);
        assert!(traffic.received > 1_000_000, "{traffic:?}");
    }
}
