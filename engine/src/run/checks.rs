//! Response checks: evaluated on a captured response (see [`Capture`]).

use super::h1::Capture;
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
    for (i, check) in checks.iter().enumerate() {
        let passed = match check {
            CheckPlan::HeaderPresent(name) => parsed && header(name).is_some(),
            CheckPlan::HeaderEquals(name, value) => {
                parsed && header(name).is_some_and(|v| v == value.as_bytes())
            }
            CheckPlan::BodyContains(needle) => contains(&capture.body, needle),
            CheckPlan::JsonEquals(pointer, want) => json
                .get_or_insert_with(|| serde_json::from_slice(&capture.body).ok())
                .as_ref()
                .and_then(|v| v.pointer(pointer))
                .is_some_and(|v| v == want),
        };
        record(i, passed);
    }
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
