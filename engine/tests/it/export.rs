//! Metrics out (`run --export`, `loadgate export`) against the real receivers: Debian's
//! Prometheus with its remote write receiver, queried through its HTTP API, and an
//! OpenTelemetry Collector (built from the Go module proxy by `scripts/build-otelcol`: the OTLP
//! receiver and the file exporter), whose file is read back. Both are started here on free
//! loopback ports, in temporary folders, and killed when the test ends.
//!
//! Prometheus missing is an error, not a skip: `scripts/test` installs it.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{GarbageServer, down_addr, loadgate, result_fixture, start_serve, turn};

/// Points of one series: (milliseconds since the epoch, value), in time order.
type Points = Vec<(i64, f64)>;

/// Series by (metric, scope, quantile or "").
type Exported = BTreeMap<(String, String, String), Points>;

/// How long a receiver may take to be ready.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A child process killed (and reaped) when dropped.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `ready` every 100 ms until it holds, at most [`START_TIMEOUT`]; panics naming `what`
/// (with its log) when it does not, or when `child` exits first.
fn wait_ready(child: &mut Child, what: &str, log: &Path, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + START_TIMEOUT;
    while !ready() {
        let log = || std::fs::read_to_string(log).unwrap_or_default();
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{what} exited ({status}) before it was ready:\n{}", log());
        }
        assert!(
            Instant::now() < deadline,
            "{what} not ready in {START_TIMEOUT:?}:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Debian's Prometheus (`/usr/bin/prometheus`, else on `PATH`) with its remote write receiver,
/// storing in `dir`, on a free loopback port.
struct Prometheus {
    _child: Killed,
    addr: SocketAddr,
}

impl Prometheus {
    fn start(dir: &Path) -> Prometheus {
        let bin = Path::new("/usr/bin/prometheus");
        let bin = if bin.exists() {
            bin
        } else {
            Path::new("prometheus")
        };
        let addr = down_addr();
        let config = dir.join("prometheus.yml");
        std::fs::write(&config, "global: {}\n").unwrap();
        let log = dir.join("prometheus.log");
        let child = Command::new(bin)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address={addr}"))
            .arg("--web.enable-remote-write-receiver")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("Prometheus runs (scripts/test installs Debian's `prometheus`)");
        let mut child = Killed(child);
        let ready = || {
            ureq::get(format!("http://{addr}/-/ready"))
                .call()
                .is_ok_and(|r| r.status() == 200)
        };
        wait_ready(&mut child.0, "Prometheus", &log, ready);
        Prometheus {
            _child: child,
            addr,
        }
    }

    fn write_url(&self) -> String {
        format!("http://{}/api/v1/write", self.addr)
    }

    /// The result of an instant query at `time` (seconds since the epoch): each series' labels
    /// and its value (a vector) or values (a matrix) as (milliseconds, value).
    fn query(&self, query: &str, time: f64) -> Vec<(BTreeMap<String, String>, Points)> {
        let mut response = ureq::get(format!("http://{}/api/v1/query", self.addr))
            .query("query", query)
            .query("time", format!("{time:.3}"))
            .call()
            .unwrap_or_else(|e| panic!("query {query}: {e}"));
        let answer: Value = serde_json::from_str(&response.body_mut().read_to_string().unwrap())
            .expect("a JSON answer");
        assert_eq!(answer["status"], "success", "{query}: {answer}");
        let sample = |v: &Value| {
            let ms = (v[0].as_f64().unwrap() * 1000.0).round() as i64;
            (ms, v[1].as_str().unwrap().parse::<f64>().unwrap())
        };
        answer["data"]["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|series| {
                let labels = serde_json::from_value(series["metric"].clone()).unwrap();
                let values = match series.get("values") {
                    Some(values) => values.as_array().unwrap().iter().map(sample).collect(),
                    None => vec![sample(&series["value"])],
                };
                (labels, values)
            })
            .collect()
    }
}

/// The collector of `scripts/build-otelcol` (built once per test binary, when missing or
/// stale), receiving OTLP/HTTP on a free loopback port and writing what it receives, as OTLP
/// JSON lines, to `dir/metrics.jsonl`.
struct Collector {
    _child: Killed,
    addr: SocketAddr,
    file: PathBuf,
}

impl Collector {
    fn start(dir: &Path) -> Collector {
        let bin = otelcol();
        let addr = down_addr();
        let file = dir.join("metrics.jsonl");
        let config = dir.join("otelcol.yaml");
        std::fs::write(
            &config,
            format!(
                "receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: {addr}\n\
                 exporters:\n  file:\n    path: {}\n\
                 service:\n  telemetry:\n    metrics:\n      level: none\n  pipelines:\n    \
                 metrics:\n      receivers: [otlp]\n      exporters: [file]\n",
                file.display()
            ),
        )
        .unwrap();
        let log = dir.join("otelcol.log");
        let child = Command::new(bin)
            .arg(format!("--config={}", config.display()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("the collector runs");
        let mut child = Killed(child);
        let ready = || std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)).is_ok();
        wait_ready(&mut child.0, "the collector", &log, ready);
        Collector {
            _child: child,
            addr,
            file,
        }
    }

    /// Every data point written so far, by (metric, scope, quantile or ""): (milliseconds,
    /// value) in the order written; and the resource attributes seen.
    fn points(&self) -> (Exported, Vec<Value>) {
        let text = std::fs::read_to_string(&self.file).unwrap_or_default();
        let mut points: BTreeMap<_, Vec<_>> = BTreeMap::new();
        let mut resources = Vec::new();
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let request: Value = serde_json::from_str(line).expect("a JSON line");
            for resource in request["resourceMetrics"].as_array().unwrap() {
                resources.push(resource["resource"]["attributes"].clone());
                for scope in resource["scopeMetrics"].as_array().unwrap() {
                    for metric in scope["metrics"].as_array().unwrap() {
                        let name = metric["name"].as_str().unwrap().to_string();
                        for point in metric["gauge"]["dataPoints"].as_array().unwrap() {
                            let attribute = |key: &str| {
                                point["attributes"]
                                    .as_array()
                                    .unwrap()
                                    .iter()
                                    .find(|a| a["key"] == key)
                                    .map(|a| a["value"]["stringValue"].as_str().unwrap())
                                    .unwrap_or_default()
                                    .to_string()
                            };
                            let nanos: i64 =
                                point["timeUnixNano"].as_str().unwrap().parse().unwrap();
                            let key = (name.clone(), attribute("scope"), attribute("quantile"));
                            let value = point["asDouble"].as_f64().unwrap();
                            points
                                .entry(key)
                                .or_default()
                                .push((nanos / 1_000_000, value));
                        }
                    }
                }
            }
        }
        (points, resources)
    }

    /// [`Collector::points`] once they hold `done` (the file exporter flushes within a
    /// second; at most 15 s), each resource saying `service.name: loadgate`.
    fn points_when(&self, what: &str, done: impl Fn(&Exported) -> bool) -> Exported {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let (points, resources) = self.points();
            if done(&points) {
                let service = serde_json::json!({"key": "service.name", "value": {"stringValue": "loadgate"}});
                assert!(
                    resources
                        .iter()
                        .all(|r| r.as_array().unwrap().contains(&service))
                );
                return points;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not in the collector's file"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// [`Collector::points_when`] `metric` has been written.
    fn points_with(&self, metric: &str) -> Exported {
        self.points_when(metric, |points| {
            points.keys().any(|(name, _, _)| name == metric)
        })
    }
}

/// `target/ci-tools/otelcol`, built by `scripts/build-otelcol` once per test binary (a no-op
/// when it is current; scripts/test builds it beforehand).
fn otelcol() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let output = Command::new(root.join("scripts/build-otelcol"))
                .output()
                .expect("run scripts/build-otelcol");
            assert!(
                output.status.success(),
                "scripts/build-otelcol failed:\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
            root.join("target/ci-tools/otelcol")
        })
        .clone()
}

/// What every exported series should hold, from a result: by (metric, scope, quantile or
/// ""), the points as (milliseconds since the epoch, value).
fn series_of(result: &loadgate::result::RunResult) -> Exported {
    let start = humantime::parse_rfc3339(&result.started_at).unwrap();
    let ms = |t: std::time::SystemTime| {
        t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
    };
    let start_ms = ms(start);
    let end_ms = ms(start + Duration::from_secs_f64(result.duration_s));
    let mut all = BTreeMap::new();
    let key = |m: &str, scope: &str, q: &str| (m.to_string(), scope.to_string(), q.to_string());
    for target in std::iter::once(&result.total).chain(&result.targets) {
        let scope = target.name.as_str();
        let seconds = if scope == "total" {
            &result.time_series
        } else {
            &target.time_series
        };
        let at = |s: &loadgate::result::TimeSample| start_ms + i64::from(s.second) * 1000;
        all.insert(
            key("loadgate_requests_per_second", scope, ""),
            seconds
                .iter()
                .map(|s| (at(s), s.requests.unwrap() as f64))
                .collect(),
        );
        all.insert(
            key("loadgate_latency_seconds", scope, "0.99"),
            seconds
                .iter()
                .filter(|s| s.responses > 0)
                .map(|s| (at(s), s.p99_us as f64 / 1e6))
                .collect(),
        );
        let latency = target.latency_us.as_ref().unwrap();
        all.insert(
            key("loadgate_run_latency_seconds", scope, "0.99"),
            vec![(end_ms, latency.p99_us as f64 / 1e6)],
        );
        all.insert(
            key("loadgate_run_latency_seconds", scope, "0.5"),
            vec![(end_ms, latency.p50_us as f64 / 1e6)],
        );
        all.insert(
            key("loadgate_run_requests_per_second", scope, ""),
            vec![(end_ms, target.rps)],
        );
        all.insert(
            key("loadgate_run_error_ratio", scope, ""),
            vec![(end_ms, target.error_rate)],
        );
    }
    // Targets of results before version 4 have no seconds of their own: no series.
    all.retain(|_, points| !points.is_empty());
    all
}

/// A spec of two targets of `loadgate serve` at `addr`, 2 s of 2 connections.
fn spec(dir: &Path, addr: SocketAddr) -> PathBuf {
    let path = dir.join("spec.yaml");
    std::fs::write(
        &path,
        format!(
            "version: 1\nname: export-test\ndefaults:\n  base_url: http://{addr}\ntargets:\n  \
             - name: fast\n    path: /?size=100\n  - name: slow\n    path: /?delay=2ms\n\
             load:\n  connections: 2\n  duration: 2s\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn a_run_exports_its_series_and_summaries_to_prometheus_and_an_otel_collector() {
    let dir = tempfile::tempdir().unwrap();
    let prometheus = Prometheus::start(dir.path());
    let collector = Collector::start(dir.path());
    let (serve, addr) = start_serve("1");
    let _serve = Killed(serve);
    let spec = spec(dir.path(), addr);
    let out = dir.path().join("result.json");
    let output = {
        let _turn = turn();
        loadgate(&[
            "run",
            spec.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
            "--export",
            &format!("prometheus={}", prometheus.write_url()),
            "--export",
            &format!("otlp=http://{}", collector.addr),
        ])
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stderr.matches("loadgate: exported").count(), 2, "{stderr}");
    let result = loadgate::result::read(&out).unwrap();
    let expected = series_of(&result);
    assert_eq!(
        expected.len(),
        3 * 6,
        "total and two targets, 6 series each"
    );

    // Prometheus: each series, read back as a range over the run, at the run's end.
    let end = expected[&(
        "loadgate_run_error_ratio".into(),
        "total".into(),
        String::new(),
    )][0]
        .0;
    for ((metric, scope, quantile), points) in &expected {
        let quantile = if quantile.is_empty() {
            String::new()
        } else {
            format!(",quantile=\"{quantile}\"")
        };
        let query = format!("{metric}{{spec=\"export-test\",scope=\"{scope}\"{quantile}}}[10m]");
        let answer = prometheus.query(&query, end as f64 / 1000.0 + 1.0);
        assert_eq!(answer.len(), 1, "{query}: one series");
        assert_eq!(&answer[0].1, points, "{query}");
    }

    // The collector: the same points, through OTLP.
    let received = collector.points_with("loadgate_run_latency_seconds");
    for (key, points) in &expected {
        assert_eq!(received.get(key), Some(points), "{key:?}");
    }

    // A long run is sent in several requests, every point of it arriving.
    let long = long_result(&out, dir.path());
    let output = loadgate(&[
        "export",
        long.to_str().unwrap(),
        "--to",
        &format!("prometheus={}", prometheus.write_url()),
        "--to",
        &format!("otlp=http://{}", collector.addr),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let long = loadgate::result::read(&long).unwrap();
    let long_points = series_of(&long);
    let points: usize = long_points.values().map(Vec::len).sum();
    assert!(
        points > 10_000,
        "{points} of the points checked: several requests"
    );
    let key = (
        "loadgate_requests_per_second".to_string(),
        "slow".to_string(),
        String::new(),
    );
    let query = "loadgate_requests_per_second{spec=\"export-long\",scope=\"slow\"}[2h]";
    let answer = prometheus.query(query, end as f64 / 1000.0 + 1.0);
    assert_eq!(answer.len(), 1, "{query}");
    assert_eq!(answer[0].1, long_points[&key], "{query}");
    // The collector's file: the run's points of the series, then the long run's (the key has
    // no spec).
    let (run, long) = (&expected[&key], &long_points[&key]);
    let received = collector.points_when("the long run", |p| {
        p.get(&key)
            .is_some_and(|v| v.len() >= run.len() + long.len())
    });
    assert_eq!(received[&key], [run.as_slice(), long.as_slice()].concat());
}

/// `result` made a run of 1,800 seconds of spec `export-long` (its seconds repeated, each
/// target's too), that ended when `result` started: written to `dir/long.json`.
fn long_result(result: &Path, dir: &Path) -> PathBuf {
    let mut long: Value = serde_json::from_str(&std::fs::read_to_string(result).unwrap()).unwrap();
    let start = humantime::parse_rfc3339(long["started_at"].as_str().unwrap()).unwrap();
    let start = start - Duration::from_secs(1800);
    long["started_at"] = humantime::format_rfc3339_micros(start).to_string().into();
    long["duration_s"] = 1800.0.into();
    long["spec"]["name"] = "export-long".into();
    let stretch = |seconds: &mut Value| {
        let one = seconds.as_array().unwrap()[0].clone();
        *seconds = (0..1800u32)
            .map(|s| {
                let mut second = one.clone();
                second["second"] = s.into();
                second
            })
            .collect();
    };
    stretch(&mut long["time_series"]);
    for target in long["targets"].as_array_mut().unwrap() {
        stretch(&mut target["time_series"]);
    }
    let path = dir.join("long.json");
    std::fs::write(&path, serde_json::to_string(&long).unwrap()).unwrap();
    path
}

#[test]
fn a_stored_result_is_exported_by_loadgate_export() {
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(dir.path());
    let fixture = result_fixture("current.json");
    let output = loadgate(&[
        "export",
        fixture.to_str().unwrap(),
        "--to",
        &format!("otlp=http://{}/v1/metrics", collector.addr),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let result = loadgate::result::read(&fixture).unwrap();
    let expected = series_of(&result);
    // The run's seconds (2 series) and summaries (4) of `total`, the summaries of its two
    // targets (named `<script>alert(1)</script>` and `a|b`: any text is a label value).
    assert_eq!(expected.len(), 6 + 2 * 4);
    let received = collector.points_with("loadgate_run_latency_seconds");
    for (key, points) in expected {
        assert_eq!(received.get(&key), Some(&points), "{key:?}");
    }
}

#[test]
fn a_failed_export_is_said_bounded_and_redacted_and_leaves_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = GarbageServer::start_closing();
    let down = down_addr();
    let prometheus = format!("prometheus=http://{}/api/v1/write", garbage.addr());
    let otlp = format!("otlp=http://me:hunter2@{down}/v1/metrics?token=sekrit");
    let (serve, addr) = start_serve("1");
    let _serve = Killed(serve);
    let spec = spec(dir.path(), addr);
    let (output, elapsed) = {
        let _turn = turn();
        // Timed from the turn on: waiting for another test's turn is not the export's time.
        let started = Instant::now();
        let output = loadgate(&[
            "run",
            spec.to_str().unwrap(),
            "--quiet",
            "--export",
            &prometheus,
            "--export",
            &otlp,
        ]);
        (output, started.elapsed())
    };
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        output.status.code(),
        Some(0),
        "a failed export leaves the exit code: {stderr}"
    );
    assert!(elapsed < Duration::from_secs(30), "{:?}", elapsed);
    assert_eq!(
        garbage.requests(),
        3,
        "a transport error is retried twice: {stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "export to otlp http://***@{down}/v1/metrics?*** failed"
        )),
        "{stderr}"
    );
    assert_eq!(stderr.matches("failed:").count(), 2, "{stderr}");
    assert!(
        !stderr.contains("hunter2") && !stderr.contains("sekrit"),
        "{stderr}"
    );

    // `loadgate export` fails (exit 3) when an export fails, after trying every one.
    let fixture = result_fixture("current.json");
    let output = loadgate(&["export", fixture.to_str().unwrap(), "--to", &otlp]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("1 of 1 export(s) failed"), "{stderr}");
    assert!(
        !stderr.contains("hunter2") && !stderr.contains("sekrit"),
        "{stderr}"
    );

    // A KIND=URL that cannot be used is refused before any load (exit 2), its URL unquoted.
    let output = loadgate(&[
        "run",
        spec.to_str().unwrap(),
        "--export",
        "otlp=ftp://me:hunter2@x/",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not an http or https URL"), "{stderr}");
    assert!(!stderr.contains("hunter2"), "{stderr}");
}

/// Accepts one connection on a free loopback port, reads one request (head and
/// `Content-Length` body; reads bounded by 10 s) and answers `204 No Content`: the request's
/// head, lower-cased, and its body, through the returned channel.
fn capture_one_request() -> (SocketAddr, std::sync::mpsc::Receiver<(String, Vec<u8>)>) {
    use std::io::{Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut conn, _)) = listener.accept() else {
            return;
        };
        conn.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut data = Vec::new();
        let mut buf = [0u8; 8192];
        let (head, body) = loop {
            let Ok(n @ 1..) = conn.read(&mut buf) else {
                return;
            };
            data.extend_from_slice(&buf[..n]);
            let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if data.len() >= end + 4 + length {
                break (head, data[end + 4..end + 4 + length].to_vec());
            }
        };
        let _ = conn.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
        let _ = tx.send((head, body));
    });
    (addr, rx)
}

#[test]
fn remote_write_sends_the_protocol_headers_and_the_users_without_printing_them() {
    let (addr, request) = capture_one_request();
    let fixture = result_fixture("current.json");
    let output = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["export", fixture.to_str().unwrap(), "--to"])
        .arg(format!("prometheus=http://{addr}/api/v1/write"))
        .env(
            "LOADGATE_EXPORT_HEADERS",
            "Authorization=Bearer t0ken, X-Scope-OrgID=perf",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("t0ken"), "{stderr}");
    let (head, body) = request.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        head.starts_with("post /api/v1/write http/1.1\r\n"),
        "{head}"
    );
    for header in [
        "content-encoding: snappy",
        "content-type: application/x-protobuf",
        "x-prometheus-remote-write-version: 0.1.0",
        "authorization: bearer t0ken",
        "x-scope-orgid: perf",
    ] {
        assert!(head.lines().any(|l| l == header), "{header} in {head}");
    }
    // The body is snappy's block format (not its framing format) of a protobuf naming the
    // metrics.
    let decoded = snap::raw::Decoder::new().decompress_vec(&body).unwrap();
    let text = String::from_utf8_lossy(&decoded);
    assert!(text.contains("loadgate_run_latency_seconds"));
    assert!(
        text.contains("<script>alert(1)</script>"),
        "a target's name, as it is"
    );
}
