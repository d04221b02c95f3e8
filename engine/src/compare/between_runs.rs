//! A stored baseline (`compare --baseline-history`): each rule's whole-run value of the current
//! run against the level of the comparable history since its last change point, by a prediction
//! bound (the statistical review's §5 design).
//!
//! # Method
//!
//! 1. **Comparable results** ([`comparable`]): the history's results of the same spec (`name`),
//!    of the current run's runner type (`Environment::runner_type`: OS, architecture, CPU model,
//!    CPUs), of the baseline's branch when both record one (`source.branch`), valid
//!    measurements only; the current run itself is left out, the baseline counts once. In time
//!    order (`started_at`), the last [`HISTORY_WINDOW`].
//! 2. **The series** of each tested rule: its whole-run value (`rules::whole_run_value`, of its
//!    scope) in every comparable result, on the rule's scale (`scale.rs`: the log of a latency,
//!    minus the log of a throughput, an error rate as it is).
//! 3. **Segment**: the values after the series' last change point (`stats::changepoint::detect`,
//!    E-Divisive means with Otava's t-test, its correlation-aware default); `k` its length. With
//!    `k` below `stats::prediction::MIN_SEGMENT` (5) the rule is not tested (inconclusive), its
//!    reason saying how many more results are needed.
//! 4. **Prediction bound** (`stats::prediction::predict`): level `μ̂` = the segment's median,
//!    spread = its Qn (Rousseeuw & Croux 1993; MAD where Qn is not defined), corrected and
//!    inflated for the lag-1 correlation of successive runs (AR(1); the effective number of
//!    runs `k_eff`, Bayley & Hammersley 1946), so that the change `y_c − μ̂` has the standard
//!    error `se = σ̂·√(1 + π/(2·k_eff))`: Hahn & Meeker's `s·√(1 + 1/k)` (*Statistical
//!    Intervals*, Wiley 1991, ch. 4) with a median level and correlated runs, Student t with
//!    `k_eff − 1` degrees of freedom.
//!    Where the rule's two-run test of the baseline and the current run (`two_run.rs`: the
//!    noise within the two runs) has the larger standard error, that one is used, with its
//!    degrees of freedom: a current run disturbed within itself (its seconds far apart) is less
//!    certain than the history predicts of a typical run (the moment estimate's `max`, as in
//!    DerSimonian & Laird 1986).
//! 5. **Decision**: the rule's allowance is taken from the level (`A = max(max_change × level,
//!    floor)`), and every tested rule's `Evidence { estimate: y_c − μ̂, se, df, allowance }` goes
//!    to `stats::decide`: Holm's step-down at the run's `regression_alpha` across the rules
//!    (Holm 1979), so one unchanged build fails on any rule with probability at most α.
//!
//! The verdict's `baseline` value of such a rule is the level (in the rule's unit) and its
//! `samples` are `[k, 1]`. `stats/sims_history.rs` simulates the false alarms and the power
//! against the earlier `√2·sd` widening and against two runs alone.

use std::collections::HashSet;

use super::rules::{RuleTest, prepared, whole_run_value};
use super::scale::Scale;
use super::scoped::{missing_reason, scoped};
use crate::plan::regression::RegressionRule;
use crate::result::{RESULT_VERSION, RunResult};
use crate::stats::Evidence;
use crate::stats::changepoint::{self, detect};
use crate::stats::prediction::{MIN_SEGMENT, Prediction, predict};

/// The most recent comparable results a series takes: 100 (the review's window of 60–100).
pub(crate) const HISTORY_WINDOW: usize = 100;

/// The results of a history that a current run is compared with.
#[derive(Debug)]
pub(super) struct Comparable<'a> {
    /// Time order (`started_at`), the last [`HISTORY_WINDOW`].
    pub(super) results: Vec<&'a RunResult>,
    /// The current run's runner type, which they share.
    pub(super) runner_type: String,
    /// The baseline's branch, when it records one.
    pub(super) branch: Option<String>,
    /// What was left out and why, in words.
    pub(super) left_out: Vec<String>,
}

/// Why a history result is not comparable with the current run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Skip {
    Version,
    Spec,
    Invalid,
    Runner,
    Branch,
}

impl Skip {
    fn words(self) -> &'static str {
        match self {
            Skip::Version => "of another result version",
            Skip::Spec => "of another spec",
            Skip::Invalid => "invalid measurements",
            Skip::Runner => "of another runner type",
            Skip::Branch => "of another branch than the baseline's",
        }
    }
}

/// The results of `history` and the `baseline` comparable with `current` (see the module
/// documentation, step 1), with notes on those left out.
pub(super) fn comparable<'a>(
    history: &'a [RunResult],
    baseline: &'a RunResult,
    current: &RunResult,
) -> Comparable<'a> {
    let runner_type = current.environment.runner_type();
    let branch = branch_of(baseline);
    let why_not = |r: &RunResult| {
        if r.result_version != RESULT_VERSION {
            Some(Skip::Version)
        } else if r.spec.name != current.spec.name {
            Some(Skip::Spec)
        } else if !r.health.valid {
            Some(Skip::Invalid)
        } else if r.environment.runner_type() != runner_type {
            Some(Skip::Runner)
        } else if let (Some(b), Some(r)) = (&branch, branch_of(r)) {
            (*b != r).then_some(Skip::Branch)
        } else {
            None
        }
    };
    let key = |r: &RunResult| (r.started_at.clone(), r.environment.hostname.clone());
    let mut seen = HashSet::from([key(current)]);
    let mut skipped: Vec<(Skip, usize)> = Vec::new();
    let mut results = Vec::new();
    for result in history.iter().chain([baseline]) {
        if !seen.insert(key(result)) {
            continue;
        }
        match why_not(result) {
            Some(skip) => match skipped.iter_mut().find(|(s, _)| *s == skip) {
                Some((_, n)) => *n += 1,
                None => skipped.push((skip, 1)),
            },
            None => results.push(result),
        }
    }
    // RFC 3339 UTC strings of one format sort as times.
    results.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let results = results.split_off(results.len().saturating_sub(HISTORY_WINDOW));
    let left_out = skipped
        .iter()
        .map(|(skip, n)| {
            format!(
                "{n} result(s) of the history left out as not comparable: {}",
                skip.words()
            )
        })
        .collect();
    Comparable {
        results,
        runner_type,
        branch,
        left_out,
    }
}

fn branch_of(result: &RunResult) -> Option<String> {
    result.source.as_ref().and_then(|s| s.branch.clone())
}

/// Each rule's test against the level of its comparable history (module documentation, steps 2
/// to 5), in the order of `rules`, and the comparison's note on the method.
pub(super) fn tests(
    rules: &[RegressionRule],
    history: &Comparable<'_>,
    current: &RunResult,
    within: &[RuleTest],
) -> (Vec<RuleTest>, String) {
    let mut segments: Vec<(usize, String, Vec<String>)> = Vec::new();
    let tests = rules
        .iter()
        .zip(within)
        .map(|(rule, within)| {
            let within = within.evidence.as_ref().ok().copied();
            let (test, segment) = rule_test(rule, history, current, within);
            if let Some((k, since)) = segment {
                let label = format!("{} {}", rule.metric, rule.expression);
                match segments.iter_mut().find(|(n, s, _)| (*n, s) == (k, &since)) {
                    Some((_, _, labels)) => labels.push(label),
                    None => segments.push((k, since, vec![label])),
                }
            }
            test
        })
        .collect();
    let where_from = segments
        .iter()
        .map(|(k, since, labels)| format!("{k} results since {since} for {}", labels.join(", ")))
        .collect::<Vec<_>>();
    let branch = history
        .branch
        .as_ref()
        .map(|b| format!(", branch `{b}`"))
        .unwrap_or_default();
    let note = format!(
        "compared with the stored history: each rule's value against the median of the \
         comparable results since its last change point ({} comparable result(s): this spec, \
         runner type `{}`{branch}), within a prediction bound from their robust spread widened \
         for the correlation between successive runs (Hahn & Meeker; at least {MIN_SEGMENT} \
         results needed; rules decided together by Holm's step-down){}",
        history.results.len(),
        history.runner_type,
        if where_from.is_empty() {
            String::new()
        } else {
            format!(": {}", where_from.join("; "))
        }
    );
    (tests, note)
}

/// One rule's test, and its segment's length and first result's `started_at` when it was
/// tested. `within`: the rule's two-run test of the baseline and the current run (the noise
/// within them), when they could be tested.
fn rule_test(
    rule: &RegressionRule,
    history: &Comparable<'_>,
    current: &RunResult,
    within: Option<Evidence>,
) -> (RuleTest, Option<(usize, String)>) {
    let scale = Scale::of(rule);
    let ct = scoped(rule, current);
    let c = ct
        .as_ref()
        .ok()
        .and_then(|s| whole_run_value(rule, &s.target));
    let untested = |why: String| (RuleTest::new([None, c], [0, 1], Err(why)), None);
    if let Err(missing) = &ct {
        return untested(missing_reason(rule, [None, Some(missing)]));
    }
    let Some(c) = c.filter(|c| scale.position(*c).is_finite()) else {
        return untested("no responses to measure in the current run".to_string());
    };
    // The rule's value in each comparable result that has it, on the scale.
    let (values, started): (Vec<f64>, Vec<&str>) = history
        .results
        .iter()
        .filter_map(|r| {
            let v = whole_run_value(rule, &scoped(rule, r).ok()?.target)?;
            let y = scale.position(v);
            y.is_finite().then_some((y, r.started_at.as_str()))
        })
        .unzip();
    let starts: Vec<usize> = detect(&values, &changepoint::Options::default())
        .iter()
        .map(|p| p.index)
        .collect();
    let p = match predict(&values, &starts) {
        Ok(p) => p,
        Err(k) => {
            return untested(format!(
                "{k} of {MIN_SEGMENT} comparable results since the last change point (runner \
                 type `{}`): {} more needed",
                history.runner_type,
                MIN_SEGMENT - k
            ));
        }
    };
    let level = scale.value_at(p.level);
    let values_b = [Some(level), Some(c)];
    // A run disturbed within itself (its seconds far apart) is less certain than the history
    // predicts: its own standard error, where wider, takes the bound's place.
    let noisy = within.filter(|w| w.se.is_finite() && w.se > p.se);
    let evidence = prepared(rule, values_b).map(|e| match noisy {
        Some(w) => Evidence {
            se: w.se,
            df: w.df,
            ..e
        },
        None => Evidence {
            se: p.se,
            df: Some(p.df),
            ..e
        },
    });
    let since = started[values.len() - p.k].to_string();
    let mut test = RuleTest::new(values_b, [p.k, 1], evidence);
    test.remark = remark(scale, &p, &since, noisy.map(|w| w.se));
    test.narrower = "more comparable results since the change point, or longer runs on a quieter \
                     runner,";
    (test, Some((p.k, since)))
}

/// What a reason adds: the level's origin and the bound's spread, and the runs' own standard
/// error when it was the wider.
fn remark(scale: Scale, p: &Prediction, since: &str, noisy: Option<f64>) -> String {
    let noisy = noisy
        .map(|se| {
            format!(
                "; the noise within this run and the baseline, {}, is wider and is used",
                format_se(scale, se)
            )
        })
        .unwrap_or_default();
    format!(
        " (against the median of {} comparable results since {since}; run-to-run spread {}, \
         correlation between successive runs {:.2}, worth {:.1} independent runs{noisy})",
        p.k,
        format_se(scale, p.se),
        p.rho,
        p.k_eff
    )
}

/// A standard error on a rule's scale in words: `±8.1%` (log scales: `e^se − 1`), or in
/// percentage points of the error rate.
fn format_se(scale: Scale, se: f64) -> String {
    if scale.relative() {
        format!("±{:.1}%", se.exp_m1() * 100.0)
    } else {
        format!("±{:.2} points", se * 100.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::test_seconds::seconds;
    use crate::compare::two_run::tests::{rule, run_of};
    use crate::plan::regression::RuleScope;
    use crate::plan::threshold::Metric;
    use crate::result::SourceInfo;

    /// `n` results of one build at p50 medians `factors` × 1 ms, a night apart.
    fn history(base: &RunResult, factors: &[f64]) -> Vec<RunResult> {
        factors
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut r = base.clone();
                r.started_at = format!("2026-11-{:02}T03:00:00Z", i + 1);
                r.total.latency_us.as_mut().unwrap().p50_us = (1_000.0 * f) as u64;
                r
            })
            .collect()
    }

    fn setup() -> (Vec<RegressionRule>, RunResult) {
        let rules = vec![rule(
            Metric::Latency,
            "p(50) +5% floor 0us",
            RuleScope::Total,
        )];
        let mut base = run_of(&seconds(1, 3, 1_000.0), &rules);
        base.started_at = "2026-12-31T00:00:00Z".to_string();
        (rules, base)
    }

    /// No two-run test: the history's bound alone.
    fn untested(rules: &[RegressionRule]) -> Vec<RuleTest> {
        rules
            .iter()
            .map(|_| RuleTest::new([None, None], [0, 0], Err("short".to_string())))
            .collect()
    }

    const NIGHTS: [f64; 12] = [
        1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0,
    ];

    #[test]
    fn a_change_beyond_the_bound_regresses_and_one_within_does_not() {
        let (rules, mut current) = setup();
        let past = history(&current, &NIGHTS);
        let baseline = past.last().unwrap().clone();
        let judge = |current: &RunResult| {
            let c = comparable(&past, &baseline, current);
            assert_eq!(c.results.len(), NIGHTS.len(), "the baseline counts once");
            let (tests, note) = tests(&rules, &c, current, &untested(&rules));
            let e = *tests[0].evidence.as_ref().unwrap();
            let d = crate::stats::decide(0.05, &[e], None)[0];
            (tests.into_iter().next().unwrap(), d, note)
        };
        current.total.latency_us.as_mut().unwrap().p50_us = 1_200;
        let (test, d, note) = judge(&current);
        assert!(d.regressed, "{d:?}");
        assert!(
            (test.values[0].unwrap() - 1_000.0).abs() < 1e-9,
            "the level is the median"
        );
        assert_eq!(test.samples, [12, 1]);
        assert!((test.evidence.as_ref().unwrap().estimate - 1.2f64.ln()).abs() < 1e-12);
        assert!(
            note.contains("12 results since 2026-11-01T03:00:00Z for latency p(50) +5% floor 0us"),
            "{note}"
        );
        assert!(
            test.remark.contains("against the median of 12"),
            "{}",
            test.remark
        );
        current.total.latency_us.as_mut().unwrap().p50_us = 1_005;
        let (_, d, _) = judge(&current);
        assert!(!d.regressed && d.unchanged, "{d:?}");
    }

    #[test]
    fn a_run_noisier_within_itself_than_the_history_predicts_keeps_its_own_error() {
        let (rules, mut current) = setup();
        let past = history(&current, &NIGHTS);
        current.total.latency_us.as_mut().unwrap().p50_us = 1_200;
        let c = comparable(&past, past.last().unwrap(), &current);
        let noisy = |se: f64| {
            vec![RuleTest::new(
                [Some(1_000.0), Some(1_200.0)],
                [30, 30],
                Ok(Evidence {
                    estimate: 1.2f64.ln(),
                    se,
                    df: Some(9.0),
                    allowance: 1.05f64.ln(),
                }),
            )]
        };
        let (wide, _) = tests(&rules, &c, &current, &noisy(0.2));
        let e = wide[0].evidence.as_ref().unwrap();
        assert_eq!((e.se, e.df), (0.2, Some(9.0)));
        assert!(!crate::stats::decide(0.05, &[*e], None)[0].regressed);
        assert!(
            wide[0].remark.contains("is wider and is used"),
            "{}",
            wide[0].remark
        );
        // A quiet run: the history's bound.
        let (quiet, _) = tests(&rules, &c, &current, &noisy(0.001));
        let e = quiet[0].evidence.as_ref().unwrap();
        assert!(e.se > 0.001 && e.df != Some(9.0), "{e:?}");
        assert!(!quiet[0].remark.contains("is wider"));
    }

    #[test]
    fn the_segment_starts_after_the_last_change_point() {
        let (rules, mut current) = setup();
        // 30 nights at 1 ms, then a step to 1.3 ms for 12 nights: the current 1.32 ms is level
        // with the new segment, not a regression.
        let mut factors: Vec<f64> = (0..30).map(|i| NIGHTS[i % 12]).collect();
        factors.extend(NIGHTS.iter().map(|f| f * 1.3));
        let past = history(&current, &factors);
        current.total.latency_us.as_mut().unwrap().p50_us = 1_320;
        let c = comparable(&past, past.last().unwrap(), &current);
        let (tests, _) = tests(&rules, &c, &current, &untested(&rules));
        assert_eq!(tests[0].samples, [12, 1], "{}", tests[0].remark);
        let e = *tests[0].evidence.as_ref().unwrap();
        assert!(!crate::stats::decide(0.05, &[e], None)[0].regressed);
    }

    #[test]
    fn too_few_comparable_results_say_how_many_more_are_needed() {
        let (rules, current) = setup();
        let mut past = history(&current, &NIGHTS[..6]);
        // Another runner type, another branch, another spec, an invalid run: not comparable.
        past[0].environment.cpu_count += 1;
        past[1].source = Some(SourceInfo {
            branch: Some("feature".to_string()),
            ..SourceInfo::default()
        });
        past[2].spec.name = "other".to_string();
        past[3].health.valid = false;
        let mut baseline = past[5].clone();
        baseline.source = Some(SourceInfo {
            branch: Some("main".to_string()),
            ..SourceInfo::default()
        });
        let c = comparable(&past, &baseline, &current);
        assert_eq!(c.results.len(), 2, "{c:?}");
        assert_eq!(c.left_out.len(), 4, "{:?}", c.left_out);
        assert!(
            c.left_out[0].contains("another runner type"),
            "{:?}",
            c.left_out
        );
        let (tests, note) = tests(&rules, &c, &current, &untested(&rules));
        let why = tests[0].evidence.as_ref().unwrap_err();
        assert!(
            why.starts_with("2 of 5 comparable results since the last change point (runner type `")
                && why.ends_with("`): 3 more needed"),
            "{why}"
        );
        assert!(
            note.contains("(2 comparable result(s): this spec"),
            "{note}"
        );
        assert!(note.contains("branch `main`"), "{note}");
    }
}
