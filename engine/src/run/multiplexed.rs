//! What the protocols share: the request a virtual user sends ([`Request`], its bytes an
//! [`Outgoing`]), read by every transport; and what HTTP/2 and HTTP/3 share besides their
//! connection slot (`super::slot`): the response of a stream, its head counted and captured as
//! an HTTP/1.1 head so that one set of checks reads every protocol, and a request rendered as
//! HTTP/1.1 bytes (a flow step's) taken apart into their form.

use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::measure::ErrorKind;
use crate::plan::TargetPlan;
use crate::run::h1::{self, Capture, Traffic};

/// The request to send.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Outgoing<'a> {
    /// The target's own, built in the plan: `request` (HTTP/1.1), `h2_request` and `body`
    /// (HTTP/2, HTTP/3).
    Planned,
    /// A complete HTTP/1.1 request (head and body) rendered for this request (a flow step's);
    /// HTTP/2 and HTTP/3 build their request from it ([`rendered_request`]).
    Rendered(&'a [u8]),
}

impl Outgoing<'_> {
    /// The HTTP/1.1 bytes of the request of `target`.
    pub(crate) fn bytes<'b>(&'b self, target: &'b TargetPlan) -> &'b [u8] {
        match self {
            Outgoing::Planned => &target.request,
            Outgoing::Rendered(bytes) => bytes,
        }
    }
}

/// One request as a transport sends it: whose it is, its bytes, and until when.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Request<'a> {
    /// The target whose request it is (its timeouts, checks, status sets, redirects).
    pub(crate) target: &'a TargetPlan,
    /// Its bytes: the target's own, or rendered (a flow step's).
    pub(crate) outgoing: Outgoing<'a>,
    /// When it times out: the instant it started plus the target's `timeout`. An HTTP/1.1
    /// read gives up then; HTTP/2 and HTTP/3 streams are ended by the caller's `Deadline`
    /// (`deadline.rs`).
    pub(crate) deadline: Instant,
}

impl<'a> Request<'a> {
    /// `target`'s own request (built in the plan), timing out at `deadline`.
    pub(crate) fn planned(target: &'a TargetPlan, deadline: Instant) -> Request<'a> {
        Request {
            target,
            outgoing: Outgoing::Planned,
            deadline,
        }
    }

    /// Its HTTP/1.1 bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.outgoing.bytes(self.target)
    }
}

/// `d` in whole microseconds, `u64::MAX` past it.
pub(crate) fn micros(d: Duration) -> u64 {
    d.as_micros().try_into().unwrap_or(u64::MAX)
}

/// A complete response on a stream of an HTTP/2 or HTTP/3 connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamResponse {
    pub(crate) status: u16,
    /// When the request was handed to the connection (a stream was free).
    pub(crate) sent_at: Instant,
    /// When the response's header block arrived.
    pub(crate) headers_at: Instant,
    /// HTTP/2: how long the request waited for a free stream before `sent_at`, µs (`None`
    /// when it did not wait), and the server's stream limit then
    /// ([`Timing`](crate::measure::Timing)'s fields of the same names).
    pub(crate) stream_wait_us: Option<u64>,
    pub(crate) peer_max_streams: Option<u32>,
}

/// Counts a response's head (HTTP/2 or HTTP/3) into `traffic` and, with `capture`, keeps it
/// there written as an HTTP/1.1 head (`HTTP/1.1 200 \r\n` and the header fields) so that one
/// set of checks reads every protocol. Returns its status code.
///
/// Errors: [`ErrorKind::Malformed`] for a status outside 100-599, as HTTP/1.1's
/// ([`h1::checked_status`]); nothing is counted then.
pub(crate) fn response_head(
    status: http::StatusCode,
    headers: &http::HeaderMap,
    traffic: &mut Traffic,
    capture: Option<&mut Capture>,
) -> Result<u16, ErrorKind> {
    let status = h1::checked_status(status.as_u16())?;
    for (name, value) in headers {
        traffic
            .seen
            .header(name.as_str().as_bytes(), value.as_bytes());
    }
    let length = headers.contains_key(http::header::CONTENT_LENGTH);
    traffic.seen.streamed(!length);
    if let Some(c) = capture {
        c.head.clear();
        c.body.clear();
        c.head
            .extend_from_slice(format!("HTTP/1.1 {status} \r\n").as_bytes());
        for (name, value) in headers {
            c.head.extend_from_slice(name.as_str().as_bytes());
            c.head.extend_from_slice(b": ");
            c.head.extend_from_slice(value.as_bytes());
            c.head.extend_from_slice(b"\r\n");
        }
        c.head.extend_from_slice(b"\r\n");
    }
    Ok(status)
}

/// Most header fields read from a rendered request.
const MAX_REQUEST_HEADERS: usize = 64;

/// The HTTP/2 form of `bytes`, a request of `target` rendered as HTTP/1.1 (a flow step's), and
/// its body: the head parsed (httparse) and built as the plan builds a target's
/// (`plan::h2_request`: `Host` as `:authority`, connection-specific fields left out). A gRPC
/// call's body, its message's JSON text, is encoded as one gRPC message
/// ([`GrpcPlan::encode`](crate::plan::GrpcPlan::encode)) and sent without `content-length`,
/// as gRPC clients send it. `None` when it is not a request HTTP/2 can carry (a variable's
/// value that is no valid header value, a message that is not of the method's input type).
pub(crate) fn rendered_request(
    target: &TargetPlan,
    bytes: &[u8],
) -> Option<(http::Request<()>, Bytes)> {
    let (method, path, mut headers, body) = parse_request(bytes)?;
    let https = target.transport.tls.is_some();
    let body = match &target.grpc {
        Some(grpc) => {
            headers.retain(|(name, _)| !name.eq_ignore_ascii_case("content-length"));
            grpc.encode(body).ok()?
        }
        None => Bytes::copy_from_slice(body),
    };
    let mut request =
        crate::plan::h2_request(method, path, &target.endpoint, https, &headers, &body).ok()?;
    if target.grpc.is_some() {
        request.headers_mut().remove(http::header::CONTENT_LENGTH);
    }
    Some((request, body))
}

/// An HTTP/1.1 request taken apart: method, path, header fields (name, value) and body.
pub(crate) type Parts<'a> = (&'a str, &'a str, Vec<(String, String)>, &'a [u8]);

/// The method, path, header fields and body of an HTTP/1.1 request's bytes.
pub(crate) fn parse_request(bytes: &[u8]) -> Option<Parts<'_>> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_REQUEST_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let httparse::Status::Complete(len) = request.parse(bytes).ok()? else {
        return None;
    };
    let fields = request
        .headers
        .iter()
        .map(|h| {
            Some((
                h.name.to_string(),
                std::str::from_utf8(h.value).ok()?.to_string(),
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    Some((request.method?, request.path?, fields, &bytes[len..]))
}
