//! The shared table logic of the report formats: a [`View`] of a result (and its comparison)
//! with every number already formatted, handed to the templates. Templates only lay it out;
//! they never compute or format a value, so all formats agree.

use std::collections::BTreeMap;

use serde::Serialize;

use super::http3;
use super::verdict::{Verdict, detectable_change};
use crate::compare::gate;
use crate::compare::{
    Comparison, EpochChanges, MetricDelta, RuleState, RuleVerdict, SloDelta, TargetDelta, median,
    target_metrics,
};
use crate::result::{PhaseSummary, PhasesResult, RunResult, TargetResult};
use crate::units::{MISSING, Unit, format_change, format_duration_us, format_relative};

/// Everything a report template prints, formatted.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct View {
    /// The spec's name.
    pub spec: String,
    /// `pass`, `slo_failed`, `regressed`, `invalid_measurement` or `interrupted`
    /// ([`Verdict`]).
    pub verdict: &'static str,
    /// `PASSED`, `FAILED`, `REGRESSED`, `INVALID MEASUREMENT` or `INTERRUPTED`.
    pub verdict_word: &'static str,
    /// The one-line verdict.
    pub summary: String,
    pub has_baseline: bool,
    /// What the compared result is called: `candidate` in a paired comparison (`loadgate
    /// ab`), else `current`.
    pub current_label: &'static str,
    /// The rules were judged on paired epochs (`loadgate ab`): Hodges–Lehmann and Wilcoxon
    /// signed-rank over the epoch pairs instead of the bootstrap over two runs' seconds.
    pub paired: bool,
    /// Key numbers: throughput, p50, p95, p99, error rate.
    pub headline: Vec<Row>,
    pub slo: Vec<CheckRow>,
    pub rules: Vec<CheckRow>,
    /// Every target (not `total`), in the current run's order, then those only the baseline
    /// has.
    pub targets: Vec<TargetView>,
    pub total: TargetView,
    /// Every flow of the current run, with its steps' target rows (empty without flows).
    pub flows: Vec<super::flows::FlowView>,
    pub notes: Vec<String>,
    /// Environment of the current run (and the baseline's, when there is one).
    pub environment: Vec<EnvRow>,
    pub counts: Counts,
    /// The current run's measured window in seconds, to the millisecond (`5.000`): the
    /// JUnit report's `time` of every suite and test case, each check being judged on that
    /// one run.
    pub time_s: String,
}

/// A metric in both runs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub label: String,
    pub current: String,
    pub baseline: String,
    /// Relative change, e.g. `+3.4%` (absolute when the baseline is 0).
    pub change: String,
}

/// An SLO or a regression rule, judged.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct CheckRow {
    /// `SLO` or `rule`.
    pub kind: &'static str,
    /// e.g. `total latency p(95) < 200ms` or `latency p(95) +10% floor 2ms`.
    pub name: String,
    /// Scope (`total` or a target's name).
    pub scope: String,
    pub measured: String,
    pub baseline: String,
    pub change: String,
    /// 95% interval of the relative change, rules only: `[-1.2%, +5.0%]`.
    pub interval: String,
    /// Allowed change, rules only: `+2.00ms`.
    pub allowed: String,
    /// The threshold's limit, SLOs only: `50.00ms`. (An SLO judges one run against this
    /// fixed limit, so it has no interval, detectable change or allowance.)
    pub limit: String,
    /// The minimum detectable effect, rules only: half the interval's width
    /// ([`detectable_change`]), `±1.8%` (`±0.10 points` of the error rate for `errors`
    /// rules), or `no interval`.
    pub detectable: String,
    /// The per-epoch changes of a paired comparison, rules only.
    pub epochs: Option<EpochRow>,
    /// `pass`, `fail` (SLO) or the rule's state.
    pub verdict: &'static str,
    /// Whether this check fails the gate.
    pub failed: bool,
    /// Why, in words (rules), or the threshold's limit (SLOs).
    pub reason: String,
}

/// A rule's change in each epoch pair of a paired comparison, in brief.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EpochRow {
    /// One bar per epoch pair (per group of pairs beyond [`SPARKLINE_WIDTH`]), from the lowest
    /// change or 0, whichever is lower, to the highest: `▂▅▇▆`.
    pub sparkline: String,
    /// `30 above 0, 2 below of 32 pairs; median +9.8%`.
    pub summary: String,
}

/// Most bars in an [`EpochRow`]'s sparkline.
const SPARKLINE_WIDTH: usize = 40;

/// One target in both runs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetView {
    pub name: String,
    pub method: String,
    /// As written in the spec.
    pub url: String,
    pub requests: String,
    pub rps: String,
    pub error_rate: String,
    pub p95: String,
    pub p95_change: String,
    pub p99: String,
    pub p99_change: String,
    pub in_baseline: bool,
    pub in_current: bool,
    /// p50 .. p99.9, mean, error rate, throughput.
    pub metrics: Vec<Row>,
    pub status_codes: Vec<KeyValue>,
    pub errors_by_kind: Vec<KeyValue>,
    /// The failures whose peer gave a code, by kind and code (`stream_reset REFUSED_STREAM
    /// (0x7)`).
    pub errors_by_code: Vec<KeyValue>,
    /// How the current run's connections spoke (`h2 over TLS 1.3 (...)`); empty if unknown.
    pub transport: String,
    /// The `h3` entry of an `Alt-Svc` the responses carried (`h3=":8443"`) when the target
    /// did not speak HTTP/3: the server offers what the target did not load; else empty.
    pub alt_svc_h3: String,
    /// The server's certificate was not verified (`insecure_skip_verify`).
    pub insecure: bool,
    /// The current run's phase timings: connection setup, write / TTFB / body read, upstream
    /// times and streamed bodies (see `phase_rows`).
    pub phases: Vec<PhaseRow>,
    /// Connections opened (how many before the clock, TLS sessions resumed), in words.
    pub connections: String,
}

/// One phase of a target's requests, durations as labels (`1.25ms`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PhaseRow {
    /// `dns`, `connect`, `tls`, `write`, `ttfb`, `body`, `upstream envoy`,
    /// `upstream server-timing NAME`, `stream body ttfb` or `event gap (...)`.
    pub name: String,
    pub count: String,
    pub p50: String,
    pub p90: String,
    pub p99: String,
    pub max: String,
}

/// A name and a value.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct KeyValue {
    pub key: String,
    pub value: String,
}

/// A line of the environment table.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct EnvRow {
    pub key: String,
    pub current: String,
    pub baseline: String,
}

/// How many checks ended how.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Counts {
    pub slo: usize,
    pub slo_failed: usize,
    pub rules: usize,
    pub regressed: usize,
    pub inconclusive: usize,
    pub improved: usize,
    pub unchanged: usize,
}

/// Builds the view of `current`, with its baseline and comparison when given, and `earlier`
/// results before it in a trend (0 for none).
pub(crate) fn build(
    current: &RunResult,
    baseline: Option<&RunResult>,
    comparison: Option<&Comparison>,
    earlier: usize,
) -> View {
    let verdict = Verdict::of(current, comparison);
    let count = |s| comparison.map_or(0, |c| c.count(s));
    let paired = comparison.is_some_and(|c| c.paired.is_some());
    let deltas =
        |name: &str| comparison.and_then(|c| c.targets.iter().find(|t| t.name == name).cloned());
    let total_delta = deltas("total");
    let total = target_view(
        Some(&current.total),
        baseline.map(|b| &b.total),
        total_delta,
    );
    let mut targets: Vec<TargetView> = current
        .targets
        .iter()
        .map(|t| {
            let b = baseline.and_then(|b| b.targets.iter().find(|x| x.name == t.name));
            target_view(Some(t), b, deltas(&t.name))
        })
        .collect();
    if let Some(b) = baseline {
        for t in &b.targets {
            if !current.targets.iter().any(|c| c.name == t.name) {
                targets.push(target_view(None, Some(t), deltas(&t.name)));
            }
        }
    }
    let headline = ["rps", "p50", "p95", "p99", "error_rate"]
        .iter()
        .filter_map(|m| total.metrics.iter().find(|r| metric_key(&r.label) == *m))
        .cloned()
        .collect();
    View {
        spec: current.spec.name.clone(),
        verdict: verdict.name(),
        verdict_word: verdict.word(),
        summary: summary(current, comparison, earlier),
        has_baseline: baseline.is_some(),
        current_label: if paired { "candidate" } else { "current" },
        paired,
        headline,
        slo: slo_rows(current, comparison),
        rules: comparison.map_or_else(Vec::new, rule_rows),
        flows: super::flows::flow_views(current, &targets),
        targets,
        total,
        // A partial merge says so first (`merged.partial`), then the generator's health
        // (its problems, the load the server did not take), then the comparison's notes,
        // then the UDP buffers of HTTP/3 when limited.
        notes: crate::result::merge::partial_note(current)
            .into_iter()
            .chain(super::health::notes(current))
            .chain(comparison.into_iter().flat_map(|c| c.notes.iter().cloned()))
            .chain(http3::udp_advice(&current.environment))
            .collect(),
        environment: environment(current, baseline),
        counts: Counts {
            slo: current.slo.len(),
            slo_failed: current.slo.iter().filter(|v| !v.passed).count(),
            rules: comparison.map_or(0, |c| c.rules.len()),
            regressed: count(RuleState::Regressed),
            inconclusive: count(RuleState::Inconclusive),
            improved: count(RuleState::Improved),
            unchanged: count(RuleState::Unchanged),
        },
        time_s: format!("{:.3}", current.duration_s),
    }
}

/// The one-line verdict ([`gate::summary_line`]); for a trend without a baseline (`loadgate
/// report` of several results), what the report does instead of "no baseline to compare
/// with": `PASSED: 2/2 SLOs met; trend over 3 runs (regression rules are judged against a
/// --baseline)`. An interrupted run is not judged: `INTERRUPTED: the run was stopped before
/// its end and is not judged; on the part it ran: 2/2 SLOs met; ...`.
pub(super) fn summary(
    current: &RunResult,
    comparison: Option<&Comparison>,
    earlier: usize,
) -> String {
    let mut line = gate::summary_line(current, comparison);
    if comparison.is_none()
        && earlier > 0
        && let Some(head) = line.strip_suffix("no baseline to compare with")
    {
        line = format!(
            "{head}trend over {} runs (regression rules are judged against a --baseline)",
            earlier + 1
        );
    }
    if current.interrupted {
        // The gate's word (`PASSED: `) gives way: an interrupted run is not judged.
        let rest = line
            .split_once(": ")
            .map_or(line.as_str(), |(_, rest)| rest);
        line = format!(
            "{}: the run was stopped before its end and is not judged; on the part it ran: \
             {rest}",
            Verdict::Interrupted.word()
        );
    }
    line
}

/// Labels of the per-target metrics, by the comparison's metric names.
fn metric_label(metric: &str) -> &'static str {
    match metric {
        "p50" => "p50",
        "p90" => "p90",
        "p95" => "p95",
        "p99" => "p99",
        "p99_9" => "p99.9",
        "mean" => "mean",
        "error_rate" => "error rate",
        "rps" => "throughput",
        _ => "?",
    }
}

fn metric_key(label: &str) -> &'static str {
    match label {
        "p50" => "p50",
        "p95" => "p95",
        "p99" => "p99",
        "error rate" => "error_rate",
        "throughput" => "rps",
        _ => "",
    }
}

/// A metric of a target in both runs.
fn metric_row(m: &MetricDelta) -> Row {
    let unit = Unit::from_name(&m.unit);
    Row {
        label: metric_label(&m.metric).to_string(),
        current: unit.format_or_missing(m.current),
        baseline: unit.format_or_missing(m.baseline),
        change: format_change(m.relative_change, m.change, unit),
    }
}

pub(super) fn target_view(
    current: Option<&TargetResult>,
    baseline: Option<&TargetResult>,
    delta: Option<TargetDelta>,
) -> TargetView {
    let shown = current.or(baseline).expect("one side exists");
    let metrics: Vec<Row> = match &delta {
        Some(d) => d.metrics.iter().map(metric_row).collect(),
        None => target_metrics(shown)
            .into_iter()
            .map(|(metric, unit, v)| Row {
                label: metric_label(metric).to_string(),
                current: unit.format_or_missing(current.and(v)),
                baseline: MISSING.to_string(),
                change: MISSING.to_string(),
            })
            .collect(),
    };
    let find = |label: &str| metrics.iter().find(|r| r.label == label).cloned();
    let p95 = find("p95").expect("always present");
    let p99 = find("p99").expect("always present");
    TargetView {
        name: shown.name.clone(),
        method: shown.method.clone().unwrap_or_default(),
        url: shown.url.clone().unwrap_or_default(),
        requests: current.map_or_else(|| MISSING.to_string(), |t| t.requests.to_string()),
        rps: Unit::PerSecond.format_or_missing(current.map(|t| t.rps)),
        error_rate: Unit::Ratio.format_or_missing(current.map(|t| t.error_rate)),
        p95: p95.current,
        p95_change: p95.change,
        p99: p99.current,
        p99_change: p99.change,
        in_baseline: baseline.is_some(),
        in_current: current.is_some(),
        metrics,
        status_codes: current.map_or_else(Vec::new, |t| key_values(&t.status_codes)),
        errors_by_kind: current.map_or_else(Vec::new, |t| key_values(&t.errors_by_kind)),
        errors_by_code: current.map_or_else(Vec::new, |t| key_values(&t.errors_by_code)),
        transport: current
            .and_then(|t| t.transport.as_ref())
            .map(|t| t.describe())
            .unwrap_or_default(),
        alt_svc_h3: current
            .and_then(|t| t.transport.as_ref())
            .and_then(http3::offered_h3)
            .unwrap_or_default()
            .to_string(),
        insecure: current
            .and_then(|t| t.transport.as_ref())
            .is_some_and(|t| t.insecure()),
        phases: current.map(phase_rows).unwrap_or_default(),
        connections: current
            .and_then(|t| t.phases_us.as_ref())
            .map(connections)
            .unwrap_or_default(),
    }
}

/// Each count of `map` as a [`KeyValue`], in the map's order.
fn key_values(map: &BTreeMap<String, u64>) -> Vec<KeyValue> {
    map.iter()
        .map(|(k, v)| KeyValue {
            key: k.clone(),
            value: v.to_string(),
        })
        .collect()
}

/// The connections opened, in words: how many before the clock (pre-connect), TLS sessions
/// resumed, HTTP/3's 0-RTT.
fn connections(p: &PhasesResult) -> String {
    let mut words = if p.pre_connected > 0 {
        format!(
            "{} opened, {} of them before the clock started (pre-connect)",
            p.connections_opened, p.pre_connected
        )
    } else {
        format!("{} opened while measuring", p.connections_opened)
    };
    if p.tls_resumed > 0 {
        words.push_str(&format!(", {} TLS sessions resumed", p.tls_resumed));
    }
    words.push_str(&http3::zero_rtt(p));
    words
}

/// The phase rows of a target: connection setup, the request's write / TTFB / body read, then
/// the upstream times its responses reported (`envoy`, `server-timing NAME`) and its streamed
/// bodies (`stream ttfb`, `event gap`, naming the events); each only when it has samples.
fn phase_rows(t: &TargetResult) -> Vec<PhaseRow> {
    let mut rows: Vec<(String, &PhaseSummary)> = Vec::new();
    if let Some(p) = &t.phases_us {
        for (name, phase) in [
            ("dns", &p.dns),
            ("connect", &p.connect),
            ("tls", &p.tls),
            ("stream wait", &p.stream_wait),
            ("write", &p.write),
            ("ttfb", &p.ttfb),
            ("body", &p.body),
        ] {
            rows.extend(phase.iter().map(|s| (name.to_string(), s)));
        }
    }
    if let Some(u) = &t.upstream_us {
        rows.extend(
            u.envoy_upstream_service_time
                .iter()
                .map(|s| ("upstream envoy".to_string(), s)),
        );
        rows.extend(
            u.server_timing
                .iter()
                .map(|m| (format!("upstream server-timing {}", m.name), &m.dur)),
        );
    }
    if let Some(s) = &t.streaming {
        rows.extend(s.ttfb.iter().map(|p| ("stream body ttfb".to_string(), p)));
        rows.extend(s.event_gap.iter().map(|p| {
            let name = format!(
                "event gap ({} events in {} SSE streams)",
                s.events, s.sse_responses
            );
            (name, p)
        }));
    }
    rows.into_iter()
        .map(|(name, s)| PhaseRow {
            name,
            count: s.count.to_string(),
            p50: format_duration_us(s.p50_us as f64),
            p90: format_duration_us(s.p90_us as f64),
            p99: format_duration_us(s.p99_us as f64),
            max: format_duration_us(s.max_us as f64),
        })
        .collect()
}

fn slo_rows(current: &RunResult, comparison: Option<&Comparison>) -> Vec<CheckRow> {
    current
        .slo
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let base = comparison
                .and_then(|c| c.slo.get(i))
                .and_then(|d| d.baseline);
            let d = SloDelta::of(v, base);
            let unit = Unit::from_name(&d.unit);
            let rel = d
                .baseline
                .zip(d.measured)
                .filter(|(b, _)| *b != 0.0)
                .map(|(b, m)| m / b - 1.0);
            let metric = if current.flows.iter().any(|f| f.name == v.scope) {
                super::flows::flow_metric_name(&v.metric)
            } else {
                &v.metric
            };
            let mut name = format!("{} {metric}: {}", v.scope, v.threshold);
            if v.default {
                name.push_str(" (default: the spec sets no errors SLO)");
            }
            name.push_str(&super::health::dropped_suffix(v));
            CheckRow {
                kind: "SLO",
                name,
                scope: v.scope.clone(),
                measured: d.measured_text,
                baseline: unit.format_or_missing(d.baseline),
                change: format_change(rel, d.change, unit),
                interval: String::new(),
                allowed: String::new(),
                limit: d.limit_text.clone(),
                detectable: String::new(),
                epochs: None,
                verdict: if v.passed { "pass" } else { "fail" },
                failed: !v.passed,
                reason: format!("limit {}", d.limit_text),
            }
        })
        .collect()
}

fn rule_rows(comparison: &Comparison) -> Vec<CheckRow> {
    let epochs = comparison.paired.as_ref().map(|p| &p.rules);
    comparison
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let unit = Unit::from_name(&r.unit);
            CheckRow {
                kind: "rule",
                name: match r.scope_kind.as_str() {
                    "flow" => format!(
                        "{} {} {}",
                        r.scope,
                        super::flows::flow_metric_name(&r.metric),
                        r.rule
                    ),
                    "target" => format!("{} {} {}", r.scope, r.metric, r.rule),
                    _ => format!("{} {}", r.metric, r.rule),
                },
                scope: r.scope.clone(),
                measured: unit.format_or_missing(r.current),
                baseline: unit.format_or_missing(r.baseline),
                change: format_change(r.relative_change, r.change, unit),
                interval: match (r.relative_change_ci, r.change_ci) {
                    (Some([lo, hi]), _) => format!(
                        "[{}, {}]",
                        format_relative(Some(lo)),
                        format_relative(Some(hi))
                    ),
                    (None, Some([lo, hi])) => {
                        format!("[{}, {}]", unit.format_signed(lo), unit.format_signed(hi))
                    }
                    (None, None) => MISSING.to_string(),
                },
                allowed: r.allowed_change.map_or_else(
                    || MISSING.to_string(),
                    |a| {
                        let sign = if r.metric == "requests" { "-" } else { "+" };
                        format!("{sign}{}", unit.format(a))
                    },
                ),
                limit: String::new(),
                detectable: format_detectable(r),
                epochs: epochs.and_then(|e| e.get(i)).map(epoch_row),
                verdict: r.verdict.name(),
                failed: r.verdict == RuleState::Regressed,
                reason: r.reason.clone(),
            }
        })
        .collect()
}

/// A rule's minimum detectable effect ([`detectable_change`]) as the reports show it: `±1.8%`
/// of the baseline, `±0.10 points` for the error rate (`errors` rules), `no interval`.
fn format_detectable(r: &RuleVerdict) -> String {
    match detectable_change(r) {
        None => "no interval".to_string(),
        Some(h) if r.metric == "errors" => format!("±{:.2} points", h * 100.0),
        Some(h) => format!("±{:.1}%", h * 100.0),
    }
}

/// A per-epoch change as the reports show it: relative `+9.8%`, or absolute in percentage
/// points of the error rate, `+0.10 points`.
pub(crate) fn format_epoch_change(e: &EpochChanges, change: f64) -> String {
    if e.relative {
        format_relative(Some(change))
    } else {
        format!("{:+.2} points", change * 100.0)
    }
}

/// The sparkline and the counts above and below 0 of a rule's per-epoch changes.
fn epoch_row(e: &EpochChanges) -> EpochRow {
    let values: Vec<f64> = e.changes.iter().map(|c| c.change).collect();
    let above = values.iter().filter(|v| **v > 0.0).count();
    let below = values.iter().filter(|v| **v < 0.0).count();
    let at_zero = values.len() - above - below;
    let mut summary = format!("{above} above 0, {below} below");
    if at_zero > 0 {
        summary.push_str(&format!(", {at_zero} at 0"));
    }
    summary.push_str(&format!(" of {} pairs", values.len()));
    if !values.is_empty() {
        summary.push_str(&format!(
            "; median {}",
            format_epoch_change(e, median(&values))
        ));
    }
    EpochRow {
        sparkline: sparkline(&values),
        summary,
    }
}

/// `values` as at most [`SPARKLINE_WIDTH`] bars (the mean of each group of consecutive
/// values), scaled from the lowest value or 0, whichever is lower, to the highest value or 0.
fn sparkline(values: &[f64]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if values.is_empty() {
        return String::new();
    }
    let per_bar = values.len().div_ceil(SPARKLINE_WIDTH);
    let means: Vec<f64> = values
        .chunks(per_bar)
        .map(|c| c.iter().sum::<f64>() / c.len() as f64)
        .collect();
    let low = means.iter().copied().fold(0.0, f64::min);
    let high = means.iter().copied().fold(0.0, f64::max);
    means
        .iter()
        .map(|m| {
            let level = if high > low {
                ((m - low) / (high - low) * 7.0).round() as usize
            } else {
                0
            };
            BARS[level.min(7)]
        })
        .collect()
}

fn environment(current: &RunResult, baseline: Option<&RunResult>) -> Vec<EnvRow> {
    let rows = |r: &RunResult| {
        let e = &r.environment;
        let l = &r.load;
        vec![
            ("started", r.started_at.clone()),
            ("measured", format!("{:.2} s", r.duration_s)),
            (
                "load",
                match (l.connections, l.max_in_flight) {
                    (Some(c), _) => {
                        format!("{c} connections ({}), {} s warmup", l.model, l.warmup_s)
                    }
                    (None, m) => format!(
                        "at most {} in flight ({}), {} s warmup",
                        m.unwrap_or(0),
                        l.model,
                        l.warmup_s
                    ),
                },
            ),
            ("loadgate", e.loadgate_version.clone()),
            ("host", format!("{} ({}/{})", e.hostname, e.os, e.arch)),
            ("CPUs", e.cpu_count.to_string()),
            (
                "client CPU",
                format!(
                    "{:.2} s user, {:.2} s system",
                    e.client_cpu_user_s, e.client_cpu_system_s
                ),
            ),
            ("spec SHA-256", r.spec.hash.chars().take(12).collect()),
        ]
    };
    let cur = rows(current);
    let base = baseline.map(rows);
    cur.into_iter()
        .enumerate()
        .map(|(i, (key, value))| EnvRow {
            key: key.to_string(),
            current: value,
            baseline: base
                .as_ref()
                .map_or_else(|| MISSING.to_string(), |b| b[i].1.clone()),
        })
        .collect()
}
