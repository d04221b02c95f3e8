//! `loadgate serve`: the built-in test target (hyper, HTTP/1.1 with keep-alive and HTTP/2), shaped
//! by query parameters so that users can calibrate a spec and our tests can control the target.
//!
//! Over cleartext it speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c), told apart by
//! peeking at the connection's first bytes (the HTTP/2 preface), so that HTTP/1.1 connections
//! are served by hyper's HTTP/1.1 server with nothing in between. With `--tls-cert` and `--tls-key` it speaks TLS only, offering
//! `h2` and `http/1.1` by ALPN; `--tls-client-ca` makes it require a client certificate signed
//! by that CA (mTLS), refusing the handshake otherwise.
//!
//! # Requests
//!
//! Any method and any path are accepted; the request body is read and discarded. The response is
//! shaped by the query string:
//!
//! | parameter           | meaning                                                     | default  |
//! |---------------------|-------------------------------------------------------------|----------|
//! | `status=NNN`        | response status, 200..=599                                   | 200      |
//! | `size=N`            | body length in bytes (`x` bytes), at most [`MAX_BODY_SIZE`] | `ok\n`   |
//! | `delay=DUR`         | wait this long before answering, e.g. `20ms`, `1.5s`         | none     |
//! | `header=Name:Value` | set a response header (replaces the default `Content-Type`); repeat to add values | none |
//! | `close=1`           | answer with `Connection: close` and close the connection    | `close=0`|
//!
//! e.g. `GET /any/path?status=503&size=1024&delay=20ms&header=Retry-After:1&close=1`.
//!
//! A parameter that is unknown, repeated (other than `header`) or invalid gets a `400 Bad Request`
//! whose plain-text body names the parameter, so that a typo fails loudly instead of silently
//! serving the defaults. `GET /health` (or `HEAD /health`) answers `200 ok\n` whatever the query,
//! for readiness probes. `HEAD` requests get the headers of the matching `GET`, without the body.
//!
//! # Use from code
//!
//! - [`serve`] runs the `loadgate serve` command: its own multi-thread runtime, until SIGINT or
//!   SIGTERM.
//! - [`spawn`] starts a server on its own thread and runtime and returns a [`ServerHandle`]
//!   (the bound address; the server stops when the handle is dropped). This is what tests use.
//! - [`Server::bind`] then [`Server::run_until`] serve on the caller's Tokio runtime, until a
//!   future of the caller's resolves.

use std::convert::Infallible;
use std::future::Future;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use http_body_util::BodyExt as _;
use hyper::body::{Body, Bytes, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ServerConfig;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::cli::ServeArgs;
use crate::units::parse_duration;

/// The largest body `size=N` may ask for, in bytes (1 GiB).
pub const MAX_BODY_SIZE: u64 = 1 << 30;

/// How long, after a shutdown is asked for, requests in flight may take to finish before their
/// connections are dropped.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// How long a client may take over its TLS handshake before the connection is dropped.
pub const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The listen backlog: pending connections the kernel queues before we accept them. Generous,
/// so that a burst of new connections at the start of a run is not dropped (a dropped SYN costs
/// the client a one-second retransmit, which would show up as latency).
const LISTEN_BACKLOG: u32 = 1024;

/// The body served when no `size` is given, and by `/health`.
const DEFAULT_BODY: &[u8] = b"ok\n";

/// Filler for `size=N` bodies: sliced, never copied or allocated per request. A larger body is
/// sent as several frames of (a prefix of) this buffer.
static FILL: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// Runs `loadgate serve`: binds `args.listen`, prints `loadgate serve: listening on http://ADDR`
/// on stdout (with the real port when `--listen` asked for port 0), and serves on `args.threads`
/// worker threads (default: the number of CPUs) until SIGINT or SIGTERM, then returns `Ok`.
pub fn serve(args: &ServeArgs) -> anyhow::Result<()> {
    let threads = match args.threads {
        Some(0) => anyhow::bail!("--threads 0: use --threads 1 or more"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    raise_open_files_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("loadgate-serve")
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        // Install the handlers before announcing the address, so that a SIGTERM sent as soon as
        // the line is read stops us cleanly instead of killing us.
        let shutdown = shutdown_signal().context("cannot install the SIGINT/SIGTERM handlers")?;
        let mut server = Server::bind(args.listen)
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let scheme = match (&args.tls_cert, &args.tls_key) {
            (Some(cert), Some(key)) => {
                let config = tls_config(cert, key, args.tls_client_ca.as_deref())?;
                server = server.with_tls(config);
                "https"
            }
            (None, None) if args.tls_client_ca.is_some() => {
                anyhow::bail!("--tls-client-ca needs --tls-cert and --tls-key")
            }
            (None, None) => "http",
            _ => anyhow::bail!("give both --tls-cert and --tls-key, or neither"),
        };
        let mut stdout = io::stdout().lock();
        writeln!(
            stdout,
            "loadgate serve: listening on {scheme}://{}",
            server.local_addr()
        )?;
        stdout.flush()?;
        drop(stdout);
        server.run_until(shutdown).await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    Ok(())
}

/// A future that resolves on the first SIGINT or SIGTERM (the handlers are installed when this
/// function returns).
fn shutdown_signal() -> io::Result<impl Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
    })
}

/// Raises the soft limit of open files to the hard limit, so that a run with many connections
/// is not refused by the target. Best effort: a failure leaves the limit as it was.
fn raise_open_files_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}

/// The TLS configuration of the server: the certificate chain and private key (PEM files), ALPN
/// `h2` then `http/1.1`, and, with `client_ca`, a mandatory client certificate signed by one of
/// the CAs in that PEM file.
pub fn tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
    client_ca: Option<&std::path::Path>,
) -> anyhow::Result<Arc<ServerConfig>> {
    let chain = CertificateDer::pem_file_iter(cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("cannot read certificates from {}", cert.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{} holds no PEM certificate",
        cert.display()
    );
    let key = PrivateKeyDer::from_pem_file(key)
        .with_context(|| format!("cannot read a private key from {}", key.display()))?;
    let provider = crate::plan::tls::provider();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS versions")?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(file) => {
            let mut roots = rustls::RootCertStore::empty();
            for ca in CertificateDer::pem_file_iter(file)
                .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
                .with_context(|| format!("cannot read certificates from {}", file.display()))?
            {
                roots.add(ca).context("unusable client CA certificate")?;
            }
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(roots.into(), provider)
                    .build()
                    .context("client certificate verifier")?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let mut config = builder
        .with_single_cert(chain, key)
        .context("the certificate and key do not go together")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Starts a server on `addr` (e.g. `127.0.0.1:0` for a free port) on a thread of its own, with a
/// multi-thread Tokio runtime of `threads` workers (at least 1). Returns once the socket is
/// bound, so that the server accepts connections as soon as this returns. The server stops when
/// the [`ServerHandle`] is dropped or [`ServerHandle::shutdown`] is called.
pub fn spawn(addr: SocketAddr, threads: usize) -> io::Result<ServerHandle> {
    spawn_with(addr, threads, None)
}

/// [`spawn`], speaking TLS with `tls` when given (see [`tls_config`]).
pub fn spawn_with(
    addr: SocketAddr,
    threads: usize,
    tls: Option<Arc<ServerConfig>>,
) -> io::Result<ServerHandle> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("loadgate-serve")
        .enable_all()
        .build()?;
    let bound = {
        let _context = runtime.enter();
        Server::bind(addr)
    };
    let server = match bound {
        Ok(server) => match tls.clone() {
            Some(config) => server.with_tls(config),
            None => server,
        },
        Err(error) => {
            // Not a plain drop: that would panic when called from within another runtime.
            runtime.shutdown_background();
            return Err(error);
        }
    };
    let addr = server.local_addr();
    let (stop, stopped) = oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("loadgate-serve".into())
        .spawn(move || {
            runtime.block_on(server.run_until(async {
                // Resolves on `send` or when the handle is dropped without sending.
                let _ = stopped.await;
            }));
            runtime.shutdown_timeout(SHUTDOWN_GRACE);
        })?;
    Ok(ServerHandle {
        addr,
        tls: tls.is_some(),
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// A server started by [`spawn`]. Dropping it stops the server: it stops accepting, lets
/// requests in flight finish for up to [`SHUTDOWN_GRACE`], and joins the server's thread.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    tls: bool,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl ServerHandle {
    /// The address the server listens on, with the real port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://ADDR` (`https://ADDR` with TLS), the base URL of the server (no trailing slash).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        format!("{scheme}://{}", self.addr)
    }

    /// Stops the server and waits for it to be stopped (at most about [`SHUTDOWN_GRACE`] plus
    /// the time to finish the response being written). Same as dropping the handle.
    pub fn shutdown(self) {
        drop(self);
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A bound listening socket, not serving yet: [`Server::run_until`] serves it.
#[derive(Debug)]
pub struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    /// The TLS configuration, when the server speaks TLS.
    tls: Option<Arc<ServerConfig>>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port) with `SO_REUSEADDR` and a generous backlog.
    ///
    /// Must be called from within a Tokio runtime (with I/O enabled); panics otherwise.
    pub fn bind(addr: SocketAddr) -> io::Result<Server> {
        let socket = if addr.is_ipv4() {
            TcpSocket::new_v4()?
        } else {
            TcpSocket::new_v6()?
        };
        socket.set_reuseaddr(true)?;
        socket.bind(addr)?;
        let listener = socket.listen(LISTEN_BACKLOG)?;
        let addr = listener.local_addr()?;
        Ok(Server {
            listener,
            addr,
            tls: None,
        })
    }

    /// Speaks TLS with `config` (see [`tls_config`]) on every connection.
    pub fn with_tls(self, config: Arc<ServerConfig>) -> Server {
        Server {
            tls: Some(config),
            ..self
        }
    }

    /// The address the server listens on, with the real port.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves connections until `shutdown` resolves; then stops accepting, lets requests in
    /// flight finish for up to [`SHUTDOWN_GRACE`] (idle keep-alive connections are closed at
    /// once), drops the remaining connections and returns.
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) {
        let mut http1 = http1::Builder::new();
        http1.keep_alive(true);
        let builders = Arc::new(Builders {
            http1,
            http2: http2::Builder::new(TokioExecutor::new()),
        });
        let (stopping_tx, stopping) = watch::channel(false);
        let mut connections = JoinSet::new();
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                biased;
                () = &mut shutdown => break,
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _peer)) => {
                        let _ = stream.set_nodelay(true);
                        let (builders, stopping) = (builders.clone(), stopping.clone());
                        match self.tls.clone().map(TlsAcceptor::from) {
                            None => connections.spawn(async move {
                                let h2 = starts_with_h2_preface(&stream).await;
                                serve_connection(stream, h2, builders, stopping).await;
                            }),
                            Some(tls) => connections.spawn(async move {
                                let accepted =
                                    tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, tls.accept(stream));
                                // A failed handshake (no client certificate, say) only ends
                                // this connection; rustls has sent the alert.
                                if let Ok(Ok(stream)) = accepted.await {
                                    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                                    serve_connection(stream, h2, builders, stopping).await;
                                }
                            }),
                        };
                    }
                    Err(error) => {
                        // Out of file descriptors, or a connection reset before it was
                        // accepted: report, and back off so as not to spin.
                        eprintln!("loadgate serve: accept failed: {error}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
            }
            while connections.try_join_next().is_some() {}
        }
        drop(self.listener);
        let _ = stopping_tx.send(true);
        let drained = async { while connections.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, drained).await;
        // Dropping `connections` aborts what is left.
    }
}

/// hyper's HTTP/1.1 and HTTP/2 servers, configured once.
struct Builders {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
}

/// The client connection preface of HTTP/2 (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// Whether a cleartext connection starts with the HTTP/2 preface: peeks (does not read) until
/// the bytes differ from it or all of it is there.
async fn starts_with_h2_preface(stream: &TcpStream) -> bool {
    let mut buf = [0u8; H2_PREFACE.len()];
    loop {
        match stream.peek(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) if buf[..n] != H2_PREFACE[..n] => return false,
            Ok(n) if n == H2_PREFACE.len() => return true,
            // A preface split across segments (rare): peek returns at once with the same
            // bytes, so wait a moment for the rest.
            Ok(_) => tokio::time::sleep(Duration::from_millis(1)).await,
        }
    }
}

/// Serves one connection with HTTP/2 (`h2`) or HTTP/1.1 until the client closes it, or until
/// `stopping` turns true, after which the response in flight (if any) is finished and the
/// connection closed.
async fn serve_connection<S>(
    stream: S,
    h2: bool,
    builders: Arc<Builders>,
    mut stopping: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    macro_rules! drive {
        ($connection:expr) => {{
            let connection = $connection;
            tokio::pin!(connection);
            tokio::select! {
                // A connection error (the client reset, sent garbage) only ends this connection.
                _ = connection.as_mut() => {}
                _ = async { stopping.wait_for(|stopping| *stopping).await.map(|_| ()) } => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        }};
    }
    let io = TokioIo::new(stream);
    if h2 {
        drive!(builders.http2.serve_connection(io, service_fn(handle)));
    } else {
        drive!(builders.http1.serve_connection(io, service_fn(handle)));
    }
}

/// Answers one request: drains its body, parses the query into a [`Shape`], waits out the delay
/// (counted from when the request head arrived) and builds the response.
async fn handle(request: Request<Incoming>) -> Result<Response<ResponseBody>, Infallible> {
    let arrived = tokio::time::Instant::now();
    let (head, mut body) = request.into_parts();
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            // The client broke off mid-body; answer anyway, hyper closes the connection.
            break;
        }
    }
    if head.uri.path() == "/health" && matches!(head.method, Method::GET | Method::HEAD) {
        return Ok(text_response(
            StatusCode::OK,
            ResponseBody::Bytes(Some(Bytes::from_static(DEFAULT_BODY))),
        ));
    }
    let shape = match Shape::parse(head.uri.query().unwrap_or("")) {
        Ok(shape) => shape,
        Err(message) => {
            return Ok(text_response(
                StatusCode::BAD_REQUEST,
                ResponseBody::Bytes(Some(Bytes::from(message + "\n"))),
            ));
        }
    };
    if !shape.delay.is_zero() {
        tokio::time::sleep_until(arrived + shape.delay).await;
    }
    let body = match shape.size {
        None => ResponseBody::Bytes(Some(Bytes::from_static(DEFAULT_BODY))),
        Some(size) => ResponseBody::Fill { remaining: size },
    };
    let mut response = text_response(shape.status, body);
    let headers = response.headers_mut();
    // A name given in the query replaces the default (`Content-Type`); repeats add values.
    let mut given: Vec<header::HeaderName> = Vec::new();
    for (name, value) in shape.headers {
        if given.contains(&name) {
            headers.append(name, value);
        } else {
            given.push(name.clone());
            headers.insert(name, value);
        }
    }
    if shape.close {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    Ok(response)
}

/// A `text/plain` response; hyper adds `Content-Length` from the body's exact size.
fn text_response(status: StatusCode, body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The response a request's query string asks for (see the module documentation).
#[derive(Debug)]
struct Shape {
    status: StatusCode,
    /// Body length in bytes; `None` for the default `ok\n`.
    size: Option<u64>,
    delay: Duration,
    headers: Vec<(HeaderName, HeaderValue)>,
    close: bool,
}

impl Shape {
    /// Parses a query string (without the `?`); the error is the message for the 400 response.
    fn parse(query: &str) -> Result<Shape, String> {
        let mut shape = Shape {
            status: StatusCode::OK,
            size: None,
            delay: Duration::ZERO,
            headers: Vec::new(),
            close: false,
        };
        let (mut seen_status, mut seen_size, mut seen_delay, mut seen_close) =
            (false, false, false, false);
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let once = |seen: &mut bool| {
                if std::mem::replace(seen, true) {
                    Err(format!("parameter `{name}` is given twice: give it once"))
                } else {
                    Ok(())
                }
            };
            match &*name {
                "status" => {
                    once(&mut seen_status)?;
                    shape.status = value
                        .parse::<u16>()
                        .ok()
                        .filter(|code| (200..=599).contains(code))
                        .and_then(|code| StatusCode::from_u16(code).ok())
                        .ok_or_else(|| {
                            format!("invalid `status`: `{value}` is not a status from 200 to 599")
                        })?;
                }
                "size" => {
                    once(&mut seen_size)?;
                    let size = value.parse::<u64>().map_err(|_| {
                        format!(
                            "invalid `size`: `{value}` is not a number of bytes, e.g. `size=1024`"
                        )
                    })?;
                    if size > MAX_BODY_SIZE {
                        return Err(format!(
                            "invalid `size`: {size} bytes is more than the {MAX_BODY_SIZE} allowed"
                        ));
                    }
                    shape.size = Some(size);
                }
                "delay" => {
                    once(&mut seen_delay)?;
                    shape.delay = parse_duration(&value)
                        .map_err(|message| format!("invalid `delay`: {message}"))?;
                }
                "header" => shape.headers.push(parse_header(&value)?),
                "close" => {
                    once(&mut seen_close)?;
                    shape.close = match &*value {
                        "1" => true,
                        "0" => false,
                        _ => return Err(format!("invalid `close`: `{value}`: use 1 or 0")),
                    };
                }
                _ => {
                    return Err(format!(
                        "unknown parameter `{name}`: use status, size, delay, header or close"
                    ));
                }
            }
        }
        Ok(shape)
    }
}

/// Parses a `header=Name:Value` parameter. The headers that frame the message (`Content-Length`,
/// `Transfer-Encoding`, `Connection`) are refused: use `size` and `close` instead.
fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("invalid `header`: `{text}` is not `Name:Value`"))?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("invalid `header`: `{}` is not a header name", name.trim()))?;
    if name == header::CONTENT_LENGTH
        || name == header::TRANSFER_ENCODING
        || name == header::CONNECTION
    {
        return Err(format!(
            "invalid `header`: `{name}` cannot be set: use `size` for the body and `close=1` to close"
        ));
    }
    let value = HeaderValue::from_str(value.trim())
        .map_err(|_| format!("invalid `header`: the value of `{name}` is not a header value"))?;
    Ok((name, value))
}

/// A response body of exact, known length (so hyper sends `Content-Length`), never allocated
/// per request except for error messages.
#[derive(Debug)]
enum ResponseBody {
    /// One frame; `None` once sent.
    Bytes(Option<Bytes>),
    /// `remaining` bytes of [`FILL`], sent in frames of up to `FILL.len()` bytes.
    Fill { remaining: u64 },
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let frame = match self.get_mut() {
            ResponseBody::Bytes(bytes) => bytes.take(),
            ResponseBody::Fill { remaining: 0 } => None,
            ResponseBody::Fill { remaining } => {
                let len = (*remaining).min(FILL.len() as u64);
                *remaining -= len;
                Some(Bytes::from_static(&FILL[..len as usize]))
            }
        };
        Poll::Ready(frame.map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        match self {
            ResponseBody::Bytes(bytes) => bytes.is_none(),
            ResponseBody::Fill { remaining } => *remaining == 0,
        }
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(match self {
            ResponseBody::Bytes(bytes) => bytes.as_ref().map_or(0, |b| b.len() as u64),
            ResponseBody::Fill { remaining } => *remaining,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_query_is_the_default_shape() {
        let shape = Shape::parse("").unwrap();
        assert_eq!(shape.status, StatusCode::OK);
        assert_eq!(shape.size, None);
        assert_eq!(shape.delay, Duration::ZERO);
        assert!(shape.headers.is_empty());
        assert!(!shape.close);
    }

    #[test]
    fn every_parameter_is_parsed() {
        let shape =
            Shape::parse("status=503&size=10&delay=20ms&header=X-A:1&header=x-b:%20two&close=1")
                .unwrap();
        assert_eq!(shape.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(shape.size, Some(10));
        assert_eq!(shape.delay, Duration::from_millis(20));
        assert_eq!(shape.headers.len(), 2);
        assert_eq!(shape.headers[0].0, "x-a");
        assert_eq!(shape.headers[1].1, "two");
        assert!(shape.close);
    }

    #[test]
    fn invalid_parameters_are_named_in_the_message() {
        let cases = [
            ("status=99", "`status`"),
            ("status=600", "`status`"),
            ("status=abc", "`status`"),
            ("size=-1", "`size`"),
            ("size=2000000000", "`size`"),
            ("delay=20", "`delay`"),
            ("delay=1parsec", "`delay`"),
            ("header=NoColon", "`header`"),
            ("header=Bad%20Name:1", "`header`"),
            ("header=Content-Length:5", "`header`"),
            ("close=yes", "`close`"),
            ("sise=10", "`sise`"),
            ("status=200&status=201", "`status`"),
        ];
        for (query, needle) in cases {
            let message = Shape::parse(query).expect_err(query);
            assert!(message.contains(needle), "{query}: {message}");
        }
    }

    #[test]
    fn fill_body_is_sent_in_frames_of_the_exact_total_length() {
        let total = FILL.len() as u64 * 2 + 5;
        let mut body = ResponseBody::Fill { remaining: total };
        assert_eq!(body.size_hint().exact(), Some(total));
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut sent = 0;
        while let Poll::Ready(Some(Ok(frame))) = Pin::new(&mut body).poll_frame(&mut cx) {
            sent += frame.into_data().unwrap().len() as u64;
        }
        assert_eq!(sent, total);
        assert!(body.is_end_stream());
    }
}
