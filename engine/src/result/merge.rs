//! Merging the results of several shards of one run (the same spec, run at the same time from
//! several machines) into one result.
//!
//! Lossless where the result allows it: HDR histograms are added (HdrHistogram's `add`),
//! counters summed, and every percentile and SLO verdict recomputed from the merged histograms
//! and counters, never averaged. The shards ran at the same time, so the merged window is the
//! longest shard's, and throughput is the merged responses over it. A result given twice (the
//! same file, or a copy of it: see `check_shards`) is refused, as it would count its requests
//! twice.
//!
//! What a result keeps no histogram of cannot be merged exactly, and is said so:
//!
//! - the per-second series is merged second by second: counts are summed and `max_us` is the
//!   maximum, both exact; the other per-second latency fields are the response-weighted means
//!   of the shards' values, an approximation that only the regression rules' bootstrap uses;
//! - `service_time_us` (a summary without a histogram) is absent from a merge of several
//!   shards;
//! - flows: iterations and their reasons summed, iteration-duration histograms added, the
//!   rate over the merged window; a flow's SLOs are re-evaluated on them;
//! - an SLO with a window (`window_s`) passes when it passed in every shard, and shows the
//!   first failing shard's window (or the first shard's); other SLOs are re-evaluated;
//! - health: valid when every shard's was, with every shard's problems; stages are the first
//!   shard's, with sent, dropped, achieved rate, requests in flight and client CPU summed over the
//!   shards when they have the same stages (lateness, a summary, is the first shard's).

use std::collections::BTreeMap;

use hdrhistogram::Histogram;

use super::{
    Environment, Health, PhaseSummary, PhasesResult, RunResult, SloVerdict, StreamingResult,
    TargetResult, TimeSample, UpstreamResult, decode_histogram, encode_histogram, phases_result,
    streaming_result, summary, upstream_result,
};
use crate::measure::{Measures, Phases, Streaming, Upstream, latency_histogram};
use crate::plan::threshold::{Metric, Scope, Threshold};

/// Why results cannot be merged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeError {
    /// No results were given.
    #[error("nothing to merge: give the result files of the shards")]
    Empty,
    /// A result comes from another spec file than the first.
    #[error(
        "result {index} comes from another spec (`{name}`, SHA-256 {hash:.12}) than the first \
         (`{first_name}`, {first_hash:.12}): only shards of one run of one spec file merge"
    )]
    DifferentSpecs {
        /// 1-based position of the result among those given.
        index: usize,
        /// Its spec's name.
        name: String,
        /// Its spec file's SHA-256, hex.
        hash: String,
        /// The first result's spec name.
        first_name: String,
        /// The first result's spec file SHA-256, hex.
        first_hash: String,
    },
    /// A result of another `result_version` than the first.
    #[error(
        "result {index} has result_version {found}, the first {expected}: merge results of one \
         loadgate version"
    )]
    Version {
        /// 1-based position of the result among those given.
        index: usize,
        /// Its `result_version`.
        found: u32,
        /// The first result's `result_version`.
        expected: u32,
    },
    /// A result given twice: the same file, or a copy of it.
    #[error(
        "result {index} is result {first} again (the same started_at, host, spec file and \
         latency histogram): give each shard's result once"
    )]
    Duplicate {
        /// 1-based position of the second copy among the results given.
        index: usize,
        /// 1-based position of the first.
        first: usize,
    },
    /// More results than [`MAX_SHARDS`].
    #[error("{given} results given: a merge takes at most {MAX_SHARDS}")]
    TooMany {
        /// How many were given.
        given: usize,
    },
    /// A target's histogram does not decode.
    #[error("the histogram of `{target}` in result {index} cannot be read: {reason}")]
    Histogram {
        /// 1-based position of the result among those given.
        index: usize,
        /// The target's name (`total` for the whole run).
        target: String,
        /// Why it does not decode.
        reason: String,
    },
    /// A recorded SLO threshold no longer parses, so it cannot be judged on the merged data.
    #[error("the SLO `{threshold}` of result 1 cannot be re-evaluated: {reason}")]
    Threshold {
        /// The threshold as written.
        threshold: String,
        /// Why it does not parse.
        reason: String,
    },
}

/// The most results one merge takes: 1,024 shards of counts up to
/// [`super::MAX_EXACT_INTEGER`] (2^53 - 1, which the reader enforces) sum within `u64`
/// (2^63), so no count of a merge can overflow.
pub const MAX_SHARDS: usize = 1024;

/// How `loadgate merge` treats missing shards.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    /// Merge even when shards are missing, marking the result partial (`--allow-missing`).
    pub allow_missing: bool,
}

/// Merges the shards' results. Errors: none given, more than [`MAX_SHARDS`], a result given
/// twice, different specs (name or file hash) or result versions, an unreadable histogram.
pub fn merge(results: &[RunResult], options: MergeOptions) -> Result<RunResult, MergeError> {
    let _ = options.allow_missing;
    let first = results.first().ok_or(MergeError::Empty)?;
    if results.len() > MAX_SHARDS {
        return Err(MergeError::TooMany {
            given: results.len(),
        });
    }
    check_shards(results)?;
    let duration_s = results.iter().map(|r| r.duration_s).fold(0.0, f64::max);

    let total = merge_targets(
        results.iter().map(|r| &r.total).enumerate().collect(),
        duration_s,
    )?;
    let mut names: Vec<&str> = Vec::new();
    for r in results {
        for t in &r.targets {
            if !names.contains(&t.name.as_str()) {
                names.push(&t.name);
            }
        }
    }
    let targets = names
        .iter()
        .map(|name| {
            let parts = results
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.targets.iter().find(|t| t.name == *name).map(|t| (i, t)))
                .collect();
            merge_targets(parts, duration_s)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let shards_flows: Vec<&[super::FlowResult]> =
        results.iter().map(|r| r.flows.as_slice()).collect();
    let flows = super::flow::merge_flows(&shards_flows, duration_s)?;
    let slo = merge_slo(results, &total, &targets, &flows, duration_s)?;

    let mut load = first.load.clone();
    load.connections = results.iter().map(|r| r.load.connections).sum();
    load.max_in_flight = results.iter().map(|r| r.load.max_in_flight).sum();
    load.requests = results.iter().map(|r| r.load.requests).sum::<Option<u64>>();

    Ok(RunResult {
        result_version: first.result_version,
        health: merge_health(results),
        spec: first.spec.clone(),
        started_at: results
            .iter()
            .map(|r| r.started_at.clone())
            .min()
            .expect("not empty"),
        planned_start_at: None,
        shard: None,
        merged: None,
        duration_s,
        interrupted: results.iter().any(|r| r.interrupted),
        environment: merge_environment(results),
        load,
        total,
        targets,
        flows,
        time_series: merge_series(results),
        passed: slo.iter().all(|v| v.passed),
        slo,
        regression_rules: first.regression_rules.clone(),
    })
}

/// Checks that the shards (at least one) come from one spec file and one result version, each
/// given once. A result is the same as another when both started at the same time
/// (`started_at`, to the millisecond) on the same host, from the same spec file, with the same
/// latency histogram (every response's latency): a result given twice, or a copy of it. Two
/// shards of one run differ in their host, or at least in their histograms.
fn check_shards(results: &[RunResult]) -> Result<(), MergeError> {
    let first = &results[0];
    fn identity(r: &RunResult) -> [&str; 4] {
        [
            &r.started_at,
            &r.environment.hostname,
            &r.spec.hash,
            &r.total.histogram,
        ]
    }
    for (i, r) in results.iter().enumerate().skip(1) {
        if let Some(j) = results[..i].iter().position(|o| identity(o) == identity(r)) {
            return Err(MergeError::Duplicate {
                index: i + 1,
                first: j + 1,
            });
        }
        if r.result_version != first.result_version {
            return Err(MergeError::Version {
                index: i + 1,
                found: r.result_version,
                expected: first.result_version,
            });
        }
        if r.spec.name != first.spec.name || r.spec.hash != first.spec.hash {
            return Err(MergeError::DifferentSpecs {
                index: i + 1,
                name: r.spec.name.clone(),
                hash: r.spec.hash.clone(),
                first_name: first.spec.name.clone(),
                first_hash: first.spec.hash.clone(),
            });
        }
    }
    Ok(())
}

/// The first shard's SLOs on the merged numbers (see the module documentation).
fn merge_slo(
    results: &[RunResult],
    total: &TargetResult,
    targets: &[TargetResult],
    flows: &[super::FlowResult],
    duration_s: f64,
) -> Result<Vec<SloVerdict>, MergeError> {
    results[0]
        .slo
        .iter()
        .enumerate()
        .map(|(i, v)| {
            if v.window_s.is_some() {
                let shards: Vec<&SloVerdict> =
                    results.iter().filter_map(|r| r.slo.get(i)).collect();
                let shown = shards.iter().find(|s| !s.passed).unwrap_or(&shards[0]);
                return Ok(SloVerdict {
                    passed: shards.iter().all(|s| s.passed),
                    ..(*shown).clone()
                });
            }
            let flow = flows
                .iter()
                .find(|f| f.name == v.scope)
                .map(super::FlowResult::as_target);
            let target = if v.scope == "total" {
                Some(total)
            } else {
                targets.iter().find(|t| t.name == v.scope).or(flow.as_ref())
            };
            reevaluate(v, target, duration_s)
        })
        .collect()
}

/// The machines together: CPU counts and times summed, host names listed.
fn merge_environment(results: &[RunResult]) -> Environment {
    let mut environment = results[0].environment.clone();
    environment.client_cpu_user_s = results
        .iter()
        .map(|r| r.environment.client_cpu_user_s)
        .sum();
    environment.client_cpu_system_s = results
        .iter()
        .map(|r| r.environment.client_cpu_system_s)
        .sum();
    environment.cpu_count = results.iter().map(|r| r.environment.cpu_count).sum();
    let mut hosts: Vec<&str> = results
        .iter()
        .map(|r| r.environment.hostname.as_str())
        .collect();
    hosts.dedup();
    environment.hostname = hosts.join(", ");
    environment
}

/// The generators' health together (see the module documentation).
fn merge_health(results: &[RunResult]) -> Health {
    let mut health = results[0].health.clone();
    health.valid = results.iter().all(|r| r.health.valid);
    health.problems = results
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.health
                .problems
                .iter()
                .map(move |p| format!("shard {}: {p}", i + 1))
        })
        .collect();
    if results
        .iter()
        .all(|r| r.health.stages.len() == health.stages.len())
    {
        for (j, stage) in health.stages.iter_mut().enumerate() {
            for r in &results[1..] {
                let other = &r.health.stages[j];
                stage.sent += other.sent;
                stage.dropped += other.dropped;
                stage.achieved_rate += other.achieved_rate;
                stage.achieved_in_flight += other.achieved_in_flight;
                stage.client_cpu_s += other.client_cpu_s;
            }
        }
    }
    health
}

fn merge_targets(
    parts: Vec<(usize, &TargetResult)>,
    duration_s: f64,
) -> Result<TargetResult, MergeError> {
    let (_, head) = parts[0];
    let mut histogram = latency_histogram();
    let mut out = TargetResult {
        name: head.name.clone(),
        method: head.method.clone(),
        url: head.url.clone(),
        requests: 0,
        responses: 0,
        errors: 0,
        error_rate: 0.0,
        rps: 0.0,
        bytes_sent: 0,
        bytes_received: 0,
        status_codes: BTreeMap::new(),
        errors_by_kind: BTreeMap::new(),
        latency_us: None,
        service_time_us: None,
        histogram: String::new(),
        checks_passed: 0,
        checks_failed: 0,
        checks: Vec::new(),
        phases_us: None,
        // Shards of one spec have the same threshold.
        slow_threshold_us: head.slow_threshold_us,
        slow_responses: None,
        upstream_us: None,
        streaming: None,
        // Shards of one spec ask for the same transport.
        transport: head.transport.clone(),
        time_series: Vec::new(),
    };
    let single = parts.len() == 1;
    let mut added = Added::default();
    for (index, t) in parts {
        let h = decode_histogram(&t.histogram).map_err(|e| MergeError::Histogram {
            index: index + 1,
            target: t.name.clone(),
            reason: e.to_string(),
        })?;
        histogram.add(&h).map_err(|e| MergeError::Histogram {
            index: index + 1,
            target: t.name.clone(),
            reason: format!("{e:?}"),
        })?;
        out.requests += t.requests;
        out.responses += t.responses;
        out.errors += t.errors;
        out.bytes_sent += t.bytes_sent;
        out.bytes_received += t.bytes_received;
        for (k, v) in &t.status_codes {
            *out.status_codes.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &t.errors_by_kind {
            *out.errors_by_kind.entry(k.clone()).or_default() += v;
        }
        out.checks_passed += t.checks_passed;
        out.checks_failed += t.checks_failed;
        for c in &t.checks {
            match out.checks.iter_mut().find(|o| o.check == c.check) {
                Some(o) => {
                    o.passed += c.passed;
                    o.failed += c.failed;
                }
                None => out.checks.push(c.clone()),
            }
        }
        if single {
            out.service_time_us = t.service_time_us.clone();
        }
        if let Some(slow) = t.slow_responses {
            *out.slow_responses.get_or_insert(0) += slow;
        }
        added.add(index, t)?;
    }
    added.finish(&mut out);
    out.error_rate = if out.requests > 0 {
        out.errors as f64 / out.requests as f64
    } else {
        0.0
    };
    out.rps = if duration_s > 0.0 {
        out.responses as f64 / duration_s
    } else {
        0.0
    };
    out.latency_us = summary(&histogram);
    out.histogram = encode_histogram(&histogram);
    Ok(out)
}

/// A target's histograms besides its latency (phases, upstream time, streamed bodies), added
/// shard by shard.
#[derive(Default)]
struct Added {
    phases: Option<Phases>,
    upstream: Upstream,
    streaming: Streaming,
}

impl Added {
    /// Adds the histograms of target `t` of shard `index` (0-based). Errors: one does not
    /// decode.
    fn add(&mut self, index: usize, t: &TargetResult) -> Result<(), MergeError> {
        let error = |reason| MergeError::Histogram {
            index: index + 1,
            target: t.name.clone(),
            reason,
        };
        if let Some(p) = &t.phases_us {
            let part = decode_phases(p).map_err(&error)?;
            self.phases.get_or_insert_with(Phases::default).merge(&part);
        }
        if let Some(u) = &t.upstream_us {
            self.upstream.merge(&decode_upstream(u).map_err(&error)?);
        }
        if let Some(s) = &t.streaming {
            self.streaming.merge(&decode_streaming(s).map_err(error)?);
        }
        Ok(())
    }

    /// Writes the merged histograms' summaries into `out`.
    fn finish(&self, out: &mut TargetResult) {
        out.phases_us = self.phases.as_ref().map(phases_result);
        out.upstream_us = upstream_result(&self.upstream);
        out.streaming = streaming_result(&self.streaming);
    }
}

/// A target's phase histograms, read back from its result.
fn decode_phases(p: &PhasesResult) -> Result<Phases, String> {
    let mut phases = Phases {
        connections: p.connections_opened,
        tls_resumed: p.tls_resumed,
        pre_connected: p.pre_connected,
        ..Phases::default()
    };
    for (summary, histogram) in [
        (&p.dns, &mut phases.dns_us),
        (&p.connect, &mut phases.connect_us),
        (&p.tls, &mut phases.tls_us),
        (&p.ttfb, &mut phases.ttfb_us),
        (&p.body, &mut phases.body_us),
        (&p.write, &mut phases.write_us),
    ] {
        if let Some(summary) = summary {
            let h = decode_histogram(&summary.histogram).map_err(|e| e.to_string())?;
            histogram.add(&h).map_err(|e| format!("{e:?}"))?;
        }
    }
    Ok(phases)
}

/// A histogram of a result, read back with the bounds of the run's.
fn decode(histogram: &str) -> Result<Histogram<u64>, String> {
    let mut h = latency_histogram();
    h.add(decode_histogram(histogram).map_err(|e| e.to_string())?)
        .map_err(|e| format!("{e:?}"))?;
    Ok(h)
}

/// A target's streamed responses, read back from its result.
fn decode_streaming(s: &StreamingResult) -> Result<Streaming, String> {
    let histogram =
        |summary: &Option<PhaseSummary>| summary.as_ref().map(|s| decode(&s.histogram)).transpose();
    Ok(Streaming {
        responses: s.responses,
        sse_responses: s.sse_responses,
        events: s.events,
        ttfb_us: histogram(&s.ttfb)?,
        event_gap_us: histogram(&s.event_gap)?,
    })
}

/// A target's upstream-time histograms, read back from its result.
fn decode_upstream(u: &UpstreamResult) -> Result<Upstream, String> {
    Ok(Upstream {
        envoy_us: match &u.envoy_upstream_service_time {
            Some(s) => Some(decode(&s.histogram)?),
            None => None,
        },
        server_timing_us: u
            .server_timing
            .iter()
            .map(|m| Ok((m.name.clone(), decode(&m.dur.histogram)?)))
            .collect::<Result<_, String>>()?,
        server_timing_dropped: u.server_timing_dropped,
    })
}

/// Re-evaluates an SLO on merged numbers: the threshold is parsed again from its text.
fn reevaluate(
    v: &SloVerdict,
    target: Option<&TargetResult>,
    duration_s: f64,
) -> Result<SloVerdict, MergeError> {
    let metric = match v.metric.as_str() {
        "latency" => Metric::Latency,
        "errors" => Metric::Errors,
        "requests" => Metric::Requests,
        "checks" => Metric::Checks,
        other => {
            return Err(MergeError::Threshold {
                threshold: v.threshold.clone(),
                reason: format!("unknown metric `{other}`"),
            });
        }
    };
    let threshold = Threshold::parse(Scope::Total, metric, &v.threshold).map_err(|reason| {
        MergeError::Threshold {
            threshold: v.threshold.clone(),
            reason,
        }
    })?;
    let measured = target.and_then(|t| {
        let h = decode_histogram(&t.histogram).ok()?;
        let checks = t.checks_passed + t.checks_failed;
        let measures = Measures {
            latency_us: &h,
            requests: t.requests,
            responses: t.responses,
            errors: t.errors,
            check_pass_rate: (checks > 0).then(|| t.checks_passed as f64 / checks as f64),
            elapsed_s: duration_s,
        };
        measures.measure(&threshold).0
    });
    Ok(SloVerdict {
        passed: measured.is_some_and(|m| threshold.passes(m)),
        measured,
        ..v.clone()
    })
}

/// Merges the series second by second (see the module documentation).
fn merge_series(results: &[RunResult]) -> Vec<TimeSample> {
    let mut by_second: BTreeMap<u32, Vec<&TimeSample>> = BTreeMap::new();
    for r in results {
        for s in &r.time_series {
            by_second.entry(s.second).or_default().push(s);
        }
    }
    by_second
        .into_iter()
        .map(|(second, samples)| {
            let responses: u64 = samples.iter().map(|s| s.responses).sum();
            let weighted = |get: &dyn Fn(&TimeSample) -> Option<f64>| -> Option<f64> {
                if responses == 0 {
                    return Some(0.0);
                }
                let mut sum = 0.0;
                for s in &samples {
                    sum += get(s)? * s.responses as f64;
                }
                Some(sum / responses as f64)
            };
            let round = |v: Option<f64>| v.map(|v| v.round() as u64);
            TimeSample {
                second,
                responses,
                errors: samples.iter().map(|s| s.errors).sum(),
                p50_us: round(weighted(&|s| Some(s.p50_us as f64))).unwrap_or(0),
                p99_us: round(weighted(&|s| Some(s.p99_us as f64))).unwrap_or(0),
                max_us: samples.iter().map(|s| s.max_us).max().unwrap_or(0),
                p90_us: round(weighted(&|s| s.p90_us.map(|v| v as f64))),
                p95_us: round(weighted(&|s| s.p95_us.map(|v| v as f64))),
                p99_9_us: round(weighted(&|s| s.p99_9_us.map(|v| v as f64))),
                mean_us: weighted(&|s| s.mean_us),
                requests: samples.iter().map(|s| s.requests).sum(),
                histogram: None,
            }
        })
        .collect()
}
