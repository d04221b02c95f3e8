//! A target's optional measures in the artifact, each absent when the target has none:
//! the upstream time its responses reported ([`UpstreamResult`]), its streamed bodies
//! ([`StreamingResult`]) and its gRPC and WebSocket messages ([`MessagesResult`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::PhaseSummary;

/// Upstream time as the responses reported it in their headers, in microseconds (the headers
/// give milliseconds), each in a histogram like the phases'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct UpstreamResult {
    /// `X-Envoy-Upstream-Service-Time` (Envoy's time to the upstream's response, whole
    /// milliseconds in the header), per response that had it; absent when none had it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub envoy_upstream_service_time: Option<PhaseSummary>,
    /// The W3C `Server-Timing` header's `dur` values (milliseconds in the header), per metric
    /// name: at most 8 names per target, in the order first seen.
    #[serde(default)]
    pub server_timing: Vec<ServerTimingMetric>,
    /// `Server-Timing` `dur` values of metric names beyond the first 8, not recorded.
    #[serde(default)]
    pub server_timing_dropped: u64,
}

/// A target's streamed responses: bodies sent in chunks of unknown total length (HTTP/1.1
/// chunked, HTTP/2 without `Content-Length`) or as an event stream (`text/event-stream`).
/// Their time to last byte (TTLB) is their latency: it ends at the last byte too.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StreamingResult {
    /// Complete responses whose body was streamed.
    pub responses: u64,
    /// Of those, Server-Sent Events streams (`Content-Type: text/event-stream`).
    pub sse_responses: u64,
    /// Events the event streams delivered (a blank line ends an event that had a field).
    pub events: u64,
    /// Time to first byte of the body, microseconds: from when the request was due (the
    /// latency's origin) to the first byte of its body, per streamed response with a body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttfb: Option<PhaseSummary>,
    /// Time between consecutive events of an event stream, microseconds (at most 4,096 per
    /// response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_gap: Option<PhaseSummary>,
}

/// A target's messages (`protocol: grpc` calls, WebSocket exchanges). Payload bytes only:
/// gRPC's 5-byte prefixes and WebSocket's frame headers count in the target's
/// `bytes_sent`/`bytes_received`, not here.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MessagesResult {
    /// `grpc` or `ws`.
    pub protocol: String,
    /// Calls or exchanges that ended (with a response, or failed after being sent).
    pub exchanges: u64,
    /// Messages sent.
    pub sent: u64,
    /// Messages received.
    pub received: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
    /// Messages received per second of the measured window.
    pub received_per_second: f64,
    /// Streams (gRPC server streams, WebSocket `receive_for`), microseconds from when each
    /// was due to its end; their latency is the time to their first message. Absent when
    /// there were none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_duration: Option<PhaseSummary>,
}

/// The `dur` values of one `Server-Timing` metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerTimingMetric {
    /// The metric's name, as the server wrote it (e.g. `db`, `cache`).
    pub name: String,
    /// Its `dur` values, microseconds; `count` is the responses that reported it.
    pub dur: PhaseSummary,
}
