//! Whole runs: a spec written to a folder and run in-process, the `loadgate` binary run to its
//! end or as `serve` on a free port, the committed result fixtures; and the test binary's one
//! turn to run load.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use loadgate::result::RunResult;
use loadgate::spec;

/// The load tests take turns, across the whole test binary: concurrent runs on a 2-core machine
/// would disturb each other's latency, timing and thread counts (each former test binary had a
/// lock of its own; `cargo test` ran the binaries one after another).
static TURN: Mutex<()> = Mutex::new(());

/// Takes the test binary's turn to run load; the turn ends when the guard drops.
pub fn turn() -> MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Validates `text` (written to `dir/spec.yaml`) and runs it to a result, in-process, as
/// [`super::run_yaml`] does.
pub fn run_spec_text(dir: &Path, text: &str) -> RunResult {
    let path = dir.join("spec.yaml");
    std::fs::write(&path, text).unwrap();
    let source = spec::SourceSpec::read(&path).unwrap();
    super::run_source(source)
}

/// Runs `loadgate serve` on a free loopback port with `threads` threads and waits (at most 10 s)
/// for its listening line: the child and the address it serves on.
pub fn start_serve(threads: &str) -> (Child, SocketAddr) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", threads])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run loadgate serve");
    let stdout = child.stdout.take().unwrap();
    let (line_tx, line_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = line_tx.send(line);
    });
    let line = match line_rx.recv_timeout(Duration::from_secs(10)) {
        Ok(line) => line,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("no listening line within 10 s");
        }
    };
    let addr: SocketAddr = line
        .trim_end()
        .strip_prefix("loadgate serve: listening on http://")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .expect("an address");
    assert!(addr.ip().is_loopback());
    assert_ne!(addr.port(), 0);
    (child, addr)
}

/// Waits for `child` to exit, at most `limit`; kills it and panics (naming `what`) past that.
pub fn wait_within(child: &mut Child, limit: Duration, what: &str) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The `loadgate` binary run with `args`, to its end.
pub fn loadgate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(args)
        .output()
        .expect("run loadgate")
}

/// A committed result fixture, `tests/fixtures/results/NAME`.
pub fn result_fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/results")
        .join(name)
}
