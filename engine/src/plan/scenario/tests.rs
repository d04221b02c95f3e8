//! Scenarios planned from specs written here: each executor's load exactly, a two-scenario
//! spec's scenario plans, and the errors with their field paths.

use std::path::Path;
use std::time::Duration;

use super::executor::{DEFAULT_GRACEFUL_STOP, DEFAULT_MAX_DURATION};
use crate::plan::health::HealthLimits;
use crate::plan::regression::RuleScope;
use crate::plan::threshold::Metric;
use crate::plan::{BuildContext, LoadPlan, Model, Plan, Stage, Stop};
use crate::spec::{Executor, SourceSpec};

/// Plans the spec `yaml`, or returns its errors as `path: message` lines.
fn try_plan(yaml: &str) -> Result<Plan, String> {
    let source = SourceSpec::parse("t.yaml".into(), yaml.to_string()).unwrap();
    let spec: crate::spec::Spec = serde_json::from_value(source.value.clone()).unwrap();
    let ctx = BuildContext {
        source: source.text.as_bytes(),
        spec_dir: Path::new("."),
        var: &|_| None,
    };
    crate::plan::build(&spec, &ctx).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("{}: {}\n", e.path, e.message))
            .collect()
    })
}

/// Two targets `a` and `b`, one scenario `s` running both: `name: s`, `targets: [a, b]`
/// and `fields` (YAML lines at the scenario's indentation); then `tail` (top-level YAML).
fn one_scenario(fields: &str, tail: &str) -> String {
    let fields: String = fields
        .lines()
        .map(|l| format!("    {}\n", l.trim()))
        .collect();
    format!(
        "version: 1\nname: t\ntargets:\n  - {{ name: a, url: \"http://127.0.0.1:1/a\" }}\n  \
         - {{ name: b, url: \"http://127.0.0.1:1/b\" }}\nscenarios:\n  - name: s\n    \
         targets: [a, b]\n{fields}{tail}"
    )
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn stage(duration: Option<Duration>, from: f64, to: f64, burst: u64) -> Stage {
    Stage {
        duration,
        from,
        to,
        warmup: false,
        burst,
    }
}

/// A load with the defaults every scenario gets (one stream, no pacing, 30s graceful stop).
fn load(model: Model, stages: Vec<Stage>, stop: Stop) -> LoadPlan {
    LoadPlan {
        model,
        stages,
        stop,
        connections: 0,
        max_in_flight: 0,
        pacing: None,
        think_time: None,
        streams: 1,
        threads: None,
        pre_connect: model == Model::Closed,
        warmup_requests: 0,
        health: HealthLimits::default(),
        per_loop_iterations: None,
        max_duration: None,
        graceful_stop: Some(DEFAULT_GRACEFUL_STOP),
    }
}

/// Each executor's fields (YAML lines), the top-level YAML after them, and the load it plans.
fn executor_cases() -> Vec<(&'static str, &'static str, LoadPlan)> {
    let closed = |stages, stop, connections| LoadPlan {
        connections,
        ..load(Model::Closed, stages, stop)
    };
    let open = |stages, stop, max_in_flight| LoadPlan {
        max_in_flight,
        ..load(Model::Open, stages, stop)
    };
    vec![
        (
            "executor: constant-vus\nvus: 10\nduration: 30s",
            "",
            closed(
                vec![stage(Some(secs(30)), 10.0, 10.0, 0)],
                Stop::Duration(secs(30)),
                10,
            ),
        ),
        (
            // Two streams per connection: 8 virtual users are 4 connections.
            "executor: constant-vus\nvus: 8\nduration: 5s\ngraceful_stop: 0s",
            "load: { streams: 2, threads: 3, pre_connect: false }\ndefaults: { protocol: h2 }\n",
            LoadPlan {
                streams: 2,
                threads: Some(3),
                pre_connect: false,
                graceful_stop: Some(Duration::ZERO),
                ..closed(
                    vec![stage(Some(secs(5)), 4.0, 4.0, 0)],
                    Stop::Duration(secs(5)),
                    4,
                )
            },
        ),
        (
            "executor: ramping-vus\nstart_vus: 2\nstages:\n  - { duration: 10s, level: 20 }\n  \
             - { duration: 0s, level: 40 }\n  - { duration: 5s, level: 0 }",
            "",
            closed(
                vec![
                    stage(Some(secs(10)), 2.0, 20.0, 0),
                    stage(Some(secs(0)), 20.0, 40.0, 0),
                    stage(Some(secs(5)), 40.0, 0.0, 0),
                ],
                Stop::Duration(secs(15)),
                40,
            ),
        ),
        (
            "executor: constant-arrival-rate\nrate: 200/s\nduration: 1m\nmax_in_flight: 50",
            "",
            open(
                vec![stage(Some(secs(60)), 200.0, 200.0, 0)],
                Stop::Duration(secs(60)),
                50,
            ),
        ),
        (
            "executor: ramping-arrival-rate\nstages:\n  - { duration: 10s, level: 100/s }\n  \
             - { duration: 0s, arrivals: 300 }\n  - { duration: 20s, arrivals: 1000 }",
            "",
            open(
                vec![
                    stage(Some(secs(10)), 0.0, 100.0, 0),
                    stage(Some(secs(0)), 100.0, 100.0, 300),
                    stage(Some(secs(20)), 50.0, 50.0, 0),
                ],
                Stop::Duration(secs(30)),
                300,
            ),
        ),
        (
            "executor: per-vu-iterations\nvus: 5\niterations: 7\nthink_time: 10ms",
            "",
            LoadPlan {
                per_loop_iterations: Some(7),
                max_duration: Some(DEFAULT_MAX_DURATION),
                think_time: Some(crate::plan::ThinkTime::Fixed(Duration::from_millis(10))),
                ..closed(vec![stage(None, 5.0, 5.0, 0)], Stop::Requests(35), 5)
            },
        ),
        (
            "executor: shared-iterations\nvus: 3\niterations: 100\nmax_duration: 20s",
            "",
            LoadPlan {
                max_duration: Some(secs(20)),
                ..closed(vec![stage(None, 3.0, 3.0, 0)], Stop::Requests(100), 3)
            },
        ),
        (
            // k6's default: one iteration.
            "executor: shared-iterations\nvus: 3",
            "",
            LoadPlan {
                max_duration: Some(DEFAULT_MAX_DURATION),
                ..closed(vec![stage(None, 3.0, 3.0, 0)], Stop::Requests(1), 3)
            },
        ),
    ]
}

#[test]
fn each_executor_plans_its_load_exactly() {
    for (fields, tail, expected) in executor_cases() {
        let plan =
            try_plan(&one_scenario(fields, tail)).unwrap_or_else(|e| panic!("{fields}: {e}"));
        assert_eq!(plan.scenarios.len(), 1);
        assert_eq!(plan.scenarios[0].plan.load, expected, "{fields}");
        // The whole plan's load is the first scenario's.
        assert_eq!(plan.load, expected, "{fields}");
    }
}

/// A constant arrival rate of reads beside a ramping checkout flow, the whole run's
/// thresholds and rules beside each scenario's.
const TWO_SCENARIOS: &str = r#"
version: 1
name: shop
defaults:
  base_url: http://127.0.0.1:1
targets:
  - { name: list, path: /items, tags: { kind: read, team: web } }
  - { name: item, path: /items/1, slo: { latency: ["p(99) < 1s"] } }
flows:
  - name: checkout
    tags: { kind: write }
    slo: { iteration_duration: ["p(95) < 2s"] }
    steps:
      - { name: cart, path: /cart, slo: { latency: ["p(95) < 300ms"] } }
      - { name: pay, method: POST, path: /pay }
load: { threads: 2 }
scenarios:
  - name: browse
    executor: constant-arrival-rate
    targets: [list, item]
    rate: 200/s
    duration: 30s
    tags: { team: shop }
    slo:
      latency: ["p(95) < 200ms", { threshold: "p(99) < 1s", abort_on_fail: true }]
    regression:
      latency: ["p(95) +10%"]
  - name: checkout
    executor: ramping-vus
    flows: [checkout]
    start_time: 5s
    stages:
      - { duration: 10s, level: 4 }
    slo:
      errors: ["rate < 1%"]
slo:
  latency: ["p(95) < 500ms"]
"#;

#[test]
fn two_scenarios_plan_their_indices_and_tags() {
    let plan = try_plan(TWO_SCENARIOS).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = plan.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["list", "item", "checkout/cart", "checkout/pay"]);
    let steps: Vec<usize> = plan.flows[0].steps.iter().map(|s| s.target).collect();
    assert_eq!(steps, [2, 3]);
    let [browse, checkout] = &plan.scenarios[..] else {
        panic!("{:?}", plan.scenarios.len())
    };
    assert_eq!(
        (browse.name.as_str(), browse.executor, browse.start_time),
        ("browse", Executor::ConstantArrivalRate, Duration::ZERO)
    );
    assert_eq!(
        (checkout.executor, checkout.start_time),
        (Executor::RampingVus, secs(5))
    );
    assert_eq!(
        (&browse.targets[..], &browse.flows[..]),
        (&[0, 1][..], &[][..])
    );
    assert_eq!(
        (&checkout.targets[..], &checkout.flows[..]),
        (&[2, 3][..], &[0][..])
    );
    assert_eq!(plan.load, browse.plan.load);
    assert_eq!(checkout.plan.load.threads, Some(2));

    // Tags: the scenario's merged in, the target's own win; `scenario` always.
    let tags = |t: &crate::plan::Tags| {
        t.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(tags(&browse.tags), "scenario=browse,team=shop");
    assert_eq!(
        tags(&plan.targets[0].tags),
        "kind=read,scenario=browse,team=web"
    );
    assert_eq!(tags(&plan.targets[1].tags), "scenario=browse,team=shop");
    assert_eq!(tags(&plan.flows[0].tags), "kind=write,scenario=checkout");
    assert!(
        plan.targets[3]
            .tags
            .get("scenario")
            .is_some_and(|s| s == "checkout")
    );
    assert_eq!(
        tags(&browse.plan.targets[0].tags),
        tags(&plan.targets[0].tags)
    );

    // The sub-plans: their own targets and flows, steps renumbered.
    let sub = &checkout.plan;
    let names: Vec<&str> = sub.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["checkout/cart", "checkout/pay"]);
    let steps: Vec<usize> = sub.flows[0].steps.iter().map(|s| s.target).collect();
    assert_eq!(steps, [0, 1]);
    assert!(sub.service.is_none() && sub.scenarios.is_empty() && sub.regression.is_empty());
    assert!(browse.plan.flows.is_empty());
}

#[test]
fn two_scenarios_plan_their_thresholds_and_rules() {
    let plan = try_plan(TWO_SCENARIOS).unwrap_or_else(|e| panic!("{e}"));
    let [browse, checkout] = &plan.scenarios[..] else {
        panic!("{:?}", plan.scenarios.len())
    };
    // Thresholds: the whole plan holds every one, the scenarios' as Scope::Scenario(i).
    let scoped = |p: &Plan| {
        p.slo
            .iter()
            .map(|t| {
                format!(
                    "{:?} {}{}",
                    t.scope,
                    t.expression,
                    if t.abort_on_fail { " abort" } else { "" }
                )
            })
            .collect::<Vec<_>>()
    };
    let whole = scoped(&plan);
    for expected in [
        "Total p(95) < 500ms",
        "Target(1) p(99) < 1s",
        "Target(2) p(95) < 300ms",
        "Flow(0) p(95) < 2s",
        "Scenario(0) p(95) < 200ms",
        "Scenario(0) p(99) < 1s abort",
        "Scenario(1) rate < 1%",
    ] {
        assert!(
            whole.contains(&expected.to_string()),
            "{expected} in {whole:?}"
        );
    }
    // The whole run's default errors threshold, and no scenario's.
    assert_eq!(plan.slo.iter().filter(|t| t.default).count(), 1);
    assert_eq!(
        scoped(&browse.plan),
        [
            "Target(1) p(99) < 1s",
            "Total p(95) < 200ms",
            "Total p(99) < 1s abort"
        ]
    );
    assert_eq!(
        scoped(&checkout.plan),
        [
            "Target(0) p(95) < 300ms",
            "Flow(0) p(95) < 2s",
            "Total rate < 1%"
        ]
    );

    // Rules: the scenario's written rule, and the whole run's defaults.
    let rule = plan
        .regression
        .iter()
        .find(|r| r.scope == RuleScope::Scenario("browse".into()))
        .expect("the scenario's rule");
    assert_eq!(rule.metric, Metric::Latency);
    assert_eq!(
        plan.regression
            .iter()
            .filter(|r| matches!(r.scope, RuleScope::Scenario(_)))
            .count(),
        1
    );
    assert!(plan.regression.iter().any(|r| r.scope == RuleScope::Total));
}

#[test]
fn errors_name_their_field() {
    let cases: [(&str, &str, &str); 14] = [
        (
            "executor: constant-vus\nvus: 2\nduration: 5s\nrate: 5/s",
            "",
            "scenarios[0].rate: constant-vus takes `vus` and `duration` (and `think_time`, \
             `pacing`), not `rate`",
        ),
        (
            "executor: constant-arrival-rate\nrate: 5/s",
            "",
            "scenarios[0]: missing `duration`: constant-arrival-rate takes `rate` and",
        ),
        (
            "executor: constant-arrival-rate\nrate: 5/s\nduration: 5s\nthink_time: 1s",
            "",
            "scenarios[0].think_time: constant-arrival-rate takes",
        ),
        (
            "executor: ramping-vus\nstages:\n  - { duration: 5s, arrivals: 10 }",
            "",
            "scenarios[0].stages[0].arrivals: arrivals apply to the open model only",
        ),
        (
            "executor: ramping-vus\nstages:\n  - { duration: 5s, level: 3, warmup: true }",
            "",
            "scenarios[0].stages[0].warmup: a scenario has no warmup stages",
        ),
        (
            "executor: ramping-arrival-rate\nstages:\n  - { duration: 0s, arrivals: 10 }",
            "",
            "scenarios[0].stages[0].duration: the last stage may not last 0s",
        ),
        (
            "executor: constant-vus\nvus: 3\nduration: 5s",
            "load: { streams: 2 }\n",
            "scenarios[0].vus: 3 virtual users are not a multiple of `load.streams` (2)",
        ),
        (
            "executor: shared-iterations\nvus: 1\nmax_duration: 0s",
            "",
            "scenarios[0].max_duration: must be longer than 0",
        ),
        (
            "executor: shared-iterations\nvus: 1",
            "load: { connections: 3, streams: 1 }\n",
            "load.connections: with `scenarios`, `load` gives only the settings they share",
        ),
        (
            "executor: shared-iterations\nvus: 1\ntags: { scenario: x }",
            "",
            "scenarios[0].tags.scenario: the tag `scenario` is the scenario's name",
        ),
        (
            "executor: shared-iterations\nvus: 1\nregression: { alpha: 5% }",
            "",
            "scenarios[0].regression.alpha: ",
        ),
        (
            "executor: shared-iterations\nvus: 1\nslo: { latency: [\"p(95) << 1s\"] }",
            "",
            "scenarios[0].slo.latency[0]: ",
        ),
        (
            "executor: shared-iterations\nvus: 1\nstart_time: soon",
            "",
            "scenarios[0].start_time: ",
        ),
        (
            "executor: shared-iterations\nvus: 1",
            "slo: { latency: [{ threshold: \"p(95) < 1s\", abort_on_fail: true }] }\n",
            "slo.latency[0].abort_on_fail: with `scenarios`, each scenario is watched on its own",
        ),
    ];
    for (fields, tail, expected) in cases {
        let errors = try_plan(&one_scenario(fields, tail)).unwrap_err();
        assert!(errors.contains(expected), "{expected}\nin:\n{errors}");
    }
}

#[test]
fn membership_and_names_are_checked() {
    let spec = |scenarios: &str, load: &str| {
        format!(
            "version: 1\nname: t\ndefaults: {{ base_url: \"http://127.0.0.1:1\" }}\ntargets:\n  \
             - {{ name: a, path: /a }}\n  - {{ name: b, path: /b }}\nflows:\n  - name: f\n    \
             steps: [{{ name: s, path: /s }}]\n{load}scenarios:\n{scenarios}"
        )
    };
    let run = "executor: shared-iterations, vus: 1";
    let cases = [
        (
            format!("  - {{ name: x, targets: [a, b], {run} }}\n"),
            "",
            "flows[0].name: flow `f` is in no scenario: name it in one scenario's `flows`",
        ),
        (
            format!("  - {{ name: x, targets: [a], flows: [f], {run} }}\n"),
            "",
            "scenarios[0].flows: give `targets` or `flows`, not both",
        ),
        (
            format!("  - {{ name: x, targets: [a, c], flows: [f], {run} }}\n"),
            "",
            "scenarios[0].targets[1]: no target is named `c`; the targets: a, b",
        ),
        (
            format!(
                "  - {{ name: x, targets: [a, b], {run} }}\n  - {{ name: y, targets: [b], {run} }}\n  \
                 - {{ name: z, flows: [f, f], {run} }}\n"
            ),
            "",
            "scenarios[1].targets[0]: target `b` is already in scenario `x`",
        ),
        (
            format!(
                "  - {{ name: x, targets: [a, b], {run} }}\n  - {{ name: z, flows: [f, f], {run} }}\n"
            ),
            "",
            "scenarios[1].flows[1]: flow `f` is named twice here",
        ),
        (
            format!(
                "  - {{ name: x, targets: [a], {run} }}\n  - {{ name: x, flows: [f], {run} }}\n"
            ),
            "",
            "targets[1].name: target `b` is in no scenario",
        ),
        (
            format!(
                "  - {{ name: x, targets: [a, b], {run} }}\n  - {{ name: x, flows: [f], {run} }}\n"
            ),
            "",
            "scenarios[1].name: scenario name `x` is used twice",
        ),
        (
            format!(
                "  - {{ name: x/y, targets: [a, b], {run} }}\n  - {{ name: z, flows: [f], {run} }}\n"
            ),
            "",
            "scenarios[0].name: a scenario name may not hold `/`",
        ),
        (
            format!(
                "  - {{ name: \"x:y\", targets: [a, b], {run} }}\n  - {{ name: z, flows: [f], {run} }}\n"
            ),
            "",
            "scenarios[0].name: a scenario name may not hold `:`",
        ),
        (
            format!(
                "  - {{ name: x, targets: [a, b], {run} }}\n  - {{ name: z, flows: [f], {run} }}\n"
            ),
            "load: { streams: 2 }\n",
            "load.streams: 2 streams per connection need `protocol: h2`",
        ),
    ];
    for (scenarios, load, expected) in cases {
        let errors = try_plan(&spec(&scenarios, load)).unwrap_err();
        assert!(errors.contains(expected), "{expected}\nin:\n{errors}");
    }
    // Neither `load` nor `scenarios`.
    let errors =
        try_plan("version: 1\nname: t\ntargets: [{ name: a, url: \"http://h/\" }]\n").unwrap_err();
    assert!(
        errors.contains(": missing `load` (or `scenarios`)"),
        "{errors}"
    );
}
