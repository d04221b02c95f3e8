//! The verdicts on the plan's SLO thresholds: measured on the run's stats, or taken from the
//! window watch for thresholds with a window, and failed for the one that aborted the run.
//! The same for a run of one load and for a run of scenarios ([`Measured`] holds either).
//!
//! - The whole run's `errors` thresholds (but those with a window or tags) count the measured
//!   stages' dropped arrivals (every in-flight slot busy) as failed requests, and say how many
//!   (`SloVerdict::dropped`); a scenario's, its own.
//! - A threshold with tags (`latency{kind:write}`) is judged on the sum of its scope's
//!   targets whose tags match (the whole run: every target; a scenario: its targets; a
//!   target: itself; a flow: its steps): counters summed and latency histograms added, as
//!   `merge::sum_targets` sums results, exactly. One that selects nothing measures nothing
//!   (`measured` absent) and fails. Dropped arrivals belong to no target: not counted there.
//! - `scenario` scopes are judged on that scenario's requests, over its own measured window.
//! - The run passes when every verdict of severity `fail` passed ([`passed`]); a failed `warn`
//!   verdict is only shown.

use super::SloVerdict;
use crate::measure::{FlowStats, Measures, TargetStats, WindowVerdict};
use crate::plan::Plan;
use crate::plan::regression::ScopeKind;
use crate::plan::threshold::{Metric, Scope, Severity, Threshold};

/// What a run measured, as the verdicts need it: each target and flow of the plan with the
/// window it was measured over, the whole run's and each scenario's requests together, and
/// the window watch's outcome, indexed like the plan's `slo`.
pub(super) struct Measured<'a> {
    /// Per target of the plan, in its order: its stats and the seconds they cover.
    pub(super) targets: Vec<(&'a TargetStats, f64)>,
    /// Per flow of the plan, in its order: its iterations and the seconds they cover.
    pub(super) flows: Vec<(&'a FlowStats, f64)>,
    /// The whole run.
    pub(super) total: Whole<'a>,
    /// Per scenario of the plan, in its order (empty without scenarios).
    pub(super) scenarios: Vec<Whole<'a>>,
    /// The window thresholds' verdicts, indexed like the plan's `slo`.
    pub(super) windows: Vec<Option<WindowVerdict>>,
    /// Index (in the plan's `slo`) of the `abort_on_fail` threshold that stopped the run.
    pub(super) aborted_by: Option<usize>,
}

/// The requests of the whole run, or of one scenario, together.
pub(super) struct Whole<'a> {
    /// Its targets' stats merged.
    pub(super) stats: &'a TargetStats,
    /// Its measured window, seconds.
    pub(super) elapsed_s: f64,
    /// Arrivals dropped in its measured stages (every in-flight slot busy).
    pub(super) dropped: u64,
    /// Its targets: indices into the plan's `targets`.
    pub(super) targets: Vec<usize>,
}

/// Every SLO threshold's verdict, in the plan's order.
pub(super) fn verdicts(plan: &Plan, measured: &Measured<'_>) -> Vec<SloVerdict> {
    plan.slo
        .iter()
        .enumerate()
        .map(|(i, threshold)| {
            let mut verdict = judge(plan, measured, threshold);
            if let Some(window) = measured.windows.get(i).and_then(|w| w.as_ref()) {
                // The window watch judges the seconds' responses and errors, without drops.
                verdict.measured = window.measured;
                verdict.passed = window.passed;
                verdict.dropped = 0;
                verdict.window_s = threshold.window_s;
                verdict.failed_window_start_s = window.failed_start_s;
            }
            if measured.aborted_by == Some(i) {
                verdict.passed = false;
                verdict.aborted_run = true;
            }
            verdict
        })
        .collect()
}

/// Whether the run passed its SLOs: every verdict of severity `fail` passed.
pub(super) fn passed(verdicts: &[SloVerdict]) -> bool {
    verdicts
        .iter()
        .all(|v| v.passed || v.severity == Severity::Warn)
}

/// One threshold's verdict on what was measured (before the window watch's).
fn judge(plan: &Plan, measured: &Measured<'_>, threshold: &Threshold) -> SloVerdict {
    let whole = match threshold.scope {
        Scope::Total => Some(&measured.total),
        Scope::Scenario(k) => measured.scenarios.get(k),
        Scope::Target(_) | Scope::Flow(_) => None,
    };
    let scope = match threshold.scope {
        Scope::Total => "total".to_string(),
        Scope::Target(i) => plan.targets[i].name.clone(),
        Scope::Flow(i) => plan.flows[i].name.clone(),
        Scope::Scenario(k) => plan.scenarios[k].name.clone(),
    };
    if !threshold.tags.is_empty() {
        let candidates: Vec<usize> = match (threshold.scope, whole) {
            (Scope::Target(i), _) => vec![i],
            (Scope::Flow(i), _) => plan.flows[i].steps.iter().map(|s| s.target).collect(),
            (_, Some(whole)) => whole.targets.clone(),
            (_, None) => Vec::new(),
        };
        let elapsed_s = match (threshold.scope, whole) {
            (_, Some(whole)) => whole.elapsed_s,
            (_, None) => candidates.first().map_or(0.0, |&i| measured.targets[i].1),
        };
        let mut sum = TargetStats::default();
        let mut selected = 0;
        for i in candidates {
            if threshold.tags.matches(&plan.targets[i].tags) {
                sum.merge(measured.targets[i].0);
                selected += 1;
            }
        }
        let mut verdict = verdict(threshold, scope, &Measures::of(&sum, elapsed_s));
        if selected == 0 {
            verdict.measured = None;
            verdict.passed = false;
        }
        return verdict;
    }
    match (threshold.scope, whole) {
        (Scope::Target(i), _) => {
            let (stats, elapsed_s) = measured.targets[i];
            verdict(threshold, scope, &Measures::of(stats, elapsed_s))
        }
        (Scope::Flow(i), _) => {
            let (stats, elapsed_s) = measured.flows[i];
            verdict(threshold, scope, &stats.measures(elapsed_s))
        }
        (_, Some(whole)) if threshold.metric == Metric::Errors => {
            let measures = Measures::of(whole.stats, whole.elapsed_s).with_dropped(whole.dropped);
            let mut verdict = verdict(threshold, scope, &measures);
            verdict.dropped = whole.dropped;
            verdict
        }
        (_, Some(whole)) => verdict(
            threshold,
            scope,
            &Measures::of(whole.stats, whole.elapsed_s),
        ),
        // A scenario the result does not hold: nothing measured, failed.
        (_, None) => verdict(
            threshold,
            scope,
            &Measures::of(&TargetStats::default(), 0.0),
        ),
    }
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
            Scope::Total => ScopeKind::Total,
            Scope::Target(_) => ScopeKind::Target,
            Scope::Flow(_) => ScopeKind::Flow,
            Scope::Scenario(_) => ScopeKind::Scenario,
        }),
        tags: threshold.tags.to_map(),
        severity: threshold.severity,
    }
}

/// Arrivals dropped in the measured (not warmup) stages of a run of `plan`: due requests
/// never sent because every in-flight slot was busy.
pub(super) fn measured_drops(plan: &Plan, output: &crate::run::RunOutput) -> u64 {
    plan.load
        .stages
        .iter()
        .zip(&output.stages)
        .filter(|(stage, _)| !stage.warmup)
        .map(|(_, stats)| stats.dropped)
        .sum()
}
