//! A gRPC call's response on an HTTP/2 stream (gRPC over HTTP/2, grpc/grpc
//! `doc/PROTOCOL-HTTP2.md`): its DATA split into length-prefixed messages ([`Frames`]), each
//! counted and decoded as the method's output type, and its outcome read from the
//! `grpc-status` trailer (or the header block of a trailers-only response), an HTTP status
//! other than 200 mapped as grpc/grpc `doc/http-grpc-status-mapping.md` maps it. The call's
//! failure by its status goes to [`MessageCounts::failure`]; a message too large, compressed
//! or undecodable ends the call with an error.
//!
//! With a capture, the trailers are written after the head's fields (so that `header:`
//! checks and extractors read `grpc-status` and `grpc-message`) and the body is the decoded
//! message as JSON text (a unary call) or a JSON array of the messages (a server stream), so
//! that `json:` checks and extractors read gRPC responses as they read HTTP ones.

use std::time::Instant;

use prost_reflect::DynamicMessage;

use crate::measure::{ErrorKind, MessageCounts};
use crate::plan::GrpcPlan;
use crate::plan::grpc::PREFIX_BYTES;
use crate::run::h1::Capture;

/// Most messages of a server stream kept for checks; the rest are counted and checked for
/// their type, not kept.
pub(crate) const MAX_KEPT_MESSAGES: usize = 1_000;

/// The gRPC status `UNKNOWN`: a call whose status is missing or unreadable.
const UNKNOWN: u32 = 2;

/// Length-prefixed gRPC messages read from DATA chunks, a message's bytes kept across chunk
/// boundaries (each message: a compressed flag, a big-endian `u32` length, the payload).
#[derive(Debug, Default)]
pub(crate) struct Frames {
    /// The start of a message whose end has not come yet (its prefix, whole or in part,
    /// then its payload so far).
    partial: Vec<u8>,
}

impl Frames {
    /// Reads `data`, the next chunk of the stream, calling `each` with the payload of every
    /// message it completes, in order.
    ///
    /// Errors: [`ErrorKind::GrpcResourceExhausted`] for a message longer than `max_bytes`
    /// (seen from its prefix, before its payload is read); [`ErrorKind::Malformed`] for a
    /// compressed message (no `grpc-accept-encoding` is sent); or `each`'s error.
    pub(crate) fn read(
        &mut self,
        data: &[u8],
        max_bytes: usize,
        mut each: impl FnMut(&[u8]) -> Result<(), ErrorKind>,
    ) -> Result<(), ErrorKind> {
        let mut rest = data;
        if !self.partial.is_empty() {
            let have = self.partial.len();
            if have < PREFIX_BYTES {
                let take = (PREFIX_BYTES - have).min(rest.len());
                self.partial.extend_from_slice(&rest[..take]);
                rest = &rest[take..];
                if self.partial.len() < PREFIX_BYTES {
                    return Ok(());
                }
            }
            let whole = PREFIX_BYTES + payload_length(&self.partial, max_bytes)?;
            let take = (whole - self.partial.len()).min(rest.len());
            self.partial.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.partial.len() < whole {
                return Ok(());
            }
            each(&self.partial[PREFIX_BYTES..])?;
            self.partial.clear();
        }
        while rest.len() >= PREFIX_BYTES {
            let whole = PREFIX_BYTES + payload_length(rest, max_bytes)?;
            if rest.len() < whole {
                break;
            }
            each(&rest[PREFIX_BYTES..whole])?;
            rest = &rest[whole..];
        }
        self.partial.extend_from_slice(rest);
        Ok(())
    }

    /// Whether the stream ended inside a message (a truncated message).
    pub(crate) fn is_partial(&self) -> bool {
        !self.partial.is_empty()
    }
}

/// The payload length of the message whose prefix starts `bytes` (at least
/// [`PREFIX_BYTES`] long); errors as [`Frames::read`]'s.
fn payload_length(bytes: &[u8], max_bytes: usize) -> Result<usize, ErrorKind> {
    if bytes[0] != 0 {
        return Err(ErrorKind::Malformed);
    }
    let length = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]);
    let length = usize::try_from(length).unwrap_or(usize::MAX);
    if length > max_bytes {
        return Err(ErrorKind::GrpcResourceExhausted);
    }
    Ok(length)
}

/// The response of one gRPC call, read as it arrives.
pub(crate) struct Call<'a> {
    plan: &'a GrpcPlan,
    /// The response's HTTP status: 200 carries gRPC messages; any other is mapped to a gRPC
    /// status when `grpc-status` is missing, its body not read as messages.
    http_status: u16,
    /// The response's header block (`grpc-status` there: a trailers-only response).
    headers: http::HeaderMap,
    frames: Frames,
    /// The messages decoded as JSON for a capture; `None` when none is kept.
    kept: Option<Vec<serde_json::Value>>,
}

impl<'a> Call<'a> {
    /// A response of a call of `plan` whose head came with `http_status` and `headers`; the
    /// messages are kept as JSON when `keep` (a capture wants the body).
    pub(crate) fn new(
        plan: &'a GrpcPlan,
        http_status: u16,
        headers: http::HeaderMap,
        keep: bool,
    ) -> Call<'a> {
        Call {
            plan,
            http_status,
            headers,
            frames: Frames::default(),
            kept: keep.then(Vec::new),
        }
    }

    /// Reads `data`, the next DATA chunk: counts its messages into `counts` (received,
    /// payload bytes; a server stream's first one sets `answered_at`) and decodes each.
    ///
    /// Errors: as [`Frames::read`]'s; [`ErrorKind::Malformed`] for a message that is not of
    /// the method's output type, or a second message of a unary call.
    pub(crate) fn data(
        &mut self,
        data: &[u8],
        counts: &mut MessageCounts,
    ) -> Result<(), ErrorKind> {
        if self.http_status != 200 {
            return Ok(());
        }
        let plan = self.plan;
        let kept = &mut self.kept;
        self.frames.read(data, plan.max_message_bytes, |payload| {
            counts.received += 1;
            counts.bytes_received += payload.len() as u64;
            if plan.server_streaming {
                counts.answered_at.get_or_insert_with(Instant::now);
            } else if counts.received > 1 {
                return Err(ErrorKind::Malformed);
            }
            match kept {
                Some(kept) if kept.len() < MAX_KEPT_MESSAGES => {
                    kept.push(plan.decode(payload).map_err(|_| ErrorKind::Malformed)?);
                }
                _ => {
                    DynamicMessage::decode(plan.method.output(), payload)
                        .map_err(|_| ErrorKind::Malformed)?;
                }
            }
            Ok(())
        })
    }

    /// Ends the call with its `trailers` (`None`: none came): its status not in
    /// `expect_status` sets `counts.failure`; with `capture`, the trailers and the messages
    /// are written there (see the module's doc).
    ///
    /// Errors: [`ErrorKind::Malformed`] for a stream that ended inside a message.
    pub(crate) fn finish(
        self,
        trailers: Option<&http::HeaderMap>,
        counts: &mut MessageCounts,
        capture: Option<&mut Capture>,
    ) -> Result<(), ErrorKind> {
        if self.frames.is_partial() {
            return Err(ErrorKind::Malformed);
        }
        let status = trailers
            .and_then(|t| t.get("grpc-status"))
            .or_else(|| self.headers.get("grpc-status"));
        let code = match status {
            Some(value) => std::str::from_utf8(value.as_bytes())
                .ok()
                .and_then(|s| s.parse::<u32>().ok())
                .unwrap_or(UNKNOWN),
            None if self.http_status != 200 => status_of_http(self.http_status),
            None => UNKNOWN,
        };
        if !self.plan.expects(code) {
            // OK itself can be unexpected (`expect_status` without it).
            counts.failure =
                Some(ErrorKind::from_grpc_status(code).unwrap_or(ErrorKind::UnexpectedStatus));
        }
        if let Some(capture) = capture {
            self.capture(trailers, capture);
        }
        Ok(())
    }

    /// Writes `trailers` after the captured head's fields and the kept messages as the body.
    fn capture(self, trailers: Option<&http::HeaderMap>, capture: &mut Capture) {
        if let Some(trailers) = trailers
            && capture.head.ends_with(b"\r\n\r\n")
        {
            capture.head.truncate(capture.head.len() - 2);
            for (name, value) in trailers {
                capture.head.extend_from_slice(name.as_str().as_bytes());
                capture.head.extend_from_slice(b": ");
                capture.head.extend_from_slice(value.as_bytes());
                capture.head.extend_from_slice(b"\r\n");
            }
            capture.head.extend_from_slice(b"\r\n");
        }
        let Some(mut kept) = self.kept else {
            return;
        };
        let json = if self.plan.server_streaming {
            serde_json::to_vec(&kept)
        } else if kept.is_empty() {
            return;
        } else {
            serde_json::to_vec(&kept.swap_remove(0))
        };
        capture.body.clear();
        if let Ok(json) = json {
            capture.body(&json);
        }
    }
}

/// The gRPC status of a response whose HTTP status is `http_status` (not 200) and that has no
/// `grpc-status` (grpc/grpc `doc/http-grpc-status-mapping.md`).
fn status_of_http(http_status: u16) -> u32 {
    match http_status {
        400 => 13,             // INTERNAL
        401 => 16,             // UNAUTHENTICATED
        403 => 7,              // PERMISSION_DENIED
        404 => 12,             // UNIMPLEMENTED
        429 | 502..=504 => 14, // UNAVAILABLE
        _ => UNKNOWN,
    }
}

#[cfg(test)]
#[path = "grpc_tests.rs"]
mod tests;
