//! A scenario's executor and timing (`spec::Scenario`) resolved into a [`LoadPlan`]: one
//! engine, k6's names.
//!
//! | executor | model | stages | stop |
//! |---|---|---|---|
//! | constant-vus | closed | one at `vus` over `duration` | `duration` |
//! | ramping-vus | closed | from `start_vus` (0), each ramps to its `level` | the stages' sum |
//! | constant-arrival-rate | open | one at `rate` over `duration` | `duration` |
//! | ramping-arrival-rate | open | from `start_rate` (0/s), `level` or `arrivals` | the stages' sum |
//! | per-vu-iterations | closed | one at `vus`, open-ended | `vus × iterations` requests, each loop `iterations` |
//! | shared-iterations | closed | one at `vus`, open-ended | `iterations` requests |
//!
//! Closed-model levels are virtual users, each connection carrying `streams` of them
//! (`load.streams`), so a level of virtual users is `vus / streams` connections (a whole
//! number: `vus` must be a multiple of `streams`). Every scenario stops gracefully within
//! `graceful_stop` (default [`DEFAULT_GRACEFUL_STOP`], k6's); the iteration executors within
//! `max_duration` (default [`DEFAULT_MAX_DURATION`], k6's).

use std::time::Duration;

use super::super::Errors;
use super::super::health::{self, HealthLimits};
use super::super::load::{
    self, LoadPlan, Model, Stage, Stop, default_max_in_flight, rate, spec_stages,
};
use crate::spec::{self, Executor, StageLevel};

/// How long work in flight at a scenario's end may take to finish when the spec gives no
/// `graceful_stop` (k6's `gracefulStop` default).
pub(crate) const DEFAULT_GRACEFUL_STOP: Duration = Duration::from_secs(30);
/// The longest an iteration executor runs when the spec gives no `max_duration` (k6's
/// `maxDuration` default): 10 minutes.
pub(crate) const DEFAULT_MAX_DURATION: Duration = Duration::from_secs(600);

/// What every scenario takes from the spec's `load` block: `streams`, `threads`,
/// `pre_connect`, `health`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct SharedLoad {
    /// Requests each HTTP/2 connection carries at once, at least 1.
    pub(super) streams: u32,
    /// Worker threads asked for; `None`: the run shares the CPUs out.
    pub(super) threads: Option<u32>,
    /// Closed model: connections opened before the clock starts (default true).
    pub(super) pre_connect: bool,
    /// The generator's health limits.
    pub(super) health: HealthLimits,
}

/// The shared settings of the `load` block given beside `scenarios`; any other field there
/// is an error at its path (`load.connections`).
pub(super) fn shared_load(load: Option<&spec::Load>, errors: &mut Errors) -> SharedLoad {
    let Some(load) = load else {
        return SharedLoad {
            streams: 1,
            threads: None,
            pre_connect: true,
            health: HealthLimits::default(),
        };
    };
    let given = [
        ("model", load.model.is_some()),
        ("connections", load.connections.is_some()),
        ("rate", load.rate.is_some()),
        ("stages", !load.stages.is_empty()),
        ("duration", load.duration.is_some()),
        ("requests", load.requests.is_some()),
        ("warmup", load.warmup.is_some()),
        ("max_in_flight", load.max_in_flight.is_some()),
        ("pacing", load.pacing.is_some()),
        ("think_time", load.think_time.is_some()),
    ];
    for (field, _) in given.iter().filter(|(_, given)| *given) {
        errors.push(
            format!("load.{field}"),
            format!(
                "with `scenarios`, `load` gives only the settings they share (`streams`, \
                 `threads`, `pre_connect`, `health`): give `{field}` in the scenarios"
            ),
        );
    }
    if load.threads == Some(0) {
        errors.push("load.threads", "must be at least 1");
    }
    SharedLoad {
        streams: load.streams.unwrap_or(1).max(1),
        threads: load.threads,
        pre_connect: load.pre_connect.unwrap_or(true),
        health: health::build(load.health.as_ref(), errors),
    }
}

/// The fields an executor needs, and those it may take besides.
fn fields(executor: Executor) -> (&'static [&'static str], &'static [&'static str]) {
    match executor {
        Executor::ConstantVus => (&["vus", "duration"], &["think_time", "pacing"]),
        Executor::RampingVus => (&["stages"], &["start_vus", "think_time", "pacing"]),
        Executor::ConstantArrivalRate => (&["rate", "duration"], &["max_in_flight"]),
        Executor::RampingArrivalRate => (&["stages"], &["start_rate", "max_in_flight"]),
        Executor::PerVuIterations | Executor::SharedIterations => (
            &["vus"],
            &["iterations", "max_duration", "think_time", "pacing"],
        ),
    }
}

/// `constant-vus takes `vus` and `duration` (and `think_time`, `pacing`)`.
fn takes(executor: Executor) -> String {
    let quoted = |list: &[&str]| {
        list.iter()
            .map(|f| format!("`{f}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (needed, optional) = fields(executor);
    let needed = match needed {
        [a, b] => format!("`{a}` and `{b}`"),
        _ => quoted(needed),
    };
    format!(
        "{} takes {needed} (and {})",
        executor.name(),
        quoted(optional)
    )
}

/// Whether the scenario gives exactly its executor's fields: every needed one, no other
/// executor's. Errors name the field (`scenarios[1].rate`), or the scenario for a missing one.
fn check_fields(s: &spec::Scenario, path: &str, errors: &mut Errors) -> bool {
    let given = [
        ("vus", s.vus.is_some()),
        ("start_vus", s.start_vus.is_some()),
        ("iterations", s.iterations.is_some()),
        ("rate", s.rate.is_some()),
        ("start_rate", s.start_rate.is_some()),
        ("max_in_flight", s.max_in_flight.is_some()),
        ("duration", s.duration.is_some()),
        ("stages", !s.stages.is_empty()),
        ("max_duration", s.max_duration.is_some()),
        ("think_time", s.think_time.is_some()),
        ("pacing", s.pacing.is_some()),
    ];
    let (needed, optional) = fields(s.executor);
    let before = errors.0.len();
    for (field, is_given) in given {
        let known = needed.contains(&field) || optional.contains(&field);
        if is_given && !known {
            errors.push(
                format!("{path}.{field}"),
                format!("{}, not `{field}`", takes(s.executor)),
            );
        } else if !is_given && needed.contains(&field) {
            errors.push(path, format!("missing `{field}`: {}", takes(s.executor)));
        }
    }
    errors.0.len() == before
}

/// The scenario's load (at `path`, `scenarios[1]`), or `None` with its errors in `errors`.
pub(super) fn build(
    s: &spec::Scenario,
    path: &str,
    shared: &SharedLoad,
    errors: &mut Errors,
) -> Option<LoadPlan> {
    let graceful_stop = match &s.graceful_stop {
        Some(g) => errors.duration(&format!("{path}.graceful_stop"), g, true),
        None => Some(DEFAULT_GRACEFUL_STOP),
    };
    let pacing = s
        .pacing
        .as_deref()
        .and_then(|p| rate(errors, &format!("{path}.pacing"), p, false));
    let think_time = s
        .think_time
        .as_deref()
        .and_then(|t| load::think_time(errors, &format!("{path}.think_time"), t));
    if pacing.is_some() && think_time.is_some() {
        errors.push(path, "give either `pacing` or `think_time`, not both");
    }
    if !check_fields(s, path, errors) {
        return None;
    }
    let shape = shape(s, path, shared.streams, errors)?;
    let model = match s.executor {
        Executor::ConstantArrivalRate | Executor::RampingArrivalRate => Model::Open,
        _ => Model::Closed,
    };
    let peak = shape
        .stages
        .iter()
        .map(|s| s.from.max(s.to))
        .fold(0.0, f64::max);
    let (connections, max_in_flight) = match model {
        Model::Closed => (peak.round() as u32, 0),
        Model::Open => (
            0,
            s.max_in_flight
                .unwrap_or_else(|| default_max_in_flight(&shape.stages)),
        ),
    };
    Some(LoadPlan {
        model,
        stages: shape.stages,
        stop: shape.stop,
        connections,
        max_in_flight,
        pacing,
        think_time,
        streams: shared.streams,
        threads: shared.threads,
        pre_connect: model == Model::Closed && shared.pre_connect,
        warmup_requests: 0,
        health: shared.health,
        per_loop_iterations: shape.per_loop_iterations,
        max_duration: shape.max_duration,
        graceful_stop: Some(graceful_stop?),
    })
}

/// An executor's schedule: its stages, when it stops, and the iteration executors' bounds.
struct Shape {
    stages: Vec<Stage>,
    stop: Stop,
    per_loop_iterations: Option<u64>,
    max_duration: Option<Duration>,
}

impl Shape {
    /// One stage at `level` over `duration` (`None`: until the count is reached).
    fn constant(level: f64, duration: Option<Duration>, stop: Stop) -> Shape {
        Shape {
            stages: vec![Stage {
                duration,
                from: level,
                to: level,
                warmup: false,
                burst: 0,
            }],
            stop,
            per_loop_iterations: None,
            max_duration: None,
        }
    }
}

/// The executor's stages and stop (the fields are known to be there: [`check_fields`]).
fn shape(s: &spec::Scenario, path: &str, streams: u32, errors: &mut Errors) -> Option<Shape> {
    let field = |name: &str| format!("{path}.{name}");
    let duration = |errors: &mut Errors| {
        let text = s.duration.as_deref()?;
        errors.duration(&field("duration"), text, false)
    };
    match s.executor {
        Executor::ConstantVus => {
            let level = connections(s.vus?, &field("vus"), streams, errors);
            let d = duration(errors)?;
            Some(Shape::constant(level?, Some(d), Stop::Duration(d)))
        }
        Executor::ConstantArrivalRate => {
            let r = rate(errors, &field("rate"), s.rate.as_deref()?, false);
            let d = duration(errors)?;
            Some(Shape::constant(r?, Some(d), Stop::Duration(d)))
        }
        Executor::RampingVus | Executor::RampingArrivalRate => ramping(s, path, streams, errors),
        Executor::PerVuIterations | Executor::SharedIterations => {
            let vus = s.vus?;
            let level = connections(vus, &field("vus"), streams, errors);
            let max_duration = match &s.max_duration {
                Some(m) => errors.duration(&field("max_duration"), m, false),
                None => Some(DEFAULT_MAX_DURATION),
            };
            let iterations = s.iterations.unwrap_or(1);
            let per_vu = s.executor == Executor::PerVuIterations;
            let requests = if per_vu {
                u64::from(vus).saturating_mul(iterations)
            } else {
                iterations
            };
            let mut shape = Shape::constant(level?, None, Stop::Requests(requests));
            shape.per_loop_iterations = per_vu.then_some(iterations);
            shape.max_duration = Some(max_duration?);
            Some(shape)
        }
    }
}

/// `ramping-vus` and `ramping-arrival-rate`: the stages from `start_vus` or `start_rate`.
fn ramping(s: &spec::Scenario, path: &str, streams: u32, errors: &mut Errors) -> Option<Shape> {
    // The start level as written: virtual users, or arrivals per second.
    let (model, start) = if s.executor == Executor::RampingVus {
        let vus = s.start_vus.unwrap_or(0);
        let start = connections(vus, &format!("{path}.start_vus"), streams, errors);
        (Model::Closed, start.map(|_| f64::from(vus)))
    } else {
        let start = match &s.start_rate {
            Some(r) => rate(errors, &format!("{path}.start_rate"), r, true),
            None => Some(0.0),
        };
        (Model::Open, start)
    };
    let mut ok = true;
    for (i, stage) in s.stages.iter().enumerate() {
        let at = format!("{path}.stages[{i}]");
        if stage.warmup {
            errors.push(
                format!("{at}.warmup"),
                "a scenario has no warmup stages: it measures from its start (start it later \
                 with `start_time`)",
            );
            ok = false;
        }
        if let (Model::Closed, Some(StageLevel::Connections(vus))) = (model, &stage.level) {
            ok &= connections(*vus, &format!("{at}.level"), streams, errors).is_some();
        }
    }
    let stages_path = format!("{path}.stages");
    let mut stages = spec_stages(&s.stages, &stages_path, model, start?, errors)?;
    if !ok {
        return None;
    }
    if model == Model::Closed {
        // Virtual users, in connections of `streams` each.
        let unit = f64::from(streams);
        for stage in &mut stages {
            (stage.from, stage.to) = (stage.from / unit, stage.to / unit);
        }
    }
    // Never 0s in all: the last stage may not last 0s (`spec_stages`).
    let measured: Duration = stages.iter().filter_map(|s| s.duration).sum();
    Some(Shape {
        stages,
        stop: Stop::Duration(measured),
        per_loop_iterations: None,
        max_duration: None,
    })
}

/// Connections for `vus` virtual users at `path`: `vus / streams`, a whole number.
fn connections(vus: u32, path: &str, streams: u32, errors: &mut Errors) -> Option<f64> {
    if !vus.is_multiple_of(streams) {
        errors.push(
            path,
            format!(
                "{vus} virtual users are not a multiple of `load.streams` ({streams}): each \
                 connection carries {streams} of them"
            ),
        );
        return None;
    }
    Some(f64::from(vus / streams))
}
