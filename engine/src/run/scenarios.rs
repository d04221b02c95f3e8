//! Scenarios run at once: each scenario's plan (`plan::ScenarioPlan::plan`) is run as a run of
//! its own, with its own worker threads, on one clock shared by all (as `loadgate ab`'s two
//! sides, here N): every scenario is resolved and checked first, then all are released
//! together, each starting at the common time zero + its `start_time`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use super::{COLLECT_INTERVAL, Progress, RunError, RunOutput, prepare, raise_file_limit};
use crate::plan::Plan;

/// How far after the moment every scenario is ready the common time zero lies: time for
/// their threads to read it before it passes.
const CLOCK_LEAD: Duration = Duration::from_millis(5);

/// Runs the plan's scenarios at once, one [`RunOutput`] per `plan.scenarios[i]` (its targets
/// and flows indexed as its own plan's), each sub-run's time zero the common time zero + its
/// `start_time` (with `plan.start_at`, the common time zero is then). `stop` (Ctrl-C) stops
/// every scenario; one that fails stops the others. `progress` is called a few times a second
/// from this thread with the scenarios' progress combined: responses, errors and the last
/// second's rate summed, the longest elapsed time, the highest of the last second's
/// percentiles.
///
/// A scenario whose load gives no `threads` runs on its share of the CPUs, `max(1,
/// round(CPUs × its request loops / all scenarios' request loops))`, so that the whole run
/// uses about one worker thread per CPU.
///
/// Errors: the open-files limit is too low for every scenario's connections, timers and
/// threads together ([`raise_file_limit`]); the first scenario's (in the plan's order) that
/// could not be resolved, checked or started.
pub fn execute_scenarios(
    plan: &Plan,
    stop: Arc<AtomicBool>,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Vec<RunOutput>, RunError> {
    raise_file_limit(plan)?;
    let plans = plans(plan);
    let latest: Mutex<Vec<Option<Progress>>> = Mutex::new(vec![None; plans.len()]);
    let lock = || latest.lock().unwrap_or_else(|e| e.into_inner());
    let (ready_tx, ready) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        let mut runs = Vec::with_capacity(plans.len());
        let mut failed = None;
        for (i, (sub, scenario)) in plans.iter().zip(&plan.scenarios).enumerate() {
            let (go_tx, go) = mpsc::channel::<Instant>();
            let (ready_tx, own_stop, lock) = (ready_tx.clone(), stop.clone(), &lock);
            let offset = scenario.start_time;
            let spawned = std::thread::Builder::new()
                .name(format!("loadgate-scenario-{i}"))
                .spawn_scoped(scope, move || {
                    let stop = own_stop;
                    let ready = prepare(sub).map(super::Ready::on_given_clock);
                    let _ = ready_tx.send(());
                    let output = match (ready, go.recv()) {
                        (Ok(ready), Ok(origin)) => {
                            let mut note = |p: &Progress| lock()[i] = Some(*p);
                            ready.run(origin + offset, stop.clone(), &mut note)
                        }
                        (Err(e), _) => Err(e),
                        (Ok(_), Err(_)) => Err(RunError::Start(std::io::Error::other(
                            "the run's clock was not started",
                        ))),
                    };
                    if output.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    output
                });
            match spawned {
                Ok(handle) => runs.push((handle, go_tx)),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failed = Some(RunError::Start(e));
                    break;
                }
            }
        }
        drop(ready_tx);
        // Every scenario resolved and checked (or failed): release them all on one clock.
        for _ in &runs {
            let _ = ready.recv();
        }
        let origin = match plan.start_at {
            Some(at) => super::wait_until(at, &stop),
            None => Instant::now() + CLOCK_LEAD,
        };
        let mut handles = Vec::with_capacity(runs.len());
        for (handle, go) in runs {
            let _ = go.send(origin);
            handles.push(handle);
        }
        loop {
            let done = handles.iter().all(|h| h.is_finished());
            if let Some(p) = combined(&lock()) {
                progress(&p);
            }
            if done {
                break;
            }
            std::thread::sleep(COLLECT_INTERVAL);
        }
        let outputs: Vec<Result<RunOutput, RunError>> = handles
            .into_iter()
            .map(|h| h.join().expect("a scenario's run does not panic"))
            .collect();
        if let Some(e) = failed {
            return Err(e);
        }
        outputs.into_iter().collect()
    })
}

/// The scenarios' sub-plans as they run: a scenario whose load gives no `threads` gets its
/// share of the CPUs ([`threads_share`]), so that the whole run uses about one worker thread
/// per CPU.
pub(super) fn plans(plan: &Plan) -> Vec<Plan> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let all: usize = plan
        .scenarios
        .iter()
        .map(|s| s.plan.load.request_loops())
        .sum();
    plan.scenarios
        .iter()
        .map(|s| {
            let mut sub = s.plan.clone();
            if sub.load.threads.is_none() {
                let loops = sub.load.request_loops();
                sub.load.threads = Some(threads_share(cpus, loops, all));
            }
            sub
        })
        .collect()
}

/// A scenario's worker threads when its load gives none: its share of `cpus` in proportion to
/// its request loops (`loops`, of `all` over the scenarios), `max(1, round(cpus × loops /
/// all))`.
fn threads_share(cpus: usize, loops: usize, all: usize) -> u32 {
    let share = (cpus as f64 * loops as f64 / all.max(1) as f64).round();
    (share as u32).max(1)
}

/// The scenarios' progress as one: responses, errors and the last second's rate and errors
/// summed, the longest elapsed time, the highest of the last second's percentiles; warming up
/// while every scenario that reported is. `None` before any reported.
fn combined(latest: &[Option<Progress>]) -> Option<Progress> {
    let mut reported = latest.iter().flatten();
    let first = *reported.next()?;
    Some(reported.fold(first, |sum, p| Progress {
        warming_up: sum.warming_up && p.warming_up,
        elapsed: sum.elapsed.max(p.elapsed),
        responses: sum.responses + p.responses,
        errors: sum.errors + p.errors,
        last_second_rps: sum.last_second_rps + p.last_second_rps,
        last_second_errors: sum.last_second_errors + p.last_second_errors,
        last_second_p50_us: sum.last_second_p50_us.max(p.last_second_p50_us),
        last_second_p99_us: sum.last_second_p99_us.max(p.last_second_p99_us),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ScenarioPlan;
    use crate::spec::Executor;

    /// The plan of one target `name` at `url` under `load` (as the spec writes it).
    fn sub_plan(name: &str, url: &str, load: &str) -> Plan {
        let yaml = format!(
            "version: 1\nname: {name}\ntargets:\n  - {{name: {name}, url: '{url}'}}\nload:\n{load}"
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

    /// The whole plan of `scenarios` (sub-plans with their executor and start time), each
    /// of one target, in order.
    fn whole(scenarios: Vec<(Plan, Executor, Duration)>) -> Plan {
        let mut plan = scenarios[0].0.clone();
        plan.targets = scenarios
            .iter()
            .flat_map(|(sub, ..)| sub.targets.clone())
            .collect();
        plan.scenarios = scenarios
            .into_iter()
            .enumerate()
            .map(|(i, (sub, executor, start_time))| ScenarioPlan {
                name: sub.name.clone(),
                executor,
                start_time,
                tags: Default::default(),
                targets: vec![i],
                flows: Vec::new(),
                plan: sub,
            })
            .collect();
        plan
    }

    fn responses(output: &RunOutput) -> u64 {
        output.targets[0].status.iter().sum()
    }

    #[test]
    fn two_scenarios_run_at_once_on_one_clock_each_from_its_start_time() {
        // Against `loadgate serve` on loopback: reads at 100/s for 2 s from 0, beside 2
        // users of 30 iterations each (per-vu-iterations) from 500 ms.
        let server = crate::serve::spawn("127.0.0.1:0".parse().unwrap(), 2).unwrap();
        let url = format!("{}/?delay=2ms", server.url());
        let reads = sub_plan(
            "reads",
            &url,
            "  model: open\n  rate: 100/s\n  max_in_flight: 100\n  duration: 2s\n",
        );
        let mut users = sub_plan("users", &url, "  connections: 2\n  requests: 60\n");
        users.load.per_loop_iterations = Some(30);
        users.load.max_duration = Some(Duration::from_secs(10));
        users.load.graceful_stop = Some(Duration::from_secs(30));
        let plan = whole(vec![
            (reads, Executor::ConstantArrivalRate, Duration::ZERO),
            (users, Executor::PerVuIterations, Duration::from_millis(500)),
        ]);
        let mut reported = 0;
        let outputs = execute_scenarios(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {
            reported += 1
        })
        .unwrap();
        assert_eq!(outputs.len(), 2);
        let offset = outputs[1]
            .started_at
            .duration_since(outputs[0].started_at)
            .unwrap();
        assert!(
            offset.abs_diff(Duration::from_millis(500)) < Duration::from_millis(5),
            "{offset:?}"
        );
        // 200 arrivals (within 1%), 60 iterations exactly.
        assert!(
            responses(&outputs[0]).abs_diff(200) <= 2,
            "{}",
            responses(&outputs[0])
        );
        assert_eq!(outputs[0].elapsed, Duration::from_secs(2));
        assert_eq!(responses(&outputs[1]), 60);
        assert!(outputs.iter().all(|o| !o.interrupted));
        assert!(reported > 0);
    }

    #[test]
    fn a_stop_stops_every_scenario() {
        // Two scenarios planned for 60 s (one from 1 s), stopped at 300 ms as by Ctrl-C.
        let server = crate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
        let long = |name| sub_plan(name, &server.url(), "  connections: 1\n  duration: 60s\n");
        let plan = whole(vec![
            (long("first"), Executor::ConstantVus, Duration::ZERO),
            (long("later"), Executor::ConstantVus, Duration::from_secs(1)),
        ]);
        let stop = Arc::new(AtomicBool::new(false));
        let began = Instant::now();
        let outputs = std::thread::scope(|scope| {
            let stop_later = stop.clone();
            scope.spawn(move || {
                std::thread::sleep(Duration::from_millis(300));
                stop_later.store(true, Ordering::Relaxed);
            });
            execute_scenarios(&plan, stop.clone(), &mut |_| {}).unwrap()
        });
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{:?}",
            began.elapsed()
        );
        assert!(outputs.iter().all(|o| o.interrupted));
        assert!(responses(&outputs[0]) > 0);
        assert_eq!(responses(&outputs[1]), 0);
    }

    #[test]
    fn a_scenario_that_cannot_start_stops_the_others() {
        // The second scenario's target refuses connections: the first, planned for 60 s,
        // ends at once, and the run fails with the second's error.
        let server = crate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
        let steady = sub_plan(
            "steady",
            &server.url(),
            "  connections: 1\n  duration: 60s\n",
        );
        let refused = sub_plan(
            "refused",
            "http://127.0.0.1:1/",
            "  connections: 1\n  duration: 60s\n",
        );
        let plan = whole(vec![
            (steady, Executor::ConstantVus, Duration::ZERO),
            (refused, Executor::ConstantVus, Duration::ZERO),
        ]);
        let began = Instant::now();
        let stop = Arc::new(AtomicBool::new(false));
        let error = execute_scenarios(&plan, stop.clone(), &mut |_| {}).unwrap_err();
        assert!(matches!(error, RunError::Unreachable { .. }), "{error}");
        assert!(
            began.elapsed() < Duration::from_secs(10),
            "{:?}",
            began.elapsed()
        );
        assert!(stop.load(Ordering::Relaxed));
    }

    #[test]
    fn a_scenario_without_threads_gets_its_share_of_the_cpus() {
        // 8 CPUs, 30 and 10 virtual users: 6 and 2 threads; a tiny one still gets 1.
        assert_eq!(threads_share(8, 30, 40), 6);
        assert_eq!(threads_share(8, 10, 40), 2);
        assert_eq!(threads_share(8, 1, 1000), 1);
        assert_eq!(threads_share(2, 0, 0), 1);
    }

    #[test]
    fn progress_is_summed_over_the_scenarios_that_reported() {
        let p = |responses, rps, p99, warming_up| Progress {
            warming_up,
            elapsed: Duration::from_secs(responses / 10),
            responses,
            errors: 1,
            last_second_rps: rps,
            last_second_errors: 0,
            last_second_p50_us: p99 / 2,
            last_second_p99_us: p99,
        };
        assert!(combined(&[None, None]).is_none());
        let sum = combined(&[
            Some(p(100, 10, 900, false)),
            None,
            Some(p(30, 5, 2_000, true)),
        ])
        .unwrap();
        assert_eq!(
            (sum.responses, sum.errors, sum.last_second_rps),
            (130, 2, 15)
        );
        assert_eq!(
            (sum.last_second_p99_us, sum.elapsed),
            (2_000, Duration::from_secs(10))
        );
        assert!(!sum.warming_up);
    }
}
