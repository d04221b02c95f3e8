//! The run pipeline against real servers on loopback: the built-in target, nginx, and servers
//! that are down, hang, close mid-response or send garbage. In-process (spec -> validate ->
//! plan -> run -> result) and as the `loadgate` binary.

mod support;

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
        stdout.contains("FAILED: 1 of 2 SLO thresholds not met"),
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
