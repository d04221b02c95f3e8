//! `loadgate serve` over HTTP/2, through the `h2` crate's client (a client that checks the
//! framing: DATA after a response that can have none is a stream error there, as in curl), on
//! h2c (prior knowledge) and over TLS (ALPN `h2`): `HEAD` gets the head of the `GET` with its
//! `Content-Length` and no DATA, a `204` no body, and `reset=CODE` a `RST_STREAM` with that code.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use h2::Reason;
use h2::client::SendRequest;
use http::{Method, Request, StatusCode};
use loadgate::serve::{ServerHandle, spawn, spawn_with};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{CertificateDer, ServerName};
use support::{IO_TIMEOUT, TestPki};
use tokio::net::TcpStream;

/// A response as the client saw it: status, headers, the DATA bytes (with whether the HEADERS
/// frame ended the stream, i.e. whether any DATA frame could follow).
#[derive(Debug)]
struct H2Response {
    status: StatusCode,
    headers: http::HeaderMap,
    ended_with_headers: bool,
    body: Vec<u8>,
}

impl H2Response {
    fn content_length(&self) -> Option<&str> {
        self.headers
            .get(http::header::CONTENT_LENGTH)
            .map(|v| v.to_str().unwrap())
    }
}

/// One request on `send`; the error is the stream's (a reset by the server, say).
async fn exchange(
    send: &mut SendRequest<Bytes>,
    method: Method,
    path: &str,
) -> Result<H2Response, h2::Error> {
    let request = Request::builder()
        .method(method)
        .uri(format!("https://localhost{path}"))
        .body(())
        .unwrap();
    let (response, _) = send.clone().ready().await?.send_request(request, true)?;
    let response = tokio::time::timeout(IO_TIMEOUT, response)
        .await
        .expect("an answer in time")?;
    let (head, mut body) = response.into_parts();
    let ended_with_headers = body.is_end_stream();
    let mut bytes = Vec::new();
    while let Some(data) = body.data().await {
        let data = data?;
        let _ = body.flow_control().release_capacity(data.len());
        bytes.extend_from_slice(&data);
    }
    Ok(H2Response {
        status: head.status,
        headers: head.headers,
        ended_with_headers,
        body: bytes,
    })
}

/// An HTTP/2 connection over `io`; its driver runs on a task of the current runtime.
async fn h2_over<T>(io: T) -> SendRequest<Bytes>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, connection) = h2::client::handshake(io).await.expect("HTTP/2 handshake");
    tokio::spawn(async move {
        let _ = connection.await;
    });
    send
}

/// An h2c connection (prior knowledge) to `server`.
async fn h2c(server: &ServerHandle) -> SendRequest<Bytes> {
    h2_over(TcpStream::connect(server.addr()).await.unwrap()).await
}

/// An HTTP/2 connection over TLS to `server` (ALPN `h2`, the certificate checked against
/// `pki`'s CA).
async fn h2_tls(server: &ServerHandle, pki: &TestPki) -> SendRequest<Bytes> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(pki.path("ca.pem")).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = TcpStream::connect(server.addr()).await.unwrap();
    let name = ServerName::try_from("localhost").unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .expect("TLS handshake");
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    h2_over(tls).await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// `HEAD` of each path against its `GET` on one connection: the same status and headers (but
/// `date`), so a `Content-Length` equal to the `GET`'s body length, the stream ended by the
/// HEADERS frame (no DATA, no reset). A `204` has no body and no `Content-Length` either way.
async fn head_matches_get(mut send: SendRequest<Bytes>) {
    for path in ["/", "/?size=1000", "/health", "/api/items", "/?size=0"] {
        let get = exchange(&mut send, Method::GET, path).await.unwrap();
        let head = exchange(&mut send, Method::HEAD, path)
            .await
            .unwrap_or_else(|e| panic!("HEAD {path}: {e}"));
        assert_eq!(head.status, get.status, "{path}");
        assert!(head.ended_with_headers, "HEAD {path}: DATA may follow");
        assert!(head.body.is_empty(), "HEAD {path}");
        assert_eq!(head.content_length(), get.content_length(), "{path}");
        // hyper sends no `Content-Length` for an empty body on HTTP/2.
        let length = (!get.body.is_empty()).then(|| get.body.len().to_string());
        assert_eq!(get.content_length(), length.as_deref(), "GET {path}");
        let (mut head_headers, mut get_headers) = (head.headers, get.headers);
        head_headers.remove(http::header::DATE);
        get_headers.remove(http::header::DATE);
        assert_eq!(head_headers, get_headers, "{path}");
    }
    assert_eq!(
        exchange(&mut send, Method::GET, "/?size=1000")
            .await
            .unwrap()
            .body,
        vec![b'x'; 1000]
    );
    for method in [Method::GET, Method::HEAD] {
        let no_content = exchange(&mut send, method.clone(), "/?status=204")
            .await
            .unwrap_or_else(|e| panic!("{method} ?status=204: {e}"));
        assert_eq!(no_content.status, StatusCode::NO_CONTENT);
        assert!(no_content.ended_with_headers && no_content.body.is_empty());
        assert_eq!(no_content.content_length(), None, "{method}");
    }
}

#[test]
fn head_gets_the_get_head_and_no_data_on_h2c() {
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    runtime().block_on(async { head_matches_get(h2c(&server).await).await });
}

#[test]
fn head_gets_the_get_head_and_no_data_over_tls() {
    let pki = TestPki::generate();
    let server = spawn_with(
        "127.0.0.1:0".parse().unwrap(),
        1,
        Some(pki.serve_config("server", false)),
    )
    .unwrap();
    runtime().block_on(async { head_matches_get(h2_tls(&server, &pki).await).await });
}

/// `reset=CODE` resets the stream with that code after the delay, and the connection goes on.
async fn reset_sends_rst_stream(mut send: SendRequest<Bytes>) {
    for (query, code) in [
        ("reset=8", Reason::CANCEL),
        ("reset=0x10c", Reason::from(0x10c)),
        (
            "status=503&size=100&reset=4294967295",
            Reason::from(u32::MAX),
        ),
    ] {
        let error = exchange(&mut send, Method::GET, &format!("/?{query}"))
            .await
            .expect_err(query);
        assert!(error.is_reset() && error.is_remote(), "{query}: {error:?}");
        assert_eq!(error.reason(), Some(code), "{query}");
    }
    let started = Instant::now();
    let error = exchange(&mut send, Method::POST, "/any?delay=200ms&reset=2")
        .await
        .expect_err("reset after the delay");
    assert_eq!(error.reason(), Some(Reason::INTERNAL_ERROR));
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The connection is still usable.
    let after = exchange(&mut send, Method::GET, "/").await.unwrap();
    assert_eq!(
        (after.status, &after.body[..]),
        (StatusCode::OK, &b"ok\n"[..])
    );
    let invalid = exchange(&mut send, Method::GET, "/?reset=CANCEL")
        .await
        .unwrap();
    assert_eq!(invalid.status, StatusCode::BAD_REQUEST);
    assert!(String::from_utf8_lossy(&invalid.body).contains("`reset`"));
}

#[test]
fn reset_sends_rst_stream_with_the_code_on_h2c() {
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    runtime().block_on(async { reset_sends_rst_stream(h2c(&server).await).await });
}

#[test]
fn reset_sends_rst_stream_with_the_code_over_tls() {
    let pki = TestPki::generate();
    let server = spawn_with(
        "127.0.0.1:0".parse().unwrap(),
        1,
        Some(pki.serve_config("server", false)),
    )
    .unwrap();
    runtime().block_on(async { reset_sends_rst_stream(h2_tls(&server, &pki).await).await });
}
