//! `loadgate serve`: the built-in test target (hyper, HTTP/1.1 with keep-alive and HTTP/2), shaped
//! by query parameters so that users can calibrate a spec and our tests can control the target.
//!
//! Over cleartext it speaks HTTP/1.1 and HTTP/2 with prior knowledge (h2c), told apart by
//! peeking at the connection's first bytes (the HTTP/2 preface), so that HTTP/1.1 connections
//! are served by hyper's HTTP/1.1 server with nothing in between. With `--tls-cert` and
//! `--tls-key` it speaks TLS only, offering `h2` and `http/1.1` by ALPN; `--tls-client-ca` makes
//! it require a client certificate signed by that CA (mTLS), refusing the handshake otherwise.
//! With TLS, `--h3` adds HTTP/3 (QUIC, ALPN `h3`) on UDP at the same port number, with the same
//! responses, and the HTTP/1.1 and HTTP/2 responses advertise it with `Alt-Svc: h3=":PORT"`.
//!
//! # Requests
//!
//! Any method and any path are accepted; the request body is read and discarded. The response is
//! shaped by the query string:
//!
//! | parameter           | meaning                                                     | default  |
//! |---------------------|-------------------------------------------------------------|----------|
//! | `status=NNN`        | response status, 200..=599                                   | 200      |
//! | `size=N`            | body length in bytes (`x` bytes), at most 2³⁰ (1 GiB)       | `ok\n`   |
//! | `delay=DUR`         | wait this long before answering, e.g. `20ms`, `1.5s`         | none     |
//! | `work=DUR`          | spin on the CPU until the serving thread used this much CPU time, e.g. `400us` (a service with CPU work per request; before `delay`) | none |
//! | `header=Name:Value` | set a response header (replaces the default `Content-Type`); repeat to add values | none |
//! | `close=1`           | answer with `Connection: close` and close the connection    | `close=0`|
//! | `events=N`          | an event stream (`text/event-stream`, Server-Sent Events) of N events `data: event`, up to 10,000 and 60 s in all, instead of a body | none |
//! | `interval=DUR`      | with `events`: the time before each event, up to `10s`       | `10ms`   |
//! | `server_timing=1`   | add `Server-Timing: app;dur=MS`, the milliseconds from the request's arrival to its answer (work and delay included) | none |
//! | `reset=CODE`        | abort the response, after `work` and `delay`, with this error code (0 to `0xffffffff`, decimal or `0x` hex): HTTP/3 resets the request stream, HTTP/2 sends `RST_STREAM`, HTTP/1.1 closes the connection without a response | none |
//!
//! e.g. `GET /any/path?status=503&size=1024&delay=20ms&header=Retry-After:1&close=1`.
//!
//! A parameter that is unknown, repeated (other than `header`) or invalid gets a `400 Bad Request`
//! whose plain-text body names the parameter, so that a typo fails loudly instead of silently
//! serving the defaults. `GET /health` (or `HEAD /health`) answers `200 ok\n` whatever the query,
//! for readiness probes. `HEAD` requests get the headers of the matching `GET` (its
//! `Content-Length` included), without the body; a `204` or `304` has no body on any protocol.
//!
//! # The stateful API
//!
//! Four paths under `/api/` are a small shop with sessions instead, so that flows (log in, take
//! the token, open an item, add it to a cart) run against something real. All bodies are JSON;
//! errors are `{"error": "..."}`; these paths take no query parameters (`400`), and another
//! method gets `405` with `Allow`.
//!
//! | request | answer |
//! |---------|--------|
//! | `POST /api/login` `{"user": U, "password": P}` | `200 {"token": "<32 hex>", "user": U}` and `Set-Cookie: session=<32 hex>; Path=/; HttpOnly` when `P` is `secret-U` (any user, 1 to 64 bytes); else `401` |
//! | `GET /api/items` | `200 {"items": [{"id": 1, "name": "anvil", "price": 4.5}, ...]}`: 20 items, ids 1 to 20 |
//! | `GET /api/items/{id}` | with the token (`Authorization: Bearer <token>`) or the `session` cookie: `200 {"id": .., "name": .., "price": ..}` with `ETag: "item-<id>"`, or `404` for an unknown id; without either, `401` |
//! | `POST /api/cart` `{"item": ID}` | with the token or cookie: `201 {"cart": [ids], "count": n}`, the session's cart after adding `ID` (`404` for an unknown item); else `401` |
//! | `GET /api/cart` | with the token or cookie: `200 {"cart": [ids], "count": n}`; else `401` |
//!
//! The state lives in memory, bounded: at most 10,000 sessions (a login past that evicts an old
//! one) and 100 items per cart (adding one more drops the oldest). Request bodies over 4 KiB get
//! `413`. The item path takes only a read lock on one of 16 shards, so that the API stays cheap
//! as a benchmark target.
//!
//! # gRPC and WebSocket
//!
//! | request | answer |
//! |---------|--------|
//! | `--grpc`, `POST /loadgate.echo.v1.Echo/Say` (`content-type: application/grpc`; HTTP/2: h2c with prior knowledge over cleartext, ALPN `h2` over TLS) | one `SayReply { text, sequence: 1, padding: size bytes }` after `delay_ms`, trailers `grpc-status: 0`; with `status` 1-16 a trailers-only failure with that `grpc-status` and `grpc-message: failed as asked` (after `delay_ms`) |
//! | `--grpc`, `POST /loadgate.echo.v1.Echo/Stream` | `count` replies (0: 3), numbered from 1, `delay_ms` before each, then `grpc-status: 0`; `status` fails as `Say` does |
//! | `--grpc`, another method | `grpc-status: 12` (`UNIMPLEMENTED`) |
//! | `GET /ws/echo` (HTTP/1.1 WebSocket upgrade, RFC 6455) | `101`, then each text or binary message echoed with its type; pings answered. Query: `delay=DUR` before each reply (up to `60s`), `size=N` a reply of N `x` bytes instead (up to 16 MiB), `close=CODE` closes with `CODE` (1000-1003, 1007-1014, 3000-4999) after the first reply |
//!
//! The messages are those of examples/echo.proto (`SayRequest { text, delay_ms, size, status,
//! count }`). A request that is not one uncompressed `SayRequest` gets `INTERNAL` (13), one over
//! 4 MiB `RESOURCE_EXHAUSTED` (8), one with `size` over 4 MiB, `count` over 10,000, `delay_ms`
//! over 60,000, a stream over 60 s (`count × delay_ms`) or `status` over 16 `INVALID_ARGUMENT`
//! (3) naming the field. Without `--grpc`, gRPC requests are plain HTTP requests as above.
//! `/ws/echo` without an upgrade gets `426` (HTTP/2 included), another method `405`, a bad query
//! `400` naming the parameter; client messages over 16 MiB close the connection with `1009`, and
//! a server that stops closes its WebSocket connections with `1001`.
//!
//! # Use from code
//!
//! - [`serve`] runs the `loadgate serve` command with [`ServeOptions`] (the command line's
//!   flags resolved by `cli`): its own multi-thread runtime, until SIGINT or SIGTERM.
//! - [`spawn`] starts a server on its own thread and runtime and returns a [`ServerHandle`]
//!   (the bound address; the server stops when the handle is dropped). This is what tests use;
//!   [`spawn_with`] adds TLS, [`spawn_h3`] TLS and HTTP/3, [`spawn_grpc`] gRPC.

use std::future::Future;
use std::io::{self, Write as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::Context as _;
use hyper::header::{self, HeaderValue};
use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::ServerConfig;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::plan::tls::{pem_certificates, read_private_key};

use respond::{Reset, handle};
use shop::Shop;

use crate::udp::UdpBuffers;

mod body;
mod grpc;
mod h3;
mod respond;
mod shop;
mod ws;

/// How long, after a shutdown is asked for, requests in flight may take to finish before their
/// connections are dropped.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// How long a client may take over its TLS handshake before the connection is dropped.
pub(crate) const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The listen backlog: pending connections the kernel queues before we accept them. Generous,
/// so that a burst of new connections at the start of a run is not dropped (a dropped SYN costs
/// the client a one-second retransmit, which would show up as latency).
const LISTEN_BACKLOG: u32 = 1024;

/// How many free TCP ports [`Server::bind`] tries, when asked for port 0 with HTTP/3, before
/// giving up on finding one whose UDP port number is free too.
const PORT_TRIES: usize = 16;

/// What `loadgate serve` serves, and how: the command line's flags, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// Address to listen on; port 0 picks a free port.
    pub listen: SocketAddr,
    /// Worker threads of the server's runtime, at least 1.
    pub threads: usize,
    /// TLS (HTTP/1.1 and HTTP/2 by ALPN), or `None` for cleartext.
    pub tls: Option<ServeTls>,
    /// Also serve HTTP/3 over UDP on the same port number (needs `tls`).
    pub h3: bool,
    /// Also answer gRPC: the `loadgate.echo.v1.Echo` service of examples/echo.proto.
    pub grpc: bool,
}

/// The server's TLS: PEM files, read when the server starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeTls {
    /// The certificate chain (PEM).
    pub cert: PathBuf,
    /// The private key of `cert` (PEM).
    pub key: PathBuf,
    /// Require client certificates signed by a CA in this PEM file (mTLS).
    pub client_ca: Option<PathBuf>,
}

/// Runs `loadgate serve`: binds `options.listen`, prints `loadgate serve: listening on
/// http://ADDR` (`https://` with TLS) on stdout, with the real port when port 0 was asked for
/// (with HTTP/3, a second line `loadgate serve: HTTP/3 on udp://ADDR`, and on stderr a line
/// saying how to raise the limits when the system gave the UDP socket smaller buffers than
/// asked), and serves on `options.threads` worker threads until SIGINT or SIGTERM (Ctrl-C or
/// Ctrl-Break on Windows), then returns `Ok`.
pub fn serve(options: &ServeOptions) -> anyhow::Result<()> {
    anyhow::ensure!(options.threads > 0, "a server needs at least 1 thread");
    raise_open_files_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.threads)
        .thread_name("loadgate-serve")
        .enable_all()
        .build()
        .context("cannot start the server's runtime")?;
    runtime.block_on(async {
        // Install the handlers before announcing the address, so that a SIGTERM sent as soon as
        // the line is read stops us cleanly instead of killing us.
        let shutdown =
            crate::signal::interrupt_signal().context("cannot install the signal handlers")?;
        let tls = match &options.tls {
            Some(tls) => Some(tls_config(&tls.cert, &tls.key, tls.client_ca.as_deref())?),
            None => None,
        };
        let scheme = if tls.is_some() { "https" } else { "http" };
        let mut server = Server::bind(options.listen, tls, options.h3)
            .with_context(|| format!("cannot listen on {}", options.listen))?;
        server.grpc = options.grpc;
        let mut stdout = io::stdout().lock();
        let addr = server.local_addr();
        writeln!(stdout, "loadgate serve: listening on {scheme}://{addr}")?;
        if options.h3 {
            writeln!(stdout, "loadgate serve: HTTP/3 on udp://{addr}")?;
        }
        stdout.flush()?;
        drop(stdout);
        if let Some(buffers) = server.udp_buffers.filter(UdpBuffers::limited) {
            // On stderr: stdout's first lines are the addresses, which scripts read.
            eprintln!("loadgate serve: {}", buffers.advice());
        }
        server.run_until(shutdown).await;
        anyhow::Ok(())
    })?;
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    Ok(())
}

/// Raises the soft limit of open files to the hard limit, so that a run with many connections
/// is not refused by the target; on macOS, where an unlimited hard limit is refused, to 10,240
/// (its `OPEN_MAX`). Best effort: a failure leaves the limit as it was. Windows has no such
/// limit.
#[cfg(unix)]
fn raise_open_files_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
        && setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_err()
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard.min(10_240).max(soft), hard);
    }
}

#[cfg(not(unix))]
fn raise_open_files_limit() {}

/// The TLS configuration of the server: the certificate chain and private key (PEM files), ALPN
/// `h2` then `http/1.1`, and, with `client_ca`, a mandatory client certificate signed by one of
/// the CAs in that PEM file.
pub fn tls_config(
    cert: &std::path::Path,
    key: &std::path::Path,
    client_ca: Option<&std::path::Path>,
) -> anyhow::Result<Arc<ServerConfig>> {
    let chain = pem_certificates(cert)
        .map_err(|e| anyhow::anyhow!("cannot read certificates from {}: {e}", cert.display()))?;
    anyhow::ensure!(
        !chain.is_empty(),
        "{} holds no PEM certificate",
        cert.display()
    );
    let key = read_private_key(key)
        .map_err(|e| anyhow::anyhow!("cannot read a private key from {}: {e}", key.display()))?;
    let provider = crate::plan::tls::provider();
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .context("TLS versions")?;
    let builder = match client_ca {
        None => builder.with_no_client_auth(),
        Some(file) => {
            let mut roots = rustls::RootCertStore::empty();
            for ca in pem_certificates(file).map_err(|e| {
                anyhow::anyhow!("cannot read certificates from {}: {e}", file.display())
            })? {
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
    spawn_server(addr, threads, None, false, false)
}

/// [`spawn`], speaking TLS with `tls` when given (see [`tls_config`]).
pub fn spawn_with(
    addr: SocketAddr,
    threads: usize,
    tls: Option<Arc<ServerConfig>>,
) -> io::Result<ServerHandle> {
    spawn_server(addr, threads, tls, false, false)
}

/// [`spawn_with`], answering gRPC too (`loadgate serve --grpc`): the `loadgate.echo.v1.Echo`
/// service of examples/echo.proto.
pub fn spawn_grpc(
    addr: SocketAddr,
    threads: usize,
    tls: Option<Arc<ServerConfig>>,
) -> io::Result<ServerHandle> {
    spawn_server(addr, threads, tls, false, true)
}

/// [`spawn_with`] TLS, and HTTP/3 over UDP on the same port number (`loadgate serve --h3`): a
/// port 0 in `addr` picks a port free for both TCP and UDP.
pub fn spawn_h3(
    addr: SocketAddr,
    threads: usize,
    tls: Arc<ServerConfig>,
) -> io::Result<ServerHandle> {
    spawn_server(addr, threads, Some(tls), true, false)
}

/// [`spawn_h3`] when `h3`, else [`spawn_with`]; gRPC too when `grpc`.
fn spawn_server(
    addr: SocketAddr,
    threads: usize,
    tls: Option<Arc<ServerConfig>>,
    h3: bool,
    grpc: bool,
) -> io::Result<ServerHandle> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .thread_name("loadgate-serve")
        .enable_all()
        .build()?;
    let secure = tls.is_some();
    let bound = {
        let _context = runtime.enter();
        Server::bind(addr, tls, h3)
    };
    let mut server = match bound {
        Ok(server) => server,
        Err(error) => {
            // Not a plain drop: that would panic when called from within another runtime.
            runtime.shutdown_background();
            return Err(error);
        }
    };
    server.grpc = grpc;
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
        tls: secure,
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
pub(crate) struct Server {
    listener: TcpListener,
    addr: SocketAddr,
    /// The TLS configuration, when the server speaks TLS.
    tls: Option<Arc<ServerConfig>>,
    /// The QUIC endpoint on UDP at `addr`, when the server speaks HTTP/3.
    quic: Option<quinn::Endpoint>,
    /// The buffer sizes of the QUIC endpoint's UDP socket, when the server speaks HTTP/3.
    udp_buffers: Option<UdpBuffers>,
    /// Whether gRPC calls are answered (else they are plain HTTP requests).
    grpc: bool,
}

impl Server {
    /// Binds `addr` (port 0 picks a free port), speaking TLS with `tls` (see [`tls_config`])
    /// when given, and with `h3` (which needs `tls`) HTTP/3 on UDP at the same port number: for
    /// port 0, up to [`PORT_TRIES`] free TCP ports are tried until one's UDP port is free too.
    ///
    /// Must be called from within a Tokio runtime (with I/O and time enabled); panics otherwise.
    pub(crate) fn bind(
        addr: SocketAddr,
        tls: Option<Arc<ServerConfig>>,
        h3: bool,
    ) -> io::Result<Server> {
        let quic = match (&tls, h3) {
            (_, false) => None,
            (Some(tls), true) => Some(h3::quic_config(tls)?),
            (None, true) => {
                let message = "HTTP/3 needs TLS: give a certificate and key";
                return Err(io::Error::new(io::ErrorKind::InvalidInput, message));
            }
        };
        let mut tries = 0;
        loop {
            let mut server = Server::bind_tcp(addr)?;
            server.tls = tls.clone();
            let Some(config) = quic.clone() else {
                return Ok(server);
            };
            match h3::bind(server.addr, config) {
                Ok((endpoint, buffers)) => {
                    server.quic = Some(endpoint);
                    server.udp_buffers = Some(buffers);
                    return Ok(server);
                }
                Err(error) if error.kind() == io::ErrorKind::AddrInUse && addr.port() == 0 => {
                    tries += 1;
                    if tries == PORT_TRIES {
                        return Err(error);
                    }
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Binds `addr` (TCP) with `SO_REUSEADDR` and a generous backlog.
    fn bind_tcp(addr: SocketAddr) -> io::Result<Server> {
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
            quic: None,
            udp_buffers: None,
            grpc: false,
        })
    }

    /// The address the server listens on, with the real port.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves connections until `shutdown` resolves; then stops accepting, lets requests in
    /// flight finish for up to [`SHUTDOWN_GRACE`] (idle keep-alive connections are closed at
    /// once; HTTP/3 connections get GOAWAY), drops the remaining connections and returns.
    pub(crate) async fn run_until(self, shutdown: impl Future<Output = ()>) {
        let mut http1 = http1::Builder::new();
        http1.keep_alive(true);
        let builders = Arc::new(Builders {
            http1,
            http2: http2::Builder::new(TokioExecutor::new()),
            alt_svc: self.quic.as_ref().map(|_| h3::alt_svc(self.addr.port())),
            grpc: self.grpc,
        });
        let shop = Arc::new(Shop::new());
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
                        let shop = shop.clone();
                        match self.tls.clone().map(TlsAcceptor::from) {
                            None => connections.spawn(async move {
                                let h2 = starts_with_h2_preface(&stream).await;
                                serve_connection(stream, h2, builders, shop, stopping).await;
                            }),
                            Some(tls) => connections.spawn(async move {
                                let accepted =
                                    tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, tls.accept(stream));
                                // A failed handshake (no client certificate, say) only ends
                                // this connection; rustls has sent the alert.
                                if let Ok(Ok(stream)) = accepted.await {
                                    let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
                                    serve_connection(stream, h2, builders, shop, stopping).await;
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
                Some(incoming) = accept_quic(self.quic.as_ref()) => {
                    let (shop, stopping) = (shop.clone(), stopping.clone());
                    connections.spawn(h3::serve_connection(incoming, shop, stopping));
                }
            }
            while connections.try_join_next().is_some() {}
        }
        drop(self.listener);
        let _ = stopping_tx.send(true);
        let drained = async { while connections.join_next().await.is_some() {} };
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, drained).await;
        // Dropping `connections` aborts what is left.
        drop(connections);
        if let Some(endpoint) = self.quic {
            h3::close(endpoint).await;
        }
    }
}

/// The next QUIC connection attempt of `endpoint`; `None` at once without one or once it is
/// closed (which disables the `select!` branch that awaits it).
async fn accept_quic(endpoint: Option<&quinn::Endpoint>) -> Option<quinn::Incoming> {
    match endpoint {
        Some(endpoint) => endpoint.accept().await,
        None => None,
    }
}

/// hyper's HTTP/1.1 and HTTP/2 servers, configured once, and what they add to every response.
struct Builders {
    http1: http1::Builder,
    http2: http2::Builder<TokioExecutor>,
    /// `Alt-Svc: h3=":PORT"` when the server speaks HTTP/3 too.
    alt_svc: Option<HeaderValue>,
    /// Whether gRPC calls go to the echo service (`serve/grpc.rs`).
    grpc: bool,
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
/// connection closed. `shop` is the server's stateful API, shared by its connections.
async fn serve_connection<S>(
    stream: S,
    h2: bool,
    builders: Arc<Builders>,
    shop: Arc<Shop>,
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
    let (alt_svc, grpc) = (builders.alt_svc.clone(), builders.grpc);
    let ws_stopping = stopping.clone();
    let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
        let (shop, alt_svc, ws_stopping) = (shop.clone(), alt_svc.clone(), ws_stopping.clone());
        async move {
            if grpc && grpc::is_grpc(&request) {
                return Ok(grpc::answer(request).await);
            }
            if request.uri().path() == ws::PATH {
                return Ok(ws::answer(request, ws_stopping));
            }
            // A service error makes hyper's HTTP/2 server reset the stream with the code of the
            // `h2::Error` it holds, and its HTTP/1.1 server close the connection unanswered.
            let mut response = handle(request, shop)
                .await
                .map_err(|Reset(code)| h2::Error::from(h2::Reason::from(code)))?;
            if let Some(value) = alt_svc {
                // A `header=Alt-Svc:...` in the query wins.
                response
                    .headers_mut()
                    .entry(header::ALT_SVC)
                    .or_insert(value);
            }
            Ok::<_, h2::Error>(response)
        }
    });
    if h2 {
        drive!(builders.http2.serve_connection(io, service));
    } else {
        drive!(builders.http1.serve_connection(io, service).with_upgrades());
    }
}
