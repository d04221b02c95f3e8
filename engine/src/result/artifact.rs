//! The serialized types of the result artifact and its JSON Schema.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::health_record::{Health, is_zero};
use super::{
    FlowResult, MessagesResult, PhasesResult, ScenarioResult, StreamingResult, UpstreamResult,
};
use crate::plan::regression::{RegressionRule, RuleScope, ScopeKind};
use crate::plan::threshold::{Metric, Severity};

/// Version of the result format; bumped on any incompatible change.
pub(crate) const RESULT_VERSION: u32 = 4;

/// The result of one run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// Version of this format: 4 (results of versions 1 to 3 are upgraded as they are read).
    pub result_version: u32,
    /// The spec that produced this result.
    pub spec: SpecInfo,
    /// When measuring started (after the warmup), RFC 3339 in UTC; to the microsecond since
    /// version 4 (to the millisecond before).
    pub started_at: String,
    /// When measuring was planned to start: `loadgate run --start-at` plus the warmup, RFC
    /// 3339 in UTC to the microsecond; absent without `--start-at`. `started_at` is when it
    /// did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_start_at: Option<String>,
    /// Which shard of a sharded run this result is (`loadgate run --shard K/N`); absent for a
    /// run that was not sharded and for a merge (see `merged`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// For the result of `loadgate merge`: what it merged, which shards are missing, how far
    /// apart the shards started; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergeInfo>,
    /// Length of the measured window in seconds: the planned duration; in count mode, or when
    /// the run was stopped early, from the end of the warmup until the last measured request
    /// ended; with scenarios, from the first one's start to the last one's end. Rates divide by it.
    pub duration_s: f64,
    /// The run was stopped early (Ctrl-C); its numbers cover only part of the plan.
    pub interrupted: bool,
    /// Where the run happened: loadgate's version, the host, its CPUs and the CPU time
    /// loadgate used.
    pub environment: Environment,
    /// Where the measured code came from (branch, commit, a link to the commit): from GitHub
    /// Actions' variables, else from `git` in the working directory; set again by `loadgate
    /// history add --branch/--commit`. Absent when nothing told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceInfo>,
    /// The load that was applied: the model, connections or in-flight cap, planned duration
    /// or count, warmup; with scenarios, a summary of theirs (each one's is in `scenarios`).
    pub load: LoadInfo,
    /// All targets together (named `total`), measured over the same window.
    pub total: TargetResult,
    /// Per target, in the spec's order (a flow's steps are `flow/step`; with scenarios, each
    /// measured over its scenario's window, its seconds on the run's clock).
    pub targets: Vec<TargetResult>,
    /// Per flow, in the spec's order: its iterations and its steps; empty when the spec gives
    /// `targets` (and in results of versions 1 and 2).
    #[serde(default)]
    pub flows: Vec<FlowResult>,
    /// One sample per second of the measured window.
    pub time_series: Vec<TimeSample>,
    /// Whether the load generator applied the planned load: per stage, planned against
    /// achieved. An invalid measurement measured the generator, not the service.
    pub health: Health,
    /// Every SLO threshold: whole run, per target, per flow, per scenario (a scenario has none).
    pub slo: Vec<SloVerdict>,
    /// Whether every SLO threshold of severity `fail` passed (`warn` ones never fail the run).
    pub passed: bool,
    /// The regression rules of the spec, resolved (defaults applied), so that
    /// `loadgate compare` needs only two result files. Absent in results written before
    /// loadgate recorded them.
    #[serde(default)]
    pub regression_rules: Option<Vec<RecordedRule>>,
    /// The gate's false-alarm rate per run that the regression rules share (α, the spec's
    /// `regression.alpha`), a fraction; 0.05 in results written before loadgate recorded it.
    #[serde(default = "default_regression_alpha")]
    pub regression_alpha: f64,
    /// Per scenario of the spec's `scenarios`, in its order: what each measured apart (the
    /// fields above are the whole run's, across them); empty for a spec with one `load`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioResult>,
}

/// `regression_alpha` of a result that does not record it: the default 5%.
fn default_regression_alpha() -> f64 {
    crate::plan::regression::DEFAULT_ALPHA
}

/// One shard of a sharded run: `--shard K/N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ShardInfo {
    /// K: which shard, from 1 to `count`.
    pub index: u32,
    /// N: how many shards the run was spread over.
    pub count: u32,
}

/// What `loadgate merge` merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MergeInfo {
    /// How many results were merged.
    pub results: u32,
    /// N, for results of `--shard K/N` runs; absent when the results were not sharded.
    pub shard_count: Option<u32>,
    /// The shards (K) of `1..=shard_count` that were not given (`merge --allow-missing`),
    /// ascending; empty when none is missing.
    pub missing: Vec<u32>,
    /// Shards are missing: the merged numbers cover only part of the planned load, and its
    /// SLO verdicts only that part.
    pub partial: bool,
    /// How far apart the merged results started measuring: the latest `started_at` minus the
    /// earliest, microseconds.
    pub start_skew_us: u64,
}

/// A regression rule as resolved by the plan, in canonical units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordedRule {
    /// What the rule compares: `total` (the whole run), `target` or `flow`; `total` in
    /// results written before rules had scopes.
    #[serde(default)]
    #[schemars(with = "String")]
    pub scope_kind: ScopeKind,
    /// The target's or flow's name; `total` for the whole run.
    #[serde(default = "total")]
    pub scope: String,
    /// `latency`, `errors` or `requests`.
    #[schemars(with = "String")]
    pub metric: Metric,
    /// `p(95)`, `med`, `mean` (latency) or `rate`.
    pub aggregation: String,
    /// Allowed relative change in the worse direction (a rise; a drop for `requests`), as a
    /// fraction: 0.1 = 10%.
    pub max_change: f64,
    /// Absolute change never counted as a regression, in `unit`.
    pub floor: f64,
    /// `us`, `ratio` (0.01 = 1%) or `1/s`.
    pub unit: String,
    /// The rule as written in the spec, or the default rule's text.
    pub expression: String,
    /// `fail` (a regression fails the run) or `warn`; `fail` when absent.
    #[serde(default, skip_serializing_if = "is_fail")]
    pub severity: Severity,
    /// Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
    /// all of them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
}

impl RecordedRule {
    /// Records a plan's rule.
    pub(crate) fn from_rule(rule: &RegressionRule) -> RecordedRule {
        RecordedRule {
            scope_kind: rule.scope.kind(),
            scope: rule.scope.name().to_string(),
            metric: rule.metric,
            aggregation: rule.aggregation.to_string(),
            max_change: rule.max_change,
            floor: rule.floor,
            unit: rule.unit().to_string(),
            expression: rule.expression.clone(),
            severity: rule.severity,
            tags: rule.tags.to_map(),
        }
    }

    /// The rule back from a result file. Errors: a metric that has no rules (`checks`), an
    /// unknown aggregation.
    pub(crate) fn to_rule(&self) -> Result<RegressionRule, String> {
        if self.metric == Metric::Checks {
            return Err(format!("unknown regression metric `{}`", self.metric));
        }
        let (aggregation, rest) = crate::plan::threshold::parse_aggregation(&self.aggregation)?;
        if !rest.trim().is_empty() {
            return Err(format!("unknown aggregation `{}`", self.aggregation));
        }
        Ok(RegressionRule {
            scope: RuleScope::of(self.scope_kind, &self.scope),
            metric: self.metric,
            aggregation,
            max_change: self.max_change,
            floor: self.floor,
            expression: self.expression.clone(),
            severity: self.severity,
            tags: crate::plan::TagSelector(self.tags.clone().into_iter().collect()),
        })
    }
}

/// Which spec produced a result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SpecInfo {
    /// The spec's `name`; results compare only with results of the same name.
    pub name: String,
    /// SHA-256 of the spec file's bytes, 64 lowercase hex digits; a change is noted when
    /// comparing.
    pub hash: String,
}

/// Where the measured code came from. Each part is absent when unknown.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceInfo {
    /// The branch the code was on (`main`; a pull request's head branch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit, a full hexadecimal SHA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// A web page of the commit (`https://github.com/OWNER/REPO/commit/SHA`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit_url: Option<String>,
}

/// Where the run happened.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    /// Version of the loadgate that wrote the result.
    pub loadgate_version: String,
    /// Host name of the load generator's machine.
    pub hostname: String,
    /// Operating system (`linux`, `macos`, `windows`).
    pub os: String,
    /// CPU architecture (`x86_64`, `aarch64`).
    pub arch: String,
    /// Logical CPUs of the load generator's machine.
    pub cpu_count: usize,
    /// The CPU's model name (Linux: `model name` of `/proc/cpuinfo`); absent where unknown and
    /// in results written before loadgate recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_model: Option<String>,
    /// CPU time the load generator used in user mode during the run, seconds.
    pub client_cpu_user_s: f64,
    /// CPU time the load generator used in kernel mode during the run, seconds.
    pub client_cpu_system_s: f64,
    /// The UDP socket buffers loadgate's HTTP/3 endpoints got (the smallest of its
    /// workers'); absent when no target spoke HTTP/3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub udp_buffers: Option<UdpBuffersResult>,
}

impl Environment {
    /// The runner type: results of one type are comparable run to run (history, stored
    /// baselines). `linux-x86_64, AMD EPYC 7763 64-Core Processor, 4 CPUs`; `unknown CPU` where
    /// the model is not recorded.
    pub fn runner_type(&self) -> String {
        format!(
            "{}-{}, {}, {} CPUs",
            self.os,
            self.arch,
            self.cpu_model.as_deref().unwrap_or("unknown CPU"),
            self.cpu_count
        )
    }
}

/// The kernel buffers of loadgate's UDP sockets (HTTP/3), as the system reported them after
/// loadgate asked for `wanted_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct UdpBuffersResult {
    /// What loadgate asked for each direction, bytes.
    pub wanted_bytes: u64,
    /// The receive buffer given, bytes, in the units of the size set (Linux reads back twice
    /// that, its bookkeeping included; halved here): at most `net.core.rmem_max` on Linux.
    pub recv_bytes: u64,
    /// The send buffer given, bytes (as `recv_bytes`): at most `net.core.wmem_max` on Linux.
    pub send_bytes: u64,
    /// Less than asked in either direction: under load, datagrams may have been dropped
    /// (seen by QUIC as loss).
    pub limited: bool,
}

/// The load that was applied.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoadInfo {
    /// `closed`: connections each sending when their last response ended; `open`: requests
    /// arriving on a schedule at a rate; `mixed`: a run of scenarios of both.
    pub model: String,
    /// Closed model: the most connections of any stage, each carrying `streams` virtual users
    /// (scenarios: summed, they run at once); absent in the open model.
    pub connections: Option<u32>,
    /// Open model: the cap on requests in flight (arrivals beyond it are dropped and counted;
    /// scenarios: summed). Absent in the closed model.
    pub max_in_flight: Option<u32>,
    /// Concurrent requests per HTTP/2 connection (1 for HTTP/1.1).
    #[serde(default = "one")]
    pub streams: u32,
    /// Planned measuring time in seconds (duration mode; scenarios: to the last planned end).
    pub duration_s: Option<f64>,
    /// Planned number of requests (count mode; scenarios: summed, when every one counts).
    pub requests: Option<u64>,
    /// Warmup before measuring, seconds.
    pub warmup_s: f64,
}

/// What one target (or all, for `total`) measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct TargetResult {
    /// Target name; `total` for all targets together.
    pub name: String,
    /// The target's tags (its scenario's, flow's and step's merged, `group` included);
    /// absent when none (and for `total`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// HTTP method; absent for `total`.
    pub method: Option<String>,
    /// URL as written in the spec (before `${VAR}` interpolation); absent for `total`.
    pub url: Option<String>,
    /// Requests that ended: complete responses plus transport errors.
    pub requests: u64,
    /// Complete responses, any status.
    pub responses: u64,
    /// Failed requests: transport errors plus responses with an unexpected status.
    pub errors: u64,
    /// `errors / requests`, a fraction (0.01 = 1%).
    pub error_rate: f64,
    /// Complete responses per second of the measured window.
    pub rps: f64,
    /// Request bytes written, headers and body.
    pub bytes_sent: u64,
    /// Response bytes read, headers and body.
    pub bytes_received: u64,
    /// Complete responses by status code.
    pub status_codes: BTreeMap<String, u64>,
    /// Failed requests by kind: connect_refused, connect_timeout, connect_error, fd_limit
    /// (loadgate was out of file descriptors: EMFILE/ENFILE), tls_handshake, timeout, reset,
    /// closed, malformed, stream_reset, goaway, idle_timeout (an HTTP/3 connection silent past
    /// its idle timeout), unexpected_status, redirect (one not followed: to another origin, or
    /// past `defaults.redirects`); a gRPC call that ended with a status not in `expect_status`
    /// by that status (its response is counted too): grpc_cancelled, grpc_unknown,
    /// grpc_invalid_argument, grpc_deadline_exceeded, grpc_not_found, grpc_already_exists,
    /// grpc_permission_denied, grpc_resource_exhausted, grpc_failed_precondition,
    /// grpc_aborted, grpc_out_of_range, grpc_unimplemented, grpc_internal, grpc_unavailable,
    /// grpc_data_loss, grpc_unauthenticated; ws_closed (the WebSocket server closed the
    /// connection, or it ended without a Close frame (code 1006), before the awaited reply;
    /// its close code in `errors_by_code`).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Failed requests whose peer gave a code (HTTP/2 RST_STREAM and GOAWAY, HTTP/3 stream
    /// resets and connection closes, QUIC transport closes, WebSocket close frames), by kind
    /// and code: keys are `<kind> <NAME> (0x<hex>)`, e.g. `stream_reset H3_REQUEST_CANCELLED
    /// (0x10c)`, or `<kind> 0x<hex>` for a code without a name; WebSocket close codes in
    /// decimal, as RFC 6455 writes them: `ws_closed INTERNAL_ERROR (1011)`, `ws_closed 4000`.
    /// At most 16 codes per kind; the rest are counted under `<kind> other`. Absent when no
    /// failure had a code.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors_by_code: BTreeMap<String, u64>,
    /// Latency of complete responses, from when each request was due (its intended start on
    /// the open model's or a paced connection's schedule, else its actual start); absent when
    /// there were none.
    pub latency_us: Option<LatencySummary>,
    /// Service time of complete responses: from each request's actual start (including a
    /// connect) to its last byte. Equal to `latency_us` unless requests were scheduled.
    #[serde(default)]
    pub service_time_us: Option<LatencySummary>,
    /// The latency histogram in microseconds: HdrHistogram V2 + DEFLATE, base64 (standard),
    /// 3 significant digits. Any HdrHistogram port decodes it; docs/schemas.md says how the
    /// ports rank percentiles.
    pub histogram: String,
    /// Response check evaluations that passed, over all checks.
    #[serde(default)]
    pub checks_passed: u64,
    /// Response check evaluations that failed, over all checks.
    #[serde(default)]
    pub checks_failed: u64,
    /// Per response check of the target, in the spec's order; empty for `total` and for a
    /// target without checks.
    #[serde(default)]
    pub checks: Vec<CheckResult>,
    /// Phase timings in microseconds: connection setup (`dns`, `connect`, `tls`) per
    /// connection opened in the measured window, `write`, `ttfb` and `body` per complete
    /// response.
    /// Absent in results written before phases were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases_us: Option<PhasesResult>,
    /// The slow threshold (`defaults.slow`), microseconds of latency; absent when the spec
    /// sets none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_threshold_us: Option<u64>,
    /// Complete responses whose latency was at least `slow_threshold_us`; absent when the spec
    /// sets no threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_responses: Option<u64>,
    /// Upstream time the responses reported in their headers (`X-Envoy-Upstream-Service-Time`,
    /// `Server-Timing`); absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upstream_us: Option<UpstreamResult>,
    /// Streamed responses (chunked bodies, HTTP/2 bodies without a length, Server-Sent
    /// Events): time to first byte, events; absent when no body was streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<StreamingResult>,
    /// gRPC calls' and WebSocket exchanges' messages: counts, bytes, messages per second,
    /// streams' durations; absent for plain HTTP targets (and for `total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<MessagesResult>,
    /// How this target's connections spoke: what was asked, what was negotiated, TLS.
    /// Absent for `total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportResult>,
    /// This target's seconds, as the run's `time_series` (each with its histogram), so that a
    /// merge recomputes each target's seconds exactly; empty for `total` (whose seconds are
    /// the run's `time_series`) and in results before version 4.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_series: Vec<TimeSample>,
}

/// How often one response check passed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    /// What was checked, e.g. `header content-type == "application/json"`.
    pub check: String,
    /// Evaluations of this check that passed: one per response the check read.
    pub passed: u64,
    /// Evaluations of this check that failed. A failed check is not an error: it counts
    /// towards the `checks` metric (the share that passed), not towards `errors`.
    pub failed: u64,
}

/// One phase's distribution, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseSummary {
    /// Samples in the histogram: connections opened (`dns`, `connect`, `tls`) or responses
    /// (`write`, `ttfb`, `body`, upstream times, streamed bodies) or events (`event_gap`).
    pub count: u64,
    /// Shortest sample, microseconds.
    pub min_us: u64,
    /// Arithmetic mean of the samples, microseconds.
    pub mean_us: f64,
    /// Median (50th percentile) of the samples, microseconds.
    pub p50_us: u64,
    /// 90th percentile of the samples, microseconds.
    pub p90_us: u64,
    /// 99th percentile of the samples, microseconds.
    pub p99_us: u64,
    /// Longest sample, microseconds.
    pub max_us: u64,
    /// The histogram: HdrHistogram V2 + DEFLATE, base64 (standard).
    pub histogram: String,
}

/// A target's protocol and TLS, as asked in the spec and as negotiated by the check at
/// start (every connection of a target uses the same configuration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TransportResult {
    /// What the spec asked for: `h1`, `h2`, `h3` or `auto`.
    pub requested: String,
    /// What the connections speak: `h1`, `h2` or `h3`.
    pub protocol: String,
    /// TLS parameters; absent over cleartext.
    pub tls: Option<TlsResult>,
    /// The server offered HTTP/3: the `h3` entry of an `Alt-Svc` response header (e.g.
    /// `h3=":8443"`), as first seen on this target's responses; reported, not followed
    /// (`protocol: h3` loads it). Absent when no response offered it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alt_svc_h3: Option<String>,
}

impl TransportResult {
    /// In words: `h2 over TLS 1.3 (TLS13_AES_128_GCM_SHA256), server name api.example.com`,
    /// `h3 over QUIC, TLS 1.3, server name ...` (quinn does not tell QUIC's cipher suite: an
    /// empty `cipher` is left out) or `h1 over cleartext TCP`.
    pub(crate) fn describe(&self) -> String {
        let Some(tls) = &self.tls else {
            return format!("{} over cleartext TCP", self.protocol);
        };
        let quic = if self.protocol == "h3" { "QUIC, " } else { "" };
        let cipher = match tls.cipher.as_str() {
            "" => String::new(),
            cipher => format!(" ({cipher})"),
        };
        let (protocol, version, name) = (&self.protocol, &tls.version, &tls.server_name);
        format!("{protocol} over {quic}TLS {version}{cipher}, server name {name}")
    }

    /// The server's certificate was not verified.
    pub(crate) fn insecure(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.insecure_skip_verify)
    }
}

/// The TLS parameters of a target's connections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TlsResult {
    /// Negotiated version: `1.2` or `1.3`.
    pub version: String,
    /// Negotiated cipher suite (`TLS13_AES_128_GCM_SHA256`); empty for HTTP/3 (not told by quinn).
    pub cipher: String,
    /// The name sent as SNI and verified in the certificate.
    pub server_name: String,
    /// The server's certificate was NOT verified (`insecure_skip_verify`).
    pub insecure_skip_verify: bool,
}

/// Latency percentiles and moments, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LatencySummary {
    /// Shortest, microseconds.
    pub min_us: u64,
    /// Arithmetic mean, microseconds.
    pub mean_us: f64,
    /// Standard deviation of the recorded values (population), microseconds.
    pub stdev_us: f64,
    /// Median (50th percentile), microseconds: the value of rank `ceil(0.5 × count)` in
    /// HdrHistogram's ranking (values equal within its 3 significant digits).
    pub p50_us: u64,
    /// 90th percentile, microseconds, ranked as `p50_us`.
    pub p90_us: u64,
    /// 95th percentile, microseconds, ranked as `p50_us`.
    pub p95_us: u64,
    /// 99th percentile, microseconds, ranked as `p50_us`.
    pub p99_us: u64,
    /// 99.9th percentile, microseconds, ranked as `p50_us`.
    pub p99_9_us: u64,
    /// Longest, microseconds.
    pub max_us: u64,
    /// 10th percentile, microseconds, ranked as `p50_us`; absent in results written before it
    /// was recorded.
    #[serde(default)]
    pub p10_us: Option<u64>,
    /// 25th percentile (first quartile), microseconds, ranked as `p50_us`; absent in older
    /// results.
    #[serde(default)]
    pub p25_us: Option<u64>,
    /// 75th percentile (third quartile), microseconds, ranked as `p50_us`; absent in older
    /// results.
    #[serde(default)]
    pub p75_us: Option<u64>,
    /// 99.99th percentile, microseconds, ranked as `p50_us`; absent in older results.
    #[serde(default)]
    pub p99_99_us: Option<u64>,
}

/// One second of the measured window, all targets together.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TimeSample {
    /// Seconds since measuring started (this sample covers `[second, second + 1)`).
    pub second: u32,
    /// Complete responses that ended in this second.
    pub responses: u64,
    /// Failed requests that ended in this second.
    pub errors: u64,
    /// Median latency of this second's responses, µs (0 when none). This and the other
    /// per-second percentiles come from a histogram of 2 significant digits.
    pub p50_us: u64,
    /// 99th percentile, µs (0 when none).
    pub p99_us: u64,
    /// Longest latency of this second's responses, µs (0 when none).
    pub max_us: u64,
    /// 90th percentile, µs; absent in results written before it was recorded.
    #[serde(default)]
    pub p90_us: Option<u64>,
    /// 95th percentile, µs; absent in older results.
    #[serde(default)]
    pub p95_us: Option<u64>,
    /// 99.9th percentile, µs; absent in older results.
    #[serde(default)]
    pub p99_9_us: Option<u64>,
    /// Mean latency, µs (0 when no responses); absent in older results.
    #[serde(default)]
    pub mean_us: Option<f64>,
    /// Requests that ended in this second (responses plus transport errors); absent in older
    /// results.
    #[serde(default)]
    pub requests: Option<u64>,
    /// This second's latencies in microseconds: HdrHistogram V2 + DEFLATE, base64 (standard),
    /// 2 significant digits, the histogram the percentiles above come from, so that merged
    /// seconds are exact; absent in results before version 4 and for a second without
    /// responses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// The verdict on one SLO threshold.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SloVerdict {
    /// `total`, or the target's or the flow's name (a flow's `latency` is its iteration
    /// duration, `errors` its failed iterations, `requests` its iterations).
    pub scope: String,
    /// What the threshold gates: `latency`, `errors` (failed requests), `requests` (complete
    /// responses, any status) or `checks` (the share of check evaluations that passed).
    #[schemars(with = "String")]
    pub metric: Metric,
    /// The threshold as written, e.g. `p(95) < 200ms`.
    pub threshold: String,
    /// The measured value in `unit`; absent when it could not be measured (no responses).
    pub measured: Option<f64>,
    /// Unit of `measured` and `limit`: `us`, `ratio` (0.01 = 1%), `1/s` or `count`.
    pub unit: String,
    /// The threshold's limit in `unit`.
    pub limit: f64,
    /// Whether the threshold held: `measured` is within `limit` (a threshold that could not
    /// be measured fails).
    pub passed: bool,
    /// For a window threshold: the window's length in seconds; `measured` is then the first
    /// failing window's value, or the worst window's when all passed.
    #[serde(default)]
    pub window_s: Option<u32>,
    /// For a failed window threshold: where the first failing window starts, seconds into
    /// the measured window.
    #[serde(default)]
    pub failed_window_start_s: Option<u32>,
    /// This threshold failed during the run and stopped it (`abort_on_fail`).
    #[serde(default)]
    pub aborted_run: bool,
    /// loadgate added this threshold, the spec did not write it: `errors: rate < 100%` on
    /// the whole run when its `slo` has no `errors` threshold, so that a run in which every
    /// request failed (or none ended) does not pass. False in older results.
    #[serde(default)]
    pub default: bool,
    /// What the scope is: `total`, `target`, `flow` or `scenario`; absent in results written
    /// before scenarios.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub scope_kind: Option<ScopeKind>,
    /// Only the requests of the scope that carry these tags (`latency{kind:write}`); absent:
    /// all of them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// `fail` (a failure fails the run) or `warn` (reported, never fails it); `fail` when
    /// absent.
    #[serde(default, skip_serializing_if = "is_fail")]
    pub severity: Severity,
    /// Whole-run `errors` thresholds: the open model's arrivals dropped because every
    /// in-flight slot was busy on the server, counted among `measured`'s failed requests (and
    /// its requests); absent when none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub dropped: u64,
}

fn one() -> u32 {
    1
}

fn total() -> String {
    "total".to_string()
}

/// The JSON Schema of the result file.
pub fn schema() -> serde_json::Value {
    published_schema::<RunResult>()
}

/// The JSON Schema of `T` as loadgate publishes its schemas (spec, result, verdict): draft
/// 2020-12 with standard keywords only, so that validators in strict mode (ajv) accept it.
/// The `format`s schemars adds that JSON Schema does not define (`uint32`, `uint64`, `uint`,
/// `double`, ...) are dropped (schemars' `RestrictFormats`); an unsigned integer keeps the
/// `minimum: 0` schemars gives it, and a `u8`/`u16` its `maximum`.
pub(crate) fn published_schema<T: JsonSchema>() -> serde_json::Value {
    let schema = schemars::generate::SchemaSettings::draft2020_12()
        .with_transform(schemars::transform::RestrictFormats::default())
        .into_generator()
        .into_root_schema_for::<T>();
    serde_json::to_value(schema).expect("a schema serializes")
}

/// Whether a severity is `fail`, the default (left out of the JSON).
pub(super) fn is_fail(s: &Severity) -> bool {
    *s == Severity::Fail
}
