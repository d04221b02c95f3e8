//! Command-line interface (clap derive).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

pub use crate::report::Format;
use crate::report::lines::LineFormat;
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
    /// A one-line run, with the flags of hey, oha and vastar: `loadgate quick -c 50 -z 10s
    /// URL`. It builds a spec from its flags (`--emit-spec` prints it) and runs it as `run`
    /// does; several URLs run one after another.
    Quick(Box<QuickArgs>),
    /// A one-line run of a curl command (a browser's "Copy as cURL"): `loadgate curl -c 10
    /// -z 5s -- curl 'https://...' -H '...'`. Load flags as `quick`'s.
    Curl(Box<CurlArgs>),
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
    /// Merge the results of several shards of one run into one result, losslessly, print its
    /// summary and judge it as `run` does: exit 0 pass, 1 SLO failed, 5 invalid measurement.
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
    /// test-report actions annotate the spec. When it is the file the run was made from (its
    /// SHA-256 is the result's `spec.hash`), the JSON verdict gives each SLO and rule its
    /// `line` in it.
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
        })
    }
}

// ---- One-line runs: `loadgate quick` and `loadgate curl` ----------------------------------
//
// The flags of hey, oha, vastar, rewrk, loadgen-rs and fun-bomb. Where a letter means
// different things in different tools, oha's meaning wins (`-t` is the timeout, `-m` the
// method, `-p` HTTP/2 streams); docs/quick.md has the whole mapping.

/// `loadgate quick [FLAGS] URL...`: the request flags, then the load flags shared with
/// `loadgate curl`.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct QuickArgs {
    /// The URLs to load, one run each, in turn (`http://` or `https://`).
    #[arg(required = true, value_name = "URL")]
    pub(crate) urls: Vec<String>,
    #[command(flatten)]
    pub(crate) request: RequestFlags,
    #[command(flatten)]
    pub(crate) load: LoadFlags,
}

/// `loadgate curl [LOAD FLAGS] -- curl URL [CURL OPTIONS]`: the load flags, then a curl
/// command line (a browser's "Copy as cURL"), as words or as one quoted string.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct CurlArgs {
    #[command(flatten)]
    pub(crate) load: LoadFlags,
    /// The curl command: `curl URL -H ... -d ...` after `--`, or the whole command as one
    /// quoted string.
    #[arg(last = true, required = true, value_name = "CURL COMMAND")]
    pub(crate) command: Vec<String>,
}

/// What each request is: method, headers, body, protocol, TLS (`loadgate quick` only; the
/// curl command gives them to `loadgate curl`).
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct RequestFlags {
    /// HTTP method (oha, hey `-m`).
    #[arg(short = 'm', long, value_name = "METHOD")]
    pub(crate) method: Option<String>,
    /// Request body (hey, oha `-d`).
    #[arg(short = 'd', long, value_name = "BODY", conflicts_with = "body_file")]
    pub(crate) body: Option<String>,
    /// Request body from a file, relative to the current folder (hey `-D`).
    #[arg(short = 'D', long, value_name = "FILE")]
    pub(crate) body_file: Option<PathBuf>,
    /// Content-Type header (hey, oha `-T`).
    #[arg(short = 'T', long, value_name = "TYPE")]
    pub(crate) content_type: Option<String>,
    /// A request header, `Name: value` (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub(crate) headers: Vec<String>,
    /// Accept header (hey, oha `-A`).
    #[arg(short = 'A', long, value_name = "TYPE")]
    pub(crate) accept: Option<String>,
    /// Basic authentication, `user:pass`: an `Authorization` header that no output shows.
    #[arg(short = 'a', long = "basic-auth", value_name = "USER:PASS")]
    pub(crate) basic_auth: Option<String>,
    /// Speak HTTP/2 (over TLS by ALPN, over cleartext with prior knowledge).
    #[arg(long)]
    pub(crate) http2: bool,
    /// Accept any server certificate (test setups only; reports mark the run insecure).
    #[arg(short = 'k', long)]
    pub(crate) insecure: bool,
    /// Trust the CA certificates of this PEM file, relative to the current folder.
    #[arg(long, value_name = "FILE")]
    pub(crate) cacert: Option<PathBuf>,
    /// TLS cipher suites to offer, comma-separated rustls names
    /// (`TLS13_AES_128_GCM_SHA256,...`).
    #[arg(long, value_name = "SUITES", value_delimiter = ',')]
    pub(crate) tls_ciphers: Vec<String>,
    /// Do not offer `Accept-Encoding: gzip` (offered by default, as hey does).
    #[arg(long)]
    pub(crate) disable_compression: bool,
    /// Follow at most N redirects on the same origin (default 10, as hey and oha).
    #[arg(
        long = "redirect",
        value_name = "N",
        conflicts_with = "disable_redirects"
    )]
    pub(crate) redirects: Option<u32>,
    /// Do not follow redirects (`--redirect 0`).
    #[arg(long)]
    pub(crate) disable_redirects: bool,
}

/// How hard, how long and how the results are shown: shared by `quick` and `curl`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct LoadFlags {
    /// Requests to measure (default 200 when no `-z`).
    #[arg(short = 'n', long, value_name = "N", conflicts_with = "duration")]
    pub(crate) requests: Option<u64>,
    /// Connections (default 50). With `-q`: the most requests in flight at once.
    #[arg(short = 'c', long, value_name = "N")]
    pub(crate) connections: Option<u32>,
    /// How long to measure (`10s`, `1m`), instead of `-n`.
    #[arg(short = 'z', long, value_name = "DURATION", value_parser = seconds)]
    pub(crate) duration: Option<String>,
    /// Requests per second over the whole run, on a schedule whatever the server does (the
    /// open model).
    #[arg(short = 'q', long = "rate", value_name = "RPS", conflicts_with = "rps")]
    pub(crate) rate: Option<f64>,
    /// Requests per second of each connection (loadgen-rs `--rps`; the closed model's pacing).
    #[arg(long, value_name = "RPS")]
    pub(crate) rps: Option<f64>,
    /// HTTP/2 streams per connection (oha `-p`, h2load `-m`); implies `--http2`.
    #[arg(
        short = 'p',
        long = "http2-parallel",
        visible_alias = "streams",
        value_name = "N"
    )]
    pub(crate) streams: Option<u32>,
    /// Request timeout (`10s`; a bare number is seconds, as hey's `-t`). Default 10s.
    #[arg(short = 't', long, value_name = "DURATION", value_parser = seconds)]
    pub(crate) timeout: Option<String>,
    /// Connect timeout (`2s`; default: the request timeout).
    #[arg(long, value_name = "DURATION", value_parser = seconds)]
    pub(crate) connect_timeout: Option<String>,
    /// Worker threads (rewrk, loadgen-rs `--threads`; default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<u32>,
    /// Open a new connection for every request.
    #[arg(long)]
    pub(crate) disable_keepalive: bool,
    /// Warm-up before measuring, for each URL: a duration (`2s`) or a number of requests
    /// (fun-bomb `-w 100`); not counted.
    #[arg(short = 'w', long = "warmup", value_name = "DURATION|N")]
    pub(crate) warmup: Option<String>,
    /// Ramp the load up from 0 over this long before measuring (not counted); needs `-z`.
    #[arg(long, value_name = "DURATION", value_parser = seconds)]
    pub(crate) ramp_up: Option<String>,
    /// Count responses at least this slow (`1s`; plt `--slow`).
    #[arg(long, value_name = "DURATION", value_parser = seconds)]
    pub(crate) slow: Option<String>,
    /// The expected status code; any other counts as an error (default: any 2xx).
    #[arg(long, value_name = "CODE", value_parser = clap::value_parser!(u16).range(100..=599))]
    pub(crate) status_code: Option<u16>,
    /// Pause between URLs (`2s`).
    #[arg(long, value_name = "DURATION", value_parser = crate::units::parse_duration)]
    pub(crate) delay: Option<Duration>,
    /// Run each URL N times and summarise the rounds: mean and standard deviation of the RPS
    /// and of each percentile (rewrk `--rounds`).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub(crate) rounds: u32,
    /// Print the equivalent spec (YAML) and exit without sending a request: the run as a CI
    /// gate (`loadgate run SPEC`). Several URLs: one document each, separated by `---`.
    #[arg(long)]
    pub(crate) emit_spec: bool,
    /// Before the load, send one request and print the response: status line, headers, the
    /// first bytes of the body, and the address and protocol it went to.
    #[arg(short = 'v', long)]
    pub(crate) verbose: bool,
    /// No colour in the summary (as the `NO_COLOR` environment variable; colour is only ever
    /// used when stdout is a terminal).
    #[arg(long)]
    pub(crate) no_color: bool,
    /// No progress line on stderr.
    #[arg(long)]
    pub(crate) quiet: bool,
    /// What each run prints: the text summary, one JSON line, or one CSV row.
    #[arg(long, value_enum, default_value = "text")]
    pub(crate) format: LineFormat,
    /// Append each run's output (in `--format`) to this file instead of stdout, which then
    /// shows the text summary; a CSV header is written only into a new or empty file.
    #[arg(long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

/// A duration flag: `10s`, `500ms`, or a bare number of seconds (hey's `-t 20`), as the
/// spec's duration text (`20s`).
fn seconds(text: &str) -> Result<String, String> {
    let text = text.trim();
    let with_unit = if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        format!("{text}s")
    } else {
        text.to_string()
    };
    crate::units::parse_duration(&with_unit)?;
    Ok(with_unit)
}

#[cfg(test)]
mod quick_flag_tests {
    #[test]
    fn a_bare_number_is_seconds() {
        assert_eq!(super::seconds("20").unwrap(), "20s");
        assert_eq!(super::seconds("1.5").unwrap(), "1.5s");
        assert_eq!(super::seconds("250ms").unwrap(), "250ms");
        assert!(super::seconds("soon").is_err());
    }
}
