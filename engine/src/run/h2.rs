//! The HTTP/2 path (the `h2` crate): one connection carries up to `streams` concurrent
//! requests, one per virtual user of its group.
//!
//! A group's virtual users share a [`Slot`](super::slot::Slot) per connection slot: the first
//! that needs a connection opens it while the others wait, then each sends its requests on a
//! handle to it. A task of its own drives the connection (frames, flow control, pings). When the server
//! sends GOAWAY, streams it will not process fail (counted as [`ErrorKind::GoAway`]), the
//! connection is dropped from the slot and the next request opens a new one. Bodies are
//! counted and their flow-control capacity released at once, with windows sized so that a
//! connection is not held back by WINDOW_UPDATE round trips.

use std::future::poll_fn;
use std::io;
use std::time::Instant;

use bytes::Bytes;
use h2::client::SendRequest;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::JoinHandle;

use crate::measure::{CodeSpace, ErrorCode, ErrorKind};
use crate::plan::TargetPlan;
use crate::run::h1::{Capture, Traffic};
use crate::run::multiplexed::{self, StreamResponse};
use crate::run::slot::{Link, SlotConn, SlotFailure};
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

/// An open HTTP/2 connection, as its slot keeps it.
pub(crate) struct H2Link {
    pub(crate) send: SendRequest<Bytes>,
    pub(crate) driver: JoinHandle<()>,
    /// Classifies I/O errors of its stream (TCP or TLS).
    pub(crate) io_error: fn(io::Error) -> ErrorKind,
}

/// A virtual user's handle to an HTTP/2 connection.
#[derive(Clone)]
pub(crate) struct H2Handle {
    send: SendRequest<Bytes>,
    io_error: fn(io::Error) -> ErrorKind,
}

impl Link for H2Link {
    type Handle = H2Handle;

    fn handle(&self) -> H2Handle {
        H2Handle {
            send: self.send.clone(),
            io_error: self.io_error,
        }
    }

    fn is_done(&self) -> bool {
        self.driver.is_finished()
    }
}

/// A virtual user's handle to its group's HTTP/2 connection.
pub(crate) type H2Conn = SlotConn<H2Link>;

impl SlotConn<H2Link> {
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
    ) -> Result<StreamResponse, SlotFailure> {
        let (request, body) = match outgoing {
            Outgoing::Planned => (target.h2_request.clone(), target.body.clone()),
            Outgoing::Rendered(bytes) => multiplexed::rendered_request(target, bytes)
                .ok_or(SlotFailure::Failed(ErrorKind::Malformed))?,
        };
        let code = &mut traffic.error_code;
        if let Err(e) = poll_fn(|cx| self.handle.send.poll_ready(cx)).await {
            // The connection takes no more streams (GOAWAY, closed): forget it.
            self.forget();
            return Err(SlotFailure::NotSent(self.classify(e, code)));
        }
        let end_of_stream = body.is_empty();
        let sent_at = Instant::now();
        let (response, mut stream) = match self.handle.send.send_request(request, end_of_stream) {
            Ok(sent) => sent,
            Err(e) => return Err(self.not_sent(e, code)),
        };
        traffic.sent += outgoing.bytes(target).len() as u64;
        if !end_of_stream {
            stream
                .send_data(body, true)
                .map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
        }
        traffic.seen.written();
        let response = response
            .await
            .map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
        let headers_at = Instant::now();
        let status = response.status().as_u16();
        multiplexed::response_head(status, response.headers(), traffic, capture.as_deref_mut());
        let mut body = response.into_body();
        while let Some(data) = body.data().await {
            let data =
                data.map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
            traffic.received += data.len() as u64;
            traffic.seen.data(&data);
            if let Some(c) = capture.as_deref_mut() {
                c.body(&data);
            }
            // Releasing capacity can fail only when the stream is already gone: ignore it.
            let _ = body.flow_control().release_capacity(data.len());
        }
        Ok(StreamResponse {
            status,
            sent_at,
            headers_at,
        })
    }

    /// A request refused before it was sent: when the connection is gone or going away, the
    /// slot forgets it and the request may go on a new one. Anything else is a failure.
    fn not_sent(&self, e: h2::Error, code: &mut Option<ErrorCode>) -> SlotFailure {
        if e.is_go_away() || e.is_io() {
            SlotFailure::NotSent(self.classify(e, code))
        } else {
            SlotFailure::Failed(self.classify(e, code))
        }
    }

    /// Counts a failure, with the peer's code (RST_STREAM, GOAWAY) into `code`.
    fn classify(&self, e: h2::Error, code: &mut Option<ErrorCode>) -> ErrorKind {
        if e.is_go_away() || e.is_io() {
            // The connection is done for; the next request opens a new one.
            self.forget();
        }
        if e.is_remote()
            && let Some(reason) = e.reason()
        {
            *code = Some(ErrorCode {
                space: CodeSpace::H2,
                value: u64::from(u32::from(reason)),
            });
        }
        classify(e, self.handle.io_error)
    }
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
