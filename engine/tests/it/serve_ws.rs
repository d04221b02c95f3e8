//! `loadgate serve`'s WebSocket echo at `/ws/echo` answering a client nobody here wrote:
//! `websockets` (PyPI), over cleartext and TLS.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

use crate::serve_grpc::start_serve_with;
use crate::support::{TestPki, pypi_python};

/// The websockets client: echo, ping, delay, size, close and a refused query against the base
/// URL argv[1] (`ws://` or `wss://`, trusting the CA argv[2] for `localhost`), printing what
/// it saw as one JSON object.
const CLIENT: &str = r#"
import asyncio, json, ssl, sys, time
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

base = sys.argv[1]
extra = {}
if len(sys.argv) > 2:
    extra = {"ssl": ssl.create_default_context(cafile=sys.argv[2]),
             "server_hostname": "localhost"}

async def main():
    out = {}
    async with connect(base + "/ws/echo", **extra) as ws:
        await ws.send("hello")
        out["text"] = await ws.recv()
        await ws.send(b"\x00\x01\xff")
        out["binary"] = list(await ws.recv())
        pong = await ws.ping()
        out["pong_s"] = await asyncio.wait_for(pong, 5)
    async with connect(base + "/ws/echo?size=5&delay=200ms", **extra) as ws:
        started = time.monotonic()
        await ws.send("hi")
        out["size"] = await ws.recv()
        out["delay_ms"] = (time.monotonic() - started) * 1000
    async with connect(base + "/ws/echo?close=1011", **extra) as ws:
        await ws.send("bye")
        out["before_close"] = await ws.recv()
        try:
            await asyncio.wait_for(ws.recv(), 5)
            out["close"] = None
        except ConnectionClosed as e:
            out["close"] = [e.rcvd.code, e.rcvd.reason]
    try:
        async with connect(base + "/ws/echo?sise=1", **extra):
            out["bad"] = None
    except InvalidStatus as e:
        out["bad"] = e.response.status_code
    print(json.dumps(out))

asyncio.run(main())
"#;

/// Runs [`CLIENT`] against `base` (trusting `ca` when given) and returns its JSON.
fn websockets_client(base: &str, ca: Option<&Path>) -> serde_json::Value {
    let mut command = Command::new(pypi_python());
    command.args(["-c", CLIENT, base]);
    if let Some(ca) = ca {
        command.arg(ca);
    }
    let out = command.output().expect("the websockets client runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the client prints JSON")
}

/// What the client must have seen, over either transport.
fn check_echo(seen: &serde_json::Value) {
    assert_eq!(seen["text"], "hello", "{seen}");
    assert_eq!(seen["binary"], serde_json::json!([0, 1, 255]), "{seen}");
    assert!(seen["pong_s"].as_f64().is_some(), "a pong: {seen}");
    assert_eq!(seen["size"], "xxxxx", "{seen}");
    assert!(seen["delay_ms"].as_f64().unwrap() >= 200.0, "{seen}");
    assert_eq!(seen["before_close"], "bye", "{seen}");
    assert_eq!(
        seen["close"],
        serde_json::json!([1011, "closed as asked"]),
        "{seen}"
    );
    assert_eq!(seen["bad"], 400, "{seen}");
}

fn base(scheme: &str, addr: SocketAddr) -> String {
    format!("{scheme}://{addr}")
}

#[test]
fn websockets_client_gets_the_echo_over_cleartext() {
    let (_server, addr) = start_serve_with(&[], "http");
    check_echo(&websockets_client(&base("ws", addr), None));
}

#[test]
fn websockets_client_gets_the_echo_over_tls() {
    let pki = TestPki::generate();
    let (cert, key) = (pki.path("server.pem"), pki.path("server.key"));
    let args = [
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let (_server, addr) = start_serve_with(&args, "https");
    check_echo(&websockets_client(
        &base("wss", addr),
        Some(&pki.path("ca.pem")),
    ));
}
