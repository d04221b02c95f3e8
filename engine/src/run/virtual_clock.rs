//! The scheduler on a virtual clock (tokio's paused time, `clock.rs`): the open model's
//! dispatcher and the closed model's virtual users, as a run drives them on one worker, against
//! the fake server (`fake.rs`). Every instant below is exact: nothing here waits in real time.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::fake::{Served, Server};
use super::shared::Shared;
use super::timer::PreciseTimer;
use super::worker_stats::WorkerStats;
use super::{clock, h3, vu};
use crate::measure::StageStats;

/// What a run on the virtual clock did.
struct Run {
    shared: Arc<Shared>,
    /// The worker's stages (its other records are not looked at here).
    stages: Vec<StageStats>,
    /// Every request, in the order they started.
    served: Vec<Served>,
}

impl Run {
    /// Time zero of the run's schedule.
    fn start(&self) -> Instant {
        self.shared.start
    }

    /// When each request started, from time zero.
    fn starts(&self) -> Vec<Duration> {
        let start = self.start();
        self.served.iter().map(|s| s.started - start).collect()
    }

    /// When each request was due, from time zero.
    fn due(&self) -> Vec<Duration> {
        let start = self.start();
        self.served.iter().map(|s| s.intended - start).collect()
    }
}

/// A stall of the worker thread: from `at` (after time zero) the clock moves on by `length`
/// with nothing else running, as when the thread loses its CPU.
#[derive(Clone, Copy)]
struct Stall {
    at: Duration,
    length: Duration,
}

/// Runs a plan whose `load` is as the spec writes it (one target, one worker) on a virtual
/// clock against a server that takes `service` per request; with a `stall` of the worker.
fn run(load: &str, service: Duration, stall: Option<Stall>) -> Run {
    let plan = plan_of(load);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let (shared, stats, server) = local.block_on(&runtime, async {
        // The runtime's first instant: tokio's timer ticks count from it.
        let start = clock::now();
        let server = Arc::new(Server::new(service, start));
        let addrs = (vec![0], vec!["127.0.0.1:9".parse().unwrap()]);
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Shared::new((&plan, 1), addrs, start, Duration::from_secs(1), stop);
        let shared = Arc::new(Shared {
            fake: Some(server.clone()),
            ..shared
        });
        if let Some(stall) = stall {
            let at = shared.start + stall.at;
            tokio::task::spawn_local(async move {
                let _ = PreciseTimer::Paused(start).sleep_until(at).await;
                tokio::time::advance(stall.length).await;
            });
        }
        let stats = Rc::new(RefCell::new(WorkerStats::new(&shared, None)));
        let endpoints = Rc::new(h3::Endpoints::default());
        let users = vu::users(0, 1, &shared, &endpoints);
        for task in vu::spawn(0, 1, &shared, &stats, users) {
            task.await.unwrap();
        }
        (shared, stats, server)
    });
    let stages = std::mem::take(&mut stats.borrow_mut().stages);
    Run {
        shared,
        stages,
        served: server.served(),
    }
}

/// The plan of one target (never connected to: the fake server answers) under `load`, on one
/// worker thread.
fn plan_of(load: &str) -> crate::plan::Plan {
    let yaml = format!(
        "version: 1\nname: virtual\ntargets:\n  - {{name: t, url: 'http://127.0.0.1:9/'}}\n\
         load:\n  threads: 1\n{load}"
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

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn a_ramp_from_0_to_100_per_s_over_10_s_starts_500_requests_each_when_due() {
    let run = run(
        "  model: open\n  max_in_flight: 10\n  stages:\n    - { duration: 10s, level: 100/s }\n",
        Duration::ZERO,
        None,
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
        ms(5),
        None,
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
        ms(100),
        None,
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
        Duration::ZERO,
        Some(stall),
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
        ms(5),
        None,
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
        ms(30),
        None,
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
        ms(30),
        None,
    );
    assert_eq!(
        run.starts(),
        (0..13).map(|k| ms(80 * k)).collect::<Vec<_>>()
    );
    for pair in run.served.windows(2) {
        assert_eq!(pair[1].started - pair[0].end, ms(50));
    }
}
