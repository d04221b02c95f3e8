//! What every report shows of a run's scenarios and tags, formatted here like the rest of the
//! view (`view.rs`) so that all formats agree: a row per scenario (its executor, start,
//! requests or iterations and their rate, latency p50/p95/p99, error rate, the generator's
//! health on its own schedule), the targets grouped by each tag (per value the exact sum of
//! its targets, `result::merge::sum_targets`), and how a threshold or rule names what it
//! selects (`scenario checkout latency{kind:write}`). Empty without scenarios or tags.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::compare::{RuleState, RuleVerdict};
use crate::plan::TagSelector;
use crate::plan::regression::ScopeKind;
use crate::plan::threshold::Severity;
use crate::result::{RunResult, ScenarioResult, SloVerdict, TargetResult};
use crate::spec::printable;
use crate::units::{MISSING, Unit};

/// The tag every target of a scenario carries (its name): the scenario table shows it.
const SCENARIO_TAG: &str = "scenario";

/// One scenario of the run, formatted.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ScenarioView {
    pub name: String,
    /// k6's name: `constant-vus`, `ramping-arrival-rate`, ...
    pub executor: String,
    /// When it started, seconds after the run's start: `10.0 s`.
    pub start: String,
    /// Iterations that ended, with their unit: `3000 requests` (targets) or `120
    /// iterations` (flows).
    pub count: String,
    /// Those per second of its measured window: `100.0/s`.
    pub rate: String,
    /// Latency of its requests.
    pub p50: String,
    pub p95: String,
    pub p99: String,
    /// Its requests that failed, a percentage: `0.150%`.
    pub error_rate: String,
    /// `valid`, or `invalid: ` and its problems.
    pub health: String,
    /// Whether the generator applied its planned load.
    pub valid: bool,
}

/// The targets of one tag name, grouped by its values.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TagGroup {
    /// The tag's name, e.g. `kind`.
    pub name: String,
    pub values: Vec<TagValueRow>,
}

/// The targets carrying one value of a tag, summed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TagValueRow {
    /// The tag's value, e.g. `write`.
    pub value: String,
    /// How many targets carry it.
    pub targets: String,
    pub requests: String,
    pub rps: String,
    /// Of all their requests together (histograms added: exact).
    pub p95: String,
    pub error_rate: String,
}

/// The scenarios of `result`, in the spec's order; empty for a spec with one `load`.
pub(crate) fn scenario_views(result: &RunResult) -> Vec<ScenarioView> {
    result.scenarios.iter().map(scenario_view).collect()
}

fn scenario_view(s: &ScenarioResult) -> ScenarioView {
    let latency = |p: fn(&crate::result::LatencySummary) -> u64| {
        Unit::Micros.format_or_missing(s.total.latency_us.as_ref().map(|l| p(l) as f64))
    };
    let unit = if s.flows.is_empty() {
        "requests"
    } else {
        "iterations"
    };
    ScenarioView {
        name: s.name.clone(),
        executor: s.executor.clone(),
        start: format!("{:.1} s", s.start_time_s),
        count: format!("{} {unit}", s.iterations),
        rate: Unit::PerSecond
            .format_or_missing((s.duration_s > 0.0).then(|| s.iterations as f64 / s.duration_s)),
        p50: latency(|l| l.p50_us),
        p95: latency(|l| l.p95_us),
        p99: latency(|l| l.p99_us),
        error_rate: Unit::Ratio.format(s.total.error_rate),
        health: if s.health.valid {
            "valid".to_string()
        } else {
            format!("invalid: {}", s.health.problems.join("; "))
        },
        valid: s.health.valid,
    }
}

/// The targets of `result` grouped by each tag name that has at least two values (the
/// `scenario` tag left out when the scenario table shows the same), in name order, each
/// value's targets summed exactly over the run's window.
pub(crate) fn tag_groups(result: &RunResult) -> Vec<TagGroup> {
    let mut by_name: BTreeMap<&str, BTreeMap<&str, Vec<&TargetResult>>> = BTreeMap::new();
    for t in &result.targets {
        for (name, value) in &t.tags {
            if name == SCENARIO_TAG && !result.scenarios.is_empty() {
                continue;
            }
            by_name
                .entry(name)
                .or_default()
                .entry(value)
                .or_default()
                .push(t);
        }
    }
    by_name
        .into_iter()
        .filter(|(_, values)| values.len() > 1)
        .map(|(name, values)| TagGroup {
            name: name.to_string(),
            values: values
                .into_iter()
                .map(|(value, targets)| tag_value_row(result, value, &targets))
                .collect(),
        })
        .collect()
}

/// The sum of `targets`, which carry the tag value `value`: each target's per-second series
/// placed at its scenario's start (in whole seconds).
fn tag_value_row(result: &RunResult, value: &str, targets: &[&TargetResult]) -> TagValueRow {
    let offset = |t: &TargetResult| {
        result
            .scenarios
            .iter()
            .find(|s| s.targets.contains(&t.name))
            .map_or(0, |s| s.start_time_s.max(0.0).round() as u32)
    };
    let parts: Vec<(&TargetResult, u32)> = targets.iter().map(|t| (*t, offset(t))).collect();
    let sum = crate::result::merge::sum_targets(value, &parts, result.duration_s).ok();
    TagValueRow {
        value: value.to_string(),
        targets: targets.len().to_string(),
        requests: sum
            .as_ref()
            .map_or_else(|| MISSING.to_string(), |s| s.requests.to_string()),
        rps: Unit::PerSecond.format_or_missing(sum.as_ref().map(|s| s.rps)),
        p95: Unit::Micros.format_or_missing(
            sum.as_ref()
                .and_then(|s| s.latency_us.as_ref())
                .map(|l| l.p95_us as f64),
        ),
        error_rate: Unit::Ratio.format_or_missing(sum.as_ref().map(|s| s.error_rate)),
    }
}

/// A tag selector as the spec writes it, `{kind:write}`; empty for none.
pub(crate) fn selector(tags: &BTreeMap<String, String>) -> String {
    TagSelector(tags.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).to_string()
}

/// The scope of a threshold or rule as the reports name it: `scenario NAME` for a scenario,
/// else the scope's name.
pub(crate) fn scope_name(scope: &str, kind: Option<ScopeKind>) -> String {
    if kind == Some(ScopeKind::Scenario) {
        format!("scenario {scope}")
    } else {
        scope.to_string()
    }
}

/// An SLO as the reports name it, before its format's escaping: its scope (`scenario NAME`
/// for a scenario's), metric (a flow's by the spec's names), tag selector and threshold, e.g.
/// `total latency{kind:write}: p(95) < 50ms`, and ` (warn only)` when its severity is `warn`.
pub(crate) fn slo_label(v: &SloVerdict, result: &RunResult) -> String {
    let mut name = format!(
        "{} {}{}: {}",
        scope_name(&v.scope, v.scope_kind),
        super::flows::slo_metric_name(v, result),
        selector(&v.tags),
        v.threshold
    );
    if v.severity == Severity::Warn {
        name.push_str(WARN_ONLY);
    }
    name
}

/// What a threshold's or rule's name adds when its severity is `warn`.
pub(crate) const WARN_ONLY: &str = " (warn only)";

/// Whether `v` is a warning: a `warn` threshold that failed (it does not fail the run).
pub(crate) fn slo_warns(v: &SloVerdict) -> bool {
    !v.passed && v.severity == Severity::Warn
}

/// Whether `v` fails the run: a `fail` threshold that failed.
pub(crate) fn slo_fails(v: &SloVerdict) -> bool {
    !v.passed && v.severity == Severity::Fail
}

/// Whether `r` is a warning: a `warn` rule that found a regression (it does not fail the
/// comparison).
pub(crate) fn rule_warns(r: &RuleVerdict) -> bool {
    r.verdict == RuleState::Regressed && r.severity == Severity::Warn
}

/// Whether `r` fails the comparison: a `fail` rule that found a regression.
pub(crate) fn rule_fails(r: &RuleVerdict) -> bool {
    r.verdict == RuleState::Regressed && r.severity == Severity::Fail
}

/// `rows` as a text table under a blank line: the first `left` columns aligned left, the rest
/// right, two spaces apart.
fn text_grid(rows: &[Vec<String>], left: usize) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::from("\n");
    for row in rows {
        for (i, (cell, w)) in row.iter().zip(&widths).enumerate() {
            if i < left {
                let _ = write!(out, "  {cell:<w$}");
            } else {
                let _ = write!(out, "  {cell:>w$}");
            }
        }
        let trimmed = out.trim_end().len();
        out.truncate(trimmed);
        out.push('\n');
    }
    out
}

/// The scenarios as a text table (the terminal, the console summary); names with control and
/// hidden characters escaped (`spec::printable`). Empty without scenarios.
pub(crate) fn scenario_text(scenarios: &[ScenarioView]) -> String {
    if scenarios.is_empty() {
        return String::new();
    }
    let mut rows: Vec<Vec<String>> = vec![
        [
            "scenario",
            "executor",
            "start",
            "iterations",
            "rate",
            "p50",
            "p95",
            "p99",
            "errors",
            "health",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for s in scenarios {
        rows.push(vec![
            printable(&s.name),
            s.executor.clone(),
            s.start.clone(),
            s.count.clone(),
            s.rate.clone(),
            s.p50.clone(),
            s.p95.clone(),
            s.p99.clone(),
            s.error_rate.clone(),
            printable(&s.health),
        ]);
    }
    // The health is free text: left-aligned, last.
    let mut out = text_grid(&rows, 2);
    if scenarios.iter().any(|s| !s.valid) {
        out.push_str("  (a scenario's health: whether the generator applied its planned load)\n");
    }
    out
}

/// The tag groups as text tables, one per tag name; names and values escaped
/// (`spec::printable`). Empty without groups.
pub(crate) fn tag_text(groups: &[TagGroup]) -> String {
    let mut out = String::new();
    for g in groups {
        let mut rows: Vec<Vec<String>> = vec![vec![
            format!("by tag {}", printable(&g.name)),
            "targets".to_string(),
            "requests".to_string(),
            "throughput".to_string(),
            "p95".to_string(),
            "errors".to_string(),
        ]];
        for v in &g.values {
            rows.push(vec![
                printable(&v.value),
                v.targets.clone(),
                v.requests.clone(),
                v.rps.clone(),
                v.p95.clone(),
                v.error_rate.clone(),
            ]);
        }
        out.push_str(&text_grid(&rows, 1));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_and_scopes_read_as_the_spec_writes_them() {
        let tags: BTreeMap<String, String> = [("kind", "write"), ("team", "shop")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(selector(&tags), "{kind:write,team:shop}");
        assert_eq!(selector(&BTreeMap::new()), "");
        assert_eq!(
            scope_name("checkout", Some(ScopeKind::Scenario)),
            "scenario checkout"
        );
        assert_eq!(scope_name("total", Some(ScopeKind::Total)), "total");
        assert_eq!(scope_name("api", None), "api");
    }

    #[test]
    fn tags_group_targets_by_each_name_with_two_values_or_more() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/results/v2-current.json"
        );
        let mut r = crate::result::read(std::path::Path::new(path)).unwrap();
        let pairs = [
            [("kind", "read"), ("team", "shop")],
            [("kind", "write"), ("team", "shop")],
        ];
        for (t, pairs) in r.targets.iter_mut().zip(pairs) {
            t.tags = pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            t.tags.insert(SCENARIO_TAG.to_string(), t.name.clone());
        }
        // Without scenarios, the `scenario` tag is one like the others; `team` has one value.
        let names =
            |r: &RunResult| -> Vec<String> { tag_groups(r).into_iter().map(|g| g.name).collect() };
        assert_eq!(names(&r), ["kind", "scenario"]);
        let kind = &tag_groups(&r)[0];
        let values: Vec<(&str, &str)> = kind
            .values
            .iter()
            .map(|v| (v.value.as_str(), v.requests.as_str()))
            .collect();
        let requests = |i: usize| r.targets[i].requests.to_string();
        assert_eq!(
            values,
            [
                ("read", requests(0).as_str()),
                ("write", requests(1).as_str())
            ]
        );
        // With scenarios, their table shows it.
        r.scenarios = vec![ScenarioResult {
            name: "s".to_string(),
            executor: "constant-vus".to_string(),
            start_time_s: 0.0,
            tags: BTreeMap::new(),
            load: r.load.clone(),
            duration_s: r.duration_s,
            total: r.total.clone(),
            targets: r.targets.iter().map(|t| t.name.clone()).collect(),
            flows: Vec::new(),
            iterations: r.total.requests,
            time_series: Vec::new(),
            health: r.health.clone(),
        }];
        assert_eq!(names(&r), ["kind"]);
        let view = &scenario_views(&r)[0];
        assert_eq!(view.count, format!("{} requests", r.total.requests));
        assert_eq!(view.health, "valid");
    }

    #[test]
    fn text_grid_aligns_left_then_right() {
        let rows = vec![
            vec!["name".to_string(), "n".to_string()],
            vec!["a".to_string(), "100".to_string()],
        ];
        assert_eq!(text_grid(&rows, 1), "\n  name    n\n  a     100\n");
    }
}
