//! What a flow step takes from its response: the cookies it sets (into the virtual user's
//! jar) and the extractors' values (into its variables).

use std::io::Write as _;

use cookie_store::CookieStore;
use url::Url;

use super::Vars;
use crate::plan::flow::{Extractor, Source};

/// Most response header fields looked at.
const MAX_HEADERS: usize = 64;

/// Stores the cookies that a response sets in `jar` (against the step's URL, RFC 6265), then
/// runs `extractors` in order on it, each value into its slot of `vars` (an extractor that
/// finds nothing takes its default, if it has one). `head`: the status line and header
/// fields as kept (an HTTP/2 response's written as HTTP/1.1); `body`: as kept (empty when no
/// extractor needed it). A value holding CR, LF or NUL counts as not found, so that a
/// response can never split the next request. Returns false when an extractor found nothing
/// and had no default (the others still run).
pub(super) fn response(
    head: &[u8],
    body: &[u8],
    jar: Option<(&mut CookieStore, &Url)>,
    extractors: &[Extractor],
    vars: &mut Vars,
) -> bool {
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut parsed = httparse::Response::new(&mut fields);
    let ok = parsed.parse(head).is_ok();
    let status = parsed.code.filter(|_| ok);
    let headers: &[httparse::Header<'_>] = if ok { parsed.headers } else { &[] };
    if let Some((jar, url)) = jar {
        for h in headers {
            if h.name.eq_ignore_ascii_case("set-cookie")
                && let Ok(text) = std::str::from_utf8(h.value)
            {
                // A cookie the store refuses (RFC 6265 §5.3) is left out, as a browser does.
                let _ = jar.parse(text, url);
            }
        }
    }
    let mut json: Option<Option<serde_json::Value>> = None;
    let mut all = true;
    for extractor in extractors {
        let out = vars.buffer(extractor.slot);
        let mut found = match &extractor.source {
            Source::Status => status.is_some_and(|code| write!(out, "{code}").is_ok()),
            Source::Header(name) => header(headers, name).is_some_and(|value| {
                out.extend_from_slice(value);
                true
            }),
            Source::Cookie(name) => set_cookie(headers, name).is_some_and(|value| {
                out.extend_from_slice(value);
                true
            }),
            Source::Regex(regex) => {
                let text = String::from_utf8_lossy(body);
                regex.captures(&text).is_some_and(|c| {
                    let m = c.get(1).or_else(|| c.get(0)).expect("a match has group 0");
                    out.extend_from_slice(m.as_str().as_bytes());
                    true
                })
            }
            Source::Json(pointer) => {
                let value = json.get_or_insert_with(|| serde_json::from_slice(body).ok());
                match value.as_ref().and_then(|v| v.pointer(pointer)) {
                    Some(serde_json::Value::String(s)) => {
                        out.extend_from_slice(s.as_bytes());
                        true
                    }
                    Some(other) => serde_json::to_writer(&mut *out, other).is_ok(),
                    None => false,
                }
            }
        };
        // A value that would end a header line or the request line (CR, LF, NUL) is not
        // taken: rendered into a path or header, it would split the request.
        found &= !out.iter().any(|&b| matches!(b, b'\r' | b'\n' | 0));
        if !found {
            match &extractor.default {
                Some(default) => {
                    out.clear();
                    out.extend_from_slice(default.as_bytes());
                }
                None => {
                    vars.unset(extractor.slot);
                    all = false;
                }
            }
        }
    }
    all
}

/// The value of the first header field named `name` (any case).
fn header<'h>(headers: &[httparse::Header<'h>], name: &str) -> Option<&'h [u8]> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value)
}

/// The value of cookie `name` as a `Set-Cookie` field of `headers` sets it (the last one,
/// when set twice): the text after `name=` up to the first `;`, trimmed (RFC 6265 §5.2).
fn set_cookie<'h>(headers: &[httparse::Header<'h>], name: &str) -> Option<&'h [u8]> {
    headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("set-cookie"))
        .filter_map(|h| {
            let pair = h.value.split(|&b| b == b';').next()?;
            let eq = pair.iter().position(|&b| b == b'=')?;
            (pair[..eq].trim_ascii() == name.as_bytes()).then(|| pair[eq + 1..].trim_ascii())
        })
        .next_back()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8_lossy(bytes).into_owned()
    }

    fn ex(slot: usize, source: Source, default: Option<&str>) -> Extractor {
        Extractor {
            slot,
            source,
            default: default.map(str::to_string),
        }
    }

    const HEAD: &[u8] = b"HTTP/1.1 201 Created\r\nETag: \"item-7\"\r\n\
        Set-Cookie: session=ab12; Path=/; HttpOnly\r\nSet-Cookie: theme = dark\r\n\r\n";
    const BODY: &[u8] = br#"{"token":"t0k","user":{"id":7,"tags":["a"]},"n":2.5} <a id="42">"#;

    #[test]
    fn each_kind_of_extraction() {
        let mut vars = Vars::new(8);
        let url = Url::parse("http://127.0.0.1:8080/api/login").unwrap();
        let mut jar = CookieStore::new();
        let extractors = [
            ex(0, Source::Json("/token".into()), None),
            ex(1, Source::Json("/user".into()), None),
            ex(
                2,
                Source::Regex(regex::Regex::new(r#"id="(\d+)""#).unwrap()),
                None,
            ),
            ex(
                3,
                Source::Regex(regex::Regex::new(r"\d\.\d").unwrap()),
                None,
            ),
            ex(4, Source::Header("etag".into()), None),
            ex(5, Source::Cookie("session".into()), None),
            ex(6, Source::Cookie("theme".into()), None),
            ex(7, Source::Status, None),
        ];
        let body = &BODY[..BODY.iter().position(|&b| b == b' ').unwrap()];
        // The JSON body alone for the pointers; the whole text for the regexes.
        assert!(response(
            HEAD,
            body,
            Some((&mut jar, &url)),
            &extractors[..2],
            &mut vars
        ));
        assert!(response(HEAD, BODY, None, &extractors[2..], &mut vars));
        let got: Vec<_> = (0..8).map(|s| text(vars.get(s).unwrap())).collect();
        assert_eq!(
            got,
            [
                "t0k",
                r#"{"id":7,"tags":["a"]}"#,
                "42",
                "2.5",
                "\"item-7\"",
                "ab12",
                "dark",
                "201"
            ],
            "{}",
            text(HEAD)
        );
        let sent: Vec<_> = jar.get_request_values(&url).collect();
        assert!(sent.contains(&("session", "ab12")), "{sent:?}");
        let elsewhere = Url::parse("http://127.0.0.2:8080/").unwrap();
        assert_eq!(jar.get_request_values(&elsewhere).count(), 0);
    }

    #[test]
    fn a_value_not_found_takes_its_default_or_fails() {
        let mut vars = Vars::new(3);
        vars.put(1, b"stale");
        let extractors = [
            ex(0, Source::Header("x-missing".into()), Some("fallback")),
            ex(1, Source::Json("/nope".into()), None),
            ex(2, Source::Cookie("session".into()), None),
        ];
        assert!(!response(
            b"HTTP/1.1 200 OK\r\n\r\n",
            b"not json",
            None,
            &extractors,
            &mut vars
        ));
        assert_eq!(vars.get(0), Some(&b"fallback"[..]));
        assert_eq!(
            vars.get(1),
            None,
            "a failed extraction leaves no stale value"
        );
        assert_eq!(vars.get(2), None);
    }

    #[test]
    fn a_value_that_would_split_a_request_is_not_taken() {
        let mut vars = Vars::new(2);
        let extractors = [
            ex(0, Source::Json("/token".into()), None),
            ex(1, Source::Json("/ok".into()), None),
        ];
        let body = br#"{"token": "a\r\nX-Injected: 1", "ok": "fine"}"#;
        assert!(!response(
            b"HTTP/1.1 200 OK\r\n\r\n",
            body,
            None,
            &extractors,
            &mut vars
        ));
        assert_eq!(vars.get(0), None);
        assert_eq!(vars.get(1), Some(&b"fine"[..]));
    }
}
