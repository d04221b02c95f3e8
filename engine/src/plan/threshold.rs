//! SLO thresholds in k6's grammar (k6 `metrics/thresholds_parser.go` is the anchor).
//!
//! ```text
//! threshold   := aggregation operator value
//! aggregation := "p(" number ")" | "med" | "mean" | "min" | "max" | "rate" | "count"
//! operator    := "<" | "<=" | ">" | ">=" | "==" | "!="
//! value       := number unit
//! ```
//!
//! Which aggregations and units a metric takes:
//!
//! | metric     | aggregations                       | unit of the value          |
//! |------------|------------------------------------|----------------------------|
//! | `latency`  | `p(N)` (0 < N ≤ 100), med, mean, min, max | `us`, `ms`, `s`, `m`, `h` |
//! | `errors`   | `rate`                             | `%`                         |
//! | `errors`   | `count`                            | none (a whole number)       |
//! | `requests` | `rate`                             | `/s`                        |
//! | `requests` | `count`                            | none (a whole number)       |
//! | `checks`   | `rate`                             | `%`                         |
//!
//! White space between the parts is optional. Values are kept in canonical units: latency in
//! microseconds, rates of errors as a fraction (0.1% is 0.001), rates of `requests` (complete
//! responses, [`Metric::Responses`]) per second.

use std::fmt;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::tags::TagSelector;
use crate::units::{parse_duration, parse_rate};

/// What a threshold or a regression rule gates, as the spec names it in the whole run's and a
/// target's blocks (`slo.latency`, `regression.requests`, ...) and as results and verdicts
/// record it (`metric`: `latency`, `errors`, `requests`, `checks`). A flow's blocks gate the
/// same quantities of its iterations under their own names (`Metric::flow_name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// How long each unit of work took: a complete response's latency (from when its request
    /// was due to its last byte); a flow's iteration duration.
    Latency,
    /// Units of work that failed: requests ended by a transport error or an unexpected
    /// status; a flow's failed iterations.
    Errors,
    /// Units of work that completed: complete responses (any status); a flow's iterations
    /// that ended. `count` counts them; `rate` is per second of the measured window (the
    /// throughput). Named `requests` in the spec, results and verdicts.
    #[serde(rename = "requests")]
    Responses,
    /// Response checks: the share of evaluations that passed.
    Checks,
}

impl Metric {
    /// The metric's name as written in the spec's `slo` and `regression` blocks of the whole
    /// run and of a target, and as results and verdicts record it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Metric::Latency => "latency",
            Metric::Errors => "errors",
            Metric::Responses => "requests",
            Metric::Checks => "checks",
        }
    }

    /// The metric and the selector of a block's tagged key, `latency{kind:write}`
    /// ([`TagSelector::parse_key`]), the metric named as in the whole run's blocks. Errors
    /// say what was expected.
    pub(crate) fn parse_tagged(key: &str) -> Result<(Metric, TagSelector), String> {
        let (name, selector) = TagSelector::parse_key(key)?;
        let metric = match name {
            "latency" => Metric::Latency,
            "errors" => Metric::Errors,
            "requests" => Metric::Responses,
            "checks" => Metric::Checks,
            other => {
                return Err(format!(
                    "`{key}`: `{other}` is not a metric: `latency`, `errors`, `requests` or \
                     `checks`"
                ));
            }
        };
        Ok((metric, selector))
    }

    /// The metric's name in a flow's `slo` and `regression` blocks, where it gates the flow's
    /// iterations: `iteration_duration`, `failed_iterations`, `iterations` (a flow has no
    /// `checks`).
    pub(crate) fn flow_name(self) -> &'static str {
        match self {
            Metric::Latency => "iteration_duration",
            Metric::Errors => "failed_iterations",
            Metric::Responses => "iterations",
            Metric::Checks => "checks",
        }
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a metric's samples are reduced to one number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Aggregation {
    /// The given percentile, 0 < p ≤ 100 (`p(99.9)`).
    Percentile(f64),
    /// `med`, the 50th percentile.
    Median,
    Mean,
    Min,
    Max,
    /// Errors: the fraction of requests that ended that failed. Responses: complete responses
    /// per second.
    Rate,
    Count,
}

impl fmt::Display for Aggregation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Aggregation::Percentile(p) => write!(f, "p({p})"),
            Aggregation::Median => f.write_str("med"),
            Aggregation::Mean => f.write_str("mean"),
            Aggregation::Min => f.write_str("min"),
            Aggregation::Max => f.write_str("max"),
            Aggregation::Rate => f.write_str("rate"),
            Aggregation::Count => f.write_str("count"),
        }
    }
}

/// Comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

/// Where a threshold applies: the whole run, one target (by index into the plan's targets;
/// a flow step is a target), or one flow's iterations (by index into the plan's flows: there
/// `latency` is the iteration duration, `requests` the iterations, `errors` the failed ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    Total,
    Target(usize),
    Flow(usize),
    /// One scenario's requests (by index into the plan's `scenarios`).
    Scenario(usize),
}

/// What a failed threshold or regression rule does: `fail` the run (the default) or only
/// `warn` (reported in the comment, the summary and JUnit as a skipped case; never fails).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A failure fails the run.
    #[default]
    Fail,
    /// A failure is reported and never fails the run.
    Warn,
}

impl From<crate::spec::Severity> for Severity {
    fn from(severity: crate::spec::Severity) -> Severity {
        match severity {
            crate::spec::Severity::Fail => Severity::Fail,
            crate::spec::Severity::Warn => Severity::Warn,
        }
    }
}

/// A parsed threshold: `aggregation(metric) op limit`, with `limit` in canonical units.
#[derive(Debug, Clone, PartialEq)]
pub struct Threshold {
    /// The whole run or one target.
    pub(crate) scope: Scope,
    /// What is measured.
    pub(crate) metric: Metric,
    /// How the measurements are reduced to one number (`p(95)`, `rate`, ...).
    pub(crate) aggregation: Aggregation,
    /// How that number is compared with `limit`.
    pub(crate) op: Op,
    /// The limit in canonical units (latency: µs; error rate: fraction; request rate: 1/s).
    pub(crate) limit: f64,
    /// The expression as written in the spec.
    pub(crate) expression: String,
    /// Stop the run as soon as the threshold fails.
    pub(crate) abort_on_fail: bool,
    /// With `abort_on_fail`: measured time before it is first checked.
    pub(crate) abort_after: Duration,
    /// Judge every window of this many whole seconds (sliding by a second), not the whole run.
    pub(crate) window_s: Option<u32>,
    /// loadgate added this threshold, the spec did not write it (`plan/slo.rs`'s default
    /// `errors` SLO).
    pub(crate) default: bool,
    /// `fail` (a failure fails the run) or `warn`.
    pub(crate) severity: Severity,
    /// Only the requests of the scope whose tags match (`latency{kind:write}`); empty: all.
    pub(crate) tags: TagSelector,
}

impl Threshold {
    /// Parses `expression` for `metric`. Errors say what was expected.
    pub(crate) fn parse(
        scope: Scope,
        metric: Metric,
        expression: &str,
    ) -> Result<Threshold, String> {
        let text = expression.trim();
        let (aggregation, rest) = parse_aggregation(text)?;
        check_aggregation(metric, aggregation)?;
        let rest = rest.trim_start();
        let (op, rest) = parse_op(rest).ok_or_else(|| {
            format!("`{text}`: expected an operator (<, <=, >, >=, ==, !=) after `{aggregation}`")
        })?;
        let value = rest.trim();
        if value.is_empty() {
            let op_text = &text[..text.len() - rest.len()];
            let example = match (metric, aggregation) {
                (Metric::Latency, _) => "200ms",
                (_, Aggregation::Count) => "0",
                (Metric::Errors, _) => "1%",
                (Metric::Checks, _) => "100%",
                (Metric::Responses, _) => "500/s",
            };
            return Err(format!(
                "`{text}`: the limit is missing after `{}`, e.g. `{} {example}`",
                op.symbol(),
                op_text.trim_end()
            ));
        }
        let limit =
            parse_value(metric, aggregation, value).map_err(|why| format!("`{text}`: {why}"))?;
        Ok(Threshold {
            scope,
            metric,
            aggregation,
            op,
            limit,
            expression: text.to_string(),
            abort_on_fail: false,
            abort_after: Duration::ZERO,
            window_s: None,
            default: false,
            severity: Severity::Fail,
            tags: TagSelector::default(),
        })
    }

    /// loadgate added this threshold (the default `errors` SLO); the spec did not write it.
    pub fn is_default(&self) -> bool {
        self.default
    }

    /// Whether `measured` (in canonical units) satisfies the threshold.
    pub(crate) fn passes(&self, measured: f64) -> bool {
        match self.op {
            Op::Lt => measured < self.limit,
            Op::Le => measured <= self.limit,
            Op::Gt => measured > self.limit,
            Op::Ge => measured >= self.limit,
            Op::Eq => measured == self.limit,
            Op::Ne => measured != self.limit,
        }
    }
}

/// Parses the aggregation at the start of `text` (`p(95)`, `med`, `rate`, ...); returns it
/// and the rest of `text`.
pub(crate) fn parse_aggregation(text: &str) -> Result<(Aggregation, &str), String> {
    if let Some(rest) = text.strip_prefix("p(") {
        let close = rest
            .find(')')
            .ok_or_else(|| format!("`{text}`: `p(` is not closed"))?;
        let p: f64 = rest[..close]
            .trim()
            .parse()
            .map_err(|_| format!("`{text}`: `p(...)` needs a number, e.g. p(95) or p(99.9)"))?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(format!("`{text}`: percentile {p} is out of range (0, 100]"));
        }
        return Ok((Aggregation::Percentile(p), &rest[close + 1..]));
    }
    let end = text
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(text.len());
    let aggregation = match &text[..end] {
        "med" => Aggregation::Median,
        "mean" | "avg" => Aggregation::Mean,
        "min" => Aggregation::Min,
        "max" => Aggregation::Max,
        "rate" => Aggregation::Rate,
        "count" => Aggregation::Count,
        other => {
            return Err(format!(
                "`{text}`: unknown aggregation `{other}`: use p(N), med, mean, min, max, rate or count"
            ));
        }
    };
    Ok((aggregation, &text[end..]))
}

fn check_aggregation(metric: Metric, aggregation: Aggregation) -> Result<(), String> {
    let ok = match metric {
        Metric::Latency => !matches!(aggregation, Aggregation::Rate | Aggregation::Count),
        Metric::Errors | Metric::Responses => {
            matches!(aggregation, Aggregation::Rate | Aggregation::Count)
        }
        Metric::Checks => aggregation == Aggregation::Rate,
    };
    if ok {
        return Ok(());
    }
    let allowed = match metric {
        Metric::Latency => "p(N), med, mean, min or max",
        Metric::Errors | Metric::Responses => "rate or count",
        Metric::Checks => "rate",
    };
    Err(format!(
        "`{aggregation}` does not apply to `{}`: use {allowed}",
        metric.name()
    ))
}

impl Op {
    /// Whether the operator bounds the value from above (`<`, `<=`).
    pub(crate) fn bounds_above(self) -> bool {
        matches!(self, Op::Lt | Op::Le)
    }

    /// The operator as written: `<`, `<=`, `>`, `>=`, `==` or `!=`.
    fn symbol(self) -> &'static str {
        match self {
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
            Op::Eq => "==",
            Op::Ne => "!=",
        }
    }
}

fn parse_op(text: &str) -> Option<(Op, &str)> {
    // Two-character operators first.
    for (symbol, op) in [
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<", Op::Lt),
        (">", Op::Gt),
    ] {
        if let Some(rest) = text.strip_prefix(symbol) {
            return Some((op, rest));
        }
    }
    None
}

/// Parses a threshold's value for `metric` and `aggregation` into canonical units: a latency
/// into µs, an error or check rate (`%`) into a fraction, a response rate (`/s`) into 1/s, a
/// count as it is.
pub(crate) fn parse_value(
    metric: Metric,
    aggregation: Aggregation,
    text: &str,
) -> Result<f64, String> {
    match (metric, aggregation) {
        (Metric::Latency, _) => parse_duration(text).map(|d| d.as_secs_f64() * 1e6),
        (_, Aggregation::Count) => text
            .parse::<u64>()
            .map(|n| n as f64)
            .map_err(|_| format!("a count is a whole number without a unit, not `{text}`")),
        (Metric::Errors | Metric::Checks, _) => {
            let number = text.strip_suffix('%').ok_or_else(|| {
                format!(
                    "a rate of {} needs the unit `%`, e.g. `1%` or `99.9%`, not `{text}`",
                    metric.name()
                )
            })?;
            let percent: f64 = number
                .trim()
                .parse()
                .map_err(|_| format!("`{text}` is not a percentage"))?;
            if !(0.0..=100.0).contains(&percent) {
                return Err(format!("{percent}% is not between 0% and 100%"));
            }
            Ok(percent / 100.0)
        }
        (Metric::Responses, _) => parse_rate(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(metric: Metric, text: &str) -> Result<(Aggregation, Op, f64), String> {
        Threshold::parse(Scope::Total, metric, text).map(|t| (t.aggregation, t.op, t.limit))
    }

    #[test]
    fn valid_thresholds() {
        use Aggregation::*;
        let cases = [
            (
                Metric::Latency,
                "p(95)<200ms",
                (Percentile(95.0), Op::Lt, 200_000.0),
            ),
            (
                Metric::Latency,
                " p(99.9) <= 1.5s ",
                (Percentile(99.9), Op::Le, 1_500_000.0),
            ),
            (Metric::Latency, "max < 2s", (Max, Op::Lt, 2_000_000.0)),
            (Metric::Latency, "mean<50ms", (Mean, Op::Lt, 50_000.0)),
            (Metric::Latency, "med < 300us", (Median, Op::Lt, 300.0)),
            (Metric::Latency, "min >= 1ms", (Min, Op::Ge, 1_000.0)),
            (Metric::Errors, "rate < 0.1%", (Rate, Op::Lt, 0.001)),
            (Metric::Errors, "count == 0", (Count, Op::Eq, 0.0)),
            (Metric::Responses, "rate > 500/s", (Rate, Op::Gt, 500.0)),
            (Metric::Responses, "count != 7", (Count, Op::Ne, 7.0)),
            (Metric::Checks, "rate == 100%", (Rate, Op::Eq, 1.0)),
        ];
        for (metric, text, want) in cases {
            let got = parse(metric, text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(got.0, want.0, "{text}");
            assert_eq!(got.1, want.1, "{text}");
            assert!(
                (got.2 - want.2).abs() < 1e-9,
                "{text}: {} != {}",
                got.2,
                want.2
            );
        }
    }

    #[test]
    fn invalid_thresholds_say_why() {
        let cases = [
            (Metric::Latency, "p(95) < 200", "has no unit"),
            (
                Metric::Latency,
                "p(95) < ",
                "the limit is missing after `<`",
            ),
            (
                Metric::Responses,
                "rate >=",
                "missing after `>=`, e.g. `rate >= 500/s`",
            ),
            (Metric::Latency, "p(95 < 200ms", "is not closed"),
            (Metric::Latency, "p(x) < 200ms", "needs a number"),
            (Metric::Latency, "p(0) < 200ms", "out of range"),
            (Metric::Latency, "p(101) < 200ms", "out of range"),
            (Metric::Latency, "p95 < 200ms", "unknown aggregation `p95`"),
            (Metric::Latency, "rate < 1%", "does not apply to `latency`"),
            (Metric::Latency, "max 200ms", "expected an operator"),
            (Metric::Errors, "rate < 0.01", "needs the unit `%`"),
            (Metric::Checks, "rate == 1", "needs the unit `%`"),
            (Metric::Checks, "count > 1", "does not apply to `checks`"),
            (Metric::Errors, "rate < 120%", "between 0% and 100%"),
            (Metric::Errors, "p(99) < 1%", "does not apply to `errors`"),
            (Metric::Errors, "count < 1.5", "whole number"),
            (Metric::Responses, "rate > 500", "needs the unit `/s`"),
            (Metric::Responses, "rate > fast/s", "is not a rate"),
        ];
        for (metric, text, want) in cases {
            let err = parse(metric, text).expect_err(text);
            assert!(err.contains(want), "{text}: {err}");
        }
    }

    #[test]
    fn tagged_keys_name_a_metric() {
        for (key, want) in [
            ("latency{a:b}", Ok(Metric::Latency)),
            ("errors{a:b}", Ok(Metric::Errors)),
            (" requests {a:b}", Ok(Metric::Responses)),
            ("checks{a:b}", Ok(Metric::Checks)),
            ("speed{a:b}", Err("`speed` is not a metric")),
            ("latency", Err("in braces")),
        ] {
            match (Metric::parse_tagged(key), want) {
                (Ok((metric, selector)), Ok(want)) => {
                    assert_eq!(metric, want, "{key}");
                    assert_eq!(selector.to_string(), "{a:b}");
                }
                (Err(e), Err(want)) => assert!(e.contains(want), "{key}: {e}"),
                (got, want) => panic!("{key}: {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn passes_compares_in_canonical_units() {
        let t = Threshold::parse(Scope::Total, Metric::Latency, "p(99) < 200ms").unwrap();
        assert!(t.passes(199_999.0));
        assert!(!t.passes(200_000.0));
        let t = Threshold::parse(Scope::Total, Metric::Errors, "rate <= 1%").unwrap();
        assert!(t.passes(0.01));
        assert!(!t.passes(0.010_1));
        let t = Threshold::parse(Scope::Total, Metric::Responses, "rate >= 100/s").unwrap();
        assert!(t.passes(100.0));
        assert!(!t.passes(99.9));
    }
}
