//! The spec: the YAML a team writes, read into plain data.
//!
//! These types are the single source of the published JSON Schema
//! (`schema/loadgate.schema.json`, printed by `loadgate schema`). They hold strings as written:
//! durations such as `"10s"`, threshold expressions such as `"p(95) < 200ms"`, `${VAR}`
//! references. Nothing here is parsed or defaulted beyond serde's `default`; the plan
//! (`crate::plan`) resolves every value, so the run never sees a `String` duration.

mod load;

pub use load::{Location, SourceSpec, SpecLoadError};

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;

/// Regex for a duration with an explicit unit: `500us`, `200ms`, `1.5s`, `2m`, `1h`.
pub const DURATION_PATTERN: &str = r"^[0-9]+(\.[0-9]+)?(us|ms|s|m|h)$";
/// Regex for a status class: `1xx` to `5xx`.
pub const STATUS_CLASS_PATTERN: &str = r"^[1-5]xx$";
/// Regex for an HTTP method: upper-case letters (`GET`, `POST`).
pub const METHOD_PATTERN: &str = r"^[A-Z]+$";

/// The `$id` of the published spec schema (`schema/loadgate.schema.json`).
pub const SPEC_SCHEMA_ID: &str = "https://loadgate.dev/schema/loadgate.schema.json";

/// A loadgate spec, version 1: what to load, how hard, and which SLOs gate the result.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "loadgate spec", extend("$id" = SPEC_SCHEMA_ID))]
pub struct Spec {
    /// Spec format version. Only `1` exists.
    #[schemars(range(min = 1, max = 1))]
    pub version: u32,
    /// Name of this load test; results of different specs are never compared.
    #[schemars(length(min = 1))]
    pub name: String,
    /// Free text shown in reports.
    #[serde(default)]
    pub description: Option<String>,
    /// The system under test, started before the run and stopped after it (optional).
    #[serde(default)]
    pub service: Option<Service>,
    /// Values shared by all targets.
    #[serde(default)]
    pub defaults: Defaults,
    /// The requests to send, chosen by weight.
    #[schemars(length(min = 1))]
    pub targets: Vec<Target>,
    /// How much load to apply and for how long.
    pub load: Load,
    /// Thresholds over the whole run (all targets together).
    #[serde(default)]
    pub slo: Slo,
    /// How much worse than a baseline result the whole run may get (`loadgate compare`,
    /// `loadgate run --baseline`). Absent: the default rules.
    #[serde(default)]
    pub regression: Regression,
}

/// A command that starts the system under test, and how to tell that it is ready.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// Program and arguments, run without a shell. `${LOADGATE}` names the running loadgate
    /// binary, so `["${LOADGATE}", "serve", "--listen", "127.0.0.1:8080"]` works without install.
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Extra environment variables for the command.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory of the command, relative to the spec file (default: the spec's folder).
    #[serde(default)]
    pub working_dir: Option<String>,
    /// URL polled with GET until it answers with any HTTP response.
    pub ready_url: String,
    /// How long to wait for `ready_url` to answer (default `30s`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub ready_timeout: Option<String>,
}

/// Values shared by all targets; a target's own value wins.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    /// Base URL that a target's `path` is joined to, e.g. `http://127.0.0.1:8080`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Headers sent with every request (a target's headers of the same name replace these).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Request timeout, from connect to the last byte of the response (default `10s`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub timeout: Option<String>,
}

/// One named request.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    /// Name used in reports and per-target SLOs; unique within the spec.
    #[schemars(length(min = 1))]
    pub name: String,
    /// HTTP method (default `GET`).
    #[serde(default)]
    #[schemars(regex(pattern = METHOD_PATTERN))]
    pub method: Option<String>,
    /// Absolute URL. Give either `url`, or `path` with `defaults.base_url`.
    #[serde(default)]
    pub url: Option<String>,
    /// Path (and query) joined to `defaults.base_url`, e.g. `/users?page=2`.
    #[serde(default)]
    pub path: Option<String>,
    /// Request headers.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Request body, inline.
    #[serde(default)]
    pub body: Option<String>,
    /// Request body read from a file, relative to the spec file.
    #[serde(default)]
    pub body_file: Option<String>,
    /// What a successful response looks like.
    #[serde(default)]
    pub expect: Expect,
    /// Relative share of requests for this target (default 1).
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub weight: Option<u32>,
    /// Thresholds over this target's requests alone.
    #[serde(default)]
    pub slo: Slo,
}

/// Expectations on a response. A response that fails them counts as an error.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Accepted status codes: numbers (`200`) or classes (`"2xx"`). Default: `["2xx"]`.
    #[serde(default)]
    pub status: Vec<StatusMatch>,
}

/// One accepted status: an exact code or a class such as `"2xx"`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StatusMatch {
    /// An exact status code.
    Code(#[schemars(range(min = 100, max = 599))] u16),
    /// A status class: `1xx` to `5xx`.
    Class(#[schemars(regex(pattern = STATUS_CLASS_PATTERN))] String),
}

/// The load model. Closed model: a fixed number of connections, each sending its next request
/// as soon as the previous response is read.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// Number of concurrent connections (virtual users).
    #[schemars(range(min = 1, max = 100000))]
    pub connections: u32,
    /// How long to measure, after the warmup. Give `duration` or `requests`, not both.
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub duration: Option<String>,
    /// How many requests to measure, after the warmup. Give `duration` or `requests`.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub requests: Option<u64>,
    /// Load applied before measuring starts; its requests are not counted (default `0s`).
    #[serde(default)]
    #[schemars(regex(pattern = DURATION_PATTERN))]
    pub warmup: Option<String>,
}

/// Service level objectives: thresholds in k6's grammar, grouped by metric.
///
/// ```yaml
/// slo:
///   latency: ["p(95) < 200ms", "p(99.9) < 1s", "mean < 50ms"]
///   errors: ["rate < 0.1%"]
///   requests: ["rate > 500/s"]
/// ```
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// Response latency: `p(N)` (e.g. `p(99.9)`), `med`, `mean`, `min`, `max`, with a time unit.
    #[serde(default)]
    pub latency: Vec<String>,
    /// Failed requests (transport errors and unexpected statuses): `rate` in `%`, or `count`.
    #[serde(default)]
    pub errors: Vec<String>,
    /// Completed requests: `rate` in `/s`, or `count`.
    #[serde(default)]
    pub requests: Vec<String>,
}

/// Regression rules: how much worse than the baseline a metric of the whole run may get before
/// `loadgate compare` calls it a regression. Each rule is `aggregation change [floor value]`:
///
/// ```yaml
/// regression:
///   latency: ["p(95) +10%", "p(99) +20% floor 5ms"]   # may rise 10% (20%); never flag < 5ms
///   errors: ["rate +10% floor 0.1%"]                  # floor in percentage points
///   requests: ["rate -10%"]                           # throughput may drop 10%
/// ```
///
/// A list that is absent keeps its defaults (latency `p(50) +10%`, `p(95) +10%`, `p(99) +20%`,
/// each `floor 2ms`; errors `rate +10% floor 0.1%`; requests `rate -10%`); an empty list turns
/// that metric's rules off.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Regression {
    /// Latency rules: `p(50)`, `p(90)`, `p(95)`, `p(99)`, `p(99.9)`, `med` or `mean`, then the
    /// allowed rise (`+10%`), then optionally `floor` and a duration (`floor 2ms`).
    #[serde(default)]
    pub latency: Option<Vec<String>>,
    /// Error-rate rules: `rate`, the allowed relative rise (`+10%`), optionally `floor` and a
    /// rate in percentage points (`floor 0.1%`).
    #[serde(default)]
    pub errors: Option<Vec<String>>,
    /// Throughput rules: `rate`, the allowed relative drop (`-10%`), optionally `floor` and a
    /// rate (`floor 50/s`).
    #[serde(default)]
    pub requests: Option<Vec<String>>,
}
