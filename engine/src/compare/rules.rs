//! Regression rules judged: the whole-run values a rule compares, the interval of the change
//! from the per-second samples (widened by the run-to-run spread of `between_runs.rs` when
//! earlier results are given: `judge_all`), and the verdict in the order the module
//! documentation of [`super`] gives.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use std::borrow::Cow;

use super::between_runs::{MIN_EARLIER, Scale, Spread, Widening, note};
use super::samples;
use super::scoped::scoped;
use super::stats::{self, Change, Interval};
use crate::plan::regression::{
    DEFAULT_ERRORS_RULES, DEFAULT_LATENCY_RULES, DEFAULT_REQUESTS_RULES, RegressionRule, RuleScope,
    ScopeKind,
};
use crate::plan::threshold::{Aggregation, Metric};
use crate::result::{RunResult, TargetResult};
use crate::units::Unit;

/// The verdict on one regression rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuleState {
    /// Worse than allowed, with 95% confidence: fails the gate.
    Regressed,
    /// Within the allowed change (or the floor).
    Unchanged,
    /// Better by more than the allowed change, with 95% confidence.
    Improved,
    /// The data cannot tell: the interval straddles the allowed change, or too few samples.
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
    /// What the rule compares: `total` (the whole run), `target` or `flow` (its iterations:
    /// `latency` is the iteration duration, `errors` the failed iterations, `requests` the
    /// iterations per second). Absent for `total`.
    #[serde(default, skip_serializing_if = "ScopeKind::is_total")]
    #[schemars(with = "String")]
    pub scope_kind: ScopeKind,
    /// `total`, or the target's or flow's name.
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
    /// Whole-run value of the baseline (of its target or flow, for a scoped rule); absent when
    /// it has no responses to measure, or not that target or flow.
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
    /// 95% confidence interval of `change` `[low, high]` (moving-block bootstrap over the
    /// per-second samples, widened by the run-to-run variation when `compare` is given earlier
    /// results with `--baseline-history`); absent with too few samples.
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
    /// Samples used from the baseline and the current run: seconds of the per-second series
    /// for a whole-run rule; requests (a flow's iterations) for a target's or flow's rule.
    pub samples: [usize; 2],
    /// The verdict on the rule.
    pub verdict: RuleState,
    /// The verdict in words, with the numbers that decided it.
    pub reason: String,
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

/// Each rule judged ([`judge_rule`]). With `earlier` (a stored baseline's earlier
/// results), on an interval widened by the spread of the rule's whole-run value over `earlier`
/// and the baseline (`between_runs.rs`), when there are at least [`MIN_EARLIER`]; and with the
/// comparison's [`note`].
pub(super) fn judge_all(
    rules: &[RegressionRule],
    baseline: &RunResult,
    current: &RunResult,
    earlier: Option<&[&RunResult]>,
) -> (Vec<RuleVerdict>, Option<String>) {
    let Some(earlier) = earlier else {
        let verdicts = rules
            .iter()
            .map(|rule| judge_rule(rule, baseline, current, None).0)
            .collect();
        return (verdicts, None);
    };
    let mut rows = Vec::new();
    let mut verdicts = Vec::new();
    for rule in rules {
        let values: Option<Vec<f64>> = earlier
            .iter()
            .copied()
            .chain([baseline])
            .map(|r| whole_run_value(rule, scoped(&rule.scope, r)?.as_ref()))
            .collect();
        let spread = values
            .filter(|_| earlier.len() >= MIN_EARLIER)
            .and_then(|v| Spread::estimate(&v, Scale::of(rule.metric)));
        let (verdict, widening) = judge_rule(rule, baseline, current, spread.as_ref());
        let label = format!("{} {}", verdict.metric, verdict.aggregation);
        rows.push((label, rule.unit(), spread, widening));
        verdicts.push(verdict);
    }
    (verdicts, Some(note(earlier.len(), &rows)))
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

/// The 95% interval of the change `current - baseline` in the rule's unit, from the runs'
/// per-second samples, and how many samples each run gave. `b` is the baseline's whole-run
/// value, which scales a relative interval.
fn change_interval(
    rule: &RegressionRule,
    baseline: &RunResult,
    current: &RunResult,
    b: Option<f64>,
) -> (Option<Interval>, [usize; 2]) {
    let scaled = |sb: Vec<f64>, sc: Vec<f64>| {
        let rel = stats::change_interval(&sb, &sc, &|s| stats::mean(s), Change::Relative);
        let abs = rel.zip(b).map(|(i, b)| Interval {
            low: i.low * b,
            high: i.high * b,
        });
        (abs, [sb.len(), sc.len()])
    };
    match rule.metric {
        Metric::Latency => scaled(
            samples::latency(rule, baseline),
            samples::latency(rule, current),
        ),
        Metric::Responses => scaled(samples::throughput(baseline), samples::throughput(current)),
        Metric::Errors => {
            let (sb, sc) = (samples::errors(baseline), samples::errors(current));
            let abs = stats::change_interval(&sb, &sc, &samples::pooled_rate, Change::Absolute);
            (abs, [sb.len(), sc.len()])
        }
        Metric::Checks => (None, [0, 0]),
    }
}

/// Judges `rule` on the whole runs (on its target or flow, when scoped: see `scoped.rs`). With `spread` (the run-to-run spread of the rule's value,
/// from earlier results) the interval is widened by it first (`between_runs.rs`); the widening
/// is returned with the verdict, and the reason says so when the interval grew.
pub(super) fn judge_rule(
    rule: &RegressionRule,
    baseline: &RunResult,
    current: &RunResult,
    spread: Option<&Spread>,
) -> (RuleVerdict, Option<Widening>) {
    let (bt, ct) = (scoped(&rule.scope, baseline), scoped(&rule.scope, current));
    let b = bt.as_deref().and_then(|t| whole_run_value(rule, t));
    let c = ct.as_deref().and_then(|t| whole_run_value(rule, t));
    let (interval, samples) = match (&rule.scope, &bt, &ct) {
        (RuleScope::Total, _, _) => change_interval(rule, baseline, current, b),
        (_, Some(bt), Some(ct)) => super::scoped::independent_interval(
            rule,
            bt,
            ct,
            [baseline.duration_s, current.duration_s],
        ),
        _ => (None, [0, 0]),
    };
    let widening = match (spread, interval, b) {
        (Some(s), Some(i), Some(b)) => s.widen(i, b),
        _ => None,
    };
    let interval = widening.map_or(interval, |w| Some(w.interval));
    let decided = match (b, c) {
        (Some(b), Some(c)) => {
            let (state, mut reason) = judge(rule, b, c, interval, samples);
            if let (Some(s), Some(w)) = (spread, widening)
                && w.widened()
            {
                reason.push_str(&format!(
                    " (widened by the run-to-run variation, {}, from the within-run {})",
                    s.format(w.between, rule.unit()),
                    s.format(w.within, rule.unit())
                ));
            }
            if rule.scope != RuleScope::Total && interval.is_some() {
                reason.push_str(" (taking its requests as independent samples)");
            }
            (state, reason)
        }
        _ => (RuleState::Inconclusive, missing_reason(rule, &bt, &ct)),
    };
    (
        rule_verdict(rule, [b, c], interval, samples, decided),
        widening,
    )
}

/// Why a rule has no value to judge in a run: its target or flow is not in that result
/// (renamed, added or removed between the runs), or it has no responses.
fn missing_reason(
    rule: &RegressionRule,
    baseline: &Option<Cow<'_, TargetResult>>,
    current: &Option<Cow<'_, TargetResult>>,
) -> String {
    let (kind, name) = (rule.scope.kind(), rule.scope.name());
    match (baseline, current) {
        (None, None) => format!("neither result has the {kind} `{name}`"),
        (None, Some(_)) => format!("the baseline result has no {kind} `{name}`"),
        (Some(_), None) => format!("the current result has no {kind} `{name}`"),
        _ => "no responses to measure in one of the runs".to_string(),
    }
}

/// A rule's verdict as the JSON verdict shows it: the rule's texts and units, the whole-run
/// values `[baseline, current]` and their changes, the interval `interval` of the change (in
/// the rule's unit; also relative to the baseline), the sample counts, and the decided state and
/// reason. Shared by the two-run and the paired (`paired.rs`) comparison.
pub(super) fn rule_verdict(
    rule: &RegressionRule,
    [b, c]: [Option<f64>; 2],
    interval: Option<Interval>,
    samples: [usize; 2],
    (verdict, reason): (RuleState, String),
) -> RuleVerdict {
    let relative = |x: f64| b.filter(|b| *b != 0.0).map(|b| x / b);
    RuleVerdict {
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
        relative_allowed_change: b
            .filter(|b| *b != 0.0)
            .map(|b| allowed_change(rule, b) / b.abs()),
        change_ci: interval.map(|i| [i.low, i.high]),
        relative_change_ci: interval.and_then(|i| Some([relative(i.low)?, relative(i.high)?])),
        level: None,
        mde: None,
        relative_mde: None,
        samples,
        verdict,
        reason,
    }
}

/// `max(max_change × |baseline|, floor)`.
fn allowed_change(rule: &RegressionRule, baseline: f64) -> f64 {
    (rule.max_change * baseline.abs()).max(rule.floor)
}

/// The verdict of `rule` given the whole-run values and the interval of the change (in the
/// rule's unit, `current - baseline`); see the module documentation of [`super`] for the order
/// of the checks. `samples` is only used to explain a missing interval.
pub(super) fn judge(
    rule: &RegressionRule,
    baseline: f64,
    current: f64,
    interval: Option<Interval>,
    samples: [usize; 2],
) -> (RuleState, String) {
    let allowed = allowed_change(rule, baseline);
    // Everything in the worse direction: positive = worse.
    let sign = if rule.lower_is_worse() { -1.0 } else { 1.0 };
    let worse = sign * (current - baseline);
    let worse_interval = interval.map(|i| {
        let (a, b) = (sign * i.low, sign * i.high);
        (a.min(b), a.max(b))
    });
    let unit = Unit::from_name(rule.unit());
    let fmt = |v: f64| unit.format(v);
    let ci_text = |_: (f64, f64)| {
        let i = interval.expect("only called with an interval");
        format!(
            "95% interval of the change [{}, {}]",
            fmt(i.low),
            fmt(i.high)
        )
    };
    if let Some(w) = worse_interval
        && w.1 < -allowed
    {
        return (
            RuleState::Improved,
            format!(
                "better by more than the allowed {}: {}",
                fmt(allowed),
                ci_text(w)
            ),
        );
    }
    if worse <= 0.0 {
        return (
            RuleState::Unchanged,
            format!(
                "not worse: change {}",
                unit.format_signed(current - baseline)
            ),
        );
    }
    if worse <= rule.floor {
        return (
            RuleState::Unchanged,
            format!(
                "change {} is within the floor of {}",
                unit.format_signed(current - baseline),
                fmt(rule.floor)
            ),
        );
    }
    let Some(w) = worse_interval else {
        return (
            RuleState::Inconclusive,
            format!(
                "too few one-second samples for an interval ({} and {}; {} needed): run longer",
                samples[0],
                samples[1],
                stats::MIN_SAMPLES
            ),
        );
    };
    if w.0 > allowed && worse > allowed {
        (
            RuleState::Regressed,
            format!(
                "worse by more than the allowed {}: {}",
                fmt(allowed),
                ci_text(w)
            ),
        )
    } else if w.1 <= allowed {
        (
            RuleState::Unchanged,
            format!("within the allowed {}: {}", fmt(allowed), ci_text(w)),
        )
    } else {
        (
            RuleState::Inconclusive,
            format!(
                "{} includes the allowed {}: a longer run would tell",
                ci_text(w),
                fmt(allowed)
            ),
        )
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn rule(metric: Metric, text: &str) -> RegressionRule {
        RegressionRule::parse(metric, text).unwrap()
    }

    fn ci(low: f64, high: f64) -> Option<Interval> {
        Some(Interval { low, high })
    }

    #[test]
    fn verdicts_follow_the_interval_the_allowance_and_the_floor() {
        let p95 = rule(Metric::Latency, "p(95) +10% floor 1ms");
        let rps = rule(Metric::Responses, "rate -10%");
        let errors = rule(Metric::Errors, "rate +10% floor 0.1%");
        use RuleState::*;
        // (rule, baseline, current, interval, expected)
        let cases = [
            // 20 ms → 24 ms, interval [3.5, 4.5] ms > allowed 2 ms.
            (&p95, 20_000.0, 24_000.0, ci(3_500.0, 4_500.0), Regressed),
            // Same change, but the interval reaches below the allowed 2 ms.
            (&p95, 20_000.0, 24_000.0, ci(1_000.0, 7_000.0), Inconclusive),
            // A/A: interval around 0.
            (&p95, 20_000.0, 20_300.0, ci(-800.0, 900.0), Unchanged),
            // A large relative change under the floor: 2 ms → 2.9 ms (+45%).
            (&p95, 2_000.0, 2_900.0, ci(800.0, 1_000.0), Unchanged),
            // Faster by 25%, confidently.
            (&p95, 20_000.0, 15_000.0, ci(-5_500.0, -4_500.0), Improved),
            // No interval: too few samples.
            (&p95, 20_000.0, 30_000.0, None, Inconclusive),
            // Throughput: a drop is worse.
            (&rps, 1000.0, 800.0, ci(-220.0, -180.0), Regressed),
            (&rps, 1000.0, 1200.0, ci(180.0, 220.0), Improved),
            (&rps, 1000.0, 980.0, ci(-40.0, 10.0), Unchanged),
            // Errors from 0: allowed = the floor (0.1 pp).
            (&errors, 0.0, 0.02, ci(0.015, 0.025), Regressed),
            (&errors, 0.0, 0.0005, ci(0.0, 0.001), Unchanged),
            (&errors, 0.0, 0.002, ci(0.0, 0.004), Inconclusive),
        ];
        for (rule, b, c, interval, want) in cases {
            let (got, reason) = judge(rule, b, c, interval, [10, 10]);
            assert_eq!(got, want, "{} {b} -> {c}: {reason}", rule.expression);
        }
    }

    #[test]
    fn a_regression_needs_the_whole_run_change_beyond_the_allowance_too() {
        let p95 = rule(Metric::Latency, "p(95) +10% floor 0us");
        // The per-second interval says +15%, the whole-run values +5%.
        let (got, _) = judge(&p95, 10_000.0, 10_500.0, ci(1_200.0, 1_800.0), [9, 9]);
        assert_eq!(got, RuleState::Inconclusive);
    }

    #[test]
    fn reasons_carry_the_numbers() {
        let p95 = rule(Metric::Latency, "p(95) +10% floor 1ms");
        let (_, reason) = judge(&p95, 20_000.0, 24_000.0, ci(3_500.0, 4_500.0), [5, 5]);
        assert_eq!(
            reason,
            "worse by more than the allowed 2.00ms: 95% interval of the change [3.50ms, 4.50ms]"
        );
        let rps = rule(Metric::Responses, "rate -10%");
        let (_, reason) = judge(&rps, 1000.0, 800.0, ci(-220.0, -180.0), [5, 5]);
        assert_eq!(
            reason,
            "worse by more than the allowed 100.0/s: 95% interval of the change [-220.0/s, -180.0/s]"
        );
        let (_, reason) = judge(&p95, 20_000.0, 30_000.0, None, [2, 9]);
        assert!(reason.contains("(2 and 9; 3 needed)"), "{reason}");
    }
}
