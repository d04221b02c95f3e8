//! PLACEHOLDER (issue 14): the paired verdict of a regression rule. This file only gives
//! `loadgate ab` the entry point's signature; the statistics land from the "stats" helper's
//! branch, which replaces this file whole at merge. Until then every rule is `inconclusive`.

use super::rules::{RuleState, RuleVerdict, whole_run_value};
use crate::plan::regression::RegressionRule;
use crate::result::TargetResult;

/// Judges `rule` on paired epochs: `pairs[i] = (baseline_value, candidate_value)` of the rule's
/// metric in epoch `i` (both sides loaded at the same time), in the rule's unit (µs for latency
/// rules, a fraction for `errors`, responses/s for `requests`); epochs where either side has no
/// value are left out by the caller. `baseline` and `candidate` are the sides' whole results
/// (`total`), whose whole-run values are reported as `baseline`/`current`.
pub(crate) fn judge_paired(
    rule: &RegressionRule,
    baseline: &TargetResult,
    candidate: &TargetResult,
    pairs: &[(f64, f64)],
) -> RuleVerdict {
    let b = whole_run_value(rule, baseline);
    let c = whole_run_value(rule, candidate);
    RuleVerdict {
        scope: "total".to_string(),
        metric: rule.metric.name().to_string(),
        aggregation: rule.aggregation.to_string(),
        rule: rule.expression.clone(),
        unit: rule.unit().to_string(),
        baseline: b,
        current: c,
        change: b.zip(c).map(|(b, c)| c - b),
        relative_change: None,
        max_change: rule.max_change,
        floor: rule.floor,
        allowed_change: None,
        change_ci: None,
        relative_change_ci: None,
        samples: [pairs.len(), pairs.len()],
        verdict: RuleState::Inconclusive,
        reason: format!(
            "placeholder: the paired statistics are not built in yet ({} pairs)",
            pairs.len()
        ),
    }
}
