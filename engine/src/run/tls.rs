//! TLS over a TCP connection (tokio-rustls), with the plan's shared client configuration, and
//! how TLS failures are counted.

use std::io;
use std::sync::Arc;

use rustls::{AlertDescription, ClientConfig, HandshakeKind};
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

/// Describes a failed handshake for a message: rustls' reason, or the I/O error.
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
        Some(tls) => tls.to_string(),
        None if e.kind() == io::ErrorKind::UnexpectedEof => {
            "the server closed the connection during the handshake".to_string()
        }
        None => e.to_string(),
    }
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
}
