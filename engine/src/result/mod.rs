//! The result artifact: what a run measured, versioned and documented, snake_case throughout.
//!
//! Its JSON Schema is generated from these types (`loadgate schema result`, committed as
//! `schema/result.schema.json`). Latencies are in microseconds (`_us`), durations in seconds
//! (`_s`), rates per second. Each target carries its HDR histogram (V2 + DEFLATE, base64), so
//! results can be merged and compared later without loss.

pub mod merge;
pub mod stats;
pub mod watch;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::plan::regression::RegressionRule;
use crate::plan::threshold::{Aggregation, Metric, Scope, Threshold};
use crate::plan::{Model, Plan, Stop};
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
    /// Length of the measured window in seconds: the planned duration; in count mode, or when
    /// the run was stopped early, from the end of the warmup until the last measured request
    /// ended. Rates divide by it.
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
    /// Whether the load generator applied the planned load: per stage, planned against
    /// achieved. An invalid measurement measured the generator, not the service.
    pub health: Health,
    /// Every SLO threshold, whole run first, then per target.
    pub slo: Vec<SloVerdict>,
    /// Whether every SLO threshold passed.
    pub passed: bool,
    /// The regression rules of the spec, resolved (defaults applied), so that
    /// `loadgate compare` needs only two result files. Absent in results written before
    /// loadgate recorded them.
    #[serde(default)]
    pub regression_rules: Option<Vec<RecordedRule>>,
}

/// A regression rule as resolved by the plan, in canonical units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordedRule {
    /// `latency`, `errors` or `requests`.
    pub metric: String,
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
}

impl RecordedRule {
    /// Records a plan's rule.
    pub fn from_rule(rule: &RegressionRule) -> RecordedRule {
        RecordedRule {
            metric: rule.metric.name().to_string(),
            aggregation: rule.aggregation.to_string(),
            max_change: rule.max_change,
            floor: rule.floor,
            unit: rule.unit().to_string(),
            expression: rule.expression.clone(),
        }
    }

    /// The rule back from a result file. Errors: an unknown metric or aggregation.
    pub fn to_rule(&self) -> Result<RegressionRule, String> {
        let metric = match self.metric.as_str() {
            "latency" => Metric::Latency,
            "errors" => Metric::Errors,
            "requests" => Metric::Requests,
            other => return Err(format!("unknown regression metric `{other}`")),
        };
        let (aggregation, rest) = crate::plan::threshold::parse_aggregation(&self.aggregation)?;
        if !rest.trim().is_empty() {
            return Err(format!("unknown aggregation `{}`", self.aggregation));
        }
        Ok(RegressionRule {
            metric,
            aggregation,
            max_change: self.max_change,
            floor: self.floor,
            expression: self.expression.clone(),
        })
    }
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
    /// `closed`: connections each sending when their last response ended; `open`: requests
    /// arriving on a schedule at a rate.
    pub model: String,
    /// Closed model: the most connections of any stage. Open model: the cap on requests in
    /// flight.
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
    /// Latency of complete responses, from when each request was due (its intended start on
    /// the open model's or a paced connection's schedule, else its actual start); absent when
    /// there were none.
    pub latency_us: Option<LatencySummary>,
    /// Service time of complete responses: from each request's actual start (including a
    /// connect) to its last byte. Equal to `latency_us` unless requests were scheduled.
    #[serde(default)]
    pub service_time_us: Option<LatencySummary>,
    /// The latency histogram in microseconds: HdrHistogram V2 + DEFLATE, base64 (standard).
    pub histogram: String,
    /// Response check evaluations that passed, over all checks.
    #[serde(default)]
    pub checks_passed: u64,
    /// Response check evaluations that failed, over all checks.
    #[serde(default)]
    pub checks_failed: u64,
    /// Per check (targets only).
    #[serde(default)]
    pub checks: Vec<CheckResult>,
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

/// How often one response check passed.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckResult {
    /// What was checked, e.g. `header content-type == "application/json"`.
    pub check: String,
    pub passed: u64,
    pub failed: u64,
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

impl TransportResult {
    /// In words: `h2 over TLS 1.3 (TLS13_AES_128_GCM_SHA256), server name api.example.com`
    /// or `h1 over cleartext TCP`.
    pub fn describe(&self) -> String {
        match &self.tls {
            Some(tls) => format!(
                "{} over TLS {} ({}), server name {}",
                self.protocol, tls.version, tls.cipher, tls.server_name
            ),
            None => format!("{} over cleartext TCP", self.protocol),
        }
    }

    /// The server's certificate was not verified.
    pub fn insecure(&self) -> bool {
        self.tls.as_ref().is_some_and(|t| t.insecure_skip_verify)
    }
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

/// The load generator's own health over the run.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Health {
    /// False when the generator fell short of the plan (see `problems`): the numbers measure
    /// the generator, not the service.
    pub valid: bool,
    /// Why the measurement is invalid, one sentence each.
    pub problems: Vec<String>,
    /// Per stage of the load, warmup stages included.
    pub stages: Vec<StageHealth>,
}

/// Planned against achieved load in one stage.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct StageHealth {
    pub warmup: bool,
    /// Planned length in seconds; absent for a count-mode run's open-ended stage.
    pub duration_s: Option<f64>,
    /// The target at the stage's start and end: connections (closed) or requests per second
    /// (open), see `target_unit`.
    pub target_from: f64,
    pub target_to: f64,
    /// `connections` or `requests/s`.
    pub target_unit: String,
    /// Requests started (due in this stage).
    pub sent: u64,
    /// Open model: arrivals not sent because every in-flight slot was busy.
    pub dropped: u64,
    /// Requests started per second of the stage (as run).
    pub achieved_rate: f64,
    /// Mean requests in flight over the stage (as run).
    pub achieved_concurrency: f64,
    /// How late requests started after they were due, microseconds (open model and pacing).
    pub lateness_us: Option<LatencySummary>,
    /// CPU time loadgate used in the stage (user + system), seconds.
    pub client_cpu_s: f64,
}

/// An open-model stage whose achieved arrival rate falls short of its target by more than this
/// fraction makes the measurement invalid.
pub const RATE_TOLERANCE: f64 = 0.05;
/// A stage that dropped more than this share of its due requests makes the measurement
/// invalid: the planned load was not applied.
pub const MAX_DROPPED_SHARE: f64 = 0.001;
/// A stage whose requests started later than this after they were due (p99, microseconds)
/// makes the measurement invalid.
pub const MAX_LATENESS_P99_US: u64 = 10_000;
/// A stage in which loadgate used more than this share of all CPUs makes the measurement
/// invalid: the generator was the bottleneck.
pub const MAX_CLIENT_CPU_SHARE: f64 = 0.9;
/// Stages shorter than this (seconds, as run) are not judged: too short to say.
pub const MIN_JUDGED_STAGE_S: f64 = 1.0;

/// One second of the measured window, all targets together.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct TimeSample {
    /// Seconds since measuring started (this sample covers `[second, second + 1)`).
    pub second: u32,
    /// Complete responses that ended in this second.
    pub responses: u64,
    /// Failed requests that ended in this second.
    pub errors: u64,
    /// Latency percentiles of this second's responses, microseconds (0 when none), from a
    /// histogram of 2 significant digits.
    pub p50_us: u64,
    pub p99_us: u64,
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
        .enumerate()
        .map(|(i, threshold)| {
            let (scope, stats) = match threshold.scope {
                Scope::Total => ("total".to_string(), &total),
                Scope::Target(i) => (plan.targets[i].name.clone(), &output.targets[i]),
            };
            let mut verdict = verdict(threshold, scope, &Measures::of(stats, elapsed_s));
            if let Some(window) = output.windows.get(i).and_then(|w| w.as_ref()) {
                verdict.measured = window.measured;
                verdict.passed = window.passed;
                verdict.window_s = threshold.window_s;
                verdict.failed_window_start_s = window.failed_start_s;
            }
            if output.aborted_by == Some(i) {
                verdict.passed = false;
                verdict.aborted_run = true;
            }
            verdict
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
            result.checks = target
                .checks
                .iter()
                .enumerate()
                .map(|(i, check)| {
                    let [passed, failed] = stats.checks.get(i).copied().unwrap_or([0, 0]);
                    CheckResult {
                        check: check.describe(),
                        passed,
                        failed,
                    }
                })
                .collect();
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
            cpu_count: cpu_count(),
            client_cpu_user_s: cpu_user.as_secs_f64(),
            client_cpu_system_s: cpu_system.as_secs_f64(),
        },
        load: LoadInfo {
            model: plan.load.model.name().to_string(),
            connections: match plan.load.model {
                Model::Closed => plan.load.connections,
                Model::Open => plan.load.max_in_flight,
            },
            streams: plan.load.streams,
            duration_s: plan.load.measured_duration().map(|d| d.as_secs_f64()),
            requests: match plan.load.stop {
                Stop::Requests(n) => Some(n),
                Stop::Duration(_) => None,
            },
            warmup_s: plan.load.warmup().as_secs_f64(),
        },
        health: health(plan, output, cpu_count()),
        total: target_result("total", &total, elapsed_s),
        targets,
        time_series: output.time_series.clone(),
        passed: slo.iter().all(|v| v.passed),
        slo,
        regression_rules: Some(
            plan.regression
                .iter()
                .map(RecordedRule::from_rule)
                .collect(),
        ),
    }
}

fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Judges the generator's health stage by stage (see [`RATE_TOLERANCE`],
/// [`MAX_LATENESS_P99_US`], [`MAX_CLIENT_CPU_SHARE`]).
fn health(plan: &Plan, output: &RunOutput, cpus: usize) -> Health {
    let load = &plan.load;
    let run_s = load.warmup().as_secs_f64() + output.elapsed.as_secs_f64();
    let stop_is_duration = matches!(load.stop, Stop::Duration(_));
    let ended_early = output.interrupted || output.aborted_by.is_some();
    let mut problems = Vec::new();
    let mut stage_start = 0.0;
    let stages = load
        .stages
        .iter()
        .zip(&output.stages)
        .enumerate()
        .map(|(i, (stage, stats))| {
            let planned = stage.duration.map(|d| d.as_secs_f64());
            // A stage lasts as planned, unless the run ended early (count mode, Ctrl-C).
            let length = (run_s - stage_start).max(0.0);
            let length = match planned {
                Some(p) if !ended_early && stop_is_duration => p,
                Some(p) => length.min(p),
                None => length,
            };
            stage_start += planned.unwrap_or(0.0);
            let per_s = |x: f64| if length > 0.0 { x / length } else { 0.0 };
            let cpu_s = output.stage_cpu_s.get(i).copied().unwrap_or(0.0);
            let lateness = summary(&stats.lateness_us);
            let health = StageHealth {
                warmup: stage.warmup,
                duration_s: planned,
                target_from: stage.from,
                target_to: stage.to,
                target_unit: match load.model {
                    Model::Closed => "connections",
                    Model::Open => "requests/s",
                }
                .to_string(),
                sent: stats.sent,
                dropped: stats.dropped,
                achieved_rate: per_s(stats.sent as f64),
                achieved_concurrency: per_s(stats.busy_us as f64 / 1e6),
                lateness_us: lateness.clone(),
                client_cpu_s: cpu_s,
            };
            if !stage.warmup && length >= MIN_JUDGED_STAGE_S && !ended_early {
                let name = format!("stage {}", i + 1);
                let mean_target = if planned.is_some() {
                    (stage.from + stage.to) / 2.0
                } else {
                    stage.to
                };
                let due = stats.sent + stats.dropped;
                if stats.dropped as f64 > due as f64 * MAX_DROPPED_SHARE {
                    problems.push(format!(
                        "{name}: {} of {due} requests were dropped: every in-flight slot was busy (raise `max_in_flight`)",
                        stats.dropped
                    ));
                } else if load.model == Model::Open
                    && health.achieved_rate < mean_target * (1.0 - RATE_TOLERANCE)
                {
                    problems.push(format!(
                        "{name}: sent {:.1} requests/s of the planned {mean_target:.1}/s ({} dropped: raise `max_in_flight`, or the generator is too small)",
                        health.achieved_rate, stats.dropped
                    ));
                }
                if let Some(l) = &lateness
                    && l.p99 > MAX_LATENESS_P99_US
                {
                    problems.push(format!(
                        "{name}: requests started up to {:.1} ms late (p99), more than {} ms: the generator could not keep to the schedule",
                        l.p99 as f64 / 1e3,
                        MAX_LATENESS_P99_US / 1000
                    ));
                }
                let share = per_s(cpu_s) / cpus as f64;
                if share > MAX_CLIENT_CPU_SHARE {
                    problems.push(format!(
                        "{name}: loadgate used {:.0}% of all {cpus} CPUs: the generator was the bottleneck",
                        share * 100.0
                    ));
                }
            }
            health
        })
        .collect();
    Health {
        valid: problems.is_empty(),
        problems,
        stages,
    }
}

/// Percentiles and moments of a latency histogram; `None` when it is empty.
pub(crate) fn summary(h: &Histogram<u64>) -> Option<LatencySummary> {
    (!h.is_empty()).then(|| LatencySummary {
        min: h.min(),
        mean: h.mean(),
        stdev: h.stdev(),
        p50: h.value_at_quantile(0.50),
        p90: h.value_at_quantile(0.90),
        p95: h.value_at_quantile(0.95),
        p99: h.value_at_quantile(0.99),
        p99_9: h.value_at_quantile(0.999),
        max: h.max(),
    })
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
        latency_us: summary(h),
        service_time_us: summary(&stats.service_us),
        histogram: encode_histogram(h),
        checks_passed: stats.check_totals().0,
        checks_failed: stats.check_totals().1,
        checks: Vec::new(),
        phases_us: Some(phases_result(&stats.phases)),
        transport: None,
    }
}

/// The summary of a target's phase histograms.
pub(crate) fn phases_result(phases: &Phases) -> PhasesResult {
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

/// What a threshold can be measured on: a target's (or the run's) stats, or a window of
/// per-second stats.
pub struct Measures<'a> {
    /// Latency of complete responses, microseconds.
    pub latency_us: &'a Histogram<u64>,
    /// Requests that ended: complete responses plus transport errors.
    pub requests: u64,
    pub responses: u64,
    pub errors: u64,
    /// Share of check evaluations that passed, when any were evaluated.
    pub check_pass_rate: Option<f64>,
    /// Length of the measured span, seconds.
    pub elapsed_s: f64,
}

impl<'a> Measures<'a> {
    /// The measures of a target's (or the whole run's) stats over `elapsed_s` seconds.
    pub fn of(stats: &'a TargetStats, elapsed_s: f64) -> Measures<'a> {
        Measures {
            latency_us: &stats.latency_us,
            requests: stats.requests(),
            responses: stats.responses(),
            errors: stats.error_count(),
            check_pass_rate: stats.check_pass_rate(),
            elapsed_s,
        }
    }

    /// The measures of per-second stats merged over `seconds` seconds.
    pub fn of_seconds(stats: &'a stats::SecondStats, seconds: f64) -> Measures<'a> {
        Measures {
            latency_us: &stats.latency_us,
            requests: stats.requests,
            responses: stats.responses,
            errors: stats.errors,
            check_pass_rate: None,
            elapsed_s: seconds,
        }
    }

    /// The value of `threshold`'s metric and aggregation, with its unit (`us`, `ratio`, `1/s`,
    /// `count`); `None` when there is nothing to measure (no responses for a latency, no
    /// checks for a check rate).
    pub fn measure(&self, threshold: &Threshold) -> (Option<f64>, &'static str) {
        let h = self.latency_us;
        match (threshold.metric, threshold.aggregation) {
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
            (Metric::Errors, Aggregation::Rate) => {
                let rate = match self.requests {
                    0 => 0.0,
                    n => self.errors as f64 / n as f64,
                };
                (Some(rate), "ratio")
            }
            (Metric::Errors, _) => (Some(self.errors as f64), "count"),
            (Metric::Requests, Aggregation::Rate) => {
                (Some(rate(self.responses, self.elapsed_s)), "1/s")
            }
            (Metric::Requests, _) => (Some(self.responses as f64), "count"),
            (Metric::Checks, _) => (self.check_pass_rate, "ratio"),
        }
    }
}

/// Judges `threshold` on `measures`. A latency threshold with no responses to measure fails.
fn verdict(threshold: &Threshold, scope: String, measures: &Measures) -> SloVerdict {
    let (measured, unit) = measures.measure(threshold);
    SloVerdict {
        scope,
        metric: threshold.metric.name().to_string(),
        threshold: threshold.expression.clone(),
        passed: measured.is_some_and(|m| threshold.passes(m)),
        measured,
        unit: unit.to_string(),
        limit: threshold.limit,
        window_s: None,
        failed_window_start_s: None,
        aborted_run: false,
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
    // Buffered: serde_json writes token by token, a system call each on a bare file.
    let mut out = std::io::BufWriter::new(&mut file);
    serde_json::to_writer_pretty(&mut out, result)?;
    out.write_all(b"\n")?;
    out.flush()?;
    drop(out);
    // Readable by others, like any file written with the default umask (a temporary file
    // starts at 0600; a container step running as another user must read the result).
    file.as_file()
        .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644))?;
    file.as_file().sync_all()?;
    file.persist(path)
        .with_context(|| format!("cannot write the result to `{}`", path.display()))?;
    Ok(())
}

/// Why a result file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read the result `{path}`: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("`{path}` is not a loadgate result: {reason}")]
    Invalid { path: String, reason: String },
    #[error(
        "`{path}` has result_version {found}; this loadgate reads version {RESULT_VERSION}: \
         produce the results with the same loadgate major version"
    )]
    Version { path: String, found: u64 },
}

/// Reads a result file, checking its `result_version` before anything else.
pub fn read(path: &Path) -> Result<RunResult, ReadError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| ReadError::Io {
        path: shown.clone(),
        source,
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| ReadError::Invalid {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    match value.get("result_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(RESULT_VERSION) => {}
        Some(found) => {
            return Err(ReadError::Version { path: shown, found });
        }
        None => {
            return Err(ReadError::Invalid {
                path: shown,
                reason: "no `result_version`".to_string(),
            });
        }
    }
    serde_json::from_value(value).map_err(|e| ReadError::Invalid {
        path: shown,
        reason: e.to_string(),
    })
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
