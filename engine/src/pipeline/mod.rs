//! The pipeline of `loadgate run`: spec → validate → plan → run → result → verdict (and
//! `--export`), and the commands that read result files (`results.rs`: compare, report, merge;
//! `history.rs`: `loadgate history`; `loadgate export` here).
//!
//! [`run_plan`] is the run of a validated plan, shared by `loadgate run` ([`run_spec`]) and the
//! one-line runs (`quick`, `curl`, which build a spec from their flags). Each step's work is its
//! module's; this one only puts them in order and prints between them.

mod history;
mod results;

use std::path::Path;

use crate::compare::gate::Outcome;
use crate::options::{PlanRunOptions, RunOptions};
use crate::report::progress::ProgressLine;
use crate::report::verdict::Verdict;
use crate::signal::Interrupt;
use crate::{compare, export, plan, report, result, run, service, spec, validate};

pub(crate) use history::history;
pub(crate) use results::{compare_files, merge_files, report_files};

/// `loadgate validate SPEC`: reads and validates the spec, and says what it holds.
pub(crate) fn validate_spec(spec: &Path) -> anyhow::Result<Outcome> {
    let source = spec::SourceSpec::read(spec)?;
    let plan = validate::check(&source, &env_var)?;
    let steps: usize = plan.flows.iter().map(|f| f.steps.len()).sum();
    let plain = plan.targets.len() - steps;
    let mut parts = Vec::new();
    if !plan.scenarios.is_empty() {
        parts.push(format!("{} scenario(s)", plan.scenarios.len()));
    }
    if plain > 0 || plan.flows.is_empty() {
        parts.push(format!("{plain} target(s)"));
    }
    if !plan.flows.is_empty() {
        parts.push(format!("{} flow(s) of {steps} step(s)", plan.flows.len()));
    }
    let what = parts.join(", ");
    println!(
        "{}: valid ({what}, {} threshold(s))",
        spec.display(),
        plan.slo.len()
    );
    Ok(Outcome::Passed)
}

/// `loadgate run`: read and validate the spec, then [`run_plan`].
pub(crate) fn run_spec(options: &RunOptions) -> anyhow::Result<Outcome> {
    let source = spec::SourceSpec::read(&options.spec)?;
    let plan = validate::check(&source, &env_var)?;
    let lines = &options.lines;
    let mut lines = report::lines::LineSink::new(lines.format, lines.output.clone())?;
    Ok(run_plan(&plan, &options.run, &mut lines, &mut None)?.1)
}

/// The run of a validated plan, shared by `loadgate run` and the one-line runs (`quick`,
/// `curl`, which build a spec from their flags): start the service, run, stop the service,
/// build the result, print the summary (or the `--format` line), write `--out`, compare with
/// `--baseline`, and judge. A spec of scenarios runs them all at once ([`run_load`]).
/// `interrupt`: the Ctrl-C watcher, started here on the first run
/// and kept by the caller across runs. Returns the result and its outcome.
pub(crate) fn run_plan(
    plan: &plan::Plan,
    options: &PlanRunOptions,
    lines: &mut report::lines::LineSink,
    interrupt: &mut Option<Interrupt>,
) -> anyhow::Result<(result::RunResult, Outcome)> {
    // `--shard`, `--start-at` and `--export` first: bad input fails before anything else.
    let (plan, start_at) = share(plan, options)?;
    let exports = export::destinations(&options.export)?;
    // Then the baseline: a missing or foreign baseline fails before any load is sent.
    let baseline = match &options.baseline {
        Some(path) => {
            let baseline = result::read(path)?;
            if baseline.spec.name != plan.name {
                return Err(compare::CompareError::DifferentSpecs {
                    baseline: baseline.spec.name,
                    current: plan.name.clone(),
                }
                .into());
            }
            Some(baseline)
        }
        None => None,
    };
    // The open-files limit, raised and checked before this process opens descriptors of its
    // own (the signal watcher, the service's pipes, the `--out` file).
    run::raise_file_limit(&plan)?;
    // And the file of `--out`: a folder that cannot take it fails before any load too.
    let out = options
        .out
        .as_deref()
        .map(result::OutFile::create)
        .transpose()?;

    let stop = match interrupt {
        Some(i) => i.stop.clone(),
        None => interrupt.insert(Interrupt::watch()?).stop.clone(),
    };
    let service = match &plan.service {
        Some(s) => {
            eprintln!("loadgate: starting service `{}`", s.display_command);
            Some(service::Service::start(s, &stop)?)
        }
        None => None,
    };
    // The service has started: now the lateness of `--start-at` is known.
    let plan = &match start_at {
        Some(at) => timed(plan, at)?,
        None => plan,
    };
    let mut progress = ProgressLine::new(options.quiet, planned_duration(plan));
    let output = run_load(plan, stop, &mut |p| progress.update(p));
    progress.finish();
    // A service that exited during the run stopped it: its result so far is kept, then the
    // command fails (exit 3) saying so.
    let died = service.map(service::Service::finish).transpose().err();
    let result = output?;

    let summary = report::console::summary(
        &result,
        report::console::SummaryOptions {
            color: report::console::color(options.no_color),
            verbose: options.verbose,
        },
    );
    lines.write(&summary, &result, run::workers(plan))?;
    if let Some(out) = out {
        out.write(&result)?;
    }
    // Metrics out: a failed export is said on stderr and leaves the exit code alone.
    export::send(&result, &exports, &env_var);
    if let Some(died) = died {
        return Err(died.into());
    }
    let comparison = baseline
        .as_ref()
        .map(|b| compare::compare_with_history(b, &result, &[]))
        .transpose()?;
    if let (Some(b), Some(c)) = (&baseline, &comparison) {
        let input = report::Input {
            current: &result,
            baseline: Some(b),
            comparison: Some(c),
            history: &[],
            spec_path: None,
        };
        print!("{}", report::render(report::Format::Text, &input, None)?);
    }
    let outcome = Verdict::of(&result, comparison.as_ref()).outcome();
    Ok((result, shard_outcome(plan.shard, outcome)))
}

/// Runs the plan's load and builds its result: the one load of the short form
/// (`run::execute`, `result::build`), or every scenario at once (`run::execute_scenarios`,
/// `result::build_scenarios`). Errors: the run's.
fn run_load(
    plan: &plan::Plan,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    progress: &mut dyn FnMut(&run::Progress),
) -> Result<result::RunResult, run::RunError> {
    if plan.scenarios.is_empty() {
        let output = run::execute(plan, stop, progress)?;
        Ok(result::build(plan, &output))
    } else {
        let outputs = run::execute_scenarios(plan, stop, progress)?;
        Ok(result::build_scenarios(plan, &outputs))
    }
}

/// The planned measuring time, for the progress line: the load's; with scenarios, from the
/// run's time zero to the last scenario's planned end (`None` when one ends by a count).
fn planned_duration(plan: &plan::Plan) -> Option<std::time::Duration> {
    if plan.scenarios.is_empty() {
        return plan.load.measured_duration();
    }
    plan.scenarios
        .iter()
        .map(|s| s.plan.load.measured_duration().map(|d| s.start_time + d))
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .max()
}

/// `loadgate export RESULT --to KIND=URL...`: sends a stored result's metrics to each
/// destination. Errors: a `KIND=URL` that cannot be used or a result that cannot be read (exit
/// 2), an export that failed (exit 3, after trying every destination).
pub(crate) fn export_file(path: &Path, to: &[String]) -> anyhow::Result<Outcome> {
    let destinations = export::destinations(to)?;
    let result = result::read(path)?;
    let failed = export::send(&result, &destinations, &env_var);
    if failed > 0 {
        anyhow::bail!("{failed} of {} export(s) failed", destinations.len());
    }
    Ok(Outcome::Passed)
}

/// The plan of this process (`--shard`: its share, `plan::Plan::shard`) and the parsed
/// `--start-at`. Errors (exit 2): `--baseline` with `--shard`, a share of nothing, a
/// `--start-at` that is not a time.
fn share(
    plan: &plan::Plan,
    options: &PlanRunOptions,
) -> Result<(plan::Plan, Option<std::time::SystemTime>), plan::shard::ShardError> {
    let start_at = options
        .start_at
        .as_deref()
        .map(|t| plan::shard::parse_start_at(t, std::time::SystemTime::now()))
        .transpose()?;
    let plan = match options.shard {
        Some(shard) if options.baseline.is_some() => {
            return Err(plan::shard::ShardError::Baseline(shard));
        }
        Some(shard) => plan.clone().shard(shard)?,
        None => plan.clone(),
    };
    Ok((plan, start_at))
}

/// `plan` with its time zero at `start_at` (`plan::Plan::with_start_at`: a warmup shortened by
/// the lateness), saying on stderr when the run waits for it. Errors (exit 2): `start_at`
/// past by more than the warmup.
fn timed(
    plan: plan::Plan,
    start_at: std::time::SystemTime,
) -> Result<plan::Plan, plan::shard::ShardError> {
    let now = std::time::SystemTime::now();
    let plan = plan.with_start_at(start_at, now)?;
    if start_at > now {
        let who = plan
            .shard
            .map_or_else(|| "the run".to_string(), |s| format!("shard {s}"));
        eprintln!(
            "loadgate: {who} waits until {}",
            humantime::format_rfc3339_millis(start_at)
        );
    }
    Ok(plan)
}

/// How a run ends: by `outcome` (its verdict), or for a shard (`--shard`), whose SLOs are
/// judged on the merged result, [`Outcome::Passed`] unless the run was interrupted.
fn shard_outcome(shard: Option<plan::Shard>, outcome: Outcome) -> Outcome {
    match (shard, outcome) {
        (None, outcome) | (Some(_), outcome @ Outcome::Interrupted) => outcome,
        (Some(shard), _) => {
            eprintln!(
                "loadgate: shard {shard}: its SLOs are judged on the merged result (`loadgate \
                 merge`), not here"
            );
            Outcome::Passed
        }
    }
}

/// Looks up `${NAME}` for a spec: the environment, and `LOADGATE`, the running binary.
pub(crate) fn env_var(name: &str) -> Option<String> {
    if name == "LOADGATE"
        && let Ok(exe) = std::env::current_exe()
    {
        return Some(exe.to_string_lossy().into_owned());
    }
    std::env::var(name).ok()
}
