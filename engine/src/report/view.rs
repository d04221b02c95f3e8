//! The shared table logic of the report formats: a [`View`] of a result (and its comparison)
//! with every number already formatted, handed to the templates. Templates only lay it out;
//! they never compute or format a value, so all formats agree.

use serde::Serialize;

use super::http3;
use super::target_view::{Row, TargetView, target_view};
use super::verdict::{Verdict, detectable_change, summary};
use crate::compare::{
    Comparison, RuleChanges, RuleState, RuleVerdict, SloDelta, TargetMetric, median,
};
use crate::plan::regression::ScopeKind;
use crate::plan::threshold::Metric;
use crate::result::RunResult;
use crate::units::{MISSING, Unit, format_change, format_relative};

/// Everything a report template prints, formatted.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct View {
    /// The spec's name.
    pub spec: String,
    /// `pass`, `slo_failed`, `regressed`, `invalid_measurement` or `interrupted`
    /// ([`Verdict`]).
    pub verdict: &'static str,
    /// `PASSED`, `FAILED`, `REGRESSED`, `INVALID MEASUREMENT` or `INTERRUPTED`.
    pub verdict_word: &'static str,
    /// The one-line verdict.
    pub summary: String,
    pub has_baseline: bool,
    /// What the compared result is called: `candidate` in a paired comparison (`loadgate
    /// ab`), else `current`.
    pub current_label: &'static str,
    /// The rules were judged on paired epochs (`loadgate ab`): Hodges–Lehmann and Wilcoxon
    /// signed-rank over the epoch pairs instead of the bootstrap over two runs' seconds.
    pub paired: bool,
    /// Key numbers: throughput, p50, p95, p99, error rate.
    pub headline: Vec<Row>,
    pub slo: Vec<CheckRow>,
    pub rules: Vec<CheckRow>,
    /// Every target (not `total`), in the current run's order, then those only the baseline
    /// has.
    pub targets: Vec<TargetView>,
    pub total: TargetView,
    /// Every flow of the current run, with its steps' target rows (empty without flows).
    pub flows: Vec<super::flows::FlowView>,
    pub notes: Vec<String>,
    /// Environment of the current run (and the baseline's, when there is one).
    pub environment: Vec<EnvRow>,
    pub counts: Counts,
    /// The current run's measured window in seconds, to the millisecond (`5.000`): the
    /// JUnit report's `time` of every suite and test case, each check being judged on that
    /// one run.
    pub time_s: String,
}

/// What a [`CheckRow`] judges; shown as `SLO` or `rule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) enum CheckKind {
    /// An SLO threshold.
    #[serde(rename = "SLO")]
    Slo,
    /// A regression rule.
    #[serde(rename = "rule")]
    Rule,
}

impl CheckKind {
    /// `SLO` or `rule`, as the reports show it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            CheckKind::Slo => "SLO",
            CheckKind::Rule => "rule",
        }
    }
}

/// An SLO or a regression rule, judged.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckRow {
    /// `SLO` or `rule`.
    pub kind: CheckKind,
    /// e.g. `total latency p(95) < 200ms` or `latency p(95) +10% floor 2ms`.
    pub name: String,
    /// Scope (`total` or a target's name).
    pub scope: String,
    pub measured: String,
    pub baseline: String,
    pub change: String,
    /// 95% interval of the relative change, rules only: `[-1.2%, +5.0%]`.
    pub interval: String,
    /// Allowed change, rules only: `+2.00ms`.
    pub allowed: String,
    /// The threshold's limit, SLOs only: `50.00ms`. (An SLO judges one run against this
    /// fixed limit, so it has no interval, detectable change or allowance.)
    pub limit: String,
    /// The minimum detectable effect, rules only: half the interval's width
    /// ([`detectable_change`]), `±1.8%` (`±0.10 points` of the error rate for `errors`
    /// rules), or `no interval`.
    pub detectable: String,
    /// The per-epoch changes of a paired comparison, rules only.
    pub epochs: Option<EpochRow>,
    /// `pass`, `fail` (SLO) or the rule's state.
    pub verdict: &'static str,
    /// Whether this check fails the gate.
    pub failed: bool,
    /// Why, in words (rules), or the threshold's limit (SLOs).
    pub reason: String,
}

/// A rule's change in each epoch pair of a paired comparison, in brief.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EpochRow {
    /// One bar per epoch pair (per group of pairs beyond [`SPARKLINE_WIDTH`]), from the lowest
    /// change or 0, whichever is lower, to the highest: `▂▅▇▆`.
    pub sparkline: String,
    /// `30 above 0, 2 below of 32 pairs; median +9.8%`.
    pub summary: String,
}

/// Most bars in an [`EpochRow`]'s sparkline.
const SPARKLINE_WIDTH: usize = 40;

/// A line of the environment table.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EnvRow {
    pub key: String,
    pub current: String,
    pub baseline: String,
}

/// How many checks ended how.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Counts {
    pub slo: usize,
    pub slo_failed: usize,
    pub rules: usize,
    pub regressed: usize,
    pub inconclusive: usize,
    pub improved: usize,
    pub unchanged: usize,
}

/// Builds the view of `current`, with its baseline and comparison when given, and `earlier`
/// results before it in a trend (0 for none).
pub(crate) fn build(
    current: &RunResult,
    baseline: Option<&RunResult>,
    comparison: Option<&Comparison>,
    earlier: usize,
) -> View {
    let verdict = Verdict::of(current, comparison);
    let count = |s| comparison.map_or(0, |c| c.count(s));
    let paired = comparison.is_some_and(|c| c.paired.is_some());
    let deltas =
        |name: &str| comparison.and_then(|c| c.targets.iter().find(|t| t.name == name).cloned());
    let total_delta = deltas("total");
    let total = target_view(
        Some(&current.total),
        baseline.map(|b| &b.total),
        total_delta,
    );
    let mut targets: Vec<TargetView> = current
        .targets
        .iter()
        .map(|t| {
            let b = baseline.and_then(|b| b.targets.iter().find(|x| x.name == t.name));
            target_view(Some(t), b, deltas(&t.name))
        })
        .collect();
    if let Some(b) = baseline {
        for t in &b.targets {
            if !current.targets.iter().any(|c| c.name == t.name) {
                targets.push(target_view(None, Some(t), deltas(&t.name)));
            }
        }
    }
    let headline = [
        TargetMetric::Rps,
        TargetMetric::P50,
        TargetMetric::P95,
        TargetMetric::P99,
        TargetMetric::ErrorRate,
    ]
    .iter()
    .filter_map(|m| total.metrics.iter().find(|r| r.metric == *m))
    .cloned()
    .collect();
    View {
        spec: current.spec.name.clone(),
        verdict: verdict.name(),
        verdict_word: verdict.word(),
        summary: summary(current, comparison, earlier),
        has_baseline: baseline.is_some(),
        current_label: if paired { "candidate" } else { "current" },
        paired,
        headline,
        slo: slo_rows(current, comparison),
        rules: comparison.map_or_else(Vec::new, rule_rows),
        flows: super::flows::flow_views(current, &targets),
        targets,
        total,
        // A partial merge says so first (`merged.partial`), then the generator's health
        // (its problems, the load the server did not take), then the comparison's notes,
        // then the UDP buffers of HTTP/3 when limited.
        notes: crate::result::merge::partial_note(current)
            .into_iter()
            .chain(super::health::notes(current))
            .chain(comparison.into_iter().flat_map(|c| c.notes.iter().cloned()))
            .chain(http3::udp_advice(&current.environment))
            .collect(),
        environment: environment(current, baseline),
        counts: Counts {
            slo: current.slo.len(),
            slo_failed: current.slo.iter().filter(|v| !v.passed).count(),
            rules: comparison.map_or(0, |c| c.rules.len()),
            regressed: count(RuleState::Regressed),
            inconclusive: count(RuleState::Inconclusive),
            improved: count(RuleState::Improved),
            unchanged: count(RuleState::Unchanged),
        },
        time_s: format!("{:.3}", current.duration_s),
    }
}

fn slo_rows(current: &RunResult, comparison: Option<&Comparison>) -> Vec<CheckRow> {
    current
        .slo
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let base = comparison
                .and_then(|c| c.slo.get(i))
                .and_then(|d| d.baseline);
            let d = SloDelta::of(v, base);
            let unit = Unit::from_name(&d.unit);
            let rel = d
                .baseline
                .zip(d.measured)
                .filter(|(b, _)| *b != 0.0)
                .map(|(b, m)| m / b - 1.0);
            let metric = super::flows::slo_metric_name(v, current);
            let mut name = format!("{} {metric}: {}", v.scope, v.threshold);
            if v.default {
                name.push_str(" (default: the spec sets no errors SLO)");
            }
            name.push_str(&super::health::dropped_suffix(v));
            CheckRow {
                kind: CheckKind::Slo,
                name,
                scope: v.scope.clone(),
                measured: d.measured_text,
                baseline: unit.format_or_missing(d.baseline),
                change: format_change(rel, d.change, unit),
                interval: String::new(),
                allowed: String::new(),
                limit: d.limit_text.clone(),
                detectable: String::new(),
                epochs: None,
                verdict: if v.passed { "pass" } else { "fail" },
                failed: !v.passed,
                reason: format!("limit {}", d.limit_text),
            }
        })
        .collect()
}

fn rule_rows(comparison: &Comparison) -> Vec<CheckRow> {
    let epochs = comparison.paired.as_ref().map(|p| &p.rules);
    comparison
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let unit = Unit::from_name(&r.unit);
            CheckRow {
                kind: CheckKind::Rule,
                name: match r.scope_kind {
                    ScopeKind::Flow => {
                        format!("{} {} {}", r.scope, r.metric.flow_name(), r.rule)
                    }
                    ScopeKind::Target => format!("{} {} {}", r.scope, r.metric, r.rule),
                    ScopeKind::Total => format!("{} {}", r.metric, r.rule),
                },
                scope: r.scope.clone(),
                measured: unit.format_or_missing(r.current),
                baseline: unit.format_or_missing(r.baseline),
                change: format_change(r.relative_change, r.change, unit),
                interval: match (r.relative_change_ci, r.change_ci) {
                    (Some([lo, hi]), _) => format!(
                        "[{}, {}]",
                        format_relative(Some(lo)),
                        format_relative(Some(hi))
                    ),
                    (None, Some([lo, hi])) => {
                        format!("[{}, {}]", unit.format_signed(lo), unit.format_signed(hi))
                    }
                    (None, None) => MISSING.to_string(),
                },
                allowed: r.allowed_change.map_or_else(
                    || MISSING.to_string(),
                    |a| {
                        let sign = if r.metric == Metric::Responses {
                            "-"
                        } else {
                            "+"
                        };
                        format!("{sign}{}", unit.format(a))
                    },
                ),
                limit: String::new(),
                detectable: format_detectable(r),
                epochs: epochs.and_then(|e| e.get(i)).map(epoch_row),
                verdict: r.verdict.name(),
                failed: r.verdict == RuleState::Regressed,
                reason: r.reason.clone(),
            }
        })
        .collect()
}

/// A rule's minimum detectable effect ([`detectable_change`]) as the reports show it: `±1.8%`
/// of the baseline, `±0.10 points` for the error rate (`errors` rules), `no interval`.
fn format_detectable(r: &RuleVerdict) -> String {
    match detectable_change(r) {
        None => "no interval".to_string(),
        Some(h) if r.metric == Metric::Errors => format!("±{:.2} points", h * 100.0),
        Some(h) => format!("±{:.1}%", h * 100.0),
    }
}

/// A per-epoch change as the reports show it: relative `+9.8%`, or absolute in percentage
/// points of the error rate, `+0.10 points`.
pub(crate) fn format_epoch_change(e: &RuleChanges, change: f64) -> String {
    if e.relative {
        format_relative(Some(change))
    } else {
        format!("{:+.2} points", change * 100.0)
    }
}

/// The sparkline and the counts above and below 0 of a rule's per-epoch changes.
fn epoch_row(e: &RuleChanges) -> EpochRow {
    let values: Vec<f64> = e.changes.iter().map(|c| c.change).collect();
    let above = values.iter().filter(|v| **v > 0.0).count();
    let below = values.iter().filter(|v| **v < 0.0).count();
    let at_zero = values.len() - above - below;
    let mut summary = format!("{above} above 0, {below} below");
    if at_zero > 0 {
        summary.push_str(&format!(", {at_zero} at 0"));
    }
    summary.push_str(&format!(" of {} pairs", values.len()));
    if !values.is_empty() {
        summary.push_str(&format!(
            "; median {}",
            format_epoch_change(e, median(&values))
        ));
    }
    EpochRow {
        sparkline: sparkline(&values),
        summary,
    }
}

/// `values` as at most [`SPARKLINE_WIDTH`] bars (the mean of each group of consecutive
/// values), scaled from the lowest value or 0, whichever is lower, to the highest value or 0.
fn sparkline(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if values.is_empty() {
        return String::new();
    }
    let per_bar = values.len().div_ceil(SPARKLINE_WIDTH);
    let means: Vec<f64> = values
        .chunks(per_bar)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let low = means.iter().copied().fold(0.0, f64::min);
    let high = means.iter().copied().fold(0.0, f64::max);
    means
        .iter()
        .map(|m| {
            let level = if high > low {
                ((m - low) / (high - low) * 7.0).round() as usize
            } else {
                0
            };
            BARS[level.min(7)]
        })
        .collect()
}

fn environment(current: &RunResult, baseline: Option<&RunResult>) -> Vec<EnvRow> {
    let rows = |r: &RunResult| {
        let e = &r.environment;
        let l = &r.load;
        vec![
            ("started", r.started_at.clone()),
            ("measured", format!("{:.2} s", r.duration_s)),
            (
                "load",
                match (l.connections, l.max_in_flight) {
                    (Some(c), _) => {
                        format!("{c} connections ({}), {} s warmup", l.model, l.warmup_s)
                    }
                    (None, m) => format!(
                        "at most {} in flight ({}), {} s warmup",
                        m.unwrap_or(0),
                        l.model,
                        l.warmup_s
                    ),
                },
            ),
            ("loadgate", e.loadgate_version.clone()),
            ("host", format!("{} ({}/{})", e.hostname, e.os, e.arch)),
            ("CPUs", e.cpu_count.to_string()),
            (
                "client CPU",
                format!(
                    "{:.2} s user, {:.2} s system",
                    e.client_cpu_user_s, e.client_cpu_system_s
                ),
            ),
            ("spec SHA-256", r.spec.hash.chars().take(12).collect()),
        ]
    };
    let cur = rows(current);
    let base = baseline.map(rows);
    cur.into_iter()
        .enumerate()
        .map(|(i, (key, value))| EnvRow {
            key: key.to_string(),
            current: value,
            baseline: base
                .as_ref()
                .map_or_else(|| MISSING.to_string(), |b| b[i].1.clone()),
        })
        .collect()
}
