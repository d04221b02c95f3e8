//! `loadgate serve`, in-process (`serve::spawn`) and as the binary, checked with raw HTTP/1.1
//! over TCP.

use crate::support;

use std::io::{self, Read};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loadgate::serve::{ServerHandle, spawn};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::{HttpConn, IO_TIMEOUT};

fn start() -> ServerHandle {
    let server = spawn("127.0.0.1:0".parse().unwrap(), 2).expect("spawn the server");
    assert!(server.addr().ip().is_loopback());
    assert_ne!(server.addr().port(), 0);
    server
}

fn connect(server: &ServerHandle) -> HttpConn {
    HttpConn::connect(server.addr()).expect("connect")
}

#[test]
fn default_response_is_200_ok() {
    let server = start();
    let response = connect(&server).get("/").unwrap();
    assert_eq!(response.version, "HTTP/1.1");
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-length"), Some("3"));
    assert_eq!(response.body, b"ok\n");
}

#[test]
fn health_answers_ok_whatever_the_query() {
    let server = start();
    let mut conn = connect(&server);
    let response = conn.get("/health?status=500").unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body, b"ok\n");
    let response = conn.request("HEAD", "/health").unwrap();
    assert_eq!(response.status, 200);
}

#[test]
fn status_size_and_headers_shape_the_response_on_any_path() {
    let server = start();
    let mut conn = connect(&server);
    let response = conn
        .get("/any/path/at/all?status=503&size=100000&header=X-A:1&header=X-A:2&header=Retry-After:%205")
        .unwrap();
    assert_eq!(response.status, 503);
    assert_eq!(response.header("content-length"), Some("100000"));
    assert_eq!(response.body.len(), 100_000);
    assert!(response.body.iter().all(|&b| b == b'x'));
    assert_eq!(response.header_all("x-a"), ["1", "2"]);
    assert_eq!(response.header("retry-after"), Some("5"));

    let response = conn.get("/?size=0").unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-length"), Some("0"));
    assert!(response.body.is_empty());

    // A header named in the query replaces the default Content-Type, not a second one.
    let response = conn.get("/?header=Content-Type:application/json").unwrap();
    assert_eq!(response.header_all("content-type"), ["application/json"]);
}

#[test]
fn head_gets_the_length_without_the_body() {
    let server = start();
    let mut conn = connect(&server);
    let response = conn.request("HEAD", "/?size=1000").unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-length"), Some("1000"));
    // Had a body been sent, this would read its bytes instead of a status line.
    let response = conn.get("/?size=7").unwrap();
    assert_eq!(response.body, b"xxxxxxx");
    // The same heads as before the server emptied HEAD bodies itself (hyper's HTTP/1.1 did):
    // the GET's `Content-Length` where the GET has a non-empty body of known length.
    for (path, status, has_length) in [
        ("/", 200, true),
        ("/health", 200, true),
        ("/api/items", 200, true),
        ("/?sise=1", 400, true),
        ("/?size=0", 200, false),
        ("/?status=204", 204, false),
        ("/?status=304", 304, false),
        ("/?events=2", 200, false),
    ] {
        let head = conn.request("HEAD", path).unwrap();
        assert_eq!(head.status, status, "{path}");
        assert_eq!(head.header("transfer-encoding"), None, "{path}");
        let get_length = has_length.then(|| conn.get(path).unwrap().body.len().to_string());
        assert_eq!(
            head.header("content-length"),
            get_length.as_deref(),
            "{path}"
        );
    }
    assert_eq!(conn.get("/?size=7").unwrap().body, b"xxxxxxx");
}

#[test]
fn reset_closes_the_connection_without_a_response() {
    let server = start();
    let mut conn = connect(&server);
    assert_eq!(conn.get("/").unwrap().status, 200);
    let started = Instant::now();
    conn.send(b"GET /?delay=200ms&reset=8 HTTP/1.1\r\nHost: test\r\n\r\n")
        .unwrap();
    // An error here means bytes of a response arrived.
    assert!(conn.closed_within(IO_TIMEOUT).unwrap(), "still open");
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The server goes on.
    assert_eq!(
        connect(&server)
            .get("/?reset=0x10c&status=404")
            .map(|_| ())
            .unwrap_err()
            .kind(),
        io::ErrorKind::UnexpectedEof
    );
    assert_eq!(connect(&server).get("/").unwrap().status, 200);
}

#[test]
fn delay_is_honoured() {
    let server = start();
    let mut conn = connect(&server);
    let started = Instant::now();
    let response = conn.get("/?delay=200ms").unwrap();
    let elapsed = started.elapsed();
    assert_eq!(response.status, 200);
    assert!(elapsed >= Duration::from_millis(200), "{elapsed:?}");
}

/// CPU time used so far by process `pid`, summed over its threads (the scheduler's exact run
/// time in `/proc/PID/task/TID/schedstat`, in nanoseconds, rather than `stat`'s 10 ms ticks).
fn cpu_time(pid: u32) -> Duration {
    let mut total_ns = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's threads") {
        let schedstat = std::fs::read_to_string(task.unwrap().path().join("schedstat"))
            .expect("a thread's schedstat");
        let run_ns: u64 = schedstat
            .split_whitespace()
            .next()
            .and_then(|field| field.parse().ok())
            .expect("run time in ns");
        total_ns += run_ns;
    }
    Duration::from_nanos(total_ns)
}

#[test]
fn work_spins_on_the_cpu_for_its_duration() {
    let (mut child, addr) = support::start_serve("1");
    let mut conn = HttpConn::connect(addr).unwrap();
    assert_eq!(conn.get("/").unwrap().status, 200);
    let cpu_before = cpu_time(child.id());
    let started = Instant::now();
    let response = conn.get("/?work=20ms");
    let elapsed = started.elapsed();
    let cpu = cpu_time(child.id()) - cpu_before;
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(response.unwrap().status, 200);
    assert!(elapsed >= Duration::from_millis(20), "{elapsed:?}");
    // Sleeping would cost next to no CPU time; spinning costs the whole 20 ms, less only what
    // another process's time slices took from the wall clock while the server spun.
    assert!(cpu >= Duration::from_millis(15), "{cpu:?} of CPU time");
}

#[test]
fn keep_alive_serves_several_requests_on_one_connection() {
    let server = start();
    let mut conn = connect(&server);
    let first = conn.get("/a?size=10").unwrap();
    let second = conn.get("/b?size=20").unwrap();
    assert_eq!(first.body.len(), 10);
    assert_eq!(second.body.len(), 20);
    assert_eq!(second.header("connection"), None);
    assert!(!conn.closed_within(Duration::from_millis(100)).unwrap());
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let server = start();
    let mut conn = connect(&server);
    conn.send(b"GET /?size=1 HTTP/1.1\r\nHost: t\r\n\r\nGET /?size=2 HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    assert_eq!(conn.read_response(false).unwrap().body.len(), 1);
    assert_eq!(conn.read_response(false).unwrap().body.len(), 2);
}

#[test]
fn request_body_is_read_and_discarded() {
    let server = start();
    let mut conn = connect(&server);
    let body = vec![b'b'; 100_000];
    let mut request = format!(
        "POST /upload?size=4 HTTP/1.1\r\nHost: t\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    conn.send(&request).unwrap();
    assert_eq!(conn.read_response(false).unwrap().body, b"xxxx");
    // The connection is still usable: the body was consumed, not taken for the next request.
    assert_eq!(conn.get("/").unwrap().body, b"ok\n");
}

#[test]
fn close_1_answers_connection_close_and_closes() {
    let server = start();
    let mut conn = connect(&server);
    let response = conn.get("/?close=1").unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(conn.closed_within(Duration::from_secs(2)).unwrap());
}

#[test]
fn invalid_parameters_get_400_naming_the_parameter() {
    let server = start();
    let mut conn = connect(&server);
    for (query, parameter) in [
        ("status=42", "status"),
        ("size=lots", "size"),
        ("delay=20", "delay"),
        ("work=20", "work"),
        ("header=nocolon", "header"),
        ("close=maybe", "close"),
        ("reset=cancel", "reset"),
        ("colour=blue", "colour"),
    ] {
        let response = conn.get(&format!("/?{query}")).unwrap();
        assert_eq!(response.status, 400, "{query}");
        let body = String::from_utf8_lossy(&response.body);
        assert!(body.contains(&format!("`{parameter}`")), "{query}: {body}");
        assert!(
            response
                .header("content-type")
                .unwrap()
                .starts_with("text/plain")
        );
    }
}

#[test]
fn dropping_the_handle_stops_the_server() {
    let server = start();
    let addr = server.addr();
    let mut idle = connect(&server);
    assert_eq!(idle.get("/").unwrap().status, 200);
    let started = Instant::now();
    drop(server);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(idle.closed_within(Duration::from_secs(2)).unwrap());
    let error = TcpStream::connect_timeout(&addr, IO_TIMEOUT).expect_err("stopped");
    assert_eq!(error.kind(), io::ErrorKind::ConnectionRefused);
}

/// Runs the binary, waits for its listening line, makes a request, sends `signal`, and checks
/// that it exits 0.
fn binary_stops_cleanly_on(signal: Signal) {
    let (mut child, addr) = support::start_serve("2");
    let response = HttpConn::connect(addr).unwrap().get("/?size=5").unwrap();
    assert_eq!(response.body, b"xxxxx");

    kill(Pid::from_raw(child.id() as i32), signal).expect("signal the server");
    let status = support::wait_within(
        &mut child,
        Duration::from_secs(5),
        &format!("loadgate serve after {signal}"),
    );
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status}, stderr: {stderr}");
}

#[test]
fn binary_prints_its_address_serves_and_exits_0_on_sigterm() {
    binary_stops_cleanly_on(Signal::SIGTERM);
}

#[test]
fn binary_exits_0_on_sigint() {
    binary_stops_cleanly_on(Signal::SIGINT);
}

#[test]
fn binary_refuses_zero_threads() {
    let output = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", "0"])
        .stdin(Stdio::null())
        .output()
        .expect("run loadgate serve");
    assert_eq!(output.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--threads 1 or more"));
}

#[test]
fn spawn_on_an_address_in_use_is_an_error_even_inside_a_runtime() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let error = spawn(addr, 1).expect_err("address in use");
    assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
    // From async code (as the engine's tests may call it), the failure must not panic either.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let error = runtime
        .block_on(async { spawn(addr, 1) })
        .expect_err("address in use");
    assert_eq!(error.kind(), io::ErrorKind::AddrInUse);
}

// The stateful API under /api/ (login, items, item by id, cart), against the binary.

/// `loadgate serve` run as the binary (one thread), killed when dropped.
struct ShopServer {
    child: std::process::Child,
    addr: std::net::SocketAddr,
}

impl ShopServer {
    fn start() -> ShopServer {
        let (child, addr) = support::start_serve("1");
        ShopServer { child, addr }
    }

    fn connect(&self) -> HttpConn {
        HttpConn::connect(self.addr).expect("connect")
    }
}

impl Drop for ShopServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The bytes of a request `METHOD path` with `headers` and, unless empty, a JSON `body`.
fn request_bytes(method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: shop\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    if !body.is_empty() {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body);
    request.into_bytes()
}

/// Sends one request (see [`request_bytes`]) and reads its response.
fn call(
    conn: &mut HttpConn,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> support::RawResponse {
    conn.send(&request_bytes(method, path, headers, body))
        .unwrap();
    conn.read_response(method == "HEAD").unwrap()
}

/// The body of `response` as JSON.
fn json(response: &support::RawResponse) -> serde_json::Value {
    assert_eq!(response.header("content-type"), Some("application/json"));
    serde_json::from_slice(&response.body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&response.body)))
}

/// Logs `user` in (password `secret-<user>`): the token and the session cookie's value.
fn login(conn: &mut HttpConn, user: &str) -> (String, String) {
    let body = format!(r#"{{"user": "{user}", "password": "secret-{user}"}}"#);
    let response = call(conn, "POST", "/api/login", &[], &body);
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let token = json(&response)["token"].as_str().unwrap().to_owned();
    let cookie = response.header("set-cookie").expect("a session cookie");
    let value = cookie
        .strip_prefix("session=")
        .and_then(|rest| rest.strip_suffix("; Path=/; HttpOnly"))
        .unwrap_or_else(|| panic!("unexpected Set-Cookie {cookie:?}"))
        .to_owned();
    (token, value)
}

#[test]
fn shop_login_answers_a_token_and_a_session_cookie_for_the_right_password_only() {
    let server = ShopServer::start();
    let mut conn = server.connect();
    let body = r#"{"user": "ann", "password": "secret-ann"}"#;
    let response = call(&mut conn, "POST", "/api/login", &[], body);
    assert_eq!(response.status, 200);
    let answer = json(&response);
    assert_eq!(answer["user"], "ann");
    let token = answer["token"].as_str().unwrap();
    assert_eq!(token.len(), 32);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
    let cookie = response.header("set-cookie").unwrap();
    assert!(cookie.starts_with("session=") && cookie.ends_with("; Path=/; HttpOnly"));
    // A second login is a new session.
    assert_ne!(login(&mut conn, "ann").0, token);

    for (body, status) in [
        (r#"{"user": "ann", "password": "secret-bob"}"#, 401),
        (r#"{"user": "ann", "password": "ann"}"#, 401),
        (r#"{"user": "", "password": "secret-"}"#, 401),
        (r#"{"user": "ann"}"#, 400),
        ("not json", 400),
    ] {
        let response = call(&mut conn, "POST", "/api/login", &[], body);
        assert_eq!(response.status, status, "{body}");
        assert!(json(&response)["error"].is_string(), "{body}");
        assert_eq!(response.header("set-cookie"), None, "{body}");
    }
    let response = call(&mut conn, "GET", "/api/login", &[], "");
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("POST"));
}

#[test]
fn shop_lists_twenty_items_to_anyone() {
    let server = ShopServer::start();
    let mut conn = server.connect();
    let response = conn.get("/api/items").unwrap();
    assert_eq!(response.status, 200);
    let items = json(&response)["items"].as_array().unwrap().clone();
    let ids: Vec<u64> = items
        .iter()
        .map(|item| item["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, (1..=20).collect::<Vec<u64>>());
    for item in &items {
        assert!(item["name"].is_string() && item["price"].is_f64(), "{item}");
    }
    // The pointer examples/flow.yaml extracts.
    assert_eq!(json(&response).pointer("/items/3/id"), Some(&4.into()));
}

#[test]
fn shop_item_needs_the_token_or_the_session_cookie() {
    let server = ShopServer::start();
    let mut conn = server.connect();
    let (token, cookie) = login(&mut conn, "ann");
    let bearer = format!("Bearer {token}");
    let session = format!("theme=dark; session={cookie}");

    let response = conn.get("/api/items/3").unwrap();
    assert_eq!(response.status, 401);
    assert_eq!(response.header("www-authenticate"), Some("Bearer"));
    for headers in [
        [("Authorization", "Bearer 0123456789abcdef0123456789abcdef")],
        [("Authorization", token.as_str())],
        [("Cookie", "session=nope")],
    ] {
        let response = call(&mut conn, "GET", "/api/items/3", &headers, "");
        assert_eq!(response.status, 401, "{headers:?}");
    }

    for headers in [
        [("Authorization", bearer.as_str())],
        [("Cookie", session.as_str())],
    ] {
        let response = call(&mut conn, "GET", "/api/items/3", &headers, "");
        assert_eq!(response.status, 200, "{headers:?}");
        assert_eq!(response.header("etag"), Some("\"item-3\""));
        let item = json(&response);
        assert_eq!(item["id"], 3);
        assert_eq!(item["name"], "candle");
        assert_eq!(item["price"], 9.5);
        for unknown in ["/api/items/0", "/api/items/21", "/api/items/abc"] {
            let response = call(&mut conn, "GET", unknown, &headers, "");
            assert_eq!(response.status, 404, "{unknown}");
        }
    }
}

#[test]
fn shop_cart_keeps_each_sessions_items_by_token_or_cookie() {
    let server = ShopServer::start();
    let mut conn = server.connect();
    let (token, cookie) = login(&mut conn, "ann");
    let bearer = [("Authorization", format!("Bearer {token}"))];
    let bearer = [(bearer[0].0, bearer[0].1.as_str())];
    let session = format!("session={cookie}");
    let session = [("Cookie", session.as_str())];

    let response = call(&mut conn, "POST", "/api/cart", &[], r#"{"item": 3}"#);
    assert_eq!(response.status, 401);
    let response = call(&mut conn, "POST", "/api/cart", &bearer, r#"{"item": 3}"#);
    assert_eq!(response.status, 201);
    assert_eq!(
        json(&response),
        serde_json::json!({"cart": [3], "count": 1})
    );
    let response = call(&mut conn, "POST", "/api/cart", &session, r#"{"item": 5}"#);
    assert_eq!(response.status, 201);
    assert_eq!(
        json(&response),
        serde_json::json!({"cart": [3, 5], "count": 2})
    );
    let response = call(&mut conn, "GET", "/api/cart", &session, "");
    assert_eq!(response.status, 200);
    assert_eq!(
        json(&response),
        serde_json::json!({"cart": [3, 5], "count": 2})
    );
    for (body, status) in [(r#"{"item": 21}"#, 404), (r#"{"id": 2}"#, 400), ("[]", 400)] {
        let response = call(&mut conn, "POST", "/api/cart", &bearer, body);
        assert_eq!(response.status, status, "{body}");
    }

    // Another session has a cart of its own.
    let (other, _) = login(&mut conn, "bob");
    let other = format!("Bearer {other}");
    let response = call(
        &mut conn,
        "GET",
        "/api/cart",
        &[("Authorization", &other)],
        "",
    );
    assert_eq!(json(&response), serde_json::json!({"cart": [], "count": 0}));
    assert_eq!(call(&mut conn, "GET", "/api/cart", &[], "").status, 401);
    let response = call(&mut conn, "DELETE", "/api/cart", &bearer, "");
    assert_eq!(response.status, 405);
    assert_eq!(response.header("allow"), Some("GET, HEAD, POST"));
}

#[test]
fn shop_refuses_queries_and_leaves_other_paths_to_the_query_shaped_responses() {
    let server = ShopServer::start();
    let mut conn = server.connect();
    let response = conn.get("/api/items?size=10").unwrap();
    assert_eq!(response.status, 400);
    assert!(json(&response)["error"].as_str().unwrap().contains("query"));
    let response = conn.get("/api/other?size=4").unwrap();
    assert_eq!(response.body, b"xxxx");
    let response = conn.get("/items/42?size=5").unwrap();
    assert_eq!(response.body, b"xxxxx");
    let big = format!(r#"{{"user": "{}", "password": "x"}}"#, "u".repeat(5000));
    let response = call(&mut conn, "POST", "/api/login", &[], &big);
    assert_eq!(response.status, 413);
}

#[test]
fn shop_sessions_from_threads_at_once_keep_their_own_carts() {
    let server = ShopServer::start();
    std::thread::scope(|scope| {
        for thread in 0..4u64 {
            let server = &server;
            scope.spawn(move || {
                let mut conn = server.connect();
                let (token, _) = login(&mut conn, &format!("user{thread}"));
                let bearer = format!("Bearer {token}");
                let headers = [("Authorization", bearer.as_str())];
                let mut expected = Vec::new();
                for n in 0..50 {
                    let item = (thread * 5 + n) % 20 + 1;
                    expected.push(item);
                    let body = format!(r#"{{"item": {item}}}"#);
                    let response = call(&mut conn, "POST", "/api/cart", &headers, &body);
                    assert_eq!(response.status, 201);
                }
                let response = call(&mut conn, "GET", "/api/cart", &headers, "");
                let cart = json(&response);
                assert_eq!(cart, serde_json::json!({"cart": expected, "count": 50}));
            });
        }
    });
}

#[test]
fn shop_state_is_bounded_carts_and_sessions_alike() {
    let server = ShopServer::start();
    let mut conn = server.connect();
    let (first, _) = login(&mut conn, "first");
    let bearer = format!("Bearer {first}");
    let headers = [("Authorization", bearer.as_str())];
    // A cart keeps its newest 100 items.
    let mut added = Vec::new();
    for n in 0..130u64 {
        let item = n % 20 + 1;
        added.push(item);
        let body = format!(r#"{{"item": {item}}}"#);
        assert_eq!(
            call(&mut conn, "POST", "/api/cart", &headers, &body).status,
            201
        );
    }
    let cart = json(&call(&mut conn, "GET", "/api/cart", &headers, ""));
    assert_eq!(cart["count"], 100);
    assert_eq!(cart["cart"], serde_json::json!(added[30..]));

    // 16,000 more logins (pipelined, 200 at a time) evict the first session: at most 10,000
    // are kept, the oldest of each of 16 shards going first (each shard sees about 1,000
    // logins, well past its 625).
    let login = request_bytes(
        "POST",
        "/api/login",
        &[],
        r#"{"user": "u", "password": "secret-u"}"#,
    );
    let batch = login.repeat(200);
    for _ in 0..80 {
        conn.send(&batch).unwrap();
        for _ in 0..200 {
            assert_eq!(conn.read_response(false).unwrap().status, 200);
        }
    }
    assert_eq!(
        call(&mut conn, "GET", "/api/cart", &headers, "").status,
        401
    );
    let (last, _) = self::login(&mut conn, "last");
    let bearer = format!("Bearer {last}");
    let response = call(
        &mut conn,
        "GET",
        "/api/cart",
        &[("Authorization", &bearer)],
        "",
    );
    assert_eq!(response.status, 200);
}
