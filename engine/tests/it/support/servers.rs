//! Small faulty (and one correct) HTTP servers on loopback, each on its own threads. Every one
//! stops when dropped, and by itself after [`FIXTURE_LIFETIME`] if it is leaked, so that no test
//! can hang on one.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a fixture serves: after this it closes its listener and connections by itself.
pub const FIXTURE_LIFETIME: Duration = Duration::from_secs(120);

/// How often the fixture threads look at their stop flag (accept polling, read timeouts).
const POLL: Duration = Duration::from_millis(10);

/// A loopback address where nothing listens: a port bound, then released. (Another process could
/// take the port in between; on a test machine that is unlikely within the test.)
pub fn down_addr() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local_addr")
}

/// The listener and threads shared by all the fixtures below.
#[derive(Debug)]
struct Fixture {
    addr: SocketAddr,
    state: Arc<State>,
    accept_thread: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct State {
    stop: AtomicBool,
    connections: AtomicU64,
    requests: AtomicU64,
}

impl Fixture {
    /// Binds `127.0.0.1:0` and runs `handler` on a thread per accepted connection.
    fn start(name: &str, handler: fn(&mut Conn, &State)) -> Fixture {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("set_nonblocking");
        let addr = listener.local_addr().expect("local_addr");
        let state = Arc::new(State::default());
        let thread_state = state.clone();
        let accept_thread = std::thread::Builder::new()
            .name(format!("{name}-accept"))
            .spawn(move || accept_loop(listener, thread_state, handler))
            .expect("spawn fixture thread");
        Fixture {
            addr,
            state,
            accept_thread: Some(accept_thread),
        }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.accept_thread.take() {
            let _ = thread.join();
        }
    }
}

fn accept_loop(listener: TcpListener, state: Arc<State>, handler: fn(&mut Conn, &State)) {
    let deadline = Instant::now() + FIXTURE_LIFETIME;
    let mut connections: Vec<JoinHandle<()>> = Vec::new();
    while !state.stop.load(Ordering::SeqCst) {
        if Instant::now() >= deadline {
            state.stop.store(true, Ordering::SeqCst);
            break;
        }
        match listener.accept() {
            Ok((stream, _)) => {
                state.connections.fetch_add(1, Ordering::SeqCst);
                let state = state.clone();
                connections.push(std::thread::spawn(move || {
                    if let Ok(mut conn) = Conn::new(stream, state.clone()) {
                        handler(&mut conn, &state);
                    }
                }));
                connections.retain(|thread| !thread.is_finished());
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::thread::sleep(POLL),
            Err(_) => std::thread::sleep(POLL),
        }
    }
    drop(listener);
    for thread in connections {
        let _ = thread.join();
    }
}

/// A request head as the fixtures see it.
#[derive(Debug)]
struct RequestHead {
    /// The client asked for `Connection: close` (or spoke HTTP/1.0 without keep-alive).
    close: bool,
}

/// One accepted connection, with a read buffer (requests may be pipelined).
struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    state: Arc<State>,
}

impl Conn {
    fn new(stream: TcpStream, state: Arc<State>) -> io::Result<Conn> {
        stream.set_nonblocking(false)?;
        stream.set_read_timeout(Some(POLL))?;
        stream.set_write_timeout(Some(Duration::from_secs(5)))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::new(),
            state,
        })
    }

    fn stopped(&self) -> bool {
        self.state.stop.load(Ordering::SeqCst)
    }

    /// Reads more bytes into the buffer. `false` when the client closed, the read failed, or the
    /// fixture is stopping.
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if self.stopped() {
                return false;
            }
            match self.stream.read(&mut chunk) {
                Ok(0) => return false,
                Ok(n) => {
                    self.buf.extend_from_slice(&chunk[..n]);
                    return true;
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) => {}
                Err(_) => return false,
            }
        }
    }

    /// Reads one whole request (head, and a `Content-Length` body, which is discarded) and counts
    /// it in `requests`. `None` when the connection ended or the fixture is stopping.
    fn read_request(&mut self) -> Option<RequestHead> {
        let (head_len, body_len, close) = loop {
            let mut headers = [httparse::EMPTY_HEADER; 64];
            let mut request = httparse::Request::new(&mut headers);
            match request.parse(&self.buf) {
                Ok(httparse::Status::Complete(head_len)) => {
                    let header = |name: &str| {
                        request
                            .headers
                            .iter()
                            .find(|h| h.name.eq_ignore_ascii_case(name))
                            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
                    };
                    let body_len: usize = header("content-length")
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(0);
                    let connection = header("connection").unwrap_or_default();
                    let close = connection == "close"
                        || (request.version == Some(0) && connection != "keep-alive");
                    break (head_len, body_len, close);
                }
                Ok(httparse::Status::Partial) => {
                    if !self.fill() {
                        return None;
                    }
                }
                Err(_) => return None,
            }
        };
        while self.buf.len() < head_len + body_len {
            if !self.fill() {
                return None;
            }
        }
        self.buf.drain(..head_len + body_len);
        self.state.requests.fetch_add(1, Ordering::SeqCst);
        Some(RequestHead { close })
    }

    fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream.write_all(bytes).is_ok()
    }

    /// Waits until the client closes (or the fixture stops), discarding what it sends.
    fn drain_until_closed(&mut self) {
        while self.fill() {
            self.buf.clear();
        }
    }
}

/// Accepts connections and reads requests, but never answers. Connections are closed when the
/// server is dropped.
#[derive(Debug)]
pub struct HangServer(Fixture);

impl HangServer {
    /// Starts on a free loopback port.
    pub fn start() -> HangServer {
        HangServer(Fixture::start("hang", |conn, _| {
            while conn.read_request().is_some() {}
        }))
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.0.addr
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.0.state.connections.load(Ordering::SeqCst)
    }

    /// Whole requests received so far (none answered).
    pub fn requests(&self) -> u64 {
        self.0.state.requests.load(Ordering::SeqCst)
    }
}

/// The head and the first bytes of the response of a [`CloseMidResponseServer`]: it promises
/// 1000 bytes of body and sends 10.
pub const CLOSE_MID_RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789";

/// Reads a request, answers [`CLOSE_MID_RESPONSE`] (a head announcing a 1000-byte body, then
/// only 10 bytes of it) and closes the connection.
#[derive(Debug)]
pub struct CloseMidResponseServer(Fixture);

impl CloseMidResponseServer {
    /// Starts on a free loopback port.
    pub fn start() -> CloseMidResponseServer {
        CloseMidResponseServer(Fixture::start("close-mid-response", |conn, _| {
            if conn.read_request().is_some() {
                conn.write(CLOSE_MID_RESPONSE);
            }
        }))
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.0.addr
    }

    /// Whole requests received so far.
    pub fn requests(&self) -> u64 {
        self.0.state.requests.load(Ordering::SeqCst)
    }
}

/// What a [`GarbageServer`] answers to each request: not HTTP.
pub const GARBAGE: &[u8] = b"garbage\r\n\r\n";

/// Reads a request and answers [`GARBAGE`]; then either closes the connection or keeps it open
/// (reading and discarding) until the client closes it.
#[derive(Debug)]
pub struct GarbageServer(Fixture);

impl GarbageServer {
    /// Answers garbage and keeps the connection open: a client must notice the garbage itself,
    /// not wait for the end of the connection.
    pub fn start() -> GarbageServer {
        GarbageServer(Fixture::start("garbage", |conn, _| {
            if conn.read_request().is_some() && conn.write(GARBAGE) {
                conn.drain_until_closed();
            }
        }))
    }

    /// Answers garbage, then closes the connection.
    pub fn start_closing() -> GarbageServer {
        GarbageServer(Fixture::start("garbage-closing", |conn, _| {
            if conn.read_request().is_some() {
                conn.write(GARBAGE);
            }
        }))
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.0.addr
    }

    /// Whole requests received so far.
    pub fn requests(&self) -> u64 {
        self.0.state.requests.load(Ordering::SeqCst)
    }
}

/// The body every [`CountingServer`] response carries (13 bytes), whatever the framing.
pub const COUNTING_BODY: &[u8] = b"hello, world\n";

/// How a [`CountingServer`] frames its responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `HTTP/1.1 200 OK` with `Content-Length`; keep-alive.
    ContentLength,
    /// `HTTP/1.1 200 OK` with `Transfer-Encoding: chunked`: several chunks (one with a chunk
    /// extension) and a trailer `X-Trailer: done`; keep-alive.
    Chunked,
    /// `HTTP/1.0 200 OK` without `Content-Length`: the body ends when the server closes the
    /// connection, after every response.
    CloseDelimited,
}

impl Framing {
    fn response(self) -> Vec<u8> {
        match self {
            Framing::ContentLength => {
                let mut response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n",
                    COUNTING_BODY.len()
                )
                .into_bytes();
                response.extend_from_slice(COUNTING_BODY);
                response
            }
            Framing::Chunked => {
                let (a, rest) = COUNTING_BODY.split_at(5);
                let (b, c) = rest.split_at(2);
                let mut response = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\
                    Transfer-Encoding: chunked\r\nTrailer: X-Trailer\r\n\r\n"
                    .to_vec();
                for (i, chunk) in [a, b, c].into_iter().enumerate() {
                    let extension = if i == 1 { ";ext=1" } else { "" };
                    response
                        .extend_from_slice(format!("{:x}{extension}\r\n", chunk.len()).as_bytes());
                    response.extend_from_slice(chunk);
                    response.extend_from_slice(b"\r\n");
                }
                response.extend_from_slice(b"0\r\nX-Trailer: done\r\n\r\n");
                response
            }
            Framing::CloseDelimited => {
                let mut response = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n".to_vec();
                response.extend_from_slice(COUNTING_BODY);
                response
            }
        }
    }
}

/// A minimal correct HTTP/1.1 server that answers every request with [`COUNTING_BODY`] in the
/// chosen [`Framing`], and counts the requests it answered. Keeps connections alive (except in
/// [`Framing::CloseDelimited`], or when the client sends `Connection: close`).
#[derive(Debug)]
pub struct CountingServer {
    fixture: Fixture,
}

impl CountingServer {
    /// Starts on a free loopback port.
    pub fn start(framing: Framing) -> CountingServer {
        let handler: fn(&mut Conn, &State) = match framing {
            Framing::ContentLength => |conn, _| answer_all(conn, Framing::ContentLength),
            Framing::Chunked => |conn, _| answer_all(conn, Framing::Chunked),
            Framing::CloseDelimited => |conn, _| answer_all(conn, Framing::CloseDelimited),
        };
        CountingServer {
            fixture: Fixture::start("counting", handler),
        }
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.fixture.addr
    }

    /// Requests answered so far. A request is counted once read whole, before its response is
    /// written: once a client has a response, it is counted.
    pub fn requests(&self) -> u64 {
        self.fixture.state.requests.load(Ordering::SeqCst)
    }

    /// Connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.fixture.state.connections.load(Ordering::SeqCst)
    }
}

fn answer_all(conn: &mut Conn, framing: Framing) {
    let response = framing.response();
    while let Some(request) = conn.read_request() {
        if !conn.write(&response) || request.close || framing == Framing::CloseDelimited {
            return;
        }
    }
}
