//! The run pipeline against real servers on loopback: the built-in target, nginx, and servers
//! that are down, hang, close mid-response or send garbage. In-process (spec -> validate ->
//! plan -> run -> result) and as the `loadgate` binary.

use crate::support;

use std::net::{SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loadgate::result::RunResult;
use support::{
    CloseMidResponseServer, CountingServer, Framing, GarbageServer, HangServer, Nginx, down_addr,
    run_yaml, write_spec,
};

fn spec(url: &str, load: &str, extra: &str) -> String {
    format!(
        "version: 1\nname: test\ndefaults:\n  timeout: 2s\ntargets:\n  - name: t\n    url: {url}\n{extra}load:\n{load}"
    )
}

fn count(result: &RunResult, code: &str) -> u64 {
    result.total.status_codes.get(code).copied().unwrap_or(0)
}

fn error_count(result: &RunResult, kind: &str) -> u64 {
    result.total.errors_by_kind.get(kind).copied().unwrap_or(0)
}

#[test]
fn count_mode_sends_exactly_n_requests_to_the_builtin_target() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = format!(
        "version: 1\nname: mix\ndefaults:\n  base_url: {}\ntargets:\n  - name: ok\n    path: /?size=100\n    weight: 3\n  - name: created\n    method: POST\n    path: /?status=201\n    body: hello\n    expect: {{status: [201]}}\nload:\n  connections: 8\n  requests: 4000\nslo:\n  errors: [\"count == 0\"]\n  requests: [\"count == 4000\"]\n",
        server.url()
    );
    let result = run_yaml(&yaml);
    assert_eq!(result.total.responses, 4000);
    assert_eq!(result.total.requests, 4000);
    assert_eq!(result.total.errors, 0, "{:?}", result.total.errors_by_kind);
    let (ok, created) = (&result.targets[0], &result.targets[1]);
    assert_eq!(ok.responses + created.responses, 4000);
    assert_eq!(count(&result, "200"), ok.responses);
    assert_eq!(count(&result, "201"), created.responses);
    // Weights 3:1 over 4000 picks: 3000 expected, far more than 5 sigma (~137) off is a bug.
    assert!((2800..=3200).contains(&ok.responses), "{}", ok.responses);
    assert!(ok.bytes_received >= ok.responses * 100);
    assert!(result.passed, "{:?}", result.slo);
    assert_eq!(result.slo.len(), 2);
    let latency = result
        .total
        .latency_us
        .as_ref()
        .expect("responses were measured");
    assert!(
        latency.min_us <= latency.p50_us
            && latency.p50_us <= latency.p99_us
            && latency.p99_us <= latency.max_us
    );
}

#[test]
fn nginx_counts_match_its_access_log() {
    let nginx = Nginx::start().expect("nginx runs (apt-get install nginx-light)");
    let url = format!("http://{}/", nginx.addr());
    let result = run_yaml(&spec(&url, "  connections: 10\n  requests: 3000\n", ""));
    assert_eq!(result.total.responses, 3000);
    assert_eq!(count(&result, "200"), 3000);
    assert_eq!(result.total.errors, 0);
    assert_eq!(
        nginx.wait_access_log_count(3000, Duration::from_secs(5)),
        3000
    );
    // Keep-alive: 10 connections carried every request (nginx's default keepalive_requests
    // is 1000, so a few reconnects are allowed).
    let connections: std::collections::BTreeSet<u64> =
        nginx.access_log().iter().map(|e| e.connection).collect();
    assert!(
        connections.len() <= 10 + 3000 / 1000 * 10,
        "{}",
        connections.len()
    );
}

#[test]
fn duration_mode_with_warmup_ends_on_time_and_fills_the_time_series() {
    let nginx = Nginx::start().expect("nginx runs");
    let url = format!("http://{}/", nginx.addr());
    let started = Instant::now();
    let result = run_yaml(&spec(
        &url,
        "  connections: 4\n  duration: 2s\n  warmup: 500ms\n",
        "",
    ));
    let wall = started.elapsed();
    assert!(wall >= Duration::from_millis(2500), "{wall:?}");
    assert!(wall < Duration::from_secs(5), "{wall:?}");
    assert!(
        (1.9..2.5).contains(&result.duration_s),
        "{}",
        result.duration_s
    );
    let logged = nginx.wait_access_log_count(usize::MAX, Duration::from_millis(500)) as u64;
    // The access log also holds the warmup's requests, which the result must not count.
    assert!(
        logged > result.total.responses,
        "{logged} vs {}",
        result.total.responses
    );
    let seconds: Vec<u32> = result.time_series.iter().map(|s| s.second).collect();
    assert!(seconds.starts_with(&[0, 1]), "{seconds:?}");
    let per_second: u64 = result.time_series.iter().map(|s| s.responses).sum();
    assert_eq!(per_second, result.total.responses);
    assert!(result.time_series[0].p50_us > 0);
}

#[test]
fn chunked_and_close_delimited_responses_are_framed() {
    for framing in [
        Framing::Chunked,
        Framing::CloseDelimited,
        Framing::ContentLength,
    ] {
        let server = CountingServer::start(framing);
        let url = format!("http://{}/", server.addr());
        let result = run_yaml(&spec(&url, "  connections: 4\n  requests: 500\n", ""));
        assert_eq!(result.total.responses, 500, "{framing:?}");
        assert_eq!(
            result.total.errors, 0,
            "{framing:?}: {:?}",
            result.total.errors_by_kind
        );
        assert_eq!(server.requests(), 500, "{framing:?}");
        if framing == Framing::CloseDelimited {
            // One per response, plus the reachability check before the run.
            assert_eq!(
                server.connections(),
                501,
                "a close-delimited body ends its connection"
            );
        } else {
            // 4 keep-alive connections, plus the reachability check before the run.
            assert!(
                server.connections() <= 5,
                "{framing:?}: {}",
                server.connections()
            );
        }
    }
}

#[test]
fn a_hanging_server_times_out_and_the_run_ends_on_time() {
    let server = HangServer::start();
    let url = format!("http://{}/", server.addr());
    let started = Instant::now();
    let yaml = spec(&url, "  connections: 3\n  duration: 1s\n", "")
        .replace("timeout: 2s", "timeout: 300ms")
        + "slo:\n  latency: [\"p(99) < 1s\"]\n";
    let result = run_yaml(&yaml);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(result.total.responses, 0);
    // 3 connections × 1 s / 300 ms: 3 to 4 timeouts each.
    let timeouts = error_count(&result, "timeout");
    assert!((6..=15).contains(&timeouts), "{timeouts}");
    assert_eq!(result.total.errors, timeouts);
    assert!((result.total.error_rate - 1.0).abs() < 1e-9);
    assert!(
        !result.passed,
        "no responses: a latency threshold cannot hold"
    );
    assert!(result.slo[0].measured.is_none());
}

#[test]
fn a_server_closing_mid_response_is_counted_as_closed() {
    let server = CloseMidResponseServer::start();
    let url = format!("http://{}/", server.addr());
    let result = run_yaml(&spec(&url, "  connections: 2\n  requests: 50\n", ""));
    assert_eq!(
        error_count(&result, "closed"),
        50,
        "{:?}",
        result.total.errors_by_kind
    );
    assert_eq!(result.total.responses, 0);
    assert_eq!(server.requests(), 50);
}

#[test]
fn garbage_is_counted_as_malformed() {
    for server in [GarbageServer::start(), GarbageServer::start_closing()] {
        let url = format!("http://{}/", server.addr());
        let result = run_yaml(&spec(&url, "  connections: 2\n  requests: 20\n", ""));
        assert_eq!(
            error_count(&result, "malformed"),
            20,
            "{:?}",
            result.total.errors_by_kind
        );
        assert_eq!(result.total.responses, 0);
    }
}

#[test]
fn a_server_that_dies_mid_run_is_counted_not_fatal() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("{}/?delay=1ms", server.url());
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(700));
        server.shutdown();
    });
    let started = Instant::now();
    let result = run_yaml(&spec(&url, "  connections: 2\n  duration: 1500ms\n", ""));
    killer.join().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(result.total.responses > 50, "{}", result.total.responses);
    let refused = error_count(&result, "connect_refused");
    assert!(refused > 0, "{:?}", result.total.errors_by_kind);
    assert!(result.total.error_rate > 0.0 && result.total.error_rate < 1.0);
}

#[test]
fn unexpected_statuses_are_errors() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("{}/?status=503", server.url());
    let result = run_yaml(&spec(&url, "  connections: 2\n  requests: 100\n", ""));
    assert_eq!(count(&result, "503"), 100);
    assert_eq!(error_count(&result, "unexpected_status"), 100);
    assert_eq!(result.total.requests, 100);
    assert!((result.total.error_rate - 1.0).abs() < 1e-9);
    // Latency of error responses is still measured.
    assert!(result.total.latency_us.is_some());
}

// ---- The binary --------------------------------------------------------------------------

fn loadgate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_loadgate"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn service_spec(port: u16, load: &str, slo: &str) -> String {
    format!(
        "version: 1\nname: service\nservice:\n  command: [\"${{LOADGATE}}\", \"serve\", \"--listen\", \"127.0.0.1:{port}\", \"--threads\", \"1\"]\n  ready_url: http://127.0.0.1:{port}/health\n  ready_timeout: 10s\ndefaults:\n  base_url: http://127.0.0.1:{port}\ntargets:\n  - name: slow\n    path: /?delay=20ms\nload:\n{load}{slo}"
    )
}

/// Sends SIGINT to `child` and waits for it to exit, at most `limit`; returns its status and
/// when the signal was sent.
fn interrupt(
    child: &mut std::process::Child,
    limit: Duration,
) -> (std::process::ExitStatus, Instant) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let stopped = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status, stopped);
        }
        assert!(stopped.elapsed() < limit, "no exit after Ctrl-C");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn port_is_closed(port: u16) -> bool {
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err()
}

#[test]
fn binary_runs_a_service_writes_the_result_and_exits_1_on_an_slo_breach() {
    let port = free_port();
    let (dir, spec) = write_spec(&service_spec(
        port,
        "  connections: 2\n  requests: 40\n",
        "slo:\n  latency: [\"p(50) < 5ms\", \"p(50) > 15ms\"]\n",
    ));
    let out = dir.path().join("result.json");
    let output = loadgate()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL  total latency: p(50) < 5ms"),
        "{stdout}"
    );
    assert!(
        stdout.contains("pass  total latency: p(50) > 15ms"),
        "{stdout}"
    );
    assert!(
        stdout.contains("FAILED: 1 of 3 SLO thresholds not met (with loadgate's default"),
        "{stdout}"
    );
    assert!(port_is_closed(port), "the service was stopped");

    let mode =
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&out).unwrap().permissions());
    assert_eq!(mode & 0o777, 0o644, "the result is readable by others");
    let text = std::fs::read_to_string(&out).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let schema = loadgate::result::schema();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json), "the result matches its schema");
    let result: RunResult = serde_json::from_value(json).unwrap();
    assert_eq!(result.total.responses, 40);
    assert!(!result.passed);
    assert_eq!(result.spec.name, "service");
    assert_eq!(result.spec.hash.len(), 64);
    let histogram = loadgate::result::decode_histogram(&result.total.histogram).unwrap();
    assert_eq!(histogram.len(), 40);
    assert!(histogram.min() >= 20_000, "delay=20ms: {}", histogram.min());
}

#[test]
fn binary_exits_0_when_slos_pass() {
    let port = free_port();
    let (_dir, spec) = write_spec(&service_spec(
        port,
        "  connections: 2\n  requests: 20\n",
        "slo:\n  latency: [\"p(99) < 2s\"]\n  errors: [\"rate < 1%\"]\n",
    ));
    let output = loadgate().arg("run").arg(&spec).arg("-q").output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("PASSED: all 2 SLO thresholds met"),
        "{stdout}"
    );
}

#[test]
fn binary_exits_3_when_the_target_is_down() {
    let (dir, spec) = write_spec(&spec(
        &format!("http://{}/", down_addr()),
        "  connections: 2\n  duration: 1s\n",
        "",
    ));
    let out = dir.path().join("result.json");
    let output = loadgate()
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("is unreachable at start"), "{stderr}");
    assert!(!out.exists(), "no result for a run that did not happen");
}

#[test]
fn binary_exits_3_when_the_service_dies_before_ready() {
    let yaml = "version: 1\nname: dies\nservice:\n  command: [\"sh\", \"-c\", \"exit 7\"]\n  ready_url: http://127.0.0.1:9/\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/\nload:\n  connections: 1\n  requests: 1\n";
    let output = loadgate()
        .arg("run")
        .arg(write_spec(yaml).1)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("exited with exit status: 7 before it was ready"),
        "{stderr}"
    );
}

#[test]
fn ctrl_c_stops_the_run_and_the_service() {
    let port = free_port();
    let (_dir, spec) = write_spec(&service_spec(
        port,
        "  connections: 2\n  duration: 60s\n",
        "",
    ));
    let mut child = loadgate()
        .arg("run")
        .arg(&spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the service answers, then let the load run a moment.
    let deadline = Instant::now() + Duration::from_secs(10);
    while port_is_closed(port) {
        assert!(Instant::now() < deadline, "the service never came up");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(700));
    let (status, _) = interrupt(&mut child, Duration::from_secs(10));
    assert_eq!(status.code(), Some(3));
    let mut stdout = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut stdout).unwrap();
    assert!(stdout.contains("interrupted"), "{stdout}");
    assert!(port_is_closed(port), "the service was stopped");
}

#[test]
fn idle_connections_the_server_closed_are_replaced_not_counted_as_errors() {
    // nginx closes connections idle for 200 ms; each connection thinks for 300 ms, so every
    // request after the first finds its connection closed by the server.
    let nginx = Nginx::start_with(support::NginxOptions {
        keepalive_timeout_ms: 200,
        ..Default::default()
    })
    .expect("nginx runs");
    let url = format!("http://{}/", nginx.addr());
    let result = run_yaml(&spec(
        &url,
        "  connections: 2\n  think_time: 300ms\n  requests: 10\n",
        "",
    ));
    assert_eq!(result.total.errors, 0, "{:?}", result.total.errors_by_kind);
    assert_eq!(result.total.responses, 10);
    assert_eq!(nginx.wait_access_log_count(10, Duration::from_secs(5)), 10);
}

#[test]
fn ctrl_c_is_noticed_during_a_long_think_time() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let (_dir, path) = write_spec(&spec(
        &server.url(),
        "  connections: 2\n  think_time: 20s\n  duration: 60s\n",
        "",
    ));
    let mut child = loadgate()
        .arg("run")
        .arg("-q")
        .arg(&path)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(800));
    let (status, stopped) = interrupt(&mut child, Duration::from_secs(5));
    assert_eq!(status.code(), Some(3));
    assert!(
        stopped.elapsed() < Duration::from_secs(2),
        "{:?}",
        stopped.elapsed()
    );
}

#[test]
fn a_service_that_forks_and_exits_leaves_nothing_behind() {
    // The command starts a child in the background and exits: not ready, and its child must
    // be stopped with it (the process group), not left running.
    let marker = format!("{}", 31_000 + std::process::id() % 1000);
    let yaml = format!(
        "version: 1\nname: forks\nservice:\n  command: [\"sh\", \"-c\", \"sleep {marker} & exit 1\"]\n  ready_url: http://127.0.0.1:9/\ntargets:\n  - name: t\n    url: http://127.0.0.1:9/\nload:\n  connections: 1\n  requests: 1\n"
    );
    let (_dir, path) = write_spec(&yaml);
    let output = loadgate().arg("run").arg(&path).output().unwrap();
    assert_eq!(output.status.code(), Some(3));
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep {marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

// ---- Bodies that keep coming, failed requests' bytes, refused certificates ---------------

/// A server that answers every request with a head announcing a 10 GB body, then sends the
/// body as fast as it can, or only its first `stall_after` bytes and then nothing (keeping
/// the connection open). Each connection ends when the client closes it, or after 30 s; the
/// listener stops when this is dropped.
struct BodyServer {
    addr: std::net::SocketAddr,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl BodyServer {
    fn start(stall_after: Option<usize>) -> BodyServer {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        std::thread::spawn(move || {
            let lifetime = Instant::now() + Duration::from_secs(60);
            while !flag.load(Ordering::SeqCst) && Instant::now() < lifetime {
                let Ok((mut conn, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                };
                let flag = flag.clone();
                std::thread::spawn(move || {
                    let _ = conn.set_nonblocking(false);
                    let _ = conn.set_write_timeout(Some(Duration::from_secs(1)));
                    let ends = Instant::now() + Duration::from_secs(30);
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        match conn.read(&mut byte) {
                            Ok(1) => head.push(byte[0]),
                            _ => return,
                        }
                    }
                    let chunk = vec![b'x'; 64 * 1024];
                    let mut sent = 0;
                    if conn
                        .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 10000000000\r\n\r\n")
                        .is_err()
                    {
                        return;
                    }
                    while Instant::now() < ends && !flag.load(Ordering::SeqCst) {
                        let room = stall_after.map_or(chunk.len(), |limit| {
                            limit.saturating_sub(sent).min(chunk.len())
                        });
                        if room == 0 {
                            // Stalled: wait for the client to close.
                            let _ = conn.set_read_timeout(Some(Duration::from_millis(50)));
                            match conn.read(&mut byte) {
                                Ok(0) => return,
                                Err(e)
                                    if e.kind() != std::io::ErrorKind::WouldBlock
                                        && e.kind() != std::io::ErrorKind::TimedOut =>
                                {
                                    return;
                                }
                                _ => continue,
                            }
                        }
                        match conn.write(&chunk[..room]) {
                            Ok(n) if n > 0 => sent += n,
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            _ => return,
                        }
                    }
                });
            }
        });
        BodyServer { addr, stop }
    }

    fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }
}

impl Drop for BodyServer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_body_that_keeps_coming_times_out_on_time() {
    // The body arrives faster than it is read: without a deadline between reads, a request
    // would read on until the run's hard deadline (duration + timeout + 1 s).
    let server = BodyServer::start(None);
    let started = Instant::now();
    // CPU pressure: two threads spinning through the run, on a 2-core machine.
    let hogs: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(move || {
                while started.elapsed() < Duration::from_secs(3) {
                    std::hint::spin_loop();
                }
            })
        })
        .collect();
    let result = run_yaml(
        &spec(&server.url(), "  connections: 2\n  duration: 2s\n", "")
            .replace("timeout: 2s", "timeout: 500ms"),
    );
    let wall = started.elapsed();
    hogs.into_iter().for_each(|h| h.join().unwrap());
    assert_eq!(result.total.responses, 0);
    // 2 connections × 2 s / 500 ms: 4 timeouts each when each fires on time.
    let timeouts = error_count(&result, "timeout");
    assert!(
        (6..=10).contains(&timeouts),
        "{timeouts} timeouts in {wall:?}"
    );
    // Within duration + timeout + 1 s.
    assert!(wall < Duration::from_millis(3500), "{wall:?}");
    assert!(
        result.total.bytes_received > 1_000_000,
        "{}",
        result.total.bytes_received
    );
}

#[test]
fn the_bytes_of_failed_requests_are_counted() {
    // Each response stops after 200 kB of its body: every request times out.
    let server = BodyServer::start(Some(200_000));
    let result = run_yaml(
        &spec(&server.url(), "  connections: 2\n  requests: 6\n", "")
            .replace("timeout: 2s", "timeout: 300ms"),
    );
    assert_eq!(error_count(&result, "timeout"), 6);
    let t = &result.total;
    assert!(t.bytes_received >= 6 * 200_000, "{}", t.bytes_received);
    assert!(t.bytes_received < 6 * 201_000, "{}", t.bytes_received);
    // `GET / HTTP/1.1` with a Host header and more: a few tens of bytes, all written.
    assert!(t.bytes_sent >= 6 * 30, "{}", t.bytes_sent);
    assert_eq!(t.bytes_sent % 6, 0, "{}", t.bytes_sent);

    // A hanging server: the requests are written, nothing comes back.
    let server = HangServer::start();
    let url = format!("http://{}/", server.addr());
    let result = run_yaml(
        &spec(&url, "  connections: 2\n  requests: 4\n", "")
            .replace("timeout: 2s", "timeout: 200ms"),
    );
    assert_eq!(error_count(&result, "timeout"), 4);
    assert!(
        result.total.bytes_sent >= 4 * 30,
        "{}",
        result.total.bytes_sent
    );
    assert_eq!(result.total.bytes_received, 0);
}

#[test]
fn a_ca_certificate_served_as_the_servers_is_refused_in_a_sentence() {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
    let dir = tempfile::tempdir().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string()]).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    let (cert_path, key_path) = (dir.path().join("ca.pem"), dir.path().join("ca.key"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let config = loadgate::serve::tls_config(&cert_path, &key_path, None).unwrap();
    let server =
        loadgate::serve::spawn_with("127.0.0.1:0".parse().unwrap(), 1, Some(config)).unwrap();
    let yaml = spec(
        &format!("{}/", server.url()),
        "  connections: 1\n  requests: 1\n",
        &format!("    tls:\n      ca_file: {}\n", cert_path.display()),
    );
    let source = loadgate::spec::SourceSpec::parse("test.yaml".into(), yaml).unwrap();
    let plan = loadgate::validate::check(&source, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let e = loadgate::run::execute(&plan, stop, &mut |_| {})
        .expect_err("the handshake fails")
        .to_string();
    assert!(
        e.contains(
            "TLS handshake failed: the certificate is a CA certificate used as a server \
             certificate: "
        ),
        "{e}"
    );
    assert!(!e.contains("Other("), "{e}");
}
