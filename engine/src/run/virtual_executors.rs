//! The scenarios' executors on the virtual clock (`virtual_clock.rs`'s harness and fake
//! server): each executor as a spec writes it (`executor_load`: YAML → plan → the scenario's
//! load), and the run-side parts by hand (bursts, zero-length stages, `max_duration`,
//! `graceful_stop`), runs exactly what the executor means: virtual users over time, arrivals,
//! per-user and shared counts. Exact counts.

use std::collections::HashMap;
use std::time::Duration;

use super::virtual_clock::{Run, Setup, ms, plan_of, run_plan};
use crate::plan::health::HealthLimits;
use crate::plan::load::Arrivals;
use crate::plan::{LoadPlan, Model, Stage, Stop, ThinkTime};

/// A stage of `length` ramping from `from` to `to`.
fn stage(length: Duration, from: f64, to: f64) -> Stage {
    Stage {
        duration: Some(length),
        from,
        to,
        warmup: false,
        burst: 0,
    }
}

/// The count modes' one stage: `vus` until the count is reached.
fn hold(vus: f64) -> Stage {
    Stage {
        duration: None,
        ..stage(Duration::ZERO, vus, vus)
    }
}

/// An executor's load: `model`, `stages`, `stop`; closed model, as many connections as the
/// peak level; open model, `max_in_flight` 40; `graceful_stop` 30 s (the default).
fn load(model: Model, stages: Vec<Stage>, stop: Stop) -> LoadPlan {
    let peak = stages.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max);
    LoadPlan {
        model,
        stages,
        stop,
        connections: if model == Model::Closed {
            peak.round() as u32
        } else {
            0
        },
        max_in_flight: if model == Model::Open { 40 } else { 0 },
        pacing: None,
        think_time: None,
        streams: 1,
        threads: None,
        pre_connect: false,
        warmup_requests: 0,
        health: HealthLimits::default(),
        per_loop_iterations: None,
        max_duration: None,
        graceful_stop: Some(Duration::from_secs(30)),
    }
}

/// Runs `load` on the virtual clock (one target) with `setup`.
fn run(load: LoadPlan, setup: Setup) -> Run {
    let mut plan = plan_of("  connections: 1\n  duration: 1s\n", 1);
    plan.load = load;
    run_plan(plan, setup)
}

/// Requests in flight at `at` after time zero: started at or before it, not yet ended.
fn in_flight(run: &Run, at: Duration) -> usize {
    let t = run.start() + at;
    run.served
        .iter()
        .filter(|s| s.started <= t && t < s.end)
        .count()
}

/// Requests per virtual user (the task that sent them), in no order.
fn per_user(run: &Run) -> Vec<usize> {
    let mut counts: HashMap<_, usize> = HashMap::new();
    for served in &run.served {
        *counts
            .entry(served.task.expect("sent from a task"))
            .or_default() += 1;
    }
    counts.into_values().collect()
}

fn served(service: Duration) -> Setup {
    Setup {
        service,
        ..Setup::default()
    }
}

#[test]
fn ramping_arrival_rate_starts_the_integral_and_a_burst_all_at_its_instant() {
    // 0 -> 100/s over 2 s (100 arrivals), 100 -> 0/s over 1 s (50), a burst of 30 over 0 s at
    // 3 s, 0 -> 40/s over 1 s (20, the first at 3 s): 200, of which 31 are due at 3 s.
    let mut burst = stage(Duration::ZERO, 0.0, 0.0);
    burst.burst = 30;
    let stages = vec![
        stage(ms(2_000), 0.0, 100.0),
        stage(ms(1_000), 100.0, 0.0),
        burst,
        stage(ms(1_000), 0.0, 40.0),
    ];
    let run = run(
        load(Model::Open, stages, Stop::Duration(ms(4_000))),
        served(ms(5)),
    );
    assert_eq!(run.served.len(), 200);
    let due = run.due();
    assert!(due[149] < ms(3_000), "{:?}", due[149]);
    assert!(due[150..181].iter().all(|&d| d == ms(3_000)), "{due:?}");
    assert!(due[181] > ms(3_000), "{:?}", due[181]);
    assert_eq!(run.starts(), due);
    let sent: u64 = run.stages.iter().map(|s| s.sent).sum();
    let dropped: u64 = run.stages.iter().map(|s| s.dropped).sum();
    assert_eq!((sent, dropped), (200, 0));
    // A zero-length stage holds no instant of its own: its burst is recorded in the stage
    // that starts at the same instant, with that stage's 20.
    assert_eq!((run.stages[2].sent, run.stages[3].sent), (0, 50));
}

/// Thought between requests drawn from 0..100 ms: users of different speeds.
fn uneven(mut load: LoadPlan) -> LoadPlan {
    load.think_time = Some(ThinkTime::Uniform(Duration::ZERO, ms(100)));
    load
}

#[test]
fn per_vu_iterations_runs_exactly_n_for_every_user_however_fast() {
    // 4 users of uneven speeds on one worker, 10 iterations each: 10 each, 40 in all (one
    // count for the worker's users would let the fast ones take more).
    let mut plan = uneven(load(Model::Closed, vec![hold(4.0)], Stop::Requests(4 * 10)));
    plan.per_loop_iterations = Some(10);
    plan.max_duration = Some(Duration::from_secs(600));
    let run = run(plan, served(ms(10)));
    assert_eq!(per_user(&run), [10; 4]);
    assert_eq!(run.stages[0].sent, 40);
    // Ended on its count: measured until the last response.
    let last_end = run.served.iter().map(|s| s.end).max().unwrap();
    assert_eq!(
        super::elapsed(&run.shared, false, last_end),
        last_end - run.start()
    );
}

#[test]
fn max_duration_ends_a_count_run_with_iterations_left() {
    // 2 users, 1,000 iterations, 30 ms each, max_duration 1 s: each starts at 0, 30, ...,
    // 990 ms (34), the last ending at 1,020 ms within the graceful stop; elapsed 1 s.
    let cut = |graceful: Duration| {
        let mut plan = load(Model::Closed, vec![hold(2.0)], Stop::Requests(1_000));
        plan.max_duration = Some(ms(1_000));
        plan.graceful_stop = Some(graceful);
        run(plan, served(ms(30)))
    };
    let run = cut(Duration::from_secs(30));
    assert_eq!(per_user(&run), [34, 34]);
    assert_eq!(run.ended - run.start(), ms(1_020));
    assert_eq!(super::elapsed(&run.shared, false, run.ended), ms(1_000));
    // A graceful stop of 10 ms cuts the two in flight at 1,010 ms: not counted.
    let run = cut(ms(10));
    assert_eq!(per_user(&run), [33, 33]);
    assert_eq!(run.stages[0].sent, 66);
    assert_eq!(run.ended - run.start(), ms(1_010));
}

#[test]
fn graceful_stop_cuts_slow_work_in_flight_after_the_end() {
    // 2 users for 1 s, 300 ms per response: requests at 0, 300, 600 and 900 ms each. A
    // graceful stop of 100 ms cuts those of 900 ms (due to end at 1.2 s) at 1.1 s; one of
    // 250 ms lets them end.
    let constant = |graceful: Duration| {
        let mut plan = load(
            Model::Closed,
            vec![stage(ms(1_000), 2.0, 2.0)],
            Stop::Duration(ms(1_000)),
        );
        plan.graceful_stop = Some(graceful);
        run(plan, served(ms(300)))
    };
    let run = constant(ms(100));
    assert_eq!(per_user(&run), [3, 3]);
    assert_eq!(run.stages[0].sent, 6);
    assert_eq!(run.ended - run.start(), ms(1_100));
    let run = constant(ms(250));
    assert_eq!(per_user(&run), [4, 4]);
    assert_eq!(run.stages[0].sent, 8);
    assert_eq!(run.ended - run.start(), ms(1_200));
}

#[test]
fn a_burst_is_due_at_its_stages_start_besides_the_rate() {
    // 10/s for 1 s, a burst of 5 over 0 s, then 10/s for 1 s with a burst of 3 of its own.
    let with_burst = |mut s: Stage, n| {
        s.burst = n;
        s
    };
    let stages = [
        stage(ms(1_000), 10.0, 10.0),
        with_burst(stage(Duration::ZERO, 10.0, 10.0), 5),
        with_burst(stage(ms(1_000), 10.0, 10.0), 3),
    ];
    let mut arrivals = Arrivals::new(&stages);
    let times: Vec<f64> = (0..).map_while(|k| arrivals.time_of(k)).collect();
    assert_eq!(times.len(), 10 + 5 + 3 + 10);
    assert!(times[10..19].iter().all(|&t| t == 1.0), "{times:?}");
    assert!((times[19] - 1.1).abs() < 1e-12, "{}", times[19]);
    // An open-ended stage's burst, then its rate.
    let open = [with_burst(hold(2.0), 2)];
    let mut arrivals = Arrivals::new(&open);
    let times: Vec<f64> = (0..4).map_while(|k| arrivals.time_of(k)).collect();
    assert_eq!(times, [0.0, 0.0, 0.0, 0.5]);
}

#[test]
fn a_stage_of_zero_length_steps_the_level_at_once() {
    // 4 from the start (a 0 s step from 0), 4 for 1 s, a 0 s step down to 1, 1 for 1 s.
    let stages = vec![
        stage(Duration::ZERO, 0.0, 4.0),
        stage(ms(1_000), 4.0, 4.0),
        stage(Duration::ZERO, 4.0, 1.0),
        stage(ms(1_000), 1.0, 1.0),
    ];
    let p = load(Model::Open, stages, Stop::Duration(ms(2_000)));
    assert_eq!(
        (p.level_at(0.0), p.level_at(0.999), p.level_at(1.0)),
        (4.0, 4.0, 1.0)
    );
    assert_eq!(p.first_time_at_least(3.5, 0.0), Some(0.0));
    assert_eq!(p.first_time_at_least(3.5, 1.0), None);
    assert_eq!(p.first_time_at_least(0.5, 1.5), Some(1.5));
    let mut arrivals = Arrivals::new(&p.stages);
    let times: Vec<f64> = (0..).map_while(|k| arrivals.time_of(k)).collect();
    assert_eq!(times, [0.0, 0.25, 0.5, 0.75, 1.0]);
}

/// The load plan that a spec of one scenario over one target resolves to: `scenario` is the
/// scenario's YAML fields (each line indented by 4 spaces), as a team writes them.
fn executor_load(scenario: &str) -> LoadPlan {
    let yaml = format!(
        "version: 1\nname: virtual\ntargets:\n  - {{name: t, url: 'http://127.0.0.1:9/'}}\n\
         scenarios:\n  - name: s\n    targets: [t]\n{scenario}"
    );
    let source = crate::spec::SourceSpec::parse("s.yaml".into(), yaml).unwrap();
    let spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: std::path::Path::new("."),
        var: &|_| None,
    };
    let mut plan = crate::plan::build(&spec, &ctx).unwrap();
    plan.scenarios.remove(0).plan.load
}

#[test]
fn a_constant_vus_spec_keeps_its_users_busy_and_counts_exactly() {
    let load = executor_load("    executor: constant-vus\n    vus: 5\n    duration: 2s\n");
    let run = run(load, served(ms(30)));
    for t in 0..=2_000 {
        assert_eq!(in_flight(&run, ms(t)), 5, "at {t} ms");
    }
    assert_eq!(per_user(&run), [67; 5]);
    assert_eq!(run.stages[0].sent, 335);
}

#[test]
fn a_ramping_vus_spec_with_spikes_runs_its_stages_users() {
    let load = executor_load(
        "    executor: ramping-vus\n    start_vus: 2\n    stages:\n      \
         - { duration: 2s, level: 6 }\n      - { duration: 0s, level: 10 }\n      \
         - { duration: 1s, level: 10 }\n      - { duration: 0s, level: 3 }\n      \
         - { duration: 1s, level: 3 }\n",
    );
    let run = run(load, served(ms(10)));
    let users = |t: u64| match t {
        0..250 => 2,
        250..750 => 3,
        750..1_250 => 4,
        1_250..1_750 => 5,
        1_750..2_000 => 6,
        2_000..3_000 => 10,
        _ => 3,
    };
    for t in (5..4_000).step_by(10) {
        assert_eq!(in_flight(&run, ms(t)), users(t), "at {t} ms");
    }
    assert_eq!(run.stages.iter().map(|s| s.sent).sum::<u64>(), 2_100);
}

#[test]
fn a_constant_arrival_rate_spec_starts_rate_times_duration_arrivals() {
    let load = executor_load(
        "    executor: constant-arrival-rate\n    rate: 200/s\n    duration: 3s\n    \
         max_in_flight: 40\n",
    );
    let setup = Setup {
        service: ms(5),
        workers: 2,
        ..Setup::default()
    };
    let run = run(load, setup);
    let every_5_ms: Vec<Duration> = (0..600).map(|k| ms(5 * k)).collect();
    assert_eq!(run.due(), every_5_ms);
    assert_eq!(run.starts(), every_5_ms);
    assert_eq!((run.stages[0].sent, run.stages[0].dropped), (600, 0));
}

#[test]
fn a_ramping_arrival_rate_spec_starts_the_integral_its_arrivals_and_its_burst() {
    // 0 -> 100/s over 2 s (100), 100 -> 0/s over 1 s (50), Gatling's atOnceUsers(30) at 3 s,
    // rampUsers(40) over 1 s (40, 25 ms apart from 3 s): 220, 31 of them due at 3 s.
    let load = executor_load(
        "    executor: ramping-arrival-rate\n    max_in_flight: 40\n    stages:\n      \
         - { duration: 2s, level: 100/s }\n      - { duration: 1s, level: 0/s }\n      \
         - { duration: 0s, arrivals: 30 }\n      - { duration: 1s, arrivals: 40 }\n",
    );
    let run = run(load, served(ms(5)));
    assert_eq!(run.served.len(), 220);
    let due = run.due();
    assert!(due[149] < ms(3_000), "{:?}", due[149]);
    assert!(due[150..181].iter().all(|&d| d == ms(3_000)), "{due:?}");
    let ramp: Vec<Duration> = (1..40).map(|k| ms(3_000 + 25 * k)).collect();
    assert_eq!(due[181..], ramp[..]);
    assert_eq!(run.starts(), due);
    let dropped: u64 = run.stages.iter().map(|s| s.dropped).sum();
    assert_eq!(dropped, 0);
}

#[test]
fn a_per_vu_iterations_spec_runs_exactly_n_for_every_user() {
    let load = executor_load(
        "    executor: per-vu-iterations\n    vus: 4\n    iterations: 10\n    \
         think_time: 0ms..100ms\n",
    );
    let run = run(load, served(ms(10)));
    assert_eq!(per_user(&run), [10; 4]);
    assert_eq!(run.stages[0].sent, 40);
}

#[test]
fn a_shared_iterations_spec_runs_exactly_n_in_all() {
    let load = executor_load(
        "    executor: shared-iterations\n    vus: 4\n    iterations: 50\n    \
         think_time: 0ms..100ms\n",
    );
    let setup = Setup {
        service: ms(10),
        workers: 2,
        ..Setup::default()
    };
    let run = run(load, setup);
    assert_eq!(run.served.len(), 50);
    assert_eq!(per_user(&run).len(), 4);
}
