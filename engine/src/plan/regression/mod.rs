//! Regression rules: how much worse than a baseline a metric of the whole run, a scenario,
//! a target (a flow step is one) or a flow may get.
//!
//! ```text
//! rule        := aggregation change [ "floor" value ]
//! aggregation := latency: "p(50)" | "p(90)" | "p(95)" | "p(99)" | "p(99.9)" | "med" | "mean"
//!                errors, requests: "rate"
//! change      := [ "+" | "-" ] number "%"
//! value       := as in a threshold: a duration (latency), a percentage (errors), a rate in
//!                `/s` (requests)
//! ```
//!
//! `change` is the relative change allowed in the worse direction: a rise for latency and
//! errors (`+10%`), a drop for throughput (`-10%`); a sign that points the other way is an
//! error. `floor` is an absolute change under which a change is never a regression, however
//! large in relative terms (2 ms on a 5 ms p50 is noise, not news). A metric's change is
//! allowed up to `max(change × baseline, floor)`; the verdict is the compare step's
//! (`compare/rules.rs`).
//!
//! Only these latency aggregations exist because the verdict is computed from the per-second
//! series of the result, which records them (`p50_us` .. `p99_9_us`, `mean_us`).
//!
//! A rule is written as its text or as `{rule, severity}` (`severity: warn`: a regression is
//! reported and never fails the run). The whole run's and a scenario's blocks may also hold
//! tagged lists, k6's `latency{kind:write}`: rules over the sum of the scope's targets whose
//! tags match. Only the whole run's block has default rules and `alpha`.

use serde::{Deserialize, Serialize};

use super::Errors;
use super::slo::{TAGS_IN_A_TARGET, selector};
use super::threshold::{Aggregation, Metric, parse_aggregation, parse_value};
use crate::spec;

/// Latency floor of the default rules and of latency rules without `floor`, in µs (2 ms).
pub(crate) const DEFAULT_LATENCY_FLOOR_US: f64 = 2_000.0;
/// Error-rate floor of rules without `floor`, as a fraction (0.001 = 0.1 percentage points).
pub(crate) const DEFAULT_ERRORS_FLOOR: f64 = 0.001;
/// Throughput floor of rules without `floor`, in responses per second.
pub(crate) const DEFAULT_REQUESTS_FLOOR: f64 = 0.0;

/// The rules used for a metric whose list is absent from the spec's `regression` block.
pub(crate) const DEFAULT_LATENCY_RULES: [&str; 3] = [
    "p(50) +10% floor 2ms",
    "p(95) +10% floor 2ms",
    "p(99) +20% floor 2ms",
];
/// See [`DEFAULT_LATENCY_RULES`].
pub(crate) const DEFAULT_ERRORS_RULES: [&str; 1] = ["rate +10% floor 0.1%"];
/// See [`DEFAULT_LATENCY_RULES`].
pub(crate) const DEFAULT_REQUESTS_RULES: [&str; 1] = ["rate -10%"];

/// Latency percentiles that a rule may name (those the per-second series records).
pub(crate) const RULE_PERCENTILES: [f64; 5] = [50.0, 90.0, 95.0, 99.0, 99.9];

/// Where a regression rule applies: the whole run, a target by name, or a flow by name (its
/// iterations: `latency` is the iteration duration, `errors` the failed iterations, `requests`
/// the iterations per second).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum RuleScope {
    #[default]
    Total,
    Target(String),
    Flow(String),
    /// One scenario's requests, by name.
    Scenario(String),
}

impl RuleScope {
    /// The scope from its kind and name (the name of `total` is left out).
    pub(crate) fn of(kind: ScopeKind, name: &str) -> RuleScope {
        match kind {
            ScopeKind::Total => RuleScope::Total,
            ScopeKind::Target => RuleScope::Target(name.to_string()),
            ScopeKind::Flow => RuleScope::Flow(name.to_string()),
            ScopeKind::Scenario => RuleScope::Scenario(name.to_string()),
        }
    }

    /// Which kind of scope it is.
    pub(crate) fn kind(&self) -> ScopeKind {
        match self {
            RuleScope::Total => ScopeKind::Total,
            RuleScope::Target(_) => ScopeKind::Target,
            RuleScope::Flow(_) => ScopeKind::Flow,
            RuleScope::Scenario(_) => ScopeKind::Scenario,
        }
    }

    /// The target's or flow's name; `total` for the whole run.
    pub(crate) fn name(&self) -> &str {
        match self {
            RuleScope::Total => "total",
            RuleScope::Target(name) | RuleScope::Flow(name) | RuleScope::Scenario(name) => name,
        }
    }
}

/// The kind of a regression rule's scope, as results and verdicts record it (`scope_kind`):
/// `total` (the whole run), `target` (a flow step is one) or `flow` (its iterations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScopeKind {
    /// The whole run.
    #[default]
    Total,
    /// One target (a flow step is one).
    Target,
    /// One flow's iterations.
    Flow,
    /// One scenario's requests.
    Scenario,
}

impl ScopeKind {
    /// `total`, `target` or `flow`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ScopeKind::Total => "total",
            ScopeKind::Target => "target",
            ScopeKind::Flow => "flow",
            ScopeKind::Scenario => "scenario",
        }
    }

    /// Whether it is the whole run's (`total`, left out of a verdict's rule).
    pub(crate) fn is_total(&self) -> bool {
        *self == ScopeKind::Total
    }
}

impl std::fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A parsed regression rule, in canonical units.
#[derive(Debug, Clone, PartialEq)]
pub struct RegressionRule {
    /// What the rule compares: the whole run, a target (a flow step is one) or a flow's
    /// iterations, by name, since a baseline result is matched by names.
    pub(crate) scope: RuleScope,
    /// What the rule compares: latency, errors or requests.
    pub(crate) metric: Metric,
    /// `Percentile`, `Median` or `Mean` for latency; `Rate` for errors and requests.
    pub(crate) aggregation: Aggregation,
    /// Allowed relative change in the worse direction, a non-negative fraction (0.10 = 10%).
    pub(crate) max_change: f64,
    /// Absolute change never counted as a regression, in [`RegressionRule::unit`].
    pub(crate) floor: f64,
    /// The rule as written (or the default rule's text).
    pub(crate) expression: String,
    /// `fail` (a regression fails the run) or `warn`.
    pub(crate) severity: super::threshold::Severity,
    /// Only the requests of the scope whose tags match (`latency{kind:write}`); empty: all.
    pub(crate) tags: super::tags::TagSelector,
}

impl RegressionRule {
    /// Parses `text` as a rule for `metric`. Errors say what was expected.
    pub(crate) fn parse(metric: Metric, text: &str) -> Result<RegressionRule, String> {
        let text = text.trim();
        let (aggregation, rest) = parse_aggregation(text)?;
        let allowed = match metric {
            Metric::Latency => match aggregation {
                Aggregation::Percentile(p) => RULE_PERCENTILES.contains(&p),
                Aggregation::Median | Aggregation::Mean => true,
                _ => false,
            },
            Metric::Errors | Metric::Responses => aggregation == Aggregation::Rate,
            Metric::Checks => false,
        };
        if !allowed {
            let what = match metric {
                Metric::Latency => "p(50), p(90), p(95), p(99), p(99.9), med or mean",
                Metric::Errors | Metric::Responses => "rate",
                Metric::Checks => {
                    return Err(format!("`{text}`: checks have no regression rules"));
                }
            };
            return Err(format!(
                "`{text}`: a {} regression rule takes {what}, not `{aggregation}`",
                metric.name()
            ));
        }
        let rest = rest.trim_start();
        let change_end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (change_text, rest) = rest.split_at(change_end);
        let max_change = parse_change(metric, change_text).map_err(|e| format!("`{text}`: {e}"))?;
        let rest = rest.trim();
        let floor = if rest.is_empty() {
            match metric {
                Metric::Latency => DEFAULT_LATENCY_FLOOR_US,
                Metric::Errors => DEFAULT_ERRORS_FLOOR,
                Metric::Responses => DEFAULT_REQUESTS_FLOOR,
                Metric::Checks => unreachable!("rejected above"),
            }
        } else {
            let value = rest.strip_prefix("floor").ok_or_else(|| {
                format!("`{text}`: expected `floor` and a value after the change, not `{rest}`")
            })?;
            parse_value(metric, aggregation, value.trim()).map_err(|e| format!("`{text}`: {e}"))?
        };
        Ok(RegressionRule {
            scope: RuleScope::Total,
            metric,
            aggregation,
            max_change,
            floor,
            expression: text.to_string(),
            severity: super::threshold::Severity::Fail,
            tags: super::tags::TagSelector::default(),
        })
    }

    /// Unit of values and of the floor: `us` (latency), `ratio` (error rate), `1/s`
    /// (throughput). The same names as in SLO verdicts.
    pub(crate) fn unit(&self) -> &'static str {
        match self.metric {
            Metric::Latency => "us",
            Metric::Errors | Metric::Checks => "ratio",
            Metric::Responses => "1/s",
        }
    }

    /// Whether a lower value is worse (throughput); otherwise a higher value is.
    pub(crate) fn lower_is_worse(&self) -> bool {
        self.metric == Metric::Responses
    }
}

/// Parses `+10%` / `-10%` for `metric`: the magnitude as a fraction.
fn parse_change(metric: Metric, text: &str) -> Result<f64, String> {
    let example = if metric == Metric::Responses {
        "-10%"
    } else {
        "+10%"
    };
    let number = text.strip_suffix('%').ok_or_else(|| {
        format!("expected the allowed relative change in %, e.g. `{example}`, not `{text}`")
    })?;
    let (sign, digits) = match number.as_bytes().first() {
        Some(b'+') => (Some('+'), &number[1..]),
        Some(b'-') => (Some('-'), &number[1..]),
        _ => (None, number),
    };
    let worse = if metric == Metric::Responses {
        '-'
    } else {
        '+'
    };
    if sign.is_some_and(|s| s != worse) {
        let direction = if metric == Metric::Responses {
            "a drop in throughput"
        } else {
            "a rise"
        };
        return Err(format!(
            "a {} regression is {direction}: write `{worse}{digits}%`",
            metric.name()
        ));
    }
    let percent: f64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a percentage, e.g. `{example}`"))?;
    if !(percent.is_finite() && percent >= 0.0) {
        return Err(format!("`{text}` is not a percentage, e.g. `{example}`"));
    }
    Ok(percent / 100.0)
}

/// The gate's false-alarm rate per run (α) when the spec gives none: 5%, a fraction.
pub(crate) const DEFAULT_ALPHA: f64 = 0.05;

/// The block's `alpha` as a fraction ([`DEFAULT_ALPHA`] when absent). Errors (field path,
/// message): not a percentage, or not above 0% and below 50%.
pub(crate) fn build_alpha(block: &spec::Regression) -> Result<f64, (String, String)> {
    let Some(text) = &block.alpha else {
        return Ok(DEFAULT_ALPHA);
    };
    let percent = text
        .strip_suffix('%')
        .and_then(|n| n.trim().parse::<f64>().ok());
    match percent {
        Some(p) if p > 0.0 && p < 50.0 => Ok(p / 100.0),
        _ => Err((
            "regression.alpha".to_string(),
            format!(
                "the false-alarm rate per run is a percentage above 0% and below 50%, e.g. \
                 `5%`, not `{text}`"
            ),
        )),
    }
}

/// Resolves the whole run's `regression` block: its lists, with the defaults for the absent
/// ones, then its tagged lists (`latency{kind:write}`: only the rules written). Every problem
/// goes to `errors`, with its field path (`regression.latency[0]`).
pub(super) fn build(block: &spec::Regression, errors: &mut Errors) -> Vec<RegressionRule> {
    let mut rules = Vec::new();
    type List<'a> = (Metric, &'a Option<Vec<spec::RuleSpec>>, &'a [&'a str]);
    let lists: [List<'_>; 3] = [
        (Metric::Latency, &block.latency, &DEFAULT_LATENCY_RULES),
        (Metric::Errors, &block.errors, &DEFAULT_ERRORS_RULES),
        (Metric::Responses, &block.requests, &DEFAULT_REQUESTS_RULES),
    ];
    for (metric, list, defaults) in lists {
        match list {
            Some(list) => rules.extend(build_rules(
                &[(metric, metric.name(), list)],
                "regression",
                &RuleScope::Total,
                errors,
            )),
            None => rules.extend(
                defaults
                    .iter()
                    .map(|text| RegressionRule::parse(metric, text).expect("default rules parse")),
            ),
        }
    }
    rules.extend(build_tagged(block, "regression", &RuleScope::Total, errors));
    rules
}

/// Resolves the `regression` block (at `path`, e.g. `targets[0].regression`) of a scope other
/// than the whole run: a scenario's, a target's or a flow step's. Only the rules written apply
/// (no defaults); tagged lists only in a scenario's block (a target's requests all carry the
/// same tags); no `alpha` (one per run). Every problem goes to `errors`.
pub(super) fn build_scoped(
    block: &spec::Regression,
    path: &str,
    scope: &RuleScope,
    errors: &mut Errors,
) -> Vec<RegressionRule> {
    if block.alpha.is_some() {
        errors.push(
            format!("{path}.alpha"),
            "`alpha` is one false-alarm rate per run, shared by every rule: give it in the \
             spec's top-level `regression` block",
        );
    }
    let mut rules = build_rules(
        &[
            (
                Metric::Latency,
                "latency",
                block.latency.as_deref().unwrap_or_default(),
            ),
            (
                Metric::Errors,
                "errors",
                block.errors.as_deref().unwrap_or_default(),
            ),
            (
                Metric::Responses,
                "requests",
                block.requests.as_deref().unwrap_or_default(),
            ),
        ],
        path,
        scope,
        errors,
    );
    rules.extend(build_tagged(block, path, scope, errors));
    rules
}

/// The rules of a block's tagged lists (`latency{kind:write}`), each with its selector;
/// refused in a target's or a flow's block.
fn build_tagged(
    block: &spec::Regression,
    path: &str,
    scope: &RuleScope,
    errors: &mut Errors,
) -> Vec<RegressionRule> {
    let mut rules = Vec::new();
    for (key, list) in &block.tagged {
        let field = format!("{path}.{key}");
        if matches!(scope, RuleScope::Target(_) | RuleScope::Flow(_)) {
            errors.push(&field, TAGS_IN_A_TARGET);
            continue;
        }
        let Some((metric, tags)) = selector(&field, key, errors) else {
            continue;
        };
        if metric == Metric::Checks {
            errors.push(&field, "checks have no regression rules");
            continue;
        }
        let built = build_rules(&[(metric, key, list)], path, scope, errors);
        rules.extend(built.into_iter().map(|rule| RegressionRule {
            tags: tags.clone(),
            ..rule
        }));
    }
    rules
}

/// Parses the rules written in the lists of one block (at `path`, e.g.
/// `flows[0].regression`) for `scope`, without defaults: each list is the metric its rules
/// compare, its field name and the rules, each with its severity. Every problem goes to
/// `errors`, with its field path.
pub(super) fn build_rules(
    lists: &[(Metric, &str, &[spec::RuleSpec])],
    path: &str,
    scope: &RuleScope,
    errors: &mut Errors,
) -> Vec<RegressionRule> {
    let mut rules = Vec::new();
    for &(metric, field, list) in lists {
        for (i, spec) in list.iter().enumerate() {
            let path = format!("{path}.{field}[{i}]");
            let text = spec.text();
            if !errors.printable(&path, text) {
                continue;
            }
            match RegressionRule::parse(metric, text) {
                Ok(rule) => rules.push(RegressionRule {
                    scope: scope.clone(),
                    severity: spec.severity().into(),
                    ..rule
                }),
                Err(e) => errors.push(path, e),
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests;
