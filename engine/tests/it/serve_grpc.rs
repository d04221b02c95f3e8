//! `loadgate serve --grpc` answering a gRPC client nobody here wrote: grpcio's (PyPI), with its
//! stubs generated from examples/echo.proto by `python -m grpc_tools.protoc`, over cleartext
//! (h2c) and TLS (ALPN h2).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::support::{IO_TIMEOUT, Killed, TestPki, listening_addr, pypi_python};

/// The grpcio client: calls Say, Stream and failing calls on the server at argv[2] (stubs in
/// argv[1]; with argv[3], over TLS trusting that CA for the name `localhost`) and prints what
/// it saw as one JSON object.
const CLIENT: &str = r#"
import json, sys, time
sys.path.insert(0, sys.argv[1])
import grpc, echo_pb2, echo_pb2_grpc

target = sys.argv[2]
if len(sys.argv) > 3:
    creds = grpc.ssl_channel_credentials(open(sys.argv[3], "rb").read())
    channel = grpc.secure_channel(
        target, creds, options=[("grpc.ssl_target_name_override", "localhost")])
else:
    channel = grpc.insecure_channel(target)
stub = echo_pb2_grpc.EchoStub(channel)
Req = echo_pb2.SayRequest
out = {}

def code(call):
    try:
        call()
        return None
    except grpc.RpcError as e:
        return [e.code().value[0], e.details()]

started = time.monotonic()
r = stub.Say(Req(text="hello", size=10, delay_ms=200), timeout=10)
out["say"] = [r.text, r.sequence, len(r.padding), r.padding.decode()[:3]]
out["say_ms"] = (time.monotonic() - started) * 1000
out["stream"] = [[m.text, m.sequence] for m in stub.Stream(Req(text="s", count=4), timeout=10)]
out["stream_default"] = len(list(stub.Stream(Req(text="d"), timeout=10)))
out["failed"] = code(lambda: stub.Say(Req(text="no", status=5), timeout=10))
out["stream_failed"] = code(lambda: list(stub.Stream(Req(status=14), timeout=10)))
out["too_big"] = code(lambda: stub.Say(Req(text="x" * (5 << 20)), timeout=10))
out["bounds"] = code(lambda: stub.Say(Req(size=(4 << 20) + 1), timeout=10))
unknown = channel.unary_unary("/loadgate.echo.v1.Echo/Nope")
out["unknown"] = code(lambda: unknown(b"", timeout=10))
garbage = channel.unary_unary("/loadgate.echo.v1.Echo/Say")
out["garbage"] = code(lambda: garbage(b"\xff\xff\xff", timeout=10))
print(json.dumps(out))
"#;

/// Starts `loadgate serve` with `args` on a free loopback port: the process (killed on drop)
/// and its address, read from its first line (`listening on {scheme}://ADDR`).
pub fn start_serve_with(args: &[&str], scheme: &str) -> (Killed, SocketAddr) {
    let mut child = Killed(
        Command::new(env!("CARGO_BIN_EXE_loadgate"))
            .args(["serve", "--listen", "127.0.0.1:0", "--threads", "2"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("loadgate serve starts"),
    );
    let prefix = format!("loadgate serve: listening on {scheme}://");
    let addr = listening_addr(&mut child, &prefix);
    (child, addr)
}

/// Generates echo.proto's Python stubs into `dir` with grpc_tools' protoc.
fn generate_stubs(python: &Path, dir: &Path) {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let out = Command::new(python)
        .args(["-m", "grpc_tools.protoc", "-I"])
        .arg(&examples)
        .arg(format!("--python_out={}", dir.display()))
        .arg(format!("--grpc_python_out={}", dir.display()))
        .arg(examples.join("echo.proto"))
        .output()
        .expect("grpc_tools.protoc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs [`CLIENT`] against `addr` (over TLS trusting `ca` when given) and returns its JSON.
fn grpcio_client(addr: SocketAddr, ca: Option<&Path>) -> serde_json::Value {
    let python = pypi_python();
    let dir = tempfile::tempdir().unwrap();
    generate_stubs(&python, dir.path());
    let mut command = Command::new(&python);
    command
        .args(["-c", CLIENT])
        .arg(dir.path())
        .arg(addr.to_string());
    if let Some(ca) = ca {
        command.arg(ca);
    }
    let out = command.output().expect("the grpcio client runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the client prints JSON")
}

/// What the client must have seen, over either transport.
fn check_calls(seen: &serde_json::Value) {
    assert_eq!(
        seen["say"],
        serde_json::json!(["hello", 1, 10, "xxx"]),
        "{seen}"
    );
    assert!(seen["say_ms"].as_f64().unwrap() >= 200.0, "{seen}");
    assert_eq!(
        seen["stream"],
        serde_json::json!([["s", 1], ["s", 2], ["s", 3], ["s", 4]])
    );
    assert_eq!(seen["stream_default"], 3);
    assert_eq!(seen["failed"], serde_json::json!([5, "failed as asked"]));
    assert_eq!(
        seen["stream_failed"],
        serde_json::json!([14, "failed as asked"])
    );
    assert_eq!(seen["too_big"][0], 8, "RESOURCE_EXHAUSTED: {seen}");
    assert_eq!(seen["bounds"][0], 3, "INVALID_ARGUMENT: {seen}");
    assert!(
        seen["bounds"][1].as_str().unwrap().starts_with("size"),
        "{seen}"
    );
    assert_eq!(seen["unknown"][0], 12, "UNIMPLEMENTED: {seen}");
    assert_eq!(seen["garbage"][0], 13, "INTERNAL: {seen}");
}

#[test]
fn grpcio_client_calls_the_echo_service_over_h2c() {
    let (_server, addr) = start_serve_with(&["--grpc"], "http");
    check_calls(&grpcio_client(addr, None));
}

#[test]
fn grpcio_client_calls_the_echo_service_over_tls() {
    let pki = TestPki::generate();
    let (cert, key) = (pki.path("server.pem"), pki.path("server.key"));
    let args = [
        "--grpc",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ];
    let (_server, addr) = start_serve_with(&args, "https");
    check_calls(&grpcio_client(addr, Some(&pki.path("ca.pem"))));
}

#[test]
fn without_grpc_a_grpc_request_is_plain_http() {
    let (_server, addr) = start_serve_with(&[], "http");
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    stream
        .write_all(
            b"POST /loadgate.echo.v1.Echo/Say HTTP/1.1\r\nHost: x\r\n\
              content-type: application/grpc\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
        )
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\nok\n"), "{response}");
    assert!(!response.contains("grpc-status"), "{response}");
}
