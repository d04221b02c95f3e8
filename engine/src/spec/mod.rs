//! The spec: the YAML a team writes, read into plain data.
//!
//! These types are the single source of the published JSON Schema
//! (`schema/loadgate.schema.json`, printed by `loadgate schema`). They hold strings as written:
//! durations such as `"10s"`, threshold expressions such as `"p(95) < 200ms"`, `${VAR}`
//! references. Nothing here is parsed or defaulted beyond serde's `default`; the plan
//! (the plan step, `plan/`) resolves every value, so the run never sees a `String` duration.

mod flow;
mod load;
mod protocols;
mod rules;
mod scenario;
pub(crate) mod secrets;

pub(crate) use flow::{Data, DataOrder, Extract, Flow, OnError, Step};
pub(crate) use protocols::{Grpc, GrpcStatusName, Ws};
#[allow(unused_imports, reason = "planned by the scenarios work of issue 34")]
pub(crate) use rules::{
    DetailedRule, DetailedThreshold, Regression, RuleSpec, Severity, Slo, TAGGED_METRIC_PATTERN,
    ThresholdSpec,
};
pub(crate) use scenario::{Executor, Scenario};

pub use load::{Location, MAX_SPEC_BYTES, SourceSpec, SpecLoadError};
pub(crate) use load::{is_hidden, printable};

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// Regex for a duration with an explicit unit: `500us`, `200ms`, `1.5s`, `2m`, `1h`.
pub const DURATION_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?(us|ms|s|m|h)$";
/// Regex for a status class: `1xx` to `5xx`.
pub(crate) const STATUS_CLASS_PATTERN: &str = r"^[1-5]xx$";
/// Regex for an HTTP method: upper-case letters (`GET`, `POST`).
pub(crate) const METHOD_PATTERN: &str = r"^[A-Z]+$";

/// The `$id` of the published spec schema (`schema/loadgate.schema.json`).
pub const SPEC_SCHEMA_ID: &str = "https://loadgate.dev/schema/loadgate.schema.json";

/// A loadgate spec, version 1: what to load, how hard, and which SLOs gate the result.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "loadgate spec", extend("$id" = SPEC_SCHEMA_ID))]
pub(crate) struct Spec {
    /// Spec format version. Only `1` exists.
    #[schemars(range(min = 1, max = 1))]
    #[allow(dead_code, reason = "checked by the schema; nothing else reads it yet")]
    pub(crate) version: u32,
    /// Name of this load test; results of different specs are never compared.
    #[schemars(length(min = 1))]
    pub(crate) name: String,
    /// Free text shown in reports.
    #[serde(default)]
    #[allow(dead_code, reason = "accepted and in the schema; nothing reads it yet")]
    pub(crate) description: Option<String>,
    /// The system under test, started before the run and stopped after it (optional).
    #[serde(default)]
    pub(crate) service: Option<Service>,
    /// Values shared by all targets.
    #[serde(default)]
    pub(crate) defaults: Defaults,
    /// The requests to send, chosen by weight. `targets` or `flows` (both with `scenarios`).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) targets: Vec<Target>,
    /// Multi-step journeys, each iteration of one chosen by weight. Give `targets` or
    /// `flows`, not both (with `scenarios`, both: each scenario runs one kind).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) flows: Vec<Flow>,
    /// How much load to apply and for how long: the one-scenario short form. With
    /// `scenarios`, only the settings they share (`streams`, `threads`, `pre_connect`,
    /// `health`) may be given here. Give `load` or `scenarios`.
    #[serde(default)]
    pub(crate) load: Option<Load>,
    /// Several loads at once, each with its own executor (k6's `scenarios`); each target
    /// or flow belongs to one. Give `load` or `scenarios`.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) scenarios: Vec<Scenario>,
    /// Thresholds over the whole run (all targets together).
    #[serde(default)]
    pub(crate) slo: Slo,
    /// How much worse than a baseline result the whole run may get (`loadgate compare`,
    /// `loadgate run --baseline`). Absent: the default rules.
    #[serde(default)]
    pub(crate) regression: Regression,
    /// `loadgate ab` only: the two sides and how they are loaded. The command line's
    /// `--baseline-url`, `--baseline NAME=VALUE`, `--mode`, … take precedence.
    #[serde(default)]
    #[allow(
        dead_code,
        reason = "read by `loadgate ab` from the source before planning"
    )]
    pub(crate) ab: Option<Ab>,
}

/// The sides of `loadgate ab`, e.g.
///
/// ```yaml
/// ab:
///   baseline:  { values: { BUILD: ../base/target/release, PORT: "8081" } }
///   candidate: { values: { BUILD: target/release, PORT: "8082" } }
///   mode: duet
///   epoch: 250ms
///   sub_runs: 8
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ab {
    /// The baseline side.
    #[serde(default)]
    pub(crate) baseline: AbSide,
    /// The candidate side.
    #[serde(default)]
    pub(crate) candidate: AbSide,
    /// `duet` (both sides at once, the default) or `alternating` (one epoch at a time, ABBA).
    #[serde(default)]
    pub(crate) mode: Option<AbModeSpec>,
    /// Length of the paired epochs: a whole fraction of a second in duet mode (`250ms`), whole
    /// seconds in alternating mode (`1s`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) epoch: Option<String>,
    /// Sub-runs per invocation, an even number, at least 4: the measured duration is split
    /// among them and the sides swap positions from one to the next (`--sub-runs` takes
    /// precedence). Default: 8, fewer (never below 4) when a sub-run would measure under 0.5 s.
    #[serde(default)]
    #[schemars(range(min = 4), extend("multipleOf" = 2))]
    pub(crate) sub_runs: Option<u32>,
}

/// How `loadgate ab` loads the sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum AbModeSpec {
    Duet,
    Alternating,
}

/// One side of `loadgate ab`.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AbSide {
    /// Replaces `defaults.base_url` for this side.
    #[serde(default)]
    pub(crate) base_url: Option<String>,
    /// Values of `${NAME}` in the spec for this side, before the environment's.
    #[serde(default)]
    pub(crate) values: BTreeMap<String, String>,
}

/// A command that starts the system under test, and how to tell that it is ready.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Service {
    /// Program and arguments, run without a shell. `${LOADGATE}` names the running loadgate
    /// binary, so `["${LOADGATE}", "serve", "--listen", "127.0.0.1:8080"]` works without install.
    #[schemars(length(min = 1))]
    pub(crate) command: Vec<String>,
    /// Extra environment variables for the command.
    #[serde(default)]
    pub(crate) env: BTreeMap<String, String>,
    /// Working directory of the command, relative to the spec file (default: the spec's folder).
    #[serde(default)]
    pub(crate) working_dir: Option<String>,
    /// URL polled with GET until it answers with any HTTP response.
    pub(crate) ready_url: String,
    /// How long to wait for `ready_url` to answer (default `30s`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) ready_timeout: Option<String>,
}

/// Values shared by all targets; a target's own value wins.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Defaults {
    /// Base URL that a target's `path` is joined to, e.g. `http://127.0.0.1:8080`.
    #[serde(default)]
    pub(crate) base_url: Option<String>,
    /// Headers sent with every request (a target's headers of the same name replace these).
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// Request timeout, from connect to the last byte of the response (default `10s`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) timeout: Option<String>,
    /// Longest time to open a connection (DNS, TCP connect, TLS handshake, the HTTP/2
    /// preface), within the request's `timeout`; a connect that takes longer counts as a
    /// `connect_timeout` error. Default: the request `timeout` alone.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) connect_timeout: Option<String>,
    /// Reuse connections for the next request (default `true`). `false`: a new connection
    /// per request (HTTP/1.1 sends `Connection: close`; HTTP/2 carries one request per
    /// connection, so `load.streams` must be 1).
    #[serde(default)]
    pub(crate) keep_alive: Option<bool>,
    /// Offer compressed responses: requests carry `Accept-Encoding: gzip` (unless the spec
    /// gives that header). Bytes are counted as on the wire; gzip bodies are decoded only for
    /// `body_contains` and `json` checks. Default `false`.
    #[serde(default)]
    pub(crate) compression: Option<bool>,
    /// Redirects followed per request, at most (301, 302, 303, 307, 308; default `0`: none,
    /// the 3xx response is the answer). Only to the same origin (scheme, host, port); the
    /// latency covers the whole chain and the last response's status is the one that counts.
    /// One more redirect, or one to another origin, is an error of kind `redirect`.
    #[serde(default)]
    #[schemars(range(max = 100))]
    pub(crate) redirects: Option<u32>,
    /// HTTP version for every target without its own `protocol` (default `auto`).
    #[serde(default)]
    pub(crate) protocol: Option<Protocol>,
    /// TLS settings for `https://` targets; a target's own `tls` fields replace these one by one.
    #[serde(default)]
    pub(crate) tls: Option<Tls>,
    /// Responses at least this slow (their latency, from when the request was due) are
    /// counted per target, e.g. `1s` (plt's `--slow`): `slow_responses` in the result.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) slow: Option<String>,
}

/// Which HTTP version a target speaks: `h1` (HTTP/1.1, over TLS with ALPN `http/1.1` or
/// cleartext), `h2` (HTTP/2: over TLS with ALPN `h2`, over cleartext with prior knowledge,
/// h2c), `h3` (HTTP/3 over QUIC, UDP to the URL's port: `https://` URLs only, TLS 1.3) or
/// `auto` (over TLS what the server picks by ALPN, `h2` offered first; HTTP/1.1 over
/// cleartext; a server's `Alt-Svc: h3` is reported, not followed), `grpc` (gRPC calls over
/// HTTP/2: h2c for `http://`, ALPN `h2` for `https://`; needs `grpc:`) or `ws` (WebSocket
/// over an HTTP/1.1 upgrade; the default for `ws://` and `wss://` URLs).
// Variants without doc comments: the schema then lists them as one `enum`, which makes for
// a clear validation message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Protocol {
    H1,
    H2,
    H3,
    Auto,
    Grpc,
    Ws,
}

/// TLS settings for `https://` targets. Files are relative to the spec file.
///
/// ```yaml
/// tls:
///   ca_file: certs/ca.pem            # trust these CAs (instead of the default roots)
///   client_cert: certs/client.pem    # mTLS: certificate chain, PEM
///   client_key: certs/client.key     # mTLS: private key, PEM (PKCS#8, PKCS#1 or SEC1)
///   min_version: "1.3"
///   server_name: api.internal        # SNI and the name checked in the certificate
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Tls {
    /// Trust anchors: `webpki` (Mozilla's roots, built in), `platform` (the operating system's
    /// store) or `none`. Default: `webpki`, or `none` when `ca_file` is given.
    #[serde(default)]
    pub(crate) roots: Option<TlsRoots>,
    /// PEM file of CA certificates to trust, in addition to `roots`.
    #[serde(default)]
    pub(crate) ca_file: Option<String>,
    /// PEM file with the client certificate chain (mTLS); needs `client_key`.
    #[serde(default)]
    pub(crate) client_cert: Option<String>,
    /// PEM file with the client certificate's private key; needs `client_cert`.
    #[serde(default)]
    pub(crate) client_key: Option<String>,
    /// Skip verifying the server's certificate (any certificate, any name). Only for test
    /// setups: reports mark such targets as insecure. Default `false`.
    #[serde(default)]
    pub(crate) insecure_skip_verify: Option<bool>,
    /// Lowest TLS version offered: `"1.2"` (default) or `"1.3"`.
    #[serde(default)]
    pub(crate) min_version: Option<TlsVersion>,
    /// Cipher suites offered, most preferred first, by their rustls names (IANA's, e.g.
    /// `TLS13_AES_128_GCM_SHA256`, `TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384`). Default: every
    /// suite of rustls' *ring* provider, in its order.
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) ciphers: Option<Vec<String>>,
    /// Name sent as SNI and checked against the certificate (default: the URL's host).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) server_name: Option<String>,
    /// Resume TLS sessions when a connection is re-opened (default `true`).
    #[serde(default)]
    pub(crate) resumption: Option<bool>,
}

/// Where trusted root certificates come from: `webpki` (Mozilla's, built into loadgate),
/// `platform` (the operating system's store) or `none` (only `ca_file`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TlsRoots {
    Webpki,
    Platform,
    None,
}

/// A TLS protocol version, as a string: `"1.2"` or `"1.3"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, JsonSchema)]
pub(crate) enum TlsVersion {
    #[serde(rename = "1.2")]
    V1_2,
    #[serde(rename = "1.3")]
    V1_3,
}

/// One named request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Target {
    /// Name used in reports and per-target SLOs; unique within the spec.
    #[schemars(length(min = 1))]
    pub(crate) name: String,
    /// HTTP method (default `GET`).
    #[serde(default)]
    #[schemars(regex(pattern = METHOD_PATTERN))]
    pub(crate) method: Option<String>,
    /// Absolute URL. Give either `url`, or `path` with `defaults.base_url`.
    #[serde(default)]
    pub(crate) url: Option<String>,
    /// Path (and query) joined to `defaults.base_url`, e.g. `/users?page=2`.
    #[serde(default)]
    pub(crate) path: Option<String>,
    /// Request headers.
    #[serde(default)]
    pub(crate) headers: BTreeMap<String, String>,
    /// Request body, inline.
    #[serde(default)]
    pub(crate) body: Option<String>,
    /// Request body read from a file, relative to the spec file.
    #[serde(default)]
    pub(crate) body_file: Option<String>,
    /// What a successful response looks like.
    #[serde(default)]
    pub(crate) expect: Expect,
    /// HTTP version (default: `defaults.protocol`, else `auto`).
    #[serde(default)]
    pub(crate) protocol: Option<Protocol>,
    /// TLS settings; each field given replaces the one of `defaults.tls`.
    #[serde(default)]
    pub(crate) tls: Option<Tls>,
    /// Relative share of requests for this target (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) weight: Option<u32>,
    /// Checks on responses beyond their status. A failed check is not an error: it counts
    /// towards the `checks` metric (its pass rate), which SLOs can gate on.
    #[serde(default)]
    pub(crate) checks: Vec<Check>,
    /// Thresholds over this target's requests alone.
    #[serde(default)]
    pub(crate) slo: Slo,
    /// How much worse than the baseline this target's requests may get, in the grammar of
    /// the whole run's `regression`. Only the rules written apply (no defaults).
    #[serde(default)]
    pub(crate) regression: Regression,
    /// Tags of the target's requests, e.g. `{kind: write}`: thresholds and regression rules
    /// select by them (`latency{kind:write}`), reports group by them.
    #[serde(default)]
    pub(crate) tags: BTreeMap<String, String>,
    /// A data file whose rows feed `{{column}}` in the path, headers and body, one row per
    /// request; generated values (`{{uuid}}`, ...: see `Data`) need none.
    #[serde(default)]
    pub(crate) data: Option<Data>,
    /// A gRPC call (`protocol: grpc`): the method, its `.proto` files, the message.
    #[serde(default)]
    pub(crate) grpc: Option<Grpc>,
    /// A WebSocket exchange (`ws://`, `wss://` or `protocol: ws`): what each request sends and
    /// waits for.
    #[serde(default)]
    pub(crate) ws: Option<Ws>,
}

/// One check on a response; give exactly one of `status`, `header`, `body_contains`,
/// `body_matches`, `json` or `duration`.
///
/// ```yaml
/// checks:
///   - status: 200                     # the status is 200 (or a class: "2xx")
///   - header: Content-Type            # present
///   - header: Content-Type            # equal (exact, case-sensitive value)
///     equals: application/json
///   - header: Content-Type            # matches a regular expression
///     matches: '^application/(problem\+)?json'
///   - body_contains: '"ok"'
///   - body_matches: '"id":\s*\d+'
///   - json: /data/0/id                # a JSON pointer (RFC 6901) into the body: present
///   - json: /data/0/id                # equal
///     equals: 42
///   - json: /total                    # a number compared
///     gt: 0
///   - json: /name
///     matches: '^[A-Z]'
///   - duration: 200ms                 # the latency is under 200 ms
///     name: fast enough               # the name reports show (default: a description)
/// ```
/// Bodies are read and kept (up to 1 MiB) only for targets with body or `json` checks.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Check {
    /// The name reports show for the check (default: a description of it).
    #[serde(default)]
    #[schemars(length(min = 1))]
    pub(crate) name: Option<String>,
    /// The response's status must be this code or class (`200`, `"2xx"`). Unlike
    /// `expect.status`, a status that fails the check is not an error.
    #[serde(default)]
    pub(crate) status: Option<StatusMatch>,
    /// A response header that must be present (name case-insensitive), or equal `equals`,
    /// or match `matches`.
    #[serde(default)]
    pub(crate) header: Option<String>,
    /// Text the response body must contain.
    #[serde(default)]
    pub(crate) body_contains: Option<String>,
    /// A regular expression the response body must match (Rust `regex` syntax).
    #[serde(default)]
    pub(crate) body_matches: Option<String>,
    /// A JSON pointer into the JSON response body: its value must be present, or equal
    /// `equals`, or match `matches` (a string value), or compare with `lt`/`le`/`gt`/`ge`
    /// (a number).
    #[serde(default)]
    pub(crate) json: Option<String>,
    /// The response's latency must be under this duration, e.g. `200ms`.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) duration: Option<String>,
    /// For `header`: the exact value (a string). For `json`: the JSON value.
    #[serde(default)]
    pub(crate) equals: Option<serde_json::Value>,
    /// For `header` and `json` (a string value): a regular expression the value must match.
    #[serde(default)]
    pub(crate) matches: Option<String>,
    /// For `json`: the number must be below this.
    #[serde(default)]
    pub(crate) lt: Option<f64>,
    /// For `json`: the number must be at most this.
    #[serde(default)]
    pub(crate) le: Option<f64>,
    /// For `json`: the number must be above this.
    #[serde(default)]
    pub(crate) gt: Option<f64>,
    /// For `json`: the number must be at least this.
    #[serde(default)]
    pub(crate) ge: Option<f64>,
}

/// Expectations on a response. A response that fails them counts as an error.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Expect {
    /// Accepted status codes: numbers (`200`) or classes (`"2xx"`). Default: `["2xx"]`.
    #[serde(default)]
    pub(crate) status: Vec<StatusMatch>,
}

/// One accepted status: an exact code or a class such as `"2xx"`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum StatusMatch {
    /// An exact status code.
    Code(#[schemars(range(min = 100, max = 599))] u16),
    /// A status class: `1xx` to `5xx`.
    Class(#[schemars(regex(pattern = STATUS_CLASS_PATTERN))] String),
}

/// Regex for a rate with its unit: `500/s`, `2.5/s`.
pub(crate) const RATE_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?/s$";
/// Regex for think time: a duration, or a uniform range `50ms..150ms`.
pub(crate) const THINK_TIME_PATTERN: &str =
    r"^[0-9]+(\.[0-9]+)?(us|ms|s|m|h)(\.\.[0-9]+(\.[0-9]+)?(us|ms|s|m|h))?$";

/// The load: which model, how much, for how long.
///
/// - Closed model (default): `connections × streams` virtual users, each sending its next
///   request when its last response has been read (plus `think_time`, or at its `pacing` rate).
///   `connections` is how many connections to each target's host carry them.
/// - Open model: requests arrive at `rate` per second on a fixed schedule, whether or not the
///   server keeps up (k6's `constant-arrival-rate`, wrk2's `-R`); at most `max_in_flight` at
///   once, and an arrival that finds them all busy is counted as dropped.
///
/// A constant load gives `connections` or `rate` with `duration` (or `requests`); a changing
/// load gives `stages` instead (k6's `stages`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Load {
    /// `closed` (default) or `open`.
    #[serde(default)]
    pub(crate) model: Option<LoadModel>,
    /// Closed model, constant load: connections to each target's host; each carries
    /// `streams` virtual users.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub(crate) connections: Option<u32>,
    /// Open model, constant load: arrival rate, e.g. `500/s`.
    #[serde(default)]
    #[schemars(regex(pattern = RATE_PATTERN))]
    pub(crate) rate: Option<String>,
    /// A changing load: steps, each ramped linearly from the previous step's level (the first
    /// from 0) to its own. Replaces `connections`/`rate` and `duration`.
    #[serde(default)]
    pub(crate) stages: Vec<Stage>,
    /// HTTP/2 and HTTP/3 streams: how many requests one connection carries at once (h2load's
    /// `-m`, default 1). The closed model runs `connections × streams` virtual users, so as
    /// many requests in flight. Above 1, every target needs `protocol: h2` or `h3`, since
    /// HTTP/1.1 carries one request at a time.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub(crate) streams: Option<u32>,
    /// Worker threads that send the requests (rewrk's and loadgen-rs's `--threads`); default:
    /// one per CPU. Never more than there are connections (open model: `max_in_flight`).
    #[serde(default)]
    #[schemars(range(min = 1, max = 1024))]
    pub(crate) threads: Option<u32>,
    /// How long to measure, after the warmup. Give `duration` or `requests`, not both.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) duration: Option<String>,
    /// How many requests to measure, after the warmup. Give `duration` or `requests`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) requests: Option<u64>,
    /// Before measuring starts, requests that are not counted: a duration of constant load
    /// (`2s`; default `0s`), or a number of requests (`100`) sent before the clock starts, as
    /// fast as the first level's virtual users (closed model) or the in-flight cap (open model)
    /// allow. With `stages`, mark stages `warmup: true` instead.
    #[serde(default)]
    pub(crate) warmup: Option<Warmup>,
    /// Open model: most requests in flight at once (k6's `maxVUs`); default: the peak rate
    /// times one second (or the largest burst), at least 16 and at most 10000.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100000))]
    pub(crate) max_in_flight: Option<u32>,
    /// Closed model: each virtual user sends at most this many requests per second (hey's
    /// `-q`), on a schedule: a request that starts late is measured from when it was due.
    #[serde(default)]
    #[schemars(regex(pattern = RATE_PATTERN))]
    pub(crate) pacing: Option<String>,
    /// Closed model: pause between a response and the virtual user's next request: a duration
    /// (`100ms`) or a uniform range (`50ms..150ms`). Not part of any latency.
    #[serde(default)]
    #[schemars(regex(pattern = THINK_TIME_PATTERN))]
    pub(crate) think_time: Option<String>,
    /// Closed model: open the first level's connections before the clock starts (default
    /// `true`), so that a short run does not measure connects as latency (vastar's
    /// pre-connect).
    #[serde(default)]
    pub(crate) pre_connect: Option<bool>,
    /// The generator's health limits: how far it may fall behind its schedule before the
    /// measurement is invalid (exit 5). Defaults in `docs/spec.md`, measured in
    /// `bench/health_calibration.sh`.
    #[serde(default)]
    pub(crate) health: Option<HealthLimits>,
}

/// Regex for a share in percent: `1%`, `0.5%`.
pub(crate) const PERCENT_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?%$";

/// `load.health`: the limits of the generator's own shortfalls, past which a measured stage
/// (of at least 1 s) is an invalid measurement.
///
/// ```yaml
/// load:
///   health: { late_p99: 10ms, dropped: 1% }
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HealthLimits {
    /// How late requests may start after they were due, at p99 (open model and pacing),
    /// e.g. `10ms`. Judged only where the lateness shows in the latency (longer than the
    /// service time by more than 10% at p50 or p99).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) late_p99: Option<String>,
    /// Open model: the share of a stage's due arrivals that may be dropped while the
    /// generator itself was behind its schedule (by more than `late_p99`), e.g. `1%`.
    /// Arrivals dropped because the server held every in-flight slot are not the
    /// generator's: they count as failed requests instead.
    #[serde(default)]
    #[schemars(regex(pattern = PERCENT_PATTERN))]
    pub(crate) dropped: Option<String>,
}

/// `load.warmup`: a duration of constant load, or a number of requests.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Warmup {
    /// Constant load for this long, e.g. `2s`; its requests are not counted.
    Duration(#[schemars(regex(pattern = DURATION_PATTERN))] String),
    /// This many requests before the clock starts, not counted, e.g. `100`.
    Requests(#[schemars(range(min = 1))] u64),
}

/// The load model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum LoadModel {
    /// Virtual users, each waiting for its response before it sends the next request.
    Closed,
    /// Requests arrive on a schedule at a given rate, whatever the responses do.
    Open,
}

/// One step of a changing load: a linear ramp from the previous step's level (the first from
/// 0) to this one's, over `duration`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Stage {
    /// How long the step lasts; `0s` changes the level at once (a spike).
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub(crate) duration: String,
    /// The level at the step's end: connections (closed model, a whole number) or an arrival
    /// rate (open model, `200/s`). Give `level` or `arrivals`.
    #[serde(default)]
    pub(crate) level: Option<StageLevel>,
    /// Open model: this many arrivals, spread evenly over `duration` (Gatling's
    /// `rampUsers(N).during(d)`), or all at once when `duration` is `0s` (Gatling's
    /// `atOnceUsers(N)`). The level after the step is its rate (`arrivals / duration`); after a
    /// `0s` step, the level before it.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub(crate) arrivals: Option<u64>,
    /// A warmup step: its requests are not counted. Warmup steps come first.
    #[serde(default)]
    pub(crate) warmup: bool,
}

/// A stage's level: connections (closed model) or an arrival rate (open model).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum StageLevel {
    /// Closed model: connections (each carrying `streams` virtual users).
    Connections(#[schemars(range(max = 100000))] u32),
    /// Open model: arrival rate, `200/s`.
    Rate(#[schemars(regex(pattern = RATE_PATTERN))] String),
}
