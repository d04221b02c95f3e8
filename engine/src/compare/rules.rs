//! Regression rules judged: the whole-run values a rule compares, its test on the
//! worse-is-positive scale (`scale.rs`), and the verdicts of all the rules of a comparison as
//! one family (`decide_all`, over `stats::decide`), in the order the module documentation of
//! [`super`] gives.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Family;
use super::scale::Scale;
use crate::plan::regression::{
    DEFAULT_ERRORS_RULES, DEFAULT_LATENCY_RULES, DEFAULT_REQUESTS_RULES, RegressionRule, ScopeKind,
};
use crate::plan::threshold::{Aggregation, Metric, Severity};
use crate::result::TargetResult;
use crate::stats::{self, Decision, Evidence, Replicates};
use crate::units::{Unit, format_relative};

/// The verdict on one regression rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleState {
    /// Worse than allowed: the interval's lower bound is beyond the allowed change, within
    /// the family's false-alarm rate per run. Fails the gate, unless the rule's severity is
    /// `warn` (then it is a warning).
    Regressed,
    /// Within the allowed change: the interval's upper bound is within it (two one-sided
    /// tests).
    Unchanged,
    /// Better by more than the allowed change: the interval's upper bound is beyond it, the
    /// better way.
    Improved,
    /// The data cannot tell: the interval reaches beyond the allowed change, or the rule could
    /// not be tested (runs too short, too few sub-runs, no responses on a side).
    Inconclusive,
}

impl RuleState {
    /// The name used in reports: `regressed`, `unchanged`, `improved`, `inconclusive`.
    pub fn name(self) -> &'static str {
        match self {
            RuleState::Regressed => "regressed",
            RuleState::Unchanged => "unchanged",
            RuleState::Improved => "improved",
            RuleState::Inconclusive => "inconclusive",
        }
    }
}

/// One regression rule, judged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RuleVerdict {
    /// What the rule compares: `total` (the whole run), `target`, `flow` (its iterations:
    /// `latency` is the iteration duration, `errors` the failed iterations, `requests` the
    /// iterations per second) or `scenario` (its requests); with `tags`, the sum of the
    /// scope's targets that carry them. Absent for `total`.
    #[serde(default, skip_serializing_if = "ScopeKind::is_total")]
    #[schemars(with = "String")]
    pub scope_kind: ScopeKind,
    /// `total`, or the target's, flow's or scenario's name.
    pub scope: String,
    /// `latency`, `errors` or `requests`.
    #[schemars(with = "String")]
    pub metric: Metric,
    /// `p(95)`, `med`, `mean` or `rate`.
    pub aggregation: String,
    /// The rule as written (or the default rule's text).
    pub rule: String,
    /// Unit of `baseline`, `current`, `change`, `allowed_change`, `floor` and `change_ci`:
    /// `us`, `ratio` (0.01 = 1%) or `1/s`.
    pub unit: String,
    /// Whole-run value of the baseline (of its target or flow, for a scoped rule); with a stored
    /// history (`--baseline-history`), the level it predicts: the median of the comparable
    /// results since the last change point. Absent when it has no responses to measure, or not
    /// that target or flow (or, with a history, the current run has none).
    pub baseline: Option<f64>,
    /// Whole-run value of the current run; absent when it has no responses to measure.
    pub current: Option<f64>,
    /// `current - baseline`.
    pub change: Option<f64>,
    /// `current / baseline - 1`, a fraction; absent when the baseline is 0.
    pub relative_change: Option<f64>,
    /// Allowed relative change in the worse direction (a fraction), from the rule.
    pub max_change: f64,
    /// Absolute change never counted as a regression, from the rule.
    pub floor: f64,
    /// `max(max_change × baseline, floor)`: how far the value may move in the worse direction
    /// (up; down for `requests`).
    pub allowed_change: Option<f64>,
    /// The effective allowance, `allowed_change / |baseline|`, a fraction: the floor turned
    /// into a relative allowance (`p(95) +5% floor 50us` allows +24% on a 210 µs baseline);
    /// absent when the baseline is absent or 0.
    #[serde(default)]
    pub relative_allowed_change: Option<f64>,
    /// Interval of `change` `[low, high]`, each bound at the one-sided `level` (two runs: the
    /// block bootstrap of their seconds; with `--baseline-history`: the prediction bound of the
    /// history's level, Student t; `loadgate ab`: Student t across its sub-runs); absent when
    /// the rule was not tested.
    pub change_ci: Option<[f64; 2]>,
    /// The interval relative to the baseline, fractions; absent when the baseline is 0.
    pub relative_change_ci: Option<[f64; 2]>,
    /// One-sided level of each bound of `change_ci`, a fraction (e.g. 0.0031: the rule's share
    /// of the family's false-alarm rate at the step that decided it); absent when the rule
    /// was not tested.
    #[serde(default)]
    pub level: Option<f64>,
    /// Minimum detectable effect at 80% power at `level` (Bloom 1995), in the rule's unit: a
    /// magnitude in the worse direction, like `allowed_change`; absent when not tested.
    #[serde(default)]
    pub mde: Option<f64>,
    /// `mde` relative to the baseline, a fraction; absent when not tested or the baseline is 0.
    #[serde(default)]
    pub relative_mde: Option<f64>,
    /// Samples used from the baseline and the current run: complete seconds of two runs, the
    /// sub-runs of `loadgate ab` with a value on both sides (the same on both), or with a
    /// stored history the results since the last change point and 1.
    pub samples: [usize; 2],
    /// The verdict on the rule.
    pub verdict: RuleState,
    /// The verdict in words, with the numbers that decided it.
    pub reason: String,
    /// `fail` (a regression fails the run) or `warn` (a regression is reported and never
    /// fails it); absent for `fail`.
    #[serde(default, skip_serializing_if = "is_fail")]
    pub severity: Severity,
    /// Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
    /// all of them.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tags: std::collections::BTreeMap<String, String>,
}

/// Whether a severity is `fail`, the default (left out of the JSON).
fn is_fail(s: &Severity) -> bool {
    *s == Severity::Fail
}

/// The default rules (a spec without a `regression` block).
pub(super) fn default_rules() -> Vec<RegressionRule> {
    let all = [
        (Metric::Latency, &DEFAULT_LATENCY_RULES[..]),
        (Metric::Errors, &DEFAULT_ERRORS_RULES[..]),
        (Metric::Responses, &DEFAULT_REQUESTS_RULES[..]),
    ];
    all.iter()
        .flat_map(|(metric, texts)| {
            texts
                .iter()
                .map(|t| RegressionRule::parse(*metric, t).expect("default rules parse"))
        })
        .collect()
}

/// The whole-run value a rule looks at, in its unit.
pub(super) fn whole_run_value(rule: &RegressionRule, t: &TargetResult) -> Option<f64> {
    match rule.metric {
        Metric::Latency => {
            let l = t.latency_us.as_ref()?;
            Some(match rule.aggregation {
                Aggregation::Mean => l.mean_us,
                Aggregation::Median => l.p50_us as f64,
                Aggregation::Percentile(p) => {
                    (match p {
                        50.0 => l.p50_us,
                        90.0 => l.p90_us,
                        95.0 => l.p95_us,
                        99.0 => l.p99_us,
                        _ => l.p99_9_us,
                    }) as f64
                }
                _ => return None,
            })
        }
        Metric::Errors => Some(t.error_rate),
        Metric::Responses => Some(t.rps),
        Metric::Checks => None,
    }
}

/// One rule's test before the family decides it.
#[derive(Debug, Clone)]
pub(super) struct RuleTest {
    /// Whole-run values `[baseline, current]` in the rule's unit (of its scope).
    pub(super) values: [Option<f64>; 2],
    /// What the test rests on, as [`RuleVerdict::samples`].
    pub(super) samples: [usize; 2],
    /// The test, on the rule's scale; or why the rule is not tested (inconclusive, outside the
    /// family).
    pub(super) evidence: Result<Evidence, String>,
    /// Two runs: the rule's bootstrap replicates `d*`, one per resample; empty otherwise.
    pub(super) replicates: Vec<f64>,
    /// What the reason adds, e.g. which stored results gave the level.
    pub(super) remark: String,
    /// What would narrow an inconclusive interval, in the reason: "a longer run" (two runs,
    /// sub-runs), or more comparable results and longer runs (a stored history).
    pub(super) narrower: &'static str,
}

impl RuleTest {
    /// A test without replicates or remark.
    pub(super) fn new(
        values: [Option<f64>; 2],
        samples: [usize; 2],
        evidence: Result<Evidence, String>,
    ) -> RuleTest {
        RuleTest {
            values,
            samples,
            evidence,
            replicates: Vec::new(),
            remark: String::new(),
            narrower: "a longer run",
        }
    }
}

/// How a family of rules is decided (`stats::decide`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    /// The max-T step-down on the bootstrap replicates (two runs).
    MaxT,
    /// Holm's step-down on Student t or normal p-values (sub-runs; a stored history).
    Holm,
}

impl Method {
    /// `max-t` or `holm`, as [`Family::method`] names it.
    fn name(self) -> &'static str {
        match self {
            Method::MaxT => "max-t",
            Method::Holm => "holm",
        }
    }
}

/// The rule's test from its whole-run values `[b, c]`: the change `d̂` and the allowance on the
/// rule's scale (`scale.rs`), the standard error still 0. Errors (why it is not tested): a
/// value missing or not on the scale (no responses on a side), or an allowance that can never
/// be exceeded.
pub(super) fn prepared(
    rule: &RegressionRule,
    [b, c]: [Option<f64>; 2],
) -> Result<Evidence, String> {
    let no_value = || "no responses to measure in one of the runs".to_string();
    let (Some(b), Some(c)) = (b, c) else {
        return Err(no_value());
    };
    let scale = Scale::of(rule);
    let allowed = allowed_change(rule, b);
    let allowance = scale.allowance(b, allowed).ok_or_else(|| {
        let unit = Unit::from_name(rule.unit());
        format!(
            "not tested: the allowed drop of {} is the whole baseline's {}, so the rule can \
             never fire",
            unit.format(allowed),
            unit.format(b)
        )
    })?;
    let estimate = scale.change(b, c);
    if !estimate.is_finite() {
        return Err(no_value());
    }
    Ok(Evidence {
        estimate,
        se: 0.0,
        df: None,
        allowance,
    })
}

/// Every rule judged, the tested ones as one family at the per-run false-alarm rate `alpha`
/// (`stats::decide`; with [`Method::MaxT`] on the tests' replicates, which must all have the
/// same length), in the order of `rules`; and the family, absent when no rule was tested.
pub(super) fn decide_all(
    alpha: f64,
    rules: &[RegressionRule],
    tests: &[RuleTest],
    method: Method,
) -> (Vec<RuleVerdict>, Option<Family>) {
    let tested: Vec<usize> = (0..tests.len())
        .filter(|r| tests[*r].evidence.is_ok())
        .collect();
    let evidence: Vec<Evidence> = tested
        .iter()
        .map(|r| *tests[*r].evidence.as_ref().expect("tested"))
        .collect();
    let replicates = (method == Method::MaxT).then(|| {
        let resamples = tested.first().map_or(0, |r| tests[*r].replicates.len());
        Replicates {
            rows: (0..resamples)
                .map(|i| tested.iter().map(|r| tests[*r].replicates[i]).collect())
                .collect(),
        }
    });
    let decisions = if tested.is_empty() {
        Vec::new()
    } else {
        stats::decide(alpha, &evidence, replicates.as_ref())
    };
    let mut decided = decisions.into_iter();
    let verdicts = rules
        .iter()
        .zip(tests)
        .map(|(rule, test)| {
            let decision = test
                .evidence
                .as_ref()
                .ok()
                .map(|_| decided.next().expect("one decision per tested rule"));
            rule_verdict(rule, test, decision.as_ref())
        })
        .collect();
    let family = (!tested.is_empty()).then(|| Family {
        alpha,
        tested: tested.len(),
        method: method.name().to_string(),
    });
    (verdicts, family)
}

/// A rule's verdict as the JSON verdict shows it: the rule's texts and units, the whole-run
/// values and their changes, and, when it was tested, the decision's interval, level and MDE in
/// the rule's unit (also relative to the baseline), and the state and reason.
fn rule_verdict(
    rule: &RegressionRule,
    test: &RuleTest,
    decision: Option<&Decision>,
) -> RuleVerdict {
    let [b, c] = test.values;
    let relative = |x: f64| b.filter(|b| *b != 0.0).map(|b| x / b.abs());
    let scale = Scale::of(rule);
    let tested = decision.zip(b);
    let change_ci = tested.map(|(d, b)| scale.interval_to_unit(b, d.low, d.high));
    let mde = tested.map(|(d, b)| scale.magnitude_to_unit(b, d.mde));
    let (verdict, reason) = match (decision, &test.evidence) {
        (Some(d), _) => decided(rule, test, d),
        (None, Err(why)) => (RuleState::Inconclusive, why.clone()),
        (None, Ok(_)) => unreachable!("a tested rule has a decision"),
    };
    RuleVerdict {
        severity: rule.severity,
        tags: rule.tags.to_map(),
        scope_kind: rule.scope.kind(),
        scope: rule.scope.name().to_string(),
        metric: rule.metric,
        aggregation: rule.aggregation.to_string(),
        rule: rule.expression.clone(),
        unit: rule.unit().to_string(),
        baseline: b,
        current: c,
        change: b.zip(c).map(|(b, c)| c - b),
        relative_change: b.zip(c).and_then(|(b, c)| relative(c - b)),
        max_change: rule.max_change,
        floor: rule.floor,
        allowed_change: b.map(|b| allowed_change(rule, b)),
        relative_allowed_change: b.and_then(|b| relative(allowed_change(rule, b))),
        change_ci,
        relative_change_ci: change_ci.and_then(|[l, h]| Some([relative(l)?, relative(h)?])),
        level: decision.map(|d| d.level),
        mde,
        relative_mde: mde.and_then(relative),
        samples: test.samples,
        verdict,
        reason,
    }
}

/// The state and reason of a tested rule: regressed, improved, unchanged (the upper bound
/// within the allowance), else inconclusive; see the module documentation of [`super`].
fn decided(rule: &RegressionRule, test: &RuleTest, d: &Decision) -> (RuleState, String) {
    let b = test.values[0].expect("a tested rule has a baseline");
    let scale = Scale::of(rule);
    let unit = Unit::from_name(rule.unit());
    // In the worse direction: up, down for throughput.
    let worse = |m: f64| {
        let shown = scale.magnitude_to_unit(b, m);
        let sign = if rule.lower_is_worse() { -1.0 } else { 1.0 };
        let relative = if b != 0.0 {
            format!(" ({})", format_relative(Some(sign * shown / b.abs())))
        } else {
            String::new()
        };
        format!("{}{relative}", unit.format_signed(sign * shown))
    };
    let allowed = worse(test.evidence.as_ref().map_or(0.0, |e| e.allowance));
    let [low, high] = scale.interval_to_unit(b, d.low, d.high);
    let ci = format!(
        "interval of the change [{}, {}], each bound at a one-sided {}",
        unit.format_signed(low),
        unit.format_signed(high),
        level_text(d.level)
    );
    let (state, mut reason) = if d.regressed {
        (
            RuleState::Regressed,
            format!("worse by more than the allowed {allowed}: {ci}"),
        )
    } else if d.improved {
        (
            RuleState::Improved,
            format!("better by more than the allowed {allowed}: {ci}"),
        )
    } else if d.unchanged {
        (
            RuleState::Unchanged,
            format!("within the allowed {allowed}: {ci}"),
        )
    } else {
        (
            RuleState::Inconclusive,
            format!(
                "{ci}: it reaches beyond the allowed {allowed}; {} would tell (80% power from a \
                 change of {})",
                test.narrower,
                worse(d.mde)
            ),
        )
    };
    reason.push_str(&test.remark);
    (state, reason)
}

/// A one-sided level as the reasons write it: `2.5%`, `0.16%`.
fn level_text(level: f64) -> String {
    let percent = level * 100.0;
    if percent >= 1.0 {
        format!("{percent:.1}%")
    } else {
        format!("{percent:.2}%")
    }
}

/// `max(max_change × |baseline|, floor)`.
fn allowed_change(rule: &RegressionRule, baseline: f64) -> f64 {
    (rule.max_change * baseline.abs()).max(rule.floor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::regression::RuleScope;

    fn rule(metric: Metric, text: &str) -> RegressionRule {
        RegressionRule::parse(metric, text).unwrap()
    }

    fn test(values: [f64; 2], estimate: f64, se: f64, allowance: f64) -> RuleTest {
        RuleTest::new(
            values.map(Some),
            [8, 8],
            Ok(Evidence {
                estimate,
                se,
                df: Some(7.0),
                allowance,
            }),
        )
    }

    #[test]
    fn the_family_decides_in_the_documented_order_and_untested_rules_stay_out() {
        let rules = [
            rule(Metric::Latency, "p(50) +10% floor 0us"),
            rule(Metric::Responses, "rate -10%"),
            rule(Metric::Errors, "rate +10% floor 0.1%"),
            rule(Metric::Latency, "p(95) +10% floor 0us"),
            rule(Metric::Latency, "p(99) +10% floor 0us"),
        ];
        let a = 1.1f64.ln();
        let tests = [
            // +50%, se 2%: regressed.
            test([1_000.0, 1_500.0], 1.5f64.ln(), 0.02, a),
            // No change in throughput, se 1%: unchanged (the upper bound within -ln 0.9).
            test([1_000.0, 1_000.0], 0.0, 0.01, -(0.9f64.ln())),
            RuleTest::new(
                [Some(0.0), Some(0.0)],
                [0, 0],
                Err("not judged".to_string()),
            ),
            // +10% with se 5%: the interval reaches beyond the allowance both ways.
            test([1_000.0, 1_100.0], a, 0.05, a),
            // -50%, se 2%: improved.
            test([1_000.0, 500.0], 0.5f64.ln(), 0.02, a),
        ];
        let (verdicts, family) = decide_all(0.05, &rules, &tests, Method::Holm);
        let family = family.unwrap();
        assert_eq!((family.alpha, family.tested), (0.05, 4));
        assert_eq!(family.method, "holm");
        let states: Vec<RuleState> = verdicts.iter().map(|v| v.verdict).collect();
        use RuleState::*;
        assert_eq!(
            states,
            [Regressed, Unchanged, Inconclusive, Inconclusive, Improved]
        );

        let p50 = &verdicts[0];
        assert_eq!(p50.relative_allowed_change, Some(0.1));
        let [low, high] = p50.change_ci.unwrap();
        assert!(100.0 < low && low < 500.0 && 500.0 < high, "{p50:#?}");
        let level = p50.level.unwrap();
        assert!(level > 0.0 && level <= 0.05 / 4.0 + 1e-12, "{p50:#?}");
        assert!(p50.mde.unwrap() > 100.0, "{p50:#?}");
        assert!((p50.relative_mde.unwrap() - p50.mde.unwrap() / 1_000.0).abs() < 1e-12);
        assert!(
            p50.reason.starts_with(
                "worse by more than the allowed +100us (+10.0%): interval of the change ["
            ),
            "{}",
            p50.reason
        );

        // Throughput: the interval in 1/s around 0, the allowance a drop.
        let rps = &verdicts[1];
        let [low, high] = rps.change_ci.unwrap();
        assert!(low < 0.0 && 0.0 < high, "{rps:#?}");
        assert!(
            rps.reason
                .starts_with("within the allowed -100.0/s (-10.0%)"),
            "{}",
            rps.reason
        );

        let untested = &verdicts[2];
        assert_eq!(untested.reason, "not judged");
        assert_eq!(
            (untested.level, untested.mde, untested.change_ci),
            (None, None, None)
        );
        assert_eq!(untested.relative_allowed_change, None, "a baseline of 0");

        assert!(
            verdicts[3]
                .reason
                .contains("a longer run would tell (80% power from a change of +"),
            "{}",
            verdicts[3].reason
        );
        assert!(
            verdicts[4]
                .reason
                .starts_with("better by more than the allowed")
        );
    }

    #[test]
    fn no_tested_rule_no_family() {
        let rules = [rule(Metric::Latency, "p(50) +10%")];
        let tests = [RuleTest::new(
            [None, None],
            [0, 0],
            Err("missing".to_string()),
        )];
        let (verdicts, family) = decide_all(0.05, &rules, &tests, Method::MaxT);
        assert_eq!(family, None);
        assert_eq!(verdicts[0].verdict, RuleState::Inconclusive);
        assert_eq!(verdicts[0].scope_kind, RuleScope::Total.kind());
    }

    #[test]
    fn an_allowance_that_can_never_be_exceeded_is_not_tested() {
        let rps = rule(Metric::Responses, "rate -10% floor 50/s");
        let why = prepared(&rps, [Some(40.0), Some(10.0)]).unwrap_err();
        assert!(why.contains("the rule can never fire"), "{why}");
        let p50 = rule(Metric::Latency, "p(50) +10%");
        assert!(prepared(&p50, [Some(1_000.0), None]).is_err());
        let e = prepared(&p50, [Some(1_000.0), Some(1_100.0)]).unwrap();
        assert!((e.estimate - 1.1f64.ln()).abs() < 1e-12);
        // The default floor of 2 ms on a 1 ms median: an allowance of +200%.
        assert!((e.allowance - 3f64.ln()).abs() < 1e-12);
    }
}
