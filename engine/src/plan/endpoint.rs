//! Where connections go: a URL's host and port.

use super::Errors;

/// Where a target's connections go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// A host name or an IP address (IPv6 without its brackets).
    pub(crate) host: String,
    /// The TCP port; the scheme's default when the URL gives none.
    pub(crate) port: u16,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// An absolute `http://` or `https://` URL, split.
pub(super) struct HttpUrl {
    /// Where its connections go.
    pub(super) endpoint: Endpoint,
    /// The host or the port comes from a `${VAR}` (the URL as written does not name them):
    /// it may be secret, so messages do not show it.
    pub(super) endpoint_from_env: bool,
    /// `/path?query`: the request line's target.
    pub(super) path_and_query: String,
    /// An `https://` (or `wss://`) URL.
    pub(super) https: bool,
    /// A `ws://` or `wss://` URL (WebSocket; `https` says which).
    pub(super) websocket: bool,
}

/// `url` with the `user:password@` of its authority written as `***@`: a message quoting a URL
/// whose credentials are refused must not print them.
fn without_userinfo(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_owned();
    };
    let rest = &url[scheme_end..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..scheme_end], &rest[at..]),
        None => url.to_owned(),
    }
}

/// Splits an absolute `http://` or `https://` URL (or `ws://`, `wss://`: WebSocket). `text` is the URL after `${VAR}` interpolation;
/// messages show `shown`, the URL as written, so that no interpolated secret reaches an error.
pub(super) fn parse_http_url(
    path: &str,
    text: &str,
    shown: &str,
    errors: &mut Errors,
) -> Option<HttpUrl> {
    let parsed = url::Url::parse(text);
    let is_http = |scheme: &str| matches!(scheme, "http" | "https" | "ws" | "wss");
    let written_http = text
        .split_once(':')
        .is_some_and(|(scheme, _)| is_http(&scheme.to_ascii_lowercase()));
    if !written_http && !parsed.as_ref().is_ok_and(|url| is_http(url.scheme())) {
        errors.push(path, not_http(text, shown));
        return None;
    }
    let url = match parsed {
        Ok(url) => url,
        Err(e) => {
            errors.push(path, format!("`{shown}` is not a valid URL: {e}"));
            return None;
        }
    };
    let tls = matches!(url.scheme(), "https" | "wss");
    let websocket = matches!(url.scheme(), "ws" | "wss");
    if !url.username().is_empty() || url.password().is_some() {
        errors.push(
            path,
            format!(
                "`{}`: credentials in a URL are not sent; use an `Authorization` header",
                without_userinfo(shown)
            ),
        );
        return None;
    }
    let Some(host) = url.host_str() else {
        errors.push(path, format!("`{shown}` has no host"));
        return None;
    };
    let endpoint = Endpoint {
        host: unbracket(host),
        port: url
            .port_or_known_default()
            .unwrap_or(if tls { 443 } else { 80 }),
    };
    // Written in the spec when the URL as written names the same host and port.
    let endpoint_from_env = url::Url::parse(shown).ok().is_none_or(|written| {
        written.host_str().map(unbracket).as_ref() != Some(&endpoint.host)
            || written.port_or_known_default() != Some(endpoint.port)
    });
    let mut path_and_query = url.path().to_string();
    if let Some(query) = url.query() {
        path_and_query.push('?');
        path_and_query.push_str(query);
    }
    Some(HttpUrl {
        endpoint,
        endpoint_from_env,
        path_and_query,
        https: tls,
        websocket,
    })
}

/// Why `text` (written `shown`) is not an `http://` or `https://` URL, and how to write one.
/// When `${VAR}`s were replaced, only the spec's text is shown: the value may be secret.
fn not_http(text: &str, shown: &str) -> String {
    if text != shown {
        format!(
            "`{shown}`: with its variables replaced, it does not start with `http://` or \
             `https://`; add the scheme to the variable's value"
        )
    } else if let Some((scheme, _)) = text.split_once("://") {
        format!(
            "`{shown}`: scheme `{scheme}` is not supported; use http://, https://, ws:// or wss://"
        )
    } else if text.starts_with('/') {
        format!("`{shown}` is a path: write an absolute URL such as `http://127.0.0.1:8080{shown}`")
    } else {
        format!("`{shown}` has no scheme: write `http://{shown}` (or `https://`)")
    }
}

/// An IPv6 host without its brackets.
fn unbracket(host: &str) -> String {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one error of `parse_http_url` for `text`, written `shown`.
    fn error(text: &str, shown: &str) -> String {
        let mut errors = Errors::default();
        assert!(parse_http_url("url", text, shown, &mut errors).is_none());
        assert_eq!(errors.0.len(), 1);
        errors.0.remove(0).message
    }

    #[test]
    fn a_url_that_is_not_http_says_how_to_write_one() {
        let cases = [
            (
                "127.0.0.1:8080",
                "has no scheme: write `http://127.0.0.1:8080`",
            ),
            (
                "localhost:8080",
                "has no scheme: write `http://localhost:8080`",
            ),
            ("/users", "is a path: write an absolute URL"),
            ("ftp://127.0.0.1/", "scheme `ftp` is not supported"),
            ("http://[::1", "is not a valid URL"),
        ];
        for (text, want) in cases {
            let message = error(text, text);
            assert!(message.contains(want), "{text}: {message}");
        }
    }

    #[test]
    fn credentials_written_in_a_url_are_refused_without_being_shown() {
        for url in [
            "http://alice:PASSWORD@127.0.0.1:8080/api",
            "https://alice:PASSWORD@localhost/a@b?c=@d",
        ] {
            let message = error(url, url);
            assert!(
                message.contains("credentials in a URL are not sent"),
                "{message}"
            );
            assert!(message.contains("://***@"), "{message}");
            for secret in ["alice", "PASSWORD"] {
                assert!(!message.contains(secret), "{url}: {message}");
            }
        }
    }

    #[test]
    fn a_value_from_the_environment_is_never_shown() {
        for value in ["admin:s3cret@10.0.0.1:80", "ftp://admin:s3cret@10.0.0.1/"] {
            let message = error(value, "${TARGET_URL}");
            assert!(message.starts_with("`${TARGET_URL}`: "), "{message}");
            for secret in ["admin", "s3cret", "10.0.0.1", "ftp"] {
                assert!(!message.contains(secret), "{value}: {message}");
            }
        }
    }

    #[test]
    fn an_endpoint_is_from_the_environment_unless_the_spec_writes_it() {
        let cases = [
            ("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/a", false),
            (
                "http://127.0.0.1:8080/t0ken",
                "http://127.0.0.1:8080/${TOKEN}",
                false,
            ),
            ("http://[::1]/", "http://[::1]/", false),
            ("http://10.0.0.1:8080/", "http://${HOST}:8080/", true),
            ("http://127.0.0.1:9000/", "http://127.0.0.1:${PORT}/", true),
            ("http://10.0.0.1:8080/users", "${TARGET_URL}/users", true),
        ];
        for (text, shown, want) in cases {
            let mut errors = Errors::default();
            let url = parse_http_url("url", text, shown, &mut errors).expect(text);
            assert_eq!(url.endpoint_from_env, want, "{shown}");
        }
    }
}
