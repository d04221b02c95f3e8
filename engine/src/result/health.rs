//! The load generator's health: per stage, the planned load against the achieved, and the
//! problems that make a measurement invalid (the numbers then measure the generator).

use super::build::summary;
use super::{Health, StageHealth};
use crate::plan::{Model, Plan, Stop};
use crate::run::RunOutput;

/// An open-model stage whose achieved arrival rate falls short of its target by more than this
/// fraction makes the measurement invalid.
pub(crate) const RATE_TOLERANCE: f64 = 0.05;
/// A stage that dropped more than this share of its due requests makes the measurement
/// invalid: the planned load was not applied.
pub(crate) const MAX_DROPPED_SHARE: f64 = 0.001;
/// A stage whose requests started later than this after they were due (p99, microseconds)
/// makes the measurement invalid.
pub(crate) const MAX_LATENESS_P99_US: u64 = crate::measure::LATE_US;
/// A stage in which loadgate used more than this share of all CPUs makes the measurement
/// invalid: the generator was the bottleneck.
pub(crate) const MAX_CLIENT_CPU_SHARE: f64 = 0.9;
/// Stages shorter than this (seconds, as run) are not judged: too short to say.
pub(crate) const MIN_JUDGED_STAGE_S: f64 = 1.0;

/// Judges the generator's health stage by stage (see [`RATE_TOLERANCE`],
/// [`MAX_LATENESS_P99_US`], [`MAX_CLIENT_CPU_SHARE`]).
/// `judge_lateness` false leaves [`MAX_LATENESS_P99_US`] out (`loadgate ab` judges lateness
/// per epoch).
pub(super) fn health(plan: &Plan, output: &RunOutput, cpus: usize, judge_lateness: bool) -> Health {
    let load = &plan.load;
    let run_s = load.warmup().as_secs_f64() + output.elapsed.as_secs_f64();
    let stop_is_duration = matches!(load.stop, Stop::Duration(_));
    let ended_early = output.interrupted || output.aborted_by.is_some();
    let mut problems = Vec::new();
    let mut stage_start = 0.0;
    let stages = load
        .stages
        .iter()
        .zip(&output.stages)
        .enumerate()
        .map(|(i, (stage, stats))| {
            let planned = stage.duration.map(|d| d.as_secs_f64());
            // A stage lasts as planned, unless the run ended early (count mode, Ctrl-C).
            let length = (run_s - stage_start).max(0.0);
            let length = match planned {
                Some(p) if !ended_early && stop_is_duration => p,
                Some(p) => length.min(p),
                None => length,
            };
            stage_start += planned.unwrap_or(0.0);
            let per_s = |x: f64| if length > 0.0 { x / length } else { 0.0 };
            let cpu_s = output.stage_cpu_s.get(i).copied().unwrap_or(0.0);
            let lateness = summary(&stats.lateness_us);
            let health = StageHealth {
                warmup: stage.warmup,
                duration_s: planned,
                level_from: stage.from,
                level_to: stage.to,
                level_unit: match load.model {
                    Model::Closed => "connections",
                    Model::Open => "requests/s",
                }
                .to_string(),
                sent: stats.sent,
                dropped: stats.dropped,
                achieved_rate: per_s(stats.sent as f64),
                achieved_in_flight: per_s(stats.busy_us as f64 / 1e6),
                lateness_us: lateness.clone(),
                client_cpu_s: cpu_s,
            };
            if !stage.warmup && length >= MIN_JUDGED_STAGE_S && !ended_early {
                let name = format!("stage {}", i + 1);
                let mean_target = if planned.is_some() {
                    (stage.from + stage.to) / 2.0
                } else {
                    stage.to
                };
                let due = stats.sent + stats.dropped;
                if stats.dropped as f64 > due as f64 * MAX_DROPPED_SHARE {
                    problems.push(format!(
                        "{name}: {} of {due} requests were dropped: every in-flight slot was busy (raise `max_in_flight`)",
                        stats.dropped
                    ));
                } else if load.model == Model::Open
                    && health.achieved_rate < mean_target * (1.0 - RATE_TOLERANCE)
                {
                    problems.push(format!(
                        "{name}: sent {:.1} requests/s of the planned {mean_target:.1}/s ({} dropped: raise `max_in_flight`, or the generator is too small)",
                        health.achieved_rate, stats.dropped
                    ));
                }
                if let Some(l) = &lateness
                    && judge_lateness
                    && l.p99_us > MAX_LATENESS_P99_US
                {
                    problems.push(format!(
                        "{name}: requests started up to {:.1} ms late (p99), more than {} ms: the generator could not keep to the schedule",
                        l.p99_us as f64 / 1e3,
                        MAX_LATENESS_P99_US / 1000
                    ));
                }
                let share = per_s(cpu_s) / cpus as f64;
                if share > MAX_CLIENT_CPU_SHARE {
                    problems.push(format!(
                        "{name}: loadgate used {:.0}% of all {cpus} CPUs: the generator was the bottleneck",
                        share * 100.0
                    ));
                }
            }
            health
        })
        .collect();
    Health {
        valid: problems.is_empty(),
        problems,
        stages,
    }
}
