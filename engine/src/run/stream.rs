//! What one request's exchange observes besides its status: the bytes it moved
//! ([`Traffic`]), when its write ended and the upstream-time headers of its response
//! ([`Seen`]).
//!
//! One `Traffic` per virtual user, reset (not rebuilt) for each request: no allocation per
//! request.

use std::time::Instant;

/// Most bytes of `Server-Timing` field values kept per response; metrics beyond are cut.
pub(crate) const SERVER_TIMING_BYTES: usize = 1024;

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
}

impl Traffic {
    /// Ready for the next request: counts zeroed, observations cleared.
    pub(crate) fn reset(&mut self) {
        self.sent = 0;
        self.received = 0;
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
}

impl Seen {
    fn reset(&mut self) {
        self.written_at = None;
        self.envoy_us = None;
        self.server_timing.clear();
    }

    /// Notes the header fields of a response head (HTTP/1.1: the status line and the fields,
    /// as received) that matter here. One pass over the lines; nothing is kept unless a field
    /// named here is present.
    #[inline]
    pub(crate) fn head(&mut self, head: &[u8]) {
        for line in head.split(|&b| b == b'\n') {
            // Only the names below: `Server-Timing`, `X-Envoy-...`.
            if !matches!(line.first(), Some(b's' | b'S' | b'x' | b'X')) {
                continue;
            }
            if let Some(colon) = line.iter().position(|&b| b == b':') {
                self.header(&line[..colon], line[colon + 1..].trim_ascii());
            }
        }
    }

    /// Notes one header field of the response, if it is one that matters here.
    #[inline]
    pub(crate) fn header(&mut self, name: &[u8], value: &[u8]) {
        if name.eq_ignore_ascii_case(b"server-timing") {
            let comma = usize::from(!self.server_timing.is_empty());
            let room = SERVER_TIMING_BYTES.saturating_sub(self.server_timing.len() + comma);
            if room > 0 && !value.is_empty() {
                self.server_timing.extend_from_slice(&b","[..comma]);
                self.server_timing
                    .extend_from_slice(&value[..value.len().min(room)]);
            }
        } else if name.eq_ignore_ascii_case(b"x-envoy-upstream-service-time") {
            self.envoy_us = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(|ms| ms.saturating_mul(1000));
        }
    }

    /// Notes that the request has been written, now.
    #[inline]
    pub(crate) fn written(&mut self) {
        self.written_at = Some(Instant::now());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_headers_are_found_in_any_case_and_cleared_on_reset() {
        let mut seen = Seen::default();
        seen.head(
            b"HTTP/1.1 200 OK\r\nserver-timing: db;dur=12.5\r\nContent-Length: 2\r\n\
              X-Envoy-Upstream-Service-Time: 7\r\nSERVER-TIMING: app;dur=3\r\nX-Other: 1\r\n\r\n",
        );
        assert_eq!(seen.envoy_us, Some(7_000));
        assert_eq!(seen.server_timing, b"db;dur=12.5,app;dur=3");
        seen.header(b"x-envoy-upstream-service-time", b"not a number");
        assert_eq!(seen.envoy_us, None);
        seen.header(b"server-timing", &[b'x'; 2 * SERVER_TIMING_BYTES]);
        assert!(seen.server_timing.len() <= SERVER_TIMING_BYTES);
        seen.reset();
        assert!(seen.server_timing.is_empty() && seen.envoy_us.is_none());
        let capacity = seen.server_timing.capacity();
        seen.head(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n");
        assert!(seen.server_timing.is_empty());
        assert_eq!(
            seen.server_timing.capacity(),
            capacity,
            "kept for the next response"
        );
    }
}
