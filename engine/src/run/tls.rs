//! TLS over a TCP connection (tokio-rustls), with the plan's shared client configuration, and
//! how TLS failures are counted.

use std::io;
use std::sync::Arc;

use std::time::{Duration, UNIX_EPOCH};

use rustls::pki_types::UnixTime;
use rustls::{AlertDescription, CertificateError, ClientConfig, HandshakeKind};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

use crate::measure::ErrorKind;
use crate::plan::TlsPlan;
use crate::run::h1::tcp_io_error;

/// A client TLS connection over TCP.
pub(crate) type TlsStream = tokio_rustls::client::TlsStream<TcpStream>;

/// Runs the TLS handshake on `tcp` with `config` (the plan's, or a copy for the check at
/// start) and the target's server name. The error is rustls' (or the I/O error that ended
/// the handshake).
pub(crate) async fn handshake(
    tcp: TcpStream,
    tls: &TlsPlan,
    config: Arc<ClientConfig>,
) -> io::Result<TlsStream> {
    TlsConnector::from(config)
        .connect(tls.server_name.clone(), tcp)
        .await
}

/// Whether the handshake resumed an earlier session.
pub(crate) fn resumed(stream: &TlsStream) -> bool {
    stream.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed)
}

/// Whether the server picked HTTP/2 by ALPN.
pub(crate) fn alpn_is_h2(stream: &TlsStream) -> bool {
    stream.get_ref().1.alpn_protocol() == Some(b"h2")
}

/// The negotiated TLS version (`1.2`, `1.3`) and cipher suite (`TLS13_AES_128_GCM_SHA256`).
pub(crate) fn negotiated(stream: &TlsStream) -> (String, String) {
    let connection = stream.get_ref().1;
    let version = match connection.protocol_version() {
        Some(rustls::ProtocolVersion::TLSv1_3) => "1.3".to_string(),
        Some(rustls::ProtocolVersion::TLSv1_2) => "1.2".to_string(),
        Some(other) => format!("{other:?}"),
        None => "unknown".to_string(),
    };
    let cipher = connection
        .negotiated_cipher_suite()
        .map_or_else(|| "unknown".to_string(), |s| format!("{:?}", s.suite()));
    (version, cipher)
}

/// Classifies a read or write error on an established TLS connection. An alert from the
/// server, or a certificate problem, is a handshake failure: it is how a TLS 1.3 server
/// rejects the client certificate, after the client's side of the handshake is done. Other
/// TLS errors (bad records) are protocol errors; the rest are TCP errors.
pub(crate) fn io_error(e: io::Error) -> ErrorKind {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::AlertReceived(AlertDescription::CloseNotify)) => ErrorKind::Closed,
        Some(
            rustls::Error::AlertReceived(_)
            | rustls::Error::InvalidCertificate(_)
            | rustls::Error::NoCertificatesPresented
            | rustls::Error::PeerIncompatible(_)
            | rustls::Error::HandshakeNotComplete,
        ) => ErrorKind::TlsHandshake,
        Some(_) => ErrorKind::Malformed,
        None => tcp_io_error(e),
    }
}

/// Describes a failed handshake for a message: rustls' reason (a certificate refused, in a
/// sentence with what to do and rustls' own name for it), or the I/O error.
pub(crate) fn describe(e: &io::Error) -> String {
    match e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::AlertReceived(AlertDescription::NoApplicationProtocol)) => {
            "the server accepts none of the HTTP versions offered by ALPN (alert \
             NoApplicationProtocol): check `protocol`"
                .to_string()
        }
        Some(rustls::Error::InvalidCertificate(cert)) => certificate(cert),
        Some(tls) => tls.to_string(),
        None if e.kind() == io::ErrorKind::UnexpectedEof => {
            "the server closed the connection during the handshake".to_string()
        }
        None => e.to_string(),
    }
}

/// Why the server's certificate was refused, in a sentence that says what to do, ending with
/// rustls' (or webpki's) name for it, e.g. `(rustls: UnknownIssuer)`.
fn certificate(e: &CertificateError) -> String {
    /// A UNIX time as an RFC 3339 date.
    fn date(t: UnixTime) -> String {
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(t.as_secs())).to_string()
    }
    let (sentence, name): (String, &str) = match e {
        CertificateError::UnknownIssuer => (
            "the certificate is not issued by a trusted CA: give its CA with `ca_file` (or \
             `roots: platform` for a CA installed on this machine)"
                .into(),
            "UnknownIssuer",
        ),
        CertificateError::NotValidForName => (
            "the certificate is not valid for the name the server was reached by: set \
             `server_name` to a name it is valid for"
                .into(),
            "NotValidForName",
        ),
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => (
            format!(
                "the certificate is not valid for name {:?}; it is valid for {}: reach the \
                 server by one of those names, or set `server_name`",
                expected.to_str(),
                match presented.as_slice() {
                    [] => "no name (no subjectAltName)".to_string(),
                    names => names.join(", "),
                }
            ),
            "NotValidForName",
        ),
        CertificateError::Expired => ("the certificate has expired".into(), "Expired"),
        CertificateError::ExpiredContext { not_after, .. } => (
            format!("the certificate expired on {}", date(*not_after)),
            "Expired",
        ),
        CertificateError::NotValidYet => (
            "the certificate is not valid yet: check this machine's clock".into(),
            "NotValidYet",
        ),
        CertificateError::NotValidYetContext { not_before, .. } => (
            format!(
                "the certificate is not valid before {}: check this machine's clock",
                date(*not_before)
            ),
            "NotValidYet",
        ),
        CertificateError::Revoked => ("the certificate has been revoked".into(), "Revoked"),
        CertificateError::BadEncoding => (
            "the certificate is not correctly encoded (DER)".into(),
            "BadEncoding",
        ),
        CertificateError::BadSignature => (
            "the certificate is not correctly signed by its issuer's key".into(),
            "BadSignature",
        ),
        CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => (
            "the certificate is not for server authentication (its extended key usage): \
             the server must present a certificate issued for a TLS server"
                .into(),
            "InvalidPurpose",
        ),
        CertificateError::UnhandledCriticalExtension => (
            "the certificate has a critical extension that rustls does not know".into(),
            "UnhandledCriticalExtension",
        ),
        CertificateError::Other(other) => return webpki(&other.0.to_string()),
        other => {
            return format!("the certificate was refused: {other}");
        }
    };
    format!("{sentence} (rustls: {name})")
}

/// A webpki error that rustls passes on as `Other`, by its name (webpki's `Display` is its
/// variant's name): a sentence for the ones a misconfigured server causes.
fn webpki(name: &str) -> String {
    let sentence = match name {
        "CaUsedAsEndEntity" => {
            "the certificate is a CA certificate used as a server certificate: the server must \
             present a certificate issued by that CA for its name, not the CA's own"
        }
        "EndEntityUsedAsCa" => {
            "a server certificate in the chain signed another certificate, as only a CA may: \
             the server's chain is wrong"
        }
        "CertDistrusted" => "the certificate's CA is distrusted for server certificates",
        "UnsupportedCertVersion" => "the certificate is not an X.509 version 3 certificate",
        "UnsupportedCriticalExtension" => {
            "the certificate has a critical extension that rustls does not know"
        }
        "PathLenConstraintViolated" => {
            "the certificate chain is longer than a CA in it allows (pathLenConstraint)"
        }
        "NameConstraintViolation" => {
            "the certificate's names are outside what its CA may issue (name constraints)"
        }
        "MaximumPathDepthExceeded" => "the certificate chain is too long",
        "SignatureAlgorithmMismatch" => {
            "the certificate's signature algorithm does not match its issuer's key"
        }
        _ => "the certificate was refused",
    };
    format!("{sentence} (rustls: {name})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_errors_are_classified() {
        let wrap = |e: rustls::Error| io::Error::new(io::ErrorKind::InvalidData, e);
        assert_eq!(
            io_error(wrap(rustls::Error::AlertReceived(
                AlertDescription::CertificateRequired
            ))),
            ErrorKind::TlsHandshake
        );
        assert_eq!(
            io_error(wrap(rustls::Error::InvalidCertificate(
                rustls::CertificateError::NotValidForName
            ))),
            ErrorKind::TlsHandshake
        );
        assert_eq!(
            io_error(wrap(rustls::Error::DecryptError)),
            ErrorKind::Malformed
        );
        assert_eq!(
            io_error(wrap(rustls::Error::AlertReceived(
                AlertDescription::CloseNotify
            ))),
            ErrorKind::Closed
        );
        assert_eq!(
            io_error(io::Error::from(io::ErrorKind::ConnectionReset)),
            ErrorKind::Reset
        );
        assert!(
            describe(&wrap(rustls::Error::InvalidCertificate(
                rustls::CertificateError::UnknownIssuer
            )))
            .contains("UnknownIssuer")
        );
    }

    #[test]
    fn certificate_errors_are_sentences() {
        let describe_cert = |e: CertificateError| {
            describe(&io::Error::new(
                io::ErrorKind::InvalidData,
                rustls::Error::InvalidCertificate(e),
            ))
        };
        let ca_as_leaf = describe_cert(CertificateError::Other(rustls::OtherError(Arc::new(
            io::Error::other("CaUsedAsEndEntity"),
        ))));
        assert!(
            ca_as_leaf
                .starts_with("the certificate is a CA certificate used as a server certificate: "),
            "{ca_as_leaf}"
        );
        assert!(!ca_as_leaf.contains("Other("), "{ca_as_leaf}");
        let expired = describe_cert(CertificateError::ExpiredContext {
            time: UnixTime::since_unix_epoch(Duration::from_secs(1_800_000_000)),
            not_after: UnixTime::since_unix_epoch(Duration::from_secs(1_700_000_000)),
        });
        assert_eq!(
            expired,
            "the certificate expired on 2023-11-14T22:13:20Z (rustls: Expired)"
        );
        let name = describe_cert(CertificateError::NotValidForNameContext {
            expected: rustls::pki_types::ServerName::try_from("api.test").unwrap(),
            presented: vec!["a.test".into(), "b.test".into()],
        });
        assert!(
            name.starts_with(
                "the certificate is not valid for name \"api.test\"; it is valid for a.test, b.test: "
            ),
            "{name}"
        );
        let unknown = describe_cert(CertificateError::Other(rustls::OtherError(Arc::new(
            io::Error::other("SomethingNew"),
        ))));
        assert_eq!(
            unknown,
            "the certificate was refused (rustls: SomethingNew)"
        );
    }
}
