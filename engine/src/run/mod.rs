//! The run: worker threads drive connections against the plan's targets and record what
//! happens. The hot path lives here alone.
//!
//! Shape (closed model): `W = min(CPUs, connections)` worker threads, each with its own
//! current-thread tokio runtime, own the connections spread over them. Each worker records
//! into its own [`TargetStats`] (no lock or channel per request) and, once a second, hands
//! its per-second [`SecondStats`] to the calling thread, which merges them into the time
//! series and reports progress. Per-target stats are merged once at the end.
//!
//! Latency is measured from the moment a connection starts a request (including a connect
//! when the connection has to be opened) to the last byte of the response.

mod h1;
mod h2;
mod tls;
pub mod transport;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use tokio::time::timeout_at;

use crate::plan::{Endpoint, Plan, Stop, TargetPlan};
use crate::result::TimeSample;
use crate::result::stats::{ErrorKind, SecondStats, TargetStats};

/// What a run measured, before it is turned into a result artifact.
#[derive(Debug)]
pub struct RunOutput {
    /// Wall-clock time when measuring started (after the warmup).
    pub started_at: SystemTime,
    /// From the start of measuring until the last measured request ended.
    pub elapsed: Duration,
    /// Per target, in the plan's order.
    pub targets: Vec<TargetStats>,
    /// One sample per second of measuring.
    pub time_series: Vec<TimeSample>,
    /// CPU time this process used during the run: (user, system).
    pub cpu: (Duration, Duration),
    /// The run was stopped early (Ctrl-C).
    pub interrupted: bool,
    /// Per target: protocol and TLS parameters negotiated by the check at start.
    pub negotiated: Vec<transport::Negotiated>,
}

/// A snapshot for the progress line, reported a few times a second.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Still in the warmup (nothing is counted yet).
    pub warming_up: bool,
    /// Time since measuring started (zero during the warmup).
    pub elapsed: Duration,
    /// Measured responses so far (complete seconds only).
    pub responses: u64,
    /// Failed requests so far (complete seconds only).
    pub errors: u64,
    /// Responses in the last complete second.
    pub last_second_rps: u64,
}

/// Why a run could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cannot resolve `{endpoint}`: {reason}")]
    Resolve { endpoint: Endpoint, reason: String },
    #[error("target `{endpoint}` is unreachable at start: {reason}")]
    Unreachable { endpoint: Endpoint, reason: String },
    #[error("cannot start the run: {0}")]
    Start(#[from] std::io::Error),
}

/// Everything the workers share, read-only (but for the request tickets).
struct Shared {
    targets: Vec<TargetPlan>,
    /// `endpoint_of[target]` indexes `addrs`.
    endpoint_of: Vec<usize>,
    addrs: Vec<SocketAddr>,
    /// Running sums of the targets' weights, for a weighted choice.
    cumulative_weights: Vec<u32>,
    measure_start: Instant,
    mode: Mode,
    /// When workers give up on requests still in flight.
    hard_deadline: Option<Instant>,
    stop: Arc<AtomicBool>,
    /// Virtual users per connection (HTTP/2 streams), ≥ 1.
    streams: u32,
}

enum Mode {
    Until(Instant),
    Count { total: u64, tickets: AtomicU64 },
}

impl Shared {
    #[inline]
    fn pick(&self, rng: &mut fastrand::Rng) -> usize {
        match self.cumulative_weights.as_slice() {
            [_] => 0,
            weights => {
                let total = *weights.last().expect("at least one target");
                let x = rng.u32(0..total);
                weights.iter().position(|&w| x < w).unwrap_or(0)
            }
        }
    }
}

/// One worker's per-second hand-over.
struct SecondReport {
    second: u32,
    stats: SecondStats,
}

/// A worker's own records, shared by its connection tasks (one thread, no lock).
struct WorkerStats {
    targets: Vec<TargetStats>,
    second: SecondStats,
    /// Index of the second `second` belongs to.
    second_index: u32,
    last_end: Option<Instant>,
}

/// Runs the plan's load. `stop` ends the run early (Ctrl-C); `progress` is called a few
/// times a second from this thread.
///
/// Errors: a target that cannot be resolved or connected to before the run starts.
pub fn execute(
    plan: &Plan,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunOutput, RunError> {
    let (endpoint_of, addrs, negotiated) = resolve(&plan.targets)?;
    let negotiated = endpoint_of.iter().map(|&e| negotiated[e].clone()).collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(plan.load.connections as usize)
        .max(1);
    let cumulative_weights = plan
        .targets
        .iter()
        .scan(0u32, |sum, t| {
            *sum = sum.saturating_add(t.weight);
            Some(*sum)
        })
        .collect();
    let max_timeout = plan
        .targets
        .iter()
        .map(|t| t.timeout)
        .max()
        .unwrap_or_default();

    let cpu_start = cpu_time();
    let now = Instant::now();
    let measure_start = now + plan.load.warmup;
    let started_at = SystemTime::now() + plan.load.warmup;
    let (mode, hard_deadline) = match plan.load.stop {
        Stop::Duration(d) => (
            Mode::Until(measure_start + d),
            Some(measure_start + d + max_timeout + Duration::from_secs(1)),
        ),
        Stop::Requests(total) => (
            Mode::Count {
                total,
                tickets: AtomicU64::new(0),
            },
            None,
        ),
    };
    let shared = Arc::new(Shared {
        targets: plan.targets.clone(),
        endpoint_of,
        addrs,
        cumulative_weights,
        measure_start,
        mode,
        hard_deadline,
        stop: stop.clone(),
        streams: plan.load.streams,
    });

    let (tx, rx) = mpsc::channel::<SecondReport>();
    let mut handles = Vec::with_capacity(workers);
    for w in 0..workers {
        let connections = (plan.load.connections as usize + workers - 1 - w) / workers;
        let shared = shared.clone();
        let tx = tx.clone();
        let handle = std::thread::Builder::new()
            .name(format!("loadgate-worker-{w}"))
            .spawn(move || worker(w, shared, connections, tx))?;
        handles.push(handle);
    }
    drop(tx);

    // Merge the per-second reports; a second is final once every worker has handed it over.
    let mut open: BTreeMap<u32, (usize, SecondStats)> = BTreeMap::new();
    let mut time_series = Vec::new();
    let mut totals = (0u64, 0u64);
    loop {
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(report) => {
                let entry = open.entry(report.second).or_default();
                entry.0 += 1;
                entry.1.merge(&report.stats);
                if entry.0 == workers {
                    let (_, stats) = open.remove(&report.second).expect("present");
                    totals.0 += stats.responses;
                    totals.1 += stats.errors;
                    time_series.push(stats.sample(report.second));
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        progress(&Progress {
            warming_up: now < measure_start,
            elapsed: now.saturating_duration_since(measure_start),
            responses: totals.0,
            errors: totals.1,
            last_second_rps: time_series.last().map_or(0, |s: &TimeSample| s.responses),
        });
    }
    for (second, (_, stats)) in open {
        time_series.push(stats.sample(second));
    }
    time_series.sort_by_key(|s| s.second);

    let mut targets: Vec<TargetStats> = plan
        .targets
        .iter()
        .map(|_| TargetStats::default())
        .collect();
    let mut last_end = measure_start;
    for handle in handles {
        let stats = handle.join().expect("a worker thread does not panic");
        for (sum, s) in targets.iter_mut().zip(&stats.targets) {
            sum.merge(s);
        }
        if let Some(end) = stats.last_end {
            last_end = last_end.max(end);
        }
    }
    let cpu_end = cpu_time();
    Ok(RunOutput {
        started_at,
        elapsed: last_end.saturating_duration_since(measure_start),
        targets,
        time_series,
        cpu: (
            cpu_end.0.saturating_sub(cpu_start.0),
            cpu_end.1.saturating_sub(cpu_start.1),
        ),
        interrupted: stop.load(Ordering::Relaxed),
        negotiated,
    })
}

/// Resolves each distinct endpoint (connection slot: endpoint and transport) once and checks
/// that it accepts a connection (with TLS and HTTP/2 as the run will speak them).
#[allow(clippy::type_complexity)]
fn resolve(
    targets: &[TargetPlan],
) -> Result<(Vec<usize>, Vec<SocketAddr>, Vec<transport::Negotiated>), RunError> {
    let mut endpoints: Vec<&TargetPlan> = Vec::new();
    let mut addrs = Vec::new();
    let mut negotiated = Vec::new();
    let mut endpoint_of = Vec::with_capacity(targets.len());
    for target in targets {
        if let Some(i) = endpoints
            .iter()
            .position(|e| e.shares_connections_with(target))
        {
            endpoint_of.push(i);
            continue;
        }
        let endpoint = &target.endpoint;
        let addr = (endpoint.host.as_str(), endpoint.port)
            .to_socket_addrs()
            .map_err(|e| e.to_string())
            .and_then(|mut a| a.next().ok_or_else(|| "no address".to_string()))
            .map_err(|reason| RunError::Resolve {
                endpoint: endpoint.clone(),
                reason,
            })?;
        negotiated.push(
            transport::check(addr, target, target.timeout).map_err(|reason| {
                RunError::Unreachable {
                    endpoint: endpoint.clone(),
                    reason,
                }
            })?,
        );
        endpoint_of.push(endpoints.len());
        endpoints.push(target);
        addrs.push(addr);
    }
    Ok((endpoint_of, addrs, negotiated))
}

fn cpu_time() -> (Duration, Duration) {
    use nix::sys::resource::{UsageWho, getrusage};
    match getrusage(UsageWho::RUSAGE_SELF) {
        Ok(usage) => {
            let d = |t: nix::sys::time::TimeVal| {
                Duration::from_secs(t.tv_sec().max(0) as u64)
                    + Duration::from_micros(t.tv_usec().max(0) as u64)
            };
            (d(usage.user_time()), d(usage.system_time()))
        }
        Err(_) => (Duration::ZERO, Duration::ZERO),
    }
}

fn worker(
    index: usize,
    shared: Arc<Shared>,
    connections: usize,
    tx: mpsc::Sender<SecondReport>,
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
        second: SecondStats::default(),
        second_index: 0,
        last_end: None,
    }));
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async {
        // `streams` virtual users per connection: each group shares its HTTP/2 connections.
        let streams = shared.streams as usize;
        let groups: Vec<Rc<transport::Group>> = (0..connections)
            .map(|_| Rc::new(transport::Group::new(shared.addrs.len())))
            .collect();
        let tasks: Vec<_> = (0..connections * streams)
            .map(|c| {
                let seed = ((index as u64) << 32) | c as u64;
                let group = groups[c / streams].clone();
                tokio::task::spawn_local(connection(shared.clone(), stats.clone(), group, seed))
            })
            .collect();
        let ticker = tokio::task::spawn_local(ticker(shared.clone(), stats.clone(), tx.clone()));
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
    let _ = tx.send(SecondReport {
        second: stats.second_index,
        stats: last,
    });
    stats
}

/// Hands the worker's per-second stats over once a second, from the start of measuring.
async fn ticker(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    tx: mpsc::Sender<SecondReport>,
) {
    let mut second = 0u32;
    loop {
        let boundary = shared.measure_start + Duration::from_secs(u64::from(second) + 1);
        tokio::time::sleep_until(boundary.into()).await;
        let report = {
            let mut s = stats.borrow_mut();
            s.second_index = second + 1;
            SecondReport {
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

/// One connection (virtual user) of the closed model: request, response, next request.
async fn connection(
    shared: Arc<Shared>,
    stats: Rc<RefCell<WorkerStats>>,
    group: Rc<transport::Group>,
    seed: u64,
) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut conns: Vec<Option<transport::Conn>> = shared.addrs.iter().map(|_| None).collect();
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let t = shared.pick(&mut rng);
        let target = &shared.targets[t];
        let start = Instant::now();
        let measured = match &shared.mode {
            Mode::Until(deadline) => {
                if start >= *deadline {
                    break;
                }
                start >= shared.measure_start
            }
            Mode::Count { total, tickets } => {
                if start < shared.measure_start {
                    false
                } else if tickets.fetch_add(1, Ordering::Relaxed) >= *total {
                    break;
                } else {
                    true
                }
            }
        };
        let e = shared.endpoint_of[t];
        let conn = &mut conns[e];
        let deadline = (start + target.timeout).into();
        let outcome = timeout_at(deadline, async {
            if conn.is_none() {
                *conn = Some(transport::connect(shared.addrs[e], target, &group, e).await?);
            }
            let c = conn.as_mut().expect("just connected");
            c.exchange(target, shared.addrs[e], &group, e).await
        })
        .await;
        let end = Instant::now();
        let outcome = match outcome {
            Ok(result) => result,
            Err(_elapsed) if conn.is_none() => Err(ErrorKind::ConnectTimeout),
            Err(_elapsed) => Err(ErrorKind::Timeout),
        };
        match &outcome {
            Ok(response) if response.keep_alive => {}
            _ => *conn = None,
        }
        if measured {
            let latency_us = end.duration_since(start).as_micros() as u64;
            let mut s = stats.borrow_mut();
            let s = &mut *s;
            s.last_end = Some(end);
            let record = &mut s.targets[t];
            match outcome {
                Ok(response) => {
                    let expected = target.expect_status.contains(response.status);
                    record.record_response(response.status, latency_us, expected);
                    record.phases.record(&response.timing);
                    record.bytes_sent += target.request.len() as u64;
                    record.bytes_received += response.bytes;
                    s.second.responses += 1;
                    s.second.errors += u64::from(!expected);
                    s.second.latency_us.saturating_record(latency_us.max(1));
                }
                Err(kind) => {
                    record.record_error(kind);
                    s.second.errors += 1;
                }
            }
        }
        if conn.is_none() {
            // After an error or a closed connection: let the other tasks run, so that a
            // target failing fast cannot starve this thread.
            tokio::task::yield_now().await;
        }
    }
}
