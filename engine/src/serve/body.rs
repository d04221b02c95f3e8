//! The response body of both `respond` (the shaped responses) and `shop` (the stateful API):
//! of exact, known length, never allocated per request except for error messages.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::HeaderMap;
use hyper::body::{Body, Bytes, Frame, SizeHint};
use tokio::sync::mpsc;

/// Any error of a request body (hyper's, or a QUIC stream's), as [`http_body_util::Limited`]
/// boxes it.
pub(super) type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// One event of an event stream (`events=N`).
const EVENT: &[u8] = b"data: event\n\n";

/// Filler for `size=N` bodies: sliced, never copied or allocated per request. A larger body is
/// sent as several frames of (a prefix of) this buffer.
static FILL: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// A response body of exact, known length (so hyper sends `Content-Length`), never allocated
/// per request except for error messages.
#[derive(Debug)]
pub(super) enum ResponseBody {
    /// One frame; `None` once sent.
    Bytes(Option<Bytes>),
    /// `remaining` bytes of [`FILL`], sent in frames of up to `FILL.len()` bytes.
    Fill { remaining: u64 },
    /// An event stream: `left` more events ([`EVENT`]), the next when `next` fires, then one
    /// every `interval`. Its length is not known: chunked (HTTP/1.1), or no `Content-Length`.
    Events {
        left: u32,
        interval: Duration,
        next: Pin<Box<tokio::time::Sleep>>,
    },
    /// One frame of data, then trailers (a gRPC reply and its `grpc-status`); `None` once sent.
    Trailed {
        data: Option<Bytes>,
        trailers: Option<HeaderMap>,
    },
    /// Frames made by another task as it goes (a gRPC server stream), until it drops the
    /// sender. Its length is not known.
    Frames(mpsc::Receiver<Frame<Bytes>>),
}

impl Body for ResponseBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let frame = match self.get_mut() {
            ResponseBody::Events { left: 0, .. } => None,
            ResponseBody::Events {
                left,
                interval,
                next,
            } => {
                std::task::ready!(next.as_mut().poll(cx));
                *left -= 1;
                let at = next.deadline() + *interval;
                next.as_mut().reset(at);
                Some(Bytes::from_static(EVENT))
            }
            ResponseBody::Bytes(bytes) => bytes.take(),
            ResponseBody::Trailed { data, trailers } => {
                return Poll::Ready(match data.take() {
                    Some(data) => Some(Ok(Frame::data(data))),
                    None => trailers
                        .take()
                        .map(|trailers| Ok(Frame::trailers(trailers))),
                });
            }
            ResponseBody::Frames(frames) => return frames.poll_recv(cx).map(|f| f.map(Ok)),
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
            ResponseBody::Events { left, .. } => *left == 0,
            ResponseBody::Trailed { data, trailers } => data.is_none() && trailers.is_none(),
            ResponseBody::Frames(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            ResponseBody::Bytes(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            ResponseBody::Fill { remaining } => SizeHint::with_exact(*remaining),
            // No `Content-Length` for messages with trailers (chunked on HTTP/1.1).
            ResponseBody::Events { .. }
            | ResponseBody::Trailed { .. }
            | ResponseBody::Frames(_) => SizeHint::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
