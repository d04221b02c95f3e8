//! The scheduler on a virtual clock (tokio's paused time, `clock.rs`): the open model's
//! dispatcher and the closed model's virtual users, as a run drives them on its workers (here
//! all on the test's thread, one runtime, one clock), against the fake server (`fake.rs`).
//! Every instant below is exact: nothing here waits in real time.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use super::collect::{Collector, Report};
use super::fake::{Served, Server};
use super::shared::Shared;
use super::timer::PreciseTimer;
use super::worker_stats::WorkerStats;
use super::{clock, h3, vu, worker};
use crate::measure::StageStats;

/// What a run on the virtual clock did.
pub(super) struct Run {
    pub(super) shared: Arc<Shared>,
    /// The workers' stages, merged (their other records are not looked at here).
    pub(super) stages: Vec<StageStats>,
    /// Every request that ended, in the order they started (those cut at the hard deadline
    /// are not here).
    pub(super) served: Vec<Served>,
    /// When an `abort_on_fail` threshold stopped the run (with [`Setup::watch`]).
    aborted_at: Option<Instant>,
    /// When the last virtual user (and the dispatcher) ended, or the hard deadline cut them.
    pub(super) ended: Instant,
}

impl Run {
    /// Time zero of the run's schedule.
    pub(super) fn start(&self) -> Instant {
        self.shared.start
    }

    /// When each request started, from time zero.
    pub(super) fn starts(&self) -> Vec<Duration> {
        let start = self.start();
        self.served.iter().map(|s| s.started - start).collect()
    }

    /// When each request was due, from time zero.
    pub(super) fn due(&self) -> Vec<Duration> {
        let start = self.start();
        self.served.iter().map(|s| s.intended - start).collect()
    }
}

/// A stall of the worker thread: from `at` (after time zero) the clock moves on by `length`
/// with nothing else running, as when the thread loses its CPU.
#[derive(Clone, Copy)]
pub(super) struct Stall {
    at: Duration,
    length: Duration,
}

/// The fake server and what else happens to a run.
#[derive(Clone, Copy, Default)]
pub(super) struct Setup {
    /// How long each response takes.
    pub(super) service: Duration,
    /// A stall of the worker thread.
    pub(super) stall: Option<Stall>,
    /// From then on (after time zero), every response fails.
    pub(super) fail_from: Option<Duration>,
    /// Then (after time zero) the run is stopped, as by Ctrl-C.
    pub(super) stop_at: Option<Duration>,
    /// Worker threads (`load.threads`), their tasks all on the test's one thread; 0 is 1.
    pub(super) workers: usize,
    /// Hand the worker's epochs to a collector that watches the plan's thresholds and stops
    /// the run when an `abort_on_fail` one fails (as `worker.rs` and `run::collect` do), each
    /// report taken at the instant it is sent. Off by default: the collector looks every tick.
    pub(super) watch: bool,
}

/// Runs a plan whose `load` is as the spec writes it (one target, `setup.workers` workers) on
/// a virtual clock against the fake server, as `setup` says.
fn run(load: &str, setup: Setup) -> Run {
    run_plan(plan_of(load, setup.workers.max(1)), setup)
}

/// Runs `plan` (its one target never connected to) as [`run`] does, on `setup.workers`
/// workers (its `load.threads` set to them). As `worker.rs`, the virtual users still in
/// flight at the hard deadline (`Shared::hard_deadline`) are cut there.
pub(super) fn run_plan(mut plan: crate::plan::Plan, setup: Setup) -> Run {
    let workers = setup.workers.max(1);
    assert!(
        workers == 1 || !setup.watch,
        "the collector watches one worker"
    );
    plan.load.threads = Some(workers as u32);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let (shared, stats, server, (aborted_at, ended)) = local.block_on(&runtime, async {
        // The runtime's first instant: tokio's timer ticks count from it.
        let start = clock::now();
        let fail_from = setup.fail_from.map(|d| start + d);
        let server = Arc::new(Server::new(setup.service, start).failing_from(fail_from));
        let addrs = (vec![0], vec!["127.0.0.1:9".parse().unwrap()]);
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Shared::new((&plan, workers), addrs, start, Duration::from_secs(1), stop);
        let shared = Arc::new(Shared {
            fake: Some(server.clone()),
            ..shared
        });
        if let Some(stall) = setup.stall {
            let at = shared.start + stall.at;
            tokio::task::spawn_local(async move {
                let _ = PreciseTimer::Paused(start).sleep_until(at).await;
                tokio::time::advance(stall.length).await;
            });
        }
        if let Some(at) = setup.stop_at {
            let (at, shared) = (shared.start + at, shared.clone());
            tokio::task::spawn_local(async move {
                let _ = PreciseTimer::Paused(start).sleep_until(at).await;
                shared.stop.store(true, Ordering::Relaxed);
            });
        }
        let (tx, rx) = mpsc::channel();
        let stats: Vec<_> = (0..workers)
            .map(|_| Rc::new(RefCell::new(WorkerStats::new(&shared, None))))
            .collect();
        let watching = setup.watch.then(|| {
            let ticker = worker::ticker(shared.clone(), stats[0].clone(), tx);
            let ticker = tokio::task::spawn_local(ticker);
            let collector = tokio::task::spawn_local(collect(shared.clone(), &plan, rx));
            (ticker, collector)
        });
        let endpoints = Rc::new(h3::Endpoints::default());
        let mut tasks = Vec::new();
        for (w, stats) in stats.iter().enumerate() {
            let users = vu::users(w, workers, &shared, &endpoints);
            tasks.extend(vu::spawn(w, workers, &shared, stats, users));
        }
        let all = async {
            for task in tasks {
                task.await.unwrap();
            }
        };
        match shared.hard_deadline {
            Some(deadline) => {
                let _ = tokio::time::timeout_at(deadline.into(), all).await;
            }
            None => all.await,
        }
        let ended = clock::now();
        let mut aborted_at = None;
        if let Some((ticker, collector)) = watching {
            ticker.abort();
            aborted_at = collector.await.unwrap();
        }
        (shared, stats, server, (aborted_at, ended))
    });
    let mut stages = std::mem::take(&mut stats[0].borrow_mut().stages);
    for other in &stats[1..] {
        for (sum, stage) in stages.iter_mut().zip(&other.borrow().stages) {
            sum.merge(stage);
        }
    }
    Run {
        shared,
        stages,
        served: server.served(),
        aborted_at,
        ended,
    }
}

/// The calling thread's part (`run::collect`) on the virtual clock: takes the worker's
/// reports as they come (looking every tick, after the tick's other tasks), and stops the run
/// when an `abort_on_fail` threshold of `plan` fails. Returns when it did.
fn collect(
    shared: Arc<Shared>,
    plan: &crate::plan::Plan,
    rx: mpsc::Receiver<Report>,
) -> impl Future<Output = Option<Instant>> + use<> {
    let mut collector = Collector::new((1, 1), shared.measure_start, shared.epoch, &plan.slo);
    async move {
        let mut aborted_at = None;
        loop {
            tokio::time::sleep(ms(1)).await;
            tokio::task::yield_now().await;
            loop {
                match rx.try_recv() {
                    Ok(report) => {
                        if collector.take(report) && aborted_at.is_none() {
                            aborted_at = Some(clock::now());
                            shared.stop.store(true, Ordering::Relaxed);
                        }
                    }
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => return aborted_at,
                }
            }
        }
    }
}

/// The plan of one target (never connected to: the fake server answers) under `load`, on
/// `workers` worker threads.
pub(super) fn plan_of(load: &str, workers: usize) -> crate::plan::Plan {
    let yaml = format!(
        "version: 1\nname: virtual\ntargets:\n  - {{name: t, url: 'http://127.0.0.1:9/'}}\n\
         load:\n  threads: {workers}\n{load}"
    );
    let source = crate::spec::SourceSpec::parse("t.yaml".into(), yaml).unwrap();
    let spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: std::path::Path::new("."),
        var: &|_| None,
    };
    crate::plan::build(&spec, &ctx).unwrap()
}

pub(super) fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_ramp_from_0_to_100_per_s_over_10_s_starts_500_requests_each_when_due() {
    let run = run(
        "  model: open\n  max_in_flight: 10\n  stages:\n    - { duration: 10s, level: 100/s }\n",
        Setup::default(),
    );
    // m(τ) = 5τ² arrivals by τ seconds: 500 by 10 s.
    assert_eq!(run.served.len(), 500);
    let mut arrivals = crate::plan::load::Arrivals::new(&run.shared.load.stages);
    for (k, served) in run.served.iter().enumerate() {
        let due = run.shared.at(arrivals.time_of(k as u64).unwrap());
        assert_eq!(served.intended, due, "arrival {k}");
        assert_eq!(served.started, due, "arrival {k}");
    }
    assert_eq!(run.stages[0].sent, 500);
    assert_eq!(run.stages[0].dropped, 0);
}

#[test]
fn a_constant_50_per_s_for_2_s_starts_100_requests_exactly_20_ms_apart_none_late() {
    let run = run(
        "  model: open\n  rate: 50/s\n  max_in_flight: 2\n  duration: 2s\n",
        Setup {
            service: ms(5),
            ..Setup::default()
        },
    );
    let every_20_ms: Vec<Duration> = (0..100).map(|k| ms(20 * k)).collect();
    assert_eq!(run.due(), every_20_ms);
    assert_eq!(run.starts(), every_20_ms);
    // Lateness 0 for each (recorded at the histogram's floor of 1 µs).
    let lateness = &run.stages[0].lateness_us;
    assert_eq!((lateness.len(), lateness.max()), (100, 1));
}

#[test]
fn arrivals_that_find_both_users_busy_with_a_100_ms_server_are_dropped() {
    // 50/s with max_in_flight 2 and 100 ms per response: of each 100 ms, the arrivals at
    // +0 and +20 ms find a user idle (the one at +0 of the next finds the first user just
    // back), the three at +40, +60 and +80 ms none.
    let run = run(
        "  model: open\n  rate: 50/s\n  max_in_flight: 2\n  duration: 1s\n",
        Setup {
            service: ms(100),
            ..Setup::default()
        },
    );
    let served: Vec<Duration> = (0..10)
        .flat_map(|p| [ms(100 * p), ms(100 * p + 20)])
        .collect();
    assert_eq!(run.due(), served);
    assert_eq!(run.starts(), served);
    let stage = &run.stages[0];
    assert_eq!(
        (stage.sent, stage.dropped, stage.dropped_behind),
        (20, 30, 0)
    );
}

#[test]
fn a_stall_past_an_arrivals_due_time_makes_it_exactly_that_late_and_no_other() {
    // The worker stalls from 190 ms to 207 ms: the arrival due at 200 ms starts 7 ms late.
    let stall = Stall {
        at: ms(190),
        length: ms(17),
    };
    let run = run(
        "  model: open\n  rate: 50/s\n  max_in_flight: 2\n  duration: 1s\n",
        Setup {
            stall: Some(stall),
            ..Setup::default()
        },
    );
    assert_eq!(run.served.len(), 50);
    for (k, served) in run.served.iter().enumerate() {
        let late = served.started - served.intended;
        let expected = if k == 10 { ms(7) } else { Duration::ZERO };
        assert_eq!(late, expected, "arrival {k}");
    }
    let lateness = &run.stages[0].lateness_us;
    assert_eq!(lateness.count_between(2, u64::MAX), 1);
    assert!(
        lateness.equivalent(lateness.max(), 7_000),
        "{}",
        lateness.max()
    );
    assert_eq!(lateness.count_at(1), 49);
}

#[test]
fn a_paced_connection_sends_exactly_on_its_schedule() {
    // 50/s on one connection, 5 ms per response: a request every 20 ms from time zero.
    let run = run(
        "  connections: 1\n  pacing: 50/s\n  duration: 1s\n",
        Setup {
            service: ms(5),
            ..Setup::default()
        },
    );
    let every_20_ms: Vec<Duration> = (0..50).map(|k| ms(20 * k)).collect();
    assert_eq!(run.due(), every_20_ms);
    assert_eq!(run.starts(), every_20_ms);
    let lateness = &run.stages[0].lateness_us;
    assert_eq!((lateness.len(), lateness.max()), (50, 1));
}

#[test]
fn a_paced_connection_behind_a_slow_server_counts_what_it_could_not_send_as_dropped() {
    // 50/s on one connection, 30 ms per response: request k is due at 20k ms and starts when
    // the last one ends, at 30k ms (not the generator's lateness: the connection was busy).
    // 34 start before the end at 1 s; the 35th, due at 680 ms, finds the run over with 16
    // slots of 20 ms behind it: 34 sent and 16 dropped, the 50 due in all.
    let run = run(
        "  connections: 1\n  pacing: 50/s\n  duration: 1s\n",
        Setup {
            service: ms(30),
            ..Setup::default()
        },
    );
    assert_eq!(run.due(), (0..34).map(|k| ms(20 * k)).collect::<Vec<_>>());
    assert_eq!(
        run.starts(),
        (0..34).map(|k| ms(30 * k)).collect::<Vec<_>>()
    );
    for served in &run.served {
        assert_eq!(served.ready, served.started);
    }
    let stage = &run.stages[0];
    assert_eq!((stage.sent, stage.dropped), (34, 16));
    assert_eq!(stage.lateness_us.max(), 1);
}

#[test]
fn think_time_spaces_a_virtual_users_requests_exactly() {
    // 30 ms per response, then 50 ms of thought: a request every 80 ms, 13 in 1 s.
    let run = run(
        "  connections: 1\n  think_time: 50ms\n  duration: 1s\n",
        Setup {
            service: ms(30),
            ..Setup::default()
        },
    );
    assert_eq!(
        run.starts(),
        (0..13).map(|k| ms(80 * k)).collect::<Vec<_>>()
    );
    for pair in run.served.windows(2) {
        assert_eq!(pair[1].started - pair[0].end, ms(50));
    }
}

#[test]
fn an_abort_on_fail_errors_threshold_stops_the_run_at_the_end_of_the_second_that_fails_it() {
    // 50/s after a 10 ms warmup: measured seconds end at 1.01 s, 2.01 s, ... from time zero,
    // between arrivals. Every response fails from 2.51 s: the third second (2.01..3.01 s)
    // holds 25 failures of 50, the run so far 25 of 150 (17% ≥ 10%), so the threshold fails
    // when that second ends, at 3.01 s, and no request due after it starts.
    let run = run(
        "  model: open\n  rate: 50/s\n  max_in_flight: 2\n  duration: 10s\n  warmup: 10ms\n\
         slo:\n  errors:\n    - threshold: rate < 10%\n      abort_on_fail: true\n",
        Setup {
            fail_from: Some(ms(2_510)),
            watch: true,
            ..Setup::default()
        },
    );
    assert_eq!(run.aborted_at, Some(run.start() + ms(3_010)));
    // The warmup's arrival at 0 and the 150 measured ones, 20 ms .. 3 s.
    assert_eq!(run.due(), (0..151).map(|k| ms(20 * k)).collect::<Vec<_>>());
    let failed = run.served.iter().filter(|s| s.failed).count();
    assert_eq!(failed, 25);
}

#[test]
fn a_windowed_errors_threshold_stops_the_run_at_the_end_of_its_first_failing_window() {
    // As above, every response failing from 2.51 s: under `rate < 40%` the whole run crosses
    // 40% only when its fifth second ends (125 of 250 at 5.01 s; 75 of 200 at 4.01 s), while
    // a 1 s window fails when the third second ends (25 of 50, at 3.01 s).
    let load = |window: &str| {
        format!(
            "  model: open\n  rate: 50/s\n  max_in_flight: 2\n  duration: 10s\n  warmup: 10ms\n\
             slo:\n  errors:\n    - threshold: rate < 40%\n      abort_on_fail: true\n{window}"
        )
    };
    let setup = Setup {
        fail_from: Some(ms(2_510)),
        watch: true,
        ..Setup::default()
    };
    let whole = run(&load(""), setup);
    assert_eq!(whole.aborted_at, Some(whole.start() + ms(5_010)));
    let windowed = run(&load("      window: 1s\n"), setup);
    assert_eq!(windowed.aborted_at, Some(windowed.start() + ms(3_010)));
    assert_eq!(windowed.served.len(), 151);
}

#[test]
fn a_stop_during_a_long_think_time_ends_the_virtual_user_at_the_next_quarter_second() {
    // One request at 0, then 10 s of thought, looked at every 250 ms (`COLLECT_INTERVAL`):
    // stopped at 1.1 s, the user ends at 1.25 s, not at 10 s.
    let run = run(
        "  connections: 1\n  think_time: 10s\n  duration: 60s\n",
        Setup {
            stop_at: Some(ms(1_100)),
            ..Setup::default()
        },
    );
    assert_eq!(run.starts(), [Duration::ZERO]);
    assert_eq!(run.ended - run.start(), ms(1_250));
}

#[test]
fn max_in_flight_is_one_budget_over_the_workers() {
    // Issue 29: 3 in flight over 2 workers (2 virtual users and 1), arrivals every 250 ms
    // dealt to the workers in turn, 600 ms each. Worker 1's arrival at 750 ms finds its one
    // user busy (since 250 ms) and goes to worker 0, whose first user is back (since 600 ms):
    // every arrival starts when due, none is dropped.
    let run = run(
        "  model: open\n  rate: 4/s\n  max_in_flight: 3\n  duration: 3s\n",
        Setup {
            service: ms(600),
            workers: 2,
            ..Setup::default()
        },
    );
    let every_250_ms: Vec<Duration> = (0..12).map(|k| ms(250 * k)).collect();
    assert_eq!(run.due(), every_250_ms);
    assert_eq!(run.starts(), every_250_ms);
    assert_eq!((run.stages[0].sent, run.stages[0].dropped), (12, 0));
}

#[test]
fn a_drop_made_while_the_dispatcher_was_behind_is_the_generators_and_only_that_one() {
    // One user, 30 ms per response, 50/s: the arrivals at 0, 40, 80 ms ... are served, those
    // at 20, 60, 100 ms ... find the user busy and are dropped, on time: the server's. The
    // worker stalls from 55 to 68 ms: the arrival due at 60 ms is dropped 8 ms late, past
    // `late_p99` (5 ms): the generator's.
    let run = run(
        "  model: open\n  rate: 50/s\n  max_in_flight: 1\n  duration: 1s\n  health: { late_p99: 5ms }\n",
        Setup {
            service: ms(30),
            stall: Some(Stall {
                at: ms(55),
                length: ms(13),
            }),
            ..Setup::default()
        },
    );
    assert_eq!(run.due(), (0..25).map(|k| ms(40 * k)).collect::<Vec<_>>());
    assert_eq!(run.starts(), run.due());
    let stage = &run.stages[0];
    assert_eq!(
        (stage.sent, stage.dropped, stage.dropped_behind),
        (25, 25, 1)
    );
}
