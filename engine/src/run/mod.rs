//! The run: worker threads drive connections against the plan's targets and record what
//! happens. The hot path lives here alone.
//!
//! Shape: `W = min(load.threads or CPUs, concurrency)` worker threads, each with its own
//! current-thread tokio runtime, own the virtual users (connections) spread over them (see
//! `vu.rs`; each request sent and recorded in `exchange.rs`). Each worker records into its own `TargetStats` (no lock or channel per request)
//! and, at the end of each epoch (a second; a fraction of one for `loadgate ab`), hands that
//! epoch's `SpanStats` (all targets) to the calling thread, with each target's of the second
//! at a second's end; the calling thread merges them into the epoch series and the time
//! series (per second, the run's and each target's, histograms encoded as each second ends)
//! and reports progress. The responses' times go to the calling thread in batches of 1,024
//! (`worker.rs`), which records each target's histograms once for the run (`collect.rs`), so
//! that a target's histograms are not paid once per worker thread. Per-target counters and
//! per-stage stats are merged once at the end. Before
//! the clock starts, the workers may open the first level's connections and send a warmup of
//! N requests (`pre.rs`).
//!
//! With flows, the unit of work is an iteration of a flow (`flow/`): its steps' requests are
//! sent and recorded as targets' are (rendered per request, `multiplexed::Outgoing`), and each
//! worker's iterations are recorded in its own `FlowStats`, merged once at the end.
//!
//! Latency is measured from when a request was due (its intended start on the open model's
//! schedule or a paced connection's, else its actual start; wrk2's correction for coordinated
//! omission; `exchange::Times`) to the last byte of the response; service time from its actual
//! start (including a connect when the connection had to be opened).

mod checks;
mod clock;
mod collect;
mod deadline;
mod exchange;
#[cfg(test)]
mod fake;
mod flow;
mod grpc;
mod h1;
mod h2;
mod h3;
mod limits;
mod multiplexed;
mod open;
mod output;
mod pause;
mod pre;
mod redirect;
mod resolve;
pub(crate) mod sample;
mod scenarios;
mod shared;
mod slot;
mod stream;
mod timer;
mod tls;
mod transport;
#[cfg(test)]
mod virtual_clock;
#[cfg(test)]
mod virtual_executors;
mod vu;
mod worker;
mod worker_stats;
mod ws;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use crate::measure::{FlowStats, StageStats, TargetStats};
use crate::plan::{Plan, Stop};
use collect::{Collector, Report};
pub use limits::FileLimit;
pub(crate) use output::{Negotiated, NegotiatedTls};
pub use output::{Progress, RunError, RunOutput};
pub use scenarios::execute_scenarios;
use shared::{Shared, StopFlags};
use worker_stats::WorkerStats;

/// How often the calling thread looks at reports, progress and `stop`.
pub(crate) const COLLECT_INTERVAL: Duration = Duration::from_millis(250);

/// Runs the plan's load. `stop` ends the run early (Ctrl-C; noticed within 250 ms);
/// `progress` is called a few times a second from this thread.
///
/// Raises the soft open-files limit to the hard limit first (Unix). With a planned start
/// (`plan.start_at`, `--start-at`), the targets are resolved and checked first, then the run
/// waits until then (a `stop` ends the wait, and the run, within 250 ms) and starts on it:
/// with a warmup, its connections open in the warmup (`Ready::on_given_clock`), so that
/// time zero is the planned start; without one, they open before the clock (pre-connect),
/// as does a warmup of N requests, which moves time zero by their length (the result's
/// `started_at` shows it).
///
/// Errors: a target that cannot be resolved or connected to before the run starts; an
/// open-files limit below what the run needs ([`RunError::FileLimit`]).
pub fn execute(
    plan: &Plan,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunOutput, RunError> {
    let ready = prepare(plan)?;
    let (ready, start) = match plan.start_at {
        Some(at) if !plan.load.warmup().is_zero() => {
            (ready.on_given_clock(), wait_until(at, &stop))
        }
        Some(at) => (ready, wait_until(at, &stop)),
        None => (ready, Instant::now()),
    };
    ready.run(start, stop, progress)
}

/// Sleeps until the wall clock reads `at`, or `stop` is set (looked at every
/// [`COLLECT_INTERVAL`]); returns `at` as an instant (in the past when `at` is: the schedule
/// stays on the wall clock), or now when the wait was stopped.
fn wait_until(at: SystemTime, stop: &AtomicBool) -> Instant {
    let now = Instant::now();
    let start = match at.duration_since(SystemTime::now()) {
        Ok(ahead) => now + ahead,
        Err(past) => now.checked_sub(past.duration()).unwrap_or(now),
    };
    while !stop.load(Ordering::Relaxed) {
        let left = start.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(COLLECT_INTERVAL));
    }
    start.min(Instant::now())
}

/// A plan whose targets are resolved and checked (the check at start), ready to run: what
/// [`execute`] does before the load starts, apart, so that two runs can start on one clock
/// (`loadgate ab`).
pub(crate) struct Ready<'a> {
    plan: &'a Plan,
    endpoint_of: Vec<usize>,
    addrs: Vec<SocketAddr>,
    negotiated: Vec<Negotiated>,
    epoch: Duration,
    /// What the run needs of file descriptors.
    budget: FileLimit,
    /// Open the first level's connections before the clock starts, as the plan says
    /// (`load.pre_connect`); false on a given clock ([`Ready::on_given_clock`]).
    pre_connect: bool,
}

/// Raises the open-files limit, checks that it covers the run, then resolves and checks the
/// plan's targets. Errors: an open-files limit too low for the run; a target that cannot be
/// resolved or connected to.
pub(crate) fn prepare(plan: &Plan) -> Result<Ready<'_>, RunError> {
    let budget = raise_file_limit(plan)?;
    let (endpoint_of, addrs, negotiated) = resolve::resolve(&plan.targets, budget)?;
    let negotiated = endpoint_of.iter().map(|&e| negotiated[e].clone()).collect();
    Ok(Ready {
        plan,
        endpoint_of,
        addrs,
        negotiated,
        epoch: Duration::from_secs(1),
        budget,
        pre_connect: true,
    })
}

/// Raises the soft open-files limit to the hard limit (Unix; best effort) and checks that it
/// covers what a run of `plan` needs ([`FileLimit::needed`]): its connections, its worker
/// threads and a reserve. [`execute`] does this first; a caller that opens descriptors of its
/// own before (a signal watcher, a service's pipes) may do it earlier. Returns the run's
/// budget. Errors: [`RunError::FileLimit`].
///
/// With scenarios (`plan.scenarios`), it counts every scenario's connections, timers and
/// worker threads (each scenario's share of the CPUs, as [`execute_scenarios`] runs them).
pub fn raise_file_limit(plan: &Plan) -> Result<FileLimit, RunError> {
    let (descriptors, threads) = if plan.scenarios.is_empty() {
        descriptors_of(plan)
    } else {
        scenarios::plans(plan)
            .iter()
            .map(descriptors_of)
            .fold((0, 0), |(d, t), (dn, tn)| (d + dn, t + tn))
    };
    limits::raise_and_check(descriptors, threads)
}

/// The descriptors a run of `plan` (no scenarios) holds at once, connections and precise
/// timers, and its worker threads.
fn descriptors_of(plan: &Plan) -> (u64, u64) {
    let slots = resolve::slots(&plan.targets).1.len();
    let connections = plan.load.connection_groups() * slots;
    // A paced virtual user holds a precise timer: a descriptor (a timerfd) on Linux.
    let timers = if plan.load.pacing.is_some() {
        plan.load.request_loops()
    } else {
        0
    };
    ((connections + timers) as u64, workers(plan) as u64)
}

/// Worker threads of a run: `load.threads`, else one per CPU; at most one per connection
/// group. With scenarios, every scenario's (each its share of the CPUs when its load gives
/// no `threads`, as [`execute_scenarios`] runs them), summed.
pub(crate) fn workers(plan: &Plan) -> usize {
    if plan.scenarios.is_empty() {
        workers_for(&plan.load)
    } else {
        scenarios::plans(plan)
            .iter()
            .map(|sub| workers_for(&sub.load))
            .sum()
    }
}

/// [`workers`] for `load`.
fn workers_for(load: &crate::plan::LoadPlan) -> usize {
    load.threads
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |threads| threads as usize,
        )
        .min(load.connection_groups())
        .max(1)
}

impl Ready<'_> {
    /// Epochs of `epoch` (a whole fraction of a second: 1 s, 500 ms, 250 ms, …) in the run's
    /// [`RunOutput::epochs`] instead of seconds.
    ///
    /// # Panics
    /// When `epoch` does not divide a second (the caller checks its input).
    pub(crate) fn with_epoch(self, epoch: Duration) -> Self {
        let (second, e) = (Duration::from_secs(1).as_nanos(), epoch.as_nanos());
        assert!(e > 0 && second % e == 0, "an epoch divides a second");
        Ready { epoch, ..self }
    }

    /// Keeps the schedule's time zero at the `start` given to [`Ready::run`] (two sides of
    /// `loadgate ab` share one clock): no connections are opened before it. A warmup of N
    /// requests (`load.warmup: N`) still comes first and moves it.
    pub(crate) fn on_given_clock(self) -> Self {
        Ready {
            pre_connect: false,
            ..self
        }
    }

    /// Runs the load with its schedule's time zero at `start` (now, or shortly after: the
    /// first stage, its arrivals and the warmup count from it), as [`execute`] describes. The
    /// work before the clock (pre-connect, a warmup of N requests: `pre.rs`) comes first; when
    /// it ends after `start`, time zero is when it ends.
    pub(crate) fn run(
        self,
        start: Instant,
        stop: Arc<AtomicBool>,
        progress: &mut dyn FnMut(&Progress),
    ) -> Result<RunOutput, RunError> {
        let Ready {
            plan,
            endpoint_of,
            addrs,
            negotiated,
            epoch,
            budget,
            pre_connect,
        } = self;
        let workers = workers(plan);
        // Workers stop on `halt`: set on Ctrl-C (`stop`) or by an `abort_on_fail` threshold.
        let halt = Arc::new(AtomicBool::new(false));
        let lay_out = |start| {
            let addrs = (endpoint_of.clone(), addrs.clone());
            Arc::new(Shared::new(
                (plan, workers),
                addrs,
                start,
                epoch,
                halt.clone(),
            ))
        };
        let shared = lay_out(start);
        // Work before the clock starts (pre-connect, a warmup of N requests): see `pre.rs`.
        let (gates, opener) = pre::gates(workers, pre::work(&plan.load, pre_connect));
        let (tx, rx) = mpsc::channel::<Report>();
        let mut handles = Vec::with_capacity(workers);
        for (w, gate) in gates.into_iter().enumerate() {
            let (for_worker, worker_tx) = (shared.clone(), tx.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("loadgate-worker-{w}"))
                .spawn(move || worker::worker(w, workers, for_worker, worker_tx, gate));
            match spawned {
                Ok(handle) => handles.push(handle),
                Err(e) => {
                    // Stop the workers already started before giving up.
                    halt.store(true, Ordering::Relaxed);
                    drop((tx, opener));
                    let _ = join(handles, &shared);
                    return Err(limits::start_error(e, budget));
                }
            }
        }
        drop(tx);
        let flags = StopFlags {
            stop: &stop,
            halt: &halt,
        };
        let shared = match opener {
            Some(opener) => opener.open(start, flags, lay_out),
            None => shared,
        };
        let cpu_start = cpu_time();
        // Time zero on the wall clock, exact whether it is still ahead or has just passed.
        let (now, wall_now) = (Instant::now(), SystemTime::now());
        let started_at = wall_now + shared.start.saturating_duration_since(now)
            - now.saturating_duration_since(shared.start)
            + plan.load.warmup();

        let mut collector = Collector::new(
            (workers, plan.targets.len()),
            shared.measure_start,
            epoch,
            &plan.slo,
        );
        let (halted_at, mut stage_cpu) =
            collect(&shared, &rx, flags, &mut collector, cpu_start, progress);
        let mut collected = collector.finish();
        let (counted, stages, flows, last_end, udp_buffers) =
            join(handles, &shared).map_err(|e| limits::start_error(e, budget))?;
        // The targets' histograms (the calling thread's) with the workers' counters.
        let mut targets = std::mem::take(&mut collected.targets);
        for (target, counts) in targets.iter_mut().zip(&counted) {
            target.merge(counts);
        }
        // A data file read `once` has run out: the run ended as on a count.
        let used_up = shared.flows.used_up.load(Ordering::Relaxed);
        let cpu_end = cpu_time();
        stage_cpu.push(cpu_end);
        Ok(RunOutput {
            started_at,
            elapsed: elapsed(&shared, halted_at.is_some() || used_up, last_end),
            stage_cpu_s: stage_cpu_s(&stage_cpu, stages.len()),
            targets,
            flows,
            stages,
            time_series: collected.time_series,
            epochs: collected.epochs,
            cpu: (
                cpu_end.0.saturating_sub(cpu_start.0),
                cpu_end.1.saturating_sub(cpu_start.1),
            ),
            interrupted: stop.load(Ordering::Relaxed),
            aborted_by: collected.aborted_by,
            windows: collected.windows,
            negotiated,
            udp_buffers,
        })
    }
}

/// The measured window of a run ([`RunOutput::elapsed`]): the planned duration; a count run's
/// `max_duration` when it ended there with tickets left; else, when the run ended early
/// (`early`) or on its count, from the start of measuring to `last_end`, when the last measured
/// request ended.
fn elapsed(shared: &Shared, early: bool, last_end: Instant) -> Duration {
    let cut = shared.tickets.as_ref().is_some_and(|t| t.left() > 0);
    match (early, shared.load.stop, shared.load.max_duration) {
        (false, Stop::Duration(planned), _) => planned,
        (false, Stop::Requests(_), Some(max)) if cut => max,
        _ => last_end.saturating_duration_since(shared.measure_start),
    }
}

/// The calling thread's loop until every worker has ended: takes the workers' reports, sets
/// `flags.halt` on `flags.stop` or when an `abort_on_fail` threshold fails, samples the CPU time at each
/// stage's start and reports progress. Returns when the run was halted, and the CPU times
/// sampled (the first is `cpu_start`).
fn collect(
    shared: &Shared,
    rx: &mpsc::Receiver<Report>,
    flags: StopFlags<'_>,
    collector: &mut Collector,
    cpu_start: (Duration, Duration),
    progress: &mut dyn FnMut(&Progress),
) -> (Option<Instant>, Vec<(Duration, Duration)>) {
    // CPU time used up to the start of each stage (and the end of the last), sampled here.
    let mut stage_cpu = vec![cpu_start];
    let mut halted_at: Option<Instant> = None;
    loop {
        if flags.stop.load(Ordering::Relaxed) && halted_at.is_none() {
            flags.halt.store(true, Ordering::Relaxed);
            halted_at = Some(Instant::now());
        }
        match rx.recv_timeout(COLLECT_INTERVAL) {
            Ok(report) => {
                if collector.take(report) && halted_at.is_none() {
                    flags.halt.store(true, Ordering::Relaxed);
                    halted_at = Some(Instant::now());
                }
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        let now = Instant::now();
        let stage_starts = &shared.stage_starts;
        while stage_cpu.len() < stage_starts.len() && stage_starts[stage_cpu.len()] <= now {
            stage_cpu.push(cpu_time());
        }
        progress(&collector.progress(now));
    }
    (halted_at, stage_cpu)
}

/// The workers' records, merged: per target, per stage, per flow, when the last measured
/// request ended, and the smallest UDP buffers of their QUIC endpoints.
type Joined = (
    Vec<TargetStats>,
    Vec<StageStats>,
    Vec<FlowStats>,
    Instant,
    Option<crate::udp::UdpBuffers>,
);

/// Waits for the workers and merges their records: per target, per stage, per flow, when the
/// last measured request ended (the start of measuring when none did), and the smallest UDP
/// buffers of their QUIC endpoints. Errors: why a worker could not start its runtime.
fn join(
    handles: Vec<JoinHandle<std::io::Result<WorkerStats>>>,
    shared: &Shared,
) -> std::io::Result<Joined> {
    let mut targets: Vec<TargetStats> = shared
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
    let mut flows: Vec<FlowStats> = shared
        .flows
        .plans
        .iter()
        .map(|_| FlowStats::default())
        .collect();
    let mut last_end = shared.measure_start;
    let mut udp_buffers = None;
    let mut failed = None;
    for handle in handles {
        let stats = match handle.join().expect("a worker thread does not panic") {
            Ok(stats) => stats,
            Err(e) => {
                failed.get_or_insert(e);
                continue;
            }
        };
        for (sum, s) in targets.iter_mut().zip(&stats.targets) {
            sum.merge(s);
        }
        for (sum, s) in stages.iter_mut().zip(&stats.stages) {
            sum.merge(s);
        }
        for (sum, s) in flows.iter_mut().zip(&stats.flows) {
            sum.merge(s);
        }
        if let Some(end) = stats.last_end {
            last_end = last_end.max(end);
        }
        if let Some(got) = stats.udp_buffers {
            udp_buffers = Some(udp_buffers.map_or(got, |b| h3::smallest(b, got)));
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok((targets, stages, flows, last_end, udp_buffers)),
    }
}

/// The CPU time (user + system, seconds) used in each of `stages` stages, from the CPU times
/// sampled at their starts and at the end; 0 for stages the run did not reach.
fn stage_cpu_s(samples: &[(Duration, Duration)], stages: usize) -> Vec<f64> {
    samples
        .windows(2)
        .map(|w| {
            (w[1].0 + w[1].1)
                .saturating_sub(w[0].0 + w[0].1)
                .as_secs_f64()
        })
        .chain(std::iter::repeat(0.0))
        .take(stages)
        .collect()
}

/// The CPU time this process has used: (user, system); zeros when the system does not say.
#[cfg(unix)]
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

/// The CPU time this process has used: (user, system), from `GetProcessTimes`; zeros when it
/// fails.
#[cfg(windows)]
fn cpu_time() -> (Duration, Duration) {
    use windows_sys::Win32::Foundation::FILETIME;
    use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
    let [mut created, mut exited, mut kernel, mut user] = [FILETIME::default(); 4];
    // SAFETY: the pseudo-handle of the current process needs no closing; the four pointers are
    // to FILETIMEs that live across the call.
    let ok = unsafe {
        GetProcessTimes(
            GetCurrentProcess(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return (Duration::ZERO, Duration::ZERO);
    }
    // A FILETIME counts 100 ns intervals.
    let d = |t: FILETIME| {
        Duration::from_nanos(
            ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)).saturating_mul(100),
        )
    };
    (d(user), d(kernel))
}
