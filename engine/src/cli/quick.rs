//! The flags of the one-line runs, `loadgate quick` and `loadgate curl`, and their options
//! (`crate::options::QuickOptions`, `CurlOptions`).
//!
//! The flags of hey, oha, vastar, rewrk, loadgen-rs and fun-bomb. Where a letter means
//! different things in different tools, oha's meaning wins (`-t` is the timeout, `-m` the
//! method, `-p` HTTP/2 streams); docs/quick.md has the whole mapping.

use std::path::PathBuf;
use std::time::Duration;

use crate::options::{CurlOptions, LineOptions, LoadOptions, QuickOptions, RequestOptions};
use crate::report::lines::LineFormat;

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
    #[arg(long, conflicts_with_all = ["http3", "http1_1"])]
    pub(crate) http2: bool,
    /// Speak HTTP/3 over QUIC (`https://` URLs only).
    #[arg(long, conflicts_with = "http1_1")]
    pub(crate) http3: bool,
    /// Speak HTTP/1.1, over TLS too (ALPN offers `http/1.1` alone); the default for `http://`.
    #[arg(long = "http1.1", conflicts_with = "streams")]
    pub(crate) http1_1: bool,
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
pub(super) fn seconds(text: &str) -> Result<String, String> {
    let text = text.trim();
    let with_unit = if !text.is_empty() && text.chars().all(|c| c.is_ascii_digit() || c == '.') {
        format!("{text}s")
    } else {
        text.to_string()
    };
    crate::units::parse_duration(&with_unit)?;
    Ok(with_unit)
}

impl From<QuickArgs> for QuickOptions {
    fn from(args: QuickArgs) -> Self {
        QuickOptions {
            urls: args.urls,
            request: args.request.into(),
            load: args.load.into(),
        }
    }
}

impl From<CurlArgs> for CurlOptions {
    fn from(args: CurlArgs) -> Self {
        CurlOptions {
            load: args.load.into(),
            command: args.command,
        }
    }
}

impl From<RequestFlags> for RequestOptions {
    fn from(flags: RequestFlags) -> Self {
        RequestOptions {
            method: flags.method,
            body: flags.body,
            body_file: flags.body_file,
            content_type: flags.content_type,
            headers: flags.headers,
            accept: flags.accept,
            basic_auth: flags.basic_auth,
            http2: flags.http2,
            http3: flags.http3,
            http1_1: flags.http1_1,
            insecure: flags.insecure,
            cacert: flags.cacert,
            tls_ciphers: flags.tls_ciphers,
            disable_compression: flags.disable_compression,
            redirects: flags.redirects,
            disable_redirects: flags.disable_redirects,
        }
    }
}

impl From<LoadFlags> for LoadOptions {
    fn from(flags: LoadFlags) -> Self {
        LoadOptions {
            requests: flags.requests,
            connections: flags.connections,
            duration: flags.duration,
            rate: flags.rate,
            rps: flags.rps,
            streams: flags.streams,
            timeout: flags.timeout,
            connect_timeout: flags.connect_timeout,
            threads: flags.threads,
            disable_keepalive: flags.disable_keepalive,
            warmup: flags.warmup,
            ramp_up: flags.ramp_up,
            slow: flags.slow,
            status_code: flags.status_code,
            delay: flags.delay,
            rounds: flags.rounds,
            emit_spec: flags.emit_spec,
            verbose: flags.verbose,
            no_color: flags.no_color,
            quiet: flags.quiet,
            lines: LineOptions {
                format: flags.format,
                output: flags.output,
            },
        }
    }
}
