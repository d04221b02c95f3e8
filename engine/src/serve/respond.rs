//! Answering a request: the response its query string asks for (see the [module
//! documentation](super)), or the stateful API's answer for its paths (`shop`).

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt as _;
use hyper::body::{Body, Bytes};
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};

use super::body::{BoxError, ResponseBody};
use super::shop::{Route, Shop};
use crate::units::parse_duration;

/// The largest body `size=N` may ask for, in bytes (1 GiB).
const MAX_BODY_SIZE: u64 = 1 << 30;

/// The longest CPU time `work=DUR` may ask for (10 s): the spin holds a server thread.
const MAX_WORK: Duration = Duration::from_secs(10);

/// Most events `events=N` may ask for.
const MAX_EVENTS: u32 = 10_000;

/// The longest `interval=DUR` between events (10 s), and the longest event stream (60 s).
const MAX_INTERVAL: Duration = Duration::from_secs(10);
const MAX_EVENT_STREAM: Duration = Duration::from_secs(60);

/// The time between events when `events=N` is given without `interval`.
const DEFAULT_INTERVAL: Duration = Duration::from_millis(10);

/// The body served when no `size` is given, and by `/health`.
const DEFAULT_BODY: &[u8] = b"ok\n";

/// `reset=CODE` asked for this response to be aborted with this error code instead of sent:
/// HTTP/3 resets the request stream with it, HTTP/2 sends `RST_STREAM` with it, HTTP/1.1 closes
/// the connection without a response (it has no codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reset(pub(super) u32);

/// Answers one request: a path of the stateful API goes to `shop`; any other request has its
/// body drained, its query parsed into a [`Shape`], spins on the CPU for its `work`, waits out
/// the delay (counted from when the request head arrived) and gets the response it asked for,
/// or the [`Reset`] it asked for. The response is then [`fit_to_method`]: no body for `HEAD`
/// or a status that has none.
///
/// The request body is any [`Body`] of [`Bytes`]: hyper's for HTTP/1.1 and HTTP/2, a QUIC
/// stream's for HTTP/3 (`serve/h3.rs`).
pub(super) async fn handle<B>(
    request: Request<B>,
    shop: Arc<Shop>,
) -> Result<Response<ResponseBody>, Reset>
where
    B: Body<Data = Bytes> + Send + Unpin,
    B::Error: Into<BoxError>,
{
    let head_only = request.method() == Method::HEAD;
    let mut response = answer(request, shop).await?;
    fit_to_method(&mut response, head_only);
    Ok(response)
}

/// Empties the body of a response that must have none, as hyper's HTTP/1.1 server does by
/// itself but neither its HTTP/2 server (it sends the DATA, and the client resets the stream
/// with `PROTOCOL_ERROR`) nor the HTTP/3 server (`serve/h3.rs`): a `204` or `304` (RFC 9110
/// §15.3.5, §15.4.5), and the answer to `HEAD` (`head_only`), which keeps the `Content-Length`
/// of the body the `GET` would have had (RFC 9110 §9.3.2, §8.6) when that length is known and
/// not zero (for an empty body hyper sends none on HTTP/2, nor on HTTP/1.1 for `HEAD`).
fn fit_to_method(response: &mut Response<ResponseBody>, head_only: bool) {
    let status = response.status();
    let no_content = status == StatusCode::NO_CONTENT || status == StatusCode::NOT_MODIFIED;
    if !(head_only || no_content) {
        return;
    }
    let length = response.body().size_hint().exact().filter(|&n| n > 0);
    *response.body_mut() = ResponseBody::Bytes(None);
    if let (Some(length), false) = (length, no_content) {
        response
            .headers_mut()
            .entry(header::CONTENT_LENGTH)
            .or_insert(HeaderValue::from(length));
    }
}

/// [`handle`]'s answer, before it is fitted to the method.
async fn answer<B>(request: Request<B>, shop: Arc<Shop>) -> Result<Response<ResponseBody>, Reset>
where
    B: Body<Data = Bytes> + Send + Unpin,
    B::Error: Into<BoxError>,
{
    if let Some(route) = Route::of(request.uri().path()) {
        return Ok(shop.answer(route, request).await);
    }
    let arrived = tokio::time::Instant::now();
    let (head, mut body) = request.into_parts();
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            // The client broke off mid-body; answer anyway, hyper closes the connection.
            break;
        }
    }
    if head.uri.path() == "/health" && matches!(head.method, Method::GET | Method::HEAD) {
        return Ok(text_response(
            StatusCode::OK,
            ResponseBody::Bytes(Some(Bytes::from_static(DEFAULT_BODY))),
        ));
    }
    let shape = match Shape::parse(head.uri.query().unwrap_or("")) {
        Ok(shape) => shape,
        Err(message) => {
            return Ok(text_response(
                StatusCode::BAD_REQUEST,
                ResponseBody::Bytes(Some(Bytes::from(message + "\n"))),
            ));
        }
    };
    if !shape.work.is_zero() {
        spin(shape.work);
    }
    if !shape.delay.is_zero() {
        tokio::time::sleep_until(arrived + shape.delay).await;
    }
    if let Some(code) = shape.reset {
        return Err(Reset(code));
    }
    let body = match (shape.size, shape.events) {
        (_, Some(events)) => ResponseBody::Events {
            left: events,
            interval: shape.interval,
            next: Box::pin(tokio::time::sleep(shape.interval)),
        },
        (None, None) => ResponseBody::Bytes(Some(Bytes::from_static(DEFAULT_BODY))),
        (Some(size), None) => ResponseBody::Fill { remaining: size },
    };
    let mut response = text_response(shape.status, body);
    let headers = response.headers_mut();
    if shape.events.is_some() {
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
    }
    // A name given in the query replaces the default (`Content-Type`); repeats add values.
    let mut given: Vec<header::HeaderName> = Vec::new();
    for (name, value) in shape.headers {
        if given.contains(&name) {
            headers.append(name, value);
        } else {
            given.push(name.clone());
            headers.insert(name, value);
        }
    }
    if shape.close {
        headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    if shape.server_timing {
        // The time spent on the request so far (work and delay), as a server would report it.
        let ms = arrived.elapsed().as_secs_f64() * 1000.0;
        let value = HeaderValue::from_str(&format!("app;dur={ms:.3}")).expect("a header value");
        headers.append(HeaderName::from_static("server-timing"), value);
    }
    Ok(response)
}

/// Keeps this thread busy until it has used `work` of CPU time (its own clock, see
/// [`spin_clock`]), without yielding: the serving thread and its core are taken as by a
/// request's real CPU work, the requests behind it queue, and a neighbour on the same core
/// stretches it in wall time as it would real work.
fn spin(work: Duration) {
    let Some(started) = spin_clock() else {
        return;
    };
    // A clock that fails mid-way (it does not on Linux) ends the spin rather than hanging it.
    while let Some(now) = spin_clock() {
        if std::hint::black_box(now.saturating_sub(started)) >= work {
            break;
        }
    }
}

/// The clock [`spin`] is timed by: the CPU time the calling thread has used
/// (`CLOCK_THREAD_CPUTIME_ID`); `None` when the clock fails.
#[cfg(unix)]
fn spin_clock() -> Option<Duration> {
    use nix::time::{ClockId, clock_gettime};
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID)
        .ok()
        .map(Duration::from)
}

/// The clock [`spin`] is timed by: on Windows the monotonic wall clock (since its first use),
/// since a thread's CPU time advances there only at the clock tick (15.6 ms by default), so a
/// neighbour on the same core does not stretch the spin.
#[cfg(windows)]
fn spin_clock() -> Option<Duration> {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    Some(START.get_or_init(std::time::Instant::now).elapsed())
}

/// A `text/plain` response; hyper adds `Content-Length` from the body's exact size.
fn text_response(status: StatusCode, body: ResponseBody) -> Response<ResponseBody> {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// The response a request's query string asks for (see the module documentation).
#[derive(Debug)]
struct Shape {
    status: StatusCode,
    /// Body length in bytes; `None` for the default `ok\n`.
    size: Option<u64>,
    delay: Duration,
    /// CPU time to spend (spinning on the serving thread) before the delay; zero for none.
    work: Duration,
    headers: Vec<(HeaderName, HeaderValue)>,
    close: bool,
    /// Add `Server-Timing: app;dur=MS`: the time from the request's arrival to its answer.
    server_timing: bool,
    /// An event stream of this many events instead of a body.
    events: Option<u32>,
    /// The time before each event.
    interval: Duration,
    /// Abort the response with this error code (after `work` and `delay`) instead of sending it.
    reset: Option<u32>,
}

impl Shape {
    /// Parses a query string (without the `?`); the error is the message for the 400 response.
    fn parse(query: &str) -> Result<Shape, String> {
        let mut shape = Shape {
            status: StatusCode::OK,
            size: None,
            delay: Duration::ZERO,
            work: Duration::ZERO,
            headers: Vec::new(),
            close: false,
            server_timing: false,
            events: None,
            interval: DEFAULT_INTERVAL,
            reset: None,
        };
        let (mut seen_status, mut seen_size, mut seen_delay, mut seen_work, mut seen_close) =
            (false, false, false, false, false);
        let (mut seen_server_timing, mut seen_events, mut seen_interval, mut seen_reset) =
            (false, false, false, false);
        for (name, value) in url::form_urlencoded::parse(query.as_bytes()) {
            let once = |seen: &mut bool| {
                if std::mem::replace(seen, true) {
                    Err(format!("parameter `{name}` is given twice: give it once"))
                } else {
                    Ok(())
                }
            };
            match &*name {
                "status" => {
                    once(&mut seen_status)?;
                    shape.status = value
                        .parse::<u16>()
                        .ok()
                        .filter(|code| (200..=599).contains(code))
                        .and_then(|code| StatusCode::from_u16(code).ok())
                        .ok_or_else(|| {
                            format!("invalid `status`: `{value}` is not a status from 200 to 599")
                        })?;
                }
                "size" => {
                    once(&mut seen_size)?;
                    let size = value.parse::<u64>().map_err(|_| {
                        format!(
                            "invalid `size`: `{value}` is not a number of bytes, e.g. `size=1024`"
                        )
                    })?;
                    if size > MAX_BODY_SIZE {
                        return Err(format!(
                            "invalid `size`: {size} bytes is more than the {MAX_BODY_SIZE} allowed"
                        ));
                    }
                    shape.size = Some(size);
                }
                "delay" => {
                    once(&mut seen_delay)?;
                    shape.delay = parse_duration(&value)
                        .map_err(|message| format!("invalid `delay`: {message}"))?;
                }
                "work" => {
                    once(&mut seen_work)?;
                    shape.work = parse_duration(&value)
                        .map_err(|message| format!("invalid `work`: {message}"))?;
                    if shape.work > MAX_WORK {
                        return Err(format!(
                            "invalid `work`: `{value}` is more than the {MAX_WORK:?} allowed"
                        ));
                    }
                }
                "header" => shape.headers.push(parse_header(&value)?),
                "close" => {
                    once(&mut seen_close)?;
                    shape.close = flag(&name, &value)?;
                }
                "server_timing" => {
                    once(&mut seen_server_timing)?;
                    shape.server_timing = flag(&name, &value)?;
                }
                "events" => {
                    once(&mut seen_events)?;
                    shape.events = Some(parse_events(&value)?);
                }
                "interval" => {
                    once(&mut seen_interval)?;
                    shape.interval = parse_interval(&value)?;
                }
                "reset" => {
                    once(&mut seen_reset)?;
                    shape.reset = Some(parse_reset(&value)?);
                }
                _ => {
                    return Err(format!(
                        "unknown parameter `{name}`: use status, size, delay, work, header, \
                         close, server_timing, events, interval or reset"
                    ));
                }
            }
        }
        shape.check_events(seen_interval)?;
        Ok(shape)
    }

    /// Checks that `events` goes with no `size`, `interval` (if `given`) with `events`, and
    /// that the stream lasts at most [`MAX_EVENT_STREAM`].
    fn check_events(&self, interval_given: bool) -> Result<(), String> {
        match self.events {
            Some(_) if self.size.is_some() => Err("give `size` or `events`, not both".to_string()),
            None if interval_given => Err("`interval` applies to `events`: give both".to_string()),
            Some(n) if self.interval * n > MAX_EVENT_STREAM => Err(format!(
                "invalid `events`: {n} events {:?} apart last more than {MAX_EVENT_STREAM:?}",
                self.interval
            )),
            _ => Ok(()),
        }
    }
}

/// Parses `events=N`: 1 to [`MAX_EVENTS`].
fn parse_events(value: &str) -> Result<u32, String> {
    value
        .parse::<u32>()
        .ok()
        .filter(|n| (1..=MAX_EVENTS).contains(n))
        .ok_or_else(|| format!("invalid `events`: `{value}` is not from 1 to {MAX_EVENTS}"))
}

/// Parses `interval=DUR`: at most [`MAX_INTERVAL`].
fn parse_interval(value: &str) -> Result<Duration, String> {
    parse_duration(value)
        .ok()
        .filter(|d| *d <= MAX_INTERVAL)
        .ok_or_else(|| format!("invalid `interval`: `{value}` is not a duration up to 10s"))
}

/// Parses `reset=CODE`: an error code from 0 to `0xffffffff`, decimal or `0x` hexadecimal
/// (32 bits: HTTP/2's error codes are, RFC 9113 §7; HTTP/3's may be longer, but its registered
/// codes fit).
fn parse_reset(value: &str) -> Result<u32, String> {
    let (digits, radix) = match value
        .strip_prefix("0x")
        .or_else(|| value.strip_prefix("0X"))
    {
        Some(hex) => (hex, 16),
        None => (value, 10),
    };
    // Digits only: `from_str_radix` would take a sign.
    let digits_only = digits.chars().all(|c| c.is_digit(radix));
    let parsed = u32::from_str_radix(digits, radix)
        .ok()
        .filter(|_| digits_only);
    parsed.ok_or_else(|| {
        format!(
            "invalid `reset`: `{value}` is not an error code from 0 to 0xffffffff, e.g. \
             `reset=8` or `reset=0x10c`"
        )
    })
}

/// Parses a `1` or `0` parameter.
fn flag(name: &str, value: &str) -> Result<bool, String> {
    match value {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(format!("invalid `{name}`: `{value}`: use 1 or 0")),
    }
}

/// Parses a `header=Name:Value` parameter. The headers that frame the message (`Content-Length`,
/// `Transfer-Encoding`, `Connection`) are refused: use `size` and `close` instead.
fn parse_header(text: &str) -> Result<(HeaderName, HeaderValue), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("invalid `header`: `{text}` is not `Name:Value`"))?;
    let name = HeaderName::from_bytes(name.trim().as_bytes())
        .map_err(|_| format!("invalid `header`: `{}` is not a header name", name.trim()))?;
    if name == header::CONTENT_LENGTH
        || name == header::TRANSFER_ENCODING
        || name == header::CONNECTION
    {
        return Err(format!(
            "invalid `header`: `{name}` cannot be set: use `size` for the body and `close=1` to close"
        ));
    }
    let value = HeaderValue::from_str(value.trim())
        .map_err(|_| format!("invalid `header`: the value of `{name}` is not a header value"))?;
    Ok((name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_query_is_the_default_shape() {
        let shape = Shape::parse("").unwrap();
        assert_eq!(shape.status, StatusCode::OK);
        assert_eq!(shape.size, None);
        assert_eq!(shape.delay, Duration::ZERO);
        assert_eq!(shape.work, Duration::ZERO);
        assert!(shape.headers.is_empty());
        assert!(!shape.close);
        assert!(!shape.server_timing);
        assert_eq!(shape.reset, None);
    }

    #[test]
    fn every_parameter_is_parsed() {
        let shape = Shape::parse(
            "status=503&size=10&delay=20ms&work=400us&header=X-A:1&header=x-b:%20two&close=1\
             &server_timing=1&reset=0x10c",
        )
        .unwrap();
        assert_eq!(shape.status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(shape.size, Some(10));
        assert_eq!(shape.delay, Duration::from_millis(20));
        assert_eq!(shape.work, Duration::from_micros(400));
        assert_eq!(shape.headers.len(), 2);
        assert_eq!(shape.headers[0].0, "x-a");
        assert_eq!(shape.headers[1].1, "two");
        assert!(shape.close);
        assert!(shape.server_timing);
        assert_eq!(shape.reset, Some(0x10c));
        assert_eq!(Shape::parse("reset=8").unwrap().reset, Some(8));
        assert_eq!(
            Shape::parse("reset=0XfFfFfFfF").unwrap().reset,
            Some(u32::MAX)
        );
    }

    #[test]
    fn invalid_parameters_are_named_in_the_message() {
        let cases = [
            ("status=99", "`status`"),
            ("status=600", "`status`"),
            ("status=abc", "`status`"),
            ("size=-1", "`size`"),
            ("size=2000000000", "`size`"),
            ("delay=20", "`delay`"),
            ("delay=1parsec", "`delay`"),
            ("work=400", "`work`"),
            ("work=11s", "`work`"),
            ("work=1ms&work=2ms", "`work`"),
            ("header=NoColon", "`header`"),
            ("header=Bad%20Name:1", "`header`"),
            ("header=Content-Length:5", "`header`"),
            ("close=yes", "`close`"),
            ("server_timing=2", "`server_timing`"),
            ("events=0", "`events`"),
            ("events=10001", "`events`"),
            ("events=2&size=3", "`size` or `events`"),
            ("interval=1ms", "`interval`"),
            ("events=1&interval=11s", "`interval`"),
            ("events=10000&interval=10ms", "`events`"),
            ("server_timing=1&server_timing=0", "`server_timing`"),
            ("reset=", "`reset`"),
            ("reset=-1", "`reset`"),
            ("reset=0x", "`reset`"),
            ("reset=0x1g", "`reset`"),
            ("reset=4294967296", "`reset`"),
            ("reset=CANCEL", "`reset`"),
            ("reset=+8", "`reset`"),
            ("reset=1&reset=2", "`reset`"),
            ("sise=10", "`sise`"),
            ("status=200&status=201", "`status`"),
        ];
        for (query, needle) in cases {
            let message = Shape::parse(query).expect_err(query);
            assert!(message.contains(needle), "{query}: {message}");
        }
    }
}
