//! A Python HTTP/2 server on the `h2` library from PyPI (tests/h2/server.py), a server nobody
//! here wrote, started on a free loopback port: its stream limit, its delay and its status are
//! chosen by the test; it can speak HTTP/1.1 instead (`--h1`).

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use super::Killed;

/// tests/h2/server.py on 127.0.0.1, any free TCP port, with `args` (e.g. `--max-streams 1`,
/// `--delay-ms 10`, `--status 700`, `--h1`): the process (killed on drop) and its address.
/// Runs on the test virtual environment's Python ([`super::pypi_python`]), which has `h2`.
pub fn pyh2_server(args: &[&str]) -> (Killed, SocketAddr) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/h2/server.py");
    let mut child = Killed(
        Command::new(super::pypi_python())
            .arg(script)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python runs tests/h2/server.py"),
    );
    let addr = super::listening_addr(&mut child, "h2 server: listening on tcp://");
    (child, addr)
}
