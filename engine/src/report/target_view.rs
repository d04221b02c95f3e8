//! One target's part of the report view: its numbers in both runs (a [`Row`] per metric),
//! its statuses and errors, how its connections spoke, its phase timings and its gRPC or
//! WebSocket messages, all formatted.
//! The view (`view.rs`) and the flows' table (`flows.rs`) show targets this way.

use std::collections::BTreeMap;

use serde::Serialize;

use super::http3;
use crate::compare::{MetricDelta, TargetDelta, TargetMetric, target_metrics};
use crate::result::{MessagesResult, PhaseSummary, PhasesResult, TargetResult};
use crate::units::{MISSING, Unit, format_bytes, format_change, format_duration_us};

/// A metric in both runs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    /// Which number it is (the templates show `label`).
    #[serde(skip)]
    pub metric: TargetMetric,
    /// How the reports name it: `p50` .. `p99.9`, `mean`, `error rate`, `throughput`.
    pub label: String,
    pub current: String,
    pub baseline: String,
    /// Relative change, e.g. `+3.4%` (absolute when the baseline is 0).
    pub change: String,
}

/// One target in both runs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TargetView {
    pub name: String,
    /// Its tags in brief, `kind: write, team: shop`; empty without tags.
    pub tags: String,
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
    /// times, streamed bodies and message streams (see `phase_rows`).
    pub phases: Vec<PhaseRow>,
    /// Connections opened (how many before the clock, TLS sessions resumed), in words.
    pub connections: String,
    /// The current run's gRPC or WebSocket messages, in words (`gRPC: 100 calls; ...`); empty
    /// for an HTTP target.
    pub messages: String,
}

/// One phase of a target's requests, durations as labels (`1.25ms`).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct PhaseRow {
    /// `dns`, `connect`, `tls`, `upgrade`, `write`, `ttfb`, `body`, `upstream envoy`,
    /// `upstream server-timing NAME`, `stream body ttfb`, `event gap (...)` or
    /// `stream duration (...)`.
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

/// A metric of a target in both runs.
fn metric_row(m: &MetricDelta) -> Row {
    let unit = Unit::from_name(&m.unit);
    Row {
        metric: m.metric,
        label: m.metric.label().to_string(),
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
                metric,
                label: metric.label().to_string(),
                current: unit.format_or_missing(current.and(v)),
                baseline: MISSING.to_string(),
                change: MISSING.to_string(),
            })
            .collect(),
    };
    let find = |metric| metrics.iter().find(|r| r.metric == metric).cloned();
    let p95 = find(TargetMetric::P95).expect("always present");
    let p99 = find(TargetMetric::P99).expect("always present");
    TargetView {
        name: shown.name.clone(),
        tags: tags_text(&shown.tags),
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
        messages: current
            .and_then(|t| t.messages.as_ref())
            .map(messages)
            .unwrap_or_default(),
    }
}

/// A target's messages in words: its calls (gRPC) or exchanges (WebSocket), the messages
/// sent and received, received per second, and their payload bytes.
fn messages(m: &MessagesResult) -> String {
    let (protocol, exchanges) = match m.protocol.as_str() {
        "grpc" => ("gRPC", "calls"),
        "ws" => ("WebSocket", "exchanges"),
        other => (other, "exchanges"),
    };
    format!(
        "{protocol}: {} {exchanges}; {} messages sent, {} received ({}); payload {} sent, {} \
         received",
        m.exchanges,
        m.sent,
        m.received,
        Unit::PerSecond.format(m.received_per_second),
        format_bytes(m.bytes_sent),
        format_bytes(m.bytes_received)
    )
}

/// A target's tags in brief, `kind: write, team: shop`; empty without tags.
fn tags_text(tags: &BTreeMap<String, String>) -> String {
    tags.iter()
        .map(|(name, value)| format!("{name}: {value}"))
        .collect::<Vec<_>>()
        .join(", ")
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

/// The phase rows of a target: connection setup (WebSocket's upgrade included), the request's
/// write / TTFB / body read, then the upstream times its responses reported (`envoy`,
/// `server-timing NAME`), its streamed bodies (`stream ttfb`, `event gap`, naming the events)
/// and its message streams' durations (gRPC server streams, WebSocket `receive_for`); each
/// only when it has samples.
fn phase_rows(t: &TargetResult) -> Vec<PhaseRow> {
    let mut rows: Vec<(String, &PhaseSummary)> = Vec::new();
    if let Some(p) = &t.phases_us {
        for (name, phase) in [
            ("dns", &p.dns),
            ("connect", &p.connect),
            ("tls", &p.tls),
            ("upgrade", &p.upgrade),
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
    if let Some(m) = &t.messages {
        let name = if m.protocol == "grpc" {
            "stream duration (server streams: due to trailers)"
        } else {
            "stream duration (receive_for)"
        };
        rows.extend(m.stream_duration.iter().map(|p| (name.to_string(), p)));
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
