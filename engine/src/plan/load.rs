//! The load plan: model, stages and their schedule math.
//!
//! # Glossary
//!
//! The spec, the code, the reports and docs/spec.md use these words in one sense each:
//!
//! - **connection**: one TCP (or TLS) connection to a target's host.
//! - **stream**: an HTTP/2 stream; `streams` is how many requests one HTTP/2 connection
//!   carries at once.
//! - **virtual user**: one loop that sends a request and waits for its response before the
//!   next (closed model): `connections × streams` of them.
//! - **in flight**: requests sent whose response has not ended. Open model: at most
//!   `max_in_flight`.
//! - **arrival**: a request start scheduled by the open model's arrival rate (requests/s),
//!   whatever the responses do.
//! - **target**: an HTTP endpoint under test (`targets:`), and only that.
//! - **stage**: a step of a changing load, ramped linearly to its `level` (connections in the
//!   closed model, an arrival rate in the open model).
//!
//! # Load over time
//!
//! A load is a piecewise-linear level over time (k6's `stages`): connections in the closed
//! model, arrivals per second in the open model. Warmup stages come first; measuring starts
//! when they end. After the last stage the level holds (count mode ends on a request count).

use std::time::Duration;

mod stages;

pub(super) use stages::{rate, spec_stages};

use super::health::{self, HealthLimits};
use super::{Errors, PlanError};
use crate::spec::{self, LoadModel, Warmup};
use crate::units::parse_duration;

/// Lowest non-zero rate (arrival or pacing), per second: one request every 1000 s.
pub(crate) const MIN_RATE: f64 = 0.001;
/// Highest rate, per second.
pub(crate) const MAX_RATE: f64 = 10_000_000.0;
/// Most connections a closed-model stage may ask for (the schema bounds `connections` and
/// `max_in_flight` alike).
const MAX_CONNECTIONS: u32 = 100_000;

/// The resolved load.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadPlan {
    /// Closed (virtual users) or open (arrivals on a schedule).
    pub(crate) model: Model,
    /// At least one; warmup stages first.
    pub(crate) stages: Vec<Stage>,
    /// When the measured part ends: after a duration or a count of requests.
    pub(crate) stop: Stop,
    /// Closed model: connections at the load's peak (the most any stage asks for), each
    /// carrying `streams` virtual users. 0 in the open model.
    pub(crate) connections: u32,
    /// Open model: the most requests in flight at once (k6's `maxVUs`); an arrival that finds
    /// them all busy is dropped. 0 in the closed model.
    pub(crate) max_in_flight: u32,
    /// Closed model: requests per second per connection, on a schedule.
    pub(crate) pacing: Option<f64>,
    /// Closed model: pause between a response and the next request.
    pub(crate) think_time: Option<ThinkTime>,
    /// Requests each HTTP/2 connection carries at once (h2load's `-m`), at least 1; 1 for
    /// HTTP/1.1. Closed model: each connection carries `streams` virtual users; open model:
    /// the requests in flight share connections, up to `streams` on each.
    pub(crate) streams: u32,
    /// Worker threads asked for (`load.threads`); `None`: one per CPU. A run uses at most one
    /// per connection group.
    pub(crate) threads: Option<u32>,
    /// Closed model: the first level's connections are opened before the clock starts.
    pub(crate) pre_connect: bool,
    /// Requests sent before the clock starts, not counted (`load.warmup: N`); 0 for none.
    pub(crate) warmup_requests: u64,
    /// The generator's health limits (`load.health`, else the defaults).
    pub(crate) health: HealthLimits,
    /// `per-vu-iterations`: each request loop (virtual user) runs exactly this many measured
    /// requests (with flows: iterations); `stop` is then `Stop::Requests(loops × n)`. `None`:
    /// the loops share the count.
    pub(crate) per_loop_iterations: Option<u64>,
    /// Count mode (`Stop::Requests`): the longest the measured part may last before the run
    /// ends with requests left (k6's `maxDuration`). `None`: no bound.
    pub(crate) max_duration: Option<Duration>,
    /// How long requests (iterations) in flight at the end may take to finish before they
    /// are cut and not counted (k6's `gracefulStop`). `None`: their timeout bounds them.
    pub(crate) graceful_stop: Option<Duration>,
}

/// Closed or open model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Model {
    Closed,
    Open,
}

impl Model {
    /// `closed` or `open`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Model::Closed => "closed",
            Model::Open => "open",
        }
    }
}

/// A linear ramp of the level from `from` to `to` over `duration`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Stage {
    /// `None` only for the last stage of a count-mode run: it lasts until the count is reached.
    pub(crate) duration: Option<Duration>,
    /// Connections (closed) or arrivals per second (open) at the start of the stage.
    pub(crate) from: f64,
    /// … and at its end.
    pub(crate) to: f64,
    /// A warmup stage: its requests are sent but not counted.
    pub(crate) warmup: bool,
    /// Open model: arrivals due all at once at the stage's start, besides those of its rate
    /// (a stage of `arrivals: N` over `0s`, Gatling's `atOnceUsers`); 0 for none.
    pub(crate) burst: u64,
}

/// When the measured part of a run ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Stop {
    /// When the stages end (this long after the warmup); requests in flight then finish,
    /// bounded by their timeout.
    Duration(Duration),
    /// After this many measured requests have started.
    Requests(u64),
}

/// Think time between a response and the next request of a connection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum ThinkTime {
    Fixed(Duration),
    /// Uniformly distributed in `[low, high]`.
    Uniform(Duration, Duration),
}

impl LoadPlan {
    /// The loops that send requests, each with at most one in flight: closed model, the
    /// virtual users (`connections × streams`); open model, `max_in_flight`.
    pub(crate) fn request_loops(&self) -> usize {
        match self.model {
            Model::Closed => self.connections as usize * self.streams as usize,
            Model::Open => self.max_in_flight as usize,
        }
    }

    /// Groups of `streams` request loops that share their connections (one connection per
    /// endpoint and group): `ceil(request_loops / streams)`; `connections` in the closed model.
    pub(crate) fn connection_groups(&self) -> usize {
        self.request_loops().div_ceil(self.streams as usize)
    }

    /// Total length of the warmup stages.
    pub(crate) fn warmup(&self) -> Duration {
        self.stages
            .iter()
            .take_while(|s| s.warmup)
            .filter_map(|s| s.duration)
            .sum()
    }

    /// Drops the first `late` of the stages (a run that starts `late` after its planned time
    /// zero, `--start-at`): warmup stages that end within it go, the one it ends in starts
    /// at its level then (`level_at(late)`) and is shorter by the rest; the schedule after
    /// is unchanged, so measuring starts `warmup() − late` after the new time zero. `late`
    /// beyond the warmup drops the warmup only (the caller refuses that case).
    pub(crate) fn skip(&mut self, late: Duration) {
        let mut left = late;
        while !left.is_zero() {
            let Some(first) = self.stages.first_mut().filter(|s| s.warmup) else {
                return;
            };
            let Some(d) = first.duration else { return };
            if left >= d {
                left -= d;
                self.stages.remove(0);
            } else {
                first.from += (first.to - first.from) * left.as_secs_f64() / d.as_secs_f64();
                first.duration = Some(d - left);
                return;
            }
        }
    }

    /// The planned measuring time in duration mode.
    pub(crate) fn measured_duration(&self) -> Option<Duration> {
        match self.stop {
            Stop::Duration(d) => Some(d),
            Stop::Requests(_) => None,
        }
    }

    /// The level at `t` seconds since the start (warmup included): connections (closed model)
    /// or arrivals per second (open model); holds after the last stage.
    pub(crate) fn level_at(&self, t: f64) -> f64 {
        let mut start = 0.0;
        for stage in &self.stages {
            let Some(d) = stage.duration.map(|d| d.as_secs_f64()) else {
                return stage.from;
            };
            if t < start + d {
                return stage.from + (stage.to - stage.from) * (t - start) / d;
            }
            start += d;
        }
        self.stages.last().map_or(0.0, |s| s.to)
    }

    /// The first time ≥ `t` (seconds since the start) at which the level is at least `level`,
    /// or `None` if it never is again before the stages end.
    pub(crate) fn first_time_at_least(&self, level: f64, t: f64) -> Option<f64> {
        let mut start = 0.0;
        for stage in &self.stages {
            let Some(d) = stage.duration.map(|d| d.as_secs_f64()) else {
                return (stage.from >= level).then_some(t.max(start));
            };
            let end = start + d;
            // A stage of zero length is a step: the next stage starts at its `to`.
            if d > 0.0 && end > t {
                let at = |x: f64| stage.from + (stage.to - stage.from) * (x - start) / d;
                let from_t = t.max(start);
                if at(from_t) >= level {
                    return Some(from_t);
                }
                if stage.to > stage.from && stage.to >= level {
                    let x = start + d * (level - stage.from) / (stage.to - stage.from);
                    return Some(x.max(from_t));
                }
            }
            start = end;
        }
        None
    }
}

/// The open model's arrival schedule: the time of the k-th arrival (k from 0) is where the
/// integral of the rate reaches k, so that a constant rate `r` gives `t_k = k / r` and a ramp
/// spreads arrivals as its rate rises. A stage's `burst` arrivals come first, all due at its
/// start (Gatling's `atOnceUsers`); a stage of zero length holds no arrivals of its rate.
///
/// Within a stage whose rate goes linearly from `r0` to `r1` over `D`, the arrivals after
/// `τ` seconds number `m(τ) = r0·τ + (r1 − r0)·τ² / (2D)`; solving for τ gives
/// `τ = 2m / (r0 + sqrt(r0² + 2m(r1 − r0)/D))`, the numerically stable root of the quadratic.
pub(crate) struct Arrivals<'a> {
    stages: &'a [Stage],
    stage: usize,
    /// Start of `stages[stage]`, in seconds since the start of the run.
    stage_start: f64,
    /// Arrivals before `stages[stage]`.
    before: f64,
}

impl<'a> Arrivals<'a> {
    /// The schedule of `stages`, from the start of the run.
    pub(crate) fn new(stages: &'a [Stage]) -> Arrivals<'a> {
        Arrivals {
            stages,
            stage: 0,
            stage_start: 0.0,
            before: 0.0,
        }
    }

    /// Seconds since the start at which arrival `k` is due; `None` after the last stage.
    /// Calls must not decrease `k`.
    pub(crate) fn time_of(&mut self, k: u64) -> Option<f64> {
        let k = k as f64;
        while let Some(stage) = self.stages.get(self.stage) {
            let (r0, r1) = (stage.from, stage.to);
            let burst = stage.burst as f64;
            if k < self.before + burst {
                return Some(self.stage_start);
            }
            let Some(d) = stage.duration.map(|d| d.as_secs_f64()) else {
                let m = k - self.before - burst;
                return (r0 > 0.0).then(|| self.stage_start + m / r0);
            };
            // A stage of zero length holds its burst only (`in_stage` is 0: no division).
            let in_stage = (r0 + r1) / 2.0 * d;
            if k < self.before + burst + in_stage {
                let m = k - self.before - burst;
                let root = (r0 * r0 + 2.0 * m * (r1 - r0) / d).max(0.0).sqrt();
                let tau = if m == 0.0 { 0.0 } else { 2.0 * m / (r0 + root) };
                return Some(self.stage_start + tau.min(d));
            }
            self.before += burst + in_stage;
            self.stage_start += d;
            self.stage += 1;
        }
        None
    }
}

/// Resolves the spec's `load` block; every problem goes to `errors`.
pub(super) fn build(load: &spec::Load, errors: &mut Errors) -> Option<LoadPlan> {
    let model = match load.model.unwrap_or(LoadModel::Closed) {
        LoadModel::Closed => Model::Closed,
        LoadModel::Open => Model::Open,
    };
    let before = errors.0.len();
    let stages = if load.stages.is_empty() {
        constant_stages(load, model, errors)
    } else {
        ramped_stages(load, model, errors)
    };
    let stop = stop(load, stages.as_deref(), errors);
    let pacing = load
        .pacing
        .as_deref()
        .and_then(|p| rate(errors, "load.pacing", p, false));
    let think_time = load
        .think_time
        .as_deref()
        .and_then(|t| think_time(errors, "load.think_time", t));
    if model == Model::Open {
        for (field, given) in [
            ("load.connections", load.connections.is_some()),
            ("load.pacing", load.pacing.is_some()),
            ("load.think_time", load.think_time.is_some()),
        ] {
            if given {
                errors.push(field, "applies to the closed model only (`model: closed`)");
            }
        }
    } else if load.rate.is_some() || load.max_in_flight.is_some() {
        let field = if load.rate.is_some() {
            "load.rate"
        } else {
            "load.max_in_flight"
        };
        errors.push(field, "applies to the open model only (`model: open`)");
    }
    if load.threads == Some(0) {
        errors.push("load.threads", "must be at least 1");
    }
    if pacing.is_some() && think_time.is_some() {
        errors.push("load", "give either `pacing` or `think_time`, not both");
    }
    let health = health::build(load.health.as_ref(), errors);
    if errors.0.len() > before {
        return None;
    }
    let mut stages = stages?;
    let stop = stop?;
    if let Stop::Requests(_) = stop {
        // Count mode: a last stage that holds the level until the count is reached.
        let hold = stages.last().map_or(0.0, |s| s.to);
        stages.retain(|s| s.warmup);
        stages.push(Stage {
            burst: 0,
            duration: None,
            from: hold,
            to: hold,
            warmup: false,
        });
    }
    let peak = stages.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max);
    let (connections, max_in_flight) = match model {
        Model::Closed => (peak.round() as u32, 0),
        Model::Open => (
            0,
            load.max_in_flight
                .unwrap_or_else(|| default_max_in_flight(&stages)),
        ),
    };
    Some(LoadPlan {
        model,
        stages,
        stop,
        connections,
        max_in_flight,
        pacing,
        think_time,
        streams: load.streams.unwrap_or(1).max(1),
        threads: load.threads,
        pre_connect: model == Model::Closed && load.pre_connect.unwrap_or(true),
        warmup_requests: match load.warmup {
            Some(Warmup::Requests(n)) => n,
            _ => 0,
        },
        health,
        per_loop_iterations: None,
        max_duration: None,
        graceful_stop: None,
    })
}

/// When the measured part ends: after `duration` or `requests`, or when the `stages` end.
fn stop(load: &spec::Load, stages: Option<&[Stage]>, errors: &mut Errors) -> Option<Stop> {
    match (&load.duration, load.requests, load.stages.is_empty()) {
        (None, None, false) => stages.map(|s| {
            Stop::Duration(
                s.iter()
                    .filter(|s| !s.warmup)
                    .filter_map(|s| s.duration)
                    .sum(),
            )
        }),
        (Some(d), None, true) => errors
            .duration("load.duration", d, false)
            .map(Stop::Duration),
        (None, Some(n), true) => Some(Stop::Requests(n)),
        (Some(_), Some(_), _) => {
            errors.push("load", "give either `duration` or `requests`, not both");
            None
        }
        (None, None, true) => {
            errors.push("load", "missing `duration` or `requests` (or `stages`)");
            None
        }
        (_, _, false) => {
            errors.push(
                "load.stages",
                "`stages` set the run's length: leave out `duration` and `requests`",
            );
            None
        }
    }
}

/// A constant load: one stage at `connections` or `rate`, after a warmup stage if any.
fn constant_stages(load: &spec::Load, model: Model, errors: &mut Errors) -> Option<Vec<Stage>> {
    let level = match model {
        Model::Closed => match load.connections {
            Some(0) => {
                errors.push("load.connections", "must be at least 1");
                return None;
            }
            Some(c) => f64::from(c),
            None => {
                errors.push("load", "missing `connections` (or `stages`)");
                return None;
            }
        },
        Model::Open => match &load.rate {
            Some(r) => rate(errors, "load.rate", r, false)?,
            None => {
                errors.push("load", "missing `rate` for the open model (or `stages`)");
                return None;
            }
        },
    };
    let warmup = match &load.warmup {
        Some(Warmup::Duration(w)) => errors.duration("load.warmup", w, true)?,
        Some(Warmup::Requests(_)) | None => Duration::ZERO,
    };
    let duration = match &load.duration {
        Some(d) => Some(errors.duration("load.duration", d, false)?),
        None => None,
    };
    let mut stages = Vec::new();
    if !warmup.is_zero() {
        stages.push(Stage {
            burst: 0,
            duration: Some(warmup),
            from: level,
            to: level,
            warmup: true,
        });
    }
    stages.push(Stage {
        burst: 0,
        duration,
        from: level,
        to: level,
        warmup: false,
    });
    Some(stages)
}

/// The spec's `stages` (see [`stages`]), each ramped from the previous one's level (the first
/// from 0); warmup stages first, and something measured.
fn ramped_stages(load: &spec::Load, model: Model, errors: &mut Errors) -> Option<Vec<Stage>> {
    for (field, given) in [
        ("load.connections", load.connections.is_some()),
        ("load.rate", load.rate.is_some()),
        ("load.warmup", load.warmup.is_some()),
    ] {
        if given {
            errors.push(
                field,
                "with `stages`, give the load in the stages (mark warmup stages `warmup: true`)",
            );
        }
    }
    let mut ok = true;
    for (i, stage) in load.stages.iter().enumerate() {
        if stage.warmup && load.stages[..i].iter().any(|s| !s.warmup) {
            errors.push(
                format!("load.stages[{i}].warmup"),
                "warmup stages must come first",
            );
            ok = false;
        }
    }
    let stages = stages::spec_stages(&load.stages, "load.stages", model, 0.0, errors)?;
    // (Measured stages of 0s in all cannot pass: the last stage may not last 0s.)
    if ok && stages.iter().all(|s| s.warmup) {
        errors.push(
            "load.stages",
            "every stage is a warmup: nothing would be measured",
        );
        ok = false;
    }
    ok.then_some(stages)
}

/// The open model's `max_in_flight` when the spec gives none: the peak rate times one
/// second, or the largest burst if more, at least 16 and at most 10000.
pub(super) fn default_max_in_flight(stages: &[Stage]) -> u32 {
    let peak = stages.iter().map(|s| s.from.max(s.to)).fold(0.0, f64::max);
    let burst = stages.iter().map(|s| s.burst).max().unwrap_or(0);
    (peak.ceil() as u32)
        .max(u32::try_from(burst).unwrap_or(u32::MAX))
        .clamp(16, 10_000)
}

/// A think time: a duration (`100ms`) or a uniform range (`50ms..150ms`).
pub(super) fn think_time(errors: &mut Errors, path: &str, text: &str) -> Option<ThinkTime> {
    let parsed = match text.split_once("..") {
        Some((low, high)) => parse_duration(low).and_then(|low| {
            let high = parse_duration(high)?;
            if high < low {
                return Err(format!(
                    "`{text}`: the range's upper end is below its lower end"
                ));
            }
            Ok(ThinkTime::Uniform(low, high))
        }),
        None => parse_duration(text).map(ThinkTime::Fixed),
    };
    parsed
        .map_err(|e| {
            errors.0.push(PlanError {
                path: path.to_string(),
                message: e,
            })
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(secs: f64, from: f64, to: f64) -> Stage {
        Stage {
            burst: 0,
            duration: Some(Duration::from_secs_f64(secs)),
            from,
            to,
            warmup: false,
        }
    }

    fn plan(stages: Vec<Stage>) -> LoadPlan {
        LoadPlan {
            model: Model::Open,
            stages,
            stop: Stop::Duration(Duration::from_secs(1)),
            connections: 0,
            max_in_flight: 1,
            pacing: None,
            think_time: None,
            streams: 1,
            threads: None,
            pre_connect: false,
            warmup_requests: 0,
            health: HealthLimits::default(),
            per_loop_iterations: None,
            max_duration: None,
            graceful_stop: None,
        }
    }

    #[test]
    fn constant_rate_arrivals_are_evenly_spaced() {
        let stages = [stage(2.0, 100.0, 100.0)];
        let mut arrivals = Arrivals::new(&stages);
        assert_eq!(arrivals.time_of(0), Some(0.0));
        assert!((arrivals.time_of(1).unwrap() - 0.01).abs() < 1e-12);
        assert!((arrivals.time_of(150).unwrap() - 1.5).abs() < 1e-9);
        assert!((arrivals.time_of(199).unwrap() - 1.99).abs() < 1e-9);
        assert_eq!(arrivals.time_of(200), None);
    }

    #[test]
    fn a_ramp_delivers_its_integral() {
        // 0 -> 100/s over 10 s, then 100/s for 5 s: 500 + 500 arrivals.
        let stages = [stage(10.0, 0.0, 100.0), stage(5.0, 100.0, 100.0)];
        let mut arrivals = Arrivals::new(&stages);
        let times: Vec<f64> = (0..).map_while(|k| arrivals.time_of(k)).collect();
        assert_eq!(times.len(), 1000);
        assert!(times.windows(2).all(|w| w[0] <= w[1]));
        // m(τ) = 5τ² arrivals by τ seconds: arrival 125 is due at 5 s.
        assert!((times[125] - 5.0).abs() < 1e-9, "{}", times[125]);
        assert!((times[500] - 10.0).abs() < 1e-9, "{}", times[500]);
        assert!((times[750] - 12.5).abs() < 1e-9, "{}", times[750]);
        // A ramp down: 100 -> 0 over 2 s holds 100 arrivals, front-loaded.
        let down = [stage(2.0, 100.0, 0.0)];
        let mut arrivals = Arrivals::new(&down);
        let times: Vec<f64> = (0..).map_while(|k| arrivals.time_of(k)).collect();
        assert_eq!(times.len(), 100);
        assert!(
            times[50] < 1.0 && times[99] <= 2.0,
            "{} {}",
            times[50],
            times[99]
        );
    }

    #[test]
    fn open_ended_stage_holds_its_rate() {
        let stages = [Stage {
            burst: 0,
            duration: None,
            from: 50.0,
            to: 50.0,
            warmup: false,
        }];
        let mut arrivals = Arrivals::new(&stages);
        assert!((arrivals.time_of(1_000_000).unwrap() - 20_000.0).abs() < 1e-6);
    }

    #[test]
    fn levels_and_activation_times() {
        let p = plan(vec![
            stage(10.0, 0.0, 10.0),
            stage(10.0, 10.0, 10.0),
            stage(10.0, 10.0, 0.0),
        ]);
        assert_eq!(p.level_at(0.0), 0.0);
        assert!((p.level_at(5.0) - 5.0).abs() < 1e-12);
        assert_eq!(p.level_at(15.0), 10.0);
        assert!((p.level_at(25.0) - 5.0).abs() < 1e-12);
        assert_eq!(p.level_at(99.0), 0.0);
        // The 4th connection (index 3) is active once the level reaches 3.5.
        assert_eq!(p.first_time_at_least(3.5, 0.0), Some(3.5));
        assert_eq!(p.first_time_at_least(3.5, 12.0), Some(12.0));
        assert_eq!(p.first_time_at_least(9.5, 26.0), None);
        assert_eq!(p.first_time_at_least(11.0, 0.0), None);
    }
}
