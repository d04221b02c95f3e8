//! The transport measures the load it claims, against real servers on loopback: an HTTP/2
//! server whose stream limit is below `load.streams` (a Python server on the `h2` library,
//! tests/h2/server.py) is a health problem, with the wait for a stream as a phase of its own;
//! a status outside 100-599 counts the same in every protocol; a short count run applies every
//! connection it planned.

use crate::support;

use loadgate::result::{RunResult, TargetResult};
use support::{CountingServer, Framing, pyh2_server, run_yaml};

/// A closed-model spec: `connections` × `streams` against `addr` over `protocol`, `requests`
/// requests in all.
fn spec(addr: std::net::SocketAddr, protocol: &str, load: &str) -> String {
    format!(
        "version: 1\nname: transport\ndefaults:\n  base_url: http://{addr}\n  protocol: {protocol}\n  \
         timeout: 5s\ntargets:\n  - name: item\n    path: /\nload:\n{load}"
    )
}

fn target(result: &RunResult) -> &TargetResult {
    &result.targets[0]
}

/// 2 connections × 8 streams planned; the server allows 1 stream per connection and answers
/// after 10 ms. The run says so (a health problem with both numbers), and the requests held
/// back show their wait as `stream_wait`, not as time to first byte.
#[test]
fn a_stream_limit_below_load_streams_is_a_health_problem_with_its_wait_as_a_phase() {
    let (_server, addr) = pyh2_server(&["--max-streams", "1", "--delay-ms", "10"]);
    let load = "  connections: 2\n  streams: 8\n  requests: 160\n";
    let result = run_yaml(&spec(addr, "h2", load));
    let t = target(&result);
    assert_eq!(t.responses, 160, "{:?}", t.errors_by_kind);
    assert!(!result.health.valid, "the load was capped: not valid");
    let problem = result
        .health
        .problems
        .iter()
        .find(|p| p.contains("SETTINGS_MAX_CONCURRENT_STREAMS"))
        .unwrap_or_else(|| panic!("a stream-limit problem: {:?}", result.health.problems));
    assert!(
        problem.contains("allows 1 concurrent stream ") && problem.contains("the 8 planned"),
        "{problem}"
    );
    assert!(
        problem.contains("2 requests at once on 2 connections instead of 16"),
        "{problem}"
    );
    let phases = t.phases_us.as_ref().expect("phases");
    let wait = phases.stream_wait.as_ref().expect("a stream_wait phase");
    // 8 virtual users take turns on one stream of about 10 ms: most wait several turns.
    assert!(wait.count >= 100, "most requests waited: {wait:?}");
    assert!(
        wait.p50_us >= 30_000,
        "waited several 10 ms turns: {wait:?}"
    );
    let ttfb = phases.ttfb.as_ref().expect("ttfb");
    assert!(
        ttfb.p50_us < wait.p50_us,
        "the wait is not in the time to first byte: ttfb {ttfb:?}, wait {wait:?}"
    );
    let console = loadgate::report::console::summary(
        &result,
        loadgate::report::console::SummaryOptions {
            color: false,
            verbose: true,
        },
    );
    assert!(console.contains("stream wait"), "{console}");
}

/// The same server allowing the 8 streams planned: no problem, no wait.
#[test]
fn a_stream_limit_at_load_streams_is_no_problem() {
    let (_server, addr) = pyh2_server(&["--max-streams", "8", "--delay-ms", "10"]);
    let load = "  connections: 2\n  streams: 8\n  requests: 160\n";
    let result = run_yaml(&spec(addr, "h2", load));
    let t = target(&result);
    assert_eq!(t.responses, 160, "{:?}", t.errors_by_kind);
    assert!(
        !result
            .health
            .problems
            .iter()
            .any(|p| p.contains("SETTINGS_MAX_CONCURRENT_STREAMS")),
        "{:?}",
        result.health.problems
    );
    let phases = t.phases_us.as_ref().expect("phases");
    assert!(phases.stream_wait.is_none(), "{:?}", phases.stream_wait);
}

/// Status 700 (three digits, outside RFC 9110's 100-599) from an HTTP/2 and an HTTP/1.1
/// server: the same count in both, a malformed response, in no `status_codes` entry.
#[test]
fn a_status_outside_100_to_599_is_malformed_in_every_protocol() {
    let load = "  connections: 1\n  requests: 20\n";
    let counts: Vec<_> = [("h2", &["--max-streams", "0"][..]), ("h1", &["--h1"][..])]
        .into_iter()
        .map(|(protocol, args)| {
            let mut args = args.to_vec();
            args.extend(["--status", "700", "--delay-ms", "0"]);
            let (_server, addr) = pyh2_server(&args);
            let result = run_yaml(&spec(addr, protocol, load));
            let t = target(&result).clone();
            assert!(
                t.status_codes.is_empty(),
                "{protocol}: {:?}",
                t.status_codes
            );
            assert_eq!(
                t.errors_by_kind.get("malformed"),
                Some(&20),
                "{protocol}: {:?}",
                t.errors_by_kind
            );
            (t.requests, t.responses, t.errors, t.errors_by_kind)
        })
        .collect();
    assert_eq!(
        counts[0], counts[1],
        "HTTP/2 and HTTP/1.1 count status 700 alike"
    );
}

/// A short count run on more worker threads than this machine has CPUs (8 threads, 16
/// connections, 64 requests), five times: each opens its 16 connections before the clock and
/// each connection carries measured requests, as the server and the result both say. With one
/// pool of tickets, the threads woken first sent every request (4 to 14 connections of 16 in
/// eight runs) while the summary printed 16.
#[test]
fn a_short_count_run_applies_every_planned_connection() {
    let load = "  connections: 16\n  threads: 8\n  requests: 64\n";
    for run in 0..5 {
        let server = CountingServer::start(Framing::ContentLength);
        let result = run_yaml(&spec(server.addr(), "h1", load));
        assert_eq!(result.total.requests, 64);
        // The check at start's connection, then the run's.
        assert_eq!(
            server.connections(),
            1 + 16,
            "run {run}: the server saw every connection"
        );
        let phases = result.total.phases_us.as_ref().expect("phases");
        assert_eq!(
            (phases.connections_opened, phases.pre_connected),
            (16, 16),
            "run {run}: every connection opened before the clock carried requests"
        );
    }
}
