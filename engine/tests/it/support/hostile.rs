//! A test server that misbehaves on purpose, one way per [`Misbehaviour`]: garbage, broken
//! framing, a trickle, silence, resets, a 10 GB body, huge heads, and a few legal but unusual
//! answers. It runs on its own tokio runtime (one worker thread) on `127.0.0.1`, counts the
//! connections it accepted, and stops when dropped, or by itself after [`HOSTILE_LIFETIME`].
//!
//! Requests are read as heads only (up to the blank line): the specs of the tests that use it
//! send `GET` without a body.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The longest the server serves, and the longest one connection is served: then it closes by
/// itself, so that no test can hang on it.
pub const HOSTILE_LIFETIME: Duration = Duration::from_secs(120);

/// The gap between two bytes of [`Misbehaviour::Trickle`].
pub const TRICKLE_GAP: Duration = Duration::from_millis(300);

/// The `Content-Length` of [`Misbehaviour::HugeBody`]: 10 GB.
pub const HUGE_BODY_BYTES: u64 = 10 * 1024 * 1024 * 1024;

/// The length of the one header line of [`Misbehaviour::HugeHeaderLine`]: 2 MB.
pub const HUGE_HEADER_LINE_BYTES: usize = 2 * 1024 * 1024;

/// How many headers [`Misbehaviour::ManyHeaders`] sends.
pub const MANY_HEADERS: usize = 20_000;

/// A well-formed answer with a 2-byte body, kept alive.
const OK: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";

/// How the server answers each request.
#[derive(Debug, Clone)]
pub enum Misbehaviour {
    /// Bytes that are not HTTP, then silence until the client closes.
    Garbage,
    /// A status line whose code is not a number (`2OO`), then silence.
    BadStatusLine,
    /// `Content-Length: 1000`, 10 bytes of body, then close.
    ShortBody,
    /// A chunked body whose first chunk size is not hexadecimal (`zz`), then silence.
    BadChunkSize,
    /// A well-formed answer, one byte every [`TRICKLE_GAP`].
    Trickle,
    /// Reads every request and never answers.
    NoAnswer,
    /// Reads the request, then resets the connection (`SO_LINGER` 0, close).
    Reset,
    /// Announces [`HUGE_BODY_BYTES`] of body and streams zeros (never buffered) until the
    /// client closes or all are sent.
    HugeBody,
    /// A head with one header line of [`HUGE_HEADER_LINE_BYTES`].
    HugeHeaderLine,
    /// A head with [`MANY_HEADERS`] headers.
    ManyHeaders,
    /// A well-formed answer with `Connection: close`, then close: one request per connection.
    CloseEveryResponse,
    /// `100 Continue`, then a well-formed `200` (a separate write), kept alive.
    Continue100,
    /// `500 Internal Server Error` with a 5-byte body, kept alive.
    ServerError,
    /// Reads the request, then closes without a byte of answer.
    EmptyReply,
    /// Writes these pieces (each its own write), then closes: for fuzzing the client's
    /// response parser.
    Script(Arc<Vec<Vec<u8>>>),
}

/// A running misbehaving server.
pub struct HostileServer {
    addr: SocketAddr,
    connections: Arc<AtomicU64>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl HostileServer {
    /// Starts on a free port of `127.0.0.1`.
    pub fn start(misbehaviour: Misbehaviour) -> HostileServer {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("hostile-server")
            .enable_all()
            .build()
            .expect("a tokio runtime");
        // The fuzzers start a server per case, thousands a minute: each closed port lingers in
        // TIME_WAIT for 60 s, and the ephemeral range (28,000 ports) can run out. Then wait for
        // one to free up rather than fail the case (the fuzzers' rounds are bounded in time).
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        let listener = loop {
            match runtime.block_on(TcpListener::bind("127.0.0.1:0")) {
                Err(e)
                    if e.kind() == std::io::ErrorKind::AddrInUse
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(100));
                }
                bound => break bound.expect("bind 127.0.0.1:0"),
            }
        };
        let addr = listener.local_addr().expect("local_addr");
        let connections = Arc::new(AtomicU64::new(0));
        let count = connections.clone();
        runtime.spawn(async move {
            let _ = tokio::time::timeout(HOSTILE_LIFETIME, async {
                while let Ok((stream, _)) = listener.accept().await {
                    count.fetch_add(1, Ordering::SeqCst);
                    let misbehaviour = misbehaviour.clone();
                    tokio::spawn(tokio::time::timeout(
                        HOSTILE_LIFETIME,
                        serve(stream, misbehaviour),
                    ));
                }
            })
            .await;
        });
        HostileServer {
            addr,
            connections,
            runtime: Some(runtime),
        }
    }

    /// `http://ADDR/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Connections accepted so far (the client's check at start included).
    pub fn connections(&self) -> u64 {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for HostileServer {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            // Cancels every task: their sockets are closed.
            runtime.shutdown_background();
        }
    }
}

/// Serves one connection; ends when the client closes, on any I/O error, or when the
/// misbehaviour ends the connection.
async fn serve(mut stream: TcpStream, misbehaviour: Misbehaviour) {
    let _ = stream.set_nodelay(true);
    let mut buf = Vec::new();
    while read_head(&mut stream, &mut buf).await {
        let keep_alive = match answer(&mut stream, &misbehaviour).await {
            Ok(keep_alive) => keep_alive,
            Err(_) => return,
        };
        if !keep_alive {
            return;
        }
    }
}

/// What the server does after a canned answer.
enum Then {
    /// Reads the next request.
    KeepAlive,
    /// Reads and discards until the client closes: the client must see the fault by itself.
    Drain,
    /// Closes the connection.
    Close,
}

/// The misbehaviours that are one fixed answer, and what follows it.
fn canned(misbehaviour: &Misbehaviour) -> Option<(&'static [u8], Then)> {
    let canned: (&'static [u8], Then) = match misbehaviour {
        Misbehaviour::Garbage => (b"\x00\xff\x13not http at all\r\n\r\n", Then::Drain),
        Misbehaviour::BadStatusLine => (
            b"HTTP/1.1 2OO OK\r\nContent-Length: 2\r\n\r\nok",
            Then::Drain,
        ),
        Misbehaviour::ShortBody => (
            b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789",
            Then::Close,
        ),
        Misbehaviour::BadChunkSize => (
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
            Then::Drain,
        ),
        Misbehaviour::ServerError => (
            b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\nerror",
            Then::KeepAlive,
        ),
        Misbehaviour::NoAnswer => (b"", Then::KeepAlive),
        Misbehaviour::EmptyReply => (b"", Then::Close),
        _ => return None,
    };
    Some(canned)
}

/// Answers one request as `misbehaviour` says. `Ok(true)`: read the next request on this
/// connection; `Ok(false)`: the connection is done (closed, reset, or drained).
async fn answer(stream: &mut TcpStream, misbehaviour: &Misbehaviour) -> std::io::Result<bool> {
    if let Some((bytes, then)) = canned(misbehaviour) {
        stream.write_all(bytes).await?;
        return Ok(match then {
            Then::KeepAlive => true,
            Then::Drain => {
                drain(stream).await;
                false
            }
            Then::Close => false,
        });
    }
    match misbehaviour {
        Misbehaviour::Trickle => {
            for byte in OK {
                stream.write_all(&[*byte]).await?;
                tokio::time::sleep(TRICKLE_GAP).await;
            }
        }
        Misbehaviour::Reset => {
            stream.set_zero_linger()?;
            return Ok(false);
        }
        Misbehaviour::HugeBody => {
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {HUGE_BODY_BYTES}\r\n\r\n");
            stream.write_all(head.as_bytes()).await?;
            let block = vec![0u8; 64 * 1024];
            let mut left = HUGE_BODY_BYTES;
            while left > 0 {
                let n = left.min(block.len() as u64) as usize;
                stream.write_all(&block[..n]).await?;
                left -= n as u64;
            }
        }
        Misbehaviour::HugeHeaderLine => {
            let mut head = b"HTTP/1.1 200 OK\r\nX-Big: ".to_vec();
            head.resize(head.len() + HUGE_HEADER_LINE_BYTES, b'a');
            head.extend_from_slice(b"\r\nContent-Length: 2\r\n\r\nok");
            stream.write_all(&head).await?;
        }
        Misbehaviour::ManyHeaders => {
            let mut head = b"HTTP/1.1 200 OK\r\n".to_vec();
            for i in 0..MANY_HEADERS {
                head.extend_from_slice(format!("X-Header-{i}: {i}\r\n").as_bytes());
            }
            head.extend_from_slice(b"Content-Length: 2\r\n\r\nok");
            stream.write_all(&head).await?;
        }
        Misbehaviour::CloseEveryResponse => {
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok")
                .await?;
            stream.shutdown().await?;
            return Ok(false);
        }
        Misbehaviour::Continue100 => {
            stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
            stream.flush().await?;
            stream.write_all(OK).await?;
        }
        Misbehaviour::Script(pieces) => {
            for piece in pieces.iter() {
                stream.write_all(piece).await?;
                stream.flush().await?;
            }
            return Ok(false);
        }
        _ => unreachable!("canned above"),
    }
    Ok(true)
}

/// Reads one request head (through its blank line) into `buf`, and drops it from `buf`.
/// `false` when the client closed or the read failed first.
async fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>) -> bool {
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            buf.drain(..end + 4);
            return true;
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Reads and discards until the client closes (or the read fails).
async fn drain(stream: &mut TcpStream) {
    let mut chunk = [0u8; 4096];
    while let Ok(n) = stream.read(&mut chunk).await {
        if n == 0 {
            return;
        }
    }
}
