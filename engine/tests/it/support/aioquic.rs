//! aioquic (PyPI), an HTTP/3 implementation nobody here wrote: installed once per test binary
//! into a virtual environment under the target directory, and its server (tests/h3/server.py)
//! started on loopback for `protocol: h3` runs to load.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use super::TestPki;

/// The aioquic release installed.
pub const AIOQUIC: &str = "1.7.2";

/// The release of PyPI's `h2` (the HTTP/2 library of tests/h2/server.py) installed beside it.
pub const H2: &str = "4.3.0";

/// The releases of grpcio and grpcio-tools (gRPC's Python server and its code generator,
/// `python -m grpc_tools.protoc`) installed beside them: a gRPC peer nobody here wrote.
pub const GRPCIO: &str = "1.85.1";

/// The release of `websockets` installed beside them: a WebSocket peer nobody here wrote.
pub const WEBSOCKETS: &str = "17.4";

/// How long the server may take to print its listening line.
pub const AIOQUIC_START_TIMEOUT: Duration = Duration::from_secs(10);

/// The Python of a virtual environment with aioquic [`AIOQUIC`], h2 [`H2`], grpcio and
/// grpcio-tools [`GRPCIO`] and websockets [`WEBSOCKETS`], made once (the first test that asks;
/// the others wait) in `target/ci-tools/aioquic`; panics with pip's output on failure.
pub fn pypi_python() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _turn = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).parent().unwrap();
    let venv = target.join("ci-tools/aioquic");
    let python = venv.join("bin/python");
    let installed = Command::new(&python)
        .args([
            "-c",
            "import aioquic, h2, grpc, grpc_tools, websockets; \
             print(aioquic.__version__, h2.__version__, grpc.__version__, websockets.__version__)",
        ])
        .output()
        .is_ok_and(|out| {
            String::from_utf8_lossy(&out.stdout).trim()
                == format!("{AIOQUIC} {H2} {GRPCIO} {WEBSOCKETS}")
        });
    if !installed {
        let venv_made = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .expect("python3 runs");
        assert!(venv_made.success(), "python3 -m venv {}", venv.display());
        let pip = Command::new(venv.join("bin/pip"))
            .args([
                "install",
                "-q",
                &format!("aioquic=={AIOQUIC}"),
                &format!("h2=={H2}"),
                &format!("grpcio=={GRPCIO}"),
                &format!("grpcio-tools=={GRPCIO}"),
                &format!("websockets=={WEBSOCKETS}"),
            ])
            .output()
            .expect("pip runs");
        assert!(
            pip.status.success(),
            "{}",
            String::from_utf8_lossy(&pip.stderr)
        );
    }
    python
}

/// A child process killed (and reaped) on drop, even when an assertion fails.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// tests/h3/server.py on 127.0.0.1, any free UDP port, with `pki`'s server certificate:
/// the process (killed on drop) and its address.
pub fn aioquic_server(pki: &TestPki) -> (Killed, SocketAddr) {
    aioquic_server_with(pki, &[])
}

/// [`aioquic_server`] with more arguments for server.py (e.g. `--idle-timeout 1`).
pub fn aioquic_server_with(pki: &TestPki, args: &[&str]) -> (Killed, SocketAddr) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/h3/server.py");
    let mut child = Killed(
        Command::new(pypi_python())
            .arg(script)
            .arg("--cert")
            .arg(pki.path("server.pem"))
            .arg("--key")
            .arg(pki.path("server.key"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("server.py starts"),
    );
    let addr = listening_addr(&mut child, "aioquic server: listening on udp://");
    (child, addr)
}

/// The address a Python test server (tests/h3/server.py, tests/h2/server.py) prints on its
/// first line after `prefix`; panics when it prints something else or nothing within
/// [`AIOQUIC_START_TIMEOUT`].
pub fn listening_addr(child: &mut Killed, prefix: &str) -> SocketAddr {
    let stdout = child.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(AIOQUIC_START_TIMEOUT)
        .expect("server.py prints its address in time");
    line.trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("unexpected line from server.py: {line:?}"))
        .parse()
        .expect("an address")
}
