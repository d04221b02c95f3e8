//! What `--emit-spec` adds to a one-line run's spec to make it a CI gate: the schema modeline
//! first, then an `slo:` block (thresholds the run must meet) and a `regression:` block (how
//! much worse than a baseline it may get: loadgate's defaults written out), each line commented
//! with what it means.
//!
//! The one-line run itself does not gate on them (it reports, as hey and oha do; only
//! loadgate's default `errors: rate < 100%` fails it): the gate is the saved spec.

use std::fmt::Write as _;

use crate::plan::regression::{
    DEFAULT_ALPHA, DEFAULT_ERRORS_RULES, DEFAULT_LATENCY_RULES, DEFAULT_REQUESTS_RULES,
};

/// The published schema of this engine's specs, for the modeline: the repository's raw file
/// at this version's tag (docs/schemas.md).
pub(crate) const SCHEMA_URL: &str = concat!(
    "https://raw.githubusercontent.com/loadgate/loadgate/v",
    env!("CARGO_PKG_VERSION"),
    "/schema/loadgate.schema.json"
);

/// The emitted spec's SLO on the error rate: at most 1% of requests fail.
pub(crate) const GATE_ERRORS: &str = "rate < 1%";
/// The emitted spec's SLO on latency: Nielsen's 1 s limit for the user's flow of thought, the
/// level loadgate's reports use when a spec sets none (`report/levels.rs`).
pub(crate) const GATE_LATENCY: &str = "p(99) < 1s";

/// The first line of an emitted spec: editors that speak the YAML language server check and
/// complete the spec against [`SCHEMA_URL`].
pub(crate) fn modeline() -> String {
    format!("# yaml-language-server: $schema={SCHEMA_URL}\n")
}

/// The `slo:` and `regression:` blocks, commented.
pub(crate) fn blocks() -> String {
    let mut out = String::new();
    let mut line = |text: &str, comment: &str| {
        let _ = writeln!(out, "{text:<34} # {comment}");
    };
    line(
        "slo:",
        "the gate: `loadgate run` exits 1 if one fails; set your goals",
    );
    line(
        &format!("  errors: [{}]", quoted(GATE_ERRORS)),
        "at most 1% of requests fail (no response, unexpected status)",
    );
    line(
        &format!("  latency: [{}]", quoted(GATE_LATENCY)),
        "99% of responses within 1 s (Nielsen's limit)",
    );
    line(
        "regression:",
        "against a baseline (`--baseline`, the action): the defaults",
    );
    line(
        "  latency:",
        "may rise by the share, or by the floor if that is more",
    );
    for rule in DEFAULT_LATENCY_RULES {
        line(&format!("    - {}", quoted(rule)), &describe(rule));
    }
    for (metric, rules) in [
        ("errors", &DEFAULT_ERRORS_RULES[..]),
        ("requests", &DEFAULT_REQUESTS_RULES[..]),
    ] {
        let list: Vec<String> = rules.iter().map(|r| quoted(r)).collect();
        let comment = rules
            .iter()
            .map(|r| describe_metric(metric, r))
            .collect::<Vec<_>>()
            .join("; ");
        line(&format!("  {metric}: [{}]", list.join(", ")), &comment);
    }
    line(
        &format!("  alpha: {}%", DEFAULT_ALPHA * 100.0),
        "false alarms per run, shared by every rule",
    );
    out
}

/// A rule as a YAML double-quoted string (the rules hold no `"` or `\`).
fn quoted(rule: &str) -> String {
    format!("\"{rule}\"")
}

/// What a latency rule allows: `p(95) +10% floor 2ms` → `p(95) may rise by 10% (2ms at
/// least)`.
fn describe(rule: &str) -> String {
    let mut words = rule.split_whitespace();
    let aggregation = words.next().unwrap_or_default();
    let change = words.next().unwrap_or_default().trim_start_matches('+');
    match (words.next(), words.next()) {
        (Some("floor"), Some(floor)) => {
            format!("{aggregation} may rise by {change} ({floor} at least)")
        }
        _ => format!("{aggregation} may rise by {change}"),
    }
}

/// What an errors or requests rule allows, in words.
fn describe_metric(metric: &str, rule: &str) -> String {
    let words: Vec<&str> = rule.split_whitespace().collect();
    let change = words.get(1).copied().unwrap_or_default();
    let floor = match (metric, words.get(2..4)) {
        ("errors", Some(["floor", floor])) => {
            format!(" ({} points at least)", floor.trim_end_matches('%'))
        }
        (_, Some(["floor", floor])) => format!(" ({floor} at least)"),
        _ => String::new(),
    };
    match metric {
        "errors" => format!(
            "the error rate may rise by {} of itself{floor}",
            change.trim_start_matches('+')
        ),
        _ => format!(
            "throughput may drop by {}{floor}",
            change.trim_start_matches('-')
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_says_what_it_allows() {
        assert_eq!(
            describe("p(99) +20% floor 2ms"),
            "p(99) may rise by 20% (2ms at least)"
        );
        assert_eq!(
            describe_metric("errors", "rate +10% floor 0.1%"),
            "the error rate may rise by 10% of itself (0.1 points at least)"
        );
        assert_eq!(
            describe_metric("requests", "rate -10%"),
            "throughput may drop by 10%"
        );
        assert!(SCHEMA_URL.ends_with("/schema/loadgate.schema.json"));
        // Every line of the blocks is commented.
        for line in blocks().lines() {
            assert!(line.contains(" # "), "{line}");
        }
    }
}
