//! The HTTP/3 path: QUIC by quinn, HTTP/3 framing by h3 (h3-quinn between them). One
//! connection carries up to `streams` concurrent requests, one per virtual user of its group,
//! as HTTP/2 does (the connection is shared through a [`Slot`](super::slot::Slot)).
//!
//! Each worker thread has one quinn endpoint per address family ([`Endpoints`]): one UDP
//! socket, its buffers raised (`crate::udp`), carries all of the worker's connections. Opening
//! a connection is one QUIC handshake (transport and TLS 1.3 at once): it is timed as the
//! setup's `tls_us`; there is no TCP connect (`connect_us` stays 0). With a session ticket
//! that allows early data, a connection opened for a GET, HEAD or OPTIONS request tries 0-RTT
//! (early data can be replayed: RFC 8470 §2): the first requests go out with the handshake,
//! and whether the server took them is known when the handshake ends (`Setup::zero_rtt`, and
//! `tls_resumed` when accepted: a resumption without early data is not visible through
//! quinn).
//!
//! Errors are counted by kind, with the peer's code when it gave one (`Traffic::error_code`):
//! a stream reset (`StreamReset`, H3 code), a connection closed (`Closed`, H3 or QUIC code),
//! GOAWAY (`GoAway`: a request the server refused, or left unanswered when it closed the
//! connection gracefully, is sent once more on a new connection), the idle timeout
//! (`IdleTimeout`: no packet from the server for `max_idle_timeout`), and while connecting
//! a handshake failure (`TlsHandshake`) or no answer at all (`ConnectTimeout`).

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes};
use h3::error::{ConnectionError, LocalError, StreamError};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::measure::{CodeSpace, ErrorCode, ErrorKind, Setup, ZeroRtt};
use crate::plan::TargetPlan;
use crate::run::h1::{Capture, Traffic};
use crate::run::multiplexed::{self, Outgoing, Request, StreamResponse, micros};
use crate::run::slot::{Link, Opened, SlotConn, SlotFailure};
use crate::udp::{self, UdpBuffers};

/// HTTP/3's `H3_NO_ERROR` (RFC 9114 §8.1): a graceful close.
const H3_NO_ERROR: u32 = 0x100;
/// QUIC's `CONNECTION_REFUSED` (RFC 9000 §20.1).
const QUIC_CONNECTION_REFUSED: u64 = 0x2;
/// QUIC's `CRYPTO_ERROR` range: 0x100 plus a TLS alert (RFC 9001 §4.8).
const QUIC_CRYPTO_ERRORS: std::ops::RangeInclusive<u64> = 0x100..=0x1ff;

/// A worker's QUIC endpoints, one per address family, made on first use on the worker's
/// runtime; with the UDP buffers their sockets got.
#[derive(Default)]
pub(crate) struct Endpoints {
    v4: RefCell<Option<quinn::Endpoint>>,
    v6: RefCell<Option<quinn::Endpoint>>,
    /// The smallest buffers of the sockets bound so far.
    buffers: Cell<Option<UdpBuffers>>,
}

impl Endpoints {
    /// The endpoint for connections to `remote`, made (bound to the unspecified address of
    /// its family, any port) when there is none yet. Errors: the socket's.
    fn get(&self, remote: SocketAddr) -> io::Result<quinn::Endpoint> {
        let cell = if remote.is_ipv4() { &self.v4 } else { &self.v6 };
        if let Some(endpoint) = cell.borrow().as_ref() {
            return Ok(endpoint.clone());
        }
        let (endpoint, buffers) = endpoint_for(remote)?;
        self.buffers.set(Some(
            self.buffers.get().map_or(buffers, |b| smallest(b, buffers)),
        ));
        *cell.borrow_mut() = Some(endpoint.clone());
        Ok(endpoint)
    }

    /// The UDP buffers the endpoints' sockets got (the smallest); `None` when none was made.
    pub(crate) fn buffers(&self) -> Option<UdpBuffers> {
        self.buffers.get()
    }

    /// Closes every connection of the endpoints (`H3_NO_ERROR`, so that servers free them at
    /// once rather than after their idle timeout) and waits at most [`CLOSE_WAIT`] for the
    /// closes to go out.
    pub(crate) async fn close(&self) {
        let endpoints: Vec<quinn::Endpoint> = [&self.v4, &self.v6]
            .into_iter()
            .filter_map(|cell| cell.borrow_mut().take())
            .collect();
        for endpoint in &endpoints {
            endpoint.close(quinn::VarInt::from_u32(H3_NO_ERROR), b"");
        }
        let idle = async {
            for endpoint in &endpoints {
                endpoint.wait_idle().await;
            }
        };
        let _ = tokio::time::timeout(CLOSE_WAIT, idle).await;
    }
}

/// How long a worker waits at its end for its QUIC connections' closes to go out.
const CLOSE_WAIT: Duration = Duration::from_millis(200);

/// The smaller of two sockets' buffers, direction by direction.
pub(crate) fn smallest(a: UdpBuffers, b: UdpBuffers) -> UdpBuffers {
    UdpBuffers {
        wanted_bytes: a.wanted_bytes.max(b.wanted_bytes),
        recv_bytes: a.recv_bytes.min(b.recv_bytes),
        send_bytes: a.send_bytes.min(b.send_bytes),
    }
}

/// A client endpoint for connections to `remote`: a UDP socket of its family on any port
/// (`udp::bind`), driven by a task on the current runtime.
fn endpoint_for(remote: SocketAddr) -> io::Result<(quinn::Endpoint, UdpBuffers)> {
    let local = if remote.is_ipv4() {
        SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0))
    } else {
        SocketAddr::from((Ipv6Addr::UNSPECIFIED, 0))
    };
    let (socket, buffers) = udp::bind(local)?;
    let endpoint = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        None,
        socket,
        Arc::new(quinn::TokioRuntime),
    )?;
    Ok((endpoint, buffers))
}

/// The request half of an HTTP/3 connection.
type SendRequest = h3::client::SendRequest<h3_quinn::OpenStreams, Bytes>;

/// When a 0-RTT handshake ended (microseconds after it started) and whether the server took
/// the early data; `None` until then, and for good when the handshake failed (its sender is
/// then dropped).
type ZeroRttOutcome = watch::Receiver<Option<(u64, bool)>>;

/// An open HTTP/3 connection, as its slot keeps it.
pub(crate) struct H3Link {
    handle: H3Handle,
    /// Drives the connection's control stream (SETTINGS, GOAWAY); ends with the connection.
    driver: JoinHandle<()>,
}

/// A virtual user's handle to an HTTP/3 connection.
#[derive(Clone)]
pub(crate) struct H3Handle {
    send: SendRequest,
    conn: quinn::Connection,
    /// With 0-RTT tried: its outcome, once the handshake ends.
    zero_rtt: Option<ZeroRttOutcome>,
}

impl Link for H3Link {
    type Handle = H3Handle;

    fn handle(&self) -> H3Handle {
        self.handle.clone()
    }

    fn is_done(&self) -> bool {
        // After GOAWAY, a request is refused (`RemoteClosing`) and the slot forgets it.
        self.driver.is_finished() || self.handle.conn.close_reason().is_some()
    }
}

/// A virtual user's handle to its group's HTTP/3 connection.
pub(crate) type H3Conn = SlotConn<H3Link>;

/// Why opening a QUIC connection failed: the kind counted, the peer's code if it gave one,
/// and why in words (for the check at start).
#[derive(Debug)]
pub(crate) struct ConnectFailure {
    pub(crate) kind: ErrorKind,
    pub(crate) code: Option<ErrorCode>,
    pub(crate) why: String,
}

impl ConnectFailure {
    fn new(kind: ErrorKind, why: impl Into<String>) -> ConnectFailure {
        ConnectFailure {
            kind,
            code: None,
            why: why.into(),
        }
    }
}

/// Opens an HTTP/3 connection to `addr` for `target` on the worker's `endpoints` (`setup`
/// holds the DNS time, if any): the QUIC handshake, with 0-RTT when a ticket allows it and
/// `target`'s method is safe (GET, HEAD, OPTIONS: RFC 9110 §9.2.1), then HTTP/3's control
/// streams, driven by a task of its own.
pub(crate) async fn open(
    endpoints: &Endpoints,
    addr: SocketAddr,
    target: &TargetPlan,
    mut setup: Setup,
) -> Result<Opened<H3Link>, ConnectFailure> {
    let endpoint = endpoints.get(addr).map_err(|e| {
        let kind = if super::limits::out_of_files(&e) {
            ErrorKind::FdLimit
        } else {
            ErrorKind::ConnectError
        };
        ConnectFailure::new(kind, format!("cannot open a UDP socket: {e}"))
    })?;
    let start = Instant::now();
    let connecting = connecting(&endpoint, addr, target)?;
    // Early data can be replayed (RFC 8470 §2): only a safe method's request goes in it.
    let safe = matches!(target.method.as_str(), "GET" | "HEAD" | "OPTIONS");
    let early = if safe {
        connecting.into_0rtt()
    } else {
        Err(connecting)
    };
    let (conn, accepted) = match early {
        Ok((conn, accepted)) => (conn, Some(accepted)),
        Err(connecting) => {
            let conn = connecting.await.map_err(|e| handshake_failure(e, addr))?;
            setup.tls_us = Some(micros(start.elapsed()));
            (conn, None)
        }
    };
    let (mut driver, send) = h3::client::new(h3_quinn::Connection::new(conn.clone()))
        .await
        .map_err(|e| ConnectFailure::new(ErrorKind::Malformed, format!("HTTP/3: {e}")))?;
    let (outcome, zero_rtt) = match accepted {
        Some(accepted) => {
            let (tx, rx) = watch::channel(None);
            (Some((accepted, tx)), Some(rx))
        }
        None => (None, None),
    };
    let quic = conn.clone();
    let driver = tokio::spawn(async move {
        if let Some((accepted, tx)) = outcome {
            let accepted = accepted.await;
            // `false` also when the handshake failed: quinn records the connection's end
            // before it says so, and a failed handshake leaves the outcome unknown.
            if accepted || quic.close_reason().is_none() {
                let _ = tx.send(Some((micros(start.elapsed()), accepted)));
            }
        }
        // Ends when the connection closes: its reason is read from the connection itself.
        let _ = poll_fn(|cx| driver.poll_close(cx)).await;
    });
    Ok(Opened {
        link: H3Link {
            handle: H3Handle {
                send,
                conn,
                zero_rtt,
            },
            driver,
        },
        setup,
    })
}

/// Starts a QUIC connection to `addr` with the target's client configuration and server name.
fn connecting(
    endpoint: &quinn::Endpoint,
    addr: SocketAddr,
    target: &TargetPlan,
) -> Result<quinn::Connecting, ConnectFailure> {
    let transport = &target.transport;
    let (Some(config), Some(tls)) = (&transport.quic, &transport.tls) else {
        return Err(ConnectFailure::new(
            ErrorKind::ConnectError,
            "HTTP/3 without a QUIC configuration",
        ));
    };
    let name = tls.server_name.to_str();
    endpoint
        .connect_with(config.clone(), addr, &name)
        .map_err(|e| ConnectFailure::new(ErrorKind::ConnectError, e.to_string()))
}

/// The kind of a QUIC handshake that failed: no answer (`ConnectTimeout`), refused by the
/// server or by our TLS (`TlsHandshake`, with the server's code), refused outright
/// (`ConnectRefused`), and the rest.
fn handshake_failure(e: quinn::ConnectionError, addr: SocketAddr) -> ConnectFailure {
    use quinn::ConnectionError as E;
    let why = format!("QUIC handshake failed: {e}");
    match e {
        E::TimedOut => ConnectFailure::new(
            ErrorKind::ConnectTimeout,
            format!("no QUIC answer from udp/{}", addr.port()),
        ),
        E::ConnectionClosed(close) => {
            let value = u64::from(close.error_code);
            let kind = if value == QUIC_CONNECTION_REFUSED {
                ErrorKind::ConnectRefused
            } else {
                ErrorKind::TlsHandshake
            };
            ConnectFailure {
                kind,
                code: Some(ErrorCode {
                    space: CodeSpace::Quic,
                    value,
                }),
                why,
            }
        }
        E::ApplicationClosed(close) => ConnectFailure {
            kind: ErrorKind::Closed,
            code: Some(ErrorCode {
                space: CodeSpace::H3,
                value: close.error_code.into_inner(),
            }),
            why,
        },
        E::TransportError(_) => ConnectFailure::new(ErrorKind::TlsHandshake, why),
        E::Reset => ConnectFailure::new(ErrorKind::Reset, why),
        E::VersionMismatch | E::LocallyClosed | E::CidsExhausted => {
            ConnectFailure::new(ErrorKind::ConnectError, why)
        }
    }
}

/// The kind of a connection's end after its handshake, and the peer's code: closed by the
/// server (`Closed`; `GoAway` when gracefully, with `H3_NO_ERROR`), silent past the idle
/// timeout (`IdleTimeout`), reset (a stateless reset), or closed by us on a protocol error
/// of the server's (`Malformed`).
fn closed(e: &quinn::ConnectionError) -> (ErrorKind, Option<ErrorCode>) {
    use quinn::ConnectionError as E;
    match e {
        E::ApplicationClosed(close) => {
            let value = close.error_code.into_inner();
            let kind = if value == u64::from(H3_NO_ERROR) {
                ErrorKind::GoAway
            } else {
                ErrorKind::Closed
            };
            let space = CodeSpace::H3;
            (kind, Some(ErrorCode { space, value }))
        }
        E::ConnectionClosed(close) => {
            let value = u64::from(close.error_code);
            let kind = if QUIC_CRYPTO_ERRORS.contains(&value) {
                ErrorKind::TlsHandshake
            } else {
                ErrorKind::Closed
            };
            (
                kind,
                Some(ErrorCode {
                    space: CodeSpace::Quic,
                    value,
                }),
            )
        }
        E::TimedOut => (ErrorKind::IdleTimeout, None),
        E::Reset => (ErrorKind::Reset, None),
        E::TransportError(_) | E::LocallyClosed => (ErrorKind::Malformed, None),
        E::VersionMismatch | E::CidsExhausted => (ErrorKind::ConnectError, None),
    }
}

impl SlotConn<H3Link> {
    /// Sends `outgoing`, a request of `target`, on a new stream and reads the whole response
    /// (waiting for a stream when the server's limit is reached). With `capture`, the
    /// response is kept there for checks, its head written as an HTTP/1.1 head. Counts into
    /// `traffic` the request (as its HTTP/1.1 bytes, once the stream is open) and the DATA
    /// payload as it arrives, and the peer's code of a failure.
    pub(crate) async fn exchange(
        &mut self,
        Request {
            target, outgoing, ..
        }: Request<'_>,
        mut capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<StreamResponse, SlotFailure> {
        let (request, body) = match outgoing {
            Outgoing::Planned => (target.h2_request.clone(), target.body.clone()),
            Outgoing::Rendered(bytes) => multiplexed::rendered_request(target, bytes)
                .ok_or(SlotFailure::Failed(ErrorKind::Malformed))?,
        };
        let code = &mut traffic.error_code;
        let sent_at = Instant::now();
        let mut stream = match self.handle.send.send_request(request).await {
            Ok(stream) => stream,
            Err(e) => return Err(self.failure(e, false, code)),
        };
        traffic.sent += outgoing.bytes(target).len() as u64;
        if !body.is_empty()
            && let Err(e) = stream.send_data(body).await
        {
            return Err(self.failure(e, false, &mut traffic.error_code));
        }
        if let Err(e) = stream.finish().await {
            return Err(self.failure(e, false, &mut traffic.error_code));
        }
        traffic.seen.written();
        let response = match stream.recv_response().await {
            Ok(response) => response,
            Err(e) => return Err(self.failure(e, false, &mut traffic.error_code)),
        };
        let headers_at = Instant::now();
        let status = multiplexed::response_head(
            response.status(),
            response.headers(),
            traffic,
            capture.as_deref_mut(),
        )
        .map_err(SlotFailure::Failed)?;
        loop {
            let mut data = match stream.recv_data().await {
                Ok(Some(data)) => data,
                Ok(None) => break,
                Err(e) => return Err(self.failure(e, true, &mut traffic.error_code)),
            };
            traffic.received += data.remaining() as u64;
            while data.has_remaining() {
                let chunk = data.chunk();
                traffic.seen.data(chunk);
                if let Some(c) = capture.as_deref_mut() {
                    c.body(chunk);
                }
                let n = chunk.len();
                data.advance(n);
            }
        }
        Ok(StreamResponse {
            status,
            sent_at,
            headers_at,
            // quinn does not tell the peer's stream limit; a wait for one is in `write`.
            stream_wait_us: None,
            peer_max_streams: None,
        })
    }

    /// The setup of this connection, if no response has reported it yet; with 0-RTT tried,
    /// once the handshake has ended (it has, when a response came: bounded by the request's
    /// timeout all the same).
    pub(crate) async fn setup(&self) -> Option<Setup> {
        let mut setup = self.take_setup()?;
        if let Some(outcome) = &self.handle.zero_rtt {
            let mut outcome = outcome.clone();
            let ended = outcome
                .wait_for(Option::is_some)
                .await
                .ok()
                .and_then(|o| *o);
            // A connection that ended during the handshake took nothing early.
            let (tls_us, accepted) = ended.unwrap_or((0, false));
            setup.tls_us = Some(tls_us);
            setup.zero_rtt = if accepted {
                ZeroRtt::Accepted
            } else {
                ZeroRtt::Rejected
            };
            setup.tls_resumed = accepted;
        }
        Some(setup)
    }

    /// Counts a failed request, with the peer's code into `code`; `answered`: its response
    /// head had come. A request the server did not process is [`SlotFailure::NotSent`]:
    /// refused by GOAWAY, reset with `H3_REQUEST_REJECTED` (RFC 9114 §4.1.1), sent as early
    /// data that the server turned down (it goes again on the same connection, whose
    /// handshake went on), or left unanswered by a graceful close.
    fn failure(&self, e: StreamError, answered: bool, code: &mut Option<ErrorCode>) -> SlotFailure {
        let h3 = |c: h3::error::Code| ErrorCode {
            space: CodeSpace::H3,
            value: c.value(),
        };
        // 0-RTT tried and the handshake failed: whatever the stream says (quinn tells early
        // streams that their data was rejected), a failed handshake, counted as one.
        let in_handshake =
            (self.handle.zero_rtt.as_ref()).is_some_and(|outcome| outcome.borrow().is_none());
        if let Some(reason) = self.handle.conn.close_reason()
            && in_handshake
            && handshake_ended(&reason)
        {
            self.forget();
            let failure = handshake_failure(reason, self.handle.conn.remote_address());
            *code = failure.code;
            return SlotFailure::Failed(failure.kind);
        }
        match e {
            StreamError::RemoteClosing { .. } => {
                self.forget();
                SlotFailure::NotSent(ErrorKind::GoAway)
            }
            StreamError::RemoteTerminate { code: c, .. } => {
                *code = Some(h3(c));
                if c == h3::error::Code::H3_REQUEST_REJECTED {
                    SlotFailure::NotSent(ErrorKind::StreamReset)
                } else {
                    SlotFailure::Failed(ErrorKind::StreamReset)
                }
            }
            StreamError::HeaderTooBig { .. } | StreamError::StreamError { .. } => {
                SlotFailure::Failed(ErrorKind::Malformed)
            }
            StreamError::Undefined { 0: e, .. } if zero_rtt_rejected(e.as_ref()) => {
                SlotFailure::NotSent(ErrorKind::Closed)
            }
            // h3 closed the connection on a protocol error of the server's, with this code.
            StreamError::ConnectionError {
                0:
                    ConnectionError::Local {
                        error: LocalError::Application { code: c, .. },
                        ..
                    },
                ..
            } => {
                self.forget();
                *code = Some(h3(c));
                SlotFailure::Failed(ErrorKind::Malformed)
            }
            other => {
                self.forget();
                let (kind, peer) = match &self.handle.conn.close_reason() {
                    Some(reason) => closed(reason),
                    None => match other {
                        StreamError::ConnectionError {
                            0: ConnectionError::Timeout { .. },
                            ..
                        } => (ErrorKind::IdleTimeout, None),
                        _ => (ErrorKind::Closed, None),
                    },
                };
                *code = peer;
                if kind == ErrorKind::GoAway && !answered {
                    SlotFailure::NotSent(kind)
                } else {
                    SlotFailure::Failed(kind)
                }
            }
        }
    }
}

/// Whether a stream failed because the server turned down the early data it was sent in
/// (quinn's `ZeroRttRejected`, which h3 passes on as an error of its own).
fn zero_rtt_rejected(e: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        e.downcast_ref::<quinn::ReadError>(),
        Some(quinn::ReadError::ZeroRttRejected)
    ) || matches!(
        e.downcast_ref::<quinn::WriteError>(),
        Some(quinn::WriteError::ZeroRttRejected)
    )
}

/// Whether a connection's end is one a handshake can fail with: no answer, the server's
/// transport error (a TLS alert, a refusal), our own TLS refusing the server, a reset.
fn handshake_ended(e: &quinn::ConnectionError) -> bool {
    use quinn::ConnectionError as E;
    matches!(
        e,
        E::TimedOut | E::ConnectionClosed(_) | E::TransportError(_) | E::Reset | E::VersionMismatch
    )
}

/// The check at start for HTTP/3: a QUIC connection to `addr` on an endpoint of its own
/// within `timeout`, ALPN `h3` confirmed, then one request of the target's and its response
/// head. Errors: why, in words (e.g. "no QUIC answer from udp/8443 within 5s: the server does
/// not speak HTTP/3 on this port"); `Err(None)` when out of file descriptors.
pub(crate) async fn check(
    addr: SocketAddr,
    target: &TargetPlan,
    timeout: Duration,
) -> Result<(), Option<String>> {
    let (endpoint, _) = endpoint_for(addr).map_err(|e| {
        (!super::limits::out_of_files(&e)).then(|| format!("cannot open a UDP socket: {e}"))
    })?;
    let deadline = tokio::time::Instant::now() + timeout;
    let within = humantime::format_duration(timeout);
    let connecting = connecting(&endpoint, addr, target).map_err(|f| Some(f.why))?;
    let conn = match tokio::time::timeout_at(deadline, connecting).await {
        Err(_) => {
            return Err(Some(format!(
                "no QUIC answer from udp/{} within {within}: the server does not speak \
                 HTTP/3 on this port",
                addr.port()
            )));
        }
        Ok(Err(e)) => return Err(Some(handshake_failure(e, addr).why)),
        Ok(Ok(conn)) => conn,
    };
    let alpn = conn
        .handshake_data()
        .and_then(|d| d.downcast::<quinn::crypto::rustls::HandshakeData>().ok())
        .and_then(|d| d.protocol);
    if alpn.as_deref() != Some(b"h3") {
        return Err(Some("the server did not choose h3 by ALPN".to_string()));
    }
    let request = async {
        let (mut driver, mut send) = h3::client::new(h3_quinn::Connection::new(conn.clone()))
            .await
            .map_err(|e| e.to_string())?;
        let driver = tokio::spawn(async move {
            let _ = poll_fn(|cx| driver.poll_close(cx)).await;
        });
        let answer = async {
            let mut stream = send.send_request(target.h2_request.clone()).await?;
            if !target.body.is_empty() {
                stream.send_data(target.body.clone()).await?;
            }
            stream.finish().await?;
            stream.recv_response().await
        }
        .await
        .map_err(|e| e.to_string());
        driver.abort();
        answer.map(|_| ())
    };
    let answered = tokio::time::timeout_at(deadline, request).await;
    // Closed gracefully and sent, so that the server frees the connection now rather than
    // after its idle timeout.
    conn.close(quinn::VarInt::from_u32(H3_NO_ERROR), b"");
    let _ = tokio::time::timeout(CLOSE_WAIT, endpoint.wait_idle()).await;
    match answered {
        Err(_) => Err(Some(format!("no HTTP/3 response within {within}"))),
        Ok(Err(e)) => Err(Some(format!("HTTP/3 request failed: {e}"))),
        Ok(Ok(())) => Ok(()),
    }
}

#[cfg(test)]
pub(super) mod tests;
