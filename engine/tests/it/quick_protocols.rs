//! `loadgate quick`'s protocol flags against the built-in target over TLS and over QUIC
//! (`--http1.1`, `--http2`, `--http3`, none: what ALPN picks), each asserting the protocol the
//! run's result records and its machine line carries; the flags refused together; and the
//! CSV line of a URL with a comma and a quote, read back by a CSV reader. Certificates come
//! from a CA the test makes (rcgen).

use crate::support;

use loadgate::serve::{spawn, spawn_h3, spawn_with};
use serde_json::Value;
use support::{TestPki, loadgate, turn};

/// `loadgate quick ARGS URL` (20 requests on 2 connections, trusting `pki`'s CA, one JSON
/// line): exits 0; its line, and the result it wrote.
fn quick(pki: &TestPki, args: &[&str], url: &str) -> (Value, loadgate::result::RunResult) {
    let dir = tempfile::tempdir().unwrap();
    let ca = pki.path("ca.pem");
    let out_file = dir.path().join("result.json");
    let mut all = vec![
        "quick",
        "-n",
        "20",
        "-c",
        "2",
        "--quiet",
        "--format",
        "jsonl",
        "--cacert",
        ca.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    all.push(url);
    let out = loadgate(&all);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{args:?}: {:?}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    // The same run as a spec, for the result's own record of the protocol.
    let mut emit = vec!["quick", "--emit-spec", "-n", "20", "-c", "2", "--cacert"];
    emit.push(ca.to_str().unwrap());
    emit.extend_from_slice(args);
    emit.push(url);
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, loadgate(&emit).stdout).unwrap();
    let run = loadgate(&[
        "run",
        spec.to_str().unwrap(),
        "-q",
        "--out",
        out_file.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let result = loadgate::result::read(&out_file).unwrap();
    (line, result)
}

/// Over TLS: `--http1.1` speaks HTTP/1.1 (ALPN `http/1.1` alone), `--http2` and no flag speak
/// HTTP/2 (the built-in target picks `h2` by ALPN); over QUIC, `--http3` with 4 streams per
/// connection speaks HTTP/3. The line and the result record the same protocol, and the
/// result records what was asked.
#[test]
fn each_protocol_flag_speaks_its_protocol() {
    let _turn = turn();
    let pki = TestPki::generate();
    let tls = spawn_with(
        "127.0.0.1:0".parse().unwrap(),
        1,
        Some(pki.serve_config("server", false)),
    )
    .unwrap();
    let h3 = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .unwrap();
    let (tls_url, h3_url) = (format!("{}/", tls.url()), format!("{}/", h3.url()));
    for (args, url, asked, spoken) in [
        (&["--http1.1"][..], &tls_url, "h1", "h1"),
        (&["--http2"][..], &tls_url, "h2", "h2"),
        (&[][..], &tls_url, "auto", "h2"),
        (&["--http3", "-p", "4"][..], &h3_url, "h3", "h3"),
    ] {
        let (line, result) = quick(&pki, args, url);
        assert_eq!(line["protocol"], spoken, "{args:?}: {line}");
        assert_eq!(line["url"], url.as_str(), "{args:?}");
        assert_eq!(line["status_2xx"], 20, "{args:?}: {line}");
        assert_eq!(line["status_codes"], serde_json::json!({"200": 20}));
        let transport = result.targets[0].transport.as_ref().unwrap();
        assert_eq!(
            (transport.requested.as_str(), transport.protocol.as_str()),
            (asked, spoken),
            "{args:?}"
        );
    }
}

/// Two protocol flags, or `--http1.1` with HTTP/2 streams, are refused (exit 2), naming them.
#[test]
fn protocol_flags_go_alone() {
    for (args, named) in [
        (&["--http2", "--http3"][..], "--http3"),
        (&["--http1.1", "--http2"][..], "--http1.1"),
        (&["--http3", "--http1.1"][..], "--http1.1"),
        (&["--http1.1", "-p", "4"][..], "--http1.1"),
    ] {
        let mut all = vec!["quick", "--emit-spec"];
        all.extend_from_slice(args);
        all.push("https://127.0.0.1:9/");
        let out = loadgate(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr.contains(named), "{args:?}: {stderr}");
    }
}

/// A URL with a comma and a quote, and a secret query value: the CSV line, read back by a
/// CSV reader, holds the URL whole with the secret as `${...}`, and the counts per status
/// code; the header is written once into the file.
#[test]
fn a_url_with_a_comma_and_a_quote_round_trips_through_csv() {
    let _turn = turn();
    let server = spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let url = format!("http://{}/a,b\"c?token=s3cret", server.addr());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("runs.csv");
    for _ in 0..2 {
        // The built-in target answers an unknown query parameter with 400: the run fails its
        // default errors SLO (exit 1), and the line is written all the same.
        let out = loadgate(&[
            "quick",
            "-n",
            "10",
            "-c",
            "1",
            "--quiet",
            "--format",
            "csv",
            "--output",
            file.to_str().unwrap(),
            &url,
        ]);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("s3cret"), "{text}");
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2, "one header, two rows:\n{text}");
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let shown = format!("http://{}/a,b\"c?token=${{...}}", server.addr());
    for row in &rows {
        assert_eq!(row.len(), header.len());
        assert_eq!(&row[column("url")], shown);
        assert_eq!(&row[column("protocol")], "h1");
        assert_eq!(&row[column("status_codes")], "400=10");
        assert_eq!(&row[column("status_4xx")], "10");
    }
}
