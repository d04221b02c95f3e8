//! Requests built once, in the plan: the bytes of an HTTP/1.1 request and the head of an
//! HTTP/2 one, with the headers loadgate adds (`Host`, `User-Agent`, `Content-Length`).

use super::endpoint::Endpoint;

/// The `Host` header (and HTTP/2 `:authority`) of `endpoint`: the port is left out when it
/// is the scheme's default.
pub(super) fn authority(endpoint: &Endpoint, https: bool) -> String {
    if endpoint.port == if https { 443 } else { 80 } {
        bracket(&endpoint.host)
    } else {
        format!("{}:{}", bracket(&endpoint.host), endpoint.port)
    }
}

/// Builds the bytes of an HTTP/1.1 request. Adds `Host`, `User-Agent` and `Content-Length`
/// unless given.
pub(crate) fn request_bytes(
    method: &str,
    path_and_query: &str,
    endpoint: &Endpoint,
    https: bool,
    headers: &[(String, String)],
    body: &[u8],
) -> Vec<u8> {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut out = format!("{method} {path_and_query} HTTP/1.1\r\n");
    if !has("host") {
        out.push_str(&format!("Host: {}\r\n", authority(endpoint, https)));
    }
    if !has("user-agent") {
        out.push_str(concat!(
            "User-Agent: loadgate/",
            env!("CARGO_PKG_VERSION"),
            "\r\n"
        ));
    }
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    let needs_length = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if needs_length && !has("content-length") {
        out.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// Headers that HTTP/2 forbids (RFC 9113 §8.2.2): left out of HTTP/2 requests.
const CONNECTION_SPECIFIC: [&str; 5] = [
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// Builds the HTTP/2 form of a request: `:scheme`, `:authority` (the `Host` header if given)
/// and `:path` from the URL; `User-Agent` and `Content-Length` as for HTTP/1.1.
pub(crate) fn h2_request(
    method: &str,
    path_and_query: &str,
    endpoint: &Endpoint,
    https: bool,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<http::Request<()>, http::Error> {
    let host = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("host"))
        .map_or_else(|| authority(endpoint, https), |(_, v)| v.clone());
    let uri = http::Uri::builder()
        .scheme(if https { "https" } else { "http" })
        .authority(host)
        .path_and_query(path_and_query)
        .build()?;
    let mut builder = http::Request::builder()
        .method(method)
        .uri(uri)
        .version(http::Version::HTTP_2);
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    if !has("user-agent") {
        builder = builder.header(
            "user-agent",
            concat!("loadgate/", env!("CARGO_PKG_VERSION")),
        );
    }
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        if lower == "host" || CONNECTION_SPECIFIC.contains(&lower.as_str()) {
            continue;
        }
        if lower == "te" && !value.eq_ignore_ascii_case("trailers") {
            continue;
        }
        builder = builder.header(lower, value);
    }
    let needs_length = !body.is_empty() || matches!(method, "POST" | "PUT" | "PATCH");
    if needs_length && !has("content-length") {
        builder = builder.header("content-length", body.len());
    }
    builder.body(())
}

fn bracket(host: &str) -> String {
    if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_bytes_add_host_and_length() {
        let endpoint = Endpoint {
            host: "::1".to_string(),
            port: 8080,
        };
        let headers = [("X-Id".to_string(), "7".to_string())];
        let bytes = request_bytes("POST", "/items?a=1", &endpoint, false, &headers, b"{}");
        let text = String::from_utf8(bytes).unwrap();
        assert!(
            text.starts_with("POST /items?a=1 HTTP/1.1\r\nHost: [::1]:8080\r\n"),
            "{text}"
        );
        assert!(text.contains("X-Id: 7\r\n"));
        assert!(text.ends_with("Content-Length: 2\r\n\r\n{}"), "{text}");
    }

    #[test]
    fn https_default_port_is_left_out_of_host_and_authority() {
        let endpoint = |port| Endpoint {
            host: "api.example.com".to_string(),
            port,
        };
        let text =
            String::from_utf8(request_bytes("GET", "/", &endpoint(443), true, &[], &[])).unwrap();
        assert!(text.contains("Host: api.example.com\r\n"), "{text}");
        let text =
            String::from_utf8(request_bytes("GET", "/", &endpoint(443), false, &[], &[])).unwrap();
        assert!(text.contains("Host: api.example.com:443\r\n"), "{text}");
        let request = h2_request("GET", "/a?b=1", &endpoint(8443), true, &[], &[]).unwrap();
        assert_eq!(
            request.uri().to_string(),
            "https://api.example.com:8443/a?b=1"
        );
    }

    #[test]
    fn h2_requests_drop_connection_specific_headers_and_take_host_as_authority() {
        let endpoint = Endpoint {
            host: "127.0.0.1".to_string(),
            port: 8080,
        };
        let headers: Vec<(String, String)> = [
            ("Host", "api.internal"),
            ("Connection", "keep-alive"),
            ("Transfer-Encoding", "chunked"),
            ("TE", "gzip"),
            ("X-Id", "7"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let request = h2_request("POST", "/items", &endpoint, false, &headers, b"{}").unwrap();
        assert_eq!(request.uri().to_string(), "http://api.internal/items");
        assert_eq!(request.method(), "POST");
        let names: Vec<&str> = request.headers().keys().map(|k| k.as_str()).collect();
        assert_eq!(names, ["user-agent", "x-id", "content-length"]);
        assert_eq!(request.headers()["content-length"], "2");
    }
}
