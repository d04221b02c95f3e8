//! `loadgate run --shard K/N --start-at TIME`, through the binary against `loadgate serve` on
//! loopback: the shard's share and `K/N` in its result, a start that waits for its time (and
//! a Ctrl-C that ends the wait), an open model's rate and a flow's rows read once split over
//! shards, a late start that shortens the warmup or is refused, a shard's SLOs reported but
//! not judged, and the flags that do not go together.

use crate::support;
use support::{loadgate, start_serve, turn, wait_within};

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Writes a spec of one target on `addr` (`GET /`) with the `load` and `slo` blocks (YAML
/// lines) to `dir/spec.yaml`.
fn spec(dir: &Path, addr: SocketAddr, load: &str, slo: &str) -> String {
    let path = dir.join("spec.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nname: shard\ntargets:\n  - name: root\n    url: http://{addr}/\n\
             load:\n{load}{slo}"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// The result file at `path`.
fn result(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A time of the result (`started_at`, `planned_start_at`: RFC 3339 UTC).
fn time(result: &Value, field: &str) -> SystemTime {
    let text = result[field].as_str().unwrap_or_else(|| panic!("{field}"));
    humantime::parse_rfc3339(text).unwrap()
}

/// `|a − b|`.
fn apart(a: SystemTime, b: SystemTime) -> Duration {
    a.duration_since(b)
        .or_else(|_| b.duration_since(a))
        .unwrap()
}

#[test]
fn a_shard_records_k_of_n_and_applies_its_share_of_the_connections() {
    let _turn = turn();
    let (mut server, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    // 7 connections over 3 shards: 3, 2, 2.
    let spec = spec(dir.path(), addr, "  connections: 7\n  duration: 1s\n", "");
    let out_path = dir.path().join("shard-2.json");
    let out = loadgate(&[
        "run",
        &spec,
        "--quiet",
        "--shard",
        "2/3",
        "--out",
        out_path.to_str().unwrap(),
    ]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = result(&out_path);
    assert_eq!(r["shard"], serde_json::json!({ "index": 2, "count": 3 }));
    assert_eq!(r["load"]["connections"], 2);
    assert!(
        r["total"]["requests"].as_u64().unwrap() > 0,
        "{}",
        r["total"]
    );
    // Without --start-at, no planned start.
    assert!(r["planned_start_at"].is_null());
}

#[test]
fn an_open_model_shard_takes_its_rate_and_a_flow_its_rows_read_once() {
    let _turn = turn();
    let (mut server, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    // 100/s over 4 shards: 25/s each; max_in_flight 10: 3, 3, 2, 2.
    let open = spec(
        dir.path(),
        addr,
        "  model: open\n  rate: 100/s\n  max_in_flight: 10\n  duration: 1s\n",
        "",
    );
    let out_path = dir.path().join("open.json");
    let out = loadgate(&["run", &open, "--quiet", "--shard", "3/4"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = loadgate(&[
        "run",
        &open,
        "--quiet",
        "--shard",
        "4/4",
        "--out",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = result(&out_path);
    assert_eq!(r["load"]["max_in_flight"], 2);
    assert_eq!(r["health"]["stages"][0]["level_to"], 25.0);
    let requests = r["total"]["requests"].as_u64().unwrap();
    assert!((20..=30).contains(&requests), "{requests}");

    // 5 rows read once over 2 shards: rows 1, 3, 5 and rows 2, 4; each shard's run ends when
    // its rows are used up.
    std::fs::write(dir.path().join("rows.csv"), "n\n1\n2\n3\n4\n5\n").unwrap();
    let flow = dir.path().join("flow.yaml");
    std::fs::write(
        &flow,
        format!(
            "version: 1\nname: rows\nload:\n  connections: 2\n  duration: 30s\nflows:\n  \
             - name: f\n    data: {{ file: rows.csv, order: once }}\n    steps:\n      \
             - {{ name: get, url: 'http://{addr}/?n={{{{n}}}}' }}\n"
        ),
    )
    .unwrap();
    let mut iterations = Vec::new();
    for shard in ["1/2", "2/2"] {
        let out_path = dir.path().join("flow.json");
        let started = Instant::now();
        let out = loadgate(&[
            "run",
            flow.to_str().unwrap(),
            "--quiet",
            "--shard",
            shard,
            "--out",
            out_path.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "ended on its rows"
        );
        let r = result(&out_path);
        iterations.push(r["flows"][0]["iterations"].as_u64().unwrap());
        assert_eq!(r["total"]["requests"], iterations[iterations.len() - 1]);
    }
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(iterations, [3, 2]);
}

#[test]
fn start_at_waits_for_its_time_and_measuring_starts_on_it() {
    let _turn = turn();
    let (mut server, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        addr,
        "  connections: 2\n  duration: 1s\n  warmup: 500ms\n",
        "",
    );
    let out_path = dir.path().join("result.json");
    let launched = SystemTime::now();
    let began = Instant::now();
    let out = loadgate(&[
        "run",
        &spec,
        "--quiet",
        "--shard",
        "1/2",
        "--start-at",
        "+2s",
        "--out",
        out_path.to_str().unwrap(),
    ]);
    let took = began.elapsed();
    let _ = server.kill();
    let _ = server.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("loadgate: shard 1/2 waits until "), "{err}");
    // The wait, the warmup and the measured second.
    assert!(took >= Duration::from_millis(3500), "{took:?}");
    let r = result(&out_path);
    let planned = time(&r, "planned_start_at");
    let started = time(&r, "started_at");
    // Planned: 2 s from the command's start, plus the warmup.
    let from_launch = planned.duration_since(launched).unwrap();
    assert!(
        from_launch >= Duration::from_millis(2500) && from_launch < Duration::from_millis(3000),
        "{from_launch:?}"
    );
    let skew = apart(planned, started);
    assert!(skew < Duration::from_millis(5), "{skew:?}");
    assert_eq!(r["load"]["warmup_s"], 0.5);
}

#[test]
fn a_start_late_by_less_than_the_warmup_shortens_it_and_a_later_one_is_refused() {
    let _turn = turn();
    let (mut server, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        addr,
        "  connections: 2\n  duration: 1s\n  warmup: 1s\n",
        "",
    );
    let out_path = dir.path().join("result.json");
    let at = SystemTime::now() - Duration::from_millis(300);
    let at_text = humantime::format_rfc3339_millis(at).to_string();
    let out = loadgate(&[
        "run",
        &spec,
        "--quiet",
        "--start-at",
        &at_text,
        "--out",
        out_path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("waits until"), "{}", stderr(&out));
    let r = result(&out_path);
    // Measuring still starts at the planned time plus the whole warmup.
    let planned = time(&r, "planned_start_at");
    let at = humantime::parse_rfc3339(&at_text).unwrap();
    assert_eq!(planned, at + Duration::from_secs(1));
    let skew = apart(planned, time(&r, "started_at"));
    assert!(skew < Duration::from_millis(50), "{skew:?}");
    let warmup = r["load"]["warmup_s"].as_f64().unwrap();
    assert!(warmup < 0.71 && warmup > 0.3, "{warmup}");

    // Past by more than the warmup: refused, nothing sent.
    let started = Instant::now();
    let out = loadgate(&[
        "run",
        &spec,
        "--quiet",
        "--start-at",
        "2020-01-01T00:00:00Z",
    ]);
    let _ = server.kill();
    let _ = server.wait();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--start-at 2020-01-01T00:00:00.000Z was ")
            && err.contains("more than the warmup (1000 ms)"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // Not a time.
    let out = loadgate(&["run", &spec, "--quiet", "--start-at", "at ten"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("give RFC 3339 in UTC"));
}

#[test]
fn ctrl_c_ends_the_wait_after_the_service_has_started() {
    let _turn = turn();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nname: shard\nservice:\n  command: [\"${{LOADGATE}}\", \"serve\", \
             \"--listen\", \"127.0.0.1:{port}\", \"--threads\", \"1\"]\n  ready_url: \
             http://127.0.0.1:{port}/health\n  ready_timeout: 10s\ntargets:\n  - name: root\n    \
             url: http://127.0.0.1:{port}/\nload:\n  connections: 1\n  duration: 1s\n"
        ),
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["run", path.to_str().unwrap(), "--quiet", "--shard", "1/1"])
        .args(["--start-at", "+60s"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let waits = line.starts_with("loadgate: shard 1/1 waits until ");
        seen.push(line);
        if waits {
            break;
        }
    }
    assert!(
        seen.iter().any(|l| l.contains("starting service"))
            && seen.last().unwrap().contains("waits until"),
        "the service starts before the wait: {seen:?}"
    );
    // The service answers while the shard waits.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_ok());
    #[cfg(unix)]
    {
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
        let stopped = Instant::now();
        let status = wait_within(&mut child, Duration::from_secs(10), "the waiting shard");
        assert!(stopped.elapsed() < Duration::from_secs(3));
        // Interrupted: exit 3, never a pass.
        assert_eq!(status.code(), Some(3));
    }
    #[cfg(not(unix))]
    {
        let _ = child.kill();
        let _ = child.wait();
    }
}

#[test]
fn a_shard_reports_a_failed_slo_and_exits_0() {
    let _turn = turn();
    let (mut server, addr) = start_serve("1");
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        addr,
        "  connections: 2\n  requests: 40\n",
        "slo:\n  latency: [\"p(50) < 1us\"]\n",
    );
    let whole = loadgate(&["run", &spec, "--quiet", "--no-color"]);
    assert_eq!(
        whole.status.code(),
        Some(1),
        "the SLO fails: {}",
        stderr(&whole)
    );
    let out_path = dir.path().join("shard.json");
    let shard = loadgate(&[
        "run",
        &spec,
        "--quiet",
        "--no-color",
        "--shard",
        "1/2",
        "--out",
        out_path.to_str().unwrap(),
    ]);
    let _ = server.kill();
    let _ = server.wait();
    let err = stderr(&shard);
    assert_eq!(shard.status.code(), Some(0), "{err}");
    assert!(err.contains("judged on the merged result"), "{err}");
    let r = result(&out_path);
    // Reported: the verdict is in the result; 20 of the 40 requests.
    assert_eq!(r["passed"], false);
    assert_eq!(r["load"]["requests"], 20);
    assert_eq!(r["total"]["requests"], 20);
}

/// A spec whose one target is a loopback port where nothing listens: a run that started
/// would end with exit 3 (unreachable at start).
fn unreachable(dir: &Path, load: &str) -> PathBuf {
    let path = dir.join("spec.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nname: shard\ntargets:\n  - name: a\n    url: http://127.0.0.1:9/\n\
             load:\n{load}"
        ),
    )
    .unwrap();
    path
}

#[test]
fn flags_that_cannot_be_used_are_refused_before_any_load_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let spec = unreachable(dir.path(), "  connections: 2\n  duration: 1s\n");
    let spec = spec.to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (&["--shard", "5/4"], "the shard index must be 1 to 4"),
        (&["--shard", "3/2"], "the shard index must be 1 to 2"),
        (&["--shard", "3-2"], "is not a shard: give K/N"),
        (&["--shard", "1/0"], "the shard count must be 1 to 1024"),
        (
            &["--shard", "1/2", "--baseline", "none.json"],
            "--baseline does not apply to a shard (shard 1/2)",
        ),
        (
            &["--shard", "3/3"],
            "the spec has 2 connections: at most 2 shards",
        ),
    ];
    for (flags, want) in cases {
        let mut args = vec!["run", spec, "--quiet"];
        args.extend_from_slice(flags);
        let out = loadgate(&args);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(want), "{flags:?}: {err}");
        assert!(!err.contains("unreachable"), "no load was sent: {err}");
    }
}
