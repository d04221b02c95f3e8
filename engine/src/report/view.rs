//! The shared table logic of the report formats: a [`View`] of a result (and its comparison)
//! with every number already formatted, handed to the templates. Templates only lay it out;
//! they never compute or format a value, so all formats agree.

use serde::Serialize;

use super::decisions::{
    family_sentence, format_allowed, format_mde, format_rule_level, method_paragraph,
};
use super::http3;
use super::scenarios::{
    ScenarioView, TagGroup, WARN_ONLY, rule_fails, rule_warns, scenario_views, scope_name,
    selector, slo_fails, slo_label, slo_warns, tag_groups,
};
use super::target_view::{Row, TargetView, target_view};
use super::verdict::{Verdict, summary};
use crate::compare::{
    Comparison, RuleChanges, RuleState, RuleVerdict, SloDelta, TargetMetric, median,
};
use crate::plan::regression::ScopeKind;
use crate::plan::threshold::Severity;
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
    /// The rules were judged on paired sub-runs (`loadgate ab`) instead of as two separate
    /// runs.
    pub paired: bool,
    /// Key numbers: throughput, p50, p95, p99, error rate.
    pub headline: Vec<Row>,
    pub slo: Vec<CheckRow>,
    pub rules: Vec<CheckRow>,
    /// The rules' decisions in one sentence: `18 rules tested together at a 5% false-alarm
    /// rate per run (Holm)`, or that none could be tested; empty without rules.
    pub family: String,
    /// How the rules were judged, a paragraph; empty as `family`.
    pub method: String,
    /// A paired comparison's sub-runs: `4 sub-runs`, and those left out (`, 1 left out: the
    /// generator fell behind`); empty otherwise.
    pub sub_runs: String,
    /// Every target (not `total`), in the current run's order, then those only the baseline
    /// has.
    pub targets: Vec<TargetView>,
    pub total: TargetView,
    /// Every flow of the current run, with its steps' target rows (empty without flows).
    pub flows: Vec<super::flows::FlowView>,
    /// Every scenario of the current run (empty for a spec with one `load`).
    pub scenarios: Vec<ScenarioView>,
    /// The current run's targets grouped by each tag with two values or more.
    pub tag_groups: Vec<TagGroup>,
    /// Whether a target has tags (the target tables show them then).
    pub tagged: bool,
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
    /// Scope as a dotted name (the JUnit report's `classname`): `total`, a target's or
    /// flow's name, `scenario.NAME`.
    pub scope: String,
    pub measured: String,
    pub baseline: String,
    pub change: String,
    /// Interval of the relative change at the rule's one-sided `level` (each side), rules
    /// only: `[-1.2%, +5.0%]`.
    pub interval: String,
    /// One-sided level of the interval's bounds, rules only: `0.278%`; `–` when not tested.
    pub level: String,
    /// The effective allowance, rules only: `+10.0% (730us)`, `+24.0% (floor 50us)`
    /// ([`format_allowed`]).
    pub allowed: String,
    /// The threshold's limit, SLOs only: `50.00ms`. (An SLO judges one run against this
    /// fixed limit, so it has no interval, detectable change or allowance.)
    pub limit: String,
    /// The minimum detectable effect at 80% power, rules only: `+12.3% (900us)`, `+0.210%`
    /// for the error rate, `not tested` ([`format_mde`]).
    pub mde: String,
    /// The per-sub-run changes of a paired comparison, rules with any only.
    pub sub_runs: Option<SubRunRow>,
    /// A rule that was tested (it has a `level`); false for an SLO and for a rule that could
    /// not be tested.
    pub tested: bool,
    /// `pass`, `fail` (SLO) or the rule's state.
    pub verdict: &'static str,
    /// Whether this check fails the gate.
    pub failed: bool,
    /// Whether this check is a warning: a `warn` SLO that failed or a `warn` rule that
    /// regressed (shown as such; it does not fail the gate).
    pub warning: bool,
    /// Why, in words (rules), or the threshold's limit (SLOs).
    pub reason: String,
}

/// A rule's change in each sub-run of a paired comparison, in brief.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SubRunRow {
    /// One bar per sub-run (per group of sub-runs beyond [`SPARKLINE_WIDTH`]), in the order
    /// they ran, from the lowest change or 0, whichever is lower, to the highest: `▂▅▇▆`.
    pub sparkline: String,
    /// `4 above 0, 0 below of 4 sub-runs; median +9.8%; baseline first +9.5%, +9.9%;
    /// candidate first +10.1%, +10.4%` (the changes by the side that went first, when there
    /// are at most [`MAX_LISTED`] and not all 0).
    pub summary: String,
}

/// Most bars in a [`SubRunRow`]'s sparkline.
const SPARKLINE_WIDTH: usize = 40;
/// Most sub-runs whose changes a [`SubRunRow`] lists by the side that went first.
const MAX_LISTED: usize = 12;

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
    /// SLOs that failed and fail the run (`warn` ones are `slo_warnings`).
    pub slo_failed: usize,
    /// `warn` SLOs that failed.
    pub slo_warnings: usize,
    pub rules: usize,
    /// Rules that regressed and fail the gate (`warn` ones are `rule_warnings`).
    pub regressed: usize,
    /// `warn` rules that regressed.
    pub rule_warnings: usize,
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
        family: comparison.map_or_else(String::new, family_sentence),
        method: comparison.map_or_else(String::new, method_paragraph),
        sub_runs: comparison
            .and_then(|c| c.paired.as_ref())
            .map_or_else(String::new, |p| {
                let mut text = format!("{} sub-runs", p.sub_runs);
                if p.late > 0 {
                    text.push_str(&format!(", {} left out: the generator fell behind", p.late));
                }
                text
            }),
        flows: super::flows::flow_views(current, &targets),
        scenarios: scenario_views(current),
        tag_groups: tag_groups(current),
        tagged: current.targets.iter().any(|t| !t.tags.is_empty()),
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
            slo_failed: current.slo.iter().filter(|v| slo_fails(v)).count(),
            slo_warnings: current.slo.iter().filter(|v| slo_warns(v)).count(),
            rules: comparison.map_or(0, |c| c.rules.len()),
            regressed: comparison.map_or(0, |c| c.rules.iter().filter(|r| rule_fails(r)).count()),
            rule_warnings: comparison
                .map_or(0, |c| c.rules.iter().filter(|r| rule_warns(r)).count()),
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
            let mut name = slo_label(v, current);
            if v.default {
                name.push_str(" (default: the spec sets no errors SLO)");
            }
            name.push_str(&super::health::dropped_suffix(v));
            CheckRow {
                kind: CheckKind::Slo,
                name,
                scope: dotted_scope(&v.scope, v.scope_kind),
                measured: d.measured_text,
                baseline: unit.format_or_missing(d.baseline),
                change: format_change(rel, d.change, unit),
                interval: String::new(),
                level: String::new(),
                allowed: String::new(),
                limit: d.limit_text.clone(),
                mde: String::new(),
                sub_runs: None,
                tested: false,
                verdict: if v.passed { "pass" } else { "fail" },
                failed: slo_fails(v),
                warning: slo_warns(v),
                reason: format!("limit {}", d.limit_text),
            }
        })
        .collect()
}

fn rule_rows(comparison: &Comparison) -> Vec<CheckRow> {
    let sub_runs = comparison.paired.as_ref().map(|p| &p.rules);
    comparison
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let unit = Unit::from_name(&r.unit);
            CheckRow {
                kind: CheckKind::Rule,
                name: rule_name(r),
                scope: dotted_scope(&r.scope, Some(r.scope_kind)),
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
                level: format_rule_level(r),
                allowed: format_allowed(r),
                limit: String::new(),
                mde: format_mde(r),
                sub_runs: sub_runs
                    .and_then(|e| e.get(i))
                    .filter(|e| !e.changes.is_empty())
                    .map(sub_run_row),
                tested: r.level.is_some(),
                verdict: r.verdict.name(),
                failed: rule_fails(r),
                warning: rule_warns(r),
                reason: r.reason.clone(),
            }
        })
        .collect()
}

/// A scope as a dotted name: `scenario.NAME` for a scenario, else its name.
fn dotted_scope(scope: &str, kind: Option<ScopeKind>) -> String {
    if kind == Some(ScopeKind::Scenario) {
        format!("scenario.{scope}")
    } else {
        scope.to_string()
    }
}

/// A rule as the reports name it: its scope (none for the whole run, `scenario NAME` for a
/// scenario's), metric (a flow's by the spec's names), tag selector and rule, e.g.
/// `scenario checkout latency{kind:write} p(95) +10%`, and ` (warn only)` when its severity
/// is `warn`.
fn rule_name(r: &RuleVerdict) -> String {
    let selector = selector(&r.tags);
    let mut name = match r.scope_kind {
        ScopeKind::Flow => format!("{} {}{selector} {}", r.scope, r.metric.flow_name(), r.rule),
        ScopeKind::Target | ScopeKind::Scenario => format!(
            "{} {}{selector} {}",
            scope_name(&r.scope, Some(r.scope_kind)),
            r.metric,
            r.rule
        ),
        ScopeKind::Total => format!("{}{selector} {}", r.metric, r.rule),
    };
    if r.severity == Severity::Warn {
        name.push_str(WARN_ONLY);
    }
    name
}

/// A per-sub-run change as the reports show it: relative `+9.8%`, or absolute in percentage
/// points of the error rate, `+0.10 points`.
pub(crate) fn format_sub_run_change(e: &RuleChanges, change: f64) -> String {
    if e.relative {
        format_relative(Some(change))
    } else {
        format!("{:+.2} points", change * 100.0)
    }
}

/// The sparkline, the counts above and below 0 and the median of a rule's per-sub-run
/// changes, and the changes by the side that went first when they are few.
fn sub_run_row(e: &RuleChanges) -> SubRunRow {
    let values: Vec<f64> = e.changes.iter().map(|c| c.change).collect();
    let above = values.iter().filter(|v| **v > 0.0).count();
    let below = values.iter().filter(|v| **v < 0.0).count();
    let at_zero = values.len() - above - below;
    let mut summary = format!("{above} above 0, {below} below");
    if at_zero > 0 {
        summary.push_str(&format!(", {at_zero} at 0"));
    }
    summary.push_str(&format!(" of {} sub-runs", values.len()));
    if !values.is_empty() {
        summary.push_str(&format!(
            "; median {}",
            format_sub_run_change(e, median(&values))
        ));
    }
    // By side when they are few, and not all 0 (which the counts say already).
    if values.len() <= MAX_LISTED && at_zero < values.len() {
        for (first, side) in [(true, "baseline"), (false, "candidate")] {
            let changes: Vec<String> = e
                .changes
                .iter()
                .filter(|c| c.baseline_first == first)
                .map(|c| format_sub_run_change(e, c.change))
                .collect();
            if !changes.is_empty() {
                summary.push_str(&format!("; {side} first {}", changes.join(", ")));
            }
        }
    }
    SubRunRow {
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
