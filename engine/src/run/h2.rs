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

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::io;
use std::rc::Rc;
use std::time::Instant;

use bytes::Bytes;
use h2::client::SendRequest;
use h2::{RecvStream, SendStream};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::measure::{CodeSpace, ErrorCode, ErrorKind};
use crate::plan::grpc::PREFIX_BYTES;
use crate::run::grpc;
use crate::run::h1::{Capture, Traffic};
use crate::run::multiplexed::{self, Outgoing, Request, StreamResponse, micros};
use crate::run::slot::{Link, SlotConn, SlotFailure};

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
    send: SendRequest<Bytes>,
    driver: JoinHandle<()>,
    /// Classifies I/O errors of its stream (TCP or TLS).
    io_error: fn(io::Error) -> ErrorKind,
    streams: Rc<Streams>,
}

impl H2Link {
    /// The link of a connection just started ([`handshake`]'s request handle, driver and
    /// ping handle).
    pub(crate) fn new(
        send: SendRequest<Bytes>,
        driver: JoinHandle<()>,
        ping: Option<h2::PingPong>,
        io_error: fn(io::Error) -> ErrorKind,
    ) -> H2Link {
        let streams = Streams {
            ping: RefCell::new(ping),
            ..Streams::default()
        };
        H2Link {
            send,
            driver,
            io_error,
            streams: Rc::new(streams),
        }
    }
}

/// A virtual user's handle to an HTTP/2 connection.
#[derive(Clone)]
pub(crate) struct H2Handle {
    send: SendRequest<Bytes>,
    io_error: fn(io::Error) -> ErrorKind,
    streams: Rc<Streams>,
}

/// The free streams of one connection by the server's `SETTINGS_MAX_CONCURRENT_STREAMS`,
/// handed out in turn (a fair semaphore) here rather than in the `h2` crate's queue, so that
/// the time a request waits for a stream is measured apart (the `stream_wait` phase) instead
/// of inside its time to first byte, and no virtual user is passed over. One thread: no lock.
struct Streams {
    free: Semaphore,
    /// The limit the semaphore stands for (at least 1; its permits are the free streams).
    limit: Cell<usize>,
    /// Permits to take back as streams end, the limit having dropped below the streams then
    /// in flight.
    excess: Cell<usize>,
    /// The connection's ping handle, until [`SlotConn::settle`] uses it.
    ping: RefCell<Option<h2::PingPong>>,
}

impl Default for Streams {
    fn default() -> Self {
        Streams {
            free: Semaphore::new(Semaphore::MAX_PERMITS),
            limit: Cell::new(Semaphore::MAX_PERMITS),
            excess: Cell::new(0),
            ping: RefCell::new(None),
        }
    }
}

impl Streams {
    /// Follows the server's limit `now` (its SETTINGS may change it at any time).
    fn follow(&self, now: usize) {
        let now = now.clamp(1, Semaphore::MAX_PERMITS);
        let (limit, excess) = (self.limit.get(), self.excess.get());
        if now > limit {
            let grow = now - limit;
            let absorbed = grow.min(excess);
            self.excess.set(excess - absorbed);
            self.free.add_permits(grow - absorbed);
        } else if now < limit {
            let shrink = limit - now;
            let taken = self.free.forget_permits(shrink);
            self.excess.set(excess + shrink - taken);
        }
        self.limit.set(now);
    }
}

/// A stream of the connection in flight; frees its place when dropped (the exchange ended,
/// failed, or was cancelled by its timeout: the `h2` crate then resets the stream).
struct InFlight(Rc<Streams>);

impl Drop for InFlight {
    fn drop(&mut self) {
        match self.0.excess.get() {
            0 => self.0.free.add_permits(1),
            n => self.0.excess.set(n - 1),
        }
    }
}

impl H2Handle {
    /// Waits in turn until the connection has a free stream by the server's limit, and takes
    /// it. Returns the place, how long it waited (µs, `None` when a stream was free at once)
    /// and the limit (`None` when the server set none). A limit of 0 is taken as 1: the
    /// request then waits in the `h2` crate's queue.
    async fn free_stream(&self) -> (InFlight, Option<u64>, Option<u32>) {
        let limit = self.send.current_max_send_streams();
        let streams = &self.streams;
        streams.follow(limit);
        let waited = match streams.free.try_acquire() {
            Ok(permit) => {
                permit.forget();
                None
            }
            Err(_) => {
                let since = Instant::now();
                // A stream that ends hands its place to the first in line; a limit the
                // server raises meanwhile is followed when the next request comes.
                let permit = streams
                    .free
                    .acquire()
                    .await
                    .expect("the semaphore is not closed");
                permit.forget();
                Some(micros(since.elapsed()))
            }
        };
        let limit = self.send.current_max_send_streams();
        // No SETTINGS value: the h2 crate's "unlimited" (usize::MAX).
        let limit = u32::try_from(limit).ok();
        (InFlight(streams.clone()), waited, limit)
    }
}

impl Link for H2Link {
    type Handle = H2Handle;

    fn handle(&self) -> H2Handle {
        H2Handle {
            send: self.send.clone(),
            io_error: self.io_error,
            streams: self.streams.clone(),
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
    /// `SETTINGS_MAX_CONCURRENT_STREAMS` is reached (the wait and the limit are returned). With `capture`, the response is kept
    /// there for checks, its head written as an HTTP/1.1 head (`HTTP/1.1 200 \r\n` and the
    /// header fields) so that one set of checks reads both protocols. Counts into `traffic`
    /// the request (as its HTTP/1.1 bytes, once the stream is open) and the DATA payload as
    /// it arrives. A gRPC call (`target.grpc`) sends its encoded message and reads its
    /// messages and trailers ([`grpc::Call`]; its status goes to `traffic.messages`).
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
        let (_in_flight, stream_wait_us, peer_max_streams) = self.handle.free_stream().await;
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
        let body_bytes = body.len();
        if !end_of_stream {
            stream
                .send_data(body, true)
                .map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
        }
        if target.grpc.is_some() {
            traffic.messages.sent = 1;
            traffic.messages.bytes_sent = body_bytes.saturating_sub(PREFIX_BYTES) as u64;
        }
        traffic.seen.written();
        let response = response
            .await
            .map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
        let headers_at = Instant::now();
        let status = multiplexed::response_head(
            response.status(),
            response.headers(),
            traffic,
            capture.as_deref_mut(),
        )
        .map_err(SlotFailure::Failed)?;
        if let Some(plan) = &target.grpc {
            // Boxed, the response moved in: inline, a gRPC call's reading would make every
            // HTTP/2 request's future larger, to be copied on each request.
            Box::pin(self.read_call((plan, status), response, &mut stream, capture, traffic))
                .await?;
        } else {
            let mut body = response.into_body();
            while let Some(data) = body.data().await {
                let data = data
                    .map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
                traffic.received += data.len() as u64;
                traffic.seen.data(&data);
                if let Some(c) = capture.as_deref_mut() {
                    c.body(&data);
                }
                // Releasing capacity can fail only when the stream is already gone: ignore it.
                let _ = body.flow_control().release_capacity(data.len());
            }
        }
        Ok(StreamResponse {
            status,
            sent_at,
            headers_at,
            stream_wait_us,
            peer_max_streams,
        })
    }

    /// The next DATA chunk of `body` (`None` at its end), counted into `traffic` and its
    /// flow-control capacity released.
    async fn next_data(
        &self,
        body: &mut RecvStream,
        traffic: &mut Traffic,
    ) -> Result<Option<Bytes>, SlotFailure> {
        let Some(data) = body.data().await else {
            return Ok(None);
        };
        let data =
            data.map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
        traffic.received += data.len() as u64;
        traffic.seen.data(&data);
        // Releasing capacity can fail only when the stream is already gone: ignore it.
        let _ = body.flow_control().release_capacity(data.len());
        Ok(Some(data))
    }

    /// Reads the rest of a gRPC call's `response` (of status `status`, on the stream `send`
    /// of `plan`'s method): its messages and its trailers, counted into `traffic.messages`
    /// (see [`grpc::Call`]), kept in `capture` when asked. A message that ends the call (too
    /// large, compressed, undecodable) resets the stream with `CANCEL`.
    async fn read_call(
        &self,
        (plan, status): (&crate::plan::GrpcPlan, u16),
        response: http::Response<RecvStream>,
        send: &mut SendStream<Bytes>,
        capture: Option<&mut Capture>,
        traffic: &mut Traffic,
    ) -> Result<(), SlotFailure> {
        let (head, mut body) = response.into_parts();
        let recv = &mut body;
        let keep = capture.as_ref().is_some_and(|c| c.keep_body);
        let mut call = grpc::Call::new(plan, status, head.headers, keep);
        while let Some(data) = self.next_data(recv, traffic).await? {
            if let Err(kind) = call.data(&data, &mut traffic.messages) {
                send.send_reset(h2::Reason::CANCEL);
                return Err(SlotFailure::Failed(kind));
            }
        }
        let trailers = recv
            .trailers()
            .await
            .map_err(|e| SlotFailure::Failed(self.classify(e, &mut traffic.error_code)))?;
        call.finish(trailers.as_ref(), &mut traffic.messages, capture)
            .map_err(SlotFailure::Failed)
    }

    /// Waits for the server's SETTINGS (its stream limit among them) to be read: a PING
    /// answered, as the server sends its SETTINGS first (RFC 9113 §3.4). For a connection
    /// opened before the clock (`load.pre_connect`), whose thread then blocks until the clock
    /// starts: without it the first requests would all pass the stream limit and wait in the
    /// `h2` crate's queue, inside their time to first byte. Once per connection; a failed
    /// PING is left to the first request.
    pub(crate) async fn settle(&self) {
        let ping = self.handle.streams.ping.borrow_mut().take();
        if let Some(mut ping) = ping {
            let _ = ping.ping(h2::Ping::opaque()).await;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Takes every free stream; how many there were.
    fn take_all(streams: &Rc<Streams>, held: &mut Vec<InFlight>) -> usize {
        let mut n = 0;
        while let Ok(permit) = streams.free.try_acquire() {
            permit.forget();
            held.push(InFlight(streams.clone()));
            n += 1;
        }
        n
    }

    #[test]
    fn free_streams_follow_the_servers_limit_down_and_up() {
        let streams = Rc::new(Streams::default());
        let mut held = Vec::new();
        streams.follow(4);
        assert_eq!(take_all(&streams, &mut held), 4);
        // The server lowers its limit to 1 with 4 in flight: 3 ends are taken back.
        streams.follow(1);
        held.truncate(1);
        assert_eq!(take_all(&streams, &mut held), 0, "1 still in flight");
        held.clear();
        assert_eq!(take_all(&streams, &mut held), 1);
        held.clear();
        // Raised to 3, then unlimited again (the h2 crate's usize::MAX).
        streams.follow(3);
        assert_eq!(take_all(&streams, &mut held), 3);
        streams.follow(usize::MAX);
        assert!(streams.free.try_acquire().is_ok());
        // A limit of 0 is taken as 1.
        held.clear();
        let streams = Rc::new(Streams::default());
        streams.follow(0);
        assert_eq!(take_all(&streams, &mut held), 1);
    }
}
