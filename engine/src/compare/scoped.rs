//! What a regression rule looks at in a result: its scope (the whole run, a target, a flow's
//! iterations, a scenario), found by name, narrowed to the targets its tag selector matches;
//! its whole-run measures and its per-second series on the run's clock.
//!
//! - `total`: the run's `total` and `time_series`;
//! - a target (a plain target or a flow step): its own measures and series;
//! - a flow: its iterations in a target's shape, no series;
//! - a scenario: its `total` and its `time_series`, shifted to the run's clock by its start
//!   (its seconds are counted from its own start);
//! - with tags (`latency{kind:write}`): the exact sum (`result::merge::sum_targets`:
//!   histograms added, per-second series merged) of the scope's targets whose `tags` hold the
//!   selector's every pair: every target of the run (`total`), the scenario's, the flow's
//!   steps (their requests, not the iterations), or the target itself. Rates are per second of
//!   the scope's window (the run's, or the scenario's).
//!
//! A scenario's seconds start at its `start_time_s` after the run's start, counted in whole
//! seconds from the earliest scenario's start (rounded), as the run's own series sums them.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::plan::regression::{RegressionRule, RuleScope};
use crate::result::{RunResult, ScenarioResult, TargetResult, TimeSample};

/// A rule's scope in one result.
#[derive(Debug)]
pub(super) struct Scoped<'a> {
    /// Its whole-run measures (`time_series` not read: see `series`).
    pub(super) target: Cow<'a, TargetResult>,
    /// Its per-second series on the run's clock; `None` for a flow's iterations, or an empty
    /// series (results before version 4).
    pub(super) series: Option<Cow<'a, [TimeSample]>>,
}

/// Why a result has nothing for a rule to look at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Missing {
    /// No target, flow or scenario of the rule's name.
    Scope,
    /// The scope is there, and none of its targets carries the rule's tags.
    Tags,
    /// The sum of the matching targets failed: a histogram does not decode.
    Unreadable(String),
}

/// What `rule` is judged on in `result` (see the module documentation).
pub(super) fn scoped<'a>(
    rule: &RegressionRule,
    result: &'a RunResult,
) -> Result<Scoped<'a>, Missing> {
    if !rule.tags.is_empty() {
        return tagged(rule, result);
    }
    let series = |s: &'a [TimeSample]| (!s.is_empty()).then_some(Cow::Borrowed(s));
    match &rule.scope {
        RuleScope::Total => Ok(Scoped {
            target: Cow::Borrowed(&result.total),
            series: series(&result.time_series),
        }),
        RuleScope::Target(name) => {
            let t = target(result, name).ok_or(Missing::Scope)?;
            Ok(Scoped {
                target: Cow::Borrowed(t),
                series: series(&t.time_series),
            })
        }
        RuleScope::Flow(name) => {
            let f = result.flows.iter().find(|f| &f.name == name);
            Ok(Scoped {
                target: Cow::Owned(f.ok_or(Missing::Scope)?.as_target()),
                series: None,
            })
        }
        RuleScope::Scenario(name) => {
            let s = scenario(result, name).ok_or(Missing::Scope)?;
            let offset = offset_s(result, s);
            let shifted = s
                .time_series
                .iter()
                .map(|t| TimeSample {
                    second: t.second + offset,
                    ..t.clone()
                })
                .collect::<Vec<_>>();
            Ok(Scoped {
                target: Cow::Borrowed(&s.total),
                series: (!shifted.is_empty()).then_some(Cow::Owned(shifted)),
            })
        }
    }
}

/// The sum of the targets of `rule`'s scope whose tags match its selector.
fn tagged<'a>(rule: &RegressionRule, result: &'a RunResult) -> Result<Scoped<'a>, Missing> {
    let names: Option<Vec<&str>> = match &rule.scope {
        RuleScope::Total => None,
        RuleScope::Target(name) => Some(vec![&target(result, name).ok_or(Missing::Scope)?.name]),
        RuleScope::Flow(name) => {
            let flow = result.flows.iter().find(|f| &f.name == name);
            let steps = &flow.ok_or(Missing::Scope)?.steps;
            Some(steps.iter().map(|s| s.target.as_str()).collect())
        }
        RuleScope::Scenario(name) => {
            let s = scenario(result, name).ok_or(Missing::Scope)?;
            Some(s.targets.iter().map(String::as_str).collect())
        }
    };
    let offsets = target_offsets(result);
    let parts: Vec<(&TargetResult, u32)> = result
        .targets
        .iter()
        .filter(|t| names.as_ref().is_none_or(|n| n.contains(&t.name.as_str())))
        .filter(|t| rule.tags.matches(&t.tags))
        .map(|t| (t, offsets.get(t.name.as_str()).copied().unwrap_or(0)))
        .collect();
    if parts.is_empty() {
        return Err(Missing::Tags);
    }
    let duration_s = match &rule.scope {
        RuleScope::Scenario(name) => scenario(result, name).map_or(0.0, |s| s.duration_s),
        _ => result.duration_s,
    };
    let name = format!("{}{}", rule.scope.name(), rule.tags);
    let mut sum = crate::result::merge::sum_targets(&name, &parts, duration_s)
        .map_err(|e| Missing::Unreadable(e.to_string()))?;
    let series = std::mem::take(&mut sum.time_series);
    Ok(Scoped {
        target: Cow::Owned(sum),
        series: (!series.is_empty()).then_some(Cow::Owned(series)),
    })
}

fn target<'a>(result: &'a RunResult, name: &str) -> Option<&'a TargetResult> {
    result.targets.iter().find(|t| t.name == name)
}

fn scenario<'a>(result: &'a RunResult, name: &str) -> Option<&'a ScenarioResult> {
    result.scenarios.iter().find(|s| s.name == name)
}

/// Where a scenario's second 0 falls on the run's clock: its start after the earliest
/// scenario's, in whole seconds (rounded).
fn offset_s(result: &RunResult, scenario: &ScenarioResult) -> u32 {
    let earliest = result
        .scenarios
        .iter()
        .map(|s| s.start_time_s)
        .fold(f64::INFINITY, f64::min);
    (scenario.start_time_s - earliest).max(0.0).round() as u32
}

/// Each target's offset on the run's clock: its scenario's; targets of no scenario (the
/// short form) are left out (offset 0).
fn target_offsets(result: &RunResult) -> BTreeMap<&str, u32> {
    result
        .scenarios
        .iter()
        .flat_map(|s| {
            let offset = offset_s(result, s);
            s.targets.iter().map(move |t| (t.as_str(), offset))
        })
        .collect()
}

/// The scope in words, with its selector: `the whole run`, `target `a``, `the targets of the
/// whole run tagged {kind:write}`.
pub(super) fn scope_words(rule: &RegressionRule) -> String {
    let place = place(&rule.scope);
    if rule.tags.is_empty() {
        place
    } else {
        format!("the targets of {place} tagged {}", rule.tags)
    }
}

/// `the whole run`, or `target `a`` (scenario, flow).
fn place(scope: &RuleScope) -> String {
    match scope {
        RuleScope::Total => "the whole run".to_string(),
        scope => format!("{} `{}`", scope.kind(), scope.name()),
    }
}

/// Why a rule is not tested when its scope is missing from a result: `missing[0]` the
/// baseline's (`None`: it has it), `missing[1]` the current run's.
pub(super) fn missing_reason(rule: &RegressionRule, missing: [Option<&Missing>; 2]) -> String {
    let (kind, name) = (rule.scope.kind(), rule.scope.name());
    let which = ["the baseline result", "the current result"];
    if let Some(why) = missing.iter().flatten().find_map(|m| match m {
        Missing::Unreadable(why) => Some(why),
        _ => None,
    }) {
        return format!("the targets tagged {} cannot be summed: {why}", rule.tags);
    }
    match missing {
        [Some(Missing::Scope), Some(Missing::Scope)] => {
            format!("neither result has the {kind} `{name}`")
        }
        [Some(Missing::Tags), Some(Missing::Tags)] => format!(
            "no target of {} in either result carries the tags {}: the selector matches \
             nothing",
            place(&rule.scope),
            rule.tags
        ),
        [Some(Missing::Scope), _] | [_, Some(Missing::Scope)] => {
            let side = usize::from(missing[0] != Some(&Missing::Scope));
            format!("{} has no {kind} `{name}`", which[side])
        }
        [Some(_), _] | [_, Some(_)] => {
            let side = usize::from(missing[0].is_none());
            format!(
                "{} has no target carrying the tags {} in {}",
                which[side],
                rule.tags,
                place(&rule.scope)
            )
        }
        [None, None] => "no responses to measure in one of the runs".to_string(),
    }
}
