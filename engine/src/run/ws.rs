//! WebSocket connections (RFC 6455): the HTTP/1.1 upgrade, timed as its own phase, then
//! per request a message sent and its reply awaited (or messages received for a while).
//!
//! The framing is tokio-tungstenite's, over the run's own TCP or TLS stream. The upgrade is
//! made by a connection's first request, from that request's head (its path and headers: a
//! flow's cookies and templated headers go on the upgrade); its `101` is the status of every
//! request on the connection. Bytes are counted at the socket as they are written and read
//! (frame headers and the upgrade included; over TLS, the plaintext), so a request's
//! `bytes_sent`/`bytes_received` are exact; its messages' payload bytes are counted apart
//! ([`crate::measure::MessageCounts`]).

use std::cell::Cell;
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Instant;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Error as WsError;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::error::ProtocolError;
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, WebSocketConfig};

use super::h1::{Capture, Failure, Traffic};
use super::multiplexed::{Request, micros, parse_request};
use crate::measure::{CodeSpace, ErrorCode, ErrorKind, Setup, Timing};
use crate::plan::{TargetPlan, WsPlan};

/// The close code counted when the connection ended without a Close frame (RFC 6455 §7.1.5:
/// 1006, "abnormal closure").
const ABNORMAL_CLOSURE: u16 = 1006;

/// The close code counted for a Close frame without a code (RFC 6455 §7.1.5: 1005).
const NO_STATUS: u16 = 1005;

/// The close code sent, and counted, when a message is over `max_message_bytes` (RFC 6455
/// §7.4.1: 1009, "message too big").
const MESSAGE_TOO_BIG: u16 = 1009;

/// A byte stream the run opened (TCP, or TLS over TCP).
pub(crate) trait Socket: AsyncRead + AsyncWrite + Unpin {}

impl<T: AsyncRead + AsyncWrite + Unpin> Socket for T {}

/// Bytes written to and read from a connection's socket, so far.
#[derive(Debug, Default)]
struct Counts {
    sent: Cell<u64>,
    received: Cell<u64>,
}

/// A socket whose bytes are counted as they go (into counts shared with its [`WsConn`]).
struct Counted {
    socket: Box<dyn Socket>,
    counts: Rc<Counts>,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut *self.socket).poll_read(cx, buf);
        let read = (buf.filled().len() - before) as u64;
        self.counts.received.set(self.counts.received.get() + read);
        polled
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut *self.socket).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            self.counts.sent.set(self.counts.sent.get() + n as u64);
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.socket).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.socket).poll_shutdown(cx)
    }
}

/// Where a connection is.
enum State {
    /// Opened, not upgraded yet: the first request upgrades it.
    Fresh(Counted),
    /// Upgraded.
    Open(Box<WebSocketStream<Counted>>),
    /// Taken by an upgrade that did not finish (the connection is dropped then).
    Gone,
}

/// One virtual user's WebSocket connection to one endpoint: upgraded by its first request.
pub(crate) struct WsConn {
    state: State,
    /// The bytes its socket moved so far.
    counts: Rc<Counts>,
    /// Classifies its socket's read and write errors (TCP's or TLS's).
    io_error: fn(io::Error) -> ErrorKind,
    /// The connection's setup (DNS, connect, TLS, upgrade), until its first request takes it.
    setup: Option<Setup>,
}

/// A WebSocket request's response: the upgrade's status, its phases, its end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WsResponse {
    /// `101`, or the status of a refused upgrade.
    pub(crate) status: u16,
    /// Whether the connection may carry the next request.
    pub(crate) keep_alive: bool,
    /// Setup (on a connection's first request, the upgrade included), write (the message
    /// sent), TTFB (sent to the reply, or to the first message received), body 0.
    pub(crate) timing: Timing,
    /// When the reply arrived, or when `receive_for` ended.
    pub(crate) end: Instant,
}

/// A WebSocket connection on `socket`, opened with `setup`; `io_error` classifies its read
/// and write errors. Not upgraded yet: its first [`WsConn::exchange`] upgrades it (with that
/// request's head).
pub(crate) fn open(
    socket: Box<dyn Socket>,
    io_error: fn(io::Error) -> ErrorKind,
    setup: Setup,
) -> WsConn {
    let counts = Rc::new(Counts::default());
    WsConn {
        state: State::Fresh(Counted {
            socket,
            counts: counts.clone(),
        }),
        counts,
        io_error,
        setup: Some(setup),
    }
}

/// What answered a request's message: when (the reply, or the first message received), and
/// whether the connection may carry the next request.
struct Answer {
    at: Instant,
    end: Instant,
    keep_alive: bool,
}

impl WsConn {
    /// Marks its setup as made before the clock started (`load.pre_connect`).
    pub(crate) fn mark_pre_connected(&mut self) {
        if let Some(setup) = &mut self.setup {
            setup.pre_connected = true;
        }
    }

    /// Upgrades the connection (its first request) with the head of `request`, then sends the
    /// request's message (its body) and waits for its reply, or receives for the target's
    /// `receive_for`; with `capture`, the head is `HTTP/1.1 101` (with the upgrade response's
    /// header fields on the first request) and the body the reply (or the first message
    /// received). Counts the messages into `traffic.messages`, the socket's bytes into
    /// `traffic.sent`/`received`. `now`: the caller has just read the clock.
    ///
    /// Errors: a refused upgrade is a response with its status (not an error); a malformed
    /// upgrade answer or request, [`ErrorKind::Malformed`]; the connection closed before the
    /// reply, [`ErrorKind::WsClosed`] with the close code (1006 without a Close frame) in
    /// `traffic.error_code`; a message over `max_message_bytes`, the same with 1009 (the
    /// connection is closed with it).
    pub(crate) async fn exchange(
        &mut self,
        request: Request<'_>,
        now: Instant,
        mut capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<WsResponse, Failure> {
        let base = (self.counts.sent.get(), self.counts.received.get());
        let result = self
            .exchange_counted(request, now, capture.as_deref_mut(), traffic)
            .await;
        self.count_bytes(base, traffic);
        if let Err(Failure::Error(ErrorKind::WsClosed)) = result {
            traffic.error_code.get_or_insert(ErrorCode {
                space: CodeSpace::WebSocket,
                value: u64::from(ABNORMAL_CLOSURE),
            });
        }
        result
    }

    /// The socket's bytes since `base` into `traffic`.
    fn count_bytes(&self, (sent, received): (u64, u64), traffic: &mut Traffic) {
        traffic.sent = self.counts.sent.get() - sent;
        traffic.received = self.counts.received.get() - received;
    }

    async fn exchange_counted(
        &mut self,
        request: Request<'_>,
        now: Instant,
        mut capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<WsResponse, Failure> {
        let (_method, path, headers, body) =
            parse_request(request.bytes()).ok_or(ErrorKind::Malformed)?;
        let target = request.target;
        let plan = target.ws.as_deref();
        let mut sent_at = now;
        if matches!(self.state, State::Fresh(_)) {
            if let Some(refused) = self
                .upgrade(target, path, &headers, capture.as_deref_mut(), traffic)
                .await?
            {
                return Ok(refused);
            }
            sent_at = Instant::now();
        } else if let Some(c) = capture.as_deref_mut() {
            start_capture(c, 101, &[]);
        }
        let State::Open(ws) = &mut self.state else {
            return Err(ErrorKind::Closed.into());
        };
        let io_error = self.io_error;
        let sends = plan.map_or(!body.is_empty(), |p| p.sends);
        if sends {
            let binary = plan.is_some_and(|p| p.binary);
            let message = match std::str::from_utf8(body) {
                Ok(text) if !binary => Message::text(text),
                _ => Message::Binary(Bytes::copy_from_slice(body)),
            };
            ws.send(message)
                .await
                .map_err(|e| closed(e, io_error, traffic))?;
            traffic.messages.sent += 1;
            traffic.messages.bytes_sent += body.len() as u64;
        }
        let written_at = Instant::now();
        traffic.seen.written_at = Some(written_at);
        let answer = match plan.and_then(|p| p.receive_for) {
            Some(window) => {
                let end = written_at + window;
                receive_until(ws, end, io_error, capture, traffic).await?
            }
            None => {
                let reply = plan.and_then(|p| p.reply.as_deref());
                wait_reply(ws, reply, io_error, capture, traffic).await?
            }
        };
        Ok(WsResponse {
            status: 101,
            keep_alive: answer.keep_alive,
            timing: Timing {
                setup: self.setup.take(),
                stream_wait_us: None,
                peer_max_streams: None,
                write_us: micros(written_at.saturating_duration_since(sent_at)),
                ttfb_us: micros(answer.at.saturating_duration_since(written_at)),
                body_us: 0,
            },
            end: answer.end,
        })
    }

    /// Upgrades the fresh connection with `GET path` and `headers` (a request's head), timing
    /// it (request written to `101` read) into the setup's `upgrade_us`. Returns the response
    /// of a refused upgrade (status not 101: the connection is not kept), `None` once
    /// upgraded.
    async fn upgrade(
        &mut self,
        target: &TargetPlan,
        path: &str,
        headers: &[(String, String)],
        capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<Option<WsResponse>, Failure> {
        let State::Fresh(socket) = std::mem::replace(&mut self.state, State::Gone) else {
            return Ok(None);
        };
        let plan = target.ws.as_deref();
        let request = upgrade_request(target, plan, path, headers)?;
        let config = plan.map(|p| {
            WebSocketConfig::default()
                .max_message_size(Some(p.max_message_bytes))
                .max_frame_size(Some(p.max_message_bytes))
        });
        let start = Instant::now();
        let upgraded = tokio_tungstenite::client_async_with_config(request, socket, config).await;
        let end = Instant::now();
        let (status, response, tail) = match upgraded {
            Ok((ws, response)) => {
                self.state = State::Open(Box::new(ws));
                (101, response.map(|_| ()), None)
            }
            Err(WsError::Http(refused)) => {
                let (parts, body) = refused.into_parts();
                let status = super::h1::checked_status(parts.status.as_u16())?;
                (status, http::Response::from_parts(parts, ()), body)
            }
            Err(WsError::Io(e)) => return Err((self.io_error)(e).into()),
            Err(_) => return Err(ErrorKind::Malformed.into()),
        };
        for (name, value) in response.headers() {
            traffic
                .seen
                .header(name.as_str().as_bytes(), value.as_bytes());
        }
        if let Some(setup) = &mut self.setup {
            setup.upgrade_us = Some(micros(end.saturating_duration_since(start)));
        }
        if let Some(c) = capture {
            start_capture(c, status, &format_headers(response.headers()));
            c.body(tail.as_deref().unwrap_or_default());
        }
        if status == 101 {
            return Ok(None);
        }
        traffic.seen.written_at = Some(start);
        Ok(Some(WsResponse {
            status,
            keep_alive: false,
            timing: Timing {
                setup: self.setup.take(),
                stream_wait_us: None,
                peer_max_streams: None,
                write_us: 0,
                ttfb_us: micros(end.saturating_duration_since(start)),
                body_us: 0,
            },
            end,
        }))
    }
}

/// Header fields of the request that the upgrade writes itself, or that do not belong on it
/// (the message is no HTTP body).
const UPGRADE_OWN: [&str; 7] = [
    "host",
    "connection",
    "upgrade",
    "sec-websocket-version",
    "sec-websocket-key",
    "content-length",
    "transfer-encoding",
];

/// The upgrade request of `target` (RFC 6455 §4.1): `GET path`, `headers` (a request's head,
/// `Host` kept), the upgrade's own fields, and `Sec-WebSocket-Protocol` for the plan's
/// subprotocols (in place of one in `headers`).
///
/// Errors: [`ErrorKind::Malformed`] for a head that makes no valid request (a variable's
/// value that is no valid header value, say).
fn upgrade_request(
    target: &TargetPlan,
    plan: Option<&WsPlan>,
    path: &str,
    headers: &[(String, String)],
) -> Result<http::Request<()>, ErrorKind> {
    let scheme = if target.transport.tls.is_some() {
        "wss"
    } else {
        "ws"
    };
    let host = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map_or_else(|| target.endpoint.to_string(), |(_, v)| v.clone());
    let subprotocols = plan.map_or(&[][..], |p| &p.subprotocols[..]);
    let mut builder = http::Request::builder()
        .method("GET")
        .uri(format!("{scheme}://{}{path}", target.endpoint))
        .header("Host", host)
        .header("Connection", "Upgrade")
        .header("Upgrade", "websocket")
        .header("Sec-WebSocket-Version", "13")
        .header("Sec-WebSocket-Key", generate_key());
    for (name, value) in headers {
        let own = UPGRADE_OWN.iter().any(|h| name.eq_ignore_ascii_case(h));
        let replaced =
            !subprotocols.is_empty() && name.eq_ignore_ascii_case("sec-websocket-protocol");
        if !own && !replaced {
            builder = builder.header(name.as_str(), value.as_str());
        }
    }
    if !subprotocols.is_empty() {
        builder = builder.header("Sec-WebSocket-Protocol", subprotocols.join(", "));
    }
    builder.body(()).map_err(|_| ErrorKind::Malformed)
}

/// `headers` as HTTP/1.1 header lines.
fn format_headers(headers: &http::HeaderMap) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, value) in headers {
        out.extend_from_slice(name.as_str().as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Starts a request's capture: the head `HTTP/1.1 {status}` with `fields` (header lines), no
/// body yet.
fn start_capture(c: &mut Capture, status: u16, fields: &[u8]) {
    c.head.clear();
    c.body.clear();
    c.head
        .extend_from_slice(format!("HTTP/1.1 {status} \r\n").as_bytes());
    c.head.extend_from_slice(fields);
    c.head.extend_from_slice(b"\r\n");
}

/// What the connection gave next, as far as an exchange cares.
enum Next {
    /// A text or binary message's payload.
    Message(Bytes),
    /// A ping or pong (a ping's pong is queued by tungstenite and flushed by the next read).
    Control,
}

/// Reads the next message of `ws`, counting it into `traffic.messages`.
///
/// Errors: as [`closed`]; a Close frame is [`ErrorKind::WsClosed`] with its code.
async fn next(
    ws: &mut WebSocketStream<Counted>,
    io_error: fn(io::Error) -> ErrorKind,
    traffic: &mut Traffic,
) -> Result<Next, Failure> {
    let item = ws.next().await;
    let payload = match item {
        None => return Err(ws_closed(ABNORMAL_CLOSURE, traffic)),
        Some(Err(e)) => {
            if matches!(e, WsError::Capacity(_)) {
                let frame = CloseFrame {
                    code: CloseCode::from(MESSAGE_TOO_BIG),
                    reason: "message too big".into(),
                };
                let _ = ws.close(Some(frame)).await;
            }
            return Err(closed(e, io_error, traffic));
        }
        Some(Ok(Message::Text(text))) => Bytes::from(text),
        Some(Ok(Message::Binary(bytes))) => bytes,
        Some(Ok(Message::Close(frame))) => {
            let code = frame.map_or(NO_STATUS, |f| u16::from(f.code));
            return Err(ws_closed(code, traffic));
        }
        Some(Ok(_)) => return Ok(Next::Control),
    };
    traffic.messages.received += 1;
    traffic.messages.bytes_received += payload.len() as u64;
    Ok(Next::Message(payload))
}

/// Waits for the reply: the next message, or the first containing `reply`; the messages
/// before it are counted, not kept. With `capture`, keeps the reply as the body.
async fn wait_reply(
    ws: &mut WebSocketStream<Counted>,
    reply: Option<&[u8]>,
    io_error: fn(io::Error) -> ErrorKind,
    capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Answer, Failure> {
    loop {
        let Next::Message(payload) = next(ws, io_error, traffic).await? else {
            continue;
        };
        if reply.is_none_or(|r| contains(&payload, r)) {
            if let Some(c) = capture {
                c.body(&payload);
            }
            let at = Instant::now();
            return Ok(Answer {
                at,
                end: at,
                keep_alive: true,
            });
        }
    }
}

/// Receives until `end`, counting the messages; the first one is the answer
/// (`traffic.messages.answered_at`, and the body with `capture`). A normal closure (1000)
/// after a message ends the window early (the connection not kept); another close, or one
/// before any message, is the error.
async fn receive_until(
    ws: &mut WebSocketStream<Counted>,
    end: Instant,
    io_error: fn(io::Error) -> ErrorKind,
    mut capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Answer, Failure> {
    let deadline = tokio::time::Instant::from_std(end);
    loop {
        let Ok(next) = tokio::time::timeout_at(deadline, next(ws, io_error, traffic)).await else {
            let at = traffic.messages.answered_at.unwrap_or(end);
            return Ok(Answer {
                at,
                end,
                keep_alive: true,
            });
        };
        match next {
            Ok(Next::Message(payload)) => {
                if traffic.messages.answered_at.is_none() {
                    traffic.messages.answered_at = Some(Instant::now());
                    if let Some(c) = capture.as_deref_mut() {
                        c.body(&payload);
                    }
                }
            }
            Ok(Next::Control) => {}
            Err(failure) => {
                let normal = traffic.error_code.is_some_and(|c| c.value == 1000);
                let (Some(at), true) = (traffic.messages.answered_at, normal) else {
                    return Err(failure);
                };
                traffic.error_code = None;
                return Ok(Answer {
                    at,
                    end: Instant::now(),
                    keep_alive: false,
                });
            }
        }
    }
}

/// Whether `haystack` contains `needle`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// [`ErrorKind::WsClosed`], with `code` counted beside it.
fn ws_closed(code: u16, traffic: &mut Traffic) -> Failure {
    traffic.error_code = Some(ErrorCode {
        space: CodeSpace::WebSocket,
        value: u64::from(code),
    });
    ErrorKind::WsClosed.into()
}

/// The failure of an upgraded connection: closed, reset or ended ([`ErrorKind::WsClosed`]
/// with 1006), a message too big (the same, with 1009), a socket error (`io_error`'s kind),
/// or a frame breaking the protocol ([`ErrorKind::Malformed`]).
fn closed(e: WsError, io_error: fn(io::Error) -> ErrorKind, traffic: &mut Traffic) -> Failure {
    match e {
        WsError::ConnectionClosed
        | WsError::AlreadyClosed
        | WsError::Protocol(ProtocolError::ResetWithoutClosingHandshake) => {
            ws_closed(ABNORMAL_CLOSURE, traffic)
        }
        WsError::Io(e)
            if matches!(
                e.kind(),
                io::ErrorKind::UnexpectedEof
                    | io::ErrorKind::ConnectionReset
                    | io::ErrorKind::ConnectionAborted
                    | io::ErrorKind::BrokenPipe
            ) =>
        {
            ws_closed(ABNORMAL_CLOSURE, traffic)
        }
        WsError::Io(e) => io_error(e).into(),
        WsError::Capacity(_) => ws_closed(MESSAGE_TOO_BIG, traffic),
        _ => ErrorKind::Malformed.into(),
    }
}

#[cfg(test)]
mod tests;
