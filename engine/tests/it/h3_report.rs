//! What issue 18 (HTTP/3) adds to results and reports, on real runs: the `Alt-Svc: h3` offer of
//! `loadgate serve --h3` (in-process, TLS from a CA the test makes) seen by a `protocol: auto`
//! target and named in every report; the codes of HTTP/2 stream resets from a real `h2` server
//! counted by name; and the new fields (codes, 0-RTT, the offer, the UDP buffers) written,
//! read back, merged as `loadgate merge` does and shown by the console, Markdown and HTML
//! reports.

use crate::support;

use std::collections::BTreeMap;
use std::path::Path;

use loadgate::report::{self, Format, Input};
use loadgate::result::merge::merge;
use loadgate::result::{self, RunResult, UdpBuffersResult};
use loadgate::serve::{spawn_h3, spawn_with};
use support::{H2ResetServer, TestPki, run_yaml};

/// A one-target spec of 40 requests on 2 connections: `url`, `protocol`, the CA file of `pki`
/// when given.
fn spec(url: &str, protocol: &str, pki: Option<&TestPki>) -> String {
    let tls = pki.map_or_else(String::new, |pki| {
        format!(
            "    tls:\n      ca_file: {}\n",
            pki.path("ca.pem").display()
        )
    });
    format!(
        "version: 1\nname: h3-report\ndefaults:\n  timeout: 3s\ntargets:\n  - name: t\n    \
         url: {url}\n    protocol: {protocol}\n{tls}load:\n  connections: 2\n  requests: 40\n"
    )
}

fn render(format: Format, current: &RunResult) -> String {
    let input = Input {
        current,
        baseline: None,
        comparison: None,
        history: &[],
        spec_path: None,
    };
    report::render(format, &input, None).unwrap()
}

fn console(current: &RunResult) -> String {
    report::console::summary(
        current,
        loadgate::report::console::SummaryOptions {
            color: false,
            verbose: true,
        },
    )
}

/// Writes `result` to a file and reads it back, as a later `loadgate report` or `merge` does.
fn round_trip(result: &RunResult) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("result.json");
    result::write(result, &path).unwrap();
    result::read(&path).unwrap()
}

#[test]
fn an_auto_target_is_told_that_its_server_offers_http3() {
    let pki = TestPki::generate();
    let server = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .expect("spawn the HTTP/3 server");
    let port = server.addr().port();
    let offer = format!("h3=\":{port}\"");
    // HTTP/1.1 reads the header in the response head, HTTP/2 from the header block.
    let h1 = run_yaml(&spec(&format!("{}/", server.url()), "h1", Some(&pki)));
    let transport = h1.targets[0].transport.as_ref().unwrap();
    assert_eq!(transport.protocol, "h1");
    assert_eq!(transport.alt_svc_h3.as_deref(), Some(offer.as_str()));
    let result = run_yaml(&spec(&format!("{}/", server.url()), "auto", Some(&pki)));
    assert_eq!(
        result.total.responses, 40,
        "{:?}",
        result.total.errors_by_kind
    );
    let transport = result.targets[0].transport.as_ref().unwrap();
    assert_eq!(transport.protocol, "h2", "auto over TLS: ALPN");
    assert_eq!(transport.alt_svc_h3.as_deref(), Some(offer.as_str()));
    let result = round_trip(&result);
    let transport = result.targets[0].transport.as_ref().unwrap();
    assert_eq!(transport.alt_svc_h3.as_deref(), Some(offer.as_str()));

    let sentence = format!("the server offers HTTP/3 (Alt-Svc: {offer}); `protocol: h3` loads it");
    let md = render(Format::Md, &result);
    assert!(md.contains(&format!("> **Note:** {sentence}.")), "{md}");
    let html = render(Format::Html, &result);
    assert!(
        html.contains(&format!(
            "the server offers HTTP/3 (Alt-Svc: <span class=\"mono\">h3=&quot;:{port}&quot;</span>); \
             <code>protocol: h3</code> loads it."
        )),
        "{html}"
    );
    let text = console(&result);
    assert_eq!(text.matches(&sentence).count(), 1, "{text}");
    assert!(text.contains("protocol    h2 over TLS 1.3"), "{text}");
}

#[test]
fn a_server_without_alt_svc_offers_nothing() {
    let pki = TestPki::generate();
    let server = spawn_with(
        "127.0.0.1:0".parse().unwrap(),
        1,
        Some(pki.serve_config("server", false)),
    )
    .expect("spawn the TLS server");
    let result = run_yaml(&spec(&format!("{}/", server.url()), "auto", Some(&pki)));
    assert_eq!(result.total.responses, 40);
    let transport = result.targets[0].transport.as_ref().unwrap();
    assert_eq!(transport.alt_svc_h3, None);
    for text in [
        render(Format::Md, &result),
        render(Format::Html, &result),
        console(&result),
    ] {
        assert!(!text.contains("offers HTTP/3"), "{text}");
    }
    let json = serde_json::to_value(&result).unwrap();
    let target = &json["targets"][0];
    assert!(target["transport"].get("alt_svc_h3").is_none(), "{target}");
    assert!(target.get("errors_by_code").is_none(), "{target}");
}

#[test]
fn http2_stream_resets_are_counted_by_their_code() {
    let server = H2ResetServer::start();
    let yaml = spec(&format!("http://{}/", server.addr()), "h2", None)
        .replace("requests: 40", "streams: 4\n  requests: 400");
    let result = run_yaml(&yaml);
    assert_eq!(server.resets(), 200);
    let key = "stream_reset INTERNAL_ERROR (0x2)";
    let codes = BTreeMap::from([(key.to_string(), 200)]);
    assert_eq!(result.targets[0].errors_by_code, codes);
    assert_eq!(
        result.total.errors_by_code, codes,
        "the total sums the targets'"
    );
    assert_eq!(result.total.errors_by_kind["stream_reset"], 200);

    let md = render(Format::Md, &result);
    assert!(
        md.contains("Error codes: stream\\_reset INTERNAL\\_ERROR (0x2): 200"),
        "{md}"
    );
    let html = render(Format::Html, &result);
    assert!(
        html.contains(&format!("<td class=\"mono\">{key}</td><td>200</td>")),
        "{html}"
    );
    let text = console(&result);
    assert!(
        text.contains(&format!("error codes   {key}: 200")),
        "{text}"
    );
}

/// The committed results taken as two shards of one run (as tests/it/merge.rs does).
fn shards() -> (RunResult, RunResult) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results");
    let a = result::read(&dir.join("baseline.json")).unwrap();
    let mut b = result::read(&dir.join("current.json")).unwrap();
    b.spec.hash = a.spec.hash.clone();
    (a, b)
}

fn buffers(recv_bytes: u64, send_bytes: u64) -> UdpBuffersResult {
    let wanted_bytes = 8 << 20;
    UdpBuffersResult {
        wanted_bytes,
        recv_bytes,
        send_bytes,
        limited: recv_bytes < wanted_bytes || send_bytes < wanted_bytes,
    }
}

#[test]
fn the_new_fields_merge_read_back_and_show_in_every_report() {
    // Real phases (with their histograms) and a real h3 transport from a run.
    let pki = TestPki::generate();
    let server = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .unwrap();
    let run = run_yaml(&spec(&format!("{}/", server.url()), "auto", Some(&pki)));
    let mut phases = run.targets[0].phases_us.clone().unwrap();
    phases.zero_rtt_attempted = 3;
    phases.zero_rtt_accepted = 2;
    let mut transport = run.targets[0].transport.clone().unwrap();
    transport.protocol = "h3".to_string();
    transport.requested = "h3".to_string();

    let (mut a, mut b) = shards();
    for (i, r) in [&mut a, &mut b].into_iter().enumerate() {
        r.total.phases_us = Some(phases.clone());
        let t = &mut r.targets[0];
        t.phases_us = Some(phases.clone());
        t.transport = Some(transport.clone());
        // Shard a: 10 codes of stream_reset (0x1000-0x1009); shard b: 14 (0x1006-0x1013),
        // 4 of them a's: 20 together.
        for value in [0..10, 6..20][i].clone() {
            let key = format!("stream_reset 0x{:x}", 0x1000 + value);
            t.errors_by_code.insert(key, 1 + value as u64);
        }
        t.errors_by_code
            .insert("closed H3_NO_ERROR (0x100)".to_string(), 5);
        let resets = t.errors_by_code.values().sum::<u64>() - 5;
        t.errors_by_kind.insert("stream_reset".to_string(), resets);
        t.errors_by_kind.insert("closed".to_string(), 5);
    }
    a.environment.udp_buffers = Some(buffers(8 << 20, 8 << 20));
    b.environment.udp_buffers = Some(buffers(425_984, 8 << 20));
    let (a, b) = (round_trip(&a), round_trip(&b));
    assert_eq!(
        a.targets[0].phases_us.as_ref().unwrap().zero_rtt_accepted,
        2
    );
    assert_eq!(b.environment.udp_buffers, Some(buffers(425_984, 8 << 20)));

    let merged = merge(&[a.clone(), b.clone()], Default::default()).unwrap();
    let t = &merged.targets[0];
    let codes = &t.errors_by_code;
    // 16 distinct codes per kind at most: of the 20, the 4 least frequent (0x1000 to 0x1003:
    // 1 to 4 failures) are other.
    let stream_reset: Vec<_> = codes
        .keys()
        .filter(|k| k.starts_with("stream_reset "))
        .collect();
    assert_eq!(stream_reset.len(), 17, "{codes:?}");
    assert_eq!(codes["stream_reset other"], 1 + 2 + 3 + 4);
    assert_eq!(
        codes["stream_reset 0x1006"],
        7 + 7,
        "summed over the shards"
    );
    assert!(!codes.contains_key("stream_reset 0x1003"), "{codes:?}");
    assert_eq!(codes["stream_reset 0x1004"], 5);
    assert_eq!(codes["closed H3_NO_ERROR (0x100)"], 10);
    let total: u64 = codes.values().sum();
    let given: u64 = [&a, &b]
        .iter()
        .flat_map(|r| r.targets[0].errors_by_code.values())
        .sum();
    assert_eq!(total, given, "nothing lost to the bound");
    let p = t.phases_us.as_ref().unwrap();
    assert_eq!((p.zero_rtt_attempted, p.zero_rtt_accepted), (6, 4));
    assert_eq!(
        merged.environment.udp_buffers,
        Some(buffers(425_984, 8 << 20))
    );
    let merged = round_trip(&merged);

    let advice = "UDP socket buffers limited to 416 KiB receive, 8192 KiB send";
    let text = console(&merged);
    assert_eq!(text.matches(advice).count(), 1, "{text}");
    assert!(text.contains("protocol    h3 over QUIC, TLS 1.3"), "{text}");
    assert!(text.contains(", 6 tried 0-RTT (4 accepted)"), "{text}");
    let md = render(Format::Md, &merged);
    assert_eq!(md.matches(advice).count(), 1, "{md}");
    assert!(md.contains("Protocol: h3 over QUIC, TLS 1.3"), "{md}");
    assert!(md.contains(", 6 tried 0-RTT (4 accepted)"), "{md}");
    assert!(md.contains("stream\\_reset other: 10"), "{md}");
    assert!(!md.contains("offers HTTP/3"), "the target speaks it: {md}");
    let html = render(Format::Html, &merged);
    assert!(html.contains(advice), "{html}");
    assert!(
        html.contains("<td class=\"mono\">stream_reset other</td><td>10</td>"),
        "{html}"
    );
}

/// A spec of two HTTP/3 targets on `server` (`/` and `bad`, a path and query), 100 requests
/// on 2 connections of 2 streams; the check at start requests the first target's.
fn h3_spec(pki: &TestPki, server: &loadgate::serve::ServerHandle, bad: &str) -> String {
    format!(
        "version: 1\nname: h3\ndefaults:\n  timeout: 3s\n  protocol: h3\n  tls:\n    ca_file: \
         {ca}\ntargets:\n  - name: ok\n    url: {url}/\n  - name: bad\n    url: {url}{bad}\n\
         load:\n  connections: 2\n  streams: 2\n  requests: 100\n",
        ca = pki.path("ca.pem").display(),
        url = server.url(),
    )
}

#[test]
fn http3_runs_report_their_codes_handshakes_and_udp_buffers() {
    let pki = TestPki::generate();
    let server = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .unwrap();
    let result = round_trip(&run_yaml(&h3_spec(&pki, &server, "/?reset=0x10c")));
    let (ok, bad) = (&result.targets[0], &result.targets[1]);
    assert_eq!(result.total.requests, 100);
    assert_eq!(ok.errors, 0, "{:?}", ok.errors_by_kind);
    let key = "stream_reset H3_REQUEST_CANCELLED (0x10c)";
    let codes = BTreeMap::from([(key.to_string(), bad.requests)]);
    assert!(bad.requests > 0);
    assert_eq!(bad.errors_by_code, codes);
    assert_eq!(result.total.errors_by_code, codes);
    assert!(ok.errors_by_code.is_empty());
    let transport = ok.transport.as_ref().unwrap();
    assert_eq!(
        (transport.requested.as_str(), transport.protocol.as_str()),
        ("h3", "h3")
    );
    assert_eq!(transport.alt_svc_h3, None, "not sent over HTTP/3");
    let phases = result.total.phases_us.as_ref().unwrap();
    assert!(phases.connect.is_none(), "QUIC has no TCP connect");
    let handshakes = phases.tls.as_ref().expect("the QUIC handshake, timed");
    assert_eq!(handshakes.count, phases.connections_opened);
    let buffers = result
        .environment
        .udp_buffers
        .expect("HTTP/3 endpoints report their buffers");
    assert!(
        buffers.recv_bytes > 0 && buffers.send_bytes > 0,
        "{buffers:?}"
    );
    assert_eq!(
        buffers.limited,
        buffers.recv_bytes < buffers.wanted_bytes || buffers.send_bytes < buffers.wanted_bytes
    );

    let text = console(&result);
    // quinn does not tell the cipher suite: no empty parentheses.
    assert!(
        text.contains("protocol    h3 over QUIC, TLS 1.3, server name 127.0.0.1\n"),
        "{text}"
    );
    assert!(
        text.contains(&format!("error codes   {key}: {}", bad.requests)),
        "{text}"
    );
    let advice = "UDP socket buffers limited to";
    let md = render(Format::Md, &result);
    for report in [&text, &md] {
        assert_eq!(
            report.matches(advice).count(),
            usize::from(buffers.limited),
            "{report}"
        );
        assert!(!report.contains("offers HTTP/3"), "{report}");
    }
    assert!(
        md.contains(&format!(
            "Error codes: stream\\_reset H3\\_REQUEST\\_CANCELLED (0x10c): {}",
            bad.requests
        )),
        "{md}"
    );
}

#[test]
fn http3_reconnects_count_their_0rtt_in_the_reports() {
    let pki = TestPki::generate();
    let server = spawn_h3(
        "127.0.0.1:0".parse().unwrap(),
        1,
        pki.serve_config("server", false),
    )
    .unwrap();
    // A connection per request: each resumes the one before's session with early data.
    let yaml = h3_spec(&pki, &server, "/?size=10")
        .replace("defaults:\n", "defaults:\n  keep_alive: false\n")
        .replace("streams: 2\n  requests: 100", "requests: 30");
    let result = round_trip(&run_yaml(&yaml));
    assert_eq!(
        result.total.responses, 30,
        "{:?}",
        result.total.errors_by_kind
    );
    let p = result.total.phases_us.as_ref().unwrap();
    assert_eq!(p.connections_opened, 30);
    assert!(p.zero_rtt_attempted >= 28, "{p:?}");
    assert!(p.zero_rtt_accepted <= p.zero_rtt_attempted);
    assert_eq!(p.tls_resumed, p.zero_rtt_accepted);
    let words = |p: &loadgate::result::PhasesResult| {
        format!(
            ", {} tried 0-RTT ({} accepted)",
            p.zero_rtt_attempted, p.zero_rtt_accepted
        )
    };
    // The console shows the whole run's phases, the reports each target's.
    let text = console(&result);
    assert!(text.contains(&words(p)), "{text}");
    let target = words(result.targets[0].phases_us.as_ref().unwrap());
    let md = render(Format::Md, &result);
    assert!(md.contains(&target), "{md}");
    let html = render(Format::Html, &result);
    assert!(html.contains(&target), "{html}");
}
