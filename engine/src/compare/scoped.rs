//! What a regression rule looks at in a result: its scope (the whole run, a target, a flow's
//! iterations, a scenario), found by name, narrowed to the targets its tag selector matches;
//! its whole-run measures and its per-second series on the run's clock.
//!
//! - `total`: the run's `total` and `time_series`;
//! - a target (a plain target or a flow step): its own measures and series;
//! - a flow: its iterations in a target's shape, no series;
//! - a scenario: its `total` and its `time_series`, shifted to the run's clock by its start
//!   (its seconds are counted from its own start);
//! - with tags (`latency{kind:write}`): the exact sum (`result::merge::sum_targets`:
//!   histograms added, per-second series merged) of the scope's targets whose `tags` hold the
//!   selector's every pair: every target of the run (`total`), the scenario's, the flow's
//!   steps (their requests, not the iterations), or the target itself. Rates are per second of
//!   the scope's window (the run's, or the scenario's).
//!
//! A target's seconds count from the run's start already (`result::build_scenarios` moves
//! them); a scenario's own count from its start, `start_time_s` after the earliest
//! scenario's, which is whole seconds (rounded) on the run's clock, as the run's own series
//! sums them.

use std::borrow::Cow;

use crate::plan::regression::{RegressionRule, RuleScope};
use crate::result::{RunResult, ScenarioResult, TargetResult, TimeSample};

/// A rule's scope in one result.
#[derive(Debug)]
pub(super) struct Scoped<'a> {
    /// Its whole-run measures (`time_series` not read: see `series`).
    pub(super) target: Cow<'a, TargetResult>,
    /// Its per-second series on the run's clock; `None` for a flow's iterations, or an empty
    /// series (results before version 4).
    pub(super) series: Option<Cow<'a, [TimeSample]>>,
}

/// Why a result has nothing for a rule to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Missing {
    /// No target, flow or scenario of the rule's name.
    Scope,
    /// The scope is there, and none of its targets carries the rule's tags.
    Tags,
    /// The sum of the matching targets failed: a histogram does not decode.
    Unreadable(String),
}

/// What `rule` is judged on in `result` (see the module documentation).
pub(super) fn scoped<'a>(
    rule: &RegressionRule,
    result: &'a RunResult,
) -> Result<Scoped<'a>, Missing> {
    if !rule.tags.is_empty() {
        return tagged(rule, result);
    }
    let series = |s: &'a [TimeSample]| (!s.is_empty()).then_some(Cow::Borrowed(s));
    match &rule.scope {
        RuleScope::Total => Ok(Scoped {
            target: Cow::Borrowed(&result.total),
            series: series(&result.time_series),
        }),
        RuleScope::Target(name) => {
            let t = target(result, name).ok_or(Missing::Scope)?;
            Ok(Scoped {
                target: Cow::Borrowed(t),
                series: series(&t.time_series),
            })
        }
        RuleScope::Flow(name) => {
            let f = result.flows.iter().find(|f| &f.name == name);
            Ok(Scoped {
                target: Cow::Owned(f.ok_or(Missing::Scope)?.as_target()),
                series: None,
            })
        }
        RuleScope::Scenario(name) => {
            let s = scenario(result, name).ok_or(Missing::Scope)?;
            let offset = offset_s(result, s);
            let shifted = s
                .time_series
                .iter()
                .map(|t| TimeSample {
                    second: t.second + offset,
                    ..t.clone()
                })
                .collect::<Vec<_>>();
            Ok(Scoped {
                target: Cow::Borrowed(&s.total),
                series: (!shifted.is_empty()).then_some(Cow::Owned(shifted)),
            })
        }
    }
}

/// The sum of the targets of `rule`'s scope whose tags match its selector.
fn tagged<'a>(rule: &RegressionRule, result: &'a RunResult) -> Result<Scoped<'a>, Missing> {
    let names: Option<Vec<&str>> = match &rule.scope {
        RuleScope::Total => None,
        RuleScope::Target(name) => Some(vec![&target(result, name).ok_or(Missing::Scope)?.name]),
        RuleScope::Flow(name) => {
            let flow = result.flows.iter().find(|f| &f.name == name);
            let steps = &flow.ok_or(Missing::Scope)?.steps;
            Some(steps.iter().map(|s| s.target.as_str()).collect())
        }
        RuleScope::Scenario(name) => {
            let s = scenario(result, name).ok_or(Missing::Scope)?;
            Some(s.targets.iter().map(String::as_str).collect())
        }
    };
    // Every target's seconds are on the run's clock: second 0 at the sum's second 0.
    let parts: Vec<(&TargetResult, u32)> = result
        .targets
        .iter()
        .filter(|t| names.as_ref().is_none_or(|n| n.contains(&t.name.as_str())))
        .filter(|t| rule.tags.matches(&t.tags))
        .map(|t| (t, 0))
        .collect();
    if parts.is_empty() {
        return Err(Missing::Tags);
    }
    let duration_s = match &rule.scope {
        RuleScope::Scenario(name) => scenario(result, name).map_or(0.0, |s| s.duration_s),
        _ => result.duration_s,
    };
    let name = format!("{}{}", rule.scope.name(), rule.tags);
    let mut sum = crate::result::merge::sum_targets(&name, &parts, duration_s)
        .map_err(|e| Missing::Unreadable(e.to_string()))?;
    let series = std::mem::take(&mut sum.time_series);
    Ok(Scoped {
        target: Cow::Owned(sum),
        series: (!series.is_empty()).then_some(Cow::Owned(series)),
    })
}

fn target<'a>(result: &'a RunResult, name: &str) -> Option<&'a TargetResult> {
    result.targets.iter().find(|t| t.name == name)
}

fn scenario<'a>(result: &'a RunResult, name: &str) -> Option<&'a ScenarioResult> {
    result.scenarios.iter().find(|s| s.name == name)
}

/// Where a scenario's second 0 falls on the run's clock: its start after the earliest
/// scenario's, in whole seconds (rounded).
fn offset_s(result: &RunResult, scenario: &ScenarioResult) -> u32 {
    let earliest = result
        .scenarios
        .iter()
        .map(|s| s.start_time_s)
        .fold(f64::INFINITY, f64::min);
    (scenario.start_time_s - earliest).max(0.0).round() as u32
}

/// The scope in words, with its selector: `the whole run`, `target `a``, `the targets of the
/// whole run tagged {kind:write}`.
pub(super) fn scope_words(rule: &RegressionRule) -> String {
    let place = place(&rule.scope);
    if rule.tags.is_empty() {
        place
    } else {
        format!("the targets of {place} tagged {}", rule.tags)
    }
}

/// `the whole run`, or `target `a`` (scenario, flow).
fn place(scope: &RuleScope) -> String {
    match scope {
        RuleScope::Total => "the whole run".to_string(),
        scope => format!("{} `{}`", scope.kind(), scope.name()),
    }
}

/// Why a rule is not tested when its scope is missing from a result: `missing[0]` the
/// baseline's (`None`: it has it), `missing[1]` the current run's.
pub(super) fn missing_reason(rule: &RegressionRule, missing: [Option<&Missing>; 2]) -> String {
    let (kind, name) = (rule.scope.kind(), rule.scope.name());
    let which = ["the baseline result", "the current result"];
    if let Some(why) = missing.iter().flatten().find_map(|m| match m {
        Missing::Unreadable(why) => Some(why),
        _ => None,
    }) {
        return format!("the targets tagged {} cannot be summed: {why}", rule.tags);
    }
    match missing {
        [Some(Missing::Scope), Some(Missing::Scope)] => {
            format!("neither result has the {kind} `{name}`")
        }
        [Some(Missing::Tags), Some(Missing::Tags)] => format!(
            "no target of {} in either result carries the tags {}: the selector matches \
             nothing",
            place(&rule.scope),
            rule.tags
        ),
        [Some(Missing::Scope), _] | [_, Some(Missing::Scope)] => {
            let side = usize::from(missing[0] != Some(&Missing::Scope));
            format!("{} has no {kind} `{name}`", which[side])
        }
        [Some(_), _] | [_, Some(_)] => {
            let side = usize::from(missing[0].is_none());
            format!(
                "{} has no target carrying the tags {} in {}",
                which[side],
                rule.tags,
                place(&rule.scope)
            )
        }
        [None, None] => "no responses to measure in one of the runs".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::gate::{Overall, summary_line};
    use crate::compare::test_seconds::seconds;
    use crate::compare::{Comparison, RuleState, compare, compare_with_history};
    use crate::plan::TagSelector;
    use crate::plan::threshold::{Metric, Severity};
    use crate::result::{RecordedRule, encode_histogram, summary};
    use hdrhistogram::Histogram;

    /// A target `name` tagged `kind: KIND` whose seconds' latencies (µs) are `seconds`, as a
    /// run records it: per-second histograms of 2 significant digits, the whole at 3.
    fn target_of(name: &str, kind: &str, seconds: &[Vec<u64>]) -> TargetResult {
        let mut whole = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        let time_series = seconds
            .iter()
            .enumerate()
            .map(|(i, values)| {
                let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
                for v in values {
                    h.record(*v).unwrap();
                    whole.record(*v).unwrap();
                }
                TimeSample {
                    second: i as u32,
                    responses: values.len() as u64,
                    errors: 0,
                    p50_us: h.value_at_quantile(0.5),
                    p99_us: h.value_at_quantile(0.99),
                    max_us: h.max(),
                    p90_us: None,
                    p95_us: None,
                    p99_9_us: None,
                    mean_us: None,
                    requests: Some(values.len() as u64),
                    histogram: Some(encode_histogram(&h)),
                }
            })
            .collect();
        let responses = whole.len();
        TargetResult {
            name: name.to_string(),
            tags: [("kind".to_string(), kind.to_string())].into(),
            requests: responses,
            responses,
            rps: responses as f64 / seconds.len() as f64,
            latency_us: summary(&whole),
            histogram: encode_histogram(&whole),
            time_series,
            ..TargetResult::default()
        }
    }

    /// A run of the fixture with `targets` (second 0 of each at `offsets`), its total their
    /// sum, lasting `duration_s`, and `rules` recorded.
    fn run_of(
        targets: Vec<TargetResult>,
        offsets: &[u32],
        duration_s: f64,
        rules: &[RegressionRule],
    ) -> RunResult {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let mut run = crate::result::read(std::path::Path::new(path)).expect("the fixture");
        let parts: Vec<(&TargetResult, u32)> =
            targets.iter().zip(offsets.iter().copied()).collect();
        run.total = crate::result::merge::sum_targets("total", &parts, duration_s).unwrap();
        run.time_series = std::mem::take(&mut run.total.time_series);
        run.targets = targets;
        run.duration_s = duration_s;
        run.regression_rules = Some(rules.iter().map(RecordedRule::from_rule).collect());
        run
    }

    /// Targets `read` and `write` for 30 s, at p50 medians `read_us` and `write_us`.
    fn read_write(seed: u64, [read_us, write_us]: [f64; 2], rules: &[RegressionRule]) -> RunResult {
        let read = target_of("read", "read", &seconds(seed, 30, read_us));
        let write = target_of("write", "write", &seconds(seed + 100, 30, write_us));
        run_of(vec![read, write], &[0, 0], 30.0, rules)
    }

    fn rule(text: &str, scope: RuleScope, tags: &[(&str, &str)]) -> RegressionRule {
        let pairs = tags.iter().map(|(n, v)| (n.to_string(), v.to_string()));
        RegressionRule {
            scope,
            tags: TagSelector(pairs.collect()),
            ..RegressionRule::parse(Metric::Latency, text).unwrap()
        }
    }

    fn states(c: &Comparison) -> Vec<RuleState> {
        c.rules.iter().map(|r| r.verdict).collect()
    }

    #[test]
    fn a_tagged_rule_regresses_when_its_targets_slow_and_not_when_others_do() {
        let rules = [
            rule(
                "p(50) +10% floor 0us",
                RuleScope::Total,
                &[("kind", "write")],
            ),
            rule("p(50) +10% floor 0us", RuleScope::Total, &[]),
            rule(
                "p(50) +10% floor 0us",
                RuleScope::Target("write".into()),
                &[],
            ),
        ];
        let baseline = read_write(1, [1_000.0, 1_000.0], &rules);
        let view = scoped(&rules[0], &baseline).unwrap();
        assert_eq!(view.target.responses, 6_000, "the write target's alone");
        assert_eq!(view.series.as_ref().unwrap().len(), 30);
        let write_slower = read_write(2, [1_000.0, 1_500.0], &rules);
        let read_slower = read_write(3, [1_500.0, 1_000.0], &rules);
        use RuleState::*;
        let c = compare(&baseline, &write_slower).unwrap();
        assert_eq!(
            states(&c),
            [Regressed, Regressed, Regressed],
            "{:#?}",
            c.rules
        );
        assert_eq!(c.rules[0].tags, rules[0].tags.to_map());
        let c = compare(&baseline, &read_slower).unwrap();
        // The whole run's median moves (half its requests slowed); the writes' does not.
        assert_eq!(states(&c)[0], Unchanged, "{:#?}", c.rules);
        assert_eq!(states(&c)[2], Unchanged, "{:#?}", c.rules);
        assert_ne!(states(&c)[1], Unchanged, "{:#?}", c.rules);
        assert_eq!(c.family.as_ref().unwrap().tested, 3);
    }

    #[test]
    fn a_selector_that_matches_nothing_is_inconclusive_and_says_so() {
        let rules = [
            rule("p(50) +10%", RuleScope::Total, &[("kind", "delete")]),
            rule(
                "p(50) +10%",
                RuleScope::Target("read".into()),
                &[("kind", "write")],
            ),
            rule("p(50) +10%", RuleScope::Scenario("nope".into()), &[]),
        ];
        let baseline = read_write(1, [1_000.0, 1_000.0], &rules);
        let mut current = read_write(2, [1_000.0, 1_000.0], &rules);
        let c = compare(&baseline, &current).unwrap();
        assert_eq!(states(&c), [RuleState::Inconclusive; 3]);
        assert_eq!(c.family, None, "no rule tested");
        assert_eq!(
            c.rules[0].reason,
            "no target of the whole run in either result carries the tags {kind:delete}: the \
             selector matches nothing"
        );
        assert_eq!(
            c.rules[1].reason,
            "no target of target `read` in either result carries the tags {kind:write}: the \
             selector matches nothing"
        );
        assert_eq!(c.rules[2].reason, "neither result has the scenario `nope`");
        // Only the current run has a matching target.
        current.targets[0]
            .tags
            .insert("kind".into(), "delete".into());
        let c = compare(&baseline, &current).unwrap();
        assert_eq!(
            c.rules[0].reason,
            "the baseline result has no target carrying the tags {kind:delete} in the whole run"
        );
    }

    /// `browse` (target `read`, from 0 s, 30 s) and `checkout` (target `write`, from 5 s, 25
    /// s) at p50 medians `[read_us, write_us]`: the run's targets' seconds on the run's clock,
    /// the scenarios' from their own starts, as `result::build_scenarios` writes them.
    fn scenarios(seed: u64, [read_us, write_us]: [f64; 2], rules: &[RegressionRule]) -> RunResult {
        let read = target_of("read", "read", &seconds(seed, 30, read_us));
        let write = target_of("write", "write", &seconds(seed + 100, 25, write_us));
        let mut moved = write.clone();
        for s in &mut moved.time_series {
            s.second += 5;
        }
        let mut run = run_of(vec![read.clone(), moved], &[0, 0], 30.0, rules);
        let own = [read, write];
        run.scenarios = [("browse", 0, 30.0), ("checkout", 1, 25.0)]
            .into_iter()
            .map(|(name, i, duration_s)| {
                let t = &own[i];
                ScenarioResult {
                    name: name.to_string(),
                    executor: "constant-vus".to_string(),
                    start_time_s: if i == 0 { 0.0 } else { 5.0 },
                    tags: [("scenario".to_string(), name.to_string())].into(),
                    load: run.load.clone(),
                    duration_s,
                    total: TargetResult {
                        name: name.to_string(),
                        tags: Default::default(),
                        ..t.clone()
                    },
                    targets: vec![t.name.clone()],
                    flows: Vec::new(),
                    iterations: t.responses,
                    time_series: t.time_series.clone(),
                    health: run.health.clone(),
                }
            })
            .collect();
        run
    }

    #[test]
    fn a_scenario_rule_is_judged_on_its_scenario_on_the_run_s_clock() {
        let rules = [
            rule(
                "p(50) +10% floor 0us",
                RuleScope::Scenario("checkout".into()),
                &[],
            ),
            rule(
                "p(50) +10% floor 0us",
                RuleScope::Scenario("browse".into()),
                &[("kind", "write")],
            ),
        ];
        let baseline = scenarios(1, [1_000.0, 1_000.0], &rules);
        let view = scoped(&rules[0], &baseline).unwrap();
        let series = view.series.unwrap();
        assert_eq!(
            (series[0].second, series.last().unwrap().second),
            (5, 29),
            "shifted by its start"
        );
        // Its targets by tag: the same seconds, on the run's clock already.
        let tagged = rule(
            "p(50) +10% floor 0us",
            RuleScope::Scenario("checkout".into()),
            &[("kind", "write")],
        );
        let sum = scoped(&tagged, &baseline).unwrap();
        let seconds: Vec<u32> = sum.series.unwrap().iter().map(|s| s.second).collect();
        assert_eq!(seconds, series.iter().map(|s| s.second).collect::<Vec<_>>());
        assert_eq!(sum.target.responses, view.target.responses);
        use RuleState::*;
        let c = compare(&baseline, &scenarios(2, [1_000.0, 1_500.0], &rules)).unwrap();
        assert_eq!(c.rules[0].verdict, Regressed, "{:#?}", c.rules);
        assert_eq!(c.rules[0].samples, [30, 30]);
        assert_eq!(
            c.rules[1].reason,
            "no target of scenario `browse` in either result carries the tags {kind:write}: \
             the selector matches nothing"
        );
        let c = compare(&baseline, &scenarios(3, [1_500.0, 1_000.0], &rules)).unwrap();
        assert_eq!(c.rules[0].verdict, Unchanged, "{:#?}", c.rules);
        // A run without scenarios has none of that name.
        let plain = read_write(4, [1_000.0, 1_000.0], &rules);
        let c = compare(&baseline, &plain).unwrap();
        assert_eq!(
            c.rules[0].reason,
            "the current result has no scenario `checkout`"
        );
    }

    #[test]
    fn a_warn_rule_that_regresses_warns_and_a_fail_rule_fails() {
        let warn = RegressionRule {
            severity: Severity::Warn,
            ..rule(
                "p(50) +10% floor 0us",
                RuleScope::Total,
                &[("kind", "write")],
            )
        };
        let fail = rule(
            "p(50) +10% floor 0us",
            RuleScope::Total,
            &[("kind", "read")],
        );
        let rules = [warn, fail];
        let baseline = read_write(1, [1_000.0, 1_000.0], &rules);

        let c = compare(&baseline, &read_write(2, [1_000.0, 1_500.0], &rules)).unwrap();
        let verdict = &c.rules[0];
        assert_eq!(
            (verdict.verdict, verdict.severity),
            (RuleState::Regressed, Severity::Warn)
        );
        assert_eq!(c.rules[1].verdict, RuleState::Unchanged, "{:#?}", c.rules);
        assert!(!c.regressed());
        assert_eq!(c.warnings(), 1);
        // Both rules are one family: one false-alarm rate per run.
        assert_eq!(c.family.as_ref().unwrap().tested, 2);
        let current = read_write(2, [1_000.0, 1_500.0], &rules);
        assert_eq!(Overall::of(&current, Some(&c)), Overall::Pass);
        let line = summary_line(&current, Some(&c));
        assert!(
            line.starts_with("PASSED: ")
                && line.ends_with("no regression (2 rules: 1 warning, 1 unchanged)"),
            "{line}"
        );

        let current = read_write(3, [1_500.0, 1_000.0], &rules);
        let c = compare(&baseline, &current).unwrap();
        assert_eq!(c.rules[1].verdict, RuleState::Regressed, "{:#?}", c.rules);
        assert!(c.regressed());
        assert_eq!(c.warnings(), 0);
        assert_eq!(Overall::of(&current, Some(&c)), Overall::Regressed);
    }

    #[test]
    fn a_stored_history_judges_a_tagged_rule_on_its_targets_too() {
        let rules = [rule(
            "p(50) +10% floor 0us",
            RuleScope::Total,
            &[("kind", "write")],
        )];
        let history: Vec<RunResult> = (0..6)
            .map(|i| {
                let mut r = read_write(10 + i, [1_000.0, 1_000.0], &rules);
                r.started_at = format!("2026-11-{:02}T03:00:00Z", i + 1);
                r
            })
            .collect();
        let baseline = history.last().unwrap();
        let judge = |current: &RunResult| {
            let c = compare_with_history(baseline, current, &history).unwrap();
            assert_eq!(c.family.as_ref().map(|f| f.method.as_str()), Some("holm"));
            c.rules[0].verdict
        };
        assert_eq!(
            judge(&read_write(1, [1_000.0, 1_500.0], &rules)),
            RuleState::Regressed
        );
        assert_ne!(
            judge(&read_write(2, [1_500.0, 1_000.0], &rules)),
            RuleState::Regressed
        );
        let mut untagged = read_write(3, [1_000.0, 1_500.0], &rules);
        untagged.targets[1].tags.clear();
        let c = compare_with_history(baseline, &untagged, &history).unwrap();
        assert_eq!(
            c.rules[0].reason,
            "the current result has no target carrying the tags {kind:write} in the whole run"
        );
    }

    #[test]
    fn ab_judges_a_tagged_rule_across_its_sub_runs() {
        use crate::result::ab::{AB_VERSION, AbResult, SubRun};
        let rules = [
            rule(
                "p(50) +10% floor 0us",
                RuleScope::Total,
                &[("kind", "write")],
            ),
            rule(
                "p(50) +10% floor 0us",
                RuleScope::Total,
                &[("kind", "read")],
            ),
        ];
        let side = |seed, write_us| read_write(seed, [1_000.0, write_us], &rules);
        let ab = AbResult {
            ab_version: AB_VERSION,
            mode: "duet".to_string(),
            epoch_ms: 250,
            baseline: side(1, 1_000.0),
            candidate: side(2, 1_500.0),
            sub_runs: (0..6)
                .map(|i| SubRun {
                    index: i,
                    baseline_first: i % 2 == 0,
                    late: false,
                    baseline: side(10 + u64::from(i), 1_000.0),
                    candidate: side(20 + u64::from(i), 1_500.0),
                })
                .collect(),
            baseline_epochs: Vec::new(),
            candidate_epochs: Vec::new(),
            machine_busy: None,
        };
        let c = crate::compare::compare_paired(&ab).unwrap();
        assert_eq!(
            states(&c),
            [RuleState::Regressed, RuleState::Unchanged],
            "{:#?}",
            c.rules
        );
        assert_eq!(c.rules[0].samples, [6, 6]);
    }
}
