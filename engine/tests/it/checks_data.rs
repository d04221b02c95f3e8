//! Checks, data files and generated values through the whole pipeline (spec -> validate ->
//! plan -> run -> result, in-process) against real servers on loopback: the built-in target
//! (`loadgate serve`, over HTTP/1.1 and HTTP/2), whose `?status=` and `?header=Name:Value`
//! echo what a request carried into its response, and a small HTTP/1.1 server of this file
//! that logs each request's path, `X-Id` header and body.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use loadgate::result::{RunResult, TargetResult};

/// Validates, plans and runs `yaml` with `files` beside it.
fn run_in(yaml: &str, files: &[(&str, &str)]) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("spec.yaml");
    let source = loadgate::spec::SourceSpec::parse(path, yaml.to_string()).expect("spec parses");
    let plan = loadgate::validate::check(&source, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let stop = Arc::new(AtomicBool::new(false));
    let output = loadgate::run::execute(&plan, stop, &mut |_| {}).expect("the run is carried out");
    loadgate::result::build(&plan, &output)
}

fn target<'r>(result: &'r RunResult, name: &str) -> &'r TargetResult {
    result
        .targets
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no target {name}"))
}

/// Each check of `t` as `(check, passed, failed)`.
fn checks(t: &TargetResult) -> Vec<(String, u64, u64)> {
    t.checks
        .iter()
        .map(|c| (c.check.clone(), c.passed, c.failed))
        .collect()
}

const UUID: &str = "^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$";

#[test]
fn data_rows_and_generated_values_reach_the_built_in_target_and_are_checked() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let rows = "code,user\n200,ann\n201,bob\n202,cy\n203,dee\n";
    for protocol in ["h1", "h2"] {
        let yaml = format!(
            "version: 1\nname: data\ndefaults:\n  base_url: {}\n  timeout: 5s\n  protocol: {protocol}\n\
             targets:\n  - name: echo\n    \
             path: '/any?status={{{{code}}}}&header=X-User:{{{{user}}}}&header=X-Id:{{{{uuid}}}}&header=X-N:{{{{random_int(5,9)}}}}'\n    \
             data: {{ file: rows.csv }}\n    expect: {{ status: [2xx] }}\n    checks:\n\
             \x20     - {{ status: 200, name: first row }}\n\
             \x20     - {{ status: 2xx }}\n\
             \x20     - {{ header: X-User, matches: '^(ann|bob|cy|dee)$' }}\n\
             \x20     - {{ header: X-User, equals: ann }}\n\
             \x20     - {{ header: X-Id, matches: '{UUID}' }}\n\
             \x20     - {{ header: X-N, matches: '^[5-9]$' }}\n\
             \x20     - {{ body_matches: '^ok' }}\n\
             \x20     - {{ duration: 5s }}\n\
             load:\n  connections: 2\n  requests: 40\n",
            server.url()
        );
        let result = run_in(&yaml, &[("rows.csv", rows)]);
        let t = target(&result, "echo");
        // Sequential rows over all virtual users: each of the four, ten times.
        let codes: BTreeMap<&str, u64> = t
            .status_codes
            .iter()
            .map(|(code, n)| (code.as_str(), *n))
            .collect();
        assert_eq!(
            codes,
            BTreeMap::from([("200", 10), ("201", 10), ("202", 10), ("203", 10)]),
            "{protocol}"
        );
        assert_eq!(t.errors, 0, "{protocol}");
        assert_eq!(
            t.transport.as_ref().map(|t| t.protocol.as_str()),
            Some(protocol)
        );
        let x_user = "header x-user ~ /^(ann|bob|cy|dee)$/";
        let x_id = format!("header x-id ~ /{UUID}/");
        assert_eq!(
            checks(t),
            [
                ("first row".to_string(), 10, 30),
                ("status 2xx".to_string(), 40, 0),
                (x_user.to_string(), 40, 0),
                ("header x-user == \"ann\"".to_string(), 10, 30),
                (x_id, 40, 0),
                ("header x-n ~ /^[5-9]$/".to_string(), 40, 0),
                ("body ~ /^ok/".to_string(), 40, 0),
                ("duration < 5s".to_string(), 40, 0),
            ],
            "{protocol}"
        );
        assert_eq!((t.checks_passed, t.checks_failed), (260, 60), "{protocol}");
        // The URL is reported as written.
        assert!(
            t.url.as_deref().unwrap().contains("status={{code}}"),
            "{:?}",
            t.url
        );
    }
}

#[test]
fn a_data_file_read_once_ends_the_run_when_its_rows_are_used() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = format!(
        "version: 1\nname: once\ndefaults:\n  base_url: {}\n  timeout: 5s\n\
         targets:\n  - name: t\n    path: '/x?status={{{{code}}}}'\n    \
         data: {{ file: rows.json, order: once }}\n\
         load:\n  connections: 2\n  duration: 30s\n",
        server.url()
    );
    let rows = r#"[{"code": 200}, {"code": 201}, {"code": 202}]"#;
    let started = std::time::Instant::now();
    let result = run_in(&yaml, &[("rows.json", rows)]);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the rows ended it"
    );
    let t = target(&result, "t");
    let codes: Vec<(&str, u64)> = t
        .status_codes
        .iter()
        .map(|(c, n)| (c.as_str(), *n))
        .collect();
    assert_eq!(codes, [("200", 1), ("201", 1), ("202", 1)]);
}

/// What the logging server saw of one request: its path, its `X-Id` header and its body.
#[derive(Debug, Clone)]
struct Seen {
    path: String,
    id: String,
    body: String,
}

/// An HTTP/1.1 server on loopback (a thread per connection, keep-alive) answering `200 ok`
/// to everything and logging each request.
fn logging_server() -> (SocketAddr, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let log: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let for_server = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let log = for_server.clone();
            std::thread::spawn(move || serve(stream, &log));
        }
    });
    (addr, log)
}

fn serve(stream: TcpStream, log: &Mutex<Vec<Seen>>) {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split(' ').nth(1).unwrap_or("").to_string();
        let (mut length, mut id) = (0, String::new());
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let Some((name, value)) = header.trim_end().split_once(": ") else {
                break;
            };
            match name.to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().unwrap(),
                "x-id" => id = value.to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).unwrap();
        let body = String::from_utf8(body).unwrap();
        log.lock().unwrap().push(Seen { path, id, body });
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        if out.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn generated_values_are_drawn_per_request() {
    let (addr, log) = logging_server();
    let yaml = format!(
        "version: 1\nname: gen\ntargets:\n  - name: t\n    method: POST\n    \
         url: 'http://{addr}/r/{{{{vu}}}}/{{{{iteration}}}}'\n    \
         headers: {{ X-Id: '{{{{ uuid }}}}' }}\n    \
         body: '{{{{random_int(1,6)}}}} {{{{timestamp_ms}}}}'\n\
         load:\n  connections: 2\n  requests: 60\n"
    );
    let before = now_ms();
    let result = run_in(&yaml, &[]);
    let after = now_ms();
    assert_eq!(target(&result, "t").requests, 60);
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen.len(), 60, "{seen:?}");
    let ids: HashSet<&str> = seen.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids.len(), 60, "a uuid per request");
    let uuid = regex::Regex::new(UUID).unwrap();
    assert!(seen.iter().all(|s| uuid.is_match(&s.id)), "{seen:?}");
    // Per virtual user (1 and 2): its requests numbered 0, 1, 2, ... without a gap.
    let mut per_vu: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for s in &seen {
        let parts: Vec<&str> = s.path.split('/').collect();
        let (vu, iteration) = (parts[2].parse().unwrap(), parts[3].parse().unwrap());
        assert!(per_vu.entry(vu).or_default().insert(iteration), "{s:?}");
    }
    assert_eq!(per_vu.keys().copied().collect::<Vec<u64>>(), [1, 2]);
    for iterations in per_vu.values() {
        let n = iterations.len() as u64;
        assert_eq!(
            iterations.iter().copied().collect::<Vec<u64>>(),
            (0..n).collect::<Vec<u64>>()
        );
    }
    let mut dice = BTreeSet::new();
    for s in &seen {
        let (die, ms) = s.body.split_once(' ').unwrap();
        let (die, ms): (u64, u128) = (die.parse().unwrap(), ms.parse().unwrap());
        assert!((1..=6).contains(&die), "{s:?}");
        assert!((before..=after).contains(&ms), "{s:?}");
        dice.insert(die);
    }
    assert!(
        dice.len() >= 3,
        "60 draws of 1..=6 show several faces: {dice:?}"
    );
}

fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}

#[test]
fn fail_iteration_fails_an_iteration_on_a_failed_check() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let flow = |name: &str, on_error: &str| {
        format!(
            "  - name: {name}\n    on_error: {on_error}\n    data: {{ file: users.csv }}\n    steps:\n\
             \x20     - name: login\n        method: POST\n        path: /api/login\n\
             \x20       body: '{{\"user\": \"{{{{user}}}}\", \"password\": \"secret-{{{{user}}}}\"}}'\n\
             \x20       checks:\n          - {{ json: /user, equals: ann }}\n\
             \x20     - name: list\n        path: /api/items\n"
        )
    };
    let yaml = format!(
        "version: 1\nname: fail\ndefaults:\n  base_url: {}\n  timeout: 5s\nflows:\n{}{}\
         load:\n  connections: 1\n  requests: 40\n",
        server.url(),
        flow("strict", "fail_iteration"),
        flow("lenient", "next_iteration"),
    );
    let result = run_in(&yaml, &[("users.csv", "user\nann\nbob\n")]);
    let flow = |name: &str| {
        result
            .flows
            .iter()
            .find(|f| f.name == name)
            .unwrap_or_else(|| panic!("no flow {name}"))
    };
    let (strict, lenient) = (flow("strict"), flow("lenient"));
    assert_eq!(strict.iterations + lenient.iterations, 40);
    // Half of each flow's rows are bob's, whose login fails the check.
    assert_eq!(
        strict.failed_by_reason.get("check").copied(),
        Some(strict.failed)
    );
    assert!(strict.failed > 0 && strict.passed > 0, "{strict:?}");
    assert_eq!(lenient.failed, 0, "{lenient:?}");
    let login = target(&result, "strict/login");
    assert_eq!(login.checks[0].failed, strict.failed);
    assert_eq!(
        target(&result, "strict/list").requests,
        strict.passed,
        "a failed check ends the iteration"
    );
    assert_eq!(target(&result, "lenient/list").requests, lenient.iterations);
}

#[test]
fn a_target_rendered_per_request_runs_over_h3() {
    let pki = crate::support::TestPki::generate();
    let server = loadgate::serve::spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .expect("spawn the HTTP/3 server");
    let yaml = format!(
        "version: 1\nname: h3\ndefaults:\n  base_url: {url}\n  timeout: 5s\n  protocol: h3\n  \
         tls:\n    ca_file: {ca}\ntargets:\n  - name: echo\n    \
         path: '/x?status={{{{code}}}}&header=X-Id:{{{{uuid}}}}'\n    \
         data: {{ file: rows.csv }}\n    checks:\n      - {{ header: X-Id, matches: '{UUID}' }}\n\
         load:\n  connections: 1\n  streams: 2\n  requests: 20\n",
        url = server.url(),
        ca = pki.path("ca.pem").display(),
    );
    let result = run_in(&yaml, &[("rows.csv", "code\n200\n202\n")]);
    let t = target(&result, "echo");
    assert_eq!(t.transport.as_ref().unwrap().protocol, "h3");
    assert_eq!(t.status_codes.get("200"), Some(&10), "{:?}", t.status_codes);
    assert_eq!(t.status_codes.get("202"), Some(&10), "{:?}", t.status_codes);
    assert_eq!((t.checks_passed, t.checks_failed), (20, 0));
}
