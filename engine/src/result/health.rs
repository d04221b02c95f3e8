//! The load generator's health: per stage, the planned load against the achieved, and the
//! problems that make a measurement invalid (the numbers then measure the generator).

use super::build::summary;
use super::{Health, StageHealth};
use crate::measure::StageStats;
use crate::plan::{LoadPlan, Model, Plan, Stop};
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

/// A closed-model stage in which the connections open fell short of its level by more than
/// this fraction, because loadgate was out of file descriptors, makes the measurement invalid:
/// the planned concurrency was not applied.
pub(crate) const CONCURRENCY_TOLERANCE: f64 = 0.05;

/// Judges the generator's health stage by stage (see [`RATE_TOLERANCE`],
/// [`MAX_DROPPED_SHARE`], [`CONCURRENCY_TOLERANCE`], [`MAX_LATENESS_P99_US`],
/// [`MAX_CLIENT_CPU_SHARE`]). `judge_lateness` false leaves [`MAX_LATENESS_P99_US`] out
/// (`loadgate ab` judges lateness per epoch).
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
                lateness_us: summary(&stats.lateness_us),
                client_cpu_s: cpu_s,
            };
            if !stage.warmup && length >= MIN_JUDGED_STAGE_S && !ended_early {
                let judged = Judged {
                    name: format!("stage {}", i + 1),
                    // The level the stage asks for on average (a count-mode run's last stage
                    // holds its level).
                    mean_target: if planned.is_some() {
                        (stage.from + stage.to) / 2.0
                    } else {
                        stage.to
                    },
                    length,
                    cpus,
                    cpu_share: per_s(cpu_s) / cpus as f64,
                    judge_lateness,
                };
                problems.extend(judge(load, stats, &health, &judged));
            }
            health
        })
        .collect();
    problems.extend(stream_limits(plan, output));
    Health {
        valid: problems.is_empty(),
        problems,
        stages,
    }
}

/// The targets whose HTTP/2 server allowed fewer concurrent streams per connection (its
/// `SETTINGS_MAX_CONCURRENT_STREAMS`) than `load.streams` plans: the planned concurrency was
/// not applied, and the requests held back waited for a stream (the `stream wait` phase,
/// part of their latency), so the latency measures the cap rather than the server.
fn stream_limits(plan: &Plan, output: &RunOutput) -> Vec<String> {
    let planned = plan.load.streams;
    plan.targets
        .iter()
        .zip(&output.targets)
        .filter_map(|(target, stats)| {
            let allowed = stats.phases.peer_max_streams.filter(|&n| n < planned)?;
            let w = &stats.phases.stream_wait_us;
            let waited = if w.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} requests waited for a free stream, {} at the median (the `stream wait` \
                     phase, in their latency)",
                    w.len(),
                    crate::units::format_duration_us(w.value_at_quantile(0.5) as f64)
                )
            };
            let connections = match plan.load.model {
                Model::Closed => format!(
                    ", {} requests at once on {} connections instead of {}",
                    u64::from(allowed) * u64::from(plan.load.connections),
                    plan.load.connections,
                    u64::from(planned) * u64::from(plan.load.connections)
                ),
                Model::Open => String::new(),
            };
            Some(format!(
                "target `{}`: the server allows {allowed} concurrent stream{} per HTTP/2 \
                 connection (SETTINGS_MAX_CONCURRENT_STREAMS), fewer than the {planned} planned \
                 (`load.streams`): the planned load was not applied (at most {allowed} in \
                 flight per connection{connections}){waited}. Set `load.streams` to {allowed} \
                 or less and raise `connections`",
                target.name,
                if allowed == 1 { "" } else { "s" }
            ))
        })
        .collect()
}

/// A measured stage as it is judged.
struct Judged {
    /// `stage N`.
    name: String,
    /// The stage's mean level: connections (closed model) or arrivals per second (open).
    mean_target: f64,
    /// The stage's length as run, seconds.
    length: f64,
    /// CPUs of the machine.
    cpus: usize,
    /// Share of all CPUs loadgate used in the stage, a fraction.
    cpu_share: f64,
    judge_lateness: bool,
}

/// The problems of one measured stage: dropped requests (the server's slowness or the
/// generator's), a rate or concurrency shortfall, lateness, a saturated CPU.
fn judge(load: &LoadPlan, stats: &StageStats, health: &StageHealth, stage: &Judged) -> Vec<String> {
    let name = &stage.name;
    let mut problems = Vec::new();
    let late_p99_us = health
        .lateness_us
        .as_ref()
        .filter(|_| stage.judge_lateness)
        .map_or(0, |l| l.p99_us);
    let late = late_p99_us > MAX_LATENESS_P99_US;
    let saturated = stage.cpu_share > MAX_CLIENT_CPU_SHARE;
    let due = stats.sent + stats.dropped;
    if stats.dropped as f64 > due as f64 * MAX_DROPPED_SHARE {
        problems.push(dropped(load, stats, stage, due, late || saturated));
    } else if load.model == Model::Open
        && health.achieved_rate < stage.mean_target * (1.0 - RATE_TOLERANCE)
    {
        problems.push(format!(
            "{name}: sent {:.1} requests/s of the planned {:.1}/s ({} dropped: raise `max_in_flight`, or the generator is too small)",
            health.achieved_rate, stage.mean_target, stats.dropped
        ));
    }
    if stats.fd_limit > 0 {
        match load.model {
            Model::Closed => {
                // Virtual users that could not run, on average, in connections.
                let short = stats.fd_wait_us as f64 / 1e6 / stage.length / f64::from(load.streams);
                if short > stage.mean_target * CONCURRENCY_TOLERANCE {
                    problems.push(format!(
                        "{name}: about {:.0} of the planned {:.0} connections were open: {} connects failed because loadgate was out of file descriptors (`fd_limit`): raise its open-files limit (`ulimit -n`)",
                        (stage.mean_target - short).max(0.0),
                        stage.mean_target,
                        stats.fd_limit
                    ));
                }
            }
            Model::Open if stats.fd_limit as f64 > due as f64 * MAX_DROPPED_SHARE => {
                problems.push(format!(
                    "{name}: {} of {due} requests could not open a connection because loadgate was out of file descriptors (`fd_limit`): raise its open-files limit (`ulimit -n`)",
                    stats.fd_limit
                ));
            }
            Model::Open => {}
        }
    }
    if late {
        problems.push(format!(
            "{name}: requests started up to {:.1} ms late (p99), more than {} ms: the generator could not keep to the schedule",
            late_p99_us as f64 / 1e3,
            MAX_LATENESS_P99_US / 1000
        ));
    }
    if saturated {
        problems.push(format!(
            "{name}: loadgate used {:.0}% of all {} CPUs: the generator was the bottleneck",
            stage.cpu_share * 100.0,
            stage.cpus
        ));
    }
    problems
}

/// Why a stage dropped requests: every in-flight slot (open model) or paced connection
/// (closed model) was busy when they fell due. Unless the generator itself fell behind
/// (`generator_behind`: it started requests late or saturated its CPUs), what kept them busy
/// was waiting on the server: its slowness, named as such, with the mean service time and, in
/// the open model, the slots the rate would need (Little's law: in flight = rate × time in
/// flight).
fn dropped(
    load: &LoadPlan,
    stats: &StageStats,
    stage: &Judged,
    due: u64,
    generator_behind: bool,
) -> String {
    let head = format!(
        "{}: {} of {due} requests were dropped",
        stage.name, stats.dropped
    );
    if generator_behind {
        return format!(
            "{head}: every in-flight slot was busy while the generator fell behind (below): \
             raise `max_in_flight`, or the generator is too small"
        );
    }
    // Seconds per request sent, in flight.
    let service_s = stats.busy_us as f64 / 1e6 / stats.sent.max(1) as f64;
    match load.model {
        Model::Open => format!(
            "{head}: all {} in-flight slots were waiting on the server, which took {:.0} ms per \
             request on average ({:.0} slots needed at {:.1} requests/s): the server's \
             slowness, not the generator's. The dropped requests' latency and errors are not \
             measured: raise `max_in_flight` to measure them",
            load.max_in_flight,
            service_s * 1e3,
            (stage.mean_target * service_s).ceil(),
            stage.mean_target
        ),
        Model::Closed => format!(
            "{head}: the paced connections were still waiting on the server when their \
             requests fell due (it took {:.0} ms per request on average, {:.0} ms apart on a \
             connection's schedule): the server's slowness, not the generator's. The dropped \
             requests are not measured: raise `connections` or lower `pacing` to measure them",
            service_s * 1e3,
            load.pacing.map_or(0.0, |rate| 1e3 / rate)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Stage;

    fn load(model: Model) -> LoadPlan {
        LoadPlan {
            model,
            stages: vec![Stage {
                duration: Some(std::time::Duration::from_secs(10)),
                from: 100.0,
                to: 100.0,
                warmup: false,
            }],
            stop: Stop::Duration(std::time::Duration::from_secs(10)),
            connections: if model == Model::Closed { 100 } else { 0 },
            max_in_flight: if model == Model::Open { 20 } else { 0 },
            pacing: None,
            think_time: None,
            streams: 1,
            threads: None,
            pre_connect: true,
            warmup_requests: 0,
        }
    }

    fn stage_health(stats: &StageStats) -> StageHealth {
        StageHealth {
            warmup: false,
            duration_s: Some(10.0),
            level_from: 100.0,
            level_to: 100.0,
            level_unit: String::new(),
            sent: stats.sent,
            dropped: stats.dropped,
            achieved_rate: stats.sent as f64 / 10.0,
            achieved_in_flight: stats.busy_us as f64 / 1e7,
            lateness_us: None,
            client_cpu_s: 0.0,
        }
    }

    fn judged(cpu_share: f64) -> Judged {
        Judged {
            name: "stage 1".to_string(),
            mean_target: 100.0,
            length: 10.0,
            cpus: 2,
            cpu_share,
            judge_lateness: true,
        }
    }

    #[test]
    fn drops_are_blamed_on_the_server_unless_the_generator_fell_behind() {
        // 20 slots, each 1 s per request: 200 sent of the 1000 due in 10 s.
        let stats = StageStats {
            sent: 200,
            dropped: 800,
            busy_us: 200_000_000,
            ..StageStats::default()
        };
        let load = load(Model::Open);
        let problems = judge(&load, &stats, &stage_health(&stats), &judged(0.1));
        assert_eq!(
            problems,
            [
                "stage 1: 800 of 1000 requests were dropped: all 20 in-flight slots were waiting \
              on the server, which took 1000 ms per request on average (100 slots needed at \
              100.0 requests/s): the server's slowness, not the generator's. The dropped \
              requests' latency and errors are not measured: raise `max_in_flight` to measure \
              them"
            ]
        );
        let problems = judge(&load, &stats, &stage_health(&stats), &judged(0.95));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].contains("while the generator fell behind"));
        assert!(problems[1].contains("the generator was the bottleneck"));
    }

    #[test]
    fn connections_lost_to_the_file_limit_are_a_shortfall() {
        // 100 connections for 10 s, of which 60 could not open one for the whole stage.
        let stats = StageStats {
            sent: 50_000,
            fd_limit: 600,
            fd_wait_us: 600_000_000,
            ..StageStats::default()
        };
        let problems = judge(
            &load(Model::Closed),
            &stats,
            &stage_health(&stats),
            &judged(0.1),
        );
        assert_eq!(
            problems,
            [
                "stage 1: about 40 of the planned 100 connections were open: 600 connects \
              failed because loadgate was out of file descriptors (`fd_limit`): raise its \
              open-files limit (`ulimit -n`)"
            ]
        );
        // A few, soon recovered: within the tolerance.
        let stats = StageStats {
            fd_limit: 3,
            fd_wait_us: 3_000,
            ..stats
        };
        let problems = judge(
            &load(Model::Closed),
            &stats,
            &stage_health(&stats),
            &judged(0.1),
        );
        assert!(problems.is_empty(), "{problems:?}");
    }
}
