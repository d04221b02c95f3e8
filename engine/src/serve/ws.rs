//! The WebSocket echo at `GET /ws/echo` (see the [module documentation](super)): the HTTP/1.1
//! upgrade (RFC 6455 §4.2) answered here, the messages framed by tungstenite over the upgraded
//! connection.
//!
//! Bounds: messages (and frames) of at most [`MAX_MESSAGE_BYTES`] (16 MiB) from the client
//! (more closes the connection with `1009 Message Too Big`), `size` ≤ [`MAX_MESSAGE_BYTES`],
//! `delay` ≤ 60 s; a connection is closed (`1001 Going Away`) when the server stops.

use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::watch;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

use super::body::ResponseBody;
use crate::units::parse_duration;

/// The path of the echo.
pub(super) const PATH: &str = "/ws/echo";

/// The largest message (and frame), in bytes, either way: 16 MiB.
pub(super) const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// The longest `delay=DUR` (60 s).
const MAX_DELAY: Duration = Duration::from_secs(60);

/// How long the client may take to answer our close frame before the connection is dropped.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// What the query string of `/ws/echo` asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Shape {
    /// Wait this long before each reply.
    delay: Duration,
    /// Reply with this many `x` bytes instead of the echo.
    size: Option<usize>,
    /// Close with this code after the first reply.
    close: Option<u16>,
}

impl Shape {
    /// Parses `delay=DUR&size=N&close=CODE`; the error names the parameter that is unknown,
    /// repeated or invalid.
    fn parse(query: &str) -> Result<Shape, String> {
        let mut shape = Shape::default();
        let mut seen = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            if seen.contains(&name) {
                return Err(format!("`{name}` is given twice"));
            }
            seen.push(name);
            match name {
                "delay" => {
                    shape.delay = parse_duration(value)
                        .ok()
                        .filter(|d| *d <= MAX_DELAY)
                        .ok_or_else(|| format!("`delay={value}`: a duration up to 60s"))?;
                }
                "size" => {
                    let size = value.parse().ok().filter(|&n| n <= MAX_MESSAGE_BYTES);
                    shape.size = Some(size.ok_or_else(|| {
                        format!("`size={value}`: a byte count up to {MAX_MESSAGE_BYTES}")
                    })?);
                }
                "close" => {
                    let code = value
                        .parse::<u16>()
                        .ok()
                        .filter(|&c| matches!(c, 1000..=1003 | 1007..=1014 | 3000..=4999));
                    shape.close = Some(code.ok_or_else(|| {
                        format!(
                            "`close={value}`: a close code that may be sent \
                             (1000-1003, 1007-1014, 3000-4999)"
                        )
                    })?);
                }
                _ => return Err(format!("unknown parameter `{name}` (delay, size, close)")),
            }
        }
        Ok(shape)
    }
}

/// Answers a request for [`PATH`]: `101 Switching Protocols` for a WebSocket upgrade (then the
/// echo runs on its own task until either side closes or `stopping` turns true), `405` for
/// another method, `426` for a request that is not an upgrade (HTTP/2 has none), `400` naming a
/// bad query parameter.
pub(super) fn answer<B>(
    mut request: Request<B>,
    stopping: watch::Receiver<bool>,
) -> Response<ResponseBody> {
    if request.method() != Method::GET {
        let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "use GET\n".into());
        let allow = HeaderValue::from_static("GET");
        response.headers_mut().insert(header::ALLOW, allow);
        return response;
    }
    let headers = request.headers();
    let has = |name: header::HeaderName, token: &str| {
        headers.get_all(name).iter().any(|value| {
            value.to_str().is_ok_and(|v| {
                v.split(',')
                    .any(|item| item.trim().eq_ignore_ascii_case(token))
            })
        })
    };
    let key = headers.get(header::SEC_WEBSOCKET_KEY).cloned();
    let upgrade = has(header::UPGRADE, "websocket") && has(header::CONNECTION, "upgrade");
    let (Some(key), true, true) = (key, upgrade, has(header::SEC_WEBSOCKET_VERSION, "13")) else {
        let message = "a WebSocket upgrade (HTTP/1.1, Upgrade: websocket, \
                       Sec-WebSocket-Version: 13, Sec-WebSocket-Key) is needed here\n";
        let mut response = plain(StatusCode::UPGRADE_REQUIRED, message.into());
        let headers = response.headers_mut();
        headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        headers.insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    };
    let shape = match Shape::parse(request.uri().query().unwrap_or("")) {
        Ok(shape) => shape,
        Err(message) => return plain(StatusCode::BAD_REQUEST, message + "\n"),
    };
    let upgraded = hyper::upgrade::on(&mut request);
    tokio::spawn(async move {
        // Fails when the client goes away before the upgrade is done.
        if let Ok(upgraded) = upgraded.await {
            echo(TokioIo::new(upgraded), shape, stopping).await;
        }
    });
    let accept = derive_accept_key(key.as_bytes());
    let mut response = Response::new(ResponseBody::Bytes(None));
    *response.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
    let headers = response.headers_mut();
    headers.insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("upgrade"));
    if let Ok(accept) = HeaderValue::from_str(&accept) {
        headers.insert(header::SEC_WEBSOCKET_ACCEPT, accept);
    }
    response
}

/// A plain-text response with `status` and `text`.
fn plain(status: StatusCode, text: String) -> Response<ResponseBody> {
    let mut response = Response::new(ResponseBody::Bytes(Some(Bytes::from(text))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Echoes the messages of one upgraded connection as `shape` asks, answering pings
/// (tungstenite queues the pong and sends it as the stream is read), until the client closes,
/// the connection fails, the close `shape` asks for is done, or `stopping` turns true.
async fn echo<S>(stream: S, shape: Shape, mut stopping: watch::Receiver<bool>)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_MESSAGE_BYTES))
        .max_frame_size(Some(MAX_MESSAGE_BYTES));
    let mut ws = WebSocketStream::from_raw_socket(stream, Role::Server, Some(config)).await;
    loop {
        let stop = async { stopping.wait_for(|stopping| *stopping).await.map(|_| ()) };
        let received = tokio::select! {
            received = ws.next() => Some(received),
            _ = stop => None,
        };
        let Some(received) = received else {
            close(&mut ws, CloseCode::Away, "the server stops").await;
            return;
        };
        let reply = match received {
            Some(Ok(Message::Text(text))) => match shape.size {
                Some(size) => Message::text("x".repeat(size)),
                None => Message::Text(text),
            },
            Some(Ok(Message::Binary(data))) => match shape.size {
                Some(size) => Message::binary(vec![b'x'; size]),
                None => Message::Binary(data),
            },
            // Pings are answered by tungstenite; a close is answered by it too, after which
            // the stream ends.
            Some(Ok(_)) => continue,
            None | Some(Err(_)) => return,
        };
        if !shape.delay.is_zero() {
            tokio::time::sleep(shape.delay).await;
        }
        if ws.send(reply).await.is_err() {
            return;
        }
        if let Some(code) = shape.close {
            close(&mut ws, CloseCode::from(code), "closed as asked").await;
            return;
        }
    }
}

/// Sends a close frame with `code` and `reason`, then reads until the client's close frame
/// (or [`CLOSE_TIMEOUT`]), as RFC 6455 §7.1.1 asks of the closing side.
async fn close<S>(ws: &mut WebSocketStream<S>, code: CloseCode, reason: &'static str)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let frame = CloseFrame {
        code,
        reason: reason.into(),
    };
    if ws.close(Some(frame)).await.is_err() {
        return;
    }
    let drained = async { while let Some(Ok(_)) = ws.next().await {} };
    let _ = tokio::time::timeout(CLOSE_TIMEOUT, drained).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_shapes_the_echo_and_bad_parameters_are_named() {
        assert_eq!(Shape::parse(""), Ok(Shape::default()));
        assert_eq!(
            Shape::parse("delay=20ms&size=3&close=1011"),
            Ok(Shape {
                delay: Duration::from_millis(20),
                size: Some(3),
                close: Some(1011),
            })
        );
        for (query, named) in [
            ("delay=61s", "delay"),
            ("size=16777217", "size"),
            ("close=1006", "close"),
            ("close=abc", "close"),
            ("size=1&size=2", "size"),
            ("sise=1", "sise"),
        ] {
            let error = Shape::parse(query).unwrap_err();
            assert!(error.contains(named), "{query}: {error}");
        }
    }
}
