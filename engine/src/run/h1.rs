//! The HTTP/1.1 wire path: write pre-built request bytes, read and frame one response.
//!
//! Responses are parsed with httparse; bodies are framed by `Content-Length`, chunked transfer coding (RFC 9112 §7.1) or the
//! connection's close (RFC 9112 §6.3), and are counted, not kept. One buffer per connection is reused for every response: no heap
//! allocation per request. The stream is a TCP connection or TLS over one.

use std::io;
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use self::chunked::ChunkedDecoder;
use super::stream::Seen;
pub(crate) use super::stream::Traffic;
use crate::measure::ErrorKind;

mod chunked;

/// Initial read buffer per connection, in bytes: small, so that 10,000 connections take
/// 10 MB (4 KB: 40 MB); a head that fills it doubles it, as a body read does.
const BUF_BYTES: usize = 1024;
/// A body read that fills the buffer doubles it, up to this many bytes: large bodies then
/// take few reads.
const MAX_BODY_BUF_BYTES: usize = 64 * 1024;
/// Largest response head (status line and headers) accepted, in bytes.
const MAX_HEAD_BYTES: usize = 64 * 1024;
/// Most response headers accepted.
const MAX_HEADERS: usize = 64;

/// Most body bytes kept for checks, per response.
pub(crate) const CAPTURE_BODY_BYTES: usize = 1024 * 1024;

/// A response kept for checks: its head (status line and headers) and up to
/// [`CAPTURE_BODY_BYTES`] of its (de-chunked) body. Reused across responses.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    pub(crate) head: Vec<u8>,
    pub(crate) body: Vec<u8>,
    /// Keep the body too (body and JSON checks); else only the head.
    pub(crate) keep_body: bool,
}

impl Capture {
    /// Keeps `bytes` of the body, up to [`CAPTURE_BODY_BYTES`] in all, if the body is wanted.
    pub(crate) fn body(&mut self, bytes: &[u8]) {
        if !self.keep_body {
            return;
        }
        let room = CAPTURE_BODY_BYTES.saturating_sub(self.body.len());
        self.body.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// A complete response, as far as a load test cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Response {
    pub(crate) status: u16,
    /// Whether the connection may carry the next request.
    pub(crate) keep_alive: bool,
    /// When the first byte of the response arrived.
    pub(crate) first_byte_at: Instant,
    /// When the last byte of the response arrived (the same read as the first byte, for a
    /// response that came in one read).
    pub(crate) last_byte_at: Instant,
}

/// One open HTTP/1.1 connection over `S`: TCP, or TLS over TCP.
pub(crate) struct H1Conn<S> {
    stream: S,
    buf: Vec<u8>,
    /// Maps a read or write error to its kind (TLS errors differ from TCP ones).
    io_error: fn(io::Error) -> ErrorKind,
    /// A response has been read on this connection: it is a reused keep-alive connection.
    reused: bool,
}

/// Why an exchange failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    /// A reused keep-alive connection was closed by the server before any byte of the
    /// response arrived: the race with the server's idle timeout. The request may be sent
    /// again on a new connection (as hyper and browsers do).
    Stale,
    Error(ErrorKind),
}

impl From<ErrorKind> for Failure {
    fn from(kind: ErrorKind) -> Failure {
        Failure::Error(kind)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> H1Conn<S> {
    /// Wraps an open stream; `io_error` classifies its read and write errors.
    pub(crate) fn new(stream: S, io_error: fn(io::Error) -> ErrorKind) -> H1Conn<S> {
        H1Conn {
            stream,
            buf: vec![0; BUF_BYTES],
            io_error,
            reused: false,
        }
    }
}

/// Classifies a read or write error of a TCP stream.
pub(crate) fn tcp_io_error(e: io::Error) -> ErrorKind {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => ErrorKind::Closed,
        io::ErrorKind::TimedOut => ErrorKind::Timeout,
        _ => ErrorKind::Reset,
    }
}

/// How the body of a response ends.
enum Framing {
    None,
    Length(u64),
    Chunked,
    Close,
}

impl<S: AsyncRead + AsyncWrite + Unpin> H1Conn<S> {
    /// Sends `request` and reads one complete response, counting the bytes into `traffic`.
    /// `is_head`: the request was `HEAD`, so the response has no body. With `capture`, the
    /// response is kept there for checks. `deadline`: the request's timeout, checked between
    /// body reads (a body that keeps arriving would otherwise hold the task past its timer).
    ///
    /// Errors: [`Failure::Stale`] for a reused connection the server had closed;
    /// [`ErrorKind::Closed`] when the server closes before the response is complete,
    /// [`ErrorKind::Reset`] on a reset, [`ErrorKind::Malformed`] for anything not HTTP/1.x,
    /// [`ErrorKind::Timeout`] past `deadline`.
    pub(crate) async fn exchange(
        &mut self,
        request: &[u8],
        is_head: bool,
        capture: Option<&mut Capture>,
        deadline: Instant,
        traffic: &mut Traffic,
    ) -> Result<Response, Failure> {
        let stale = |kind: ErrorKind| {
            if matches!(kind, ErrorKind::Closed | ErrorKind::Reset) {
                Failure::Stale
            } else {
                Failure::Error(kind)
            }
        };
        let io_error = self.io_error;
        let written = match self.write_counted(request, traffic).await {
            Ok(()) => self.stream.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = written {
            let kind = io_error(e);
            return Err(if self.reused {
                stale(kind)
            } else {
                kind.into()
            });
        }
        traffic.seen.written();
        match self
            .read_response(is_head, capture, deadline, traffic)
            .await
        {
            Err((kind, true)) if self.reused => Err(stale(kind)),
            Err((kind, _)) => Err(kind.into()),
            Ok(response) => {
                self.reused = true;
                Ok(response)
            }
        }
    }

    /// Writes all of `request` (as `write_all`), counting the bytes written into `traffic`.
    async fn write_counted(&mut self, request: &[u8], traffic: &mut Traffic) -> io::Result<()> {
        let mut rest = request;
        while !rest.is_empty() {
            let n = self.stream.write(rest).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            traffic.sent += n as u64;
            rest = &rest[n..];
        }
        Ok(())
    }

    /// Reads one response, counting its bytes into `traffic` as they arrive. Errors carry
    /// whether nothing of the response had arrived.
    async fn read_response(
        &mut self,
        is_head: bool,
        mut capture: Option<&mut Capture>,
        deadline: Instant,
        traffic: &mut Traffic,
    ) -> Result<Response, (ErrorKind, bool)> {
        let mut arrival = Arrival::default();
        let (status, head_len, framing, mut keep_alive, filled) =
            self.read_head(is_head, &mut arrival, traffic).await?;
        let in_buf = filled - head_len;
        if let Some(c) = capture.as_deref_mut() {
            c.head.clear();
            c.head.extend_from_slice(&self.buf[..head_len]);
            c.body.clear();
        }
        let io_error = self.io_error;
        match framing {
            Framing::None => keep_alive &= in_buf == 0,
            Framing::Length(length) => {
                if in_buf as u64 > length {
                    // Bytes beyond the response: the connection is out of step; do not reuse.
                    keep_alive = false;
                }
                if let Some(c) = capture.as_deref_mut() {
                    let end = head_len + in_buf.min(usize::try_from(length).unwrap_or(usize::MAX));
                    c.body(&self.buf[head_len..end]);
                }
                let mut remaining = length.saturating_sub(in_buf as u64);
                while remaining > 0 {
                    let n = self.read_body().await.map_err(|e| (io_error(e), false))?;
                    if n == 0 {
                        return Err((ErrorKind::Closed, false));
                    }
                    arrival.body_read(n, deadline, &mut traffic.received)?;
                    if n as u64 > remaining {
                        keep_alive = false;
                    }
                    if let Some(c) = capture.as_deref_mut() {
                        c.body(
                            &self.buf[..n.min(usize::try_from(remaining).unwrap_or(usize::MAX))],
                        );
                    }
                    remaining = remaining.saturating_sub(n as u64);
                }
            }
            Framing::Chunked => {
                let mut decoder = ChunkedDecoder::default();
                let mut sink = |data: &[u8]| {
                    traffic.seen.data(data);
                    if let Some(c) = capture.as_deref_mut() {
                        c.body(data);
                    }
                };
                let used = decoder
                    .feed(&self.buf[head_len..filled], &mut sink)
                    .map_err(|k| (k, false))?;
                if decoder.is_done() {
                    keep_alive &= used == in_buf;
                }
                while !decoder.is_done() {
                    let n = self.read_body().await.map_err(|e| (io_error(e), false))?;
                    if n == 0 {
                        return Err((ErrorKind::Closed, false));
                    }
                    arrival.body_read(n, deadline, &mut traffic.received)?;
                    let used = decoder
                        .feed(&self.buf[..n], &mut sink)
                        .map_err(|k| (k, false))?;
                    if decoder.is_done() {
                        keep_alive &= used == n;
                    }
                }
            }
            Framing::Close => {
                keep_alive = false;
                traffic.seen.data(&self.buf[head_len..filled]);
                if let Some(c) = capture.as_deref_mut() {
                    c.body(&self.buf[head_len..filled]);
                }
                loop {
                    let n = self.read_body().await.map_err(|e| (io_error(e), false))?;
                    if n == 0 {
                        break;
                    }
                    arrival.body_read(n, deadline, &mut traffic.received)?;
                    traffic.seen.data(&self.buf[..n]);
                    if let Some(c) = capture.as_deref_mut() {
                        c.body(&self.buf[..n]);
                    }
                }
            }
        }
        Ok(Response {
            status,
            keep_alive,
            first_byte_at: arrival.first_byte_at.expect("a head was read"),
            last_byte_at: arrival.last_byte_at.expect("a head was read"),
        })
    }

    /// Reads until a final (non-1xx) response head is complete, skipping interim responses.
    /// Returns its status, length, framing and keep-alive, and the bytes in the buffer (the
    /// head and what came with it); counts the bytes read into `traffic`.
    #[inline]
    async fn read_head(
        &mut self,
        is_head: bool,
        arrival: &mut Arrival,
        traffic: &mut Traffic,
    ) -> Result<(u16, usize, Framing, bool, usize), (ErrorKind, bool)> {
        let io_error = self.io_error;
        let mut filled = 0;
        loop {
            if filled > 0 {
                let head = parse_head(&self.buf[..filled], is_head, &mut traffic.seen);
                match head.map_err(|k| (k, false))? {
                    Head::Partial => {}
                    Head::Interim(len) => {
                        self.buf.copy_within(len..filled, 0);
                        filled -= len;
                        continue;
                    }
                    Head::Complete {
                        status,
                        len,
                        framing,
                        keep_alive,
                    } => return Ok((status, len, framing, keep_alive, filled)),
                }
            }
            if filled == self.buf.len() {
                if self.buf.len() >= MAX_HEAD_BYTES {
                    return Err((ErrorKind::Malformed, false));
                }
                self.buf.resize(self.buf.len() * 2, 0);
            }
            let n = self
                .stream
                .read(&mut self.buf[filled..])
                .await
                .map_err(|e| (io_error(e), arrival.total == 0))?;
            if n == 0 {
                return Err((ErrorKind::Closed, arrival.total == 0));
            }
            let at = Instant::now();
            arrival.first_byte_at.get_or_insert(at);
            arrival.last_byte_at = Some(at);
            filled += n;
            arrival.total += n as u64;
            traffic.received += n as u64;
        }
    }
}

/// What has arrived of a response so far: the bytes of its head, and when the first and the
/// last byte came.
#[derive(Debug, Default, Clone, Copy)]
struct Arrival {
    /// Bytes of the head (and what came with it) read so far.
    total: u64,
    /// When the first byte arrived (`None` before it).
    first_byte_at: Option<Instant>,
    /// When the latest byte arrived (`None` before the first).
    last_byte_at: Option<Instant>,
}

impl Arrival {
    /// Notes `n` body bytes just read, into `received`. Errors: [`ErrorKind::Timeout`] when
    /// they came at or after `deadline` (the clock is read here anyway, for the last byte's
    /// time).
    #[inline]
    fn body_read(
        &mut self,
        n: usize,
        deadline: Instant,
        received: &mut u64,
    ) -> Result<(), (ErrorKind, bool)> {
        *received += n as u64;
        let now = Instant::now();
        self.last_byte_at = Some(now);
        if now >= deadline {
            return Err((ErrorKind::Timeout, false));
        }
        Ok(())
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> H1Conn<S> {
    /// Reads body bytes into the start of the buffer; a read that fills it doubles the
    /// buffer (up to [`MAX_BODY_BUF_BYTES`]) for the next one.
    async fn read_body(&mut self) -> io::Result<usize> {
        let n = self.stream.read(&mut self.buf).await?;
        if n == self.buf.len() && self.buf.len() < MAX_BODY_BUF_BYTES {
            self.buf.resize(self.buf.len() * 2, 0);
        }
        Ok(n)
    }
}

/// A status code as every protocol takes it (HTTP/2 and HTTP/3 in `multiplexed`): RFC 9110
/// §15 defines 100 to 599; any other (httparse, h2 and h3 take three digits up to 999) is
/// [`ErrorKind::Malformed`], a failed request in no `status_codes` entry.
pub(crate) fn checked_status(status: u16) -> Result<u16, ErrorKind> {
    let defined = (100..600).contains(&status);
    defined.then_some(status).ok_or(ErrorKind::Malformed)
}

enum Head {
    Partial,
    /// A 1xx interim response of this many bytes, to be skipped.
    Interim(usize),
    Complete {
        status: u16,
        len: usize,
        framing: Framing,
        keep_alive: bool,
    },
}

/// Parses a response head; a final one's header fields that matter to [`Seen`] are noted there
/// in the same pass, and whether its body is streamed.
fn parse_head(bytes: &[u8], is_head: bool, seen: &mut Seen) -> Result<Head, ErrorKind> {
    // Uninitialised: zeroing 64 headers per response costs more than parsing a short head.
    let mut headers = [const { std::mem::MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(Head::Partial),
        Err(_) => return Err(ErrorKind::Malformed),
    };
    let status = checked_status(response.code.ok_or(ErrorKind::Malformed)?)?;
    if (100..200).contains(&status) && status != 101 {
        return Ok(Head::Interim(len));
    }
    let mut keep_alive = response.version == Some(1);
    let mut content_length: Option<u64> = None;
    let mut chunked = false;
    let mut transfer_encoding = false;
    for header in response.headers.iter() {
        let (name, value) = (header.name.as_bytes(), header.value.trim_ascii());
        // One byte first: most fields are none of these (`Date`, `Server`...).
        if !matches!(
            name.first(),
            Some(b'c' | b'C' | b't' | b'T' | b's' | b'S' | b'x' | b'X' | b'a' | b'A')
        ) {
            continue;
        }
        if name.eq_ignore_ascii_case(b"content-length") {
            let value = std::str::from_utf8(value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or(ErrorKind::Malformed)?;
            if content_length.is_some_and(|c| c != value) {
                return Err(ErrorKind::Malformed);
            }
            content_length = Some(value);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            transfer_encoding = true;
            chunked = value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|last| last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        } else {
            seen.header(name, value);
        }
    }
    if status == 101 {
        // Switching protocols: what follows is not HTTP/1.1 any more.
        keep_alive = false;
    }
    // RFC 9112 §6.3: a transfer coding other than chunked ends at the close, whatever
    // Content-Length says.
    let framing = if is_head || status == 204 || status == 304 || (100..200).contains(&status) {
        Framing::None
    } else if chunked {
        Framing::Chunked
    } else if transfer_encoding {
        Framing::Close
    } else if let Some(length) = content_length {
        Framing::Length(length)
    } else {
        Framing::Close
    };
    seen.streamed(matches!(framing, Framing::Chunked));
    Ok(Head::Complete {
        status,
        len,
        framing,
        keep_alive,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_framed() {
        let framing = |raw: &[u8], is_head| match parse_head(raw, is_head, &mut Seen::default()) {
            Ok(Head::Complete {
                status,
                framing,
                keep_alive,
                ..
            }) => Some((
                status,
                match framing {
                    Framing::None => "none".to_string(),
                    Framing::Length(n) => format!("len {n}"),
                    Framing::Chunked => "chunked".to_string(),
                    Framing::Close => "close".to_string(),
                },
                keep_alive,
            )),
            _ => None,
        };
        let s = |a: &str| a.to_string();
        assert_eq!(
            framing(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", false),
            Some((200, s("len 12"), true))
        );
        assert_eq!(
            framing(b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n", true),
            Some((200, s("none"), true))
        );
        assert_eq!(
            framing(
                b"HTTP/1.1 500 X\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n",
                false
            ),
            Some((500, s("chunked"), false))
        );
        assert_eq!(
            framing(b"HTTP/1.0 200 OK\r\n\r\n", false),
            Some((200, s("close"), false))
        );
        assert_eq!(
            framing(b"HTTP/1.0 204 OK\r\nConnection: keep-alive\r\n\r\n", false),
            Some((204, s("none"), true))
        );
        assert_eq!(
            framing(
                b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\n",
                false
            ),
            Some((200, s("close"), true))
        );
        assert_eq!(
            framing(b"HTTP/1.1 101 Switching\r\nUpgrade: x\r\n\r\n", false),
            Some((101, s("none"), false))
        );
        assert!(matches!(
            parse_head(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200",
                false,
                &mut Seen::default()
            ),
            Ok(Head::Interim(25))
        ));
        assert!(matches!(
            parse_head(
                b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
                false,
                &mut Seen::default()
            ),
            Err(ErrorKind::Malformed)
        ));
        assert!(matches!(
            parse_head(b"garbage\r\n\r\n", false, &mut Seen::default()),
            Err(ErrorKind::Malformed)
        ));
        assert!(matches!(
            parse_head(b"HTTP/1.1 200 OK\r\nA: b", false, &mut Seen::default()),
            Ok(Head::Partial)
        ));
    }

    #[test]
    fn the_fields_that_matter_are_seen_in_the_same_pass() {
        let mut seen = Seen::default();
        let raw = b"HTTP/1.1 200 OK\r\nServer: x\r\nserver-timing: db;dur=2\r\n\
            X-Envoy-Upstream-Service-Time: 7\r\nContent-Length: 2\r\n\
            Alt-Svc: h3=\":8443\"; ma=60\r\nSERVER-TIMING:  app;dur=3 \r\n\r\nok";
        assert!(matches!(
            parse_head(&raw[..20], false, &mut seen),
            Ok(Head::Partial)
        ));
        assert!(seen.server_timing.is_empty(), "nothing from a partial head");
        assert!(matches!(
            parse_head(raw, false, &mut seen),
            Ok(Head::Complete {
                status: 200,
                framing: Framing::Length(2),
                keep_alive: true,
                ..
            })
        ));
        assert_eq!(seen.server_timing, b"db;dur=2,app;dur=3");
        assert_eq!(seen.envoy_us, Some(7_000));
        assert_eq!(seen.alt_svc_h3, b"h3=\":8443\"");
        let mut interim = Seen::default();
        let raw = b"HTTP/1.1 103 Early Hints\r\nServer-Timing: a;dur=1\r\n\r\n";
        assert!(matches!(
            parse_head(raw, false, &mut interim),
            Ok(Head::Interim(_))
        ));
        assert!(
            interim.server_timing.is_empty(),
            "an interim head's fields are not the response's"
        );
    }
}
