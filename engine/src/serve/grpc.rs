//! `loadgate serve --grpc`: the `loadgate.echo.v1.Echo` service of examples/echo.proto (see the
//! [module documentation](super)), answered on the HTTP/2 connections of the server.
//!
//! A request is gRPC when its `content-type` starts with `application/grpc` (gRPC over HTTP/2,
//! <https://github.com/grpc/grpc/blob/master/doc/PROTOCOL-HTTP2.md>): one length-prefixed,
//! uncompressed message. Bounds: a request message of at most [`MAX_REQUEST_BYTES`] (4 MiB;
//! more is `RESOURCE_EXHAUSTED`), `size` ≤ [`MAX_SIZE`] (4 MiB), `count` ≤ [`MAX_COUNT`]
//! (10,000), `delay_ms` ≤ [`MAX_DELAY_MS`] (60,000) and `count × delay_ms` ≤ 60 s, `status` ≤ 16;
//! a request past them fails with `INVALID_ARGUMENT` naming the field.

use std::time::Duration;

use http_body_util::{BodyExt as _, Limited};
use hyper::body::{Body, Bytes, Frame};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Request, Response, StatusCode};
use prost::Message as _;
use tokio::sync::mpsc;

use super::body::{BoxError, ResponseBody};

/// The path prefix of the service's methods.
const SERVICE_PREFIX: &str = "/loadgate.echo.v1.Echo/";

/// The largest request message, in bytes (without its 5-byte prefix): 4 MiB, gRPC's usual
/// default.
pub(super) const MAX_REQUEST_BYTES: usize = 4 << 20;

/// The most padding `size` may ask for per reply, in bytes (4 MiB).
pub(super) const MAX_SIZE: u32 = 4 << 20;

/// The most replies `count` may ask of `Stream`.
pub(super) const MAX_COUNT: u32 = 10_000;

/// The longest `delay_ms`, in milliseconds (60 s).
pub(super) const MAX_DELAY_MS: u32 = 60_000;

/// The longest server stream, `count × delay_ms` (60 s).
const MAX_STREAM: Duration = Duration::from_secs(60);

/// The replies of `Stream` when `count` is 0.
const DEFAULT_COUNT: u32 = 3;

/// The length prefix of a gRPC message: a compression flag and a big-endian `u32` length.
const PREFIX_BYTES: usize = 5;

/// The gRPC status codes this service answers by itself.
const OK: u32 = 0;
const INVALID_ARGUMENT: u32 = 3;
const RESOURCE_EXHAUSTED: u32 = 8;
const UNIMPLEMENTED: u32 = 12;
const INTERNAL: u32 = 13;
/// The largest gRPC status code (`UNAUTHENTICATED`).
const MAX_STATUS: u32 = 16;

/// `loadgate.echo.v1.SayRequest` of examples/echo.proto.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SayRequest {
    #[prost(string, tag = "1")]
    pub text: String,
    /// Milliseconds to wait before answering (`Stream`: before each reply).
    #[prost(uint32, tag = "2")]
    pub delay_ms: u32,
    /// Bytes of padding in each reply.
    #[prost(uint32, tag = "3")]
    pub size: u32,
    /// A gRPC status code to fail with, 1-16; 0 answers normally.
    #[prost(uint32, tag = "4")]
    pub status: u32,
    /// `Stream`: the number of replies (0: 3).
    #[prost(uint32, tag = "5")]
    pub count: u32,
}

/// `loadgate.echo.v1.SayReply` of examples/echo.proto.
#[derive(Clone, PartialEq, prost::Message)]
pub(crate) struct SayReply {
    #[prost(string, tag = "1")]
    pub text: String,
    /// The reply's number in its stream, from 1 (`Say`: 1).
    #[prost(uint64, tag = "2")]
    pub sequence: u64,
    #[prost(bytes = "vec", tag = "3")]
    pub padding: Vec<u8>,
}

/// Whether `request` is a gRPC call: its `content-type` is `application/grpc` or
/// `application/grpc+...`.
pub(super) fn is_grpc<B>(request: &Request<B>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"))
}

/// Answers one gRPC call: `Say` or `Stream` as echo.proto documents, any other method
/// `UNIMPLEMENTED`, a request that is not one message of [`SayRequest`] `INTERNAL` (too large:
/// `RESOURCE_EXHAUSTED`), one past the bounds `INVALID_ARGUMENT`. Failures are trailers-only
/// responses (HTTP 200, `grpc-status` and `grpc-message` in the headers).
pub(super) async fn answer<B>(request: Request<B>) -> Response<ResponseBody>
where
    B: Body<Data = Bytes> + Send + Unpin,
    B::Error: Into<BoxError>,
{
    let path = request.uri().path();
    let stream = match path.strip_prefix(SERVICE_PREFIX) {
        Some("Say") => false,
        Some("Stream") => true,
        _ => return failed(UNIMPLEMENTED, &format!("unknown method {path}")),
    };
    let say = match read_message(request.into_body()).await {
        Ok(say) => say,
        Err((code, message)) => return failed(code, &message),
    };
    if let Err(message) = check(&say, stream) {
        return failed(INVALID_ARGUMENT, &message);
    }
    let delay = Duration::from_millis(say.delay_ms.into());
    if say.status != OK {
        tokio::time::sleep(delay).await;
        return failed(say.status, "failed as asked");
    }
    if !stream {
        tokio::time::sleep(delay).await;
        return reply(ResponseBody::Trailed {
            data: Some(encode(&say, 1)),
            trailers: Some(status_headers(OK, None)),
        });
    }
    let count = stream_count(&say);
    let (frames, body) = mpsc::channel(2);
    tokio::spawn(async move {
        for sequence in 1..=u64::from(count) {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                // The client went away (the body was dropped).
                () = frames.closed() => return,
            }
            if frames
                .send(Frame::data(encode(&say, sequence)))
                .await
                .is_err()
            {
                return;
            }
        }
        let _ = frames.send(Frame::trailers(status_headers(OK, None))).await;
    });
    reply(ResponseBody::Frames(body))
}

/// Reads the request body: one uncompressed length-prefixed [`SayRequest`]. Errors are a gRPC
/// status code and its message.
async fn read_message<B>(body: B) -> Result<SayRequest, (u32, String)>
where
    B: Body<Data = Bytes> + Send + Unpin,
    B::Error: Into<BoxError>,
{
    let bytes = match Limited::new(body, PREFIX_BYTES + MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => {
            let message = format!("the request message is over {MAX_REQUEST_BYTES} bytes");
            return Err((RESOURCE_EXHAUSTED, message));
        }
        Err(error) => return Err((INTERNAL, format!("cannot read the request: {error}"))),
    };
    let Some((prefix, message)) = bytes.split_at_checked(PREFIX_BYTES) else {
        return Err((INTERNAL, "no request message".into()));
    };
    if prefix[0] != 0 {
        return Err((INTERNAL, "compressed messages are not supported".into()));
    }
    let length = u32::from_be_bytes([prefix[1], prefix[2], prefix[3], prefix[4]]) as usize;
    if length != message.len() {
        let message = format!(
            "the prefix says {length} bytes, {} followed (one message per call)",
            message.len()
        );
        return Err((INTERNAL, message));
    }
    SayRequest::decode(message).map_err(|e| (INTERNAL, format!("cannot decode a SayRequest: {e}")))
}

/// The replies `Stream` sends for `say`.
fn stream_count(say: &SayRequest) -> u32 {
    if say.count == 0 {
        DEFAULT_COUNT
    } else {
        say.count
    }
}

/// Checks the bounds of the module documentation (`count × delay_ms` for a `stream`); the
/// error names the field.
fn check(say: &SayRequest, stream: bool) -> Result<(), String> {
    if say.size > MAX_SIZE {
        return Err(format!("size {} is over {MAX_SIZE}", say.size));
    }
    if say.count > MAX_COUNT {
        return Err(format!("count {} is over {MAX_COUNT}", say.count));
    }
    if say.delay_ms > MAX_DELAY_MS {
        return Err(format!("delay_ms {} is over {MAX_DELAY_MS}", say.delay_ms));
    }
    let total = Duration::from_millis(u64::from(say.delay_ms) * u64::from(stream_count(say)));
    if stream && total > MAX_STREAM {
        return Err(format!(
            "count × delay_ms is {} ms, over {} ms",
            total.as_millis(),
            MAX_STREAM.as_millis()
        ));
    }
    if say.status > MAX_STATUS {
        return Err(format!("status {} is not a gRPC status (0-16)", say.status));
    }
    Ok(())
}

/// The length-prefixed [`SayReply`] number `sequence` to `say`.
fn encode(say: &SayRequest, sequence: u64) -> Bytes {
    let reply = SayReply {
        text: say.text.clone(),
        sequence,
        padding: vec![b'x'; say.size as usize],
    };
    let length = reply.encoded_len();
    let mut buf = Vec::with_capacity(PREFIX_BYTES + length);
    buf.push(0);
    // At most 4 MiB of padding and 4 MiB of text: the length fits a u32.
    buf.extend_from_slice(&(length as u32).to_be_bytes());
    reply
        .encode(&mut buf)
        .expect("a Vec grows to fit the message");
    Bytes::from(buf)
}

/// `grpc-status: code`, and `grpc-message` when given (percent-encoded where gRPC asks).
fn status_headers(code: u32, message: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("grpc-status", HeaderValue::from(code));
    if let Some(message) = message {
        let encoded: String = message
            .bytes()
            .map(|b| match b {
                b' '..=b'~' if b != b'%' => char::from(b).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        if let Ok(value) = HeaderValue::from_str(&encoded) {
            headers.insert("grpc-message", value);
        }
    }
    headers
}

/// A `200` gRPC response (`content-type: application/grpc`) with `body`.
fn reply(body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/grpc"),
    );
    response
}

/// A trailers-only response: the call failed with `code` and `message`.
fn failed(code: u32, message: &str) -> Response<ResponseBody> {
    let mut response = reply(ResponseBody::Bytes(None));
    response
        .headers_mut()
        .extend(status_headers(code, Some(message)));
    response
}

#[cfg(test)]
mod tests {
    use prost_reflect::{DescriptorPool, DynamicMessage, Value};

    use super::*;

    /// examples/echo.proto, compiled by protox.
    fn echo_pool() -> DescriptorPool {
        let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut compiler = protox::Compiler::new([&examples]).unwrap();
        compiler.open_file("echo.proto").unwrap();
        compiler.descriptor_pool()
    }

    #[test]
    fn derived_messages_and_echo_proto_agree_both_ways() {
        let pool = echo_pool();
        let request = pool
            .get_message_by_name("loadgate.echo.v1.SayRequest")
            .unwrap();
        let reply = pool
            .get_message_by_name("loadgate.echo.v1.SayReply")
            .unwrap();
        assert_eq!(request.fields().count(), 5);
        assert_eq!(reply.fields().count(), 3);

        // Derived → proto: every field arrives under its name.
        let say = SayRequest {
            text: "hé".into(),
            delay_ms: 2,
            size: 3,
            status: 4,
            count: 5,
        };
        let dynamic =
            DynamicMessage::decode(request.clone(), say.encode_to_vec().as_slice()).unwrap();
        for (name, value) in [
            ("text", Value::String("hé".into())),
            ("delay_ms", Value::U32(2)),
            ("size", Value::U32(3)),
            ("status", Value::U32(4)),
            ("count", Value::U32(5)),
        ] {
            assert_eq!(
                dynamic.get_field_by_name(name).as_deref(),
                Some(&value),
                "{name}"
            );
        }

        // Proto → derived.
        let mut dynamic = DynamicMessage::new(reply);
        dynamic.set_field_by_name("text", Value::String("hi".into()));
        dynamic.set_field_by_name("sequence", Value::U64(u64::MAX));
        dynamic.set_field_by_name("padding", Value::Bytes(Bytes::from_static(b"xyz")));
        let derived = SayReply::decode(dynamic.encode_to_vec().as_slice()).unwrap();
        assert_eq!(
            derived,
            SayReply {
                text: "hi".into(),
                sequence: u64::MAX,
                padding: b"xyz".to_vec(),
            }
        );
    }

    #[test]
    fn bounds_are_refused_naming_the_field() {
        let ok = SayRequest {
            count: MAX_COUNT,
            size: MAX_SIZE,
            status: MAX_STATUS,
            ..SayRequest::default()
        };
        assert_eq!(check(&ok, true), Ok(()));
        let slow = SayRequest {
            delay_ms: MAX_DELAY_MS,
            ..SayRequest::default()
        };
        assert_eq!(check(&slow, false), Ok(()), "Say waits once");
        for (field, say) in [
            (
                "size",
                SayRequest {
                    size: MAX_SIZE + 1,
                    ..ok.clone()
                },
            ),
            (
                "count",
                SayRequest {
                    count: MAX_COUNT + 1,
                    ..ok.clone()
                },
            ),
            (
                "delay_ms",
                SayRequest {
                    delay_ms: MAX_DELAY_MS + 1,
                    count: 0,
                    ..ok.clone()
                },
            ),
            (
                "count × delay_ms",
                SayRequest {
                    delay_ms: 10,
                    ..ok.clone()
                },
            ),
            (
                "status",
                SayRequest {
                    status: 17,
                    ..ok.clone()
                },
            ),
        ] {
            let error = check(&say, true).unwrap_err();
            assert!(error.starts_with(field), "{field}: {error}");
        }
    }

    #[test]
    fn grpc_message_is_percent_encoded() {
        let headers = status_headers(13, Some("100% é\n"));
        assert_eq!(headers["grpc-status"], "13");
        assert_eq!(headers["grpc-message"], "100%25 %C3%A9%0A");
    }
}
