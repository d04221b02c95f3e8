//! A load's `stages` as the spec writes them (`spec::Stage`: a `level`, or a count of
//! `arrivals`) resolved into planned stages, for the short form (`load.stages`) and the
//! ramping executors of scenarios alike.
//!
//! - `level` over `d`: a linear ramp from the level before to `level`; over `0s`, the level
//!   changes at once (a spike).
//! - `arrivals: N` over `d > 0` (open model, Gatling's `rampUsers(N).during(d)`): a flat stage
//!   at `N / d` arrivals per second (the level jumps to it at the stage's start).
//! - `arrivals: N` over `0s` (Gatling's `atOnceUsers(N)`): `N` arrivals all at once
//!   (`Stage::burst`), the level unchanged.
//!
//! Nothing here divides by a stage's duration unless it is above zero.

use std::time::Duration;

use super::{MAX_CONNECTIONS, MAX_RATE, MIN_RATE, Model, Stage};
use crate::plan::Errors;
use crate::spec::{self, StageLevel};
use crate::units::parse_rate;

/// Resolves `stages` (the list at `path`: `load.stages`, `scenarios[1].stages`), each
/// ramped from the level before it, the first from `start` (connections or virtual users in
/// the closed model, arrivals per second in the open model). Every problem goes to `errors`
/// (field paths such as `load.stages[2].arrivals`); `None` when there was one. Warmup flags
/// are copied; where they may be is the caller's to check.
pub(in crate::plan) fn spec_stages(
    stages: &[spec::Stage],
    path: &str,
    model: Model,
    start: f64,
    errors: &mut Errors,
) -> Option<Vec<Stage>> {
    let mut out = Vec::with_capacity(stages.len());
    let mut previous = start;
    let mut ok = true;
    for (i, stage) in stages.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let duration = errors.duration(&format!("{path}.duration"), &stage.duration, true);
        let step = step(stage, &path, model, errors);
        let (Some(d), Some(step)) = (duration, step) else {
            ok = false;
            continue;
        };
        let planned = match step {
            Step::Level(level) => Stage {
                duration: Some(d),
                from: previous,
                to: level,
                warmup: stage.warmup,
                burst: 0,
            },
            Step::Arrivals(n) if d.is_zero() => Stage {
                duration: Some(d),
                from: previous,
                to: previous,
                warmup: stage.warmup,
                burst: n,
            },
            Step::Arrivals(n) => {
                let Some(r) = arrival_rate(n, d, &path, errors) else {
                    ok = false;
                    continue;
                };
                Stage {
                    duration: Some(d),
                    from: r,
                    to: r,
                    warmup: stage.warmup,
                    burst: 0,
                }
            }
        };
        previous = planned.to;
        out.push(planned);
    }
    // A last stage of 0s would act at the very end, where nothing starts any more: its burst
    // would never be sent, its level never held.
    if let Some(last) = stages.len().checked_sub(1)
        && out.len() == stages.len()
        && out[last].duration.is_some_and(|d| d.is_zero())
    {
        errors.push(
            format!("{path}[{last}].duration"),
            "the last stage may not last 0s: a step (or a burst of `arrivals`) at the end acts \
             on nothing; give a stage after it",
        );
        ok = false;
    }
    ok.then_some(out)
}

/// What one stage asks for: a level, or a count of arrivals.
enum Step {
    Level(f64),
    Arrivals(u64),
}

/// The stage's `level` or `arrivals`, checked against the model.
fn step(stage: &spec::Stage, path: &str, model: Model, errors: &mut Errors) -> Option<Step> {
    match (&stage.level, stage.arrivals, model) {
        (Some(_), Some(_), _) => {
            errors.push(
                format!("{path}.arrivals"),
                "give `level` or `arrivals`, not both",
            );
            None
        }
        (None, None, Model::Closed) => {
            errors.push(path, "missing `level` (virtual users or connections)");
            None
        }
        (None, None, Model::Open) => {
            errors.push(
                path,
                "missing `level` (an arrival rate such as `200/s`) or `arrivals` (a count)",
            );
            None
        }
        (None, Some(_), Model::Closed) => {
            errors.push(
                format!("{path}.arrivals"),
                "arrivals apply to the open model only (`model: open`, or an arrival-rate \
                 executor); the closed model's stages give a `level`",
            );
            None
        }
        (None, Some(n), Model::Open) => Some(Step::Arrivals(n)),
        (Some(level), None, _) => {
            level_of(level, &format!("{path}.level"), model, errors).map(Step::Level)
        }
    }
}

/// A stage's `level` in the model's unit: a whole number in the closed model, a rate in the
/// open one.
fn level_of(level: &StageLevel, path: &str, model: Model, errors: &mut Errors) -> Option<f64> {
    match (level, model) {
        (StageLevel::Connections(c), Model::Closed) if *c <= MAX_CONNECTIONS => Some(f64::from(*c)),
        (StageLevel::Rate(r), Model::Open) => rate(errors, path, r, true),
        (StageLevel::Connections(_), Model::Closed) => {
            errors.push(
                path,
                format!("at most {MAX_CONNECTIONS} {}", closed_unit(path)),
            );
            None
        }
        (StageLevel::Rate(r), Model::Closed) => {
            let open = if path.starts_with("load.") {
                "set `model: open`"
            } else {
                "use an arrival-rate executor"
            };
            errors.push(
                path,
                format!(
                    "`{r}` is a rate: the closed model's level is a number of {} (or {open})",
                    closed_unit(path)
                ),
            );
            None
        }
        (StageLevel::Connections(c), Model::Open) => {
            errors.push(
                path,
                format!("the open model's level is a rate such as `{c}/s`"),
            );
            None
        }
    }
}

/// What a closed-model level counts at `path`: the short form's connections (`load.`), a
/// scenario's virtual users.
fn closed_unit(path: &str) -> &'static str {
    if path.starts_with("load.") {
        "connections"
    } else {
        "virtual users"
    }
}

/// The rate of `n` arrivals spread evenly over `d` (above zero), per second, within the
/// bounds of a rate.
fn arrival_rate(n: u64, d: Duration, path: &str, errors: &mut Errors) -> Option<f64> {
    let r = n as f64 / d.as_secs_f64();
    let field = format!("{path}.arrivals");
    if r > MAX_RATE {
        errors.push(
            field,
            format!("{n} arrivals over {d:?} is more than {MAX_RATE}/s"),
        );
        None
    } else if r < MIN_RATE {
        errors.push(
            field,
            format!("{n} arrivals over {d:?} is less than {MIN_RATE}/s"),
        );
        None
    } else {
        Some(r)
    }
}

/// A rate; `zero_ok` for stage levels (a ramp down to 0/s).
pub(in crate::plan) fn rate(
    errors: &mut Errors,
    path: &str,
    text: &str,
    zero_ok: bool,
) -> Option<f64> {
    match parse_rate(text) {
        Ok(r) if r > MAX_RATE => {
            errors.push(path, format!("at most {MAX_RATE}/s"));
            None
        }
        Ok(r) if r > 0.0 && r < MIN_RATE => {
            errors.push(path, format!("at least {MIN_RATE}/s (or 0/s for a stage)"));
            None
        }
        Ok(r) if r > 0.0 || zero_ok => Some(r),
        Ok(_) => {
            errors.push(path, "must be more than 0/s");
            None
        }
        Err(e) => {
            errors.push(path, e);
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(duration: &str, level: Option<StageLevel>, arrivals: Option<u64>) -> spec::Stage {
        spec::Stage {
            duration: duration.to_string(),
            level,
            arrivals,
            warmup: false,
        }
    }

    fn rate_level(r: &str) -> Option<StageLevel> {
        Some(StageLevel::Rate(r.to_string()))
    }

    fn planned(secs: f64, from: f64, to: f64, burst: u64) -> Stage {
        Stage {
            duration: Some(Duration::from_secs_f64(secs)),
            from,
            to,
            warmup: false,
            burst,
        }
    }

    #[test]
    fn levels_arrivals_bursts_and_spikes() {
        let stages = [
            stage("10s", rate_level("100/s"), None),
            stage("0s", None, Some(500)),
            stage("20s", None, Some(1000)),
            stage("0s", rate_level("300/s"), None),
            stage("5s", rate_level("0/s"), None),
        ];
        let mut errors = Errors::default();
        let out = spec_stages(&stages, "load.stages", Model::Open, 10.0, &mut errors);
        assert!(errors.0.is_empty(), "{:?}", errors.0);
        assert_eq!(
            out.unwrap(),
            [
                planned(10.0, 10.0, 100.0, 0),
                // A burst over 0s: 500 at once, the level unchanged.
                planned(0.0, 100.0, 100.0, 500),
                // 1000 over 20s: flat at 50/s.
                planned(20.0, 50.0, 50.0, 0),
                // A spike: the level changes at once.
                planned(0.0, 50.0, 300.0, 0),
                planned(5.0, 300.0, 0.0, 0),
            ]
        );
        let closed = [
            stage("0s", Some(StageLevel::Connections(8)), None),
            stage("5s", Some(StageLevel::Connections(2)), None),
        ];
        let out = spec_stages(&closed, "s", Model::Closed, 0.0, &mut errors).unwrap();
        assert_eq!(out, [planned(0.0, 0.0, 8.0, 0), planned(5.0, 8.0, 2.0, 0)]);
    }

    #[test]
    fn errors_name_the_stage_field() {
        let cases: [(spec::Stage, Model, &str, &str); 7] = [
            (
                stage("5s", rate_level("5/s"), Some(3)),
                Model::Open,
                "x[0].arrivals",
                "not both",
            ),
            (
                stage("5s", None, None),
                Model::Open,
                "x[0]",
                "missing `level`",
            ),
            (
                stage("5s", None, None),
                Model::Closed,
                "x[0]",
                "missing `level`",
            ),
            (
                stage("5s", None, Some(3)),
                Model::Closed,
                "x[0].arrivals",
                "open model only",
            ),
            (
                stage("5s", rate_level("5/s"), None),
                Model::Closed,
                "x[0].level",
                "is a rate",
            ),
            (
                stage("10000s", None, Some(1)),
                Model::Open,
                "x[0].arrivals",
                "less than 0.001/s",
            ),
            (
                stage("soon", None, Some(1)),
                Model::Open,
                "x[0].duration",
                "",
            ),
        ];
        for (stage, model, path, message) in cases {
            let mut errors = Errors::default();
            assert!(spec_stages(&[stage], "x", model, 0.0, &mut errors).is_none());
            assert_eq!(errors.0.len(), 1, "{:?}", errors.0);
            assert_eq!(errors.0[0].path, path);
            assert!(errors.0[0].message.contains(message), "{:?}", errors.0);
        }
    }

    #[test]
    fn the_short_form_plans_arrivals_and_bursts() {
        let load: spec::Load = serde_json::from_value(serde_json::json!({
            "model": "open",
            "stages": [
                { "duration": "10s", "arrivals": 200 },
                { "duration": "0s", "arrivals": 50 },
                { "duration": "0s", "level": "0/s" },
                { "duration": "5s", "level": "10/s" },
            ],
        }))
        .unwrap();
        let mut errors = Errors::default();
        let plan = super::super::build(&load, &mut errors).unwrap();
        assert!(errors.0.is_empty(), "{:?}", errors.0);
        assert_eq!(
            plan.stages,
            [
                planned(10.0, 20.0, 20.0, 0),
                planned(0.0, 20.0, 20.0, 50),
                planned(0.0, 20.0, 0.0, 0),
                planned(5.0, 0.0, 10.0, 0),
            ]
        );
        assert_eq!(
            plan.stop,
            super::super::Stop::Duration(Duration::from_secs(15))
        );
        // The burst of 50 outnumbers the peak rate's 20 a second.
        assert_eq!(plan.max_in_flight, 50);
        assert_eq!(
            (
                plan.graceful_stop,
                plan.max_duration,
                plan.per_loop_iterations
            ),
            (None, None, None)
        );
        // No division by a 0s stage: the level jumps, and is defined everywhere.
        assert_eq!(plan.level_at(10.0), 0.0);
        assert!((plan.level_at(12.5) - 5.0).abs() < 1e-12);

        let zero: spec::Load = serde_json::from_value(serde_json::json!({
            "stages": [{ "duration": "0s", "level": 3 }],
        }))
        .unwrap();
        assert!(super::super::build(&zero, &mut errors).is_none());
        assert_eq!(errors.0[0].path, "load.stages[0].duration");
        assert!(
            errors.0[0].message.contains("may not last 0s"),
            "{:?}",
            errors.0
        );
    }

    #[test]
    fn a_last_stage_of_0s_is_refused_at_its_path() {
        for last in [
            stage("0s", None, Some(50)),
            stage("0s", rate_level("100/s"), None),
        ] {
            let mut errors = Errors::default();
            let stages = [stage("2s", rate_level("10/s"), None), last];
            let planned = spec_stages(&stages, "load.stages", Model::Open, 0.0, &mut errors);
            assert!(planned.is_none());
            assert_eq!(errors.0[0].path, "load.stages[1].duration");
            assert!(
                errors.0[0].message.contains("may not last 0s"),
                "{:?}",
                errors.0
            );
        }
    }
}
