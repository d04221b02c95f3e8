//! gRPC and WebSocket peers nobody here wrote, started on loopback for `protocol: grpc` and
//! `protocol: ws` runs (tests/peers/): grpcio's server of examples/echo.proto with the stubs
//! `grpc_tools.protoc` generates at test time, a misbehaving gRPC server on PyPI's `h2`, and a
//! server on `websockets`; and `loadgate run` of a spec against them, to its result JSON.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{Killed, TestPki, listening_addr, pypi_python};

/// A peer server: its process (killed on drop), its address, and the files it needs (the
/// generated stubs), removed on drop.
pub struct Peer {
    _process: Killed,
    _files: Option<tempfile::TempDir>,
    /// Where it listens (127.0.0.1).
    pub addr: SocketAddr,
}

/// examples/echo.proto, the service every gRPC peer here serves.
pub fn echo_proto() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/echo.proto")
}

fn peer_script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// Starts `python script args` and waits for its listening line (`prefix` + address).
fn start(script: &str, args: &[&std::ffi::OsStr], prefix: &str) -> (Killed, SocketAddr) {
    let mut child = Killed(
        Command::new(pypi_python())
            .arg(peer_script(script))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("python runs tests/peers/{script}: {e}")),
    );
    let addr = listening_addr(&mut child, prefix);
    (child, addr)
}

/// The certificate arguments (`--cert`, `--key`) of `pki`'s server certificate, if any.
fn cert_args(tls: Option<&TestPki>) -> Vec<std::ffi::OsString> {
    tls.map(|pki| {
        vec![
            "--cert".into(),
            pki.path("server.pem").into(),
            "--key".into(),
            pki.path("server.key").into(),
        ]
    })
    .unwrap_or_default()
}

/// tests/peers/grpc_echo.py (grpcio) in `mode` (`echo`, `wrong-type`, `silent`), over TLS
/// with `pki`'s server certificate when given, else h2c. Its stubs are generated first, by
/// `python -m grpc_tools.protoc` from examples/echo.proto.
pub fn grpc_echo_server(mode: &str, tls: Option<&TestPki>) -> Peer {
    let stubs = tempfile::Builder::new()
        .prefix("loadgate-grpc-stubs-")
        .tempdir()
        .expect("a temporary folder");
    let proto = echo_proto();
    let generated = Command::new(pypi_python())
        .args(["-m", "grpc_tools.protoc", "-I"])
        .arg(proto.parent().unwrap())
        .arg(format!("--python_out={}", stubs.path().display()))
        .arg(format!("--grpc_python_out={}", stubs.path().display()))
        .arg("echo.proto")
        .output()
        .expect("grpc_tools.protoc runs");
    assert!(
        generated.status.success(),
        "grpc_tools.protoc: {}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let mut args: Vec<std::ffi::OsString> = vec![
        "--stubs".into(),
        stubs.path().into(),
        "--mode".into(),
        mode.into(),
    ];
    args.extend(cert_args(tls));
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    let (process, addr) = start("grpc_echo.py", &args, "grpc server: listening on tcp://");
    Peer {
        _process: process,
        _files: Some(stubs),
        addr,
    }
}

/// tests/peers/grpc_h2.py (PyPI's `h2`, h2c) answering every call as `mode` says (`reset`,
/// `truncated`, `no-status`).
pub fn grpc_h2_server(mode: &str) -> Peer {
    let args = ["--mode".as_ref(), mode.as_ref()];
    let (process, addr) = start("grpc_h2.py", &args, "grpc h2 server: listening on tcp://");
    Peer {
        _process: process,
        _files: None,
        addr,
    }
}

/// tests/peers/ws_server.py (`websockets`) with `args` (`--ping-interval 0.05`,
/// `--subprotocol chat.v1`), over TLS with `pki`'s server certificate when given.
pub fn ws_server(tls: Option<&TestPki>, args: &[&str]) -> Peer {
    let mut all: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
    all.extend(cert_args(tls));
    let all: Vec<&std::ffi::OsStr> = all.iter().map(|a| a.as_os_str()).collect();
    let (process, addr) = start("ws_server.py", &all, "ws server: listening on tcp://");
    Peer {
        _process: process,
        _files: None,
        addr,
    }
}

/// What `loadgate run` left: its result JSON, exit code, stderr and wall time.
pub struct Ran {
    /// The result file, as JSON.
    pub result: serde_json::Value,
    /// The exit code (`None`: killed by a signal).
    pub exit: Option<i32>,
    /// What it printed on stderr.
    pub stderr: String,
    /// From start to exit.
    pub wall: Duration,
}

impl Ran {
    /// The target (or flow step, `flow/step`) named `name` in the result.
    pub fn target(&self, name: &str) -> &serde_json::Value {
        self.result["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no target {name} in {}", self.result["targets"]))
    }

    /// `errors_by_kind[kind]` of target `name` (0 when absent).
    pub fn errors_of(&self, name: &str, kind: &str) -> u64 {
        self.target(name)["errors_by_kind"][kind]
            .as_u64()
            .unwrap_or(0)
    }
}

/// Runs `loadgate run -q` on `yaml`, written as `dir/spec.yaml`, with `--out dir/result.json`;
/// kills it and panics past `limit`, or when it writes no result (with its stderr).
pub fn loadgate_run(dir: &Path, yaml: &str, limit: Duration) -> Ran {
    let spec = dir.join("spec.yaml");
    std::fs::write(&spec, yaml).expect("the spec is written");
    let out = dir.join("result.json");
    let started = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .arg("run")
        .arg("-q")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("loadgate runs");
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let status = super::wait_within(&mut child, limit, "loadgate run");
    let wall = started.elapsed();
    let stderr = reader.join().unwrap_or_default();
    let text = std::fs::read_to_string(&out).unwrap_or_else(|e| {
        panic!("no result ({e}), exit {status}; stderr: {stderr}\nspec:\n{yaml}")
    });
    Ran {
        result: serde_json::from_str(&text).expect("the result is JSON"),
        exit: status.code(),
        stderr,
        wall,
    }
}

/// The number at JSON pointer `pointer` in `value`; panics, naming it, when there is none.
pub fn u64_at(value: &Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no number at {pointer} in {value}"))
}

/// The result of the check of a result's `target` whose text holds `name`: (passed, failed).
pub fn check_counts(target: &Value, name: &str) -> (u64, u64) {
    let checks = target["checks"].as_array().expect("checks");
    let found = checks
        .iter()
        .find(|c| c["check"].as_str().is_some_and(|c| c.contains(name)))
        .unwrap_or_else(|| panic!("no check {name} in {checks:?}"));
    (u64_at(found, "/passed"), u64_at(found, "/failed"))
}

impl Ran {
    /// What is wrong with a run against a misbehaving peer, if anything: it should end within
    /// `bound` without a panic, fail its error-rate SLO (exit 1), and count every error of its
    /// target `t` as `kind` (and under the code key `code`, when given).
    pub fn hostile_problem(
        &self,
        kind: &str,
        code: Option<&str>,
        bound: Duration,
    ) -> Option<String> {
        let t = self.target("t");
        let errors = u64_at(t, "/errors");
        let counted = self.errors_of("t", kind);
        if self.stderr.contains("panicked") {
            Some(format!("a panic: {}", self.stderr))
        } else if self.exit != Some(1) {
            Some(format!(
                "exit {:?}, want 1 (the error SLO); {}",
                self.exit, self.stderr
            ))
        } else if self.wall > bound {
            Some(format!("took {:?}, more than {bound:?}", self.wall))
        } else if errors == 0 || counted != errors {
            Some(format!(
                "{errors} errors, {counted} of kind {kind}: {}",
                t["errors_by_kind"]
            ))
        } else if code.is_some_and(|key| t["errors_by_code"][key].as_u64() != Some(errors)) {
            Some(format!("codes {}, want {code:?}", t["errors_by_code"]))
        } else {
            None
        }
    }
}
