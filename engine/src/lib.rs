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
//! Above the steps: `cli.rs` turns the command line into plain options (`options`), and this
//! file hands each command's options to the module that carries it out: `pipeline` (validate,
//! run a spec, compare, report, merge), `quick` (one-line runs), `ab` (two sides at once) or
//! [`serve`] (the test server); `history` keeps results over runs (`loadgate history`) and
//! follows them as series; `export` sends a result's metrics out (Prometheus remote write,
//! OTLP/HTTP); `signal` watches for Ctrl-C. Nothing below imports `cli` or this file.
//!
//! The words (connection, stream, virtual user, in flight, arrival, target, stage, level) are
//! defined once, in the glossary of `plan/load.rs` and docs/spec.md.

#![warn(missing_docs)]

mod ab;
pub mod cli;
pub mod compare;
mod export;
mod files;
mod history;
mod measure;
mod options;
mod pipeline;
pub mod plan;
mod quick;
pub mod report;
pub mod result;
pub mod run;
pub mod serve;
pub mod service;
mod signal;
pub mod spec;
mod stats;
mod udp;
mod units;
pub mod validate;

use std::process::ExitCode;

use cli::{Cli, Command, SchemaKind};
use compare::gate::Exit;

pub use compare::gate::Outcome;

/// The exit code for an error that ended a command: 2 for an invalid spec or input (flags of
/// a one-line run or a curl command that cannot be used, a result file that cannot be read (or
/// is not a regular file, or is over its size limit), results that cannot be compared or merged, an `--out` path that
/// cannot take the file, a `--templates` folder that is not one, a `--shard` or `--start-at`
/// that cannot be used, an `--export` that is not KIND=URL, a `man` page of no command), 3 otherwise.
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
            || e.is::<export::DestinationError>()
            || e.is::<cli::NoSuchCommand>()
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

/// Runs one command: the options of its arguments (`cli.rs`), given to the module that carries
/// it out.
pub fn run(cli: Cli) -> anyhow::Result<Outcome> {
    match cli.command {
        Command::Validate { spec } => pipeline::validate_spec(&spec),
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
        Command::Run(args) => pipeline::run_spec(&args.into()),
        Command::Quick(args) => quick::quick(&(*args).into()),
        Command::Curl(args) => quick::curl(&(*args).into()),
        Command::Compare(args) => pipeline::compare_files(&args.into()),
        Command::Report(args) => pipeline::report_files(&args.into()),
        Command::Ab(args) => ab::ab(&args.into(), &pipeline::env_var),
        Command::Merge(args) => pipeline::merge_files(&args.results, &args.out, args.allow_missing),
        Command::Export(args) => pipeline::export_file(&args.result, &args.to),
        Command::History(args) => pipeline::history(&args.into()),
        Command::Completions { shell } => print(&cli::completion(shell)),
        Command::Man { command } => print(&cli::man_page(&command)?.roff),
        Command::Version => print(&cli::version()),
    }
}

/// Writes `text` to stdout as it is (a completion script, a manual page, the version).
fn print(text: &str) -> anyhow::Result<Outcome> {
    use std::io::Write;
    std::io::stdout().lock().write_all(text.as_bytes())?;
    Ok(Outcome::Passed)
}
