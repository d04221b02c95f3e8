//! The message parser on chunks cut every way, and gRPC calls run for real against an HTTP/2
//! server (the `h2` crate's, h2c) that answers as each request's `x-mode` asks: a reply split
//! across DATA frames, a failing status in the trailers, a trailers-only error, an HTTP error,
//! an oversized message, a server stream.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::*;
use crate::measure::TargetStats;

/// `payload` with its gRPC prefix (not compressed).
fn framed(payload: &[u8]) -> Vec<u8> {
    let mut out = vec![0];
    out.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payloads `chunks` carry, read in turn.
fn read_all(chunks: &[&[u8]], max: usize) -> Result<(Vec<Vec<u8>>, bool), ErrorKind> {
    let mut frames = Frames::default();
    let mut got = Vec::new();
    for chunk in chunks {
        frames.read(chunk, max, |p| {
            got.push(p.to_vec());
            Ok(())
        })?;
    }
    Ok((got, frames.is_partial()))
}

#[test]
fn messages_are_read_across_chunks_and_several_from_one_chunk() {
    let mut wire = framed(b"first");
    wire.extend(framed(b""));
    wire.extend(framed(b"third message"));
    let want = vec![b"first".to_vec(), Vec::new(), b"third message".to_vec()];
    // Every split into two chunks, and one byte per chunk.
    for cut in 0..=wire.len() {
        let (a, b) = wire.split_at(cut);
        assert_eq!(
            read_all(&[a, b], 100),
            Ok((want.clone(), false)),
            "cut {cut}"
        );
    }
    let bytes: Vec<&[u8]> = wire.chunks(1).collect();
    assert_eq!(read_all(&bytes, 100), Ok((want, false)));
    // A stream that stops inside a message (its prefix or its payload) is partial.
    assert_eq!(read_all(&[&wire[..3]], 100), Ok((Vec::new(), true)));
    assert_eq!(read_all(&[&wire[..7]], 100), Ok((Vec::new(), true)));
}

#[test]
fn an_oversized_or_compressed_message_ends_the_call() {
    let wire = framed(&[7; 11]);
    // The prefix alone tells: no payload is awaited.
    assert_eq!(
        read_all(&[&wire[..5]], 10),
        Err(ErrorKind::GrpcResourceExhausted)
    );
    assert_eq!(
        read_all(&[&wire[..2], &wire[2..5]], 10),
        Err(ErrorKind::GrpcResourceExhausted)
    );
    assert_eq!(read_all(&[&wire], 11).map(|r| r.0.len()), Ok(1));
    let mut compressed = framed(b"x");
    compressed[0] = 1;
    assert_eq!(read_all(&[&compressed], 10), Err(ErrorKind::Malformed));
    let mut after = framed(b"ok");
    after.extend(&compressed);
    assert_eq!(read_all(&[&after], 10), Err(ErrorKind::Malformed));
}

#[test]
fn an_http_status_maps_to_a_grpc_status_as_grpc_documents() {
    let names: Vec<&str> = [400, 401, 403, 404, 429, 502, 503, 504, 500, 302]
        .iter()
        .map(|&s| crate::plan::grpc::STATUS_NAMES[status_of_http(s) as usize])
        .collect();
    assert_eq!(
        names,
        [
            "INTERNAL",
            "UNAUTHENTICATED",
            "PERMISSION_DENIED",
            "UNIMPLEMENTED",
            "UNAVAILABLE",
            "UNAVAILABLE",
            "UNAVAILABLE",
            "UNAVAILABLE",
            "UNKNOWN",
            "UNKNOWN"
        ]
    );
}

/// `SayReply { text }` as protobuf: field 1, length-delimited.
fn reply(text: &str) -> Vec<u8> {
    let mut out = vec![0x0a, text.len() as u8];
    out.extend_from_slice(text.as_bytes());
    out
}

/// What the server received: each request's path and its body (the gRPC message, framed),
/// and whether it had a `content-length`.
type Log = Arc<Mutex<Vec<(String, Vec<u8>, bool)>>>;

/// Starts the server on a free loopback port, on a thread and runtime of its own (it lives as
/// long as the test process).
fn server() -> (SocketAddr, Log) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let addr = listener.local_addr().unwrap();
    let log: Log = Arc::default();
    let for_server = log.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            while let Ok((socket, _)) = listener.accept().await {
                let log = for_server.clone();
                tokio::spawn(async move {
                    let mut conn = h2::server::handshake(socket).await.unwrap();
                    while let Some(Ok((request, respond))) = conn.accept().await {
                        tokio::spawn(answer(request, respond, log.clone()));
                    }
                });
            }
        });
    });
    (addr, log)
}

fn head(status: u16, grpc_status: Option<&str>) -> http::Response<()> {
    let mut builder = http::Response::builder()
        .status(status)
        .header("content-type", "application/grpc");
    if let Some(code) = grpc_status {
        builder = builder.header("grpc-status", code);
    }
    builder.body(()).unwrap()
}

fn trailers(code: &str, message: &str) -> http::HeaderMap {
    let mut map = http::HeaderMap::new();
    map.insert("grpc-status", code.parse().unwrap());
    if !message.is_empty() {
        map.insert("grpc-message", message.parse().unwrap());
    }
    map
}

/// Answers one call as its `x-mode` header asks.
async fn answer(
    request: http::Request<h2::RecvStream>,
    mut respond: h2::server::SendResponse<Bytes>,
    log: Log,
) {
    let (parts, mut body) = request.into_parts();
    let mut received = Vec::new();
    while let Some(Ok(data)) = body.data().await {
        let _ = body.flow_control().release_capacity(data.len());
        received.extend_from_slice(&data);
    }
    let length = parts.headers.contains_key("content-length");
    log.lock()
        .unwrap()
        .push((parts.uri.path().to_string(), received, length));
    let mode = parts
        .headers
        .get("x-mode")
        .map_or("", |v| v.to_str().unwrap());
    let message = framed(&reply("hi"));
    match mode {
        "only" => {
            let _ = respond.send_response(head(200, Some("5")), true);
        }
        "http503" => {
            let mut s = respond.send_response(head(503, None), false).unwrap();
            let _ = s.send_data(Bytes::from_static(b"busy"), true);
        }
        "big" => {
            let mut s = respond.send_response(head(200, None), false).unwrap();
            let _ = s.send_data(framed(&[b'x'; 64]).into(), false);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        "stream" => {
            let mut s = respond.send_response(head(200, None), false).unwrap();
            let mut three = framed(&reply("a"));
            three.extend(framed(&reply("b")));
            three.extend(framed(&reply("c")));
            let _ = s.send_data(three.into(), false);
            let _ = s.send_trailers(trailers("0", ""));
        }
        _ => {
            // A reply cut inside its prefix, the rest a moment later; the status asked.
            let mut s = respond.send_response(head(200, None), false).unwrap();
            let _ = s.send_data(Bytes::copy_from_slice(&message[..3]), false);
            tokio::time::sleep(Duration::from_millis(5)).await;
            let _ = s.send_data(Bytes::copy_from_slice(&message[3..]), false);
            let code = if mode == "unavailable" { "14" } else { "0" };
            let _ = s.send_trailers(trailers(code, "down"));
        }
    }
}

/// A target of a call of `method` (`Say` or `Stream`) at `addr`, its `x-mode` and the rest.
fn target(name: &str, addr: SocketAddr, mode: &str, rest: &str) -> String {
    let method = if mode == "stream" { "Stream" } else { "Say" };
    format!(
        "  - name: {name}\n    url: 'http://{addr}/'\n    headers: {{x-mode: {mode}}}\n    \
         grpc: {{proto: [echo.proto], method: loadgate.echo.v1.Echo/{method}, \
         message: '{{\"text\": \"hi\"}}'{rest}}}\n"
    )
}

/// Runs `targets` on 1 connection for `requests` requests; each target's stats.
fn run(targets: &str, requests: usize) -> Vec<TargetStats> {
    let yaml = format!(
        "version: 1\nname: grpc\ntargets:\n{targets}load:\n  connections: 1\n  \
         requests: {requests}\n"
    );
    let source = crate::spec::SourceSpec::parse(PathBuf::from("t.yaml"), yaml).unwrap();
    let spec = serde_json::from_value(source.value.clone()).unwrap();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let ctx = crate::plan::BuildContext {
        source: source.text.as_bytes(),
        spec_dir: &dir,
        var: &|_| None,
    };
    let plan = crate::plan::build(&spec, &ctx).unwrap_or_else(|e| panic!("{e:?}"));
    let output = super::super::execute(&plan, Arc::new(AtomicBool::new(false)), &mut |_| {});
    output.unwrap().targets
}

fn errors(stats: &TargetStats, kind: ErrorKind) -> u64 {
    stats.errors[kind as usize]
}

#[test]
fn a_status_in_the_trailers_or_the_headers_is_the_calls_outcome() {
    let (addr, log) = server();
    let one = |mode: &str, rest: &str| run(&target("t", addr, mode, rest), 1).remove(0);
    // The reply cut inside its prefix: one message, OK, its JSON and trailer checks pass.
    let checks = "\n    checks: [{json: /text, equals: hi}, {header: grpc-message, equals: down}]";
    let ok = run(
        &format!("{}{checks}\n", target("t", addr, "split", "").trim_end()),
        1,
    )
    .remove(0);
    assert_eq!(ok.status[200], 1);
    assert_eq!(ok.errors.iter().sum::<u64>(), 0);
    assert_eq!(
        ok.checks,
        vec![[1, 0], [1, 0]],
        "json and trailer checks pass"
    );
    assert_eq!(ok.messages.received, 1);
    assert_eq!(ok.messages.bytes_received, reply("hi").len() as u64);
    assert_eq!((ok.messages.sent, ok.messages.bytes_sent), (1, 4));
    // UNAVAILABLE in the trailers: the response counted with its latency, and the error.
    let down = one("unavailable", "");
    assert_eq!(errors(&down, ErrorKind::GrpcUnavailable), 1);
    assert_eq!(
        down.latency_us.len(),
        1,
        "the failed call's latency is recorded"
    );
    // Trailers-only NOT_FOUND, unless expected; HTTP 503 without grpc-status is UNAVAILABLE.
    let only = one("only", "");
    assert_eq!(errors(&only, ErrorKind::GrpcNotFound), 1);
    assert_eq!(only.latency_us.len(), 1);
    let expected = one("only", ", expect_status: [OK, NOT_FOUND]");
    assert_eq!(expected.errors.iter().sum::<u64>(), 0);
    let http = one("http503", "");
    assert_eq!(errors(&http, ErrorKind::GrpcUnavailable), 1);
    // A 64-byte message over a 10-byte limit ends the call at once.
    let big = one("big", ", max_message_bytes: 10");
    assert_eq!(errors(&big, ErrorKind::GrpcResourceExhausted), 1);
    assert_eq!(big.latency_us.len(), 0);
    // A templated message is encoded per request.
    let templated = target("t", addr, "split", "").replace("\"hi\"", "\"vu-{{vu}}\"");
    assert_eq!(run(&templated, 1)[0].errors.iter().sum::<u64>(), 0);
    let log = log.lock().unwrap();
    let sent: Vec<&[u8]> = log.iter().map(|(_, body, _)| &body[..]).collect();
    assert!(sent.contains(&&framed(&reply("hi"))[..]), "{sent:?}");
    let vu = log.last().unwrap().1.clone();
    assert!(
        vu.starts_with(&[0, 0, 0, 0]) && vu[7..].starts_with(b"vu-"),
        "{vu:?}"
    );
    assert_eq!(usize::from(vu[4]), vu.len() - PREFIX_BYTES);
    assert!(
        log.iter()
            .all(|(path, _, length)| { path == "/loadgate.echo.v1.Echo/Say" && !length })
    );
}

#[test]
fn a_server_stream_counts_its_messages_and_is_checked_as_an_array() {
    let (addr, _log) = server();
    let checks = "\n    checks: [{json: /2/text, equals: c}]";
    let targets = format!("{}{checks}\n", target("s", addr, "stream", "").trim_end());
    let stats = run(&targets, 2);
    let s = &stats[0];
    assert_eq!(s.errors.iter().sum::<u64>(), 0);
    assert_eq!(s.messages.received, 6);
    assert_eq!(s.messages.stream_duration_us.len(), 2);
    assert_eq!(s.checks, vec![[2, 0]]);
}
