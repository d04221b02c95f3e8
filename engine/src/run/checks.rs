//! Response checks: evaluated on a captured response (see [`Capture`]).

use std::borrow::Cow;
use std::io::Read as _;

use super::h1::{CAPTURE_BODY_BYTES, Capture};
use crate::plan::CheckPlan;

/// Most headers looked at in a captured response.
const MAX_HEADERS: usize = 64;

/// Evaluates every check on `capture`, calling `record(index, passed)` for each.
pub(crate) fn evaluate(
    checks: &[CheckPlan],
    capture: &Capture,
    mut record: impl FnMut(usize, bool),
) {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let parsed = response.parse(&capture.head).is_ok();
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let mut json: Option<Option<serde_json::Value>> = None;
    let mut body: Option<Cow<'_, [u8]>> = None;
    for (i, check) in checks.iter().enumerate() {
        let passed = match check {
            CheckPlan::HeaderPresent(name) => parsed && header(name).is_some(),
            CheckPlan::HeaderEquals(name, value) => {
                parsed && header(name).is_some_and(|v| v == value.as_bytes())
            }
            CheckPlan::BodyContains(needle) => contains(
                body.get_or_insert_with(|| decoded(&capture.body, header("content-encoding"))),
                needle,
            ),
            CheckPlan::JsonEquals(pointer, want) => json
                .get_or_insert_with(|| {
                    let body = body
                        .get_or_insert_with(|| decoded(&capture.body, header("content-encoding")));
                    serde_json::from_slice(body).ok()
                })
                .as_ref()
                .and_then(|v| v.pointer(pointer))
                .is_some_and(|v| v == want),
        };
        record(i, passed);
    }
}

/// The body as the checks read it: `body` decoded when its `Content-Encoding` is `gzip` (up to
/// [`CAPTURE_BODY_BYTES`] of it; a body cut short, or not gzip after all, decodes as far as it
/// goes), else as it is.
fn decoded<'a>(body: &'a [u8], content_encoding: Option<&[u8]>) -> Cow<'a, [u8]> {
    let gzip = content_encoding.is_some_and(|e| {
        let e = e.trim_ascii();
        e.eq_ignore_ascii_case(b"gzip") || e.eq_ignore_ascii_case(b"x-gzip")
    });
    if !gzip {
        return Cow::Borrowed(body);
    }
    let mut out = Vec::new();
    let _ = flate2::read::GzDecoder::new(body)
        .take(CAPTURE_BODY_BYTES as u64)
        .read_to_end(&mut out);
    Cow::Owned(out)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_on_a_captured_response() {
        let capture = Capture {
            head: b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Id: 7\r\n\r\n".to_vec(),
            body: br#"{"status": "ok", "data": [{"id": 42}]}"#.to_vec(),
            keep_body: true,
        };
        let checks = [
            CheckPlan::HeaderPresent("x-id".into()),
            CheckPlan::HeaderPresent("x-missing".into()),
            CheckPlan::HeaderEquals("content-type".into(), "application/json".into()),
            CheckPlan::HeaderEquals("content-type".into(), "text/html".into()),
            CheckPlan::BodyContains(b"\"ok\"".to_vec()),
            CheckPlan::BodyContains(b"error".to_vec()),
            CheckPlan::JsonEquals("/data/0/id".into(), serde_json::json!(42)),
            CheckPlan::JsonEquals("/status".into(), serde_json::json!("fail")),
            CheckPlan::JsonEquals("/nope".into(), serde_json::json!(null)),
        ];
        let mut got = Vec::new();
        evaluate(&checks, &capture, |i, passed| got.push((i, passed)));
        let passed: Vec<bool> = got.iter().map(|(_, p)| *p).collect();
        assert_eq!(
            passed,
            [true, false, true, false, true, false, true, false, false]
        );
    }

    #[test]
    fn gzip_bodies_are_decoded_for_body_and_json_checks() {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(br#"{"status": "ok"}"#).unwrap();
        let gzipped = encoder.finish().unwrap();
        let checks = [
            CheckPlan::BodyContains(b"\"ok\"".to_vec()),
            CheckPlan::JsonEquals("/status".into(), serde_json::json!("ok")),
        ];
        let run = |head: &[u8], body: &[u8]| {
            let capture = Capture {
                head: head.to_vec(),
                body: body.to_vec(),
                keep_body: true,
            };
            let mut got = Vec::new();
            evaluate(&checks, &capture, |_, passed| got.push(passed));
            got
        };
        let gzip = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n";
        assert_eq!(run(gzip, &gzipped), [true, true]);
        // Without the header the bytes are read as they are; a body cut short decodes as far
        // as it goes.
        assert_eq!(run(b"HTTP/1.1 200 OK\r\n\r\n", &gzipped), [false, false]);
        assert_eq!(run(gzip, &gzipped[..gzipped.len() / 2]), [false, false]);
    }

    #[test]
    fn a_body_that_is_not_json_fails_json_checks() {
        let capture = Capture {
            head: b"HTTP/1.1 200 OK\r\n\r\n".to_vec(),
            body: b"<html>".to_vec(),
            keep_body: true,
        };
        let mut got = Vec::new();
        evaluate(
            &[CheckPlan::JsonEquals(String::new(), serde_json::json!("x"))],
            &capture,
            |_, passed| got.push(passed),
        );
        assert_eq!(got, [false]);
    }
}
