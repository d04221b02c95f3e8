//! loadgate: a CI performance gate for HTTP services.
//!
//! Data flows one way: spec → validate → plan → run → result → report. [`run`] is the entry
//! point (the binary's `main` only maps its outcome to an exit code), callable from tests.

pub mod cli;
pub mod plan;
pub mod report;
pub mod result;
pub mod run;
pub mod serve;
pub mod service;
pub mod spec;
pub mod validate;

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use cli::{Cli, Command, RunArgs, SchemaKind};
use report::progress::ProgressLine;

/// How a command ended, when it ran to the end. Each maps to a documented exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: the command succeeded; for `run`, every SLO passed.
    Passed,
    /// Exit 1: the run completed and at least one SLO failed.
    SloFailed,
    /// Exit 3: the run was interrupted (Ctrl-C or SIGTERM) before its end.
    Interrupted,
    /// Exit 5: the load generator did not apply the planned load (rate short of target,
    /// requests started late, or its CPU saturated): the numbers measure the generator.
    InvalidMeasurement,
}

/// Exit code for an invalid spec or command line.
pub const EXIT_INVALID_SPEC: u8 = 2;
/// Exit code for a run whose load generator fell short of the plan.
pub const EXIT_INVALID_MEASUREMENT: u8 = 5;
/// Exit code for a run that could not be carried out (service did not start, target
/// unreachable at start, result not writable).
pub const EXIT_RUN_FAILED: u8 = 3;

impl Outcome {
    /// The process exit code: 0 passed, 1 an SLO failed.
    pub fn exit_code(self) -> ExitCode {
        match self {
            Outcome::Passed => ExitCode::SUCCESS,
            Outcome::SloFailed => ExitCode::from(1),
            Outcome::Interrupted => ExitCode::from(EXIT_RUN_FAILED),
            Outcome::InvalidMeasurement => ExitCode::from(EXIT_INVALID_MEASUREMENT),
        }
    }
}

/// The exit code for an error that ended a command: 2 for an invalid spec, 3 otherwise.
pub fn error_exit_code(error: &anyhow::Error) -> ExitCode {
    let invalid_spec = error
        .chain()
        .any(|e| e.is::<validate::Diagnostics>() || e.is::<spec::SpecLoadError>());
    ExitCode::from(if invalid_spec {
        EXIT_INVALID_SPEC
    } else {
        EXIT_RUN_FAILED
    })
}

/// Runs one command.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Validate { spec } => {
            let source = spec::SourceSpec::read(&spec)?;
            let plan = validate::check(&source, &env_var)?;
            println!(
                "{}: valid ({} target(s), {} threshold(s))",
                spec.display(),
                plan.targets.len(),
                plan.slo.len()
            );
            Ok(Outcome::Passed)
        }
        Command::Schema { which } => {
            let schema = match which {
                SchemaKind::Spec => validate::spec_schema(),
                SchemaKind::Result => result::schema(),
            };
            println!("{}", serde_json::to_string_pretty(&schema)?);
            Ok(Outcome::Passed)
        }
        Command::Serve(args) => {
            serve::serve(&args)?;
            Ok(Outcome::Passed)
        }
        Command::Run(args) => run_spec(&args),
    }
}

/// `loadgate run`: validate, start the service, run, stop the service, report.
fn run_spec(args: &RunArgs) -> anyhow::Result<Outcome> {
    let source = spec::SourceSpec::read(&args.spec)?;
    let plan = validate::check(&source, &env_var)?;

    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())?;
    }
    let service = match &plan.service {
        Some(s) => {
            eprintln!("loadgate: starting service `{}`", s.display_command);
            Some(service::Service::start(s, &stop)?)
        }
        None => None,
    };
    let mut progress = ProgressLine::new(args.quiet, plan.load.measured_duration());
    let output = run::execute(&plan, stop, &mut |p| progress.update(p));
    progress.finish();
    drop(service);
    let output = output?;

    let result = result::build(&plan, &output);
    print!("{}", report::console::summary(&result));
    if let Some(path) = &args.out {
        result::write(&result, path)?;
    }
    Ok(if output.interrupted {
        Outcome::Interrupted
    } else if !result.health.valid {
        Outcome::InvalidMeasurement
    } else if result.passed {
        Outcome::Passed
    } else {
        Outcome::SloFailed
    })
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
