//! Building the result artifact from what the run hands over.

use super::health::health;
use super::summary::{messages_result, phases_result, streaming_result, summary, upstream_result};
use super::{
    CheckResult, Environment, LoadInfo, RESULT_VERSION, RecordedRule, RunResult, ShardInfo,
    SpecInfo, TargetResult, TimeSample, TlsResult, TransportResult, UdpBuffersResult,
    encode_histogram, slo,
};
use crate::measure::{SpanSample, TargetStats, code_key, rate};
use crate::plan::{Model, Plan, Stop, TargetPlan};
use crate::run::{Negotiated, RunOutput};

/// Builds the result of a run of `plan` from what the run handed over.
pub fn build(plan: &Plan, output: &RunOutput) -> RunResult {
    build_with(plan, output, true)
}

/// [`build`] for a side of `loadgate ab`, whose generator lateness is judged per epoch
/// (`compare::compare_paired` drops the epochs where it fell behind) instead of per stage:
/// the side's health leaves lateness out (its stages still show it).
pub(crate) fn build_ab_side(plan: &Plan, output: &RunOutput) -> RunResult {
    build_with(plan, output, false)
}

/// [`build`], with the generator's lateness judged per stage or not (`judge_lateness`).
fn build_with(plan: &Plan, output: &RunOutput, judge_lateness: bool) -> RunResult {
    let elapsed_s = output.elapsed.as_secs_f64();
    let mut total = TargetStats::default();
    for stats in &output.targets {
        total.merge(stats);
    }
    let measured = slo::Measured {
        targets: output.targets.iter().map(|t| (t, elapsed_s)).collect(),
        flows: output.flows.iter().map(|f| (f, elapsed_s)).collect(),
        total: slo::Whole {
            stats: &total,
            elapsed_s,
            dropped: slo::measured_drops(plan, output),
            targets: (0..plan.targets.len()).collect(),
        },
        scenarios: Vec::new(),
        windows: output.windows.clone(),
        aborted_by: output.aborted_by,
    };
    let slo = slo::verdicts(plan, &measured);
    RunResult {
        scenarios: Vec::new(),
        result_version: RESULT_VERSION,
        spec: SpecInfo {
            name: plan.name.clone(),
            hash: plan.spec_hash.clone(),
        },
        started_at: humantime::format_rfc3339_micros(output.started_at).to_string(),
        planned_start_at: plan
            .start_at
            .map(|at| humantime::format_rfc3339_micros(at + plan.load.warmup()).to_string()),
        shard: plan.shard.map(|s| ShardInfo {
            index: s.index,
            count: s.count,
        }),
        merged: None,
        duration_s: elapsed_s,
        interrupted: output.interrupted,
        environment: environment(output),
        source: super::source::detect(),
        load: load_info(plan),
        health: health(plan, (output, &total), cpu_count(), judge_lateness),
        total: target_result("total", &total, elapsed_s, slow_us(plan)),
        targets: targets(plan, output, elapsed_s),
        flows: super::flow::flows(plan, &output.flows, elapsed_s),
        time_series: output
            .time_series
            .iter()
            .map(|s| time_sample(s.index, s))
            .collect(),
        passed: slo::passed(&slo),
        slo,
        regression_rules: Some(
            plan.regression
                .iter()
                .map(RecordedRule::from_rule)
                .collect(),
        ),
        regression_alpha: plan.regression_alpha,
    }
}

/// Per target, in the plan's order: its measures, checks, messages (gRPC, WebSocket) and
/// transport.
fn targets(plan: &Plan, output: &RunOutput, elapsed_s: f64) -> Vec<TargetResult> {
    plan.targets
        .iter()
        .zip(&output.targets)
        .enumerate()
        .map(|(i, (target, stats))| {
            let mut result = target_result(&target.name, stats, elapsed_s, target.slow_us);
            result.tags = target.tags.clone();
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
            result.messages = message_protocol(target)
                .map(|protocol| messages_result(protocol, &stats.messages, elapsed_s));
            result.transport = output
                .negotiated
                .get(i)
                .map(|negotiated| transport_result(target, negotiated, stats));
            result.time_series = output
                .time_series
                .iter()
                .filter_map(|s| Some(time_sample(s.index, s.targets.get(i)?)))
                .collect();
            result
        })
        .collect()
}

/// The protocol whose messages a target counts: `grpc` or `ws`; `None` for HTTP.
fn message_protocol(target: &TargetPlan) -> Option<&'static str> {
    if target.grpc.is_some() {
        Some("grpc")
    } else if target.ws.is_some() {
        Some("ws")
    } else {
        None
    }
}

/// This machine, and the CPU time the run used.
fn environment(output: &RunOutput) -> Environment {
    environment_with(output.cpu, output.udp_buffers)
}

/// This machine, the CPU time a run used (`cpu`: user, system) and the UDP buffers its
/// HTTP/3 endpoints got.
pub(super) fn environment_with(
    (cpu_user, cpu_system): (std::time::Duration, std::time::Duration),
    udp_buffers: Option<crate::udp::UdpBuffers>,
) -> Environment {
    Environment {
        loadgate_version: env!("CARGO_PKG_VERSION").to_string(),
        hostname: gethostname::gethostname().to_string_lossy().into_owned(),
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
        cpu_count: cpu_count(),
        cpu_model: super::source::cpu_model(),
        client_cpu_user_s: cpu_user.as_secs_f64(),
        client_cpu_system_s: cpu_system.as_secs_f64(),
        udp_buffers: udp_buffers.map(|b| UdpBuffersResult {
            wanted_bytes: b.wanted_bytes as u64,
            recv_bytes: b.recv_bytes as u64,
            send_bytes: b.send_bytes as u64,
            limited: b.limited(),
        }),
    }
}

/// The load the plan applied.
fn load_info(plan: &Plan) -> LoadInfo {
    LoadInfo {
        model: plan.load.model.name().to_string(),
        connections: (plan.load.model == Model::Closed).then_some(plan.load.connections),
        max_in_flight: (plan.load.model == Model::Open).then_some(plan.load.max_in_flight),
        streams: plan.load.streams,
        duration_s: plan.load.measured_duration().map(|d| d.as_secs_f64()),
        requests: match plan.load.stop {
            Stop::Requests(n) => Some(n),
            Stop::Duration(_) => None,
        },
        warmup_s: plan.load.warmup().as_secs_f64(),
    }
}

/// Second `second` of the time series (the run's, or a target's), as the artifact records it,
/// with its histogram.
fn time_sample(second: u32, s: &SpanSample) -> TimeSample {
    TimeSample {
        second,
        responses: s.responses,
        errors: s.errors,
        p50_us: s.p50_us,
        p99_us: s.p99_us,
        max_us: s.max_us,
        p90_us: Some(s.p90_us),
        p95_us: Some(s.p95_us),
        p99_9_us: Some(s.p99_9_us),
        mean_us: Some(s.mean_us),
        requests: Some(s.requests),
        histogram: s.histogram.clone(),
    }
}

fn cpu_count() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// The slow threshold of the run's targets (`defaults.slow`: the same for all), microseconds.
pub(super) fn slow_us(plan: &Plan) -> Option<u64> {
    plan.targets.first().and_then(|t| t.slow_us)
}

/// A target's (or the total's) measures; `slow_us`: its slow threshold, if any.
pub(super) fn target_result(
    name: &str,
    stats: &TargetStats,
    elapsed_s: f64,
    slow_us: Option<u64>,
) -> TargetResult {
    let h = &stats.latency_us;
    TargetResult {
        name: name.to_string(),
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
        errors_by_code: stats
            .codes
            .iter()
            .map(|(&(kind, code), &n)| (code_key(kind, code), n))
            .collect(),
        latency_us: summary(h),
        service_time_us: summary(&stats.service_us),
        histogram: encode_histogram(h),
        checks_passed: stats.check_totals().0,
        checks_failed: stats.check_totals().1,
        phases_us: Some(phases_result(&stats.phases)),
        slow_threshold_us: slow_us,
        slow_responses: slow_us.map(|_| stats.slow),
        upstream_us: upstream_result(&stats.upstream),
        streaming: streaming_result(&stats.streaming),
        ..Default::default()
    }
}

/// A target's transport: what the spec asked for, what the check at start negotiated, and
/// whether its responses offered HTTP/3 (`stats`).
fn transport_result(
    target: &TargetPlan,
    negotiated: &Negotiated,
    stats: &TargetStats,
) -> TransportResult {
    TransportResult {
        requested: match target.transport.protocol {
            crate::spec::Protocol::H1 => "h1",
            crate::spec::Protocol::H2 => "h2",
            crate::spec::Protocol::H3 => "h3",
            crate::spec::Protocol::Auto => "auto",
            crate::spec::Protocol::Grpc => "grpc",
            crate::spec::Protocol::Ws => "ws",
        }
        .to_string(),
        protocol: negotiated.protocol.to_string(),
        tls: negotiated.tls.as_ref().map(|tls| TlsResult {
            version: tls.version.clone(),
            cipher: tls.cipher.clone(),
            server_name: tls.server_name.clone(),
            insecure_skip_verify: tls.insecure_skip_verify,
        }),
        alt_svc_h3: stats.alt_svc_h3.clone(),
    }
}
