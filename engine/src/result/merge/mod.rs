//! Merging the results of several shards of one run (the same spec, run at the same time from
//! several machines, `loadgate run --shard K/N`) into one result.
//!
//! First the checks (`checks.rs`): each result given once, one spec and result version;
//! shards of one run (all results shards or none, one N, each K once, none missing unless
//! `--allow-missing`, which marks the merge `partial` and lists the missing K); results of
//! version 4 and later started within 1 s of each other. [`RunResult::merged`] records what
//! was merged and the start skew.
//!
//! Then the merge, exact where the result allows it: HDR histograms are added
//! (HdrHistogram's `add`), counters summed, and every percentile and SLO verdict recomputed
//! from the merged histograms and counters, never averaged. The shards ran at the same time,
//! so the merged window is the longest shard's, and throughput is the merged responses over
//! it; `started_at` is the earliest.
//!
//! - The per-second series, the run's and each target's (`series.rs`), are aligned by wall
//!   clock: a result's second `s` covers `started_at + s` and goes to merged second `s +
//!   round(started_at − earliest started_at)`. A merged second's percentiles and mean come
//!   from the sum of the seconds' histograms (exact). Results before version 4 keep no
//!   histogram per second and are aligned by the seconds' index: their merged seconds' counts
//!   and `max_us` are exact, their other latencies response-weighted means of the shards'
//!   values (an approximation that only the regression rules' bootstrap uses).
//!
//! What a result keeps no histogram of cannot be merged exactly, and is said so:
//!
//! - `service_time_us` (a summary without a histogram) is absent from a merge of several
//!   shards;
//! - flows (`flows.rs`): iterations and their reasons summed, iteration-duration histograms
//!   added, the rate over the merged window; a flow's SLOs are re-evaluated on them;
//! - an SLO with a window (`window_s`) passes when it passed in every shard, and shows the
//!   first failing shard's window (or the first shard's); other SLOs are re-evaluated, one
//!   with tags on the merged targets that carry them (targets keep their tags); the merge
//!   passes when every SLO of severity `fail` passed;
//! - results of runs of scenarios are never sharded, and are not merged
//!   ([`MergeError::Scenarios`]);
//! - health: valid when every shard's was, with every shard's problems; stages are the first
//!   shard's, with sent, dropped, achieved rate, requests in flight and client CPU summed over the
//!   shards when they have the same stages (lateness, a summary, is the first shard's).

mod checks;
mod flows;
mod series;
mod targets;

use super::{
    Environment, Health, RunResult, SloVerdict, TargetResult, UdpBuffersResult, decode_histogram,
};
use crate::measure::Measures;
use crate::plan::threshold::{Scope, Threshold};
pub use checks::MAX_START_SKEW_US;
use checks::shard_list;
use series::{Part, merge_series};

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
    /// The same shard (K) given twice, in two different results.
    #[error(
        "results {first} and {index} are both shard {shard}: give each shard's result once \
         (each shard runs with its own `--shard K/N`)"
    )]
    SameShard {
        /// 1-based position of the second result among those given.
        index: usize,
        /// 1-based position of the first.
        first: usize,
        /// The shard, `K/N`.
        shard: String,
    },
    /// A shard of another shard count (N) than the first result's.
    #[error(
        "result {index} is a shard of {count} and result 1 a shard of {first}: merge the \
         shards of one run, all run with the same N in `--shard K/N`"
    )]
    ShardCount {
        /// 1-based position of the result among those given.
        index: usize,
        /// Its N.
        count: u32,
        /// The first result's N.
        first: u32,
    },
    /// Shards and results of runs that were not sharded, together.
    #[error(
        "result {sharded} is a shard (`run --shard K/N`) and result {unsharded} is not: merge \
         either the shards of one run or results of unsharded runs"
    )]
    MixedShards {
        /// 1-based position of a shard among the results given.
        sharded: usize,
        /// 1-based position of a result that is not a shard.
        unsharded: usize,
    },
    /// A result's `shard` is not a valid `K/N`.
    #[error("the shard of result {index} is not valid: {reason}")]
    BadShard {
        /// 1-based position of the result among those given.
        index: usize,
        /// Why not.
        reason: String,
    },
    /// Shards of the run are missing and `allow_missing` is off.
    #[error(
        "{} of {count} missing: give every shard's result, or pass --allow-missing to merge the \
         others into a result marked partial",
        shard_list(missing)
    )]
    Missing {
        /// The missing shards (K), ascending.
        missing: Vec<u32>,
        /// N.
        count: u32,
    },
    /// Results (of version 4 or later) whose starts are more than [`MAX_START_SKEW_US`]
    /// apart.
    #[error(
        "result {index} started measuring {:.3} s after result {earliest} (`started_at`), more \
         than 1 s: the results did not run at the same time; start the shards together with \
         one `--start-at`",
        *apart_us as f64 / 1e6
    )]
    StartsApart {
        /// 1-based position of the result that started last.
        index: usize,
        /// 1-based position of the result that started first.
        earliest: usize,
        /// How far apart, µs.
        apart_us: u64,
    },
    /// A result of a run of scenarios: such runs are not sharded (`run --shard` refuses a
    /// spec with `scenarios`), so there is nothing to merge it with.
    #[error(
        "result {index} is the result of a run of scenarios, which is never sharded: there \
         is nothing to merge it with"
    )]
    Scenarios {
        /// 1-based position of the result among those given.
        index: usize,
    },
    /// A result's time (`started_at`, `planned_start_at`) is not RFC 3339.
    #[error("the {field} of result {index}, `{value}`, is not an RFC 3339 time: {reason}")]
    Time {
        /// 1-based position of the result among those given.
        index: usize,
        /// `started_at` or `planned_start_at`.
        field: &'static str,
        /// The text.
        value: String,
        /// Why it does not parse.
        reason: String,
    },
}

/// The sum of several targets' measures (`parts`: each target, and the second of the sum
/// where its series' second 0 falls), named `name`, rates over `duration_s` seconds: counters
/// summed, histograms added (exact percentiles), the per-second series merged second by
/// second as a merge of shards does; tags, method, URL, checks, transport and messages left
/// out. What a tag selector (`latency{kind:write}`) or a scenario's whole measures. Errors: a
/// histogram does not decode.
pub fn sum_targets(
    name: &str,
    parts: &[(&TargetResult, u32)],
    duration_s: f64,
) -> Result<TargetResult, MergeError> {
    if parts.is_empty() {
        return Ok(TargetResult {
            name: name.to_string(),
            histogram: super::encode_histogram(&crate::measure::latency_histogram()),
            ..TargetResult::default()
        });
    }
    let indexed: Vec<(usize, &TargetResult)> = parts
        .iter()
        .enumerate()
        .map(|(i, (t, _))| (i, *t))
        .collect();
    let offsets: Vec<u32> = parts.iter().map(|(_, offset)| *offset).collect();
    let mut sum = targets::merge_target(&indexed, &offsets, duration_s)?;
    sum.name = name.to_string();
    sum.tags.clear();
    sum.method = None;
    sum.url = None;
    sum.transport = None;
    // Messages are a target's (of one protocol), as `total` has none.
    sum.messages = None;
    sum.checks.clear();
    Ok(sum)
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

/// Merges the shards' results (see the module documentation). Errors: none given, more than
/// [`MAX_SHARDS`], a check fails (a result given twice, different specs or result versions,
/// shards not of one run or missing, starts too far apart), a histogram does not decode.
pub fn merge(results: &[RunResult], options: MergeOptions) -> Result<RunResult, MergeError> {
    let first = results.first().ok_or(MergeError::Empty)?;
    if results.len() > MAX_SHARDS {
        return Err(MergeError::TooMany {
            given: results.len(),
        });
    }
    if let Some(index) = results.iter().position(|r| !r.scenarios.is_empty()) {
        return Err(MergeError::Scenarios { index: index + 1 });
    }
    let (starts, merged) = checks::check(results, options)?;
    let offsets_s = &starts.offsets_s;
    let duration_s = results.iter().map(|r| r.duration_s).fold(0.0, f64::max);

    let totals: Vec<(usize, &TargetResult)> =
        results.iter().map(|r| &r.total).enumerate().collect();
    let total = targets::merge_target(&totals, offsets_s, duration_s)?;
    let targets = targets::merge_targets(results, offsets_s, duration_s)?;
    let shards_flows: Vec<&[super::FlowResult]> =
        results.iter().map(|r| r.flows.as_slice()).collect();
    let flows = flows::merge_flows(&shards_flows, duration_s)?;
    let slo = merge_slo(results, &total, &targets, &flows, duration_s)?;
    let series: Vec<Part<'_>> = results
        .iter()
        .enumerate()
        .map(|(index, r)| Part {
            index,
            offset_s: offsets_s[index],
            samples: &r.time_series,
        })
        .collect();

    let mut load = first.load.clone();
    load.connections = results.iter().map(|r| r.load.connections).sum();
    load.max_in_flight = results.iter().map(|r| r.load.max_in_flight).sum();
    load.requests = results.iter().map(|r| r.load.requests).sum::<Option<u64>>();

    Ok(RunResult {
        scenarios: Vec::new(),
        result_version: first.result_version,
        health: merge_health(results),
        spec: first.spec.clone(),
        started_at: results[starts.earliest].started_at.clone(),
        planned_start_at: checks::planned_start(results)?,
        shard: None,
        merged: Some(merged),
        duration_s,
        interrupted: results.iter().any(|r| r.interrupted),
        environment: merge_environment(results),
        source: first.source.clone(),
        load,
        total,
        targets,
        flows,
        time_series: merge_series(&series, "total")?,
        passed: super::slo::passed(&slo),
        slo,
        regression_rules: first.regression_rules.clone(),
        regression_alpha: first.regression_alpha,
    })
}

/// The line the reports show for a partial merge (`merged.partial`): `partial: shards 3, 4
/// of 4 missing; ...`; `None` for any other result.
pub(crate) fn partial_note(result: &RunResult) -> Option<String> {
    let merged = result.merged.as_ref().filter(|m| m.partial)?;
    Some(format!(
        "partial: {} of {} missing; the numbers and SLO verdicts cover only the shards merged",
        shard_list(&merged.missing),
        merged.shard_count.unwrap_or_default()
    ))
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
            if !v.tags.is_empty() {
                return reevaluate_tagged(v, targets, flows, duration_s);
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
            // The shards' dropped arrivals, counted as failed requests again.
            let dropped = results
                .iter()
                .filter_map(|r| r.slo.get(i))
                .map(|s| s.dropped)
                .sum();
            reevaluate(v, target, duration_s, dropped)
        })
        .collect()
}

/// The machines together: CPU counts and times summed, host names listed, the smallest UDP
/// buffers.
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
    // The smallest buffers any machine got: the one that may have dropped datagrams.
    environment.udp_buffers = results
        .iter()
        .filter_map(|r| r.environment.udp_buffers)
        .reduce(|a, b| UdpBuffersResult {
            wanted_bytes: a.wanted_bytes.max(b.wanted_bytes),
            recv_bytes: a.recv_bytes.min(b.recv_bytes),
            send_bytes: a.send_bytes.min(b.send_bytes),
            limited: a.limited || b.limited,
        });
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
    health.notes = results
        .iter()
        .enumerate()
        .flat_map(|(i, r)| {
            r.health
                .notes
                .iter()
                .map(move |n| format!("shard {}: {n}", i + 1))
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
                stage.dropped_behind += other.dropped_behind;
                stage.achieved_rate += other.achieved_rate;
                stage.achieved_in_flight += other.achieved_in_flight;
                stage.client_cpu_s += other.client_cpu_s;
            }
        }
    }
    health
}

/// Re-evaluates an SLO with tags (`latency{kind:write}`) on the merged targets of its scope
/// (the whole run: all; a target: itself; a flow: its steps) whose tags hold its tags, summed
/// ([`sum_targets`]); one that selects none measures nothing and fails, as in the run.
fn reevaluate_tagged(
    v: &SloVerdict,
    targets: &[TargetResult],
    flows: &[super::FlowResult],
    duration_s: f64,
) -> Result<SloVerdict, MergeError> {
    use crate::plan::regression::ScopeKind;
    let in_scope = |t: &TargetResult| match v.scope_kind {
        Some(ScopeKind::Target) => t.name == v.scope,
        Some(ScopeKind::Flow) => flows
            .iter()
            .filter(|f| f.name == v.scope)
            .any(|f| f.steps.iter().any(|s| s.target == t.name)),
        _ => true,
    };
    let parts: Vec<(&TargetResult, u32)> = targets
        .iter()
        .filter(|t| in_scope(t) && v.tags.iter().all(|(k, x)| t.tags.get(k) == Some(x)))
        .map(|t| (t, 0))
        .collect();
    if parts.is_empty() {
        return Ok(SloVerdict {
            measured: None,
            passed: false,
            ..v.clone()
        });
    }
    let sum = sum_targets(&v.scope, &parts, duration_s)?;
    reevaluate(v, Some(&sum), duration_s, 0)
}

/// Re-evaluates an SLO on merged numbers: the threshold is parsed again from its text.
fn reevaluate(
    v: &SloVerdict,
    target: Option<&TargetResult>,
    duration_s: f64,
    dropped: u64,
) -> Result<SloVerdict, MergeError> {
    let threshold = Threshold::parse(Scope::Total, v.metric, &v.threshold).map_err(|reason| {
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
        measures.with_dropped(dropped).measure(&threshold).0
    });
    Ok(SloVerdict {
        passed: measured.is_some_and(|m| threshold.passes(m)),
        measured,
        dropped,
        ..v.clone()
    })
}
