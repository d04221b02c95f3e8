//! What each command takes, as plain values: `cli.rs` turns the command line into these (clap's
//! types stay there), and the modules that carry the commands out read them (`pipeline`, `ab`,
//! `quick`). The model is hyperfine's `src/options.rs`, and ripgrep's `lowargs.rs` → `hiargs.rs`.
//! Each field names its flag; `cli.rs` documents what the flag does. `loadgate serve`'s options
//! are `serve`'s own ([`crate::serve::ServeOptions`]): the test server is a library API too.

use std::path::PathBuf;
use std::time::Duration;

use crate::plan::Shard;
use crate::report::Format;
use crate::report::changes::ChangeFormat;
use crate::report::lines::LineFormat;
use crate::result::SourceInfo;

/// `loadgate run SPEC`.
#[derive(Debug, Clone)]
pub(crate) struct RunOptions {
    /// The spec file (YAML).
    pub(crate) spec: PathBuf,
    /// What the run prints, and where.
    pub(crate) lines: LineOptions,
    /// How the plan is run and judged.
    pub(crate) run: PlanRunOptions,
}

/// What each run prints, and where: `--format` and `--output` of `run`, `quick` and `curl`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LineOptions {
    /// The text summary, one JSON line, or one CSV row (`--format`).
    pub(crate) format: LineFormat,
    /// The file the output is appended to instead of stdout (`--output`).
    pub(crate) output: Option<PathBuf>,
}

/// How one validated plan is run and judged (`pipeline::run_plan`): the flags of `loadgate run`;
/// a one-line run (`quick`, `curl`) gives only `quiet` and `no_color`.
#[derive(Debug, Clone, Default)]
pub(crate) struct PlanRunOptions {
    /// Where the result artifact is written (`--out`).
    pub(crate) out: Option<PathBuf>,
    /// The baseline result the run is compared with (`--baseline`).
    pub(crate) baseline: Option<PathBuf>,
    /// The share of the load this process applies (`--shard K/N`).
    pub(crate) shard: Option<Shard>,
    /// When the run starts (`--start-at`: RFC 3339 in UTC, or `+30s`), as given: read when the
    /// run starts, since `+30s` counts from then.
    pub(crate) start_at: Option<String>,
    /// Where the result's metrics are sent after the run (`--export KIND=URL`), as given:
    /// parsed (`export::destinations`) before any load is sent.
    pub(crate) export: Vec<String>,
    /// No progress line on stderr (`--quiet`).
    pub(crate) quiet: bool,
    /// No colour in the summary (`--no-color`).
    pub(crate) no_color: bool,
    /// The summary's long sections too (`--verbose`).
    pub(crate) verbose: bool,
}

/// `loadgate compare BASELINE CURRENT`.
#[derive(Debug, Clone)]
pub(crate) struct CompareOptions {
    /// The baseline result (JSON).
    pub(crate) baseline: PathBuf,
    /// The current result (JSON).
    pub(crate) current: PathBuf,
    /// Earlier results: files, or folders of `.json` results (`--baseline-history`).
    pub(crate) baseline_history: Vec<PathBuf>,
    /// The output format (`--format`).
    pub(crate) format: Format,
    /// The file written instead of stdout (`--output`).
    pub(crate) output: Option<PathBuf>,
    /// The folder of templates replacing the built-in ones (`--templates`).
    pub(crate) templates: Option<PathBuf>,
    /// The spec file the results came from, as the repository names it (`--spec`).
    pub(crate) spec: Option<PathBuf>,
}

/// `loadgate report RESULT...`.
#[derive(Debug, Clone)]
pub(crate) struct ReportOptions {
    /// Result files or folders of them; at least one.
    pub(crate) results: Vec<PathBuf>,
    /// The baseline the latest result is compared with (`--baseline`).
    pub(crate) baseline: Option<PathBuf>,
    /// Earlier results: files, or folders of `.json` results (`--baseline-history`).
    pub(crate) baseline_history: Vec<PathBuf>,
    /// The output format (`--format`).
    pub(crate) format: Format,
    /// The file written instead of stdout (`--output`).
    pub(crate) output: Option<PathBuf>,
    /// The folder of templates replacing the built-in ones (`--templates`).
    pub(crate) templates: Option<PathBuf>,
    /// The spec file the results came from, as the repository names it (`--spec`).
    pub(crate) spec: Option<PathBuf>,
    /// How many runs the trend shows, the latest included (`--window`).
    pub(crate) window: usize,
    /// The history folder whose dashboard is rendered instead (`--dashboard`); `results` is
    /// empty then, and `spec` names the one spec shown.
    pub(crate) dashboard: Option<PathBuf>,
    /// With `dashboard`: only results of this branch (`--branch`).
    pub(crate) branch: Option<String>,
}

/// `loadgate ab SPEC`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct AbOptions {
    /// The spec file (YAML).
    pub(crate) spec: PathBuf,
    /// The baseline's `defaults.base_url` (`--baseline-url`).
    pub(crate) baseline_url: Option<String>,
    /// The candidate's `defaults.base_url` (`--candidate-url`).
    pub(crate) candidate_url: Option<String>,
    /// The baseline's values of `${NAME}` (`--baseline NAME=VALUE`), in order.
    pub(crate) baseline: Vec<(String, String)>,
    /// The candidate's values of `${NAME}` (`--candidate NAME=VALUE`), in order.
    pub(crate) candidate: Vec<(String, String)>,
    /// A/A calibration: the candidate is the baseline (`--aa`).
    pub(crate) aa: bool,
    /// The length of the paired epochs (`--epoch`), checked by `ab::parse_epoch`.
    pub(crate) epoch: Option<Duration>,
    /// How the sides are loaded (`--mode`).
    pub(crate) mode: Option<AbMode>,
    /// Sub-runs per invocation (`--sub-runs`), checked by `ab::parse_sub_runs`.
    pub(crate) sub_runs: Option<u32>,
    /// Where both sides' results and epochs are written (`--out`).
    pub(crate) out: Option<PathBuf>,
    /// No progress line on stderr (`--quiet`).
    pub(crate) quiet: bool,
}

/// How `loadgate ab` loads the two sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// `loadgate quick [FLAGS] URL...`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct QuickOptions {
    /// The URLs to load, one run each, in turn.
    pub(crate) urls: Vec<String>,
    /// What each request is.
    pub(crate) request: RequestOptions,
    /// How hard, how long, and what is printed.
    pub(crate) load: LoadOptions,
}

/// `loadgate curl [LOAD FLAGS] -- curl URL [CURL OPTIONS]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CurlOptions {
    /// How hard, how long, and what is printed.
    pub(crate) load: LoadOptions,
    /// The curl command: its words, or the whole command as one string.
    pub(crate) command: Vec<String>,
}

/// What each request of `loadgate quick` is (the curl command gives it to `loadgate curl`).
/// File paths are relative to the current folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct RequestOptions {
    /// The HTTP method as given (`-m`).
    pub(crate) method: Option<String>,
    /// The request body (`-d`).
    pub(crate) body: Option<String>,
    /// The file of the request body (`-D`).
    pub(crate) body_file: Option<PathBuf>,
    /// The Content-Type header's value (`-T`).
    pub(crate) content_type: Option<String>,
    /// Headers as given, `Name: value` (`-H`, in order).
    pub(crate) headers: Vec<String>,
    /// The Accept header's value (`-A`).
    pub(crate) accept: Option<String>,
    /// `user:pass` of Basic authentication (`-a`).
    pub(crate) basic_auth: Option<String>,
    /// Speak HTTP/2 (`--http2`).
    pub(crate) http2: bool,
    /// Speak HTTP/3 over QUIC (`--http3`).
    pub(crate) http3: bool,
    /// Speak HTTP/1.1, over TLS too (`--http1.1`).
    pub(crate) http1_1: bool,
    /// Accept any server certificate (`-k`).
    pub(crate) insecure: bool,
    /// The PEM file of trusted CA certificates (`--cacert`).
    pub(crate) cacert: Option<PathBuf>,
    /// TLS cipher suites to offer, rustls names (`--tls-ciphers`).
    pub(crate) tls_ciphers: Vec<String>,
    /// Do not offer `Accept-Encoding: gzip` (`--disable-compression`).
    pub(crate) disable_compression: bool,
    /// The most redirects followed (`--redirect N`).
    pub(crate) redirects: Option<u32>,
    /// Do not follow redirects (`--disable-redirects`).
    pub(crate) disable_redirects: bool,
}

/// How hard and how long `quick` and `curl` load, and what they print. Durations are the
/// spec's duration text (`20s`, `500ms`; `cli.rs` turns a bare number of seconds into `20s`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct LoadOptions {
    /// Requests to measure (`-n`).
    pub(crate) requests: Option<u64>,
    /// Connections, or with a rate the most requests in flight (`-c`).
    pub(crate) connections: Option<u32>,
    /// How long to measure, duration text (`-z`).
    pub(crate) duration: Option<String>,
    /// Requests per second over the whole run, open model (`-q`).
    pub(crate) rate: Option<f64>,
    /// Requests per second of each connection, closed model (`--rps`).
    pub(crate) rps: Option<f64>,
    /// HTTP/2 streams per connection (`-p`).
    pub(crate) streams: Option<u32>,
    /// The request timeout, duration text (`-t`).
    pub(crate) timeout: Option<String>,
    /// The connect timeout, duration text (`--connect-timeout`).
    pub(crate) connect_timeout: Option<String>,
    /// Worker threads (`--threads`).
    pub(crate) threads: Option<u32>,
    /// A new connection for every request (`--disable-keepalive`).
    pub(crate) disable_keepalive: bool,
    /// The warm-up: duration text or a number of requests (`-w`).
    pub(crate) warmup: Option<String>,
    /// The ramp from 0 before measuring, duration text (`--ramp-up`).
    pub(crate) ramp_up: Option<String>,
    /// Responses at least this slow are counted, duration text (`--slow`).
    pub(crate) slow: Option<String>,
    /// The expected status code (`--status-code`).
    pub(crate) status_code: Option<u16>,
    /// The pause between URLs (`--delay`).
    pub(crate) delay: Option<Duration>,
    /// Runs of each URL (`--rounds`, 1 to 1000 from the command line).
    pub(crate) rounds: u32,
    /// Print the equivalent spec and send nothing (`--emit-spec`).
    pub(crate) emit_spec: bool,
    /// Print one sample response before the load (`-v`).
    pub(crate) verbose: bool,
    /// No colour in the summary (`--no-color`).
    pub(crate) no_color: bool,
    /// No progress line on stderr (`--quiet`).
    pub(crate) quiet: bool,
    /// What each run prints, and where.
    pub(crate) lines: LineOptions,
}

/// `loadgate history add|list|show`.
#[derive(Debug, Clone)]
pub(crate) enum HistoryOptions {
    /// `add DIR RESULT`: the parts of `source` that are set (`--branch`, `--commit`,
    /// `--commit-url`) win over the result's.
    Add {
        /// The history folder.
        dir: PathBuf,
        /// The result file.
        result: PathBuf,
        /// The overrides.
        source: SourceInfo,
    },
    /// `list DIR...`.
    List(HistoryQuery),
    /// `show DIR...`.
    Show {
        /// Which results.
        query: HistoryQuery,
        /// The last N results in which a change point is new (`--recent`).
        recent: usize,
        /// The output format (`--format`).
        format: ChangeFormat,
        /// The file written instead of stdout (`--output`).
        output: Option<PathBuf>,
    },
}

/// Which results `loadgate history list` and `show` read.
#[derive(Debug, Clone)]
pub(crate) struct HistoryQuery {
    /// Folders (read recursively) and files of results.
    pub(crate) dirs: Vec<PathBuf>,
    /// Only the spec of this name (`--spec`).
    pub(crate) spec: Option<String>,
    /// Only this branch (`--branch`).
    pub(crate) branch: Option<String>,
}
