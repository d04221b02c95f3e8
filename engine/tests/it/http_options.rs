//! The engine's HTTP options against real servers on loopback (issue 15): `connect_timeout`,
//! `keep_alive: false`, `load.threads`, `tls.ciphers`, `compression`, `redirects`; and how the
//! spec errors on them read.

use std::time::{Duration, Instant};

use crate::support::turn as serial;
use crate::support::{NGINX_GZIP_PATH, Nginx, NginxOptions, TestPki, run_yaml, try_run};
use loadgate::result::RunResult;
use loadgate::spec::SourceSpec;

/// A one-target spec: `defaults` lines (indented by 2), the target's `url`, the `load` lines.
fn spec(defaults: &str, url: &str, load: &str) -> String {
    format!(
        "version: 1\nname: options\ndefaults:\n  timeout: 5s\n{defaults}targets:\n  - name: t\n    \
         url: {url}\nload:\n{load}"
    )
}

/// The diagnostics of an invalid spec, as `loadgate validate` prints them.
fn invalid(yaml: &str) -> String {
    let source = SourceSpec::parse("test.yaml".into(), yaml.to_string()).expect("spec parses");
    match loadgate::validate::check(&source, &|_| None) {
        Ok(_) => panic!("the spec is valid:\n{yaml}"),
        Err(e) => e.to_string(),
    }
}

fn error_count(result: &RunResult, kind: &str) -> u64 {
    result.total.errors_by_kind.get(kind).copied().unwrap_or(0)
}

/// A listener whose accept queue is full: it accepts one connection (the check at start's)
/// into its queue of one and never takes it out, so every later connect waits for a SYN-ACK
/// that does not come. Dropping the runtime closes it.
fn full_backlog_listener() -> (tokio::runtime::Runtime, tokio::net::TcpListener) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        socket.listen(0).unwrap()
    });
    (runtime, listener)
}

#[test]
fn a_connect_longer_than_connect_timeout_is_a_connect_timeout() {
    let _serial = serial();
    let (_runtime, listener) = full_backlog_listener();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let started = Instant::now();
    // A request timeout of 5 s: each connect gives up after 100 ms instead.
    let result = run_yaml(&spec(
        "  connect_timeout: 100ms\n",
        &url,
        "  connections: 1\n  duration: 1s\n",
    ));
    let took = started.elapsed();
    let timeouts = error_count(&result, "connect_timeout");
    // About 1 s / (100 ms + the backoff after each failed connect); none without the option.
    assert!(timeouts >= 3, "{:?}", result.total.errors_by_kind);
    assert_eq!(result.total.errors, timeouts, "{:?}", result.total);
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[test]
fn keep_alive_false_opens_a_connection_per_request_and_says_connection_close() {
    let _serial = serial();
    let nginx = Nginx::start().expect("nginx starts");
    let url = format!("http://{}/", nginx.addr());
    let result = run_yaml(&spec(
        "  keep_alive: false\n",
        &url,
        "  connections: 2\n  requests: 40\n",
    ));
    assert_eq!(
        result.total.responses, 40,
        "{:?}",
        result.total.errors_by_kind
    );
    assert_eq!(result.total.errors, 0, "{:?}", result.total.errors_by_kind);
    let phases = result.targets[0].phases_us.as_ref().unwrap();
    assert_eq!(phases.connections_opened, 40);
    // nginx saw each request on a connection of its own: the first request of each.
    let log = nginx.access_log();
    let mut connections: Vec<u64> = log.iter().map(|e| e.connection).collect();
    connections.sort_unstable();
    connections.dedup();
    assert!(log.iter().all(|e| e.connection_requests == 1), "{log:?}");
    assert_eq!(connections.len(), log.len());

    // The same load kept alive: two connections carry all of it (one, when the other virtual
    // user started after the first had taken every request).
    let result = run_yaml(&spec("", &url, "  connections: 2\n  requests: 40\n"));
    let phases = result.targets[0].phases_us.as_ref().unwrap();
    assert!((1..=2).contains(&phases.connections_opened), "{phases:?}");
}

#[test]
fn keep_alive_false_over_http2_carries_one_request_per_connection() {
    let _serial = serial();
    let nginx = Nginx::start_with(NginxOptions {
        http2: true,
        ..NginxOptions::default()
    })
    .expect("nginx starts");
    let url = format!("http://{}/", nginx.addr());
    let result = run_yaml(&spec(
        "  keep_alive: false\n  protocol: h2\n",
        &url,
        "  connections: 2\n  requests: 30\n",
    ));
    assert_eq!(
        result.total.responses, 30,
        "{:?}",
        result.total.errors_by_kind
    );
    let log = nginx.access_log();
    assert_eq!(log.len(), 30);
    assert!(
        log.iter()
            .all(|e| e.connection_requests == 1 && e.protocol == "HTTP/2.0"),
        "{log:?}"
    );
}

/// The worker threads of process `pid` now (`loadgate-worker-N`, cut to 15 bytes by Linux).
fn worker_threads(pid: u32) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("loadgate-worker"))
        .count()
}

/// Runs `yaml` with the `loadgate` binary, counting the run's worker threads while it runs
/// (the most seen, every 10 ms): a process of its own, so no other test's threads count.
fn run_counting_workers(yaml: &str) -> (RunResult, usize) {
    let dir = tempfile::tempdir().unwrap();
    let (spec, out) = (dir.path().join("spec.yaml"), dir.path().join("result.json"));
    std::fs::write(&spec, yaml).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_loadgate"))
        .arg("run")
        .arg(&spec)
        .arg("--out")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut most = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        most = most.max(worker_threads(child.id()));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the run did not end in 60 s");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status}");
    (loadgate::result::read(&out).unwrap(), most)
}

#[test]
fn load_threads_sets_the_worker_threads() {
    let _serial = serial();
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let load = |threads: &str| format!("  connections: 4\n{threads}  duration: 1s\n");
    let (result, one) = run_counting_workers(&spec("", &server.url(), &load("  threads: 1\n")));
    assert_eq!(one, 1);
    assert!(result.total.responses > 0);
    let (_, three) = run_counting_workers(&spec("", &server.url(), &load("  threads: 3\n")));
    assert_eq!(three, 3);
    // Never more than the connections.
    let (_, capped) = run_counting_workers(&spec(
        "",
        &server.url(),
        "  connections: 2\n  threads: 8\n  duration: 1s\n",
    ));
    assert_eq!(capped, 2);
}

#[test]
fn tls_ciphers_choose_the_suite_negotiated() {
    let _serial = serial();
    let pki = TestPki::generate();
    let server = loadgate::serve::spawn_with(
        "127.0.0.1:0".parse().unwrap(),
        1,
        Some(pki.serve_config("server", false)),
    )
    .unwrap();
    let ca = pki.path("ca.pem");
    let run = |suite: &str| {
        let defaults = format!(
            "  protocol: h1\n  tls:\n    ca_file: {}\n    ciphers: [{suite}]\n",
            ca.display()
        );
        let load = "  connections: 1\n  requests: 20\n";
        try_run(&spec(&defaults, &server.url(), load))
    };
    for (suite, version) in [
        ("TLS13_CHACHA20_POLY1305_SHA256", "1.3"),
        ("TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "1.2"),
    ] {
        let result = run(suite).unwrap_or_else(|e| panic!("{suite}: {e}"));
        assert_eq!(result.total.responses, 20);
        let tls = result.targets[0]
            .transport
            .as_ref()
            .and_then(|t| t.tls.as_ref())
            .expect("https");
        assert_eq!(
            (tls.cipher.as_str(), tls.version.as_str()),
            (suite, version)
        );
    }
    // The test PKI's server key is ECDSA (rcgen's default): with RSA suites alone there is
    // nothing to agree on, and the check at start says so.
    let refused = run("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256")
        .map(|_| ())
        .unwrap_err();
    assert!(refused.contains("TLS handshake failed"), "{refused}");
}

#[test]
fn option_errors_name_the_field_its_line_and_what_to_do() {
    let url = "http://127.0.0.1:1/";
    let text = invalid(&spec(
        "  tls:\n    ciphers: [TLS13_AES_128_GCM_SHA256, TLS_RSA_WITH_RC4_128_MD5]\n",
        "https://127.0.0.1:1/",
        "  connections: 1\n  requests: 1\n",
    ));
    assert!(
        text.contains("test.yaml:6:41: defaults.tls.ciphers[1]: `TLS_RSA_WITH_RC4_128_MD5` is not a cipher suite loadgate offers; the suites are: TLS13_AES_256_GCM_SHA384,"),
        "{text}"
    );
    let text = invalid(&spec(
        "  connect_timeout: 0s\n",
        url,
        "  connections: 1\n  requests: 1\n",
    ));
    assert!(
        text.contains("test.yaml:5:20: defaults.connect_timeout: must be longer than 0"),
        "{text}"
    );
    let text = invalid(&spec(
        "  keep_alive: false\n  protocol: h2\n",
        url,
        "  connections: 1\n  streams: 4\n  requests: 1\n",
    ));
    assert!(
        text.contains("load.streams: 4 streams per connection need connections that carry"),
        "{text}"
    );
    let text = invalid(&spec(
        "",
        url,
        "  connections: 1\n  threads: 0\n  requests: 1\n",
    ));
    assert!(text.contains("load.threads"), "{text}");
}

/// A target with a body check and a JSON check, at `url`, with `defaults` lines.
fn checked_spec(defaults: &str, url: &str, protocol: &str) -> String {
    format!(
        "version: 1\nname: options\ndefaults:\n  timeout: 5s\n  protocol: {protocol}\n{defaults}\
         targets:\n  - name: t\n    url: {url}\n    checks:\n      - body_contains: 'abcabc'\n      \
         - json: /status\n        equals: ok\nload:\n  connections: 2\n  requests: 50\n"
    )
}

#[test]
fn compression_offers_gzip_counts_wire_bytes_and_checks_read_the_decoded_body() {
    let _serial = serial();
    for http2 in [false, true] {
        let nginx = Nginx::start_with(NginxOptions {
            http2,
            ..NginxOptions::default()
        })
        .expect("nginx starts");
        let url = format!("http://{}{NGINX_GZIP_PATH}", nginx.addr());
        let protocol = if http2 { "h2" } else { "h1" };
        let plain = run_yaml(&checked_spec("", &url, protocol));
        let gzip = run_yaml(&checked_spec("  compression: true\n", &url, protocol));
        for result in [&plain, &gzip] {
            assert_eq!(
                result.total.responses, 50,
                "{:?}",
                result.total.errors_by_kind
            );
            assert_eq!(
                result.targets[0].checks_failed, 0,
                "{:?}",
                result.targets[0].checks
            );
            assert_eq!(result.targets[0].checks_passed, 100);
        }
        // The body is ~640 bytes as JSON and a small fraction of it gzipped: the bytes read are
        // the wire's.
        let (plain, gzip) = (plain.total.bytes_received, gzip.total.bytes_received);
        assert!(
            gzip * 2 < plain,
            "{protocol}: gzip {gzip} vs plain {plain} bytes"
        );
    }
}

/// A target `method` `path` on `nginx` with a 6-byte body, following up to `redirects`.
fn redirect_spec(
    nginx: &Nginx,
    protocol: &str,
    redirects: u32,
    method: &str,
    path: &str,
) -> String {
    format!(
        "version: 1\nname: redirects\ndefaults:\n  timeout: 5s\n  protocol: {protocol}\n  \
         redirects: {redirects}\ntargets:\n  - name: t\n    method: {method}\n    \
         url: http://{}{path}\n    body: 'abcdef'\n    headers: {{Content-Type: text/plain}}\n\
         load:\n  connections: 1\n  requests: 10\n",
        nginx.addr()
    )
}

/// The methods and paths nginx saw, in order.
fn seen(nginx: &Nginx) -> Vec<(String, String)> {
    nginx
        .access_log()
        .into_iter()
        .map(|e| (e.method, e.uri))
        .collect()
}

#[test]
fn redirects_are_followed_on_the_same_origin_and_the_last_status_counts() {
    let _serial = serial();
    for http2 in [false, true] {
        let protocol = if http2 { "h2" } else { "h1" };
        let nginx = Nginx::start_with(NginxOptions {
            http2,
            ..NginxOptions::default()
        })
        .expect("nginx starts");
        // Two redirects, then the answer: 10 requests, 10 responses of status 200.
        let result = run_yaml(&redirect_spec(
            &nginx,
            protocol,
            2,
            "GET",
            "/redirect/chain",
        ));
        assert_eq!(result.total.errors, 0, "{:?}", result.total.errors_by_kind);
        assert_eq!(
            result.total.status_codes.get("200"),
            Some(&10),
            "{protocol}"
        );
        let hops: Vec<&str> = ["/redirect/chain", "/redirect/302", "/"].to_vec();
        let log = seen(&nginx);
        assert_eq!(log.len(), 30, "{log:?}");
        assert!(
            log.chunks(3)
                .all(|c| c.iter().map(|(_, u)| u.as_str()).eq(hops.iter().copied())),
            "{log:?}"
        );
        // Each request counts the bytes of its whole chain, as its latency covers all of it.
        let direct = run_yaml(&redirect_spec(&nginx, protocol, 2, "GET", "/"));
        let (chain, direct) = (result.total.bytes_received, direct.total.bytes_received);
        assert!(
            chain > 2 * direct,
            "{protocol}: chain {chain}, direct {direct} bytes"
        );
    }
}

#[test]
fn redirects_past_the_limit_or_to_another_origin_are_errors() {
    let _serial = serial();
    let nginx = Nginx::start().expect("nginx starts");
    let count = |path: &str, redirects: u32| {
        let result = run_yaml(&redirect_spec(&nginx, "h1", redirects, "GET", path));
        (error_count(&result, "redirect"), result.total.errors)
    };
    // One redirect allowed, the chain has two.
    assert_eq!(count("/redirect/chain", 1), (10, 10));
    // A loop: 3 followed, the 4th is one too many.
    let before = seen(&nginx).len();
    assert_eq!(count("/redirect/loop", 3), (10, 10));
    assert_eq!(seen(&nginx).len() - before, 40);
    // To another origin: not followed (nothing is sent there).
    assert_eq!(count("/redirect/away", 10), (10, 10));
    // Not following (the default 0): the 302 is the answer, not a 2xx.
    let result = run_yaml(&redirect_spec(&nginx, "h1", 0, "GET", "/redirect/302"));
    assert_eq!(result.total.status_codes.get("302"), Some(&10));
    assert_eq!(error_count(&result, "unexpected_status"), 10);
    assert_eq!(error_count(&result, "redirect"), 0);
}

#[test]
fn a_redirected_post_keeps_its_method_after_307_and_308_only() {
    let _serial = serial();
    let nginx = Nginx::start().expect("nginx starts");
    let mut sent = Vec::new();
    for (status, then) in [
        ("301", "GET"),
        ("302", "GET"),
        ("303", "GET"),
        ("307", "POST"),
        ("308", "POST"),
    ] {
        let before = seen(&nginx).len();
        let path = format!("/redirect/{status}");
        let result = run_yaml(&redirect_spec(&nginx, "h1", 1, "POST", &path));
        assert_eq!(result.total.status_codes.get("200"), Some(&10), "{status}");
        let log = seen(&nginx);
        let second: Vec<&str> = log[before..]
            .iter()
            .skip(1)
            .step_by(2)
            .map(|(m, _)| m.as_str())
            .collect();
        assert_eq!(second, [then; 10], "{status}: {log:?}");
        sent.push(result.total.bytes_sent / 10);
    }
    // 307 and 308 send the body (and its headers) again; 301, 302 and 303 drop them.
    assert!(sent[3] > sent[1] + 6 && sent[4] == sent[3], "{sent:?}");
    assert!(sent[0] == sent[1] && sent[1] == sent[2], "{sent:?}");
}
