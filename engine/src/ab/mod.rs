//! `loadgate ab`: the spec's load applied to a **baseline** and a **candidate** in one
//! invocation, on the same machine, and each regression rule judged on the paired sub-runs.
//!
//! This is **duet** mode (Bulej et al., "Duet Benchmarking: Improving Measurement Accuracy in
//! the Cloud", ICPE 2020): both sides are loaded at the same time, on the same schedule, so
//! that whatever disturbs the machine (a neighbour, CPU frequency, a noisy runner) disturbs
//! both alike, and the difference between the sides in each epoch stays sharp where the
//! difference between two separate runs would not.
//!
//! The sides differ only in where the load goes: `--baseline-url`/`--candidate-url` replace
//! `defaults.base_url`, and `--baseline NAME=VALUE`/`--candidate NAME=VALUE` answer `${NAME}`
//! before the environment does. Each side is validated and planned as `loadgate run` would (the
//! same diagnostics), its `service` started, then both runs start together on two threads (a
//! [`Barrier`]) and share the stop flag (Ctrl-C stops both).
//!
//! # What the sides share
//!
//! The two runs are two generators in one process. What `run::execute` measures per run stays
//! per side (histograms, counts, the time series, lateness), but the client CPU time is the
//! process's (`getrusage(RUSAGE_SELF)`): each side's `environment.client_cpu_*_s` and each
//! stage's `client_cpu_s` count both sides, and the generator health check (`loadgate` used
//! more than 90% of all CPUs) sees the whole process on each side. That is the right signal in
//! a duet: when the process as a whole saturated the machine, the generator was the bottleneck
//! for both sides, and neither side's numbers can be trusted; both are marked invalid together.
//! The services share the machine too: `machine.rs` reads how busy all of its CPUs were during
//! the duet (`machine_busy` in `--out`), and the comparison notes a machine above 90% busy,
//! suggesting `--mode alternating` (`AbResult::saturation_note`).
//!
//! # One clock, interleaved arrivals
//!
//! Each side resolves and checks its targets first; then both start on one clock (a common
//! time zero just after the barrier), so their epochs pair exactly. In the open model, the
//! arrival schedule of the side in the second position is offset by half an inter-arrival
//! interval (at the rate where measuring starts): the sides' requests interleave, A B A B,
//! instead of reaching the machine at the same instants. Sent at the same instants to two
//! services that share a core, one side's requests would always wait for the other's: `bench/ab_noise.sh` found a steady
//! ~180 µs p50 gap between two identical sides (400 µs of CPU work per request, one shared
//! core), a bias that a paired interval then reports as a change. The closed model has no
//! schedule to offset: its virtual users send as their responses end.
//!
//! # Sub-runs
//!
//! A duet is `R` sub-runs (`--sub-runs`, `ab.sub_runs`: 8 by default), one after the other,
//! the services up throughout: each measures `D/R` of the spec's measured duration, and the
//! sides swap positions from one to the next (which side's thread starts first and whose
//! schedule is offset), the first drawn at random, so that a position's advantage cancels
//! across them; the paired verdict is taken across the sub-runs (`sub_runs.rs` says how the
//! load is split and bounded, and when a sub-run is late).
//!
//! # Alternating mode
//!
//! `--mode alternating` loads one side at a time instead, epoch by epoch in ABBA blocks
//! (`alternate.rs`); duet is the default (bench/README.md says why).
//!
//! # A/A calibration
//!
//! With `--aa` the candidate is the baseline (same URL, values, and so one shared service):
//! `calibrate.rs` prints per rule the minimum detectable effect at 80% power and the run
//! length at which its noise part would equal the rule's allowance.
//!
//! # Epochs
//!
//! Each side's run hands its measures over in epochs of `--epoch` (250 ms by default, a whole
//! fraction of a second); epoch `i` of the baseline pairs with epoch `i` of the candidate, and
//! `compare::compare_paired` judges each rule on the pairs. Short epochs give many pairs, so
//! a narrow interval: `bench/ab_noise.sh` measured the choice (bench/README.md).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

mod alternate;
mod calibrate;
mod join;
mod machine;
mod sides;
mod sub_runs;

pub(crate) use alternate::AlternateError;
use sub_runs::Ran;
pub(crate) use sub_runs::parse_sub_runs;

use crate::compare;
use crate::compare::gate::{Outcome, Overall};
use crate::options::{AbMode, AbOptions};
use crate::plan::{Model, Plan};
use crate::report::progress::ProgressLine;
use crate::result;
use crate::result::ab::{AB_VERSION, AbResult};
use crate::run::{self, RunOutput};
use crate::service::Service;
use crate::signal::Interrupt;
use crate::spec::{Ab, AbModeSpec, SourceSpec};
use anyhow::Context as _;

/// Why the two sides of `loadgate ab` cannot be run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AbError {
    /// Nothing tells the sides apart.
    #[error(
        "the baseline and the candidate are the same: give different `--baseline-url` and \
         `--candidate-url`, or different `--baseline NAME=VALUE` and `--candidate NAME=VALUE`; \
         or `--aa` for an A/A calibration"
    )]
    SameSides,
    /// The `ab` block's `epoch` cannot be read.
    #[error("the spec's `ab.epoch`: {0}")]
    BlockEpoch(String),
    /// A spec of `scenarios`: `ab` loads both sides with one load.
    #[error(
        "`loadgate ab` runs a spec's one `load` on both sides; this spec gives `scenarios`: \
         give it a `load` block instead, or gate the scenarios with `loadgate run --baseline`"
    )]
    Scenarios,
    /// A duet epoch longer than a second.
    #[error("duet mode takes epochs that divide a second (1s, 500ms, 250ms, …), not {0:?}")]
    DuetEpoch(Duration),
}

/// `loadgate ab`; `env` looks up `${NAME}`s that a side does not give.
pub(crate) fn ab(
    args: &AbOptions,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Outcome> {
    let source = SourceSpec::read(&args.spec)?;
    let block = sides::ab_block(&source, env)?;
    let sides = sides::sides(args, &block);
    if !args.aa && sides[0].same_as(&sides[1]) {
        return Err(AbError::SameSides.into());
    }
    let (mode, epoch) = mode_and_epoch(args, &block)?;
    let plans = [sides[0].plan(&source, env)?, sides[1].plan(&source, env)?];
    if !plans[0].scenarios.is_empty() {
        return Err(AbError::Scenarios.into());
    }
    // The block's `sub_runs` is checked with the spec (even, at least 4: its schema).
    let sub_runs = args
        .sub_runs
        .or(block.sub_runs)
        .unwrap_or_else(|| sub_runs::default_count(plans[0].load.measured_duration()));
    // The open-files limit, raised and checked before descriptors of this process's own.
    for plan in &plans {
        crate::run::raise_file_limit(plan)?;
    }
    // A folder that cannot take `--out` fails before any load is sent.
    let out = args
        .out
        .as_deref()
        .map(result::OutFile::create)
        .transpose()?;

    let interrupt = Interrupt::watch()?;
    let stop = interrupt.stop.clone();
    if mode == AbMode::Alternating {
        alternate::check(&plans[0], epoch)?;
    }
    let services = start_services(&plans, &stop)?;
    let before = machine::ticks();
    let ran = run_sides(&plans, &stop, (mode, epoch, sub_runs), args.quiet);
    // Duet loads both sides at once: how busy that made the machine.
    let machine_busy = machine::busy_since(before).filter(|_| mode == AbMode::Duet);
    // A service that exited during the run stopped it: its result so far is kept (`--out`),
    // then the command fails (exit 3) saying so.
    let died = services
        .into_iter()
        .map(Service::finish)
        .find_map(Result::err);
    let mut ab = ab_result(&plans, ran?, mode, epoch);
    ab.machine_busy = machine_busy;
    sub_runs::judge_lateness(&mut ab);
    if let Some(died) = died {
        if let Some(out) = out {
            out.write(&ab)?;
        }
        return Err(died.into());
    }
    let (baseline, candidate) = (&ab.baseline, &ab.candidate);
    for (label, result) in [("BASELINE", baseline), ("CANDIDATE", candidate)] {
        print!(
            "\n{label}\n{}",
            crate::report::console::summary(
                result,
                crate::report::console::SummaryOptions {
                    color: crate::report::console::color(false),
                    verbose: false,
                }
            )
        );
    }
    let comparison = compare::compare_paired(&ab)?;
    let input = crate::report::Input {
        current: candidate,
        baseline: Some(baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: None,
    };
    print!(
        "{}",
        crate::report::render(crate::report::Format::Text, &input, None)?
    );
    if args.aa {
        let calibrations = calibrate::calibrate(&comparison, candidate.duration_s);
        print!(
            "{}",
            calibrate::render(
                &calibrations,
                &comparison,
                candidate.duration_s,
                (
                    ab.sub_runs.len(),
                    ab.sub_runs.iter().filter(|s| s.late).count()
                )
            )
        );
    }
    if let Some(out) = out {
        out.write(&ab)?;
    }
    Ok(if baseline.interrupted || candidate.interrupted {
        Outcome::Interrupted
    } else {
        // Either side's invalid health is an invalid measurement: the candidate's directly,
        // the baseline's through `baseline_invalid`.
        Overall::of(candidate, Some(&comparison)).into()
    })
}

/// The mode and epoch: the command line's, else the `ab` block's, else the mode's default.
/// Errors: an unreadable block epoch, a duet epoch longer than a second.
fn mode_and_epoch(args: &AbOptions, block: &Ab) -> Result<(AbMode, Duration), AbError> {
    let mode = args.mode.unwrap_or(match block.mode {
        Some(AbModeSpec::Alternating) => AbMode::Alternating,
        Some(AbModeSpec::Duet) | None => AbMode::Duet,
    });
    let epoch = match (args.epoch, &block.epoch) {
        (Some(epoch), _) => epoch,
        (None, Some(text)) => parse_epoch(text).map_err(AbError::BlockEpoch)?,
        (None, None) => mode.default_epoch(),
    };
    if mode == AbMode::Duet && epoch > Duration::from_secs(1) {
        return Err(AbError::DuetEpoch(epoch));
    }
    Ok((mode, epoch))
}

/// Parses an epoch length (`--epoch`, the spec's `ab.epoch`): whole milliseconds that divide a
/// second (or whole seconds), at least 10 ms. Errors: the message for the flag or the field.
pub(crate) fn parse_epoch(text: &str) -> Result<Duration, String> {
    let epoch = crate::units::parse_duration(text)?;
    let (second, e) = (Duration::from_secs(1).as_nanos(), epoch.as_nanos());
    let ms = Duration::from_millis(1).as_nanos();
    if e < 10 * ms || e % ms != 0 || (second % e != 0 && e % second != 0) {
        return Err(format!(
            "an epoch is a whole fraction of a second, at least 10ms (1s, 500ms, 250ms, 200ms, \
             100ms), or whole seconds in alternating mode, not `{text}`"
        ));
    }
    Ok(epoch)
}

/// Runs both sides in `mode`, in epochs of `epoch` and `sub_runs` sub-runs (duet).
fn run_sides(
    plans: &[Plan; 2],
    stop: &Arc<AtomicBool>,
    (mode, epoch, sub_runs): (AbMode, Duration, u32),
    quiet: bool,
) -> anyhow::Result<Ran> {
    match mode {
        AbMode::Duet => {
            let first = fastrand::bool();
            let measured = plans[0].load.measured_duration();
            eprintln!(
                "loadgate: {sub_runs} sub-runs{}, the sides' positions swapped from one to \
                 the next: the {} first in sub-run 1 (drawn at random)",
                measured.map_or(String::new(), |d| format!(
                    " of {:?} measured each",
                    d / sub_runs
                )),
                if first { "baseline" } else { "candidate" },
            );
            let mut line = ProgressLine::new(quiet, measured);
            let duet = |subs: &[Plan; 2],
                        baseline_first: bool,
                        progress: &mut (dyn FnMut(&run::Progress) + Send)| {
                run_duet(subs, stop, epoch, baseline_first, progress)
            };
            let ran = sub_runs::run_sub_runs(
                plans,
                (sub_runs, first),
                stop,
                millis(epoch),
                &mut |p| line.update(p),
                &duet,
            );
            line.finish();
            ran
        }
        AbMode::Alternating => {
            let first_is_baseline = fastrand::bool();
            eprintln!(
                "loadgate: alternating epochs of {epoch:?} in up to {sub_runs} sub-runs, ABBA \
                 blocks opened by the {} in the first (drawn at random), by the other side in \
                 the next",
                if first_is_baseline {
                    "baseline"
                } else {
                    "candidate"
                }
            );
            alternate::run_alternating(plans, stop, epoch, (sub_runs, first_is_baseline))
        }
    }
}

/// `epoch` in whole milliseconds.
fn millis(epoch: Duration) -> u64 {
    u64::try_from(epoch.as_millis()).unwrap_or(u64::MAX)
}

/// The `--out` document from each side's output and complete epochs of `epoch`.
fn ab_result(
    plans: &[Plan; 2],
    ([(b, b_epochs), (c, c_epochs)], sub_runs): Ran,
    mode: AbMode,
    epoch: Duration,
) -> AbResult {
    AbResult {
        ab_version: AB_VERSION,
        mode: mode.name().to_string(),
        epoch_ms: millis(epoch),
        baseline: result::build_ab_side(&plans[0], &b),
        candidate: result::build_ab_side(&plans[1], &c),
        sub_runs,
        baseline_epochs: b_epochs,
        candidate_epochs: c_epochs,
        machine_busy: None,
    }
}

/// Starts each side's service, in order, and waits until it is ready; the candidate shares the
/// baseline's when both resolve to the same command, environment and folder. Dropping the
/// services stops them.
fn start_services(plans: &[Plan; 2], stop: &Arc<AtomicBool>) -> anyhow::Result<Vec<Service>> {
    let mut services = Vec::new();
    for (label, plan) in ["baseline", "candidate"].iter().zip(plans) {
        let Some(s) = &plan.service else { continue };
        let same_as_baseline = plans[0].service.as_ref().is_some_and(|b| {
            *label == "candidate"
                && b.command == s.command
                && b.env == s.env
                && b.working_dir == s.working_dir
        });
        if same_as_baseline {
            eprintln!("loadgate: the candidate shares the baseline's service");
            continue;
        }
        eprintln!(
            "loadgate: starting the {label} service `{}`",
            s.display_command
        );
        let service = Service::start(s, stop).with_context(|| format!("the {label} side"))?;
        services.push(service);
    }
    Ok(services)
}

/// Runs both plans at the same time: two threads, released together by a barrier, sharing
/// `stop`. The side in the first position (the baseline when `baseline_first`) has its thread
/// spawned first and its schedule at time zero; the other's is offset
/// ([`interleave_offset`]). A side that cannot be carried out stops the other. `progress`
/// follows the baseline (both sides keep the same schedule).
fn run_duet(
    plans: &[Plan; 2],
    stop: &Arc<AtomicBool>,
    epoch: Duration,
    baseline_first: bool,
    progress: &mut (dyn FnMut(&run::Progress) + Send),
) -> anyhow::Result<[RunOutput; 2]> {
    let barrier = Barrier::new(2);
    let origin = OnceLock::new();
    let run_side = |plan: &Plan, offset: Duration, progress: &mut dyn FnMut(&run::Progress)| {
        let ready = run::prepare(plan).map(|r| r.with_epoch(epoch).on_given_clock());
        barrier.wait();
        let start = *origin.get_or_init(|| Instant::now() + CLOCK_LEAD);
        let output = ready.and_then(|ready| ready.run(start + offset, stop.clone(), progress));
        if output.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        output
    };
    let run_side = &run_side;
    let (second, offset) = if baseline_first { (1, 0) } else { (0, 1) };
    let mut offsets = [Duration::ZERO; 2];
    offsets[offset] = interleave_offset(&plans[second]);
    let (baseline, candidate) = std::thread::scope(|scope| {
        let baseline = || run_side(&plans[0], offsets[0], progress);
        let candidate = || run_side(&plans[1], offsets[1], &mut |_| {});
        let (baseline, candidate) = if baseline_first {
            let b = scope.spawn(baseline);
            (b, scope.spawn(candidate))
        } else {
            let c = scope.spawn(candidate);
            (scope.spawn(baseline), c)
        };
        (
            baseline.join().expect("the baseline's run does not panic"),
            candidate
                .join()
                .expect("the candidate's run does not panic"),
        )
    });
    Ok([
        baseline.context("the baseline side")?,
        candidate.context("the candidate side")?,
    ])
}

/// How far after the common time zero both sides' schedules start: time for the second thread
/// to read it before it passes.
const CLOCK_LEAD: Duration = Duration::from_millis(5);

/// The schedule offset of the side in the second position: half the open model's inter-arrival interval at the rate
/// where measuring starts (the peak rate when that is 0), at most 1 s; none in the closed
/// model.
fn interleave_offset(plan: &Plan) -> Duration {
    if plan.load.model != Model::Open {
        return Duration::ZERO;
    }
    let at_measuring = plan.load.level_at(plan.load.warmup().as_secs_f64());
    let rate = if at_measuring > 0.0 {
        at_measuring
    } else {
        plan.load
            .stages
            .iter()
            .map(|s| s.from.max(s.to))
            .fold(0.0, f64::max)
    };
    if rate > 0.0 {
        Duration::from_secs_f64((0.5 / rate).min(1.0))
    } else {
        Duration::ZERO
    }
}
