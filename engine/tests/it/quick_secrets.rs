//! Secrets given to a one-line run (`loadgate quick`, `loadgate curl`): a URL's `user:pass@`,
//! secret query parameters (`access_token`, `api_key`, `sig`) and secret headers
//! (`Private-Token`, `X-Amz-Security-Token`, `apikey`) reach the server, and never stdout,
//! stderr or the emitted spec, whose `${LOADGATE_…}` variables, set in the environment, send
//! them again. Against a recording HTTP/1.1 server on loopback.

use crate::support;

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use support::{loadgate, turn};

/// The secrets of these tests: none may appear in any output.
const SECRETS: &[&str] = &[
    "alice",
    "PASSWORDq7",
    // base64 of `alice:PASSWORDq7`, as an `Authorization: Basic` header carries it.
    "YWxpY2U6UEFTU1dPUkRxNw",
    "TOKENq1",
    "KEYq2",
    "SIGq3",
    "PRIVATEq4",
    "AMZq5",
    "APIKEYq6",
];

/// A server that answers every request `200 ok` (keep-alive) and records each request head.
struct Recorder {
    base: String,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = heads.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = seen.clone();
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        Recorder { base, heads }
    }

    /// Whether some request head contains every one of `parts`.
    fn saw(&self, parts: &[&str]) -> bool {
        let heads = self.heads.lock().unwrap();
        heads.iter().any(|h| parts.iter().all(|p| h.contains(p)))
    }
}

/// Reads request heads (GET, no bodies) from `stream` until it closes; answers each.
fn serve(stream: TcpStream, seen: &Mutex<Vec<String>>) {
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut head = String::new();
        loop {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            head.push_str(&line);
            if line == "\r\n" {
                break;
            }
        }
        seen.lock().unwrap().push(head);
        let answer = b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
        if writer.write_all(answer).is_err() {
            return;
        }
    }
}

/// stdout and stderr of `out`, together.
fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Fails when any secret is in `text`.
fn no_secret_in(text: &str, what: &str) {
    for secret in SECRETS {
        assert!(!text.contains(secret), "{what} shows {secret:?}:\n{text}");
    }
}

/// The URL of the tests on `base`: credentials, two secret query parameters of three.
fn url(base: &str) -> String {
    let host = base.strip_prefix("http://").unwrap();
    format!(
        "http://alice:PASSWORDq7@{host}/api?access_token=TOKENq1&page=2&api_key=KEYq2&sig=SIGq3"
    )
}

const HEADERS: [&str; 3] = [
    "Private-Token: PRIVATEq4",
    "X-Amz-Security-Token: AMZq5",
    "apikey: APIKEYq6",
];

/// What the server must see of the request of [`url`] and [`HEADERS`].
const SENT: &[&str] = &[
    "GET /api?access_token=TOKENq1&page=2&api_key=KEYq2&sig=SIGq3 HTTP/1.1\r\n",
    "Authorization: Basic YWxpY2U6UEFTU1dPUkRxNw==\r\n",
    "Private-Token: PRIVATEq4\r\n",
    "X-Amz-Security-Token: AMZq5\r\n",
    "apikey: APIKEYq6\r\n",
];

/// `loadgate curl` with a URL's credentials: before, its error printed the password; now the
/// credentials are sent as `Authorization: Basic`, and printed nowhere.
#[test]
fn curl_url_credentials_are_sent_and_never_printed() {
    let _turn = turn();
    let server = Recorder::start();
    let url = url(&server.base);
    let mut args = vec!["curl", "-n", "5", "-c", "1", "--", "curl", &url];
    for h in HEADERS {
        args.extend(["-H", h]);
    }
    let out = loadgate(&args);
    no_secret_in(&text(&out), "loadgate curl");
    assert!(out.status.success(), "{}", text(&out));
    assert!(server.saw(SENT), "{:?}", server.heads.lock().unwrap());

    // Its emitted spec, the same.
    args.insert(1, "--emit-spec");
    let out = loadgate(&args);
    assert!(out.status.success(), "{}", text(&out));
    no_secret_in(&text(&out), "curl --emit-spec");

    // Messages about the URL or a header do not quote their secrets either.
    let second = format!("{}/b?token=TOKENq1", server.base);
    let refused = [
        vec!["curl", "--emit-spec", "--", "curl", &url, &second],
        vec![
            "curl",
            "--emit-spec",
            "--",
            "curl",
            &url,
            "-H",
            "Private-Token PRIVATEq4",
        ],
        vec![
            "quick",
            "--emit-spec",
            "-H",
            "apikey APIKEYq6",
            &server.base,
        ],
    ];
    for args in refused {
        let out = loadgate(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        no_secret_in(&text(&out), &format!("{args:?}"));
    }
}

/// `loadgate quick --emit-spec`: the secrets are `${LOADGATE_…}` variables; the spec runs
/// with them set (and the server sees the same request as the one-line run's), and without
/// them is refused naming the variable, not its value.
#[test]
fn the_emitted_spec_names_variables_and_runs_with_them_set() {
    let _turn = turn();
    let server = Recorder::start();
    let url = url(&server.base);
    let mut args = vec!["quick", "-n", "5", "-c", "1"];
    for h in HEADERS {
        args.extend(["-H", h]);
    }
    args.push(&url);
    let out = loadgate(&args);
    no_secret_in(&text(&out), "loadgate quick");
    assert!(out.status.success(), "{}", text(&out));
    assert!(server.saw(SENT), "{:?}", server.heads.lock().unwrap());

    args.insert(1, "--emit-spec");
    let out = loadgate(&args);
    assert!(out.status.success(), "{}", text(&out));
    let spec = String::from_utf8(out.stdout).unwrap();
    no_secret_in(&spec, "the emitted spec");
    let vars = [
        ("LOADGATE_AUTHORIZATION", "Basic YWxpY2U6UEFTU1dPUkRxNw=="),
        ("LOADGATE_QUERY_ACCESS_TOKEN", "TOKENq1"),
        ("LOADGATE_QUERY_API_KEY", "KEYq2"),
        ("LOADGATE_QUERY_SIG", "SIGq3"),
        ("LOADGATE_PRIVATE_TOKEN", "PRIVATEq4"),
        ("LOADGATE_X_AMZ_SECURITY_TOKEN", "AMZq5"),
        ("LOADGATE_APIKEY", "APIKEYq6"),
    ];
    for (var, _) in vars {
        assert!(spec.contains(&format!("${{{var}}}")), "{var} in\n{spec}");
    }
    assert!(spec.contains("&page=2&"), "{spec}");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("quick.loadgate.yaml");
    std::fs::write(&path, &spec).unwrap();
    let run = |set: bool| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_loadgate"));
        command.args(["run", path.to_str().unwrap()]);
        for (var, value) in vars {
            command.env_remove(var);
            if set {
                command.env(var, value);
            }
        }
        command.output().unwrap()
    };
    server.heads.lock().unwrap().clear();
    let out = run(true);
    no_secret_in(&text(&out), "loadgate run of the emitted spec");
    assert!(out.status.success(), "{}", text(&out));
    assert!(server.saw(SENT), "{:?}", server.heads.lock().unwrap());

    let out = run(false);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("LOADGATE_"), "{}", text(&out));
}
