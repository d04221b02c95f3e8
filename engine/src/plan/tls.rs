//! TLS client configurations, built once in the plan and shared (`Arc`) by every connection
//! of the targets that use them, so that session resumption works across reconnects.
//!
//! rustls with the *ring* provider. Roots are Mozilla's (`webpki-roots`), the platform's
//! (`rustls-native-certs`), or none, plus an optional CA bundle; client certificates for
//! mTLS; an insecure mode that accepts any certificate (reports say so); a minimum version.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, Resumption};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::{CipherSuite, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use crate::files::{MAX_PEM_BYTES, bounded_read};
use crate::spec::{Protocol, TlsRoots, TlsVersion};

/// Sessions remembered per configuration for resumption (rustls' in-memory cache).
pub(crate) const SESSION_CACHE_SIZE: usize = 1024;

/// TLS settings of one target, every default applied, files resolved against the spec's folder.
/// Equal settings share one [`ClientConfig`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    /// The built-in roots trusted besides `ca_file`: Mozilla's, the platform's, or none.
    pub(crate) roots: TlsRoots,
    /// A PEM bundle of CAs to trust.
    pub(crate) ca_file: Option<PathBuf>,
    /// Certificate chain and private key files for mTLS.
    pub(crate) client_auth: Option<(PathBuf, PathBuf)>,
    /// Accept any server certificate (reports say so).
    pub(crate) insecure_skip_verify: bool,
    /// The lowest TLS version offered: 1.2 or 1.3.
    pub(crate) min_version: TlsVersion,
    /// The cipher suites offered, most preferred first; `None`: all of the *ring* provider's.
    pub(crate) ciphers: Option<Vec<CipherSuite>>,
    /// Resume sessions on reconnect.
    pub(crate) resumption: bool,
    /// Which ALPN protocols are offered: `h2`, `http/1.1`, or both for `auto`.
    pub(crate) protocol: Protocol,
}

/// A TLS configuration problem, naming the setting (`ca_file`, `client_key`, ...) it is about.
/// Messages do not quote a file's path (it may come from a `${VAR}`): the caller names the file
/// as the spec writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsError {
    /// The `tls` field the problem is about.
    pub(crate) field: &'static str,
    /// What is wrong, and what to do about it.
    pub(crate) message: String,
}

impl TlsError {
    fn new(field: &'static str, message: impl Into<String>) -> TlsError {
        TlsError {
            field,
            message: message.into(),
        }
    }
}

/// The ALPN protocol ids offered for `protocol`, most preferred first.
pub(crate) fn alpn(protocol: Protocol) -> Vec<Vec<u8>> {
    match protocol {
        Protocol::H1 | Protocol::Ws => vec![b"http/1.1".to_vec()],
        Protocol::H2 | Protocol::Grpc => vec![b"h2".to_vec()],
        Protocol::H3 => vec![b"h3".to_vec()],
        Protocol::Auto => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
    }
}

/// The crypto provider: *ring*.
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The *ring* provider's cipher suites named `names` (rustls' names, which are IANA's:
/// `TLS13_AES_128_GCM_SHA256`), in that order. Errors: the index of a name that is not one
/// (or is given twice), and a message listing the names there are.
pub(crate) fn cipher_suites(names: &[String]) -> Result<Vec<CipherSuite>, (usize, String)> {
    let all = rustls::crypto::ring::ALL_CIPHER_SUITES;
    let mut suites = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let Some(suite) = all
            .iter()
            .map(|s| s.suite())
            .find(|s| format!("{s:?}") == *name)
        else {
            let known: Vec<String> = all.iter().map(|s| format!("{:?}", s.suite())).collect();
            return Err((
                i,
                format!(
                    "`{name}` is not a cipher suite loadgate offers; the suites are: {}",
                    known.join(", ")
                ),
            ));
        };
        if suites.contains(&suite) {
            return Err((i, format!("`{name}` is given twice")));
        }
        suites.push(suite);
    }
    Ok(suites)
}

/// Builds the client configuration for `settings`. Errors name the setting at fault: a file
/// that cannot be read or holds no certificate or key, a key that does not match its
/// certificate, an empty set of roots.
pub(crate) fn client_config(settings: &TlsSettings) -> Result<ClientConfig, TlsError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(wanted) = &settings.ciphers {
        let offered = std::mem::take(&mut provider.cipher_suites);
        provider.cipher_suites = wanted
            .iter()
            .filter_map(|w| offered.iter().find(|s| s.suite() == *w).copied())
            .collect();
    }
    let provider = Arc::new(provider);
    // QUIC is TLS 1.3 only (RFC 9001 §4.2), whatever the minimum asked.
    let versions: &[&rustls::SupportedProtocolVersion] = match settings.min_version {
        _ if settings.protocol == Protocol::H3 => &[&rustls::version::TLS13],
        TlsVersion::V1_2 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::V1_3 => &[&rustls::version::TLS13],
    };
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .map_err(|e| match settings.ciphers {
            // TLS 1.2 suites only, for HTTP/3 (QUIC).
            Some(_) if settings.protocol == Protocol::H3 => TlsError::new(
                "ciphers",
                "leave no TLS 1.3 cipher suite: HTTP/3 runs over QUIC, which is TLS 1.3 only",
            ),
            // TLS 1.2 suites only, with `min_version: "1.3"`.
            Some(_) => TlsError::new(
                "ciphers",
                format!("leave no cipher suite for the TLS versions offered: {e}"),
            ),
            None => TlsError::new("min_version", e.to_string()),
        })?;
    let builder = if settings.insecure_skip_verify {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate(
                provider.signature_verification_algorithms,
            )))
    } else {
        builder.with_root_certificates(root_store(settings)?)
    };
    let mut config = match &settings.client_auth {
        None => builder.with_no_client_auth(),
        Some((cert_file, key_file)) => {
            let chain = read_certificates("client_cert", cert_file)?;
            let key = read_private_key(key_file)
                .map_err(|e| TlsError::new("client_key", format!("cannot be read: {e}")))?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                TlsError::new("client_key", format!("does not go with `client_cert`: {e}"))
            })?
        }
    };
    config.alpn_protocols = alpn(settings.protocol);
    // 0-RTT: a resumed QUIC connection sends its first request with the handshake.
    config.enable_early_data = settings.protocol == Protocol::H3;
    config.resumption = if settings.resumption {
        Resumption::in_memory_sessions(SESSION_CACHE_SIZE)
    } else {
        Resumption::disabled()
    };
    Ok(config)
}

/// The QUIC client configuration over `config` (built by [`client_config`] for
/// `protocol: h3`: TLS 1.3, ALPN `h3`, early data enabled), sharing its session cache.
///
/// Errors: `config` offers no TLS 1.3 cipher suite QUIC can use (`ciphers`).
pub(crate) fn quic_client_config(
    config: &Arc<ClientConfig>,
) -> Result<quinn::ClientConfig, TlsError> {
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(config.clone()).map_err(|e| {
            TlsError::new(
                "ciphers",
                format!(
                    "leave no cipher suite QUIC can use: it needs TLS13_AES_128_GCM_SHA256 for \
                     its first packets (RFC 9001 §5.2): {e}"
                ),
            )
        })?;
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    config.transport_config(Arc::new(quic_transport()));
    Ok(config)
}

/// Receive window of each QUIC stream, bytes: as HTTP/2's per-stream window (4 MiB,
/// `run/h2.rs`), so that a stream is not held back by flow control on loopback or a fast LAN.
pub(crate) const QUIC_STREAM_WINDOW_BYTES: u32 = 4 << 20;
/// Receive window of each QUIC connection, bytes: as HTTP/2's connection window (64 MiB).
pub(crate) const QUIC_CONNECTION_WINDOW_BYTES: u32 = 64 << 20;
/// A QUIC connection with no packet from the server for this long is closed (RFC 9000
/// §10.1) and its requests counted as `idle_timeout`: quinn's default, 30 s.
pub(crate) const QUIC_IDLE_TIMEOUT_MS: u32 = 30_000;

/// The client's QUIC transport parameters: the receive windows above, the idle timeout, no
/// bidirectional streams opened by the server (HTTP/3 servers open none, RFC 9114 §6.1), no
/// keep-alive (an idle connection is the server's to close).
fn quic_transport() -> quinn::TransportConfig {
    let mut transport = quinn::TransportConfig::default();
    transport
        .stream_receive_window(quinn::VarInt::from_u32(QUIC_STREAM_WINDOW_BYTES))
        .receive_window(quinn::VarInt::from_u32(QUIC_CONNECTION_WINDOW_BYTES))
        .max_concurrent_bidi_streams(quinn::VarInt::from_u32(0))
        .max_idle_timeout(Some(quinn::IdleTimeout::from(quinn::VarInt::from_u32(
            QUIC_IDLE_TIMEOUT_MS,
        ))))
        .keep_alive_interval(None);
    transport
}

/// A copy of `config` that records whether the server asked for a client certificate: the
/// check at start uses it to wait for a TLS 1.3 server's verdict on that certificate, which
/// arrives only after the client's side of the handshake is done. Sessions are shared with
/// `config`.
pub(crate) fn recording_client_auth(
    config: &ClientConfig,
) -> (Arc<ClientConfig>, Arc<std::sync::atomic::AtomicBool>) {
    let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut copy = config.clone();
    copy.client_auth_cert_resolver = Arc::new(RecordingResolver {
        inner: config.client_auth_cert_resolver.clone(),
        asked: asked.clone(),
    });
    (Arc::new(copy), asked)
}

#[derive(Debug)]
struct RecordingResolver {
    inner: Arc<dyn ResolvesClientCert>,
    asked: Arc<std::sync::atomic::AtomicBool>,
}

impl ResolvesClientCert for RecordingResolver {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        self.asked.store(true, std::sync::atomic::Ordering::Relaxed);
        self.inner.resolve(root_hint_subjects, sigschemes)
    }

    fn has_certs(&self) -> bool {
        self.inner.has_certs()
    }
}

/// The server name for SNI and verification: a DNS name or an IP address. The error does not
/// quote `name` (it may come from a `${VAR}`): the caller says which name it is.
pub(crate) fn server_name(name: &str) -> Result<ServerName<'static>, TlsError> {
    ServerName::try_from(name.to_string()).map_err(|e| TlsError::new("server_name", e.to_string()))
}

/// How a message names a server name or host: as written in the spec (`shown`), or, when it
/// comes from a `${VAR}` and the spec does not write it, as "the URL's host".
pub(crate) fn name_in_message(shown: Option<&str>) -> String {
    shown.map_or_else(|| "the URL's host".to_string(), |name| format!("`{name}`"))
}

fn root_store(settings: &TlsSettings) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    match settings.roots {
        TlsRoots::Webpki => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        TlsRoots::Platform => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _ignored) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map_or(String::new(), |e| format!(": {e}"));
                return Err(TlsError::new(
                    "roots",
                    format!("no usable certificates in the platform's store{why}"),
                ));
            }
        }
        TlsRoots::None => {}
    }
    if let Some(file) = &settings.ca_file {
        for cert in read_certificates("ca_file", file)? {
            store.add(cert).map_err(|e| {
                TlsError::new("ca_file", format!("holds an unusable CA certificate: {e}"))
            })?;
        }
    }
    if store.is_empty() {
        return Err(TlsError::new(
            "roots",
            "no trusted roots: `roots: none` needs a `ca_file`",
        ));
    }
    Ok(store)
}

fn read_certificates(
    field: &'static str,
    file: &Path,
) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs =
        pem_certificates(file).map_err(|e| TlsError::new(field, format!("cannot be read: {e}")))?;
    if certs.is_empty() {
        return Err(TlsError::new(field, "holds no PEM certificate"));
    }
    Ok(certs)
}

/// The certificates of the PEM file `file` (at most [`MAX_PEM_BYTES`] of it, read by
/// `crate::files`), for the client here and for `loadgate serve`. Errors: why the file cannot
/// be read (a message that does not name it), or why it is not PEM.
pub(crate) fn pem_certificates(file: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes =
        bounded_read(file, MAX_PEM_BYTES, "the PEM file").map_err(|e| e.problem.to_string())?;
    CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not PEM certificates: {e}"))
}

/// The private key of the PEM file `file` (PKCS#8, PKCS#1 or SEC1; at most
/// [`MAX_PEM_BYTES`] of it, read by `crate::files`). Errors as [`pem_certificates`]'s.
pub(crate) fn read_private_key(file: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let bytes =
        bounded_read(file, MAX_PEM_BYTES, "the PEM file").map_err(|e| e.problem.to_string())?;
    PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| format!("not a PEM private key: {e}"))
}

/// `insecure_skip_verify`: accepts any certificate for any name. Handshake signatures are
/// still checked, so the peer must hold the key of the certificate it sent.
#[derive(Debug)]
struct AcceptAnyCertificate(WebPkiSupportedAlgorithms);

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> TlsSettings {
        TlsSettings {
            roots: TlsRoots::Webpki,
            ca_file: None,
            client_auth: None,
            insecure_skip_verify: false,
            min_version: TlsVersion::V1_2,
            ciphers: None,
            resumption: true,
            protocol: Protocol::Auto,
        }
    }

    #[test]
    fn cipher_suites_by_name() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            cipher_suites(&names(&[
                "TLS13_CHACHA20_POLY1305_SHA256",
                "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
            ])),
            Ok(vec![
                CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
                CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
            ])
        );
        let (i, message) =
            cipher_suites(&names(&["TLS13_AES_128_GCM_SHA256", "RC4-MD5"])).unwrap_err();
        assert_eq!(i, 1);
        assert!(
            message.contains("`RC4-MD5` is not a cipher suite")
                && message.contains("TLS13_AES_256_GCM_SHA384, TLS13_AES_128_GCM_SHA256"),
            "{message}"
        );
        let (i, message) = cipher_suites(&names(&[
            "TLS13_AES_128_GCM_SHA256",
            "TLS13_AES_128_GCM_SHA256",
        ]))
        .unwrap_err();
        assert_eq!((i, message.contains("twice")), (1, true), "{message}");
        // TLS 1.2 suites alone leave nothing for TLS 1.3.
        let e = client_config(&TlsSettings {
            ciphers: Some(vec![CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]),
            min_version: TlsVersion::V1_3,
            ..settings()
        })
        .unwrap_err();
        assert_eq!(e.field, "ciphers", "{}", e.message);
    }

    #[test]
    fn webpki_roots_and_alpn() {
        let config = client_config(&settings()).unwrap();
        assert_eq!(
            config.alpn_protocols,
            [b"h2".to_vec(), b"http/1.1".to_vec()]
        );
        let h1 = client_config(&TlsSettings {
            protocol: Protocol::H1,
            ..settings()
        })
        .unwrap();
        assert_eq!(h1.alpn_protocols, [b"http/1.1".to_vec()]);
    }

    #[test]
    fn missing_and_empty_files_name_the_field() {
        let dir = tempfile::tempdir().unwrap();
        let missing = TlsSettings {
            ca_file: Some(dir.path().join("nope.pem")),
            ..settings()
        };
        let e = client_config(&missing).unwrap_err();
        assert_eq!(e.field, "ca_file");
        assert!(e.message.contains("cannot be read"), "{}", e.message);

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not pem\n").unwrap();
        let e = client_config(&TlsSettings {
            ca_file: Some(empty),
            ..settings()
        })
        .unwrap_err();
        assert!(e.message.contains("no PEM certificate"), "{}", e.message);

        let e = client_config(&TlsSettings {
            roots: TlsRoots::None,
            ..settings()
        })
        .unwrap_err();
        assert_eq!(e.field, "roots");
    }

    #[test]
    fn server_names() {
        assert!(server_name("api.example.com").is_ok());
        assert!(matches!(
            server_name("127.0.0.1").unwrap(),
            ServerName::IpAddress(_)
        ));
        assert_eq!(server_name("bad name!").unwrap_err().field, "server_name");
    }
}
