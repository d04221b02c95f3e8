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
//! standard deviation.
//!
//! Rules are not tested (inconclusive, outside the family) when a run has fewer than
//! `stats::MIN_SECONDS` complete seconds, when their scope has no per-second series (a flow's
//! iterations; results before version 4), or when a resample leaves a side without a value.

use std::collections::BTreeMap;

use super::rules::{RuleTest, missing_reason, prepared};
use super::scoped::scoped;
use super::seconds::{Merged, ScopeSeconds, complete_seconds};
use crate::plan::regression::{RegressionRule, RuleScope};
use crate::result::{RunResult, TimeSample};
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
    let mut tests: Vec<RuleTest> = rules
        .iter()
        .map(|rule| {
            let (bt, ct) = (scoped(&rule.scope, baseline), scoped(&rule.scope, current));
            let values = [bt.as_deref(), ct.as_deref()]
                .map(|t| t.and_then(|t| super::rules::whole_run_value(rule, t)));
            let evidence = prepared(rule, values).map_err(|e| {
                if bt.is_none() || ct.is_none() {
                    missing_reason(rule, bt.is_some(), ct.is_some())
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
    let scopes = scope_seconds(rules, &mut tests, [baseline, current], &seconds);
    let block = block_length([baseline, current]);
    let mut columns = bootstrap(rules, &tests, &scopes, n, block);
    for (r, test) in tests.iter_mut().enumerate() {
        let Ok(evidence) = &mut test.evidence else {
            continue;
        };
        let column = std::mem::take(&mut columns[r]);
        if column.iter().any(|d| !d.is_finite()) {
            test.evidence = Err(format!(
                "too few seconds with responses in {} to resample",
                scope_words(&rules[r].scope)
            ));
            continue;
        }
        evidence.se = sd(&column);
        test.replicates = column;
    }
    tests
}

/// `total`, `target X` or `flow X`.
fn scope_words(scope: &RuleScope) -> String {
    match scope {
        RuleScope::Total => "the whole run".to_string(),
        _ => format!("{} `{}`", scope.kind(), scope.name()),
    }
}

/// The seconds of each scope that a tested rule looks at, by scope name; rules whose scope
/// has no per-second series are marked untested in `tests`.
fn scope_seconds(
    rules: &[RegressionRule],
    tests: &mut [RuleTest],
    runs: [&RunResult; 2],
    seconds: &[Vec<u32>; 2],
) -> BTreeMap<String, ScopeSeconds> {
    let mut scopes: BTreeMap<String, ScopeSeconds> = BTreeMap::new();
    for (rule, test) in rules.iter().zip(tests.iter_mut()) {
        if test.evidence.is_err() {
            continue;
        }
        let key = format!("{}:{}", rule.scope.kind(), rule.scope.name());
        if !scopes.contains_key(&key) {
            let series = runs.map(|r| series_of(&rule.scope, r));
            let [Some(b), Some(c)] = series else {
                test.evidence = Err(no_series_reason(&rule.scope));
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
fn no_series_reason(scope: &RuleScope) -> String {
    match scope {
        RuleScope::Flow(_) => "a flow's iterations have no per-second series in a result, so \
                               two runs cannot be compared on them; `loadgate ab` judges them \
                               across its sub-runs"
            .to_string(),
        _ => format!(
            "{} has no per-second series in a result (written before result version 4): run \
             both again with this loadgate",
            scope_words(scope)
        ),
    }
}

/// A scope's per-second series in a run: the run's for `total`, a target's own; none for a
/// flow, or a target without one.
fn series_of<'a>(scope: &RuleScope, run: &'a RunResult) -> Option<&'a [TimeSample]> {
    match scope {
        RuleScope::Total => Some(&run.time_series),
        RuleScope::Target(name) => run
            .targets
            .iter()
            .find(|t| &t.name == name)
            .map(|t| t.time_series.as_slice())
            .filter(|s| !s.is_empty()),
        RuleScope::Flow(_) => None,
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
    let keys: Vec<String> = rules
        .iter()
        .map(|r| format!("{}:{}", r.scope.kind(), r.scope.name()))
        .collect();
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

/// The standard deviation (divisor n − 1) of `values`; 0 with fewer than two.
fn sd(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
}
