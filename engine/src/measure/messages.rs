//! Messages of the protocols that carry them: a gRPC call's (length-prefixed protobuf
//! messages on an HTTP/2 stream) and a WebSocket exchange's (text and binary messages). The
//! transport counts one request's ([`MessageCounts`]); a target's are summed up in
//! [`Messages`].

use std::time::Instant;

use super::{ErrorKind, Recorder};

/// The messages of one request (a gRPC call, a WebSocket exchange), counted by its transport
/// and recorded with it. Payload bytes only: gRPC's 5-byte prefixes and WebSocket's frame
/// headers are in the request's `bytes_sent`/`bytes_received`, not here.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MessageCounts {
    /// Messages sent.
    pub(crate) sent: u64,
    /// Messages received.
    pub(crate) received: u64,
    /// Payload bytes of the messages sent.
    pub(crate) bytes_sent: u64,
    /// Payload bytes of the messages received.
    pub(crate) bytes_received: u64,
    /// The instant the request's latency runs to when it is not the request's end: a gRPC
    /// server stream's first message, a WebSocket `receive_for` exchange's first message.
    /// `None`: the latency runs to the end (a unary call, a WebSocket reply), or no message
    /// came.
    pub(crate) answered_at: Option<Instant>,
    /// A response came, but the call failed by the protocol's own status: a gRPC status not
    /// in `expect_status` (its kind, `grpc_unavailable`...). The response is counted (its
    /// latency recorded) and the request is an error of this kind, as an HTTP response with
    /// an unexpected status is.
    pub(crate) failure: Option<ErrorKind>,
}

impl MessageCounts {
    /// Ready for the next request.
    pub(crate) fn reset(&mut self) {
        *self = MessageCounts::default();
    }
}

/// A target's messages, summed over its requests (gRPC calls, WebSocket exchanges).
#[derive(Debug, Clone, Default)]
pub(crate) struct Messages {
    /// Requests whose messages were counted: gRPC calls and WebSocket exchanges that ended
    /// (with a response or a failure after the request was sent).
    pub(crate) exchanges: u64,
    /// Messages sent.
    pub(crate) sent: u64,
    /// Messages received.
    pub(crate) received: u64,
    /// Payload bytes sent.
    pub(crate) bytes_sent: u64,
    /// Payload bytes received.
    pub(crate) bytes_received: u64,
    /// Streams (gRPC server streams, WebSocket `receive_for`): from when the request was due
    /// to its end (the trailers, the end of `receive_for`), µs. The request's latency runs to
    /// its first message ([`MessageCounts::answered_at`]).
    pub(crate) stream_duration_us: Recorder,
}

impl Messages {
    /// Records one request's `counts`: due at `due`, ended at `end` (a stream's duration is
    /// recorded when `counts.answered_at` is set).
    pub(crate) fn record(&mut self, counts: &MessageCounts, due: Instant, end: Instant) {
        self.exchanges += 1;
        self.sent += counts.sent;
        self.received += counts.received;
        self.bytes_sent += counts.bytes_sent;
        self.bytes_received += counts.bytes_received;
        if counts.answered_at.is_some() {
            let us = end.saturating_duration_since(due).as_micros();
            self.stream_duration_us
                .record(u64::try_from(us).unwrap_or(u64::MAX).max(1));
        }
    }

    /// Adds `other` into `self`.
    pub(crate) fn merge(&mut self, other: &Messages) {
        self.exchanges += other.exchanges;
        self.sent += other.sent;
        self.received += other.received;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.stream_duration_us.merge(&other.stream_duration_us);
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn a_stream_records_its_duration_and_a_unary_call_does_not() {
        let due = Instant::now();
        let end = due + Duration::from_millis(30);
        let mut messages = Messages::default();
        let unary = MessageCounts {
            sent: 1,
            received: 1,
            bytes_sent: 10,
            bytes_received: 12,
            answered_at: None,
            failure: None,
        };
        messages.record(&unary, due, end);
        let stream = MessageCounts {
            received: 5,
            answered_at: Some(due + Duration::from_millis(2)),
            ..unary
        };
        messages.record(&stream, due, end);
        let mut merged = Messages::default();
        merged.merge(&messages);
        assert_eq!(merged.exchanges, 2);
        assert_eq!(merged.received, 6);
        assert_eq!(merged.bytes_received, 24);
        assert_eq!(merged.stream_duration_us.len(), 1);
    }
}
