//! `loadgate serve --h3` loaded over HTTP/3 by a client nobody here wrote (aioquic, from PyPI,
//! through the smallest client on its API: tests/h3/client.py): the same answers to the same
//! query parameters as HTTP/1.1, `Alt-Svc` on the TCP side, a bounded shutdown. And the aioquic
//! HTTP/3 server (tests/h3/server.py) that the client tests of `protocol: h3` load, checked
//! to start and answer. Certificates come from a CA the test makes (rcgen).

use crate::support;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use loadgate::serve::{SHUTDOWN_GRACE, spawn, spawn_h3};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject as _;
use support::{
    AIOQUIC_START_TIMEOUT as START_TIMEOUT, HttpConn, IO_TIMEOUT, Killed, TestPki, aioquic_server,
    pypi_python,
};

/// A script of tests/h3/.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/h3")
        .join(name)
}

/// Starts `command` with its stdout piped and returns it with its first `lines` lines, read
/// within [`START_TIMEOUT`].
fn start(mut command: Command, lines: usize) -> (Killed, Vec<String>) {
    let mut child = Killed(command.stdout(Stdio::piped()).spawn().expect("start"));
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        for _ in 0..lines {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            let _ = tx.send(line.trim_end().to_string());
        }
    });
    let read = (0..lines)
        .map(|_| {
            rx.recv_timeout(START_TIMEOUT)
                .expect("a listening line in time")
        })
        .collect();
    (child, read)
}

/// One response as client.py reports it.
#[derive(Debug, serde::Deserialize)]
struct H3Response {
    status: u16,
    headers: BTreeMap<String, String>,
    body_len: usize,
}

/// Runs client.py: `urls` on one connection, the certificate checked against `pki`'s CA.
fn h3_client(pki: &TestPki, method: &str, urls: &[String]) -> Output {
    Command::new(pypi_python())
        .arg(script("client.py"))
        .arg("--ca")
        .arg(pki.path("ca.pem"))
        .args(["--method", method, "--timeout", "10"])
        .args(urls)
        .stdin(Stdio::null())
        .output()
        .expect("client.py runs")
}

/// The responses client.py printed; panics with its stderr when it failed.
fn h3_responses(output: &Output) -> Vec<H3Response> {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "client.py failed: {stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"))
}

/// `GET path` over TLS and HTTP/1.1 (rustls, the certificate checked against `pki`'s CA),
/// `Connection: close`: the response head, names lower-cased.
fn tls_h1_head(pki: &TestPki, port: u16, path: &str) -> String {
    let mut roots = rustls::RootCertStore::empty();
    let ca = CertificateDer::from_pem_file(pki.path("ca.pem")).unwrap();
    roots.add(ca).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = "localhost".try_into().unwrap();
    let connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    let mut tls = rustls::StreamOwned::new(connection, tcp);
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    let _ = tls.read_to_end(&mut response); // the server closes without close_notify at times
    let text = String::from_utf8_lossy(&response).to_ascii_lowercase();
    text.split("\r\n\r\n").next().unwrap().to_string()
}

/// Headers that belong to the HTTP/1.1 connection, not to the response.
const HOP_BY_HOP: [&str; 3] = ["connection", "transfer-encoding", "date"];

#[test]
fn h3_answers_the_query_parameters_as_http1_does() {
    let pki = TestPki::generate();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_loadgate"));
    serve
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", "2", "--h3"])
        .arg("--tls-cert")
        .arg(pki.path("server.pem"))
        .arg("--tls-key")
        .arg(pki.path("server.key"))
        .stderr(Stdio::piped());
    let (mut serve, lines) = start(serve, 2);
    let base = lines[0]
        .strip_prefix("loadgate serve: listening on ")
        .unwrap_or_else(|| panic!("{lines:?}"))
        .to_string();
    let port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    assert_eq!(
        lines[1],
        format!("loadgate serve: HTTP/3 on udp://127.0.0.1:{port}")
    );

    let paths = [
        "/any/path?size=100000",
        "/?status=503&header=Retry-After:1&close=1",
        "/?delay=300ms&header=X-Twice:a&header=X-Twice:b",
        "/?sise=1",
        "/?events=3&interval=5ms",
        "/api/items",
        "/health",
    ];
    let urls: Vec<String> = paths.iter().map(|path| format!("{base}{path}")).collect();
    let started = Instant::now();
    let output = h3_client(&pki, "GET", &urls);
    let took = started.elapsed();
    let h3 = h3_responses(&output);
    assert_eq!(h3.len(), paths.len());
    assert!(
        took >= Duration::from_millis(300),
        "delay=300ms answered in {took:?}"
    );

    // The same paths over HTTP/1.1 on a cleartext server: the same answers.
    let h1_server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    for (path, h3) in paths.iter().zip(&h3) {
        let h1 = HttpConn::connect(h1_server.addr())
            .unwrap()
            .get(path)
            .unwrap();
        assert_eq!(h3.status, h1.status, "{path}");
        assert_eq!(h3.body_len, h1.body.len(), "{path}");
        let mut h1_headers: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in h1
            .headers
            .iter()
            .filter(|(n, _)| !HOP_BY_HOP.contains(&&**n))
        {
            // HTTP/3 responses carry repeated fields as separate lines; client.py keeps the last.
            h1_headers.insert(name.clone(), value.clone());
        }
        let mut h3_headers = h3.headers.clone();
        assert!(h3_headers.remove("date").is_some(), "{path}: no Date");
        assert_eq!(h3_headers, h1_headers, "{path}");
    }
    assert_eq!(h3[0].status, 200);
    assert_eq!(h3[0].body_len, 100_000);
    assert_eq!(h3[0].headers["content-length"], "100000");
    assert_eq!(h3[1].status, 503);
    assert_eq!(h3[1].headers["retry-after"], "1");
    assert!(!h3[1].headers.contains_key("connection"), "{:?}", h3[1]);
    assert_eq!(h3[3].status, 400);
    assert_eq!(h3[4].body_len, 3 * "data: event\n\n".len());

    // The TCP side advertises HTTP/3 on the same port.
    let head = tls_h1_head(&pki, port, "/?size=10");
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(
        head.contains(&format!("\r\nalt-svc: h3=\":{port}\"")),
        "{head}"
    );

    // The UDP socket's buffers: the advice on stderr (not stdout) exactly when the system
    // capped them below the 8 MiB asked (Linux: net.core.rmem_max / wmem_max, in the units of
    // the size set, not of the doubled size read back).
    let mut stderr = serve.0.stderr.take().unwrap();
    serve.0.kill().unwrap();
    let mut printed = String::new();
    stderr.read_to_string(&mut printed).unwrap();
    let limit = |name: &str| -> Option<u64> {
        let path = format!("/proc/sys/net/core/{name}");
        std::fs::read_to_string(path).ok()?.trim().parse().ok()
    };
    if let (Some(rmem), Some(wmem)) = (limit("rmem_max"), limit("wmem_max")) {
        let limited = rmem.min(wmem) < 8 << 20;
        assert_eq!(
            printed.contains("loadgate serve: UDP socket buffers limited to"),
            limited,
            "rmem_max {rmem}, wmem_max {wmem}: {printed}"
        );
    }
}

#[test]
fn shutdown_ends_http3_connections_in_bounded_time() {
    let pki = TestPki::generate();
    let server = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .unwrap();
    let url = |path: &str| format!("https://127.0.0.1:{}{path}", server.addr().port());
    let h3 = h3_responses(&h3_client(&pki, "GET", &[url("/?size=10")]));
    assert_eq!((h3[0].status, h3[0].body_len), (200, 10));

    // A request that outlives the grace period is cut off, and the shutdown ends all the same.
    let mut client = Command::new(pypi_python())
        .arg(script("client.py"))
        .arg("--ca")
        .arg(pki.path("ca.pem"))
        .args([url("/?delay=20ms"), url("/?delay=5s")])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map(Killed)
        .unwrap();
    let stderr = client.0.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let _ = tx.send(line.unwrap_or_default());
        }
    });
    let connected = rx.recv_timeout(START_TIMEOUT).expect("client.py connects");
    assert_eq!(connected, "client.py: connected");
    std::thread::sleep(Duration::from_millis(200)); // the requests are in flight
    let started = Instant::now();
    server.shutdown();
    let took = started.elapsed();
    // The request in flight had its grace; then the close, the runtime's shutdown, and slack.
    assert!(took >= SHUTDOWN_GRACE, "shutdown took {took:?}");
    assert!(took < SHUTDOWN_GRACE * 4, "shutdown took {took:?}");
    let status = wait_exit(&mut client.0);
    assert!(!status.success(), "the 5 s request was answered");
    let stderr: Vec<String> = rx.iter().collect(); // to the end of its stderr
    assert!(
        stderr.iter().any(|line| line.contains("connection closed")),
        "{stderr:?}"
    );
}

/// Waits for `child` (client.py, whose own limit is 10 s) to exit, at most [`START_TIMEOUT`]
/// and 2 s; panics past that.
fn wait_exit(child: &mut Child) -> std::process::ExitStatus {
    let deadline = Instant::now() + START_TIMEOUT + Duration::from_secs(2);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "client.py did not end");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What a request over HTTP/3 got, as quinn and h3's client half see it: the response's status,
/// headers and body length, or the stream's error (a reset by the server, say).
type H3Outcome = Result<(http::StatusCode, http::HeaderMap, usize), h3::error::StreamError>;

/// Sends `requests` (method, path) one after the other on one HTTP/3 connection to
/// `127.0.0.1:port` by quinn and h3 (the client halves of the crates the server uses; aioquic's
/// client reports neither stream resets nor HEAD answers with a `Content-Length`), the
/// certificate checked against `pki`'s CA, and returns what each got.
fn h3_rust_client(pki: &TestPki, port: u16, requests: &[(&str, &str)]) -> Vec<H3Outcome> {
    use bytes::Buf as _;
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_file(pki.path("ca.pem")).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h3".to_vec()];
    let quic = quinn::crypto::rustls::QuicClientConfig::try_from(tls).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let exchanges = async {
        let mut endpoint = quinn::Endpoint::client("127.0.0.1:0".parse().unwrap()).unwrap();
        endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(quic)));
        let server = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let connection = endpoint.connect(server, "localhost").unwrap().await;
        let connection = connection.expect("a QUIC connection");
        let (mut driver, mut send_request) = h3::client::new(h3_quinn::Connection::new(connection))
            .await
            .expect("an HTTP/3 connection");
        tokio::spawn(async move { std::future::poll_fn(|cx| driver.poll_close(cx)).await });
        let mut outcomes = Vec::new();
        for (method, path) in requests {
            let request = http::Request::builder()
                .method(*method)
                .uri(format!("https://localhost:{port}{path}"))
                .body(())
                .unwrap();
            let outcome: H3Outcome = async {
                let mut stream = send_request.send_request(request).await?;
                stream.finish().await?;
                let response = stream.recv_response().await?;
                let mut body_len = 0;
                while let Some(data) = stream.recv_data().await? {
                    body_len += data.remaining();
                }
                let (head, ()) = response.into_parts();
                Ok((head.status, head.headers, body_len))
            }
            .await;
            outcomes.push(outcome);
        }
        outcomes
    };
    runtime
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), exchanges).await })
        .expect("the HTTP/3 requests end in time")
}

/// The code of the stream reset `outcome` is, or a panic naming what it was instead.
fn reset_code(outcome: &H3Outcome) -> u64 {
    match outcome {
        Err(h3::error::StreamError::RemoteTerminate { code, .. }) => code.value(),
        other => panic!("not a stream reset: {other:?}"),
    }
}

#[test]
fn h3_reset_resets_the_stream_with_the_code_and_head_has_no_body() {
    let pki = TestPki::generate();
    let server = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .unwrap();
    let started = Instant::now();
    let outcomes = h3_rust_client(
        &pki,
        server.addr().port(),
        &[
            ("GET", "/?delay=200ms&reset=0x10c"),
            ("GET", "/?status=503&size=100&reset=8"),
            ("POST", "/any/path?reset=4294967295"),
            ("GET", "/"),
            ("HEAD", "/?size=1000"),
            ("HEAD", "/"),
            ("HEAD", "/health"),
            ("GET", "/?status=204"),
            ("GET", "/?reset=CANCEL"),
        ],
    );
    assert_eq!(reset_code(&outcomes[0]), 0x10c);
    assert!(started.elapsed() >= Duration::from_millis(200), "no delay");
    assert_eq!(reset_code(&outcomes[1]), 8);
    assert_eq!(reset_code(&outcomes[2]), u64::from(u32::MAX));
    // The connection goes on after the resets.
    let (status, _, body_len) = outcomes[3].as_ref().unwrap();
    assert_eq!((status.as_u16(), *body_len), (200, 3));
    // HEAD: the GET's Content-Length, no DATA.
    for (outcome, length) in outcomes[4..7].iter().zip(["1000", "3", "3"]) {
        let (status, headers, body_len) = outcome.as_ref().unwrap();
        assert_eq!((status.as_u16(), *body_len), (200, 0));
        assert_eq!(headers[http::header::CONTENT_LENGTH], length);
    }
    let (status, headers, body_len) = outcomes[7].as_ref().unwrap();
    assert_eq!((status.as_u16(), *body_len), (204, 0));
    assert!(!headers.contains_key(http::header::CONTENT_LENGTH));
    let (status, _, _) = outcomes[8].as_ref().unwrap();
    assert_eq!(status.as_u16(), 400);
}

#[test]
fn h3_needs_tls() {
    let output = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--h3"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--tls-cert"), "{stderr}");
}

/// The aioquic server that the client tests of `protocol: h3` load: it starts, and answers
/// aioquic's client over HTTP/3 with its fixed body.
#[test]
fn aioquic_server_answers_over_http3() {
    let pki = TestPki::generate();
    let (_server, addr) = aioquic_server(&pki);
    let urls = [format!("https://{addr}/"), format!("https://{addr}/x?y=1")];
    let h3 = h3_responses(&h3_client(&pki, "GET", &urls));
    for response in &h3 {
        assert_eq!(response.status, 200);
        assert_eq!(response.body_len, "hello from aioquic\n".len());
        assert_eq!(response.headers["server"], "aioquic");
    }
}
