//! A throw-away PKI made by the test with rcgen: a CA, server certificates (for `localhost`
//! and `127.0.0.1`, and one for a wrong name) and a client certificate, written as PEM files
//! into a temporary directory that lives as long as the [`TestPki`].

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// The names the good server certificate is valid for.
pub const SERVER_NAMES: [&str; 2] = ["localhost", "127.0.0.1"];

/// The only name of the wrong-name server certificate.
pub const WRONG_NAME: &str = "wrong.example";

/// PEM files of a test CA and the certificates it issued.
pub struct TestPki {
    dir: tempfile::TempDir,
}

impl TestPki {
    /// Generates the CA and the certificates (ECDSA P-256) and writes them:
    /// `ca.pem`, `server.pem` + `server.key`, `wrong.pem` + `wrong.key`,
    /// `client.pem` + `client.key`, and `other-ca.pem` (a CA that issued nothing here).
    pub fn generate() -> TestPki {
        let dir = tempfile::Builder::new()
            .prefix("loadgate-pki-")
            .tempdir()
            .expect("a temporary directory");
        let (ca_pem, issuer) = ca("loadgate test CA");
        std::fs::write(dir.path().join("ca.pem"), ca_pem).unwrap();
        let (other_pem, _) = ca("loadgate other CA");
        std::fs::write(dir.path().join("other-ca.pem"), other_pem).unwrap();
        for (stem, names, usage) in [
            (
                "server",
                SERVER_NAMES.map(String::from).to_vec(),
                ExtendedKeyUsagePurpose::ServerAuth,
            ),
            (
                "wrong",
                vec![WRONG_NAME.to_string()],
                ExtendedKeyUsagePurpose::ServerAuth,
            ),
            (
                "client",
                vec!["client.loadgate.test".to_string()],
                ExtendedKeyUsagePurpose::ClientAuth,
            ),
        ] {
            let mut params = CertificateParams::new(names).unwrap();
            params
                .distinguished_name
                .push(DnType::CommonName, format!("loadgate test {stem}"));
            params.extended_key_usages = vec![usage];
            let key = KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &issuer).unwrap();
            std::fs::write(dir.path().join(format!("{stem}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.path().join(format!("{stem}.key")), key.serialize_pem()).unwrap();
        }
        TestPki { dir }
    }

    /// The directory that holds the files.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The path of one of the files, e.g. `pki.path("ca.pem")`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The server's rustls configuration for `loadgate serve` with `stem`'s certificate
    /// (`server` or `wrong`), requiring client certificates from the test CA if `mtls`.
    pub fn serve_config(&self, stem: &str, mtls: bool) -> std::sync::Arc<rustls::ServerConfig> {
        let ca = self.path("ca.pem");
        loadgate::serve::tls_config(
            &self.path(&format!("{stem}.pem")),
            &self.path(&format!("{stem}.key")),
            mtls.then_some(ca.as_path()),
        )
        .expect("the test certificates make a server configuration")
    }
}

fn ca(name: &str) -> (String, Issuer<'static, KeyPair>) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    (cert.pem(), Issuer::new(params, key))
}
