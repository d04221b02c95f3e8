//! The POST of an export: a blocking client (ureq, rustls with ring), each attempt bounded by
//! [`TIMEOUT`], retried a bounded number of times when the failure may pass.

use std::io::Read as _;
use std::time::Duration;

/// The most one attempt takes, connecting, sending and reading the answer together: 10 s.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);

/// Attempts per request: the first and two retries, after 0.5 s and 1 s. A request's worst
/// case is about 3 × [`TIMEOUT`] + 1.5 s.
pub(crate) const ATTEMPTS: u32 = 3;

/// The most of an error answer's body quoted in the error (bytes).
const ERROR_BODY_LIMIT: u64 = 512;

/// Why a POST failed, after its retries.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PostError {
    /// The server answered with an error status.
    #[error("HTTP {status}{}", if .body.is_empty() { String::new() } else { format!(": {}", .body) })]
    Status {
        /// The status code.
        status: u16,
        /// The start of the answer's body, printable.
        body: String,
    },
    /// No answer: connection refused, timeout, TLS, DNS.
    #[error("{0}")]
    Transport(String),
}

/// One POST: where, what, and with which headers (the protocol's and the user's).
pub(crate) struct Post<'a> {
    /// The URL (its user and password, if any, sent as Basic authentication).
    pub(crate) url: &'a str,
    /// The protocol's headers.
    pub(crate) headers: &'a [(&'a str, &'a str)],
    /// The user's headers (`LOADGATE_EXPORT_HEADERS`), sent after the protocol's.
    pub(crate) extra: &'a [(String, String)],
    /// The body.
    pub(crate) body: &'a [u8],
}

/// The client of every export: [`TIMEOUT`] per attempt, error statuses returned as answers,
/// no redirects followed (a redirect would resend the body elsewhere).
pub(crate) fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .max_redirects(0)
        .user_agent(concat!("loadgate/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

/// Sends `post`, retrying on a transport error, a 429 or a 5xx (remote write 1.0 and OTLP
/// both say retry those, and not other 4xx) at most [`ATTEMPTS`] times in all. Returns the
/// body of the 2xx answer (at most 64 KiB).
pub(crate) fn send(agent: &ureq::Agent, post: &Post<'_>) -> Result<String, PostError> {
    let mut attempt = 1;
    loop {
        let error = match send_once(agent, post) {
            Ok(body) => return Ok(body),
            Err(e) => e,
        };
        let retryable = match &error {
            PostError::Status { status, .. } => *status == 429 || *status >= 500,
            PostError::Transport(_) => true,
        };
        if !retryable || attempt >= ATTEMPTS {
            return Err(error);
        }
        std::thread::sleep(Duration::from_millis(500) * attempt);
        attempt += 1;
    }
}

/// One attempt of [`send`].
fn send_once(agent: &ureq::Agent, post: &Post<'_>) -> Result<String, PostError> {
    let mut request = agent.post(post.url);
    for (name, value) in post.headers {
        request = request.header(*name, *value);
    }
    for (name, value) in post.extra {
        request = request.header(name, value);
    }
    let mut response = request
        .send(post.body)
        .map_err(|e| PostError::Transport(e.to_string()))?;
    let status = response.status().as_u16();
    let limit = if (200..300).contains(&status) {
        64 * 1024
    } else {
        ERROR_BODY_LIMIT
    };
    let mut bytes = Vec::new();
    // The answer's body only explains: a body that cannot be read is left out.
    let _ = response
        .body_mut()
        .as_reader()
        .take(limit)
        .read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes);
    if (200..300).contains(&status) {
        return Ok(text.into_owned());
    }
    Err(PostError::Status {
        status,
        body: crate::spec::printable(text.trim()),
    })
}
