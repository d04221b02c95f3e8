//! The console summary's sections for the measures a run records only when it has them: the
//! slow-response count (`defaults.slow`, plt's `--slow`), the request phases beside the
//! connection setup (write, TTFB, body read) with the connections opened before the clock
//! (pre-connect), the upstream time the responses reported in their headers
//! (`X-Envoy-Upstream-Service-Time`, `Server-Timing` `dur`) with its histogram, streamed
//! bodies (time to the first body byte, Server-Sent Events and the time between them), and
//! the messages of gRPC and WebSocket targets (per target: calls or exchanges, messages sent
//! and received, messages per second, payload bytes, streams' durations). Each section is
//! left out when its measure is absent, so a plain run's summary does not grow.

use std::fmt::Write as _;

use super::levels::{self, Scale};
use crate::result::{self, MessagesResult, PhaseSummary, PhasesResult, RunResult, TargetResult};
use crate::spec::printable;
use crate::units::{Unit, format_bytes, format_duration_us};

/// The `slow` line of the totals: responses at least `defaults.slow` late, with their share of
/// the responses, and per target when there are several; empty when the spec sets no `slow`.
pub(crate) fn slow_line(result: &RunResult) -> String {
    let t = &result.total;
    let (Some(slow), Some(threshold)) = (t.slow_responses, t.slow_threshold_us) else {
        return String::new();
    };
    let share = if t.responses > 0 {
        slow as f64 / t.responses as f64 * 100.0
    } else {
        0.0
    };
    let mut line = format!(
        "  slow        {slow} ({share:.2}%) responses of {} or more (defaults.slow)",
        format_duration_us(threshold as f64)
    );
    if result.targets.len() > 1 {
        let per_target: Vec<String> = result
            .targets
            .iter()
            .filter_map(|r| {
                r.slow_responses
                    .map(|n| format!("{}: {n}", printable(&r.name)))
            })
            .collect();
        let _ = write!(line, "; {}", per_target.join(", "));
    }
    line.push('\n');
    line
}

/// A table of distributions, one row per `(name, summary)`: count, min, p50, p90, p99, max;
/// `title` heads the name column. Empty when there are no rows.
fn table(title: &str, rows: &[(String, &PhaseSummary)]) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let width = rows
        .iter()
        .map(|(name, _)| name.chars().count())
        .chain(std::iter::once(title.chars().count()))
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "\n  {title:<width$} {:>9}{:>9}{:>9}{:>9}{:>9}{:>9}\n",
        "count", "min", "p50", "p90", "p99", "max"
    );
    for (name, p) in rows {
        let _ = writeln!(
            out,
            "  {name:<width$} {:>9}{}",
            p.count,
            [p.min_us, p.p50_us, p.p90_us, p.p99_us, p.max_us]
                .iter()
                .map(|us| format!("{:>9}", format_duration_us(*us as f64)))
                .collect::<String>()
        );
    }
    out
}

/// The phase table: connection setup (`dns`, `connect`, `tls`, WebSocket's `upgrade`, per
/// connection opened), the wait for a free HTTP/2 stream (`stream wait`, per request that
/// waited) and the request's own phases (`write`, `ttfb`, `body`, per response), phases
/// without samples left out; then the connections opened, how many of them before the clock
/// (pre-connect) and the TLS sessions resumed.
pub(crate) fn phase_table(phases: &PhasesResult) -> String {
    let rows: Vec<(String, &PhaseSummary)> = [
        ("dns", &phases.dns),
        ("connect", &phases.connect),
        ("tls", &phases.tls),
        ("upgrade", &phases.upgrade),
        ("stream wait", &phases.stream_wait),
        ("write", &phases.write),
        ("ttfb", &phases.ttfb),
        ("body", &phases.body),
    ]
    .into_iter()
    .filter_map(|(name, p)| p.as_ref().map(|p| (name.to_string(), p)))
    .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = table("phases", &rows);
    let _ = write!(out, "  {} connection(s) opened", phases.connections_opened);
    if phases.pre_connected > 0 {
        let _ = write!(
            out,
            ", {} of them before the clock started (pre-connect: their setup is in no latency)",
            phases.pre_connected
        );
    } else {
        out.push_str(" while measuring");
    }
    if phases.tls_resumed > 0 {
        let _ = write!(out, ", {} TLS session(s) resumed", phases.tls_resumed);
    }
    out.push_str(&super::http3::zero_rtt(phases));
    out.push('\n');
    out
}

/// The upstream time the responses of the whole run reported in their headers: a table of
/// `envoy` (`X-Envoy-Upstream-Service-Time`) and each `Server-Timing` metric's `dur`, then a
/// histogram of each (bars and levels as the latency histogram's, on the same `scale`, whose
/// key is printed there); empty when no response reported one.
pub(crate) fn upstream(t: &TargetResult, scale: &Scale, color: bool) -> String {
    let Some(upstream) = &t.upstream_us else {
        return String::new();
    };
    let rows: Vec<(String, &PhaseSummary)> = upstream
        .envoy_upstream_service_time
        .iter()
        .map(|p| ("envoy".to_string(), p))
        .chain(
            upstream
                .server_timing
                .iter()
                .map(|m| (format!("server-timing {}", printable(&m.name)), &m.dur)),
        )
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = table("upstream", &rows);
    let _ = writeln!(
        out,
        "  from the responses' headers{}",
        if upstream.envoy_upstream_service_time.is_some() {
            "; envoy: X-Envoy-Upstream-Service-Time, whole milliseconds"
        } else {
            ""
        }
    );
    if upstream.server_timing_dropped > 0 {
        let _ = writeln!(
            out,
            "  {} Server-Timing value(s) of metric names beyond the first 8 not recorded",
            upstream.server_timing_dropped
        );
    }
    for (name, p) in &rows {
        if let Ok(histogram) = result::decode_histogram(&p.histogram)
            && !histogram.is_empty()
        {
            let _ = writeln!(out, "\n  upstream histogram: {name}");
            out.push_str(&levels::bars(&histogram, scale, color));
        }
    }
    out
}

/// Streamed responses of the whole run: how many, how many were Server-Sent Events streams
/// and their events, then the time to the first body byte and the time between events; empty
/// when no body was streamed.
pub(crate) fn streaming(t: &TargetResult) -> String {
    let Some(s) = &t.streaming else {
        return String::new();
    };
    let rows: Vec<(String, &PhaseSummary)> = [("body ttfb", &s.ttfb), ("event gap", &s.event_gap)]
        .into_iter()
        .filter_map(|(name, p)| p.as_ref().map(|p| (name.to_string(), p)))
        .collect();
    let mut out = table("streaming", &rows);
    if out.is_empty() {
        out.push('\n');
    }
    let _ = write!(out, "  {} streamed response(s)", s.responses);
    if s.sse_responses > 0 {
        let _ = write!(
            out,
            ", {} of them Server-Sent Events: {} event(s), {:.1} per stream",
            s.sse_responses,
            s.events,
            s.events as f64 / s.sse_responses as f64
        );
    }
    out.push('\n');
    if s.ttfb.is_some() {
        let _ = writeln!(
            out,
            "  body ttfb: from when the request was due to the body's first byte"
        );
    }
    out
}

/// The messages of the gRPC and WebSocket targets, one row each: calls (gRPC) or exchanges
/// (WebSocket), messages sent and received, messages received per second, payload bytes;
/// then the streams' durations (gRPC server streams, WebSocket `receive_for`) in a table
/// like the phases'. Empty when no target counts messages.
pub(crate) fn messages(result: &RunResult) -> String {
    let targets: Vec<(String, &MessagesResult)> = result
        .targets
        .iter()
        .filter_map(|t| {
            let m = t.messages.as_ref()?;
            Some((
                format!("{} ({})", printable(&t.name), printable(&m.protocol)),
                m,
            ))
        })
        .collect();
    if targets.is_empty() {
        return String::new();
    }
    let width = targets
        .iter()
        .map(|(name, _)| name.chars().count())
        .chain(std::iter::once("messages".len()))
        .max()
        .unwrap_or(0);
    let mut out = format!(
        "\n  {:<width$} {:>10}{:>10}{:>10}{:>12}{:>14}{:>14}\n",
        "messages", "calls", "sent", "received", "received/s", "payload sent", "payload recv"
    );
    for (name, m) in &targets {
        let _ = writeln!(
            out,
            "  {name:<width$} {:>10}{:>10}{:>10}{:>12}{:>14}{:>14}",
            m.exchanges,
            m.sent,
            m.received,
            Unit::PerSecond.format(m.received_per_second),
            format_bytes(m.bytes_sent),
            format_bytes(m.bytes_received)
        );
    }
    let _ = writeln!(
        out,
        "  calls: gRPC calls and WebSocket exchanges that ended; payload: the messages' own bytes"
    );
    let streams: Vec<(String, &PhaseSummary)> = targets
        .iter()
        .filter_map(|(name, m)| Some((name.clone(), m.stream_duration.as_ref()?)))
        .collect();
    if !streams.is_empty() {
        out.push_str(&table("stream duration", &streams));
        let _ = writeln!(
            out,
            "  stream duration: from when due to the stream's end (gRPC server streams, WebSocket \
             receive_for); latency: to the first message"
        );
    }
    out
}
