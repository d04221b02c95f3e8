//! What one request's exchange observes besides its status: the bytes it moved
//! ([`Traffic`]), when its write ended, the upstream-time headers of its response and, for a
//! streamed body, when its data and its Server-Sent Events came ([`Seen`]).
//!
//! A body is streamed when it is sent in chunks (HTTP/1.1 chunked transfer coding; HTTP/2
//! without `Content-Length`) or is an event stream (`Content-Type: text/event-stream`,
//! Server-Sent Events, WHATWG HTML §9.2). Events are counted as the event-stream grammar
//! dispatches them: a blank line ends an event that had at least one field line (comment
//! lines, starting with `:`, are not fields); lines end with CRLF, LF or CR.
//!
//! One `Traffic` per virtual user, reset (not rebuilt) for each request: no allocation per
//! request.

use std::time::Instant;

use crate::measure::{ErrorCode, Streaming};

/// Most bytes of `Server-Timing` field values kept per response; the metrics that do not fit
/// whole are left out.
pub(crate) const SERVER_TIMING_BYTES: usize = 1024;

/// Most times between events kept per response (the events beyond are still counted).
pub(crate) const MAX_EVENT_GAPS: usize = 4096;

/// Longest `h3` entry of an `Alt-Svc` field value kept, bytes (`h3=":8443"` is 10); a
/// longer one is not kept.
pub(crate) const ALT_SVC_H3_BYTES: usize = 128;

/// The bytes a request has moved so far, counted as they go, so that a request that fails
/// or times out still counts what it sent and received; and what its exchange saw.
#[derive(Debug, Default)]
pub(crate) struct Traffic {
    /// Request bytes written (HTTP/1.1: head and body; HTTP/2: the request as HTTP/1.1
    /// would send it, once the stream is open).
    pub(crate) sent: u64,
    /// Response bytes read (HTTP/1.1: head and body; HTTP/2: DATA payload).
    pub(crate) received: u64,
    /// What the exchange saw of the request and its response.
    pub(crate) seen: Seen,
    /// The code the peer gave with the failure of this request (HTTP/2 RST_STREAM or GOAWAY,
    /// HTTP/3 stream reset or connection close), set by the exchange that failed; counted
    /// beside the error's kind.
    pub(crate) error_code: Option<ErrorCode>,
    /// gRPC and WebSocket: the messages of this request, counted by its transport.
    pub(crate) messages: crate::measure::MessageCounts,
}

impl Traffic {
    /// Ready for the next request: counts zeroed, observations cleared.
    pub(crate) fn reset(&mut self) {
        self.sent = 0;
        self.received = 0;
        self.error_code = None;
        self.messages.reset();
        self.seen.reset();
    }
}

/// What an exchange saw besides the status and the bytes.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// When the last byte of the request was handed to the socket (HTTP/1.1, after the
    /// flush) or to the connection (HTTP/2: headers and body queued on the stream); `None`
    /// until then.
    pub(crate) written_at: Option<Instant>,
    /// `X-Envoy-Upstream-Service-Time` (whole milliseconds in the header), microseconds.
    pub(crate) envoy_us: Option<u64>,
    /// The response's `Server-Timing` field values, joined by `,`, at most
    /// [`SERVER_TIMING_BYTES`] (parsed when the response is recorded: `measure::Upstream`).
    pub(crate) server_timing: Vec<u8>,
    /// The `h3` entry of the response's `Alt-Svc` (RFC 7838 §3), e.g. `h3=":8443"`, its
    /// parameters left out; empty when it offered no HTTP/3.
    pub(crate) alt_svc_h3: Vec<u8>,
    /// The body is streamed (see the module documentation).
    streamed: bool,
    /// The body is an event stream (`text/event-stream`).
    sse: bool,
    /// When the first byte of a streamed body arrived.
    first_data_at: Option<Instant>,
    /// Events dispatched so far.
    events: u64,
    /// When the last event was dispatched.
    last_event_at: Option<Instant>,
    /// Time between consecutive events, microseconds (at most [`MAX_EVENT_GAPS`]).
    event_gaps_us: Vec<u64>,
    /// Where the event-stream parser is: inside a line (not at its start) …
    in_line: bool,
    /// … a field line (not a comment) …
    field_line: bool,
    /// … the event has a field line …
    event_open: bool,
    /// … the last byte was a CR (a LF right after it ends no other line).
    after_cr: bool,
}

impl Seen {
    fn reset(&mut self) {
        self.written_at = None;
        self.envoy_us = None;
        self.server_timing.clear();
        self.alt_svc_h3.clear();
        self.streamed = false;
        self.sse = false;
        self.first_data_at = None;
        self.events = 0;
        self.last_event_at = None;
        self.event_gaps_us.clear();
        self.in_line = false;
        self.field_line = false;
        self.event_open = false;
        self.after_cr = false;
    }

    /// Notes, once the header fields are read, whether the body comes in chunks of unknown
    /// total length (HTTP/1.1 chunked; HTTP/2 without `Content-Length`).
    #[inline]
    pub(crate) fn streamed(&mut self, chunked: bool) {
        self.streamed = chunked || self.sse;
    }

    /// Notes bytes of the body (de-chunked) as they arrive: the first one's time, and the
    /// events of an event stream. Nothing for a body that is not streamed.
    #[inline]
    pub(crate) fn data(&mut self, bytes: &[u8]) {
        if !self.streamed || bytes.is_empty() {
            return;
        }
        self.first_data_at.get_or_insert_with(Instant::now);
        if self.sse {
            self.scan_events(bytes);
        }
    }

    /// Runs the event-stream parser over `bytes`; an event dispatched here is timed now.
    fn scan_events(&mut self, bytes: &[u8]) {
        let mut now = None;
        for &b in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, b == b'\r');
            if b == b'\n' && after_cr {
                continue;
            }
            if b != b'\r' && b != b'\n' {
                if !self.in_line {
                    self.in_line = true;
                    self.field_line = b != b':';
                }
                continue;
            }
            if self.in_line {
                self.event_open |= self.field_line;
                self.in_line = false;
            } else if std::mem::take(&mut self.event_open) {
                let at = *now.get_or_insert_with(Instant::now);
                if let Some(last) = self.last_event_at.replace(at)
                    && self.event_gaps_us.len() < MAX_EVENT_GAPS
                {
                    let gap = at.saturating_duration_since(last).as_micros();
                    self.event_gaps_us
                        .push(u64::try_from(gap).unwrap_or(u64::MAX));
                }
                self.events += 1;
            }
        }
    }

    /// Records a streamed body into `streaming`: the time from `due` (when the request was
    /// due: the latency's origin) to its first byte, its events and the times between them.
    /// Nothing for a body that was not streamed.
    #[inline]
    pub(crate) fn record_stream(&self, streaming: &mut Streaming, due: Instant) {
        if !self.streamed {
            return;
        }
        let first_us = self.first_data_at.map(|at| {
            u64::try_from(at.saturating_duration_since(due).as_micros()).unwrap_or(u64::MAX)
        });
        streaming.record(self.sse, first_us, self.events, &self.event_gaps_us);
    }

    /// Notes one header field of the response, if it is one that matters here.
    #[inline]
    pub(crate) fn header(&mut self, name: &[u8], value: &[u8]) {
        if name.eq_ignore_ascii_case(b"server-timing") {
            let comma = usize::from(!self.server_timing.is_empty());
            let room = SERVER_TIMING_BYTES.saturating_sub(self.server_timing.len() + comma);
            // What fits, cut after the last whole metric: a metric cut short could misread.
            let fits = if value.len() <= room {
                value
            } else {
                let end = value[..room].iter().rposition(|&b| b == b',').unwrap_or(0);
                &value[..end]
            };
            if !fits.is_empty() {
                self.server_timing.extend_from_slice(&b","[..comma]);
                self.server_timing.extend_from_slice(fits);
            }
        } else if name.eq_ignore_ascii_case(b"content-type") {
            self.sse = value
                .get(..17)
                .is_some_and(|v| v.eq_ignore_ascii_case(b"text/event-stream"));
        } else if name.eq_ignore_ascii_case(b"x-envoy-upstream-service-time") {
            self.envoy_us = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|ms| ms.saturating_mul(1000));
        } else if name.eq_ignore_ascii_case(b"alt-svc")
            && self.alt_svc_h3.is_empty()
            && let Some(entry) = h3_entry(value)
        {
            self.alt_svc_h3.extend_from_slice(entry);
        }
    }

    /// Notes that the request has been written, now.
    #[inline]
    pub(crate) fn written(&mut self) {
        self.written_at = Some(Instant::now());
    }
}

/// The `h3` alternative of an `Alt-Svc` field value (RFC 7838 §3: comma-separated
/// `protocol-id=alt-authority` entries, each with `;` parameters), without its parameters:
/// `h3=":8443"` of `h3=":8443"; ma=86400, h3-29=":8443"`. `None` when no entry's protocol
/// is exactly `h3` (drafts such as `h3-29` are not HTTP/3), or the entry is longer than
/// [`ALT_SVC_H3_BYTES`].
fn h3_entry(value: &[u8]) -> Option<&[u8]> {
    value
        .split(|&b| b == b',')
        .map(|entry| {
            let end = entry.iter().position(|&b| b == b';').unwrap_or(entry.len());
            entry[..end].trim_ascii()
        })
        .find(|entry| entry.starts_with(b"h3=") && entry.len() <= ALT_SVC_H3_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Notes the header fields of an HTTP/1.1 response head (as `h1`'s parser hands them to
    /// [`Seen::header`]) and whether its body is `chunked`.
    fn head(seen: &mut Seen, head: &[u8], chunked: bool) {
        for line in head.split(|&b| b == b'\n') {
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                seen.header(&line[..colon], line[colon + 1..].trim_ascii());
            }
        }
        seen.streamed(chunked);
    }

    #[test]
    fn the_h3_entry_of_alt_svc_is_kept() {
        let mut seen = Seen::default();
        head(
            &mut seen,
            b"HTTP/1.1 200 OK\r\nalt-svc: h3-29=\":8443\", h3=\":8443\"; ma=86400\r\n\r\n",
            false,
        );
        assert_eq!(seen.alt_svc_h3, b"h3=\":8443\"");
        seen.header(b"Alt-Svc", b"h3=\"other:1\"");
        assert_eq!(seen.alt_svc_h3, b"h3=\":8443\"", "the first kept");
        seen.reset();
        assert!(seen.alt_svc_h3.is_empty());
        for value in [
            &b"clear"[..],
            b"h2=\":443\"; ma=60",
            b"h3-29=\":443\"",
            b"xh3=\":1\"",
        ] {
            seen.header(b"ALT-SVC", value);
            assert!(seen.alt_svc_h3.is_empty(), "{value:?}");
        }
        let long = format!("h3=\"{}:1\"", "a".repeat(ALT_SVC_H3_BYTES));
        seen.header(b"alt-svc", long.as_bytes());
        assert!(seen.alt_svc_h3.is_empty(), "too long to keep");
        seen.header(b"alt-svc", b"h2=\":1\",h3=\"[::1]:8443\";persist=1");
        assert_eq!(seen.alt_svc_h3, b"h3=\"[::1]:8443\"");
    }

    #[test]
    fn upstream_headers_are_found_in_any_case_and_cleared_on_reset() {
        let mut seen = Seen::default();
        head(
            &mut seen,
            b"HTTP/1.1 200 OK\r\nserver-timing: db;dur=12.5\r\nContent-Length: 2\r\n\
              X-Envoy-Upstream-Service-Time: 7\r\nSERVER-TIMING: app;dur=3\r\nX-Other: 1\r\n\r\n",
            false,
        );
        assert_eq!(seen.envoy_us, Some(7_000));
        assert_eq!(seen.server_timing, b"db;dur=12.5,app;dur=3");
        seen.header(b"x-envoy-upstream-service-time", b"not a number");
        assert_eq!(seen.envoy_us, None);
        seen.header(b"server-timing", &[b'x'; 2 * SERVER_TIMING_BYTES]);
        assert_eq!(
            seen.server_timing, b"db;dur=12.5,app;dur=3",
            "no whole metric fits"
        );
        let long = format!("a;dur=1,{}", "b;dur=22,".repeat(SERVER_TIMING_BYTES / 9));
        seen.header(b"server-timing", long.as_bytes());
        assert!(seen.server_timing.len() <= SERVER_TIMING_BYTES);
        assert!(
            seen.server_timing.ends_with(b"b;dur=22"),
            "cut after a whole metric"
        );
        seen.reset();
        assert!(seen.server_timing.is_empty() && seen.envoy_us.is_none());
        let capacity = seen.server_timing.capacity();
        head(
            &mut seen,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
            false,
        );
        assert!(seen.server_timing.is_empty());
        assert_eq!(
            seen.server_timing.capacity(),
            capacity,
            "kept for the next response"
        );
    }

    /// The events an event stream delivered in `pieces`, split anywhere.
    fn events(pieces: &[&[u8]]) -> (u64, usize) {
        let mut seen = Seen::default();
        head(
            &mut seen,
            b"HTTP/1.1 200 OK\r\nContent-Type: Text/Event-Stream; charset=utf-8\r\n\r\n",
            false,
        );
        for piece in pieces {
            seen.data(piece);
        }
        (seen.events, seen.event_gaps_us.len())
    }

    #[test]
    fn events_are_counted_as_the_event_stream_grammar_dispatches_them() {
        let stream: &[u8] =
            b": comment only\n\ndata: a\n\nevent: x\r\ndata: b\r\n\r\ndata: c\rdata: d\r\r\n\n\ndata: e";
        for split in 0..=stream.len() {
            let (a, b) = stream.split_at(split);
            assert_eq!(events(&[a, b]), (3, 2), "split at {split}");
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(events(&bytes), (3, 2));
    }

    #[test]
    fn only_streamed_bodies_are_timed() {
        let mut seen = Seen::default();
        head(
            &mut seen,
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
            false,
        );
        seen.data(b"data: a\n\n");
        assert!(seen.first_data_at.is_none() && seen.events == 0);
        seen.reset();
        head(
            &mut seen,
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
            true,
        );
        seen.data(b"data: a\n\n");
        assert!(seen.first_data_at.is_some());
        assert_eq!(seen.events, 0, "not an event stream");
        let mut streaming = Streaming::default();
        seen.record_stream(&mut streaming, Instant::now());
        assert_eq!((streaming.responses, streaming.sse_responses), (1, 0));
    }
}
