//! The names of the codes peers give with a stream reset or a connection close
//! ([`ErrorCode`]), as the registries list them, and the key a code is counted under in
//! results (`stream_reset REFUSED_STREAM (0x7)`).
//!
//! Sources: HTTP/2 error codes, RFC 9113 §7; HTTP/3 error codes, RFC 9114 §8.1; QPACK error
//! codes, RFC 9204 §6; QUIC transport error codes, RFC 9000 §20.1 (0x0100-0x01ff:
//! `CRYPTO_ERROR`, the low byte a TLS alert, RFC 8446 §6, named as rustls names it).

use std::borrow::Cow;

use super::{CodeSpace, ErrorCode, ErrorKind};

/// HTTP/2 error codes by value (RFC 9113 §7).
const H2_NAMES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// HTTP/3 error codes from 0x100 on (RFC 9114 §8.1).
const H3_NAMES: [&str; 17] = [
    "H3_NO_ERROR",
    "H3_GENERAL_PROTOCOL_ERROR",
    "H3_INTERNAL_ERROR",
    "H3_STREAM_CREATION_ERROR",
    "H3_CLOSED_CRITICAL_STREAM",
    "H3_FRAME_UNEXPECTED",
    "H3_FRAME_ERROR",
    "H3_EXCESSIVE_LOAD",
    "H3_ID_ERROR",
    "H3_SETTINGS_ERROR",
    "H3_MISSING_SETTINGS",
    "H3_REQUEST_REJECTED",
    "H3_REQUEST_CANCELLED",
    "H3_REQUEST_INCOMPLETE",
    "H3_MESSAGE_ERROR",
    "H3_CONNECT_ERROR",
    "H3_VERSION_FALLBACK",
];

/// QPACK error codes from 0x200 on (RFC 9204 §6), in HTTP/3's numbering.
const QPACK_NAMES: [&str; 3] = [
    "QPACK_DECOMPRESSION_FAILED",
    "QPACK_ENCODER_STREAM_ERROR",
    "QPACK_DECODER_STREAM_ERROR",
];

/// QUIC transport error codes by value (RFC 9000 §20.1), up to 0x10.
const QUIC_NAMES: [&str; 17] = [
    "NO_ERROR",
    "INTERNAL_ERROR",
    "CONNECTION_REFUSED",
    "FLOW_CONTROL_ERROR",
    "STREAM_LIMIT_ERROR",
    "STREAM_STATE_ERROR",
    "FINAL_SIZE_ERROR",
    "FRAME_ENCODING_ERROR",
    "TRANSPORT_PARAMETER_ERROR",
    "CONNECTION_ID_LIMIT_ERROR",
    "PROTOCOL_VIOLATION",
    "INVALID_TOKEN",
    "APPLICATION_ERROR",
    "CRYPTO_BUFFER_EXCEEDED",
    "KEY_UPDATE_ERROR",
    "AEAD_LIMIT_REACHED",
    "NO_VIABLE_PATH",
];

/// WebSocket close codes from 1000 on (RFC 6455 §7.4.1; 1012-1015 from IANA's registry).
const WS_NAMES: [&str; 16] = [
    "NORMAL_CLOSURE",
    "GOING_AWAY",
    "PROTOCOL_ERROR",
    "UNSUPPORTED_DATA",
    "RESERVED",
    "NO_STATUS_RECEIVED",
    "ABNORMAL_CLOSURE",
    "INVALID_PAYLOAD",
    "POLICY_VIOLATION",
    "MESSAGE_TOO_BIG",
    "MANDATORY_EXTENSION",
    "INTERNAL_ERROR",
    "SERVICE_RESTART",
    "TRY_AGAIN_LATER",
    "BAD_GATEWAY",
    "TLS_HANDSHAKE",
];

impl ErrorCode {
    /// The code's registered name (`REFUSED_STREAM`, `H3_REQUEST_CANCELLED`,
    /// `CRYPTO_ERROR (TLS alert 42 BadCertificate)`); `None` for a code without one
    /// (extensions, reserved and grease values).
    pub(crate) fn name(self) -> Option<Cow<'static, str>> {
        let table = |names: &[&'static str], first: u64| {
            let i = usize::try_from(self.value.checked_sub(first)?).ok()?;
            names.get(i).map(|&n| Cow::Borrowed(n))
        };
        match self.space {
            CodeSpace::H2 => table(&H2_NAMES, 0),
            CodeSpace::H3 => table(&H3_NAMES, 0x100).or_else(|| table(&QPACK_NAMES, 0x200)),
            CodeSpace::Quic if (0x100..=0x1ff).contains(&self.value) => {
                let alert = (self.value & 0xff) as u8;
                Some(Cow::Owned(match rustls::AlertDescription::from(alert) {
                    rustls::AlertDescription::Unknown(_) => {
                        format!("CRYPTO_ERROR (TLS alert {alert})")
                    }
                    known => format!("CRYPTO_ERROR (TLS alert {alert} {known:?})"),
                }))
            }
            CodeSpace::Quic => table(&QUIC_NAMES, 0),
            CodeSpace::WebSocket => table(&WS_NAMES, 1000),
        }
    }
}

/// The key a failure of `kind` with `code` is counted under in results:
/// `<kind> <NAME> (0x<hex>)`, `<kind> 0x<hex>` for a code without a name, `<kind> other`
/// for `None` (the codes past [`MAX_CODES_PER_KIND`]). WebSocket close codes are decimal, as
/// RFC 6455 writes them: `ws_closed INTERNAL_ERROR (1011)`, `ws_closed 4000`.
pub(crate) fn code_key(kind: ErrorKind, code: Option<ErrorCode>) -> String {
    let kind = kind.name();
    match code {
        None => format!("{kind} other"),
        Some(code) if code.space == CodeSpace::WebSocket => match code.name() {
            Some(name) => format!("{kind} {name} ({})", code.value),
            None => format!("{kind} {}", code.value),
        },
        Some(code) => match code.name() {
            Some(name) => format!("{kind} {name} (0x{:x})", code.value),
            None => format!("{kind} 0x{:x}", code.value),
        },
    }
}

/// Most distinct codes counted per error kind; the rest are counted together as `other`
/// (errors as bounded counts: a peer sending a new code per reset cannot grow the result).
pub(crate) const MAX_CODES_PER_KIND: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kind: ErrorKind, space: CodeSpace, value: u64) -> String {
        code_key(kind, Some(ErrorCode { space, value }))
    }

    #[test]
    fn codes_are_named_from_their_registries() {
        use CodeSpace::{H2, H3, Quic};
        use ErrorKind::{Closed, GoAway, StreamReset, TlsHandshake};
        let cases = [
            (
                key(StreamReset, H2, 0x7),
                "stream_reset REFUSED_STREAM (0x7)",
            ),
            (key(GoAway, H2, 0xb), "goaway ENHANCE_YOUR_CALM (0xb)"),
            (key(GoAway, H2, 0xd), "goaway HTTP_1_1_REQUIRED (0xd)"),
            (key(StreamReset, H2, 0xe), "stream_reset 0xe"),
            (
                key(StreamReset, H3, 0x10c),
                "stream_reset H3_REQUEST_CANCELLED (0x10c)",
            ),
            (key(Closed, H3, 0x100), "closed H3_NO_ERROR (0x100)"),
            (key(Closed, H3, 0x110), "closed H3_VERSION_FALLBACK (0x110)"),
            (
                key(Closed, H3, 0x202),
                "closed QPACK_DECODER_STREAM_ERROR (0x202)",
            ),
            (key(Closed, H3, 0x7), "closed 0x7"),
            (key(Closed, H3, 0x21), "closed 0x21"),
            (key(Closed, Quic, 0xa), "closed PROTOCOL_VIOLATION (0xa)"),
            (key(Closed, Quic, 0x10), "closed NO_VIABLE_PATH (0x10)"),
            (key(Closed, Quic, 0x11), "closed 0x11"),
            (
                key(TlsHandshake, Quic, 0x12a),
                "tls_handshake CRYPTO_ERROR (TLS alert 42 BadCertificate) (0x12a)",
            ),
            (
                key(TlsHandshake, Quic, 0x1ff),
                "tls_handshake CRYPTO_ERROR (TLS alert 255) (0x1ff)",
            ),
            (
                key(Closed, Quic, (1 << 62) - 1),
                "closed 0x3fffffffffffffff",
            ),
            (code_key(StreamReset, None), "stream_reset other"),
            (
                key(ErrorKind::WsClosed, CodeSpace::WebSocket, 1011),
                "ws_closed INTERNAL_ERROR (1011)",
            ),
            (
                key(ErrorKind::WsClosed, CodeSpace::WebSocket, 4000),
                "ws_closed 4000",
            ),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }
}
