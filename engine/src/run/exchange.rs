//! One request, sent and recorded: a virtual user's context ([`Vu`]: the run, its worker's
//! records, its connections), what it sends ([`Job`]), and the instants a request is measured
//! from ([`Times`]). Every request of the run goes through [`Vu::request`]: a target's, a
//! flow step's, a warmup request.
//!
//! Latency is measured from when a request was due, not from when it was sent, so that a
//! generator held back by a slow server does not hide the wait (coordinated omission: Gil
//! Tene, "How NOT to Measure Latency"; wrk2; oha's `RequestResult`, whose
//! `start_latency_correction`, `start` and `end` are [`Times::intended`], [`Times::started`]
//! and the response's end here).

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use super::deadline::Deadline;
use super::multiplexed::{Outgoing, Request};
use super::transport::{self, Route};
use super::{Shared, WorkerStats, checks, h1, redirect};
use crate::measure::{ErrorKind, LATE_US, ResponseTimes};
use crate::plan::TargetPlan;

/// The instants of one request that its latency and the generator's lateness are measured
/// from (the response's end is the fourth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Times {
    /// When the request was due: the open model's arrival, a paced virtual user's schedule,
    /// else when the virtual user got to it. Its latency runs from here, so that the time it
    /// waited behind a slow response counts (the correction for coordinated omission; oha's
    /// `start_latency_correction`). Its stage is the stage of this instant.
    pub(super) intended: Instant,
    /// When the virtual user was free to send it: its previous request done (and its think
    /// time over). A paced virtual user still busy with a slow response is ready after
    /// `intended`; that delay is the server's, not the generator's.
    pub(super) ready: Instant,
    /// When it was sent: the caller's clock reading (one reading fewer per request). Its
    /// service time and its timeout run from here (oha's `start`); a start later than both
    /// `intended` and `ready` is the generator's own lateness (a stage's `lateness_us`).
    pub(super) started: Instant,
}

impl Times {
    /// A request due, free and started at `now`: one without a schedule of its own (a flow's
    /// later step, a warmup request).
    pub(super) fn at(now: Instant) -> Times {
        Times {
            intended: now,
            ready: now,
            started: now,
        }
    }
}

/// What one request sends, what of its response is kept, and whether it is recorded.
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
    /// Record it (in its target's stats, the epoch, the second); false: a warmup request, or
    /// one due before the measured part of the run. Its stage's health records it either way.
    pub(super) measured: bool,
}

impl Job<'_> {
    /// Target `t`'s own request, its response kept as its checks need; recorded when
    /// `measured`.
    pub(super) fn planned(t: usize, measured: bool) -> Job<'static> {
        Job {
            target: t,
            outgoing: Outgoing::Planned,
            keep: None,
            measured,
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
    /// A check on the last response failed (a flow's `on_error: fail_iteration` ends the
    /// iteration on it).
    check_failed: bool,
}

impl Connections {
    /// No connection open yet, to the run's endpoints; shared ones in `group`.
    pub(super) fn new(shared: &Shared, group: Rc<transport::Group>) -> Connections {
        Connections {
            slots: shared.addrs.iter().map(|_| None).collect(),
            group,
            capture: h1::Capture::default(),
            deadline: Deadline::new(),
            traffic: h1::Traffic::default(),
            check_failed: false,
        }
    }

    /// Whether a check on the last response failed.
    pub(super) fn check_failed(&self) -> bool {
        self.check_failed
    }

    /// The last response kept (head, and body when asked for).
    pub(super) fn capture(&self) -> &h1::Capture {
        &self.capture
    }

    /// Closes this virtual user's connections, and its group's shared HTTP/2 connections
    /// (streams still in flight on them finish first).
    pub(super) fn close_all(&mut self) {
        self.slots.iter_mut().for_each(|c| *c = None);
        self.group.close();
    }
}

/// A virtual user's context: the run, its worker's records, its connections.
pub(super) struct Vu<'a> {
    pub(super) shared: &'a Shared,
    pub(super) stats: &'a RefCell<WorkerStats>,
    pub(super) conns: &'a mut Connections,
    /// The virtual user's number among the run's (its request loop's index + 1), `{{vu}}`;
    /// the same in the warmup as after it.
    pub(super) number: u64,
}

impl Vu<'_> {
    /// Tests on a virtual clock: the fake server takes the request, recorded as
    /// [`Vu::request`] records its stage and epoch. Returns why it failed, if it did.
    #[cfg(test)]
    pub(super) async fn fake_request(&mut self, times: Times, measured: bool) -> Option<ErrorKind> {
        let server = self.shared.fake.as_ref()?;
        let served = server
            .serve(times.intended, times.ready, times.started)
            .await;
        let s = &mut *self.stats.borrow_mut();
        let late_us = record_stage(self.shared, s, times, served.end, None);
        if measured {
            let latency_us = (served.end - times.intended).as_micros() as u64;
            s.epoch
                .record(Some(latency_us), served.failed, late_us > LATE_US);
        }
        served.failed.then_some(ErrorKind::UnexpectedStatus)
    }

    /// Sends one request (`job`) at `times.started` and records it: in its stage's health
    /// always, in its target's stats when `job.measured`. Returns the response's status, or
    /// why the request failed: an error kind, where [`ErrorKind::UnexpectedStatus`] says that
    /// a response came (and was kept, when asked).
    pub(super) async fn request(&mut self, job: Job<'_>, times: Times) -> Result<u16, ErrorKind> {
        let shared = self.shared;
        let t = job.target;
        let target = &shared.targets[t];
        let e = shared.endpoint_of[t];
        let Connections {
            slots,
            group,
            capture,
            deadline,
            traffic,
            check_failed,
        } = &mut *self.conns;
        *check_failed = false;
        let conn = &mut slots[e];
        let captures = target.captures() || job.keep.is_some();
        capture.keep_body = target.captures_body() || job.keep == Some(true);
        traffic.reset();
        let route = Route {
            addr: shared.addrs[e],
            slot: e,
            group,
        };
        // A gRPC call with a deadline ends at it, as gRPC's clients end it
        // (`DEADLINE_EXCEEDED`), when it comes before the target's timeout.
        let grpc_deadline = target
            .grpc
            .as_ref()
            .and_then(|g| g.deadline)
            .filter(|d| *d < target.timeout);
        let limit = grpc_deadline.unwrap_or(target.timeout);
        let request = Request {
            target,
            outgoing: job.outgoing,
            deadline: times.started + limit,
        };
        let outcome = {
            // Pinned here, not moved into `Deadline::run`: an async fn keeps its argument
            // and the pinned copy of it, and this future is most of a virtual user's task.
            let work = std::pin::pin!(async {
                let kept = captures.then_some(&mut *capture);
                let started = times.started;
                let response =
                    transport::send(conn, route, request, started, kept, traffic).await?;
                if target.redirects == 0 {
                    return Ok(response);
                }
                // Boxed: inline, the hops' futures would make every request's future larger.
                Box::pin(redirect::follow(
                    response, conn, route, request, capture, traffic,
                ))
                .await
            });
            deadline.run(request.deadline, work).await
        };
        let response_end = outcome
            .as_ref()
            .and_then(|o| o.as_ref().ok())
            .map(|r| r.end);
        let end = response_end.unwrap_or_else(Instant::now);
        let outcome = match outcome {
            Some(result) => result,
            None if conn.is_none() => Err(ErrorKind::ConnectTimeout),
            None if grpc_deadline.is_some() => Err(ErrorKind::GrpcDeadlineExceeded),
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
        let answer = answer(&outcome, target, traffic.messages.failure);
        {
            let mut guard = self.stats.borrow_mut();
            let s = &mut *guard;
            let late_us = record_stage(shared, s, times, end, answer.err());
            if job.measured {
                let record = Record {
                    t,
                    target,
                    times,
                    end,
                    late_us,
                };
                let checked = captures.then_some(&*capture);
                record.write(s, outcome, traffic, checked, check_failed);
            } else if let (Ok(response), true) = (&outcome, captures) {
                // Not recorded, but a flow may end its iteration on a failed check.
                let measured = checks::Measured {
                    status: response.status,
                    latency_us: end.duration_since(times.intended).as_micros() as u64,
                };
                checks::evaluate(&target.checks, capture, measured, |_, p| {
                    *check_failed |= !p;
                });
            }
        }
        if conn.is_none() {
            // After an error or a closed connection: let the other tasks run, so that a target
            // failing fast cannot starve this thread.
            tokio::task::yield_now().await;
        }
        answer
    }
}

/// A measured request to record: its target (number `t`), its instants (`end`: its response's
/// last byte, or when it failed) and how late it started, µs.
struct Record<'a> {
    t: usize,
    target: &'a TargetPlan,
    times: Times,
    end: Instant,
    late_us: u64,
}

impl Record<'_> {
    /// Records the request in `s`: its bytes (whatever its outcome), its response (status,
    /// latency from `times.intended`, service time from `times.started`, phases, upstream
    /// times, streaming, and the checks on `checked`, the response kept: `check_failed` is
    /// set when one fails) or its error; and into the epoch and the second.
    fn write(
        self,
        s: &mut WorkerStats,
        outcome: Result<transport::Response, ErrorKind>,
        traffic: &h1::Traffic,
        checked: Option<&h1::Capture>,
        check_failed: &mut bool,
    ) {
        let Record {
            t,
            target,
            times,
            end,
            late_us,
        } = self;
        // A stream's latency runs to its first message (gRPC server streams, WebSocket
        // `receive_for`); every other request's to its end.
        let answered = traffic.messages.answered_at.map_or(end, |at| at.min(end));
        let latency_us = answered.duration_since(times.intended).as_micros() as u64;
        let service_us = answered.duration_since(times.started).as_micros() as u64;
        s.last_end = Some(end);
        let record = &mut s.targets[t];
        // Every request's bytes, whatever its outcome.
        record.bytes_sent += traffic.sent;
        record.bytes_received += traffic.received;
        if target.grpc.is_some() || target.ws.is_some() {
            record
                .messages
                .record(&traffic.messages, times.intended, end);
        }
        let (latency, failed) = match outcome {
            Ok(response) => {
                let protocol_failure = traffic.messages.failure;
                let expected =
                    target.expect_status.contains(response.status) && protocol_failure.is_none();
                record.record_response(response.status, protocol_failure.is_some() || expected);
                if let Some(kind) = protocol_failure {
                    record.record_error(kind);
                    record.answered_errors += 1;
                }
                record.record_slow(latency_us, target.slow_us);
                let seen = &traffic.seen;
                record.upstream.record(seen.envoy_us, &seen.server_timing);
                record.note_alt_svc(&seen.alt_svc_h3);
                seen.record_stream(&mut record.streaming, times.intended);
                if let Some(capture) = checked {
                    let measured = checks::Measured {
                        status: response.status,
                        latency_us,
                    };
                    checks::evaluate(&target.checks, capture, measured, |i, passed| {
                        record.record_check(i, passed);
                        *check_failed |= !passed;
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

/// What [`Vu::request`] returns of `outcome`, a request of `target`: its status, or why it
/// failed (`protocol_failure`: a response whose gRPC status was not expected).
fn answer(
    outcome: &Result<transport::Response, ErrorKind>,
    target: &TargetPlan,
    protocol_failure: Option<ErrorKind>,
) -> Result<u16, ErrorKind> {
    match outcome {
        Ok(_) if protocol_failure.is_some() => Err(protocol_failure.expect("just matched")),
        Ok(response) if !target.expect_status.contains(response.status) => {
            Err(ErrorKind::UnexpectedStatus)
        }
        other => other.as_ref().map(|r| r.status).map_err(|k| *k),
    }
}

/// Records a request (`times`, ended at `end`) in its stage's health (every stage, warmup
/// included): sent, time in flight, a connect that failed for want of a file descriptor, and
/// how late it started after it was due and the virtual user was ready. Returns that lateness
/// in microseconds, 0 when requests have no schedule.
fn record_stage(
    shared: &Shared,
    s: &mut WorkerStats,
    times: Times,
    end: Instant,
    failure: Option<ErrorKind>,
) -> u64 {
    shared.add_busy(&mut s.stages, times.started, end);
    let stage = &mut s.stages[shared.stage_of(times.intended)];
    stage.sent += 1;
    stage.fd_limit += u64::from(failure == Some(ErrorKind::FdLimit));
    if !shared.scheduled {
        return 0;
    }
    let late_us = times
        .started
        .saturating_duration_since(times.intended.max(times.ready))
        .as_micros() as u64;
    stage.lateness_us.saturating_record(late_us.max(1));
    late_us
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
    async fn real_time_a_body_that_never_pauses_times_out_at_the_deadline() {
        let head = &b"HTTP/1.1 200 OK\r\nContent-Length: 100000000000\r\n\r\n"[..];
        let stream = tokio::io::join(head.chain(tokio::io::repeat(b'x')), tokio::io::sink());
        let mut conn = H1Conn::new(stream, h1::tcp_io_error);
        let mut traffic = Traffic::default();
        let started = Instant::now();
        let at = started + Duration::from_millis(200);
        let outcome = {
            let request = b"GET / HTTP/1.1\r\n\r\n";
            let exchange = std::pin::pin!(conn.exchange(request, false, None, at, &mut traffic));
            tokio::time::timeout(Duration::from_secs(3), Deadline::new().run(at, exchange)).await
        };
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
