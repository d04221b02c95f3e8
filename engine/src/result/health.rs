//! The load generator's health: per stage, the planned load against the achieved, the
//! generator's own shortfalls that make a measurement invalid (the numbers then measure the
//! generator), and the load the server did not take (its dropped arrivals: the load was
//! applied, the server could not keep up; the SLOs judge it, see `slo.rs`).

use super::summary::summary;
use super::{Health, HealthLimitsResult, StageHealth};
use crate::measure::{StageStats, TargetStats};
use crate::plan::health::HealthLimits;
use crate::plan::{LoadPlan, Model, Plan, Stop};
use crate::run::RunOutput;
use crate::units::format_duration_us;

/// An open-model stage whose arrivals taken (sent or dropped) fall short of its target rate
/// by more than this fraction makes the measurement invalid: the generator did not keep to
/// its schedule.
pub(crate) const RATE_TOLERANCE: f64 = 0.05;
/// A stage in which loadgate used more than this share of all CPUs makes the measurement
/// invalid: the generator was the bottleneck.
pub(crate) const MAX_CLIENT_CPU_SHARE: f64 = 0.9;
/// Stages shorter than this (seconds, as run) are not judged: too short to say.
pub(crate) const MIN_JUDGED_STAGE_S: f64 = 1.0;

/// A closed-model stage in which the connections open fell short of its level by more than
/// this fraction, because loadgate was out of file descriptors, makes the measurement invalid:
/// the planned concurrency was not applied.
pub(crate) const CONCURRENCY_TOLERANCE: f64 = 0.05;

/// Judges the generator's health stage by stage against `load.health`'s limits (lateness,
/// arrivals dropped while behind) and [`RATE_TOLERANCE`], [`CONCURRENCY_TOLERANCE`],
/// [`MAX_CLIENT_CPU_SHARE`]; `total` is the run's targets merged, whose latency shows whether
/// the generator's lateness moved it ([`lateness_shows`]). `judge_lateness` false leaves
/// lateness out (`loadgate ab` judges it per epoch).
pub(super) fn health(
    plan: &Plan,
    (output, total): (&RunOutput, &TargetStats),
    cpus: usize,
    judge_lateness: bool,
) -> Health {
    let load = &plan.load;
    let shows = lateness_shows(total);
    let run_s = load.warmup().as_secs_f64() + output.elapsed.as_secs_f64();
    let stop_is_duration = matches!(load.stop, Stop::Duration(_));
    let ended_early = output.interrupted || output.aborted_by.is_some();
    let mut findings = Findings::default();
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
                dropped_behind: stats.dropped_behind,
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
                    lateness_shows: judge_lateness.then(|| shows.clone()).flatten(),
                };
                findings.add(judge(load, stats, &health, &judged));
            }
            health
        })
        .collect();
    findings.problems.extend(stream_limits(plan, output));
    Health {
        valid: findings.problems.is_empty(),
        problems: findings.problems,
        notes: findings.notes,
        limits: Some(limits_result(&load.health)),
        stages,
    }
}

/// The limits a run was judged against, as the result records them.
fn limits_result(limits: &HealthLimits) -> HealthLimitsResult {
    HealthLimitsResult {
        late_p99_us: limits.late_p99_us,
        dropped_behind_share: limits.dropped_share,
        rate_shortfall: RATE_TOLERANCE,
        client_cpu_share: MAX_CLIENT_CPU_SHARE,
    }
}

/// What judging found: the generator's shortfalls (`problems`: the measurement is invalid)
/// and the server's (`notes`: the load was applied, the server could not keep up).
#[derive(Debug, Default, PartialEq)]
struct Findings {
    problems: Vec<String>,
    notes: Vec<String>,
}

impl Findings {
    fn add(&mut self, other: Findings) {
        self.problems.extend(other.problems);
        self.notes.extend(other.notes);
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
    /// Where the generator's lateness shows in the run's latency ([`lateness_shows`]); `None`
    /// when it does not, or lateness is not judged (`loadgate ab`).
    lateness_shows: Option<String>,
}

/// How much longer than the service time the latency may be, at p50 and p99, a fraction:
/// past it, the generator's lateness moved what the run measured (bench/README.md,
/// "health_calibration.sh").
pub(crate) const LATENESS_SHOWS: f64 = 0.1;

/// Where the generator's lateness shows in the run's latency: at p99 or p50, the latency
/// (from when requests were due) longer than their service time (from when they were sent:
/// the same requests without the generator's lateness) by more than [`LATENESS_SHOWS`], e.g.
/// `p99 31.20ms from when due, 2.10ms from when sent`. `None` when at neither: the lateness
/// did not move the numbers the run reports.
fn lateness_shows(total: &TargetStats) -> Option<String> {
    [(99.0, 0.99), (50.0, 0.5)].into_iter().find_map(|(p, q)| {
        let latency = total.latency_us.value_at_quantile(q);
        let service = total.service_us.value_at_quantile(q);
        (latency as f64 > service as f64 * (1.0 + LATENESS_SHOWS)).then(|| {
            format!(
                "p{p} {} from when due, {} from when sent",
                format_duration_us(latency as f64),
                format_duration_us(service as f64)
            )
        })
    })
}

/// Fewest requests that must start later than `load.health.late_p99` for a stage to be
/// late: in a short stage (under 100 requests) the p99 is the maximum, and one request held
/// up by a busy machine's scheduler is not a schedule the generator could not keep.
pub(crate) const MIN_LATE_REQUESTS: u64 = 2;

/// The findings of one measured stage: dropped requests (the server's, or the generator's
/// when it dropped them while behind its schedule), a rate or concurrency shortfall,
/// lateness, a saturated CPU.
fn judge(load: &LoadPlan, stats: &StageStats, health: &StageHealth, stage: &Judged) -> Findings {
    let mut findings = Findings::default();
    match dropped(load, stats, health, stage) {
        Some(Blame::Generator(problem)) => findings.problems.push(problem),
        Some(Blame::Server(note)) => findings.notes.push(note),
        None => {}
    }
    findings.problems.extend(rate_short(load, stats, stage));
    findings.problems.extend(fd_short(load, stats, stage));
    findings.problems.extend(late(load, stats, health, stage));
    findings.problems.extend(saturated(stage));
    findings
}

/// Requests started later than `load.health.late_p99` at p99 (and at least
/// [`MIN_LATE_REQUESTS`] of them), and that lateness shows in the run's latency
/// (`stage.lateness_shows`): the generator could not keep to its schedule, and what the run
/// measured holds it.
fn late(
    load: &LoadPlan,
    stats: &StageStats,
    health: &StageHealth,
    stage: &Judged,
) -> Option<String> {
    let shows = stage.lateness_shows.as_ref()?;
    let limit_us = load.health.late_p99_us;
    let p99_us = health.lateness_us.as_ref()?.p99_us;
    let h = &stats.lateness_us;
    let late = h.len() - h.count_between(0, limit_us);
    (p99_us > limit_us && late >= MIN_LATE_REQUESTS).then(|| {
        format!(
            "{}: requests started up to {} late (p99; {late} of {} later than the limit), more \
             than the limit of {} (`load.health.late_p99`), and it shows in the latency \
             ({shows}): the generator could not keep to the schedule",
            stage.name,
            format_duration_us(p99_us as f64),
            h.len(),
            format_duration_us(limit_us as f64),
        )
    })
}

/// loadgate used more than [`MAX_CLIENT_CPU_SHARE`] of all CPUs.
fn saturated(stage: &Judged) -> Option<String> {
    (stage.cpu_share > MAX_CLIENT_CPU_SHARE).then(|| {
        format!(
            "{}: loadgate used {:.0}% of all {} CPUs: the generator was the bottleneck",
            stage.name,
            stage.cpu_share * 100.0,
            stage.cpus
        )
    })
}

/// Open model: the arrivals taken (sent or dropped) fell short of the planned rate: the
/// dispatcher did not keep to its schedule.
fn rate_short(load: &LoadPlan, stats: &StageStats, stage: &Judged) -> Option<String> {
    let taken = (stats.sent + stats.dropped) as f64 / stage.length;
    (load.model == Model::Open && taken < stage.mean_target * (1.0 - RATE_TOLERANCE)).then(|| {
        format!(
            "{}: took {taken:.1} arrivals/s of the planned {:.1}/s (sent or dropped), more than \
             {:.0}% short: the generator could not keep to the schedule",
            stage.name,
            stage.mean_target,
            RATE_TOLERANCE * 100.0
        )
    })
}

/// Connections (closed model) or requests (open model) lost to the open-files limit.
fn fd_short(load: &LoadPlan, stats: &StageStats, stage: &Judged) -> Option<String> {
    if stats.fd_limit == 0 {
        return None;
    }
    let name = &stage.name;
    let due = stats.sent + stats.dropped;
    match load.model {
        Model::Closed => {
            // Virtual users that could not run, on average, in connections.
            let short = stats.fd_wait_us as f64 / 1e6 / stage.length / f64::from(load.streams);
            (short > stage.mean_target * CONCURRENCY_TOLERANCE).then(|| {
                format!(
                    "{name}: about {:.0} of the planned {:.0} connections were open: {} connects failed because loadgate was out of file descriptors (`fd_limit`): raise its open-files limit (`ulimit -n`)",
                    (stage.mean_target - short).max(0.0),
                    stage.mean_target,
                    stats.fd_limit
                )
            })
        }
        // Counted as the share of arrivals the generator may drop.
        Model::Open => (stats.fd_limit as f64 > due as f64 * load.health.dropped_share).then(|| {
            format!(
                "{name}: {} of {due} requests could not open a connection because loadgate was out of file descriptors (`fd_limit`): raise its open-files limit (`ulimit -n`)",
                stats.fd_limit
            )
        }),
    }
}

/// Who a stage's dropped requests are blamed on.
enum Blame {
    /// The generator's: the measurement is invalid.
    Generator(String),
    /// The server's: a note, and the drops count as failed requests.
    Server(String),
}

/// Why a stage dropped requests: every in-flight slot of the run (open model) or paced
/// connection (closed model) was busy when they fell due. The arrivals the dispatcher dropped
/// while it was itself behind its schedule (by more than `load.health.late_p99`) are the
/// generator's: past `load.health.dropped` of the due ones, the measurement is invalid. The
/// others waited on the server: its slowness, named as such, with the numbers that show it
/// (mean in flight, mean service time, and the slots the rate needs by Little's law: in
/// flight = rate × time in flight).
fn dropped(
    load: &LoadPlan,
    stats: &StageStats,
    health: &StageHealth,
    stage: &Judged,
) -> Option<Blame> {
    let due = stats.sent + stats.dropped;
    let head = format!(
        "{}: {} of {due} requests were dropped",
        stage.name, stats.dropped
    );
    let limit = load.health.dropped_share;
    if stats.dropped_behind as f64 > due as f64 * limit {
        return Some(Blame::Generator(format!(
            "{head}, {} of them while the generator was more than {} behind its schedule \
             ({:.2}% of the due requests, more than the limit of {}%, `load.health.dropped`): \
             the generator could not keep up",
            stats.dropped_behind,
            format_duration_us(load.health.late_p99_us as f64),
            stats.dropped_behind as f64 * 100.0 / due as f64,
            limit * 100.0
        )));
    }
    if stats.dropped == 0 {
        return None;
    }
    let counted = "They count as failed requests in the whole run's `errors` SLOs";
    // Time in flight per request sent, microseconds.
    let service_us = stats.busy_us as f64 / stats.sent.max(1) as f64;
    Some(Blame::Server(match load.model {
        Model::Open => {
            let in_flight = health.achieved_in_flight;
            let how = if in_flight >= f64::from(load.max_in_flight) / 2.0 {
                "the server was too slow for the rate"
            } else {
                "the slots filled in bursts: the server was slow at times"
            };
            format!(
                "{head}: all {} in-flight slots were busy when they fell due. The server took \
                 {} per request on average, with {in_flight:.1} in flight on average \
                 ({:.1} needed at {:.1} requests/s): {how}, not the generator. {counted}; \
                 raise `max_in_flight` to measure their latency",
                load.max_in_flight,
                format_duration_us(service_us),
                stage.mean_target * service_us / 1e6,
                stage.mean_target
            )
        }
        Model::Closed => format!(
            "{head}: the paced connections were still waiting on the server when their \
             requests fell due (it took {} per request on average, {} apart on a \
             connection's schedule): the server's slowness, not the generator's. {counted}; \
             raise `connections` or lower `pacing` to measure them",
            format_duration_us(service_us),
            format_duration_us(load.pacing.map_or(0.0, |rate| 1e6 / rate))
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Stage;

    fn load(model: Model) -> LoadPlan {
        LoadPlan {
            model,
            stages: vec![Stage {
                burst: 0,
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
            health: HealthLimits::default(),
            per_loop_iterations: None,
            max_duration: None,
            graceful_stop: None,
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
            dropped_behind: stats.dropped_behind,
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
            lateness_shows: Some("p99 40.00ms from when due, 1.00ms from when sent".to_string()),
        }
    }

    #[test]
    fn drops_made_on_time_are_the_servers() {
        // 20 slots, each 1 s per request: 200 sent of the 1000 due in 10 s.
        let stats = StageStats {
            sent: 200,
            dropped: 800,
            busy_us: 200_000_000,
            ..StageStats::default()
        };
        let load = load(Model::Open);
        let findings = judge(&load, &stats, &stage_health(&stats), &judged(0.1));
        assert_eq!(findings.problems, Vec::<String>::new());
        assert_eq!(
            findings.notes,
            [
                "stage 1: 800 of 1000 requests were dropped: all 20 in-flight slots were busy \
                 when they fell due. The server took 1.00s per request on average, with 20.0 in \
                 flight on average (100.0 needed at 100.0 requests/s): the server was too slow \
                 for the rate, not the generator. They count as failed requests in the whole \
                 run's `errors` SLOs; raise `max_in_flight` to measure their latency"
            ]
        );
        // A saturated CPU is the generator's problem too, but not the drops made on time.
        let findings = judge(&load, &stats, &stage_health(&stats), &judged(0.95));
        assert_eq!(findings.notes.len(), 1, "{findings:?}");
        assert_eq!(findings.problems.len(), 1, "{findings:?}");
        assert!(findings.problems[0].contains("the generator was the bottleneck"));
    }

    #[test]
    fn drops_while_the_dispatcher_was_behind_are_the_generators() {
        // 1000 due, 30 dropped, 20 of them while the generator was behind: 2% > 1%.
        let stats = StageStats {
            sent: 970,
            dropped: 30,
            dropped_behind: 20,
            busy_us: 9_700_000,
            ..StageStats::default()
        };
        let findings = judge(
            &load(Model::Open),
            &stats,
            &stage_health(&stats),
            &judged(0.1),
        );
        assert_eq!(
            findings.problems,
            [
                "stage 1: 30 of 1000 requests were dropped, 20 of them while the generator was \
                 more than 10.00ms behind its schedule (2.00% of the due requests, more than the \
                 limit of 1%, `load.health.dropped`): the generator could not keep up"
            ]
        );
        // Below the limit: the server's, in bursts (1 in flight on average of 20 slots).
        let stats = StageStats {
            dropped_behind: 5,
            ..stats
        };
        let findings = judge(
            &load(Model::Open),
            &stats,
            &stage_health(&stats),
            &judged(0.1),
        );
        assert!(findings.problems.is_empty(), "{findings:?}");
        assert!(
            findings.notes[0].contains("10.00ms per request on average, with 1.0 in flight on average (1.0 needed at 100.0 requests/s): the slots filled in bursts"),
            "{findings:?}"
        );
    }

    #[test]
    fn one_late_request_in_a_short_stage_is_not_a_late_schedule() {
        let load = load(Model::Open);
        let late = |late_ones: u64, shows: bool| {
            let mut stats = StageStats {
                sent: 50,
                ..StageStats::default()
            };
            for i in 0..50 {
                let us = if i < late_ones { 40_000 } else { 500 };
                stats.lateness_us.record(us).unwrap();
            }
            let mut health = stage_health(&stats);
            health.lateness_us = summary(&stats.lateness_us);
            let mut stage = judged(0.1);
            if !shows {
                stage.lateness_shows = None;
            }
            super::late(&load, &stats, &health, &stage)
        };
        // 1 of 50 (p99 is the maximum): a hiccup; 2 of 50: late.
        assert_eq!(late(1, true), None);
        let problem = late(2, true).expect("late");
        assert!(
            problem.starts_with("stage 1: requests started up to 40.")
                && problem.contains(
                    "ms late (p99; 2 of 50 later than the limit), more than the limit of \
                     10.00ms (`load.health.late_p99`), and it shows in the latency (p99 \
                     40.00ms from when due, 1.00ms from when sent)"
                ),
            "{problem}"
        );
        // Late, but the latency measured is the service time: not judged late.
        assert_eq!(late(2, false), None);
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
        let findings = judge(
            &load(Model::Closed),
            &stats,
            &stage_health(&stats),
            &judged(0.1),
        );
        assert_eq!(
            findings.problems,
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
        let findings = judge(
            &load(Model::Closed),
            &stats,
            &stage_health(&stats),
            &judged(0.1),
        );
        assert_eq!(findings, Findings::default());
    }
}
