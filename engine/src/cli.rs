//! Command-line interface (clap derive).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

pub use crate::report::Format;
use crate::serve::{ServeOptions, ServeTls};

/// loadgate: a CI performance gate for HTTP services.
#[derive(Debug, Parser)]
#[command(name = "loadgate", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a spec: start its service, apply the load, check the SLOs.
    Run(RunArgs),
    /// Check a spec against the schema and its semantics, without running it.
    Validate {
        /// The spec file (YAML).
        spec: PathBuf,
    },
    /// Print a JSON Schema: of the spec (default) or of the result file.
    Schema {
        #[arg(value_enum, default_value = "spec")]
        which: SchemaKind,
    },
    /// Serve the built-in test target: responses shaped by query parameters.
    Serve(ServeArgs),
    /// Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run
    /// was interrupted (not judged), 4 regression, 5 invalid measurement.
    Compare(CompareArgs),
    /// Render a result (compared with a baseline, with a trend over earlier results) as
    /// Markdown, HTML, JUnit XML or JSON.
    Report(ReportArgs),
    /// Merge the results of several shards of one run into one result, losslessly.
    Merge(MergeArgs),
    /// Load a baseline and a candidate at the same time with the spec's load (duet) and judge
    /// each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression,
    /// 5 invalid measurement.
    Ab(AbArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum SchemaKind {
    Spec,
    Result,
    /// The JSON verdict of `compare --format json` and `report --format json`.
    Verdict,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The spec file (YAML).
    pub(crate) spec: PathBuf,
    /// Write the result artifact (JSON) here; written whole or not at all. A folder that
    /// cannot take the file is refused before any load is sent (exit 2).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever
    /// used when stdout is a terminal).
    #[arg(long)]
    pub(crate) no_color: bool,
    /// Compare the run with this baseline result and exit 4 on a regression; the file must
    /// exist.
    #[arg(long)]
    pub(crate) baseline: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The baseline result (JSON).
    pub(crate) baseline: PathBuf,
    /// The current result (JSON); its regression rules are used.
    pub(crate) current: PathBuf,
    /// Earlier results of the same spec (files, or folders of `.json` results; repeatable),
    /// e.g. the last baseline runs: with 3 or more, each rule's interval is widened by the
    /// run-to-run variation of its value over them and the baseline.
    #[arg(long, value_name = "PATH")]
    pub(crate) baseline_history: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: Format,
    /// Write the output here instead of stdout.
    #[arg(long)]
    pub(crate) output: Option<PathBuf>,
    /// A folder whose templates (report.md, report.html, junit.xml) replace the built-in ones;
    /// it must exist and hold at least one of them.
    #[arg(long)]
    pub(crate) templates: Option<PathBuf>,
    /// The spec file the results came from, as the repository names it (e.g.
    /// `perf/api.loadgate.yaml`): the JUnit report gives it as each test case's `file`, so
    /// test-report actions annotate the spec.
    #[arg(long, value_name = "PATH")]
    pub(crate) spec: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Result files or folders of them. Several results are taken in time order (by their
    /// `started_at`): the latest is reported, the others give a trend.
    #[arg(required = true)]
    pub(crate) results: Vec<PathBuf>,
    /// Compare the latest result with this baseline result.
    #[arg(long)]
    pub(crate) baseline: Option<PathBuf>,
    /// With `--baseline`: earlier results of the same spec (files or folders; repeatable) whose
    /// run-to-run variation widens each rule's interval, as `compare --baseline-history`.
    #[arg(long, value_name = "PATH", requires = "baseline")]
    pub(crate) baseline_history: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub(crate) format: Format,
    /// Write the report here instead of stdout.
    #[arg(long)]
    pub(crate) output: Option<PathBuf>,
    /// A folder whose templates (report.md, report.html, junit.xml) replace the built-in ones;
    /// it must exist and hold at least one of them.
    #[arg(long)]
    pub(crate) templates: Option<PathBuf>,
    /// The spec file the results came from, as the repository names it (e.g.
    /// `perf/api.loadgate.yaml`): the JUnit report gives it as each test case's `file`, so
    /// test-report actions annotate the spec.
    #[arg(long, value_name = "PATH")]
    pub(crate) spec: Option<PathBuf>,
    /// How many runs the trend shows, the latest included.
    #[arg(long, default_value_t = crate::report::history::DEFAULT_WINDOW)]
    pub(crate) window: usize,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AbArgs {
    /// The spec file (YAML); both sides get its load.
    pub(crate) spec: PathBuf,
    /// The baseline's `defaults.base_url`, replacing the spec's.
    #[arg(long, value_name = "URL")]
    pub(crate) baseline_url: Option<String>,
    /// The candidate's `defaults.base_url`, replacing the spec's.
    #[arg(long, value_name = "URL", conflicts_with = "aa")]
    pub(crate) candidate_url: Option<String>,
    /// A value of `${NAME}` for the baseline, before the environment's (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = name_value)]
    pub(crate) baseline: Vec<(String, String)>,
    /// A value of `${NAME}` for the candidate, before the environment's (repeatable).
    #[arg(long, value_name = "NAME=VALUE", value_parser = name_value, conflicts_with = "aa")]
    pub(crate) candidate: Vec<(String, String)>,
    /// A/A calibration: the candidate is the baseline (its URL, values and service); prints
    /// per rule the noise of this machine at this run length (the minimum detectable effect)
    /// and the run length that would see the rule's allowed change.
    #[arg(long)]
    pub(crate) aa: bool,
    /// Length of the epochs that are paired: a whole fraction of a second (1s, 500ms, 250ms,
    /// 200ms, 100ms). Shorter epochs give more pairs, a narrower interval, as long as each
    /// holds enough responses for the rules' percentiles.
    /// Default: the spec's `ab.epoch`, else 250ms in duet mode, 1s in alternating mode (which
    /// takes whole seconds).
    #[arg(long, value_name = "DURATION", value_parser = parse_epoch)]
    pub(crate) epoch: Option<Duration>,
    /// How the sides are loaded: `duet`, both at the same time on one schedule; or
    /// `alternating`, one epoch at a time in ABBA blocks with a random start. Default: the
    /// spec's `ab.mode`, else `duet`.
    #[arg(long, value_enum)]
    pub(crate) mode: Option<AbMode>,
    /// Write both sides' results and their epochs (JSON) here, whole or not at all; `loadgate
    /// report FILE` renders it. A folder that cannot take the file is refused before any load
    /// is sent (exit 2).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// How `loadgate ab` loads the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AbMode {
    /// Both sides at the same time, on one schedule (Bulej et al., "Duet Benchmarking", 2020).
    Duet,
    /// One side at a time, epoch by epoch, in ABBA blocks with a random start.
    Alternating,
}

impl AbMode {
    /// `duet` or `alternating`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AbMode::Duet => "duet",
            AbMode::Alternating => "alternating",
        }
    }

    /// The epoch when `--epoch` is not given: 250 ms in duet mode, 1 s in alternating mode.
    pub(crate) fn default_epoch(self) -> Duration {
        match self {
            AbMode::Duet => Duration::from_millis(250),
            AbMode::Alternating => Duration::from_secs(1),
        }
    }
}

/// Parses an epoch length: whole milliseconds that divide a second (or whole seconds), at
/// least 10 ms.
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

/// Parses `NAME=VALUE` (the value may be empty and may hold `=`).
fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_string(), value.to_string())),
        _ => Err(format!("expected NAME=VALUE, found `{text}`")),
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct MergeArgs {
    /// The shards' result files (same spec, same result_version).
    #[arg(required = true, num_args = 2..)]
    pub(crate) results: Vec<PathBuf>,
    /// Write the merged result here.
    #[arg(long)]
    pub(crate) out: PathBuf,
}

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (loopback by default).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub(crate) listen: SocketAddr,
    /// Worker threads (default: the number of CPUs).
    #[arg(long)]
    pub(crate) threads: Option<usize>,
    /// Speak TLS (HTTP/1.1 and HTTP/2 by ALPN) with this certificate chain (PEM).
    #[arg(long, requires = "tls_key")]
    pub(crate) tls_cert: Option<PathBuf>,
    /// The private key of `--tls-cert` (PEM).
    #[arg(long, requires = "tls_cert")]
    pub(crate) tls_key: Option<PathBuf>,
    /// Require client certificates signed by a CA in this PEM file (mTLS).
    #[arg(long, requires = "tls_cert")]
    pub(crate) tls_client_ca: Option<PathBuf>,
}

impl ServeArgs {
    /// The options of [`crate::serve::serve`]: the thread count defaulted to the number of
    /// CPUs, the TLS files paired. Errors name the flags to fix.
    pub(crate) fn options(&self) -> anyhow::Result<ServeOptions> {
        let threads = match self.threads {
            Some(0) => anyhow::bail!("--threads 0: use --threads 1 or more"),
            Some(n) => n,
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        };
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some(ServeTls {
                cert: cert.clone(),
                key: key.clone(),
                client_ca: self.tls_client_ca.clone(),
            }),
            (None, None) if self.tls_client_ca.is_some() => {
                anyhow::bail!("--tls-client-ca needs --tls-cert and --tls-key")
            }
            (None, None) => None,
            _ => anyhow::bail!("give both --tls-cert and --tls-key, or neither"),
        };
        Ok(ServeOptions {
            listen: self.listen,
            threads,
            tls,
        })
    }
}
