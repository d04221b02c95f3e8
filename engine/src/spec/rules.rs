//! Thresholds and regression rules as the spec writes them (`slo:`, `regression:`), with
//! their options: severity, tag selectors (k6's `metric{tag:value}` keys).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

use super::{DURATION_PATTERN, PERCENT_PATTERN};

/// Service level objectives: thresholds in k6's grammar, grouped by metric.
///
/// ```yaml
/// slo:
///   latency:
///     - "p(95) < 200ms"
///     - threshold: "p(99) < 300ms"    # in every 10 s window, not only over the whole run
///       window: 10s
///     - threshold: "p(99.9) < 2s"     # stop the run as soon as it is lost
///       abort_on_fail: true
///       abort_after: 5s
///   errors: ["rate < 0.1%"]
///   requests: ["rate > 500/s"]
///   checks: ["rate == 100%"]
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub(crate) struct Slo {
    /// Response latency: `p(N)` (e.g. `p(99.9)`), `med`, `mean`, `min`, `max`, with a time unit.
    #[serde(default)]
    pub(crate) latency: Vec<ThresholdSpec>,
    /// Failed requests (transport errors and unexpected statuses): `rate` in `%`, or `count`.
    #[serde(default)]
    pub(crate) errors: Vec<ThresholdSpec>,
    /// Completed requests: `rate` in `/s`, or `count`.
    #[serde(default)]
    pub(crate) requests: Vec<ThresholdSpec>,
    /// Response checks: `rate` (the share that passed) in `%`, e.g. `rate == 100%`.
    #[serde(default)]
    pub(crate) checks: Vec<ThresholdSpec>,
    /// Thresholds over the requests that carry tags, k6's syntax: the metric, then the tags
    /// in braces, e.g. `latency{kind:write}: ["p(95) < 50ms"]`,
    /// `errors{scenario:checkout,kind:write}: ["rate < 1%"]` (every tag must match).
    #[serde(flatten)]
    #[schemars(with = "TaggedThresholds")]
    pub(crate) tagged: BTreeMap<String, Vec<ThresholdSpec>>,
}

/// Regex for a metric with a tag selector: `latency{kind:write}`, `errors{a:b,c:d}`.
pub(crate) const TAGGED_METRIC_PATTERN: &str =
    r"^(latency|errors|requests|checks)\{[^{}:,]+:[^{}:,]*(,[^{}:,]+:[^{}:,]*)*\}$";

/// The schema of `Slo::tagged`: keys `metric{tag:value,...}`, each a list of thresholds.
#[derive(JsonSchema)]
#[schemars(extend("patternProperties" = {
    TAGGED_METRIC_PATTERN: { "type": "array", "items": { "$ref": "#/$defs/ThresholdSpec" } }
}))]
#[allow(dead_code, reason = "only its schema is used")]
struct TaggedThresholds {}

/// A threshold: an expression, or an expression with options.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum ThresholdSpec {
    /// `aggregation operator value`, e.g. `p(95) < 200ms`.
    Expression(String),
    Detailed(DetailedThreshold),
}

/// A threshold with options (k6's `abortOnFail` and `delayAbortEval`; sliding windows).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DetailedThreshold {
    /// `aggregation operator value`, e.g. `p(99) < 300ms`.
    pub(crate) threshold: String,
    /// Stop the run as soon as the threshold fails (whole-run thresholds: checked once a
    /// second on the run so far).
    #[serde(default)]
    pub(crate) abort_on_fail: bool,
    /// With `abort_on_fail`: measured time before the threshold is first checked (default
    /// `0s`), so that a few slow first requests do not stop the run.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) abort_after: Option<String>,
    /// Judge every window of this length (sliding by one second) instead of the whole run:
    /// the threshold passes only if it holds in each. Whole-run `slo` only, not per target;
    /// not for `checks`.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) window: Option<String>,
    /// `fail` (the default): a failed threshold fails the run. `warn`: it is reported (the
    /// comment, the summary, JUnit as a skipped case) and never fails the run.
    #[serde(default)]
    pub(crate) severity: Option<Severity>,
}

/// What a failed threshold or regression rule does: `fail` the run (the default) or only
/// `warn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Severity {
    Fail,
    Warn,
}

/// A regression rule: its text (`p(95) +10%`), or its text with options.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RuleSpec {
    /// `aggregation change [floor value]`, e.g. `p(95) +10% floor 2ms`.
    Expression(String),
    Detailed(DetailedRule),
}

/// A regression rule with options.
///
/// ```yaml
/// regression:
///   latency:
///     - { rule: "p(95) +5%", severity: warn }    # a small regression warns
///     - "p(95) +20%"                             # a large one fails the run
/// ```
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DetailedRule {
    /// `aggregation change [floor value]`, e.g. `p(95) +10% floor 2ms`.
    pub(crate) rule: String,
    /// `fail` (the default) or `warn`: a regression found by a `warn` rule is reported and
    /// never fails the run.
    #[serde(default)]
    pub(crate) severity: Option<Severity>,
}

impl RuleSpec {
    /// The rule's text.
    pub(crate) fn text(&self) -> &str {
        match self {
            RuleSpec::Expression(text) => text,
            RuleSpec::Detailed(d) => &d.rule,
        }
    }

    /// The rule's severity (`fail` unless it says `warn`).
    pub(crate) fn severity(&self) -> Severity {
        match self {
            RuleSpec::Expression(_) => Severity::Fail,
            RuleSpec::Detailed(d) => d.severity.unwrap_or(Severity::Fail),
        }
    }
}

/// Regression rules: how much worse than the baseline a metric of the whole run may get before
/// `loadgate compare` calls it a regression. Each rule is `aggregation change [floor value]`:
///
/// ```yaml
/// regression:
///   latency: ["p(95) +10%", "p(99) +20% floor 5ms"]   # may rise 10% (20%); never flag < 5ms
///   errors: ["rate +10% floor 0.1%"]                  # floor in percentage points
///   requests: ["rate -10%"]                           # throughput may drop 10%
/// ```
///
/// A list that is absent keeps its defaults (latency `p(50) +10%`, `p(95) +10%`, `p(99) +20%`,
/// each `floor 2ms`; errors `rate +10% floor 0.1%`; requests `rate -10%`); an empty list turns
/// that metric's rules off. `alpha: 5%` is the false-alarm rate per run that all the rules
/// share.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub(crate) struct Regression {
    /// Latency rules: `p(50)`, `p(90)`, `p(95)`, `p(99)`, `p(99.9)`, `med` or `mean`, then the
    /// allowed rise (`+10%`), then optionally `floor` and a duration (`floor 2ms`).
    #[serde(default)]
    pub(crate) latency: Option<Vec<RuleSpec>>,
    /// Error-rate rules: `rate`, the allowed relative rise (`+10%`), optionally `floor` and a
    /// rate in percentage points (`floor 0.1%`).
    #[serde(default)]
    pub(crate) errors: Option<Vec<RuleSpec>>,
    /// Throughput rules: `rate`, the allowed relative drop (`-10%`), optionally `floor` and a
    /// rate (`floor 50/s`).
    #[serde(default)]
    pub(crate) requests: Option<Vec<RuleSpec>>,
    /// The gate's false-alarm rate per run (α), a percentage above 0% and below 50%: the
    /// chance that an unchanged build fails the gate on any of its rules, shared by all the
    /// rules of a comparison (`5%` when absent). The spec's top-level block only, not a step's.
    #[serde(default)]
    #[schemars(regex(pattern = PERCENT_PATTERN))]
    pub(crate) alpha: Option<String>,
    /// Rules over the requests that carry tags, k6's syntax: `latency{kind:write}:
    /// ["p(95) +10%"]` (the whole run's block only). Only the rules written apply.
    #[serde(flatten)]
    #[schemars(with = "TaggedRules")]
    pub(crate) tagged: BTreeMap<String, Vec<RuleSpec>>,
}

/// The schema of `Regression::tagged`: keys `metric{tag:value,...}`, each a list of rules.
#[derive(JsonSchema)]
#[schemars(extend("patternProperties" = {
    TAGGED_METRIC_PATTERN: { "type": "array", "items": { "$ref": "#/$defs/RuleSpec" } }
}))]
#[allow(dead_code, reason = "only its schema is used")]
struct TaggedRules {}
