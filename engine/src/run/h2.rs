//! The HTTP/2 path (the `h2` crate): one connection carries up to `streams` concurrent
//! requests, one per virtual user of its group.
//!
//! A group's virtual users share a [`Shared`] per connection slot: the first that needs a
//! connection opens it while the others wait, then each sends its requests on a handle to
//! it. A task of its own drives the connection (frames, flow control, pings). When the server
//! sends GOAWAY, streams it will not process fail (counted as [`ErrorKind::GoAway`]), the
//! connection is dropped from the slot and the next request opens a new one. Bodies are
//! counted and their flow-control capacity released at once, with windows sized so that a
//! connection is not held back by WINDOW_UPDATE round trips.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::io;
use std::rc::Rc;
use std::time::Instant;

use bytes::Bytes;
use h2::client::SendRequest;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use crate::measure::{ErrorKind, Setup};
use crate::plan::TargetPlan;
use crate::run::h1::{Capture, Traffic};
use crate::run::transport::Outgoing;

/// Initial flow-control window of each stream, in bytes (4 MiB; the protocol's default is
/// 64 KiB, which caps a stream at 64 KiB per round trip).
pub(crate) const STREAM_WINDOW_BYTES: u32 = 4 << 20;
/// Initial flow-control window of each connection, in bytes (64 MiB: room for many streams
/// receiving at once).
pub(crate) const CONNECTION_WINDOW_BYTES: u32 = 64 << 20;

/// Starts HTTP/2 on an open stream (prior knowledge: the client preface goes out at once)
/// and spawns the task that drives the connection. Returns the request handle, the driver
/// task, and the ping handle (for the check at start).
pub(crate) async fn handshake<T>(
    io: T,
) -> Result<(SendRequest<Bytes>, JoinHandle<()>, Option<h2::PingPong>), h2::Error>
where
    T: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (send, mut connection) = h2::client::Builder::new()
        .initial_window_size(STREAM_WINDOW_BYTES)
        .initial_connection_window_size(CONNECTION_WINDOW_BYTES)
        .enable_push(false)
        .handshake::<T, Bytes>(io)
        .await?;
    let ping = connection.ping_pong();
    let driver = tokio::spawn(async move {
        // Ends when the connection closes: GOAWAY and its streams done, an I/O error, or
        // every handle dropped. Request futures see the error themselves.
        let _ = connection.await;
    });
    Ok((send, driver, ping))
}

/// The connection of one slot, shared by a group's virtual users.
#[derive(Default)]
pub(crate) struct Shared {
    live: RefCell<Option<Live>>,
    /// A virtual user is opening the connection; the others wait on `opened`.
    opening: Cell<bool>,
    opened: Notify,
    /// Serial number of the next connection, to tell a dead one from its successor.
    serial: Cell<u64>,
    /// The setup of connection `.0`, until a response on it reports it (a stream that fails
    /// does not: the next one that succeeds, on any handle, does).
    unreported_setup: Cell<Option<(u64, Setup)>>,
}

/// An open HTTP/2 connection.
struct Live {
    send: SendRequest<Bytes>,
    driver: JoinHandle<()>,
    serial: u64,
    io_error: fn(io::Error) -> ErrorKind,
}

/// A virtual user's handle to a shared connection.
pub(crate) struct H2Conn {
    send: SendRequest<Bytes>,
    serial: u64,
    io_error: fn(io::Error) -> ErrorKind,
    shared: Rc<Shared>,
}

/// A complete HTTP/2 response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct H2Response {
    pub(crate) status: u16,
    /// When the request was handed to the connection (a stream was free).
    pub(crate) sent_at: Instant,
    /// When the response's header block arrived.
    pub(crate) headers_at: Instant,
}

/// Why an HTTP/2 request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum H2Failure {
    /// The request was not sent: the connection was already going away or closed. Safe to
    /// send again on a new connection; the kind counts it if that fails too.
    NotSent(ErrorKind),
    /// The request failed after it was sent.
    Failed(ErrorKind),
}

impl H2Failure {
    /// How the failure is counted.
    pub(crate) fn kind(self) -> ErrorKind {
        match self {
            H2Failure::NotSent(kind) | H2Failure::Failed(kind) => kind,
        }
    }
}

impl Shared {
    /// A handle to the slot's open connection; or, when there is none, opens one with `open`
    /// (which returns an HTTP/2 connection and its setup) while other virtual users wait.
    pub(crate) async fn connect<F, Fut>(self: &Rc<Self>, open: F) -> Result<H2Conn, ErrorKind>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Opened, ErrorKind>>,
    {
        loop {
            if let Some(conn) = self.handle() {
                return Ok(conn);
            }
            if self.opening.get() {
                // Registered on its first poll, before the opener can run again (one thread).
                self.opened.notified().await;
                continue;
            }
            return self.open(open).await;
        }
    }

    /// Installs a connection opened elsewhere (HTTP/2 chosen by ALPN) as the slot's.
    pub(crate) fn install(self: &Rc<Self>, opened: Opened) -> H2Conn {
        let serial = self.serial.get();
        self.serial.set(serial + 1);
        self.unreported_setup.set(Some((serial, opened.setup)));
        let conn = H2Conn {
            send: opened.send.clone(),
            serial,
            io_error: opened.io_error,
            shared: self.clone(),
        };
        *self.live.borrow_mut() = Some(Live {
            send: opened.send,
            driver: opened.driver,
            serial,
            io_error: opened.io_error,
        });
        conn
    }

    fn handle(self: &Rc<Self>) -> Option<H2Conn> {
        let mut live = self.live.borrow_mut();
        if live.as_ref().is_some_and(|l| l.driver.is_finished()) {
            *live = None;
        }
        live.as_ref().map(|l| H2Conn {
            send: l.send.clone(),
            serial: l.serial,
            io_error: l.io_error,
            shared: self.clone(),
        })
    }

    async fn open<F, Fut>(self: &Rc<Self>, open: F) -> Result<H2Conn, ErrorKind>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Opened, ErrorKind>>,
    {
        /// Lets the waiting virtual users go on when the opener is done, fails, or is
        /// cancelled by its request's timeout.
        struct Opening<'a>(&'a Shared);
        impl Drop for Opening<'_> {
            fn drop(&mut self) {
                self.0.opening.set(false);
                self.0.opened.notify_waiters();
            }
        }
        self.opening.set(true);
        let _opening = Opening(self);
        let opened = open().await?;
        Ok(self.install(opened))
    }

    /// Forgets the slot's connection, whatever it is: the next request opens anew.
    pub(crate) fn close(&self) {
        self.live.borrow_mut().take();
    }

    /// Forgets connection `serial` if it is still the slot's: the next request opens anew.
    fn forget(&self, serial: u64) {
        let mut live = self.live.borrow_mut();
        if live.as_ref().is_some_and(|l| l.serial == serial) {
            *live = None;
        }
    }
}

/// An HTTP/2 connection just opened.
pub(crate) struct Opened {
    pub(crate) send: SendRequest<Bytes>,
    pub(crate) driver: JoinHandle<()>,
    pub(crate) setup: Setup,
    /// Classifies I/O errors of its stream (TCP or TLS).
    pub(crate) io_error: fn(io::Error) -> ErrorKind,
}

impl H2Conn {
    /// Marks the setup of this connection, if no response has reported it yet, as done
    /// before the clock started.
    pub(crate) fn mark_pre_connected(&self) {
        if let Some((serial, mut setup)) = self.shared.unreported_setup.get()
            && serial == self.serial
        {
            setup.pre_connected = true;
            self.shared.unreported_setup.set(Some((serial, setup)));
        }
    }

    /// The setup of this connection, if no response has reported it yet.
    pub(crate) fn take_setup(&self) -> Option<Setup> {
        match self.shared.unreported_setup.get() {
            Some((serial, setup)) if serial == self.serial => {
                self.shared.unreported_setup.set(None);
                Some(setup)
            }
            _ => None,
        }
    }

    /// Sends `outgoing`, a request of `target`, on a new stream and reads the whole response, releasing
    /// flow-control capacity as data arrives. Waits for a free stream first when the server's
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` is reached. With `capture`, the response is kept
    /// there for checks, its head written as an HTTP/1.1 head (`HTTP/1.1 200 \r\n` and the
    /// header fields) so that one set of checks reads both protocols. Counts into `traffic`
    /// the request (as its HTTP/1.1 bytes, once the stream is open) and the DATA payload as
    /// it arrives.
    pub(crate) async fn exchange(
        &mut self,
        (target, outgoing): (&TargetPlan, Outgoing<'_>),
        mut capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<H2Response, H2Failure> {
        let (request, body) = match outgoing {
            Outgoing::Planned => (target.h2_request.clone(), target.body.clone()),
            Outgoing::Rendered(bytes) => {
                rendered_request(target, bytes).ok_or(H2Failure::Failed(ErrorKind::Malformed))?
            }
        };
        if let Err(e) = poll_fn(|cx| self.send.poll_ready(cx)).await {
            // The connection takes no more streams (GOAWAY, closed): forget it.
            self.shared.forget(self.serial);
            return Err(H2Failure::NotSent(classify(e, self.io_error)));
        }
        let end_of_stream = body.is_empty();
        let sent_at = Instant::now();
        let (response, mut stream) = match self.send.send_request(request, end_of_stream) {
            Ok(sent) => sent,
            Err(e) => return Err(self.not_sent(e)),
        };
        traffic.sent += outgoing.bytes(target).len() as u64;
        if !end_of_stream {
            stream
                .send_data(body, true)
                .map_err(|e| H2Failure::Failed(self.classify(e)))?;
        }
        traffic.seen.written();
        let response = response
            .await
            .map_err(|e| H2Failure::Failed(self.classify(e)))?;
        let headers_at = Instant::now();
        let status = response.status().as_u16();
        for (name, value) in response.headers() {
            traffic
                .seen
                .header(name.as_str().as_bytes(), value.as_bytes());
        }
        let length = response
            .headers()
            .contains_key(http::header::CONTENT_LENGTH);
        traffic.seen.streamed(!length);
        if let Some(c) = capture.as_deref_mut() {
            c.head.clear();
            c.body.clear();
            c.head
                .extend_from_slice(format!("HTTP/1.1 {status} \r\n").as_bytes());
            for (name, value) in response.headers() {
                c.head.extend_from_slice(name.as_str().as_bytes());
                c.head.extend_from_slice(b": ");
                c.head.extend_from_slice(value.as_bytes());
                c.head.extend_from_slice(b"\r\n");
            }
            c.head.extend_from_slice(b"\r\n");
        }
        let mut body = response.into_body();
        while let Some(data) = body.data().await {
            let data = data.map_err(|e| H2Failure::Failed(self.classify(e)))?;
            traffic.received += data.len() as u64;
            traffic.seen.data(&data);
            if let Some(c) = capture.as_deref_mut() {
                c.body(&data);
            }
            // Releasing capacity can fail only when the stream is already gone: ignore it.
            let _ = body.flow_control().release_capacity(data.len());
        }
        Ok(H2Response {
            status,
            sent_at,
            headers_at,
        })
    }

    /// A request refused before it was sent: when the connection is gone or going away, the
    /// slot forgets it and the request may go on a new one. Anything else is a failure.
    fn not_sent(&self, e: h2::Error) -> H2Failure {
        if e.is_go_away() || e.is_io() {
            self.shared.forget(self.serial);
            H2Failure::NotSent(classify(e, self.io_error))
        } else {
            H2Failure::Failed(self.classify(e))
        }
    }

    /// Counts a failure after the request was sent.
    fn classify(&self, e: h2::Error) -> ErrorKind {
        if e.is_go_away() || e.is_io() {
            // The connection is done for; the next request opens a new one.
            self.shared.forget(self.serial);
        }
        classify(e, self.io_error)
    }
}

/// Most header fields read from a rendered request.
const MAX_REQUEST_HEADERS: usize = 64;

/// The HTTP/2 form of `bytes`, a request of `target` rendered as HTTP/1.1 (a flow step's), and
/// its body: the head parsed (httparse) and built as the plan builds a target's
/// (`plan::h2_request`: `Host` as `:authority`, connection-specific fields left out). `None`
/// when it is not a request HTTP/2 can carry (a variable's value that is no valid header
/// value, say).
pub(crate) fn rendered_request(
    target: &TargetPlan,
    bytes: &[u8],
) -> Option<(http::Request<()>, Bytes)> {
    let (method, path, headers, body) = parse_request(bytes)?;
    let https = target.transport.tls.is_some();
    let request =
        crate::plan::h2_request(method, path, &target.endpoint, https, &headers, body).ok()?;
    Some((request, Bytes::copy_from_slice(body)))
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

/// The kind of an HTTP/2 error on a stream that was sent: refused by the server's GOAWAY, reset
/// by the server (RST_STREAM), an I/O error of the connection, or a protocol error.
pub(crate) fn classify(e: h2::Error, io_error: fn(io::Error) -> ErrorKind) -> ErrorKind {
    if e.is_go_away() && e.is_remote() {
        ErrorKind::GoAway
    } else if e.is_reset() && e.is_remote() {
        ErrorKind::StreamReset
    } else if e.is_io() {
        match e.into_io() {
            Some(io) => io_error(io),
            None => ErrorKind::Reset,
        }
    } else {
        ErrorKind::Malformed
    }
}
