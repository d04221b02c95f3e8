//! Following a redirect (`defaults.redirects`): where a `Location` leads, and the request sent
//! there, by the method rules of RFC 9110 §15.4. Built when a redirect is followed, not in
//! advance: only targets that follow redirects pay for it.

use bytes::Bytes;
use url::{Position, Url};

use super::TargetPlan;
use super::request::{authority, h2_request, request_bytes};

/// The redirect statuses followed: 301, 302, 303, 307 and 308 (RFC 9110 §15.4). 300 and 305
/// are not followed, and 304 is not a redirect.
pub(crate) const REDIRECT_STATUSES: [u16; 5] = [301, 302, 303, 307, 308];

/// Header fields about the content, left out when a redirect turns the request into a `GET`
/// without a body (RFC 9110 §15.4: "remove content-specific header fields").
const CONTENT_HEADERS: [&str; 5] = [
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "content-location",
];

/// The method of the request that follows a `status` redirect of a `method` request: `GET`
/// after a 303 (but `HEAD` stays `HEAD`), and after a 301 or 302 of a `POST`, as browsers do
/// (RFC 9110 §15.4.2, §15.4.3, §15.4.4); the same method otherwise (307, 308 keep the method
/// and the body).
pub(crate) fn method_after(status: u16, method: &str) -> &str {
    match (status, method) {
        (303, "HEAD") => "HEAD",
        (303, _) | (301 | 302, "POST") => "GET",
        _ => method,
    }
}

/// Where `location` (a `Location` header's value, absolute or relative) leads from `base` (the
/// URL of the request redirected): its path and query, when it is on the same origin (scheme,
/// host and port); `None` for another origin or a value that is not a URL reference.
pub(crate) fn same_origin_path(base: &str, location: &[u8]) -> Option<String> {
    let base = Url::parse(base).ok()?;
    let location = std::str::from_utf8(location).ok()?.trim();
    let next = base.join(location).ok()?;
    (next.origin() == base.origin())
        .then(|| next[Position::BeforePath..Position::AfterQuery].to_string())
}

impl TargetPlan {
    /// The request that a `status` response (one of [`REDIRECT_STATUSES`]) with `Location:
    /// location` leads to, as a target like this one: same endpoint, transport, headers and
    /// checks; the method by [`method_after`], the body kept only with the method. `None` when
    /// the redirect leaves the origin or its `Location` is not a URL reference.
    pub(crate) fn redirected(&self, status: u16, location: &[u8]) -> Option<TargetPlan> {
        let https = self.transport.tls.is_some();
        let current = self
            .h2_request
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str());
        let scheme = if https { "https" } else { "http" };
        let base = format!("{scheme}://{}{current}", authority(&self.endpoint, https));
        let path = same_origin_path(&base, location)?;
        let method = method_after(status, &self.method);
        let keeps_body = method == self.method;
        let (body, headers) = if keeps_body {
            (self.body.clone(), self.headers.clone())
        } else {
            let headers = self
                .headers
                .iter()
                .filter(|(name, _)| !CONTENT_HEADERS.contains(&name.to_ascii_lowercase().as_str()))
                .cloned()
                .collect();
            (Bytes::new(), headers)
        };
        let request = request_bytes(method, &path, &self.endpoint, https, &headers, &body);
        let h2 = h2_request(method, &path, &self.endpoint, https, &headers, &body).ok()?;
        Some(TargetPlan {
            method: method.to_string(),
            request: request.into(),
            h2_request: h2,
            body,
            is_head: method == "HEAD",
            headers,
            ..self.clone()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_after_a_redirect() {
        let cases = [
            (301, "POST", "GET"),
            (302, "POST", "GET"),
            (303, "POST", "GET"),
            (303, "PUT", "GET"),
            (303, "HEAD", "HEAD"),
            (301, "PUT", "PUT"),
            (302, "DELETE", "DELETE"),
            (307, "POST", "POST"),
            (308, "POST", "POST"),
            (308, "GET", "GET"),
        ];
        for (status, method, want) in cases {
            assert_eq!(method_after(status, method), want, "{status} {method}");
        }
    }

    #[test]
    fn locations_on_the_same_origin_only() {
        let base = "http://127.0.0.1:8080/a/b?x=1";
        let cases: [(&[u8], Option<&str>); 9] = [
            (b"/other", Some("/other")),
            (b"c?y=2#frag", Some("/a/c?y=2")),
            (b"../up", Some("/up")),
            (b"http://127.0.0.1:8080/abs", Some("/abs")),
            (b" /trimmed ", Some("/trimmed")),
            (b"http://127.0.0.1:8081/", None),
            (b"https://127.0.0.1:8080/", None),
            (b"http://localhost:8080/", None),
            (b"//example.com/x", None),
        ];
        for (location, want) in cases {
            assert_eq!(
                same_origin_path(base, location).as_deref(),
                want,
                "{:?}",
                String::from_utf8_lossy(location)
            );
        }
        assert_eq!(
            same_origin_path("https://[::1]/", b"https://[::1]:443/x").as_deref(),
            Some("/x")
        );
        assert_eq!(same_origin_path(base, b"\xff"), None);
    }
}
