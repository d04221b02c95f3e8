//! The verdicts on the plan's SLO thresholds: measured on the run's stats, or taken from the
//! window watch for thresholds with a window, and failed for the one that aborted the run.
//! The whole run's `errors` thresholds (but those with a window) count the measured stages'
//! dropped arrivals (every in-flight slot busy) as failed requests, and say how many
//! (`SloVerdict::dropped`).

use super::SloVerdict;
use crate::measure::{Measures, TargetStats};
use crate::plan::Plan;
use crate::plan::threshold::{Metric, Scope, Threshold};
use crate::run::RunOutput;

/// Every SLO threshold's verdict, in the plan's order; `total` is the targets' stats merged,
/// measured over `elapsed_s` seconds.
pub(super) fn verdicts(
    plan: &Plan,
    output: &RunOutput,
    total: &TargetStats,
    elapsed_s: f64,
) -> Vec<SloVerdict> {
    let dropped = measured_drops(plan, output);
    plan.slo
        .iter()
        .enumerate()
        .map(|(i, threshold)| {
            let (scope, measures) = match threshold.scope {
                Scope::Total if threshold.metric == Metric::Errors => (
                    "total".to_string(),
                    Measures::of(total, elapsed_s).with_dropped(dropped),
                ),
                Scope::Total => ("total".to_string(), Measures::of(total, elapsed_s)),
                Scope::Target(i) => (
                    plan.targets[i].name.clone(),
                    Measures::of(&output.targets[i], elapsed_s),
                ),
                Scope::Flow(i) => (
                    plan.flows[i].name.clone(),
                    output.flows[i].measures(elapsed_s),
                ),
                // Judged on the merged result of the scenarios (issue 34, `result/`).
                Scope::Scenario(i) => (plan.scenarios[i].name.clone(), Measures::of(total, 0.0)),
            };
            let mut verdict = verdict(threshold, scope, &measures);
            if threshold.scope == Scope::Total && threshold.metric == Metric::Errors {
                verdict.dropped = dropped;
            }
            if let Some(window) = output.windows.get(i).and_then(|w| w.as_ref()) {
                // The window watch judges the seconds' responses and errors, without drops.
                verdict.measured = window.measured;
                verdict.passed = window.passed;
                verdict.dropped = 0;
                verdict.window_s = threshold.window_s;
                verdict.failed_window_start_s = window.failed_start_s;
            }
            if output.aborted_by == Some(i) {
                verdict.passed = false;
                verdict.aborted_run = true;
            }
            verdict
        })
        .collect()
}

/// Judges `threshold` on `measures`. A latency threshold with no responses to measure fails,
/// and so does the default `errors` threshold when no request ended (its rate is then not
/// measured: a run that got no response does not pass).
fn verdict(threshold: &Threshold, scope: String, measures: &Measures) -> SloVerdict {
    let (mut measured, unit) = measures.measure(threshold);
    if threshold.default && measures.requests == 0 {
        measured = None;
    }
    SloVerdict {
        scope,
        metric: threshold.metric,
        threshold: threshold.expression.clone(),
        passed: measured.is_some_and(|m| threshold.passes(m)),
        measured,
        unit: unit.to_string(),
        limit: threshold.limit,
        window_s: None,
        failed_window_start_s: None,
        aborted_run: false,
        default: threshold.default,
        dropped: 0,
        scope_kind: Some(match threshold.scope {
            Scope::Total => crate::plan::regression::ScopeKind::Total,
            Scope::Target(_) => crate::plan::regression::ScopeKind::Target,
            Scope::Flow(_) => crate::plan::regression::ScopeKind::Flow,
            Scope::Scenario(_) => crate::plan::regression::ScopeKind::Scenario,
        }),
        tags: threshold.tags.to_map(),
        severity: threshold.severity,
    }
}

/// Arrivals dropped in the measured (not warmup) stages: due requests never sent because
/// every in-flight slot was busy.
fn measured_drops(plan: &Plan, output: &RunOutput) -> u64 {
    plan.load
        .stages
        .iter()
        .zip(&output.stages)
        .filter(|(stage, _)| !stage.warmup)
        .map(|(_, stats)| stats.dropped)
        .sum()
}
