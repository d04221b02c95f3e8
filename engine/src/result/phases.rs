//! The phase timings of a target in the result artifact (a part of [`super::artifact`]'s
//! types, in a file of its own).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::PhaseSummary;
use super::health_record::is_zero;

/// Phase timings of a target, each absent when it has no sample (`dns` for an IP address,
/// `tls` over cleartext, setup phases when every connection was opened before measuring).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PhasesResult {
    /// Connections whose setup was reported in the measured window (each has a `connect`
    /// sample): opened while measuring, or before the clock started (`pre_connected`).
    pub connections_opened: u64,
    /// Of those, TLS handshakes that resumed an earlier session (HTTP/3: those whose 0-RTT
    /// was accepted; a QUIC resumption without early data is not seen).
    pub tls_resumed: u64,
    /// Of those, HTTP/3 connections that tried 0-RTT (sent their first request with the
    /// handshake, on a session ticket from an earlier connection).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zero_rtt_attempted: u64,
    /// Of those that tried, the ones whose early data the server accepted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub zero_rtt_accepted: u64,
    /// Of those, connections opened before the clock started (`load.pre_connect`): their
    /// setup is in no latency. `connections_opened - pre_connected` measured requests
    /// included a connect in their latency.
    #[serde(default)]
    pub pre_connected: u64,
    /// Host name resolution, per connection opened.
    pub dns: Option<PhaseSummary>,
    /// TCP connect, per connection opened.
    pub connect: Option<PhaseSummary>,
    /// TLS handshake, per connection opened; for HTTP/3 the whole QUIC handshake (transport
    /// and TLS 1.3 in one round trip), and `connect` has no sample.
    pub tls: Option<PhaseSummary>,
    /// WebSocket: the HTTP/1.1 upgrade (request written to `101 Switching Protocols`), per
    /// connection opened; absent for every other protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upgrade: Option<PhaseSummary>,
    /// Time to first byte: from the end of the request write until the first response byte
    /// (HTTP/1.1) or the response header block (HTTP/2), per response.
    pub ttfb: Option<PhaseSummary>,
    /// Body read: first byte (or header block) until the last byte, per response.
    pub body: Option<PhaseSummary>,
    /// Request write: from the first byte written to the last byte handed to the socket
    /// (HTTP/2: headers and body handed to the connection), per response. Absent in results
    /// written before it was measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<PhaseSummary>,
    /// Stream wait (HTTP/2): how long a request waited for a free stream on its connection,
    /// the server's `SETTINGS_MAX_CONCURRENT_STREAMS` being reached, before `write`; part
    /// of its latency. One sample per request that waited; absent when none did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_wait: Option<PhaseSummary>,
}
