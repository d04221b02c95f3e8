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
    /// The server reset the HTTP/2 stream (RST_STREAM, e.g. `REFUSED_STREAM`) or the HTTP/3
    /// stream (RESET_STREAM, e.g. `H3_REQUEST_REJECTED`).
    StreamReset,
    /// The server closed the HTTP/2 or HTTP/3 connection with GOAWAY before processing this
    /// stream.
    GoAway,
    /// An HTTP/3 (QUIC) connection went silent for longer than its idle timeout (RFC 9000
    /// §10.1): no packet from the server, not even an acknowledgement.
    IdleTimeout,
    /// A complete response whose status is not in the target's `expect.status`.
    UnexpectedStatus,
    /// A redirect that was not followed (`defaults.redirects`): to another origin, or one
    /// more than the redirects allowed.
    Redirect,
    /// gRPC: The call was cancelled (`CANCELLED`, 1).
    GrpcCancelled,
    /// gRPC: An unknown error (`UNKNOWN`, 2); also a response without a `grpc-status`.
    GrpcUnknown,
    /// gRPC: The request message was invalid (`INVALID_ARGUMENT`, 3).
    GrpcInvalidArgument,
    /// gRPC: The deadline (`grpc-timeout`) passed at the server (`DEADLINE_EXCEEDED`, 4).
    GrpcDeadlineExceeded,
    /// gRPC: `NOT_FOUND` (5).
    GrpcNotFound,
    /// gRPC: `ALREADY_EXISTS` (6).
    GrpcAlreadyExists,
    /// gRPC: `PERMISSION_DENIED` (7).
    GrpcPermissionDenied,
    /// gRPC: `RESOURCE_EXHAUSTED` (8); also a response message larger than the limit.
    GrpcResourceExhausted,
    /// gRPC: `FAILED_PRECONDITION` (9).
    GrpcFailedPrecondition,
    /// gRPC: `ABORTED` (10).
    GrpcAborted,
    /// gRPC: `OUT_OF_RANGE` (11).
    GrpcOutOfRange,
    /// gRPC: The server does not implement the method (`UNIMPLEMENTED`, 12).
    GrpcUnimplemented,
    /// gRPC: `INTERNAL` (13).
    GrpcInternal,
    /// gRPC: The service is unavailable (`UNAVAILABLE`, 14).
    GrpcUnavailable,
    /// gRPC: `DATA_LOSS` (15).
    GrpcDataLoss,
    /// gRPC: `UNAUTHENTICATED` (16).
    GrpcUnauthenticated,
    /// WebSocket: the server closed the connection (a Close frame, its code counted beside
    /// the kind: `ws_closed INTERNAL_ERROR (1011)`), or the TCP connection ended without one
    /// (code 1006), before the awaited reply.
    WsClosed,
}

impl ErrorKind {
    /// Every kind, in order.
    pub(crate) const ALL: [ErrorKind; 31] = [
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
        ErrorKind::IdleTimeout,
        ErrorKind::UnexpectedStatus,
        ErrorKind::Redirect,
        ErrorKind::GrpcCancelled,
        ErrorKind::GrpcUnknown,
        ErrorKind::GrpcInvalidArgument,
        ErrorKind::GrpcDeadlineExceeded,
        ErrorKind::GrpcNotFound,
        ErrorKind::GrpcAlreadyExists,
        ErrorKind::GrpcPermissionDenied,
        ErrorKind::GrpcResourceExhausted,
        ErrorKind::GrpcFailedPrecondition,
        ErrorKind::GrpcAborted,
        ErrorKind::GrpcOutOfRange,
        ErrorKind::GrpcUnimplemented,
        ErrorKind::GrpcInternal,
        ErrorKind::GrpcUnavailable,
        ErrorKind::GrpcDataLoss,
        ErrorKind::GrpcUnauthenticated,
        ErrorKind::WsClosed,
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
            ErrorKind::IdleTimeout => "idle_timeout",
            ErrorKind::UnexpectedStatus => "unexpected_status",
            ErrorKind::Redirect => "redirect",
            ErrorKind::GrpcCancelled => "grpc_cancelled",
            ErrorKind::GrpcUnknown => "grpc_unknown",
            ErrorKind::GrpcInvalidArgument => "grpc_invalid_argument",
            ErrorKind::GrpcDeadlineExceeded => "grpc_deadline_exceeded",
            ErrorKind::GrpcNotFound => "grpc_not_found",
            ErrorKind::GrpcAlreadyExists => "grpc_already_exists",
            ErrorKind::GrpcPermissionDenied => "grpc_permission_denied",
            ErrorKind::GrpcResourceExhausted => "grpc_resource_exhausted",
            ErrorKind::GrpcFailedPrecondition => "grpc_failed_precondition",
            ErrorKind::GrpcAborted => "grpc_aborted",
            ErrorKind::GrpcOutOfRange => "grpc_out_of_range",
            ErrorKind::GrpcUnimplemented => "grpc_unimplemented",
            ErrorKind::GrpcInternal => "grpc_internal",
            ErrorKind::GrpcUnavailable => "grpc_unavailable",
            ErrorKind::GrpcDataLoss => "grpc_data_loss",
            ErrorKind::GrpcUnauthenticated => "grpc_unauthenticated",
            ErrorKind::WsClosed => "ws_closed",
        }
    }

    /// The kind of a gRPC call that ended with status `code` (`grpc-status`, 1-16; gRPC's
    /// status codes, grpc/grpc `doc/statuscodes.md`); `None` for `OK` (0). A code outside
    /// 0-16 counts as `UNKNOWN`, as gRPC's clients read it.
    pub(crate) fn from_grpc_status(code: u32) -> Option<ErrorKind> {
        match code {
            0 => None,
            // `ALL` lists the gRPC kinds in code order, after `Redirect`.
            1..=16 => Some(ErrorKind::ALL[ErrorKind::Redirect as usize + code as usize]),
            _ => Some(ErrorKind::GrpcUnknown),
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

/// Which numbering an [`ErrorCode`] belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum CodeSpace {
    /// HTTP/2 error codes (RFC 9113 §7), from RST_STREAM and GOAWAY.
    H2,
    /// HTTP/3 application error codes (RFC 9114 §8.1, RFC 9204 §6 for QPACK), from
    /// RESET_STREAM, STOP_SENDING, GOAWAY's connection close and CONNECTION_CLOSE of type
    /// 0x1d.
    H3,
    /// QUIC transport error codes (RFC 9000 §20.1; 0x0100-0x01ff carry a TLS alert), from
    /// CONNECTION_CLOSE of type 0x1c.
    Quic,
    /// WebSocket close codes (RFC 6455 §7.4.1, IANA's WebSocket Close Code Number Registry),
    /// from a Close frame; 1006 when the connection ended without one.
    WebSocket,
}

/// The code a peer gave with a stream reset or a connection close: counted beside the
/// [`ErrorKind`] it explains (`stream_reset H3_REQUEST_CANCELLED (0x10c)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ErrorCode {
    /// The numbering the code is in.
    pub(crate) space: CodeSpace,
    /// The code as sent on the wire (a QUIC varint: up to 2^62 - 1).
    pub(crate) value: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grpc_status_is_its_own_kind() {
        assert_eq!(ErrorKind::from_grpc_status(0), None);
        for (code, name) in [
            (1, "grpc_cancelled"),
            (4, "grpc_deadline_exceeded"),
            (8, "grpc_resource_exhausted"),
            (14, "grpc_unavailable"),
            (16, "grpc_unauthenticated"),
            (17, "grpc_unknown"),
        ] {
            let kind = ErrorKind::from_grpc_status(code).unwrap();
            assert_eq!(kind.name(), name, "{code}");
            assert!(!kind.is_connect());
        }
    }
}
