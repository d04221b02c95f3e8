//! The result artifact: what a run measured, versioned and documented, snake_case throughout.
//!
//! Its JSON Schema is generated from these types (`loadgate schema result`, committed as
//! `schema/result.schema.json`). Latencies are in microseconds (`_us`), durations in seconds
//! (`_s`), rates per second. Each target carries its HDR histogram (V2 + DEFLATE, base64), so
//! results can be merged and compared later without loss.

pub mod stats;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::threshold::{Aggregation, Metric, Scope, Threshold};
use crate::plan::{Plan, Stop};
use crate::run::RunOutput;
use stats::{Phases, TargetStats};

/// Version of the result format; bumped on any incompatible change.
pub const RESULT_VERSION: u32 = 1;

/// The result of one run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunResult {
    /// Version of this format: 1.
    pub result_version: u32,
    pub spec: SpecInfo,
    /// When measuring started (after the warmup), RFC 3339 in UTC.
    pub started_at: String,
    /// Length of the measured window in seconds: from the end of the warmup until the last
    /// measured request ended.
    pub duration_s: f64,
    /// The run was stopped early (Ctrl-C); its numbers cover only part of the plan.
    pub interrupted: bool,
    pub environment: Environment,
    pub load: LoadInfo,
    /// All targets together.
    pub total: TargetResult,
    /// Per target, in the spec's order.
    pub targets: Vec<TargetResult>,
    /// One sample per second of the measured window.
    pub time_series: Vec<TimeSample>,
    /// Every SLO threshold, whole run first, then per target.
    pub slo: Vec<SloVerdict>,
    /// Whether every SLO threshold passed.
    pub passed: bool,
}

/// Which spec produced a result.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SpecInfo {
    pub name: String,
    /// Hex SHA-256 of the spec file.
    pub hash: String,
}

/// Where the run happened.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Environment {
    pub loadgate_version: String,
    pub hostname: String,
    pub os: String,
    pub arch: String,
    /// Logical CPUs of the load generator's machine.
    pub cpu_count: usize,
    /// CPU time the load generator used in user mode during the run, seconds.
    pub client_cpu_user_s: f64,
    /// CPU time the load generator used in kernel mode during the run, seconds.
    pub client_cpu_system_s: f64,
}

/// The load that was applied.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoadInfo {
    /// `closed`: a fixed number of connections, each sending when its last response ended.
    pub model: String,
    pub connections: u32,
    /// Concurrent requests per HTTP/2 connection (1 for HTTP/1.1).
    #[serde(default = "one")]
    pub streams: u32,
    /// Planned measuring time in seconds (duration mode).
    pub duration_s: Option<f64>,
    /// Planned number of requests (count mode).
    pub requests: Option<u64>,
    pub warmup_s: f64,
}

/// What one target (or all, for `total`) measured.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TargetResult {
    /// Target name; `total` for all targets together.
    pub name: String,
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
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Complete responses by status code.
    pub status_codes: BTreeMap<String, u64>,
    /// Failed requests by kind: connect_refused, connect_timeout, connect_error,
    /// tls_handshake, timeout, reset, closed, malformed, stream_reset, goaway,
    /// unexpected_status.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Latency of complete responses; absent when there were none.
    pub latency_us: Option<LatencySummary>,
    /// The latency histogram in microseconds: HdrHistogram V2 + DEFLATE, base64 (standard).
    pub histogram: String,
    /// Phase timings in microseconds: connection setup (`dns`, `connect`, `tls`) per
    /// connection opened in the measured window, `ttfb` and `body` per complete response.
    /// Absent in results written before phases were measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases_us: Option<PhasesResult>,
    /// How this target's connections spoke: what was asked, what was negotiated, TLS.
    /// Absent for `total`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportResult>,
}

/// Phase timings of a target, each absent when it has no sample (`dns` for an IP address,
/// `tls` over cleartext, setup phases when every connection was opened before measuring).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhasesResult {
    /// Connections opened in the measured window (each has a `connect` sample).
    pub connections_opened: u64,
    /// Of those, TLS handshakes that resumed an earlier session.
    pub tls_resumed: u64,
    /// Host name resolution, per connection opened.
    pub dns: Option<PhaseSummary>,
    /// TCP connect, per connection opened.
    pub connect: Option<PhaseSummary>,
    /// TLS handshake, per connection opened.
    pub tls: Option<PhaseSummary>,
    /// Time to first byte: request written until the first response byte (HTTP/1.1) or the
    /// response header block (HTTP/2), per response.
    pub ttfb: Option<PhaseSummary>,
    /// Body read: first byte (or header block) until the last byte, per response.
    pub body: Option<PhaseSummary>,
}

/// One phase's distribution, in microseconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhaseSummary {
    /// Samples.
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    /// The histogram: HdrHistogram V2 + DEFLATE, base64 (standard).
    pub histogram: String,
}

/// A target's protocol and TLS, as asked in the spec and as negotiated by the check at
/// start (every connection of a target uses the same configuration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TransportResult {
    /// What the spec asked for: `h1`, `h2` or `auto`.
    pub requested: String,
    /// What the connections speak: `h1` or `h2`.
    pub protocol: String,
    /// TLS parameters; absent over cleartext.
    pub tls: Option<TlsResult>,
}

/// The TLS parameters of a target's connections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TlsResult {
    /// Negotiated version: `1.2` or `1.3`.
    pub version: String,
    /// Negotiated cipher suite, e.g. `TLS13_AES_128_GCM_SHA256`.
    pub cipher: String,
    /// The name sent as SNI and verified in the certificate.
    pub server_name: String,
    /// The server's certificate was NOT verified (`insecure_skip_verify`).
    pub insecure_skip_verify: bool,
}

/// Latency percentiles and moments, in microseconds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LatencySummary {
    pub min: u64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p95: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub max: u64,
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
    /// Latency percentiles of this second's responses, microseconds (0 when none).
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// The verdict on one SLO threshold.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct SloVerdict {
    /// `total`, or the target's name.
    pub scope: String,
    /// `latency`, `errors` or `requests`.
    pub metric: String,
    /// The threshold as written, e.g. `p(95) < 200ms`.
    pub threshold: String,
    /// The measured value in `unit`; absent when it could not be measured (no responses).
    pub measured: Option<f64>,
    /// Unit of `measured` and `limit`: `us`, `ratio` (0.01 = 1%), `1/s` or `count`.
    pub unit: String,
    /// The threshold's limit in `unit`.
    pub limit: f64,
    pub passed: bool,
}

/// Builds the result of a run.
pub fn build(plan: &Plan, output: &RunOutput) -> RunResult {
    let elapsed_s = output.elapsed.as_secs_f64();
    let mut total = TargetStats::default();
    for stats in &output.targets {
        total.merge(stats);
    }
    let slo: Vec<SloVerdict> = plan
        .slo
        .iter()
        .map(|threshold| {
            let (scope, stats) = match threshold.scope {
                Scope::Total => ("total".to_string(), &total),
                Scope::Target(i) => (plan.targets[i].name.clone(), &output.targets[i]),
            };
            verdict(threshold, scope, stats, elapsed_s)
        })
        .collect();
    let targets = plan
        .targets
        .iter()
        .zip(&output.targets)
        .enumerate()
        .map(|(i, (target, stats))| {
            let mut result = target_result(&target.name, stats, elapsed_s);
            result.method = Some(target.method.clone());
            result.url = Some(target.display_url.clone());
            result.transport = output
                .negotiated
                .get(i)
                .map(|negotiated| transport_result(target, negotiated));
            result
        })
        .collect();
    let (cpu_user, cpu_system) = output.cpu;
    RunResult {
        result_version: RESULT_VERSION,
        spec: SpecInfo {
            name: plan.name.clone(),
            hash: plan.spec_hash.clone(),
        },
        started_at: humantime::format_rfc3339_millis(output.started_at).to_string(),
        duration_s: elapsed_s,
        interrupted: output.interrupted,
        environment: Environment {
            loadgate_version: env!("CARGO_PKG_VERSION").to_string(),
            hostname: nix::unistd::gethostname()
                .map(|h| h.to_string_lossy().into_owned())
                .unwrap_or_default(),
            os: std::env::consts::OS.to_string(),
            arch: std::env::consts::ARCH.to_string(),
            cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get()),
            client_cpu_user_s: cpu_user.as_secs_f64(),
            client_cpu_system_s: cpu_system.as_secs_f64(),
        },
        load: LoadInfo {
            model: "closed".to_string(),
            connections: plan.load.connections,
            streams: plan.load.streams,
            duration_s: match plan.load.stop {
                Stop::Duration(d) => Some(d.as_secs_f64()),
                Stop::Requests(_) => None,
            },
            requests: match plan.load.stop {
                Stop::Requests(n) => Some(n),
                Stop::Duration(_) => None,
            },
            warmup_s: plan.load.warmup.as_secs_f64(),
        },
        total: target_result("total", &total, elapsed_s),
        targets,
        time_series: output.time_series.clone(),
        passed: slo.iter().all(|v| v.passed),
        slo,
    }
}

fn target_result(name: &str, stats: &TargetStats, elapsed_s: f64) -> TargetResult {
    let h = &stats.latency_us;
    TargetResult {
        name: name.to_string(),
        method: None,
        url: None,
        requests: stats.requests(),
        responses: stats.responses(),
        errors: stats.error_count(),
        error_rate: stats.error_rate(),
        rps: rate(stats.responses(), elapsed_s),
        bytes_sent: stats.bytes_sent,
        bytes_received: stats.bytes_received,
        status_codes: stats
            .status_counts()
            .into_iter()
            .map(|(code, n)| (code.to_string(), n))
            .collect(),
        errors_by_kind: stats
            .error_counts()
            .into_iter()
            .map(|(kind, n)| (kind.to_string(), n))
            .collect(),
        latency_us: (!h.is_empty()).then(|| LatencySummary {
            min: h.min(),
            mean: h.mean(),
            stdev: h.stdev(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p95: h.value_at_quantile(0.95),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            max: h.max(),
        }),
        histogram: encode_histogram(h),
        phases_us: Some(phases_result(&stats.phases)),
        transport: None,
    }
}

fn phases_result(phases: &Phases) -> PhasesResult {
    let summary = |h: &Histogram<u64>| {
        (!h.is_empty()).then(|| PhaseSummary {
            count: h.len(),
            min: h.min(),
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            max: h.max(),
            histogram: encode_histogram(h),
        })
    };
    PhasesResult {
        connections_opened: phases.connections,
        tls_resumed: phases.tls_resumed,
        dns: summary(&phases.dns_us),
        connect: summary(&phases.connect_us),
        tls: summary(&phases.tls_us),
        ttfb: summary(&phases.ttfb_us),
        body: summary(&phases.body_us),
    }
}

fn transport_result(
    target: &crate::plan::TargetPlan,
    negotiated: &crate::run::transport::Negotiated,
) -> TransportResult {
    let transport = &target.transport;
    TransportResult {
        requested: match transport.protocol {
            crate::spec::Protocol::H1 => "h1",
            crate::spec::Protocol::H2 => "h2",
            crate::spec::Protocol::Auto => "auto",
        }
        .to_string(),
        protocol: negotiated.protocol.to_string(),
        tls: transport.tls.as_ref().map(|tls| {
            let (version, cipher) = negotiated.tls.clone().unwrap_or_default();
            TlsResult {
                version,
                cipher,
                server_name: tls.server_name_text.clone(),
                insecure_skip_verify: tls.insecure_skip_verify,
            }
        }),
    }
}

fn one() -> u32 {
    1
}

fn rate(count: u64, elapsed_s: f64) -> f64 {
    if elapsed_s > 0.0 {
        count as f64 / elapsed_s
    } else {
        0.0
    }
}

/// Measures `threshold`'s metric on `stats` and judges it. A latency threshold with no
/// responses to measure fails.
fn verdict(
    threshold: &Threshold,
    scope: String,
    stats: &TargetStats,
    elapsed_s: f64,
) -> SloVerdict {
    let h = &stats.latency_us;
    let (measured, unit) = match (threshold.metric, threshold.aggregation) {
        (Metric::Latency, aggregation) => {
            let value = (!h.is_empty()).then(|| match aggregation {
                Aggregation::Percentile(p) => h.value_at_quantile(p / 100.0) as f64,
                Aggregation::Median => h.value_at_quantile(0.5) as f64,
                Aggregation::Mean => h.mean(),
                Aggregation::Min => h.min() as f64,
                Aggregation::Max => h.max() as f64,
                Aggregation::Rate | Aggregation::Count => unreachable!("rejected by the plan"),
            });
            (value, "us")
        }
        (Metric::Errors, Aggregation::Rate) => (Some(stats.error_rate()), "ratio"),
        (Metric::Errors, _) => (Some(stats.error_count() as f64), "count"),
        (Metric::Requests, Aggregation::Rate) => (Some(rate(stats.responses(), elapsed_s)), "1/s"),
        (Metric::Requests, _) => (Some(stats.responses() as f64), "count"),
    };
    SloVerdict {
        scope,
        metric: threshold.metric.name().to_string(),
        threshold: threshold.expression.clone(),
        passed: measured.is_some_and(|m| threshold.passes(m)),
        measured,
        unit: unit.to_string(),
        limit: threshold.limit,
    }
}

/// Encodes a histogram as HdrHistogram V2 + DEFLATE, base64 (standard alphabet).
pub fn encode_histogram(histogram: &Histogram<u64>) -> String {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new()
        .serialize(histogram, &mut bytes)
        .expect("serializing into a Vec does not fail");
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Decodes a histogram written by [`encode_histogram`]. Errors: bad base64 or histogram data.
pub fn decode_histogram(text: &str) -> anyhow::Result<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text)?;
    Ok(Deserializer::new().deserialize(&mut bytes.as_slice())?)
}

/// Writes `result` as pretty JSON to `path`, whole or not at all (temporary file + rename).
pub fn write(result: &RunResult, path: &Path) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("cannot write the result into `{}`", dir.display()))?;
    serde_json::to_writer_pretty(&mut file, result)?;
    file.write_all(b"\n")?;
    file.as_file().sync_all()?;
    file.persist(path)
        .with_context(|| format!("cannot write the result to `{}`", path.display()))?;
    Ok(())
}

/// The JSON Schema of the result file.
pub fn schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(RunResult)).expect("a schema serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_round_trip() {
        let mut h = stats::latency_histogram();
        for v in [1u64, 250, 1_000, 50_000, 2_000_000] {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), h.max());
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode_histogram("not base64!").is_err());
    }
}
