//! The result of a run of scenarios (`spec.scenarios`): each scenario ran as a plan of its
//! own at the same time as the others, on one clock, starting at its `start_time`; each
//! scenario's output is built as a run's ([`super::build`]) into its [`ScenarioResult`], and
//! the whole run is put together from them:
//!
//! - `targets` and `flows` in the whole plan's order, each from its scenario's result; a
//!   target's seconds (`time_series`) count from the whole run's `started_at`, like the run's;
//! - `total`: every scenario's requests together, their stats merged as a run merges its
//!   targets' (counters summed, histograms added: exact, the service time included), rates
//!   over the whole window; `time_series`: the scenarios' seconds summed
//!   ([`super::merge::sum_targets`]), each scenario's second `s` at the run's second `s` + its
//!   start in whole seconds;
//! - `started_at`: the earliest scenario's start of measuring; `duration_s`: from then to the
//!   last scenario's end of measuring;
//! - `health`: valid when every scenario's is, with every scenario's problems and notes
//!   (`scenario NAME: ...`) and stages, in order;
//! - `load`: a summary of the scenarios' ([`load_summary`]);
//! - `slo`: every threshold of the run judged on the whole result (`slo.rs`): a scenario's on
//!   its requests, its window and abort verdicts taken from its own run's watch; the whole
//!   run's windows judged on the whole run's seconds once all have ended. A
//!   [`ScenarioResult`] has no verdicts of its own.

use std::time::{Duration, SystemTime};

use super::build::{build, slow_us, target_result};
use super::health_record::Health;
use super::slo::{self, Measured, Whole};
use super::{
    LoadInfo, RecordedRule, RunResult, ScenarioResult, TargetResult, TimeSample, decode_histogram,
    merge::sum_targets,
};
use crate::measure::{FlowStats, SpanStats, TargetStats, Watch, WindowVerdict};
use crate::plan::threshold::Scope;
use crate::plan::{Plan, ScenarioPlan};
use crate::run::RunOutput;

/// Builds the result of a run of `plan`'s scenarios from their outputs (`outputs[k]`: the run
/// of `plan.scenarios[k].plan`), as the module documentation says. Outputs beyond the
/// scenarios are ignored; a scenario without an output is left out (its targets count
/// nothing).
pub fn build_scenarios(plan: &Plan, outputs: &[RunOutput]) -> RunResult {
    let parts: Vec<(&ScenarioPlan, &RunOutput)> = plan.scenarios.iter().zip(outputs).collect();
    let subs: Vec<RunResult> = parts.iter().map(|(sp, o)| build(&sp.plan, o)).collect();
    let earliest = outputs
        .iter()
        .map(|o| o.started_at)
        .min()
        .unwrap_or(SystemTime::UNIX_EPOCH);
    let starts_s: Vec<f64> = parts
        .iter()
        .map(|(_, o)| since(earliest, o.started_at).as_secs_f64())
        .collect();
    let offsets_s: Vec<u32> = starts_s.iter().map(|s| s.round() as u32).collect();
    let duration_s = subs
        .iter()
        .zip(&starts_s)
        .map(|(sub, start)| start + sub.duration_s)
        .fold(0.0, f64::max);

    let scenario_stats: Vec<TargetStats> = parts.iter().map(|(_, o)| sum(&o.targets)).collect();
    let stats = sum(&scenario_stats);
    let time_series = whole_series(&subs, &offsets_s, duration_s);
    let total = target_result("total", &stats, duration_s, slow_us(plan));
    let whole = Totals {
        stats: &stats,
        scenarios: &scenario_stats,
        duration_s,
        time_series: &time_series,
    };
    let verdicts = verdicts(plan, &parts, &whole);
    let first = subs.iter().zip(&starts_s).min_by(|a, b| a.1.total_cmp(b.1));

    RunResult {
        result_version: super::RESULT_VERSION,
        spec: super::SpecInfo {
            name: plan.name.clone(),
            hash: plan.spec_hash.clone(),
        },
        started_at: humantime::format_rfc3339_micros(earliest).to_string(),
        planned_start_at: plan.start_at.map(|at| {
            let first = parts
                .iter()
                .map(|(sp, _)| sp.start_time + sp.plan.load.warmup());
            humantime::format_rfc3339_micros(at + first.min().unwrap_or_default()).to_string()
        }),
        shard: None,
        merged: None,
        duration_s,
        interrupted: outputs.iter().any(|o| o.interrupted),
        environment: environment(&subs),
        source: first.and_then(|(sub, _)| sub.source.clone()),
        load: load_summary(&subs, &starts_s),
        health: health(plan, &subs),
        targets: targets(plan, &parts, &subs, &offsets_s),
        flows: flows(plan, &parts, &subs),
        total,
        time_series,
        passed: slo::passed(&verdicts),
        slo: verdicts,
        regression_rules: Some(
            plan.regression
                .iter()
                .map(RecordedRule::from_rule)
                .collect(),
        ),
        regression_alpha: plan.regression_alpha,
        scenarios: parts
            .iter()
            .zip(subs)
            .zip(&starts_s)
            .map(|(((sp, o), sub), &start)| scenario_result(sp, o, sub, start))
            .collect(),
    }
}

/// How long after `earliest` the time `at` is (zero when before).
fn since(earliest: SystemTime, at: SystemTime) -> Duration {
    at.duration_since(earliest).unwrap_or_default()
}

/// `stats` merged into one.
fn sum(stats: &[TargetStats]) -> TargetStats {
    let mut sum = TargetStats::default();
    for s in stats {
        sum.merge(s);
    }
    sum
}

/// The whole run's seconds: the scenarios' (`subs`), each from its start (`offsets_s`),
/// summed ([`sum_targets`]).
fn whole_series(subs: &[RunResult], offsets_s: &[u32], duration_s: f64) -> Vec<TimeSample> {
    let totals: Vec<TargetResult> = subs
        .iter()
        .map(|sub| TargetResult {
            time_series: sub.time_series.clone(),
            ..sub.total.clone()
        })
        .collect();
    let summed: Vec<(&TargetResult, u32)> = totals.iter().zip(offsets_s.iter().copied()).collect();
    // The histograms summed were encoded by this process a moment ago: they decode.
    sum_targets("total", &summed, duration_s)
        .map(|t| t.time_series)
        .unwrap_or_default()
}

/// The whole run's requests together: its stats, each scenario's, its window and seconds.
struct Totals<'a> {
    stats: &'a TargetStats,
    scenarios: &'a [TargetStats],
    duration_s: f64,
    time_series: &'a [TimeSample],
}

/// Every SLO threshold of the whole plan judged (`slo.rs`) on the scenarios' runs (`parts`)
/// and the whole run's totals.
fn verdicts(
    plan: &Plan,
    parts: &[(&ScenarioPlan, &RunOutput)],
    whole: &Totals<'_>,
) -> Vec<super::SloVerdict> {
    let (windows, aborted_by) = watched(plan, parts, whole.time_series);
    let empty_target = TargetStats::default();
    let empty_flow = FlowStats::default();
    let measured = Measured {
        targets: placed(plan.targets.len(), parts, |sp| &sp.targets, |o| &o.targets)
            .into_iter()
            .map(|t| t.unwrap_or((&empty_target, 0.0)))
            .collect(),
        flows: placed(plan.flows.len(), parts, |sp| &sp.flows, |o| &o.flows)
            .into_iter()
            .map(|f| f.unwrap_or((&empty_flow, 0.0)))
            .collect(),
        total: Whole {
            stats: whole.stats,
            elapsed_s: whole.duration_s,
            dropped: parts
                .iter()
                .map(|(sp, o)| slo::measured_drops(&sp.plan, o))
                .sum(),
            targets: (0..plan.targets.len()).collect(),
        },
        scenarios: parts
            .iter()
            .zip(whole.scenarios)
            .map(|((sp, o), stats)| Whole {
                stats,
                elapsed_s: o.elapsed.as_secs_f64(),
                dropped: slo::measured_drops(&sp.plan, o),
                targets: sp.targets.clone(),
            })
            .collect(),
        windows,
        aborted_by,
    };
    slo::verdicts(plan, &measured)
}

/// Per item of the whole plan (`count` of them): the scenario's measure of it (`of(output)[l]`
/// for the whole plan's `index(sp)[l]`) and the seconds its scenario measured; `None` for an
/// item no scenario ran.
fn placed<'a, T>(
    count: usize,
    parts: &[(&ScenarioPlan, &'a RunOutput)],
    index: fn(&ScenarioPlan) -> &Vec<usize>,
    of: fn(&'a RunOutput) -> &'a Vec<T>,
) -> Vec<Option<(&'a T, f64)>> {
    let mut placed: Vec<Option<(&T, f64)>> = (0..count).map(|_| None).collect();
    for (sp, o) in parts {
        for (&whole, item) in index(sp).iter().zip(of(o)) {
            if let Some(slot) = placed.get_mut(whole) {
                *slot = Some((item, o.elapsed.as_secs_f64()));
            }
        }
    }
    placed
}

/// The whole run's targets, in the plan's order, from their scenarios' results: tags from the
/// whole plan, seconds moved to the whole run's (`offsets_s[k]`: scenario `k`'s start).
fn targets(
    plan: &Plan,
    parts: &[(&ScenarioPlan, &RunOutput)],
    subs: &[RunResult],
    offsets_s: &[u32],
) -> Vec<TargetResult> {
    let mut placed: Vec<Option<TargetResult>> = vec![None; plan.targets.len()];
    for (((sp, _), sub), &offset) in parts.iter().zip(subs).zip(offsets_s) {
        for (&whole, result) in sp.targets.iter().zip(&sub.targets) {
            let mut result = result.clone();
            for second in &mut result.time_series {
                second.second = second.second.saturating_add(offset);
            }
            if let Some(slot) = placed.get_mut(whole) {
                *slot = Some(result);
            }
        }
    }
    placed
        .into_iter()
        .zip(&plan.targets)
        .map(|(result, target)| TargetResult {
            tags: target.tags.clone(),
            ..result.unwrap_or_else(|| TargetResult {
                name: target.name.clone(),
                ..TargetResult::default()
            })
        })
        .collect()
}

/// The whole run's flows, in the plan's order, from their scenarios' results.
fn flows(
    plan: &Plan,
    parts: &[(&ScenarioPlan, &RunOutput)],
    subs: &[RunResult],
) -> Vec<super::FlowResult> {
    let mut placed = vec![None; plan.flows.len()];
    for ((sp, _), sub) in parts.iter().zip(subs) {
        for (&whole, result) in sp.flows.iter().zip(&sub.flows) {
            if let Some(slot) = placed.get_mut(whole) {
                *slot = Some(result.clone());
            }
        }
    }
    // Every flow belongs to a scenario (validation): one without is left out.
    placed.into_iter().flatten().collect()
}

/// Scenario `sp`'s part of the result, from its own run's (`sub`), started `start_s`
/// seconds after the whole run.
fn scenario_result(
    sp: &ScenarioPlan,
    output: &RunOutput,
    sub: RunResult,
    start_s: f64,
) -> ScenarioResult {
    let iterations = if sub.flows.is_empty() {
        sub.total.requests
    } else {
        output.flows.iter().map(FlowStats::iterations).sum()
    };
    ScenarioResult {
        name: sp.name.clone(),
        executor: sp.executor.name().to_string(),
        start_time_s: start_s,
        tags: sp.tags.clone(),
        load: sub.load,
        duration_s: sub.duration_s,
        total: TargetResult {
            name: sp.name.clone(),
            ..sub.total
        },
        targets: sub.targets.into_iter().map(|t| t.name).collect(),
        flows: sub.flows.into_iter().map(|f| f.name).collect(),
        iterations,
        time_series: sub.time_series,
        health: sub.health,
    }
}

/// The generator's health over the whole run: valid when every scenario's is; each
/// scenario's problems and notes (`scenario NAME: ...`) and stages, in order; the first
/// one's limits (the shared `load.health`).
fn health(plan: &Plan, subs: &[RunResult]) -> Health {
    let named = |f: fn(&Health) -> &Vec<String>| -> Vec<String> {
        plan.scenarios
            .iter()
            .zip(subs)
            .flat_map(|(sp, sub)| {
                f(&sub.health)
                    .iter()
                    .map(move |p| format!("scenario {}: {p}", sp.name))
            })
            .collect()
    };
    Health {
        valid: subs.iter().all(|s| s.health.valid),
        problems: named(|h| &h.problems),
        notes: named(|h| &h.notes),
        limits: subs.first().and_then(|s| s.health.limits),
        stages: subs
            .iter()
            .flat_map(|s| s.health.stages.iter().cloned())
            .collect(),
    }
}

/// This machine and the CPU time used: the scenarios ran in one process, and each measured
/// the process's CPU time over its own window; the whole run's is the most any of them
/// measured (its longest), the smallest UDP buffers any got.
fn environment(subs: &[RunResult]) -> super::Environment {
    let mut environment = subs.first().map_or_else(
        || super::build::environment_with((Duration::ZERO, Duration::ZERO), None),
        |s| s.environment.clone(),
    );
    for sub in subs {
        let e = &sub.environment;
        environment.client_cpu_user_s = environment.client_cpu_user_s.max(e.client_cpu_user_s);
        environment.client_cpu_system_s =
            environment.client_cpu_system_s.max(e.client_cpu_system_s);
        if let Some(b) = e.udp_buffers {
            let into = environment.udp_buffers.get_or_insert(b);
            into.recv_bytes = into.recv_bytes.min(b.recv_bytes);
            into.send_bytes = into.send_bytes.min(b.send_bytes);
            into.limited |= b.limited;
        }
    }
    environment
}

/// The whole run's `load`, a summary of the scenarios' (each is in its `ScenarioResult`):
/// `model` theirs when they share one, else `mixed`; `connections` and `max_in_flight`
/// summed over the closed and the open scenarios (they run at once: the most there can be);
/// `streams` the shared one; `duration_s` from the first scenario's start to the last
/// planned end, when every scenario has a planned duration; `requests` summed when every
/// scenario counts requests; `warmup_s` the first scenario's to start.
fn load_summary(subs: &[RunResult], starts_s: &[f64]) -> LoadInfo {
    let loads: Vec<&LoadInfo> = subs.iter().map(|s| &s.load).collect();
    let model = match loads.first() {
        Some(first) if loads.iter().all(|l| l.model == first.model) => first.model.clone(),
        Some(_) => "mixed".to_string(),
        None => String::new(),
    };
    let sum = |f: fn(&LoadInfo) -> Option<u32>| -> Option<u32> {
        loads
            .iter()
            .filter_map(|l| f(l))
            .reduce(u32::saturating_add)
    };
    let first = starts_s
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map_or(0, |(k, _)| k);
    let ends: Option<Vec<f64>> = loads
        .iter()
        .zip(starts_s)
        .map(|(l, start)| l.duration_s.map(|d| start + d))
        .collect();
    LoadInfo {
        model,
        connections: sum(|l| l.connections),
        max_in_flight: sum(|l| l.max_in_flight),
        streams: loads.first().map_or(1, |l| l.streams),
        duration_s: ends.and_then(|ends| ends.into_iter().reduce(f64::max)),
        requests: loads.iter().map(|l| l.requests).sum(),
        warmup_s: loads.get(first).map_or(0.0, |l| l.warmup_s),
    }
}

/// The window verdicts and the aborting threshold, indexed like the whole plan's `slo`: a
/// scenario's own thresholds (its plan's `slo`) as its run's watch judged them, and the whole
/// run's windows judged now on the whole run's seconds (`time_series`).
fn watched(
    plan: &Plan,
    parts: &[(&ScenarioPlan, &RunOutput)],
    time_series: &[TimeSample],
) -> (Vec<Option<WindowVerdict>>, Option<usize>) {
    let mut windows = whole_windows(plan, time_series);
    let mut aborted_by = None;
    for (k, (sp, output)) in parts.iter().enumerate() {
        let map = slo_map(plan, k, sp);
        for (j, window) in output.windows.iter().enumerate() {
            if let (Some(window), Some(Some(i))) = (window, map.get(j)) {
                windows[*i] = Some(window.clone());
            }
        }
        if let Some(Some(i)) = output.aborted_by.and_then(|j| map.get(j)) {
            aborted_by = aborted_by.or(Some(*i));
        }
    }
    (windows, aborted_by)
}

/// The index in the whole plan's `slo` of each threshold of scenario `k`'s own plan (`sp`):
/// the same threshold with its scope taken to the whole plan (`total` there is scenario `k`,
/// its targets and flows the whole plan's); `None` for one the whole plan does not hold.
fn slo_map(plan: &Plan, k: usize, sp: &ScenarioPlan) -> Vec<Option<usize>> {
    let mut taken = vec![false; plan.slo.len()];
    sp.plan
        .slo
        .iter()
        .map(|threshold| {
            let scope = match threshold.scope {
                Scope::Total => Scope::Scenario(k),
                Scope::Target(i) => Scope::Target(*sp.targets.get(i)?),
                Scope::Flow(i) => Scope::Flow(*sp.flows.get(i)?),
                Scope::Scenario(_) => return None,
            };
            let mut whole = threshold.clone();
            whole.scope = scope;
            let i = (0..plan.slo.len()).find(|&i| !taken[i] && plan.slo[i] == whole)?;
            taken[i] = true;
            Some(i)
        })
        .collect()
}

/// The whole run's window thresholds judged on its seconds (no run watched them: each
/// scenario's watched its own), indexed like the plan's `slo`. A second no scenario measured
/// counts nothing.
fn whole_windows(plan: &Plan, time_series: &[TimeSample]) -> Vec<Option<WindowVerdict>> {
    let mut watch = Watch::new(&plan.slo);
    if watch.is_idle() {
        return vec![None; plan.slo.len()];
    }
    let seconds = time_series.last().map_or(0, |s| s.second + 1);
    let mut samples = time_series.iter().peekable();
    for second in 0..seconds {
        let mut stats = SpanStats::default();
        if let Some(s) = samples.next_if(|s| s.second == second) {
            stats.requests = s.requests.unwrap_or(s.responses);
            stats.responses = s.responses;
            stats.errors = s.errors;
            if let Some(h) = s
                .histogram
                .as_deref()
                .and_then(|h| decode_histogram(h).ok())
            {
                // Both are the run's per-second histograms: they add.
                let _ = stats.latency_us.add(&h);
            }
        }
        // Nothing is stopped now: an `abort_on_fail` of the whole run is judged as a threshold.
        let _ = watch.second(&stats);
    }
    watch.finish()
}

#[cfg(test)]
#[path = "scenarios_tests.rs"]
mod tests;
