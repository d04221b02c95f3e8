//! The run: worker threads drive connections against the plan's targets and record what
//! happens. The hot path lives here alone.
//!
//! Shape: `W = min(CPUs, concurrency)` worker threads, each with its own current-thread tokio
//! runtime, own the virtual users (connections) spread over them (see [`vu`]). Each worker
//! records into its own [`TargetStats`] (no lock or channel per request) and, once a second,
//! hands its per-second [`SecondStats`] to the calling thread, which merges them into the time
//! series and reports progress. Per-target and per-stage stats are merged once at the end.
//!
//! Latency is measured from when a request was due (its intended start on the open model's
//! schedule or a paced connection's, else its actual start; wrk2's correction for coordinated
//! omission) to the last byte of the response; service time from its actual start (including
//! a connect when the connection had to be opened).

mod checks;
mod h1;
mod h2;
mod timer;
mod tls;
pub mod transport;
mod vu;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use tokio::time::timeout_at;

use crate::plan::{Endpoint, LoadPlan, Model, Plan, Stop, TargetPlan};
use crate::result::TimeSample;
use crate::result::stats::{SecondStats, StageStats, TargetStats};
use crate::result::watch::{Watch, WindowVerdict};

/// What a run measured, before it is turned into a result artifact.
#[derive(Debug)]
pub struct RunOutput {
    /// Wall-clock time when measuring started (after the warmup).
    pub started_at: SystemTime,
    /// The measured window: the planned duration; in count mode, or when the run was stopped
    /// early, from the start of measuring until the last measured request ended.
    pub elapsed: Duration,
    /// Per target, in the plan's order.
    pub targets: Vec<TargetStats>,
    /// Per stage of the load, in the plan's order.
    pub stages: Vec<StageStats>,
    /// CPU time (user + system) this process used during each stage, in seconds.
    pub stage_cpu_s: Vec<f64>,
    /// One sample per second of measuring.
    pub time_series: Vec<TimeSample>,
    /// CPU time this process used during the run: (user, system).
    pub cpu: (Duration, Duration),
    /// The run was stopped early (Ctrl-C).
    pub interrupted: bool,
    /// Index (in the plan's `slo`) of the `abort_on_fail` threshold that stopped the run.
    pub aborted_by: Option<usize>,
    /// Window thresholds' verdicts, indexed like the plan's `slo`.
    pub windows: Vec<Option<WindowVerdict>>,
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

/// How often the calling thread looks at reports, progress and `stop`.
pub const COLLECT_INTERVAL: Duration = Duration::from_millis(250);

/// Everything the workers share, read-only (but for the request tickets).
struct Shared {
    targets: Vec<TargetPlan>,
    /// `endpoint_of[target]` indexes `addrs`.
    endpoint_of: Vec<usize>,
    addrs: Vec<SocketAddr>,
    /// Running sums of the targets' weights, for a weighted choice.
    cumulative_weights: Vec<u32>,
    load: LoadPlan,
    /// Requests have a due time apart from their start (open model, pacing): record lateness.
    scheduled: bool,
    start: Instant,
    /// Start of each stage.
    stage_starts: Vec<Instant>,
    measure_start: Instant,
    /// End of the stages (duration mode).
    end: Option<Instant>,
    /// Count mode: the number of measured requests, and how many have been started.
    tickets: Option<(u64, AtomicU64)>,
    /// When workers give up on requests still in flight.
    hard_deadline: Option<Instant>,
    stop: Arc<AtomicBool>,
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

    /// Seconds from the start of the run to `t`.
    fn secs(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.start).as_secs_f64()
    }

    /// The instant `secs` seconds after the start.
    fn at(&self, secs: f64) -> Instant {
        self.start + Duration::from_secs_f64(secs.max(0.0))
    }

    /// Index of the stage that `t` falls in.
    #[inline]
    fn stage_of(&self, t: Instant) -> usize {
        self.stage_starts.iter().rposition(|s| *s <= t).unwrap_or(0)
    }

    /// Whether the run was stopped (Ctrl-C, or an `abort_on_fail` threshold).
    #[inline]
    fn halted(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Whether nothing due at `t` may start any more: stopped, or past the end of the stages.
    #[inline]
    fn over(&self, t: Instant) -> bool {
        self.halted() || self.end.is_some_and(|end| t >= end)
    }

    /// May a request due at `intended` start? `None`: the run is over. `Some(measured)`:
    /// yes, and whether it is counted (it is due after the warmup).
    #[inline]
    fn admit(&self, intended: Instant) -> Option<bool> {
        if self.over(intended) {
            return None;
        }
        if intended < self.measure_start {
            return Some(false);
        }
        if let Some((total, tickets)) = &self.tickets
            && tickets.fetch_add(1, Ordering::Relaxed) >= *total
        {
            return None;
        }
        Some(true)
    }
}

/// One worker's per-second hand-over.
enum Report {
    /// What completed in one second.
    Second { second: u32, stats: SecondStats },
    /// The worker has ended; its last report was for second `last`.
    Done { last: u32 },
}

/// Merges the workers' per-second reports on the calling thread. A second is final once every
/// worker still running has handed it over; finished workers count as having reported.
struct Collector {
    workers: usize,
    measure_start: Instant,
    open: BTreeMap<u32, (usize, SecondStats)>,
    /// Last seconds of the workers that have ended.
    finished: Vec<u32>,
    time_series: Vec<TimeSample>,
    /// Measured responses and errors in final seconds.
    totals: (u64, u64),
    watch: Watch,
    aborted_by: Option<usize>,
}

impl Collector {
    /// Takes a report; returns true when an `abort_on_fail` threshold has just failed.
    fn take(&mut self, report: Report) -> bool {
        match report {
            Report::Second { second, stats } => {
                let entry = self.open.entry(second).or_default();
                entry.0 += 1;
                entry.1.merge(&stats);
            }
            Report::Done { last } => self.finished.push(last),
        }
        let mut abort = false;
        while let Some((&second, entry)) = self.open.first_key_value() {
            let ended = self.finished.iter().filter(|&&last| last < second).count();
            if entry.0 + ended < self.workers {
                break;
            }
            let (_, stats) = self.open.remove(&second).expect("present");
            abort |= self.finalize(second, stats);
        }
        abort
    }

    fn finalize(&mut self, second: u32, stats: SecondStats) -> bool {
        self.totals.0 += stats.responses;
        self.totals.1 += stats.errors;
        self.time_series.push(stats.sample(second));
        let whole =
            self.measure_start + Duration::from_secs(u64::from(second) + 1) <= Instant::now();
        if whole && !self.watch.is_idle() && self.aborted_by.is_none() {
            self.aborted_by = self.watch.second(&stats);
            return self.aborted_by.is_some();
        }
        false
    }
}

/// A worker's own records, shared by its connection tasks (one thread, no lock).
struct WorkerStats {
    targets: Vec<TargetStats>,
    stages: Vec<StageStats>,
    second: SecondStats,
    /// Index of the second `second` belongs to.
    second_index: u32,
    last_end: Option<Instant>,
}

/// Runs the plan's load. `stop` ends the run early (Ctrl-C; noticed within
/// [`COLLECT_INTERVAL`]); `progress` is called a few times a second from this thread.
///
/// Errors: a target that cannot be resolved or connected to before the run starts.
pub fn execute(
    plan: &Plan,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunOutput, RunError> {
    let (endpoint_of, addrs, negotiated) = resolve(&plan.targets)?;
    let negotiated = endpoint_of.iter().map(|&e| negotiated[e].clone()).collect();
    let load = plan.load.clone();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(load.connection_groups())
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

    // Workers stop on `halt`: set on Ctrl-C (`stop`) or by an `abort_on_fail` threshold.
    let halt = Arc::new(AtomicBool::new(false));
    let cpu_start = cpu_time();
    let start = Instant::now();
    let measure_start = start + load.warmup();
    let started_at = SystemTime::now() + load.warmup();
    let mut stage_starts = Vec::with_capacity(load.stages.len());
    let mut stage_start = start;
    for stage in &load.stages {
        stage_starts.push(stage_start);
        stage_start += stage.duration.unwrap_or_default();
    }
    let end = load.measured_duration().map(|d| measure_start + d);
    let shared = Arc::new(Shared {
        targets: plan.targets.clone(),
        endpoint_of,
        addrs,
        cumulative_weights,
        scheduled: load.model == Model::Open || load.pacing.is_some(),
        stage_starts: stage_starts.clone(),
        tickets: match load.stop {
            Stop::Requests(n) => Some((n, AtomicU64::new(0))),
            Stop::Duration(_) => None,
        },
        hard_deadline: end.map(|end| end + max_timeout + Duration::from_secs(1)),
        load,
        start,
        measure_start,
        end,
        stop: halt.clone(),
    });

    let (tx, rx) = mpsc::channel::<Report>();
    let mut handles = Vec::with_capacity(workers);
    for w in 0..workers {
        let shared = shared.clone();
        let tx = tx.clone();
        let handle = std::thread::Builder::new()
            .name(format!("loadgate-worker-{w}"))
            .spawn(move || worker(w, workers, shared, tx))?;
        handles.push(handle);
    }
    drop(tx);

    // CPU time used up to the start of each stage (and the end of the last), sampled here.
    let mut stage_cpu = vec![cpu_start];
    let mut collector = Collector {
        workers,
        measure_start,
        open: BTreeMap::new(),
        finished: Vec::new(),
        time_series: Vec::new(),
        totals: (0, 0),
        watch: Watch::new(&plan.slo),
        aborted_by: None,
    };
    let mut halted_at: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) && halted_at.is_none() {
            halt.store(true, Ordering::Relaxed);
            halted_at = Some(Instant::now());
        }
        match rx.recv_timeout(COLLECT_INTERVAL) {
            Ok(report) => {
                if collector.take(report) && halted_at.is_none() {
                    halt.store(true, Ordering::Relaxed);
                    halted_at = Some(Instant::now());
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        while stage_cpu.len() < stage_starts.len() && stage_starts[stage_cpu.len()] <= now {
            stage_cpu.push(cpu_time());
        }
        progress(&Progress {
            warming_up: now < measure_start,
            elapsed: now.saturating_duration_since(measure_start),
            responses: collector.totals.0,
            errors: collector.totals.1,
            last_second_rps: collector.time_series.last().map_or(0, |s| s.responses),
        });
    }
    let mut time_series = collector.time_series;
    for (second, (_, stats)) in collector.open {
        time_series.push(stats.sample(second));
    }
    time_series.sort_by_key(|s| s.second);

    let mut targets: Vec<TargetStats> = plan
        .targets
        .iter()
        .map(|_| TargetStats::default())
        .collect();
    let mut stages: Vec<StageStats> = shared
        .load
        .stages
        .iter()
        .map(|_| StageStats::default())
        .collect();
    let mut last_end = measure_start;
    for handle in handles {
        let stats = handle.join().expect("a worker thread does not panic");
        for (sum, s) in targets.iter_mut().zip(&stats.targets) {
            sum.merge(s);
        }
        for (sum, s) in stages.iter_mut().zip(&stats.stages) {
            sum.merge(s);
        }
        if let Some(end) = stats.last_end {
            last_end = last_end.max(end);
        }
    }
    let cpu_end = cpu_time();
    stage_cpu.push(cpu_end);
    let stage_cpu_s = stage_cpu
        .windows(2)
        .map(|w| {
            (w[1].0 + w[1].1)
                .saturating_sub(w[0].0 + w[0].1)
                .as_secs_f64()
        })
        .chain(std::iter::repeat(0.0))
        .take(stages.len())
        .collect();
    Ok(RunOutput {
        started_at,
        // The planned measured time, unless the run ended early or on a count.
        elapsed: match (halted_at, shared.load.stop) {
            (None, Stop::Duration(planned)) => planned,
            _ => last_end.saturating_duration_since(measure_start),
        },
        targets,
        stages,
        stage_cpu_s,
        time_series,
        cpu: (
            cpu_end.0.saturating_sub(cpu_start.0),
            cpu_end.1.saturating_sub(cpu_start.1),
        ),
        interrupted: stop.load(Ordering::Relaxed),
        aborted_by: collector.aborted_by,
        windows: collector.watch.finish(),
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
        let candidates: Vec<SocketAddr> = (endpoint.host.as_str(), endpoint.port)
            .to_socket_addrs()
            .map_err(|e| RunError::Resolve {
                endpoint: endpoint.clone(),
                reason: e.to_string(),
            })?
            .collect();
        // The first address that accepts a connection (`localhost` may give ::1 first to a
        // server listening on 127.0.0.1 only); a single address is left to the check below,
        // so that the check at start opens one connection per endpoint.
        let mut reason = "no address".to_string();
        let addr = candidates
            .iter()
            .find(|addr| {
                candidates.len() == 1
                    || match std::net::TcpStream::connect_timeout(addr, target.timeout) {
                        Ok(_) => true,
                        Err(e) => {
                            reason = format!("{addr}: {e}");
                            false
                        }
                    }
            })
            .copied()
            .ok_or_else(|| RunError::Unreachable {
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
