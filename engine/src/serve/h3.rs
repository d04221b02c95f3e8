//! HTTP/3 for `loadgate serve --h3` (RFC 9114): QUIC by quinn on a UDP socket bound to the TCP
//! listener's port number, TLS 1.3 by rustls with the TCP side's certificate, key and client
//! CA, ALPN `h3`, HTTP/3 framing by h3 (h3-quinn between the two). Every request stream is
//! answered by [`handle`], as on HTTP/1.1 and HTTP/2, so that the query parameters and the
//! responses are the same whatever the protocol.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Buf as _;
use h3::error::{Code, StreamError};
use h3::server::{RequestResolver, RequestStream};
use http_body_util::BodyExt as _;
use hyper::body::{Body, Bytes, Frame};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Response, StatusCode};
use quinn::crypto::rustls::QuicServerConfig;
use rustls::ServerConfig;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::TLS_HANDSHAKE_TIMEOUT;
use super::respond::{Reset, handle};
use super::shop::Shop;
use crate::udp::{self, UdpBuffers};

/// The ALPN protocol of HTTP/3 (RFC 9114 §3.1).
pub(super) const ALPN: &[u8] = b"h3";

/// Request streams a client may have open at once on one connection: as hyper's HTTP/2 server
/// allows by default (`SETTINGS_MAX_CONCURRENT_STREAMS` 200), so that `load.streams` means the
/// same on both.
const MAX_STREAMS: u32 = 200;

/// `H3_NO_ERROR` (RFC 9114 §8.1): the code a connection is closed with when all is well.
const H3_NO_ERROR: u32 = 0x100;

/// How long, once the server has closed its QUIC connections, it waits for the closes to be sent
/// before the endpoint goes.
const CLOSE_WAIT: Duration = Duration::from_millis(200);

/// The QUIC server configuration made from the TCP side's TLS configuration (see
/// [`super::tls_config`]): the same certificate chain, key and client certificate verifier, ALPN
/// `h3` only, TLS 1.3 (QUIC allows no other), 0-RTT accepted (a test target: replayed requests
/// do no harm), and up to [`MAX_STREAMS`] request streams per connection.
pub(super) fn quic_config(tls: &ServerConfig) -> io::Result<quinn::ServerConfig> {
    let mut tls = tls.clone();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    // QUIC requires 0 or u32::MAX here (RFC 9001 §4.6.1); u32::MAX offers 0-RTT.
    tls.max_early_data_size = u32::MAX;
    let crypto = QuicServerConfig::try_from(tls).map_err(io::Error::other)?;
    let mut config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let mut transport = quinn::TransportConfig::default();
    transport.max_concurrent_bidi_streams(MAX_STREAMS.into());
    config.transport_config(Arc::new(transport));
    Ok(config)
}

/// Binds a QUIC endpoint to `addr` (UDP) serving `config`, on a socket whose buffers are raised
/// as far as the system allows ([`udp::bind`]), and returns it with the buffer sizes it got.
/// Must be called from within a Tokio runtime (with I/O and time enabled).
///
/// Errors: the bind's (`AddrInUse` when the UDP port is taken).
pub(super) fn bind(
    addr: SocketAddr,
    config: quinn::ServerConfig,
) -> io::Result<(quinn::Endpoint, UdpBuffers)> {
    let (socket, buffers) = udp::bind(addr)?;
    let endpoint = quinn::Endpoint::new(
        quinn::EndpointConfig::default(),
        Some(config),
        socket,
        Arc::new(quinn::TokioRuntime),
    )?;
    Ok((endpoint, buffers))
}

/// Closes `endpoint` with `H3_NO_ERROR`: the connections still open get a CONNECTION_CLOSE, sent
/// within [`CLOSE_WAIT`].
pub(super) async fn close(endpoint: quinn::Endpoint) {
    endpoint.close(H3_NO_ERROR.into(), b"");
    let _ = tokio::time::timeout(CLOSE_WAIT, endpoint.wait_idle()).await;
}

/// The `Alt-Svc` value that advertises HTTP/3 on `port` of the same host (RFC 7838 §3), added
/// to the HTTP/1.1 and HTTP/2 responses when the server speaks HTTP/3.
pub(super) fn alt_svc(port: u16) -> HeaderValue {
    HeaderValue::from_str(&format!("h3=\":{port}\"")).expect("a header value")
}

/// Serves one QUIC connection: completes the handshake (at most [`TLS_HANDSHAKE_TIMEOUT`]),
/// then answers its request streams, each on a task of its own, until the client closes the
/// connection or `stopping` turns true. Then it sends GOAWAY (no new requests), lets the
/// requests in flight finish and closes the connection with `H3_NO_ERROR`. Dropping the future
/// aborts the requests in flight.
pub(super) async fn serve_connection(
    incoming: quinn::Incoming,
    shop: Arc<Shop>,
    mut stopping: watch::Receiver<bool>,
) {
    // A failed handshake (no client certificate, say) only ends this connection.
    let Ok(Ok(quic)) = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, incoming).await else {
        return;
    };
    let connection = h3::server::Connection::new(h3_quinn::Connection::new(quic.clone()));
    let Ok(mut connection) = connection.await else {
        return;
    };
    // At most MAX_STREAMS at once: quinn refuses the client more streams than that.
    let mut requests = JoinSet::new();
    loop {
        tokio::select! {
            accepted = connection.accept() => match accepted {
                Ok(Some(resolver)) => {
                    requests.spawn(answer(resolver, shop.clone()));
                }
                // The client's GOAWAY once its requests are done, or the connection's end.
                Ok(None) | Err(_) => break,
            },
            // The guard `wait_for` returns is dropped at once: it is not `Send`.
            _ = async { stopping.wait_for(|stopping| *stopping).await.map(|_| ()) } => {
                let _ = connection.shutdown(0).await;
                break;
            }
        }
        while requests.try_join_next().is_some() {}
    }
    while requests.join_next().await.is_some() {}
    quic.close(H3_NO_ERROR.into(), b"");
}

/// Answers one request stream with [`handle`]'s response: its head (with `Content-Length` when
/// the body's length is known, without the HTTP/1.1-only `Connection` that `close=1` asks
/// for, as hyper drops it on HTTP/2), then its body (`handle` leaves none for `HEAD`) as DATA
/// frames. A `reset=CODE` resets the stream with that code (`RESET_STREAM`, RFC 9114 §4.1.1)
/// instead.
async fn answer(
    resolver: RequestResolver<h3_quinn::Connection, Bytes>,
    shop: Arc<Shop>,
) -> Result<(), StreamError> {
    let (request, stream) = resolver.resolve_request().await?;
    let (mut send, recv) = stream.split();
    let response = match handle(request.map(|()| RecvBody(recv)), shop).await {
        Ok(response) => response,
        Err(Reset(code)) => {
            send.stop_stream(Code::from(u64::from(code)));
            return Ok(());
        }
    };
    let (mut head, mut body) = response.into_parts();
    frame_headers(&mut head.headers, head.status, body.size_hint().exact());
    send.send_response(Response::from_parts(head, ())).await?;
    while let Some(Ok(frame)) = body.frame().await {
        if let Ok(data) = frame.into_data() {
            send.send_data(data).await?;
        }
    }
    send.finish().await
}

/// Sets `Content-Length` to `length` (when known) unless the response has one (`handle`'s
/// answer to `HEAD`) or its `status` is `204` or `304` (which carry none, as hyper does on
/// HTTP/1.1: RFC 9110 §8.6), and `Date` unless the query set one (as hyper does on HTTP/1.1 and
/// HTTP/2), and removes the connection-specific headers, which HTTP/3 forbids (RFC 9114 §4.2).
fn frame_headers(headers: &mut HeaderMap, status: StatusCode, length: Option<u64>) {
    headers.remove(header::CONNECTION);
    if !headers.contains_key(header::DATE) {
        let date = httpdate::fmt_http_date(std::time::SystemTime::now());
        headers.insert(
            header::DATE,
            HeaderValue::from_str(&date).expect("a header value"),
        );
    }
    let bodiless = status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED;
    if let (Some(length), false) = (length, bodiless) {
        headers
            .entry(header::CONTENT_LENGTH)
            .or_insert(HeaderValue::from(length));
    }
}

/// The body of an HTTP/3 request: the DATA frames of its stream's receiving half.
struct RecvBody(RequestStream<h3_quinn::RecvStream, Bytes>);

impl Body for RecvBody {
    type Data = Bytes;
    type Error = StreamError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, StreamError>>> {
        let polled = std::task::ready!(self.get_mut().0.poll_recv_data(cx));
        Poll::Ready(match polled {
            Ok(Some(mut data)) => Some(Ok(Frame::data(data.copy_to_bytes(data.remaining())))),
            Ok(None) => None,
            Err(error) => Some(Err(error)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_headers_are_set_and_removed() {
        let mut headers = HeaderMap::new();
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        frame_headers(&mut headers, StatusCode::OK, Some(1024));
        assert_eq!(headers.get(header::CONNECTION), None);
        assert_eq!(headers[header::CONTENT_LENGTH], "1024");
        let mut headers = HeaderMap::new();
        frame_headers(&mut headers, StatusCode::OK, None);
        assert_eq!(headers.get(header::CONTENT_LENGTH), None);
        // The length of the GET that a HEAD answer carries stays (its own body is empty).
        headers.insert(header::CONTENT_LENGTH, HeaderValue::from(1000));
        frame_headers(&mut headers, StatusCode::OK, Some(0));
        assert_eq!(headers[header::CONTENT_LENGTH], "1000");
        let mut headers = HeaderMap::new();
        frame_headers(&mut headers, StatusCode::NO_CONTENT, Some(0));
        assert_eq!(headers.get(header::CONTENT_LENGTH), None);
        assert!(headers[header::DATE].to_str().unwrap().ends_with(" GMT"));
    }

    #[test]
    fn alt_svc_names_the_port() {
        assert_eq!(alt_svc(8443), "h3=\":8443\"");
    }
}
