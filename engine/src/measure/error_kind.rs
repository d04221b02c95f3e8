//! Why a request failed, as the run counts it.

/// Why a request failed. Counted, never stored one by one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum ErrorKind {
    /// The connection was refused (nothing listens).
    ConnectRefused,
    /// The connection was not established within the request timeout.
    ConnectTimeout,
    /// Any other failure to connect (unreachable, address error, a host name that does not
    /// resolve).
    ConnectError,
    /// No connection could be opened because loadgate was out of file descriptors (EMFILE or
    /// ENFILE; WSAEMFILE on Windows): the generator's limit, not the target's failure.
    FdLimit,
    /// The TLS handshake failed: certificate not trusted or for another name, no common
    /// version or cipher, or the server rejected the client certificate (which TLS 1.3
    /// servers report just after the handshake, before the first response).
    TlsHandshake,
    /// No complete response within the request timeout.
    Timeout,
    /// The connection was reset (ECONNRESET, EPIPE).
    Reset,
    /// The server closed the connection before the response was complete.
    Closed,
    /// The response was not valid HTTP/1.1, or the peer broke the HTTP/2 or TLS protocol.
    Malformed,
    /// The server reset the HTTP/2 stream (RST_STREAM, e.g. `REFUSED_STREAM`).
    StreamReset,
    /// The server closed the HTTP/2 connection with GOAWAY before processing this stream.
    GoAway,
    /// A complete response whose status is not in the target's `expect.status`.
    UnexpectedStatus,
    /// A redirect that was not followed (`defaults.redirects`): to another origin, or one
    /// more than the redirects allowed.
    Redirect,
}

impl ErrorKind {
    /// Every kind, in order.
    pub(crate) const ALL: [ErrorKind; 13] = [
        ErrorKind::ConnectRefused,
        ErrorKind::ConnectTimeout,
        ErrorKind::ConnectError,
        ErrorKind::FdLimit,
        ErrorKind::TlsHandshake,
        ErrorKind::Timeout,
        ErrorKind::Reset,
        ErrorKind::Closed,
        ErrorKind::Malformed,
        ErrorKind::StreamReset,
        ErrorKind::GoAway,
        ErrorKind::UnexpectedStatus,
        ErrorKind::Redirect,
    ];

    /// The snake_case name used in results and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectTimeout => "connect_timeout",
            ErrorKind::ConnectError => "connect_error",
            ErrorKind::FdLimit => "fd_limit",
            ErrorKind::TlsHandshake => "tls_handshake",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Reset => "reset",
            ErrorKind::Closed => "closed",
            ErrorKind::Malformed => "malformed",
            ErrorKind::StreamReset => "stream_reset",
            ErrorKind::GoAway => "goaway",
            ErrorKind::UnexpectedStatus => "unexpected_status",
            ErrorKind::Redirect => "redirect",
        }
    }

    /// Whether the request failed before a connection was established (a virtual user backs
    /// off after repeated ones).
    pub(crate) fn is_connect(self) -> bool {
        matches!(
            self,
            ErrorKind::ConnectRefused
                | ErrorKind::ConnectTimeout
                | ErrorKind::ConnectError
                | ErrorKind::FdLimit
                | ErrorKind::TlsHandshake
        )
    }
}
