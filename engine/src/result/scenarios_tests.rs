//! `build_scenarios` on outputs made by hand: three targets (`a` read, `b` and `c` write) in
//! two scenarios (`browse`: `a`, `b` from 0 s for 5 s; `buy`: `c` from 2 s for 4 s).

use std::time::{Duration, SystemTime};

use super::*;
use crate::measure::{ErrorKind, ResponseTimes, StageStats, Timing};
use crate::plan::TagSelector;
use crate::plan::threshold::{Metric, Severity, Threshold};
use crate::result::merge;
use crate::spec::{Executor, SourceSpec};

/// What one target measured: `per_second` responses each second of `latency_us`, plus
/// `errors` timeouts in all.
#[derive(Clone, Copy)]
struct Load {
    per_second: u64,
    latency_us: u64,
    errors: u64,
}

/// The whole plan: three targets tagged `kind`, a closed load.
fn whole_plan() -> Plan {
    let text = "version: 1\nname: shop\ntargets:\n\
                \x20 - {name: a, url: 'http://127.0.0.1:9/a', tags: {kind: read}}\n\
                \x20 - {name: b, url: 'http://127.0.0.1:9/b', tags: {kind: write}}\n\
                \x20 - {name: c, url: 'http://127.0.0.1:9/c', tags: {kind: write}}\n\
                load:\n  connections: 2\n  duration: 5s\n";
    plan_of(text)
}

/// Plans the spec `text` (schema checks aside), without its SLOs.
fn plan_of(text: &str) -> Plan {
    let source = SourceSpec::parse("spec.yaml".into(), text.to_string()).unwrap();
    let spec: crate::spec::Spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: std::path::Path::new("."),
        var: &|_| None,
    };
    let mut plan = crate::plan::build(&spec, &ctx).unwrap_or_else(|e| panic!("{e:?}"));
    plan.slo.clear();
    plan
}

/// A threshold of `scope` on `metric`, `expression`, with `tags` and `severity`.
fn threshold(
    scope: Scope,
    metric: Metric,
    expression: &str,
    tags: &[(&str, &str)],
    severity: Severity,
) -> Threshold {
    let mut t = Threshold::parse(scope, metric, expression).unwrap();
    t.tags = TagSelector(
        tags.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    t.severity = severity;
    t
}

/// `plan` with two scenarios: `browse` (targets 0, 1) at 0 s and `buy` (target 2) at 2 s,
/// each target tagged with its scenario; `buy`'s own plan holds `buy_slo` (as `total`).
fn with_scenarios(mut plan: Plan, buy_slo: Vec<Threshold>) -> Plan {
    let scenario = |name: &str, start_s: u64, targets: Vec<usize>, whole: &mut Plan| {
        for &i in &targets {
            whole.targets[i]
                .tags
                .insert("scenario".into(), name.to_string());
        }
        let mut sub = whole.clone();
        sub.targets = targets.iter().map(|&i| whole.targets[i].clone()).collect();
        sub.slo = Vec::new();
        sub.regression = Vec::new();
        ScenarioPlan {
            name: name.to_string(),
            executor: Executor::ConstantVus,
            start_time: Duration::from_secs(start_s),
            tags: [("scenario".to_string(), name.to_string())].into(),
            targets,
            flows: Vec::new(),
            plan: sub,
        }
    };
    let browse = scenario("browse", 0, vec![0, 1], &mut plan);
    let mut buy = scenario("buy", 2, vec![2], &mut plan);
    buy.plan.slo = buy_slo;
    plan.scenarios = vec![browse, buy];
    plan
}

/// A run of `plan` (a sub-plan) that started measuring at `started_at` and measured
/// `seconds` seconds, each target as `loads` says.
fn output(plan: &Plan, started_at: SystemTime, seconds: u32, loads: &[Load]) -> RunOutput {
    let mut targets: Vec<TargetStats> = loads.iter().map(|_| TargetStats::default()).collect();
    let mut time_series = Vec::new();
    for second in 0..seconds {
        let mut all = SpanStats::default();
        let mut each = Vec::new();
        for (i, load) in loads.iter().enumerate() {
            let mut span = SpanStats::default();
            for _ in 0..load.per_second {
                let times =
                    ResponseTimes::new(i, load.latency_us, load.latency_us, Timing::default());
                targets[i].record_times(&times);
                targets[i].record_response(200, true);
                span.record(Some(load.latency_us), false, false);
                all.record(Some(load.latency_us), false, false);
            }
            each.push(span.second(second, Vec::new()));
        }
        time_series.push(all.second(second, each));
    }
    for (stats, load) in targets.iter_mut().zip(loads) {
        for _ in 0..load.errors {
            stats.record_error(ErrorKind::Timeout);
        }
    }
    RunOutput {
        started_at,
        elapsed: Duration::from_secs(u64::from(seconds)),
        targets,
        flows: Vec::new(),
        stages: plan
            .load
            .stages
            .iter()
            .map(|_| StageStats::default())
            .collect(),
        stage_cpu_s: vec![0.0; plan.load.stages.len()],
        time_series,
        epochs: Vec::new(),
        cpu: (Duration::from_millis(300), Duration::from_millis(100)),
        interrupted: false,
        aborted_by: None,
        windows: vec![None; plan.slo.len()],
        negotiated: Vec::new(),
        udp_buffers: None,
    }
}

const A: Load = Load {
    per_second: 10,
    latency_us: 10_000,
    errors: 2,
};
const B: Load = Load {
    per_second: 20,
    latency_us: 20_000,
    errors: 0,
};
const C: Load = Load {
    per_second: 5,
    latency_us: 50_000,
    errors: 1,
};

/// The two scenarios' outputs: `browse` from `t0` for 5 s, `buy` from `t0` + 2 s for 4 s.
fn outputs(plan: &Plan) -> Vec<RunOutput> {
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    vec![
        output(&plan.scenarios[0].plan, t0, 5, &[A, B]),
        output(
            &plan.scenarios[1].plan,
            t0 + Duration::from_secs(2),
            4,
            &[C],
        ),
    ]
}

#[test]
fn the_whole_run_is_the_exact_sum_of_its_scenarios() {
    let plan = with_scenarios(whole_plan(), Vec::new());
    let result = build_scenarios(&plan, &outputs(&plan));

    // Scenario totals, named after their scenarios.
    let [browse, buy] = [&result.scenarios[0], &result.scenarios[1]];
    assert_eq!((browse.name.as_str(), buy.name.as_str()), ("browse", "buy"));
    assert_eq!(browse.total.name, "browse");
    assert_eq!(browse.executor, "constant-vus");
    assert_eq!(browse.total.responses, 5 * (10 + 20));
    assert_eq!(buy.total.responses, 4 * 5);
    assert_eq!(browse.targets, ["a", "b"]);
    assert_eq!(buy.targets, ["c"]);
    assert_eq!((browse.start_time_s, buy.start_time_s), (0.0, 2.0));
    assert_eq!(browse.iterations, browse.total.requests);

    // The whole: every count the sum of the scenarios'.
    let t = &result.total;
    assert_eq!(t.responses, browse.total.responses + buy.total.responses);
    assert_eq!(t.requests, browse.total.requests + buy.total.requests);
    assert_eq!(t.errors, 2 + 1);
    assert_eq!(t.status_codes["200"], 150 + 20);
    assert_eq!(
        decode_histogram(&t.histogram).unwrap().len(),
        t.responses,
        "the histograms added"
    );
    assert_eq!(t.latency_us.as_ref().unwrap().max_us / 1000, 50);
    // From the first start to the last end: 0 s .. 2 s + 4 s.
    assert_eq!(result.duration_s, 6.0);
    assert!((t.rps - 170.0 / 6.0).abs() < 1e-9);
    assert!(t.service_time_us.is_some());

    // The seconds: `buy`'s second 0 is the run's second 2.
    assert_eq!(result.time_series.len(), 6);
    let per_second: Vec<u64> = result.time_series.iter().map(|s| s.responses).collect();
    assert_eq!(per_second, [30, 30, 35, 35, 35, 5]);
    assert_eq!(
        result.time_series.iter().map(|s| s.responses).sum::<u64>(),
        t.responses
    );
    assert_eq!(result.time_series[2].max_us / 1000, 50);

    // Targets in the whole plan's order, with their tags, their seconds on the run's clock.
    let names: Vec<&str> = result.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    let c = &result.targets[2];
    assert_eq!(c.responses, 20);
    assert_eq!(c.tags["kind"], "write");
    assert_eq!(c.tags["scenario"], "buy");
    let seconds: Vec<u32> = c.time_series.iter().map(|s| s.second).collect();
    assert_eq!(seconds, [2, 3, 4, 5]);
    // A target's rate is over its scenario's window.
    assert!((c.rps - 5.0).abs() < 1e-9);

    // Health: the scenarios' stages in order; the load summed.
    assert!(result.health.valid);
    assert_eq!(
        result.health.stages.len(),
        browse.health.stages.len() + buy.health.stages.len()
    );
    assert_eq!(result.load.model, "closed");
    assert_eq!(result.load.connections, Some(4));
    assert_eq!(
        result.load.duration_s,
        Some(7.0),
        "buy planned 5 s from 2 s"
    );
    assert!(!result.started_at.is_empty());
    assert_eq!(
        result.environment.client_cpu_user_s, 0.3,
        "one process: the most"
    );
}

#[test]
fn a_scenarios_problems_make_the_whole_invalid_and_say_whose() {
    let plan = with_scenarios(whole_plan(), Vec::new());
    let outputs = outputs(&plan);
    let mut subs: Vec<RunResult> = plan
        .scenarios
        .iter()
        .zip(&outputs)
        .map(|(sp, o)| build(&sp.plan, o))
        .collect();
    subs[1].health.valid = false;
    subs[1].health.problems = vec!["the generator was late".into()];
    subs[0].health.notes = vec!["the server dropped".into()];
    let health = health(&plan, &subs);
    assert!(!health.valid);
    assert_eq!(health.problems, ["scenario buy: the generator was late"]);
    assert_eq!(health.notes, ["scenario browse: the server dropped"]);
    subs[1].health.valid = true;
    assert!(super::health(&plan, &subs).valid);
}

#[test]
fn tag_and_scenario_thresholds_are_judged_on_what_they_select() {
    let mut plan = with_scenarios(whole_plan(), Vec::new());
    plan.slo = vec![
        // b and c, across both scenarios: 100 + 20 responses, the slowest 50 ms.
        threshold(
            Scope::Total,
            Metric::Latency,
            "max < 60ms",
            &[("kind", "write")],
            Severity::Fail,
        ),
        threshold(
            Scope::Total,
            Metric::Responses,
            "count == 120",
            &[("kind", "write")],
            Severity::Fail,
        ),
        // browse's requests: 150 responses and a's 2 errors.
        threshold(
            Scope::Scenario(0),
            Metric::Errors,
            "count == 2",
            &[],
            Severity::Fail,
        ),
        // buy has no `read` target: nothing measured, failed, but only a warning.
        threshold(
            Scope::Scenario(1),
            Metric::Latency,
            "p(95) < 1s",
            &[("kind", "read")],
            Severity::Warn,
        ),
        // Within browse, `write` is b alone: 20 ms.
        threshold(
            Scope::Scenario(0),
            Metric::Latency,
            "max < 15ms",
            &[("kind", "write")],
            Severity::Warn,
        ),
    ];
    let result = build_scenarios(&plan, &outputs(&plan));
    let v = &result.slo;
    assert!(v[0].passed && v[0].measured.unwrap() >= 50_000.0);
    assert_eq!(v[0].tags["kind"], "write");
    assert_eq!(v[1].measured, Some(120.0));
    assert!(v[1].passed);
    assert_eq!((v[2].scope.as_str(), v[2].measured), ("browse", Some(2.0)));
    assert_eq!(
        v[2].scope_kind,
        Some(crate::plan::regression::ScopeKind::Scenario)
    );
    assert!(v[2].passed);
    assert_eq!((v[3].measured, v[3].passed), (None, false));
    assert_eq!(v[3].severity, Severity::Warn);
    assert!(!v[4].passed);
    assert!((v[4].measured.unwrap() / 1000.0 - 20.0).abs() < 0.5);
    assert!(result.passed, "failed warnings do not fail the run");

    plan.slo[4].severity = Severity::Fail;
    let result = build_scenarios(&plan, &outputs(&plan));
    assert!(!result.slo[4].passed);
    assert!(!result.passed, "a failed `fail` threshold fails it");
}

#[test]
fn a_scenarios_window_and_abort_verdicts_land_on_its_thresholds() {
    let own = |window: Option<u32>, abort: bool| {
        let mut t = threshold(
            Scope::Total,
            Metric::Latency,
            "p(99) < 40ms",
            &[],
            Severity::Fail,
        );
        t.window_s = window;
        t.abort_on_fail = abort;
        t
    };
    let mut plan = with_scenarios(whole_plan(), vec![own(Some(2), false), own(None, true)]);
    let whole = |t: Threshold| Threshold {
        scope: Scope::Scenario(1),
        ..t
    };
    // The whole run's own window threshold first, then buy's two.
    let mut run_window = threshold(
        Scope::Total,
        Metric::Latency,
        "max < 30ms",
        &[],
        Severity::Fail,
    );
    run_window.window_s = Some(2);
    plan.slo = vec![
        run_window,
        whole(own(Some(2), false)),
        whole(own(None, true)),
    ];
    let mut outputs = outputs(&plan);
    outputs[1].windows = vec![
        Some(WindowVerdict {
            measured: Some(50_000.0),
            passed: false,
            failed_start_s: Some(0),
        }),
        None,
    ];
    outputs[1].aborted_by = Some(1);
    let result = build_scenarios(&plan, &outputs);
    let v = &result.slo;
    // The whole run's window, judged on its seconds: the first window holding one of buy's
    // 50 ms seconds (the run's second 2) starts at second 1.
    assert_eq!(v[0].window_s, Some(2));
    assert!(!v[0].passed);
    assert_eq!(v[0].failed_window_start_s, Some(1));
    assert!(v[0].measured.unwrap() >= 50_000.0);
    // buy's, from its run's watch.
    assert_eq!(v[1].scope, "buy");
    assert_eq!(
        (v[1].window_s, v[1].failed_window_start_s),
        (Some(2), Some(0))
    );
    assert!(!v[1].passed);
    assert!(v[2].aborted_run && !v[2].passed);
    assert!(!v[0].aborted_run && !v[1].aborted_run);
}

#[test]
fn the_short_form_carries_tags_and_judges_tag_selectors() {
    let mut plan = whole_plan();
    plan.slo = vec![
        threshold(
            Scope::Total,
            Metric::Responses,
            "count == 120",
            &[("kind", "write")],
            Severity::Fail,
        ),
        threshold(
            Scope::Total,
            Metric::Errors,
            "count == 0",
            &[("kind", "nothing")],
            Severity::Fail,
        ),
    ];
    let c = Load { per_second: 4, ..C };
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let result = build(&plan, &output(&plan, t0, 5, &[A, B, c]));
    assert_eq!(result.targets[1].tags["kind"], "write");
    assert_eq!(result.slo[0].measured, Some(120.0));
    assert!(result.slo[0].passed);
    assert_eq!(result.slo[1].measured, None, "selects nothing");
    assert!(!result.slo[1].passed);
    assert!(!result.passed);
}

#[test]
fn a_merge_keeps_tags_rejudges_tag_selectors_and_refuses_scenarios() {
    let mut plan = whole_plan();
    plan.slo = vec![threshold(
        Scope::Total,
        Metric::Responses,
        "count == 120",
        &[("kind", "write")],
        Severity::Fail,
    )];
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let first = build(&plan, &output(&plan, t0, 5, &[A, B, C]));
    let later = t0 + Duration::from_millis(300);
    let second = build(&plan, &output(&plan, later, 5, &[A, B, C]));
    // Each run: 100 + 25 `write` responses, failing `== 120`; merged: 250.
    assert!(!first.slo[0].passed);
    let merged = merge::merge(&[first, second], merge::MergeOptions::default()).unwrap();
    assert_eq!(merged.targets[2].tags["kind"], "write");
    assert_eq!(merged.slo[0].measured, Some(250.0));
    assert_eq!(merged.slo[0].tags["kind"], "write");

    let plan = with_scenarios(whole_plan(), Vec::new());
    let scenarios = build_scenarios(&plan, &outputs(&plan));
    let e = merge::merge(&[scenarios], merge::MergeOptions::default()).unwrap_err();
    assert_eq!(e, merge::MergeError::Scenarios { index: 1 });
    assert!(e.to_string().contains("never sharded"), "{e}");
}

/// `plan`'s scenarios, run for real at once against `loadgate serve` on loopback, built.
#[test]
fn scenarios_run_at_once_add_up_on_one_clock() {
    let server = crate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = server.url();
    let text = format!(
        "version: 1\nname: shop\ntargets:\n\
         \x20 - {{name: a, url: '{url}/a?delay=2ms', tags: {{kind: read}}}}\n\
         \x20 - {{name: b, url: '{url}/b?delay=2ms', tags: {{kind: write}}}}\n\
         \x20 - {{name: c, url: '{url}/c?delay=2ms', tags: {{kind: write}}}}\n\
         load:\n  connections: 1\n  threads: 1\n  duration: 2s\n"
    );
    let mut plan = with_scenarios(plan_of(&text), Vec::new());
    plan.scenarios[1].start_time = Duration::from_secs(1);
    plan.slo = vec![threshold(
        Scope::Total,
        Metric::Responses,
        "count > 0",
        &[("kind", "write")],
        Severity::Fail,
    )];
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let outputs = crate::run::execute_scenarios(&plan, stop, &mut |_| {}).unwrap();
    let result = build_scenarios(&plan, &outputs);
    server.shutdown();

    let [browse, buy] = [&result.scenarios[0], &result.scenarios[1]];
    assert!(browse.total.responses > 0 && buy.total.responses > 0);
    assert_eq!(
        result.total.responses,
        browse.total.responses + buy.total.responses
    );
    assert_eq!(
        result.total.responses,
        result.targets.iter().map(|t| t.responses).sum::<u64>()
    );
    assert_eq!(result.targets[2].responses, buy.total.responses);
    // buy started measuring a second after browse, on the same clock.
    assert!((buy.start_time_s - 1.0).abs() < 0.1, "{}", buy.start_time_s);
    assert!(
        (result.duration_s - 3.0).abs() < 0.2,
        "{}",
        result.duration_s
    );
    let seconds: Vec<u32> = result.targets[2]
        .time_series
        .iter()
        .map(|s| s.second)
        .collect();
    assert_eq!(seconds.first(), Some(&1));
    // The run's second 0 is browse's alone.
    assert_eq!(
        result.time_series[0].responses,
        browse.time_series[0].responses
    );
    assert!(result.slo[0].passed, "{:?}", result.slo[0]);
    assert_eq!(
        result.slo[0].measured,
        Some((result.targets[1].responses + result.targets[2].responses) as f64)
    );
}

#[test]
fn the_whole_load_summarizes_scenarios_of_both_models() {
    let plan = with_scenarios(whole_plan(), Vec::new());
    let mut subs: Vec<RunResult> = plan
        .scenarios
        .iter()
        .zip(&outputs(&plan))
        .map(|(sp, o)| build(&sp.plan, o))
        .collect();
    subs[1].load = LoadInfo {
        model: "open".into(),
        connections: None,
        max_in_flight: Some(50),
        streams: 1,
        duration_s: None,
        requests: Some(1000),
        warmup_s: 0.0,
    };
    let load = load_summary(&subs, &[0.0, 2.0]);
    assert_eq!(load.model, "mixed");
    assert_eq!((load.connections, load.max_in_flight), (Some(2), Some(50)));
    assert_eq!(load.duration_s, None, "one scenario ends by a count");
    assert_eq!(load.requests, None, "one scenario ends by time");
    subs[1].load.duration_s = Some(10.0);
    assert_eq!(load_summary(&subs, &[0.0, 2.0]).duration_s, Some(12.0));
}
