//! The test fixtures of `support/` checked with raw TCP, so that they are known good before the
//! engine's tests rely on them.

use crate::support;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use support::*;

/// Polls `f` every 10 ms until it is true or `timeout` passed; returns its last value.
fn eventually(timeout: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn raw_connect(addr: std::net::SocketAddr) -> TcpStream {
    let stream = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect("connect");
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    stream
}

const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: test\r\n\r\n";

#[test]
fn down_addr_refuses_connections() {
    let addr = down_addr();
    assert!(addr.ip().is_loopback());
    let error = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect_err("nothing listens");
    assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn hang_server_reads_the_request_never_answers_and_closes_on_drop() {
    let server = HangServer::start();
    let mut stream = raw_connect(server.addr());
    stream.write_all(GET).unwrap();
    assert!(eventually(Duration::from_secs(2), || server.requests() == 1));
    assert_eq!(server.connections(), 1);

    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let started = Instant::now();
    let error = stream.read(&mut [0; 64]).expect_err("no answer");
    assert!(
        matches!(
            error.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ),
        "{error:?}"
    );
    assert!(started.elapsed() >= Duration::from_millis(300));

    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    drop(server);
    let started = Instant::now();
    match stream.read(&mut [0; 64]) {
        Ok(0) => {}
        Err(e) if e.kind() == io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the connection closed on drop, got {other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn close_mid_response_server_sends_ten_of_a_thousand_bytes_then_closes() {
    let server = CloseMidResponseServer::start();
    let mut stream = raw_connect(server.addr());
    stream.write_all(GET).unwrap();
    let mut received = Vec::new();
    stream
        .read_to_end(&mut received)
        .expect("read to the close");
    assert_eq!(received, CLOSE_MID_RESPONSE);
    assert_eq!(server.requests(), 1);

    let mut conn = HttpConn::connect(server.addr()).unwrap();
    let error = conn.get("/").expect_err("truncated body");
    assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
}

#[test]
fn garbage_server_answers_garbage_and_keeps_the_connection_open() {
    let server = GarbageServer::start();
    let mut stream = raw_connect(server.addr());
    stream.write_all(GET).unwrap();
    let mut received = vec![0; GARBAGE.len()];
    stream.read_exact(&mut received).unwrap();
    assert_eq!(received, GARBAGE);
    // Nothing more, and no close.
    stream
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let error = stream.read(&mut [0; 64]).expect_err("connection kept open");
    assert!(
        matches!(
            error.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ),
        "{error:?}"
    );

    let mut conn = HttpConn::connect(server.addr()).unwrap();
    let error = conn.get("/").expect_err("not HTTP");
    assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    assert_eq!(server.requests(), 2);
}

#[test]
fn closing_garbage_server_answers_garbage_then_closes() {
    let server = GarbageServer::start_closing();
    let mut stream = raw_connect(server.addr());
    stream.write_all(GET).unwrap();
    let mut received = Vec::new();
    stream
        .read_to_end(&mut received)
        .expect("read to the close");
    assert_eq!(received, GARBAGE);
}

#[test]
fn counting_server_content_length_keeps_alive_and_counts_pipelined_requests() {
    let server = CountingServer::start(Framing::ContentLength);
    let mut conn = HttpConn::connect(server.addr()).unwrap();
    for _ in 0..3 {
        let response = conn.get("/").unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.header("content-length"), Some("13"));
        assert_eq!(response.body, COUNTING_BODY);
    }
    // Pipelined: three requests in one write, one with a body to discard.
    let post = b"POST /p HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nabcde";
    let pipelined = [GET, &post[..], GET].concat();
    conn.send(&pipelined).unwrap();
    for _ in 0..3 {
        assert_eq!(conn.read_response(false).unwrap().body, COUNTING_BODY);
    }
    assert_eq!(server.requests(), 6);
    assert_eq!(server.connections(), 1);
    assert!(!conn.closed_within(Duration::from_millis(100)).unwrap());
}

#[test]
fn counting_server_chunked_sends_chunks_and_a_trailer() {
    let server = CountingServer::start(Framing::Chunked);
    let mut raw = raw_connect(server.addr());
    raw.write_all(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut received = Vec::new();
    raw.read_to_end(&mut received).unwrap();
    let received = String::from_utf8(received).unwrap();
    assert!(
        received.contains("Transfer-Encoding: chunked\r\n"),
        "{received}"
    );
    assert!(
        received.ends_with(
            "\r\n5\r\nhello\r\n2;ext=1\r\n, \r\n6\r\nworld\n\r\n0\r\nX-Trailer: done\r\n\r\n"
        ),
        "{received}"
    );

    let mut conn = HttpConn::connect(server.addr()).unwrap();
    for _ in 0..2 {
        let response = conn.get("/").unwrap();
        assert_eq!(response.body, COUNTING_BODY);
        assert_eq!(response.header("content-length"), None);
        assert_eq!(
            response.trailers,
            vec![("x-trailer".to_owned(), "done".to_owned())]
        );
    }
    assert_eq!(server.requests(), 3);
    assert_eq!(server.connections(), 2);
}

#[test]
fn counting_server_close_delimited_ends_each_body_with_the_connection() {
    let server = CountingServer::start(Framing::CloseDelimited);
    for _ in 0..3 {
        let mut conn = HttpConn::connect(server.addr()).unwrap();
        let response = conn.get("/").unwrap();
        assert_eq!(response.version, "HTTP/1.0");
        assert_eq!(response.header("content-length"), None);
        assert_eq!(response.body, COUNTING_BODY);
    }
    assert_eq!(server.requests(), 3);
    assert_eq!(server.connections(), 3);
}

#[test]
fn nginx_serves_hello_static_and_status_and_logs_each_request() {
    let nginx = Nginx::start().expect("nginx is required for this test");
    assert!(nginx.addr().ip().is_loopback());
    let mut conn = HttpConn::connect(nginx.addr()).unwrap();
    for i in 0..3 {
        let response = conn.get(&format!("/any?i={i}")).unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.body, NGINX_HELLO);
    }
    let response = conn.get(NGINX_STATIC_PATH).unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body.len(), nginx.options().static_size);
    assert_eq!(response.body, nginx.static_body());
    let response = conn.request("HEAD", NGINX_STATIC_PATH).unwrap();
    assert_eq!(
        response.header("content-length"),
        Some(nginx.options().static_size.to_string().as_str())
    );

    let mut other = HttpConn::connect(nginx.addr()).unwrap();
    assert_eq!(other.get("/missing/elsewhere").unwrap().status, 200);

    let status = conn.get(NGINX_STATUS_PATH).unwrap();
    let status =
        parse_stub_status(std::str::from_utf8(&status.body).unwrap()).expect("stub_status");
    assert_eq!(
        status.requests, 7,
        "6 requests and the status request: {status:?}"
    );
    // The readiness probe of `Nginx::start` was accepted too.
    assert_eq!(status.accepts, 3);
    assert_eq!(status.active, 2);

    // The status request is not logged: 6 lines.
    let count = nginx.wait_access_log_count(6, Duration::from_secs(2));
    assert_eq!(count, 6, "{}", nginx.error_log());
    let log = nginx.access_log();
    let first_connection = &log[..5];
    assert!(
        first_connection
            .iter()
            .all(|e| e.connection == log[0].connection)
    );
    assert_eq!(
        first_connection
            .iter()
            .map(|e| e.connection_requests)
            .collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(log[0].uri, "/any?i=0");
    assert_eq!(log[3].body_bytes_sent, nginx.options().static_size as u64);
    assert_eq!(log[4].method, "HEAD");
    assert_ne!(log[5].connection, log[0].connection);
    assert_eq!(log[5].connection_requests, 1);
}

#[test]
fn nginx_closes_a_connection_after_keepalive_requests() {
    let nginx = Nginx::start_with(NginxOptions {
        keepalive_requests: 2,
        ..NginxOptions::default()
    })
    .expect("nginx is required for this test");
    let mut conn = HttpConn::connect(nginx.addr()).unwrap();
    let first = conn.get("/").unwrap();
    assert_eq!(first.header("connection"), Some("keep-alive"));
    let second = conn.get("/").unwrap();
    assert_eq!(second.header("connection"), Some("close"));
    assert!(conn.closed_within(Duration::from_secs(2)).unwrap());
    assert_eq!(nginx.wait_access_log_count(2, Duration::from_secs(2)), 2);
}

#[test]
fn nginx_is_killed_on_drop() {
    let nginx = Nginx::start().expect("nginx is required for this test");
    let addr = nginx.addr();
    drop(nginx);
    let error = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect_err("nginx is gone");
    assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
}

#[test]
fn stub_status_parses_nginx_format() {
    let body = "Active connections: 2 \nserver accepts handled requests\n 5 5 9 \nReading: 0 Writing: 1 Waiting: 1 \n";
    assert_eq!(
        parse_stub_status(body),
        Some(StubStatus {
            active: 2,
            accepts: 5,
            handled: 5,
            requests: 9
        })
    );
    assert_eq!(parse_stub_status("nonsense"), None);
}
