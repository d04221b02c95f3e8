//! Histograms summed up for the artifact: a latency histogram's percentiles and moments
//! ([`summary`]), a phase histogram's summary with the histogram itself ([`phase_summary`]),
//! and a target's phase, upstream, streaming and message histograms in their artifact form. Read by
//! `build.rs` (a run), `flow.rs`, `health.rs` and `merge/` (summaries recomputed from the
//! merged histograms).

use hdrhistogram::Histogram;

use super::{
    LatencySummary, MessagesResult, PhaseSummary, PhasesResult, ServerTimingMetric,
    StreamingResult, UpstreamResult, encode_histogram,
};
use crate::measure::{Messages, Phases, Streaming, Upstream, rate};

/// Percentiles and moments of a latency histogram; `None` when it is empty.
pub(crate) fn summary(h: &Histogram<u64>) -> Option<LatencySummary> {
    (!h.is_empty()).then(|| LatencySummary {
        min_us: h.min(),
        mean_us: h.mean(),
        stdev_us: h.stdev(),
        p50_us: h.value_at_quantile(0.50),
        p90_us: h.value_at_quantile(0.90),
        p95_us: h.value_at_quantile(0.95),
        p99_us: h.value_at_quantile(0.99),
        p99_9_us: h.value_at_quantile(0.999),
        max_us: h.max(),
        p10_us: Some(h.value_at_quantile(0.10)),
        p25_us: Some(h.value_at_quantile(0.25)),
        p75_us: Some(h.value_at_quantile(0.75)),
        p99_99_us: Some(h.value_at_quantile(0.9999)),
    })
}

/// The summary of a histogram of microseconds, with the histogram; `None` when it is empty.
fn phase_summary(h: &Histogram<u64>) -> Option<PhaseSummary> {
    (!h.is_empty()).then(|| PhaseSummary {
        count: h.len(),
        min_us: h.min(),
        mean_us: h.mean(),
        p50_us: h.value_at_quantile(0.50),
        p90_us: h.value_at_quantile(0.90),
        p99_us: h.value_at_quantile(0.99),
        max_us: h.max(),
        histogram: encode_histogram(h),
    })
}

/// The summary of a target's upstream-time histograms; `None` when nothing was recorded.
pub(crate) fn upstream_result(upstream: &Upstream) -> Option<UpstreamResult> {
    (!upstream.is_empty()).then(|| UpstreamResult {
        envoy_upstream_service_time: phase_summary(&upstream.envoy_us),
        server_timing: upstream
            .server_timing_us
            .iter()
            .filter_map(|(name, h)| {
                Some(ServerTimingMetric {
                    name: name.clone(),
                    dur: phase_summary(h)?,
                })
            })
            .collect(),
        server_timing_dropped: upstream.server_timing_dropped,
    })
}

/// The summary of a target's streamed responses; `None` when there were none.
pub(crate) fn streaming_result(streaming: &Streaming) -> Option<StreamingResult> {
    (streaming.responses > 0).then(|| StreamingResult {
        responses: streaming.responses,
        sse_responses: streaming.sse_responses,
        events: streaming.events,
        ttfb: phase_summary(&streaming.ttfb_us),
        event_gap: phase_summary(&streaming.event_gap_us),
    })
}

/// The summary of the messages of a target of `protocol` (`grpc`, `ws`), received per second
/// of `elapsed_s` (as a target's `rps`). Always present for such a target, with zeros when
/// nothing ended.
pub(crate) fn messages_result(protocol: &str, m: &Messages, elapsed_s: f64) -> MessagesResult {
    MessagesResult {
        protocol: protocol.to_string(),
        exchanges: m.exchanges,
        sent: m.sent,
        received: m.received,
        bytes_sent: m.bytes_sent,
        bytes_received: m.bytes_received,
        received_per_second: rate(m.received, elapsed_s),
        stream_duration: phase_summary(&m.stream_duration_us),
    }
}

/// The summary of a target's phase histograms.
pub(crate) fn phases_result(phases: &Phases) -> PhasesResult {
    let summary = phase_summary;
    PhasesResult {
        connections_opened: phases.connections,
        tls_resumed: phases.tls_resumed,
        zero_rtt_attempted: phases.zero_rtt_attempted,
        zero_rtt_accepted: phases.zero_rtt_accepted,
        pre_connected: phases.pre_connected,
        dns: summary(&phases.dns_us),
        connect: summary(&phases.connect_us),
        tls: summary(&phases.tls_us),
        upgrade: summary(&phases.upgrade_us),
        ttfb: summary(&phases.ttfb_us),
        body: summary(&phases.body_us),
        write: summary(&phases.write_us),
        stream_wait: summary(&phases.stream_wait_us),
    }
}
