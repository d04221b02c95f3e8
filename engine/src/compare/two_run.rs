//! Two separate runs (`loadgate compare`, `run --baseline`): each rule's test from the runs'
//! per-second histograms, by a circular block bootstrap of seconds shared by all rules.
//!
//! # Method
//!
//! Each run's complete seconds are resampled in circular blocks (Politis & Romano 1992) of
//! `stats::block_length` seconds (Politis & White 2004; Patton, Politis & White 2009), chosen
//! from the runs' per-second log p50 and responses (the longest of the four series' lengths).
//! Each of [`RESAMPLES`] rounds draws ONE set of second indices per run, shared by every scope
//! and rule, so that the rules' joint distribution is kept for the max-T step-down. For each
//! rule, the resampled seconds of its scope (the whole run, or a target: its own
//! `time_series`) are merged (`seconds.rs`) and the rule's statistic read from the merge: the
//! same statistic as its whole-run value (a percentile or the mean of the merged histogram,
//! responses per second, the pooled error rate), so the interval covers what the verdict
//! reports (Künsch 1989; Efron & Tibshirani 1993, ch. 13). The replicate is the change on the
//! rule's scale (`scale.rs`), `d* = d(b*, c*)`, recentred on the whole-run change: `d* − d̃ +
//! d̂`, `d̃` the change of all the seconds merged (the whole-run values come from finer
//! histograms than the seconds' 2 significant digits). The standard error is the replicates'
//! standard deviation; the degrees of freedom, the resampled blocks less one of the shorter run
//! (`stats::bootstrap_df`), widen the step-down's critical values when blocks are few.
//!
//! Rules are not tested (inconclusive, outside the family) when a run has fewer than
//! `stats::MIN_SECONDS` complete seconds, when their scope has no per-second series (a flow's
//! iterations; results before version 4), or when a resample leaves a side without a value.

use std::collections::BTreeMap;

use super::rules::{RuleTest, prepared};
use super::scoped::{Missing, Scoped, missing_reason, scope_words, scoped};
use super::seconds::{Merged, ScopeSeconds, complete_seconds};
use crate::plan::regression::{RegressionRule, RuleScope};
use crate::result::RunResult;
use crate::stats;

/// Bootstrap rounds: 2,000 (Efron & Tibshirani 1993, §19.3, ask ≥ 1,000 for percentile
/// intervals; the max-T step-down reads quantiles of the maximum over the family).
pub(super) const RESAMPLES: usize = 2_000;
/// Seed of the bootstrap's generator (wyrand, `fastrand`): "loadgate" in ASCII, so that the
/// same two files always give the same verdicts.
pub(super) const SEED: u64 = 0x6c6f_6164_6761_7465;

/// Each rule's test from the two runs (see the module documentation), in the order of
/// `rules`; tested ones carry their replicates.
pub(super) fn tests(
    rules: &[RegressionRule],
    baseline: &RunResult,
    current: &RunResult,
) -> Vec<RuleTest> {
    let seconds: [Vec<u32>; 2] =
        [baseline, current].map(|r| complete_seconds(r).map(|s| s.second).collect());
    let n = [seconds[0].len(), seconds[1].len()];
    let views: Vec<[Result<Scoped<'_>, Missing>; 2]> = rules
        .iter()
        .map(|rule| [baseline, current].map(|r| scoped(rule, r)))
        .collect();
    let mut tests: Vec<RuleTest> = rules
        .iter()
        .zip(&views)
        .map(|(rule, sides)| {
            let values = sides.each_ref().map(|s| {
                s.as_ref()
                    .ok()
                    .and_then(|s| super::rules::whole_run_value(rule, &s.target))
            });
            let evidence = prepared(rule, values).map_err(|e| {
                if sides.iter().any(Result::is_err) {
                    missing_reason(rule, sides.each_ref().map(|s| s.as_ref().err()))
                } else {
                    e
                }
            });
            RuleTest::new(values, n, evidence)
        })
        .collect();
    if n.iter().any(|n| *n < stats::MIN_SECONDS) {
        let why = format!(
            "runs too short to judge: {} and {} complete seconds, at least {} needed: run longer",
            n[0],
            n[1],
            stats::MIN_SECONDS
        );
        for t in tests.iter_mut().filter(|t| t.evidence.is_ok()) {
            t.evidence = Err(why.clone());
        }
        return tests;
    }
    let scopes = scope_seconds(rules, &mut tests, &views, &seconds);
    let block = block_length([baseline, current]);
    let df = stats::bootstrap_df(n[0], block).min(stats::bootstrap_df(n[1], block));
    let mut columns = bootstrap(rules, &tests, &scopes, n, block);
    for (r, test) in tests.iter_mut().enumerate() {
        let Ok(evidence) = &mut test.evidence else {
            continue;
        };
        let column = std::mem::take(&mut columns[r]);
        if column.iter().any(|d| !d.is_finite()) {
            test.evidence = Err(format!(
                "too few seconds with responses in {} to resample",
                scope_words(&rules[r])
            ));
            continue;
        }
        evidence.se = stats::sd(&column);
        evidence.df = Some(df);
        test.replicates = column;
    }
    tests
}

/// The key of a rule's scope among the scopes' seconds: its kind, name and tags.
fn scope_key(rule: &RegressionRule) -> String {
    format!("{}:{}{}", rule.scope.kind(), rule.scope.name(), rule.tags)
}

/// The seconds of each scope that a tested rule looks at, by scope name; rules whose scope
/// has no per-second series are marked untested in `tests`.
fn scope_seconds(
    rules: &[RegressionRule],
    tests: &mut [RuleTest],
    views: &[[Result<Scoped<'_>, Missing>; 2]],
    seconds: &[Vec<u32>; 2],
) -> BTreeMap<String, ScopeSeconds> {
    let mut scopes: BTreeMap<String, ScopeSeconds> = BTreeMap::new();
    for ((rule, test), sides) in rules.iter().zip(tests.iter_mut()).zip(views) {
        if test.evidence.is_err() {
            continue;
        }
        let key = scope_key(rule);
        if !scopes.contains_key(&key) {
            let series = sides
                .each_ref()
                .map(|s| s.as_ref().ok().and_then(|s| s.series.as_deref()));
            let [Some(b), Some(c)] = series else {
                test.evidence = Err(no_series_reason(rule));
                continue;
            };
            match ScopeSeconds::new([b, c], [&seconds[0], &seconds[1]]) {
                Ok(s) => scopes.insert(key.clone(), s),
                Err(e) => {
                    test.evidence = Err(e);
                    continue;
                }
            };
        }
        if rule.metric == crate::plan::threshold::Metric::Latency && !scopes[&key].histograms {
            test.evidence = Err(
                "no per-second histograms in a result (written before result version 4): \
                 run both again with this loadgate"
                    .to_string(),
            );
        }
    }
    scopes
}

/// Why a scope has no per-second series to resample.
fn no_series_reason(rule: &RegressionRule) -> String {
    match rule.scope {
        RuleScope::Flow(_) if rule.tags.is_empty() => {
            "a flow's iterations have no per-second series in a result, so two runs cannot be \
             compared on them; `loadgate ab` judges them across its sub-runs"
                .to_string()
        }
        _ => format!(
            "{} has no per-second series in a result (written before result version 4): run \
             both again with this loadgate",
            scope_words(rule)
        ),
    }
}

/// The block length: the longest `stats::block_length` of the runs' per-second log p50 (seconds
/// with responses) and per-second responses.
fn block_length(runs: [&RunResult; 2]) -> usize {
    runs.iter()
        .flat_map(|r| {
            let log_p50: Vec<f64> = complete_seconds(r)
                .filter(|s| s.responses > 0 && s.p50_us > 0)
                .map(|s| (s.p50_us as f64).ln())
                .collect();
            let responses: Vec<f64> = complete_seconds(r).map(|s| s.responses as f64).collect();
            [
                stats::block_length(&log_p50),
                stats::block_length(&responses),
            ]
        })
        .max()
        .unwrap_or(1)
}

/// Each tested rule's replicates (empty for the others), recentred on its whole-run change.
fn bootstrap(
    rules: &[RegressionRule],
    tests: &[RuleTest],
    scopes: &BTreeMap<String, ScopeSeconds>,
    n: [usize; 2],
    block: usize,
) -> Vec<Vec<f64>> {
    // Per scope, its tested rules with their scale and the shift d̂ − d̃.
    let mut groups: BTreeMap<&str, Vec<(usize, f64)>> = BTreeMap::new();
    let all: [Vec<usize>; 2] = n.map(|n| (0..n).collect());
    let mut merged = [Merged::default(), Merged::default()];
    let keys: Vec<String> = rules.iter().map(scope_key).collect();
    for (r, test) in tests.iter().enumerate() {
        let Ok(evidence) = &test.evidence else {
            continue;
        };
        let (key, seconds) = scopes
            .get_key_value(&keys[r])
            .expect("a tested rule's scope");
        for side in 0..2 {
            seconds.merge(side, &all[side], &mut merged[side]);
        }
        let whole_seconds = change(&rules[r], seconds, &merged);
        groups
            .entry(key.as_str())
            .or_default()
            .push((r, evidence.estimate - whole_seconds));
    }
    let mut columns: Vec<Vec<f64>> = tests
        .iter()
        .map(|t| {
            if t.evidence.is_ok() {
                Vec::with_capacity(RESAMPLES)
            } else {
                Vec::new()
            }
        })
        .collect();
    let mut rng = fastrand::Rng::with_seed(SEED);
    let mut indices = [Vec::new(), Vec::new()];
    for _ in 0..RESAMPLES {
        for side in 0..2 {
            stats::circular_indices(n[side], block, &mut rng, &mut indices[side]);
        }
        for (key, group) in &groups {
            let seconds = &scopes[*key];
            for side in 0..2 {
                seconds.merge(side, &indices[side], &mut merged[side]);
            }
            for &(r, shift) in group {
                columns[r].push(change(&rules[r], seconds, &merged) + shift);
            }
        }
    }
    columns
}

/// The change of `rule`'s statistic between the merges `[baseline, current]`, on its scale;
/// NaN when a side has no value.
fn change(rule: &RegressionRule, seconds: &ScopeSeconds, merged: &[Merged; 2]) -> f64 {
    let [b, c] =
        [&merged[0], &merged[1]].map(|m| seconds.statistic(m, rule.metric, rule.aggregation));
    match (b, c) {
        (Some(b), Some(c)) => super::scale::Scale::of(rule).change(b, c),
        _ => f64::NAN,
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::compare::rules::{Method, decide_all};
    use crate::compare::test_seconds::seconds;
    use crate::compare::{Comparison, RuleState};
    use crate::plan::threshold::Metric;
    use crate::result::{RecordedRule, TimeSample, encode_histogram, summary};
    use hdrhistogram::Histogram;

    /// A run of the fixture with `seconds` as its per-second latencies (µs), for the whole run
    /// and its first target alike, its whole-run latency and throughput from them, and `rules`
    /// recorded.
    pub(in crate::compare) fn run_of(seconds: &[Vec<u64>], rules: &[RegressionRule]) -> RunResult {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let mut run = crate::result::read(std::path::Path::new(path)).expect("the fixture");
        let mut whole = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
        let series: Vec<TimeSample> = seconds
            .iter()
            .enumerate()
            .map(|(i, values)| {
                let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 2).unwrap();
                for v in values {
                    h.record(*v).unwrap();
                    whole.record(*v).unwrap();
                }
                let mut s = run.time_series[0].clone();
                s.second = i as u32;
                s.responses = values.len() as u64;
                s.errors = 0;
                s.requests = Some(values.len() as u64);
                s.p50_us = h.value_at_quantile(0.5);
                s.histogram = Some(encode_histogram(&h));
                s
            })
            .collect();
        run.duration_s = seconds.len() as f64;
        run.time_series = series.clone();
        let responses = whole.len();
        for t in [&mut run.total, &mut run.targets[0]] {
            t.latency_us = summary(&whole);
            (t.responses, t.requests, t.errors, t.error_rate) = (responses, responses, 0, 0.0);
            t.rps = responses as f64 / run.duration_s;
        }
        run.targets[0].time_series = series;
        run.regression_rules = Some(rules.iter().map(RecordedRule::from_rule).collect());
        run
    }

    pub(in crate::compare) fn rule(metric: Metric, text: &str, scope: RuleScope) -> RegressionRule {
        RegressionRule {
            scope,
            ..RegressionRule::parse(metric, text).unwrap()
        }
    }

    fn rules() -> Vec<RegressionRule> {
        let target = RuleScope::Target("<script>alert(1)</script>".to_string());
        vec![
            rule(Metric::Latency, "p(50) +10% floor 0us", RuleScope::Total),
            rule(Metric::Latency, "p(95) +10% floor 0us", RuleScope::Total),
            rule(Metric::Latency, "mean +10% floor 0us", target),
            rule(Metric::Responses, "rate -10%", RuleScope::Total),
            rule(Metric::Errors, "rate +10% floor 0.1%", RuleScope::Total),
            rule(
                Metric::Latency,
                "p(50) +10% floor 0us",
                RuleScope::Flow("f".to_string()),
            ),
        ]
    }

    fn compared(baseline: &RunResult, current: &RunResult) -> Comparison {
        crate::compare::compare(baseline, current).unwrap()
    }

    #[test]
    fn a_a_runs_are_unchanged_and_a_slower_run_regresses_every_latency_rule() {
        let rules = rules();
        let baseline = run_of(&seconds(1, 30, 1_000.0), &rules);
        let same = run_of(&seconds(2, 30, 1_000.0), &rules);
        let slower = run_of(&seconds(3, 30, 1_300.0), &rules);

        let aa = compared(&baseline, &same);
        let states: Vec<RuleState> = aa.rules.iter().map(|r| r.verdict).collect();
        use RuleState::*;
        assert_eq!(
            states,
            [
                Unchanged,
                Unchanged,
                Unchanged,
                Unchanged,
                Unchanged,
                Inconclusive
            ],
            "{:#?}",
            aa.rules
        );
        let family = aa.family.as_ref().unwrap();
        assert_eq!((family.tested, family.method.as_str()), (5, "max-t"));
        assert_eq!(aa.rules[5].reason, "neither result has the flow `f`");
        for r in &aa.rules[..5] {
            assert_eq!(r.samples, [30, 30]);
            let level = r.level.unwrap();
            assert!(level > 0.0 && level <= 0.05, "{r:#?}");
            // The interval holds the whole-run change it is built around.
            let [low, high] = r.change_ci.unwrap();
            assert!(
                low <= r.change.unwrap() && r.change.unwrap() <= high,
                "{r:#?}"
            );
            assert!(r.mde.unwrap() >= r.allowed_change.unwrap(), "{r:#?}");
        }

        let slow = compared(&baseline, &slower);
        let states: Vec<RuleState> = slow.rules.iter().map(|r| r.verdict).collect();
        assert_eq!(
            states,
            [
                Regressed,
                Regressed,
                Regressed,
                Unchanged,
                Unchanged,
                Inconclusive
            ],
            "{:#?}",
            slow.rules
        );
        // The same files, the same verdict (a fixed seed).
        assert_eq!(slow, compared(&baseline, &slower));
    }

    #[test]
    fn runs_shorter_than_the_minimum_are_not_tested() {
        let rules = rules();
        let n = stats::MIN_SECONDS - 1;
        let baseline = run_of(&seconds(1, n, 1_000.0), &rules);
        let current = run_of(&seconds(2, 40, 2_000.0), &rules);
        let c = compared(&baseline, &current);
        assert_eq!(c.family, None);
        for r in &c.rules[..5] {
            assert_eq!(r.verdict, RuleState::Inconclusive);
            assert_eq!(
                r.reason,
                format!(
                    "runs too short to judge: {n} and 40 complete seconds, at least {} \
                     needed: run longer",
                    stats::MIN_SECONDS
                )
            );
        }
    }

    #[test]
    fn replicates_are_recentred_on_the_whole_run_change() {
        let rules = rules();
        let baseline = run_of(&seconds(1, 25, 1_000.0), &rules);
        let current = run_of(&seconds(2, 25, 1_200.0), &rules);
        let tests = tests(&rules, &baseline, &current);
        // The latency rules (every second has 200 responses: the throughput's se is 0).
        for (rule, test) in rules.iter().zip(&tests).take(3) {
            let evidence = test.evidence.as_ref().unwrap();
            assert_eq!(test.replicates.len(), RESAMPLES);
            let mean = test.replicates.iter().sum::<f64>() / RESAMPLES as f64;
            // Centred near d̂ (the bootstrap's bias is small against its spread).
            assert!(
                (mean - evidence.estimate).abs() < 0.5 * evidence.se + 1e-3,
                "{}: {mean} vs {evidence:?}",
                rule.expression
            );
            assert!(evidence.se > 0.0);
        }
        let (verdicts, family) = decide_all(0.05, &rules, &tests, Method::MaxT);
        assert_eq!(family.unwrap().tested, 5);
        assert_eq!(verdicts[0].verdict, RuleState::Regressed);
    }
}
