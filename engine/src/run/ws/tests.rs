//! WebSocket exchanges against a real server started by each test (tokio-tungstenite's
//! `accept_hdr_async` on 127.0.0.1), over TCP and TLS.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::accept_hdr_async;
use tokio_tungstenite::tungstenite::handshake::server::{Request as Upgrade, Response as Upgraded};

use super::*;
use crate::run::h1::CAPTURE_BODY_BYTES;

/// What the test server does on its one connection after the upgrade.
#[derive(Clone, Copy)]
enum Script {
    /// Echoes each message after 20 ms.
    Echo,
    /// Pushes `tick` before echoing each message.
    PushThenEcho,
    /// Reads a message, then closes with 1011.
    Close1011,
    /// Pings before echoing, and waits for the pong.
    PingFirst,
    /// Answers with a message of 100 bytes.
    Oversized,
    /// Pushes three messages 10 ms apart, then waits.
    Push3,
}

/// What the server saw: the upgrade request's header fields (name: value) and events.
type Seen = Arc<Mutex<Vec<String>>>;

fn note(seen: &Seen, what: impl Into<String>) {
    seen.lock().unwrap().push(what.into());
}

async fn run_script<S>(ws: &mut tokio_tungstenite::WebSocketStream<S>, script: Script, seen: &Seen)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    if let Script::Push3 = script {
        for i in 0..3 {
            ws.send(Message::text(format!("push {i}"))).await.unwrap();
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    while let Some(Ok(message)) = ws.next().await {
        let payload = match message {
            Message::Text(_) | Message::Binary(_) => message,
            Message::Close(frame) => {
                note(
                    seen,
                    format!("close {:?}", frame.map(|f| u16::from(f.code))),
                );
                return;
            }
            _ => continue,
        };
        match script {
            Script::Echo | Script::Push3 => {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Script::PushThenEcho => ws.send(Message::text("tick")).await.unwrap(),
            Script::Close1011 => {
                let code = CloseCode::from(1011);
                let frame = CloseFrame {
                    code,
                    reason: "boom".into(),
                };
                ws.close(Some(frame)).await.unwrap();
                continue;
            }
            Script::PingFirst => {
                ws.send(Message::Ping(Bytes::from_static(b"p")))
                    .await
                    .unwrap();
                while let Some(Ok(m)) = ws.next().await {
                    if let Message::Pong(_) = m {
                        note(seen, "pong");
                        break;
                    }
                }
            }
            Script::Oversized => {
                ws.send(Message::text("x".repeat(100))).await.unwrap();
                continue;
            }
        }
        ws.send(payload).await.unwrap();
    }
}

/// Accepts one WebSocket connection on `listener` (over TLS with `tls`), noting the upgrade
/// request's header fields, answering with a `Set-Cookie`, then runs `script`.
async fn serve_one(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    script: Script,
    seen: Seen,
) {
    let (tcp, _) = listener.accept().await.unwrap();
    let upgrade_seen = seen.clone();
    let callback = move |request: &Upgrade, mut response: Upgraded| {
        for (name, value) in request.headers() {
            note(
                &upgrade_seen,
                format!("{name}: {}", value.to_str().unwrap()),
            );
        }
        note(&upgrade_seen, format!("path {}", request.uri()));
        let headers = response.headers_mut();
        headers.insert("set-cookie", "session=s1; Path=/".parse().unwrap());
        if request.headers().contains_key("sec-websocket-protocol") {
            headers.insert("sec-websocket-protocol", "chat".parse().unwrap());
        }
        Ok(response)
    };
    match tls {
        None => {
            let mut ws = accept_hdr_async(tcp, callback).await.unwrap();
            run_script(&mut ws, script, &seen).await;
        }
        Some(acceptor) => {
            let stream = acceptor.accept(tcp).await.unwrap();
            let mut ws = accept_hdr_async(stream, callback).await.unwrap();
            run_script(&mut ws, script, &seen).await;
        }
    }
}

fn plan_of(url: &str, ws: &str) -> crate::plan::Plan {
    let tls = if url.starts_with("wss:") {
        "    tls:\n      insecure_skip_verify: true\n"
    } else {
        ""
    };
    let yaml = format!(
        "version: 1\nname: ws\ntargets:\n  - name: t\n    url: {url}\n    headers:\n      \
         x-token: abc\n{tls}    ws:\n{ws}\nload:\n  connections: 1\n  requests: 1\n"
    );
    crate::run::h3::tests::plan_of(yaml)
}

fn runtime() -> tokio::runtime::Runtime {
    crate::run::h3::tests::runtime()
}

/// A test server running `script` (over TLS with `tls`), its plan (`ws` the target's `ws:`
/// lines) and a connection to it, not upgraded yet.
struct Setting {
    plan: crate::plan::Plan,
    conn: WsConn,
    seen: Seen,
}

async fn setting(script: Script, ws: &str, tls: Option<tokio_rustls::TlsAcceptor>) -> Setting {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let seen = Seen::default();
    let scheme = if tls.is_some() { "wss" } else { "ws" };
    let host = if tls.is_some() {
        "localhost"
    } else {
        "127.0.0.1"
    };
    let url = format!("{scheme}://{host}:{}/chat?room=1", addr.port());
    tokio::spawn(serve_one(listener, tls, script, seen.clone()));
    let plan = plan_of(&url, ws);
    let tcp = TcpStream::connect(addr).await.unwrap();
    let conn = match &plan.targets[0].transport.tls {
        None => open(
            Box::new(tcp),
            super::super::h1::tcp_io_error,
            Setup::default(),
        ),
        Some(tls) => {
            let config = tls.config.clone();
            let stream = super::super::tls::handshake(tcp, tls, config)
                .await
                .unwrap();
            open(
                Box::new(stream),
                super::super::tls::io_error,
                Setup::default(),
            )
        }
    };
    Setting { plan, conn, seen }
}

fn capture() -> Capture {
    Capture {
        head: Vec::new(),
        body: Vec::with_capacity(CAPTURE_BODY_BYTES.min(64)),
        keep_body: true,
    }
}

impl Setting {
    /// The target's request on the connection: its result, what it captured and counted.
    async fn exchange(&mut self) -> (Result<WsResponse, Failure>, Capture, Traffic) {
        let target = &self.plan.targets[0];
        let request = Request::planned(target, Instant::now() + Duration::from_secs(60));
        let (mut capture, mut traffic) = (capture(), Traffic::default());
        let result = self
            .conn
            .exchange(request, Instant::now(), Some(&mut capture), &mut traffic)
            .await;
        (result, capture, traffic)
    }

    fn saw(&self, what: &str) -> bool {
        self.seen.lock().unwrap().iter().any(|s| s == what)
    }
}

fn text(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap()
}

/// Echo: the upgrade timed and its headers captured on the first request; each reply's
/// latency (the server waits 20 ms) and its messages counted; the connection kept.
async fn echo(tls: Option<tokio_rustls::TlsAcceptor>) {
    let ws = "      send: hello\n      subprotocols: [chat]\n";
    let mut s = setting(Script::Echo, ws, tls).await;
    let (result, capture, traffic) = s.exchange().await;
    let response = result.unwrap();
    assert_eq!((response.status, response.keep_alive), (101, true));
    let setup = response
        .timing
        .setup
        .expect("the first request takes the setup");
    assert!(setup.upgrade_us.is_some());
    assert!(response.timing.ttfb_us >= 20_000, "{:?}", response.timing);
    assert_eq!(response.timing.body_us, 0);
    let head = text(&capture.head);
    assert!(head.starts_with("HTTP/1.1 101 \r\n"), "{head}");
    assert!(
        head.contains("set-cookie: session=s1; Path=/\r\n"),
        "{head}"
    );
    assert_eq!(text(&capture.body), "hello");
    let m = traffic.messages;
    assert_eq!(
        (m.sent, m.received, m.bytes_sent, m.bytes_received),
        (1, 1, 5, 5)
    );
    // The upgrade request and the frames: more than the payloads.
    assert!(traffic.sent > 100 && traffic.received > 100, "{traffic:?}");
    assert!(traffic.seen.written_at.is_some());
    // The request's head went on the upgrade: its path and headers, the subprotocol.
    assert!(s.saw("path /chat?room=1"), "{:?}", s.seen);
    assert!(s.saw("x-token: abc"), "{:?}", s.seen);
    assert!(s.saw("sec-websocket-protocol: chat"), "{:?}", s.seen);

    let (result, capture, traffic) = s.exchange().await;
    let response = result.unwrap();
    assert_eq!(response.status, 101);
    assert!(response.timing.setup.is_none());
    assert!(response.timing.ttfb_us >= 20_000, "{:?}", response.timing);
    assert_eq!(text(&capture.head), "HTTP/1.1 101 \r\n\r\n");
    assert_eq!(text(&capture.body), "hello");
    // A masked client frame of 5 bytes is 11 bytes; the server's, 7.
    assert_eq!((traffic.sent, traffic.received), (11, 7));
}

#[test]
fn echo_over_tcp_times_the_upgrade_and_each_reply() {
    runtime().block_on(echo(None));
}

#[test]
fn echo_over_tls_times_the_upgrade_and_each_reply() {
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let config = crate::serve::tls_config(&cert, &key, None).unwrap();
    runtime().block_on(echo(Some(tokio_rustls::TlsAcceptor::from(config))));
}

#[test]
fn the_reply_is_the_first_message_that_contains_the_text_the_others_counted() {
    runtime().block_on(async {
        let ws = "      send: hello\n      reply: hel\n";
        let mut s = setting(Script::PushThenEcho, ws, None).await;
        for _ in 0..2 {
            let (result, capture, traffic) = s.exchange().await;
            assert_eq!(result.unwrap().status, 101);
            assert_eq!(text(&capture.body), "hello");
            // `tick` (the push) came first, and was skipped.
            assert_eq!(traffic.messages.received, 2);
            assert_eq!(traffic.messages.bytes_received, 9);
        }
    });
}

#[test]
fn a_close_with_1011_is_ws_closed_internal_error() {
    runtime().block_on(async {
        let mut s = setting(Script::Close1011, "      send: hello\n", None).await;
        let (result, _, traffic) = s.exchange().await;
        assert_eq!(result, Err(Failure::Error(ErrorKind::WsClosed)));
        let key = crate::measure::code_key(ErrorKind::WsClosed, traffic.error_code);
        assert_eq!(key, "ws_closed INTERNAL_ERROR (1011)");
        assert_eq!(traffic.messages.sent, 1);
    });
}

#[test]
fn a_ping_is_answered_while_the_reply_is_awaited() {
    runtime().block_on(async {
        let mut s = setting(Script::PingFirst, "      send: hello\n", None).await;
        let (result, capture, _) = s.exchange().await;
        assert_eq!(result.unwrap().status, 101);
        assert_eq!(text(&capture.body), "hello");
        assert!(s.saw("pong"), "{:?}", s.seen);
    });
}

#[test]
fn a_message_over_the_limit_closes_with_1009() {
    runtime().block_on(async {
        let ws = "      send: hello\n      max_message_bytes: 50\n";
        let mut s = setting(Script::Oversized, ws, None).await;
        let (result, _, traffic) = s.exchange().await;
        assert_eq!(result, Err(Failure::Error(ErrorKind::WsClosed)));
        let key = crate::measure::code_key(ErrorKind::WsClosed, traffic.error_code);
        assert_eq!(key, "ws_closed MESSAGE_TOO_BIG (1009)");
        // The server sees the close with 1009.
        for _ in 0..100 {
            if s.saw("close Some(1009)") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the server saw no close 1009: {:?}", s.seen);
    });
}

#[test]
fn receive_for_counts_every_message_and_answers_at_the_first() {
    runtime().block_on(async {
        let ws = "      receive_for: 200ms\n";
        let mut s = setting(Script::Push3, ws, None).await;
        let start = Instant::now();
        let (result, capture, traffic) = s.exchange().await;
        let response = result.unwrap();
        assert!(response.end >= start + Duration::from_millis(200));
        let m = traffic.messages;
        assert_eq!((m.sent, m.received), (0, 3));
        let first = m.answered_at.expect("a message came");
        assert!(first < start + Duration::from_millis(100));
        assert_eq!(text(&capture.body), "push 0");
    });
}

#[tokio::test]
async fn a_refused_upgrade_is_a_response_with_its_status() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut tcp, _) = listener.accept().await.unwrap();
        let mut buf = [0; 4096];
        let _ = tcp.read(&mut buf).await.unwrap();
        let answer = "HTTP/1.1 403 Forbidden\r\nContent-Length: 2\r\n\r\nno";
        tcp.write_all(answer.as_bytes()).await.unwrap();
    });
    let plan = plan_of(&format!("ws://{addr}/"), "      send: hello\n");
    let tcp = TcpStream::connect(addr).await.unwrap();
    let conn = open(
        Box::new(tcp),
        super::super::h1::tcp_io_error,
        Setup::default(),
    );
    let seen = Seen::default();
    let mut s = Setting { plan, conn, seen };
    let (result, capture, traffic) = s.exchange().await;
    let response = result.unwrap();
    assert_eq!((response.status, response.keep_alive), (403, false));
    assert!(response.timing.setup.unwrap().upgrade_us.is_some());
    assert!(text(&capture.head).contains("content-length: 2\r\n"));
    assert_eq!(traffic.messages.sent, 0);
    assert!(traffic.received > 40, "{traffic:?}");
}
