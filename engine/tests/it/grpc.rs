//! `protocol: grpc` through the `loadgate` binary against gRPC servers nobody here wrote,
//! started by the tests on loopback (tests/peers/): grpcio's server of examples/echo.proto,
//! with the stubs `grpc_tools.protoc` generates at test time, over h2c and TLS; and servers
//! that misbehave on purpose (grpcio's wrong message type, silence, failing statuses and
//! deadlines; a server on PyPI's `h2` that resets streams, truncates a message or leaves out
//! `grpc-status`). Every assertion reads the result JSON the run wrote; every hostile run is
//! bounded in time.

use std::time::Duration;

use crate::support::{
    Ran, TestPki, check_counts, echo_proto, grpc_echo_server, grpc_h2_server, loadgate_run, turn,
    u64_at,
};

/// The most a run may take before the test kills it (runs are bounded far below this).
const KILL_AFTER: Duration = Duration::from_secs(30);

/// SayRequest `{text: "hello", size: 16}` on the wire: `0a 05 hello` and `18 10`.
const SAY_REQUEST_BYTES: u64 = 9;
/// SayReply `{text: "hello", sequence: 1, padding: 16 x}`: 7 + 2 + 18 bytes.
const SAY_REPLY_BYTES: u64 = 27;
/// SayReply `{text: "s", sequence: N (< 128)}`: 3 + 2 bytes.
const STREAM_REPLY_BYTES: u64 = 5;
/// The replies per Stream call asked for (`count`).
const STREAM_COUNT: u64 = 4;
/// The `delay_ms` before each of them.
const STREAM_DELAY_MS: u64 = 50;

/// A spec named `grpc` in `dir` (with a copy of examples/echo.proto beside it): `targets`
/// (YAML list items, indented by 2) with `load`, every request bounded by `timeout`.
fn spec(dir: &std::path::Path, timeout: &str, targets: &str, load: &str) -> String {
    std::fs::copy(echo_proto(), dir.join("echo.proto")).expect("echo.proto is copied");
    format!(
        "version: 1\nname: grpc\ndefaults:\n  timeout: {timeout}\ntargets:\n{targets}load:\n{load}"
    )
}

/// A target item named `name` calling `method` (`Say`, `Stream`) of the echo service at
/// `url` with `message` (a JSON text); `more` adds fields of the target (indented by 4) and
/// `grpc` fields of its `grpc:` (indented by 6).
fn target(name: &str, url: &str, method: &str, message: &str, grpc: &str, more: &str) -> String {
    format!(
        "  - name: {name}\n    url: {url}\n    grpc:\n      proto: [echo.proto]\n      \
         method: loadgate.echo.v1.Echo/{method}\n      message: '{message}'\n{grpc}{more}"
    )
}

/// The `tls:` of a target that trusts `pki`'s CA (indented by 4).
fn trust(pki: &TestPki) -> String {
    format!(
        "    tls:\n      ca_file: {}\n",
        pki.path("ca.pem").display()
    )
}

/// Unary Say and server-streaming Stream against grpcio, over h2c and over TLS (ALPN h2,
/// the server's certificate checked against the test CA): every call succeeds; messages and
/// their payload bytes are counted exactly; a stream's latency runs to its first reply and
/// its duration to its end; a `json` check reads the decoded reply (one that should pass, one
/// that should fail).
#[test]
fn grpcio_answers_unary_and_streaming_calls_over_h2c_and_tls() {
    let pki = TestPki::generate();
    for tls in [None, Some(&pki)] {
        let server = grpc_echo_server("echo", tls);
        let (scheme, trusted) = match tls {
            Some(pki) => ("https", trust(pki)),
            None => ("http", String::new()),
        };
        let url = format!("{scheme}://127.0.0.1:{}", server.addr.port());
        let checks = format!(
            "{trusted}    checks:\n      - {{ name: hello, json: /text, equals: hello }}\n\
             \x20     - {{ name: bye, json: /text, equals: bye }}\n"
        );
        let targets = target(
            "say",
            &url,
            "Say",
            r#"{"text": "hello", "size": 16}"#,
            "      deadline: 2s\n",
            &checks,
        ) + &target(
            "stream",
            &url,
            "Stream",
            &format!(r#"{{"text": "s", "count": {STREAM_COUNT}, "delay_ms": {STREAM_DELAY_MS}}}"#),
            "",
            &trusted,
        );
        let dir = tempfile::tempdir().unwrap();
        let _turn = turn();
        let yaml = spec(
            dir.path(),
            "5s",
            &targets,
            "  connections: 4\n  requests: 60\n",
        );
        let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
        let at = if tls.is_some() { "TLS" } else { "h2c" };
        assert_eq!(
            ran.result["total"]["errors"], 0,
            "{at}: {}",
            ran.result["total"]
        );
        assert_says(&ran, tls.is_some());
        assert_streams(&ran);
    }
}

/// The unary target of [`grpcio_answers_unary_and_streaming_calls_over_h2c_and_tls`].
fn assert_says(ran: &Ran, tls: bool) {
    let say = ran.target("say");
    let requests = u64_at(say, "/requests");
    assert!(requests > 10, "{say}");
    assert_eq!(u64_at(say, "/responses"), requests, "{say}");
    assert!(u64_at(say, "/latency_us/p50_us") > 0, "{say}");
    let messages = &say["messages"];
    assert_eq!(messages["protocol"], "grpc", "{say}");
    assert_eq!(u64_at(messages, "/sent"), requests, "{messages}");
    assert_eq!(u64_at(messages, "/received"), requests, "{messages}");
    assert_eq!(
        u64_at(messages, "/bytes_sent"),
        requests * SAY_REQUEST_BYTES
    );
    assert_eq!(
        u64_at(messages, "/bytes_received"),
        requests * SAY_REPLY_BYTES
    );
    assert_eq!(
        check_counts(say, "hello"),
        (requests, 0),
        "the reply is decoded"
    );
    assert_eq!(
        check_counts(say, "bye"),
        (0, requests),
        "a check that must fail"
    );
    let transport = &say["transport"];
    assert_eq!(transport["protocol"], "h2", "{transport}");
    assert_eq!(transport.get("tls").is_some_and(|t| !t.is_null()), tls);
}

/// The streaming target: `STREAM_COUNT` replies, `STREAM_DELAY_MS` apart, per call.
fn assert_streams(ran: &Ran) {
    let stream = ran.target("stream");
    let requests = u64_at(stream, "/requests");
    assert!(requests > 10, "{stream}");
    assert_eq!(u64_at(stream, "/responses"), requests, "{stream}");
    let messages = &stream["messages"];
    assert_eq!(u64_at(messages, "/sent"), requests, "{messages}");
    assert_eq!(u64_at(messages, "/received"), requests * STREAM_COUNT);
    assert_eq!(
        u64_at(messages, "/bytes_received"),
        requests * STREAM_COUNT * STREAM_REPLY_BYTES
    );
    // The latency runs to the first reply (one delay), the stream to the last (four).
    let first = u64_at(stream, "/latency_us/p50_us");
    assert!(
        (STREAM_DELAY_MS * 1000..STREAM_DELAY_MS * 1000 * 3).contains(&first),
        "latency {first} us: to the first of the stream's replies"
    );
    let whole = u64_at(messages, "/stream_duration/p50_us");
    assert!(
        whole >= STREAM_COUNT * STREAM_DELAY_MS * 1000,
        "stream {whole} us: to its last reply"
    );
    assert_eq!(u64_at(messages, "/stream_duration/count"), requests);
}

/// A flow against grpcio: the first step's reply gives `{{tok}}` (extracted by JSON pointer
/// from the decoded message), which the second step's message carries and its check finds
/// in the echo.
#[test]
fn a_flow_extracts_from_a_grpc_reply_into_the_next_step() {
    let server = grpc_echo_server("echo", None);
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(echo_proto(), dir.path().join("echo.proto")).unwrap();
    let step = |name: &str, message: &str, more: &str| {
        format!(
            "      - name: {name}\n        url: http://{}\n        grpc:\n          proto: [echo.proto]\n          \
             method: loadgate.echo.v1.Echo/Say\n          message: '{message}'\n{more}",
            server.addr
        )
    };
    let yaml = format!(
        "version: 1\nname: grpc-flow\ndefaults:\n  timeout: 5s\n\
         flows:\n  - name: j\n    steps:\n{}{}load:\n  connections: 2\n  requests: 20\n",
        step(
            "first",
            r#"{"text": "tok-{{vu}}"}"#,
            "        extract:\n          - { var: tok, json: /text }\n",
        ),
        step(
            "second",
            r#"{"text": "again {{tok}}"}"#,
            "        checks:\n          - { name: carried, json: /text, matches: '^again tok-[0-9]+$' }\n",
        ),
    );
    let _turn = turn();
    let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
    assert_eq!(ran.result["total"]["errors"], 0, "{}", ran.result["total"]);
    let second = ran.target("j/second");
    let requests = u64_at(second, "/requests");
    assert!(requests >= 10, "{second}");
    assert_eq!(check_counts(second, "carried"), (requests, 0), "{second}");
    assert_eq!(u64_at(ran.target("j/first"), "/responses"), requests);
}

/// `load.streams` calls in flight on each HTTP/2 connection: 8 calls of 200 ms each on one
/// connection give about 40 answers a second; one call at a time would give 5.
#[test]
fn grpc_calls_share_a_connection_as_streams() {
    let server = grpc_echo_server("echo", None);
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}", server.addr);
    let yaml = spec(
        dir.path(),
        "5s",
        &target(
            "slow",
            &url,
            "Say",
            r#"{"text": "x", "delay_ms": 200}"#,
            "",
            "",
        ),
        "  connections: 1\n  streams: 8\n  duration: 1s\n",
    );
    let _turn = turn();
    let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
    let slow = ran.target("slow");
    assert_eq!(u64_at(slow, "/errors"), 0, "{slow}");
    let responses = u64_at(slow, "/responses");
    assert!(responses >= 20, "{responses} calls in 1 s: not concurrent");
    assert_eq!(u64_at(slow, "/phases_us/connections_opened"), 1, "{slow}");
}

/// The measured time of every hostile run.
const HOSTILE_DURATION: Duration = Duration::from_secs(1);
/// The request timeout of every hostile run.
const HOSTILE_TIMEOUT: Duration = Duration::from_millis(400);
/// Time to start the process, plan (compile echo.proto) and write the result, on a loaded
/// 2-core machine.
const ALLOWANCE: Duration = Duration::from_secs(2);

/// One misbehaving server and what the run must make of it.
struct Case {
    name: &'static str,
    /// The peer: grpcio's in a mode (`wrong-type`, `silent`, `echo`) or h2's (`h2:MODE`).
    peer: &'static str,
    /// The method called: `Say` or `Stream`.
    method: &'static str,
    /// The message of each call (JSON).
    message: &'static str,
    /// More of `grpc:` (indented by 6).
    grpc: &'static str,
    /// The error kind every failed call must be counted as.
    kind: &'static str,
    /// A key the run must count in `errors_by_code`, if any.
    code: Option<&'static str>,
    /// Whether the failed calls got a response (a gRPC status), counted with its latency
    /// (`Some(true)`), or none (`Some(false)`); `None`: either.
    answered: Option<bool>,
}

const CASES: [Case; 10] = [
    Case {
        name: "resets every stream",
        peer: "h2:reset",
        method: "Say",
        message: r#"{"text": "x"}"#,
        grpc: "",
        kind: "stream_reset",
        code: Some("stream_reset INTERNAL_ERROR (0x2)"),
        answered: Some(false),
    },
    Case {
        name: "truncates its message",
        peer: "h2:truncated",
        method: "Say",
        message: r#"{"text": "x"}"#,
        grpc: "",
        kind: "malformed",
        code: None,
        answered: None,
    },
    Case {
        name: "leaves out grpc-status",
        peer: "h2:no-status",
        method: "Say",
        message: r#"{"text": "x"}"#,
        grpc: "",
        kind: "grpc_unknown",
        code: None,
        answered: Some(true),
    },
    Case {
        name: "answers with another message type",
        peer: "wrong-type",
        method: "Say",
        message: r#"{"text": "x"}"#,
        grpc: "",
        kind: "malformed",
        code: None,
        answered: None,
    },
    Case {
        name: "answers a message over max_message_bytes",
        peer: "echo",
        method: "Say",
        message: r#"{"text": "x", "size": 2000}"#,
        grpc: "      max_message_bytes: 1000\n",
        kind: "grpc_resource_exhausted",
        code: None,
        answered: None,
    },
    Case {
        name: "never answers",
        peer: "silent",
        method: "Say",
        message: r#"{"text": "x"}"#,
        grpc: "",
        kind: "timeout",
        code: None,
        answered: Some(false),
    },
    Case {
        name: "never answers, within the call's deadline",
        peer: "silent",
        method: "Say",
        message: r#"{"text": "x"}"#,
        grpc: "      deadline: 100ms\n",
        kind: "grpc_deadline_exceeded",
        code: None,
        answered: Some(false),
    },
    Case {
        name: "fails with UNAVAILABLE",
        peer: "echo",
        method: "Say",
        message: r#"{"text": "x", "status": 14}"#,
        grpc: "",
        kind: "grpc_unavailable",
        code: None,
        answered: Some(true),
    },
    Case {
        name: "fails with UNAVAILABLE after streaming its replies",
        peer: "echo",
        method: "Stream",
        message: r#"{"text": "x", "count": 2, "status": 14}"#,
        grpc: "",
        kind: "grpc_unavailable",
        code: None,
        answered: Some(true),
    },
    Case {
        name: "answers after the deadline",
        peer: "echo",
        method: "Say",
        message: r#"{"text": "x", "delay_ms": 1000}"#,
        grpc: "      deadline: 100ms\n",
        kind: "grpc_deadline_exceeded",
        code: None,
        answered: None,
    },
];

/// Each misbehaving server in turn, for [`HOSTILE_DURATION`] with [`HOSTILE_TIMEOUT`] per
/// call: the run ends in time without a panic, failing its error-rate SLO (exit 1); every
/// failure is counted as the case's kind (with its code); calls answered by a status count as
/// responses, with their latency.
#[test]
fn hostile_grpc_servers_are_counted_by_kind_and_bounded_in_time() {
    let mut failures = Vec::new();
    for case in &CASES {
        if let Err(why) = hostile(case) {
            failures.push(format!("{}: {why}", case.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One row of [`hostile_grpc_servers_are_counted_by_kind_and_bounded_in_time`]: what went
/// wrong, if anything.
fn hostile(case: &Case) -> Result<(), String> {
    let server = match case.peer.strip_prefix("h2:") {
        Some(mode) => grpc_h2_server(mode),
        None => grpc_echo_server(case.peer, None),
    };
    let dir = tempfile::tempdir().unwrap();
    let url = format!("http://{}", server.addr);
    let yaml = spec(
        dir.path(),
        &format!("{}ms", HOSTILE_TIMEOUT.as_millis()),
        &target("t", &url, case.method, case.message, case.grpc, ""),
        &format!(
            "  connections: 2\n  duration: {}ms\n  think_time: 10ms\nslo:\n  errors: [\"rate < 1%\"]\n",
            HOSTILE_DURATION.as_millis()
        ),
    );
    let _turn = turn();
    let ran = loadgate_run(dir.path(), &yaml, KILL_AFTER);
    let bound = HOSTILE_DURATION + HOSTILE_TIMEOUT + ALLOWANCE;
    let t = ran.target("t");
    let errors = u64_at(t, "/errors");
    let responses = u64_at(t, "/responses");
    if let Some(problem) = ran.hostile_problem(case.kind, case.code, bound) {
        Err(problem)
    } else if case.answered == Some(true) && (responses != errors || t["latency_us"].is_null()) {
        Err(format!(
            "{responses} responses of {errors} failed calls, latency {}",
            t["latency_us"]
        ))
    } else if case.answered == Some(false) && responses != 0 {
        Err(format!(
            "{responses} responses, from a server that gave none"
        ))
    } else {
        Ok(())
    }
}
