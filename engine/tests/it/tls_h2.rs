//! TLS and HTTP/2 against real servers on loopback: the built-in target with TLS (HTTP/1.1
//! and HTTP/2 by ALPN, mTLS) and h2c, nginx with TLS and http2 (its access log as the
//! witness, GOAWAY after `keepalive_requests`), certificates that must be refused, session
//! resumption and phase timings. Certificates come from a CA the test makes (rcgen).

use crate::support;

use std::time::Duration;

use loadgate::result::RunResult;
use loadgate::serve::{ServerHandle, spawn_with};
use support::{H2ResetServer, Nginx, NginxOptions, TestPki, errors, phases, transport, try_run};

fn run(yaml: &str) -> RunResult {
    try_run(yaml).unwrap_or_else(|e| panic!("the run is carried out: {e}"))
}

/// A one-target spec: `url`, the `tls:` fields in `tls` (indented by 4), `protocol`, `load`.
fn spec(url: &str, protocol: &str, tls: &str, load: &str) -> String {
    let tls = if tls.is_empty() {
        String::new()
    } else {
        format!("    tls:\n{tls}")
    };
    format!(
        "version: 1\nname: tls\ndefaults:\n  timeout: 3s\ntargets:\n  - name: t\n    url: {url}\n    protocol: {protocol}\n{tls}load:\n{load}"
    )
}

fn ca_file(pki: &TestPki) -> String {
    format!("      ca_file: {}\n", pki.path("ca.pem").display())
}

fn tls_server(pki: &TestPki, stem: &str, mtls: bool) -> ServerHandle {
    spawn_with(
        "127.0.0.1:0".parse().unwrap(),
        1,
        Some(pki.serve_config(stem, mtls)),
    )
    .expect("spawn the TLS server")
}

#[test]
fn builtin_target_over_tls_negotiates_h2_by_alpn_and_times_each_phase() {
    let pki = TestPki::generate();
    let server = tls_server(&pki, "server", false);
    let url = format!("{}/?size=1000", server.url());
    let result = run(&spec(
        &url,
        "auto",
        &ca_file(&pki),
        "  connections: 4\n  requests: 2000\n",
    ));
    assert_eq!(result.total.responses, 2000, "{:?}", errors(&result));
    assert_eq!(result.total.errors, 0, "{:?}", errors(&result));
    let t = transport(&result);
    assert_eq!((t.requested.as_str(), t.protocol.as_str()), ("auto", "h2"));
    let tls = t.tls.as_ref().expect("https");
    assert_eq!(tls.version, "1.3");
    assert!(tls.cipher.starts_with("TLS13_"), "{}", tls.cipher);
    assert_eq!(tls.server_name, "127.0.0.1");
    assert!(!tls.insecure_skip_verify);
    // HTTP/2 counts DATA bytes: the body alone.
    assert_eq!(result.total.bytes_received, 2000 * 1000);

    let p = phases(&result);
    // Each of the 4 virtual users opened one connection (no warmup: all while measuring).
    assert_eq!(p.connections_opened, 4);
    assert_eq!(p.connect.as_ref().expect("connect timed").count, 4);
    assert_eq!(p.tls.as_ref().expect("handshake timed").count, 4);
    assert!(p.dns.is_none(), "127.0.0.1 is not resolved");
    let ttfb = p.ttfb.as_ref().expect("ttfb timed");
    assert_eq!(ttfb.count, 2000);
    assert_eq!(p.body.as_ref().expect("body timed").count, 2000);
    let latency = result.total.latency_us.as_ref().unwrap();
    assert!(
        ttfb.p50_us <= latency.p50_us,
        "{} > {}",
        ttfb.p50_us,
        latency.p50_us
    );

    let summary = loadgate::report::console::summary(
        &result,
        loadgate::report::console::SummaryOptions {
            color: false,
            verbose: true,
        },
    );
    assert!(summary.contains("protocol    h2 over TLS 1.3"), "{summary}");
    assert!(summary.contains("phases"), "{summary}");
    assert!(summary.contains("ttfb"), "{summary}");
    assert!(!summary.contains("INSECURE"), "{summary}");
}

#[test]
fn builtin_target_over_tls_speaks_h1_when_asked_and_resumes_sessions_on_reconnect() {
    let pki = TestPki::generate();
    let server = tls_server(&pki, "server", false);
    // close=1: the server closes after every response, so every request reconnects.
    let url = format!("{}/?close=1", server.url());
    let result = run(&spec(
        &url,
        "h1",
        &ca_file(&pki),
        "  connections: 2\n  requests: 200\n",
    ));
    assert_eq!(result.total.responses, 200, "{:?}", errors(&result));
    assert_eq!(transport(&result).protocol, "h1");
    let p = phases(&result);
    assert_eq!(p.connections_opened, 200);
    // The check at start left a session to resume; each handshake brings new tickets.
    assert!(p.tls_resumed >= 190, "{} of 200 resumed", p.tls_resumed);

    let no_resumption = run(&spec(
        &url,
        "h1",
        &format!("{}      resumption: false\n", ca_file(&pki)),
        "  connections: 2\n  requests: 50\n",
    ));
    assert_eq!(no_resumption.total.responses, 50);
    let p = phases(&no_resumption);
    assert_eq!((p.connections_opened, p.tls_resumed), (50, 0));
}

#[test]
fn h2c_with_prior_knowledge_multiplexes_streams_on_each_connection() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    // 20 ms per response: 2 connections × 8 streams = 16 in flight, ~800 responses/s;
    // one request at a time per connection would give ~100/s.
    let url = format!("{}/?delay=20ms", server.url());
    let result = run(&spec(
        &url,
        "h2",
        "",
        "  connections: 2\n  streams: 8\n  duration: 1s\n",
    ));
    assert_eq!(result.total.errors, 0, "{:?}", errors(&result));
    assert!(
        result.total.responses > 450,
        "{} responses: streams are not concurrent",
        result.total.responses
    );
    assert_eq!(result.load.streams, 8);
    assert_eq!(transport(&result).protocol, "h2");
    assert!(transport(&result).tls.is_none());
    assert_eq!(
        phases(&result).connections_opened,
        2,
        "8 streams share each connection"
    );
    let summary = loadgate::report::console::summary(
        &result,
        loadgate::report::console::SummaryOptions::default(),
    );
    assert!(summary.contains("2 connections x 8 streams"), "{summary}");
    assert!(summary.contains("h2 over cleartext TCP"), "{summary}");
}

#[test]
fn rst_stream_is_counted_as_stream_reset_and_the_connection_kept() {
    let server = H2ResetServer::start();
    let url = format!("http://{}/", server.addr());
    let result = run(&spec(
        &url,
        "h2",
        "",
        "  connections: 2\n  streams: 4\n  requests: 400\n",
    ));
    assert_eq!(result.total.requests, 400);
    // The check at start sends a PING, no stream: every stream is the run's.
    assert_eq!(server.streams(), 400);
    assert_eq!(server.resets(), 200);
    assert_eq!(errors(&result).get("stream_reset"), Some(&200));
    assert_eq!(result.total.errors, 200, "{:?}", errors(&result));
    assert_eq!(result.total.responses, 200);
    assert_eq!(
        phases(&result).connections_opened,
        2,
        "a reset stream leaves its connection open"
    );
}

#[test]
fn a_certificate_for_another_name_or_from_another_ca_fails_at_start_unless_insecure() {
    let pki = TestPki::generate();
    let wrong = tls_server(&pki, "wrong", false);
    let url = format!("{}/", wrong.url());
    let load = "  connections: 2\n  requests: 100\n";
    for protocol in ["h1", "h2"] {
        let e = try_run(&spec(&url, protocol, &ca_file(&pki), load)).unwrap_err();
        assert!(e.contains("unreachable at start"), "{e}");
        assert!(e.contains("TLS handshake failed"), "{e}");
        assert!(e.contains("not valid for name"), "{e}");
    }
    // The right name but an issuer we do not trust.
    let good = tls_server(&pki, "server", false);
    let other_ca = format!("      ca_file: {}\n", pki.path("other-ca.pem").display());
    let e = try_run(&spec(&format!("{}/", good.url()), "auto", &other_ca, load)).unwrap_err();
    assert!(e.contains("UnknownIssuer"), "{e}");
    // Nor are Mozilla's roots any help with a test CA.
    let e = try_run(&spec(&format!("{}/", good.url()), "auto", "", load)).unwrap_err();
    assert!(e.contains("UnknownIssuer"), "{e}");

    // server_name overrides the URL's host for SNI and verification.
    let renamed = format!(
        "{}      server_name: {}\n",
        ca_file(&pki),
        support::WRONG_NAME
    );
    let result = run(&spec(&url, "auto", &renamed, load));
    assert_eq!(result.total.responses, 100, "{:?}", errors(&result));

    let insecure = run(&spec(
        &url,
        "auto",
        "      insecure_skip_verify: true\n",
        load,
    ));
    assert_eq!(insecure.total.responses, 100, "{:?}", errors(&insecure));
    assert!(
        transport(&insecure)
            .tls
            .as_ref()
            .unwrap()
            .insecure_skip_verify
    );
    let summary = loadgate::report::console::summary(
        &insecure,
        loadgate::report::console::SummaryOptions::default(),
    );
    assert!(
        summary.contains("INSECURE    server certificates NOT verified"),
        "{summary}"
    );
    // The PR comment and the HTML report say so too, with the target's phase table.
    for format in [loadgate::report::Format::Md, loadgate::report::Format::Html] {
        let input = loadgate::report::Input {
            current: &insecure,
            baseline: None,
            comparison: None,
            history: &[],
            spec_path: None,
        };
        let report = loadgate::report::render(format, &input, None).unwrap();
        assert!(
            report.contains("INSECURE: certificate not verified"),
            "{report}"
        );
        assert!(report.contains("over TLS 1.3"), "{report}");
        for phase in ["connect", "tls", "ttfb", "body"] {
            assert!(
                report.contains(&format!("| {phase} |"))
                    || report.contains(&format!("<td>{phase}</td>")),
                "{phase}: {report}"
            );
        }
    }
}

#[test]
fn an_mtls_server_refuses_a_missing_client_certificate_at_start() {
    let pki = TestPki::generate();
    let server = tls_server(&pki, "server", true);
    let url = format!("{}/", server.url());
    let load = "  connections: 2\n  requests: 100\n";
    for protocol in ["h1", "h2", "auto"] {
        let e = try_run(&spec(&url, protocol, &ca_file(&pki), load)).unwrap_err();
        assert!(e.contains("unreachable at start"), "{protocol}: {e}");
        assert!(e.contains("CertificateRequired"), "{protocol}: {e}");
    }
    let with_cert = format!(
        "{}      client_cert: {}\n      client_key: {}\n",
        ca_file(&pki),
        pki.path("client.pem").display(),
        pki.path("client.key").display()
    );
    for protocol in ["h1", "h2"] {
        let result = run(&spec(&url, protocol, &with_cert, load));
        assert_eq!(
            result.total.responses,
            100,
            "{protocol}: {:?}",
            errors(&result)
        );
        assert_eq!(transport(&result).protocol, protocol);
    }
    // A certificate the server's CA did not issue is refused too: the server's own.
    let foreign = format!(
        "{}      client_cert: {}\n      client_key: {}\n",
        ca_file(&pki),
        pki.path("wrong.pem").display(),
        pki.path("wrong.key").display()
    );
    let e = try_run(&spec(&url, "h1", &foreign, load)).unwrap_err();
    assert!(e.contains("TLS"), "{e}");
}

#[test]
fn min_version_1_3_is_refused_by_a_tls_1_2_server_which_negotiates_1_2_otherwise() {
    let pki = TestPki::generate();
    let nginx = Nginx::start_with(NginxOptions {
        tls: Some((pki.path("server.pem"), pki.path("server.key"))),
        tls_protocols: "TLSv1.2",
        ..NginxOptions::default()
    })
    .expect("nginx runs");
    let url = format!("https://{}/", nginx.addr());
    let load = "  connections: 1\n  requests: 20\n";
    let result = run(&spec(&url, "auto", &ca_file(&pki), load));
    assert_eq!(result.total.responses, 20, "{:?}", errors(&result));
    let t = transport(&result);
    assert_eq!(
        t.protocol, "h1",
        "no http2 on this server: ALPN gives http/1.1"
    );
    let tls = t.tls.as_ref().unwrap();
    assert_eq!(tls.version, "1.2");
    assert!(tls.cipher.starts_with("TLS_ECDHE_"), "{}", tls.cipher);

    let e = try_run(&spec(
        &url,
        "auto",
        &format!("{}      min_version: \"1.3\"\n", ca_file(&pki)),
        load,
    ))
    .unwrap_err();
    assert!(e.contains("TLS handshake failed"), "{e}");
    // This server has no http2: asking for h2 is refused at start, with the reason.
    let e = try_run(&spec(&url, "h2", &ca_file(&pki), load)).unwrap_err();
    assert!(e.contains("unreachable at start"), "{e}");
    assert!(e.contains("ALPN"), "{e}");
    assert_eq!(
        nginx.access_log_count(),
        20,
        "the refused runs sent nothing"
    );
}

#[test]
fn nginx_over_tls_and_http2_counts_match_its_access_log() {
    let pki = TestPki::generate();
    let nginx = Nginx::start_with(NginxOptions {
        tls: Some((pki.path("server.pem"), pki.path("server.key"))),
        http2: true,
        ..NginxOptions::default()
    })
    .expect("nginx runs with ssl and http2");
    let url = format!("https://localhost:{}/", nginx.addr().port());
    let result = run(&spec(
        &url,
        "h2",
        &ca_file(&pki),
        "  connections: 4\n  streams: 8\n  requests: 3000\n",
    ));
    assert_eq!(result.total.responses, 3000, "{:?}", errors(&result));
    assert_eq!(result.total.errors, 0, "{:?}", errors(&result));
    assert_eq!(
        nginx.wait_access_log_count(3000, Duration::from_secs(5)),
        3000
    );
    let log = nginx.access_log();
    assert!(log.iter().all(|e| e.protocol == "HTTP/2.0"), "{:?}", log[0]);
    let connections: std::collections::BTreeSet<u64> = log.iter().map(|e| e.connection).collect();
    assert_eq!(connections.len(), 4, "4 connections carried 32 streams");
    let t = transport(&result);
    assert_eq!(t.protocol, "h2");
    assert_eq!(t.tls.as_ref().unwrap().server_name, "localhost");
    let p = phases(&result);
    assert_eq!(p.connections_opened, 4);
    // `localhost` is resolved for each connection.
    assert_eq!(p.dns.as_ref().expect("a host name is resolved").count, 4);
}

#[test]
fn nginx_goaway_after_keepalive_requests_is_counted_and_the_run_reconnects() {
    let pki = TestPki::generate();
    let nginx = Nginx::start_with(NginxOptions {
        tls: Some((pki.path("server.pem"), pki.path("server.key"))),
        http2: true,
        keepalive_requests: 100,
        ..NginxOptions::default()
    })
    .expect("nginx runs");
    let url = format!("https://{}/", nginx.addr());
    let result = run(&spec(
        &url,
        "h2",
        &ca_file(&pki),
        "  connections: 2\n  streams: 4\n  requests: 2000\n",
    ));
    let total = &result.total;
    assert_eq!(total.requests, 2000);
    // nginx answers 100 requests per connection, then sends GOAWAY: streams already sent
    // beyond the 100th are refused (counted), and the run goes on over new connections.
    let refused = total.errors;
    for kind in total.errors_by_kind.keys() {
        assert!(
            kind == "goaway" || kind == "stream_reset",
            "{:?}",
            total.errors_by_kind
        );
    }
    assert!(
        refused <= 2000 / 100 * 4,
        "at most 3 refused per GOAWAY: {:?}",
        total.errors_by_kind
    );
    assert_eq!(total.responses + refused, 2000);
    let logged = nginx.wait_access_log_count(total.responses as usize, Duration::from_secs(5));
    assert_eq!(logged as u64, total.responses);
    let log = nginx.access_log();
    let connections: std::collections::BTreeSet<u64> = log.iter().map(|e| e.connection).collect();
    assert!(connections.len() >= 19, "{} connections", connections.len());
    assert!(log.iter().all(|e| e.connection_requests <= 100));
    let opened = phases(&result).connections_opened;
    assert!(opened >= 19, "{opened} connections opened");
}

#[test]
fn binary_serves_tls_and_exits_3_when_the_certificate_does_not_verify() {
    use std::io::{BufRead, BufReader, Write as _};
    use std::process::{Command, Stdio};
    /// Kills the server even when an assertion fails.
    struct Child(std::process::Child);
    impl Drop for Child {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let pki = TestPki::generate();
    let mut serve = Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", "1"])
        .arg("--tls-cert")
        .arg(pki.path("wrong.pem"))
        .arg("--tls-key")
        .arg(pki.path("wrong.key"))
        .stdout(Stdio::piped())
        .spawn()
        .map(Child)
        .unwrap();
    let mut line = String::new();
    BufReader::new(serve.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .trim()
        .strip_prefix("loadgate serve: listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_string();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");

    let dir = tempfile::tempdir().unwrap();
    let spec_path = dir.path().join("spec.yaml");
    let run_binary = |tls: &str| {
        std::fs::File::create(&spec_path)
            .unwrap()
            .write_all(
                spec(
                    &format!("{url}/"),
                    "auto",
                    tls,
                    "  connections: 1\n  requests: 10\n",
                )
                .as_bytes(),
            )
            .unwrap();
        Command::new(env!("CARGO_BIN_EXE_loadgate"))
            .args(["run", "-q"])
            .arg(&spec_path)
            .output()
            .unwrap()
    };
    let output = run_binary(&ca_file(&pki));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("not valid for name"), "{stderr}");

    let output = run_binary("      insecure_skip_verify: true\n");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("INSECURE"), "{stdout}");
    assert!(stdout.contains("h2 over TLS 1.3"), "{stdout}");
    drop(serve);
}

#[test]
fn binary_starts_a_tls_service_probes_its_https_ready_url_and_loads_it_over_h2() {
    let pki = TestPki::generate();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let yaml = format!(
        "version: 1\nname: tls-service\nservice:\n  command: [\"${{LOADGATE}}\", \"serve\", \"--listen\", \"127.0.0.1:{port}\", \"--threads\", \"1\", \"--tls-cert\", \"{cert}\", \"--tls-key\", \"{key}\"]\n  ready_url: https://127.0.0.1:{port}/health\n  ready_timeout: 10s\ndefaults:\n  base_url: https://localhost:{port}\n  protocol: h2\n  tls:\n    ca_file: {ca}\ntargets:\n  - name: home\n    path: /?size=2000\nload:\n  connections: 2\n  streams: 4\n  requests: 400\nslo:\n  errors: [\"count == 0\"]\n",
        cert = pki.path("server.pem").display(),
        key = pki.path("server.key").display(),
        ca = pki.path("ca.pem").display(),
    );
    let spec_path = pki.dir().join("service.yaml");
    std::fs::write(&spec_path, yaml).unwrap();
    let out = pki.dir().join("result.json");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .args(["run", "-q"])
        .arg(&spec_path)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("protocol    h2 over TLS 1.3"), "{stdout}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let schema = loadgate::result::schema();
    assert!(
        jsonschema::validator_for(&schema).unwrap().is_valid(&json),
        "the result matches its schema"
    );
    let result: RunResult = serde_json::from_value(json).unwrap();
    assert_eq!(result.total.responses, 400);
    assert_eq!(result.load.streams, 4);
    let phases = result.targets[0].phases_us.as_ref().unwrap();
    assert_eq!(phases.connections_opened, 2);
    assert_eq!(phases.dns.as_ref().map(|p| p.count), Some(2));
    let ttfb = loadgate::result::decode_histogram(&phases.ttfb.as_ref().unwrap().histogram)
        .expect("the ttfb histogram decodes");
    assert_eq!(ttfb.len(), 400);
}

#[test]
fn auto_over_cleartext_is_http_1_1() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let result = run(&spec(
        &format!("{}/", server.url()),
        "auto",
        "",
        "  connections: 2\n  requests: 100\n",
    ));
    assert_eq!(result.total.responses, 100);
    let t = transport(&result);
    assert_eq!((t.requested.as_str(), t.protocol.as_str()), ("auto", "h1"));
    assert!(t.tls.is_none());
    let p = phases(&result);
    assert_eq!(p.connections_opened, 2);
    assert!(p.tls.is_none(), "no handshake over cleartext");
    let summary = loadgate::report::console::summary(
        &result,
        loadgate::report::console::SummaryOptions::default(),
    );
    assert!(
        summary.contains("protocol    h1 over cleartext TCP"),
        "{summary}"
    );
}

#[test]
fn open_model_over_h2c_shares_connections_by_streams_and_checks_read_h2_responses() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    // 300 arrivals/s for 1 s, each answered after 20 ms: ~6 in flight, at most 16 (two
    // groups of 8 streams, so at most 2 connections).
    let yaml = format!(
        "version: 1\nname: open-h2\ndefaults:\n  timeout: 3s\ntargets:\n  - name: t\n    url: {}/?delay=20ms&header=X-Kind:h2\n    protocol: h2\n    checks:\n      - header: x-kind\n        equals: h2\n      - header: x-missing\n      - body_contains: ok\nload:\n  model: open\n  rate: 300/s\n  max_in_flight: 16\n  streams: 8\n  duration: 1s\n",
        server.url()
    );
    let result = run(&yaml);
    let t = &result.targets[0];
    assert_eq!(result.total.errors, 0, "{:?}", errors(&result));
    assert!(
        (285..=315).contains(&t.responses),
        "{} responses for 300 arrivals",
        t.responses
    );
    assert_eq!(result.load.streams, 8);
    assert_eq!(transport(&result).protocol, "h2");
    let opened = phases(&result).connections_opened;
    assert!(
        (1..=2).contains(&opened),
        "{opened} connections for 16 users in groups of 8 streams"
    );
    let by_check: Vec<(u64, u64)> = t.checks.iter().map(|c| (c.passed, c.failed)).collect();
    assert_eq!(
        by_check,
        [(t.responses, 0), (0, t.responses), (t.responses, 0)],
        "{:?}",
        t.checks
    );
}
