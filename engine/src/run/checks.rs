//! Response checks: evaluated on a captured response (see [`Capture`]).

use std::borrow::Cow;
use std::io::Read as _;

use super::h1::{CAPTURE_BODY_BYTES, Capture};
use crate::plan::{CheckKind, CheckPlan, JsonTest, TextTest};

/// Most headers looked at in a captured response.
const MAX_HEADERS: usize = 64;

/// What a check reads of a response besides its capture: its status and its latency, µs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Measured {
    pub(crate) status: u16,
    pub(crate) latency_us: u64,
}

/// Evaluates every check on a response (`capture`: its head, and its body when a check reads
/// it; `measured`: its status and latency), calling `record(index, passed)` for each.
pub(crate) fn evaluate(
    checks: &[CheckPlan],
    capture: &Capture,
    measured: Measured,
    mut record: impl FnMut(usize, bool),
) {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let parsed = checks.iter().any(CheckPlan::reads_head) && response.parse(&capture.head).is_ok();
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    };
    let mut json: Option<Option<serde_json::Value>> = None;
    let encoding = if parsed {
        header("content-encoding")
    } else {
        None
    };
    let mut kept: Option<Cow<'_, [u8]>> = None;
    for (i, check) in checks.iter().enumerate() {
        let passed = match &check.kind {
            CheckKind::Status { set, .. } => set.contains(measured.status),
            CheckKind::Header(name, test) => {
                parsed && header(name).is_some_and(|value| text_passes(test, value))
            }
            CheckKind::BodyContains(needle) => contains(body(&mut kept, capture, encoding), needle),
            CheckKind::BodyMatches(re) => re.is_match(body(&mut kept, capture, encoding)),
            CheckKind::Json(pointer, test) => json
                .get_or_insert_with(|| {
                    serde_json::from_slice(body(&mut kept, capture, encoding)).ok()
                })
                .as_ref()
                .and_then(|v| v.pointer(pointer))
                .is_some_and(|v| json_passes(test, v)),
            CheckKind::DurationUnder { us, .. } => measured.latency_us < *us,
        };
        record(i, passed);
    }
}

/// The body as the checks read it, decoded once (`kept`).
fn body<'a, 'c>(
    kept: &'a mut Option<Cow<'c, [u8]>>,
    capture: &'c Capture,
    encoding: Option<&[u8]>,
) -> &'a [u8] {
    kept.get_or_insert_with(|| decoded(&capture.body, encoding))
}

/// Whether a header's `value` passes `test`.
fn text_passes(test: &TextTest, value: &[u8]) -> bool {
    match test {
        TextTest::Present => true,
        TextTest::Equals(want) => value == want.as_bytes(),
        TextTest::Matches(re) => re.is_match(value),
    }
}

/// Whether a JSON `value` passes `test`: `matches` reads strings only, comparisons numbers
/// only.
fn json_passes(test: &JsonTest, value: &serde_json::Value) -> bool {
    match test {
        JsonTest::Exists => true,
        JsonTest::Equals(want) => value == want,
        JsonTest::Matches(re) => value.as_str().is_some_and(|s| re.is_match(s.as_bytes())),
        JsonTest::Compare(bounds) => value
            .as_f64()
            .is_some_and(|x| bounds.iter().all(|(cmp, bound)| cmp.holds(x, *bound))),
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

    /// The checks of a target whose `checks` are `yaml`, planned.
    fn planned(yaml: &str) -> Vec<CheckPlan> {
        let spec = format!(
            "version: 1\nname: s\nload: {{connections: 1, duration: 1s}}\ntargets:\n  - name: t\n    \
             url: http://127.0.0.1:1/\n    checks: {yaml}\n"
        );
        let source =
            crate::spec::SourceSpec::parse(std::path::PathBuf::from("t.yaml"), spec).unwrap();
        let spec = serde_json::from_value(source.value.clone()).unwrap();
        let ctx = crate::plan::BuildContext {
            source: source.text.as_bytes(),
            spec_dir: std::path::Path::new("."),
            var: &|_| None,
        };
        let plan = crate::plan::build(&spec, &ctx).unwrap_or_else(|e| panic!("{e:?}"));
        plan.targets[0].checks.clone()
    }

    const OK: Measured = Measured {
        status: 200,
        latency_us: 1_000,
    };

    fn run(checks: &[CheckPlan], capture: &Capture, measured: Measured) -> Vec<bool> {
        let mut got = Vec::new();
        evaluate(checks, capture, measured, |i, passed| {
            assert_eq!(i, got.len());
            got.push(passed);
        });
        got
    }

    fn json_capture() -> Capture {
        Capture {
            head: b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Id: 7\r\n\r\n".to_vec(),
            body: br#"{"status": "ok", "total": 3, "name": "Ada", "data": [{"id": 42}]}"#.to_vec(),
            keep_body: true,
        }
    }

    #[test]
    fn every_kind_passes_and_fails() {
        let checks = planned(
            r#"[
            {status: 200}, {status: 201}, {status: 2xx}, {status: 4xx},
            {header: x-id}, {header: x-missing},
            {header: content-type, equals: application/json},
            {header: content-type, equals: text/html},
            {header: content-type, matches: '^application/(problem\+)?json$'},
            {header: content-type, matches: '^text/'},
            {header: x-missing, matches: '.*'},
            {body_contains: '"ok"'}, {body_contains: error},
            {body_matches: '"id":\s*\d+'}, {body_matches: '"id":\s*"'},
            {json: /data/0/id}, {json: /nope},
            {json: /data/0/id, equals: 42}, {json: /status, equals: fail},
            {json: /name, matches: '^A'}, {json: /name, matches: '^B'},
            {json: /total, matches: '3'},
            {json: /total, gt: 0, le: 3}, {json: /total, lt: 3}, {json: /total, ge: 3.5},
            {json: /name, gt: 0},
            {duration: 2ms}, {duration: 1ms}
            ]"#,
        );
        let got = run(&checks, &json_capture(), OK);
        assert_eq!(
            got,
            [
                true, false, true, false, // status
                true, false, // header present
                true, false, // header equals
                true, false, false, // header matches (absent: fails)
                true, false, // body_contains
                true, false, // body_matches
                true, false, // json exists
                true, false, // json equals
                true, false, false, // json matches (a number is not a string)
                true, false, false, false, // json compares (a string is not a number)
                true, false, // duration: 1 ms is under 2 ms, not under 1 ms
            ]
        );
        // The status checked is the response's, whatever its head says.
        let not_found = Measured {
            status: 404,
            latency_us: 1_000,
        };
        assert_eq!(
            run(&checks[..4], &json_capture(), not_found),
            [false, false, false, true]
        );
    }

    #[test]
    fn gzip_bodies_are_decoded_for_body_and_json_checks() {
        use std::io::Write as _;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(br#"{"status": "ok"}"#).unwrap();
        let gzipped = encoder.finish().unwrap();
        let checks = planned(
            r#"[{body_contains: '"ok"'}, {json: /status, equals: ok}, {body_matches: 'st.tus'}]"#,
        );
        let check = |head: &[u8], body: &[u8]| {
            let capture = Capture {
                head: head.to_vec(),
                body: body.to_vec(),
                keep_body: true,
            };
            run(&checks, &capture, OK)
        };
        let gzip = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n";
        assert_eq!(check(gzip, &gzipped), [true, true, true]);
        // Without the header the bytes are read as they are; a body cut short decodes as far
        // as it goes.
        assert_eq!(
            check(b"HTTP/1.1 200 OK\r\n\r\n", &gzipped),
            [false, false, false]
        );
        assert_eq!(
            check(gzip, &gzipped[..gzipped.len() / 2]),
            [false, false, false]
        );
    }

    #[test]
    fn a_body_that_is_not_json_fails_json_checks() {
        let capture = Capture {
            head: b"HTTP/1.1 200 OK\r\n\r\n".to_vec(),
            body: b"<html>".to_vec(),
            keep_body: true,
        };
        let checks = planned(r#"[{json: "", equals: x}, {json: ""}]"#);
        assert_eq!(run(&checks, &capture, OK), [false, false]);
    }
}
