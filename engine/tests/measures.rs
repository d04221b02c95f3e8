//! The measures beside latency, against the built-in target on loopback: the request's write
//! phase, slow responses, upstream-time headers, streamed bodies, pre-connect and a warmup
//! counted in requests.

mod support;

use loadgate::result::{PhaseSummary, RunResult};
use support::run_yaml;

/// A closed-model spec of one target at `path` on `server`, with `defaults` and `load` lines
/// (each indented, may be empty).
fn spec(server: &loadgate::serve::ServerHandle, path: &str, defaults: &str, load: &str) -> String {
    format!(
        "version: 1\nname: measures\ndefaults:\n  base_url: {}\n  timeout: 5s\n{defaults}\
         targets:\n  - name: t\n    path: {path}\nload:\n{load}",
        server.url()
    )
}

fn phase<'a>(result: &'a RunResult, name: &str) -> &'a PhaseSummary {
    let phases = result.targets[0].phases_us.as_ref().expect("phases");
    match name {
        "write" => phases.write.as_ref(),
        "ttfb" => phases.ttfb.as_ref(),
        _ => None,
    }
    .unwrap_or_else(|| panic!("a `{name}` phase in {phases:?}"))
}

#[test]
fn the_write_phase_is_measured_and_ttfb_counts_from_its_end() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let result = run_yaml(&spec(
        &server,
        "/?delay=20ms",
        "",
        "  connections: 2\n  requests: 40\n",
    ));
    assert_eq!(result.targets[0].responses, 40);
    let (write, ttfb) = (phase(&result, "write"), phase(&result, "ttfb"));
    assert_eq!(write.count, 40);
    // The server waits 20 ms after the request arrived: that is response wait, not write.
    assert!(ttfb.p50_us >= 20_000, "{ttfb:?}");
    assert!(write.max_us < 20_000, "{write:?}");
}

#[test]
fn responses_at_least_as_slow_as_the_threshold_are_counted_and_merged_exactly() {
    let server = loadgate::serve::spawn("127.0.0.1:0".parse().unwrap(), 1).unwrap();
    let yaml = format!(
        "version: 1\nname: slow\ndefaults:\n  base_url: {}\n  slow: 50ms\ntargets:\n  \
         - name: fast\n    path: /\n  - name: slow\n    path: /?delay=60ms\n\
         load:\n  connections: 4\n  requests: 60\n",
        server.url()
    );
    let runs = [run_yaml(&yaml), run_yaml(&yaml)];
    for result in &runs {
        let (fast, slow) = (&result.targets[0], &result.targets[1]);
        assert!(slow.responses > 0 && fast.responses > 0);
        assert_eq!(slow.slow_threshold_us, Some(50_000));
        assert_eq!(slow.slow_responses, Some(slow.responses));
        assert_eq!(fast.slow_responses, Some(0));
        assert_eq!(result.total.slow_responses, Some(slow.responses));
        assert_eq!(result.total.slow_threshold_us, Some(50_000));
    }
    let merged = loadgate::result::merge::merge(&runs).unwrap();
    assert_eq!(
        merged.targets[1].slow_responses,
        Some(runs[0].targets[1].responses + runs[1].targets[1].responses)
    );
    assert_eq!(merged.total.slow_threshold_us, Some(50_000));
    // Without a threshold nothing is counted, and the fields are absent.
    let plain = run_yaml(&yaml.replace("  slow: 50ms\n", ""));
    assert_eq!(plain.targets[1].slow_responses, None);
    assert_eq!(plain.total.slow_threshold_us, None);
}
