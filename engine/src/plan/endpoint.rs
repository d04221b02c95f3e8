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
    /// `/path?query`: the request line's target.
    pub(super) path_and_query: String,
    /// An `https://` URL.
    pub(super) https: bool,
}

/// Splits an absolute `http://` or `https://` URL. `text` is the URL after `${VAR}` interpolation;
/// messages show `shown`, the URL as written, so that no interpolated secret reaches an error.
pub(super) fn parse_http_url(
    path: &str,
    text: &str,
    shown: &str,
    errors: &mut Errors,
) -> Option<HttpUrl> {
    let url = match url::Url::parse(text) {
        Ok(url) => url,
        Err(e) => {
            errors.push(path, format!("`{shown}` is not a valid URL: {e}"));
            return None;
        }
    };
    let tls = match url.scheme() {
        "http" => false,
        "https" => true,
        other => {
            errors.push(
                path,
                format!("`{shown}`: scheme `{other}` is not supported; use http:// or https://"),
            );
            return None;
        }
    };
    if !url.username().is_empty() || url.password().is_some() {
        errors.push(
            path,
            format!("`{shown}`: credentials in a URL are not sent; use an `Authorization` header"),
        );
        return None;
    }
    let Some(host) = url.host_str() else {
        errors.push(path, format!("`{shown}` has no host"));
        return None;
    };
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let port = url
        .port_or_known_default()
        .unwrap_or(if tls { 443 } else { 80 });
    let mut path_and_query = url.path().to_string();
    if let Some(query) = url.query() {
        path_and_query.push('?');
        path_and_query.push_str(query);
    }
    Some(HttpUrl {
        endpoint: Endpoint { host, port },
        path_and_query,
        https: tls,
    })
}
