//! `protocol: ws` through the `loadgate` binary against a WebSocket server nobody here wrote:
//! PyPI's `websockets` (tests/peers/ws_server.py), started by the tests on loopback, over
//! `ws://` and `wss://`. Replies matched among other messages, pushed messages counted for a
//! `receive_for`, the upgrade's headers and subprotocol, pings answered; and the server's
//! hostile answers (a close with 1011, silence, a message over the limit), each run bounded in
//! time. Every assertion reads the result JSON the run wrote.

use std::time::Duration;

use crate::support::{Peer, Ran, TestPki, check_counts, loadgate_run, turn, u64_at, ws_server};

/// The most a run may take before the test kills it (runs are bounded far below this).
const KILL_AFTER: Duration = Duration::from_secs(30);

/// Noise messages /chatter sends before each echo.
const NOISE: u64 = 2;
/// Messages /burst pushes for each message received.
const BURST: u64 = 5;
/// /echo's delay before each reply, ms.
const ECHO_DELAY_MS: u64 = 20;

/// A spec named `ws`: `targets` (YAML list items, indented by 2) with `load` (and anything
/// after it), every request bounded by `timeout`.
fn spec(timeout: &str, targets: &str, load: &str) -> String {
    format!(
        "version: 1\nname: ws\ndefaults:\n  timeout: {timeout}\ntargets:\n{targets}load:\n{load}"
    )
}

/// A target item named `name` on `path` of the server at `base` (`ws://…`, `wss://…`) with
/// `ws` (the fields of `ws:`, indented by 6) and `more` (fields of the target, indented by 4).
fn target(name: &str, base: &str, path: &str, ws: &str, more: &str) -> String {
    format!("  - name: {name}\n    url: {base}{path}\n    ws:\n{ws}{more}")
}

/// The base URL (`ws://…`, `wss://127.0.0.1:…`) of `server`, and the `tls:` of a target that
/// trusts `pki`'s CA (indented by 4) when over TLS.
fn base(server: &Peer, tls: Option<&TestPki>) -> (String, String) {
    match tls {
        Some(pki) => (
            format!("wss://127.0.0.1:{}", server.addr.port()),
            format!(
                "    tls:\n      ca_file: {}\n",
                pki.path("ca.pem").display()
            ),
        ),
        None => (format!("ws://{}", server.addr), String::new()),
    }
}

/// Echo over `ws://` and `wss://` (the certificate checked against the test CA): the reply
/// matched past the messages before it (counted, not checked: the check reads the reply),
/// latency to the reply, the upgrade timed once per connection, the upgrade request's
/// headers and the subprotocol chosen. Each target has a server of its own (see
/// [`targets_on_other_paths_of_one_server_keep_their_own_connections`]).
#[test]
fn websockets_echoes_over_ws_and_wss_with_replies_matched() {
    let pki = TestPki::generate();
    for tls in [None, Some(&pki)] {
        let servers: Vec<Peer> = (0..3)
            .map(|_| ws_server(tls, &["--subprotocol", "chat.v1"]))
            .collect();
        let (chat, trusted) = base(&servers[0], tls);
        let targets = target(
            "chat",
            &chat,
            &format!("/chatter?n={NOISE}"),
            "      send: '{\"user\": {{vu}}, \"text\": \"hi\"}'\n      reply: '\"echo\"'\n",
            &format!(
                "{trusted}    checks:\n      - {{ name: echoed, json: /echo/text, equals: hi }}\n"
            ),
        ) + &target(
            "echo",
            &base(&servers[1], tls).0,
            &format!("/echo?delay={ECHO_DELAY_MS}"),
            "      send: 'ping {{vu}}'\n",
            &format!(
                "{trusted}    checks:\n      - {{ name: pong, body_matches: '^ping [0-9]+$' }}\n"
            ),
        ) + &target(
            "hello",
            &base(&servers[2], tls).0,
            "/hello",
            "      send: hey\n      subprotocols: [other.v2, chat.v1]\n",
            &format!(
                "{trusted}    headers:\n      Authorization: Bearer t0ken\n    checks:\n\
                 \x20     - {{ name: auth, json: /authorization, equals: Bearer t0ken }}\n\
                 \x20     - {{ name: subprotocol, json: /subprotocol, equals: chat.v1 }}\n"
            ),
        );
        let dir = tempfile::tempdir().unwrap();
        let _turn = turn();
        let yaml = spec("5s", &targets, "  connections: 3\n  requests: 90\n");
        let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
        let at = if tls.is_some() { "wss" } else { "ws" };
        assert_eq!(
            ran.result["total"]["errors"], 0,
            "{at}: {}",
            ran.result["total"]
        );
        assert_echoes(&ran, tls.is_some());
    }
}

/// Two targets on other paths of one server (`/echo`, `/hello`): each request goes over a
/// connection upgraded on its own target's path, so each gets its own path's answer.
#[test]
fn targets_on_other_paths_of_one_server_keep_their_own_connections() {
    let server = ws_server(None, &[]);
    let (url, _) = base(&server, None);
    let targets = target(
        "echo",
        &url,
        "/echo",
        "      send: '{\"text\": \"echo me\"}'\n",
        "    checks:\n      - { name: echoed, json: /text, equals: echo me }\n",
    ) + &target(
        "hello",
        &url,
        "/hello",
        "      send: hey\n",
        "    checks:\n      - { name: hello, json: /text, equals: hey }\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let _turn = turn();
    let yaml = spec("2s", &targets, "  connections: 2\n  requests: 40\n");
    let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
    for (name, check_name) in [("echo", "echoed"), ("hello", "hello")] {
        let t = ran.target(name);
        let responses = u64_at(t, "/responses");
        assert!(responses > 0, "{t}");
        assert_eq!(check_counts(t, check_name), (responses, 0), "{name}: {t}");
    }
}

/// The targets of [`websockets_echoes_over_ws_and_wss_with_replies_matched`].
fn assert_echoes(ran: &Ran, tls: bool) {
    let chat = ran.target("chat");
    let requests = u64_at(chat, "/requests");
    assert!(requests >= 10, "{chat}");
    let messages = &chat["messages"];
    assert_eq!(messages["protocol"], "ws", "{chat}");
    assert_eq!(u64_at(messages, "/sent"), requests, "{messages}");
    assert_eq!(
        u64_at(messages, "/received"),
        requests * (NOISE + 1),
        "the noise before each reply is counted: {messages}"
    );
    assert_eq!(
        check_counts(chat, "echoed"),
        (requests, 0),
        "the check reads the reply"
    );

    let echo = ran.target("echo");
    let requests = u64_at(echo, "/requests");
    assert_eq!(check_counts(echo, "pong"), (requests, 0));
    let p50 = u64_at(echo, "/latency_us/p50_us");
    assert!(p50 >= ECHO_DELAY_MS * 1000, "{p50} us: to the reply");
    let phases = &echo["phases_us"];
    let opened = u64_at(phases, "/connections_opened");
    assert!((1..=3).contains(&opened), "kept open: {phases}");
    assert_eq!(u64_at(phases, "/upgrade/count"), opened, "{phases}");

    let hello = ran.target("hello");
    let requests = u64_at(hello, "/requests");
    assert_eq!(check_counts(hello, "auth"), (requests, 0), "{hello}");
    assert_eq!(check_counts(hello, "subprotocol"), (requests, 0), "{hello}");
    let transport = &hello["transport"];
    assert_eq!(transport.get("tls").is_some_and(|t| !t.is_null()), tls);
}

/// `receive_for` counts what the server pushes: a burst of [`BURST`] per message sent, and a
/// feed of ticks with nothing sent; the latency runs to the first message. (A server each:
/// see [`targets_on_other_paths_of_one_server_keep_their_own_connections`].)
#[test]
fn receive_for_counts_the_messages_pushed() {
    let (bursts, ticking) = (ws_server(None, &[]), ws_server(None, &[]));
    let targets = target(
        "burst",
        &base(&bursts, None).0,
        &format!("/burst?n={BURST}"),
        "      send: go\n      receive_for: 300ms\n",
        "",
    ) + &target(
        "ticks",
        &base(&ticking, None).0,
        "/ticks?ms=20",
        "      receive_for: 500ms\n",
        "",
    );
    let dir = tempfile::tempdir().unwrap();
    let _turn = turn();
    let yaml = spec("5s", &targets, "  connections: 1\n  requests: 8\n");
    let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
    assert_eq!(ran.result["total"]["errors"], 0, "{}", ran.result["total"]);

    let burst = ran.target("burst");
    let requests = u64_at(burst, "/requests");
    assert!(requests >= 2, "{burst}");
    let messages = &burst["messages"];
    assert_eq!(u64_at(messages, "/sent"), requests, "{messages}");
    assert_eq!(
        u64_at(messages, "/received"),
        requests * BURST,
        "{messages}"
    );
    assert_eq!(u64_at(messages, "/stream_duration/count"), requests);
    let first = u64_at(burst, "/latency_us/p50_us");
    assert!(
        first < 200_000,
        "{first} us: to the first message, not the window"
    );
    let whole = u64_at(messages, "/stream_duration/p50_us");
    assert!(whole >= 300_000, "{whole} us: the window");

    let ticks = ran.target("ticks");
    let requests = u64_at(ticks, "/requests");
    let messages = &ticks["messages"];
    assert_eq!(u64_at(messages, "/sent"), 0, "{messages}");
    // About 25 ticks in each 500 ms window, and the ticks queued while the virtual user was
    // on the other target count in the next window: at least 10 a window, at most the 50 a
    // second the server sends over the whole run (give or take a loaded machine's timers).
    let received = u64_at(messages, "/received");
    let run_s = ran.result["duration_s"].as_f64().expect("duration_s");
    let most = (run_s * 50.0 * 1.2) as u64 + 5;
    assert!(
        (requests * 10..=most).contains(&received),
        "{received} ticks in {requests} windows of 500 ms, in {run_s} s"
    );
}

/// A server that pings every 50 ms and closes a connection whose pong is 200 ms late (with
/// 1011): replies that take 300 ms each wait through several pings, and the connection lives
/// on, because the client answers them.
#[test]
fn pings_are_answered_and_the_connection_survives() {
    let server = ws_server(None, &["--ping-interval", "0.05", "--ping-timeout", "0.2"]);
    let targets = target(
        "slow",
        &format!("ws://{}", server.addr),
        "/echo?delay=300",
        "      send: hello\n",
        "",
    );
    let dir = tempfile::tempdir().unwrap();
    let _turn = turn();
    let yaml = spec("2s", &targets, "  connections: 1\n  duration: 1500ms\n");
    let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
    let slow = ran.target("slow");
    assert_eq!(u64_at(slow, "/errors"), 0, "{}", slow["errors_by_code"]);
    assert!(u64_at(slow, "/responses") >= 3, "{slow}");
    assert_eq!(u64_at(slow, "/phases_us/connections_opened"), 1, "{slow}");
}

/// The measured time of every hostile run.
const HOSTILE_DURATION: Duration = Duration::from_secs(1);
/// The request timeout of every hostile run.
const HOSTILE_TIMEOUT: Duration = Duration::from_millis(400);
/// Time to start the process and write the result, on a loaded 2-core machine.
const ALLOWANCE: Duration = Duration::from_secs(2);

/// Hostile answers, each in a run of [`HOSTILE_DURATION`] with [`HOSTILE_TIMEOUT`] per
/// request: a close with 1011 after the first message, silence, and a message over
/// `max_message_bytes` (the client closes with 1009). Each run ends in time without a panic,
/// fails its error-rate SLO (exit 1), and counts its failures as the one kind (and code).
#[test]
fn hostile_websocket_answers_are_counted_by_kind_and_bounded_in_time() {
    let cases: [(&str, &str, &str, Option<&str>); 3] = [
        (
            "/close?code=1011",
            "",
            "ws_closed",
            Some("ws_closed INTERNAL_ERROR (1011)"),
        ),
        ("/silent", "", "timeout", None),
        (
            "/big?size=5000",
            "      max_message_bytes: 1000\n",
            "ws_closed",
            Some("ws_closed MESSAGE_TOO_BIG (1009)"),
        ),
    ];
    let server = ws_server(None, &[]);
    let mut failures = Vec::new();
    for (path, ws, kind, code) in cases {
        let targets = target(
            "t",
            &format!("ws://{}", server.addr),
            path,
            &format!("      send: hello\n{ws}"),
            "",
        );
        let yaml = spec(
            &format!("{}ms", HOSTILE_TIMEOUT.as_millis()),
            &targets,
            &format!(
                "  connections: 2\n  duration: {}ms\n  think_time: 10ms\nslo:\n  errors: [\"rate < 1%\"]\n",
                HOSTILE_DURATION.as_millis()
            ),
        );
        let dir = tempfile::tempdir().unwrap();
        let _turn = turn();
        let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
        let bound = HOSTILE_DURATION + HOSTILE_TIMEOUT + ALLOWANCE;
        if let Some(why) = ran.hostile_problem(kind, code, bound) {
            failures.push(format!("{path}: {why}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
