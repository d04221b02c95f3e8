//! Command-line interface (clap derive): the arguments of each command, turned into its plain
//! options (`crate::options`, `crate::serve::ServeOptions`), which are all the library reads.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::ab::{parse_epoch, parse_sub_runs};
use crate::options::{
    AbMode, AbOptions, CompareOptions, LineOptions, PlanRunOptions, ReportOptions, RunOptions,
};
use crate::report::Format;
use crate::report::lines::LineFormat;
use crate::serve::{ServeOptions, ServeTls};

mod examples;
mod generate;
mod history;
mod quick;

use examples::examples;
use history::HistoryArgs;
use quick::{CurlArgs, QuickArgs};

pub use clap_complete::Shell;
pub use generate::{
    ManPage, NoSuchCommand, completion, completion_file, man_page, man_pages, version,
};

/// loadgate: a CI performance gate for HTTP services.
#[derive(Debug, Parser)]
#[command(name = "loadgate", version, about, after_help = examples(examples::LOADGATE))]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run a spec: start its service, apply the load, check the SLOs.
    #[command(after_help = examples(examples::RUN))]
    Run(RunArgs),
    /// A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s
    /// URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run`
    /// does; several URLs run one after another.
    #[command(after_help = examples(examples::QUICK))]
    Quick(Box<QuickArgs>),
    /// A one-line run of a curl command (a browser's "Copy as cURL"): `loadgate curl -c 10
    /// -z 5s -- curl 'https://...' -H '...'`. Load flags as `quick`'s.
    #[command(after_help = examples(examples::CURL))]
    Curl(Box<CurlArgs>),
    /// Check a spec against the schema and its semantics, without running it.
    #[command(after_help = examples(examples::VALIDATE))]
    Validate {
        /// The spec file (YAML).
        spec: PathBuf,
    },
    /// Print a JSON Schema: of the spec (default) or of the result file.
    #[command(after_help = examples(examples::SCHEMA))]
    Schema {
        #[arg(value_enum, default_value = "spec")]
        which: SchemaKind,
    },
    /// Serve the built-in test target: responses shaped by query parameters.
    #[command(after_help = examples(examples::SERVE))]
    Serve(ServeArgs),
    /// Compare a result with a baseline result; exit 0 pass, 1 SLO failed, 3 the current run
    /// was interrupted (not judged), 4 regression, 5 invalid measurement.
    #[command(after_help = examples(examples::COMPARE))]
    Compare(CompareArgs),
    /// Render a result (compared with a baseline, with a trend over earlier results) as
    /// Markdown, HTML, JUnit XML or JSON.
    #[command(after_help = examples(examples::REPORT))]
    Report(ReportArgs),
    /// Merge the results of several shards of one run into one result, losslessly, print its
    /// summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement.
    #[command(after_help = examples(examples::MERGE))]
    Merge(MergeArgs),
    /// Load a baseline and a candidate at the same time with the spec's load (duet) and judge
    /// each regression rule on the paired seconds; exit 0 pass, 1 SLO failed, 4 regression,
    /// 5 invalid measurement.
    #[command(after_help = examples(examples::AB))]
    Ab(AbArgs),
    /// Send a stored result's metrics to Prometheus (remote write) or an OpenTelemetry
    /// Collector (OTLP/HTTP), as `run --export` does after a run; exit 0 when every export
    /// succeeded, 3 otherwise.
    #[command(after_help = examples(examples::EXPORT))]
    Export(ExportArgs),
    /// Keep results in a history folder (`add`), list them (`list`), and report the change
    /// points and drifts in their series (`show`: the nightly report). Exit 0 unless the
    /// input cannot be read (2) or written (3).
    #[command(after_help = examples(examples::HISTORY))]
    History(HistoryArgs),
    /// Print the completion script of a shell (bash, zsh, fish, powershell, elvish) to
    /// stdout; docs/cli.md says where each shell reads it.
    #[command(after_help = examples(examples::COMPLETIONS))]
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff) of loadgate or of one of its commands to stdout (`man
    /// -l -` reads it); the pages of every command are in docs/man/.
    #[command(after_help = examples(examples::MAN))]
    Man {
        /// The command whose page to print (`run`, `history show`); none: loadgate's own.
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Print the version (as `--version`), the commit it was built from, its target triple
    /// and compiler: what a bug report needs.
    #[command(after_help = examples(examples::VERSION))]
    Version,
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
    /// No colour in the summary (as the `NO_COLOR` environment variable; without either,
    /// colour is used when stdout is a terminal whose `TERM` is not `dumb`, or with
    /// `CLICOLOR_FORCE=1`, never with `CLICOLOR=0`).
    #[arg(long)]
    pub(crate) no_color: bool,
    /// The summary's long sections too: every percentile, the insight lines, the phases, the
    /// latency histogram, the upstream time, streamed bodies, the size and transfer rate, the
    /// client CPU and the stage table.
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Compare the run with this baseline result and exit 4 on a regression; the file must
    /// exist.
    #[arg(long)]
    pub(crate) baseline: Option<PathBuf>,
    /// What the run prints: the text summary, one JSON line, or one CSV row.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: LineFormat,
    /// Append the run's output (in `--format`) to this file instead of stdout, which then
    /// shows the text summary; a CSV header is written only into a new or empty file.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
    /// Run shard K of N (`K/N`, e.g. `2/4`): this process applies its share of the load
    /// (connections, arrival rate, max_in_flight and request counts split so that the shares
    /// add up to the spec's; stages keep their timing) and records `K/N` in its result. SLOs
    /// are judged on the merged result (`loadgate merge`): a shard alone reports them and
    /// exits 0 unless it could not run. Not with `--baseline` (compare the merged result);
    /// `abort_on_fail` does not act on a shard (stopping every shard is out of scope).
    #[arg(long, value_name = "K/N")]
    pub(crate) shard: Option<crate::plan::Shard>,
    /// Start the run (its warmup) at this time: RFC 3339 in UTC (`2026-11-24T10:00:00Z`) or
    /// `+30s` from now; it waits until then (Ctrl-C ends the wait). Every shard given the
    /// same time warms up and starts measuring on the same wall-clock second; a time already
    /// past shortens the warmup by the lateness, or is refused (exit 2) when past by more
    /// than the warmup.
    #[arg(long, value_name = "TIME")]
    pub(crate) start_at: Option<String>,
    /// After the run, send its metrics (per-second series and whole-run summaries) to
    /// `prometheus=URL` (remote write 1.0, e.g. `http://prometheus:9090/api/v1/write`) or
    /// `otlp=URL` (OTLP/HTTP JSON, e.g. `http://collector:4318/v1/metrics`); repeatable. A
    /// failed export is reported on stderr and does not change the exit code; each ends within
    /// about 30 s (10 s per attempt, 3 attempts). Extra headers (authentication):
    /// `LOADGATE_EXPORT_HEADERS="Name=value,..."`. A bad KIND=URL is refused before any load
    /// is sent (exit 2).
    #[arg(long, value_name = "KIND=URL")]
    pub(crate) export: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ExportArgs {
    /// The result file (JSON) of `loadgate run --out` or `loadgate merge`.
    pub(crate) result: PathBuf,
    /// Where to send it: `prometheus=URL` or `otlp=URL`, as `run --export`; repeatable.
    #[arg(long, value_name = "KIND=URL", required = true)]
    pub(crate) to: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct CompareArgs {
    /// The baseline result (JSON).
    pub(crate) baseline: PathBuf,
    /// The current result (JSON); its regression rules are used.
    pub(crate) current: PathBuf,
    /// Earlier results (files, or folders of `.json` results such as a `loadgate history`
    /// folder; repeatable): each rule is judged against the level of those of this spec and
    /// runner type (and the baseline's branch) since their last change point; with fewer than
    /// 5 of them, it is inconclusive.
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
    /// test-report actions annotate the spec. When it is the file the run was made from (its
    /// SHA-256 is the result's `spec.hash`), the JSON verdict gives each SLO and rule its
    /// `line` in it.
    #[arg(long, value_name = "PATH")]
    pub(crate) spec: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// Result files or folders of them. Several results are taken in time order (by their
    /// `started_at`): the latest is reported, the others give a trend.
    #[arg(required_unless_present = "dashboard")]
    pub(crate) results: Vec<PathBuf>,
    /// Instead of a report on results: the dashboard of the history in this folder (a
    /// `loadgate history` folder, or any folder of result files), one self-contained HTML
    /// page: per spec and runner type, each scope's p50, p95, p99, throughput and error rate
    /// over the results, change points marked, each point linking to its commit.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["results", "baseline", "format", "window"])]
    pub(crate) dashboard: Option<PathBuf>,
    /// With `--dashboard`: only the results of this branch (as they record it).
    #[arg(long, requires = "dashboard")]
    pub(crate) branch: Option<String>,
    /// Compare the latest result with this baseline result.
    #[arg(long)]
    pub(crate) baseline: Option<PathBuf>,
    /// With `--baseline`: earlier results (files or folders; repeatable) whose level each rule
    /// is judged against, as `compare --baseline-history`.
    #[arg(long, value_name = "PATH", requires = "baseline")]
    pub(crate) baseline_history: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "md")]
    pub(crate) format: Format,
    /// Write the report here instead of stdout.
    #[arg(long, short)]
    pub(crate) output: Option<PathBuf>,
    /// A folder whose templates (report.md, report.html, junit.xml, dashboard.html) replace
    /// the built-in ones; it must exist and hold at least one of them.
    #[arg(long)]
    pub(crate) templates: Option<PathBuf>,
    /// The spec file the results came from, as the repository names it (e.g.
    /// `perf/api.loadgate.yaml`): the JUnit report gives it as each test case's `file`, so
    /// test-report actions annotate the spec. When it is the file the run was made from (its
    /// SHA-256 is the result's `spec.hash`), the JSON verdict gives each SLO and rule its
    /// `line` in it. With `--dashboard`: the name of the one spec to show (the spec's `name`).
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
    pub(crate) mode: Option<AbModeFlag>,
    /// Sub-runs per invocation, an even number, at least 4: the spec's measured duration is
    /// split among them, and the sides swap positions from one to the next (which side starts
    /// first and keeps the schedule); the paired verdict is taken across them. Default: the
    /// spec's `ab.sub_runs`, else 8, fewer (never below 4) when a sub-run would measure under
    /// 0.5 s.
    #[arg(long, value_name = "N", value_parser = parse_sub_runs)]
    pub(crate) sub_runs: Option<u32>,
    /// Write both sides' results and their epochs (JSON) here, whole or not at all; `loadgate
    /// report FILE` renders it. A folder that cannot take the file is refused before any load
    /// is sent (exit 2).
    #[arg(long)]
    pub(crate) out: Option<PathBuf>,
    /// No progress line on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
}

/// `--mode` of `loadgate ab`: [`AbMode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum AbModeFlag {
    /// Both sides at the same time, on one schedule (Bulej et al., Duet Benchmarking, ICPE 2020).
    Duet,
    /// One side at a time, epoch by epoch, in ABBA blocks with a random start.
    Alternating,
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
    #[arg(required = true, num_args = 1..)]
    pub(crate) results: Vec<PathBuf>,
    /// Write the merged result here.
    #[arg(long)]
    pub(crate) out: PathBuf,
    /// Merge even when shards of the run are missing (`--shard K/N` results whose K do not
    /// cover 1..N); the merged result is then marked partial and lists the missing shards.
    #[arg(long)]
    pub(crate) allow_missing: bool,
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
    /// Also answer HTTP/3 (QUIC, UDP) on the same port number; needs --tls-cert and --tls-key.
    #[arg(long, requires = "tls_cert")]
    pub(crate) h3: bool,
    /// Also answer gRPC: the `loadgate.echo.v1.Echo` service of examples/echo.proto (h2c over
    /// cleartext, HTTP/2 by ALPN over TLS).
    #[arg(long)]
    pub(crate) grpc: bool,
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
            h3: self.h3,
            grpc: self.grpc,
        })
    }
}

// ---- The options of the arguments ----------------------------------------------------------

impl From<RunArgs> for RunOptions {
    fn from(args: RunArgs) -> Self {
        RunOptions {
            spec: args.spec,
            lines: LineOptions {
                format: args.format,
                output: args.output,
            },
            run: PlanRunOptions {
                out: args.out,
                baseline: args.baseline,
                shard: args.shard,
                start_at: args.start_at,
                export: args.export,
                quiet: args.quiet,
                no_color: args.no_color,
                verbose: args.verbose,
            },
        }
    }
}

impl From<CompareArgs> for CompareOptions {
    fn from(args: CompareArgs) -> Self {
        CompareOptions {
            baseline: args.baseline,
            current: args.current,
            baseline_history: args.baseline_history,
            format: args.format,
            output: args.output,
            templates: args.templates,
            spec: args.spec,
        }
    }
}

impl From<ReportArgs> for ReportOptions {
    fn from(args: ReportArgs) -> Self {
        ReportOptions {
            results: args.results,
            baseline: args.baseline,
            baseline_history: args.baseline_history,
            format: args.format,
            output: args.output,
            templates: args.templates,
            spec: args.spec,
            window: args.window,
            dashboard: args.dashboard,
            branch: args.branch,
        }
    }
}

impl From<AbArgs> for AbOptions {
    fn from(args: AbArgs) -> Self {
        AbOptions {
            spec: args.spec,
            baseline_url: args.baseline_url,
            candidate_url: args.candidate_url,
            baseline: args.baseline,
            candidate: args.candidate,
            aa: args.aa,
            epoch: args.epoch,
            mode: args.mode.map(|mode| match mode {
                AbModeFlag::Duet => AbMode::Duet,
                AbModeFlag::Alternating => AbMode::Alternating,
            }),
            sub_runs: args.sub_runs,
            out: args.out,
            quiet: args.quiet,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{LoadOptions, QuickOptions, RequestOptions};

    fn parse(line: &[&str]) -> Command {
        Cli::try_parse_from(std::iter::once(&"loadgate").chain(line))
            .unwrap()
            .command
    }

    #[test]
    fn a_bare_number_is_seconds() {
        use quick::seconds;
        assert_eq!(seconds("20").unwrap(), "20s");
        assert_eq!(seconds("1.5").unwrap(), "1.5s");
        assert_eq!(seconds("250ms").unwrap(), "250ms");
        assert!(seconds("soon").is_err());
    }

    /// The flags of a one-line run reach their options (durations as spec text, the method as
    /// given): the three command lines whose options `quick`'s tests plan.
    #[test]
    fn quick_flags_make_their_options() {
        let text = |t: &str| Some(t.to_string());
        let load = LoadOptions {
            rounds: 1,
            ..LoadOptions::default()
        };
        let cases: [(&[&str], RequestOptions, LoadOptions); 3] = [
            (
                &[
                    "-n", "300", "-c", "7", "-m", "post", "-d", "{}", "-a", "u:p", "-t", "3",
                ],
                RequestOptions {
                    method: text("post"),
                    body: text("{}"),
                    basic_auth: text("u:p"),
                    ..RequestOptions::default()
                },
                LoadOptions {
                    requests: Some(300),
                    connections: Some(7),
                    timeout: text("3s"),
                    ..load.clone()
                },
            ),
            (
                &[
                    "-z", "2s", "-q", "150", "-c", "20", "-w", "1s", "--http2", "-p", "4",
                ],
                RequestOptions {
                    http2: true,
                    ..RequestOptions::default()
                },
                LoadOptions {
                    duration: text("2s"),
                    rate: Some(150.0),
                    connections: Some(20),
                    warmup: text("1s"),
                    streams: Some(4),
                    ..load.clone()
                },
            ),
            (
                &[
                    "-z",
                    "3s",
                    "--ramp-up",
                    "1s",
                    "-c",
                    "5",
                    "--rps",
                    "20",
                    "--status-code",
                    "204",
                    "--format",
                    "csv",
                ],
                RequestOptions::default(),
                LoadOptions {
                    duration: text("3s"),
                    ramp_up: text("1s"),
                    connections: Some(5),
                    rps: Some(20.0),
                    status_code: Some(204),
                    lines: LineOptions {
                        format: LineFormat::Csv,
                        output: None,
                    },
                    ..load.clone()
                },
            ),
        ];
        for (flags, request, load) in cases {
            let line: Vec<&str> = ["quick"]
                .iter()
                .chain(flags)
                .chain(&["URL"])
                .copied()
                .collect();
            let Command::Quick(args) = parse(&line) else {
                panic!("quick")
            };
            let expected = QuickOptions {
                urls: vec!["URL".into()],
                request,
                load,
            };
            assert_eq!(QuickOptions::from(*args), expected, "{flags:?}");
        }
    }

    /// The sides of `loadgate ab` reach their options in order; `--mode` maps onto [`AbMode`].
    #[test]
    fn ab_flags_make_their_options() {
        let line = [
            "ab",
            "spec.yaml",
            "--baseline",
            "A=1",
            "--candidate",
            "B=2=x",
            "--candidate",
            "C=",
            "--candidate-url",
            "http://127.0.0.1:1",
            "--mode",
            "alternating",
            "--epoch",
            "500ms",
            "--sub-runs",
            "6",
        ];
        let Command::Ab(args) = parse(&line) else {
            panic!("ab")
        };
        let expected = AbOptions {
            spec: "spec.yaml".into(),
            candidate_url: Some("http://127.0.0.1:1".into()),
            baseline: vec![("A".into(), "1".into())],
            candidate: vec![("B".into(), "2=x".into()), ("C".into(), String::new())],
            epoch: Some(Duration::from_millis(500)),
            mode: Some(AbMode::Alternating),
            sub_runs: Some(6),
            ..AbOptions::default()
        };
        assert_eq!(AbOptions::from(args), expected);
    }
}
