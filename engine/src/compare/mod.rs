//! Comparing a result with a baseline result: deltas per target, and a verdict per regression
//! rule that a noisy runner cannot fool.
//!
//! [`compare`] takes two result artifacts and nothing else: the rules are those recorded in the
//! current result (`regression_rules`; the baseline's, then the defaults, for results written
//! before rules were recorded).
//!
//! # The verdict of a rule
//!
//! For a rule such as `p(95) +10% floor 2ms`, with `b` and `c` the baseline's and the current
//! run's whole-run values (e.g. their p95 from the HDR histograms):
//!
//! - the *allowed change* is `A = max(max_change × b, floor)` (10% of `b`, at least 2 ms), in the
//!   worse direction (a rise; a drop for throughput);
//! - the *interval* is the 95% bootstrap confidence interval of the change, computed from the two
//!   runs' per-second samples ([`stats`]): for latency and throughput, of the relative change of
//!   the mean per-second value, scaled by `b`; for the error rate, of the absolute change of the
//!   pooled rate `Σ errors / Σ requests`.
//!
//! Then, in this order ([`judge`]):
//!
//! 1. **improved** when the whole interval is better than `-A`;
//! 2. **unchanged** when the whole-run change is within the floor (never a regression);
//! 3. **inconclusive** when there is no interval (fewer than [`stats::MIN_SAMPLES`] seconds);
//! 4. **regressed** when the whole interval lies beyond `A` and so does the whole-run change;
//! 5. **unchanged** when the whole interval is within `A`;
//! 6. **inconclusive** otherwise: the interval straddles `A`; a longer run narrows it.
//!
//! Only `regressed` fails the gate. An A/A comparison (same build, same server) gives intervals
//! around 0, within `A`: unchanged. The rules apply to the whole run (`total`), the only scope
//! with a per-second series; per-target deltas are reported without a verdict.

pub mod stats;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::regression::{
    DEFAULT_ERRORS_RULES, DEFAULT_LATENCY_RULES, DEFAULT_REQUESTS_RULES, RegressionRule,
};
use crate::plan::threshold::{Aggregation, Metric};
use crate::result::{RESULT_VERSION, RunResult, TargetResult, TimeSample};
use stats::{Change, Interval};

/// Why two results cannot be compared (or merged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    #[error(
        "the results come from different specs: `{baseline}` (baseline) and `{current}` \
         (current); compare results of the same spec (its `name`)"
    )]
    DifferentSpecs { baseline: String, current: String },
    #[error(
        "`{file}` has result_version {found}, this loadgate reads version {RESULT_VERSION}; \
         produce both results with the same loadgate major version"
    )]
    Version { file: String, found: u32 },
    #[error("a regression rule in `{file}` cannot be read: {reason}")]
    Rule { file: String, reason: String },
}

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
    /// `total`: rules apply to the whole run.
    pub scope: String,
    /// `latency`, `errors` or `requests`.
    pub metric: String,
    /// `p(95)`, `med`, `mean` or `rate`.
    pub aggregation: String,
    /// The rule as written (or the default rule's text).
    pub rule: String,
    /// Unit of `baseline`, `current`, `change`, `allowed_change`, `floor` and `change_ci`:
    /// `us`, `ratio` (0.01 = 1%) or `1/s`.
    pub unit: String,
    /// Whole-run value of the baseline; absent when it has no responses to measure.
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
    /// 95% confidence interval of `change` `[low, high]` (moving-block bootstrap over the
    /// per-second samples); absent with too few samples.
    pub change_ci: Option<[f64; 2]>,
    /// The interval relative to the baseline, fractions; absent when the baseline is 0.
    pub relative_change_ci: Option<[f64; 2]>,
    /// Per-second samples used from the baseline and the current run.
    pub samples: [usize; 2],
    pub verdict: RuleState,
    /// The verdict in words, with the numbers that decided it.
    pub reason: String,
}

/// One metric of one target, in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MetricDelta {
    /// `p50`, `p90`, `p95`, `p99`, `p99_9`, `mean` (latency, `us`), `error_rate` (`ratio`),
    /// `rps` (`1/s`).
    pub metric: String,
    pub unit: String,
    pub baseline: Option<f64>,
    pub current: Option<f64>,
    /// `current - baseline`.
    pub change: Option<f64>,
    /// `current / baseline - 1`; absent when the baseline is 0 or absent.
    pub relative_change: Option<f64>,
}

/// A target (or `total`) in both runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TargetDelta {
    pub name: String,
    /// The target exists in the baseline.
    pub in_baseline: bool,
    /// The target exists in the current run.
    pub in_current: bool,
    pub metrics: Vec<MetricDelta>,
}

/// An SLO verdict of the current run beside the same threshold's value in the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SloDelta {
    pub scope: String,
    pub metric: String,
    pub threshold: String,
    pub unit: String,
    pub limit: f64,
    pub measured: Option<f64>,
    /// The same threshold's measured value in the baseline, when it had it.
    pub baseline: Option<f64>,
    /// `measured - baseline`.
    pub change: Option<f64>,
    pub passed: bool,
}

/// The comparison of a current result with its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Comparison {
    pub spec_name: String,
    /// The spec file changed between the runs (its SHA-256 differs).
    pub spec_changed: bool,
    /// The baseline's measurement is invalid (`health.valid` false): nothing can be concluded.
    pub baseline_invalid: bool,
    /// Things a reader should know: a changed spec, an interrupted run, where the rules came
    /// from.
    pub notes: Vec<String>,
    pub rules: Vec<RuleVerdict>,
    pub slo: Vec<SloDelta>,
    /// `total` first, then the current run's targets, then targets only the baseline has.
    pub targets: Vec<TargetDelta>,
}

impl Comparison {
    /// Whether any rule regressed.
    pub fn regressed(&self) -> bool {
        self.rules.iter().any(|r| r.verdict == RuleState::Regressed)
    }

    /// Number of rules with the given verdict.
    pub fn count(&self, state: RuleState) -> usize {
        self.rules.iter().filter(|r| r.verdict == state).count()
    }
}

/// Checks that `result` can be read by this loadgate.
pub fn check_version(result: &RunResult, file: &str) -> Result<(), CompareError> {
    if result.result_version != RESULT_VERSION {
        return Err(CompareError::Version {
            file: file.to_string(),
            found: result.result_version,
        });
    }
    Ok(())
}

/// Compares `current` with `baseline`. Errors: different specs (by name), an unreadable
/// version or rule.
pub fn compare(baseline: &RunResult, current: &RunResult) -> Result<Comparison, CompareError> {
    check_version(baseline, "baseline")?;
    check_version(current, "current")?;
    if baseline.spec.name != current.spec.name {
        return Err(CompareError::DifferentSpecs {
            baseline: baseline.spec.name.clone(),
            current: current.spec.name.clone(),
        });
    }
    let mut notes = Vec::new();
    let spec_changed = baseline.spec.hash != current.spec.hash;
    if spec_changed {
        notes.push("the spec file changed since the baseline run".to_string());
    }
    if baseline.interrupted {
        notes.push("the baseline run was interrupted: it covers part of its plan".to_string());
    }
    if current.interrupted {
        notes.push("the current run was interrupted: it covers part of its plan".to_string());
    }
    for (which, r) in [("baseline", baseline), ("current", current)] {
        if !r.health.valid {
            notes.push(format!(
                "the {which} run's measurement is invalid (the load generator fell short of the \
                 plan): {}",
                r.health.problems.join("; ")
            ));
        }
    }
    let (recorded, file) = match (&current.regression_rules, &baseline.regression_rules) {
        (Some(rules), _) => (Some(rules), "current"),
        (None, Some(rules)) => {
            notes.push("regression rules taken from the baseline result".to_string());
            (Some(rules), "baseline")
        }
        (None, None) => {
            notes.push("neither result records regression rules: default rules used".to_string());
            (None, "")
        }
    };
    let rules: Vec<RegressionRule> = match recorded {
        Some(list) => list
            .iter()
            .map(|r| {
                r.to_rule().map_err(|reason| CompareError::Rule {
                    file: file.to_string(),
                    reason,
                })
            })
            .collect::<Result<_, _>>()?,
        None => default_rules(),
    };
    Ok(Comparison {
        spec_name: current.spec.name.clone(),
        spec_changed,
        baseline_invalid: !baseline.health.valid,
        notes,
        rules: rules
            .iter()
            .map(|rule| judge_rule(rule, baseline, current))
            .collect(),
        slo: slo_deltas(baseline, current),
        targets: target_deltas(baseline, current),
    })
}

/// The default rules (a spec without a `regression` block).
pub fn default_rules() -> Vec<RegressionRule> {
    let all = [
        (Metric::Latency, &DEFAULT_LATENCY_RULES[..]),
        (Metric::Errors, &DEFAULT_ERRORS_RULES[..]),
        (Metric::Requests, &DEFAULT_REQUESTS_RULES[..]),
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
pub fn whole_run_value(rule: &RegressionRule, t: &TargetResult) -> Option<f64> {
    match rule.metric {
        Metric::Latency => {
            let l = t.latency_us.as_ref()?;
            Some(match rule.aggregation {
                Aggregation::Mean => l.mean,
                Aggregation::Median => l.p50 as f64,
                Aggregation::Percentile(p) => {
                    (match p {
                        50.0 => l.p50,
                        90.0 => l.p90,
                        95.0 => l.p95,
                        99.0 => l.p99,
                        _ => l.p99_9,
                    }) as f64
                }
                _ => return None,
            })
        }
        Metric::Errors => Some(t.error_rate),
        Metric::Requests => Some(t.rps),
        Metric::Checks => None,
    }
}

/// The complete seconds of a run's series: the last second, cut short when the run ended
/// (requests in flight draining), is left out of every statistic.
fn complete_seconds(result: &RunResult) -> impl Iterator<Item = &TimeSample> {
    result
        .time_series
        .iter()
        .filter(|s| f64::from(s.second) + 1.0 <= result.duration_s + 1e-9)
}

/// A latency rule's per-second samples: complete seconds with responses, and the field the
/// rule names.
fn latency_samples(rule: &RegressionRule, result: &RunResult) -> Vec<f64> {
    complete_seconds(result)
        .filter(|s| s.responses > 0)
        .filter_map(|s| match rule.aggregation {
            Aggregation::Mean => s.mean_us,
            Aggregation::Median => Some(s.p50_us as f64),
            Aggregation::Percentile(p) => match p {
                50.0 => Some(s.p50_us as f64),
                90.0 => s.p90_us.map(|v| v as f64),
                95.0 => s.p95_us.map(|v| v as f64),
                99.0 => Some(s.p99_us as f64),
                _ => s.p99_9_us.map(|v| v as f64),
            },
            _ => None,
        })
        .collect()
}

/// Responses of each complete second.
fn throughput_samples(result: &RunResult) -> Vec<f64> {
    complete_seconds(result)
        .map(|s| s.responses as f64)
        .collect()
}

/// `(errors, requests)` of each complete second. Results written before the series recorded
/// `requests` have only responses (any status) and errors (transport errors and unexpected
/// statuses); there requests are estimated as responses plus the transport errors, taking the
/// share of unexpected statuses among errors from the run's totals (exact when only one kind
/// of error happened).
fn error_samples(result: &RunResult) -> Vec<(f64, f64)> {
    let t = &result.total;
    let unexpected = t
        .errors_by_kind
        .get("unexpected_status")
        .copied()
        .unwrap_or(0) as f64;
    let transport_share = if t.errors > 0 {
        1.0 - unexpected / t.errors as f64
    } else {
        1.0
    };
    complete_seconds(result)
        .map(|s| {
            let errors = s.errors as f64;
            let requests = s
                .requests
                .map_or(s.responses as f64 + transport_share * errors, |r| r as f64);
            (errors, requests)
        })
        .filter(|(_, requests)| *requests > 0.0)
        .collect()
}

fn pooled_rate(samples: &[(f64, f64)]) -> f64 {
    let (e, r) = samples
        .iter()
        .fold((0.0, 0.0), |(e, r), s| (e + s.0, r + s.1));
    if r > 0.0 { e / r } else { 0.0 }
}

fn judge_rule(rule: &RegressionRule, baseline: &RunResult, current: &RunResult) -> RuleVerdict {
    let b = whole_run_value(rule, &baseline.total);
    let c = whole_run_value(rule, &current.total);
    let (interval, samples) = match rule.metric {
        Metric::Latency => {
            let (sb, sc) = (
                latency_samples(rule, baseline),
                latency_samples(rule, current),
            );
            let rel = stats::change_interval(&sb, &sc, &|s| stats::mean(s), Change::Relative);
            let abs = rel.zip(b).map(|(i, b)| Interval {
                low: i.low * b,
                high: i.high * b,
            });
            (abs, [sb.len(), sc.len()])
        }
        Metric::Requests => {
            let (sb, sc) = (throughput_samples(baseline), throughput_samples(current));
            let rel = stats::change_interval(&sb, &sc, &|s| stats::mean(s), Change::Relative);
            let abs = rel.zip(b).map(|(i, b)| Interval {
                low: i.low * b,
                high: i.high * b,
            });
            (abs, [sb.len(), sc.len()])
        }
        Metric::Errors => {
            let (sb, sc) = (error_samples(baseline), error_samples(current));
            let abs = stats::change_interval(&sb, &sc, &pooled_rate, Change::Absolute);
            (abs, [sb.len(), sc.len()])
        }
        Metric::Checks => (None, [0, 0]),
    };
    let (verdict, reason) = match (b, c) {
        (Some(b), Some(c)) => judge(rule, b, c, interval, samples),
        _ => (
            RuleState::Inconclusive,
            "no responses to measure in one of the runs".to_string(),
        ),
    };
    let relative = |x: f64| b.filter(|b| *b != 0.0).map(|b| x / b);
    RuleVerdict {
        scope: "total".to_string(),
        metric: rule.metric.name().to_string(),
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
        change_ci: interval.map(|i| [i.low, i.high]),
        relative_change_ci: interval.and_then(|i| Some([relative(i.low)?, relative(i.high)?])),
        samples,
        verdict,
        reason,
    }
}

/// `max(max_change × |baseline|, floor)`.
pub fn allowed_change(rule: &RegressionRule, baseline: f64) -> f64 {
    (rule.max_change * baseline.abs()).max(rule.floor)
}

/// The verdict of `rule` given the whole-run values and the interval of the change (in the
/// rule's unit, `current - baseline`); see the module documentation for the order of the
/// checks. `samples` is only used to explain a missing interval.
pub fn judge(
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
    let fmt = |v: f64| format_value(v, rule.unit());
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
                fmt_signed(current - baseline, rule.unit())
            ),
        );
    }
    if worse <= rule.floor {
        return (
            RuleState::Unchanged,
            format!(
                "change {} is within the floor of {}",
                fmt_signed(current - baseline, rule.unit()),
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

/// A value in a unit, for reasons and reports: `1.23ms`, `0.150%`, `512.0/s`.
pub fn format_value(value: f64, unit: &str) -> String {
    match unit {
        "us" => {
            let sign = if value < 0.0 { "-" } else { "" };
            format!("{sign}{}", crate::report::console::latency(value.abs()))
        }
        "ratio" => format!("{:.3}%", value * 100.0),
        "1/s" => format!("{value:.1}/s"),
        _ => format!("{value}"),
    }
}

/// [`format_value`] with an explicit `+` for positive values.
pub fn fmt_signed(value: f64, unit: &str) -> String {
    let text = format_value(value, unit);
    if value > 0.0 {
        format!("+{text}")
    } else {
        text
    }
}

fn slo_deltas(baseline: &RunResult, current: &RunResult) -> Vec<SloDelta> {
    current
        .slo
        .iter()
        .map(|v| {
            let base = baseline
                .slo
                .iter()
                .find(|b| b.scope == v.scope && b.metric == v.metric && b.threshold == v.threshold)
                .and_then(|b| b.measured);
            SloDelta {
                scope: v.scope.clone(),
                metric: v.metric.clone(),
                threshold: v.threshold.clone(),
                unit: v.unit.clone(),
                limit: v.limit,
                measured: v.measured,
                baseline: base,
                change: v.measured.zip(base).map(|(m, b)| m - b),
                passed: v.passed,
            }
        })
        .collect()
}

/// The metrics compared per target: name, unit, value.
pub fn target_metrics(t: &TargetResult) -> Vec<(&'static str, &'static str, Option<f64>)> {
    let l = t.latency_us.as_ref();
    vec![
        ("p50", "us", l.map(|l| l.p50 as f64)),
        ("p90", "us", l.map(|l| l.p90 as f64)),
        ("p95", "us", l.map(|l| l.p95 as f64)),
        ("p99", "us", l.map(|l| l.p99 as f64)),
        ("p99_9", "us", l.map(|l| l.p99_9 as f64)),
        ("mean", "us", l.map(|l| l.mean)),
        ("error_rate", "ratio", Some(t.error_rate)),
        ("rps", "1/s", Some(t.rps)),
    ]
}

fn delta(name: &str, b: Option<&TargetResult>, c: Option<&TargetResult>) -> TargetDelta {
    let bm = b.map(target_metrics);
    let cm = c.map(target_metrics);
    let names = bm.as_ref().or(cm.as_ref()).expect("one side exists");
    let metrics = names
        .iter()
        .enumerate()
        .map(|(i, (metric, unit, _))| {
            let base = bm.as_ref().and_then(|m| m[i].2);
            let cur = cm.as_ref().and_then(|m| m[i].2);
            MetricDelta {
                metric: metric.to_string(),
                unit: unit.to_string(),
                baseline: base,
                current: cur,
                change: base.zip(cur).map(|(b, c)| c - b),
                relative_change: base
                    .zip(cur)
                    .filter(|(b, _)| *b != 0.0)
                    .map(|(b, c)| c / b - 1.0),
            }
        })
        .collect();
    TargetDelta {
        name: name.to_string(),
        in_baseline: b.is_some(),
        in_current: c.is_some(),
        metrics,
    }
}

fn target_deltas(baseline: &RunResult, current: &RunResult) -> Vec<TargetDelta> {
    let mut out = vec![delta("total", Some(&baseline.total), Some(&current.total))];
    for t in &current.targets {
        let b = baseline.targets.iter().find(|b| b.name == t.name);
        out.push(delta(&t.name, b, Some(t)));
    }
    for b in &baseline.targets {
        if !current.targets.iter().any(|t| t.name == b.name) {
            out.push(delta(&b.name, Some(b), None));
        }
    }
    out
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
        let rps = rule(Metric::Requests, "rate -10%");
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
        let rps = rule(Metric::Requests, "rate -10%");
        let (_, reason) = judge(&rps, 1000.0, 800.0, ci(-220.0, -180.0), [5, 5]);
        assert_eq!(
            reason,
            "worse by more than the allowed 100.0/s: 95% interval of the change [-220.0/s, -180.0/s]"
        );
        let (_, reason) = judge(&p95, 20_000.0, 30_000.0, None, [2, 9]);
        assert!(reason.contains("(2 and 9; 3 needed)"), "{reason}");
    }
}
