//! Flows through the whole pipeline (spec -> validate -> plan -> run -> result, in-process)
//! against real servers on loopback: a small HTTP/1.1 server of this file that logs what each
//! request carried (its cookie and token), and the built-in target's stateful API (`loadgate
//! serve`) over HTTP/1.1 and HTTP/2 (h2c).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use loadgate::result::{RunResult, TargetResult};

/// A request the server saw: path (with query), `Cookie` and `Authorization` headers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    path: String,
    cookie: String,
    auth: String,
}

/// A journey's server on loopback, one thread per connection (keep-alive), logging every
/// request. `POST /login` with a JSON body `{"user": "NAME"}`: 200
/// `{"token":"tok-NAME","user":"NAME"}` (no token for the user `nobody`), header
/// `X-User: NAME` and cookie `session=sid-NAME`. `GET /me`: 200 `<p id="NAME">` with a
/// session cookie, else 401. `GET /hop`: 302 to `/me`. Anything else: 200 `ok`.
struct Journey {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Seen>>>,
}

impl Journey {
    fn start() -> Journey {
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
        Journey { addr, log }
    }

    /// The requests seen whose path starts with `prefix`.
    fn seen(&self, prefix: &str) -> Vec<Seen> {
        let log = self.log.lock().unwrap();
        log.iter()
            .filter(|s| s.path.starts_with(prefix))
            .cloned()
            .collect()
    }
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
        let (mut length, mut cookie, mut auth) = (0, String::new(), String::new());
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
                "cookie" => cookie = value.to_string(),
                "authorization" => auth = value.to_string(),
                _ => {}
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let response = respond(&path, &body, &cookie);
        log.lock().unwrap().push(Seen { path, cookie, auth });
        if out.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn respond(path: &str, body: &[u8], cookie: &str) -> String {
    let (status, headers, body) = if path == "/login" {
        let body: serde_json::Value = serde_json::from_slice(body).unwrap();
        let user = body["user"].as_str().unwrap().to_string();
        let json = if user == "nobody" {
            format!(r#"{{"user":"{user}"}}"#)
        } else {
            format!(r#"{{"token":"tok-{user}","user":"{user}"}}"#)
        };
        let headers = format!("X-User: {user}\r\nSet-Cookie: session=sid-{user}; Path=/\r\n");
        (200, headers, json)
    } else if path == "/hop" {
        (302, "Location: /me\r\n".to_string(), String::new())
    } else if path == "/me" {
        match cookie.strip_prefix("session=sid-") {
            Some(user) => (200, String::new(), format!(r#"<p id="{user}">"#)),
            None => (401, String::new(), String::new()),
        }
    } else {
        (200, String::new(), "ok".to_string())
    };
    format!(
        "HTTP/1.1 {status} X\r\n{headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// Writes `yaml` as `spec.yaml` and `files` (name, text) beside it, then validates, plans
/// and runs it in-process; returns the result and how long the run took.
fn run_in(yaml: &str, files: &[(&str, &str)]) -> (RunResult, Duration) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let path = dir.path().join("spec.yaml");
    let source = loadgate::spec::SourceSpec::parse(path, yaml.to_string()).expect("spec parses");
    let plan = loadgate::validate::check(&source, &|_| None).unwrap_or_else(|e| panic!("{e}"));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let started = Instant::now();
    let output = loadgate::run::execute(&plan, stop, &mut |_| {}).expect("the run is carried out");
    let took = started.elapsed();
    (loadgate::result::build(&plan, &output), took)
}

fn target<'r>(result: &'r RunResult, name: &str) -> &'r TargetResult {
    result
        .targets
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no target {name}"))
}

fn status(result: &RunResult, name: &str, code: &str) -> u64 {
    let t = target(result, name);
    t.status_codes.get(code).copied().unwrap_or(0)
}

/// A flow `j` against `addr`: log in as the data row's `user` (extracting as `extract`
/// says), then `then` (steps, as YAML, indented by 6).
fn journey(addr: SocketAddr, flow: &str, extract: &str, then: &str, load: &str) -> String {
    format!(
        "version: 1\nname: flows\ndefaults:\n  base_url: http://{addr}\n  timeout: 5s\n\
         flows:\n  - name: j\n{flow}    steps:\n      - name: login\n        method: POST\n\
         \x20       path: /login\n        headers: {{Content-Type: application/json}}\n\
         \x20       body: '{{\"user\": \"{{{{user}}}}\"}}'\n        extract:\n{extract}{then}load:\n{load}"
    )
}

const USERS: &str = "user\nann\nbob\n";

#[test]
fn each_kind_of_extraction_feeds_the_next_step() {
    let server = Journey::start();
    let extract = "          - { var: token, json: /token }\n\
                   \x20         - { var: sid, cookie: session }\n\
                   \x20         - { var: who, header: X-User }\n\
                   \x20         - { var: code, status: true }\n\
                   \x20         - { var: tag, regex: '\"user\":\"(\\w+)\"' }\n\
                   \x20         - { var: none, header: X-Absent, default: dflt }\n";
    let then = "      - name: echo\n        \
                path: '/echo?t={{token}}&s={{sid}}&w={{who}}&c={{code}}&g={{tag}}&n={{none}}'\n";
    let flow = "    data: { file: users.csv }\n";
    let load = "  connections: 1\n  requests: 3\n";
    let yaml = journey(server.addr, flow, extract, then, load);
    let (result, _) = run_in(&yaml, &[("users.csv", USERS)]);
    assert_eq!(status(&result, "j/login", "200"), 3);
    assert_eq!(status(&result, "j/echo", "200"), 3);
    let paths: Vec<String> = server.seen("/echo").into_iter().map(|s| s.path).collect();
    let want = |u: &str| format!("/echo?t=tok-{u}&s=sid-{u}&w={u}&c=200&g={u}&n=dflt");
    assert_eq!(paths, [want("ann"), want("bob"), want("ann")]);
}

#[test]
fn cookies_go_with_their_user_and_each_row_once_ends_the_run() {
    let server = Journey::start();
    let extract = "          - { var: token, json: /token }\n";
    let then = "      - name: me\n        path: /me\n        \
                headers: {Authorization: 'Bearer {{token}}'}\n        \
                extract:\n          - { var: id, regex: 'id=\"(\\w+)\"' }\n";
    let flow = "    data: { file: users.csv, order: once }\n";
    let load = "  connections: 3\n  duration: 30s\n";
    let users = "user\nann\nbob\ncy\ndee\neve\n";
    let (result, took) = run_in(
        &journey(server.addr, flow, extract, then, load),
        &[("users.csv", users)],
    );
    assert!(took < Duration::from_secs(15), "the rows ran out: {took:?}");
    assert!(result.duration_s < 15.0, "{}", result.duration_s);
    assert_eq!(status(&result, "j/me", "200"), 5);
    let mut me = server.seen("/me");
    me.sort();
    let want: Vec<Seen> = ["ann", "bob", "cy", "dee", "eve"]
        .iter()
        .map(|u| Seen {
            path: "/me".into(),
            cookie: format!("session=sid-{u}"),
            auth: format!("Bearer tok-{u}"),
        })
        .collect();
    assert_eq!(
        me, want,
        "each user's cookie goes with its own token, each row once"
    );
    // Each iteration starts with an empty jar: no login carries the session of the virtual
    // user's previous row.
    let logins = server.seen("/login");
    assert_eq!(logins.len(), 5);
    assert!(logins.iter().all(|s| s.cookie.is_empty()), "{logins:?}");
}

#[test]
fn a_step_follows_a_redirect_with_its_rendered_headers_and_cookie() {
    let server = Journey::start();
    let extract = "          - { var: token, json: /token }\n";
    let then = "      - name: hop\n        path: /hop\n        \
                headers: {Authorization: 'Bearer {{token}}'}\n";
    let flow = "    data: { file: users.csv }\n";
    let load = "  connections: 1\n  requests: 2\n";
    let yaml = journey(server.addr, flow, extract, then, load)
        .replace("  timeout: 5s\n", "  timeout: 5s\n  redirects: 1\n");
    let (result, _) = run_in(&yaml, &[("users.csv", USERS)]);
    assert_eq!(
        status(&result, "j/hop", "200"),
        2,
        "the redirect's answer counts"
    );
    let me: Vec<(String, String)> = server
        .seen("/me")
        .into_iter()
        .map(|s| (s.cookie, s.auth))
        .collect();
    let pair = |u: &str| (format!("session=sid-{u}"), format!("Bearer tok-{u}"));
    assert_eq!(me, [pair("ann"), pair("bob")]);
}

#[test]
fn data_rows_in_turn_and_at_random() {
    for (order, requests) in [("sequential", 6), ("random", 30)] {
        let server = Journey::start();
        let flow = format!("    data: {{ file: users.csv, order: {order} }}\n");
        let extract = "          - { var: token, json: /token }\n";
        let then = "      - name: me\n        path: /me\n";
        let load = format!("  connections: 2\n  requests: {requests}\n");
        let yaml = journey(server.addr, &flow, extract, then, &load);
        let (result, _) = run_in(&yaml, &[("users.csv", USERS)]);
        assert_eq!(status(&result, "j/me", "200"), requests, "{order}");
        let me = server.seen("/me");
        let anns = me.iter().filter(|s| s.cookie == "session=sid-ann").count() as u64;
        let bobs = me.iter().filter(|s| s.cookie == "session=sid-bob").count() as u64;
        assert_eq!(anns + bobs, requests, "{order}: {me:?}");
        if order == "sequential" {
            assert_eq!((anns, bobs), (3, 3), "rows in turn");
        } else {
            assert!(anns > 0 && bobs > 0, "both rows drawn: {anns} {bobs}");
        }
    }
}

#[test]
fn a_missing_variable_fails_only_its_iteration() {
    let server = Journey::start();
    // `nobody` gets no token: its extraction fails, and the next step, which needs the token,
    // is not sent; `ann`'s iterations go on.
    let flow = "    on_error: continue\n    data: { file: users.csv }\n    slo:\n      \
                iterations: ['count == 6']\n      failed_iterations: ['count == 3']\n";
    let extract = "          - { var: token, json: /token }\n";
    let then = "      - name: me\n        path: /me\n        \
                headers: {Authorization: 'Bearer {{token}}'}\n\
                \x20     - name: after\n        path: /after\n";
    let load = "  connections: 1\n  requests: 6\n";
    let yaml = journey(server.addr, flow, extract, then, load);
    let (result, _) = run_in(&yaml, &[("users.csv", "user\nann\nnobody\n")]);
    assert_eq!(status(&result, "j/login", "200"), 6);
    assert_eq!(
        target(&result, "j/me").requests,
        3,
        "nobody's `me` never sent"
    );
    assert!(
        server
            .seen("/me")
            .iter()
            .all(|s| s.auth == "Bearer tok-ann")
    );
    assert_eq!(
        status(&result, "j/after", "200"),
        6,
        "on_error: continue goes on"
    );
    let flow_slo: Vec<_> = result.slo.iter().filter(|v| v.scope == "j").collect();
    assert_eq!(flow_slo.len(), 2, "{:?}", result.slo);
    assert!(
        flow_slo.iter().all(|v| v.passed),
        "6 iterations, nobody's 3 failed: {flow_slo:?}"
    );
}

#[test]
fn the_open_model_starts_an_iteration_per_arrival() {
    let server = Journey::start();
    let extract = "          - { var: token, json: /token }\n";
    let then = "      - name: me\n        path: /me\n        think_time: 10ms\n";
    let flow = "    data: { file: users.csv }\n";
    let load = "  model: open\n  rate: 40/s\n  max_in_flight: 8\n  duration: 2s\n";
    let yaml = journey(server.addr, flow, extract, then, load);
    let (result, _) = run_in(&yaml, &[("users.csv", USERS)]);
    let logins = target(&result, "j/login").requests;
    assert!(
        (70..=90).contains(&logins),
        "40 iterations/s for 2 s: {logins}"
    );
    assert_eq!(status(&result, "j/me", "200"), logins);
}

/// The shop journey of the built-in target's stateful API, over `protocol`.
fn shop(url: &str, protocol: &str) -> String {
    format!(
        "version: 1\nname: shop\ndefaults:\n  base_url: {url}\n  timeout: 5s\n  protocol: {protocol}\n\
         flows:\n  - name: shop\n    data: {{ file: users.csv }}\n    steps:\n\
         \x20     - name: login\n        method: POST\n        path: /api/login\n\
         \x20       body: '{{\"user\": \"{{{{user}}}}\", \"password\": \"secret-{{{{user}}}}\"}}'\n\
         \x20       extract:\n          - {{ var: token, json: /token }}\n\
         \x20     - name: list\n        path: /api/items\n        extract:\n\
         \x20         - {{ var: id, json: /items/2/id }}\n\
         \x20     - name: open\n        path: '/api/items/{{{{id}}}}'\n\
         \x20       headers: {{ Authorization: 'Bearer {{{{token}}}}' }}\n\
         \x20       extract:\n          - {{ var: etag, header: ETag }}\n\
         \x20     - name: add\n        method: POST\n        path: /api/cart\n\
         \x20       body: '{{\"item\": {{{{id}}}}}}'\n        expect: {{ status: [201] }}\n\
         \x20       extract:\n          - {{ var: count, json: /count }}\n\
         load:\n  connections: 4\n  requests: 40\n"
    )
}

#[test]
fn the_shop_journey_over_http1_and_h2c() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    for protocol in ["h1", "h2"] {
        let users = "user\nann\nbob\ncy\n";
        let (result, _) = run_in(&shop(&server.url(), protocol), &[("users.csv", users)]);
        for (step, code) in [
            ("login", "200"),
            ("list", "200"),
            ("open", "200"),
            ("add", "201"),
        ] {
            let name = format!("shop/{step}");
            assert_eq!(status(&result, &name, code), 40, "{protocol} {name}");
            let t = target(&result, &name);
            assert_eq!(t.errors, 0, "{protocol} {name}");
            let spoken = t.transport.as_ref().map(|t| t.protocol.as_str());
            assert_eq!(spoken, Some(protocol), "{name}");
        }
    }
}
