//! Connections of every kind behind one type: HTTP/1.1 over TCP or TLS, HTTP/2 over TCP
//! (h2c, prior knowledge) or TLS (ALPN `h2`), HTTP/3 over QUIC. Opening one is timed phase by
//! phase (DNS, TCP connect, TLS handshake; for QUIC, its handshake as the TLS phase); each
//! response reports its time to first byte and body read.
//!
//! The run's connection loop only calls [`connect`] when a virtual user has no connection
//! and [`Conn::exchange`] per request; which protocol is spoken is decided here, from the
//! target's [`crate::plan::TransportPlan`] and, over TLS, by ALPN.

use std::cell::OnceCell;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use super::limits::out_of_files;
use super::{Negotiated, NegotiatedTls};
use crate::measure::{ErrorCode, ErrorKind, Setup, Timing};
use crate::plan::{TargetPlan, TransportPlan};
use crate::run::h1::{self, Capture, Failure, H1Conn, Traffic};
use crate::run::h2::{self, H2Conn, H2Link};
use crate::run::h3::{self, H3Conn, H3Link};
use crate::run::multiplexed::{Request, StreamResponse, micros};
use crate::run::slot::{Opened, Slot, SlotFailure};
use crate::run::tls::{self, TlsStream};
use crate::run::ws::{self, WsConn};
use crate::spec::Protocol;

/// How long the check at start waits, after a TLS 1.3 handshake in which the server asked for
/// a client certificate, for the server to reject that certificate (it does so right after
/// the handshake; silence means accepted).
pub(crate) const CLIENT_AUTH_VERDICT_WAIT: Duration = Duration::from_millis(300);

/// One virtual user's connection to one endpoint.
pub(crate) enum Conn {
    /// HTTP/1.1 over TCP.
    H1(H1Conn<TcpStream>, Option<Setup>),
    /// HTTP/1.1 over TLS (boxed: a TLS session is large).
    H1Tls(Box<H1Conn<TlsStream>>, Option<Setup>),
    /// A handle to an HTTP/2 connection shared with the rest of the group.
    H2(H2Conn),
    /// A handle to an HTTP/3 connection shared with the rest of the group.
    H3(H3Conn),
    /// A WebSocket connection, upgraded by its first request (boxed: it holds its own
    /// buffers).
    Ws(Box<WsConn>),
}

/// A complete response, as far as a load test cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    /// Whether the connection may carry the next request.
    pub(crate) keep_alive: bool,
    /// Phase timings: setup when this request opened the connection, write, TTFB, body read.
    pub(crate) timing: Timing,
    /// When the last byte arrived.
    pub(crate) end: Instant,
}

/// The virtual users that share HTTP/2 or HTTP/3 connections: one shared connection per
/// connection slot (an endpoint with one transport). With `streams: 1` every virtual user has
/// a group of its own.
///
/// A slot's shared connection is made at its first HTTP/2 or HTTP/3 connect: an HTTP/1.1
/// virtual user never needs one, and 10,000 of them would otherwise hold 4.6 MB of empty ones.
pub(crate) struct Group {
    /// Per connection slot: its shared connections, once made.
    slots: Vec<SharedSlots>,
    /// The worker's QUIC endpoints (shared by all its groups).
    endpoints: Rc<h3::Endpoints>,
}

/// A connection slot's shared connections, each made at its first connect.
#[derive(Default)]
struct SharedSlots {
    h2: OnceCell<Rc<Slot<H2Link>>>,
    h3: OnceCell<Rc<Slot<H3Link>>>,
}

impl Group {
    /// A group for `slots` connection slots, opening its HTTP/3 connections on `endpoints`.
    pub(crate) fn new(slots: usize, endpoints: Rc<h3::Endpoints>) -> Group {
        Group {
            slots: (0..slots).map(|_| SharedSlots::default()).collect(),
            endpoints,
        }
    }

    /// The shared HTTP/2 connection of slot `slot`.
    fn h2(&self, slot: usize) -> &Rc<Slot<H2Link>> {
        self.slots[slot].h2.get_or_init(Rc::default)
    }

    /// The shared HTTP/3 connection of slot `slot`.
    fn h3(&self, slot: usize) -> &Rc<Slot<H3Link>> {
        self.slots[slot].h3.get_or_init(Rc::default)
    }

    /// Lets go of the group's HTTP/2 and HTTP/3 connections: each closes once the handles
    /// still in use are dropped (streams in flight finish first).
    pub(crate) fn close(&self) {
        (0..self.slots.len()).for_each(|slot| self.close_slot(slot));
    }

    /// Lets go of the shared connection of slot `slot` (as [`Group::close`]): the next
    /// request opens a new one.
    pub(crate) fn close_slot(&self, slot: usize) {
        let slots = &self.slots[slot];
        if let Some(h2) = slots.h2.get() {
            h2.close();
        }
        if let Some(h3) = slots.h3.get() {
            h3.close();
        }
    }
}

/// Where a virtual user's request goes (the link between it and an endpoint): the endpoint's
/// address and connection slot, and the group whose shared connections (HTTP/2, HTTP/3) the
/// slot holds.
#[derive(Clone, Copy)]
pub(crate) struct Route<'a> {
    /// The address the check at start reached (a host name is resolved again per connect).
    pub(crate) addr: SocketAddr,
    /// The connection slot: an index into the run's endpoints and into `group`'s slots.
    pub(crate) slot: usize,
    /// The virtual user's group.
    pub(crate) group: &'a Group,
}

/// Opens a connection for `target` by `route`: resolves the host name when it is not an IP
/// address, connects, runs the TLS handshake and, for HTTP/2, the preface. An HTTP/2 slot that
/// already has an open connection returns a handle to it.
///
/// Inline, not boxed: only plain HTTP/1.1 over TCP opens within this future ([`open_conn`]
/// boxes the rest), which is smaller than a request's exchange, so that a request's future
/// is no larger for it, and a connect allocates nothing (a box per connection, freed once
/// connected, left 10,000 holes in the heap that the virtual users' tasks did not fit).
///
/// Errors: [`ErrorKind::ConnectTimeout`] when it takes longer than the target's
/// `connect_timeout`, besides the connect's own errors (with the peer's code, if it gave one,
/// in `code`).
pub(crate) async fn connect(
    route: Route<'_>,
    target: &TargetPlan,
    code: &mut Option<ErrorCode>,
) -> Result<Conn, ErrorKind> {
    match target.connect_timeout {
        None => open_conn(route, target, code).await,
        Some(limit) => tokio::time::timeout(limit, open_conn(route, target, code))
            .await
            .unwrap_or(Err(ErrorKind::ConnectTimeout)),
    }
}

/// [`connect`]'s work. Only plain HTTP/1.1 over TCP runs inline; every other protocol's
/// opening (TLS handshake, HTTP/2 preface, QUIC) is boxed apart, so that this future, held by
/// every connecting virtual user at once before the clock, stays small (496 bytes; 4.9 KB
/// with them inline: 49 MB for 10,000 connections).
async fn open_conn(
    Route { addr, slot, group }: Route<'_>,
    target: &TargetPlan,
    code: &mut Option<ErrorCode>,
) -> Result<Conn, ErrorKind> {
    let transport = &target.transport;
    match transport.protocol {
        Protocol::H2 | Protocol::Grpc => {
            let open = group.h2(slot).connect(|| async {
                let (stream, setup) = open(addr, target).await?;
                start_h2(stream, setup).await
            });
            return Box::pin(open).await.map(Conn::H2);
        }
        Protocol::H3 => {
            let endpoints = &group.endpoints;
            let open = group.h3(slot).connect(|| async {
                let mut setup = Setup::default();
                let addr = resolve(addr, target, &mut setup)
                    .await
                    .map_err(|(kind, _)| kind)?;
                h3::open(endpoints, addr, target, setup)
                    .await
                    .map_err(|failure| {
                        *code = failure.code;
                        failure.kind
                    })
            });
            return Box::pin(open).await.map(Conn::H3);
        }
        Protocol::Ws => {
            // Upgraded by its first request (whose head, a flow's cookies included, it sends).
            let (stream, setup) = open(addr, target).await?;
            let conn = match stream {
                Stream::Tcp(tcp) => ws::open(Box::new(tcp), h1::tcp_io_error, setup),
                Stream::Tls(tls) => ws::open(tls, tls::io_error, setup),
            };
            return Ok(Conn::Ws(Box::new(conn)));
        }
        Protocol::H1 | Protocol::Auto => {}
    }
    let (stream, setup) = open(addr, target).await?;
    match stream {
        Stream::Tcp(tcp) => Ok(Conn::H1(H1Conn::new(tcp, h1::tcp_io_error), Some(setup))),
        Stream::Tls(tls) if tls::alpn_is_h2(&tls) => {
            let opened = Box::pin(start_h2(Stream::Tls(tls), setup)).await?;
            Ok(Conn::H2(group.h2(slot).install(opened)))
        }
        Stream::Tls(tls) => Ok(Conn::H1Tls(
            Box::new(H1Conn::new(*tls, tls::io_error)),
            Some(setup),
        )),
    }
}

/// Sends `request` on `conn` (opened by `route` first when there is none) and reads the whole
/// response, as [`Conn::exchange`]; a reused HTTP/1.1 connection that the server had closed
/// (the race with its idle timeout) is replaced by a new one and the request sent again (a
/// fresh connection is never stale). `now`: the caller has just read the clock.
pub(crate) async fn send(
    conn: &mut Option<Conn>,
    route: Route<'_>,
    request: Request<'_>,
    mut now: Instant,
    mut capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Response, ErrorKind> {
    loop {
        if conn.is_none() {
            *conn = Some(connect(route, request.target, &mut traffic.error_code).await?);
            now = Instant::now();
        }
        let c = conn.as_mut().expect("just connected");
        match c
            .exchange(route, request, now, capture.as_deref_mut(), traffic)
            .await
        {
            Ok(response) => return Ok(response),
            Err(Failure::Stale) => *conn = None,
            Err(Failure::Error(kind)) => return Err(kind),
        }
    }
}

impl Conn {
    /// Sends `request` and reads the whole response, counting the bytes into `traffic` as they
    /// go; with `capture`, keeps the response there for checks. An HTTP/2 or HTTP/3 request
    /// that the connection refused before sending it (GOAWAY received, connection closed) is
    /// sent once more on a new connection by `route`. `now`: the caller has just read the
    /// clock (the write phase of HTTP/1.1 counts from it).
    ///
    /// Errors: [`Failure::Stale`] when a reused HTTP/1.1 connection had been closed by the
    /// server (the caller sends the request again on a new connection).
    pub(crate) async fn exchange(
        &mut self,
        route: Route<'_>,
        request: Request<'_>,
        now: Instant,
        mut capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<Response, Failure> {
        match self {
            Conn::H1(conn, setup) => {
                return h1_exchange(conn, setup, request, now, capture, traffic).await;
            }
            Conn::H1Tls(conn, setup) => {
                return h1_exchange(conn, setup, request, now, capture, traffic).await;
            }
            // Boxed, as `connect`'s work is: inline, a WebSocket exchange's future would make
            // every HTTP request's future as large, to be copied on each request.
            Conn::Ws(conn) => {
                return Box::pin(ws_exchange(conn, request, now, capture, traffic)).await;
            }
            Conn::H2(conn) => {
                match h2_exchange(conn, request, capture.as_deref_mut(), traffic).await {
                    Err(SlotFailure::NotSent(_)) => {}
                    other => return other.map_err(|e| e.kind().into()),
                }
            }
            // Boxed too: inline, an HTTP/3 exchange's future (1.7 KB) would make every
            // request's as large; an HTTP/3 request costs far more than the allocation.
            Conn::H3(conn) => {
                match Box::pin(h3_exchange(conn, request, capture.as_deref_mut(), traffic)).await {
                    Err(SlotFailure::NotSent(_)) => {}
                    other => return other.map_err(|e| e.kind().into()),
                }
            }
        }
        // Not sent: once more, on a new connection.
        traffic.error_code = None;
        *self = connect(route, request.target, &mut traffic.error_code).await?;
        let now = Instant::now();
        match self {
            Conn::H2(fresh) => h2_exchange(fresh, request, capture, traffic)
                .await
                .map_err(|e| e.kind().into()),
            Conn::H3(fresh) => Box::pin(h3_exchange(fresh, request, capture, traffic))
                .await
                .map_err(|e| e.kind().into()),
            // ALPN chose HTTP/1.1 this time.
            Conn::H1(conn, setup) => h1_exchange(conn, setup, request, now, capture, traffic).await,
            Conn::H1Tls(conn, setup) => {
                h1_exchange(conn, setup, request, now, capture, traffic).await
            }
            Conn::Ws(conn) => Box::pin(ws_exchange(conn, request, now, capture, traffic)).await,
        }
    }
}

/// [`Conn::exchange`] on an HTTP/1.1 connection, sent at `sent_at` (the write phase counts
/// from it).
async fn h1_exchange<S>(
    conn: &mut H1Conn<S>,
    setup: &mut Option<Setup>,
    request: Request<'_>,
    sent_at: Instant,
    capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Response, Failure>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (bytes, is_head) = (request.bytes(), request.target.is_head);
    let response = conn
        .exchange(bytes, is_head, capture, request.deadline, traffic)
        .await?;
    let end = response.last_byte_at;
    let written_at = traffic.seen.written_at.unwrap_or(sent_at);
    Ok(Response {
        status: response.status,
        keep_alive: response.keep_alive,
        timing: Timing {
            setup: setup.take(),
            stream_wait_us: None,
            peer_max_streams: None,
            write_us: micros(written_at.saturating_duration_since(sent_at)),
            ttfb_us: micros(response.first_byte_at.saturating_duration_since(written_at)),
            body_us: micros(end.saturating_duration_since(response.first_byte_at)),
        },
        end,
    })
}

/// [`Conn::exchange`] on a WebSocket connection ([`WsConn::exchange`]).
async fn ws_exchange(
    conn: &mut WsConn,
    request: Request<'_>,
    now: Instant,
    capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Response, Failure> {
    let response = conn.exchange(request, now, capture, traffic).await?;
    Ok(Response {
        status: response.status,
        keep_alive: response.keep_alive,
        timing: response.timing,
        end: response.end,
    })
}

async fn h2_exchange(
    conn: &mut H2Conn,
    request: Request<'_>,
    capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Response, SlotFailure> {
    let response = conn.exchange(request, capture, traffic).await?;
    Ok(shared_response(response, conn.take_setup(), traffic))
}

async fn h3_exchange(
    conn: &mut H3Conn,
    request: Request<'_>,
    capture: Option<&mut Capture>,
    traffic: &mut Traffic,
) -> Result<Response, SlotFailure> {
    let response = conn.exchange(request, capture, traffic).await?;
    let setup = conn.setup().await;
    Ok(shared_response(response, setup, traffic))
}

/// The response of a request on a shared connection (HTTP/2, HTTP/3), ended now.
fn shared_response(response: StreamResponse, setup: Option<Setup>, traffic: &Traffic) -> Response {
    let end = Instant::now();
    let written_at = traffic.seen.written_at.unwrap_or(response.sent_at);
    Response {
        status: response.status,
        keep_alive: true,
        timing: Timing {
            setup,
            stream_wait_us: response.stream_wait_us,
            peer_max_streams: response.peer_max_streams,
            write_us: micros(written_at.saturating_duration_since(response.sent_at)),
            ttfb_us: micros(response.headers_at.saturating_duration_since(written_at)),
            body_us: micros(end.saturating_duration_since(response.headers_at)),
        },
        end,
    }
}

/// An open byte stream: TCP, or TLS over TCP.
pub(crate) enum Stream {
    Tcp(TcpStream),
    Tls(Box<TlsStream>),
}

/// Resolves (host names only), connects and, for `https`, runs the TLS handshake with the
/// plan's configuration; times each phase.
async fn open(addr: SocketAddr, target: &TargetPlan) -> Result<(Stream, Setup), ErrorKind> {
    let config = target.transport.tls.as_ref().map(|t| t.config.clone());
    open_with(addr, target, config)
        .await
        .map_err(|(kind, _)| kind)
}

/// [`open`] with a given TLS configuration; the error carries a description for the check
/// at start.
async fn open_with(
    addr: SocketAddr,
    target: &TargetPlan,
    config: Option<Arc<rustls::ClientConfig>>,
) -> Result<(Stream, Setup), (ErrorKind, String)> {
    let mut setup = Setup::default();
    let addr = resolve(addr, target, &mut setup).await?;
    let start = Instant::now();
    let tcp = TcpStream::connect(addr).await.map_err(|e| {
        let kind = match e.kind() {
            io::ErrorKind::ConnectionRefused => ErrorKind::ConnectRefused,
            io::ErrorKind::TimedOut => ErrorKind::ConnectTimeout,
            _ if out_of_files(&e) => ErrorKind::FdLimit,
            _ => ErrorKind::ConnectError,
        };
        (kind, e.to_string())
    })?;
    tcp.set_nodelay(true)
        .map_err(|e| (ErrorKind::ConnectError, e.to_string()))?;
    setup.connect_us = micros(start.elapsed());
    let (Some(tls), Some(config)) = (&target.transport.tls, config) else {
        return Ok((Stream::Tcp(tcp), setup));
    };
    let start = Instant::now();
    // Boxed: a handshake's future is large, and every connect would hold it inline.
    let stream = Box::pin(tls::handshake(tcp, tls, config))
        .await
        .map_err(|e| (ErrorKind::TlsHandshake, tls::describe(&e)))?;
    setup.tls_us = Some(micros(start.elapsed()));
    setup.tls_resumed = tls::resumed(&stream);
    Ok((Stream::Tls(Box::new(stream)), setup))
}

/// The address to connect to for `target`: `addr` when the URL's host is an IP address, else
/// the host name resolved anew (timed into `setup.dns_us`), `addr` among its addresses if it
/// still is.
async fn resolve(
    addr: SocketAddr,
    target: &TargetPlan,
    setup: &mut Setup,
) -> Result<SocketAddr, (ErrorKind, String)> {
    let host = &target.endpoint.host;
    if host.parse::<IpAddr>().is_ok() {
        return Ok(addr);
    }
    let start = Instant::now();
    let found = tokio::net::lookup_host((host.as_str(), target.endpoint.port))
        .await
        .map_err(|e| (ErrorKind::ConnectError, format!("cannot resolve: {e}")))?;
    setup.dns_us = Some(micros(start.elapsed()));
    // The address the check at start reached, if the name still resolves to it.
    let found: Vec<SocketAddr> = found.collect();
    found
        .iter()
        .copied()
        .find(|a| *a == addr)
        .or_else(|| found.first().copied())
        .ok_or_else(|| (ErrorKind::ConnectError, "no address".to_string()))
}

/// What [`h2::handshake`] returns.
type H2Started = (
    ::h2::client::SendRequest<bytes::Bytes>,
    tokio::task::JoinHandle<()>,
    Option<::h2::PingPong>,
);

/// Sends the HTTP/2 preface on `stream`; also returns how to classify the stream's I/O errors.
async fn h2_handshake(
    stream: Stream,
) -> (fn(io::Error) -> ErrorKind, Result<H2Started, ::h2::Error>) {
    match stream {
        Stream::Tcp(tcp) => (h1::tcp_io_error, h2::handshake(tcp).await),
        Stream::Tls(tls) => (tls::io_error, h2::handshake(*tls).await),
    }
}

/// Starts HTTP/2 on `stream`, a connection just opened with `setup`.
async fn start_h2(stream: Stream, setup: Setup) -> Result<Opened<H2Link>, ErrorKind> {
    let (io_error, started) = h2_handshake(stream).await;
    let (send, driver, ping) = started.map_err(|e| h2::classify(e, io_error))?;
    Ok(Opened {
        link: H2Link::new(send, driver, ping, io_error),
        setup,
    })
}

/// Why the check at start failed.
#[derive(Debug)]
pub(crate) enum CheckError {
    /// The target cannot be loaded: why, in words.
    Unreachable(String),
    /// loadgate could not open a connection: it is out of file descriptors.
    OutOfFiles,
}

impl From<String> for CheckError {
    fn from(why: String) -> CheckError {
        CheckError::Unreachable(why)
    }
}

impl From<&str> for CheckError {
    fn from(why: &str) -> CheckError {
        CheckError::Unreachable(why.to_string())
    }
}

/// The check at start, for one connection slot: connects to `addr` like the run will, with
/// a TLS handshake and, for HTTP/2, a PING answered; over TLS 1.3 with a server that asked
/// for a client certificate, waits [`CLIENT_AUTH_VERDICT_WAIT`] for a rejection. Returns what
/// was negotiated, or why the target cannot be loaded. Blocks the calling thread on `runtime`
/// (at most `timeout` plus that wait).
pub(crate) fn check(
    runtime: &tokio::runtime::Runtime,
    addr: SocketAddr,
    target: &TargetPlan,
    timeout: Duration,
) -> Result<Negotiated, CheckError> {
    runtime.block_on(async {
        if target.transport.protocol == Protocol::H3 {
            return check_h3(addr, target, timeout).await;
        }
        tokio::time::timeout(timeout, check_async(addr, target))
            .await
            .unwrap_or_else(|_| Err(format!("no answer within {timeout:?}").into()))
    })
}

async fn check_async(addr: SocketAddr, target: &TargetPlan) -> Result<Negotiated, CheckError> {
    let transport: &TransportPlan = &target.transport;
    let (config, asked_for_cert) = match &transport.tls {
        Some(tls) => {
            let (config, asked) = crate::plan::tls::recording_client_auth(&tls.config);
            (Some(config), Some(asked))
        }
        None => (None, None),
    };
    let (mut stream, _setup) = open_with(addr, target, config)
        .await
        .map_err(|(kind, why)| match kind {
            ErrorKind::FdLimit => CheckError::OutOfFiles,
            ErrorKind::TlsHandshake => format!("TLS handshake failed: {why}").into(),
            _ => why.into(),
        })?;
    if let (Stream::Tls(tls), Some(asked)) = (&mut stream, &asked_for_cert)
        && asked.load(Ordering::Relaxed)
        && tls.get_ref().1.protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3)
    {
        client_auth_verdict(tls).await.map_err(|e| {
            format!("TLS handshake failed: the server refused the client certificate: {e}")
        })?;
    }
    let tls_info = match &stream {
        Stream::Tls(tls) => Some(tls::negotiated(tls)),
        Stream::Tcp(_) => None,
    };
    let h2 = match &stream {
        Stream::Tcp(_) => transport.cleartext_h2(),
        Stream::Tls(tls) if transport.protocol == Protocol::H2 && !tls::alpn_is_h2(tls) => {
            return Err(
                "`protocol: h2`, but the server did not choose HTTP/2 by ALPN: \
                 use `protocol: auto` or `h1`"
                    .into(),
            );
        }
        Stream::Tls(tls) => tls::alpn_is_h2(tls),
    };
    if h2 {
        let (_, started) = h2_handshake(stream).await;
        let (_send, driver, ping) =
            started.map_err(|e| format!("HTTP/2 preface failed: {}", describe_h2(e)))?;
        let mut ping = ping.ok_or("HTTP/2: no ping handle")?;
        let pong = ping.ping(::h2::Ping::opaque()).await;
        driver.abort();
        pong.map_err(|e| {
            let e = describe_h2(e);
            if tls_info.is_some() {
                format!("HTTP/2 over TLS failed: {e}")
            } else {
                format!("does not speak HTTP/2 with prior knowledge (h2c): {e}")
            }
        })?;
    }
    Ok(Negotiated {
        protocol: if h2 { "h2" } else { "h1" },
        tls: transport.tls.as_ref().map(|tls| {
            let (version, cipher) = tls_info.unwrap_or_default();
            NegotiatedTls {
                version,
                cipher,
                server_name: tls.server_name_text.clone(),
                insecure_skip_verify: tls.insecure_skip_verify,
            }
        }),
    })
}

/// The check at start of an HTTP/3 target ([`h3::check`]).
async fn check_h3(
    addr: SocketAddr,
    target: &TargetPlan,
    timeout: Duration,
) -> Result<Negotiated, CheckError> {
    h3::check(addr, target, timeout)
        .await
        .map_err(|why| match why {
            Some(why) => CheckError::Unreachable(why),
            None => CheckError::OutOfFiles,
        })?;
    Ok(Negotiated {
        protocol: "h3",
        tls: target.transport.tls.as_ref().map(|tls| NegotiatedTls {
            // QUIC is TLS 1.3 (RFC 9001 §4.2); quinn does not tell the cipher suite.
            version: "1.3".to_string(),
            cipher: String::new(),
            server_name: tls.server_name_text.clone(),
            insecure_skip_verify: tls.insecure_skip_verify,
        }),
    })
}

/// Waits (at most [`CLIENT_AUTH_VERDICT_WAIT`]) for a TLS 1.3 server's verdict on the client
/// certificate: an alert is a refusal; application data (an HTTP/2 server's SETTINGS) or
/// silence is acceptance. Records are decrypted into rustls' buffer, not read out, so the
/// connection stays usable.
async fn client_auth_verdict(tls: &mut TlsStream) -> Result<(), String> {
    /// `std::io::Read` over a non-blocking tokio socket.
    struct TryRead<'a>(&'a TcpStream);
    impl io::Read for TryRead<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.0.try_read(buf)
        }
    }
    let (tcp, connection) = tls.get_mut();
    let verdict = async {
        loop {
            tcp.readable().await.map_err(|e| e.to_string())?;
            match connection.read_tls(&mut TryRead(tcp)) {
                Ok(0) => return Err("the server closed the connection".to_string()),
                Ok(_) => match connection.process_new_packets() {
                    Err(e) => return Err(e.to_string()),
                    Ok(state) if state.plaintext_bytes_to_read() > 0 => return Ok(()),
                    Ok(_) => {}
                },
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e.to_string()),
            }
        }
    };
    tokio::time::timeout(CLIENT_AUTH_VERDICT_WAIT, verdict)
        .await
        .unwrap_or(Ok(()))
}

/// An HTTP/2 error, with rustls' reason when TLS ended the connection.
fn describe_h2(e: ::h2::Error) -> String {
    match e.get_io() {
        Some(io) => tls::describe(io),
        None => e.to_string(),
    }
}
