//! loadgate: a CI performance gate for HTTP services.
//!
//! Data flows one way: spec → validate → plan → run → result → compare → report. [`run()`] is the entry
//! point (the binary's `main` only maps its outcome to an exit code), callable from tests.
//!
//! Each step is one module, and imports go one way too (`scripts/check-house` checks it):
//! [`spec`] (the YAML as written) → `validate` (schema and semantic checks) → [`plan`] (every
//! default applied, every string parsed) → [`run`](mod@run) (the hot path; hands over a plain
//! `RunOutput`) → [`result`] (the versioned artifact) → [`compare`] (baseline deltas, rule
//! verdicts, the gate's decision and exit codes) → [`report`] (one renderer per format). Two leaf
//! modules sit beneath them: `measure` (what a run records: HDR histograms, counters, threshold
//! aggregates) and `units` (parsing and formatting of durations, rates and fractions).
//!
//! The words (connection, stream, virtual user, in flight, arrival, target, stage, level) are
//! defined once, in the glossary of `plan/load.rs` and docs/spec.md.

#![warn(missing_docs)]

mod ab;
pub mod cli;
pub mod compare;
mod files;
mod measure;
pub mod plan;
mod quick;
pub mod report;
pub mod result;
pub mod run;
pub mod serve;
pub mod service;
pub mod spec;
mod udp;
mod units;
pub mod validate;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use std::path::PathBuf;

use anyhow::Context as _;
use cli::{Cli, Command, CompareArgs, ReportArgs, RunArgs, SchemaKind};
use compare::gate::Exit;
use report::progress::ProgressLine;
use report::verdict::Verdict;

pub use compare::gate::Outcome;

/// The exit code for an error that ended a command: 2 for an invalid spec or input (flags of
/// a one-line run or a curl command that cannot be used, a result file that cannot be read (or
/// is not a regular file, or is over its size limit), results that cannot be compared or merged, an `--out` path that
/// cannot take the file, a `--templates` folder that is not one, a `--shard` or `--start-at`
/// that cannot be used), 3 otherwise.
pub fn error_exit_code(error: &anyhow::Error) -> ExitCode {
    let invalid_spec = error.chain().any(|e| {
        e.is::<validate::Diagnostics>()
            || e.is::<spec::SpecLoadError>()
            || e.is::<result::ReadError>()
            || e.is::<files::FileError>()
            || e.is::<result::OutError>()
            || e.is::<report::TemplatesError>()
            || e.is::<compare::CompareError>()
            || e.is::<result::merge::MergeError>()
            || e.is::<ab::AbError>()
            || e.is::<ab::AlternateError>()
            || e.is::<quick::QuickError>()
            || e.is::<plan::shard::ShardError>()
    });
    let exit = if invalid_spec {
        Exit::InvalidInput
    } else {
        Exit::RunFailed
    };
    ExitCode::from(exit.code())
}

/// The text printed for an error that ended a command: its whole chain (`{:#}`), with
/// bidirectional controls, invisible format characters and control characters other than line
/// breaks and tabs written as `\u{...}` escapes, as every report writes them: a path or a name
/// quoted in a message cannot reorder or hide what the terminal shows.
pub fn error_message(error: &anyhow::Error) -> String {
    format!("{error:#}")
        .split('\n')
        .map(|line| {
            line.split('\t')
                .map(spec::printable)
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Validate { spec } => {
            let source = spec::SourceSpec::read(&spec)?;
            let plan = validate::check(&source, &env_var)?;
            let what = if plan.flows.is_empty() {
                format!("{} target(s)", plan.targets.len())
            } else {
                format!(
                    "{} flow(s) of {} step(s)",
                    plan.flows.len(),
                    plan.targets.len()
                )
            };
            println!(
                "{}: valid ({what}, {} threshold(s))",
                spec.display(),
                plan.slo.len()
            );
            Ok(Outcome::Passed)
        }
        Command::Schema { which } => {
            let schema = match which {
                SchemaKind::Spec => validate::spec_schema(),
                SchemaKind::Result => result::schema(),
                SchemaKind::Verdict => report::verdict::schema(),
            };
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(Outcome::Passed)
        }
        Command::Serve(args) => {
            serve::serve(&args.options()?)?;
            Ok(Outcome::Passed)
        }
        Command::Run(args) => run_spec(&args),
        Command::Quick(args) => quick::quick(&args),
        Command::Curl(args) => quick::curl(&args),
        Command::Compare(args) => compare_files(&args),
        Command::Report(args) => report_files(&args),
        Command::Ab(args) => ab::ab(&args, &env_var),
        Command::Merge(args) => {
            let results = args
                .results
                .iter()
                .map(|p| result::read(p))
                .collect::<Result<Vec<_>, _>>()?;
            let merged = result::merge::merge(
                &results,
                result::merge::MergeOptions {
                    allow_missing: args.allow_missing,
                },
            )?;
            result::write(&merged, &args.out)?;
            eprintln!(
                "loadgate: merged {} results into `{}`",
                results.len(),
                args.out.display()
            );
            // The merged run is judged as `run` judges one: its SLOs (a shard's are not).
            print!(
                "{}",
                report::console::summary(&merged, report::console::color(false))
            );
            Ok(Verdict::of(&merged, None).outcome())
        }
    }
}

/// `loadgate compare`: prints the comparison and ends by its verdict.
fn compare_files(args: &CompareArgs) -> anyhow::Result<Outcome> {
    let baseline = result::read(&args.baseline)?;
    let current = result::read(&args.current)?;
    let history = read_results(&args.baseline_history)?;
    let comparison = compare::compare_with_history(&baseline, &current, &history)?;
    let input = report::Input {
        current: &current,
        baseline: Some(&baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: args.spec.as_deref(),
    };
    let text = report::render(args.format, &input, args.templates.as_deref())?;
    report::output(&text, args.output.as_deref())?;
    Ok(Verdict::of(&current, Some(&comparison)).outcome())
}

/// `loadgate report`: renders the latest result, compared with a baseline when given, with a
/// trend when there are several. Succeeds whatever the verdict (the gate is `run`/`compare`).
fn report_files(args: &ReportArgs) -> anyhow::Result<Outcome> {
    if let [path] = args.results.as_slice()
        && path.is_file()
        && let Some(ab) = result::ab::read(path)?
    {
        return report_ab(args, &ab);
    }
    let mut results = read_results(&args.results)?;
    // Time order; RFC 3339 UTC strings of one format sort as times.
    results.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let current = results.pop().expect("at least one result");
    if let Some(other) = results.iter().find(|r| r.spec.name != current.spec.name) {
        return Err(compare::CompareError::DifferentSpecs {
            baseline: other.spec.name.clone(),
            current: current.spec.name.clone(),
        }
        .into());
    }
    let keep = args.window.max(1) - 1;
    let history = &results[results.len().saturating_sub(keep)..];
    let baseline = args.baseline.as_deref().map(result::read).transpose()?;
    let earlier = read_results(&args.baseline_history)?;
    let comparison = baseline
        .as_ref()
        .map(|b| compare::compare_with_history(b, &current, &earlier))
        .transpose()?;
    let input = report::Input {
        current: &current,
        baseline: baseline.as_ref(),
        comparison: comparison.as_ref(),
        history,
        spec_path: args.spec.as_deref(),
    };
    let text = report::render(args.format, &input, args.templates.as_deref())?;
    report::output(&text, args.output.as_deref())?;
    Ok(Outcome::Passed)
}

/// Reads result files, and the `.json` files of folders (in name order), from `paths`. Errors:
/// a folder without result files, an unreadable result.
fn read_results(paths: &[PathBuf]) -> anyhow::Result<Vec<result::RunResult>> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("cannot list `{}`", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            inside.sort();
            if inside.is_empty() {
                anyhow::bail!(result::ReadError::Invalid {
                    path: path.display().to_string(),
                    reason: "the folder has no .json result files".to_string(),
                });
            }
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    Ok(files
        .iter()
        .map(|p| result::read(p))
        .collect::<Result<Vec<_>, _>>()?)
}

/// `loadgate report AB.json`: the paired report of a `loadgate ab --out` document (the
/// candidate against the baseline, the rules judged on the pairs).
fn report_ab(args: &ReportArgs, ab: &result::ab::AbResult) -> anyhow::Result<Outcome> {
    if let Some(path) = &args.baseline {
        anyhow::bail!(result::ReadError::Invalid {
            path: path.display().to_string(),
            reason: "`--baseline` does not apply to a `loadgate ab` document, which holds its \
                     own baseline: leave it out"
                .to_string(),
        });
    }
    let comparison = compare::compare_paired(ab)?;
    let input = report::Input {
        current: &ab.candidate,
        baseline: Some(&ab.baseline),
        comparison: Some(&comparison),
        history: &[],
        spec_path: args.spec.as_deref(),
    };
    let text = report::render(args.format, &input, args.templates.as_deref())?;
    report::output(&text, args.output.as_deref())?;
    Ok(Outcome::Passed)
}

/// `loadgate run`: read and validate the spec, then [`run_plan`].
fn run_spec(args: &RunArgs) -> anyhow::Result<Outcome> {
    let source = spec::SourceSpec::read(&args.spec)?;
    let plan = validate::check(&source, &env_var)?;
    let mut lines = report::lines::LineSink::new(args.format, args.output.clone())?;
    Ok(run_plan(&plan, args, &mut lines, &mut None)?.1)
}

/// The run of a validated plan, shared by `loadgate run` and the one-line runs (`quick`,
/// `curl`, which build a spec from their flags): start the service, run, stop the service,
/// build the result, print the summary (or the `--format` line), write `--out`, compare with
/// `--baseline`, and judge. `interrupt`: the Ctrl-C watcher, started here on the first run
/// and kept by the caller across runs. Returns the result and its outcome.
pub(crate) fn run_plan(
    plan: &plan::Plan,
    args: &RunArgs,
    lines: &mut report::lines::LineSink,
    interrupt: &mut Option<Interrupt>,
) -> anyhow::Result<(result::RunResult, Outcome)> {
    // `--shard` and `--start-at` first: bad input fails before anything else.
    let (plan, start_at) = share(plan, args)?;
    // Then the baseline: a missing or foreign baseline fails before any load is sent.
    let baseline = match &args.baseline {
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
    let out = args
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
    let mut progress = ProgressLine::new(args.quiet, plan.load.measured_duration());
    let output = run::execute(plan, stop, &mut |p| progress.update(p));
    progress.finish();
    // A service that exited during the run stopped it: its result so far is kept, then the
    // command fails (exit 3) saying so.
    let died = service.map(service::Service::finish).transpose().err();
    let output = output?;

    let result = result::build(plan, &output);
    let summary = report::console::summary(&result, report::console::color(args.no_color));
    lines.write(&summary, &result, run::workers(plan))?;
    if let Some(out) = out {
        out.write(&result)?;
    }
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

/// The plan of this process (`--shard`: its share, `plan::Plan::shard`) and the parsed
/// `--start-at`. Errors (exit 2): `--baseline` with `--shard`, a share of nothing, a
/// `--start-at` that is not a time.
fn share(
    plan: &plan::Plan,
    args: &RunArgs,
) -> Result<(plan::Plan, Option<std::time::SystemTime>), plan::shard::ShardError> {
    let start_at = args
        .start_at
        .as_deref()
        .map(|t| plan::shard::parse_start_at(t, std::time::SystemTime::now()))
        .transpose()?;
    let plan = match args.shard {
        Some(shard) if args.baseline.is_some() => {
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
pub fn env_var(name: &str) -> Option<String> {
    if name == "LOADGATE"
        && let Ok(exe) = std::env::current_exe()
    {
        return Some(exe.to_string_lossy().into_owned());
    }
    std::env::var(name).ok()
}

/// Watches for an interrupt: sets `stop` on the first Ctrl-C (SIGINT) or SIGTERM (see
/// [`interrupt_signal`]), from a thread of its own that ends when this is dropped. The handlers
/// stay installed after that: a later Ctrl-C is ignored, as while watching.
pub(crate) struct Interrupt {
    /// Set on the signal.
    pub(crate) stop: Arc<AtomicBool>,
    /// Dropped with this, which ends the watching thread.
    _watching: tokio::sync::oneshot::Sender<()>,
}

impl Interrupt {
    /// Installs the handlers (before it returns) and starts watching.
    pub(crate) fn watch() -> std::io::Result<Interrupt> {
        let stop = Arc::new(AtomicBool::new(false));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .build()?;
        let signal = {
            let _in_runtime = runtime.enter();
            interrupt_signal()?
        };
        let (watching, dropped) = tokio::sync::oneshot::channel::<()>();
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("loadgate-signals".to_string())
            .spawn(move || {
                runtime.block_on(async {
                    tokio::select! {
                        () = signal => flag.store(true, Ordering::Relaxed),
                        _ = dropped => {}
                    }
                });
            })?;
        Ok(Interrupt {
            stop,
            _watching: watching,
        })
    }
}

/// A future that resolves on the first SIGINT or SIGTERM; on Windows, on the first Ctrl-C or
/// Ctrl-Break. The handlers are installed when this function returns (it needs a tokio runtime
/// with I/O enabled; `tokio::signal::ctrl_c` would install its handler only when first polled).
pub(crate) fn interrupt_signal() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt())?,
            signal(SignalKind::terminate())?,
        )
    };
    #[cfg(windows)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::windows::{ctrl_break, ctrl_c};
        (ctrl_c()?, ctrl_break()?)
    };
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

#[cfg(all(test, unix))]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    /// SIGTERM (what a CI runner sends on cancel) stops a run as Ctrl-C does (`tests/run.rs`
    /// sends SIGINT to the binary).
    #[test]
    fn sigterm_sets_the_stop_flag() {
        let interrupt = super::Interrupt::watch().unwrap();
        assert!(!interrupt.stop.load(Ordering::Relaxed));
        nix::sys::signal::raise(nix::sys::signal::Signal::SIGTERM).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !interrupt.stop.load(Ordering::Relaxed) {
            assert!(
                Instant::now() < deadline,
                "SIGTERM did not set the flag in 5 s"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}
