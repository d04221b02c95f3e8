//! What one request's exchange observes besides its status: the bytes it moved
//! ([`Traffic`]) and when its write ended ([`Seen`]).
//!
//! One `Traffic` per virtual user, reset (not rebuilt) for each request: no allocation per
//! request.

use std::time::Instant;

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
}

impl Seen {
    fn reset(&mut self) {
        self.written_at = None;
    }

    /// Notes that the request has been written, now.
    #[inline]
    pub(crate) fn written(&mut self) {
        self.written_at = Some(Instant::now());
    }
}
