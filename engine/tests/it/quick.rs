//! The one-line runs (`loadgate quick`, `loadgate curl`), through the binary, against the
//! built-in target on loopback: each flag's spec field (`--emit-spec`), the emitted spec
//! planning and running the same load as the one-line run, the curl import, `--format
//! jsonl|csv` appended across runs, rounds, several URLs with a delay, `-v`, `--status-code`.

use crate::support;

use std::path::Path;
use std::time::{Duration, Instant};

use loadgate::serve::{ServerHandle, spawn};
use serde_json::Value;
use support::{loadgate, turn};

/// The built-in target on a free loopback port, and its base URL.
fn target() -> (ServerHandle, String) {
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let base = format!("http://{}", server.addr());
    (server, base)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `loadgate ARGS`, which must exit 0: its stdout.
fn ok(args: &[&str]) -> String {
    let out = loadgate(args);
    assert!(
        out.status.success(),
        "loadgate {args:?}: {:?}\n{}{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// The spec `loadgate quick --emit-spec FLAGS URL` prints.
fn emitted(flags: &[&str]) -> String {
    let mut args = vec!["quick", "--emit-spec"];
    args.extend_from_slice(flags);
    args.push("http://127.0.0.1:9/p?q=1");
    ok(&args)
}

/// The JSON lines of a `--format jsonl` stdout.
fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// Each flag of the one-line run, and the line of the emitted spec it becomes (the newest
/// fields also run end to end: `the_newest_fields_run_end_to_end`).
#[test]
fn each_flag_maps_to_its_spec_field() {
    let cases: &[(&[&str], &[&str])] = &[
        (&[], &["  connections: 50\n", "  requests: 200\n"]),
        (&["-n", "7"], &["  requests: 7\n"]),
        (&["-c", "3"], &["  connections: 3\n"]),
        (&["-z", "2s"], &["  duration: \"2s\"\n"]),
        (&["-z", "3"], &["  duration: \"3s\"\n"]),
        (
            &["-q", "250", "-c", "20"],
            &[
                "  model: open\n",
                "  rate: \"250/s\"\n",
                "  max_in_flight: 20\n",
            ],
        ),
        (&["-m", "put"], &["    method: \"PUT\"\n"]),
        (&["-d", "a=${b}"], &["    body: \"a=$${b}\"\n"]),
        (&["-D", "body.json"], &["    body_file: \"body.json\"\n"]),
        (
            &["-T", "text/csv"],
            &["      \"Content-Type\": \"text/csv\"\n"],
        ),
        (
            &["-H", "X-A: 1", "-H", "x-a: 2"],
            &["      \"X-A\": \"1, 2\"\n"],
        ),
        (&["-A", "text/html"], &["      \"Accept\": \"text/html\"\n"]),
        (
            &["-a", "user:secret"],
            &["      \"Authorization\": \"${LOADGATE_AUTHORIZATION}\"\n"],
        ),
        (&["-t", "20"], &["  timeout: \"20s\"\n"]),
        (&["--http2"], &["  protocol: h2\n"]),
        (&["-k"], &["  tls:\n    insecure_skip_verify: true\n"]),
        (&["--insecure"], &["    insecure_skip_verify: true\n"]),
        (&["--cacert", "ca.pem"], &["    ca_file: \"ca.pem\"\n"]),
        (&["-p", "8"], &["  protocol: h2\n", "  streams: 8\n"]),
        (&["--streams", "4"], &["  streams: 4\n"]),
        (&["--rps", "10"], &["  pacing: \"10/s\"\n"]),
        (&["-w", "2s"], &["  warmup: \"2s\"\n"]),
        (
            &["--ramp-up", "5s", "-w", "1s", "-z", "10s", "-c", "8"],
            &[
                "  stages:\n    - {duration: \"5s\", level: 8, warmup: true}\n    \
                 - {duration: \"1s\", level: 8, warmup: true}\n    \
                 - {duration: \"10s\", level: 8}\n",
            ],
        ),
        (
            &["--status-code", "201"],
            &["    expect:\n      status: [201]\n"],
        ),
        (&["--disable-keepalive"], &["  keep_alive: false\n"]),
        (
            &["--connect-timeout", "2s"],
            &["  connect_timeout: \"2s\"\n"],
        ),
        (&["--threads", "2"], &["  threads: 2\n"]),
        (&["--slow", "1s"], &["  slow: \"1s\"\n"]),
        (&["-w", "100"], &["  warmup: 100\n"]),
        (
            &[
                "--tls-ciphers",
                "TLS13_AES_128_GCM_SHA256,TLS13_CHACHA20_POLY1305_SHA256",
            ],
            &["    ciphers: [\"TLS13_AES_128_GCM_SHA256\", \"TLS13_CHACHA20_POLY1305_SHA256\"]\n"],
        ),
        (&["--redirect", "3"], &["  redirects: 3\n"]),
    ];
    for (flags, lines) in cases {
        let spec = emitted(flags);
        for line in *lines {
            assert!(spec.contains(line), "{flags:?}: no {line:?} in\n{spec}");
        }
    }
    // The secret is not in the text.
    assert!(!emitted(&["-a", "user:secret"]).contains("secret"));
    // A header given with -H wins over -T and -A, never joined with them (as in hey).
    let spec = emitted(&["-T", "text/csv", "-H", "content-type: a/b", "-A", "x/y"]);
    assert!(spec.contains("\"content-type\": \"a/b\"\n"), "{spec}");
    assert!(!spec.contains("text/csv"), "{spec}");
    assert!(spec.contains("\"Accept\": \"x/y\"\n"), "{spec}");
    // Off by a flag: nothing written (the spec's defaults are off).
    for (flag, field) in [
        ("--disable-compression", "compression"),
        ("--disable-redirects", "redirects"),
    ] {
        assert!(!emitted(&[flag]).contains(field), "{flag}");
    }
}

/// Flags that cannot go together are refused before anything is sent, naming the flag.
#[test]
fn conflicting_flags_are_refused() {
    for (args, says) in [
        (&["-n", "5", "-z", "1s"][..], "--duration"),
        (&["--ramp-up", "2s"][..], "--ramp-up needs -z"),
        (&["-H", "no colon"][..], "expected `Name: value`"),
        (&["-q", "10", "--rps", "2"][..], "--rps"),
    ] {
        let mut all = vec!["quick", "--emit-spec"];
        all.extend_from_slice(args);
        all.push("http://127.0.0.1:9/");
        let out = loadgate(&all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

/// The printed spec plans the load of the one-line run: `loadgate run` of it sends the same
/// requests (same bytes), the same count, on the same connections, and the plan's request
/// holds the flags' method, headers and body. It is a gate: the schema modeline first, an
/// `slo:` and a `regression:` block, every line of them commented; `loadgate validate`
/// accepts it, it passes against the built-in target and fails (exit 1) against a slow one.
#[test]
fn the_emitted_spec_plans_and_runs_the_same_load() {
    let _turn = turn();
    let (_server, base) = target();
    let url = format!("{base}/echo?delay=1ms");
    let flags = [
        "-n",
        "120",
        "-c",
        "3",
        "-m",
        "POST",
        "-d",
        "{\"k\":1}",
        "-T",
        "application/json",
        "-H",
        "X-Trace: t1",
        "-t",
        "5",
    ];
    let mut quick = vec!["quick", "--quiet", "--format", "jsonl"];
    quick.extend_from_slice(&flags);
    quick.push(&url);
    let mut emit = vec!["quick", "--emit-spec"];
    emit.extend_from_slice(&flags);
    emit.push(&url);

    let dir = tempfile::tempdir().unwrap();
    let spec_path = dir.path().join("quick.loadgate.yaml");
    let text = ok(&emit);
    std::fs::write(&spec_path, &text).unwrap();
    assert!(
        text.starts_with(&format!(
            "# yaml-language-server: $schema=https://raw.githubusercontent.com/loadgate/loadgate/v{}/schema/loadgate.schema.json\n",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
    let gate = &text[text.find("\nslo:").expect("an slo block") + 1..];
    assert!(gate.contains("\nregression:"), "{text}");
    for line in gate.lines() {
        assert!(
            line.contains(" # "),
            "every line of the gate says what it means: {line}"
        );
    }
    // docs/quick.md shows the blocks as they are printed.
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/quick.md")).unwrap();
    assert!(
        docs.contains(gate),
        "docs/quick.md shows another gate than\n{gate}"
    );
    assert!(ok(&["validate", spec_path.to_str().unwrap()]).contains("valid"));
    // Planned: the request bytes of the printed spec.
    let source = loadgate::spec::SourceSpec::read(&spec_path).unwrap();
    let plan = loadgate::validate::check(&source, &|_| None).unwrap();
    assert_eq!(plan.targets.len(), 1);
    let request = String::from_utf8_lossy(&plan.targets[0].request).into_owned();
    assert!(
        request.starts_with("POST /echo?delay=1ms HTTP/1.1\r\n"),
        "{request}"
    );
    for part in [
        "X-Trace: t1\r\n",
        "Content-Type: application/json\r\n",
        "\r\n\r\n{\"k\":1}",
    ] {
        assert!(request.contains(part), "{part:?} in {request:?}");
    }

    let quick_line = &json_lines(&ok(&quick))[0];
    let spec = spec_path.to_str().unwrap();
    let run_line = &json_lines(&ok(&["run", spec, "--quiet", "--format", "jsonl"]))[0];
    for field in [
        "name",
        "model",
        "connections",
        "streams",
        "threads",
        "requests",
        "status_2xx",
        "bytes_sent",
    ] {
        assert_eq!(quick_line[field], run_line[field], "{field}");
    }
    assert_eq!(quick_line["requests"], 120);
    assert_eq!(quick_line["connections"], 3);
    assert_eq!(quick_line["errors"], 0);
    assert_eq!(run_line["passed"], true);

    // Its latency SLO (p99 under 1 s) fails on responses 1.2 s late: the gate says no.
    let slow = format!("{base}/?delay=1200ms");
    let slow_path = dir.path().join("slow.loadgate.yaml");
    std::fs::write(
        &slow_path,
        ok(&["quick", "--emit-spec", "-n", "4", "-c", "4", &slow]),
    )
    .unwrap();
    let out = loadgate(&["run", slow_path.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains("p(99) < 1s"), "{}", stdout(&out));
}

/// A browser's "Copy as cURL" (Firefox's, one string, as pasted) becomes the same request:
/// its spec, then a run of it on loopback.
#[test]
fn a_copy_as_curl_line_is_imported() {
    let line = "curl 'http://127.0.0.1:9/api/items?page=2' -X POST \
        -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0' \
        -H 'Accept: application/json, text/plain, */*' -H 'Accept-Language: en-US,en;q=0.5' \
        -H 'Accept-Encoding: gzip, deflate, br, zstd' -H 'Content-Type: application/json' \
        -H 'Origin: http://127.0.0.1:9' -H 'Connection: keep-alive' \
        -H 'Cookie: session=abc123; theme=dark' \
        --data-raw '{\"name\":\"it'\\''s\",\"tags\":[\"a\",\"b\"]}' --compressed";
    let spec = ok(&["curl", "--emit-spec", "-n", "10", "-c", "2", "--", line]);
    for part in [
        "    method: \"POST\"\n",
        "    url: \"http://127.0.0.1:9/api/items?page=2\"\n",
        "      \"Accept\": \"application/json, text/plain, */*\"\n",
        "      \"Cookie\": \"${LOADGATE_COOKIE}\"\n",
        "    body: \"{\\\"name\\\":\\\"it's\\\",\\\"tags\\\":[\\\"a\\\",\\\"b\\\"]}\"\n",
        "  compression: true\n",
        "  requests: 10\n",
        "  connections: 2\n",
    ] {
        assert!(spec.contains(part), "no {part:?} in\n{spec}");
    }
    assert!(!spec.contains("abc123"), "the cookie is a secret:\n{spec}");
    assert!(!spec.contains("redirects"), "no -L: no redirects\n{spec}");

    // The same request (words after `--`, with --compressed) runs on loopback.
    let _turn = turn();
    let (_server, base) = target();
    // (The built-in target refuses query parameters it does not know: a path alone.)
    let url = format!("{base}/orders");
    let out = ok(&[
        "curl",
        "-n",
        "20",
        "-c",
        "2",
        "--quiet",
        "--format",
        "jsonl",
        "--",
        "curl",
        &url,
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-H",
        "Cookie: session=abc123",
        "--data-raw",
        "{\"a\":1}",
        "--compressed",
    ]);
    let line = &json_lines(&out)[0];
    assert_eq!(line["requests"], 20);
    assert_eq!(line["status_2xx"], 20);
    assert_eq!(line["name"], format!("POST {url}"));
}

/// An option loadgate does not take is named, exit 2, and nothing is sent.
#[test]
fn an_unknown_curl_option_is_named() {
    for (command, option) in [
        (
            vec!["curl", "http://127.0.0.1:9/", "--proxy", "http://p:1"],
            "`--proxy`",
        ),
        (vec!["curl http://127.0.0.1:9/ -H 'A: b' -v"], "`-v`"),
        (
            vec!["curl", "-b", "cookies.txt", "http://127.0.0.1:9/"],
            "`-b cookies.txt`",
        ),
    ] {
        let mut args = vec!["curl", "--emit-spec", "--"];
        args.extend(command.iter().copied());
        let out = loadgate(&args);
        assert_eq!(out.status.code(), Some(2), "{command:?}");
        assert!(
            stderr(&out).contains(option),
            "{command:?}: {}",
            stderr(&out)
        );
        assert!(stdout(&out).is_empty());
    }
}

/// `--format jsonl|csv --output FILE` appends one line per run across commands; a CSV
/// header only at the top of the file; stdout keeps the text summary.
#[test]
fn lines_append_across_runs_with_one_header() {
    let _turn = turn();
    let (_server, base) = target();
    let dir = tempfile::tempdir().unwrap();
    for format in ["csv", "jsonl"] {
        let file = dir.path().join(format!("runs.{format}"));
        let file = file.to_str().unwrap();
        for n in ["30", "40"] {
            let out = ok(&[
                "quick", "-n", n, "-c", "2", "--quiet", "--format", format, "--output", file, &base,
            ]);
            assert!(out.contains("requests"), "the summary on stdout: {out}");
        }
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        if format == "csv" {
            assert_eq!(lines.len(), 3, "{text}");
            assert!(
                lines[0].starts_with("name,url,protocol,started_at,"),
                "{text}"
            );
            assert_eq!(text.matches("name,url,protocol").count(), 1);
            let requests = lines[0].split(',').position(|c| c == "requests").unwrap();
            let counts: Vec<&str> = lines[1..]
                .iter()
                .map(|l| l.split(',').nth(requests).unwrap())
                .collect();
            assert_eq!(counts, ["30", "40"]);
        } else {
            let rows = json_lines(&text);
            assert_eq!(rows.len(), 2);
            assert_eq!(
                (rows[0]["requests"].as_u64(), rows[1]["requests"].as_u64()),
                (Some(30), Some(40))
            );
            assert!(rows[1]["latency_p99_us"].as_u64().unwrap() > 0);
        }
    }
    // A file that cannot be opened is refused before any load (exit 2).
    let nowhere = dir.path().join("missing/runs.csv");
    let out = loadgate(&[
        "quick",
        "-n",
        "5",
        "--format",
        "csv",
        "--output",
        nowhere.to_str().unwrap(),
        &base,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("missing/runs.csv"),
        "{}",
        stderr(&out)
    );
    // `run` takes the same flags.
    let file = dir.path().join("runs.csv");
    let spec = dir.path().join("s.yaml");
    std::fs::write(
        &spec,
        format!("version: 1\nname: s\ntargets: [{{name: a, url: \"{base}/\"}}]\nload: {{connections: 1, requests: 5}}\n"),
    )
    .unwrap();
    ok(&[
        "run",
        spec.to_str().unwrap(),
        "-q",
        "--format",
        "csv",
        "--output",
        file.to_str().unwrap(),
    ]);
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");
    assert!(text.lines().last().unwrap().starts_with("s,"), "{text}");
}

/// `--rounds 3`: three runs, three lines, and the summary across rounds (mean, standard
/// deviation) of the RPS and each percentile.
#[test]
fn rounds_are_summarised() {
    let _turn = turn();
    let (_server, base) = target();
    let out = loadgate(&[
        "quick", "-n", "50", "-c", "2", "--rounds", "3", "--quiet", "--format", "jsonl", &base,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json_lines(&stdout(&out)).len(), 3);
    // With jsonl on stdout, the summary goes to stderr.
    let err = stderr(&out);
    assert!(err.contains("Across 3 rounds:"), "{err}");
    for row in ["rps", "p50", "p90", "p95", "p99", "p99.9"] {
        assert!(
            err.lines()
                .any(|l| l.trim_start().starts_with(&format!("{row} "))),
            "no {row} row in {err}"
        );
    }
    assert!(err.contains("mean") && err.contains("stdev"), "{err}");
}

/// Several URLs run one after another, `--delay` apart, each warmed up first.
#[test]
fn several_urls_run_in_turn_with_a_delay() {
    let _turn = turn();
    let (_server, base) = target();
    let (a, b) = (format!("{base}/a"), format!("{base}/b"));
    let start = Instant::now();
    let out = ok(&[
        "quick", "-n", "20", "-c", "1", "--delay", "700ms", "-w", "100ms", "--quiet", "--format",
        "jsonl", &a, &b,
    ]);
    let elapsed = start.elapsed();
    let lines = json_lines(&out);
    let names: Vec<&str> = lines.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, [format!("GET {a}"), format!("GET {b}")]);
    // Two warmups of 100 ms and the delay.
    assert!(elapsed >= Duration::from_millis(900), "{elapsed:?}");
}

/// `-v` shows one sample response before the load: where it went, the protocol, the status
/// line, headers and the body's first bytes; the request's headers (secrets) are not shown.
#[test]
fn verbose_shows_a_sample_response() {
    let _turn = turn();
    let (server, base) = target();
    let url = format!("{base}/s?header=X-Sample:yes");
    let out = ok(&[
        "quick", "-v", "-n", "5", "-c", "1", "--quiet", "-a", "u:hidden", &url,
    ]);
    let addr = server.addr();
    for part in [
        format!("* {addr} resolved to {addr}, HTTP/1.1\n"),
        format!("> GET {url}\n"),
        "< HTTP/1.1 200 OK\n".to_string(),
        "< x-sample: yes\n".to_string(),
        "  ok\n".to_string(),
    ] {
        assert!(out.contains(&part), "no {part:?} in\n{out}");
    }
    assert!(
        !out.contains("hidden") && !out.contains("dTpoaWRkZW4"),
        "{out}"
    );
    // The sample comes before the load's summary.
    assert!(out.find("< HTTP/1.1").unwrap() < out.find("requests").unwrap());
}

/// `--status-code 404` makes 404 the expected answer: no errors where a 404 is served; a
/// 200 is then an error.
#[test]
fn status_code_is_the_expected_status() {
    let _turn = turn();
    let (_server, base) = target();
    let missing = format!("{base}/?status=404");
    let as_expected = &json_lines(&ok(&[
        "quick",
        "-n",
        "10",
        "-c",
        "1",
        "--quiet",
        "--format",
        "jsonl",
        "--status-code",
        "404",
        &missing,
    ]))[0];
    assert_eq!(
        (
            as_expected["errors"].as_u64(),
            as_expected["status_4xx"].as_u64()
        ),
        (Some(0), Some(10))
    );
    let out = loadgate(&[
        "quick",
        "-n",
        "10",
        "-c",
        "1",
        "--quiet",
        "--format",
        "jsonl",
        "--status-code",
        "404",
        &base,
    ]);
    let unexpected = &json_lines(&stdout(&out))[0];
    assert_eq!(unexpected["errors"], 10);
}

/// The emitted spec of several URLs: one document each, separated by `---`, each a spec
/// that `loadgate validate` accepts once saved alone.
#[test]
fn several_urls_emit_one_document_each() {
    let out = ok(&[
        "quick",
        "--emit-spec",
        "-n",
        "5",
        "http://127.0.0.1:9/a",
        "http://127.0.0.1:9/b",
    ]);
    let docs: Vec<&str> = out.split("---\n").collect();
    assert_eq!(docs.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    for (i, doc) in docs.iter().enumerate() {
        let path = dir.path().join(format!("{i}.yaml"));
        std::fs::write(&path, doc).unwrap();
        let checked = ok(&["validate", path.to_str().unwrap()]);
        assert!(checked.contains("valid"), "{checked}");
    }
    assert!(Path::new(dir.path()).join("1.yaml").exists());
}

/// The one-line defaults and the flags whose spec fields are newest, run end to end against
/// the built-in target: redirects followed by default (`--disable-redirects` makes the 302
/// the answer, and with no valid response the default errors SLO fails the run), and
/// `--disable-keepalive`, `--connect-timeout`, `--threads`, `--slow`, a `-w` request count
/// and compression in one run.
#[test]
fn the_newest_fields_run_end_to_end() {
    let _turn = turn();
    let (_server, base) = target();
    let redirect = format!("{base}/r?status=302&header=Location:/ok");
    let followed = ok(&[
        "quick", "-n", "20", "-c", "2", "--quiet", "--format", "jsonl", &redirect,
    ]);
    let row = &json_lines(&followed)[0];
    assert_eq!(row["responses"].as_u64(), Some(20), "{row}");
    assert_eq!(row["status_2xx"].as_u64(), Some(20), "{row}");
    assert_eq!(row["status_3xx"].as_u64(), Some(0), "{row}");

    let out = loadgate(&[
        "quick",
        "-n",
        "20",
        "-c",
        "2",
        "--quiet",
        "--disable-redirects",
        &redirect,
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert!(stdout(&out).contains("302"), "{}", stdout(&out));

    let text = ok(&[
        "quick",
        "-n",
        "60",
        "-c",
        "2",
        "--quiet",
        "--disable-keepalive",
        "--connect-timeout",
        "2s",
        "--threads",
        "1",
        "--slow",
        "1ms",
        "-w",
        "10",
        "--format",
        "jsonl",
        &format!("{base}/?delay=2ms"),
    ]);
    let row = &json_lines(&text)[0];
    assert_eq!(row["requests"].as_u64(), Some(60), "{row}");
    assert_eq!(row["errors"].as_u64(), Some(0), "{row}");
    assert_eq!(row["threads"].as_u64(), Some(1), "{row}");
}
